#!/usr/bin/env bash
# The embedding example at work: xdp-reflect, built against the INSTALLED libumem (pkg-config
# build and find_package build), runs on one end of a veth pair; the peer namespace checks that
# what it sends comes back. With the argument 'intree' it runs the in-tree build instead (so the
# sanitizer builds, which cannot install a usable library, run the reflector too).
#
# Why it is deterministic: with --swap-ip the reflected frame is the answer a host at the target
# address would send. A UDP datagram to 10.211.88.1:7 comes back from 10.211.88.1:7 to the
# sender's own socket with the same payload (checksums survive the swap; the sender's TX
# checksum offload is on, a veth's default, so the reflector completes the partial checksum its
# datagrams carry, or the sender's kernel would drop them). A ping comes back as an echo request to
# the peer, whose kernel answers; that reply is reflected into the echo reply ping waits for.
# The peer knows the reflector's MAC statically (an ARP request is broadcast, and a reflector
# drops frames with a group destination), and IPv6 is off so no stray frames are counted.
set -u
. "$UMEM_SOURCE_DIR/test/common/netns.sh"
. "$UMEM_SOURCE_DIR/test/install/common.sh"
netns_init pk
work=$(mktemp -d)
trap 'rc=$?; netns_cleanup; rm -rf "$work"; exit $rc' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
py=$(command -v /usr/bin/python3 || command -v python3) || fail "python3 missing (tools/setup.sh)"
far=10.211.88.1 near=10.211.88.2 datagrams=5 pings=3
expect=$((datagrams + 2 * pings))

if [ "${1:-installed}" = intree ]; then
	variants=(intree)
	LIBDIR=
else
	variants=(pc cmake)
	install_prefix "$work" || fail "install"
	build_reflect "$work" || fail "building xdp-reflect against the installed library"
fi

netns_add R && netns_add P || fail "namespaces"
for ns in "$R" "$P"; do ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1; done
netns_veth "$R" v0 "$P" v1 || fail "veth"
ip -n "$P" addr add "$near/24" dev v1
ip netns exec "$P" ethtool -k v1 | grep -q '^tx-checksumming: on' || fail "v1: TX checksum offload is not on"
mac=$(ip -n "$R" -br link show v0 | awk '{print $3}')
ip -n "$P" neigh replace "$far" lladdr "$mac" dev v1 nud permanent

udp_echo() { # sends $datagrams datagrams, each must come back from $far:7 with its payload
	ip netns exec "$P" "$py" - "$near" "$far" "$datagrams" "$1" <<'PY'
import socket, sys
near, far, n, tag = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((near, 0))
s.settimeout(3)
for i in range(n):
    msg = f"{tag}-{i}".encode()
    s.sendto(msg, (far, 7))
    data, src = s.recvfrom(2048)
    if data != msg or src != (far, 7):
        sys.exit(f"sent {msg!r}, got {data!r} from {src}")
print(f"udp: {n} datagrams reflected")
PY
}

for variant in "${variants[@]}"; do
	case $variant in
	pc) bin=$REFLECT_PC ;;
	cmake) bin=$REFLECT_CMAKE ;;
	intree) bin=$UMEM_BUILD_DIR/apps/xdp-reflect/xdp-reflect ;;
	esac
	log=$work/$variant.log
	# The in-tree run stops by itself (--count, exactly the frames sent); the others by SIGTERM.
	# It also asks for generic XDP (--xdp-mode skb), which veth would not pick by itself.
	stop=(--count $expect --xdp-mode skb)
	[ $variant = intree ] || stop=()
	netns_bg job "$R" env LD_LIBRARY_PATH="$LIBDIR" "$bin" -i v0 --swap-ip "${stop[@]}" >"$log" 2>&1
	wait_for 10 grep -q ready "$log" || { cat "$log"; fail "$variant: reflector not ready"; }
	want=native
	[ $variant = intree ] && want=generic
	grep -q "ready on v0 queue 0 (.*, $want XDP)" "$log" || { cat "$log"; fail "$variant: not in $want XDP mode"; }
	[ $want = generic ] && { ip -n "$R" -d link show v0 | grep -q "xdpgeneric" ||
		fail "$variant: --xdp-mode skb, but v0 has no xdpgeneric program: $(ip -n "$R" -d link show v0)"; }
	udp_echo "pk-$variant" || { cat "$log"; fail "$variant: UDP not reflected"; }
	ip netns exec "$P" ping -q -c $pings -i 0.2 -W 3 "$far" >/dev/null ||
		{ cat "$log"; fail "$variant: ping not answered"; }
	if [ $variant = intree ]; then
		wait_for 5 grep -q "^xdp-reflect: reflected" "$log" || fail "$variant: still running after --count"
	else
		kill -TERM -- "-$job"
	fi
	wait "$job"
	rc=$?
	netns_stop "$job"
	cat "$log"
	[ "$rc" = 0 ] || fail "$variant: reflector exited $rc"
	# Every datagram once, every ping twice (the request, and the peer's reply).
	n=$(sed -n 's/.*reflected \([0-9]*\),.*/\1/p' "$log")
	[ "${n:-0}" -ge $expect ] || fail "$variant: reflected ${n:-?} frames, expected at least $expect"
	grep -q "buffers not returned 0" "$log" || fail "$variant: buffers not returned"
done
echo "reflect: xdp-reflect (${variants[*]} build) answered UDP and ping"
