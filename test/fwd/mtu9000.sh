#!/usr/bin/env bash
# xdp-fwd wire mode at MTU 9000: frames larger than a chunk cross as multi-buffer descriptor
# chains (turned on by itself from the MTU) and arrive whole, ping and TCP.
. "$(dirname "$0")/lib.sh"

topo_up --hosts 2 --mtu 9000
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --json --interval 0.5
grep -q "multi-buffer on" "$WORK/fwd.err" || fail "multi-buffer was not turned on for MTU 9000"
# Above what a 2 KiB chunk holds the default is 4 KiB (fewer descriptors per jumbo frame).
wait_for 5 grep -q "UMEM [0-9]* KiB, 4096-byte chunks" "$WORK/fwd.err" ||
	fail "not 4 KiB chunks at MTU 9000: $(grep UMEM "$WORK/fwd.err")"
# 8972 bytes of ICMP payload = a 9014-byte frame, unfragmented (-M do), payload checked by ping.
in_host 0 ping -c 3 -i 0.2 -W 2 -M do -s 8972 -p a55a "$TOPO_IP1" >/dev/null || fail "ping 9000 client->server"
in_host 1 ping -c 3 -i 0.2 -W 2 -M do -s 8972 -p 3cc3 "$TOPO_IP0" >/dev/null || fail "ping 9000 server->client"
iperf_server
in_host 0 iperf3 -c "$TOPO_IP1" -p 5201 -n 20M -M 8900 >"$WORK/iperf.out" 2>&1 || fail "iperf3: $(cat "$WORK/iperf.out")"
netns_stop "$IPERF_PID"
fwd_stop INT
no_xdp_left || fail "an XDP program is still attached after exit"
rx=$(port_total m0@0 rx_packets)
bytes=$(port_total m0@0 rx_bytes)
# 20 MiB in frames of up to 9014 bytes: > 2300 frames, less the tail iperf3 may cut when it
# closes; and far above 1514 bytes on average.
[ -n "$rx" ] && [ "$rx" -gt 1500 ] || fail "m0 received $rx frames, $bytes bytes"
[ $((bytes / rx)) -gt 4000 ] || fail "average frame $((bytes / rx)) bytes: jumbo frames did not pass whole"
# Every frame m0 received went out of m1 or was dropped with a reason (a loaded machine fills
# the TX ring; TCP recovers).
[ "$(port_total m1@0 tx_packets)" = $((rx - $(wire_lost m0@0 m1@0))) ] ||
	fail "m1 sent $(port_total m1@0 tx_packets) of $rx frames, $(wire_lost m0@0 m1@0) dropped"
log "ok"
