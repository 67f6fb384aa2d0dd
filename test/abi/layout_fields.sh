#!/usr/bin/env bash
# lib/abi.c's layout hash must see every field the inline paths touch, not only struct sizes:
# swapping two same-sized fields (the owner-side counters alloc_fast and alloc_slow, which inline
# code in callers writes at fixed offsets) must trip its static assert.
set -uo pipefail
src=${UMEM_SOURCE_DIR:?} build=${UMEM_BUILD_DIR:?}
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$src/include" "$tmp/include"
compile() {
	"$cc" -std=gnu11 -fsyntax-only -I"$tmp/include" -I"$build/include" -I"$src/lib" "$src/lib/abi.c" \
		2>"$tmp/err"
}
compile || { echo "FAIL: lib/abi.c does not compile unchanged"; cat "$tmp/err"; exit 1; }
f="$tmp/include/umem/pool_fast.h"
sed -i 's/_Atomic uint64_t alloc_fast, alloc_slow,/_Atomic uint64_t alloc_slow, alloc_fast,/' "$f"
grep -q 'alloc_slow, alloc_fast,' "$f" || { echo "FAIL: the swap did not apply (pool_fast.h changed?)"; exit 1; }
if compile; then
	echo "FAIL: swapping alloc_fast and alloc_slow keeps the recorded layout hash"
	exit 1
fi
grep -q "struct layout changed" "$tmp/err" || { echo "FAIL: unexpected error:"; cat "$tmp/err"; exit 1; }
echo "ok: a field swap in umem_pool_owner_stats changes the layout hash"
