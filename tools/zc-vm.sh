#!/usr/bin/env bash
# Runs a command inside a QEMU guest whose NICs do AF_XDP zero-copy (virtio-net), and turns the
# guest's exit code into ours: the zc test suite's runner.
#
#   tools/zc-vm.sh [--arch A] fetch                      fetch and verify the pinned guest kernel,
#                                                        print its folder
#   tools/zc-vm.sh [--arch A] run [OPTIONS] -- CMD ARGS  boot a guest, run CMD in it, exit with
#                                                        its code
#     --arch A            x86_64 (default; qemu-system-x86_64, KVM not needed) or arm64
#                         (qemu-system-aarch64 -M virt -cpu max under TCG, Debian package
#                         qemu-system-arm); the files given must be built for that architecture
#                         (arm64: build-arm64, cmake/aarch64-linux-gnu.cmake)
#     --file PATH[=NAME]  put PATH into the guest as /zc/NAME (default: its base name); a
#                         dynamically linked program brings its shared libraries and loader
#     --timeout SECS      wall-clock limit of the whole guest run (default 180)
#     --mem MIB           guest memory (default 512)
#
# The guest: the pinned Debian kernel (below), an initramfs of busybox (the guest's architecture:
# the host's busybox-static; for arm64 Debian's busybox-static:arm64 with bash, iproute2's ip and
# util-linux's setsid, fetch_userland_arm64), the kernel modules of KMODULES and the given
# files, no host networking. Four
# virtio-net-pci NICs (disable-legacy=on,iommu_platform=on: without the platform IOMMU feature
# virtio_net refuses the zero-copy bind with EINVAL) on two of QEMU's internal hubs:
#   hub 0: eth0 (52:54:00:00:00:10) <-> eth1 (52:54:00:00:00:11)
#   hub 1: eth2 (52:54:00:00:00:12) <-> eth3 (52:54:00:00:00:13)
# A frame sent on eth0 arrives on eth1 and the other way round; the same for eth2 and eth3, so
# a forwarder between eth1 and eth2 has a wire on each side. KVM is not required (TCG).
#
# Exit codes: CMD's (0 pass, 1 fail, 77 skip); 77 with a message naming what is missing when
# QEMU, the mirror or the pinned kernel version cannot be had; 1 when the guest never reports
# (timeout, panic). The guest is killed on every exit path.
#
# QEMU: $UMEM_ZC_QEMU, else qemu-system-x86_64 (arm64: qemu-system-aarch64) from PATH. Mirror:
# $UMEM_ZC_MIRROR, else the URI apt's configured sources use for this system's release (apt-get
# indextargets), so a machine behind a private Debian mirror fetches from it as it is.
# Kernel cache: $UMEM_ZC_CACHE, else /var/cache/libumem-zc when it can be created, else
# ~/.cache/libumem-zc. It keeps the .deb (checked against the pinned SHA-256) and the files
# taken from it, so CI runs on one machine download it once.
set -euo pipefail

# The pinned guest kernel: 6.18 is the first Debian kernel whose virtio_net advertises AF_XDP
# zero-copy (6.12's has the RX code but not NETDEV_XDP_ACT_XSK_ZEROCOPY).
ARCH=x86_64
if [ "${1:-}" = --arch ]; then ARCH=${2:-}; shift 2 || true; fi
KVER=6.18.15-1~bpo13+1
KSUITE=trixie-backports
case $ARCH in
x86_64|amd64)
	ARCH=x86_64 DEBARCH=amd64 QEMU_DEF=qemu-system-x86_64 QEMU_PKG=qemu-system-x86 CONSOLE=ttyS0
	QEMU_MACHINE=()
	# The kernel's boot check that the 8254 timer ticks through the IO-APIC counts ticks against
	# a busy loop: under TCG on a loaded host it sees too few and panics ("IO-APIC + timer
	# doesn't work!"). no_timer_check skips it (the timer works; the guest is only slow).
	KARGS_ARCH=no_timer_check
	KSHA256=d38a7af6260782a47cd615ad717347a528b45f076245b4deabb3f1ecf8459186 ;;
arm64|aarch64)
	ARCH=arm64 DEBARCH=arm64 QEMU_DEF=qemu-system-aarch64 QEMU_PKG=qemu-system-arm CONSOLE=ttyAMA0
	QEMU_MACHINE=(-M virt)
	KARGS_ARCH=
	KSHA256=219d3ec8b0ca52ad0da5c0f95e42375ac5bf688800ec327ec8426ed92847ccae
	;;
