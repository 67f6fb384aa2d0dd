#!/usr/bin/env bash
# xdp-fwd under faults (docs/RELIABILITY.md): one case per run, named by the first argument.
# Each case builds its own topology (test/fwd/lib.sh), injects one fault into a running (or
# starting) xdp-fwd and checks what the forwarder says and does: no silent drop, a clean
# shutdown with every frame back, nothing left attached.
#
#   fwd_fault.sh sigpipe | sigpipe_quiet | sighup | sigusr1 | stdout_closed | stdout_stalled | mtu_raise | mtu_noreattach |
#                ifdel_reattach | rebind_others | rule_target | rule_warn | rule_counters | rule_live |
#                queues_unserved | frames_small | second_instance | lock_dir | json_names | startup_signals | foreign_generic | pool_log |
#                zerocopy_hint | probe_transient
FWD_TEST_TAG=ft
CASE=${1:?which case}
. "$(dirname "$0")/../fwd/lib.sh"

pings() { in_host 0 ping -c "${2:-3}" -i 0.2 -W 2 ${3:+-s "$3"} "$1" >/dev/null; }
alive() { kill -0 "$FWD_PID" 2>/dev/null; }
# exited: xdp-fwd has ended (gone, or a zombie not reaped yet).
exited() { ! alive || grep -q "^State:.*Z" "/proc/$FWD_PID/status" 2>/dev/null; }
# ends RC: waits for xdp-fwd, which must exit with RC.
ends() {
	local rc=0
	wait "$FWD_PID" || rc=$?
	netns_stop "$FWD_PID"
	FWD_PID=""
	[ "$rc" = "$1" ] || fail "xdp-fwd exited with $rc, expected $1"
}
# refused_run MESSAGE ARGS...: xdp-fwd refuses to start and says MESSAGE ($WORK/err).
refused_run() {
	local msg=$1 rc=0
	shift
	timeout 20 ip netns exec "$TOPO_MID" "$FWD" "$@" >"$WORK/out" 2>"$WORK/err" </dev/null || rc=$?
	[ $rc != 0 ] || fail "xdp-fwd $* was accepted"
	grep -q -- "$msg" "$WORK/err" || fail "xdp-fwd $*: no '$msg' in: $(cat "$WORK/err")"
	echo "   $* -> $(grep -- "$msg" "$WORK/err" | head -1)"
}
# refused MESSAGE ARGS...: the same, and nothing is left attached.
refused() {
	refused_run "$@"
	no_xdp_left || fail "xdp-fwd $*: an XDP program was left attached"
}
# json_field LINE KEY: the first numeric KEY in LINE.
json_field() { grep -o "\"$2\":[0-9]*" <<<"$1" | head -1 | cut -d: -f2; }

# hosts_on_queue0: both hosts transmit on queue 0 only (XPS), so the frames of a 2-queue
# topology reach the served queue 0: without it the flow hash picks the queue (veth hands a
# frame to the peer's RX queue of the sender's TX queue), and ping lands on 1 on some boots.
hosts_on_queue0() {
	local k all
	all=$(printf '%x' $(( (1 << $(nproc --all)) - 1 )))
	for k in 0 1; do
		in_host "$k" sh -c "echo $all >/sys/class/net/eth0/queues/tx-0/xps_cpus && echo 0 >/sys/class/net/eth0/queues/tx-1/xps_cpus" ||
			fail "cannot pin host $k's transmit queue"
	done
}

case "$CASE" in
sigpipe | sigpipe_quiet)
	# The stats reader goes away: the next write must not kill the forwarder.
	topo_up --hosts 2
	mkfifo "$WORK/pipe"
	quiet=()
	if [ "$CASE" = sigpipe ]; then
		netns_bg READER "$TOPO_MID" head -c 1 "$WORK/pipe" >/dev/null
	else
		quiet=(--quiet) # the reader is gone at once; the exit totals are the first write
		netns_bg READER "$TOPO_MID" sh -c ': <"$0"' "$WORK/pipe"
	fi
	: >"$WORK/fwd.err"
	netns_bg FWD_PID "$TOPO_MID" "$FWD" -i "$TOPO_IF0" -i "$TOPO_IF1" --interval 0.1 "${quiet[@]}" \
		>"$WORK/pipe" 2>"$WORK/fwd.err"
	wait "$READER" 2>/dev/null
	netns_stop "$READER"
	[ "$CASE" = sigpipe ] && { wait_for 10 grep -q "stats output stops" "$WORK/fwd.err" || fail "no note about the closed output"; }
	# --quiet prints no start-up lines: forwarding says it runs.
	wait_for 10 pings "$TOPO_IP1" 1 || fail "did not start: $(cat "$WORK/fwd.err")"
	pings "$TOPO_IP1" || fail "no forwarding after the stats reader left"
	alive || fail "xdp-fwd died when its stats reader left"
	kill -INT "$FWD_PID"
	ends 0
	grep -q "frames still out: 0" "$WORK/fwd.err" || fail "the exit totals did not go to stderr"
	[ "$(grep -c "stats output stops" "$WORK/fwd.err")" -le 1 ] || fail "the closed output was reported more than once"
	;;
