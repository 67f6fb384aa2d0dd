#!/usr/bin/env bash
# xdp-fwd (no offload): the books exact when the output veth frees frames xdp-fwd sent. Host 1
# runs its eth0's NAPI in a kernel thread (as fwd-bench --receiver-gro does) and takes frames up
# to 1000 bytes: a 64-byte UDP flood through xdp-fwd overflows m1's peer ring now and then, and
# each long frame is refused outright (its peer's MTU is lower), both freed by m1 in veth_xmit
# and counted only in m1's tx_dropped. xdp-fwd reports them as tx_dropped_kernel, and every
# frame the generator sent is received or counted; also after m1 is deleted and back (its count
# restarts). Before the fix those frames were counted nowhere xdp-fwd reads: thousands
# unaccounted, m1's tx_dropped.
. "$(dirname "$0")/lib.sh"
GEN=$BUILD/tools/xsk-gen/xsk-gen
[ -x "$GEN" ] || fail "xsk-gen not built at $GEN"
# shellcheck source=../common/xsk_gen.sh
. "$SRC/test/common/xsk_gen.sh"

FLOOD=200000 BIG=100
topo_up --hosts 2
in_host 1 ip link set eth0 mtu 1000 || fail "ip link set eth0 mtu 1000"
in_host 1 sh -c 'echo 1 >/sys/class/net/eth0/threaded' 2>/dev/null ||
	{ echo "SKIP: cannot run host 1's NAPI threaded (/sys/class/net/eth0/threaded)"; exit 77; }

m1_tx_dropped() { ip netns exec "$TOPO_MID" cat "/sys/class/net/$TOPO_IF1/statistics/tx_dropped"; }

log "a 64-byte flood and $BIG frames too long for m1's peer through plain xdp-fwd: the books exact"
k0=$(m1_tx_dropped)
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --mode wire --json --interval 0.5
# --idle: the sink ends after the last frame that reaches it.
sink_start "$TOPO_H1" --idle 3
in_host 0 "$GEN" gen -i eth0 --json --dst-ip "$TOPO_IP1" --count "$FLOOD" --duration 0 --size 64 \
	>"$WORK/gen1.out" 2>"$WORK/gen1.err" || fail "gen: $(cat "$WORK/gen1.err")"
in_host 0 "$GEN" gen -i eth0 --json --dst-ip "$TOPO_IP1" --count "$BIG" --rate 5000 --size 1200 \
	>"$WORK/gen2.out" 2>"$WORK/gen2.err" || fail "gen: $(cat "$WORK/gen2.err")"
sink_wait
k1=$(m1_tx_dropped)
cp "$WORK/sink.out" "$WORK/sink1.out"

# m1 deleted and back (a new device, its count from 0): its drops are counted on, once.
ip -n "$TOPO_MID" link del "$TOPO_IF1" || fail "cannot delete $TOPO_IF1"
wait_for 5 grep -q "$TOPO_IF1: interface gone" "$WORK/fwd.err" || fail "no log line about the deleted interface"
leg_recreate 1
in_host 1 ip link set eth0 mtu 1000 || fail "ip link set eth0 mtu 1000 (again)"
wait_for 10 grep -q "$TOPO_IF1: interface back" "$WORK/fwd.err" || fail "not re-attached"
k2=$(m1_tx_dropped)
sink_start "$TOPO_H1" --idle 3
# Short frames too, after the long ones: the sink's --idle runs from a frame it took.
in_host 0 "$GEN" gen -i eth0 --json --dst-ip "$TOPO_IP1" --count "$BIG" --rate 5000 --size 1200 \
	>"$WORK/gen3.out" 2>"$WORK/gen3.err" || fail "gen: $(cat "$WORK/gen3.err")"
in_host 0 "$GEN" gen -i eth0 --json --dst-ip "$TOPO_IP1" --count 1000 --rate 5000 --size 64 \
	>"$WORK/gen4.out" 2>"$WORK/gen4.err" || fail "gen: $(cat "$WORK/gen4.err")"
sink_wait
k3=$(m1_tx_dropped)
fwd_stop INT

sent=0
for g in 1 2 3 4; do sent=$((sent + $(json "$WORK/gen$g.out" frames))); done
got=$(($(json "$WORK/sink1.out" frames) + $(json "$WORK/sink.out" frames)))
sink_drops=$(sink_drops "$WORK/sink1.out" "$WORK/sink.out")
fwd_drops=$(($(books_drops "$TOPO_IF0@0") + $(books_drops "$TOPO_IF1@0")))
kernel=$(port_total "$TOPO_IF1@0" tx_dropped_kernel)
m1_drops=$((k1 - k0 + k3 - k2))
log "sent $sent, received $got, sink drops $sink_drops, xdp-fwd drops $fwd_drops (tx_dropped_kernel ${kernel:-none}); m1 tx_dropped +$m1_drops (old +$((k1 - k0)), new +$((k3 - k2)))"
# The condition: m1 freed frames xdp-fwd sent (at least the long ones), both before and after.
[ $((k1 - k0)) -ge "$BIG" ] && [ $((k3 - k2)) -ge "$BIG" ] ||
	fail "m1 counted $((k1 - k0)) and $((k3 - k2)) TX drops, fewer than the $BIG long frames: the drop was not provoked"
[ $((sent - got - sink_drops - fwd_drops)) = 0 ] ||
	fail "$((sent - got - sink_drops - fwd_drops)) frames unaccounted ($sent sent, $got received, $sink_drops dropped at the sink, $fwd_drops dropped by xdp-fwd)"
[ -n "$kernel" ] && [ "$kernel" -ge $((2 * BIG)) ] || fail "tx_dropped_kernel on $TOPO_IF1@0 is '${kernel:-absent}', expected at least $((2 * BIG))"
# Not more than both devices counted: nothing twice across the delete.
[ "$kernel" -le "$m1_drops" ] || fail "tx_dropped_kernel $kernel, more than m1's $m1_drops"
# Counted once: on the interface's first port, not on the input interface.
[ "$(port_total "$TOPO_IF0@0" tx_dropped_kernel)" = 0 ] || fail "tx_dropped_kernel counted on $TOPO_IF0@0"
log "ok"