*) echo "zc-vm: unknown --arch '$ARCH' (x86_64 or arm64)" >&2; exit 2 ;;
esac
KPKG=linux-image-6.18.15+deb13-$DEBARCH
# In load order (busybox insmod resolves no dependencies); llc, stp and bridge for the port
# suite's bridge case.
KMODULES=(kernel/net/core/failover kernel/drivers/net/net_failover kernel/drivers/net/virtio_net
	kernel/drivers/net/veth kernel/net/llc/llc kernel/net/802/stp kernel/net/bridge/bridge)

me=zc-vm
skip() { echo "$me: SKIP: $*" >&2; exit 77; }
die() { echo "$me: $*" >&2; exit 1; }

cache_dir() {
	if [ -n "${UMEM_ZC_CACHE:-}" ]; then
		echo "$UMEM_ZC_CACHE"
	elif mkdir -p /var/cache/libumem-zc 2>/dev/null && [ -w /var/cache/libumem-zc ]; then
		echo /var/cache/libumem-zc
	else
		echo "${XDG_CACHE_HOME:-$HOME/.cache}/libumem-zc"
	fi
}

# apt_mirror: the URI apt's sources use for this system's own release (main), without a slash at
# the end; $UMEM_ZC_MIRROR overrides it.
apt_mirror() {
	local rel uri
	if [ -n "${UMEM_ZC_MIRROR:-}" ]; then echo "$UMEM_ZC_MIRROR"; return; fi
	rel=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
	uri=$(apt-get indextargets --format '$(RELEASE) $(COMPONENT) $(REPO_URI)' 2>/dev/null |
		awk -v r="$rel" '$1 == r && $2 == "main" { print $3; exit }')
	[ -n "$uri" ] || skip "apt's sources have no 'main' of this system's release (${rel:-unknown}):" \
		"cannot tell where to fetch $KPKG from (or set UMEM_ZC_MIRROR)"
	echo "${uri%/}"
}

# fetch: leaves vmlinuz and the modules (uncompressed, busybox insmod takes no .xz) in
# $KDIR; skips (77) when the mirror cannot be reached or no longer has the pinned version.
fetch() {
	local cache ver_dir apt deb opts have
	cache=$(cache_dir)
	mkdir -p "$cache" || skip "cannot create the kernel cache $cache"
	# One folder per module list: runners of another list (older checkouts) keep theirs.
	KDIR=$cache/${KVER}_${DEBARCH}_$(echo "${KMODULES[*]}" | sha256sum | cut -c1-8)
	[ -f "$KDIR/ok" ] && return 0
	command -v apt-get >/dev/null || skip "apt-get not found: cannot fetch $KPKG"
	command -v dpkg-deb >/dev/null || skip "dpkg-deb not found: cannot unpack $KPKG"
	# Two test processes may fetch at once: one does, the other waits for it.
	exec 9>"$cache/.lock"
	flock -w 600 9 || skip "the kernel cache $cache stayed locked for 10 minutes"
	[ -f "$KDIR/ok" ] && return 0
	KMIRROR=$(apt_mirror)
	apt=$cache/apt-$DEBARCH
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $KMIRROR $KSUITE main" \
		>"$apt/sources.list"
	# A private package list: the system's apt state and sources are not touched, and the
	# package is only downloaded and unpacked, never installed.
	opts=(-o "Dir::Etc::sourcelist=$apt/sources.list" -o Dir::Etc::sourceparts=-
	      -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
	      -o APT::Architectures=$DEBARCH -o APT::Sandbox::User=root -o Debug::NoLocking=1 -q)
	deb=$cache/$KPKG.deb
	if [ ! -f "$deb" ] || ! echo "$KSHA256  $deb" | sha256sum -c --status; then
		rm -f "$deb"
		rm -f "$apt"/lists/*Packages*
		# apt-get update exits 0 when a list fails to download: look for the list itself.
		apt-get "${opts[@]}" update >"$apt/update.log" 2>&1 || true
		compgen -G "$apt/lists/*_dists_${KSUITE}_main_binary-${DEBARCH}_Packages*" >/dev/null ||
			skip "cannot read the package list of $KMIRROR $KSUITE:" \
				"$(grep -A1 -E '^(E|Err):' "$apt/update.log" | head -n 2 | tr -s '\n ' ' ')"
		if ! apt-cache "${opts[@]}" show "$KPKG=$KVER" >/dev/null 2>&1; then
			have=$(apt-cache "${opts[@]}" madison "$KPKG" 2>/dev/null | awk -F'|' '{gsub(/ /,"",$2); print $2}' | tr '\n' ' ')
			skip "$KMIRROR $KSUITE no longer has $KPKG version $KVER (it has: ${have:-no version of it});" \
				"pin a kernel it has in tools/zc-vm.sh (KPKG, KVER, KSHA256)"
		fi
		(cd "$cache" && apt-get "${opts[@]}" download "$KPKG=$KVER" >"$apt/download.log" 2>&1) ||
			skip "download of $KPKG $KVER failed: $(tail -n 2 "$apt/download.log" | tr '\n' ' ')"
		mv "$cache/${KPKG}_${KVER/:/%3a}_$DEBARCH.deb" "$deb"
		echo "$KSHA256  $deb" | sha256sum -c --status ||
			{ rm -f "$deb"; skip "$KPKG $KVER from $KMIRROR does not have the pinned SHA-256 $KSHA256"; }
	fi
	rm -rf "$KDIR.tmp"
	mkdir -p "$KDIR.tmp/x"
	local rel=${KPKG#linux-image-} m mods=()
	for m in "${KMODULES[@]}"; do mods+=("./usr/lib/modules/$rel/$m.ko*"); done
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$KDIR.tmp/x" --wildcards "./boot/vmlinuz-$rel" \
		"${mods[@]}" || die "unpacking $deb failed"
	mv "$KDIR.tmp/x/boot/vmlinuz-$rel" "$KDIR.tmp/vmlinuz"
	for m in "${KMODULES[@]}"; do
		local f
		f=$(find "$KDIR.tmp/x" -path "*/$m.ko*" | head -n 1)
		[ -n "$f" ] || die "$deb has no $m module"
		case $f in
		*.xz) xz -dc "$f" >"$KDIR.tmp/$(basename "$m").ko" ;;
		*.zst) zstd -qdc "$f" >"$KDIR.tmp/$(basename "$m").ko" ;;
		*) cp "$f" "$KDIR.tmp/$(basename "$m").ko" ;;
		esac
	done
	rm -rf "$KDIR.tmp/x" "$KDIR"
	touch "$KDIR.tmp/ok"
	mv "$KDIR.tmp" "$KDIR"
}

