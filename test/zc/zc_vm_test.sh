#!/usr/bin/env bash
# tools/zc-vm.sh's own exits: a missing QEMU (x86_64 and arm64) and an unreachable mirror skip (77)
# naming what is missing; a guest that does not finish fails (1) at the timeout; a runner that
# is stopped takes its guest with it. Nothing is left running and no scratch folder stays.
set -uo pipefail
SRC=${UMEM_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
VM=$SRC/tools/zc-vm.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

UMEM_ZC_QEMU=/nonexistent/qemu bash "$VM" run -- true 2>"$T/err"
rc=$?
[ $rc = 77 ] && grep -q "SKIP: /nonexistent/qemu not found (Debian package qemu-system-x86" "$T/err" ||
	fail "missing QEMU: exit $rc, $(cat "$T/err")"

UMEM_ZC_QEMU=/nonexistent/qemu bash "$VM" --arch arm64 run -- true 2>"$T/err"
rc=$?
[ $rc = 77 ] && grep -q "SKIP: /nonexistent/qemu not found (Debian package qemu-system-arm" "$T/err" ||
	fail "missing qemu-system-aarch64: exit $rc, $(cat "$T/err")"

mkdir "$T/cache"
UMEM_ZC_CACHE=$T/cache UMEM_ZC_MIRROR=http://127.0.0.1:9/debian bash "$VM" --arch arm64 fetch 2>"$T/err"
rc=$?
[ $rc = 77 ] && grep -q "SKIP: cannot read the package list of http://127.0.0.1:9/debian" "$T/err" ||
	fail "arm64, unreachable mirror: exit $rc, $(cat "$T/err")"
UMEM_ZC_CACHE=$T/cache UMEM_ZC_MIRROR=http://127.0.0.1:9/debian bash "$VM" fetch 2>"$T/err"
rc=$?
[ $rc = 77 ] && grep -q "SKIP: cannot read the package list of http://127.0.0.1:9/debian" "$T/err" ||
	fail "unreachable mirror: exit $rc, $(cat "$T/err")"
[ -z "$(ls -d "$T"/cache/6.18.15-1~bpo13+1* 2>/dev/null)" ] || fail "a kernel folder was left after a failed fetch"

# The remaining checks boot guests: they need what the zc suite needs.
bash "$VM" fetch >/dev/null 2>"$T/err" || { cat "$T/err"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || { echo "SKIP: no qemu-system-x86_64"; exit 77; }
mkdir "$T/tmp"
left() { pgrep -f "$T/tmp" >/dev/null; }

TMPDIR=$T/tmp bash "$VM" run --timeout 8 -- sleep 600 >"$T/out" 2>"$T/err"
rc=$?
[ $rc = 1 ] && grep -q "did not finish within 8s" "$T/err" || fail "timeout: exit $rc, $(cat "$T/err")"
! left || fail "QEMU still runs after the timeout"
[ -z "$(ls "$T/tmp")" ] || fail "scratch folder left: $(ls "$T/tmp")"

TMPDIR=$T/tmp bash "$VM" run --timeout 100 -- sleep 600 >"$T/out" 2>"$T/err" &
pid=$!
for _ in $(seq 200); do left && grep -q "zc-guest: kernel" "$T/tmp"/zc-vm.*/console 2>/dev/null && break; sleep 0.1; done
grep -q "zc-guest: kernel" "$T/tmp"/zc-vm.*/console 2>/dev/null || { kill "$pid"; fail "the guest did not start"; }
kill -TERM "$pid"
wait "$pid"
rc=$?
[ $rc != 0 ] || fail "a stopped runner exited 0"
for _ in $(seq 50); do left || break; sleep 0.1; done
! left || fail "QEMU still runs after its runner was stopped"
[ -z "$(ls "$T/tmp")" ] || fail "scratch folder left: $(ls "$T/tmp")"
echo "ok: skips name what is missing; timeout and stop end the guest"
