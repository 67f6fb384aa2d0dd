#!/usr/bin/env bash
# A port's interface renamed (m1 -> m9), the renamed one deleted and a new m1 created
# (docs/RELIABILITY.md): the ports follow the device by ifindex, so the rename closes them
# ("renamed to m9") and the new m1 gets them back; traffic flows through the new m1 and the
# exit is clean. Matching link events by name alone kept the ports on the old device.
FWD_TEST_TAG=rn
. "$(dirname "$0")/../fwd/lib.sh"

topo_up --hosts 2
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1"
in_host 0 ping -c 2 -i 0.2 -W 2 "$TOPO_IP1" >/dev/null || fail "no traffic through xdp-fwd before the rename"
renamed="${TOPO_IF1}r"
# veth refuses a rename while up.
ip -n "$TOPO_MID" link set "$TOPO_IF1" down
ip -n "$TOPO_MID" link set "$TOPO_IF1" name "$renamed" || fail "cannot rename $TOPO_IF1"
wait_for 5 grep -q "$TOPO_IF1: interface renamed to $renamed: port $TOPO_IF1@0 stopped" "$WORK/fwd.err" ||
	fail "the rename was not noticed"
ip -n "$TOPO_MID" link del "$renamed" || fail "cannot delete $renamed"
leg_recreate 1
wait_for 5 grep -q "$TOPO_IF1: interface back (ifindex [0-9]*): $TOPO_IF1@0 re-attached" "$WORK/fwd.err" ||
	fail "the new $TOPO_IF1 was not attached"
in_host 0 ping -c 3 -i 0.2 -W 2 "$TOPO_IP1" >/dev/null || fail "no traffic through the new $TOPO_IF1"
grep -q "TX kick failed" "$WORK/fwd.err" && fail "TX kicks failed on the renamed device"
kill -0 "$FWD_PID" || fail "xdp-fwd died"
fwd_stop INT
no_xdp_left || fail "XDP program left"
log "ok"
