#!/usr/bin/env bash
# xdp-fwd --mode l3: two routers in a row, each an xdp-fwd on the kernel's own tables.
#
#   client --(10.1.0.0/24)-- r1 --(10.2.0.0/24, a1-b0)-- r2 --(10.3.0.0/24)-- server
#                             \--(10.4.0.0/24, a2-b2)--/
# (and 2001:db8:N::/64 beside each). Static routes with `ip route`, neighbours learned by the
# kernels (ARP and ND reach them through the steering program). Checks: IPv4 and IPv6 ping
# routed by xdp-fwd (the reply's TTL is 64 - 2: both routers decremented it, and xdp-fwd's
# ports carried the frames, not the kernel's forwarding); a UDP stream's books (every datagram
# received or counted dropped); a route change under traffic moves it to the new next hop; a
# multipath route spreads flows, each whole on one path; TTL 1 and 2 get the time-exceeded of
# r1 and of r2 (the kernel's, as traceroute shows hops).
# Other cases (the argument; each asserts what its comment below says):
#   badinput   the start-up refusals (one port, no such or an empty table, IPv4 forwarding off)
#              and IPv6 forwarding off's warning
#   nhmac      the next hop's MAC changes under traffic: sent to the new one within the bound
#   linkdown   the route's link goes down under traffic: a higher metric route takes it; then
#              no route at all: every frame counted
#   resolve    a flushed next hop: counted unresolved, resolved (NTF_USE), routed by xdp-fwd
#   nexthops   an IPv6 link-local next hop routed; a route out of a foreign interface counted
#   localaddr  addresses added and removed while running: answered by the kernel / routed again;
#              a reload that changes the rules keeps the router's own addresses the kernel's
#   ownmac     the router interface's own MAC changes: routed to and from the new one
#   offload    --offload-after: the routed flows forwarded by the steering programs themselves
#              (see the case below)
# Under traffic: a numbered UDP stream (l3flow.py), whose books are sent = received + counted
# drops (both routers' by reason, every veth's, the server socket's) and whose losses end
# within L3_BOUND_MS (default 500) of the change.
SRC=${UMEM_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${UMEM_BUILD_DIR:-$SRC/build}
FWD=$BUILD/apps/xdp-fwd/xdp-fwd
set -uo pipefail
# shellcheck source=../common/netns.sh
. "$SRC/test/common/netns.sh"
# shellcheck source=l3_lib.sh
. "$SRC/test/fwd/l3_lib.sh"

netns_init l3
netns_workdir WORK
fail() {
	echo "FAIL: $*" >&2
	for f in "$WORK"/r*.err; do [ -s "$f" ] && { echo "--- $f"; tail -5 "$f"; } >&2; done
	exit 1
}
log() { echo "== $*"; }
[ -x "$FWD" ] || fail "xdp-fwd not built at $FWD"
command -v iperf3 >/dev/null || { echo "skip: no iperf3" >&2; exit 77; }

netns_add C
netns_add R1
netns_add R2
netns_add S
netns_veth "$C" eth0 "$R1" a0 || fail "veth"
netns_veth "$R1" a1 "$R2" b0 || fail "veth"
netns_veth "$R1" a2 "$R2" b2 || fail "veth"
netns_veth "$R2" b1 "$S" eth0 || fail "veth"

l3_host "$C" 1
l3_addrs "$R1" a0 1 1
l3_addrs "$R1" a1 2 1
l3_addrs "$R1" a2 4 1
l3_addrs "$R2" b0 2 2
l3_addrs "$R2" b2 4 2
l3_addrs "$R2" b1 3 1
l3_host "$S" 3
ip -n "$R1" route add 10.3.0.0/24 via 10.2.0.2
ip -n "$R1" -6 route add 2001:db8:3::/64 via 2001:db8:2::2
ip -n "$R2" route add 10.1.0.0/24 via 10.2.0.1
ip -n "$R2" -6 route add 2001:db8:1::/64 via 2001:db8:2::1
l3_router "$R1"
l3_router "$R2"

no_xdp() { ! ip -n "$1" -d link show | grep -q "prog/xdp"; }

# start K IF...: xdp-fwd --mode l3 in router K, JSON stats every 0.2 s.
START_ARGS=() # more xdp-fwd options for the next start
start() {
	local k=$1 ns pid
	shift
	ns=$([ "$k" = 1 ] && echo "$R1" || echo "$R2")
	local args=()
	for i in "$@"; do args+=(-i "$i"); done
	netns_bg pid "$ns" "$FWD" --mode l3 "${args[@]}" ${START_ARGS[@]+"${START_ARGS[@]}"} --json --interval 0.2 \
		>"$WORK/r$k.out" 2>"$WORK/r$k.err"
	printf -v "PID$k" '%s' "$pid"
	wait_for 30 grep -q "Ctrl-C stops" "$WORK/r$k.err" || fail "router $k did not start: $(cat "$WORK/r$k.err")"
}

# stop K: SIGINT, exit 0, every frame back.
stop() {
	local pid="PID$1" rc=0
	kill -INT "${!pid}"
	wait "${!pid}" || rc=$?
	netns_stop "${!pid}"
	[ $rc = 0 ] || fail "router $1 exited with $rc"
	grep -q '"frames_out":0' "$WORK/r$1.out" || fail "router $1: frames still out"
}

# jfield K TYPE EXPR: a number from router K's last JSON line of TYPE (python expression on j).
jfield() {
	grep "\"type\":\"$2\"" "$WORK/r$1.out" | tail -1 |
		python3 -c "import json,sys; j=json.loads(sys.stdin.read()); p={x['name']:x for x in j['ports']}; print($3)"
}

if [ "${1:-}" = badinput ]; then
	log "bad input: one port, forwarding off, a table that does not exist"
	expect() { # MESSAGE NS ARGS...
		local msg=$1 ns=$2 rc=0
		shift 2
		ip netns exec "$ns" "$FWD" "$@" >"$WORK/out" 2>"$WORK/err" </dev/null || rc=$?
		[ $rc != 0 ] || fail "xdp-fwd $* succeeded"
		grep -q -- "$msg" "$WORK/err" || fail "xdp-fwd $*: no '$msg' in: $(cat "$WORK/err")"
		no_xdp "$ns" || fail "xdp-fwd $*: an XDP program was left attached"
		echo "   $* -> rc $rc: $(grep -- "$msg" "$WORK/err" | head -1)"
	}
	expect "--mode l3 needs at least 2 interfaces" "$R1" --mode l3 -i a0
	expect "routing table 77" "$R1" --mode l3 -i a0 -i a1 --table 77
	# A table that held routes and holds none now is the kernel's "no such table" too: refused
	# as one that does not exist (a router with nothing to route is a mistake, not a start).
	ip -n "$R1" route add 10.9.0.0/24 dev a1 table 78
	ip -n "$R1" route del 10.9.0.0/24 dev a1 table 78
	expect "routing table 78" "$R1" --mode l3 -i a0 -i a1 --table 78
	# IPv6 forwarding off: a warning, not a refusal (IPv4 routes; the kernel's IPv6 part, hop
	# limit expiry, is missing, and said).
	ip netns exec "$R1" sysctl -qw net.ipv6.conf.all.forwarding=0
	start 1 a0 a1
	grep -q "net.ipv6.conf.all.forwarding is 0" "$WORK/r1.err" || fail "no warning for IPv6 forwarding off: $(cat "$WORK/r1.err")"
	stop 1
	echo "   IPv6 forwarding off: $(grep -o "warning: net.ipv6.conf.all.forwarding is 0" "$WORK/r1.err")"
	ip netns exec "$R2" sysctl -qw net.ipv4.ip_forward=0
	expect "net.ipv4.ip_forward = 0" "$R2" --mode l3 -i b0 -i b1
	log "ok"
	exit 0
fi

if [ "${1:-}" = offload ] || [ "${1:-}" = offload_othermac ]; then
	# --offload-after: an established routed flow is forwarded by the steering program of its
	# input interface, which rewrites it as the router does (MACs, TTL or hop limit, the IPv4
	# checksum).
	# r2 routes b0 and b1 only: b2 is its kernel's (GRO on, so r1 can redirect into a2, and a
	# capture there sees the MACs r1 wrote). Checks: UDP flows (IPv4, IPv6) offloaded at both
	# routers arrive with TTL 62 and the right MACs, its books balance; TCP offloaded too; TTL 1 and 2
	# frames of an offloaded flow get the time exceeded of r1 and r2; a route change and a
	# neighbour MAC change under traffic move the offloaded flow within 100 ms.
	# shellcheck source=offload_lib.sh
	. "$SRC/test/fwd/offload_lib.sh"
	for p in "$C eth0" "$S eth0" "$R2 b2"; do # NAPI for the redirects into their peers
		ip netns exec "${p% *}" ethtool -K "${p#* }" gro on >/dev/null || fail "gro on ${p#* }"
	done
	START_ARGS=(--offload-after 4 --offload-idle 30)
	start 1 a0 a1 a2
	start 2 b0 b1
	wait_for 10 ip netns exec "$C" ping -c 1 -W 1 10.3.0.2 >/dev/null || fail "no IPv4 path: $(cat "$WORK/r1.err")"
	ip netns exec "$R1" ping -c 1 -W 1 10.4.0.2 >/dev/null || fail "r1 does not reach 10.4.0.2"
	mac() { ip -n "$1" -j link show "$2" | python3 -c "import json,sys; print(json.load(sys.stdin)[0]['address'])"; }
	# osum K PORT FIELD: PORT's offload FIELD summed over router K's intervals since its mark.
	osum() {
		local m="MARK$1"
		tail -n +"$((${!m} + 1))" "$WORK/r$1.out" | grep '"type":"interval"' | python3 -c "
import json, sys
print(sum(p['offload']['$3'] for l in sys.stdin for p in json.loads(l)['ports'] if p['name'] == '$2'))"
	}
	mark() { MARK1=$(wc -l <"$WORK/r1.out") MARK2=$(wc -l <"$WORK/r2.out"); }
	# The S side of a UDP stream to port 5302: the datagrams its socket took (the books) and,
	# from a capture of eth0, each frame's TTL and MACs and whether it came in order.
	RECV_CAP='
import json, os, select, socket, sys
out, dev = sys.argv[1], sys.argv[2]
u = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); u.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
u.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0); u.bind(("::", 5302))
c = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3)); c.bind((dev, 0))
c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
got, seen, last, late = 0, {}, {}, 0
open(out + ".ready", "w").close()
while True:
    r, _, _ = select.select([u, c], [], [], 1.0)
    if not r:
        if os.path.exists(out + ".stop"): break
        continue
    if u in r:
        u.recv(2048); got += 1
    if c in r:
        f = c.recv(2048)
        v6 = f[12:14] == b"\x86\xdd"
        ip, l4 = (14, 54) if v6 else (14, 34)
        if (not v6 and f[12:14] != b"\x08\x00") or len(f) < l4 + 12 or f[ip + (6 if v6 else 9)] != 17: continue
        if int.from_bytes(f[l4 + 2:l4 + 4], "big") != 5302: continue
        k = "%s ttl %d dmac %s smac %s" % ("v6" if v6 else "v4", f[ip + (7 if v6 else 8)], f[0:6].hex(":"), f[6:12].hex(":"))
        seen[k] = seen.get(k, 0) + 1
        sport, seq = int.from_bytes(f[l4:l4 + 2], "big") + (1 << 16 if v6 else 0), int.from_bytes(f[l4 + 8:l4 + 12], "big")
        if seq < last.get(sport, -1): late += 1
        last[sport] = seq
