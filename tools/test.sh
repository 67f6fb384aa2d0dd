#!/usr/bin/env bash
# The whole test suite: set-up, configure, build, ctest; then the sanitizer builds.
#   tools/test.sh            everything (what CI runs)
#   tools/test.sh --quick    the default build and its ctest only
#   tools/test.sh --under-load [--asan]
#                            the default build's netns suites next to a CPU hog on every CPU;
#                            with --asan, the ASan build's netns and bpf suites under the same hogs too
# Build folders: build/ (warnings as errors; every label, the zc suite's QEMU guests included),
# build-release/ (Release, so -O3's warnings too; unit suite), build-asan/ (ASan+UBSan), build-tsan/ (TSan),
# build-arm64/ (cross, unit suite under qemu-user), build-fuzz/ (clang libFuzzer;
# UMEM_FUZZ_SECONDS per target, default 30).
# Every stage runs, whichever failed before it (a failure must not hide the others); the end
# prints each stage with pass, fail or skipped and its duration, and the exit code is 1 when any
# failed.
set -uo pipefail
cd "$(dirname "$0")/.."
quick=0 load=0 load_asan=0
usage() { echo "usage: $0 [--quick | --under-load [--asan]]" >&2; exit 2; }
for a in "$@"; do
	case "$a" in
	--quick) quick=1 ;;
	--under-load) quick=1 load=1 ;;
	--asan) load_asan=1 ;;
	*) usage ;;
	esac
done
[ $load_asan = 1 ] && [ $load = 0 ] && usage

if [ "$(id -u)" = 0 ]; then
	if [ $quick = 1 ]; then tools/setup.sh; else tools/setup.sh --arm64; fi || exit 1
fi
# bpffs lets libxdp use its multi-program dispatcher; tests also run without it.
if [ "$(id -u)" = 0 ] && ! mountpoint -q /sys/fs/bpf 2>/dev/null; then
	mount -t bpf bpf /sys/fs/bpf 2>/dev/null || true
fi

jobs=$(nproc)
run_suite() { # dir cmake-args... -- ctest-args...
	local dir=$1; shift
	local cm=() ct=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do cm+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	ct=("$@")
	echo "=== $dir: configure ${cm[*]}"
	mkdir -p "$dir" || return 1 # the logs live in the build folder, not beside it
	cmake -S . -B "$dir" -DUMEM_WERROR=ON "${cm[@]}" >"$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; return 1; }
	echo "=== $dir: build"
	if ! cmake --build "$dir" -j "$jobs" >"$dir/build.log" 2>&1; then
		grep -E -B2 -A8 "error|Error" "$dir/build.log" | head -80
		return 1
	fi
	[ "${ct[*]}" = "--build-only" ] && return 0
	echo "=== $dir: ctest ${ct[*]}"
	ctest_in "$dir" "${ct[@]}"
}
ctest_in() { # dir ctest-args...
	ctest --test-dir "$1" --output-on-failure -j "$jobs" "${@:2}" || { digest "$1"; return 1; }
}