sighup)
	# SIGHUP without --config reloads nothing and keeps forwarding (systemd's ExecReload must
	# not take the link down); SIGTERM ends like SIGINT: a stopping line, the totals, frames
	# still out 0.
	topo_up --hosts 2
	fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1"
	pings "$TOPO_IP1" || fail "no traffic"
	kill -HUP "$FWD_PID"
	wait_for 5 grep -q "SIGHUP: nothing to reload" "$WORK/fwd.err" || fail "SIGHUP: no 'nothing to reload' line"
	alive || fail "SIGHUP stopped xdp-fwd"
	pings "$TOPO_IP1" || fail "no traffic after SIGHUP"
	fwd_stop TERM
	grep -q "stopping" "$WORK/fwd.err" || fail "SIGTERM: no stopping line"
	grep -q "^total" "$WORK/fwd.out" || fail "SIGTERM: no totals"
	no_xdp_left || fail "XDP program left"
	;;
sigusr1)
	# SIGUSR1 prints the stats now and changes nothing else.
	topo_up --hosts 2
	fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --json --interval 3600
	pings "$TOPO_IP1" || fail "no traffic"
	grep -q '"type":"interval"' "$WORK/fwd.out" && fail "an interval line before the signal"
	kill -USR1 "$FWD_PID"
	wait_for 5 grep -q '"type":"interval"' "$WORK/fwd.out" || fail "SIGUSR1 printed no stats"
	line=$(grep '"type":"interval"' "$WORK/fwd.out" | head -1)
	[ "$(json_field "$line" tx_packets)" -ge 3 ] || fail "the stats miss the pings: $line"
	alive || fail "SIGUSR1 stopped xdp-fwd"
	pings "$TOPO_IP1" || fail "no traffic after SIGUSR1"
	fwd_stop INT
	;;
stdout_closed)
	# Started with fds 0-2 closed, xdp-fwd must not take one for a socket.
	topo_up --hosts 2
	netns_bg FWD_PID "$TOPO_MID" bash -c 'exec "$@" <&- >&- 2>&-' fwd "$FWD" -i "$TOPO_IF0" -i "$TOPO_IF1" --interval 0.1
	has_port_fd() { ls -l "/proc/$FWD_PID/fd" 2>/dev/null | grep -q "anon_inode:\|socket:"; }
	wait_for 10 has_port_fd || fail "xdp-fwd did not start"
	pings "$TOPO_IP1" || fail "no forwarding"
	for fd in 0 1 2; do
		t=$(readlink "/proc/$FWD_PID/fd/$fd")
		[ "$t" = /dev/null ] || fail "fd $fd is '$t', not /dev/null"
	done
	alive || fail "xdp-fwd died"
	kill -INT "$FWD_PID"
	ends 0
	;;
