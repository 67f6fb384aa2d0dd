#!/usr/bin/env bash
# The ABI in three places must agree: the functions the public headers declare UMEM_API, the
# symbols lib/libumem.map lists, and what the built libumem.so exports (nm -D --defined-only).
# Also: every exported symbol carries the map's version node.
set -uo pipefail
src=${UMEM_SOURCE_DIR:?} build=${UMEM_BUILD_DIR:?}
so="$build/lib/libumem.so"
[ -f "$so" ] || { echo "FAIL: $so not built"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Declarations may span lines: join each UMEM_API declaration up to its '('.
awk '/^UMEM_API/ { d = $0; while (d !~ /\(/ && (getline l) > 0) d = d " " l; print d }' \
	"$src"/include/umem/*.h | grep -oE '\bumem_[a-z0-9_]+\(' | tr -d '(' | sort -u >"$tmp/headers"
sed -n '/global:/,/local:/p' "$src/lib/libumem.map" | grep -oE '^\s+[a-z_0-9]+;' |
	tr -d ' \t;' | sort -u >"$tmp/map"
nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRW]$/ { print $3 }' | grep -v '^LIBUMEM_' >"$tmp/raw"
sed 's/@.*//' "$tmp/raw" | sort -u >"$tmp/exported"
node=$(sed -n 's/^\(LIBUMEM_[0-9.]*\) .*/\1/p' "$src/lib/libumem.map" | tail -1)

errors=0
if ! diff -u "$tmp/headers" "$tmp/map" >"$tmp/d1"; then
	echo "FAIL: UMEM_API declarations (-) and lib/libumem.map (+) differ:"; cat "$tmp/d1"; errors=1
fi
if ! diff -u "$tmp/map" "$tmp/exported" >"$tmp/d2"; then
	echo "FAIL: lib/libumem.map (-) and the symbols libumem.so exports (+) differ:"; cat "$tmp/d2"; errors=1
fi
if grep -v "@@\?$node\$" "$tmp/raw" | grep -q .; then
	echo "FAIL: symbols outside the version nodes:"; grep -v "@@\?$node\$" "$tmp/raw"; errors=1
fi
[ $errors = 0 ] || exit 1
echo "abi: $(wc -l <"$tmp/map") symbols, headers = map = exports"
