#!/usr/bin/env bash
# xdp-fwd --takeover: a restart without an outage. Under a 10 ms ping, a TCP stream (iperf3) and
# a 10 Hz scrape of /metrics, a new xdp-fwd takes over from the running one: no outage (at most
# half the pings a plain stop and start of the same instance loses, measured first, and at least
# 3: lib.sh's restart_bound), no iperf3 interval without bytes, no counter of the scrape going backwards, the totals
# of `xdp-fwdctl --json stats` going on from the old instance's, a rule added at run time still
# there (with its hits) and the configuration's rule there once. The old instance exits 0 with
# every frame back. Both instances say where the time went (one timing line each, in the log),
# and the log has the pings the same iperf3 stream costs without any restart (a full-rate
# stream can fill the RX ring: xsk_rx_ring_full drops take pings too), to read the takeover's
# loss under iperf3 against; that loss is not bounded (only the stream's intervals are). Then
# the bad cases: a handover of an unknown protocol version is refused (the instance runs on),
# so is one whose asker closed its socket before the reply, --takeover with nobody on the
# socket is a normal start; one without --offload-after clears the offloaded flows it was handed.
# Nothing is left: no process, no XDP program, no socket file.
. "$(dirname "$0")/lib.sh"
# shellcheck source=offload_lib.sh
. "$(dirname "$0")/offload_lib.sh" # off_udp_flow, off_flows
CTL=$BUILD/apps/xdp-fwd/xdp-fwdctl
[ -x "$CTL" ] || fail "xdp-fwdctl not built at $CTL"
for c in iperf3 curl python3; do
	command -v $c >/dev/null || { echo "SKIP: no $c"; exit 77; }
done

topo_up --hosts 2
SOCK=$WORK/ctl.sock
MPORT=9478
ARGS=(-i "$TOPO_IF0" -i "$TOPO_IF1" --mode wire -r "udp dport 9999 -> drop" --control "$SOCK"
	--metrics "127.0.0.1:$MPORT" --json --interval 1)
ctl() { "$CTL" -s "$SOCK" "$@"; }
# scraped_rx: the sum of every port's rx_packets_total in one scrape.
scraped_rx() {
	in_mid curl -sf "http://127.0.0.1:$MPORT/metrics" | awk '/^xdp_fwd_port_rx_packets_total/ { s += $NF } END { printf "%d\n", s }'
}
in_mid() { ip netns exec "$TOPO_MID" "$@"; }
# total FILE PORT FIELD: a port's count in a `--json stats` reply.
total() { grep -o "\"name\":\"$2\",[^}]*" "$1" | grep -o "\"$3\":[0-9]*" | head -1 | cut -d: -f2; }

fwd_start "${ARGS[@]}"
log "before: the same restart as a plain stop and start, under the 10 ms ping"
restart_bound "${ARGS[@]}"
ctl rules add udp dport 7777 '->' drop >"$WORK/add" 2>&1 || fail "rules add: $(cat "$WORK/add")"
RID=$(sed -n "s/^$TOPO_IF0: rule \([0-9]*\): udp dport 7777 -> drop$/\1/p" "$WORK/add")
[ -n "$RID" ] || fail "rules add: $(cat "$WORK/add")"
for i in 1 2 3; do in_host 0 bash -c "echo x >/dev/udp/$TOPO_IP1/7777"; done
hits() { ctl rules list | awk -v i="$TOPO_IF0" -v id="$RID" '$1 == i && $2 == id && $3 == "runtime" { print $4 }'; }
three() { [ "$(hits)" = 3 ]; }
wait_for 5 three || fail "the run-time rule has '$(hits)' hits, expected 3"

