#!/usr/bin/env bash
# Installs the Debian packages that the build, the tests and the benchmarks need.
# Idempotent: installs only what is missing, and runs apt-get update only when it must.
set -euo pipefail

PKGS=(
	build-essential cmake pkg-config clang llvm bpftool
	libxdp-dev libbpf-dev libelf-dev zlib1g-dev libcap-dev
	iproute2 iputils-ping ethtool iperf3 procps
	gnuplot-nox jq
)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "setup: all ${#PKGS[@]} packages present"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "setup: missing packages: ${missing[*]}; run as root (or: sudo $0)" >&2
	exit 1
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# An install can only fail for a stale or absent package list: update once, then retry.
if ! apt-get install -y -q --no-install-recommends "${missing[@]}"; then
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
