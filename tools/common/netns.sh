#!/usr/bin/env bash
# Private network namespaces for shell scripts: the netns tests (label netns, through
# test/common/netns.sh) and the tools that build topologies (soak.sh, fwd-bench.sh). Source it,
# then call netns_init <tag>. It lives with the tools: tests may use tools, tools never use tests.
#
#   netns_init TAG               skip (exit 77) unless root with `ip netns`; installs the cleanup
#                                trap (EXIT, INT, TERM, HUP): every namespace and background job
#                                this script created goes, whatever path the script exits by;
#                                first sweeps what killed runs left (netns_sweep)
#   netns_sweep                  removes the namespaces of runs whose script is dead: those
#                                named ns-TAG-PID-N and the topologies netns_topo registered
#                                (killed with the processes still in them); a live PID's and
#                                names of other patterns stay
#   netns_add VAR                new namespace ns-TAG-PID-N; its name is stored in VAR
#   netns_veth NS1 IF1 NS2 IF2   veth pair with one end in each namespace, both up
#   netns_bg VAR NS CMD...       CMD in NS in the background, in its own process group; its PID
#                                in VAR; killed (by PID) at cleanup
#   netns_stop PID               stops one background job (its process group: SIGTERM) and reaps
#                                it; a job still running 30 s later is a hang: where it waits is
#                                printed, it is killed, and the script will exit 1
#   wait_for TIMEOUT_S CMD...    runs CMD every 50 ms until it succeeds; 1 after TIMEOUT_S
#   netns_topo TOPO PREFIX       tools/topo.sh's topology named PREFIX also goes at cleanup
#   netns_workdir VAR            a scratch folder (removed at cleanup); its path in VAR
#   cpu_ticks STATFILE           utime + stime (clock ticks) of /proc/PID[/task/TID]/stat; 0
#                                when it cannot be read (no such process)
#   ping_median_us FILE          median RTT in µs (one decimal) of ping's per-echo lines in FILE;
#                                nothing when it has none
#
# Interface names are per namespace, so short fixed names inside generated namespaces are safe.

NETNS_TAG=""
NETNS_LIST=()
NETNS_JOBS=()
NETNS_SEQ=0
NETNS_TOPO=()   # topo.sh path and prefix, when a script built that topology
NETNS_WORK=""
NETNS_HUNG=0    # 1 once a job outlived its SIGTERM by 30 s (job_reap)
# Topology prefixes by owner: a file per script PID ("PID STARTTIME" names it, so a reused PID
# is not its owner), one prefix a line. A script killed outright (ctest's timeout sends SIGKILL)
# runs no trap; the next netns_init removes what it left. /run goes with the namespaces at boot.
NETNS_REG=${UMEM_NETNS_REG:-/run/umem-test-netns}

# pid_start PID: the start time of PID (clock ticks since boot); nothing when it is gone.
pid_start() {
	sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{print $20}'
}

# netns_gone NS: stops the processes left in NS (leftovers of a dead run: a forwarder in its own
# process group outlives the script), then deletes it.
netns_gone() {
	local p
	for p in $(ip netns pids "$1" 2>/dev/null); do
		kill -KILL "$p" 2>/dev/null
	done
	ip netns delete "$1" 2>/dev/null
}

netns_sweep() {
	local ns pid f prefix
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do
		[[ "$ns" =~ ^ns-[A-Za-z0-9_]+-([0-9]+)-[0-9]+$ ]] || continue
		pid=${BASH_REMATCH[1]}
		[ "$pid" != $$ ] && [ ! -e "/proc/$pid" ] && netns_gone "$ns"
	done
	for f in "$NETNS_REG"/*; do
		[ -f "$f" ] || continue
		[[ "${f##*/}" =~ ^([0-9]+)-([0-9]+)$ ]] || continue
		[ "$(pid_start "${BASH_REMATCH[1]}")" = "${BASH_REMATCH[2]}" ] && continue
		while read -r prefix; do
			for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do
				[[ "$ns" =~ ^"$prefix"-(mid|h[0-9]+)$ ]] && netns_gone "$ns"
			done
		done <"$f"
		rm -f "$f"
	done
}