cat >"$WORK/scrape.py" <<'EOF'
# Scrapes /metrics at 10 Hz for 4.5 s; writes how many scrapes answered and each series of a
# counter that went down between two of them.
import sys, time, urllib.request
url, out, series = f"http://127.0.0.1:{sys.argv[1]}/metrics", sys.argv[2], {}
ok = failed = 0
end = time.time() + 4.5
while time.time() < end:
    try:
        text = urllib.request.urlopen(url, timeout=1).read().decode()
        ok += 1
    except Exception:
        failed += 1
        text = ""
    for line in text.splitlines():
        name = line.split("{")[0].split(" ")[0]
        if line.startswith("#") or not name.endswith("_total"):
            continue
        key, val = line.rsplit(" ", 1)
        series.setdefault(key, []).append(float(val))
    time.sleep(0.1)
with open(out, "w") as f:
    f.write(f"scrapes {ok} failed {failed}\n")
    for key, vals in series.items():
        back = [(a, b) for a, b in zip(vals, vals[1:]) if b < a]
        if back:
            f.write(f"BACKWARDS {key} {back[0][0]} -> {back[0][1]}\n")
EOF

# takeover WITH_TCP: a new xdp-fwd takes over under a 10 ms ping and a 10 Hz scrape (and an
# iperf3 stream when WITH_TCP is 1); checks the old one's exit, the new one's start, the scrape.
takeover() {
	local old=$FWD_PID rc=0
	netns_bg PING_PID "$TOPO_H0" ping -i 0.01 -c 400 -W 1 "$TOPO_IP1" >"$WORK/ping" 2>&1
	[ "$1" = 1 ] && netns_bg IPERF_C "$TOPO_H0" iperf3 -c "$TOPO_IP1" -p 5201 -t 4 -i 0.5 -J >"$WORK/iperf.json" 2>&1
	netns_bg SCRAPE_PID "$TOPO_MID" python3 "$WORK/scrape.py" "$MPORT" "$WORK/scrape"
	sleep 1.5 # traffic under way: a window, nothing to await
	ctl --json stats >"$WORK/before" || fail "stats before"
	local rx0
	rx0=$(scraped_rx)
	netns_bg NEW_PID "$TOPO_MID" "$FWD" "${ARGS[@]}" --takeover >"$WORK/new.out" 2>"$WORK/new.err"
	wait "$old" || rc=$?
	netns_stop "$old"
	[ $rc = 0 ] || fail "the old xdp-fwd exited with $rc"
	grep -q '"frames_out":0' "$WORK/fwd.out" || fail "the old xdp-fwd's frames still out: $(tail -2 "$WORK/fwd.out")"
	grep -q "handed over to a new xdp-fwd" "$WORK/fwd.err" || fail "the old one does not say it handed over"
	wait_for 10 grep -q "Ctrl-C stops" "$WORK/new.err" || fail "the new xdp-fwd did not start: $(cat "$WORK/new.err")"
	# The first scrape of the new instance, before its first interval: the totals go on.
	local rx1
	rx1=$(scraped_rx)
	[ "$rx1" -ge "$rx0" ] || fail "rx_packets_total scraped: $rx0 before the takeover, $rx1 at once after"
	grep -q "pid $old stopped and handed over in" "$WORK/new.err" || fail "the new one does not say it took over: $(cat "$WORK/new.err")"
	FWD_PID=$NEW_PID
	mv "$WORK/fwd.err" "$WORK/old.err"
	mv "$WORK/new.out" "$WORK/fwd.out"
	mv "$WORK/new.err" "$WORK/fwd.err"
	wait "$PING_PID"
	[ "$1" = 1 ] && { wait "$IPERF_C" || fail "iperf3 across the takeover: $(tail -5 "$WORK/iperf.json")"; }
	wait "$SCRAPE_PID" || fail "the scraper failed"
	LOST=$(ping_lost "$WORK/ping")
	log "pings lost across --takeover$([ "$1" = 1 ] && echo " under iperf3"): $LOST of 400; $(grep -o 'stopped and handed over in [0-9.]* ms' "$WORK/fwd.err")"
	# Where the time went, in each instance (ms since the request it saw).
	grep -q "handover timing, ms since the request: workers joined" "$WORK/old.err" ||
		fail "the old xdp-fwd did not say its timing: $(cat "$WORK/old.err")"
	grep -q "takeover timing, ms since it began: .*reply read .*sockets in the map.*; gap" "$WORK/fwd.err" ||
		fail "the new xdp-fwd did not say its timing: $(cat "$WORK/fwd.err")"
	log "old: $(grep -o 'handover timing.*' "$WORK/old.err")"
	log "new: $(grep -o 'takeover timing.*' "$WORK/fwd.err")"
	head -1 "$WORK/scrape"
	grep -q "^scrapes [1-9]" "$WORK/scrape" || fail "no scrape: $(cat "$WORK/scrape")"
	grep "BACKWARDS" "$WORK/scrape" && fail "a counter went backwards across the takeover: $(grep BACKWARDS "$WORK/scrape" | head -5)"
	ctl --json stats >"$WORK/after" || fail "stats after"
	for f in rx_packets tx_packets rx_bytes; do
		for p in "$TOPO_IF0@0" "$TOPO_IF1@0"; do
			a=$(total "$WORK/before" "$p" $f) b=$(total "$WORK/after" "$p" $f)
			[ -n "$a" ] && [ -n "$b" ] && [ "$b" -ge "$a" ] || fail "$p $f went from '$a' to '$b'"
		done
	done
}

