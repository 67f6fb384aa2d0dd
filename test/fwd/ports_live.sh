#!/usr/bin/env bash
# Ports added and removed while xdp-fwd runs, under a UDP stream between the unchanged ports:
#  - l2: `xdp-fwdctl ports add` serves a third interface (pings cross it, nothing else moves),
#    `ports remove` stops it (no XDP program left on it); bad requests (an unknown interface,
#    a port served already, a queue out of range, the last interfaces l2 needs, a removed port
#    removed again) get an error line and change nothing; the stream's books balance on the
#    unchanged ports (sent = received + every counted drop) and the removed port's counts stay
#    in the totals and the metrics (its link down);
#  - the same through a reload of --config (SIGHUP, and xdp-fwdctl reload; with a rule, so through
#    each interface's steering program, attached and detached with its ports), a file naming an
#    interface that does not exist changing nothing, and a port the control socket added kept
#    across a reload that does not name it;
#  - wire: ports come in pairs (one end alone is refused, a pair is added and removed whole).
. "$(dirname "$0")/lib.sh"
stream_tools

topo_up --hosts 4
SOCK=$WORK/ctl.sock
CONF=$WORK/lab.conf
# stream_books: stops the stream and xdp-fwd, then sent = received + every counted drop.
stream_books() {
	stream_stop
	fwd_stop INT
	log "xdp-fwd's drops by reason:" \
		"$(grep '"type":"total"' "$WORK/fwd.out" | grep -o '"name":"[^"]*"\|"[a-z_0-9]*":[1-9][0-9]*' | grep -A20 name |
			grep -v 'packets\|bytes\|pps\|bps\|macs\|allocs\|recycled\|pages_held\|sleeps\|slow\|frames\|hits' | tr '\n' ' ')"
	gen_books "$WORK/gen.out" "$WORK/sink.out" "$TOPO_IF0@0" "$TOPO_IF1@0"
	[ "$BOOKS_SENT" -gt 10000 ] || fail "the generator sent $BOOKS_SENT"
	# Not interrupted: the workers are parked only while the port table changes (a program
	# loaded while they were parked once cost the stream more than half its frames).
	[ $((BOOKS_DROPS * 10)) -lt "$BOOKS_SENT" ] || fail "the unchanged ports dropped $BOOKS_DROPS of $BOOKS_SENT frames"
	no_xdp_left || fail "an XDP program left after exit"
}

log "l2 on $TOPO_IF0 and $TOPO_IF1; $TOPO_IF2 added and removed through the control socket"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --mode l2 --json --interval 100 --control "$SOCK" \
	--metrics-file "$WORK/m.prom"
ping_ok 0 1 || fail "ping host 0 -> host 1"
ping_ok 0 2 && fail "host 2 answered before its port was added"
stream_start

ctl_expect 0 "$WORK/c" ports add "$TOPO_IF2"
grep -q "^$TOPO_IF2@0 added: port 2, worker 0$" "$WORK/c" || fail "ports add: $(cat "$WORK/c")"
xdp_on "$TOPO_IF2" || fail "no XDP program on $TOPO_IF2 after ports add"
ping_ok 2 0 || fail "ping host 2 -> host 0 through the added port"
ping_ok 1 2 || fail "ping host 1 -> host 2 through the added port"
ctl ports | grep -qE "^2 +$TOPO_IF2@0 +$TOPO_IF2 +0 +0 +copy " || fail "ports: $(ctl ports)"

log "bad requests change nothing"
ctl_refused "no interface 'nosuch0'" ports add nosuch0
ctl_refused "$TOPO_IF2@0 is served already (port 2)" ports add "$TOPO_IF2"
ctl_refused "$TOPO_IF3 has 1 RX queue: no queue 7" ports add "$TOPO_IF3@7"
ctl_refused "no port $TOPO_IF3@0 is served" ports remove "$TOPO_IF3"
ctl_refused "'a/b' is not an interface name" ports add a/b
ctl_refused "give the queue as a number" ports add "$TOPO_IF3@x"
ctl_refused "give one port" ports add
ctl_expect 0 "$WORK/c" ports remove "$TOPO_IF2"
grep -q "^$TOPO_IF2@0 removed" "$WORK/c" || fail "ports remove: $(cat "$WORK/c")"
xdp_on "$TOPO_IF2" && fail "an XDP program is left on the removed $TOPO_IF2: $(ip -n "$TOPO_MID" -d link show dev "$TOPO_IF2")"
ctl ports | grep -qE "^2 +$TOPO_IF2@0 +$TOPO_IF2 +0 +0 +removed " || fail "ports after remove: $(ctl ports)"
ping_ok 2 0 && fail "host 2 still reaches host 0 through a removed port"
ctl_refused "no port $TOPO_IF2@0 is served" ports remove "$TOPO_IF2"
ctl_refused "--mode l2 needs ports on at least 2 interfaces: this would leave 1" ports remove "$TOPO_IF1"

