#!/usr/bin/env bash
# Prefix edits by a writer killed midway: strace kills umem-steer at its Nth bpf(2) call, for
# every N until the edit runs to its end (a Ctrl-C can land between any two). After each, the
# prefix rules show as they were before the edit or as after it, never a part of it; the next
# add gets an id no listed rule has; and what a killed clear left never comes back with the
# next add.
set -uo pipefail
SRC=${UMEM_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
B=${UMEM_BUILD_DIR:?}
RX=$B/test/steer/steer_xsk_rx
CLI=$B/tools/umem-steer/umem-steer
# shellcheck source=../common/netns.sh
. "$SRC/test/common/netns.sh"

command -v strace >/dev/null || { echo "skip: no strace"; exit 77; }
netns_init spk
netns_workdir W
fail() { echo "FAIL: $*" >&2; for f in "$W"/*; do echo "--- $f" >&2; head -c 4000 "$f" >&2; done; exit 1; }
netns_add NA || fail "netns"
netns_veth "$NA" a0 "$NA" b0 || fail "veth"
netns_bg RXP "$NA" "$RX" a0 "arp -> pass" >"$W/rx.out" 2>"$W/rx.err"
wait_for 10 grep -q ready "$W/rx.out" || fail "receiver did not start"
steer() { ip netns exec "$NA" "$CLI" "$@"; }
# killed N ARGS...: umem-steer ARGS, killed at its Nth bpf(2) call; status 0 when it made fewer.
killed() {
	local n=$1
	shift
	# LeakSanitizer cannot run under ptrace: with it on (the ASan build), a run to its end
	# would exit non-zero.
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		ip netns exec "$NA" strace -qq -o /dev/null -e trace=bpf -e "inject=bpf:signal=KILL:when=$n" \
		"$CLI" "$@" >/dev/null 2>&1
}
killed 1 show a0 && { echo "skip: strace cannot inject a signal here"; exit 77; }
# The prefix rules as listed, "ID RULE" a line, sorted (the counters left out).
prefixes() {
	steer show a0 | grep -E '^ *[0-9]+ .*(src|dst) ' | awk '{ NF -= 2; $1 = $1; print }' | sort
}
# load LINES...: the rules, added by one run.
load() {
	printf '%s\n' "$@" >"$W/list"
	steer load a0 "$W/list" >/dev/null || fail "load $*"
}

# add: killed at each call; the rule is listed whole or not at all, and the next add's id is new.
load 'src 10.20.0.0/16 -> drop' 'dst 10.21.0.0/16 -> drop'
for n in $(seq 1 400); do
	host=$((n / 256)).$((n % 256)) # a host of its own for each try
	prefixes >"$W/before"
	killed "$n" add a0 "src 10.20.$host/32 -> pass"
	done_rc=$?
	prefixes >"$W/after"
	new=$(comm -13 "$W/before" "$W/after")
	gone=$(comm -23 "$W/before" "$W/after")
	[ -z "$gone" ] || fail "add killed at bpf call $n removed: $gone"
	case $new in
	'' | *" src 10.20.$host -> pass" | *" src 10.20.$host/32 -> pass") ;; # a host prefix shows without /32
	*) fail "add killed at bpf call $n left: $new" ;;
	esac
	[ "$done_rc" = 0 ] && [ -z "$new" ] && fail "an add that ran to its end added nothing"
	steer add a0 "dst 10.22.$host/32 -> drop" >"$W/add" 2>&1 || fail "add after an add killed at call $n"
	dup=$(prefixes | awk '{ print $1 }' | sort | uniq -d | tr '\n' ' ')
	[ -z "$dup" ] || fail "after an add killed at bpf call $n, ids held by two rules: $dup"
	[ "$done_rc" = 0 ] && break
done
[ "$done_rc" = 0 ] || fail "umem-steer add never ran to its end"
echo "add: killed at bpf calls 1..$((n - 1)), then ran to its end"

# remove: the rule is listed or not, nothing else changes.
for n in $(seq 1 400); do
	steer clear a0 || fail "clear"
	load 'src 10.30.0.0/16 -> drop' 'src 10.30.0.0/16 udp -> pass' 'dst 10.31.0.0/16 -> drop'
	prefixes >"$W/before"
	id=$(awk '/udp src 10.30.0.0\/16 -> pass/ { print $1 }' "$W/before")
	killed "$n" remove a0 "$id"
	done_rc=$?
	prefixes >"$W/after"
	if ! cmp -s "$W/before" "$W/after"; then
		grep -v "^$id " "$W/before" | cmp -s - "$W/after" || fail "remove killed at bpf call $n left: $(cat "$W/after")"
	fi
	[ "$done_rc" = 0 ] && break
done
[ "$done_rc" = 0 ] || fail "umem-steer remove never ran to its end"
echo "remove: killed at bpf calls 1..$((n - 1)), then ran to its end"

# clear: all of the rules or none; the next add brings back none of them.
for n in $(seq 1 400); do
	steer clear a0 || fail "clear"
	load 'src 10.40.0.0/16 -> drop' 'src 10.41.0.0/16 -> drop' 'src 10.41.0.0/16 udp -> pass' \
		'dst 10.42.0.0/16 -> drop' 'dst 10.43.0.0/16 -> drop'
	prefixes >"$W/before"
	killed "$n" clear a0
	done_rc=$?
	prefixes >"$W/after"
	if [ -s "$W/after" ]; then
		cmp -s "$W/before" "$W/after" || fail "clear killed at bpf call $n left a part: $(cat "$W/after")"
		continue
	fi
	steer add a0 'src 10.44.0.0/16 -> drop' >/dev/null || fail "add after a clear killed at call $n"
	steer add a0 'dst 10.45.0.0/16 -> drop' >/dev/null || fail "add after a clear killed at call $n"
	prefixes >"$W/next"
	[ "$(grep -c . "$W/next")" = 2 ] ||
		fail "after a clear killed at bpf call $n, the next adds brought back: $(grep -v 10.4[45] "$W/next")"
	[ "$done_rc" = 0 ] && break
done
[ "$done_rc" = 0 ] || fail "umem-steer clear never ran to its end"
echo "clear: killed at bpf calls 1..$((n - 1)), then ran to its end"
steer clear a0 || fail "clear"
echo "ok"
