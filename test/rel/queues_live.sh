#!/usr/bin/env bash
# -i IFNAME@all and `ethtool -L` under a running xdp-fwd (docs/RELIABILITY.md): 4-queue veths
# set to 2 queues, xdp-fwd started in wire mode on @all (2 ports each), then 4 queues again.
#  - m0 alone at 4: its queues 2-3 have no partner on m1 yet (wire pairs queue k with queue k),
#    so xdp-fwd warns once that their frames go to the kernel's stack;
#  - m1 at 4 too: the pairs m0@2<->m1@2 and m0@3<->m1@3 are opened live, and frames sent on
#    queue 3 are forwarded through them, with the books held (sent = received + counted drops);
#  - the kernel refuses to take the queues back while sockets are bound to them (ethtool -L
#    fails): xdp-fwd keeps serving them, and exits with every frame home.
# It used to only warn, and frames on the new queues never reached xdp-fwd.
FWD_TEST_TAG=ql
. "$(dirname "$0")/../fwd/lib.sh"
GEN=$BUILD/tools/xsk-gen/xsk-gen
[ -x "$GEN" ] || fail "xsk-gen not built at $GEN"
# shellcheck source=../common/xsk_gen.sh
. "$SRC/test/common/xsk_gen.sh"

topo_up --hosts 2 --queues 4
for m in "$TOPO_IF0" "$TOPO_IF1"; do
	ip netns exec "$TOPO_MID" ethtool -L "$m" rx 2 tx 2 || fail "ethtool -L $m rx 2 tx 2"
done
# Generic XDP: veth runs a native program only on the queues it had when the program was
# attached (veth_set_channels enables new queues without it), which no forwarder can change.
fwd_start -i "$TOPO_IF0@all" -i "$TOPO_IF1@all" --mode wire --json --interval 60 --xdp-mode skb
grep -q "port 3 $TOPO_IF1@1" "$WORK/fwd.err" || fail "@all did not open 2 queues each"

ip netns exec "$TOPO_MID" ethtool -L "$TOPO_IF0" rx 4 tx 4 || fail "ethtool -L $TOPO_IF0 rx 4 tx 4"
wait_for 10 grep -q "warning: $TOPO_IF0 now has 4 RX queues (was 2): frames on queues 2-3 go to the kernel's stack, not through xdp-fwd (--mode wire pairs queue k with queue k" \
	"$WORK/fwd.err" || fail "the unpaired queues of $TOPO_IF0 were not reported"
grep -q "opened" "$WORK/fwd.err" && fail "a port opened without its wire partner"

ip netns exec "$TOPO_MID" ethtool -L "$TOPO_IF1" rx 4 tx 4 || fail "ethtool -L $TOPO_IF1 rx 4 tx 4"
wait_for 10 grep -q "$TOPO_IF1 now has 4 RX queues (was 2): opened $TOPO_IF1@2,$TOPO_IF1@3" "$WORK/fwd.err" ||
	fail "the new queues of $TOPO_IF1 were not opened"
grep -q "$TOPO_IF0 has 4 RX queues: opened $TOPO_IF0@2,$TOPO_IF0@3" "$WORK/fwd.err" ||
	fail "the new queues of $TOPO_IF0 were not opened"
[ "$(grep -c "now has 4 RX queues" "$WORK/fwd.err")" = 2 ] || fail "a change was reported more than once"

path=("$TOPO_H0 eth0" "$TOPO_MID $TOPO_IF0" "$TOPO_MID $TOPO_IF1" "$TOPO_H1 eth0")
# so_far PORT FIELD: a field of PORT summed over the stats lines so far (each holds its
# interval's counts; SIGUSR1 prints one at once).
so_far() {
	grep '"type":"interval"' "$WORK/fwd.out" | grep -o "\"name\":\"$1\",[^}]*" |
		grep -o "\"$2\":[0-9]*" | cut -d: -f2 | awk '{ s += $1 } END { print s + 0 }'
}
# Host 0 sends on its queue 3. Which of m0's new queues that reaches, and so which m1 port
# sends it on to host 1, is the veth's business (generic XDP reads the TX queue mapping as RX
# queue + 1): a probe finds it, and the sink listens there.
out_q=""
probe() { # 100 frames more each time (a loaded machine may drop a few), until some come through
	in_host 0 "$GEN" gen -i eth0 -q 3 --dst-ip "$TOPO_IP1" --count 100 --rate 10000 >/dev/null 2>&1 ||
		fail "probe on queue 3"
	kill -USR1 "$FWD_PID" # wait_for asks again until a stats line shows it
	for q in 2 3; do [ "$(so_far "$TOPO_IF1@$q" tx_packets)" -gt 0 ] && { out_q=$q; return 0; }; done
	return 1
}
wait_for 10 probe || fail "the probe did not leave through a new queue of $TOPO_IF1"
[ $(( $(so_far "$TOPO_IF0@2" rx_packets) + $(so_far "$TOPO_IF0@3" rx_packets) )) -gt 0 ] ||
	fail "the probe did not arrive on a new queue of $TOPO_IF0"
before=$(path_drops "${path[@]}")
# --count: the sink ends as the last frame arrives; --idle only when some never come, long
# enough that a generator held up on a busy machine does not end the sink before its tail.
sink_start "$TOPO_H1" -q "$out_q" --count 20000 --idle 10
in_host 0 "$GEN" gen -i eth0 -q 3 --dst-ip "$TOPO_IP1" --count 20000 --rate 20000 --json \
	>"$WORK/gen.out" 2>"$WORK/gen.err" || fail "gen on queue 3"
sink_wait

# The kernel keeps queues that sockets are bound to.
ip netns exec "$TOPO_MID" ethtool -L "$TOPO_IF0" rx 2 tx 2 2>/dev/null &&
	log "note: the kernel took queues 2-3 of $TOPO_IF0 back while they were bound"
in_host 0 ping -c 2 -i 0.2 -W 2 "$TOPO_IP1" >/dev/null || fail "no traffic through xdp-fwd"
fwd_stop INT
no_xdp_left || fail "XDP program left"

after=$(path_drops "${path[@]}")
sent=$(json "$WORK/gen.out" frames)
received=$(json "$WORK/sink.out" frames)
lost=$(json "$WORK/sink.out" lost)
counted=$(( $(fwd_drops "$WORK/fwd.out" generic) + after - before))
log "sent $sent, received $received, lost $lost (gaps), counted drops $counted"
[ "$sent" = 20000 ] || fail "gen sent $sent of 20000"
# What the sink missed, its tail included (gaps are its "lost"; a lost tail shows in no gap).
missing=$((sent - received))
[ "$lost" -le "$missing" ] || fail "sink: lost $lost, but only $missing of $sent missing"
[ "$missing" -le "$counted" ] || fail "$missing frames missing, only $counted drops counted with a reason"
[ "$received" -gt 0 ] || fail "nothing forwarded through the new queue"
rx_new=$(( $(port_total "$TOPO_IF0@2" rx_packets) + $(port_total "$TOPO_IF0@3" rx_packets) ))
tx_out=$(port_total "$TOPO_IF1@$out_q" tx_packets)
[ "$rx_new" -ge "$received" ] || fail "the new queues of $TOPO_IF0 received $rx_new, the sink $received"
[ "${tx_out:-0}" -ge "$received" ] || fail "$TOPO_IF1@$out_q sent ${tx_out:-none}, the sink received $received"
log "ok"