log "the same interface added again takes its slot (and counts) back"
tx2=$(port_tx "$TOPO_IF2@0")
[ "${tx2:-0}" -gt 0 ] || fail "the removed port's counts are gone: $(ctl --json ports)"
ctl_expect 0 "$WORK/c" ports add "$TOPO_IF2"
grep -q "^$TOPO_IF2@0 added: port 2," "$WORK/c" || fail "ports add again: $(cat "$WORK/c")"
ping_ok 0 2 || fail "ping host 0 -> host 2 after the port came back"
ctl_expect 0 "$WORK/c" ports remove "$TOPO_IF2"
stream_books
tx2_end=$(port_total "$TOPO_IF2@0" tx_packets)
[ "$tx2_end" -ge "$tx2" ] || fail "the removed port's tx_packets went back: $tx2_end after $tx2"
# The metrics keep the removed port's series at its totals, its link down.
m2="interface=\"$TOPO_IF2\",queue=\"0\""
grep -qx "xdp_fwd_port_tx_packets_total{$m2} $tx2_end" "$WORK/m.prom" &&
	grep -qx "xdp_fwd_port_link_down{$m2} 1" "$WORK/m.prom" ||
	fail "metrics of the removed port: $(grep -F "{$m2}" "$WORK/m.prom" | head -5)"

log "the same through a reload of --config"
write_conf() { # INTERFACE...
	{
		echo "mode = l2"
		echo "json = yes"
		echo "interval = 100"
		echo 'rule = "udp dport 9999 -> drop"' # a steering program on each interface
		echo "control = $SOCK"
		for i in "$@"; do echo "interface = $i"; done
	} >"$CONF"
}
reload_line() { # NEEDLE: SIGHUP, then wait for the reload's line holding NEEDLE
	local n
	n=$(grep -c -- "$1" "$WORK/fwd.err")
	kill -HUP "$FWD_PID"
	wait_for 10 more_lines "$1" "$n" || fail "no '$1' after SIGHUP: $(tail -3 "$WORK/fwd.err")"
}
more_lines() { [ "$(grep -c -- "$1" "$WORK/fwd.err")" -gt "$2" ]; }
write_conf "$TOPO_IF0" "$TOPO_IF1"
fwd_start --config "$CONF"
ping_ok 0 1 || fail "ping host 0 -> host 1"
stream_start
write_conf "$TOPO_IF0" "$TOPO_IF1" "$TOPO_IF2"
reload_line "reload: ports: 0 removed, 1 added"
ctl ports | grep -qE "^2 +$TOPO_IF2@0 +$TOPO_IF2 +0 +0 +copy +steering program " || fail "ports after the reload: $(ctl ports)"
ctl rules | grep -q "^$TOPO_IF2 .*udp dport 9999 -> drop" || fail "the added interface's program lacks the rule: $(ctl rules)"
ping_ok 2 0 || fail "ping host 2 -> host 0 through the port the reload added"
log "a file naming an interface that does not exist changes nothing"
write_conf "$TOPO_IF0" "$TOPO_IF1" nosuch0
before=$(table)
ctl_expect 1 "$WORK/c" reload
grep -q "error: reload: $CONF: interface: no interface 'nosuch0'.*; nothing changed" "$WORK/c" || fail "reload: $(cat "$WORK/c")"
[ "$(table)" = "$before" ] || fail "a failed reload changed the ports: $(ctl ports)"
log "a port the control socket added stays across a reload that does not name it"
ctl_expect 0 "$WORK/c" ports add "$TOPO_IF3"
write_conf "$TOPO_IF0" "$TOPO_IF1"
ctl_expect 0 "$WORK/c" reload
wait_for 5 grep -q "reload: ports: 1 removed, 0 added" "$WORK/fwd.err" || fail "no port removed by the reload: $(tail -3 "$WORK/fwd.err")"
xdp_on "$TOPO_IF2" && fail "an XDP program is left on $TOPO_IF2 after the reload removed it"
xdp_on "$TOPO_IF3" || fail "the reload removed $TOPO_IF3, which the control socket added"
ping_ok 3 0 || fail "ping host 3 -> host 0"
ctl_expect 0 "$WORK/c" ports remove "$TOPO_IF3"
stream_books

log "wire: ports come in pairs"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --mode wire --control "$SOCK"
ctl_refused "--mode wire joins ports in pairs" ports add "$TOPO_IF2"
ctl_refused "--mode wire needs at least one pair" ports remove "$TOPO_IF0" "$TOPO_IF1"
ctl_expect 0 "$WORK/c" ports add "$TOPO_IF2" "$TOPO_IF3"
ping_ok 2 3 || fail "ping host 2 -> host 3 through the added pair"
ping_ok 0 1 || fail "ping host 0 -> host 1 with the pair added"
ctl_refused "$TOPO_IF2@0 pairs with $TOPO_IF3@0: remove both ends" ports remove "$TOPO_IF2" "$TOPO_IF0"
ctl_expect 0 "$WORK/c" ports remove "$TOPO_IF3" "$TOPO_IF2"
xdp_on "$TOPO_IF2" || xdp_on "$TOPO_IF3" && fail "an XDP program is left on the removed pair"
ping_ok 0 1 || fail "ping host 0 -> host 1 after the pair went"
fwd_stop INT
no_xdp_left || fail "an XDP program left after exit"
log "ok"
