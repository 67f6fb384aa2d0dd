#!/usr/bin/env bash
# TCP through xdp-fwd from senders with TX checksum offload on (a veth's default): their TCP
# segments carry only the pseudo-header sum (CHECKSUM_PARTIAL, lost through XDP), which
# xdp-fwd completes. A bounded iperf3 transfer must complete with its byte count, the counter
# must move and each port must warn once; at MTU 1500 and at 9000 (multi-buffer chains).
. "$(dirname "$0")/lib.sh"

BYTES=$((4 * 1024 * 1024 + 7))
SINK='
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 5301)); s.listen(1); c, _ = s.accept(); n = 0
while True:
    b = c.recv(1 << 16)
    if not b: break
    n += len(b)
open(sys.argv[1] + ".tmp", "w").write(str(n)); import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
'
SEND='
import socket, sys
s = socket.create_connection((sys.argv[1], 5301), timeout=20); left = int(sys.argv[2]); buf = bytes(range(256)) * 256
while left: left -= s.send(buf[:min(left, len(buf))])
s.shutdown(socket.SHUT_WR); s.settimeout(20); s.recv(1)
'

# csum_total PORT FIELD: a field of the port's "csum" object in the "total" JSON line.
csum_total() {
	grep '"type":"total"' "$WORK/fwd.out" | grep -o "\"name\":\"$1\",.*" | grep -o '"csum":{[^}]*' |
		head -1 | grep -o "\"$2\":[0-9]*" | cut -d: -f2
}

for mtu in 1500 9000; do
	log "MTU $mtu, TX checksum offload on at both senders"
	topo_up --mtu "$mtu"
	for k in 0 1; do
		in_host "$k" ethtool -K eth0 tx on >/dev/null || fail "ethtool tx on"
		in_host "$k" ethtool -k eth0 | grep -q '^tx-checksumming: on' || fail "host $k: TX checksum offload not on"
	done
	fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --mode wire --json --interval 0.5
	in_host 0 ping -c 2 -i 0.2 -W 2 "$TOPO_IP1" >/dev/null || fail "ping"
	# A bounded TCP transfer, counted at the receiver: python3 on both ends (a sink that
	# writes the byte count on EOF; a sender with a timeout, so a stall fails, not hangs).
	rm -f "$WORK/got"
	netns_bg SINK_PID "$TOPO_H1" python3 -c "$SINK" "$WORK/got"
	wait_for 5 in_host 1 sh -c "ss -ltn | grep -q ':5301 '" || fail "sink did not start"
	in_host 0 timeout 30 python3 -c "$SEND" "$TOPO_IP1" "$BYTES" || fail "TCP transfer stalled at MTU $mtu"
	wait_for 10 test -s "$WORK/got" || fail "the sink saw no EOF"
	[ "$(cat "$WORK/got")" = "$BYTES" ] || fail "sink received $(cat "$WORK/got") bytes of $BYTES"
	netns_stop "$SINK_PID"
	fwd_stop INT
	for p in 0 1; do
		partial=$(csum_total "m$p@0" partial)
		completed=$(csum_total "m$p@0" completed)
		[ -n "$partial" ] && [ "$partial" -gt 0 ] || fail "m$p@0: no partial checksum counted ($partial)"
		[ "$completed" = "$partial" ] || fail "m$p@0: $partial partial, $completed completed"
		n=$(grep -c "m$p@0: TCP/UDP frames with a partial checksum" "$WORK/fwd.err")
		[ "$n" = 1 ] || fail "m$p@0: warned $n times, expected once"
	done
	grep -q "ethtool -K <sender> tx off" "$WORK/fwd.err" || fail "the warning does not name the fix"
	"$TOPO" down --prefix "$PREFIX" || fail "topo.sh down"
done

