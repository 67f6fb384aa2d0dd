#!/usr/bin/env bash
# xdp-fwd wire mode between a client and a server namespace: ping and TCP both ways, frames
# unchanged, every frame accounted for; then the same with two workers (frames cross workers
# and go home through their pool's return ring).
. "$(dirname "$0")/lib.sh"

# Host 2 only serves the reflect check at the end: it has sent nothing before, so nothing of
# the earlier TCP runs can come back to it.
topo_up --hosts 3
for workers in 1 2; do
	log "wire mode, $workers worker(s)"
	fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --mode wire -w "$workers" --json --interval 0.5
	# MTU 1500 fits a 2 KiB chunk: that is the default (two fragments per 4 KiB page, fed to
	# the fill ring inline); the checks below then cover it (0 slow-path allocations, 0 out).
	wait_for 5 grep -q "UMEM [0-9]* KiB, 2048-byte chunks" "$WORK/fwd.err" ||
		fail "not the 2 KiB default chunk at MTU 1500: $(grep UMEM "$WORK/fwd.err")"
	# ping checks the echoed payload byte by byte: a pattern and odd sizes.
	in_host 0 ping -c 3 -i 0.2 -W 2 -p 5aa5c33c -s 1111 "$TOPO_IP1" >/dev/null || fail "ping client->server"
	in_host 1 ping -c 3 -i 0.2 -W 2 -p 0f1e2d3c -s 1 "$TOPO_IP0" >/dev/null || fail "ping server->client"
	# ARP passed unchanged: each side learned the other's real MAC.
	in_host 0 ip neigh show "$TOPO_IP1" | grep -q "$TOPO_MAC1" || fail "client has no ARP entry with $TOPO_MAC1"
	in_host 1 ip neigh show "$TOPO_IP0" | grep -q "$TOPO_MAC0" || fail "server has no ARP entry with $TOPO_MAC0"
	# TCP both ways; a changed byte would fail the TCP checksum and stall the transfer.
	for dir in "" -R; do
		iperf_server
		in_host 0 iperf3 -c "$TOPO_IP1" -p 5201 $dir -n 20M >"$WORK/iperf.out" 2>&1 ||
			fail "iperf3 $dir: $(cat "$WORK/iperf.out")"
		netns_stop "$IPERF_PID"
	done
	fwd_stop INT
	no_xdp_left || fail "an XDP program is still attached after exit"
	# The pools take their pages up front: no slow-path allocation once traffic flows.
	slow=$(grep '"type":"total"' "$WORK/fwd.out" | grep -o '"slow":[0-9]*' | cut -d: -f2 | sort -u | tr '\n' ' ')
	[ "$slow" = "0 " ] || fail "slow-path allocations in the pools' totals: $slow"
	# Every frame received on one port went out of the other or was dropped with a reason:
	# tx_full is counted on the output port (TX ring) or on the input port (queue to the
	# other worker full).
	for p in 0 1; do
		q=$((1 - p))
		rx=$(port_total "m$p@0" rx_packets)
		tx=$(port_total "m$q@0" tx_packets)
		# 20 MiB of TCP payload in frames of at most 1514 bytes: more than 13850 frames,
		# less the tail iperf3 may cut when it closes.
		[ -n "$rx" ] && [ "$rx" -gt 10000 ] || fail "m$p rx $rx: too few frames for 20 MiB of TCP"
		lost=$(wire_lost "m$p@0" "m$q@0")
		[ "$rx" = $((tx + lost)) ] || fail "m$p received $rx frames; m$q sent $tx and $lost were dropped"
		# Only TX back-pressure on a loaded machine drops (TCP recovers): rare, never 1 %.
		[ $((lost * 100)) -lt "$rx" ] || fail "m$p: $lost of $rx frames dropped"
	done
done

log "reflect mode: frames come back to their sender with the MACs swapped"
fwd_start -i "$TOPO_IF2" --mode reflect --json
# A static neighbour: no ARP, just 5 echo requests to a MAC nobody has.
in_host 2 ip neigh replace 10.77.0.99 lladdr 02:77:00:00:00:99 dev eth0 nud permanent || fail "ip neigh"
# Back with host 2's own MAC as destination, an echo request for an address host 2 does not
# have reaches its IP layer and is counted there (a frame still addressed to ...:99 would be
# dropped as "other host" before IP).
addr_errors() { in_host 2 nstat -asz IpInAddrErrors | awk '/IpInAddrErrors/ {print $2}'; }
before=$(addr_errors)
in_host 2 ping -c 5 -i 0.05 -W 1 10.77.0.99 >/dev/null 2>&1
[ $(($(addr_errors) - before)) = 5 ] || fail "host 2's IP layer got $(($(addr_errors) - before)) of its 5 frames back"
fwd_stop INT
[ "$(port_total m2@0 tx_packets)" = 5 ] || fail "m2 sent $(port_total m2@0 tx_packets) frames, expected 5"
log "ok"
