#!/usr/bin/env bash
# xsk-gen end to end: gen -> sink over a veth pair (counts match, no loss at a moderate rate,
# every byte checked), the sink's accounting on crafted streams sent through real ports (loss,
# late frames, duplicates, another stream), then gen -> xdp-fwd (wire mode) -> sink across
# tools/topo.sh's three namespaces with addresses derived from the interface and ARP.
set -uo pipefail
SRC=${UMEM_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${UMEM_BUILD_DIR:-$SRC/build}
GEN=$BUILD/tools/xsk-gen/xsk-gen
FWD=$BUILD/apps/xdp-fwd/xdp-fwd
TOPO=$SRC/tools/topo.sh
PREFIX="gn-$$"

# shellcheck source=../common/netns.sh
. "$SRC/test/common/netns.sh"
netns_init gn
netns_topo "$TOPO" "$PREFIX"
netns_workdir WORK

fail() { echo "FAIL: $*" >&2; for f in "$WORK"/*.out "$WORK"/*.err; do [ -s "$f" ] && { echo "--- $f"; cat "$f"; } >&2; done; exit 1; }
log() { echo "== $*"; }
[ -x "$GEN" ] || fail "xsk-gen not built at $GEN"

# shellcheck source=../common/xsk_gen.sh
. "$SRC/test/common/xsk_gen.sh"


log "veth pair: 20000 frames at 20 kpps arrive, in order, intact"
netns_add A
netns_add B
netns_veth "$A" eth0 "$B" eth0 || fail "veth"
ip -n "$A" addr add 10.78.0.1/24 dev eth0
ip -n "$B" addr add 10.78.0.2/24 dev eth0
sink_start "$B" --idle 1
ip netns exec "$A" "$GEN" gen -i eth0 --dst-ip 10.78.0.2 --count 20000 --rate 20000 --json \
	>"$WORK/gen.out" 2>"$WORK/gen.err" || fail "gen failed"
sink_wait
expect "$WORK/gen.out" frames 20000
expect "$WORK/gen.out" frames_out 0
expect_all "$WORK/sink.out" frames:20000 expected:20000 lost:0 reordered:0 duplicates:0 bad:0 frames_out:0
# The destination MAC came from ARP (resolved before the generator's port existed).
ip -n "$A" neigh show 10.78.0.2 | grep -q "$(ip -n "$B" link show eth0 | awk '/ether/ {print $2}')" ||
	fail "no ARP entry for the sink's host"

log "crafted streams: loss, late frames, duplicates and another stream are told apart"
# This sink also asks for generic XDP, which veth would not pick by itself.
sink_start "$B" --count 1010 --xdp-mode skb
ip -n "$B" -d link show eth0 | grep -q xdpgeneric || fail "sink --xdp-mode skb: no generic XDP program on eth0"
send() { ip netns exec "$A" "$GEN" gen -i eth0 --dst-ip 10.78.0.2 --rate 20000 "$@" >>"$WORK/gen.out" 2>&1 || fail "gen $*"; }
send --stream 77 --seq 500 --count 500  # 500..999: 0..499 missing
send --stream 78 --count 5              # another run's frames
send --stream 77 --seq 500 --count 10   # 500..509 again
send --stream 77 --seq 2000 --count 10  # 1000..1999 missing
send --stream 77 --seq 0 --count 500    # 0..499 late
sink_wait
expect_all "$WORK/sink.out" stream:77 frames:1010 expected:2010 lost:1000 reordered:500 duplicates:10 other_stream:5 bad:0

log "bad arguments: a clear message, nothing attached"
out=$(ip netns exec "$A" "$GEN" gen -i eth0 --dst-ip 10.78.0.2 --size 1600 2>&1) && fail "MTU-sized frame accepted"
echo "$out" | grep -q "exceeds eth0's MTU 1500" || fail "message: $out"
out=$(ip netns exec "$A" "$GEN" gen -i nosuch0 --dst-ip 10.78.0.2 2>&1) && fail "missing interface accepted"
echo "$out" | grep -q "nosuch0" || fail "message: $out"
out=$("$GEN" gen -i eth0 --mix 64:0 2>&1) && fail "weight 0 accepted"
echo "$out" | grep -q "weight" || fail "message: $out"
out=$("$GEN" sink -i eth0 --rate 5 2>&1) && fail "sink --rate accepted"
# The size limit is one number: --help states it, the largest size passes the parser, one more
# is refused with a message about --size (not --mix).
"$GEN" --help | grep -q -- "--size BYTES .*60\.\.3840" || fail "--help does not give the size range 60..3840"
out=$("$GEN" gen -i eth0 --size 3841 2>&1) && fail "--size 3841 accepted"
echo "$out" | grep -q -- "--size: '3841' is out of range 60..3840" || fail "message: $out"
out=$(ip netns exec "$A" "$GEN" gen -i eth0 --dst-ip 10.78.0.2 --size 3840 2>&1) && fail "--size 3840 above the MTU accepted"
echo "$out" | grep -q "exceeds eth0's MTU" || fail "--size 3840 was not refused by the MTU check: $out"
! ip -n "$A" -d link show eth0 | grep -q "prog/xdp" || fail "an XDP program stayed on $A"
! ip -n "$B" -d link show eth0 | grep -q "prog/xdp" || fail "an XDP program stayed on $B"

if [ ! -x "$FWD" ]; then
	log "skipped: xdp-fwd not built"
	exit 0
fi
log "through xdp-fwd (wire mode): client -> middle -> server, imix, addresses derived"
eval "$("$TOPO" up --prefix "$PREFIX" --hosts 2)" || fail "topo.sh up"
netns_bg FWD_PID "$TOPO_MID" "$FWD" -i "$TOPO_IF0" -i "$TOPO_IF1" --mode wire --json >"$WORK/fwd.out" 2>"$WORK/fwd.err"
wait_for 10 grep -q "Ctrl-C stops" "$WORK/fwd.err" || fail "xdp-fwd did not start"
# First run resolves the server's MAC through the forwarder; the second finds the client's only
# neighbour and takes it as the destination.
for dst in "--dst-ip $TOPO_IP1" ""; do
	sink_start "$TOPO_H1" --idle 1
	# shellcheck disable=SC2086
	ip netns exec "$TOPO_H0" "$GEN" gen -i eth0 $dst --mix imix --count 20000 --rate 20000 --json \
		>"$WORK/gen.out" 2>"$WORK/gen.err" || fail "gen through xdp-fwd"
	sink_wait
	expect_all "$WORK/sink.out" frames:20000 lost:0 reordered:0 duplicates:0 bad:0 frames_out:0
	expect "$WORK/sink.out" bytes "$(json "$WORK/gen.out" bytes)" 
done
kill -INT "$FWD_PID"
wait "$FWD_PID" || fail "xdp-fwd exited with $?"
netns_stop "$FWD_PID"
log "ok"
