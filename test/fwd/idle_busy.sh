#!/usr/bin/env bash
# The idle policy end to end, from the workers' sleep counters (the pools' "sleeps" in the
# stats): an idle worker sleeps; a worker whose input is saturated (a full-speed UDP flood
# through it) sleeps almost never, however long the flood: a wakeup costs about what a
# hundred frames do, and a worker that slept in every hole of its input (the old fixed spin
# budget) lost a third of its throughput. The books balance: every frame the generator sent
# was forwarded or counted dropped, none lost unaccounted.
. "$(dirname "$0")/lib.sh"
GEN=$BUILD/tools/xsk-gen/xsk-gen
[ -x "$GEN" ] || fail "xsk-gen not built at $GEN"
# shellcheck source=../common/xsk_gen.sh
. "$SRC/test/common/xsk_gen.sh"

topo_up --hosts 2
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --cpus 0 --json --interval 3600

# snapshot: the stats of the interval since the previous one (SIGUSR1), into $WORK/snap.
snapshot() {
	usr1_line interval >"$WORK/snap" || fail "no stats after SIGUSR1"
}
snap_sleeps() { grep -o '"sleeps":[0-9]*' "$WORK/snap" | cut -d: -f2 | awk '{ s += $1 } END { print s + 0 }'; }
snap_port() { grep -o "\"name\":\"$1\",[^}]*" "$WORK/snap" | grep -o "\"$2\":[0-9]*" | cut -d: -f2; }

# Idle: the worker sleeps (after its spin of the start-up), again and again (poll timeouts).
snapshot
idle_sleeps() { snapshot; [ "$(snap_sleeps)" -gt 0 ]; }
wait_for 10 idle_sleeps || fail "an idle worker never slept"
log "idle: $(snap_sleeps) sleeps in the last interval"

# Saturated: a flood at full speed. The interval is the flood's: snapshots right before and
# right after the generator.
COUNT=400000
sink_start "$TOPO_H1" --idle 2
snapshot
in_host 0 "$GEN" gen -i eth0 --json --dst-ip "$TOPO_IP1" --count "$COUNT" >"$WORK/gen.out" 2>"$WORK/gen.err" ||
	fail "gen: $(cat "$WORK/gen.err")"
snapshot
sleeps=$(snap_sleeps)
fwd=$(snap_port "$TOPO_IF1@0" tx_packets)
[ -n "$fwd" ] && [ "$fwd" -gt 0 ] || fail "nothing forwarded during the flood: $(cat "$WORK/snap")"
log "flood: $fwd frames forwarded, $sleeps sleeps ($(awk -v s="$sleeps" -v f="$fwd" 'BEGIN { printf "%.5f", s / f }') per frame)"
# Not a timing bound: a count per frame. A worker that slept in every empty turn would sleep
# about once per burst (1/64 per frame at most); the bound leaves room for a generator that a
# loaded machine deschedules: a CI run beside other suites slept once per 278 frames, the ASan
# build next to two busy loops once per 140 (an idle machine: once per 2000).
[ $((sleeps * 100)) -le "$fwd" ] || fail "a saturated worker slept $sleeps times for $fwd frames"
sink_wait
fwd_stop

gen_books "$WORK/gen.out" "$WORK/sink.out" "$TOPO_IF0@0" "$TOPO_IF1@0"
# COUNT or what the generator's 5 s (its default duration) took, whichever is less: the ASan
# build next to two busy loops sent 164928. The books hold for what was sent.
[ "$BOOKS_SENT" -gt 0 ] && [ "$BOOKS_SENT" -le "$COUNT" ] || fail "the generator sent $BOOKS_SENT of $COUNT"
no_xdp_left || fail "an XDP program is still attached after exit"
log "ok"
