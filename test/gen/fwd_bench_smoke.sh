#!/usr/bin/env bash
# tools/fwd-bench smoke run (label netns): 1 s, 1 repeat, TCP at MTU 1500, every system that is
# available; then xdp_fwd alone on the --receiver-gro variant; then the router topology with
# kernel forwarding and xdp-fwd --mode l3. Checks the machinery (a figure per system, the
# tables, the JSON, the chart, the variant's settings, nothing left behind), never the numbers.
# Skipped (77) when not root, or when a run would exceed its time limit on a loaded machine
# (60 s, 40 s and 40 s: a benchmark is not a timed test).
set -uo pipefail
SRC=${UMEM_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${UMEM_BUILD_DIR:-$SRC/build}
[ "$(id -u)" = 0 ] || { echo "skip: needs root" >&2; exit 77; }
OUT=$(mktemp -d /tmp/gn-smoke.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
fail() { echo "FAIL: $*" >&2; cat "$OUT/run.log" >&2; exit 1; }

rc=0
# exec keeps the PID, and fwd-bench names its namespaces gnb-PID: check only this run's, since
# other benchmark runs may share the machine.
timeout 60 bash -c 'echo $$ >"$1/pid"; shift; exec "$@"' _ "$OUT" \
	"$SRC/tools/fwd-bench/fwd-bench.sh" --smoke --build "$BUILD" --out "$OUT" >"$OUT/run.log" 2>&1 || rc=$?
[ $rc = 124 ] && { echo "skip: the smoke run took more than 60 s (loaded machine)" >&2; exit 77; }
[ $rc = 0 ] || fail "fwd-bench exited with $rc"
for sys in bridge xdp_redirect xdp_fwd; do
	grep -q "\"system\":\"$sys\",\"value\":[0-9]*\.[0-9]*[1-9]" "$OUT/samples.json" || fail "no figure for $sys"
done
grep -q '^| tcp1500 | xdp_fwd | .* Gbit/s |' "$OUT/summary.md" || fail "summary table lacks xdp_fwd"
grep -q '^| TCP MTU 1500 vs xdp_redirect | [0-9]' "$OUT/summary.md" || fail "summary lacks the target ratio"
if command -v gnuplot >/dev/null; then
	[ "$(head -c 4 "$OUT/chart.png" | tail -c 3)" = PNG ] || fail "chart.png is not a PNG"
fi
run="gnb-$(cat "$OUT/pid")-"
! ip netns list | grep -q "^$run" || fail "a namespace of the benchmark is left: $(ip netns list | grep "^$run")"

# The variant: both hosts' NAPI threaded and TSO off on both middle veths, read back from the
# kernel; the summary names it in its command line.
GRO=$OUT/gro
mkdir -p "$GRO"
rc=0
timeout 40 bash -c 'echo $$ >"$1/pid"; shift; exec "$@"' _ "$GRO" \
	"$SRC/tools/fwd-bench/fwd-bench.sh" --smoke --receiver-gro --systems xdp_fwd --build "$BUILD" --out "$GRO" \
	>"$OUT/run.log" 2>&1 || rc=$?
[ $rc = 124 ] && { echo "skip: the --receiver-gro run took more than 40 s (loaded machine)" >&2; exit 77; }
[ $rc = 0 ] || fail "fwd-bench --receiver-gro exited with $rc"
[ "$(grep -c '^receiver-gro: .* eth0 threaded 1$' "$OUT/run.log")" = 2 ] || fail "a host's NAPI is not threaded"
[ "$(grep -c '^receiver-gro: .* m[01] tcp-segmentation-offload: off$' "$OUT/run.log")" = 2 ] || fail "TSO is not off on m0 and m1"
grep -q '"system":"xdp_fwd","value":[0-9]*\.[0-9]*[1-9]' "$GRO/samples.json" || fail "no figure for xdp_fwd with --receiver-gro"
grep -q -- '--receiver-gro --duration' "$GRO/summary.md" || fail "the summary does not name --receiver-gro"
run="gnb-$(cat "$GRO/pid")-"
! ip netns list | grep -q "^$run" || fail "a namespace of the --receiver-gro run is left: $(ip netns list | grep "^$run")"

# The router topology, in its cheapest form: the kernel's forwarding and xdp-fwd's l3 each
# carried TCP through the router, and the router table names both. Under reno (--cc), which is
# built into every kernel and seldom a host's default: the streams and the summary say so.
RT=$OUT/router
mkdir -p "$RT"
rc=0
timeout 40 bash -c 'echo $$ >"$1/pid"; shift; exec "$@"' _ "$RT" \
	"$SRC/tools/fwd-bench/fwd-bench.sh" --smoke --topology router --systems kernel_fwd,xdp_fwd_l3 --cc reno \
	--build "$BUILD" --out "$RT" >"$OUT/run.log" 2>&1 || rc=$?
[ $rc = 124 ] && { echo "skip: the router run took more than 40 s (loaded machine)" >&2; exit 77; }
[ $rc = 0 ] || fail "fwd-bench --topology router exited with $rc"
for sys in kernel_fwd xdp_fwd_l3; do
	grep -q "\"system\":\"$sys\",\"value\":[0-9]*\.[0-9]*[1-9].*\"topology\":\"router\"" "$RT/samples.json" ||
		fail "no router figure for $sys"
	grep -q "^| tcp1500 | $sys | [0-9.]* Gbit/s | [0-9.]* | " "$RT/summary.md" || fail "the router table lacks $sys"
done
grep -q '^| workload | system | median | min | min-max | vs wire (xdp_fwd) | vs l3fwd |' "$RT/summary.md" ||
	fail "the summary is not the router table"
grep -q -- '--topology router --cc reno --duration' "$RT/summary.md" || fail "the summary does not name --topology router --cc reno"
grep -q '^Machine: .*, TCP reno\.' "$RT/summary.md" || fail "the machine line does not name reno"
for sys in kernel_fwd xdp_fwd_l3; do
	tr -d ' \n\t' <"$RT/logs/tcp1500-$sys-1.client" | grep -q '"sender_tcp_congestion":"reno"' ||
		fail "$sys's stream did not run reno"
done
run="gnb-$(cat "$RT/pid")-"
! ip netns list | grep -q "^$run" || fail "a namespace of the router run is left: $(ip netns list | grep "^$run")"
# A congestion control the kernel does not have, and a list of two: refused, by name, before
# any namespace (bounded, in case the check breaks and the run starts).
for cc in nosuch "reno cubic"; do
	rc=0
	timeout 40 "$SRC/tools/fwd-bench/fwd-bench.sh" --smoke --cc "$cc" --build "$BUILD" --out "$OUT/cc" \
		>"$OUT/run.log" 2>&1 || rc=$?
	[ $rc = 2 ] && grep -qF "fwd-bench: --cc '$cc': not available here" "$OUT/run.log" || fail "--cc '$cc': exit $rc"
done
echo ok
