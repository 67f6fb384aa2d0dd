#!/usr/bin/env bash
# --metrics and --metrics-file against a real Prometheus server (Debian's prometheus package) in
# the forwarder's namespace: after traffic, the totals Prometheus scraped (rx, tx, drops) are
# the totals xdp-fwd prints at exit; promtool accepts a scrape and the file. Bad addresses and a
# port in use fail before anything is attached.
. "$(dirname "$0")/lib.sh"

PROMETHEUS=$(command -v prometheus) || { echo "skip: prometheus not installed (tools/setup.sh)" >&2; exit 77; }
PROMTOOL=$(command -v promtool) || { echo "skip: promtool not installed (tools/setup.sh)" >&2; exit 77; }
command -v curl >/dev/null || { echo "skip: curl not installed" >&2; exit 77; }
command -v jq >/dev/null || { echo "skip: jq not installed" >&2; exit 77; }

MPORT=9477
PPORT=9090
topo_up --hosts 3
in_mid() { ip netns exec "$TOPO_MID" "$@"; }
scrape() { in_mid curl -sf "http://127.0.0.1:$MPORT/metrics"; }
# prom_query EXPR: the value of a one-element PromQL result, nothing when there is none.
prom_query() {
	in_mid curl -sf "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1" |
		jq -r '.data.result[0].value[1] // empty'
}
prom_has() { [ -n "$(prom_query "$1")" ]; }
prom_is() { [ "$(prom_query "$1")" = "$2" ]; }
# sum_of TEXT_FILE METRIC: the sum of a family's samples in exposition text.
sum_of() { awk -v m="$2" '$1 ~ "^"m"({|$)" { s += $NF } END { printf "%d\n", s }' "$1"; }

log "bad --metrics addresses are refused before set-up"
for bad in "" "x" "1.2.3.4" "99999" "1.2.3:80" "::1:80" "[::1]"; do
	rc=0
	"$FWD" -i "$TOPO_IF0" -i "$TOPO_IF1" --metrics "$bad" >"$WORK/bad.out" 2>&1 || rc=$?
	[ $rc = 2 ] || fail "--metrics '$bad': exit $rc, expected 2: $(cat "$WORK/bad.out")"
	grep -qF -- "--metrics '$bad': not [ADDR:]PORT" "$WORK/bad.out" || fail "--metrics '$bad': $(cat "$WORK/bad.out")"
done

log "xdp-fwd with --metrics and --metrics-file, Prometheus scraping it"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --json --interval 0.2 --metrics "127.0.0.1:$MPORT" \
	--metrics-file "$WORK/xdp-fwd.prom"
cat >"$WORK/prom.yml" <<EOT
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: xdp-fwd
    static_configs:
      - targets: ['127.0.0.1:$MPORT']
EOT
mkdir "$WORK/tsdb"
netns_bg PROM_PID "$TOPO_MID" "$PROMETHEUS" --config.file="$WORK/prom.yml" --storage.tsdb.path="$WORK/tsdb" \
	--web.listen-address="127.0.0.1:$PPORT" >"$WORK/prom.log" 2>&1
wait_for 40 prom_has 'xdp_fwd_build_info' ||
	fail "Prometheus never scraped xdp-fwd: $(in_mid curl -s "http://127.0.0.1:$PPORT/api/v1/targets" |
		jq -r '.data.activeTargets[0].lastError'); xdp-fwd: $(scrape | head -5)"

log "a port in use: refused, nothing attached"
rc=0
in_mid "$FWD" -i "$TOPO_IF2" --mode reflect --metrics "127.0.0.1:$PPORT" >"$WORK/busy.out" 2>&1 || rc=$?
[ $rc = 1 ] || fail "--metrics on Prometheus's port: exit $rc: $(cat "$WORK/busy.out")"
grep -q "cannot listen there: Address already in use" "$WORK/busy.out" || fail "$(cat "$WORK/busy.out")"
! ip -n "$TOPO_MID" -d link show "$TOPO_IF2" | grep -q "prog/xdp" || fail "an XDP program left on $TOPO_IF2"

log "traffic"
in_host 0 ping -c 20 -i 0.02 -W 2 "$TOPO_IP1" >/dev/null || fail "ping"
iperf_server
in_host 0 iperf3 -c "$TOPO_IP1" -p 5201 -n 5M >"$WORK/iperf.out" 2>&1 || fail "iperf3: $(cat "$WORK/iperf.out")"
netns_stop "$IPERF_PID"