log "a takeover under a 10 ms ping and a 10 Hz scrape"
in_host 1 ping -c 1 -W 2 "$TOPO_IP0" >/dev/null || fail "no path through xdp-fwd"
takeover 0
[ -n "$LOST" ] && [ "$LOST" -le "$MAX_LOST" ] || fail "$LOST pings lost across the takeover (at most $MAX_LOST): $(tail -3 "$WORK/ping")"

log "baseline: the same ping beside the same iperf3 stream, no restart"
iperf_server
netns_bg PING_PID "$TOPO_H0" ping -i 0.01 -c 400 -W 1 "$TOPO_IP1" >"$WORK/ping-base" 2>&1
netns_bg IPERF_C "$TOPO_H0" iperf3 -c "$TOPO_IP1" -p 5201 -t 4 -i 0.5 -J >"$WORK/iperf-base.json" 2>&1
wait "$PING_PID"
wait "$IPERF_C" || fail "iperf3 without a restart: $(tail -5 "$WORK/iperf-base.json")"
wait "$IPERF_PID" # the one-off server gone: the next one takes its port
BASE_LOST=$(ping_lost "$WORK/ping-base")
log "pings lost beside iperf3 without a restart: $BASE_LOST of 400"

log "a second one (from the instance that took over), under an iperf3 stream too"
iperf_server
takeover 1
python3 - "$WORK/iperf.json" <<'EOF' || fail "iperf3 stalled across the takeover"
import json, sys
iv = json.load(open(sys.argv[1]))["intervals"]
zero = [round(i["sum"]["start"], 2) for i in iv if i["sum"]["bytes"] == 0]
print(f"== iperf3: {len(iv)} intervals of 0.5 s, {min(i['sum']['bytes'] for i in iv)} bytes in the least")
sys.exit(1 if zero or len(iv) < 7 else 0)
EOF

ctl rules list >"$WORK/rules" || fail "rules list after"
grep -qE "^$TOPO_IF0 +$RID +runtime +3 +udp dport 7777 -> drop" "$WORK/rules" ||
	fail "the run-time rule (id $RID, 3 hits) did not survive: $(cat "$WORK/rules")"
[ "$(grep -c "udp dport 9999 -> drop" "$WORK/rules")" = 2 ] || fail "the configuration's rule, once per interface: $(cat "$WORK/rules")"

