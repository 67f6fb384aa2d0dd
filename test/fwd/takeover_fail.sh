#!/usr/bin/env bash
# xdp-fwd --takeover when the running instance cannot hand over:
#  - it is stopped (SIGSTOP) under a UDP stream: the new instance gives up after
#    FWD_HANDOVER_TIMEOUT_MS (10 s), exits 1 naming the stall and attaches nothing; the old one,
#    continued (SIGCONT), finds the request's connection closed and runs on, forwarding, its
#    programs and control socket as they were; the stream's books balance (what the kernel
#    dropped while it was stopped is counted: xsk_rx_ring_full, a ping's frames among the
#    stream's). It used to take the stale
#    request up and stop, leaving nobody forwarding;
#  - it is killed (SIGKILL) with the request pending: its programs go with it, and the new
#    instance starts as at any start (its own program), forwards, and leaves nothing at its stop.
. "$(dirname "$0")/lib.sh"
stream_tools

topo_up --hosts 2
SOCK=$WORK/ctl.sock
# A rule: the steering program (the one a takeover hands over) on both interfaces.
ARGS=(-i "$TOPO_IF0" -i "$TOPO_IF1" --mode wire -r "udp dport 9999 -> drop" --control "$SOCK" --json --interval 100)
# ended PID: the process has exited (gone, or a zombie not yet reaped).
ended() { [ ! -e "/proc/$1" ] || [ "$(sed 's/^.*) //' "/proc/$1/stat" | cut -d' ' -f1)" = Z ]; }
# pending N: N connections wait in the control socket's accept queue.
pending() {
	[ "$(ip netns exec "$TOPO_MID" ss -xlnH | awk -v p="$SOCK" '$5 == p { print $3 }')" -ge "$1" ] 2>/dev/null
}
# takeover_start: the new instance in the background ($NEW_PID), output in $WORK/new.*.
takeover_start() {
	netns_bg NEW_PID "$TOPO_MID" "$FWD" "${ARGS[@]}" --takeover >"$WORK/new.out" 2>"$WORK/new.err"
}

log "the running instance stopped (SIGSTOP) under a stream: the new one gives up, the old one runs on"
fwd_start "${ARGS[@]}"
ping_ok 0 1 || fail "ping host 0 -> host 1"
# The sink outlasts the stop (nothing reaches it then).
stream_start --idle 20
OLD=$FWD_PID
prog0=$(prog_on "$TOPO_IF0") prog1=$(prog_on "$TOPO_IF1")
kill -STOP "$OLD"
t0=$SECONDS
takeover_start
# Frames of the hosts' own beside the stream's, dropped at the full ring with them: the books
# tell them apart (hosts_tx).
in_host 0 ping -c 5 -i 0.2 -W 1 "$TOPO_IP1" >/dev/null 2>&1 && fail "a ping crossed the stopped xdp-fwd"
wait_for 40 ended "$NEW_PID" || fail "the new xdp-fwd still runs $((SECONDS - t0)) s after its --takeover: $(cat "$WORK/new.err")"
rc=0
wait "$NEW_PID" || rc=$?
netns_stop "$NEW_PID"
log "the new instance exited $rc after $((SECONDS - t0)) s: $(grep -- --takeover "$WORK/new.err")"
[ $rc = 1 ] || fail "the new xdp-fwd exited $rc, expected 1: $(cat "$WORK/new.err")"
grep -q "xdp-fwd: --takeover: the xdp-fwd on $SOCK did not answer within 10 s (stopped or stalled): it keeps its interfaces; this one stops, nothing attached" "$WORK/new.err" ||
	fail "the new xdp-fwd does not say why it stopped: $(cat "$WORK/new.err")"
[ "$(prog_on "$TOPO_IF0") $(prog_on "$TOPO_IF1")" = "$prog0 $prog1" ] ||
	fail "the programs changed: $prog0 $prog1 before, $(prog_on "$TOPO_IF0") $(prog_on "$TOPO_IF1") after"
[ -S "$SOCK" ] || fail "the control socket file is gone"
kill -CONT "$OLD"
wait_for 10 grep -q "xdp-fwd: handover: the asker is gone before the reply (its connection is closed); nothing changed, this one runs on" "$WORK/fwd.err" ||
	fail "the old xdp-fwd does not say it runs on: $(cat "$WORK/fwd.err")"
tx=$(port_tx "$TOPO_IF1@0")
wait_for 10 more_tx "$TOPO_IF1@0" $((tx + 1000)) || fail "the old xdp-fwd does not forward after SIGCONT: $(ctl ports)"
ctl version >/dev/null || fail "the old xdp-fwd's control socket does not answer"
stream_stop
fwd_stop INT
gen_books "$WORK/gen.out" "$WORK/sink.out" "$TOPO_IF0@0" "$TOPO_IF1@0"
[ "$(kernel_drops "$TOPO_IF0@0")" -gt 0 ] || fail "no frame dropped at $TOPO_IF0@0's ring while xdp-fwd was stopped"
[ "$BOOKS_GOT" -gt 1000 ] || fail "the sink received $BOOKS_GOT frames"
no_xdp_left || fail "an XDP program left after exit"

log "the running instance killed (SIGKILL) with the request pending: the new one starts as at any start"
fwd_start "${ARGS[@]}"
ping_ok 0 1 || fail "ping host 0 -> host 1"
OLD=$FWD_PID
prog0=$(prog_on "$TOPO_IF0")
kill -STOP "$OLD"
takeover_start
# The new instance's probe and its request, both waiting for the stopped one to accept them.
wait_for 20 pending 2 || fail "no --takeover request reached the control socket: $(cat "$WORK/new.err")"
kill -KILL "$OLD"
wait "$OLD"
netns_stop "$OLD"
wait_for 20 grep -q "Ctrl-C stops" "$WORK/new.err" || fail "the new xdp-fwd did not start: $(cat "$WORK/new.err")"
grep -q "xdp-fwd: --takeover: the xdp-fwd on $SOCK did not hand over (.*): a normal start" "$WORK/new.err" ||
	fail "the new xdp-fwd does not say it starts normally: $(cat "$WORK/new.err")"
log "$(grep -- "--takeover" "$WORK/new.err")"
FWD_PID=$NEW_PID
mv "$WORK/new.out" "$WORK/fwd.out"
mv "$WORK/new.err" "$WORK/fwd.err"
[ -n "$(prog_on "$TOPO_IF0")" ] && [ "$(prog_on "$TOPO_IF0")" != "$prog0" ] ||
	fail "not the new instance's own program on $TOPO_IF0: $(prog_on "$TOPO_IF0") (the killed one's was $prog0)"
ping_ok 0 1 || fail "ping host 0 -> host 1 through the new instance"
ctl rules list | grep -q "udp dport 9999 -> drop" || fail "the new instance's rule is not in its program: $(ctl rules list)"
fwd_stop INT
no_xdp_left || fail "an XDP program left after exit"
[ -e "$SOCK" ] && fail "the socket file is left"
log "ok"