log "--csum-complete off: counted, left as they were"
topo_up
in_host 0 ethtool -K eth0 tx on >/dev/null || fail "ethtool tx on"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --mode wire --json --csum-complete off
in_host 0 ping -c 1 -W 2 "$TOPO_IP1" >/dev/null || fail "ping"
# UDP from the offloading sender: its checksum stays partial, so the server drops it as
# corrupt (UdpInCsumErrors), and xdp-fwd counts it as not completed.
csum_errors() { in_host 1 nstat -asz UdpInCsumErrors | awk '/UdpInCsumErrors/ {print $2}'; }
errors_grew() { [ "$(csum_errors)" -ge $((before + 8)) ]; }
before=$(csum_errors)
# 8: the warning waits for that many partial frames (a correct checksum can look partial).
for i in 1 2 3 4 5 6 7 8; do in_host 0 bash -c "echo hello$i > /dev/udp/$TOPO_IP1/9999"; done
wait_for 10 errors_grew || fail "server counted $(($(csum_errors) - before)) UDP checksum errors, expected 8"
fwd_stop INT
[ "$(csum_total m0@0 uncompleted)" -ge 8 ] 2>/dev/null || fail "m0@0: $(csum_total m0@0 uncompleted) uncompleted, expected 8"
[ "$(csum_total m0@0 completed)" = 0 ] || fail "m0@0: completed with --csum-complete off"
grep -q "m0@0: .*forwarded as they are" "$WORK/fwd.err" || fail "no warning naming --csum-complete on"
"$TOPO" down --prefix "$PREFIX" || fail "topo.sh down"

log "TX checksum offload off: correct checksums equal to the pseudo-header sum are no alarm"
# Datagrams whose correct checksum equals the folded pseudo-header sum (once in 65,536 by
# chance; here every five-hundredth, by the choice of two payload bytes), among ordinary ones,
# from a sender that computes its checksums: verified, so not counted partial (with offload such
# a frame took its flow out of the kernel), delivered, and no warning (4 such frames of 305,000
# once warned "Fix at the sender").
CRAFT='
import socket, sys, time
def fold(s):
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return s
def words(b):
    b = b + bytes(len(b) & 1)
    return sum(b[i] << 8 | b[i + 1] for i in range(0, len(b), 2))
src, dst, n, every = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((src, 40100)); crafted = 0
addrs = words(socket.inet_aton(src) + socket.inet_aton(dst))
for i in range(n):
    pl = bytearray(i.to_bytes(4, "big") * 25)
    if i % every == 0:
        ulen = 8 + len(pl); p = fold(addrs + 17 + ulen)
        pl[0:2] = b"\0\0"
        x = fold(p + 40100 + 9999 + ulen + words(bytes(pl)))
        w = fold((0xffff - p) + (0xffff - x))
        pl[0:2] = w.to_bytes(2, "big")
        c = ~fold(p + 40100 + 9999 + ulen + words(bytes(pl))) & 0xffff
        assert (c or 0xffff) == p, (c, p)
        crafted += 1
    s.sendto(bytes(pl), (dst, 9999))
    if i % 20 == 19: time.sleep(0.004)
print(crafted)
'
COUNT='
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("0.0.0.0", 9999)); s.settimeout(20); n = 0
open(sys.argv[1] + ".ready", "w").close()
try:
    while True: s.recv(2048); n += 1; s.settimeout(2)
except socket.timeout: pass
open(sys.argv[1] + ".tmp", "w").write(str(n)); import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
'
topo_up
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --mode wire --json
before=$(csum_errors)
rm -f "$WORK/n" "$WORK/n.ready"
netns_bg COUNT_PID "$TOPO_H1" python3 -c "$COUNT" "$WORK/n"
wait_for 5 test -e "$WORK/n.ready" || fail "UDP counter did not start"
crafted=$(in_host 0 python3 -c "$CRAFT" "$TOPO_IP0" "$TOPO_IP1" 2000 500) || fail "crafted sender"
wait_for 10 test -s "$WORK/n" || fail "the UDP counter did not finish"
netns_stop "$COUNT_PID"
fwd_stop INT
log "$crafted crafted of 2000 sent, $(cat "$WORK/n") received, $(csum_total m0@0 partial) counted partial"
# Not the books (csum.sh is about checksums): the crafted frames crossed, none counted partial.
[ "$(cat "$WORK/n")" -ge 1000 ] || fail "received $(cat "$WORK/n") of 2000"
[ "$(csum_errors)" = "$before" ] || fail "the receiver counted $(($(csum_errors) - before)) UDP checksum errors"
[ "$crafted" -ge 1 ] && [ "$(csum_total m0@0 partial)" = 0 ] ||
	fail "m0@0: $(csum_total m0@0 partial) counted partial, of $crafted crafted valid checksums"
! grep -q "partial checksum" "$WORK/fwd.err" || fail "a false alarm: $(grep "partial checksum" "$WORK/fwd.err")"
log "ok"
