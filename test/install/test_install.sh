#!/usr/bin/env bash
# Installs the build into a scratch prefix and builds a consumer against the installed library
# twice: with pkg-config, and with find_package(umem) (shared and static). All three must run.
set -euo pipefail
: "${UMEM_BUILD_DIR:?}" "${UMEM_SOURCE_DIR:?}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=$UMEM_SOURCE_DIR/test/install

cmake --install "$UMEM_BUILD_DIR" --prefix "$work/prefix" >/dev/null
pc=$(find "$work/prefix" -name libumem.pc)
[ -n "$pc" ] || { echo "libumem.pc not installed"; exit 1; }
pcdir=$(dirname "$pc")
libdir=$(PKG_CONFIG_PATH=$pcdir pkg-config --variable=libdir libumem)

# pkg-config, shared.
cc -o "$work/consumer_pc" "$src/consumer.c" $(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs libumem)
LD_LIBRARY_PATH=$libdir "$work/consumer_pc"
# Nothing but the public API is exported.
if nm -D --defined-only "$libdir/libumem.so" | awk '{print $3}' | grep -v '^umem_' | grep -v '^LIBUMEM_'; then
	echo "symbols outside the umem_ prefix are exported"; exit 1
fi
soname=$(objdump -p "$libdir/libumem.so" | awk '/SONAME/ {print $2}')
[ "$soname" = "libumem.so.0" ] || { echo "SONAME is '$soname'"; exit 1; }

# find_package(umem).
mkdir -p "$work/cm"
cp "$src/consumer.c" "$work/cm/"
cp "$src/CMakeLists.txt.in" "$work/cm/CMakeLists.txt"
cmake -S "$work/cm" -B "$work/cm/build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/cm/build" >/dev/null
LD_LIBRARY_PATH=$libdir "$work/cm/build/consumer_cmake"
"$work/cm/build/consumer_cmake_static"
echo "install: pkg-config and find_package consumers ran"