# digest DIR: the last lines of each failed test's output (ctest's LastTest.log), kept for the
# end of the run: a CI log cut in its middle still shows at its end what failed and why.
digests=()
digest() {
	local log=$1/Testing/Temporary/LastTest.log t
	[ -f "$1/Testing/Temporary/LastTestsFailed.log" ] || return 0
	for t in $(cut -d: -f2 "$1/Testing/Temporary/LastTestsFailed.log" | head -4); do
		digests+=("--- $1: $t (its output's last 30 lines)
$(awk -v t="$t" '$0 ~ "^[0-9]+/[0-9]+ Test: " t "$" { hdr = 1; next }
			hdr && /^-+$/ { hdr = 0; on = 1; next }
			on && /^<end of output>/ { exit } on { buf[n++ % 30] = $0 }
			END { for (i = (n > 30 ? n - 30 : 0); i < n; i++) print buf[i % 30] }' "$log")")
	done
}

# stage NAME CMD...: runs CMD as one stage of the summary; a failure is recorded, not fatal.
summary=() failed=0
stage() {
	local name=$1 t0=$SECONDS rc=0
	shift
	"$@" || rc=$?
	if [ $rc = 0 ]; then
		summary+=("$(printf '%-18s pass     %5ss' "$name" $((SECONDS - t0)))")
	else
		summary+=("$(printf '%-18s FAIL     %5ss  (exit %s)' "$name" $((SECONDS - t0)) "$rc")")
		failed=1
	fi
}
skip() { # NAME WHY
	summary+=("$(printf '%-18s skipped      -   (%s)' "$1" "$2")")
}
finish() {
	[ ${#digests[@]} = 0 ] || { echo "=== failed tests"; printf '%s\n' "${digests[@]}"; }
	echo "=== summary"
	printf '%s\n' "${summary[@]}"
	[ $failed = 0 ] || { echo "=== some stages FAILED"; exit 1; }
	exit 0
}

ASAN_ARGS=(-DCMAKE_BUILD_TYPE=Debug -DUMEM_SANITIZE=address)
asan_suite() { ASAN_OPTIONS=detect_leaks=1 run_suite build-asan "${ASAN_ARGS[@]}" -- "$@"; }
asan_ctest() { ASAN_OPTIONS=detect_leaks=1 ctest_in build-asan "$@"; }

if [ $load = 1 ]; then
	# One busy loop per CPU at nice 0, as a loaded machine would be: the netns suites must
	# still hold (their books balance, their waits are conditions, not sleeps).
	stage build run_suite build -DCMAKE_BUILD_TYPE=RelWithDebInfo -- --build-only
	[ $load_asan = 1 ] && stage build-asan asan_suite --build-only
	hogs=()
	stop_hogs() { [ ${#hogs[@]} = 0 ] || kill "${hogs[@]}" 2>/dev/null || true; }
	trap stop_hogs EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	for _ in $(seq "$(nproc)"); do
		nice -n 0 sh -c 'while :; do :; done' &
		hogs+=($!)
	done
	echo "=== under load: ${#hogs[@]} busy loops (pids ${hogs[*]})"
	stage "netns (load)" ctest_in build -L netns
	[ $load_asan = 1 ] &&
		stage "asan netns (load)" asan_ctest -L 'netns|bpf'
	finish
fi
stage build run_suite build -DCMAKE_BUILD_TYPE=RelWithDebInfo --
if [ $quick = 1 ]; then
	for s in build-release build-asan build-tsan build-arm64 build-fuzz; do skip "$s" --quick; done
	finish
fi
# Release (-O3) finds warnings the -O2 build does not; its unit suite is a few seconds.
stage build-release run_suite build-release -DCMAKE_BUILD_TYPE=Release -- -L unit
stage build-asan asan_suite -L 'unit|netns|bpf'
stage build-tsan run_suite build-tsan -DCMAKE_BUILD_TYPE=Debug -DUMEM_SANITIZE=thread -- -L 'threads'
# arm64 cross build: its unit suite under qemu-user, the arm64vm suite in an arm64 QEMU guest.
if command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64 >/dev/null; then
	stage build-arm64 run_suite build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -- -L 'unit|arm64vm'
else
	skip build-arm64 "no aarch64-linux-gnu-gcc or qemu-aarch64: run tools/setup.sh --arm64 as root"
fi
# libFuzzer (clang) with ASan+UBSan: each target runs for UMEM_FUZZ_SECONDS from its kept corpus.
fuzz_suite() {
	CC=clang run_suite build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUMEM_FUZZ=ON -DUMEM_SANITIZE=address \
		-DUMEM_FUZZ_SECONDS="${UMEM_FUZZ_SECONDS:-30}" -- -L fuzz
}
stage build-fuzz fuzz_suite
finish