stdout_stalled)
	# The stats reader stops reading (a FIFO nobody reads, its buffer full): link changes are
	# still handled (an interface deleted and back, forwarding again), SIGINT still ends
	# xdp-fwd at once with everything detached, and the dropped lines are counted.
	topo_up --hosts 2
	mkfifo "$WORK/stats"
	exec 7<>"$WORK/stats" # a reader that never reads
	# On failure the pipe is drained first: an xdp-fwd stuck writing would ignore the clean-up.
	sfail() { timeout 20 cat "$WORK/stats" >/dev/null & fail "$@"; }
	netns_bg FWD_PID "$TOPO_MID" "$FWD" -i "$TOPO_IF0" -i "$TOPO_IF1" --json --interval 0.1 >"$WORK/stats" 2>"$WORK/fwd.err"
	wait_for 10 grep -q "Ctrl-C stops" "$WORK/fwd.err" || sfail "xdp-fwd did not start: $(cat "$WORK/fwd.err")"
	# Full once xdp-fwd would wait in pipe_write, or says it drops lines.
	# SIGUSR1 prints a line at once: a burst of them fills it sooner than the intervals.
	stalled() {
		for _ in $(seq 50); do kill -USR1 "$FWD_PID"; done
		grep -q pipe_write "/proc/$FWD_PID/wchan" 2>/dev/null || grep -q "not being read" "$WORK/fwd.err"
	}
	wait_for 30 stalled || sfail "the FIFO never filled"
	pings "$TOPO_IP1" || sfail "no traffic"
	ip -n "$TOPO_MID" link del "$TOPO_IF1" || sfail "cannot delete $TOPO_IF1"
	wait_for 5 grep -q "$TOPO_IF1: interface gone" "$WORK/fwd.err" || sfail "no 'gone' line with stdout stalled: $(cat "$WORK/fwd.err")"
	leg_recreate 1
	wait_for 10 grep -q "$TOPO_IF1: interface back" "$WORK/fwd.err" || sfail "no 'back' line with stdout stalled: $(cat "$WORK/fwd.err")"
	wait_for 10 pings "$TOPO_IP1" 1 || sfail "no traffic after the re-attach with stdout stalled"
	kill -INT "$FWD_PID"
	wait_for 5 exited || sfail "SIGINT did not end xdp-fwd within 5 s with stdout stalled"
	ends 0
	exec 7<&-
	no_xdp_left || sfail "XDP program left"
	grep -q "lines of stats were dropped: stdout was not read" "$WORK/fwd.err" || sfail "dropped lines not said: $(cat "$WORK/fwd.err")"
	;;
mtu_raise)
	# MTU raised under a running xdp-fwd beyond one chunk: the ports are reopened with
	# multi-buffer and jumbo frames pass; never a silent drop.
	topo_up --hosts 2
	fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1"
	pings "$TOPO_IP1" || fail "no traffic at MTU 1500"
	for k in 0 1; do
		in_host "$k" ip link set eth0 mtu 9000 || fail "host $k: MTU 9000 refused"
		ip -n "$TOPO_MID" link set "m$k" mtu 9000 || fail "m$k: MTU 9000 refused"
	done
	wait_for 10 grep -q "reopened with multi-buffer" "$WORK/fwd.err" || fail "no reopen logged"
	pings "$TOPO_IP1" 3 8000 || fail "8000-byte pings lost after the MTU change"
	alive || fail "xdp-fwd died"
	fwd_stop INT
	no_xdp_left || fail "XDP program left"
	;;
mtu_noreattach)
	# The same with --no-reattach (no capabilities to reopen): the ports of that interface stop,
	# said loudly, instead of the kernel dropping every large frame unseen.
	topo_up --hosts 2
	fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --no-reattach
	pings "$TOPO_IP1" || fail "no traffic at MTU 1500"
	ip -n "$TOPO_MID" link set "$TOPO_IF0" mtu 9000 || fail "m0: MTU 9000 refused"
	wait_for 10 grep -q "$TOPO_IF0: MTU 9000 is more than one 2048-byte chunk holds.*--no-reattach.*stopped" "$WORK/fwd.err" ||
		fail "no loud refusal: $(cat "$WORK/fwd.err")"
	alive || fail "xdp-fwd died"
	fwd_stop INT
	;;
ifdel_reattach)
	# An interface deleted under traffic: said at once, nothing counted into it; the same name
	# back: re-attached, forwarding again; clean exit with every frame home.
	topo_up --hosts 2
	fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --json --interval 0.2
	pings "$TOPO_IP1" || fail "no traffic"
	netns_bg PING_PID "$TOPO_H0" ping -f -W 1 "$TOPO_IP1"
	ip -n "$TOPO_MID" link del "$TOPO_IF1" || fail "cannot delete $TOPO_IF1"
	wait_for 5 grep -q "$TOPO_IF1: interface gone" "$WORK/fwd.err" || fail "no log line about the deleted interface"
	# Two whole intervals after the event: nothing transmitted on the dead port.
	n=$(grep -c '"type":"interval"' "$WORK/fwd.out")
	more_lines() { [ "$(grep -c '"type":"interval"' "$WORK/fwd.out")" -ge "$1" ]; }
	wait_for 5 more_lines $((n + 3)) || fail "no stats lines"
	last=$(grep '"type":"interval"' "$WORK/fwd.out" | tail -1 | grep -o "\"name\":\"$TOPO_IF1@0\",[^}]*")
	[ "$(json_field "$last" tx_packets)" = 0 ] || fail "frames counted as sent into the deleted interface: $last"
	grep -q '"down":[1-9]' <<<"$(grep '"type":"interval"' "$WORK/fwd.out" | tail -1)" ||
		fail "frames for the deleted interface are not counted as drops"
	netns_stop "$PING_PID"
	# The same name back (as tools/topo.sh builds it).
	leg_recreate 1
	wait_for 10 grep -q "$TOPO_IF1: interface back" "$WORK/fwd.err" || fail "not re-attached: $(cat "$WORK/fwd.err")"
	wait_for 10 pings "$TOPO_IP1" 1 || fail "no traffic after the re-attach"
	pings "$TOPO_IP1" || fail "pings lost after the re-attach"
	fwd_stop INT
	no_xdp_left || fail "XDP program left"
	;;
