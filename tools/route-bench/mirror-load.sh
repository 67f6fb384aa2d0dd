#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The router's netlink mirror (apps/xdp-fwd/nlmirror.c) with a full Internet table: loads
# BGP-like prefixes (default 1,000,000 IPv4, about 60 % /24, and 250,000 IPv6, mostly /48 and
# /32) into a fresh namespace's kernel table with ip -batch, through four next hops per family
# on veth links, then times the mirror's initial dump of what the kernel holds and the apply
# latency of route changes with the table loaded (netlink message received -> LPM updated).
# With --flap, the probe then times a link going down (n3, a quarter of the routes through
# it): until the mirror's IPv4 routes through it are gone, which the kernel removes without a
# message, and until IPv6's deletions are applied; the link, its routes and neighbours are then
# restored. --probe BIN (repeatable) runs each probe in turn on the same loaded table (e.g. two
# builds, before and after a change), alternating the changes' direction.
# A benchmark, not a test: it prints figures, it asserts nothing.
#
#   tools/route-bench/mirror-load.sh [--v4 N] [--v6 N] [--changes N] [--flap] [--probe BIN]... [--build DIR]
#   tools/route-bench/mirror-load.sh --emit DIR [--v4 N] [--v6 N]   only write the tables
#
# --emit writes the tables and their next hops' links as ip -batch files (DIR/v4, DIR/v6,
# DIR/links) and stops: tools/fwd-bench loads them into its router.
#
# Needs root; everything lives in a namespace of its own (unshare), gone at exit. The probe is
# the mirror test program's bench mode (DIR/test/fwd/fwd_mirror_test: a build with tests).
set -euo pipefail

v4=1000000 v6=250000 changes=2000 build=${UMEM_BUILD_DIR:-build} emit="" flap='' probes=()
args=("$@")
while [ $# -gt 0 ]; do
	case "$1" in
	--v4) v4=$2; shift 2 ;;
	--v6) v6=$2; shift 2 ;;
	--changes) changes=$2; shift 2 ;;
	--build) build=$2; shift 2 ;;
	--emit) emit=$2; shift 2 ;;
	--flap) flap=--flap; shift ;;
	--probe) probes+=("$(realpath "$2")"); shift 2 ;;
	-h|--help) sed -n '3,22p' "$0"; exit 0 ;;
	*) echo "mirror-load: unknown argument '$1' (--help)" >&2; exit 2 ;;
	esac
