#!/usr/bin/env bash
# Multi-queue forwarding: 4-queue veth pairs, xdp-fwd -i m0@all -i m1@all with two
# workers. Tagged frames sent from TX queue q of host 0 (a veth delivers them to RX queue q of
# m0) must be read by the socket of m0@q, forwarded by m1@q, and arrive on RX queue q of host 1
# (mq-probe checks the tag); UDP flows from host 0's stack, spread over the TX queues by the
# stack's flow hash (no XPS on veth), add up too. Per-queue counters: m0@q rx = m1@q tx = what host 1 got on queue q,
# and the queues sum to the total. Wire mode, then l2 (which must not send a frame to every
# queue of an interface).
. "$(dirname "$0")/../fwd/lib.sh"

PROBE=$BUILD/test/mq/mq-probe
Q=4
BASE=25   # queue q carries (q + 1) * BASE tagged frames: distinct counts per queue
FLOWS=64
[ -x "$PROBE" ] || fail "mq-probe not built at $PROBE"

topo_up --hosts 2 --queues $Q
# host 1's stack never sees the datagrams (its sockets take every queue): no ARP, a static entry.
in_host 0 ip neigh replace "$TOPO_IP1" lladdr "$TOPO_MAC1" dev eth0 nud permanent || fail "ip neigh"

# worker_of PORT: the worker xdp-fwd reported for PORT at start.
worker_of() { grep -o "port [0-9]* $1: .*worker [0-9]*" "$WORK/fwd.err" | grep -o "[0-9]*$"; }

for mode in wire l2; do
	log "$mode mode, $Q queues, 2 workers"
	fwd_start -i "$TOPO_IF0@all" -i "$TOPO_IF1@all" --mode $mode -w 2 --json --interval 0.5
	workers=""
	for q in $(seq 0 $((Q - 1))); do
		w0=$(worker_of "$TOPO_IF0@$q") w1=$(worker_of "$TOPO_IF1@$q")
		[ -n "$w0" ] || fail "no port $TOPO_IF0@$q: @all did not expand to $Q queues"
		[ "$w0" = "$w1" ] || fail "queue $q: $TOPO_IF0@$q on worker $w0, $TOPO_IF1@$q on worker $w1"
		workers="$workers $w0"
	done
	[ "$(echo $workers | tr ' ' '\n' | sort -u | wc -l)" = 2 ] || fail "queues not spread over 2 workers:$workers"

	: >"$WORK/recv.out"
	netns_bg RECV_PID "$TOPO_H1" "$PROBE" recv eth0 $Q $BASE $FLOWS 10000 >"$WORK/recv.out" 2>"$WORK/recv.err"
	wait_for 10 grep -q ready "$WORK/recv.out" || fail "mq-probe recv did not start: $(cat "$WORK/recv.err")"
	in_host 0 "$PROBE" send eth0 $Q $BASE "$TOPO_MAC1" "$TOPO_MAC0" || fail "mq-probe send"
	in_host 0 "$PROBE" flows "$TOPO_IP1" $FLOWS || fail "mq-probe flows"
	rc=0
	wait "$RECV_PID" || rc=$?
	netns_stop "$RECV_PID"
	cat "$WORK/recv.out"
	[ $rc = 0 ] || fail "host 1 did not get every frame on its queue: $(cat "$WORK/recv.err")"
	fwd_stop INT

	total=0 spread=0
	for q in $(seq 0 $((Q - 1))); do
		at_host=$(awk -v q=$q '$1 == "queue" && $2 == q { print $4 + $6 }' "$WORK/recv.out")
		flows=$(awk -v q=$q '$1 == "queue" && $2 == q { print $6 }' "$WORK/recv.out")
		rx=$(port_total "$TOPO_IF0@$q" rx_packets)
		tx=$(port_total "$TOPO_IF1@$q" tx_packets)
		echo "   queue $q: $TOPO_IF0@$q rx $rx, $TOPO_IF1@$q tx $tx, host 1 queue $q got $at_host ($flows datagrams)"
		[ "$rx" = "$at_host" ] && [ "$tx" = "$at_host" ] ||
			fail "queue $q: $TOPO_IF0@$q received $rx, $TOPO_IF1@$q sent $tx, host 1 got $at_host"
		[ "$(port_total "$TOPO_IF1@$q" rx_packets)" = 0 ] || fail "$TOPO_IF1@$q received frames nobody sent"
		total=$((total + rx))
		[ "$flows" -gt 0 ] && spread=$((spread + 1))
	done
	expect=$((BASE * Q * (Q + 1) / 2 + FLOWS))
	[ "$total" = "$expect" ] || fail "the queues add up to $total frames, $expect were sent"
	# 64 flows hashed (boot-time random seed) onto one queue of 4: probability 4^-63.
	[ "$spread" -ge 2 ] || fail "the $FLOWS flows all used one queue"
	no_xdp_left || fail "an XDP program is still attached after exit"
done

log "a queue range: one port per queue in it, a sum line per interface"
fwd_start -i "$TOPO_IF0@1-2" -i "$TOPO_IF1@1-2" --interval 100
fwd_stop INT
for p in "$TOPO_IF0@1" "$TOPO_IF0@2" "$TOPO_IF1@1" "$TOPO_IF1@2" "$TOPO_IF0@all" "$TOPO_IF1@all"; do
	grep -q "^ *$p " "$WORK/fwd.out" || fail "no line for $p in the totals"
done
! grep -q "@0 " "$WORK/fwd.out" || fail "queue 0 is outside the range 1-2 but got a port"

log "--profile mvpp2: every queue of a bare IFNAME, a worker per queue; MTU above 1500 refused"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --profile mvpp2 --interval 100
for q in $(seq 0 $((Q - 1))); do
	w=$(worker_of "$TOPO_IF0@$q")
	[ "$w" = "$q" ] && [ "$(worker_of "$TOPO_IF1@$q")" = "$q" ] || fail "mvpp2: queue $q on worker '$w'"
	grep -q "port [0-9]* $TOPO_IF0@$q: copy" "$WORK/fwd.err" || fail "mvpp2: $TOPO_IF0@$q not in copy mode"
done
fwd_stop INT
ip -n "$TOPO_MID" link set "$TOPO_IF0" mtu 9000 || fail "mtu 9000"
rc=0
ip netns exec "$TOPO_MID" "$FWD" -i "$TOPO_IF0" -i "$TOPO_IF1" --profile mvpp2 >"$WORK/out" 2>"$WORK/err" </dev/null || rc=$?
[ $rc = 1 ] && grep -q "mvpp2 attaches XDP only up to MTU 1500" "$WORK/err" ||
	fail "mvpp2 at MTU 9000: rc $rc, $(cat "$WORK/err")"
no_xdp_left || fail "the refused start left an XDP program"
log "ok"