rebind_others)
	# An interface back while the kernel still holds its queue (a socket closed just before:
	# xp_release_deferred; EBUSY injected for 900 binds, 4.5 s of 5 ms waits, xdp-fwd-faults).
	# Its bind waits with the workers running: the other ports forward throughout, and it is
	# re-attached once the queue binds. It used to wait with every worker parked.
	FWD=$BUILD/apps/xdp-fwd/xdp-fwd-faults
	[ -x "$FWD" ] || fail "xdp-fwd-faults not built at $FWD"
	topo_up --hosts 3
	XDP_FWD_FAULT_BIND_BUSY=900 fwd_start -m l2 -i "$TOPO_IF0" -i "$TOPO_IF1" -i "$TOPO_IF2"
	pings "$TOPO_IP1" || fail "no traffic"
	ip -n "$TOPO_MID" link del "$TOPO_IF2" || fail "cannot delete $TOPO_IF2"
	wait_for 5 grep -q "$TOPO_IF2: interface gone" "$WORK/fwd.err" || fail "no log line about the deleted interface"
	leg_recreate 2
	# The notice comes 500 ms into the wait: at least 4 s of it are left (400 binds 5 ms apart).
	wait_for 10 grep -q "port $TOPO_IF2:0: the queue is busy.*waiting up to 5 s" "$WORK/fwd.err" ||
		fail "no wait for $TOPO_IF2's queue: $(cat "$WORK/fwd.err")"
	got=$(in_host 0 ping -c 5 -i 0.2 -W 1 "$TOPO_IP1" | sed -n 's/.* \([0-9]*\) received.*/\1/p')
	grep -q "$TOPO_IF2: interface back" "$WORK/fwd.err" &&
		fail "$TOPO_IF2 was back before the pings ended: they show nothing about its wait"
	[ "${got:-0}" -ge 3 ] || fail "${got:-0} of 5 pings between $TOPO_IF0 and $TOPO_IF1 answered while $TOPO_IF2 waited"
	echo "   $got of 5 pings answered while $TOPO_IF2 waited for its queue"
	wait_for 15 grep -q "$TOPO_IF2: interface back (ifindex [0-9]*): $TOPO_IF2@0 re-attached" "$WORK/fwd.err" ||
		fail "not re-attached: $(cat "$WORK/fwd.err")"
	[ "$(grep -c "the queue is busy" "$WORK/fwd.err")" = 1 ] || fail "the wait was not said once"
	grep -q "cannot create the AF_XDP socket" "$WORK/fwd.err" && fail "the bind was given up"
	wait_for 10 pings "$TOPO_IP2" 1 || fail "no traffic to the re-attached $TOPO_IF2"
	pings "$TOPO_IP1" || fail "no traffic after the re-attach"
	fwd_stop INT
	no_xdp_left || fail "XDP program left"
	;;
probe_transient)
	# Flow offload's delivery probe fails once for want of memory (ENOMEM injected into its
	# BPF_PROG_RUN, xdp-fwd-faults) towards targets that drop redirected frames (veth peers
	# without NAPI). It is tried again, finds them bad, and no frame is lost there. It used to
	# give the probe up for good on any error: the first flow to each target was then its
	# trial, which lost its frames.
	. "$(dirname "$0")/../fwd/offload_lib.sh"
	off_need_faults
	topo_up --hosts 2
	for k in 0 1; do in_host $k ethtool -K eth0 gro off >/dev/null || fail "ethtool -K eth0 gro off"; done
	tcp3() {
		iperf_server
		in_host 0 iperf3 -c "$TOPO_IP1" -p 5201 -t 3 >"$WORK/iperf.out" 2>&1 || fail "iperf3: $(cat "$WORK/iperf.out")"
		netns_stop "$IPERF_PID"
	}
	XDP_FWD_FAULT_PROBE_ENOMEM=1 fwd_measure _ tcp3 --offload-after 10 --interval 0.2
	grep -q "delivery probe towards .* failed (Cannot allocate memory): tried again" "$WORK/fwd.err" ||
		fail "the injected probe failure was not reported as transient: $(cat "$WORK/fwd.err")"
	off_skip_without probe # the retry itself needs the live-frame run
	[ "$(off_total m1@0 lost)" = 0 ] ||
		fail "$(off_total m1@0 lost) frames lost on m1: the probe was given up after one failure"
	grep -q "m1 sent 0 of [0-9]* frames redirected to it" "$WORK/fwd.err" ||
		fail "the target that drops redirected frames was not found: $(cat "$WORK/fwd.err")"
	[ "$(off_total m0@0 installed)" = 0 ] || fail "$(off_total m0@0 installed) flows offloaded towards the bad target"
	echo "   probe failed once, tried again: m1 found bad, 0 frames lost there"
	;;
