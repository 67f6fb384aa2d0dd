# xsk-gen in netns tests (sourced after netns.sh, with GEN, WORK and fail defined): the sink in
# the background and its JSON report.

# json FILE KEY: a numeric field of xsk-gen's JSON report.
json() { grep -o "\"$2\":[0-9.]*" "$1" | head -1 | cut -d: -f2; }

# sink_drops FILE...: the frames the sinks' own sockets dropped (the kernel: RX ring full, no
# buffer), summed over their JSON reports.
sink_drops() {
	local f s=0
	for f in "$@"; do s=$((s + $(json "$f" rx_dropped) + $(json "$f" rx_ring_full))); done
	echo "$s"
}

# sink_start NS ARGS...: the sink in NS in the background ($SINK_PID), returns once it is bound.
sink_start() {
	local ns=$1
	shift
	: >"$WORK/sink.err"
	netns_bg SINK_PID "$ns" "$GEN" sink -i eth0 --json --duration 60 "$@" >"$WORK/sink.out" 2>"$WORK/sink.err"
	wait_for 10 grep -q "sink ready" "$WORK/sink.err" || fail "sink did not start"
}

# sink_wait: the sink ends by itself (--idle or --count); reaped with its exit code checked.
sink_wait() {
	local rc=0
	wait "$SINK_PID" || rc=$?
	netns_stop "$SINK_PID"
	[ $rc = 0 ] || fail "sink exited with $rc"
}

# expect FILE KEY VALUE
expect() {
	local v
	v=$(json "$1" "$2")
	[ "$v" = "$3" ] || fail "$(basename "$1"): $2 = '$v', expected $3"
}

# expect_all FILE KEY:VALUE...: expect for each pair.
expect_all() {
	local f=$1 kv
	shift
	for kv in "$@"; do expect "$f" "${kv%%:*}" "${kv#*:}"; done
}
