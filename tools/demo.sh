#!/usr/bin/env bash
# The README's main job, as root on a fresh Debian 12: install what is missing, build xdp-fwd,
# build a client and a server namespace joined through a middle namespace, forward between the
# two middle veths with xdp-fwd (wire mode), run ping and a short iperf3 through it while its
# live stats scroll by, print a summary, and remove everything again, whatever way it ends.
# It builds in an existing build/ (configured by hand or tools/test.sh), else in a temporary
# folder removed at exit; it writes nothing into the source tree. Ctrl-C: exit 130.
#   tools/demo.sh [--mtu N] [--seconds N]
set -euo pipefail
cd "$(dirname "$0")/.."

mtu=1500 seconds=4
while [ $# -gt 0 ]; do
	case "$1" in
	--mtu) mtu=${2:?}; shift 2 ;;
	--seconds) seconds=${2:?}; shift 2 ;;
	-h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "demo.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
if [ "$(id -u)" != 0 ]; then
	echo "demo.sh: run it as root (it creates network namespaces and attaches XDP programs)" >&2
	exit 1
fi

prefix="fwdemo-$$"
log=$(mktemp -d /tmp/xdp-fwd-demo.XXXXXX)
fwd_pid="" tail_pid="" iperf_pid="" fg_pid=""
exec 3>&2 # the script's stderr, for cleanup: a trap can run inside a redirected command
cleanup() {
	local rc=$?
	set +e
	trap '' INT TERM HUP # a second Ctrl-C (or timeout's signal to the group) must not cut this short
	for pid in $fg_pid $tail_pid $iperf_pid $fwd_pid; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	tools/topo.sh down --prefix "$prefix"
	rm -rf "$log"
	case $rc in
	0) ;;
	130) echo "demo: interrupted; everything it set up is removed" >&3 ;;
	*) echo "demo: failed (exit $rc); everything it set up is removed" >&3 ;;
	esac
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
# ping and iperf3 catch SIGINT and exit normally, and bash then forgets the Ctrl-C it saw while
# they ran in the foreground; `wait` on a background job returns at once and runs the INT trap.
run() {
	local rc=0
	"$@" &
	fg_pid=$!
	wait "$fg_pid" || rc=$?
	fg_pid=""
	return $rc
}

step "set-up and build"
tools/setup.sh --demo
if [ -f build/CMakeCache.txt ]; then
	bdir=build
	echo "  building xdp-fwd in the existing build/"
else
	bdir=$log/build
	echo "  building xdp-fwd in $bdir (removed at exit; a configured build/ is reused instead)"
	cmake -S . -B "$bdir" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$log/configure.log" 2>&1 ||
		{ cat "$log/configure.log"; exit 1; }
fi
cmake --build "$bdir" -j "$(nproc)" --target xdp-fwd >"$log/build.log" 2>&1 || { cat "$log/build.log"; exit 1; }
fwd=$bdir/apps/xdp-fwd/xdp-fwd

step "topology (namespaces $prefix-*, MTU $mtu)"
eval "$(tools/topo.sh up --prefix "$prefix" --mtu "$mtu")"
echo "  client $TOPO_H0  eth0 $TOPO_IP0 ──veth── m0 ┐"
echo "                                            ├ $TOPO_MID: xdp-fwd -i m0 -i m1 --mode wire"
echo "  server $TOPO_H1  eth0 $TOPO_IP1 ──veth── m1 ┘"

step "xdp-fwd"
ip netns exec "$TOPO_MID" "$fwd" -i "$TOPO_IF0" -i "$TOPO_IF1" --mode wire >"$log/fwd.out" 2>"$log/fwd.err" &
fwd_pid=$!
for _ in $(seq 100); do
	grep -q "Ctrl-C stops" "$log/fwd.err" && break
	kill -0 "$fwd_pid" 2>/dev/null || { cat "$log/fwd.err"; exit 1; }
	sleep 0.1
done
cat "$log/fwd.err"

step "ping client -> server through xdp-fwd"
run ip netns exec "$TOPO_H0" ping -c 3 -i 0.3 -W 2 "$TOPO_IP1"

step "iperf3 TCP for $seconds s, with xdp-fwd's live stats (one block per second)"
ip netns exec "$TOPO_H1" iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
iperf_pid=$!
for _ in $(seq 50); do
	ip netns exec "$TOPO_H1" ss -ltn | grep -q ':5201 ' && break
	sleep 0.1
done
tail -n 0 -f "$log/fwd.out" &
tail_pid=$!
run ip netns exec "$TOPO_H0" iperf3 -c "$TOPO_IP1" -p 5201 -t "$seconds" >"$log/iperf.out" 2>&1 ||
	{ cat "$log/iperf.out"; exit 1; }
sleep 1.1 # one more stats block: the end of the transfer
kill "$tail_pid"; wait "$tail_pid" 2>/dev/null || true; tail_pid=""
wait "$iperf_pid" 2>/dev/null || true; iperf_pid=""

step "stop xdp-fwd (SIGINT): totals, every frame back in its pool"
lines=$(wc -l <"$log/fwd.out")
kill -INT "$fwd_pid"
rc=0
wait "$fwd_pid" || rc=$?
fwd_pid=""
tail -n +"$((lines + 1))" "$log/fwd.out"

step "summary"
grep -E "sender|receiver" "$log/iperf.out" | sed 's/^/  iperf3 /'
echo "  xdp-fwd exit code $rc; $(grep '^frames still out' "$log/fwd.out")"
if ip -n "$TOPO_MID" -d link show | grep -q "prog/xdp"; then
	echo "  an XDP program is still attached!"
	exit 1
fi
echo "  no XDP program left on the interfaces; the namespaces go now"
exit "$rc"