rule_target)
	# Targets the device does not have are refused at start.
	topo_up --hosts 2
	refused "no port serves socket 5" -i "$TOPO_IF0" -i "$TOPO_IF1" -r "any -> sock 5"
	refused "no port serves socket 1" -i "$TOPO_IF0" -i "$TOPO_IF1" -r "any -> group 1-3"
	refused "no port serves socket 1" -i "$TOPO_IF0" -i "$TOPO_IF1" -r "any -> group 0-63"
	refused "no port serves socket 99999" -i "$TOPO_IF0" -i "$TOPO_IF1" -r "any -> sock 99999"
	fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" -r "any -> sock 0"
	pings "$TOPO_IP1" || fail "a served target does not forward"
	fwd_stop INT
	;;
rule_warn)
	# A rule that can never match and a catch-all drop are named at start.
	topo_up --hosts 2
	fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" -r "icmp6 ipv4 -> drop" -r "udp dport 9 -> drop"
	grep -q "rule 'icmp6 ipv4 -> drop'.*can never match" "$WORK/fwd.err" || fail "no never-match warning: $(cat "$WORK/fwd.err")"
	grep -q "can never match" <<<"$(grep "udp dport 9" "$WORK/fwd.err")" && fail "a good rule was called never-matching"
	fwd_stop INT
	fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" -r "any -> drop"
	grep -q "rule 'any -> drop'.*drops every frame" "$WORK/fwd.err" || fail "no catch-all warning: $(cat "$WORK/fwd.err")"
	fwd_stop INT
	;;
rule_counters)
	# Frames a rule drops appear in the stats: frames in = frames received + counted drops.
	topo_up --hosts 2
	fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" -r "icmp -> drop" --json --interval 0.2
	sent0=$(in_host 0 cat /sys/class/net/eth0/statistics/tx_packets)
	in_host 0 ping -c 3 -i 0.2 -W 1 "$TOPO_IP1" >/dev/null && fail "pings passed a drop rule"
	sent=$(( $(in_host 0 cat /sys/class/net/eth0/statistics/tx_packets) - sent0 ))
	wait_for 5 grep -q '"steer":\[{"ifname":"m0".*"drop":[1-9]' "$WORK/fwd.out" || fail "no rule drops in the interval lines"
	fwd_stop INT
	total=$(grep '"type":"total"' "$WORK/fwd.out")
	steer=$(grep -o '"steer":\[{"ifname":"m0"[^]]*\][^}]*' <<<"$total")
	hits=$(grep -o '"hits":[0-9]*' <<<"$steer" | head -1 | cut -d: -f2)
	drop=$(grep -o '"drop":[0-9]*' <<<"$steer" | tail -1 | cut -d: -f2)
	[ "${hits:-0}" -ge 3 ] && [ "${drop:-0}" -ge 3 ] || fail "rule hits/drops not in the totals: $steer"
	rx=$(port_total "$TOPO_IF0@0" rx_packets)
	# The totals started before the pings; frames in at m0 (ARP included) are all accounted.
	[ $((rx + drop)) -ge "$sent" ] || fail "frames in $sent > received $rx + dropped $drop"
	echo "   sent $sent, received $rx, dropped by rule $drop"
	;;
rule_live)
	# A live edit (umem-steer) with a target the device does not have is refused.
	topo_up --hosts 2
	fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" -r "udp dport 9 -> drop"
	STEER=$BUILD/tools/umem-steer/umem-steer
	rc=0
	ip netns exec "$TOPO_MID" "$STEER" add "$TOPO_IF0" "any -> sock 5" >"$WORK/out" 2>"$WORK/err" || rc=$?
	[ $rc != 0 ] || fail "umem-steer accepted a target the device lacks"
	grep -q "has no queue 5\|socket 5" "$WORK/err" || fail "message: $(cat "$WORK/err")"
	ip netns exec "$TOPO_MID" "$STEER" show "$TOPO_IF0" | grep -q "sock 5" && fail "the rule is in the table"
	pings "$TOPO_IP1" || fail "traffic stopped"
	fwd_stop INT
	;;
