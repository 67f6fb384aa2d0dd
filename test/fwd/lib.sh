# Shared by the xdp-fwd netns tests (sourced). Builds the topology with tools/topo.sh under a
# prefix unique to this test run, runs xdp-fwd in the middle namespace in its own process group,
# and removes everything on every exit path.
set -euo pipefail

SRC=${UMEM_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${UMEM_BUILD_DIR:-$SRC/build}
FWD=$BUILD/apps/xdp-fwd/xdp-fwd
TOPO=$SRC/tools/topo.sh
NAME=$(basename "$0" .sh)
PREFIX="fw${NAME#fwd}-$$"
PREFIX=${PREFIX//_/}
WORK=$(mktemp -d "/tmp/$PREFIX.XXXXXX")
FWD_PID=""
IPERF_PID=""

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; [ -f "$WORK/fwd.out" ] && { echo "--- xdp-fwd output:"; cat "$WORK/fwd.out" "$WORK/fwd.err"; } >&2; exit 1; }
log() { echo "== $*"; }

[ "$(id -u)" = 0 ] || skip "needs root"
ip netns add "$PREFIX-probe" 2>/dev/null || skip "network namespaces unavailable"
ip netns del "$PREFIX-probe"
[ -x "$FWD" ] || fail "xdp-fwd not built at $FWD"

cleanup() {
	local rc=$?
	stop_pid "$IPERF_PID" KILL
	stop_pid "$FWD_PID" KILL
	"$TOPO" down --prefix "$PREFIX" || true
	rm -rf "$WORK"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# stop_pid PID SIGNAL: signal one process we started and reap it.
stop_pid() {
	[ -n "$1" ] || return 0
	kill "-$2" "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

topo_up() { # topo.sh up options
	eval "$("$TOPO" up --prefix "$PREFIX" "$@")"
}

in_host() { local k=$1; shift; local ns="TOPO_H$k"; ip netns exec "${!ns}" "$@"; }

# wait_for SECONDS COMMAND...: polls COMMAND until it succeeds (bounded).
wait_for() {
	local deadline=$((SECONDS + $1)); shift
	until "$@" >/dev/null 2>&1; do
		[ $SECONDS -lt $deadline ] || return 1
		sleep 0.1
	done
}

# fwd_start ARGS...: xdp-fwd in the middle namespace, own process group (setsid), output in
# $WORK; returns once its ports are bound (it prints the port list after set-up).
fwd_start() {
	: >"$WORK/fwd.out"
	: >"$WORK/fwd.err"
	setsid ip netns exec "$TOPO_MID" "$FWD" "$@" >"$WORK/fwd.out" 2>"$WORK/fwd.err" &
	FWD_PID=$!
	wait_for 10 grep -q "Ctrl-C stops" "$WORK/fwd.err" || fail "xdp-fwd did not start: $(cat "$WORK/fwd.err")"
}

# fwd_stop [SIGNAL]: stops xdp-fwd, expects exit code 0 and every frame back in its pool.
fwd_stop() {
	local rc=0
	kill "-${1:-INT}" "$FWD_PID"
	wait "$FWD_PID" || rc=$?
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

# rx_frames K: frames received by host K's eth0.
rx_frames() {
	in_host "$1" cat /sys/class/net/eth0/statistics/rx_packets
}
