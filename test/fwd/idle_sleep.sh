#!/usr/bin/env bash
# An idle worker sleeps: with one worker and nothing in flight only its sockets, or the main
# thread (park, stop), wake it, so it wakes about 10 times a second, not 1000 (each wakeup of a
# vCPU costs the traffic that shares it, e.g. the kernel forwarding offloaded flows). It still
# forwards when frames come, parks for a deleted interface and stops cleanly.
. "$(dirname "$0")/lib.sh"

topo_up --hosts 2
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --cpus 0 --interval 3600
# The worker names itself once running, maybe after the start-up lines.
wait_for 5 worker_tid >/dev/null || fail "no thread named xdp-fwd/w0 in xdp-fwd"
WTID=$(worker_tid)
switches() { awk '/^voluntary_ctxt_switches/ {print $2}' "/proc/$FWD_PID/task/$WTID/status"; }

# Past the spin window of the start-up frames, if any: the worker is asleep. Nothing is sent
# over the window.
n=$(growth_over 2 switches)
log "idle worker over 2 s: $n voluntary context switches"
[ "$n" -lt 100 ] || fail "the idle worker woke $n times in 2 s"

in_host 0 ping -c 3 -i 0.2 -W 2 "$TOPO_IP1" >/dev/null || fail "no traffic through the sleeping worker"
# Parking for a deleted interface, then stopping, with the worker asleep.
t0=$(date +%s%N)
ip -n "$TOPO_MID" link del "$TOPO_IF1" || fail "cannot delete $TOPO_IF1"
wait_for 5 grep -q "$TOPO_IF1: interface gone" "$WORK/fwd.err" || fail "the worker did not park for the deleted interface"
fwd_stop
log "interface gone to exit: $((($(date +%s%N) - t0) / 1000000)) ms"
no_xdp_left || fail "an XDP program is still attached after exit"
log "ok"