rule_live_unserved)
	# A live edit to a socket the device has but no port of xdp-fwd serves: named at once.
	topo_up --hosts 2 --queues 2
	hosts_on_queue0
	fwd_start -i "$TOPO_IF0@0" -i "$TOPO_IF1@0" -r "udp dport 9 -> drop"
	ip netns exec "$TOPO_MID" "$BUILD/tools/umem-steer/umem-steer" add "$TOPO_IF0" "udp dport 7 -> sock 1" >/dev/null ||
		fail "umem-steer refused a socket the device has"
	wait_for 5 grep -q "$TOPO_IF0: rule .*'udp dport 7 -> sock 1' (edited live) sends frames to socket 1, which no port of xdp-fwd serves" \
		"$WORK/fwd.err" || fail "no warning about the live edit: $(cat "$WORK/fwd.err")"
	# A prefix rule too (found by a walk of the tries in slices), and each rule named once.
	ip netns exec "$TOPO_MID" "$BUILD/tools/umem-steer/umem-steer" add "$TOPO_IF0" "src 10.9.0.0/16 -> sock 1" >/dev/null ||
		fail "umem-steer refused a prefix rule to a socket the device has"
	wait_for 5 grep -q "$TOPO_IF0: rule .*'src 10.9.0.0/16 -> sock 1' (edited live) sends frames to socket 1" \
		"$WORK/fwd.err" || fail "no warning about the live prefix edit: $(cat "$WORK/fwd.err")"
	[ "$(grep -c "'udp dport 7 -> sock 1' (edited live)" "$WORK/fwd.err")" = 1 ] ||
		fail "the table rule was named again at a later edit: $(cat "$WORK/fwd.err")"
	pings "$TOPO_IP1" || fail "traffic stopped"
	fwd_stop INT
	;;
queues_unserved)
	# A 2-queue device with only queue 0 served: warned, and told where queue 1's frames go.
	topo_up --hosts 2 --queues 2
	# The warning follows the "Ctrl-C stops" line fwd_start waits for: read it after the exit.
	fwd_start -i "$TOPO_IF0@0" -i "$TOPO_IF1@0"
	fwd_stop INT
	grep -q "$TOPO_IF0: RX queue 1 of 2 is served by no socket" "$WORK/fwd.err" || fail "no warning: $(cat "$WORK/fwd.err")"
	fwd_start -i "$TOPO_IF0@all" -i "$TOPO_IF1@all"
	fwd_stop INT
	grep -q "served by no socket" "$WORK/fwd.err" && fail "warned with every queue served"
	;;
frames_small)
	topo_up --hosts 2
	refused "the rings need" -i "$TOPO_IF0" -i "$TOPO_IF1" --frames 256
	;;
second_instance)
	# A second xdp-fwd on another queue of the same device is told who holds it, and the
	# first one's programs stay.
	topo_up --hosts 2 --queues 2
	hosts_on_queue0
	fwd_start -i "$TOPO_IF0@0" -i "$TOPO_IF1@0"
	progs=$(ip -n "$TOPO_MID" -d link show | grep -o "prog/xdp id [0-9]*")
	for rules in "" "udp dport 9 -> drop"; do
		refused_run "in use by another xdp-fwd (pid $FWD_PID)" -i "$TOPO_IF0@1" -i "$TOPO_IF1@1" ${rules:+-r "$rules"}
		grep -q "not ours" "$WORK/err" && fail "libumem's program called not ours: $(cat "$WORK/err")"
		[ "$(ip -n "$TOPO_MID" -d link show | grep -o "prog/xdp id [0-9]*")" = "$progs" ] ||
			fail "the first instance's programs changed"
	done
	pings "$TOPO_IP1" || fail "the first instance stopped forwarding"
	fwd_stop INT
	;;
