#!/usr/bin/env bash
# xdp-fwd --offload-after: the books exact when the kernel drops offloaded frames. A UDP flow
# is offloaded (its frames redirected from m0 to m1 by the steering program), then sends frames
# longer than m1's peer takes (its MTU is lower): the veth refuses each at ndo_xdp_xmit, as it
# refuses frames when its peer's ring is full (fwd-bench udp64), and counts them in its
# tx_dropped. xdp-fwd counts them once, as tx_dropped_kernel on m1 (they were "lost" before
# that counter), and every frame the generator sent is received or counted, not one less nor
# one more. Before the probe fix the delivery probe's frame, which m1 also sent, hid one lost
# frame: 1 unaccounted.
. "$(dirname "$0")/lib.sh"
# shellcheck source=offload_lib.sh
. "$(dirname "$0")/offload_lib.sh"
GEN=$BUILD/tools/xsk-gen/xsk-gen
[ -x "$GEN" ] || fail "xsk-gen not built at $GEN"
# shellcheck source=../common/xsk_gen.sh
. "$SRC/test/common/xsk_gen.sh"

SMALL=2000 BIG=100
topo_up --hosts 2
# Host 1 takes frames up to 1000 bytes; the rest of the path 1500.
in_host 1 ip link set eth0 mtu 1000 || fail "ip link set eth0 mtu 1000"

# refused: the redirected frames m1 refused (its XDP transmit errors, every queue).
refused() {
	ip netns exec "$TOPO_MID" ethtool -S "$TOPO_IF1" | awk '/tx_queue_[0-9]+_xdp_xmit_errors:/ { s += $2 } END { print s + 0 }'
}
offloaded() { [ "$(off_last "$TOPO_IF0@0" flows)" = 1 ]; }

log "a UDP flow offloaded, then $BIG frames m1's peer refuses: the books exact"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --mode wire --offload-after 64 --offload-idle 30 --json --interval 0.1
# --idle: the sink ends after the small frames (the long ones never reach it).
sink_start "$TOPO_H1" --idle 3
in_host 0 "$GEN" gen -i eth0 --json --dst-ip "$TOPO_IP1" --count "$SMALL" --rate 5000 --size 200 \
	>"$WORK/gen1.out" 2>"$WORK/gen1.err" || fail "gen: $(cat "$WORK/gen1.err")"
wait_for 10 offloaded || fail "the UDP flow was not offloaded"
in_host 0 "$GEN" gen -i eth0 --json --dst-ip "$TOPO_IP1" --count "$BIG" --rate 5000 --size 1200 \
	>"$WORK/gen2.out" 2>"$WORK/gen2.err" || fail "gen: $(cat "$WORK/gen2.err")"
sink_wait
nrefused=$(refused)
fwd_stop INT

sent=$(($(json "$WORK/gen1.out" frames) + $(json "$WORK/gen2.out" frames)))
[ "$sent" = $((SMALL + BIG)) ] || fail "the generator sent $sent of $((SMALL + BIG)) frames"
got=$(json "$WORK/sink.out" frames)
sink_drops=$(sink_drops "$WORK/sink.out")
fwd_drops=$(($(books_drops "$TOPO_IF0@0") + $(books_drops "$TOPO_IF1@0")))
lost=$(($(off_total "$TOPO_IF0@0" lost) + $(off_total "$TOPO_IF1@0" lost)))
log "sent $sent, received $got, sink drops $sink_drops, xdp-fwd drops $fwd_drops, lost $lost; m1 refused $nrefused"
# The condition: the kernel refused redirected frames (not only userspace's, which a veth drops too).
[ "$nrefused" -ge 1 ] || fail "m1 refused no redirected frame: the drop was not provoked"
[ "$(off_total "$TOPO_IF0@0" packets)" -ge "$nrefused" ] || fail "fewer frames offloaded than m1 refused"
[ $((sent - got - sink_drops - fwd_drops - lost)) = 0 ] ||
	fail "$((sent - got - sink_drops - fwd_drops - lost)) frames unaccounted ($sent sent, $got received, $sink_drops dropped at the sink, $fwd_drops dropped and $lost lost by xdp-fwd)"
log "ok"