# The arm64 guest's userland beyond busybox: bash, iproute2's ip (`ip netns`, veth options
# busybox's ip lacks) and util-linux's setsid (one that runs that ip) for the netns suites, and the libraries of theirs that tools/setup.sh
# --arm64 does not install. Downloaded once from apt's own sources (multiarch; apt checks
# signatures and checksums) and unpacked, never installed, into $UDIR.
A64_USERLAND=(busybox-static bash iproute2 util-linux libtinfo6 libmnl0 libbsd0 libmd0)
fetch_userland_arm64() {
	local cache log p debs=()
	cache=$(cache_dir)
	UDIR=$cache/userland-arm64_$(echo "${A64_USERLAND[*]}" | sha256sum | cut -c1-8)
	[ -f "$UDIR/ok" ] && return 0
	exec 8>"$cache/.userland.lock"
	flock -w 600 8 || skip "the userland cache $cache stayed locked for 10 minutes"
	[ -f "$UDIR/ok" ] && return 0
	rm -rf "$UDIR.tmp" "$UDIR"
	mkdir -p "$UDIR.tmp/debs"
	log=$UDIR.tmp/download.log
	for p in "${A64_USERLAND[@]}"; do debs+=("$p:arm64"); done
	(cd "$UDIR.tmp/debs" && apt-get -q download "${debs[@]}" >"$log" 2>&1) ||
		{ p=$(tail -n 1 "$log"); rm -rf "$UDIR.tmp"; skip "apt-get download ${debs[*]} failed (run tools/setup.sh --arm64): $p"; }
	for p in "$UDIR.tmp"/debs/*.deb; do
		dpkg-deb -x "$p" "$UDIR.tmp/root" || die "unpacking $p failed"
	done
	rm -rf "$UDIR.tmp/debs"
	touch "$UDIR.tmp/ok"
	mv "$UDIR.tmp" "$UDIR"
}

# add_file SRC DEST: copies SRC to $ROOT/DEST; a dynamic ELF brings its libraries (ldd) too.
add_file() {
	local src=$1 dest=$2 lib
	[ -f "$src" ] || die "no file $src"
	mkdir -p "$ROOT/$(dirname "$dest")"
	cp -L "$src" "$ROOT/$dest"
	if [ "$ARCH" = arm64 ]; then
		add_libs_arm64 "$src"
	elif ldd "$src" >/dev/null 2>&1; then
		for lib in $(ldd "$src" | grep -o '/[^ ]*'); do
			[ -e "$ROOT$lib" ] && continue
			mkdir -p "$ROOT$(dirname "$lib")"
			cp -L "$lib" "$ROOT$lib"
		done
	fi
}

# The arm64 library folders, the C library's first: multiarch (libc6:arm64 and the other
# :arm64 packages of tools/setup.sh --arm64), then the cross toolchain's. The loader and
# libc.so.6 must come from one glibc build (the loader's private data is libc's ABI): the cross
# toolchain's ld-linux-aarch64.so.1 (2.36-8cross1) with Debian's libc6:arm64 (2.36-9+deb12u*)
# hangs in pthread_create, so both are taken from the first folder that has both.
a64_libdirs() {
	local d dirs=(/usr/lib/aarch64-linux-gnu /lib/aarch64-linux-gnu /usr/aarch64-linux-gnu/lib)
	for d in "${dirs[@]}"; do
		[ -e "$d/libc.so.6" ] && [ -e "$d/ld-linux-aarch64.so.1" ] && { echo "$d"; break; }
	done
	printf '%s\n' "${dirs[@]}" "$UDIR/root/lib/aarch64-linux-gnu" "$UDIR/root/usr/lib/aarch64-linux-gnu"
}

# add_libs_arm64 ELF: an arm64 program's loader and libraries (DT_NEEDED, recursively), taken
# from the multiarch folders (a64_libdirs); the host's ldd cannot read it.
add_libs_arm64() {
	local interp lib d found dest
	# Scripts and data files have no libraries (and readelf fails on them).
	[ "$(head -c 4 "$1" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ] || return 0
	[ -n "${A64_LIBDIRS:-}" ] || A64_LIBDIRS=$(a64_libdirs)
	interp=$(readelf -l "$1" 2>/dev/null | sed -n 's/.*interpreter: \(.*\)]/\1/p' || true)
	for lib in ${interp:+"$interp"} $(readelf -d "$1" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'); do
		case $lib in /*) dest=$ROOT$lib ;; *) dest=$ROOT/lib/$lib ;; esac
		[ -e "$dest" ] && continue
		found=""
		for d in $A64_LIBDIRS; do
			[ -e "$d/$(basename "$lib")" ] && { found=$d/$(basename "$lib"); break; }
		done
		[ -n "$found" ] || die "no arm64 $lib for $1 (tools/setup.sh --arm64; the loader: Debian package libc6:arm64)"
		mkdir -p "$(dirname "$dest")"
		cp -L "$found" "$dest"
		[ "$lib" = "$interp" ] || add_libs_arm64 "$found"
	done
}

run() {
	local timeout=180 mem=512 files=() f qemu busybox
	while [ $# -gt 0 ]; do
		case $1 in
		--file) files+=("$2"); shift 2 ;;
		--timeout) timeout=$2; shift 2 ;;
		--mem) mem=$2; shift 2 ;;
		--) shift; break ;;
		*) die "unknown option $1 (see the head of $0)" ;;
		esac
	done
	[ $# -gt 0 ] || die "no guest command (run ... -- CMD ARGS)"
	[ "$(uname -m)" = x86_64 ] || skip "the runner needs an x86_64 host and this one is $(uname -m)"
	qemu=$(command -v "${UMEM_ZC_QEMU:-$QEMU_DEF}") ||
		skip "${UMEM_ZC_QEMU:-$QEMU_DEF} not found (Debian package $QEMU_PKG; tools/setup.sh installs it)"
	if [ "$ARCH" = x86_64 ]; then
		busybox=$(command -v busybox) || skip "busybox not found (Debian package busybox-static)"
		ldd "$busybox" >/dev/null 2>&1 && skip "$busybox is linked dynamically: the guest needs busybox-static"
	fi
	command -v cpio >/dev/null || skip "cpio not found (Debian package cpio)"
	fetch
	[ "$ARCH" = x86_64 ] || fetch_userland_arm64

	WORK=$(mktemp -d "${TMPDIR:-/tmp}/zc-vm.XXXXXX")
	QPID=""
	trap cleanup EXIT
	trap 'exit 1' INT TERM HUP
	ROOT=$WORK/root
	mkdir -p "$ROOT"/{bin,dev,proc,sys,tmp,zc,lib/modules}
	[ "$ARCH" = x86_64 ] || busybox=$UDIR/root/bin/busybox
	cp "$busybox" "$ROOT/bin/busybox"
	if [ "$ARCH" = arm64 ]; then
		# Debian's busybox runs its own applets before PATH, in its shell and in the applets
		# that run commands (setsid): the real programs take their names in /bin (busybox
		# --install links only the names still free) and the guest's /bin/sh is bash.
		add_file "$UDIR/root/bin/bash" bin/bash
		add_file "$UDIR/root/bin/ip" bin/ip
		add_file "$UDIR/root/usr/bin/setsid" bin/setsid
		ln -s bash "$ROOT/bin/sh"
	fi
	for f in "${KMODULES[@]}"; do
		cp "$KDIR/$(basename "$f").ko" "$ROOT/lib/modules/"
		basename "$f" >>"$ROOT/lib/modules/order"
	done
	for f in "${files[@]}"; do
		case $f in
		*=*) add_file "${f%%=*}" "zc/${f#*=}" ;;
		*) add_file "$f" "zc/$(basename "$f")" ;;
		esac
	done
	printf '%q ' "$@" >"$ROOT/zc/cmd"
	cat >"$ROOT/init" <<-'EOF'
	#!/bin/busybox sh
	/bin/busybox --install -s /bin
	mount -t proc proc /proc
	mount -t sysfs sys /sys
	mount -t devtmpfs dev /dev
	mount -t tmpfs tmp /tmp
	mkdir -p /run /var && ln -s /run /var/run && mount -t tmpfs run /run
	mount -t bpf bpf /sys/fs/bpf
	for m in $(cat /lib/modules/order); do
		insmod /lib/modules/$m.ko || echo "zc-guest: insmod $m failed"
	done
	n=0
	while [ ! -e /sys/class/net/eth3 ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
	ip link set lo up
	cd /zc
	echo "zc-guest: kernel $(uname -r), running: $(cat /zc/cmd)"
	/bin/sh -c "$(cat /zc/cmd)" </dev/null
	echo "zc-guest: exit $?"
	poweroff -f
	EOF
	chmod +x "$ROOT/init"
	(cd "$ROOT" && find . | cpio -o -H newc --quiet | gzip -1) >"$WORK/initrd.gz"

	local nics=() i
	for i in 0 1 2 3; do
		nics+=(-netdev "hubport,id=n$i,hubid=$((i / 2))"
		       -device "virtio-net-pci,netdev=n$i,mac=52:54:00:00:00:1$i,disable-legacy=on,iommu_platform=on")
	done
	# panic=-1 + -no-reboot: a panicking guest ends QEMU at once instead of waiting for the timeout.
	timeout -k 5 "$timeout" "$qemu" "${QEMU_MACHINE[@]}" -accel tcg -cpu max -smp 1 -m "$mem" -nodefaults -no-reboot \
		-display none -serial "file:$WORK/console" -monitor none \
		-kernel "$KDIR/vmlinuz" -initrd "$WORK/initrd.gz" \
		-append "console=$CONSOLE panic=-1 quiet loglevel=4 ipv6.disable=1 rdinit=/init $KARGS_ARCH" \
		"${nics[@]}" </dev/null >"$WORK/qemu.log" 2>&1 &
	QPID=$!
	local rc=0
	wait "$QPID" || rc=$?
	QPID=""
	tr -d '\r' <"$WORK/console" | grep -v '^zc-guest: exit ' || true
	local guest
	guest=$(tr -d '\r' <"$WORK/console" | sed -n 's/^zc-guest: exit \([0-9]*\)$/\1/p' | tail -n 1)
	if [ -z "$guest" ]; then
		[ $rc = 124 ] && echo "$me: the guest did not finish within ${timeout}s" >&2
		cat "$WORK/qemu.log" >&2
		die "the guest never reported an exit code (QEMU exit $rc)"
	fi
	echo "$me: guest exit $guest"
	return "$guest"
}

cleanup() {
	if [ -n "${QPID:-}" ]; then
		kill "$QPID" 2>/dev/null || true
		wait "$QPID" 2>/dev/null || true
	fi
	[ -n "${WORK:-}" ] && rm -rf "$WORK"
}

case ${1:-} in
fetch) fetch; echo "$KDIR" ;;
run) shift; run "$@" ;;
*) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac
