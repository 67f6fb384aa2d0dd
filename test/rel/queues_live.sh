#!/usr/bin/env bash
# -i IFNAME@all and `ethtool -L` under a running xdp-fwd (docs/RELIABILITY.md): 4-queue veths
# set to 2 queues, xdp-fwd started on @all (2 ports each), then 4 queues again. Queues 2-3 are
# served by no socket, so their frames go to the kernel's stack: xdp-fwd says so, naming the
# queues, and says again when the count is back. It used to say nothing.
FWD_TEST_TAG=ql
. "$(dirname "$0")/../fwd/lib.sh"

topo_up --hosts 2 --queues 4
for m in "$TOPO_IF0" "$TOPO_IF1"; do
	ip netns exec "$TOPO_MID" ethtool -L "$m" rx 2 tx 2 || fail "ethtool -L $m rx 2 tx 2"
done
fwd_start -i "$TOPO_IF0@all" -i "$TOPO_IF1@all"
grep -q "port 3 $TOPO_IF1@1" "$WORK/fwd.err" || fail "@all did not open 2 queues each"
ip netns exec "$TOPO_MID" ethtool -L "$TOPO_IF0" rx 4 tx 4 || fail "ethtool -L $TOPO_IF0 rx 4 tx 4"
wait_for 10 grep -q "warning: $TOPO_IF0 now has 4 RX queues (was 2): -i $TOPO_IF0@all serves the 2 it had at start; frames on queues 2-3 go to the kernel" \
	"$WORK/fwd.err" || fail "the new queues of $TOPO_IF0 were not reported"
ip netns exec "$TOPO_MID" ethtool -L "$TOPO_IF0" rx 2 tx 2 || fail "ethtool -L $TOPO_IF0 rx 2 tx 2"
wait_for 10 grep -q "$TOPO_IF0 has its 2 RX queues again (was 4)" "$WORK/fwd.err" ||
	fail "the count back to 2 was not reported"
[ "$(grep -c "now has 4 RX queues" "$WORK/fwd.err")" = 1 ] || fail "the change was reported more than once"
grep -q "$TOPO_IF1 now has" "$WORK/fwd.err" && fail "$TOPO_IF1 did not change but was reported"
in_host 0 ping -c 2 -i 0.2 -W 2 "$TOPO_IP1" >/dev/null || fail "no traffic through xdp-fwd"
fwd_stop INT
no_xdp_left || fail "XDP program left"
log "ok"