json.dump({"got": got, "seen": seen, "late": late}, open(out + ".tmp", "w")); os.rename(out + ".tmp", out)
'
	udp_books0() { DROPS0=$(($(path_drops "$C eth0" "$R1 a0" "$R1 a1" "$R1 a2" "$R2 b0" "$R2 b1" "$R2 b2" "$S eth0") +
		$(snmp_s RcvbufErrors))); }
	snmp_s() { ip netns exec "$S" awk -v f="$1" '/^Udp:/ && !h { for (i = 2; i <= NF; i++) c[i] = $i; h = 1; next }
		/^Udp:/ && h { for (i = 2; i <= NF; i++) if (c[i] == f) print $i }' /proc/net/snmp; }
	recv_start() {
		rm -f "$WORK/got" "$WORK/got.ready" "$WORK/got.stop"
		netns_bg RECV "$S" python3 -c "$RECV_CAP" "$WORK/got" eth0
		wait_for 5 test -e "$WORK/got.ready" || fail "UDP receiver did not start"
	}
	recv_stop() {
		touch "$WORK/got.stop"
		wait_for 10 test -s "$WORK/got" || fail "the UDP receiver did not finish"
		netns_stop "$RECV"
	}
	jgot() { python3 -c "import json; j=json.load(open('$WORK/got')); print($1)"; }

	if [ "$1" = offload_othermac ]; then
		# A frame of an offloaded flow addressed to another MAC than r1's a0 (a switch floods it,
		# or it is another host's): r1's program leaves it to userspace, which drops it as
		# other_mac, as it does without the offload. Then a0's MAC changes: the flow's entry,
		# which holds the old MAC, is invalidated and the flow offloaded again with the new one.
		# OTHER_SEND DEV DMAC N: N datagrams of the offloaded flow (10.1.0.2:41000 > 10.3.0.2:5302),
		# payload "othr", framed by hand to DMAC from DEV's MAC.
		OTHER_SEND='
import socket, struct, sys
dev, dmac, n = sys.argv[1], bytes.fromhex(sys.argv[2].replace(":", "")), int(sys.argv[3])
smac = bytes.fromhex(open("/sys/class/net/%s/address" % dev).read().strip().replace(":", ""))
pl = b"othr" * 50
udp = struct.pack("!HHHH", 41000, 5302, 8 + len(pl), 0) + pl
ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0x4000, 64, 17, 0,
                           socket.inet_aton("10.1.0.2"), socket.inet_aton("10.3.0.2")))
s = sum(struct.unpack("!10H", ip)); s = (s & 0xffff) + (s >> 16); s = (s & 0xffff) + (s >> 16)
ip[10:12] = struct.pack("!H", ~s & 0xffff)
c = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); c.bind((dev, 0))
for _ in range(n): c.send(dmac + smac + b"\x08\x00" + bytes(ip) + udp)
'
		# The server's datagrams on 5302 until FILE.stop: all of them, and those of OTHER_SEND.
		OTHER_RECV='
import os, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("0.0.0.0", 5302)); s.settimeout(0.2)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22); n = o = 0
open(sys.argv[1] + ".ready", "w").close()
while not os.path.exists(sys.argv[1] + ".stop"):
    try:
        d = s.recv(2048); n += 1; o += d.startswith(b"othr")
    except socket.timeout:
        pass
