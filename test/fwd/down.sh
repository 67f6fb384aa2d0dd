#!/usr/bin/env bash
# xdp-fwd started on an interface that is down: it runs (the interface may come up later) but
# says so, naming the interface, and its stats lines say "link down" (JSON: link_down); once it
# is up, traffic flows and the stats say so. Then the output link goes down while xdp-fwd runs
# and frames are forwarded to it: they stay on its TX ring (the kernel refuses the kicks,
# ENETDOWN) and xdp-fwd's totals count them as tx_unsent. Before the fix the totals were printed
# before the ports closed, so the tx_unsent a closing port counted never reached them: frames
# counted sent (tx_packets) and dropped nowhere.
. "$(dirname "$0")/lib.sh"

topo_up --hosts 2
ip -n "$TOPO_MID" link set "$TOPO_IF1" down
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --interval 0.2
grep -q "warning: $TOPO_IF1 is down" "$WORK/fwd.err" || fail "no warning that $TOPO_IF1 is down"
grep -q "warning: $TOPO_IF0 is down" "$WORK/fwd.err" && fail "$TOPO_IF0 is up but called down"
wait_for 5 grep -q "^$TOPO_IF1@0 .*link down" "$WORK/fwd.out" || fail "the stats do not show $TOPO_IF1 as down"
grep -q "^$TOPO_IF0@0 .*link down" "$WORK/fwd.out" && fail "the stats show $TOPO_IF0 as down"
ip -n "$TOPO_MID" link set "$TOPO_IF1" up
wait_for 10 in_host 0 ping -c 1 -W 1 "$TOPO_IP1" >/dev/null || fail "no traffic once $TOPO_IF1 is up"
lines=$(wc -l <"$WORK/fwd.out")
wait_for 5 sh -c "tail -n +$((lines + 1)) '$WORK/fwd.out' | grep -q '^$TOPO_IF1@0 '" || fail "no stats line after the link came up"
tail -n +$((lines + 1)) "$WORK/fwd.out" | grep "^$TOPO_IF1@0 " | tail -1 | grep -q "link down" &&
	fail "the stats still show $TOPO_IF1 as down once it is up"
fwd_stop INT
no_xdp_left || fail "XDP program left"

GEN=$BUILD/tools/xsk-gen/xsk-gen
[ -x "$GEN" ] || fail "xsk-gen not built at $GEN"
log "the output link down under xdp-fwd: the frames left on its TX ring counted in the totals"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --mode wire --json --interval 0.2
ip -n "$TOPO_MID" link set "$TOPO_IF1" down
# isum PORT FIELD: PORT's FIELD summed over the interval lines so far.
isum() {
	grep '"type":"interval"' "$WORK/fwd.out" | grep -o "\"name\":\"$1\",[^}]*" | grep -o "\"$2\":[0-9]*" |
		cut -d: -f2 | awk '{ s += $1 } END { print s + 0 }'
}
down_seen() {
	grep '"type":"interval"' "$WORK/fwd.out" | tail -1 | grep -o "\"name\":\"$TOPO_IF1@0\",.*" |
		grep -o '"link_down":[a-z]*' | head -1 | grep -q true
}
queued() { [ "$(isum "$TOPO_IF1@0" tx_packets)" -ge 100 ]; }
wait_for 5 down_seen || fail "the JSON stats do not show $TOPO_IF1 as down"
# --dst-mac: no ARP answer comes back over a link that is down.
in_host 0 "$GEN" gen -i eth0 --json --dst-ip "$TOPO_IP1" --dst-mac "$(in_host 1 cat /sys/class/net/eth0/address)" --count 100 --rate 2000 --size 64 \
	>"$WORK/gen.out" 2>"$WORK/gen.err" || fail "gen: $(cat "$WORK/gen.err")"
wait_for 10 queued ||
	fail "xdp-fwd queued $(isum "$TOPO_IF1@0" tx_packets) of the 100 frames for $TOPO_IF1"
fwd_stop INT
tx=$(port_total "$TOPO_IF1@0" tx_packets) unsent=$(port_drops "$TOPO_IF1@0" tx_unsent)
echo "   $TOPO_IF1@0: tx_packets $tx, tx_unsent $unsent"
[ "${tx:-0}" -ge 100 ] || fail "xdp-fwd queued ${tx:-0} frames on $TOPO_IF1@0, fewer than the 100 sent"
grep -q "closed with $tx frames in the TX ring the kernel never read" "$WORK/fwd.err" ||
	fail "no warning for the $tx frames left on $TOPO_IF1's TX ring: $(cat "$WORK/fwd.err")"
[ "$unsent" = "$tx" ] || fail "the totals count $unsent of the $tx frames left on $TOPO_IF1's TX ring as tx_unsent"
no_xdp_left || fail "XDP program left"
log "ok"
