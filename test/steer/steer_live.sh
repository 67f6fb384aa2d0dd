#!/usr/bin/env bash
# Run-time rule edits with umem-steer against the steering program xdp-fwd attached.
#   steer_live.sh writers   4 processes (steer_writers) add 15 rules each and remove them, 20
#                           rounds, all at once: no edit lost, no id given to two rules; then
#                           4 umem-steer loops add 15 rules each at once, then remove them at
#                           once: every add gets its own id, the table holds exactly the rules
#                           added, every remove names the rule it removed, a second remove of
#                           an id says "no rule with id N"
#   steer_live.sh norule    xdp-fwd without -r: umem-steer says how to start it for run-time
#                           rules, and that start works
#   steer_live.sh unpriv    umem-steer as nobody names the privilege it lacks
#   steer_live.sh stats     xdp-fwd's stats (text and JSON) list a rule umem-steer added while
#                           it runs, and drop it once removed; prefix rules (-r and run-time) too
#   steer_live.sh scale     while `umem-steer load` adds 20,000 prefix rules and, refused at its
#                           last line, takes them out again, xdp-fwd's stats intervals (0.2 s)
#                           keep coming: no gap over 1 s (a walk of the tries per table change
#                           on the main thread made gaps of 6 s at 100,000 rules); nothing of the
#                           refused file stays, nor of a load interrupted by SIGTERM
set -uo pipefail
SRC=${UMEM_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
B=${UMEM_BUILD_DIR:?}
CLI=$B/tools/umem-steer/umem-steer
FWD=$B/apps/xdp-fwd/xdp-fwd
CASE=${1:?case: writers, norule, unpriv, stats or scale}
# The rule that makes xdp-fwd attach the steering program without changing what it forwards.
IDLE_RULE='prio 65535 any -> queue'
# shellcheck source=../common/netns.sh
. "$SRC/test/common/netns.sh"

netns_init sl
netns_workdir W
fail() { echo "FAIL: $*" >&2; for f in "$W"/*; do echo "--- $f" >&2; head -c 4000 "$f" >&2; done; exit 1; }
netns_add NS || fail "netns"
netns_veth "$NS" a0 "$NS" p0 || fail "veth a0"
netns_veth "$NS" a1 "$NS" p1 || fail "veth a1"
steer() { ip netns exec "$NS" "$CLI" "$@"; }

# fwd ARGS...: xdp-fwd on a0 and a1, returning once its ports are bound.
fwd() {
	netns_bg FWD_PID "$NS" "$FWD" -i a0 -i a1 "$@" >"$W/fwd.out" 2>"$W/fwd.err"
	wait_for 20 grep -q "Ctrl-C stops" "$W/fwd.err" || fail "xdp-fwd did not start"
}

case $CASE in
writers)
	fwd -r "$IDLE_RULE" --interval 3600
	ip netns exec "$NS" "$B/test/steer/steer_writers" a0 4 15 20 >"$W/writers" 2>&1 || fail "parallel writers"
	N=15 jobs=()
	for w in 0 1 2 3; do
		ip netns exec "$NS" bash -c "for i in \$(seq $N); do '$CLI' add a0 \"udp dport \$((5000 + $w * 100 + i)) -> pass\" || echo ERR; done" \
			>"$W/add$w.out" 2>"$W/add$w.err" &
		jobs+=($!)
	done
	wait "${jobs[@]}"
	jobs=()
	cat "$W"/add?.out >"$W/adds"
	grep -q ERR "$W/adds" && fail "an add failed"
	[ "$(grep -c '^rule [0-9]* added$' "$W/adds")" = $((4 * N)) ] || fail "not $((4 * N)) adds reported"
	dup=$(awk '{print $2}' "$W/adds" | sort | uniq -d | tr '\n' ' ')
	[ -z "$dup" ] || fail "ids handed out twice: $dup"
	steer show a0 >"$W/show" || fail "show"
	for w in 0 1 2 3; do
		for i in $(seq $N); do
			[ "$(grep -Ec "udp dport $((5000 + w * 100 + i)) -> pass " "$W/show")" = 1 ] ||
				fail "rule for port $((5000 + w * 100 + i)) not in the table once"
		done
	done
	[ "$(grep -Ec ' udp dport [0-9]+ -> pass ' "$W/show")" = $((4 * N)) ] || fail "the table holds other rules"
	# Ids by writer: the rule each add printed, in order.
	for w in 0 1 2 3; do
		awk '{print $2}' "$W/add$w.out" >"$W/ids$w"
		ip netns exec "$NS" bash -c "while read -r id; do '$CLI' remove a0 \$id || echo ERR; done" \
			<"$W/ids$w" >"$W/rm$w.out" 2>"$W/rm$w.err" &
		jobs+=($!)
	done
	wait "${jobs[@]}" # not a bare wait: xdp-fwd is a child too
	for w in 0 1 2 3; do
		grep -q ERR "$W/rm$w.out" && fail "writer $w: a remove failed"
		i=0
		while read -r id; do
			i=$((i + 1))
			grep -qx "rule $id removed: udp dport $((5000 + w * 100 + i)) -> pass" "$W/rm$w.out" ||
				fail "writer $w: remove of $id did not name its rule"
		done <"$W/ids$w"
	done
	steer show a0 >"$W/show2" || fail "show after removes"
	grep -Eq ' udp dport [0-9]+ -> pass ' "$W/show2" && fail "rules left after every remove"
	grep -Fq "$IDLE_RULE" "$W/show2" || fail "the start-up rule went"
	id=$(head -1 "$W/ids0")
	steer remove a0 "$id" >"$W/again.out" 2>"$W/again.err" && fail "a second remove succeeded"
	grep -q "no rule with id $id" "$W/again.err" || fail "second remove: $(cat "$W/again.err")"
	[ "$(wc -l <"$W/again.err")" = 1 ] || fail "second remove: not one message: $(cat "$W/again.err")"
	grep -q "No such file" "$W/again.err" && fail "second remove speaks of files"
	# The writers' lock file goes with the program.
	prog=$(sed -n 's/^program \([0-9]*\),.*/\1/p' "$W/show2")
	[ -e "/run/umem/steer-prog$prog.lock" ] || fail "no lock file for program $prog"
	netns_stop "$FWD_PID"
	[ -e "/run/umem/steer-prog$prog.lock" ] && fail "lock file of program $prog left after xdp-fwd stopped"
	;;
norule)
	fwd --interval 3600
	steer show a0 >"$W/show" 2>"$W/show.err" && fail "show found a program xdp-fwd does not attach"
	grep -Fq -- "-r '$IDLE_RULE'" "$W/show.err" || fail "the message does not say how: $(cat "$W/show.err")"
	netns_stop "$FWD_PID"
	fwd -r "$IDLE_RULE" --interval 3600
	steer add a0 'udp dport 7000 -> pass' >"$W/add" || fail "add after the start the message names"
	grep -q '^rule [0-9]* added$' "$W/add" || fail "add: $(cat "$W/add")"
	;;
unpriv)
	command -v setpriv >/dev/null || { echo "skip: no setpriv"; exit 77; }
	ip netns exec "$NS" setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null ||
		{ echo "skip: cannot become nobody"; exit 77; }
	fwd -r "$IDLE_RULE" --interval 3600
	for cmd in show "add a0 udp -> pass"; do
		set -- $cmd
		[ "$1" = show ] && set -- show a0
		ip netns exec "$NS" setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
			"$CLI" "$@" >"$W/np.out" 2>"$W/np.err" && fail "$1 as nobody succeeded"
		grep -q "CAP_BPF" "$W/np.err" || fail "$1 as nobody does not name the privilege: $(cat "$W/np.err")"
		grep -q "no umem_steer program attached" "$W/np.err" && fail "$1 as nobody says there is no program"
	done
	steer show a0 >/dev/null || fail "show as root"
	;;
