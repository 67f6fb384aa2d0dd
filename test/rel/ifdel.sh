#!/usr/bin/env bash
# An interface of xdp-fwd deleted under traffic with --no-reattach (docs/RELIABILITY.md):
# xdp-fwd keeps running, says which port lost its interface, and a later SIGINT still ends
# cleanly with every frame back in its pool (those stranded on the dead port's rings included).
# With re-attaching (the default): test/fault (fault_ifdel_reattach).
FWD_TEST_TAG=rl
. "$(dirname "$0")/../fwd/lib.sh"

topo_up --hosts 2
more_than() { [ "$(rx_frames 1)" -gt "$1" ]; }

fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --no-reattach
seen=$(rx_frames 1)
netns_bg PING_PID "$TOPO_H0" ping -f -W 1 "$TOPO_IP1"
wait_for 5 more_than $((seen + 100)) || fail "no flood through xdp-fwd"
ip -n "$TOPO_MID" link del "$TOPO_IF1" || fail "cannot delete $TOPO_IF1"
# The flood keeps arriving on the other port and is sent to the dead one.
wait_for 5 grep -q "$TOPO_IF1: interface gone: port $TOPO_IF1@0 stopped.*--no-reattach" \
	"$WORK/fwd.err" || fail "no log line about the deleted interface"
kill -0 "$FWD_PID" || fail "xdp-fwd died when its interface was deleted"
netns_stop "$PING_PID"
fwd_stop INT
no_xdp_left || fail "XDP program left"
log "ok"
