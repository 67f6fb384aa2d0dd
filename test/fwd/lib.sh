# Shared by the xdp-fwd netns tests (sourced). Builds the topology with tools/topo.sh under a
# prefix unique to this test run, runs xdp-fwd in the middle namespace in its own process group,
# and removes everything on every exit path. No `set -e`: the shared helpers of
# test/common/netns.sh are not written for it; every check here fails explicitly.
set -uo pipefail

SRC=${UMEM_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${UMEM_BUILD_DIR:-$SRC/build}
FWD=$BUILD/apps/xdp-fwd/xdp-fwd
TOPO=$SRC/tools/topo.sh
NAME=$(basename "$0" .sh)
TAG=${FWD_TEST_TAG:-fw} # helpers' tests that reuse this file pass their own tag
PREFIX="$TAG${NAME#fwd}-$$"
PREFIX=${PREFIX//_/}
WORK=""
FWD_PID=""

# shellcheck source=../common/netns.sh
. "$SRC/test/common/netns.sh"

fail() { echo "FAIL: $*" >&2; [ -f "$WORK/fwd.out" ] && { echo "--- xdp-fwd output:"; cat "$WORK/fwd.out" "$WORK/fwd.err"; } >&2; exit 1; }
log() { echo "== $*"; }

netns_init "$TAG"
# netns_init's trap stops our background jobs; the topology and the scratch folder go too.
netns_topo "$TOPO" "$PREFIX"
netns_workdir WORK
[ -x "$FWD" ] || fail "xdp-fwd not built at $FWD"

topo_up() { # topo.sh up options
	local vars
	vars=$("$TOPO" up --prefix "$PREFIX" "$@") || fail "topo.sh up $*"
	eval "$vars"
}

in_host() { local k=$1; shift; local ns="TOPO_H$k"; ip netns exec "${!ns}" "$@"; }

# xdp-fwdctl on the control socket $SOCK (the control tests set it).
CTL=$BUILD/apps/xdp-fwd/xdp-fwdctl
ctl() { "$CTL" -s "$SOCK" "$@"; }
# ctl_expect RC OUTFILE ARGS...: xdp-fwdctl exits with RC; stdout and stderr in OUTFILE.
ctl_expect() {
	local want=$1 out=$2 rc=0
	shift 2
	ctl "$@" >"$out" 2>&1 || rc=$?
	[ "$rc" = "$want" ] || fail "xdp-fwdctl $*: exit $rc, expected $want: $(cat "$out")"
}

# stream_tools: xsk-gen ($GEN) and its helpers (test/common/xsk_gen.sh) for stream_start and
# gen_books, and xdp-fwdctl, checked built.
stream_tools() {
	GEN=$BUILD/tools/xsk-gen/xsk-gen
	[ -x "$GEN" ] || fail "xsk-gen not built at $GEN"
	[ -x "$CTL" ] || fail "xdp-fwdctl not built at $CTL"
	# shellcheck source=../common/xsk_gen.sh
	. "$SRC/test/common/xsk_gen.sh"
}

# The port-change tests' helpers (ports_live.sh, ports_fail.sh), on xdp-fwd's control socket $SOCK.
# The port table without its counts (name, interface, queue, worker, bind, xdp), to compare
# before and after a request that must change nothing.
table() { ctl ports | awk '{ print $1, $2, $3, $4, $5, $6 }'; }
# ctl_refused EXPECTED ARGS...: the request fails with an error line holding EXPECTED, and the port
# table and the interfaces' XDP programs are as they were.
ctl_refused() {
	local want=$1 before after
	shift
	before=$(table; ip -n "$TOPO_MID" -o link show | grep -o '^[0-9]*: [^:@]*\|prog/xdp id [0-9]*')
	ctl_expect 1 "$WORK/c" "$@"
	grep -q "^xdp-fwdctl: error: .*$want" "$WORK/c" || fail "$*: expected '$want': $(cat "$WORK/c")"
	after=$(table; ip -n "$TOPO_MID" -o link show | grep -o '^[0-9]*: [^:@]*\|prog/xdp id [0-9]*')
	[ "$before" = "$after" ] || fail "$* changed something: before
$before
after
$after"
}
xdp_on() { ip -n "$TOPO_MID" -d link show dev "$1" | grep -q "prog/xdp"; }
# prog_on IF: the id of the XDP program on IF in the middle namespace, or nothing.
prog_on() { ip -n "$TOPO_MID" -d link show dev "$1" | grep -o 'prog/xdp id [0-9]*' | grep -o '[0-9]*$'; }
# ping_ok K L: host K reaches host L.
ping_ok() { in_host "$1" ping -c 3 -i 0.2 -W 2 "$(eval echo "\$TOPO_IP$2")" >/dev/null 2>&1; }
# stream_start: a UDP stream host 0 -> host 1 (xsk-gen on queue 0 of each host's eth0: GEN, and
# test/common/xsk_gen.sh sourced) until stream_stop; returns once it crosses xdp-fwd. SINK_OPTIONS
# (default --idle 3: the sink ends 3 s after the last frame) for a stream that pauses longer.
stream_start() {
	[ $# -gt 0 ] || set -- --idle 3
	sink_start "$TOPO_H1" "$@"
	netns_bg GEN_PID "$TOPO_H0" "$GEN" gen -i eth0 --json --dst-ip "$TOPO_IP1" --rate 20000 --duration 0 \
		>"$WORK/gen.out" 2>"$WORK/gen.err"
	wait_for 20 flowing || fail "the stream does not reach $TOPO_IF1: $(ctl ports)"
}
flowing() { [ "$(port_tx "$TOPO_IF1@0")" -gt 1000 ] 2>/dev/null; }
# stream_stop: the generator stopped, the sink's end awaited (its --idle).
stream_stop() {
	kill -INT "$GEN_PID"
	wait "$GEN_PID"
	netns_stop "$GEN_PID"
	sink_wait
}
# port_tx PORT: the frames xdp-fwd sent out of PORT so far.
port_tx() { ctl --json ports | grep -o "\"name\":\"$1\"[^}]*" | grep -o '"tx_packets":[0-9]*' | cut -d: -f2; }
# more_tx PORT N: PORT sent more than N frames so far.
more_tx() { [ "$(port_tx "$1")" -gt "$2" ] 2>/dev/null; }

# leg_recreate K: host K's veth pair again after a `link del` of m<K> (as tools/topo.sh builds it).
leg_recreate() {
	local k=$1 mid_if="TOPO_IF$1" ns="TOPO_H$1" mac="TOPO_MAC$1" ip="TOPO_IP$1"
	ip -n "$TOPO_MID" link add "${!mid_if}" type veth peer name eth0 netns "${!ns}" || fail "cannot recreate ${!mid_if}"
	ip -n "$TOPO_MID" link set "${!mid_if}" up
	in_host "$k" ip link set eth0 address "${!mac}" up
	in_host "$k" ip addr add "${!ip}/24" dev eth0
	in_host "$k" ethtool -K eth0 tx off gro on >/dev/null
}

# fwd_start ARGS...: xdp-fwd in the middle namespace, own process group (setsid), output in
# $WORK; returns once its ports are bound (it prints the port list after set-up).
# FWD_TEST_ARGS (environment) adds options to every start: `--rx-ring 64` makes the kernel drop
# at the RX ring as a loaded machine does, to check a test's books against it.
fwd_start() {
	local extra
	read -ra extra <<<"${FWD_TEST_ARGS:-}"
	: >"$WORK/fwd.out"
	: >"$WORK/fwd.err"
	BOOKS_MARK=$(hosts_tx) # xdp-fwd's drops count from here: so do the hosts' frames (gen_books)
	netns_bg FWD_PID "$TOPO_MID" "$FWD" "$@" "${extra[@]}" >"$WORK/fwd.out" 2>"$WORK/fwd.err"
	wait_for 10 grep -q "Ctrl-C stops" "$WORK/fwd.err" || fail "xdp-fwd did not start: $(cat "$WORK/fwd.err")"
}

# worker_tid [K]: the thread id of xdp-fwd's worker K (default 0), by its name.
worker_tid() {
	local t
	for t in /proc/"$FWD_PID"/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = "xdp-fwd/w${1:-0}" ] && { basename "$t"; return 0; }
	done
	return 1
}

# growth_over SECONDS CMD...: how much the number CMD prints grows over a measurement window of
# SECONDS (a window, not a synchronization: nothing is awaited).
growth_over() {
	local secs=$1 a b
	shift
	a=$("$@")
	sleep "$secs"
	b=$("$@")
	[[ "$a" =~ ^[0-9]+$ && "$b" =~ ^[0-9]+$ ]] || fail "growth_over: '$*' printed '$a', then '$b'"
	echo $((b - a))
}

# fwd_stop [SIGNAL]: stops xdp-fwd (SIGINT by default), then fwd_reap.
fwd_stop() {
	kill "-${1:-INT}" "$FWD_PID"
	fwd_reap
}

# fwd_reap: waits for xdp-fwd, expects exit code 0 and every frame back in its pool.
fwd_reap() {
	local rc=0
	wait "$FWD_PID" || rc=$?
	netns_stop "$FWD_PID" # already reaped: only leaves the cleanup list
	FWD_PID=""
	[ $rc = 0 ] || fail "xdp-fwd exited with $rc"
	grep -Eq '^frames still out: 0$|"frames_out":0' "$WORK/fwd.out" || fail "frames still out after exit"
}

# No XDP program left on any interface of the middle namespace.
no_xdp_left() {
	! ip -n "$TOPO_MID" -d link show | grep -q "prog/xdp"
}

# port_total PORT FIELD: a field of the "total" JSON object for port PORT (e.g. m2@0 tx_packets).
port_total() {
	grep '"type":"total"' "$WORK/fwd.out" | grep -o "\"name\":\"$1\",[^}]*" | grep -o "\"$2\":[0-9]*" | cut -d: -f2
}

# drop_counts PORT: "REASON COUNT" lines of the drops xdp-fwd counted on PORT (the "drops" object
# of its total).
drop_counts() {
	grep '"type":"total"' "$WORK/fwd.out" | grep -o "\"name\":\"$1\",[^}]*" | grep -o '"drops":{.*' |
		grep -oE '"[a-z0-9_]+":[0-9]+' | tr -d '"' | tr ':' ' '
}

# port_drops PORT [REASON...]: their sum, all of them or only the REASONs named.
port_drops() {
	local port=$1 only
	shift
	only=$(IFS='|'; echo "${*:-[a-z0-9_]*}")
	drop_counts "$port" | grep -E "^($only) " | awk '{ s += $2 } END { print s + 0 }'
}

# books_drops PORT: every frame xdp-fwd counted lost on PORT, each once: all the drop reasons but
# xsk_fill_empty, whose frames the kernel counts in xsk_rx_dropped too in copy mode (a run with
# an empty fill ring counted 96 of each for the same 96 frames).
books_drops() { drop_counts "$1" | awk '$1 != "xsk_fill_empty" { s += $2 } END { print s + 0 }'; }

# kernel_drops PORT: the frames the kernel dropped on their way to PORT's socket, which xdp-fwd
# never saw: its RX ring was full (a busy machine: the forwarder did not run in time) or the
# UMEM had no buffer for them. A count of what reached xdp-fwd (frames, flows) is short by
# these, not by a fault of xdp-fwd's.
kernel_drops() { port_drops "$1" xsk_rx_ring_full xsk_rx_dropped; }

# hosts_tx: the frames the hosts' eth0s have sent since the topology was made (the generator's
# among them: an AF_XDP socket's frames count on its veth too).
hosts_tx() {
	local k s=0
	for ((k = 0; k < ${TOPO_HOSTS:-0}; k++)); do s=$((s + $(in_host $k cat /sys/class/net/eth0/statistics/tx_packets))); done
	echo $s
}

# gen_books GEN_OUT SINK_OUT PORT...: the books of a generator-to-sink stream through xdp-fwd, once
# all three have stopped: sent (xsk-gen gen's report GEN_OUT) = received + the sink's own drops
# (SINK_OUT) + xdp-fwd's drops on PORTs (every reason: the kernel's xsk_rx_ring_full among
# them). Logs the four numbers; fails on a frame unaccounted. BOOKS_SENT, BOOKS_GOT and
# BOOKS_DROPS (xdp-fwd's) hold them for the caller's further checks.
# The drops count every frame, and the hosts' kernels send a few of their own beside the stream
# (ARP probes of a neighbour entry going stale, and their answers): with BOOKS_MARK (hosts_tx
# when fwd_start started the xdp-fwd whose drops these are) the drops may exceed the stream's
# loss by at most the frames the hosts sent besides the generator's since then. A stream
# through a stopped xdp-fwd once counted 3 of them dropped at its full RX ring.
gen_books() {
	local gen=$1 sink=$2 own p other=0 over
	shift 2
	BOOKS_SENT=$(json "$gen" frames)
	BOOKS_GOT=$(json "$sink" frames)
	own=$(sink_drops "$sink")
	BOOKS_DROPS=0
	for p in "$@"; do BOOKS_DROPS=$((BOOKS_DROPS + $(books_drops "$p"))); done
	[ -n "$BOOKS_SENT" ] && [ -n "$BOOKS_GOT" ] || fail "no generator or sink report: $(cat "$gen" "$sink")"
	[ -z "${BOOKS_MARK:-}" ] || other=$(($(hosts_tx) - BOOKS_MARK - BOOKS_SENT))
	[ "$other" -ge 0 ] || fail "the hosts' veths sent $((-other)) frames fewer than the generator counted sent (dropped at the veth: $(leg_drops))"
	log "books: sent $BOOKS_SENT, received $BOOKS_GOT, sink drops $own, xdp-fwd drops $BOOKS_DROPS (the hosts' other frames: $other)"
	over=$((BOOKS_GOT + own + BOOKS_DROPS - BOOKS_SENT))
	[ $over -ge 0 ] ||
		fail "$((-over)) frames unaccounted ($BOOKS_SENT sent, $BOOKS_GOT received, $own dropped at the sink, $BOOKS_DROPS by xdp-fwd)"
	[ $over -le "$other" ] ||
		fail "$over more frames counted than sent, the hosts sent $other others ($BOOKS_SENT sent, $BOOKS_GOT received, $own dropped at the sink, $BOOKS_DROPS by xdp-fwd)"
}

# leg_drops: the drops the veths of every host's leg counted (host K's eth0 and m<K>, RX and TX)
# since the topology was made: frames the kernel dropped between the hosts and xdp-fwd (a veth's
# ring full on a busy machine; path_drops says what else counts there).
leg_drops() {
	local k h m legs=()
	for ((k = 0; k < ${TOPO_HOSTS:-0}; k++)); do
		h="TOPO_H$k" m="TOPO_IF$k"
		legs+=("${!h} eth0" "$TOPO_MID ${!m}")
	done
	path_drops "${legs[@]}"
}

# sanitized_build: true when $BUILD is a sanitizer build (ASan, TSan), whose forwarder is many
# times slower: a comparison of loss rates says nothing there.
sanitized_build() { grep -Eq '^UMEM_SANITIZE:[A-Z]+=.+' "$BUILD/CMakeCache.txt" 2>/dev/null; }

# wire_lost IN OUT: the frames received on port IN that xdp-fwd dropped with a reason instead of
# sending them out of OUT: tx_full on OUT (its TX ring) or on IN (the queue to OUT's worker
# full), invalid on IN, and gate_drain on IN (an offloaded flow's gate drained: on a slow build
# a gate still arming after 50 ms drains, 1050 frames of fwd_offload's in the ASan build).
wire_lost() {
	echo $(($(port_total "$2" tx_full) + $(port_total "$1" tx_full) + $(port_total "$1" invalid) +
		$(port_total "$1" gate_drain)))
}

# usr1_line TYPE: sends xdp-fwd (--json) SIGUSR1 and prints the JSON line of TYPE it printed for
# it (interval, mac_table); 1 when none came within 5 s.
usr1_line() {
	local n
	n=$(grep -c "\"type\":\"$1\"" "$WORK/fwd.out")
	kill -USR1 "$FWD_PID"
	wait_for 5 usr1_more "$1" "$n" || return 1
	grep "\"type\":\"$1\"" "$WORK/fwd.out" | tail -1
}
usr1_more() { [ "$(grep -c "\"type\":\"$1\"" "$WORK/fwd.out")" -gt "$2" ]; }

# rx_frames K: frames received by host K's eth0.
rx_frames() {
	in_host "$1" cat /sys/class/net/eth0/statistics/rx_packets
}

# ping_lost FILE: packets transmitted - received in a ping summary.
ping_lost() {
	sed -n 's/^\([0-9]*\) packets transmitted, \([0-9]*\) received.*/\1 \2/p' "$1" | awk '{ print $1 - $2 }'
}

# restart_bound ARGS...: a plain restart of the xdp-fwd fwd_start runs with ARGS (SIGINT, then
# the same start again, left running) under a ping from host 0 every 10 ms. Sets PLAIN to the
# pings it lost and MAX_LOST to the bound a restart without an outage is held to: half of PLAIN,
# at least 3 pings. What the bound tells apart is an outage (a plain restart loses 28 to 97)
# from none; the takeover's own loss on an idle machine is a measurement (docs/OPERATING.md), not
# a test's bound: next to two CPU hogs the old instance's close alone took 73 ms (5 pings lost,
# where the plain restart lost 30 of 300).
restart_bound() {
	netns_bg PING_PID "$TOPO_H0" ping -i 0.01 -c 300 -W 1 "$TOPO_IP1" >"$WORK/ping-plain" 2>&1
	sleep 1 # the ping under way: a window, nothing to await
	fwd_stop
	fwd_start "$@"
	wait "$PING_PID"
	PLAIN=$(ping_lost "$WORK/ping-plain")
	log "pings lost across a plain stop and start: $PLAIN of 300"
	MAX_LOST=$((PLAIN / 2 > 3 ? PLAIN / 2 : 3))
}

# iperf_server: one iperf3 server on host 1 (port 5201), $IPERF_PID, returns once it listens.
iperf_server() {
	netns_bg IPERF_PID "$TOPO_H1" iperf3 -s -1 -p 5201 >/dev/null 2>&1
	wait_for 5 in_host 1 sh -c "ss -ltn | grep -q ':5201 '" || fail "iperf3 server did not start"
}
