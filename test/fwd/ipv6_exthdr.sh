#!/usr/bin/env bash
# IPv6 frames behind a destination options header (IPV6_DSTOPTS, from a real stack) through
# xdp-fwd --offload-after 10:
#  - TCP from a sender with TX checksum offload on: its partial checksums completed through the
#    header (before: 0 bytes of 1 MiB moved, checksum errors at the receiver), none at the
#    receiver;
#  - a UDP flow from a sender with the offload off, whose first 10 frames carry no header (the
#    flow is installed on the 10th, its gate still shut for the next ones) and the
#    rest do: offloaded with every frame accounted for, and its gate never forced open (before:
#    the program gated the frames behind the header, userspace did not take them for the
#    flow's, and the gate was forced open after 1 s, every time).
. "$(dirname "$0")/lib.sh"
# shellcheck source=offload_lib.sh
. "$(dirname "$0")/offload_lib.sh"

BYTES=$((1024 * 1024))
DSTOPTS='bytes([0, 0, 1, 4, 0, 0, 0, 0])' # a destination options header: PadN of 4
SINK='
import socket, sys, os
s = socket.socket(socket.AF_INET6); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("::", 5301)); s.listen(1); open(sys.argv[1] + ".ready", "w").close(); c, _ = s.accept(); n = 0
while True:
    b = c.recv(1 << 16)
    if not b: break
    n += len(b)
open(sys.argv[1] + ".tmp", "w").write(str(n)); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
'
SEND="
import socket, sys
s = socket.socket(socket.AF_INET6); s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_DSTOPTS, $DSTOPTS)
s.settimeout(20); s.connect((sys.argv[1], 5301)); left = int(sys.argv[2]); buf = bytes(range(256)) * 256
while left: left -= s.send(buf[:min(left, len(buf))])
s.shutdown(socket.SHUT_WR); s.recv(1)
"
tcp_errs() { snmp "$1" Tcp InCsumErrors; }

topo_up --hosts 2
for k in 0 1; do
	in_host "$k" sysctl -qw net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.eth0.disable_ipv6=0 || fail "sysctl"
	in_host "$k" ip -6 addr add "fd77::$((k + 1))/64" dev eth0 nodad || fail "ip -6 addr"
	in_host "$k" ethtool -K eth0 tx on >/dev/null || fail "ethtool tx on"
done

log "TCP over IPv6 behind a destination options header, TX checksum offload on"
err1=$(tcp_errs 1)
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --mode wire --offload-after 10 --json --interval 0.2
rm -f "$WORK/got" "$WORK/got.ready"
netns_bg SINK_PID "$TOPO_H1" python3 -c "$SINK" "$WORK/got"
wait_for 5 test -e "$WORK/got.ready" || fail "sink did not start"
in_host 0 timeout 30 python3 -c "$SEND" fd77::2 "$BYTES" || fail "TCP transfer stalled: $(cat "$WORK/got" 2>/dev/null)"
wait_for 10 test -s "$WORK/got" || fail "the sink saw no EOF"
netns_stop "$SINK_PID"
fwd_stop INT
log "TCP: $(cat "$WORK/got") of $BYTES bytes, $(($(tcp_errs 1) - err1)) checksum errors at the receiver"
[ "$(cat "$WORK/got")" = "$BYTES" ] || fail "received $(cat "$WORK/got") of $BYTES bytes"
[ "$(tcp_errs 1)" = "$err1" ] || fail "host 1 counted $(($(tcp_errs 1) - err1)) TCP checksum errors"

log "a UDP flow over IPv6 whose frames carry the header after its first 10, TX checksum offload off"
in_host 0 ethtool -K eth0 tx off >/dev/null || fail "ethtool tx off"
rcvbuf=$(snmp6 1 Udp6RcvbufErrors) csum=$(snmp6 1 Udp6InCsumErrors) sndbuf=$(snmp6 0 Udp6SndbufErrors)
txd=$(in_host 0 cat /sys/class/net/eth0/statistics/tx_dropped)
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --mode wire --offload-after 10 --offload-idle 30 --json --interval 0.2
rm -f "$WORK/n" "$WORK/n.ready" "$WORK/n.stop"
netns_bg RECV_PID "$TOPO_H1" python3 -c "$UDP_RECV" "$WORK/n"
wait_for 5 test -e "$WORK/n.ready" || fail "UDP receiver did not start"
sent=$(in_host 0 python3 -c "$UDP_SEND" fd77::2 3000 40200 5000 10) || fail "UDP sender"
touch "$WORK/n.stop"
wait_for 10 test -s "$WORK/n" || fail "the UDP receiver did not finish"
netns_stop "$RECV_PID"
fwd_stop INT
got=$(cat "$WORK/n")
drops=$(($(books_drops "$TOPO_IF0@0") + $(books_drops "$TOPO_IF1@0") + $(off_total "$TOPO_IF1@0" lost) +
	$(snmp6 1 Udp6RcvbufErrors) - rcvbuf + $(snmp6 0 Udp6SndbufErrors) - sndbuf +
	$(in_host 0 cat /sys/class/net/eth0/statistics/tx_dropped) - txd))
log "UDP: sent $sent, received $got, counted drops $drops; offloaded $(off_total "$TOPO_IF0@0" packets), forced $(off_total "$TOPO_IF0@0" forced)"
[ $((sent - got)) -le "$drops" ] || fail "$((sent - got - drops)) datagrams lost uncounted"
[ "$(snmp6 1 Udp6InCsumErrors)" = "$csum" ] || fail "host 1 counted UDP checksum errors"
[ "$(off_total "$TOPO_IF0@0" packets)" -ge 1000 ] || fail "the flow was not offloaded ($(off_total "$TOPO_IF0@0" packets) frames)"
[ "$(off_total "$TOPO_IF0@0" forced)" = 0 ] || fail "$(off_total "$TOPO_IF0@0" forced) gates forced open"
log "ok"
