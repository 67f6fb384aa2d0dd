#!/usr/bin/env bash
# A frame one worker queues for another wakes it if it sleeps. With two workers, one port each,
# every ping's request and reply cross from one worker to the other; a sleeping worker used to
# see them only at its poll() timeout (1 ms), so each echo waited about a millisecond. The
# workers count the sleeps that ended at the timeout with handed-over frames waiting (pool
# "late_handoffs"): the books of the wake, which no load on the machine moves.
. "$(dirname "$0")/lib.sh"

# The first two CPUs this test may run on (Cpus_allowed_list, e.g. "0-1" or "2,5-7").
cpus=()
IFS=, read -ra ranges < <(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)
for r in "${ranges[@]}"; do
	for ((c = ${r%-*}; c <= ${r#*-} && ${#cpus[@]} < 2; c++)); do cpus+=("$c"); done
done
[ ${#cpus[@]} -ge 2 ] || { echo "SKIP: needs 2 CPUs"; exit 77; }
topo_up --hosts 2
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --cpus "${cpus[0]},${cpus[1]}" --interval 3600 --json
grep -q "worker 1" "$WORK/fwd.err" || fail "the two ports are not on two workers: $(cat "$WORK/fwd.err")"
# 20 ms apart: both workers are asleep when each echo comes.
in_host 0 ping -n -c 50 -i 0.02 -W 1 "$TOPO_IP1" >"$WORK/ping" 2>&1 || fail "ping through two workers: $(cat "$WORK/ping")"
replies=$(grep -c ' time=' "$WORK/ping")
[ "$replies" -ge 40 ] || fail "only $replies of 50 echo replies through two workers: $(cat "$WORK/ping")"
fwd_stop
# pool_total FIELD: the field of every pool in the total line, summed.
pool_total() {
	grep '"type":"total"' "$WORK/fwd.out" | grep -o '"pools":.*' | grep -o "\"$1\":[0-9]*" |
		cut -d: -f2 | awk '{ s += $1 } END { print s + 0 }'
}
sleeps=$(pool_total sleeps)
late=$(pool_total late_handoffs)
log "median RTT $(ping_median_us "$WORK/ping") µs; $replies replies, $sleeps sleeps, $late ended late with handed-over frames"
# Each echo crosses twice between the workers and finds the receiver asleep, so a worker that
# is not woken makes about two late sleeps per echo. A handoff can land in the few
# microseconds between a timed-out poll() and its check: allow one in ten.
[ "$sleeps" -ge "$replies" ] || fail "the workers slept $sleeps times for $replies echoes 20 ms apart"
[ $((10 * late)) -le "$replies" ] || fail "$late sleeps ended at the poll timeout with handed-over frames waiting ($replies echoes)"
log "ok"
