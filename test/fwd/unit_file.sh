#!/usr/bin/env bash
# The installed xdp-fwd@.service: systemd-analyze verify finds nothing (its ExecStart is the
# installed binary, its man pages are the installed ones), Type=notify, Restart=on-failure, and
# the capability set is what privs.c names, no more.
set -uo pipefail
: "${UMEM_BUILD_DIR:?}" "${UMEM_SOURCE_DIR:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v systemd-analyze >/dev/null || { echo "skip: systemd-analyze not installed" >&2; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$UMEM_BUILD_DIR" --prefix "$work/prefix" >/dev/null || fail "cmake --install"
unit=$work/prefix/lib/systemd/system/xdp-fwd@.service
[ -f "$unit" ] || fail "xdp-fwd@.service not installed"
grep -qx "ExecStart=$work/prefix/sbin/xdp-fwd --config /etc/xdp-fwd/%i.conf --quiet" "$unit" ||
	fail "ExecStart is not the installed binary: $(grep ExecStart "$unit")"
MANPATH=$work/prefix/share/man systemd-analyze verify "$unit" >"$work/verify.out" 2>&1 ||
	fail "systemd-analyze verify: $(cat "$work/verify.out")"
[ ! -s "$work/verify.out" ] || fail "systemd-analyze verify warns: $(cat "$work/verify.out")"
for line in Type=notify Restart=on-failure "ExecReload=/bin/kill -HUP \$MAINPID" WatchdogSec=10s; do
	grep -qxF "$line" "$unit" || fail "no $line"
done
# The bounding set is the capabilities privs.c checks for set-up, no more.
want=$(grep -o '{ CAP_[A-Z_]*, "cap_' "$UMEM_SOURCE_DIR/apps/xdp-fwd/privs.c" | grep -o 'CAP_[A-Z_]*' | sort | tr '\n' ' ')
have=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit" | tr ' ' '\n' | sort | tr '\n' ' ')
[ "$want" = "$have" ] || fail "CapabilityBoundingSet '$have', privs.c needs '$want'"
echo "ok"
