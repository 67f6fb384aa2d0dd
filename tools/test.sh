#!/usr/bin/env bash
# The whole test suite: set-up, configure, build, ctest; then the sanitizer builds.
#   tools/test.sh            everything (what CI runs)
#   tools/test.sh --quick    the default build and its ctest only
# Build folders: build/ (warnings as errors; every label, the zc suite's QEMU guests included), build-asan/ (ASan+UBSan), build-tsan/ (TSan),
# build-arm64/ (cross, unit suite under qemu-user), build-fuzz/ (clang libFuzzer;
# UMEM_FUZZ_SECONDS per target, default 30).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
[ "${1:-}" = "--quick" ] && quick=1

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
	cmake -S . -B "$dir" -DUMEM_WERROR=ON "${cm[@]}" >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; return 1; }
	echo "=== $dir: build"
	if ! cmake --build "$dir" -j "$jobs" >"$dir.build.log" 2>&1; then
		grep -E -B2 -A8 "error|Error" "$dir.build.log" | head -80
		return 1
	fi
	echo "=== $dir: ctest ${ct[*]}"
	ctest --test-dir "$dir" --output-on-failure -j "$jobs" "${ct[@]}"
}

run_suite build -DCMAKE_BUILD_TYPE=RelWithDebInfo --
[ $quick = 1 ] && exit 0
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
