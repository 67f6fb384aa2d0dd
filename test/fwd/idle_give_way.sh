#!/usr/bin/env bash
# A worker inside its --idle-spin window gives its CPU to any other task that wants it: a
# CPU-bound task pinned to the worker's CPU gets nearly all of it, not the half a plain spin
# loop would leave it. On a machine whose endpoints share the forwarder's CPUs, a spinning
# worker that does not give way starves the very traffic it waits for.
. "$(dirname "$0")/lib.sh"

topo_up --hosts 2

# A window far longer than the test: the worker spins from its start, no traffic needed.
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --cpus 0 --idle-spin 10000000 --interval 3600

# The worker names itself once running, maybe after the start-up lines.
wait_for 5 worker_tid >/dev/null || fail "no thread named xdp-fwd/w0 in xdp-fwd"
WTID=$(worker_tid)

netns_bg HOG_PID "$TOPO_MID" taskset -c 0 sh -c 'while :; do :; done'
hog_ran() { [ "$(cpu_ticks "/proc/$HOG_PID/stat")" -gt 0 ]; }
wait_for 5 hog_ran || fail "the CPU-bound task on CPU 0 never ran"

w0=$(cpu_ticks "/proc/$FWD_PID/task/$WTID/stat")
h0=$(cpu_ticks "/proc/$HOG_PID/stat")
# The measurement window (not a synchronization): both tasks are runnable on CPU 0 all along.
sleep 2
w1=$(cpu_ticks "/proc/$FWD_PID/task/$WTID/stat")
h1=$(cpu_ticks "/proc/$HOG_PID/stat")
netns_stop "$HOG_PID"
worker=$((w1 - w0)) hog=$((h1 - h0))
log "CPU 0 over 2 s: spinning worker $worker ticks, CPU-bound task $hog ticks"
[ "$hog" -gt 0 ] || fail "the CPU-bound task got no CPU time"
# A spin loop that never gives way splits the CPU about evenly (worker ~ hog).
[ $((4 * worker)) -lt "$hog" ] || fail "the spinning worker took $worker ticks against $hog: it does not give way"

# And it still forwards at once after giving way so long.
in_host 0 ping -c 3 -i 0.2 -W 2 "$TOPO_IP1" >/dev/null || fail "no traffic through the spinning worker"
fwd_stop
no_xdp_left || fail "an XDP program is still attached after exit"
log "ok"
