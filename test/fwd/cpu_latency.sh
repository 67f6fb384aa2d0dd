#!/usr/bin/env bash
# --cpu-latency holds a CPU latency request (/dev/cpu_dma_latency) exactly while xdp-fwd runs:
# the kernel's aggregate takes the requested value, no halting idle state is entered meanwhile
# (where the idle driver can poll instead), and the request is gone after a normal exit and
# after kill -9. A request that cannot be made is refused before anything is attached.
# The checks read the machine-wide aggregate: another process changing its own request
# meanwhile would fail them.
. "$(dirname "$0")/lib.sh"

[ -c /dev/cpu_dma_latency ] || { echo "SKIP: no /dev/cpu_dma_latency"; exit 77; }
# The kernel's aggregate request (µs): the smallest one held, 2000000000 when none is.
qos() {
	local v
	v=$(od -An -t d4 -N4 /dev/cpu_dma_latency | tr -d ' ')
	[[ "$v" =~ ^[0-9]+$ ]] || fail "cannot read /dev/cpu_dma_latency: '$v'"
	echo "$v"
}
base=$(qos)
[ "$base" -gt 0 ] || { echo "SKIP: another process holds a CPU latency request of 0"; exit 77; }

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
# Only an idle driver with a polling state (x86's POLL) can keep idle CPUs from halting.
if [ "$(cat /sys/devices/system/cpu/cpu0/cpuidle/state0/name 2>/dev/null)" = POLL ]; then
	# Without the request an idle CPU halts hundreds of times a second.
	n=$(growth_over 0.5 slow_idle_entries)
	log "idle states with an exit latency entered over 0.5 s: $n"
	# One CPU may be entering a state as the request arrives: a few, not hundreds.
	[ "$n" -lt 10 ] || fail "CPUs entered idle states slower than 0 µs $n times while held"
else
	log "no cpuidle POLL state: the idle states are not checked"
	grep -q "warning: --cpu-latency" "$WORK/fwd.err" || fail "no warning that idle CPUs still halt"
fi
in_host 0 ping -c 3 -i 0.2 -W 2 "$TOPO_IP1" >/dev/null || fail "no traffic with --cpu-latency"
fwd_stop INT
[ "$(qos)" = "$base" ] || fail "CPU latency request after exit: $(qos), not $base"

log "--latency low: held, and no message names --cpu-latency (not given)"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --latency low --interval 3600
grep -q "CPU latency held at 0 µs" "$WORK/fwd.err" || fail "--latency low: no start-up line for its request"
! grep -q -- "--cpu-latency" "$WORK/fwd.err" || fail "--latency low: a message names --cpu-latency: $(grep -- --cpu-latency "$WORK/fwd.err")"
fwd_stop INT

log "dropped by the kernel after kill -9"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --cpu-latency 5 --interval 3600
want=$((base < 5 ? base : 5))
[ "$(qos)" = "$want" ] || fail "CPU latency aggregate while running: $(qos), not $want"
kill -KILL "$FWD_PID"
wait "$FWD_PID" 2>/dev/null
netns_stop "$FWD_PID"
FWD_PID=""
wait_for 10 no_xdp_left || fail "an XDP program outlived the killed xdp-fwd"
[ "$(qos)" = "$base" ] || fail "CPU latency request after kill -9: $(qos), not $base"

log "refused, with nothing attached, when the request cannot be made"
# A read-only file over the device, in a mount namespace of this command only.
: >"$WORK/ro"
rc=0
unshare -m sh -c 'mount --bind "$1" /dev/cpu_dma_latency && mount -o remount,bind,ro /dev/cpu_dma_latency &&
	exec ip netns exec "$2" "$3" -i "$4" -i "$5" --cpu-latency 0' sh "$WORK/ro" "$TOPO_MID" "$FWD" \
	"$TOPO_IF0" "$TOPO_IF1" >"$WORK/out" 2>"$WORK/err" </dev/null || rc=$?
[ $rc != 0 ] || fail "xdp-fwd ran without its CPU latency request"
grep -q -- "--cpu-latency: cannot hold a CPU latency request on /dev/cpu_dma_latency" "$WORK/err" ||
	fail "no message naming the refused request: $(cat "$WORK/err")"
no_xdp_left || fail "an XDP program was left attached after the refusal"
log "   rc $rc: $(grep -- --cpu-latency "$WORK/err")"
log "ok"
