#!/usr/bin/env bash
# The examples built against the INSTALLED libumem (pkg-config and find_package builds), run
# between namespaces:
#  - udp-responder (pkg-config build) on R's veth, the peer P's TX checksum offload on (a veth's
#    default): UDP port 7 answered byte-exact from R:7 (sizes 1..1400, odd and even), while
#    ping, ARP (no static neighbour) and the kernel's ICMP port unreachable for a closed UDP
#    port keep working, and it exits with every buffer back;
#  - mirror (find_package build): N frames sent into its input arrive on both outputs, exactly
#    once each, and it exits with frames still out 0.
# IPv6 is off in the namespaces so no stray frames are counted.
set -u
. "$UMEM_SOURCE_DIR/test/common/netns.sh"
. "$UMEM_SOURCE_DIR/test/install/common.sh"
netns_init ex
netns_workdir work
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.log; do [ -f "$f" ] && { echo "--- $f" >&2; cat "$f" >&2; }; done; exit 1; }
py=$(command -v /usr/bin/python3 || command -v python3) || fail "python3 missing (tools/setup.sh)"
install_prefix "$work" || fail "install"
build_examples "$work" || fail "building the examples against the installed library"
for b in "$work"/ex-pc/udp-responder "$work"/ex-pc/mirror "$work"/ex-cmake/udp-responder "$work"/ex-cmake/mirror; do
	readelf -d "$b" | grep -q 'NEEDED.*\[libumem.so.0\]' || fail "$b does not link libumem.so.0"
done

netns_add R && netns_add P || fail "namespaces"
for ns in "$R" "$P"; do ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1; done

echo "== udp-responder"
netns_veth "$R" v0 "$P" v1 || fail "veth"
ip -n "$R" addr add 10.215.0.1/24 dev v0
ip -n "$P" addr add 10.215.0.2/24 dev v1
ip netns exec "$P" ethtool -k v1 | grep -q '^tx-checksumming: on' || fail "v1: TX checksum offload is not on"
netns_bg resp "$R" env LD_LIBRARY_PATH="$LIBDIR" "$work/ex-pc/udp-responder" v0 >"$work/resp.log" 2>&1
wait_for 10 grep -q ready "$work/resp.log" || fail "udp-responder not ready"
ip netns exec "$P" "$py" - <<'PY' || fail "UDP echo, or the closed port's ICMP error"
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.215.0.2", 0))
s.settimeout(3)
for n in (1, 2, 17, 64, 512, 1399, 1400):
    msg = bytes((i * 7 + n) & 0xff for i in range(n))
    s.sendto(msg, ("10.215.0.1", 7))
    data, src = s.recvfrom(4096)
    if data != msg or src != ("10.215.0.1", 7):
        sys.exit(f"{n} bytes: got {len(data)} bytes from {src}")
# A closed port: the kernel's ICMP port unreachable, seen as ECONNREFUSED on a connected socket.
c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
c.settimeout(3)
c.connect(("10.215.0.1", 9))
c.send(b"x")
try:
    c.recv(64)
    sys.exit("closed port answered")
except ConnectionRefusedError:
    pass
print("udp: 7 datagrams echoed byte-exact; port 9 refused by the kernel")
PY
ip netns exec "$P" ping -q -c 3 -i 0.2 -W 2 10.215.0.1 >"$work/ping.log" 2>&1 || fail "ping through the responder's interface"
ip -n "$P" neigh show 10.215.0.1 | grep -q lladdr || fail "ARP did not resolve"
kill -TERM -- "-$resp"
wait_for 5 grep -q "buffers not returned" "$work/resp.log" || fail "udp-responder did not stop"
grep -q "answered 7, dropped 0, buffers not returned 0" "$work/resp.log" || fail "udp-responder's books"

echo "== mirror"
netns_veth "$R" i0 "$P" pi && netns_veth "$R" o1 "$P" p1 && netns_veth "$R" o2 "$P" p2 || fail "veths"
netns_bg mir "$R" env LD_LIBRARY_PATH="$LIBDIR" "$work/ex-cmake/mirror" i0 o1 o2 >"$work/mirror.log" 2>&1
wait_for 10 grep -q ready "$work/mirror.log" || fail "mirror not ready"
ip netns exec "$P" "$py" - <<'PY' || fail "mirrored frames"
import socket, sys, time
N, TYPE = 200, 0x88b5
rx = []
for ifn in ("p1", "p2"):
    r = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(TYPE))
    r.bind((ifn, TYPE))
    r.settimeout(3)
    rx.append(r)
tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
tx.bind(("pi", 0))
src = bytes.fromhex("020000aa0001")
for i in range(N):
    tx.send(b"\xff" * 6 + src + TYPE.to_bytes(2, "big") + i.to_bytes(4, "big") + bytes(50 + i % 900))
for k, r in enumerate(rx):
    seen = set()
    while len(seen) < N:
        f = r.recv(2048)
        i = int.from_bytes(f[14:18], "big")
        if i in seen or len(f) != 18 + 50 + i % 900:
            sys.exit(f"output {k + 1}: frame {i} twice or of the wrong length {len(f)}")
        seen.add(i)
print(f"mirror: {N} frames on both outputs")
PY
kill -TERM -- "-$mir"
wait_for 5 grep -q "frames still out" "$work/mirror.log" || fail "mirror did not stop"
grep -q "frames in 200, out 200 and 200, not queued 0, frames still out 0" "$work/mirror.log" || fail "mirror's books"
cat "$work/resp.log" "$work/mirror.log"
echo "ok"