open(sys.argv[1] + ".tmp", "w").write("%d %d" % (n, o)); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
'
		# other_mac K: router K's count of frames not routed as another MAC's (its last line).
		other_mac() { grep '"type":"interval"' "$WORK/r$1.out" | tail -1 | python3 -c "import json,sys; print(json.loads(sys.stdin.read())['l3']['not_routed']['other_mac'])"; }
		other_mac_reaches() { [ "$(other_mac 1)" -ge "$1" ]; }
		orecv_start() {
			rm -f "$WORK/orecv" "$WORK/orecv.ready" "$WORK/orecv.stop"
			netns_bg ORECV "$S" python3 -c "$OTHER_RECV" "$WORK/orecv"
			wait_for 5 test -e "$WORK/orecv.ready" || fail "UDP receiver did not start"
		}
		orecv_stop() {
			sleep 0.3 # the last datagrams' way through (nothing to await)
			touch "$WORK/orecv.stop"
			wait_for 10 test -s "$WORK/orecv" || fail "the UDP receiver did not finish"
			netns_stop "$ORECV"
			read -r OGOT OOTHER <"$WORK/orecv"
		}
		# offloaded K: r1's program redirected more than K frames of a0's flows since the mark.
		offloaded() { sleep 0.25; [ "$(osum 1 a0@0 packets)" -gt "$1" ]; }
		log "an offloaded flow's frames to another MAC: not routed by r1's program (other_mac)"
		a0_mac=$(mac "$R1" a0)
		mark
		orecv_start
		sent=$(ip netns exec "$C" python3 -c "$UDP_SEND" 10.3.0.2 400 41000 1000) || fail "UDP sender"
		wait_for 5 offloaded 200 || fail "the flow was not offloaded at r1: its program redirected $(osum 1 a0@0 packets) of $sent"
		off0=$(osum 1 a0@0 packets) om0=$(other_mac 1)
		ip netns exec "$C" python3 -c "$OTHER_SEND" eth0 02:00:00:00:00:99 100 || fail "frame injection"
		orecv_stop
		wait_for 5 other_mac_reaches $((om0 + 100)) ||
			fail "r1 counted $(($(other_mac 1) - om0)) of the 100 frames to another MAC as other_mac; r1's program redirected $(($(osum 1 a0@0 packets) - off0)) frames after them, the server received $OOTHER"
		echo "   flow offloaded ($off0 frames redirected by r1's program); 100 frames to 02:00:00:00:00:99: other_mac +$(($(other_mac 1) - om0)), at the server $OOTHER"
		[ "$OOTHER" = 0 ] || fail "$OOTHER frames addressed to another MAC reached the server (routed)"
		[ "$OGOT" -le "$sent" ] || fail "the server received $OGOT of $sent datagrams"

		log "a0's MAC changes: the flow's entry (the old MAC) invalidated, offloaded again to the new one"
		mark # before the change: its invalidation is in the next interval line
		ip -n "$R1" link set dev a0 address 02:00:00:00:a0:01
		ip -n "$C" neigh replace 10.1.0.1 lladdr 02:00:00:00:a0:01 dev eth0 nud reachable
		orecv_start
		sent=$(ip netns exec "$C" python3 -c "$UDP_SEND" 10.3.0.2 400 41000 1000) || fail "UDP sender"
		wait_for 5 offloaded 200 || fail "not offloaded again after a0's MAC change: r1's program redirected $(osum 1 a0@0 packets) of $sent, invalidated $(osum 1 a0@0 invalidated)"
		inv=$(osum 1 a0@0 invalidated) om0=$(other_mac 1)
		ip netns exec "$C" python3 -c "$OTHER_SEND" eth0 "$a0_mac" 50 || fail "frame injection"
		orecv_stop
		wait_for 5 other_mac_reaches $((om0 + 50)) ||
			fail "r1 counted $(($(other_mac 1) - om0)) of the 50 frames to a0's old MAC as other_mac"
		echo "   invalidated $inv, redirected again $(osum 1 a0@0 packets); 50 frames to the old MAC $a0_mac: at the server $OOTHER"
		[ "$inv" -ge 1 ] || fail "a0's MAC change invalidated no offloaded flow"
		[ "$OOTHER" = 0 ] || fail "$OOTHER frames addressed to a0's old MAC reached the server (routed)"
		stop 1
		stop 2
		no_xdp "$R1" && no_xdp "$R2" || fail "an XDP program was left attached"
		log "ok"
		exit 0
	fi

	log "routed UDP flows (IPv4, IPv6), offloaded at both routers: TTL 62, the MACs of the last hop, the books"
	wait_for 10 ip netns exec "$C" ping -6 -c 1 -W 1 2001:db8:3::2 >/dev/null || fail "no IPv6 path"
	s_mac=$(mac "$S" eth0) b1_mac=$(mac "$R2" b1)
	mark
	udp_books0
	recv_start
	sent=$(ip netns exec "$C" python3 -c "$UDP_SEND" 10.3.0.2 6000 41000 3000) || fail "UDP sender"
	sent6=$(ip netns exec "$C" python3 -c "$UDP_SEND" 2001:db8:3::2 3000 41000 3000) || fail "UDP sender (IPv6)"
	sent=$((sent + sent6))
	recv_stop
	sleep 0.5 # an interval or two: the programs' counts in the JSON
	got=$(jgot 'j["got"]')
	off1=$(osum 1 a0@0 packets) off2=$(osum 2 b0@0 packets)
	echo "   sent $sent, received $got; redirected by r1's program $off1, by r2's $off2; seen: $(jgot 'j["seen"]')"
	[ "$off1" -gt 8000 ] || fail "r1's program redirected $off1 of $sent frames: the flows were not offloaded"
	[ "$off2" -gt 8000 ] || fail "r2's program redirected $off2 of $sent frames: the flows were not offloaded"
	[ "$(jgot 'sorted(j["seen"])')" = "['v4 ttl 62 dmac $s_mac smac $b1_mac', 'v6 ttl 62 dmac $s_mac smac $b1_mac']" ] ||
		fail "frames at the server not all TTL 62 from $b1_mac to $s_mac: $(jgot 'j["seen"]')"
	drops=$(($(path_drops "$C eth0" "$R1 a0" "$R1 a1" "$R1 a2" "$R2 b0" "$R2 b1" "$R2 b2" "$S eth0") +
		$(snmp_s RcvbufErrors) - DROPS0))
	for k in 1 2; do
		drops=$((drops + $(tail -n +"$(("MARK$k" + 1))" "$WORK/r$k.out" | grep '"type":"interval"' | python3 -c "
import json, sys
print(sum(sum(p['drops'].values()) - p['drops'].get('tx_dropped_kernel', 0) + p['offload']['lost']
          for l in sys.stdin for p in json.loads(l)['ports']))")))
	done
	[ $((sent - got)) -le "$drops" ] || fail "UDP books: $((sent - got)) of $sent lost, $drops drops counted"
	echo "   books: lost $((sent - got)) <= counted drops $drops; frames out of order at the server: $(jgot 'j["late"]')"

	log "TCP, offloaded"
	mark
	netns_bg IPERF "$S" iperf3 -s -1 -p 5201 >/dev/null 2>&1
	wait_for 5 ip netns exec "$S" sh -c "ss -ltn | grep -q ':5201 '" || fail "iperf3 server did not start"
	# Bounded: a connection that stalls (frames black-holed) leaves iperf3 waiting on TCP's
	# retransmission back-off for minutes, past ctest's timeout, with nothing said.
	tmo=$((20 * $(wait_scale)))
	ip netns exec "$C" timeout "$tmo" iperf3 -c 10.3.0.2 -p 5201 -t 2 --connect-timeout 5000 --json >"$WORK/tcp.json" || {
		ip netns exec "$C" ss -tin dst 10.3.0.2 >&2
		fail "iperf3 TCP through offloaded routers failed or took over $tmo s: $(grep '"error"' "$WORK/tcp.json"); r1 redirected $(osum 1 a0@0 packets) data and $(osum 1 a1@0 packets) ACK frames, invalidated $(osum 1 a0@0 invalidated)"
	}
	netns_stop "$IPERF"
	sleep 0.5
	bps=$(python3 -c "import json; print(int(json.load(open('$WORK/tcp.json'))['end']['sum_received']['bits_per_second']))")
	off1=$(osum 1 a0@0 packets) off2=$(osum 1 a1@0 packets)
	echo "   $((bps / 1000000)) Mbit/s; r1's programs redirected $off1 data and $off2 ACK frames"
	[ "$bps" -gt 10000000 ] || fail "TCP through offloaded routers: $bps bit/s"
	[ "$off1" -gt 1000 ] && [ "$off2" -gt 100 ] || fail "TCP not offloaded at r1 (data $off1, ACKs $off2 frames)"

	log "TTL 1 and 2 in an offloaded flow: the time exceeded of r1, then of r2 (the kernels)"
	recv_start
	mark
	ip netns exec "$C" python3 -c '
import select, socket, struct, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("0.0.0.0", 41001))
s.setsockopt(socket.SOL_IP, 11, 1) # IP_RECVERR
for i in range(200):
    s.sendto(i.to_bytes(4, "big") * 50, ("10.3.0.2", 5302)); time.sleep(0.002)
def expire(ttl):
    s.setsockopt(socket.SOL_IP, socket.IP_TTL, ttl)
    s.sendto(b"x" * 200, ("10.3.0.2", 5302))
    end = time.monotonic() + 2
    while time.monotonic() < end:
        select.select([s], [], [], 0.1)
        try:
            _, anc, _, _ = s.recvmsg(512, 512, socket.MSG_ERRQUEUE)
        except BlockingIOError:
            continue
        for lvl, typ, d in anc:
            origin, itype = d[4], d[5]
            if lvl == socket.SOL_IP and origin == 2 and itype == 11: # ICMP time exceeded
                return socket.inet_ntoa(d[20:24])
    return "none"
print(expire(1), expire(2))
for i in range(100): # the flow still forwarded after
    s.setsockopt(socket.SOL_IP, socket.IP_TTL, 64); s.sendto(i.to_bytes(4, "big") * 50, ("10.3.0.2", 5302)); time.sleep(0.002)
' >"$WORK/ttl" || fail "TTL sender"
	recv_stop
	sleep 0.5
	off1=$(osum 1 a0@0 packets)
	echo "   time exceeded from: $(cat "$WORK/ttl"); r1's program redirected $off1 frames of the flow"
	[ "$(cat "$WORK/ttl")" = "10.1.0.1 10.2.0.2" ] || fail "TTL 1/2: time exceeded from $(cat "$WORK/ttl"), not 10.1.0.1 10.2.0.2"
	[ "$off1" -gt 150 ] || fail "the TTL test's flow was not offloaded (r1 redirected $off1)"

	# WATCH CTR READY CMD...: touches READY, awaits the stream on the sysfs counter CTR (a python
	# and a sender start take seconds on a loaded machine: a fixed sleep saw the stream over or
	# not begun), runs CMD after 0.2 s of it, and says how long after it returned CTR last moved,
	# and by how much it moved later than 100 ms after.
	WATCH='
import subprocess, sys, time
ctr, ready, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
rd = lambda: int(open(ctr).read())
v0 = rd(); open(ready, "w").close(); end = time.monotonic() + 30
while rd() - v0 < 20 and time.monotonic() < end: time.sleep(0.005)
v0 = rd(); t0 = time.monotonic(); time.sleep(0.2); before = rd() - v0
subprocess.run(cmd, check=True); t = time.monotonic(); v = rd(); last = -1.0; late = 0
while time.monotonic() < t + 1.5:
    n = rd()
    if n != v:
        last = time.monotonic() - t
        if last > 0.1: late += n - v
        v = n
    time.sleep(0.001)
print(before, "%.4f" % last, late)
'
	log "route change under traffic: r1's next hop moves from a1 (r2's xdp-fwd) to a2 (r2's kernel)"
	mark
	recv_start
	rm -f "$WORK/watch.ready"
	netns_bg WATCHER "$R1" python3 -c "$WATCH" /sys/class/net/a1/statistics/tx_packets "$WORK/watch.ready" \
		ip route replace 10.3.0.0/24 via 10.4.0.2 >"$WORK/watch"
	wait_for 15 test -e "$WORK/watch.ready" || fail "the route change's watcher did not start"
	netns_bg SEND "$C" python3 -c "$UDP_SEND" 10.3.0.2 8000 41002 2000 >"$WORK/sent"
	wait "$WATCHER" || fail "route change watch"
	netns_stop "$WATCHER"
	wait "$SEND"
	recv_stop
	sleep 0.5
	read -r before last late <"$WORK/watch"
	sent=$(cat "$WORK/sent") got=$(jgot 'j["got"]') inv=$(osum 1 a0@0 invalidated) off1=$(osum 1 a0@0 packets)
	echo "   a1 sent $before frames in the 0.2 s before; after the change its last frame $last s later, $late more after 100 ms"
	echo "   sent $sent, received $got; r1 redirected $off1, flows invalidated $inv"
	[ "$before" -gt 100 ] || fail "route change: a1 carried only $before frames before it"
	[ "$late" -le 2 ] || fail "route change: a1 (the old next hop) sent $late frames more than 100 ms after it"
	[ "$inv" -ge 1 ] || fail "route change: r1 invalidated no offloaded flow"
	[ "$off1" -gt 4000 ] || fail "route change: r1's program redirected only $off1 of $sent (not offloaded again on a2?)"
	[ "$got" -gt $((sent * 9 / 10)) ] || fail "route change: received $got of $sent"

	log "neighbour MAC change under traffic: r1's next hop 10.4.0.2 gets another MAC"
	# Captured on b2 (r2's kernel side): the destination MACs r1 writes, before and after.
	CAP_CHANGE='
import socket, subprocess, sys, time
dev, old, new, ready, cmd = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
c = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800)); c.bind((dev, 0))
c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22); c.settimeout(0.05)
open(ready, "w").close()
def cap(until, n, first=False):
    while time.monotonic() < until and not (first and n):
        try:
            f = c.recv(2048)
        except socket.timeout:
            continue
        if len(f) >= 38 and f[23] == 17 and int.from_bytes(f[36:38], "big") == 5302:
            m = f[0:6].hex(":"); n[m] = n.get(m, 0) + 1
            if m == old: n["last_old"] = time.monotonic()
