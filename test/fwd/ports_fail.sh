#!/usr/bin/env bash
# Live port changes that cannot be done, under a UDP stream between ports that stay:
#  - the port limit (FWD_MAX_PORTS, 64): every queue of two 32-queue interfaces served, a port
#    more is refused naming the limit, also after a removal (a removed port keeps its slot), and
#    a request that would fit in part is refused whole; the removed port comes back in its slot;
#  - an open that fails after the request's checks passed (a queue bound by another AF_XDP
#    socket, an xsk-gen sink in the middle namespace): `ports add` of two ports, the second
#    failing, closes the first again (its slot listed as removed), the reply and xdp-fwd's log
#    name the port and the error, the ports served are as before, nothing of xdp-fwd's stays on
#    the interfaces; the same through a reload of --config, which a later reload completes once
#    the queue is free.
# The books balance on the stream's ports (sent = received + every counted drop) in both parts.
. "$(dirname "$0")/lib.sh"
stream_tools

topo_up --hosts 3 --queues 32
SOCK=$WORK/ctl.sock
# The ports served (bind mode other than removed) without their counts.
served() { table | awk '$6 != "removed"'; }
# books_of PORT...: the stream stopped, xdp-fwd stopped, the books on PORTs' drops.
books_of() {
	stream_stop
	fwd_stop INT
	gen_books "$WORK/gen.out" "$WORK/sink.out" "$@"
	[ "$BOOKS_SENT" -gt 10000 ] || fail "the generator sent $BOOKS_SENT"
	no_xdp_left || fail "an XDP program left after exit"
}
# still_flowing WHAT: the stream crosses xdp-fwd after WHAT (1000 frames more out of $TOPO_IF1@0).
still_flowing() {
	local tx
	tx=$(port_tx "$TOPO_IF1@0")
	wait_for 10 more_tx "$TOPO_IF1@0" $((tx + 1000)) || fail "the stream stopped after $1: $(ctl ports)"
}

log "l2 on every queue of $TOPO_IF0 and $TOPO_IF1: 64 ports, the most an xdp-fwd serves"
# Small rings: 64 ports' fill and TX rings come out of one area.
fwd_start -i "$TOPO_IF0@all" -i "$TOPO_IF1@all" --mode l2 --json --interval 100 --control "$SOCK" \
	--rx-ring 128 --fill-ring 256 --tx-ring 128 --comp-ring 128
[ "$(served | grep -c " copy$")" = 64 ] || fail "not 64 ports served: $(ctl ports)"
ping_ok 0 1 || fail "ping host 0 -> host 1"
stream_start
limit="xdp-fwd serves at most 64 ports (removed ones keep their slot for their counts): 64 slots used, 1 more do not fit"
ctl_refused "$limit" ports add "$TOPO_IF2"
ctl_expect 0 "$WORK/c" ports remove "$TOPO_IF1@31" "$TOPO_IF1@30"
still_flowing "the removal"
ctl_refused "$limit" ports add "$TOPO_IF2"
# One of the two would take its slot back, the other needs a new one: neither is added.
ctl_refused "$limit" ports add "$TOPO_IF1@30" "$TOPO_IF2"
ctl_expect 0 "$WORK/c" ports add "$TOPO_IF1@31" "$TOPO_IF1@30"
grep -q "^$TOPO_IF1@31 added: port 63," "$WORK/c" || fail "the removed port did not take its slot back: $(cat "$WORK/c")"
still_flowing "the ports came back"
[ "$(served | grep -c " copy$")" = 64 ] || fail "not 64 ports served after the refusals: $(ctl ports)"
ping_ok 0 1 || fail "ping host 0 -> host 1 after the refusals"
ports=()
for ((q = 0; q < 32; q++)); do ports+=("$TOPO_IF0@$q" "$TOPO_IF1@$q"); done
# Exact, but no bound on the drops: one worker polling 64 ports drops at their RX rings as the
# machine's load decides (still_flowing shows the changes did not stop the stream).
books_of "${ports[@]}"

log "an open that fails midway: $TOPO_IF2's queue 0 bound by another AF_XDP socket"
CONF=$WORK/fail.conf
conf() { # INTERFACE...
	printf '%s\n' "mode = l2" "json = yes" "interval = 100" "control = $SOCK" >"$CONF"
	for i in "$@"; do echo "interface = $i" >>"$CONF"; done
}
conf "$TOPO_IF0@0" "$TOPO_IF1@0"
fwd_start --config "$CONF"
# Host 1's MAC learned on $TOPO_IF1@0 (a few frames from its queue 0: a ping could leave on any
# of its 32 queues, most not served), so that the stream is not flooded to the ports added.
# --dst-mac: host 1's ARP request would leave on any of them too, and its neighbour entry from
# the ping above may be gone (flushed here, as a probe unanswered under load once left it).
ip -n "$TOPO_H1" neigh flush dev eth0
in_host 1 "$GEN" gen -i eth0 --dst-ip "$TOPO_IP0" --dst-mac "$TOPO_MAC0" --count 10 --rate 1000 >/dev/null 2>"$WORK/learn.err" ||
	fail "frames from host 1: $(cat "$WORK/learn.err")"