lock_dir)
	# The running instance holds a lock file naming its pid; an instance leaving never removes
	# /run/xdp-fwd (an instance starting elsewhere, between its mkdir and its open, would run
	# unlocked, and a second one on its interface would get EBUSY seconds later). In a /run of
	# its own (a private mount namespace): other xdp-fwd on the machine keep the shared one.
	topo_up --hosts 2
	idx=$(ip -n "$TOPO_MID" -o link show "$TOPO_IF0" | cut -d: -f1)
	ip netns exec "$TOPO_MID" unshare -m sh -c '
		mount -t tmpfs none /run || exit 77
		lockf=/run/xdp-fwd/net$(stat -L -c %i /proc/self/ns/net)-if$1.lock
		"$2" -i "$3" -i "$4" --interval 3600 >"$5/out" 2>"$5/err" &
		pid=$!
		for i in $(seq 100); do grep -q "Ctrl-C stops" "$5/err" && break; sleep 0.1; done
		[ "$(cat "$lockf")" = "$pid" ] || { echo "$lockf does not name the running pid $pid"; exit 1; }
		flock -n "$lockf" true && { echo "$lockf is not locked by the running instance"; exit 1; }
		kill -INT $pid
		wait $pid || { echo "xdp-fwd exited with $?"; exit 1; }
		[ ! -e "$lockf" ] || { echo "$lockf left behind"; exit 1; }
		[ -d /run/xdp-fwd ] || { echo "an instance leaving removed /run/xdp-fwd"; exit 1; }
	' sh "$idx" "$FWD" "$TOPO_IF0" "$TOPO_IF1" "$WORK" >"$WORK/lock.log" 2>&1
	rc=$?
	[ $rc = 77 ] && { echo "SKIP: no private /run"; exit 77; }
	[ $rc = 0 ] || fail "lock: $(cat "$WORK/lock.log" "$WORK/err")"
	;;
json_names)
	# --json stays valid JSON whatever bytes an interface name holds: a quote, and a byte that
	# is not UTF-8 (0xff, kept as \u00ff) in the port, steer and MAC-table names.
	topo_up --hosts 2
	q='a"b' x=$'c\xffd'
	ip -n "$TOPO_MID" link set "$TOPO_IF0" name "$q" || fail "cannot rename $TOPO_IF0 to $q"
	ip -n "$TOPO_MID" link set "$TOPO_IF1" name "$x" || { echo "SKIP: the kernel refuses a 0xff in a name"; exit 77; }
	fwd_start --mode l2 --json --interval 0.2 -i "$q" -i "$x" -r "udp dport 9 -> drop"
	pings "$TOPO_IP1" || fail "no traffic through $q and $x"
	kill -USR1 "$FWD_PID"
	wait_for 10 grep -q '"mac_table"' "$WORK/fwd.out" || fail "no MAC table after SIGUSR1"
	fwd_stop INT
	python3 - "$WORK/fwd.out" <<-'PY' || fail "--json output is not JSON"
		import json, sys
		names = set()
		def walk(v):
		    if isinstance(v, dict):
		        for k, w in v.items():
		            if k in ("name", "ifname", "port"):
		                names.add(w)
		            walk(w)
		    elif isinstance(v, list):
		        for w in v:
		            walk(w)
		for line in open(sys.argv[1], "rb"):
		    walk(json.loads(line.decode("utf-8")))
		want = {'a"b@0', "c\u00ffd@0", 'a"b', "c\u00ffd"}
		assert want <= names, f"names {names}, want {want}"
	PY
	;;
startup_signals)
	# Signals during start-up: while it waits for the --pcap FIFO's reader, SIGUSR1 is ignored
	# (it starts once the reader comes), SIGINT and SIGTERM undo the start-up (no lock file, no
	# program) and exit 128 + the signal; so does a SIGTERM early in start-up.
	topo_up --hosts 2
	idx=$(ip -n "$TOPO_MID" -o link show "$TOPO_IF0" | cut -d: -f1)
	lockf=/run/xdp-fwd/net$(ip netns exec "$TOPO_MID" stat -L -c %i /proc/self/ns/net)-if$idx.lock
	in_fifo_open() { grep -q fifo_open "/proc/$FWD_PID/wchan" 2>/dev/null || grep -q fifo_open "/proc/$FWD_PID/stack" 2>/dev/null; }
	undone() { # SIG RC
		# A start-up deaf to it waits on: its FIFO gets a reader, so the clean-up can end it.
		wait_for 10 exited || { timeout 20 cat "$WORK/cap" >/dev/null & fail "SIG$1 did not end the start-up"; }
		ends "$2"
		[ ! -e "$lockf" ] || fail "SIG$1: $lockf left behind"
		no_xdp_left || fail "SIG$1: an XDP program left attached"
	}
	for sig in USR1 INT TERM; do
		rm -f "$WORK/cap"
		mkfifo "$WORK/cap"
		netns_bg FWD_PID "$TOPO_MID" "$FWD" -i "$TOPO_IF0" -i "$TOPO_IF1" --pcap "$WORK/cap" >"$WORK/fwd.out" 2>"$WORK/fwd.err"
		wait_for 10 in_fifo_open || fail "xdp-fwd is not waiting for the FIFO's reader: $(cat "/proc/$FWD_PID/wchan" "$WORK/fwd.err")"
		[ -e "$lockf" ] || fail "no lock file while starting"
		kill -"$sig" "$FWD_PID"
		case $sig in
		USR1)
			cat "$WORK/cap" >/dev/null &
			wait_for 10 grep -q "Ctrl-C stops" "$WORK/fwd.err" || fail "SIGUSR1 during start-up: $(cat "$WORK/fwd.err")"
			fwd_stop INT
			;;
		INT) undone INT 130 ;;
		TERM) undone TERM 143 ;;
		esac
		grep -q "during start-up: undone" "$WORK/fwd.err" || [ $sig = USR1 ] || fail "SIG$sig: not said: $(cat "$WORK/fwd.err")"
		echo "   SIG$sig while waiting for the FIFO's reader: ok"
	done
	for i in 1 2 3 4 5; do
		netns_bg FWD_PID "$TOPO_MID" "$FWD" -i "$TOPO_IF0" -i "$TOPO_IF1" --interval 3600 >"$WORK/fwd.out" 2>"$WORK/fwd.err"
		sleep 0.0$((i * 2)) # a point in start-up, not a synchronization
		kill -TERM "$FWD_PID"
		rc=0
		wait "$FWD_PID" || rc=$?
		netns_stop "$FWD_PID"
		FWD_PID=""
		# Stopped in start-up (143) or once running (0): nothing left either way.
		[ $rc = 143 ] || [ $rc = 0 ] || fail "SIGTERM after ${i}0 ms: exit $rc: $(cat "$WORK/fwd.err")"
		[ ! -e "$lockf" ] || fail "SIGTERM after ${i}0 ms: $lockf left behind"
		no_xdp_left || fail "SIGTERM after ${i}0 ms: an XDP program left attached"
	done
	;;