cap(time.monotonic() + 30, w := {}, first=True) # the stream awaited (slow starts under load)
cap(time.monotonic() + 1.0, b := {})
subprocess.run(cmd, check=True); t = time.monotonic()
cap(t + 1.5, a := {})
print(b.get(old, 0), b.get(new, 0), "%.4f" % (a.get("last_old", t) - t), a.get(new, 0))
'
	mark
	b2_mac=$(mac "$R2" b2)
	rm -f "$WORK/cap.ready"
	netns_bg WATCHER "$R2" python3 -c "$CAP_CHANGE" b2 "$b2_mac" 02:00:00:00:00:42 "$WORK/cap.ready" \
		ip -n "$R1" neigh replace 10.4.0.2 lladdr 02:00:00:00:00:42 dev a2 nud permanent >"$WORK/cap"
	wait_for 15 test -e "$WORK/cap.ready" || fail "the neighbour change's capture did not start"
	netns_bg SEND "$C" python3 -c "$UDP_SEND" 10.3.0.2 6000 41003 2000 >"$WORK/sent"
	wait "$WATCHER" || fail "neighbour change capture"
	netns_stop "$WATCHER"
	wait "$SEND"
	sleep 0.5
	read -r old_before new_before old_last new_after <"$WORK/cap"
	inv=$(osum 1 a0@0 invalidated) off1=$(osum 1 a0@0 packets)
	echo "   before: $old_before frames to $b2_mac, $new_before to the new MAC; after: the last to the old MAC $old_last s later, $new_after to the new"
	echo "   r1 redirected $off1, flows invalidated $inv"
	[ "$old_before" -gt 500 ] && [ "$new_before" = 0 ] || fail "neighbour change: before it $old_before/$new_before frames"
	python3 -c "import sys; sys.exit(not $old_last <= 0.1)" || fail "neighbour change: frames to the old MAC $old_last s after it"
	[ "$new_after" -gt 1000 ] || fail "neighbour change: only $new_after frames to the new MAC"
	[ "$inv" -ge 1 ] && [ "$off1" -gt 2000 ] || fail "neighbour change: r1 invalidated $inv flows, redirected $off1 frames"
	stop 1
	stop 2
	no_xdp "$R1" && no_xdp "$R2" || fail "an XDP program was left attached"
	log "ok"
	exit 0
fi

