#!/usr/bin/env bash
# xdp-fwd --mode l3: the ICMP errors only xdp-fwd can send (the kernel never sees the frames).
#
#   client --(10.1.0.0/24, MTU 1500)-- r --(10.2.0.0/24, MTU 1280)-- server
# (and 2001:db8:N::/64 beside each). Checks: `ping -M do -s 1472` gets "Frag needed" with
# mtu 1280 from r and the client's route cache learns it; IPv6 `ping -s 1400` gets "Packet too
# big" and the client's next pings fit; no route gets net unreachable (IPv6: no route), an
# unreachable route host unreachable, a prohibit route "Packet filtered" (administratively
# prohibited), a blackhole nothing; a flood of unroutable datagrams gets at most burst + rate
# x time errors (the namespace's icmp_msgs_per_sec/icmp_msgs_burst), the rest counted limited,
# and every one of them counted as not routed; the metrics say the same counts as the JSON.
SRC=${UMEM_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${UMEM_BUILD_DIR:-$SRC/build}
FWD=$BUILD/apps/xdp-fwd/xdp-fwd
set -uo pipefail
# shellcheck source=../common/netns.sh
. "$SRC/test/common/netns.sh"
# shellcheck source=l3_lib.sh
. "$SRC/test/fwd/l3_lib.sh"

netns_init l3icmp
netns_workdir WORK
fail() {
	echo "FAIL: $*" >&2
	[ -s "$WORK/r.err" ] && { echo "--- xdp-fwd's stderr"; tail -5 "$WORK/r.err"; } >&2
	[ -s "$WORK/r.out" ] && { echo "--- its last l3 stats"; tail -1 "$WORK/r.out" | python3 -c "import json,sys; print(json.loads(sys.stdin.read()).get('l3'))"; } >&2
	exit 1
}
log() { echo "== $*"; }
[ -x "$FWD" ] || fail "xdp-fwd not built at $FWD"

netns_add C
netns_add R
netns_add S
netns_veth "$C" eth0 "$R" a0 || fail "veth"
netns_veth "$R" a1 "$S" eth0 || fail "veth"
ip -n "$R" link set a1 mtu 1280
ip -n "$S" link set eth0 mtu 1280

l3_host "$C" 1
l3_addrs "$R" a0 1 1
l3_addrs "$R" a1 2 1
l3_host "$S" 2
# r has no default route: 10.9/16 and 2001:db8:9::/48 have none. The special route types:
ip -n "$R" route add unreachable 10.8.0.0/16
ip -n "$R" route add prohibit 10.7.0.0/16
ip -n "$R" route add blackhole 10.6.0.0/16
ip -n "$R" -6 route add prohibit 2001:db8:7::/48
RATE=200
BURST=20
# The kernel's own ICMP error bound, per namespace: xdp-fwd reads it at start.
l3_router "$R" net.ipv4.icmp_msgs_per_sec=$RATE net.ipv4.icmp_msgs_burst=$BURST

ip -n "$R" link set lo up
netns_bg PID "$R" "$FWD" --mode l3 -i a0 -i a1 --json --interval 0.2 --metrics 127.0.0.1:9479 >"$WORK/r.out" 2>"$WORK/r.err"
wait_for 10 grep -q "Ctrl-C stops" "$WORK/r.err" || fail "xdp-fwd did not start: $(cat "$WORK/r.err")"

# l3 EXPR...: values from the last JSON line's l3 object (python expressions on l), on one
# line (one python for them all: it starts slowly on a loaded machine).
l3() {
	local IFS=,
	grep '"type":"interval"' "$WORK/r.out" | tail -1 |
		python3 -c "import json,sys; l=json.loads(sys.stdin.read())['l3']; print(*[$*])"
}
# settled: two stats lines after now (the counters include every frame sent before).
settled() {
	local n
	n=$(wc -l <"$WORK/r.out")
	wait_for 5 sh -c "[ \$(wc -l <'$WORK/r.out') -ge $((n + 2)) ]"
}

log "the path works (neighbours resolved)"
wait_for 10 ip netns exec "$C" ping -c 1 -W 1 10.2.0.2 >/dev/null || fail "no IPv4 path"
wait_for 10 ip netns exec "$C" ping -6 -c 1 -W 1 2001:db8:2::2 >/dev/null || fail "no IPv6 path"

log "IPv4 DF over the MTU: fragmentation needed, mtu 1280, learned by the sender"
ip netns exec "$C" ping -M do -s 1472 -c 1 -W 1 10.2.0.2 >"$WORK/frag" 2>&1
grep -q "From 10.1.0.1 .*Frag needed and DF set (mtu = 1280)" "$WORK/frag" || fail "no frag needed: $(cat "$WORK/frag")"
ip -n "$C" route get 10.2.0.2 >"$WORK/rt4"
grep -q "mtu 1280" "$WORK/rt4" || fail "the client's route cache has no PMTU: $(cat "$WORK/rt4")"
echo "   $(grep -o 'Frag needed.*' "$WORK/frag"); $(tr -s ' \n' ' ' <"$WORK/rt4")"

log "IPv6 over the MTU: packet too big, then the sender's packets fit"
ip netns exec "$C" ping -6 -s 1400 -c 1 -W 1 2001:db8:2::2 >"$WORK/ptb" 2>&1
grep -q "From 2001:db8:1::1 .*Packet too big: mtu=1280" "$WORK/ptb" || fail "no packet too big: $(cat "$WORK/ptb")"
ip -n "$C" -6 route get 2001:db8:2::2 >"$WORK/rt6"
grep -q "mtu 1280" "$WORK/rt6" || fail "the client's IPv6 route has no PMTU: $(cat "$WORK/rt6")"
ip netns exec "$C" ping -6 -s 1200 -c 2 -i 0.1 -W 1 2001:db8:2::2 >"$WORK/fit" 2>&1 || fail "-s 1200 after PTB: $(cat "$WORK/fit")"
# The client fragments to the learned MTU: the same 1400 bytes get through now.
ip netns exec "$C" ping -6 -s 1400 -c 2 -i 0.1 -W 1 2001:db8:2::2 >"$WORK/frag6" 2>&1 || fail "-s 1400 after PTB: $(cat "$WORK/frag6")"
echo "   $(grep -o 'Packet too big.*' "$WORK/ptb"); -s 1200 and -s 1400 (fragmented) pass"

log "no route, unreachable, prohibit, blackhole"
expect_icmp() { # WHAT PING-ARGS...: the ping's error line holds WHAT
	local what=$1
	shift
	ip netns exec "$C" ping -c 1 -W 1 "$@" >"$WORK/u" 2>&1
	grep -q "$what" "$WORK/u" || fail "ping $*: no '$what': $(cat "$WORK/u")"
	echo "   ping $*: $(grep -o "$what" "$WORK/u" | head -1) (from $(grep -o 'From [^ ]*' "$WORK/u" | head -1 | cut -d' ' -f2))"
}
expect_icmp "From 10.1.0.1 .*Destination Net Unreachable" 10.9.0.1
expect_icmp "From 10.1.0.1 .*Destination Host Unreachable" 10.8.0.1
expect_icmp "From 10.1.0.1 .*Packet filtered" 10.7.0.1
expect_icmp "From 2001:db8:1::1 .*Destination unreachable: No route" -6 2001:db8:9::1
expect_icmp "From 2001:db8:1::1 .*Destination unreachable: Administratively prohibited" -6 2001:db8:7::1
ip netns exec "$C" ping -c 1 -W 1 10.6.0.1 >"$WORK/bh" 2>&1
grep -q "From " "$WORK/bh" && fail "blackhole answered: $(cat "$WORK/bh")"
settled || fail "no stats"
read -r bh big unr < <(l3 "l['not_routed']['blackhole']" "l['icmp']['too_big']" "l['icmp']['unreachable']")
[ "$bh" = 1 ] || fail "blackhole: $bh frames counted"
[ "$big" = 2 ] || fail "$big too_big errors counted, 2 sent"
[ "$unr" = 5 ] || fail "$unr unreachable errors counted, 5 sent"
echo "   blackhole silent; sent: unreachable $unr, too_big $big"

log "the rate limit: a flood of unroutable datagrams, $RATE/s burst $BURST"
read -r b_noroute b_unreach b_limited < <(l3 "l['not_routed']['no_route']" "l['icmp']['unreachable']" "l['icmp']['limited']")
in_unreach() { ip netns exec "$C" awk '/^Icmp:/ { n++; if (n == 1) for (i = 1; i <= NF; i++) if ($i == "InDestUnreachs") f = i; if (n == 2) print $f }' /proc/net/snmp; }
c_unreach=$(in_unreach)
read -r sent ms < <(ip netns exec "$C" python3 -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
n, t0 = 0, time.monotonic()
while time.monotonic() - t0 < 2.0:
    for _ in range(100):
        try:
            s.sendto(b"x" * 32, ("10.9.0.1", 9))
            n += 1
        except OSError:
            pass
print(n, int((time.monotonic() - t0) * 1000))')
settled || fail "no stats"
read -r noroute unreach limited unsent < <(l3 "l['not_routed']['no_route']" "l['icmp']['unreachable']" "l['icmp']['limited']" "l['icmp']['unsent']")
noroute=$((noroute - b_noroute))
unreach=$((unreach - b_unreach))
limited=$((limited - b_limited))
got=$(($(in_unreach) - c_unreach))
# The frames reach xdp-fwd within the sending time and a little after (its RX ring's lag).
max=$((BURST + RATE * (ms + 500) / 1000))
min=$((RATE * ms / 2000))
secs="$((ms / 1000)).$(printf %03d $((ms % 1000)))"
echo "   sent $sent datagrams in ${secs}s: xdp-fwd counted $noroute without route, sent $unreach errors (bound $max), limited $limited; the client got $got"
[ "$sent" -gt $((RATE * 10)) ] || fail "the flood was too slow to test the limit ($sent datagrams)"
[ "$unreach" -le "$max" ] || fail "$unreach errors in ${secs}s: above $BURST + $RATE/s"
[ "$unreach" -ge "$min" ] || fail "only $unreach errors in ${secs}s at $RATE/s"
[ "$limited" -gt 0 ] || fail "nothing counted limited"
[ "$unsent" = 0 ] || fail "$unsent errors not sent (no source address?)"
# The books: every datagram that reached xdp-fwd without a route is an error or limited.
[ $((unreach + limited)) = "$noroute" ] || fail "books: $unreach sent + $limited limited != $noroute not routed"
[ "$got" = "$unreach" ] || fail "the client received $got of the $unreach errors sent"

log "the same counts in the metrics (a scrape of the settled stats)"
# metric NAME{LABELS}: its value in a scrape of r's --metrics.
metric() { ip netns exec "$R" curl -sf http://127.0.0.1:9479/metrics | awk -v k="$1" '$1 == k { print $2 }'; }
read -r t_noroute t_unreach t_limited < <(l3 "l['not_routed']['no_route']" "l['icmp']['unreachable']" "l['icmp']['limited']")
m_noroute=$(metric 'xdp_fwd_l3_not_routed_total{reason="no_route"}')
m_unreach=$(metric 'xdp_fwd_l3_icmp_errors_total{kind="unreachable"}')
m_limited=$(metric 'xdp_fwd_l3_icmp_limited_total')
echo "   no_route $m_noroute, unreachable sent $m_unreach, limited $m_limited (JSON: $t_noroute, $t_unreach, $t_limited)"
[ "$m_noroute" = "$t_noroute" ] && [ "$m_unreach" = "$t_unreach" ] && [ "$m_limited" = "$t_limited" ] ||
	fail "metrics and JSON differ"

kill -INT "$PID"
rc=0
wait "$PID" || rc=$?
netns_stop "$PID"
[ $rc = 0 ] || fail "xdp-fwd exited with $rc"
grep -q '"frames_out":0' "$WORK/r.out" || fail "frames still out"
! ip -n "$R" -d link show | grep -q "prog/xdp" || fail "an XDP program was left attached"
log "ok"