done
# Prefix lengths as in a BGP table (the IPv4 one after CIDR-report's shape, IPv6's mostly /48
# and /32); random prefixes, unique, public ranges only, a fixed seed.
gen_table() { # DIR: DIR/v4, DIR/v6 (ip -batch lines through the next hops 10.255.N.2 and
	# 2001:db8:ffff:N::2, N = 0..3), DIR/links (the links n0..n3 to them, each a veth pair
	# with its peer p0..p3, and the next hops as permanent neighbours; IPv6 only with IPv6
	# routes), DIR/changes and DIR/changes-back (the same prefixes moved back)
	python3 - "$v4" "$v6" "$changes" "$1" <<'EOF'
import random, sys, ipaddress
n4, n6, nch, work = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
r = random.Random(40)
def pick(mix):
    x = r.random()
    for p, l in mix:
        if x < p:
            return l
        x -= p
    return mix[-1][1]
mix4 = [(0.60, 24), (0.09, 23), (0.10, 22), (0.05, 21), (0.05, 20), (0.03, 19), (0.03, 18),
        (0.01, 17), (0.03, 16), (0.01, 15)]
mix6 = [(0.55, 48), (0.15, 32), (0.06, 44), (0.06, 40), (0.05, 36), (0.05, 29), (0.04, 46),
        (0.04, 47)]
seen4, seen6 = {}, {} # prefix -> its next hop
with open(work + "/links", "w") as f:
    for i in range(4):
        f.write("link add n%d type veth peer name p%d\nlink set n%d up\nlink set p%d up\n" % (i, i, i, i))
        f.write("addr add 10.255.%d.1/24 dev n%d\n" % (i, i))
        f.write("neigh replace 10.255.%d.2 lladdr 02:00:00:00:ff:0%d dev n%d nud permanent\n" % (i, i, i))
        if n6:
            f.write("addr add 2001:db8:ffff:%d::1/64 dev n%d nodad\n" % (i, i))
            f.write("neigh replace 2001:db8:ffff:%d::2 lladdr 02:00:00:00:ff:1%d dev n%d nud permanent\n" % (i, i, i))
with open(work + "/v4", "w") as f:
    while len(seen4) < n4:
        l = pick(mix4)
        a = r.getrandbits(32)
        if (a >> 24) in (0, 10, 127) or (a >> 24) >= 224:
            continue
        a &= (0xffffffff << (32 - l)) & 0xffffffff
        if (a, l) in seen4:
            continue
        seen4[(a, l)] = len(seen4) % 4
        f.write("route add %s/%d via 10.255.%d.2\n" % (ipaddress.IPv4Address(a), l, seen4[(a, l)]))
with open(work + "/v6", "w") as f:
    while len(seen6) < n6:
        l = pick(mix6)
        a = (0x2 << 124) | r.getrandbits(125) # 2000::/3
        a &= ((1 << 128) - 1) ^ ((1 << (128 - l)) - 1)
        if (a, l) in seen6:
            continue
        seen6[(a, l)] = len(seen6) % 4
        f.write("route add %s/%d via 2001:db8:ffff:%d::2\n" % (ipaddress.IPv6Address(a), l, seen6[(a, l)]))
# Changes: half IPv4, half IPv6, each an existing prefix moved to another next hop.
s4, s6 = list(seen4.items())[: nch // 2], list(seen6.items())[: nch - nch // 2]
for name, d in (("changes", 1), ("changes-back", 0)):
    with open(work + "/" + name, "w") as f:
        for (a, l), g in s4:
            f.write("route replace %s/%d via 10.255.%d.2\n" % (ipaddress.IPv4Address(a), l, (g + d) % 4))
        for (a, l), g in s6:
            f.write("route replace %s/%d via 2001:db8:ffff:%d::2\n" % (ipaddress.IPv6Address(a), l, (g + d) % 4))
EOF
}

if [ -n "$emit" ]; then
	mkdir -p "$emit"
	gen_table "$emit"
	exit 0
fi
[ ${#probes[@]} -gt 0 ] || probes=("${MIRROR_PROBE:-$build/test/fwd/fwd_mirror_test}")
for probe in "${probes[@]}"; do
	[ -x "$probe" ] || { echo "mirror-load: no probe at $probe (build with tests, or --build DIR)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "mirror-load: needs root (network namespaces)" >&2; exit 1; }
if [ -z "${MIRROR_LOAD_NS:-}" ]; then
	exec unshare --net env MIRROR_LOAD_NS=1 "$0" "${args[@]}"
fi

work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
gen_table "$work"

ip link set lo up
ip -batch "$work/links"

t0=$(date +%s.%N)
ip -force -batch "$work/v4"
t1=$(date +%s.%N)
ip -force -batch "$work/v6"
t2=$(date +%s.%N)
k4=$(ip -4 route show table main | wc -l)
k6=$(ip -6 route show table main | wc -l)
printf 'kernel: %d IPv4 routes loaded in %.1f s, %d IPv6 in %.1f s (ip -batch); main table holds %d + %d\n' \
	"$v4" "$(echo "$t1 - $t0" | bc)" "$v6" "$(echo "$t2 - $t1" | bc)" "$k4" "$k6"

await_line() { # the probe's output line $1 (or its end)
	for _ in $(seq 6000); do
		grep -q "^$1" "$work/probe" && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
run=0
for probe in "${probes[@]}"; do
	[ ${#probes[@]} -gt 1 ] && echo "probe: $probe"
	"$probe" bench --changes "$changes" $flap >"$work/probe" 2>&1 &
	pid=$!
	await_line ready || { cat "$work/probe"; echo "mirror-load: the probe did not load the table" >&2; exit 1; }
	ip -force -batch "$work/$([ $((run % 2)) = 0 ] && echo changes || echo changes-back)"
	if [ -n "$flap" ] && await_line flap; then
		ip link set n3 down
	fi
	wait "$pid" || true
	pid=
	grep -vE '^(ready|flap)$' "$work/probe"
	if [ -n "$flap" ]; then
		# What the kernel removed with n3: its routes, its IPv6 address, its neighbours (the
		# links file's lines of n3, replayed).
		ip link set n3 up
		grep -E 'dev n3( |$)' "$work/links" | sed 's/^addr add/addr replace/' | ip -force -batch - 2>/dev/null || true
		grep -h 'via 10.255.3.2$' "$work/v4" | sed 's/^route add/route replace/' | ip -force -batch - 2>/dev/null || true
		grep -h 'via 2001:db8:ffff:3::2$' "$work/v6" | sed 's/^route add/route replace/' | ip -force -batch - 2>/dev/null || true
	fi
	run=$((run + 1))
done
lscpu | awk -F: '/^Model name/ { m = $2 } /^CPU family/ { f = $2 } /^Model:/ { n = $2 }
	END { gsub(/^ +/, "", m); gsub(/ /, "", f); gsub(/ /, "", n); printf "cpu: %s, family %s model %s, %d CPUs\n", m, f, n, '"$(nproc)"' }'