# --- helpers of the cases below -------------------------------------------------------------
FLOW="python3 $SRC/test/fwd/l3flow.py"
now() { $FLOW now; }
ipfwd() { ip netns exec "$1" awk '/^Ip:/ { n++; if (n == 2) print $7 }' /proc/net/snmp; } # ForwDatagrams
ip6fwd() { ip netns exec "$1" awk '$1 == "Ip6OutForwDatagrams" { print $2 }' /proc/net/snmp6; }
# l3n K REASON: router K's not-routed count of REASON (its last JSON line).
l3n() { jfield "$1" interval "j['l3']['not_routed']['$2']" 2>/dev/null || echo 0; }
# l3t K EXPR: a number from router K's total line (python expression on l, its l3 object).
l3t() { grep '"type":"total"' "$WORK/r$1.out" | python3 -c "import json,sys; l=json.loads(sys.stdin.read())['l3']; print($2)"; }
# stream_start N PPS DST: a numbered UDP stream from the client to the server (port 5300). The
# cases under traffic ask for more than they need and stop it (stream_end) once the change
# is seen through: a loaded machine takes tens of seconds for what an idle one does in one.
stream_start() {
	netns_bg RECV "$S" $FLOW recv 5300 "$WORK/recv"
	wait_for 15 ip netns exec "$S" sh -c "ss -lun | grep -q ':5300 '" || fail "receiver did not start"
	netns_bg SEND "$C" $FLOW send "$3" 5300 "$1" "$2" "$WORK/sent"
}
# flowing: the stream reaches r1 (its a0 received more than 10 frames in the last interval; a
# loaded machine paces the sender slower than asked).
flowing() { [ "$(jfield 1 interval "p['a0@0']['rx_packets']")" -gt 10 ]; }
# stream_end [all]: stops the sender (all: once it sent its N datagrams), then the receiver
# (after the last frames' way through).
stream_end() {
	[ "${1:-}" = all ] || kill -TERM "$SEND" 2>/dev/null
	wait "$SEND" || fail "sender failed"
	netns_stop "$SEND"
	sleep 0.3 # the frames still on their way (a window, nothing to await)
	kill -TERM "$RECV"
	wait "$RECV"
	netns_stop "$RECV"
	[ -e "$WORK/recv" ] || fail "the receiver wrote nothing"
}
# counted: every drop the path counted: both routers' (xdp-fwd's by reason; the kernel's xsk
# drops of their sockets are the veths' RX drops, in path_drops), every veth's, the server's
# UDP socket's. Call after stop 1; stop 2.
counted() {
	local r1 r2 veth sock
	sock=$(ip netns exec "$S" awk '/^Udp:/ { n++; if (n == 2) print $4 }' /proc/net/snmp) # InErrors
	r1=$(fwd_drops "$WORK/r1.out")
	r2=$(fwd_drops "$WORK/r2.out")
	veth=$(path_drops "$C eth0" "$R1 a0" "$R1 a1" "$R1 a2" "$R2 b0" "$R2 b1" "$R2 b2" "$S eth0")
	echo "   counted drops: r1 $r1, r2 $r2, veths $veth, server socket $sock" >&2
	echo $((r1 + r2 + veth + sock))
}
# books_detail: what each interface and each router counted, for a books failure. One `ip` per
# namespace and one python for everything: a loaded machine takes seconds per python start,
# and the diagnostics must come out before ctest's timeout.
books_detail() {
	local ns
	for ns in "$C" "$R1" "$R2" "$S"; do
		echo "$ns $(ip -n "$ns" -s -j link show)"
	done >"$WORK/links.json"
	python3 - "$WORK/links.json" "$WORK/r1.out" "$WORK/r2.out" <<'EOF' >&2
import json, sys
for line in open(sys.argv[1]):
    ns, links = line.split(' ', 1)
    for l in json.loads(links):
        s = l.get('stats64')
        if l['ifname'] != 'lo' and s:
            print(f"{ns} {l['ifname']}: rx {s['rx']['packets']} dropped {s['rx']['dropped']}, "
                  f"tx {s['tx']['packets']} dropped {s['tx']['dropped']}")
for k, f in enumerate(sys.argv[2:], 1):
    tot = [l for l in open(f) if '"type":"total"' in l]
    if not tot:
        print(f"r{k}: no total line")
        continue
    j = json.loads(tot[-1])
    print(f"r{k}:", [(x['name'], x['rx_packets'], x['tx_packets'], {d: v for d, v in x['drops'].items() if v})
                      for x in j['ports']], {r: v for r, v in j['l3']['not_routed'].items() if v})
EOF
}
# books T0 T1 [BOUND_MS [SUB]]: the stream's books, after both routers stopped (their totals).
# Every datagram lost is a counted drop (less SUB, drops another stream's books account for);
# with a bound, none lost after T1 + the bound. Sets LOST, LAG (ms after T1 of the last lost).
books() {
	local sent got before during after
	read -r sent got LOST before during after LAG < <($FLOW books "$WORK/sent" "$WORK/recv" "$1" "$2")
	local c
	c=$(($(counted) - ${4:-0}))
	echo "   sent $sent, received $got, lost $LOST (before $before, in the change $during, after $after), counted drops $c${3:+, last loss $LAG ms after the change was made}"
	[ "$got" -gt 0 ] || fail "nothing received"
	[ "$LOST" -le "$c" ] || {
		books_detail
		fail "books: $LOST lost, only $c drops counted"
	}
	[ -z "${3:-}" ] || [ "$LAG" -le "$3" ] ||
		fail "a datagram sent $LAG ms after the change was lost (bound: $3 ms after the change was made)"
}
# The bound a change has to apply within, under traffic: the mirror applies it within
# milliseconds; a loaded 2-CPU machine delays the main thread by more.
BOUND_MS=${L3_BOUND_MS:-500}

case "${1:-routed}" in
nhmac)
	# The next hop's MAC changes under traffic: r2's b0 gets a new address, r1's neighbour entry is
	# replaced (as a gratuitous ARP or `ip neigh replace` would): within the bound r1 sends to
	# the new MAC. Until then r2 counts the frames to the old one (other_mac); nothing unseen.
	start 1 a0 a1 a2
	start 2 b0 b1 b2
	wait_for 10 ip netns exec "$C" ping -c 1 -W 1 10.3.0.2 >/dev/null || fail "no IPv4 path"
	wait_for 10 ip netns exec "$C" ping -6 -c 1 -W 1 2001:db8:3::2 >/dev/null || fail "no IPv6 path"
	stream_start 200000 1000 10.3.0.2
	wait_for 15 flowing || fail "the stream does not reach r1"
	t0=$(now)
	ip -n "$R2" link set dev b0 address 02:00:00:00:b0:02
	# r1 still sends to the old MAC: r2 counts them.
	wait_for 5 sh -c '[ "$(grep "\"type\":\"interval\"" "$1" | tail -1 | python3 -c "import json,sys; print(json.loads(sys.stdin.read())[\"l3\"][\"not_routed\"][\"other_mac\"])")" -gt 0 ]' _ "$WORK/r2.out" ||
		fail "r2 counted no frame to b0's old MAC"
	ip -n "$R1" neigh replace 10.2.0.2 lladdr 02:00:00:00:b0:02 dev a1 nud reachable
	ip -n "$R1" -6 neigh replace 2001:db8:2::2 lladdr 02:00:00:00:b0:02 dev a1 nud reachable
	t1=$(now)
	# Routed to the server again (r2's b1 sends), then the stream's end.
	wait_for 20 sh -c '[ "$(grep "\"type\":\"interval\"" "$1" | tail -1 | python3 -c "import json,sys; print({p[\"name\"]: p for p in json.loads(sys.stdin.read())[\"ports\"]}[\"b1@0\"][\"tx_packets\"])")" -gt 10 ]' _ "$WORK/r2.out" ||
		fail "the stream does not reach the server again"
	stream_end
	ip netns exec "$C" ping -6 -c 3 -i 0.1 -W 1 2001:db8:3::2 >"$WORK/ping6" || fail "IPv6 after the MAC change: $(cat "$WORK/ping6")"
	om=$(l3n 2 other_mac)
	stop 1
	stop 2
	[ "$om" -gt 0 ] || fail "r2 counted no frame to b0's old MAC: the change was not under traffic"
	books "$t0" "$t1" "$BOUND_MS"
	echo "   r2: $om frames to the old MAC (other_mac)"
	log "ok"
	exit 0
	;;
