#!/usr/bin/env bash
# Prefix rules end to end on a veth: frames from two source addresses of one /24 reach the
# socket of the longest prefix that holds their source; a host rule added at run time
# (umem-steer) takes its host's frames and counts them, and its removal hands them back; a bad
# prefix is refused naming the problem, with the rules as they were; `umem-steer load` adds a
# 1000-line list in one run, and a list with a bad line adds nothing, nor one with a line the
# table refuses (a fifth rule on one prefix), nor one with a line longer than 4096 bytes; a
# comment past byte 511 stays a comment; a refused list's undo is linear; `remove` of an id no
# rule has says "no rule with id N".
set -uo pipefail
SRC=${UMEM_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
B=${UMEM_BUILD_DIR:?}
RX=$B/test/steer/steer_xsk_rx
CLI=$B/tools/umem-steer/umem-steer
# shellcheck source=../common/netns.sh
. "$SRC/test/common/netns.sh"

netns_init spx
netns_workdir W
fail() { echo "FAIL: $*" >&2; for f in "$W"/*; do echo "--- $f" >&2; head -c 4000 "$f" >&2; done; exit 1; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
netns_add NA || fail "netns"
netns_add NB || fail "netns"
netns_veth "$NA" a0 "$NB" b0 || fail "veth"
ip -n "$NA" addr add 10.213.0.1/24 dev a0
ip -n "$NB" addr add 10.213.0.2/24 dev b0
ip -n "$NB" addr add 10.213.0.3/24 dev b0
steer() { ip netns exec "$NA" "$CLI" "$@"; }
# send FROM PORT COUNT: UDP datagrams from address FROM of namespace B to A's port PORT.
send() {
	ip netns exec "$NB" python3 -c "
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('$1', 0))
for _ in range($3):
    s.sendto(b'prefix', ('10.213.0.1', $2))
" || fail "send from $1"
}

# The steer_xsk_rx books: port 5001 belongs on socket 0, 5002 on socket 1 (else "wrong").
netns_bg RXP "$NA" "$RX" --default drop a0 "src 10.213.0.0/24 udp -> sock 0" \
	"src 10.213.0.3 udp -> sock 1" "arp -> pass" >"$W/rx.out" 2>"$W/rx.err"
wait_for 10 grep -q ready "$W/rx.out" || fail "receiver did not start"
send 10.213.0.2 5001 3
send 10.213.0.3 5002 2
wait_for 5 grep -q "sock0=3 sock1=2 wrong=0" "$W/rx.out" || fail "frames not steered by the longest prefix"

steer add a0 'src 10.213.0.2 -> drop' >"$W/add.out" 2>&1 || fail "run-time add"
ID=$(sed -n 's/^rule \([0-9]*\) added$/\1/p' "$W/add.out")
[ -n "$ID" ] || fail "no rule id reported"
send 10.213.0.2 5001 4
send 10.213.0.3 5002 1
wait_for 5 grep -q "sock0=3 sock1=3 wrong=0" "$W/rx.out" || fail "the /32 socket's frame did not arrive"
wait_for 5 bash -c "ip netns exec $NA '$CLI' show a0 | grep -Eq '^ *$ID src 10.213.0.2 -> drop +4 '" ||
	fail "the run-time host rule did not count its 4 frames"
steer show a0 >"$W/show" || fail "show"
grep -Eq "udp src 10.213.0.0/24 -> sock 0 +3 " "$W/show" || fail "/24 rule counter"
grep -Eq "udp src 10.213.0.3 -> sock 1 +3 " "$W/show" || fail "/32 rule counter"

# A bad prefix: refused (rc 1), named, nothing changed.
steer show a0 | sed -n 's/.*table generation \([0-9]*\).*/\1/p' >"$W/gen0"
steer add a0 'src 10.213.0.0/33 -> drop' >"$W/bad" 2>&1 && fail "a /33 accepted"
grep -q "'33'" "$W/bad" || fail "the /33 error does not name it"
steer add a0 'src 10.213.0.7/24 -> drop' >"$W/bad2" 2>&1 && fail "host bits accepted"
grep -q "host bits set (the prefix is 10.213.0.0/24)" "$W/bad2" || fail "the host-bits error does not say so"
steer show a0 | sed -n 's/.*table generation \([0-9]*\).*/\1/p' >"$W/gen1"
cmp -s "$W/gen0" "$W/gen1" || fail "a refused rule changed the table"

steer remove a0 "$ID" >"$W/remove" 2>&1 || fail "remove"
grep -q "rule $ID removed: src 10.213.0.2 -> drop" "$W/remove" || fail "remove does not name the rule"
send 10.213.0.2 5001 2
wait_for 5 grep -q "sock0=5 sock1=3 wrong=0" "$W/rx.out" || fail "frames not back on the /24 socket after remove"
# load: a file of 1000 rules in one run; a file with a bad line adds nothing and names the line.
for i in $(seq 0 999); do echo "src 10.$((100 + i / 256)).$((i % 256)).0/24 -> drop # blocklist $i"; done >"$W/list"
steer load a0 "$W/list" >"$W/load" 2>&1 || fail "load"
grep -q "^1000 rules added" "$W/load" || fail "load did not report 1000 rules"
[ "$(steer show a0 | grep -c ' src [0-9./]* -> drop ')" = 1000 ] || fail "not 1000 loaded rules in show"
printf 'src 10.50.0.0/16 -> drop\n\n# a comment\nsrc 10.51.0.0/33 -> drop\n' >"$W/badlist"
steer load a0 "$W/badlist" >"$W/badload" 2>&1 && fail "a list with a /33 loaded"
grep -q "line 4: nothing added" "$W/badload" || fail "the bad line is not named"
steer show a0 | grep -q "10.50.0.0/16" && fail "a rule of the refused list was added"
# A line only the table refuses (a fifth rule on one prefix): the four before it go again.
for p in 1 2 3 4 5; do echo "src 10.60.0.0/16 udp dport $p -> drop"; done >"$W/fulllist"
steer load a0 "$W/fulllist" >"$W/fullload" 2>&1 && fail "a fifth rule on one prefix loaded"
grep -q "line 5 refused" "$W/fullload" || fail "the refused line is not named"
grep -q "nothing added" "$W/fullload" || fail "the refused list does not say it added nothing"
steer show a0 | grep -q "10.60.0.0/16" && fail "rules of a list refused at its fifth line stayed"
steer clear a0 || fail "clear"
steer show a0 | grep -q " src " && fail "clear left prefix rules"

# remove: an id no rule has, in the gap between the table's ids and the prefix rules' too,
# says so once (the man page's "no rule with id ID"); what is no number is named as such.
steer remove a0 77 >"$W/rm77.out" 2>"$W/rm77.err" && fail "remove of id 77 succeeded"
grep -q "no rule with id 77" "$W/rm77.err" || fail "remove 77: $(cat "$W/rm77.err")"
[ "$(wc -l <"$W/rm77.err")" = 1 ] || fail "remove 77: not one message: $(cat "$W/rm77.err")"
steer remove a0 x7 >/dev/null 2>"$W/rmx.err" && fail "remove of id x7 succeeded"
grep -q "'x7' is not a rule id" "$W/rmx.err" || fail "remove x7: $(cat "$W/rmx.err")"

# load reads whole lines: a comment past byte 511 stays a comment; a line longer than 4096
# bytes is refused and named, nothing added.
pad=$(printf '%600s' '' | tr ' ' x)
printf 'src 10.92.0.0/16 -> drop # %s src 10.93.0.0/16 -> drop\n' "$pad" >"$W/longcomment"
steer load a0 "$W/longcomment" >"$W/lc.out" 2>&1 || fail "load of a long comment: $(cat "$W/lc.out")"
grep -q "^1 rules added" "$W/lc.out" || fail "a long comment line: $(cat "$W/lc.out")"
steer show a0 | grep -q "10.93.0.0/16" && fail "the text of a comment past byte 511 became a rule"
pad=$(printf '%5000s' '' | tr ' ' x)
printf 'src 10.94.0.0/16 -> drop\nsrc 10.95.0.0/16 -> drop # %s\n' "$pad" >"$W/longline"
steer load a0 "$W/longline" >"$W/ll.out" 2>&1 && fail "a 5000-byte line loaded"
grep -q "line 2: longer than 4096 bytes; nothing added" "$W/ll.out" || fail "the long line: $(cat "$W/ll.out")"
steer show a0 | grep -q "10.94.0.0/16" && fail "a rule of a list refused for a long line was added"
steer clear a0 || fail "clear"

# A refused load's undo is linear in the rules it takes out again: its bpf(2) calls, for
# twice the rules, about twice as many (a walk of the tries per removed rule made them grow 4x:
# 137 s to undo 8000 rules). Counted, not timed.
bpf_calls() { # N: the bpf(2) calls of a load of N prefix rules refused at its end
	local i
	for i in $(seq 0 $(($1 - 1))); do echo "src 10.$((120 + i / 256)).$((i % 256)).0/24 -> drop"; done >"$W/scale"
	for i in 1 2 3 4 5; do echo "src 10.61.0.0/16 udp dport $i -> drop"; done >>"$W/scale"
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 ip netns exec "$NA" strace -f -qq -c -e trace=bpf \
		-o "$W/strace" "$CLI" load a0 "$W/scale" >/dev/null 2>&1 && fail "a fifth rule on one prefix loaded"
	steer show a0 | grep -q " src " && fail "a refused load of $1 rules left rules"
	awk '$NF == "bpf" { print $4 }' "$W/strace"
}
if command -v strace >/dev/null; then
	c1=$(bpf_calls 150) c2=$(bpf_calls 300)
	echo "refused load, bpf(2) calls: 150 rules $c1, 300 rules $c2"
	[ -n "$c1" ] && [ -n "$c2" ] && [ $((c2 * 10)) -le $((c1 * 25)) ] ||
		fail "bpf(2) calls of a refused load: $c1 for 150 rules, $c2 for 300: not linear"
else
	echo "note: no strace, the undo's scale not checked"
fi
echo "ok"