# job_term PID: SIGTERM to a job's process group, SIGCONT first: a job a test stopped (SIGSTOP)
# takes the TERM only when continued. Not after the TERM: a SIGCONT discards a pending stop,
# and an ASan build's leak check at exit stops the process's threads through ptrace (a SIGSTOP
# each), so a SIGCONT that lands then leaves its tracer waiting for good (seen: steer_prefix's
# receiver and an xsk-gen sink, "still runs 30 s after SIGTERM", a thread in do_wait).
job_term() {
	kill -CONT -- "-$1" 2>/dev/null
	kill -TERM -- "-$1" 2>/dev/null
}

# job_reap PID: waits for a job that was sent SIGTERM. One still running 30 s (NETNS_REAP_S)
# later is a hang
# (a test's own timeout would kill the script and say nothing of it): where each of its
# group's threads waits goes to stderr, the group gets SIGKILL, and the script's exit code
# will be 1 (NETNS_HUNG).
job_reap() {
	local pid=$1 end=$((SECONDS + ${NETNS_REAP_S:-30})) st p t
	while st=$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1) && [ -n "$st" ] && [ "$st" != Z ]; do
		if [ $SECONDS -ge "$end" ]; then
			echo "netns: job $pid still runs ${NETNS_REAP_S:-30} s after SIGTERM; where its threads wait:" >&2
			for p in $(pgrep -g "$pid"); do
				echo "  pid $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" >&2
				for t in /proc/"$p"/task/*; do
					echo "    task ${t##*/} $(cut -d' ' -f3 "$t/stat" 2>/dev/null) wchan $(cat "$t/wchan" 2>/dev/null)" \
						"$(tr '\n' ' ' <"$t/stack" 2>/dev/null | cut -c1-300)" >&2
				done
			done
			kill -KILL -- "-$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			NETNS_HUNG=1
			return
		fi
		sleep 0.05
	done
	wait "$pid" 2>/dev/null
}

