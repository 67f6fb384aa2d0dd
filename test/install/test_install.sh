#!/usr/bin/env bash
# Installs the build into a scratch prefix and checks what a user gets: the layout (libraries,
# headers, tools, BPF objects, man pages), a consumer built against the installed library with
# pkg-config and with find_package(umem) (shared and static), the exported symbols and SONAME,
# and the embedding example apps/xdp-reflect built both ways against the installed library.
set -euo pipefail
. "$UMEM_SOURCE_DIR/test/install/common.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=$UMEM_SOURCE_DIR/test/install
fail() { echo "FAIL: $*" >&2; exit 1; }

install_prefix "$work"

# Layout. xdp-fwd is checked when the tree has it.
man=$PREFIX/share/man
expect=(sbin/xdp-reflect sbin/umem-steer sbin/port-bench sbin/steer-bench sbin/xsk-gen bin/umem-bench
	share/man/man7/libumem.7 share/man/man8/xdp-reflect.8 share/man/man8/umem-steer.8
	share/man/man8/xsk-gen.8 share/man/man8/port-bench.8 share/man/man8/steer-bench.8
	share/man/man1/umem-bench.1)
for h in "$UMEM_SOURCE_DIR"/include/umem/*.h; do
	[ "${h##*/}" = fault.h ] || expect+=("include/umem/${h##*/}") # the test builds' hooks stay home
done
[ ! -e "$PREFIX/include/umem/fault.h" ] || fail "include/umem/fault.h (test builds only) installed"
for p in "$UMEM_SOURCE_DIR"/docs/man/*.3; do expect+=("share/man/man3/${p##*/}"); done
[ -d "$UMEM_SOURCE_DIR/apps/xdp-fwd" ] && expect+=(sbin/xdp-fwd share/man/man8/xdp-fwd.8)
for f in "${expect[@]}"; do
	[ -e "$PREFIX/$f" ] || fail "$f not installed"
done
# Every installed program has a man page, and libumem(7) FILES names it and every BPF object.
files=$(MANWIDTH=200 man -l "$man/man7/libumem.7" 2>/dev/null | sed -n '/^FILES/,/^SEE ALSO/p')
[ -n "$files" ] || fail "libumem(7) has no FILES section (or man is missing)"
# As xdp-tools: a program that needs root is in sbin/ with a section-8 page, the rest in bin/
# with a section-1 page.
for b in "$PREFIX"/bin/* "$PREFIX"/sbin/* "$LIBDIR"/umem/*.bpf.o; do
	n=${b##*/}
	case $b in
	*.bpf.o) ;;
	"$PREFIX"/bin/*) [ -f "$man/man1/$n.1" ] || fail "bin/$n is installed without a section-1 page" ;;
	*) [ -f "$man/man8/$n.8" ] || fail "sbin/$n is installed without a section-8 page" ;;
	esac
	grep -qF -- "$n" <<<"$files" || fail "libumem(7) FILES does not name $n"
done
for b in "$UMEM_SOURCE_DIR"/bpf/*.bpf.c; do
	o=$LIBDIR/umem/$(basename "$b" .c).o
	[ -f "$o" ] || fail "BPF object ${o#"$PREFIX"/} not installed"
	readelf -h "$o" | grep -q 'Machine:.*BPF' || fail "${o##*/} is not a BPF object"
done
# The installed prose docs sit side by side in ${docdir}: every relative link between them resolves
# there (README.md's docs/X.md links are rewritten at install; nothing points into the source tree).
docdir=$PREFIX/share/doc/libumem
[ -f "$docdir/README.md" ] || fail "README.md not installed in share/doc/libumem"
broken=$(cd "$docdir" && grep -oE '\]\([^)#[:space:]]+' ./*.md | grep -vE '\]\([a-z]+:' |
	while IFS= read -r hit; do
		f=${hit%%:*} l=${hit#*](}
		[ -e "$l" ] || echo "${f#./} -> $l"
	done)
[ -z "$broken" ] || fail "installed docs link to files share/doc/libumem lacks:"$'\n'"$broken"
# Every function has a man page that resolves to its header's page.
page=$(MANPATH=$man MANWIDTH=80 man -P cat umem_pool__alloc_frag 2>/dev/null) || true
grep -q '^UMEM_POOL(3)' <<<"$page" || fail "man umem_pool__alloc_frag does not open umem_pool(3)"

# pkg-config, shared; the dependencies a static link needs are declared.
req=$(PKG_CONFIG_PATH=$PCDIR pkg-config --print-requires-private libumem)
for dep in libxdp libbpf; do
	grep -qx "$dep" <<<"$req" || fail "libumem.pc: Requires.private lacks $dep"
done
cc -o "$work/consumer_pc" "$src/consumer.c" $(PKG_CONFIG_PATH=$PCDIR pkg-config --cflags --libs libumem)
LD_LIBRARY_PATH=$LIBDIR "$work/consumer_pc"
# Nothing but the public API is exported.
if nm -D --defined-only "$LIBDIR/libumem.so" | awk '{print $3}' | grep -v '^umem_' | grep -v '^LIBUMEM_'; then
	fail "symbols outside the umem_ prefix are exported"
fi
soname=$(objdump -p "$LIBDIR/libumem.so" | awk '/SONAME/ {print $2}')
[ "$soname" = "libumem.so.0" ] || fail "SONAME is '$soname'"

# find_package(umem).
mkdir -p "$work/cm"
cp "$src/consumer.c" "$work/cm/"
cp "$src/CMakeLists.txt.in" "$work/cm/CMakeLists.txt"
cmake -S "$work/cm" -B "$work/cm/build" -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null
cmake --build "$work/cm/build" >/dev/null
LD_LIBRARY_PATH=$LIBDIR "$work/cm/build/consumer_cmake"
"$work/cm/build/consumer_cmake_static"

# The embedding example, both ways, linked to the installed shared library.
build_reflect "$work"
for bin in "$REFLECT_PC" "$REFLECT_CMAKE"; do
	readelf -d "$bin" | grep -q 'NEEDED.*\[libumem.so.0\]' || fail "$bin does not link libumem.so.0"
	help=$(LD_LIBRARY_PATH=$LIBDIR "$bin" --help)
	grep -q -- '--swap-ip' <<<"$help" || fail "$bin --help"
	rc=0
	LD_LIBRARY_PATH=$LIBDIR "$bin" 2>/dev/null || rc=$?
	[ "$rc" = 2 ] || fail "$bin without --interface exited $rc, expected 2"
done
echo "install: layout, pkg-config and find_package consumers, xdp-reflect built both ways: ok"