stats)
	# JSON, then the text lines: the run-time rule appears with its id, and goes when removed.
	fwd -r "$IDLE_RULE" --json --interval 0.2
	steer add a0 'udp dport 7001 -> pass' >"$W/add" || fail "add"
	id=$(awk '{print $2}' "$W/add")
	wait_for 10 grep -q "{\"rule\":\"udp dport 7001 -> pass\",\"id\":$id,\"hits\":0}" "$W/fwd.out" ||
		fail "JSON stats do not list the rule added at run time"
	grep -q "{\"rule\":\"$IDLE_RULE\",\"id\":0," "$W/fwd.out" || fail "JSON stats lost the -r rule"
	steer remove a0 "$id" >/dev/null || fail "remove"
	n=$(wc -l <"$W/fwd.out")
	wait_for 10 bash -c "[ \$(tail -n +$((n + 2)) '$W/fwd.out' | wc -l) -ge 2 ]" || fail "no stats after the remove"
	tail -n +$((n + 2)) "$W/fwd.out" | grep -q "dport 7001" && fail "JSON stats still list the removed rule"
	netns_stop "$FWD_PID"
	fwd -r "$IDLE_RULE" --interval 0.2
	steer add a0 'prio 3 tcp dport 7002 -> drop' >/dev/null || fail "add (text)"
	wait_for 10 grep -q "^steer a0 .*rule hits 'prio 3 tcp dport 7002 -> drop' 0, '$IDLE_RULE' 0" "$W/fwd.out" ||
		fail "text stats do not list the rule added at run time (in table order)"
	# Prefix rules (kept in the tries, ids from 4096): a -r one and a run-time one are listed
	# after the table's rules.
	netns_stop "$FWD_PID"
	fwd -r "$IDLE_RULE" -r 'src 10.99.0.0/16 -> drop' --interval 0.2
	steer add a0 'dst 2001:db8::/32 -> pass' >/dev/null || fail "add (prefix)"
	wait_for 10 grep -q "^steer a0 .*rule hits '$IDLE_RULE' 0, 'src 10.99.0.0/16 -> drop' 0, 'dst 2001:db8::/32 -> pass' 0" \
		"$W/fwd.out" || fail "text stats do not list the prefix rules"
	;;