log "bad cases: an unknown protocol version is refused, the instance runs on"
reply=$(python3 - "$SOCK" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1]); s.settimeout(5); s.sendall(b"handover 9\n")
print(s.recv(4096).decode().splitlines()[0])
EOF
)
[ "$reply" = "error: handover: protocol version 9; this xdp-fwd speaks 1 to 2" ] || fail "handover 9: '$reply'"
kill -0 "$FWD_PID" || fail "xdp-fwd stopped after a refused handover"
ctl version >/dev/null || fail "the control socket is gone after a refused handover"

log "bad cases: a handover whose asker is gone before the reply (its request queued) changes nothing"
# Stopped, xdp-fwd takes the connection, the request and the close together once continued.
kill -STOP "$FWD_PID"
python3 - "$SOCK" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1]); s.sendall(b"handover 1\n"); s.close()
EOF
kill -CONT "$FWD_PID"
wait_for 5 grep -q "handover: the asker is gone before the reply" "$WORK/fwd.err" ||
	fail "no word of the asker gone: $(tail -3 "$WORK/fwd.err")"
kill -0 "$FWD_PID" || fail "xdp-fwd stopped after a handover to nobody"
ctl version >/dev/null || fail "the control socket is gone after a handover to nobody"
in_host 1 ping -c 1 -W 2 "$TOPO_IP0" >/dev/null || fail "no path through xdp-fwd after a handover to nobody"
fwd_stop
no_xdp_left || fail "an XDP program is left after the last instance stopped"
[ -e "$SOCK" ] && fail "the socket file is left"

# take_over WHAT: a new xdp-fwd (ARGS) takes over from the running one (WHAT), which exits 0.
take_over() {
	local rc=0
	netns_bg NEW_PID "$TOPO_MID" "$FWD" "${ARGS[@]}" --takeover >"$WORK/new.out" 2>"$WORK/new.err"
	wait "$FWD_PID" || rc=$?
	netns_stop "$FWD_PID"
	[ $rc = 0 ] || fail "the old xdp-fwd ($1) exited with $rc"
	wait_for 10 grep -q "Ctrl-C stops" "$WORK/new.err" || fail "the new xdp-fwd did not start: $(cat "$WORK/new.err")"
	FWD_PID=$NEW_PID
	mv "$WORK/new.out" "$WORK/fwd.out"
	mv "$WORK/new.err" "$WORK/fwd.err"
}

log "--takeover from an xdp-fwd without a steering program: its ports close first, then a normal attach"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --mode wire --control "$SOCK" --json
take_over "no steering"
in_host 1 ping -c 1 -W 2 "$TOPO_IP0" >/dev/null || fail "no path through xdp-fwd after taking over from one without steering"
ctl rules list | grep -q "udp dport 9999 -> drop" || fail "the new instance's rule is not in its program"
fwd_stop
no_xdp_left || fail "an XDP program is left"

log "--takeover by an xdp-fwd without --offload-after: the offloaded flows handed over leave the table"
# Nobody would expire or release them: a gate left shut would keep its flow's frames marked
# for good (in front of the data, where frames have no XDP metadata).
fwd_start "${ARGS[@]}" --offload-after 8 --offload-idle 60
wait_for 10 off_udp_flow "$TOPO_IF0" || fail "no flow offloaded: $(cat "$WORK/flows.out")"
take_over offload
[ "$(off_flows "$TOPO_IF0")" = 0 ] || fail "the flows handed over are still in the table: $(cat "$WORK/flows.out")"
in_host 1 ping -c 1 -W 2 "$TOPO_IP0" >/dev/null || fail "no path through xdp-fwd after taking over from one with offload"
fwd_stop
no_xdp_left || fail "an XDP program is left"

log "--takeover with nobody on the socket: a normal start"
fwd_start "${ARGS[@]}" --takeover
grep -q "no xdp-fwd answers on $SOCK" "$WORK/fwd.err" || fail "no word of a normal start: $(cat "$WORK/fwd.err")"
in_host 1 ping -c 1 -W 2 "$TOPO_IP0" >/dev/null || fail "no path through xdp-fwd after a normal start"
fwd_stop
no_xdp_left || fail "an XDP program is left"
echo PASS
