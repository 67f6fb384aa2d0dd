#!/usr/bin/env bash
# The forwarding topology: N host namespaces, each joined by one veth pair to a middle namespace
# that holds the other ends (m0, m1, ...) for a forwarder such as xdp-fwd.
#
#   <P>-h0 (client)  eth0 ──veth── m0 ┐
#                                     ├ <P>-mid   (xdp-fwd -i m0 -i m1 ...)
#   <P>-h1 (server)  eth0 ──veth── m1 ┘
#
#   topo.sh up   --prefix P [--hosts N] [--mtu M] [--queues Q] [--net 10.77.0] [--routed]
#   topo.sh down --prefix P                                                       remove it
#   topo.sh run  --prefix P [options] -- CMD [ARGS]   up, run CMD, down on every exit (Ctrl-C too)
#
# Host k has address NET.(k+1)/24 on its eth0 and MAC 02:77:00:00:00:(k+1) (hex), so tests can
# predict them; the middle namespace has no addresses (it is a pure L2 hop). With --routed the
# middle is a router instead: host k is alone on subnet NET+k (10.77.0 + k: 10.77.k.2/24, the
# third octet counting up), the middle's mk is its gateway there (.1, MAC 02:77:00:00:01:(k+1)),
# hosts route everything through it, both ends hold each other as static (permanent)
# neighbours, and the middle forwards (net.ipv4.ip_forward=1, in that namespace only).
# IPv6 is off in every
# namespace so that router solicitations and MLD reports do not disturb frame counters.
# Interface names live inside the private namespaces, so only the namespace names (all starting
# with the prefix) must be unique: parallel users pass distinct prefixes (e.g. fw-$$).
# `up` prints shell assignments (TOPO_MID=..., TOPO_H0=..., TOPO_IP0=..., TOPO_MAC0=...; with
# --routed also TOPO_GW0=... and TOPO_GWMAC0=..., host 0's gateway and its MAC) for eval.
#
# Two veth facts shape the set-up:
#  - TCP through an AF_XDP hop needs TX checksum offload off on the sending ends (an XDP frame
#    loses CHECKSUM_PARTIAL, so the receiver would drop it): `ethtool -K eth0 tx off` on hosts.
#  - a veth receives frames XDP_REDIRECTed by its peer (ndo_xdp_xmit: the benchmarks' devmap
#    baseline) only with NAPI on its side, i.e. an XDP program or GRO on (Linux commit
#    8267fc71abb2). GRO on the host ends turns it on; AF_XDP's own TX (an skb) needs neither.
set -euo pipefail

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'
	exit "${1:-0}"
}
die() { echo "topo.sh: $*" >&2; exit 2; }

cmd=${1:-}
case "$cmd" in
up|down|run) shift ;;
-h|--help|help) usage 0 ;;
"") usage 2 ;;
*) die "unknown command '$cmd' (up, down, run; see --help)" ;;
esac
prefix="" hosts=2 mtu=1500 queues=1 net=10.77.0 routed=""
while [ $# -gt 0 ]; do
	case "$1" in
	--prefix) prefix=${2:?}; shift 2 ;;
	--hosts) hosts=${2:?}; shift 2 ;;
	--mtu) mtu=${2:?}; shift 2 ;;
	--queues) queues=${2:?}; shift 2 ;;
	--net) net=${2:?}; shift 2 ;;
	--routed) routed=1; shift ;;
	--) shift; break ;;
	-h|--help) usage 0 ;;
	*) die "unknown option '$1' (see --help)" ;;
	esac
