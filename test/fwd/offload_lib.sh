# The offload tests' readers of xdp-fwd's JSON (sourced after lib.sh).
# off_need_gen: GEN, the xsk-gen binary the test needs, and its helpers (test/common/xsk_gen.sh).
off_need_gen() {
	GEN=$BUILD/tools/xsk-gen/xsk-gen
	[ -x "$GEN" ] || fail "xsk-gen not built at $GEN"
	# shellcheck source=../common/xsk_gen.sh
	. "$SRC/test/common/xsk_gen.sh"
}
# off_need_faults: FWD, xdp-fwd-faults (the tests' build with fault hooks: apps/xdp-fwd/live.c).
off_need_faults() {
	FWD=$BUILD/apps/xdp-fwd/xdp-fwd-faults
	[ -x "$FWD" ] || fail "xdp-fwd-faults not built at $FWD"
}
# off_flows IF: how many flows IF's steering program holds (umem-steer flows); the listing
# itself in $WORK/flows.out.
off_flows() {
	ip netns exec "$TOPO_MID" "$BUILD/tools/umem-steer/umem-steer" flows "$1" >"$WORK/flows.out" 2>&1
	sed -n 's/^flows: \([0-9]*\) of.*/\1/p' "$WORK/flows.out"
}
# off_udp_flow IF: 200 UDP datagrams from host 0 to host 1 (source port 7100); true once IF's
# program holds a flow (for wait_for).
off_udp_flow() {
	in_host 0 python3 -c "$UDP_SEND" "$TOPO_IP1" 200 7100 2000 >/dev/null
	[ "$(off_flows "$1")" -ge 1 ]
}
# off_skip_without WHAT: skip (77) where the kernel, asked as root in the middle namespace
# (test/steer/kernel_probe), lacks WHAT the test is about: "probe", the live-frame
# BPF_PROG_RUN of the delivery probe (without it each target's first flow is its trial).
# xdp-fwd's own word is not taken: it asks after dropping its capabilities.
off_skip_without() {
	local why="" probe=$BUILD/test/steer/kernel_probe
	case $1 in
	probe) [ "$(ip netns exec "$TOPO_MID" "$probe" live)" = 0 ] &&
		why="this kernel refuses a live-frame BPF_PROG_RUN (BPF_F_TEST_XDP_LIVE_FRAMES) to root" ;;
	*) fail "off_skip_without: no such condition '$1'" ;;
	esac
	[ -z "$why" ] && return 0
	echo "SKIP: $why"; exit 77
}
# fail_tail MESSAGE: fail, with the end of each output only (the interval lines are many); a
# test takes it as its fail().
fail_tail() {
	echo "FAIL: $*" >&2
	for f in "$WORK"/fwd.out "$WORK"/*.err "$WORK"/sink.out "$WORK"/gen.out; do
		[ -s "$f" ] && { echo "--- $f"; tail -c 1500 "$f"; echo; } >&2
	done
	exit 1
}
off_of() { # PORT FIELD < JSON lines: the field of PORT's "offload" object, one per line
	sed 's/{"name":/\n&/g' | grep "^{\"name\":\"$1\"" | grep -o '"offload":{[^}]*}' |
		grep -o "\"$2\":[0-9]*" | cut -d: -f2
}
# off_total PORT FIELD: a field of PORT's "offload" object in the total line.
off_total() { grep '"type":"total"' "$WORK/fwd.out" | off_of "$@"; }
# off_last PORT FIELD: the same in the last interval line.
off_last() { grep '"type":"interval"' "$WORK/fwd.out" | tail -1 | off_of "$@"; }
# off_any PORT FIELD: the largest value over all interval lines.
off_any() { grep '"type":"interval"' "$WORK/fwd.out" | off_of "$@" | sort -n | tail -1; }
# fwd_measure VAR CMD FWD-ARGS...: CMD run through xdp-fwd between m0 and m1 (--json FWD-ARGS),
# stopped after it; CMD's output in VAR, xdp-fwd's in $WORK/fwd.out as usual, the legs' veth
# drops meanwhile (leg_drops) in MEASURE_LEG_DROPS.
fwd_measure() {
	local var=$1 cmd=$2 d0
	shift 2
	d0=$(leg_drops)
	fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --json "$@"
	"$cmd" >"$WORK/measure.out"
	fwd_stop INT
	MEASURE_LEG_DROPS=$(($(leg_drops) - d0))
	printf -v "$var" '%s' "$(cat "$WORK/measure.out")"
}
# flows_unseen PER AFTER LEG-DROPS PORT...: the most flows of PER frames that the kernel's drops
# can have kept from reaching --offload-after AFTER in xdp-fwd: each such flow lost at least
# PER - AFTER + 1 of its frames before xdp-fwd saw them, at PORTs' sockets (kernel_drops) or on
# the veths before them (LEG-DROPS, from leg_drops; where those count the sockets' drops too,
# the bound is only looser).
flows_unseen() {
	local per=$1 after=$2 d=$3 p
	shift 3
	for p in "$@"; do d=$((d + $(kernel_drops "$p"))); done
	echo $((d / (per - after + 1)))
}
# not_offloaded PORT: the flows counted not offloaded, all reasons.
not_offloaded() {
	echo $(($(off_total "$1" full) + $(off_total "$1" refused) + $(off_total "$1" no_target) + $(off_total "$1" untracked)))
}
# UDP_RECV FILE: a UDP receiver on port 5302 (IPv4 and IPv6) that counts datagrams until FILE.stop
# exists and none came for 1 s; FILE.ready once it listens, the count in FILE at the end.
UDP_RECV='
import os, socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0); s.bind(("::", 5302)); s.settimeout(1.0); n = 0
open(sys.argv[1] + ".ready", "w").close()
while True:
    try:
        s.recv(2048); n += 1
    except socket.timeout:
        if os.path.exists(sys.argv[1] + ".stop"): break
open(sys.argv[1] + ".tmp", "w").write(str(n)); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
'
# snmp K PROTO FIELD: a counter of /proc/net/snmp in host K's namespace; snmp6 K FIELD: of /proc/net/snmp6.
snmp() {
	in_host "$1" awk -v p="$2:" -v f="$3" '$1 == p && !h { for (i = 2; i <= NF; i++) c[i] = $i; h = 1; next }
		$1 == p && h { for (i = 2; i <= NF; i++) if (c[i] == f) print $i }' /proc/net/snmp
}
snmp6() { in_host "$1" awk -v f="$2" '$1 == f { print $2 }' /proc/net/snmp6; }
# UDP_SEND DST COUNT SPORT RATE [PLAIN]: COUNT datagrams of 200 bytes to DST port 5302 from port
# SPORT, paced to RATE a second (IPv6 when DST is); with PLAIN, those after the first PLAIN carry a
# destination options header (IPV6_DSTOPTS, PadN of 4). Prints the number the kernel took.
UDP_SEND='
import socket, sys, time
dst, n, sport, rate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
plain = int(sys.argv[5]) if len(sys.argv) > 5 else n
af = socket.AF_INET6 if ":" in dst else socket.AF_INET
s = socket.socket(af, socket.SOCK_DGRAM); s.bind(("::" if af == socket.AF_INET6 else "0.0.0.0", sport))
sent, t0 = 0, time.monotonic()
for i in range(n):
    if i == plain: s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_DSTOPTS, bytes([0, 0, 1, 4, 0, 0, 0, 0]))
    try:
        s.sendto(i.to_bytes(4, "big") * 50, (dst, 5302)); sent += 1
    except OSError:
        pass
    if i % 20 == 19:
        d = t0 + (i + 1) / rate - time.monotonic()
        if d > 0: time.sleep(d)
print(sent)
'
# The streams of the ordering tests (offload.sh, off_marks.sh), after off_need_gen.
gen() { # HOST ARGS...
	local k=$1
	shift
	in_host "$k" "$GEN" gen -i eth0 --json "$@" >"$WORK/gen.out" 2>"$WORK/gen.err" || fail "gen $*"
}
# in_legs: the frames the hosts' eth0s could not hand on to the middle namespace (its XDP ring
# full: on a loaded machine the kernel's forwarding falls behind a generator), their tx_dropped.
in_legs() {
	local k s=0
	for ((k = 0; k < ${TOPO_HOSTS:-0}; k++)); do
		s=$((s + $(in_host "$k" cat /sys/class/net/eth0/statistics/tx_dropped)))
	done
	echo "$s"
}
# The books of the streams since the last `books`: on a loaded machine (2 CPUs shared, the ASan
# build) a forwarder drops frames at these rates, so the tests count them instead of asserting
# none: what the sinks missed, beyond their own socket drops, what the input legs dropped, and
# what the sinks got out of order.
SINK_MISSING=0 SINK_REORDERED=0 SINK_LEGS=0
# stream FROM TO COUNT GEN-ARGS...: COUNT frames from host FROM to host TO's sink, none damaged.
stream() {
	local from=$1 to=$2 count=$3 ns="TOPO_H$2" ip="TOPO_IP$2" legs0
	shift 3
	sink_start "${!ns}" --idle 3
	legs0=$(in_legs)
	gen "$from" --dst-ip "${!ip}" --count "$count" "$@"
	sink_wait
	SINK_LEGS=$((SINK_LEGS + $(in_legs) - legs0))
	sink_books "$count"
}
# sink_books COUNT: the stream of COUNT frames the sink just took, into the books.
sink_books() {
	local count=$1 got own
	expect_all "$WORK/sink.out" duplicates:0 bad:0
	[ "$(json "$WORK/gen.out" frames)" = "$count" ] || fail "the generator sent $(json "$WORK/gen.out" frames) of $count"
	got=$(json "$WORK/sink.out" frames)
	own=$(sink_drops "$WORK/sink.out")
	SINK_MISSING=$((SINK_MISSING + count - got - own))
	SINK_REORDERED=$((SINK_REORDERED + $(json "$WORK/sink.out" reordered)))
}
# books PORT...: after fwd_stop, the frames the sinks missed were all counted dropped (on the
# input legs, on the PORTs, or lost in the kernel towards them), and none was reordered unless
# a gate was forced open (counted: userspace lost gated frames, so no count could cover them).
# Starts new books.
books() {
	local drops=$SINK_LEGS forced=0 p
	for p in "$@"; do
		drops=$((drops + $(port_drops "$p") + $(off_total "$p" lost)))
		forced=$((forced + $(off_total "$p" forced)))
	done
	log "books: the sinks missed $SINK_MISSING frames, xdp-fwd counted $drops drops; $SINK_REORDERED reordered, $forced gates forced"
	[ "$SINK_MISSING" -le "$drops" ] || fail "the sinks missed $SINK_MISSING frames, xdp-fwd counted $drops dropped"
	[ "$SINK_REORDERED" = 0 ] || [ "$forced" -ge 1 ] || fail "$SINK_REORDERED frames reordered, no gate forced open"
	SINK_MISSING=0 SINK_REORDERED=0 SINK_LEGS=0
}