stream_start
netns_bg HOLD_PID "$TOPO_MID" "$GEN" sink -i "$TOPO_IF2" --json --duration 120 >"$WORK/hold.out" 2>"$WORK/hold.err"
wait_for 10 grep -q "sink ready" "$WORK/hold.err" || fail "the holder did not bind $TOPO_IF2: $(cat "$WORK/hold.err")"
hold_prog=$(prog_on "$TOPO_IF2")
before=$(served)
prog1=$(prog_on "$TOPO_IF1")
# undone WHAT: the ports served, the programs on the interfaces and the stream as before.
undone() {
	[ "$(served)" = "$before" ] || fail "$1 changed the ports served: before
$before
after
$(served)"
	table | grep -E "^[0-9]+ +($TOPO_IF1@1|$TOPO_IF2@0) " | grep -qv " removed$" &&
		fail "$1: a port it opened is listed as served: $(ctl ports)"
	[ "$(prog_on "$TOPO_IF2")" = "$hold_prog" ] || fail "$1 left $TOPO_IF2's program changed: $(ip -n "$TOPO_MID" -d link show dev "$TOPO_IF2")"
	[ "$(prog_on "$TOPO_IF1")" = "$prog1" ] || fail "$1 changed $TOPO_IF1's program"
	still_flowing "$1"
}
# Queue 1 of the stream's output interface opens, then queue 0 of the held one fails. A busy
# queue is first awaited as one the kernel has not released yet (up to 5 s, the library's): the
# reply comes after that, later than xdp-fwdctl's default 10 s on a loaded machine.
ctl_expect 1 "$WORK/c" -t 60 ports add "$TOPO_IF1@1" "$TOPO_IF2"
grep -q "^xdp-fwdctl: error: ports add: $TOPO_IF2@0 cannot be opened: [A-Z].*; the ports it added are closed again$" "$WORK/c" ||
	fail "ports add with a held queue: $(cat "$WORK/c")"
grep -q "xdp-fwd: ports add: $TOPO_IF2@0 cannot be opened: [A-Z]" "$WORK/fwd.err" ||
	fail "xdp-fwd's log does not name the failed port: $(tail -5 "$WORK/fwd.err")"
log "$(cat "$WORK/c")"
undone "the failed ports add"

log "the same through a reload of --config"
conf "$TOPO_IF0@0" "$TOPO_IF1@0" "$TOPO_IF1@1" "$TOPO_IF2"
ctl_expect 1 "$WORK/c" -t 60 reload
grep -q "^xdp-fwdctl: error: reload: $CONF: interface: $TOPO_IF2@0 cannot be opened: [A-Z].*; the ports it added are closed again (the file's other changes are applied; a reload tries the ports again)$" "$WORK/c" ||
	fail "reload with a held queue: $(cat "$WORK/c")"
grep -q "xdp-fwd: reload: ports: $TOPO_IF2@0 cannot be opened" "$WORK/fwd.err" ||
	fail "xdp-fwd's log does not name the failed port: $(tail -5 "$WORK/fwd.err")"
undone "the failed reload"

log "the queue free again: the same reload adds both"
netns_stop "$HOLD_PID"
wait_for 10 sh -c "! ip -n '$TOPO_MID' -d link show dev '$TOPO_IF2' | grep -q prog/xdp" || fail "the holder's program stays on $TOPO_IF2"
ctl_expect 0 "$WORK/c" reload
wait_for 10 grep -q "reload: ports: 0 removed, 2 added" "$WORK/fwd.err" || fail "the reload did not add the ports: $(tail -3 "$WORK/fwd.err")"
served | grep -qE "^[0-9]+ +$TOPO_IF2@0 " && served | grep -qE "^[0-9]+ +$TOPO_IF1@1 " || fail "ports after the reload: $(ctl ports)"
xdp_on "$TOPO_IF2" || fail "no XDP program on $TOPO_IF2 after the reload"
books_of "$TOPO_IF0@0" "$TOPO_IF1@0"
# Two ports on one worker: the changes did not interrupt the stream (the workers are parked
# only while the port table changes, the busy queue awaited with them running).
[ $((BOOKS_DROPS * 10)) -lt "$BOOKS_SENT" ] || fail "the unchanged ports dropped $BOOKS_DROPS of $BOOKS_SENT frames"
log "ok"
