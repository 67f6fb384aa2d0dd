#!/usr/bin/env bash
# Keeps the documentation true to the headers:
#  1. docs/API.md and docs/man/umem_*.3 are what tools/gen-api-docs.py makes of the headers now;
#  2. every public function (UMEM_API or static inline in include/umem/*.h, except the umem__
#     internals) is in the SYNOPSIS of a section-3 page and in docs/API.md, and every function a
#     page's NAME line lists still exists;
#  3. every man page (docs/man, apps/*) renders without a groff or man warning, and no
#     alternating-font macro glues two words together;
#  4. every man page names the project's version (.TH ... "libumem X.Y"), and CHANGELOG.md has it;
#  5. the program in docs/GETTING-STARTED.md compiles without warnings and links against the
#     library built here (every function it calls exists).
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

# groff does not warn about words glued together by an alternating-font macro (".BR X. They
# are" renders "X.Theyare"): every pair of neighbouring arguments that would join two words.
glued=$("$py" - $pages <<'PY'
import re, shlex, sys
for path in sys.argv[1:]:
    for no, line in enumerate(open(path), 1):
        m = re.match(r'^\.(BR|RB|IR|RI|BI|IB)\s+(.*)$', line.rstrip('\n'))
        if not m:
            continue
        try:
            args = shlex.split(m.group(2).replace('\\', '\\\\'))
        except ValueError:
            print(f"{path}:{no}: unbalanced quotes: {line.strip()}")
            continue
        for a, b in zip(args, args[1:]):
            # \(lq and other escapes end in letters but are glyphs meant to touch the word
            if re.search(r'\\(\(..|\[[^]]*\])$', a):
                continue
            if re.search(r'[A-Za-z0-9.,;]$', a) and re.match(r'[A-Za-z0-9]', b):
                print(f"{path}:{no}: '{a}' and '{b}' render as one word")
PY
)
[ -z "$glued" ] || fail "man pages with words glued together:"$'\n'"$glued"

version=$(sed -n 's/^project(libumem VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || fail "no project version in CMakeLists.txt"
for p in $pages; do
	grep -q "^\.TH .*\"libumem ${version%.*}\"" "$p" || fail "${p#"$src"/}: .TH does not name libumem ${version%.*}"
done
grep -q "^## .*\b$version\b" "$src/CHANGELOG.md" || fail "CHANGELOG.md has no section for $version"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The first C block is the library code, the second its main(): two files, as the guide says.
awk -v dir="$work" '/^```c$/ { f = 1; n++; next } /^```$/ { f = 0 } f { print > (dir "/block" n ".c") }' \
	"$src/docs/GETTING-STARTED.md"
lib=$(ls "${UMEM_BUILD_DIR:?}"/lib/libumem.so 2>/dev/null)
cc=${UMEM_CC:-cc} # the build's compiler: a cross build's library links only with its own
if [ ! -s "$work/block1.c" ] || [ ! -s "$work/block2.c" ]; then
	fail "docs/GETTING-STARTED.md lacks its two C blocks (the program and its main)"
elif ! "$cc" -std=gnu11 -c -o "$work/app.o" -Wall -Wextra -Werror -I"$src/include" "$work/block1.c" ||
     ! "$cc" -std=gnu11 -c -o "$work/main.o" -Wall -Wextra -Werror "$work/block2.c"; then
	fail "the program in docs/GETTING-STARTED.md does not compile"
elif [ -z "$lib" ]; then
	fail "libumem.so not built in $UMEM_BUILD_DIR/lib"
elif ! "$cc" -o "$work/app" "$work/app.o" "$work/main.o" "$lib"; then
	fail "the program in docs/GETTING-STARTED.md does not link against libumem"
fi

[ $errors = 0 ] || exit 1
echo "docs: $(wc -l <<<"$funcs") functions documented, $(wc -w <<<"$pages") man pages clean, reference current"
