#!/usr/bin/env bash
# The kernel log checker on made-up records (label unit): what was logged before the start is
# ignored, ordinary lines pass, a WARNING/BUG/Oops/general protection line logged since fails.
set -uo pipefail
src=${UMEM_SOURCE_DIR:?}
py=$(command -v /usr/bin/python3 || command -v python3) || { echo "FAIL: python3 missing (tools/setup.sh)"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
export UMEM_KMSG=$tmp/kmsg
check() { "$py" "$src/test/kernel/kernel_log.py" "$@"; }
errors=0
fail() { echo "FAIL: $*" >&2; errors=$((errors + 1)); }

printf '%s\n' '4,10,100,-;WARNING: CPU: 0 PID: 1 at old/warning.c:1 before the start' \
	'6,11,101,-;Speculative Return Stack Overflow: WARNING: not at the line start' >"$UMEM_KMSG"
check start "$tmp/state" >/dev/null || fail "start failed"
[ "$(cat "$tmp/state")" = 11 ] || fail "start recorded '$(cat "$tmp/state")', not 11"
check check "$tmp/state" >/dev/null || fail "an old warning failed the check"

printf '%s\n' '6,12,102,-;IPv6: ADDRCONF(NETDEV_CHANGE): pt-l0: link becomes ready' \
	' SUBSYSTEM=net' >>"$UMEM_KMSG"
check check "$tmp/state" >/dev/null || fail "an ordinary line failed the check"

for bad in 'WARNING: CPU: 1 PID: 42 at net/xdp/xsk.c:100 xsk_rcv+0x1/0x2' \
	'BUG: KASAN: use-after-free in xsk_rcv' 'Oops: 0000 [#1] PREEMPT SMP' \
	'general protection fault, probably for non-canonical address 0xdead: 0000 [#1]'; do
	cp "$UMEM_KMSG" "$tmp/good"
	printf '4,13,103,-;%s\n' "$bad" >>"$UMEM_KMSG"
	out=$(check check "$tmp/state")
	[ $? = 1 ] || fail "'$bad' passed"
	grep -qF "$bad" <<<"$out" || fail "the report does not quote '$bad': $out"
	cp "$tmp/good" "$UMEM_KMSG"
done

echo unreadable >"$tmp/state"
check check "$tmp/state" >/dev/null
[ $? = 77 ] || fail "an unreadable start is not a skip"
[ $errors = 0 ] && echo "kernel log checker: ok"
exit $((errors > 0))
