#!/usr/bin/env bash
# Installs the Debian packages that the build, the tests and the benchmarks need.
# Idempotent: installs only what is missing, and runs apt-get update only when it must.
#   tools/setup.sh           native build, tests, benchmarks (qemu-system-x86, busybox-static,
#                            cpio: the zc suite's guest, tools/zc-vm.sh)
#   tools/setup.sh --demo    only what tools/demo.sh needs: the xdp-fwd build, ip, ping,
#                            ethtool, iperf3
#   tools/setup.sh --arm64   also the arm64 cross toolchain, arm64 libraries (multiarch) and
#                            qemu-user for the emulated unit suite, qemu-system-arm for the arm64vm guest
set -euo pipefail

DEMO_PKGS=(
	build-essential cmake pkg-config clang bpftool
	libxdp-dev libbpf-dev libelf-dev zlib1g-dev libcap-dev libmnl-dev libmicrohttpd-dev libsystemd-dev
	iproute2 iputils-ping ethtool iperf3 procps
)
PKGS=(
	"${DEMO_PKGS[@]}"
	llvm libclang-rt-14-dev
	gnuplot-nox jq strace tcpdump curl prometheus
	python3 man-db groff-base
	qemu-system-x86 busybox-static cpio xz-utils
)
ARM64_PKGS=(
	gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user qemu-system-arm
	libxdp-dev:arm64 libbpf-dev:arm64 libelf-dev:arm64 zlib1g-dev:arm64 libcap-dev:arm64 libmnl-dev:arm64
	libmicrohttpd-dev:arm64 libsystemd-dev:arm64
)

want=("${PKGS[@]}")
arm64=0
case "${1:-}" in
--arm64) arm64=1; want+=("${ARM64_PKGS[@]}") ;;
--demo) want=("${DEMO_PKGS[@]}") ;;
"") ;;
*) echo "usage: $0 [--demo | --arm64]" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "setup: all ${#want[@]} packages present"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "setup: missing packages: ${missing[*]}; run as root (or: sudo $0 $*)" >&2
	exit 1
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
updated=0
if [ $arm64 = 1 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
	dpkg --add-architecture arm64
	apt-get update -q
	updated=1
fi
# An install can only fail for a stale or absent package list: update once, then retry.
if ! apt-get install -y -q --no-install-recommends "${missing[@]}"; then
	[ $updated = 1 ] && exit 1
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