# The text is rendered at each stats sample (--interval 0.2), so a scrape right after the
# traffic can predate its last frames (5 MB of TCP can pass within one interval): the settled
# scrape is one whose received count has not moved for longer than an interval.
settled() {
	local now t
	scrape >"$WORK/scrape.txt" || return 1
	now=$(sum_of "$WORK/scrape.txt" xdp_fwd_port_rx_packets_total)
	t=$(date +%s%N)
	if [ "$now" != "${last_rx:-}" ]; then
		last_rx=$now last_t=$t
		return 1
	fi
	# The stream crossed (a megabyte at least): a count of frames would depend on the hosts'
	# segment sizes, which vary with the machine's load (2467 frames once against 3000).
	[ $((t - last_t)) -ge 300000000 ] && [ "$(sum_of "$WORK/scrape.txt" xdp_fwd_port_rx_bytes_total)" -gt 1000000 ]
}
wait_for 10 settled || fail "$(sum_of "$WORK/scrape.txt" xdp_fwd_port_rx_bytes_total) bytes in ${last_rx:-no} frames received for 5 MB of TCP (or the count kept moving)"
"$PROMTOOL" check metrics <"$WORK/scrape.txt" >"$WORK/promtool.out" 2>&1 ||
	fail "promtool check metrics: $(cat "$WORK/promtool.out")"
"$PROMTOOL" check metrics <"$WORK/xdp-fwd.prom" >"$WORK/promtool.out" 2>&1 ||
	fail "promtool check metrics on --metrics-file: $(cat "$WORK/promtool.out")"
for fam in port_rx_packets_total port_tx_bytes_total port_drops_total port_csum_partial_total \
	offload_packets_total pool_allocs_total pool_pages_held worker_sleeps_total build_info; do
	grep -q "^# TYPE xdp_fwd_$fam " "$WORK/scrape.txt" || fail "no family xdp_fwd_$fam in the scrape"
done
grep -q 'xdp_fwd_port_drops_total{interface="'"$TOPO_IF0"'",queue="0",reason="xsk_rx_ring_full"}' "$WORK/scrape.txt" ||
	fail "no drop reason label: $(grep drops_total "$WORK/scrape.txt" | head -3)"
grep -q 'xdp_fwd_pool_allocs_total{worker="0"}' "$WORK/scrape.txt" || fail "no worker label"
# The worker forwarded the traffic: its CPU time moved (seconds, with decimals).
awk '/^xdp_fwd_worker_cpu_seconds_total\{worker="0"\} / { ok = $2 > 0 } END { exit !ok }' "$WORK/scrape.txt" ||
	fail "no worker CPU time: $(grep worker_cpu "$WORK/scrape.txt")"

# Prometheus has the settled totals once its value equals a scrape taken after the traffic.
rx_now=$last_rx
wait_for 20 prom_is 'sum(xdp_fwd_port_rx_packets_total)' "$rx_now" ||
	fail "Prometheus has rx $(prom_query 'sum(xdp_fwd_port_rx_packets_total)'), xdp-fwd $rx_now"
p_rx=$(prom_query 'sum(xdp_fwd_port_rx_packets_total)')
p_tx=$(prom_query 'sum(xdp_fwd_port_tx_packets_total)')
p_drop=$(prom_query 'sum(xdp_fwd_port_drops_total)')
fwd_stop INT
netns_stop "$PROM_PID"

j_rx=$(( $(port_total "$TOPO_IF0@0" rx_packets) + $(port_total "$TOPO_IF1@0" rx_packets) ))
j_tx=$(( $(port_total "$TOPO_IF0@0" tx_packets) + $(port_total "$TOPO_IF1@0" tx_packets) ))
j_drop=$(( $(port_drops "$TOPO_IF0@0") + $(port_drops "$TOPO_IF1@0") ))
log "Prometheus rx $p_rx tx $p_tx drops $p_drop; exit JSON rx $j_rx tx $j_tx drops $j_drop"
[ "$p_rx" = "$j_rx" ] && [ "$p_tx" = "$j_tx" ] && [ "$p_drop" = "$j_drop" ] ||
	fail "Prometheus and the exit totals differ"
# Books: every frame received went out or was dropped with a reason.
[ "$j_rx" = $((j_tx + j_drop)) ] || fail "books: rx $j_rx != tx $j_tx + drops $j_drop"
# The file was rewritten with the exit's totals, and no temp file is left.
[ "$(sum_of "$WORK/xdp-fwd.prom" xdp_fwd_port_rx_packets_total)" = "$j_rx" ] || fail "--metrics-file has not the totals"
! ls "$WORK"/xdp-fwd.prom.*.tmp >/dev/null 2>&1 || fail "a temp file of --metrics-file is left"
log "ok"
