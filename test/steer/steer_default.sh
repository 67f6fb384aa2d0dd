#!/usr/bin/env bash
# The default action of a program attached with default options passes what no rule claims to
# the kernel: with one rule taking UDP port 5001 to a socket registered at index 0 (the index of
# the ingress queue, which a "queue" default would also send to), the host still answers ARP and
# ping, and the claimed port still reaches the socket.
set -uo pipefail
SRC=${UMEM_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
B=${UMEM_BUILD_DIR:?}
RX=$B/test/steer/steer_xsk_rx
CLI=$B/tools/umem-steer/umem-steer
# shellcheck source=../common/netns.sh
. "$SRC/test/common/netns.sh"

netns_init sdf
netns_workdir W
fail() { echo "FAIL: $*" >&2; for f in "$W"/*; do echo "--- $f" >&2; head -c 4000 "$f" >&2; done; exit 1; }
netns_add NA || fail "netns"
netns_add NB || fail "netns"
netns_veth "$NA" a0 "$NB" b0 || fail "veth"
ip -n "$NA" addr add 10.214.0.1/24 dev a0
ip -n "$NB" addr add 10.214.0.2/24 dev b0
netns_bg RXP "$NA" "$RX" a0 "udp dport 5001 -> sock 0" >"$W/rx.out" 2>"$W/rx.err"
wait_for 10 grep -q ready "$W/rx.out" || fail "receiver did not start"
# No static neighbour: the first ping needs ARP answered by A's kernel.
ip netns exec "$NB" ping -c 3 -i 0.2 -W 2 -q 10.214.0.1 >"$W/ping.out" 2>&1 ||
	fail "ping through the steered interface (default options) failed"
ip -n "$NB" neigh show 10.214.0.1 | grep -q lladdr || fail "ARP did not resolve"
ip netns exec "$NA" "$CLI" show a0 >"$W/show.out" 2>&1 || fail "umem-steer show"
grep -Eq 'default -> pass ' "$W/show.out" || fail "default action is not pass"
ip netns exec "$NB" bash -c 'for i in 1 2 3; do echo x > /dev/udp/10.214.0.1/5001; done'
wait_for 5 grep -q "sock0=3 sock1=0 wrong=0" "$W/rx.out" || fail "the claimed port did not reach its socket"
echo ok
