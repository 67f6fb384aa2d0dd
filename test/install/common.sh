#!/usr/bin/env bash
# Sourced by the install tests. Installs the build into a scratch prefix and builds the embedding
# example apps/xdp-reflect against the INSTALLED library, the two ways a user would.
#   install_prefix DIR   cmake --install into DIR/prefix; sets PREFIX, PCDIR, LIBDIR
#   build_reflect DIR    pkg-config build (the example's Makefile) and find_package(umem) build
#                        (the example's CMakeLists.txt, configured on its own); sets REFLECT_PC
#                        and REFLECT_CMAKE to the two binaries. Warnings are errors.
: "${UMEM_BUILD_DIR:?}" "${UMEM_SOURCE_DIR:?}"

install_prefix() {
	PREFIX=$1/prefix
	cmake --install "$UMEM_BUILD_DIR" --prefix "$PREFIX" >/dev/null || return 1
	local pc
	pc=$(find "$PREFIX" -name libumem.pc)
	[ -n "$pc" ] || { echo "libumem.pc not installed" >&2; return 1; }
	PCDIR=$(dirname "$pc")
	LIBDIR=$(PKG_CONFIG_PATH=$PCDIR pkg-config --variable=libdir libumem)
}

build_reflect() {
	local src=$UMEM_SOURCE_DIR/apps/xdp-reflect flags="-O2 -Wall -Wextra -Werror"
	mkdir -p "$1/reflect-pc"
	PKG_CONFIG_PATH=$PCDIR make -s -C "$1/reflect-pc" -f "$src/Makefile" VPATH="$src" \
		CFLAGS="$flags" || return 1
	REFLECT_PC=$1/reflect-pc/xdp-reflect
	cmake -S "$src" -B "$1/reflect-cmake" -DCMAKE_PREFIX_PATH="$PREFIX" \
		-DCMAKE_C_FLAGS="$flags" >/dev/null || return 1
	cmake --build "$1/reflect-cmake" >/dev/null || return 1
	REFLECT_CMAKE=$1/reflect-cmake/xdp-reflect
}

# build_examples DIR   examples/ built with its Makefile (pkg-config) into DIR/ex-pc and with its
#                      CMakeLists.txt (find_package) into DIR/ex-cmake. Warnings are errors.
build_examples() {
	local src=$UMEM_SOURCE_DIR/examples flags="-O2 -Wall -Wextra -Werror"
	mkdir -p "$1/ex-pc"
	PKG_CONFIG_PATH=$PCDIR make -s -C "$1/ex-pc" -f "$src/Makefile" VPATH="$src" \
		CFLAGS="$flags" || return 1
	cmake -S "$src" -B "$1/ex-cmake" -DCMAKE_PREFIX_PATH="$PREFIX" \
		-DCMAKE_C_FLAGS="$flags" >/dev/null || return 1
	cmake --build "$1/ex-cmake" >/dev/null || return 1
}
