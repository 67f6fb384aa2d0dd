#!/usr/bin/env bash
# --config and SIGHUP: a reload of an unchanged file under traffic changes nothing (no frame
# dropped or steered elsewhere: the books balance, the rule hits and steering decisions stay 0);
# a changed rule applies at once; a broken file changes nothing and names its line; an option
# that cannot change live is named and left as it was. SIGHUP without --config keeps running.
. "$(dirname "$0")/lib.sh"

topo_up --hosts 2
CONF=$WORK/lab.conf
write_conf() { # RULE [EXTRA LINE]
	cat >"$CONF" <<EOT
# xdp-fwd lab
interface = $TOPO_IF0
interface = $TOPO_IF1
mode = wire
json = yes
json-totals = yes
interval = 0.5
rule = "$1"
${2:-}
EOT
}
reloads() { grep -c "xdp-fwd: reload: " "$WORK/fwd.err"; }
# hup NEEDLE: SIGHUP, then wait for the reload's line that holds NEEDLE.
hup() {
	local n
	n=$(grep -c -- "$1" "$WORK/fwd.err")
	kill -HUP "$FWD_PID"
	wait_for 5 more_lines "$1" "$n" || fail "no '$1' after SIGHUP: $(tail -3 "$WORK/fwd.err")"
}
more_lines() { [ "$(grep -c -- "$1" "$WORK/fwd.err")" -gt "$2" ]; }
alive() { kill -0 "$FWD_PID" 2>/dev/null; }

write_conf "udp dport 9999 -> drop"
fwd_start --config "$CONF"

log "unchanged file, reloaded 5 times under 300 pings"
netns_bg PING_PID "$TOPO_H0" ping -c 300 -i 0.01 -W 2 "$TOPO_IP1" >"$WORK/ping.out" 2>&1
for i in 1 2 3 4 5; do
	hup "reload: $CONF unchanged"
done
wait "$PING_PID"; netns_stop "$PING_PID"
grep -q "300 packets transmitted, 300 received" "$WORK/ping.out" || fail "pings lost across reloads: $(tail -2 "$WORK/ping.out")"
line=$(usr1_line interval) || fail "no stats line"
steer=$(echo "$line" | grep -o '"steer":.*')
echo "$steer" | grep -q '"hits":0}\],"drop":0,"pass":0,"no_socket":0' || fail "frames steered elsewhere: $steer"
alive || fail "xdp-fwd stopped on SIGHUP"

log "a changed rule applies at once"
write_conf "icmp -> drop"
hup "reload: rules now 1"
in_host 0 ping -c 3 -i 0.2 -W 1 "$TOPO_IP1" >/dev/null 2>&1 && fail "ping crossed an 'icmp -> drop' rule"
line=$(usr1_line interval) || fail "no stats line"
echo "$line" | grep -q '{"rule":"icmp -> drop","id":[0-9]*,"hits":[3-9]' || fail "the new rule has no hits: $(echo "$line" | grep -o '"steer":.*')"
echo "$line" | grep -q 'udp dport 9999' && fail "the old rule is still listed"

log "a broken file changes nothing and names its line"
write_conf "icmp -> drop" "batch = many"
hup "$CONF:9: "
grep -q "$CONF:9: .*batch.*; nothing changed" "$WORK/fwd.err" || fail "$(tail -1 "$WORK/fwd.err")"
in_host 0 ping -c 1 -W 1 "$TOPO_IP1" >/dev/null 2>&1 && fail "the rule went with the broken file"

log "what cannot change live is named and left as it was"
write_conf "icmp -> drop" "batch = 32"
hup "cannot change while running: --batch"

log "the latency level changes live"
write_conf "icmp -> drop" "latency = saver"
hup "reload: latency saver"
grep -q "cannot change while running: --batch" <(tail -1 "$WORK/fwd.err") && fail "--batch named again"

log "back to the first file: pings cross again"
write_conf "udp dport 9999 -> drop"
hup "reload: rules now 1"
in_host 0 ping -c 3 -i 0.2 -W 2 "$TOPO_IP1" >/dev/null || fail "no ping after the rule was removed"
fwd_stop INT
rx=$(( $(port_total "$TOPO_IF0@0" rx_packets) + $(port_total "$TOPO_IF1@0" rx_packets) ))
tx=$(( $(port_total "$TOPO_IF0@0" tx_packets) + $(port_total "$TOPO_IF1@0" tx_packets) ))
drops=$(( $(books_drops "$TOPO_IF0@0") + $(books_drops "$TOPO_IF1@0") ))
[ "$rx" = $((tx + drops)) ] || fail "books: rx $rx, tx $tx, drops $drops"
[ "$drops" = 0 ] || fail "$drops frames dropped"
no_xdp_left || fail "an XDP program left"

log "with --offload-after (its workers match frames against the rules): a rule edit under TCP"
write_conf "udp dport 9999 -> drop" "offload-after = 8"
fwd_start --config "$CONF"
iperf_server
netns_bg IPERF_C "$TOPO_H0" iperf3 -c "$TOPO_IP1" -p 5201 -t 3 >"$WORK/iperf.out" 2>&1
write_conf "udp dport 9998 -> drop" "offload-after = 8"
hup "reload: rules now 1"
wait "$IPERF_C" || fail "iperf3 across a reload: $(cat "$WORK/iperf.out")"
netns_stop "$IPERF_C"; netns_stop "$IPERF_PID"
alive || fail "xdp-fwd stopped"
fwd_stop INT

log "SIGHUP without --config: nothing to reload, still forwarding"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1"
hup "nothing to reload"
alive || fail "xdp-fwd stopped on SIGHUP"
in_host 0 ping -c 2 -i 0.2 -W 2 "$TOPO_IP1" >/dev/null || fail "no ping after SIGHUP"
fwd_stop INT
log "ok"