linkdown)
	# The route's output link goes down under traffic: r1 has 10.3.0.0/24 via a1 (metric 0) and
	# via a2 (metric 100); a1 down, the kernel removes the first, traffic takes a2 within the
	# bound. Then no alternative (the a2 route deleted): every frame counted (no_route).
	ip -n "$R1" route add 10.3.0.0/24 via 10.4.0.2 metric 100
	ip -n "$R2" route replace 10.1.0.0/24 via 10.4.0.1 # the way back stays up
	start 1 a0 a1 a2
	start 2 b0 b1 b2
	ip netns exec "$R1" ping -c 1 -W 1 10.4.0.2 >/dev/null # a2's next hop known beforehand
	wait_for 10 ip netns exec "$C" ping -c 1 -W 1 10.3.0.2 >/dev/null || fail "no IPv4 path"
	# L3_LINKDOWN_PPS: a faster stream puts more frames in flight when the link goes down.
	stream_start 200000 "${L3_LINKDOWN_PPS:-1000}" 10.3.0.2
	wait_for 15 flowing || fail "the stream does not reach r1"
	t0=$(now)
	ip -n "$R1" link set a1 down
	t1=$(now)
	# a2 carries it.
	moved() { [ "$(jfield 1 interval "p['a2@0']['tx_packets']")" -gt 10 ]; }
	wait_for 10 moved
	a2tx=$(jfield 1 interval "p['a2@0']['tx_packets']")
	stream_end
	[ "$a2tx" -gt 10 ] || fail "traffic did not move to a2 (a2 sent $a2tx in the last interval; r1 $(jfield 1 interval "[(x['name'], x['rx_packets'], x['tx_packets'], {k: v for k, v in x['drops'].items() if v}) for x in j['ports']]") $(jfield 1 interval "j['l3']['not_routed']"))"
	mv "$WORK/sent" "$WORK/sent1"
	mv "$WORK/recv" "$WORK/recv1"
	log "no alternative: the a2 route deleted, every frame counted"
	r4=$(jfield 1 interval "j['l3']['routes4']")
	ip -n "$R1" route del 10.3.0.0/24 via 10.4.0.2 metric 100
	[ -z "$(ip -n "$R1" route show 10.3.0.0/24)" ] || fail "a route to 10.3.0.0/24 is left"
	# The mirror has the deletion once its count of IPv4 routes went down.
	wait_for 5 sh -c '[ "$(grep "\"type\":\"interval\"" "$1" | tail -1 | python3 -c "import json,sys; print(json.loads(sys.stdin.read())[\"l3\"][\"routes4\"])")" -lt "$2" ]' _ "$WORK/r1.out" "$r4" ||
		fail "r1's mirror did not drop the route"
	stream_start 200 1000 10.3.0.2
	stream_end all
	stop 1
	stop 2
	read -r sent got lost _ < <($FLOW books "$WORK/sent" "$WORK/recv" 0 0)
	nr=$(l3t 1 "l['not_routed']['no_route'] + l['not_routed']['link_down']")
	[ "$got" = 0 ] || fail "$got datagrams arrived with no route"
	[ "$nr" -ge "$lost" ] || fail "no route: $lost lost, r1 counted $nr (no_route + link_down)"
	echo "   no route: sent $sent, lost $lost, r1 counted no_route + link_down $nr"
	log "the books of the stream that moved (the no-route one's drops set apart)"
	mv "$WORK/sent1" "$WORK/sent"
	mv "$WORK/recv1" "$WORK/recv"
	books "$t0" "$t1" "$BOUND_MS" "$lost"
	# Frames routed to a1 as it went down stay on its TX ring (the kernel refuses the kicks):
	# in the totals as tx_unsent.
	echo "   r1's a1: $(grep '"type":"total"' "$WORK/r1.out" | grep -o '"name":"a1@0",[^}]*' | grep -o '"tx_unsent":[0-9]*')"
	log "ok"
	exit 0
	;;
resolve)
	# An unresolved next hop resolves: r1's entries for r2 flushed, then a stream. Its first
	# frames are counted unresolved and r1 asks the kernel (NTF_USE); the rest are routed by
	# xdp-fwd (r1's kernel forwarded none: its ForwDatagrams stays).
	start 1 a0 a1 a2
	start 2 b0 b1 b2
	wait_for 10 ip netns exec "$C" ping -c 1 -W 1 10.3.0.2 >/dev/null || fail "no IPv4 path"
	wait_for 10 ip netns exec "$C" ping -6 -c 1 -W 1 2001:db8:3::2 >/dev/null || fail "no IPv6 path"
	res0=$(jfield 1 interval "j['l3']['resolves']")
	# r2 must not probe r1 from here on: an ARP request or neighbour solicitation from b0
	# (its entry for r1 gone stale, then used) makes r1's kernel learn b0's MAC again, and
	# nothing is left to resolve (seen next to two CPU hogs, where the flush and the stream
	# drift apart).
	a1mac=$(ip -n "$R1" -br link show dev a1 | awk '{ print $3 }')
	ip -n "$R2" neigh replace 10.2.0.1 lladdr "$a1mac" dev b0 nud permanent
	ip -n "$R2" -6 neigh replace 2001:db8:2::1 lladdr "$a1mac" dev b0 nud permanent
	ip -n "$R1" neigh flush dev a1
	ip -n "$R1" -6 neigh flush dev a1
	wait_for 5 sh -c "! ip -n $R1 neigh show dev a1 | grep -q lladdr" ||
		fail "a1's neighbours not flushed: $(ip -n "$R1" neigh show dev a1 | tr '\n' ';')"
	f4=$(ipfwd "$R1")
	f6=$(ip6fwd "$R1")
	stream_start 1000 1000 10.3.0.2
	stream_end all
	ip netns exec "$C" ping -6 -c 10 -i 0.05 -W 1 2001:db8:3::2 >"$WORK/ping6"
	grep -q "ttl=62" "$WORK/ping6" || fail "IPv6: no echo came back routed after the flush: $(cat "$WORK/ping6")"
	[ "$(ipfwd "$R1")" = "$f4" ] && [ "$(ip6fwd "$R1")" = "$f6" ] ||
		fail "r1's kernel forwarded ($f4 -> $(ipfwd "$R1"), IPv6 $f6 -> $(ip6fwd "$R1")): not routed by xdp-fwd"
	stop 1
	stop 2
	unres=$(l3t 1 "l['not_routed']['unresolved']")
	res=$(l3t 1 "l['resolves']")
	[ "$unres" -gt 0 ] || fail "no frame was counted unresolved after the flush"
	[ "$res" -gt "$res0" ] || fail "r1 asked no resolution after the flush ($res0 -> $res)"
	books 0 0
	[ "$LOST" -le "$unres" ] || echo "   (more lost than unresolved: other counted drops)"
	echo "   unresolved $unres, resolutions asked $((res - res0)), kernel forwarded none"
	log "ok"
	exit 0
	;;
