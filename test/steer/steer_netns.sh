#!/usr/bin/env bash
# Steering on a veth in test namespaces: two UDP ports to two AF_XDP sockets, ARP to the kernel,
# everything else dropped. Then crash safety: kill -9 of the owner (bpf_link attachment) leaves
# the interface carrying traffic; a libxdp attachment left by a killed owner is replaced by the
# next start.
set -u
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
B=${UMEM_BUILD_DIR:?}
RX=$B/test/steer/steer_xsk_rx
CLI=$B/tools/umem-steer/umem-steer
NA=ns-st-$$-a NB=ns-st-$$-b IA=st$$a IB=st$$b
ADDR_A=10.213.0.1 ADDR_B=10.213.0.2
TMP=$(mktemp -d /tmp/steer-netns-st.XXXXXX)
PIDS=()

cleanup() {
	for p in "${PIDS[@]}"; do kill -9 -- "-$p" 2>/dev/null; done
	ip netns del "$NA" 2>/dev/null
	ip netns del "$NB" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$TMP"/*; do echo "--- $f"; cat "$f"; done; exit 1; }

ip netns add "$NA" 2>/dev/null || { echo "skip: cannot create namespaces"; exit 77; }
ip netns add "$NB" || fail "netns"
ip link add "$IA" netns "$NA" type veth peer "$IB" netns "$NB" || fail "veth"
ip -n "$NA" addr add $ADDR_A/24 dev "$IA"
ip -n "$NB" addr add $ADDR_B/24 dev "$IB"
for ns in "$NA" "$NB"; do ip -n "$ns" link set lo up; done
ip -n "$NA" link set "$IA" up
ip -n "$NB" link set "$IB" up

# wait_for <seconds> <command...>: polls a condition every 50 ms.
wait_for() {
	local deadline=$((SECONDS + $1)); shift
	until "$@"; do [ $SECONDS -ge $deadline ] && return 1; sleep 0.05; done
}
# start <name> <args...>: the receiver in namespace A, in its own process group.
start() {
	local name=$1; shift
	setsid ip netns exec "$NA" "$RX" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	PIDS+=($!)
	LAST=$!
	wait_for 10 grep -q ready "$TMP/$name.out" || fail "$name did not start"
}
gone() { ! kill -0 "$1" 2>/dev/null; }
send_udp() { # port count
	ip netns exec "$NB" bash -c "for i in \$(seq $2); do echo steer > /dev/udp/$ADDR_A/$1; done"
}
xdp_on_a() { ip -n "$NA" link show "$IA" | grep -q "xdp"; }
ping_ok() { ip netns exec "$NB" ping -c1 -W1 -q $ADDR_A >/dev/null 2>&1; }

RULES=("udp dport 5001 -> sock 0" "udp dport 5002 -> sock 1" "arp -> pass")

echo "== bpf_link attachment: steer, then kill -9"
start link --default drop "$IA" "${RULES[@]}"
send_udp 5001 3
send_udp 5002 2
wait_for 5 grep -q "sock0=3 sock1=2 wrong=0 big=0" "$TMP/link.out" || fail "frames not steered as ruled"
# Jumbo frames: MTU 9000 on a veth needs an xdp.frags program; an 8000-byte datagram arrives
# as one frame of chained buffers on the socket its port names.
ip -n "$NA" link set "$IA" mtu 9000 || fail "MTU 9000 refused with the program attached"
ip -n "$NB" link set "$IB" mtu 9000 || fail "peer MTU 9000"
ip netns exec "$NB" bash -c "dd if=/dev/zero bs=8000 count=1 status=none > /dev/udp/$ADDR_A/5002" # one write, one datagram
wait_for 5 grep -q "sock0=3 sock1=3 wrong=0 big=1" "$TMP/link.out" || fail "jumbo frame not steered whole"
ping_ok && fail "ICMP passed although the default action drops it"
ip netns exec "$NA" "$CLI" show "$IA" >"$TMP/show.out" 2>&1 || fail "umem-steer show"
grep -Eq "udp dport 5001 -> sock 0 +3 " "$TMP/show.out" || fail "rule counter 5001"
grep -Eq "udp dport 5002 -> sock 1 +3 " "$TMP/show.out" || fail "rule counter 5002"
grep -Eq "arp -> pass +[1-9]" "$TMP/show.out" || fail "ARP did not reach the kernel through its rule"
grep -q "bpf_link" "$TMP/show.out" || fail "attachment kind"
PROG=$(sed -n 's/^program \([0-9]*\),.*/\1/p' "$TMP/show.out")
[ -e "/run/umem/steer-prog$PROG.lock" ] || fail "no writers' lock file for program $PROG"
kill -9 -- "-$LAST"
wait_for 5 gone "$LAST" || fail "owner survived kill -9"
wait_for 5 bash -c "! ip -n $NA link show $IA | grep -q xdp" || fail "program outlived its owner"
wait_for 5 ping_ok || fail "no traffic after the owner died"

echo "== libxdp attachment: kill -9 leaves it; the next start replaces it"
start libxdp --libxdp --default drop "$IA" "${RULES[@]}"
# The killed owner could not remove its lock file: the next attach does, its program gone.
[ -e "/run/umem/steer-prog$PROG.lock" ] && fail "lock file of the killed owner's program $PROG left"
kill -9 -- "-$LAST"
wait_for 5 gone "$LAST" || fail "owner survived kill -9"
xdp_on_a || fail "expected the libxdp attachment to outlive its owner"
ip netns exec "$NA" "$CLI" show "$IA" >"$TMP/stale.out" 2>&1 || fail "show stale"
grep -q "(gone)" "$TMP/stale.out" || fail "show does not report the dead owner"
grep -q "via libxdp or netlink (outlives its owner)" "$TMP/stale.out" || fail "show names the attachment wrongly"
start next --default drop "$IA" "${RULES[@]}"
grep -q "replacing stale program" "$TMP/next.err" || fail "stale program not reported"
send_udp 5002 4
wait_for 5 grep -q "sock0=0 sock1=4 wrong=0 big=0" "$TMP/next.out" || fail "frames not steered after recovery"
kill -TERM "$LAST"
wait_for 5 gone "$LAST" || fail "receiver ignored SIGTERM"
xdp_on_a && fail "clean exit left the program attached"
wait_for 5 ping_ok || fail "no traffic after a clean exit"
echo "ok"
