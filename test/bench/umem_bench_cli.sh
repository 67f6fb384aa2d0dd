#!/usr/bin/env bash
# Runs umem-bench briefly and checks what it prints: the JSON shape, every path by name, the
# memory table's chunk arithmetic, zero slow-path allocations in pool_fast's steady state, the
# --only filter, and clear errors for bad options. Timings are not checked: benchmarks measure,
# tests do not.
set -euo pipefail
bench=${UMEM_BUILD_DIR:?}/tools/umem-bench/umem-bench
fail() { echo "FAIL: $*" >&2; exit 1; }
if ! command -v jq >/dev/null; then
	echo "SKIP: jq not installed (tools/setup.sh installs it)" >&2
	exit 77
fi
[ -x "$bench" ] || fail "$bench not built"

paths=(loop mutex_freelist pool_fast pool_bulk floor_bulk pool_ring pool_ring_bulk mutex_xthread
       pool_slow frag_64 frag_256 frag_1500 frag_2048 frag_1500_32k frag_64_bulk frag_ref)
optional=(dpdk_mempool dpdk_mempool_bulk)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --help: every path is described, built or not, and every option.
"$bench" --help >"$tmp/help"
for p in "${paths[@]}" "${optional[@]}"; do
	grep -qE "^  $p( |\$)" "$tmp/help" || fail "--help does not describe $p"
done
for o in --json --rounds --ops --only --memory --help --version; do
	grep -qE -- "^  (-[a-zA-Z], |    )$o( |\$)" "$tmp/help" || fail "--help does not list $o"
done

# The full run, briefly.
"$bench" --rounds 1 --ops 10000 --json >"$tmp/all.json" 2>"$tmp/all.err" || fail "umem-bench --json exited $?"
# A default run logs no library error (a frame larger than the page is skipped, not asked for).
! grep -q "libumem:" "$tmp/all.err" || fail "a plain run printed: $(grep libumem: "$tmp/all.err")"
# The CPU is named, so figures of different machines are not compared by mistake.
jq -e '.cpu | (.vendor, .family, .model, .name) | type == "string"' "$tmp/all.json" >/dev/null ||
	fail "no cpu vendor/family/model in the JSON: $(jq -c .cpu "$tmp/all.json")"
jq -e . "$tmp/all.json" >/dev/null || fail "output is not JSON"
jq -e '.failed == []' "$tmp/all.json" >/dev/null || fail "paths failed to set up: $(jq -c .failed "$tmp/all.json")"
expected=("${paths[@]}")
for p in "${optional[@]}"; do
	jq -e --arg p "$p" '.not_built | index($p)' "$tmp/all.json" >/dev/null || expected+=("$p")
done
got=$(jq -r '.results[].name' "$tmp/all.json" | sort | tr '\n' ' ')
want=$(printf '%s\n' "${expected[@]}" | sort | tr '\n' ' ')
[ "$got" = "$want" ] || fail "paths: got [$got], expected [$want]"
# Every result carries positive numbers with min <= median <= max.
bad=$(jq -r '.results[] | select(
	([.ns_per_op, .cycles_per_op, .min_ns, .max_ns] | all(type == "number" and . > 0) | not)
	or .min_ns > .ns_per_op or .ns_per_op > .max_ns) | .name' "$tmp/all.json")
[ -z "$bad" ] || fail "results with missing or inconsistent numbers: $bad"
jq -e '.counter.name | type == "string"' "$tmp/all.json" >/dev/null || fail "no counter name"
jq -e '.steady_state.slow_allocs_after_warmup == 0 and .steady_state.area_pages_after_warmup == 0' \
	"$tmp/all.json" >/dev/null || fail "pool_fast took slow-path allocations after warm-up: $(jq -c .steady_state "$tmp/all.json")"
# Memory table: fragments never beat the frame size, chunks are whole chunks.
mem=$(jq -c '[.memory[] | [.frame_bytes, .chunk_4k, .chunk_2k]]' "$tmp/all.json")
[ "$mem" = '[[64,4096,2048],[256,4096,2048],[1500,4096,2048],[9000,12288,10240]]' ] ||
	fail "memory table chunks: $mem"
jq -e '[.memory[] | .frame_bytes as $f | (.frag_4k, .frag_16k, .frag_32k, .frag_64k) | select(. != null)
	| select(. < $f)] | length == 0' "$tmp/all.json" >/dev/null ||
	fail "a fragment truesize below its frame size"
jq -e '.memory[3].frag_4k == null and .memory[3].frag_64k != null' "$tmp/all.json" >/dev/null ||
	fail "9000-B frames: expected n/a on 4 KiB pages and a value on 64 KiB pages"
# Every target is evaluated, except the DPDK one in a build without DPDK.
jq -e '(.targets | length) == 12 and all(.targets[]; .met != null or (.target | test("dpdk")))' "$tmp/all.json" \
	>/dev/null || fail "a target was not evaluated in a full run"

# --only: exactly the paths named; text mode reports the steady state.
"$bench" --rounds 1 --ops 1000 --only pool_fast,frag_ref --json >"$tmp/only.json"
[ "$(jq -r '[.results[].name] | join(",")' "$tmp/only.json")" = "pool_fast,frag_ref" ] ||
	fail "--only pool_fast,frag_ref ran: $(jq -c '[.results[].name]' "$tmp/only.json")"
"$bench" --rounds 1 --ops 1000 --only pool_fast >"$tmp/only.txt"
grep -q "slow-path allocations after warm-up: 0" "$tmp/only.txt" || fail "text output lacks the steady-state line"
grep -qE "^cpu: .* family .* model " "$tmp/only.txt" || fail "the text header does not name the CPU"
# The kernel's reference figure names its public source, the benchmark module.
grep -q "kernel page_pool fast path: .*bench_page_pool_simple" "$tmp/only.txt" ||
	fail "the kernel's reference line does not name its source: $(grep 'kernel page_pool' "$tmp/only.txt")"
"$bench" --memory --json | jq -e '(.results | length) == 0 and (.memory | length) == 4' >/dev/null ||
	fail "--memory must print only the memory table"

# Bad input: exit 2 and a message naming the problem.
expect_error() { # pattern args...
	local pat=$1 rc=0
	shift
	"$bench" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ $rc = 2 ] || fail "umem-bench $* exited $rc, expected 2"
	grep -q -- "$pat" "$tmp/err" || fail "umem-bench $*: message lacks '$pat': $(cat "$tmp/err")"
	[ ! -s "$tmp/out" ] || fail "umem-bench $* printed results"
}
expect_error "unknown path 'nosuch'" --only pool_fast,nosuch
expect_error "--rounds: '0'" --rounds 0
expect_error "--ops: 'abc'" --ops abc
expect_error "--ops: '-5'" --ops -5
expect_error "unexpected argument 'extra'" extra
echo "umem-bench: output and options behave"