nexthops)
	# A route whose next hop is r2's IPv6 link-local address: routed (hop limit 62, r1's kernel
	# forwarded none). A route out of an interface xdp-fwd does not own (a3): counted not_ours,
	# every echo.
	ll=$(ip -n "$R2" -6 addr show dev b0 scope link | awk '/inet6/ { sub("/.*", "", $2); print $2 }')
	[ -n "$ll" ] || fail "b0 has no link-local address"
	ip -n "$R1" -6 route replace 2001:db8:3::/64 via "$ll" dev a1
	netns_add X
	netns_veth "$R1" a3 "$X" eth0 || fail "veth"
	addr "$R1" 10.6.0.1/24 a3
	addr "$X" 10.6.0.2/24 eth0
	addr "$X" 10.7.0.1/32 lo
	ip -n "$X" route add default via 10.6.0.1
	ip -n "$R1" route add 10.7.0.0/24 via 10.6.0.2
	ip netns exec "$R1" ping -c 1 -W 1 10.6.0.2 >/dev/null # its next hop resolved: not_ours, not unresolved
	start 1 a0 a1 a2
	start 2 b0 b1 b2
	wait_for 10 ip netns exec "$C" ping -6 -c 1 -W 1 2001:db8:3::2 >/dev/null || fail "no IPv6 path via $ll"
	f6=$(ip6fwd "$R1")
	ip netns exec "$C" ping -6 -c 5 -i 0.05 -W 1 2001:db8:3::2 >"$WORK/ping6" || fail "IPv6 via $ll lost echoes: $(cat "$WORK/ping6")"
	grep -q "ttl=62" "$WORK/ping6" || fail "hop limit not 62 via $ll"
	[ "$(ip6fwd "$R1")" = "$f6" ] || fail "r1's kernel forwarded IPv6: not routed by xdp-fwd"
	echo "   next hop $ll: routed, hop limit 62"
	ip netns exec "$C" ping -c 5 -i 0.05 -W 0.3 10.7.0.1 >/dev/null && fail "frames routed out of a3, which xdp-fwd does not own"
	sleep 0.5 # one stats interval and more
	stop 1
	stop 2
	no=$(l3t 1 "l['not_routed']['not_ours']")
	[ "$no" -ge 5 ] || fail "not_ours counted $no of the 5 echoes"
	echo "   out of a3 (not ours): $no counted not_ours"
	log "ok"
	exit 0
	;;
localaddr)
	# Addresses added to and removed from r1 while it runs. Added (IPv4 and IPv6): the kernel
	# answers them (the pass rules follow), no frame dropped as local. Removed (10.3.0.2, the
	# server's address, was r1's at start): its frames are routed by xdp-fwd to the server again,
	# not handed to r1's kernel, which would forward them itself (ForwDatagrams).
	addr "$R1" 10.3.0.2/32 lo
	echo "rule = udp dport 7 -> drop" >"$WORK/r1.conf"
	START_ARGS=(--config "$WORK/r1.conf")
	start 1 a0 a1 a2
	START_ARGS=()
	start 2 b0 b1 b2
	wait_for 10 ip netns exec "$C" ping -c 1 -W 1 10.1.0.1 >/dev/null || fail "r1 does not answer"
	# A reload that changes the -r rules keeps the router's pass rules: its own address is still
	# the kernel's (the reload used to remove them: the echoes were dropped as local).
	echo "rule = udp dport 9 -> drop" >"$WORK/r1.conf"
	kill -HUP "$PID1"
	wait_for 10 grep -q "reload: rules now" "$WORK/r1.err" || fail "r1 did not reload: $(tail -3 "$WORK/r1.err")"
	ip netns exec "$C" ping -c 3 -i 0.05 -W 1 10.1.0.1 >/dev/null ||
		fail "r1's own address not answered after a reload: local drops $(l3n 1 local)"
	addr "$R1" 10.5.0.1/32 a0
	addr "$R1" 2001:db8:5::1/128 a0 6
	wait_for 5 ip netns exec "$C" ping -c 1 -W 0.5 10.5.0.1 >/dev/null ||
		fail "an address added after start is not answered: r1's local drops $(l3n 1 local)"
	wait_for 5 ip netns exec "$C" ping -6 -c 1 -W 0.5 2001:db8:5::1 >/dev/null ||
		fail "an IPv6 address added after start is not answered"
	ip netns exec "$C" ping -c 3 -i 0.05 -W 1 10.5.0.1 >"$WORK/p1"
	grep -q "ttl=64" "$WORK/p1" || fail "10.5.0.1: not r1's kernel answering: $(cat "$WORK/p1")"
	ip netns exec "$C" ping -c 1 -W 1 10.3.0.2 >"$WORK/p2"
	grep -q "ttl=64" "$WORK/p2" || fail "10.3.0.2 not answered by r1 at start: $(cat "$WORK/p2")"
	ip -n "$R1" addr del 10.3.0.2/32 dev lo
	f4=$(ipfwd "$R1")
	wait_for 5 sh -c "ip netns exec $C ping -c 1 -W 0.5 10.3.0.2 | grep -q ttl=62" || fail "10.3.0.2 not reached after its removal from r1"
	ip netns exec "$C" ping -c 5 -i 0.05 -W 1 10.3.0.2 >/dev/null || fail "echoes lost"
	[ "$(ipfwd "$R1")" = "$f4" ] || fail "r1's kernel forwarded $(( $(ipfwd "$R1") - f4 )) datagrams to a removed address: its pass rule stayed"
	stop 1
	stop 2
	echo "   added: answered by r1's kernel; removed: routed by xdp-fwd (local drops $(l3t 1 "l['not_routed']['local']"))"
	log "ok"
	exit 0
	;;
ownmac)
	# r1's a0 changes its MAC while running (the client's entry replaced): frames to the new MAC
	# are routed (not other_mac), and what r1 sends out of a0 carries the new source MAC.
	start 1 a0 a1 a2
	start 2 b0 b1 b2
	wait_for 10 ip netns exec "$C" ping -c 1 -W 1 10.3.0.2 >/dev/null || fail "no IPv4 path"
	ip -n "$R1" link set dev a0 address 02:00:00:00:a0:01
	ip -n "$C" neigh replace 10.1.0.1 lladdr 02:00:00:00:a0:01 dev eth0 nud reachable
	ip -n "$C" -6 neigh replace 2001:db8:1::1 lladdr 02:00:00:00:a0:01 dev eth0 nud reachable
	netns_bg CAP "$C" tcpdump -l -n -e -i eth0 -c 4 icmp and src 10.3.0.2 >"$WORK/cap" 2>"$WORK/cap.err"
	wait_for 5 grep -q "listening on" "$WORK/cap.err" || fail "tcpdump did not start: $(cat "$WORK/cap.err")"
	wait_for 5 ip netns exec "$C" ping -c 1 -W 0.5 10.3.0.2 >/dev/null ||
		fail "frames to a0's new MAC not routed: other_mac $(l3n 1 other_mac)"
	ip netns exec "$C" ping -c 5 -i 0.05 -W 1 10.3.0.2 >/dev/null || fail "echoes lost after the MAC change"
	ip netns exec "$C" ping -6 -c 5 -i 0.05 -W 1 2001:db8:3::2 >/dev/null || fail "IPv6 echoes lost after the MAC change"
	wait_for 5 sh -c "[ \$(grep -c ICMP $WORK/cap) -ge 4 ]" || fail "no replies captured: $(cat "$WORK/cap")"
	netns_stop "$CAP"
	grep "ICMP" "$WORK/cap" | grep -qv "^.*02:00:00:00:a0:01 >" && fail "a reply left a0 with the old source MAC: $(head -2 "$WORK/cap")"
	stop 1
	stop 2
	echo "   routed to and from the new MAC ($(grep -c ICMP "$WORK/cap") replies captured from 02:00:00:00:a0:01)"
	log "ok"
	exit 0
	;;
routed) ;;
*) fail "unknown case '$1'" ;;
esac

start 1 a0 a1 a2
start 2 b0 b1 b2

