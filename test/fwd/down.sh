#!/usr/bin/env bash
# xdp-fwd started on an interface that is down: it runs (the interface may come up later) but
# says so, naming the interface; once it is up, traffic flows.
. "$(dirname "$0")/lib.sh"

topo_up --hosts 2
ip -n "$TOPO_MID" link set "$TOPO_IF1" down
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1"
grep -q "warning: $TOPO_IF1 is down" "$WORK/fwd.err" || fail "no warning that $TOPO_IF1 is down"
grep -q "warning: $TOPO_IF0 is down" "$WORK/fwd.err" && fail "$TOPO_IF0 is up but called down"
ip -n "$TOPO_MID" link set "$TOPO_IF1" up
wait_for 10 in_host 0 ping -c 1 -W 1 "$TOPO_IP1" >/dev/null || fail "no traffic once $TOPO_IF1 is up"
fwd_stop INT
no_xdp_left || fail "XDP program left"
log "ok"
