#!/usr/bin/env bash
# A port's interface moved to another network namespace under a UDP stream, and back
# (docs/RELIABILITY.md): "gone", then "back" and traffic again. The frames the port had queued
# in its TX ring, which the kernel never read once the device left, are counted as drops
# (tx_unsent) in the text and the JSON totals instead of vanishing inside tx_packets.
FWD_TEST_TAG=nm
. "$(dirname "$0")/../fwd/lib.sh"

topo_up --hosts 2
netns_add AWAY || fail "cannot add a namespace"
more_than() { [ "$(rx_frames 1)" -gt "$1" ]; }

fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --json --interval 0.2
iperf_server
seen=$(rx_frames 1)
netns_bg CLIENT_PID "$TOPO_H0" iperf3 -u -c "$TOPO_IP1" -p 5201 -b 100M -l 1000 -t 30 >/dev/null 2>&1
wait_for 10 more_than $((seen + 1000)) || fail "no UDP stream through xdp-fwd"
ip -n "$TOPO_MID" link set "$TOPO_IF1" netns "$AWAY" || fail "cannot move $TOPO_IF1"
wait_for 5 grep -q "$TOPO_IF1: interface gone: port $TOPO_IF1@0 stopped" "$WORK/fwd.err" ||
	fail "the move was not noticed"
ip -n "$AWAY" link set "$TOPO_IF1" netns "$TOPO_MID" || fail "cannot move $TOPO_IF1 back"
ip -n "$TOPO_MID" link set "$TOPO_IF1" up
wait_for 5 grep -q "$TOPO_IF1: interface back (ifindex [0-9]*): $TOPO_IF1@0 re-attached" "$WORK/fwd.err" ||
	fail "$TOPO_IF1 was not re-attached"
netns_stop "$CLIENT_PID"
netns_stop "$IPERF_PID"
in_host 0 ping -c 3 -i 0.2 -W 2 "$TOPO_IP1" >/dev/null || fail "no traffic after the move back"
fwd_stop INT
unsent=$(port_total "$TOPO_IF1@0" tx_unsent)
log "tx_unsent on $TOPO_IF1@0: ${unsent:-none}"
[ -n "$unsent" ] && [ "$unsent" -gt 0 ] || fail "the frames left in the TX ring were not counted (tx_unsent)"
grep -q "closed with [0-9]* frames in the TX ring the kernel never read" "$WORK/fwd.err" ||
	fail "the unsent frames were not logged"
no_xdp_left || fail "XDP program left"
log "ok"
