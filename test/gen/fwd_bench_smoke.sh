#!/usr/bin/env bash
# tools/fwd-bench smoke run (label netns): 1 s, 1 repeat, TCP at MTU 1500, every system that is
# available. Checks the machinery (a figure per system, the table, the JSON, the chart, nothing
# left behind), never the numbers. Skipped (77) when not root, or when the run would exceed
# 60 s on a loaded machine (stopped at 60 s: a benchmark is not a timed test).
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
echo ok
