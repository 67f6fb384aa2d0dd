#!/usr/bin/env bash
# Keeps the documentation true to the headers:
#  1. docs/API.md and docs/man/umem_*.3 are what tools/gen-api-docs.py makes of the headers now;
#  2. every public function (UMEM_API or static inline in include/umem/*.h, except the umem__
#     internals) is in the SYNOPSIS of a section-3 page and in docs/API.md, and every function a
#     page's NAME line lists still exists;
#  3. every man page (docs/man, apps/*) renders without a groff or man warning;
#  4. every man page names the project's version (.TH ... "libumem X.Y"), and CHANGELOG.md has it;
#  5. the program in docs/GETTING-STARTED.md compiles against the headers.
set -uo pipefail
src=${UMEM_SOURCE_DIR:?}
errors=0
fail() { echo "FAIL: $*" >&2; errors=$((errors + 1)); }
py=$(command -v /usr/bin/python3 || command -v python3) || { echo "FAIL: python3 missing (tools/setup.sh)"; exit 1; }

"$py" "$src/tools/gen-api-docs.py" --check || fail "generated reference out of date"

funcs=$(grep -hE '^(UMEM_API|static inline) ' "$src"/include/umem/*.h |
	grep -oE '\bumem_[a-z0-9_]+\(' | tr -d '(' | grep -v '^umem__' | sort -u)
[ "$(wc -l <<<"$funcs")" -ge 50 ] || fail "found only $(wc -l <<<"$funcs") public functions: the scan is broken"
synopses=$(for p in "$src"/docs/man/*.3; do sed -n '/^\.SH SYNOPSIS/,/^\.SH /p' "$p"; done)
for f in $funcs; do
	grep -qE "\b$f\(" <<<"$synopses" || fail "$f has no section-3 man page (docs/man)"
	grep -qE "\b$f\(" "$src/docs/API.md" || fail "$f is missing from docs/API.md"
done
for p in "$src"/docs/man/*.3; do
	for f in $(sed -n '/^\.SH NAME/{n;p;}' "$p" | sed 's/ \\-.*//; s/,/ /g'); do
		grep -qx "$f" <<<"$funcs" || fail "${p##*/} names $f, which no header declares"
	done
done

pages=$(ls "$src"/docs/man/*.[1-8] "$src"/apps/*/*.[1-8] 2>/dev/null)
if command -v groff >/dev/null && command -v man >/dev/null; then
	for p in $pages; do
		out=$(groff -ww -z -man "$p" 2>&1; MANWIDTH=80 man --warnings -l "$p" 2>&1 >/dev/null)
		[ -z "$out" ] || fail "${p#"$src"/} renders with warnings: $out"
	done
else
	fail "groff or man missing (tools/setup.sh installs groff-base and man-db)"
fi

version=$(sed -n 's/^project(libumem VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || fail "no project version in CMakeLists.txt"
for p in $pages; do
	grep -q "^\.TH .*\"libumem ${version%.*}\"" "$p" || fail "${p#"$src"/}: .TH does not name libumem ${version%.*}"
done
grep -q "^## .*\b$version\b" "$src/CHANGELOG.md" || fail "CHANGELOG.md has no section for $version"

prog=$(mktemp --suffix=.c)
trap 'rm -f "$prog"' EXIT
awk '/^```c$/ { f = 1; next } /^```$/ { if (f) exit } f' "$src/docs/GETTING-STARTED.md" >"$prog"
[ -s "$prog" ] || fail "no C program in docs/GETTING-STARTED.md"
cc -std=gnu11 -fsyntax-only -Wall -Wextra -Werror -I"$src/include" -I"${UMEM_BUILD_DIR:?}/include" "$prog" ||
	fail "the program in docs/GETTING-STARTED.md does not compile"

[ $errors = 0 ] || exit 1
echo "docs: $(wc -l <<<"$funcs") functions documented, $(wc -w <<<"$pages") man pages clean, reference current"
