#!/usr/bin/env bash
# xdp-fwd started on an interface that is down: it runs (the interface may come up later) but
# says so, naming the interface, and its stats lines say "link down" (JSON: link_down); once it
# is up, traffic flows and the stats say so.
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
log "ok"
