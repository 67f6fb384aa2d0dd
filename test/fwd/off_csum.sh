#!/usr/bin/env bash
# xdp-fwd --offload-after with senders that keep TX checksum offload on (a veth's default):
# their TCP/UDP frames hold only the pseudo-header sum, which userspace completes and a
# redirect in the kernel would not. Such flows must stay in userspace (counted, warned once per
# port): TCP moves data with no checksum error at either end, and a UDP burst's books balance
# (sent = received + every counted drop) with no checksum error. Then a flow offloaded while
# its sender had TX checksum offload off, whose sender turns it on: the program passes its
# partial frames up (counted) instead of redirecting them, and the flow leaves the kernel.
. "$(dirname "$0")/lib.sh"
# shellcheck source=offload_lib.sh
. "$(dirname "$0")/offload_lib.sh"
command -v iperf3 >/dev/null || { echo "SKIP: no iperf3"; exit 77; }

csum_errs() { echo $(($(snmp "$1" Tcp InCsumErrors) + $(snmp "$1" Udp InCsumErrors))); }
tx_dropped() { in_host "$1" cat /sys/class/net/eth0/statistics/tx_dropped; }

# udp_burst COUNT SPORT [BETWEEN]: COUNT datagrams from host 0 to host 1 (BETWEEN: a command run
# after the first half, same flow); sets SENT and GOT.
udp_burst() {
	local half=$(($1 / 2)) s1 s2
	rm -f "$WORK/got" "$WORK/got.ready" "$WORK/got.stop"
	netns_bg RECV_PID "$TOPO_H1" python3 -c "$UDP_RECV" "$WORK/got"
	wait_for 5 test -e "$WORK/got.ready" || fail "UDP receiver did not start"
	s1=$(in_host 0 python3 -c "$UDP_SEND" "$TOPO_IP1" "$half" "$2" 10000) || fail "UDP sender"
	[ $# -ge 3 ] && { "$3" || fail "$3"; }
	s2=$(in_host 0 python3 -c "$UDP_SEND" "$TOPO_IP1" $(($1 - half)) "$2" 10000) || fail "UDP sender"
	touch "$WORK/got.stop"
	wait_for 10 test -s "$WORK/got" || fail "the UDP receiver did not finish"
	netns_stop "$RECV_PID"
	SENT=$((s1 + s2)) GOT=$(cat "$WORK/got")
}
# books_udp: after fwd_stop, sent = received + every drop counted on the way.
books_udp() {
	local drops
	drops=$(($(books_drops "$TOPO_IF0@0") + $(books_drops "$TOPO_IF1@0") +
		$(off_total "$TOPO_IF0@0" lost) + $(off_total "$TOPO_IF1@0" lost) +
		$(tx_dropped 0) - TXD0 + $(snmp 1 Udp RcvbufErrors) - RCVBUF1 + $(snmp 0 Udp SndbufErrors) - SNDBUF0))
	log "UDP: sent $SENT, received $GOT, counted drops $drops"
	[ "$GOT" -gt 0 ] || fail "UDP: nothing received of $SENT"
	[ $((SENT - GOT)) -le "$drops" ] || fail "UDP: $((SENT - GOT - drops)) of $SENT datagrams lost uncounted ($GOT received, $drops counted drops)"
}
snap() { TXD0=$(tx_dropped 0) RCVBUF1=$(snmp 1 Udp RcvbufErrors) SNDBUF0=$(snmp 0 Udp SndbufErrors); }

topo_up --hosts 2
# topo.sh turns TX checksum offload off at the hosts: back to a veth's default, GRO stays on.
for k in 0 1; do
	in_host "$k" ethtool -K eth0 tx on >/dev/null || fail "ethtool tx on"
	in_host "$k" ethtool -k eth0 | grep -q '^tx-checksumming: on' || fail "host $k: TX checksum offload not on"
done

# partial_senders MODE [SPORT]: TCP and a UDP burst through xdp-fwd --mode MODE, both senders with
# TX checksum offload on.
partial_senders() {
	local err0 err1 bytes kept n
	log "$1 mode, TX checksum offload on at both senders: TCP and a UDP burst with --offload-after 10"
	err0=$(csum_errs 0) err1=$(csum_errs 1)
	snap
	fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --mode "$1" --offload-after 10 --offload-idle 30 --json --interval 0.2
	iperf_server
	in_host 0 timeout 20 iperf3 -c "$TOPO_IP1" -p 5201 -t 2 --json >"$WORK/iperf.json" 2>&1 ||
		fail "iperf3: $(tail -c 600 "$WORK/iperf.json")"
	bytes=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["end"]["sum_received"]["bytes"])' "$WORK/iperf.json")
	netns_stop "$IPERF_PID"
	log "TCP: $bytes bytes received"
	[ "$bytes" -gt 1000000 ] || fail "$1: TCP moved $bytes bytes in 2 s"
	udp_burst 2000 "$2"
	fwd_stop INT
	books_udp
	[ "$(csum_errs 1)" = "$err1" ] || fail "$1: host 1 counted $(($(csum_errs 1) - err1)) TCP/UDP checksum errors"
	[ "$(csum_errs 0)" = "$err0" ] || fail "$1: host 0 counted $(($(csum_errs 0) - err0)) TCP/UDP checksum errors"
	kept=$(off_total "$TOPO_IF0@0" csum_kept)
	[ -n "$kept" ] && [ "$kept" -ge 1 ] || fail "$1: m0@0: flows kept in userspace for partial checksums: '$kept'"
	n=$(grep -c "$TOPO_IF0@0: TCP/UDP frames with a partial checksum" "$WORK/fwd.err")
	[ "$n" = 1 ] || fail "$1: m0@0 warned $n times, expected once"
	grep -q "$TOPO_IF0@0: .*stay in userspace.*ethtool -K <sender> tx off" "$WORK/fwd.err" ||
		fail "$1: the warning does not say the flows stay in userspace and name the fix"
}
partial_senders wire 40001
partial_senders l2 40003

log "a UDP flow offloaded with TX checksum offload off, then turned on at the sender mid-flow"
in_host 0 ethtool -K eth0 tx off >/dev/null || fail "ethtool tx off"
err1=$(csum_errs 1)
snap
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --mode wire --offload-after 10 --offload-idle 30 --json --interval 0.1
offloaded() { [ "$(off_last "$TOPO_IF0@0" flows)" = 1 ]; }
turn_on() { wait_for 10 offloaded && in_host 0 ethtool -K eth0 tx on >/dev/null; }
udp_burst 4000 40002 turn_on
fwd_stop INT
books_udp
[ "$(csum_errs 1)" = "$err1" ] || fail "host 1 counted $(($(csum_errs 1) - err1)) UDP checksum errors"
up=$(off_total "$TOPO_IF0@0" csum_passed)
[ -n "$up" ] && [ "$up" -ge 1 ] || fail "m0@0: the program passed up no partial frame ('$up')"
[ "$(off_total "$TOPO_IF0@0" packets)" -ge 1 ] || fail "the flow was never offloaded"
log "ok"
