#!/usr/bin/env bash
# xdp-fwd's life cycle: stops by itself after --duration and --count with every frame back and
# nothing attached; kill -9 in the middle of TCP traffic leaves the interfaces usable and the
# next start forwards again.
. "$(dirname "$0")/lib.sh"

topo_up --hosts 2

# fwd_wait_exit SECONDS: xdp-fwd ends by itself, with exit code 0 and every frame back.
fwd_wait_exit() {
	wait_for "$1" sh -c "! kill -0 $FWD_PID 2>/dev/null" || fail "xdp-fwd did not stop by itself"
	fwd_reap
}

log "--duration: stops by itself"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --duration 1
fwd_wait_exit 10
no_xdp_left || fail "an XDP program is still attached after --duration"

log "--count: stops after N forwarded frames"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --count 10
# Each echo and reply is one forwarded frame (plus ARP): it stops within the first 10 pings.
in_host 0 ping -c 30 -i 0.05 -W 1 "$TOPO_IP1" >/dev/null 2>&1
fwd_wait_exit 10
fwded=$(grep -A2 '^total' "$WORK/fwd.out" | grep -c "tx")
[ "$fwded" = 2 ] || fail "no totals printed after --count"
no_xdp_left || fail "an XDP program is still attached after --count"

log "kill -9 in the middle of TCP traffic"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1"
iperf_server
netns_bg CLIENT_PID "$TOPO_H0" iperf3 -c "$TOPO_IP1" -p 5201 -t 30 >/dev/null 2>&1
# Traffic is flowing when the server side has received a megabyte.
wait_for 10 sh -c "[ \$(ip netns exec $TOPO_H1 cat /sys/class/net/eth0/statistics/rx_bytes) -gt 1000000 ]" ||
	fail "no TCP traffic through xdp-fwd"
kill -KILL "$FWD_PID"
wait "$FWD_PID" 2>/dev/null
netns_stop "$FWD_PID"
netns_stop "$CLIENT_PID"
netns_stop "$IPERF_PID"
# The XDP program hung on a bpf_link of the dead process: the kernel removes it.
wait_for 10 no_xdp_left || fail "an XDP program outlived the killed xdp-fwd"
log "the next start recovers"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1"
in_host 0 ping -c 3 -i 0.2 -W 2 "$TOPO_IP1" >/dev/null || fail "no traffic after restarting xdp-fwd"
fwd_stop TERM
no_xdp_left || fail "an XDP program is still attached after exit"
log "ok"
