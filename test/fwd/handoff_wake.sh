#!/usr/bin/env bash
# A frame one worker queues for another wakes it if it sleeps. With two workers, one port each,
# every ping's request and reply cross from one worker to the other; a sleeping worker used to
# see them only at its poll() timeout (1 ms), so each echo waited about a millisecond.
. "$(dirname "$0")/lib.sh"

# The first two CPUs this test may run on (Cpus_allowed_list, e.g. "0-1" or "2,5-7").
cpus=()
IFS=, read -ra ranges < <(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)
for r in "${ranges[@]}"; do
	for ((c = ${r%-*}; c <= ${r#*-} && ${#cpus[@]} < 2; c++)); do cpus+=("$c"); done
done
[ ${#cpus[@]} -ge 2 ] || { echo "SKIP: needs 2 CPUs"; exit 77; }
topo_up --hosts 2
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --cpus "${cpus[0]},${cpus[1]}" --interval 3600
grep -q "worker 1" "$WORK/fwd.err" || fail "the two ports are not on two workers: $(cat "$WORK/fwd.err")"
# 20 ms apart: both workers are asleep when each echo comes.
in_host 0 ping -n -c 50 -i 0.02 -W 1 "$TOPO_IP1" >"$WORK/ping" 2>&1 || fail "ping through two workers: $(cat "$WORK/ping")"
replies=$(grep -c ' time=' "$WORK/ping")
[ "$replies" -ge 40 ] || fail "only $replies of 50 echo replies through two workers: $(cat "$WORK/ping")"
median=$(ping_median_us "$WORK/ping")
median=${median%.*}
log "median RTT through two workers ($replies replies): $median µs"
# Not a benchmark: about 1100 µs when the handoff waits for the timeout, under 100 µs on an
# idle machine when it wakes the worker, 180-260 µs in a loaded CI run (ASan included); the
# bound leaves room for more load.
[ "$median" -lt 700 ] || fail "frames handed to a sleeping worker waited for its poll timeout (median RTT $median µs)"
fwd_stop
log "ok"
