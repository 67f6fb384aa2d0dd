#!/usr/bin/env bash
# A link-down storm under a flood (docs/RELIABILITY.md): 20 downs of 0.1 s of the output
# interface. Each down is one episode of failing TX kicks, reported once ("TX kick failed")
# and ended once ("TX kicks work again"), not at packet rate. The warning used to compare
# errno after logging, which the printer changes, so every kick of a down link logged.
FWD_TEST_TAG=ks
. "$(dirname "$0")/../fwd/lib.sh"

topo_up --hosts 2
more_than() { [ "$(rx_frames 1)" -gt "$1" ]; }

fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1"
seen=$(rx_frames 1)
netns_bg PING_PID "$TOPO_H0" ping -f -W 1 "$TOPO_IP1" >/dev/null 2>&1
wait_for 5 more_than $((seen + 100)) || fail "no flood through xdp-fwd"
cycles=20
for _ in $(seq "$cycles"); do
	ip -n "$TOPO_MID" link set "$TOPO_IF1" down
	sleep 0.1 # how long the link stays down (the fault), not a synchronization
	ip -n "$TOPO_MID" link set "$TOPO_IF1" up
	# The next episode starts once this one ended: traffic flows again.
	seen=$(rx_frames 1)
	wait_for 5 more_than $((seen + 10)) || fail "no traffic after the link came back"
done
netns_stop "$PING_PID"
fwd_stop INT
failed=$(grep -c "TX kick failed" "$WORK/fwd.err")
again=$(grep -c "TX kicks work again" "$WORK/fwd.err")
log "$cycles downs: $failed 'TX kick failed' lines, $again 'work again' lines"
[ "$failed" -ge 1 ] || fail "no TX kick failure reported while the link was down"
[ "$failed" -le "$cycles" ] || fail "$failed 'TX kick failed' lines for $cycles downs: not once per episode"
[ "$again" -le "$cycles" ] || fail "$again 'work again' lines for $cycles downs"
no_xdp_left || fail "XDP program left"
log "ok"
