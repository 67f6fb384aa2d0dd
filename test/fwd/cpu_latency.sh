#!/usr/bin/env bash
# --cpu-latency holds a CPU latency request (/dev/cpu_dma_latency) exactly while xdp-fwd runs:
# the kernel's aggregate takes the requested value, no idle state slower to leave than that is
# entered meanwhile, and the request is gone after a normal exit and after kill -9.
. "$(dirname "$0")/lib.sh"

[ -c /dev/cpu_dma_latency ] || { echo "SKIP: no /dev/cpu_dma_latency"; exit 77; }
# The kernel's aggregate request (µs): the smallest one held, 2000000000 when none is.
qos() { od -An -t d4 -N4 /dev/cpu_dma_latency | tr -d ' '; }
base=$(qos)
[ "$base" -gt 0 ] || { echo "SKIP: another process already holds a CPU latency request of 0"; exit 77; }

# Usage counts of the idle states that take longer than 0 µs to leave, over every CPU.
slow_idle_entries() {
	local n=0 s
	for s in /sys/devices/system/cpu/cpu[0-9]*/cpuidle/state[0-9]*; do
		[ -r "$s/usage" ] && [ "$(cat "$s/latency")" -gt 0 ] && n=$((n + $(cat "$s/usage")))
	done
	echo $n
}

topo_up --hosts 2
log "held while running"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --cpu-latency 0 --interval 3600
grep -q "CPU latency held at 0 µs" "$WORK/fwd.err" || fail "no start-up line for --cpu-latency"
[ "$(qos)" = 0 ] || fail "CPU latency request while running: $(qos), not 0"
if ls -d /sys/devices/system/cpu/cpu0/cpuidle/state0 >/dev/null 2>&1; then
	# Without the request an idle CPU halts hundreds of times a second.
	n=$(growth_over 0.5 slow_idle_entries)
	log "idle states with an exit latency entered over 0.5 s: $n"
	# One CPU may be entering a state as the request arrives: a few, not hundreds.
	[ "$n" -lt 10 ] || fail "CPUs entered idle states slower than 0 µs $n times while held"
fi
in_host 0 ping -c 3 -i 0.2 -W 2 "$TOPO_IP1" >/dev/null || fail "no traffic with --cpu-latency"
fwd_stop INT
[ "$(qos)" = "$base" ] || fail "CPU latency request after exit: $(qos), not $base"

log "dropped by the kernel after kill -9"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --cpu-latency 5 --interval 3600
[ "$(qos)" = $((base < 5 ? base : 5)) ] || fail "CPU latency request while running: $(qos), not 5"
kill -KILL "$FWD_PID"
wait "$FWD_PID" 2>/dev/null
netns_stop "$FWD_PID"
FWD_PID=""
wait_for 10 no_xdp_left || fail "an XDP program outlived the killed xdp-fwd"
[ "$(qos)" = "$base" ] || fail "CPU latency request after kill -9: $(qos), not $base"
log "ok"
