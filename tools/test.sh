#!/usr/bin/env bash
# The whole test suite: set-up, configure, build, ctest; then the sanitizer builds.
#   tools/test.sh            everything (what CI runs)
#   tools/test.sh --quick    the default build and its ctest only
#   tools/test.sh --under-load  the default build's netns suites next to a CPU hog on every CPU
# Build folders: build/ (warnings as errors; every label, the zc suite's QEMU guests included),
# build-release/ (Release, so -O3's warnings too; unit suite), build-asan/ (ASan+UBSan), build-tsan/ (TSan),
# build-arm64/ (cross, unit suite under qemu-user), build-fuzz/ (clang libFuzzer;
# UMEM_FUZZ_SECONDS per target, default 30).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0 load=0
case "${1:-}" in
--quick) quick=1 ;;
--under-load) quick=1 load=1 ;;
"") ;;
*) echo "usage: $0 [--quick | --under-load]" >&2; exit 2 ;;
esac

if [ "$(id -u)" = 0 ]; then
	if [ $quick = 1 ]; then tools/setup.sh; else tools/setup.sh --arm64; fi
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
	mkdir -p "$dir" # the logs live in the build folder, not beside it
	cmake -S . -B "$dir" -DUMEM_WERROR=ON "${cm[@]}" >"$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; return 1; }
	echo "=== $dir: build"
	if ! cmake --build "$dir" -j "$jobs" >"$dir/build.log" 2>&1; then
		grep -E -B2 -A8 "error|Error" "$dir/build.log" | head -80
		return 1
	fi
	[ "${ct[*]}" = "--build-only" ] && return 0
	echo "=== $dir: ctest ${ct[*]}"
	ctest --test-dir "$dir" --output-on-failure -j "$jobs" "${ct[@]}"
}

if [ $load = 1 ]; then
	# One busy loop per CPU at nice 0, as a loaded machine would be: the netns suites must
	# still hold (their books balance, their waits are conditions, not sleeps).
	run_suite build -DCMAKE_BUILD_TYPE=RelWithDebInfo -- --build-only
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
	ctest --test-dir build --output-on-failure -j "$jobs" -L netns
	exit 0
fi
run_suite build -DCMAKE_BUILD_TYPE=RelWithDebInfo --
[ $quick = 1 ] && exit 0
# Release (-O3) finds warnings the -O2 build does not; its unit suite is a few seconds.
run_suite build-release -DCMAKE_BUILD_TYPE=Release -- -L unit
ASAN_OPTIONS=detect_leaks=1 run_suite build-asan -DCMAKE_BUILD_TYPE=Debug -DUMEM_SANITIZE=address -- -L 'unit|netns|bpf'
run_suite build-tsan -DCMAKE_BUILD_TYPE=Debug -DUMEM_SANITIZE=thread -- -L 'threads'
# arm64 cross build: its unit suite under qemu-user, the arm64vm suite in an arm64 QEMU guest.
if command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64 >/dev/null; then
	run_suite build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -- -L 'unit|arm64vm'
else
	echo "=== build-arm64: skipped (run tools/setup.sh --arm64 as root)"
fi
# libFuzzer (clang) with ASan+UBSan: each target runs for UMEM_FUZZ_SECONDS from its kept corpus.
CC=clang run_suite build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUMEM_FUZZ=ON -DUMEM_SANITIZE=address \
	-DUMEM_FUZZ_SECONDS="${UMEM_FUZZ_SECONDS:-30}" -- -L fuzz