foreign_generic)
	# A program that is not libumem's, attached in generic mode: the hint that removes it is
	# "xdpgeneric off" ("xdp off" leaves a generic program attached), and following it works.
	topo_up --hosts 2
	OBJ=$BUILD/tools/fwd-bench/xdp_redirect_devmap.bpf.o
	[ -f "$OBJ" ] || { echo "skip: no foreign program object at $OBJ" >&2; exit 77; }
	ip -n "$TOPO_MID" link set dev "$TOPO_IF0" xdpgeneric obj "$OBJ" sec xdp.frags || fail "cannot attach the foreign program"
	for rules in "" "udp dport 9 -> drop"; do
		refused_run "ip link set dev $TOPO_IF0 xdpgeneric off" -i "$TOPO_IF0" -i "$TOPO_IF1" ${rules:+-r "$rules"}
	done
	ip -n "$TOPO_MID" link set dev "$TOPO_IF0" xdpgeneric off || fail "the hint's command failed"
	no_xdp_left || fail "the hint's command left the program attached"
	fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1"
	pings "$TOPO_IP1" || fail "no traffic after the foreign program went"
	fwd_stop INT
	;;
pool_log)
	# A small area under a flood: the pool runs dry over and over; the log says so once per
	# episode per few seconds, with counts, not once per turn.
	topo_up --hosts 2
	fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --rx-ring 128 --tx-ring 128 --fill-ring 256 --comp-ring 256 --frames 480
	netns_bg PING_PID "$TOPO_H0" ping -f -s 1400 "$TOPO_IP1" >/dev/null
	netns_bg PING2_PID "$TOPO_H1" ping -f -s 1400 "$TOPO_IP0" >/dev/null
	wait_for 10 grep -q "pool empty" "$WORK/fwd.err" || fail "the pool never ran dry: $(cat "$WORK/fwd.err")"
	t0=$SECONDS
	until [ $((SECONDS - t0)) -ge 4 ]; do sleep 0.5; done # a fixed observation window, not a sync
	netns_stop "$PING_PID"
	netns_stop "$PING2_PID"
	lines=$(grep -c "pool empty\|topped up" "$WORK/fwd.err")
	echo "   $lines pool lines in about 4 s: $(grep "pool empty" "$WORK/fwd.err" | tail -1)"
	[ "$lines" -le 12 ] || fail "$lines pool-empty/topped-up lines in about 4 s"
	fwd_stop INT
	;;
zerocopy_hint)
	topo_up --hosts 2
	refused "without -z" -i "$TOPO_IF0" -i "$TOPO_IF1" -z
	grep -q "UMEM_PORT_ZC" "$WORK/err" && fail "the -z error names library constants: $(cat "$WORK/err")"
	;;
*)
	fail "unknown case '$CASE'"
	;;
esac
no_xdp_left || fail "XDP program left"
log "ok"