netns_cleanup() {
	local pid ns
	for pid in "${NETNS_JOBS[@]}"; do
		job_term "$pid"
	done
	for pid in "${NETNS_JOBS[@]}"; do
		job_reap "$pid"
	done
	NETNS_JOBS=()
	for ns in "${NETNS_LIST[@]}"; do
		ip netns delete "$ns" 2>/dev/null
	done
	NETNS_LIST=()
	if [ ${#NETNS_TOPO[@]} -eq 2 ]; then
		"${NETNS_TOPO[0]}" down --prefix "${NETNS_TOPO[1]}" 2>/dev/null
		NETNS_TOPO=()
		rm -f "$NETNS_REG/$$-$(pid_start $$)"
	fi
	[ -n "$NETNS_WORK" ] && rm -rf "$NETNS_WORK"
	NETNS_WORK=""
	return $NETNS_HUNG
}

netns_topo() {
	NETNS_TOPO=("${1:?netns_topo needs topo.sh}" "${2:?netns_topo needs a prefix}")
	mkdir -p "$NETNS_REG" && echo "$2" >>"$NETNS_REG/$$-$(pid_start $$)"
}

netns_workdir() {
	NETNS_WORK=$(mktemp -d "/tmp/${NETNS_TAG:-netns}-$$.XXXXXX")
	printf -v "$1" '%s' "$NETNS_WORK"
}

netns_init() {
	NETNS_TAG=${1:?netns_init needs a tag}
	if [ "$(id -u)" != 0 ]; then
		echo "skip: needs root" >&2
		exit 77
	fi
	if ! ip netns list >/dev/null 2>&1; then
		echo "skip: ip netns unavailable" >&2
		exit 77
	fi
	# A job that hung at cleanup fails a run that passed otherwise.
	trap 'rc=$?; set +e; netns_cleanup || [ $rc != 0 ] || rc=1; exit $rc' EXIT
	trap 'exit 130' INT TERM HUP
	netns_sweep
}

netns_add() {
	local __var=$1 name
	NETNS_SEQ=$((NETNS_SEQ + 1))
	name="ns-$NETNS_TAG-$$-$NETNS_SEQ"
	ip netns add "$name" || return 1
	NETNS_LIST+=("$name")
	ip -n "$name" link set lo up
	printf -v "$__var" '%s' "$name"
}

netns_veth() {
	local ns1=$1 if1=$2 ns2=$3 if2=$4
	ip -n "$ns1" link add "$if1" type veth peer name "$if2" netns "$ns2" || return 1
	ip -n "$ns1" link set "$if1" up && ip -n "$ns2" link set "$if2" up
}

netns_bg() {
	local __var=$1 ns=$2
	shift 2
	# setsid: its own process group, so cleanup stops the job and everything it started.
	setsid ip netns exec "$ns" "$@" &
	NETNS_JOBS+=("$!")
	printf -v "$__var" '%s' "$!"
}

cpu_ticks() {
	# Fields after the command name (which may hold spaces): utime is the 12th, stime the 13th.
	sed 's/^.*) //' "$1" 2>/dev/null | awk '{print $12 + $13} END {if (!NR) print 0}'
}

ping_median_us() {
	sed -n 's/.* time=\([0-9.]*\) ms.*/\1/p' "$1" | sort -g |
		awk '{a[NR] = $1} END { if (NR) printf "%.1f\n", 1000 * (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'
}

# The books of a path (sent = received + counted drops) use these two.
# path_drops "NS IFNAME"...: rx_dropped + tx_dropped summed over the interfaces (a veth counts
# the XDP redirects that failed, an AF_XDP RX ring full for one, as RX drops of the interface
# the frame arrived on).
path_drops() {
	local p
	for p in "$@"; do
		ip -n "${p% *}" -s -j link show "${p#* }" | grep -o '"dropped":[0-9]*' | cut -d: -f2
	done | awk '{ s += $1 } END { print s + 0 }'
}

# fwd_drops FILE [generic]: xdp-fwd's own drops by reason in its JSON "total" line. Its xsk_*
# counters are the kernel's AF_XDP drops, which path_drops counts already under native XDP;
# under generic XDP (--xdp-mode skb) the device counts a failed redirect nowhere, so "generic"
# adds them. Never tx_dropped_kernel: that is the output interface's tx_dropped, in path_drops.
fwd_drops() {
	grep '"type":"total"' "$1" | grep -o '"drops":{[^}]*}' | grep -o '"[a-z0-9_]*":[0-9]*' |
		grep -v '"tx_dropped_kernel"' |
		{ if [ "${2:-}" = generic ]; then cat; else grep -v '"xsk_'; fi; } |
		cut -d: -f2 | awk '{ s += $1 } END { print s + 0 }'
}

netns_stop() {
	local pid=$1 keep=() p
	job_term "$pid"
	job_reap "$pid"
	for p in "${NETNS_JOBS[@]}"; do
		[ "$p" = "$pid" ] || keep+=("$p")
	done
	NETNS_JOBS=("${keep[@]}")
}

# The factor a condition's time bound stretches by on a loaded machine: the run queue's
# length over the CPUs (the 1-minute load average, rounded up), 1 to 8. What takes 1 s on an
# idle machine can take N s when N runnable tasks share each CPU (shared CI runners, the suite
# next to CPU hogs); an idle machine keeps the bounds as written. UMEM_LOADAVG: a file in
# /proc/loadavg's format, for the test of this function.
wait_scale() {
	local load n
	read -r load _ <"${UMEM_LOADAVG:-/proc/loadavg}" || load=0
	n=$(nproc)
	load=$(( (${load%%.*} * 100 + 10#${load#*.} + 0) )) # hundredths; "3.57" -> 357
	load=$(( (load + n * 100 - 1) / (n * 100) ))
	echo $(( load < 1 ? 1 : load > 8 ? 8 : load ))
}

# wait_for SECONDS CMD...: runs CMD until it succeeds; 1 when SECONDS (times wait_scale) pass.
wait_for() {
	local timeout=$1 end
	shift
	end=$((SECONDS + timeout * $(wait_scale)))
	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.05
	done
}
