# The router topologies of the --mode l3 tests (sourced after test/common/netns.sh): subnet N
# is 10.N.0.0/24 with 2001:db8:N::/64 beside it; host H of it has 10.N.0.H and 2001:db8:N::H.

# addr NS CIDR IF [6]: an address (6: IPv6 without duplicate address detection, usable at once).
addr() { ip -n "$1" addr add "$2" dev "$3" ${4:+nodad}; }

# l3_addrs NS IF N H: host H's IPv4 and IPv6 addresses of subnet N on IF.
l3_addrs() {
	addr "$1" "10.$3.0.$4/24" "$2"
	addr "$1" "2001:db8:$3::$4/64" "$2" 6
}

# l3_host NS N: an endpoint (eth0, host 2 of subnet N) whose default routes lead to host 1 of
# it. It completes its own checksums: a router forwards bytes (a veth's partial checksum would
# reach the far end unfinished).
l3_host() {
	l3_addrs "$1" eth0 "$2" 2
	ip netns exec "$1" ethtool -K eth0 tx off >/dev/null
	ip -n "$1" route add default via "10.$2.0.1"
	ip -n "$1" -6 route add default via "2001:db8:$2::1"
}

# l3_router NS [SYSCTL=VALUE...]: IPv4 and IPv6 forwarding on (and the other settings given).
l3_router() {
	local ns=$1
	shift
	ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 "$@"
}