done
[ -n "$prefix" ] || die "--prefix is required (namespace names start with it; use one per invocation)"
[[ "$prefix" =~ ^[A-Za-z0-9_-]{1,20}$ ]] || die "--prefix '$prefix': 1..20 characters of [A-Za-z0-9_-]"
[[ "$hosts" =~ ^[0-9]+$ ]] && [ "$hosts" -ge 1 ] && [ "$hosts" -le 16 ] || die "--hosts '$hosts': 1..16"
[[ "$mtu" =~ ^[0-9]+$ ]] && [ "$mtu" -ge 68 ] && [ "$mtu" -le 65535 ] || die "--mtu '$mtu': 68..65535"
[[ "$queues" =~ ^[0-9]+$ ]] && [ "$queues" -ge 1 ] && [ "$queues" -le 64 ] || die "--queues '$queues': 1..64"
[[ "$net" =~ ^(10|192)\.[0-9]+\.[0-9]+$ ]] || die "--net '$net': three octets of a private /24, e.g. 10.77.0"
[ -z "$routed" ] || [ $((${net##*.} + hosts)) -le 256 ] || die "--routed --net '$net' --hosts $hosts: the subnets pass x.x.255"

mid="$prefix-mid"
host_ns() { echo "$prefix-h$1"; }
host_mac() { printf '02:77:00:00:00:%02x' $(($1 + 1)); }
gw_mac() { printf '02:77:00:00:01:%02x' $(($1 + 1)); }
# Host k's address (and with --routed its gateway's): one /24 for all, or subnet NET+k each.
host_ip() { if [ -n "$routed" ]; then echo "${net%.*}.$((${net##*.} + $1)).2"; else echo "$net.$(($1 + 1))"; fi; }
gw_ip() { echo "${net%.*}.$((${net##*.} + $1)).1"; }

# Every namespace whose name starts with "$prefix-": only what this prefix created.
our_namespaces() {
	ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${prefix}-(mid|h[0-9]+)\$" || true
}

topo_down() {
	local ns pids
	for ns in $(our_namespaces); do
		# Processes left in our namespaces (a forwarder, iperf3) were started in them by our
		# users; a namespace only dies with its last process.
		pids=$(ip netns pids "$ns" 2>/dev/null || true)
		[ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
	done
	# Deleting the middle namespace destroys every veth pair (and any XDP program on them).
	for ns in $(our_namespaces); do
		ip netns del "$ns" 2>/dev/null || true
	done
}

topo_up() {
	[ "$(id -u)" = 0 ] || die "needs root (namespaces and veths)"
	[ -z "$(our_namespaces)" ] || die "namespaces with prefix '$prefix' exist already: topo.sh down --prefix $prefix"
	# A failure half-way must not leave a partial topology.
	trap 'topo_down' ERR INT TERM
	ip netns add "$mid"
	ip netns exec "$mid" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	ip -n "$mid" link set lo up
	[ -z "$routed" ] || ip netns exec "$mid" sysctl -qw net.ipv4.ip_forward=1
	local k ns mac
	for ((k = 0; k < hosts; k++)); do
		ns=$(host_ns $k)
		mac=$(host_mac $k)
		ip netns add "$ns"
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
		ip -n "$ns" link set lo up
		ip -n "$mid" link add "m$k" numtxqueues "$queues" numrxqueues "$queues" type veth \
			peer name eth0 netns "$ns" numtxqueues "$queues" numrxqueues "$queues"
		ip -n "$mid" link set "m$k" mtu "$mtu" up
		ip -n "$ns" link set eth0 address "$mac" mtu "$mtu" up
		ip -n "$ns" addr add "$(host_ip $k)/24" dev eth0
		ip netns exec "$ns" ethtool -K eth0 tx off gro on >/dev/null
		if [ -n "$routed" ]; then
			ip -n "$mid" link set "m$k" address "$(gw_mac $k)"
			ip -n "$mid" addr add "$(gw_ip $k)/24" dev "m$k"
			ip -n "$mid" neigh replace "$(host_ip $k)" lladdr "$mac" dev "m$k" nud permanent
			ip -n "$ns" neigh replace "$(gw_ip $k)" lladdr "$(gw_mac $k)" dev eth0 nud permanent
			ip -n "$ns" route add default via "$(gw_ip $k)"
		fi
	done
	trap - ERR INT TERM
	echo "TOPO_PREFIX=$prefix"
	echo "TOPO_MID=$mid"
	echo "TOPO_HOSTS=$hosts"
	for ((k = 0; k < hosts; k++)); do
		echo "TOPO_H$k=$(host_ns $k)"
		echo "TOPO_IP$k=$(host_ip $k)"
		echo "TOPO_MAC$k=$(host_mac $k)"
		echo "TOPO_IF$k=m$k"
		[ -z "$routed" ] || printf "TOPO_GW%d=%s\nTOPO_GWMAC%d=%s\n" $k "$(gw_ip $k)" $k "$(gw_mac $k)"
	done
}

case "$cmd" in
up) topo_up ;;
down) topo_down ;;
run)
	[ $# -gt 0 ] || die "run: give a command after --"
	child=""
	# The command runs in the background so that a signal interrupts `wait` at once; the trap
	# stops the command (by its PID) before the namespaces go.
	on_exit() {
		[ -z "$child" ] || kill -TERM "$child" 2>/dev/null || true
		[ -z "$child" ] || wait "$child" 2>/dev/null || true
		topo_down
	}
	trap on_exit EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	eval "$(topo_up)"
	export TOPO_PREFIX TOPO_MID TOPO_HOSTS
	for ((k = 0; k < hosts; k++)); do
		export "TOPO_H$k" "TOPO_IP$k" "TOPO_MAC$k" "TOPO_IF$k"
		[ -z "$routed" ] || export "TOPO_GW$k" "TOPO_GWMAC$k"
	done
	"$@" &
	child=$!
	rc=0
	wait "$child" || rc=$?
	child=""
	exit "$rc"
	;;
esac