log "IPv4 and IPv6 ping through two routers"
# The first echoes find next hops unresolved (counted; the kernel is asked to resolve them).
wait_for 10 ip netns exec "$C" ping -c 1 -W 1 10.3.0.2 >/dev/null || fail "no IPv4 path: $(cat "$WORK/r1.err")"
wait_for 10 ip netns exec "$C" ping -6 -c 1 -W 1 2001:db8:3::2 >/dev/null || fail "no IPv6 path"
fwd4=$(ip netns exec "$R1" awk '/^Ip:/ { n++; if (n == 2) print $7 }' /proc/net/snmp)
ip netns exec "$C" ping -c 5 -i 0.05 -W 1 10.3.0.2 >"$WORK/ping4" || fail "IPv4 ping lost echoes: $(cat "$WORK/ping4")"
ip netns exec "$C" ping -6 -c 5 -i 0.05 -W 1 2001:db8:3::2 >"$WORK/ping6" || fail "IPv6 ping lost echoes"
# 64 at the server, less one per router: the routers decremented it (a wire would not).
grep -q "ttl=62" "$WORK/ping4" || fail "IPv4 reply TTL is not 62: $(grep ttl= "$WORK/ping4" | head -1)"
grep -q "ttl=62" "$WORK/ping6" || fail "IPv6 reply hop limit is not 62: $(grep ttl= "$WORK/ping6" | head -1)"
# Routed by xdp-fwd, not by r1's kernel (whose forwarding is on too): ForwDatagrams still.
fwd4b=$(ip netns exec "$R1" awk '/^Ip:/ { n++; if (n == 2) print $7 }' /proc/net/snmp)
[ "$fwd4" = "$fwd4b" ] || fail "r1's kernel forwarded $((fwd4b - fwd4)) datagrams: not routed by xdp-fwd"
echo "   ping: $(grep -o 'ttl=[0-9]*' "$WORK/ping4" | head -1), kernel forwarded none"

log "TTL 1 and 2: time exceeded from r1, then r2 (the kernels)"
ip netns exec "$C" ping -c 1 -W 1 -t 1 10.3.0.2 >"$WORK/t1"
grep -q "From 10.1.0.1 .*Time to live exceeded" "$WORK/t1" || fail "TTL 1: $(cat "$WORK/t1")"
ip netns exec "$C" ping -c 1 -W 1 -t 2 10.3.0.2 >"$WORK/t2"
grep -q "From 10.2.0.2 .*Time to live exceeded" "$WORK/t2" || fail "TTL 2: not r2's time exceeded: $(cat "$WORK/t2")"
ip netns exec "$C" ping -6 -c 1 -W 1 -t 2 2001:db8:3::2 >"$WORK/t6"
grep -q "From 2001:db8:2::2 .*Time exceeded" "$WORK/t6" || fail "hop limit 2: $(cat "$WORK/t6")"
echo "   hops: 10.1.0.1, 10.2.0.2 (IPv6 2001:db8:2::2)"

log "UDP stream: sent = received + counted drops"
udp_rcvbuf() { ip netns exec "$S" awk '/^Udp:/ { n++; if (n == 2) print $4 }' /proc/net/snmp; } # InErrors
rcvbuf0=$(udp_rcvbuf)
netns_bg IPERF "$S" iperf3 -s -1 -p 5201 >/dev/null 2>&1
wait_for 5 ip netns exec "$S" sh -c "ss -ltn | grep -q ':5201 '" || fail "iperf3 server did not start"
ip netns exec "$C" iperf3 -c 10.3.0.2 -p 5201 -u -b 50M -l 1000 -t 2 --json >"$WORK/udp.json" || fail "iperf3 UDP failed"
read -r sent lost < <(python3 -c "import json; e=json.load(open('$WORK/udp.json'))['end']['sum']; print(e['packets'], e['lost_packets'])")
netns_stop "$IPERF"
sockdrops=$(( $(udp_rcvbuf) - rcvbuf0 )) # the server's socket buffer overflowed
[ "$sent" -gt 1000 ] || fail "iperf3 sent only $sent datagrams"
echo "   sent $sent, lost $lost"

log "route change under traffic: r1's next hop moves from a1 to a2"
netns_bg PING "$C" ping -i 0.01 -W 1 10.3.0.2 >/dev/null 2>&1
sleep 0.5 # traffic on the first path
ip -n "$R1" route replace 10.3.0.0/24 via 10.4.0.2
# The new next hop's MAC is resolved at its first frames; then every echo takes a2.
moved() { [ "$(jfield 1 interval "p['a1@0']['tx_packets']")" = 0 ] && [ "$(jfield 1 interval "p['a2@0']['tx_packets']")" -gt 5 ]; }
wait_for 20 moved || fail "traffic did not move: a1 $(jfield 1 interval "p['a1@0']['tx_packets']"), a2 $(jfield 1 interval "p['a2@0']['tx_packets']")"
netns_stop "$PING"
echo "   a2 carries the echoes, a1 none"

log "multipath: flows spread over both next hops"
ip -n "$R1" route replace 10.3.0.0/24 nexthop via 10.2.0.2 nexthop via 10.4.0.2
# The intervals from here on: the echoes of the last step are in earlier ones (two intervals).
sleep 0.5
mark=$(wc -l <"$WORK/r1.out")
# txsum PORT: frames r1 sent on PORT in the intervals since the mark.
txsum() {
	tail -n +"$((mark + 1))" "$WORK/r1.out" | grep '"type":"interval"' | python3 -c "
import json, sys
print(sum(p['tx_packets'] for l in sys.stdin for p in json.loads(l)['ports'] if p['name'] == '$1'))"
}
# 64 flows (source ports), 20 datagrams each; the server has no listener (it answers with port
# unreachable, which r2 routes back).
spread() {
	ip netns exec "$C" python3 -c '
import socket
for port in range(40000, 40064):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("10.1.0.2", port))
    for _ in range(20):
        s.sendto(b"x" * 64, ("10.3.0.2", 9))
    s.close()'
	sleep 0.5 # one stats interval and more: the frames are counted
	[ "$(txsum a1@0)" -gt 100 ] && [ "$(txsum a2@0)" -gt 100 ]
}
wait_for 10 spread || fail "multipath: a1 sent $(txsum a1@0), a2 $(txsum a2@0)"
sleep 0.5
s1=$(txsum a1@0)
s2=$(txsum a2@0)
# Each flow's 20 datagrams took one path (a hash per flow, not per frame).
[ $((s1 % 20)) = 0 ] && [ $((s2 % 20)) = 0 ] || fail "multipath: a flow was split (a1 $s1, a2 $s2 frames, flows of 20)"
echo "   a1 sent $s1, a2 $s2: whole flows on each"

stop 1
stop 2
no_xdp "$R1" && no_xdp "$R2" || fail "an XDP program was left attached"

# The books of the UDP stream: every datagram the server missed is a drop someone counted (the
# routers' drops by reason, their sockets' kernel drops, the veths', the server's socket).
drops=$sockdrops
for k in 1 2; do
	d=$(grep '"type":"total"' "$WORK/r$k.out" |
		python3 -c "import json,sys; j=json.loads(sys.stdin.read()); print(sum(v for p in j['ports'] for k, v in p['drops'].items()))")
	drops=$((drops + d))
done
for p in "$C eth0" "$R1 a0" "$R1 a1" "$R1 a2" "$R2 b0" "$R2 b1" "$R2 b2" "$S eth0"; do
	drops=$((drops + $(ip -n "${p% *}" -s -j link show "${p#* }" | grep -o '"dropped":[0-9]*' | cut -d: -f2 | awk '{ s += $1 } END { print s + 0 }')))
done
[ "$lost" -le "$drops" ] || fail "UDP books: $lost datagrams lost, only $drops drops counted"
nr=$(grep '"type":"total"' "$WORK/r1.out" | python3 -c "import json,sys; print(json.loads(sys.stdin.read())['l3']['not_routed'])")
pass=$(grep '"type":"total"' "$WORK/r1.out" | python3 -c "import json,sys; print(sum(s['pass'] for s in json.loads(sys.stdin.read())['steer']))")
[ "$pass" -gt 0 ] || fail "r1's steering handed nothing to the kernel (ARP, TTL 1 at least)"
res=$(grep '"type":"total"' "$WORK/r1.out" | python3 -c "import json,sys; print(json.loads(sys.stdin.read())['l3']['resolves'])")
[ "$res" -gt 0 ] || fail "r1 never asked the kernel to resolve a next hop"
refused=$(grep '"type":"total"' "$WORK/r1.out" | python3 -c "import json,sys; print(json.loads(sys.stdin.read())['l3']['resolve_failed'])")
[ "$refused" = 0 ] || fail "r1: the kernel refused $refused resolution requests"
echo "   books: lost $lost <= counted $drops (server socket $sockdrops); r1 to the kernel $pass, not routed: $nr"
log "ok"