scale)
	command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
	N=20000
	for i in $(seq 0 $((N - 6))); do echo "src 10.$((i / 65536 + 100)).$((i / 256 % 256)).$((i % 256))/32 -> drop"; done >"$W/list"
	for p in 1 2 3 4 5; do echo "src 10.99.0.0/16 udp dport $p -> drop"; done >>"$W/list"
	fwd -r "$IDLE_RULE" --json --interval 0.2
	t0=$(date +%s.%N)
	steer load a0 "$W/list" >"$W/load.out" 2>&1 && fail "a fifth rule on one prefix loaded"
	t1=$(date +%s.%N)
	grep -q "line $N refused" "$W/load.out" || fail "load: $(cat "$W/load.out")"
	# The command returns once the undo is complete: nothing of the file is live.
	steer show a0 | grep -q " src " && fail "rules of the refused file are live after load returned"
	# The interval after the load's end, so the last gap is seen whole.
	n=$(wc -l <"$W/fwd.out")
	wait_for 10 bash -c "[ \$(wc -l <'$W/fwd.out') -ge $((n + 2)) ]" || fail "no stats after the load"
	python3 - "$W/fwd.out" "$t0" "$t1" >"$W/gaps" <<'PY' || fail "stats stalled during the load: $(cat "$W/gaps")"
import json, sys
t0, t1 = float(sys.argv[2]), float(sys.argv[3])
ts = [o["timestamp"] for o in map(json.loads, open(sys.argv[1])) if o.get("counts") == "interval"]
gaps = [b - a for a, b in zip(ts, ts[1:]) if b >= t0 and a <= t1]
print("load %.1f s, %d intervals in it, longest gap %.2f s" % (t1 - t0, len(gaps), max(gaps, default=0)))
sys.exit(0 if gaps and max(gaps) <= 1.0 else 1)
PY
	cat "$W/gaps"
	# SIGTERM while the rules go in: the ones added go out again before the command ends, by
	# the signal. (SIGINT as Ctrl-C sends it is the same path; a background job ignores it.)
	ip netns exec "$NS" "$CLI" load a0 "$W/list" >"$W/int.out" 2>&1 &
	pid=$!
	wait_for 20 bash -c "ip netns exec $NS '$CLI' show a0 | grep -q ' src '" || fail "the load added nothing"
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	[ "$rc" = 143 ] || fail "an interrupted load exited $rc, not by its SIGTERM (143): $(cat "$W/int.out")"
	grep -q "Terminated at line [0-9]*" "$W/int.out" || fail "interrupted load: $(cat "$W/int.out")"
	grep -q "nothing added" "$W/int.out" || fail "interrupted load: $(cat "$W/int.out")"
	steer show a0 | grep -q " src " && fail "rules of an interrupted load are live after it ended"
	;;
*)
	fail "unknown case $CASE"
	;;
esac
echo ok
