#!/usr/bin/env python3
"""rtchange.py: how long a route change takes to reach the wire through a router.

Run in the server's namespace (ip netns exec H1 rtchange.py ...) while a paced UDP stream to
--dst (an address the server does not own) crosses the router. The router's route for
--dst/32 is replaced over rtnetlink, alternating between two next hops on the same link (--gw-a
with --mac-a, --gw-b with --mac-b); the server's interface sees every frame whatever its
destination MAC (an AF_PACKET tap, kernel timestamps). A change's latency is the time from just
before its RTM_NEWROUTE is sent to the first frame of the stream with the new next hop's MAC;
frames with the old MAC after that one are counted as stale. xsk-gen numbers its frames: the
stream's frames missing at the server between the first and last seen during the changes are
counted as lost, those behind a later one as reordered, those to neither next hop as other_mac.
Prints one JSON object.
"""
import argparse, ctypes, json, os, random, select, socket, struct, sys, time

CLONE_NEWNET = 0x40000000
SO_TIMESTAMPNS = 35
SO_ATTACH_FILTER = 26
RTM_NEWROUTE = 24
NLM_F_REQUEST, NLM_F_ACK, NLM_F_REPLACE, NLM_F_CREATE = 1, 4, 0x100, 0x400
NLMSG_ERROR = 2
RTA_DST, RTA_OIF, RTA_GATEWAY = 1, 4, 5


def udp_port_filter(port):
    """Classic BPF: IPv4 UDP (no IP options) to port, so the tap wakes only for the stream."""
    prog = [
        (0x28, 0, 0, 12), (0x15, 0, 5, 0x0800),  # ethertype IPv4
        (0x30, 0, 0, 23), (0x15, 0, 3, 17),  # UDP
        (0x28, 0, 0, 36), (0x15, 0, 1, port),  # destination port
        (0x06, 0, 0, 0xFFFF), (0x06, 0, 0, 0),
    ]
    buf = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *i) for i in prog))
    return buf, struct.pack("HxxxxxxQ", len(prog), ctypes.addressof(buf))


def rta(kind, data):
    n = 4 + len(data)
    return struct.pack("HH", n, kind) + data + b"\0" * ((4 - n % 4) % 4)


def route_replace(nl, seq, dst, gw, oif):
    body = struct.pack("BBBBBBBBI", socket.AF_INET, 32, 0, 0, 254, 4, 0, 1, 0)  # main, static, unicast
    body += rta(RTA_DST, socket.inet_aton(dst)) + rta(RTA_GATEWAY, socket.inet_aton(gw))
    body += rta(RTA_OIF, struct.pack("I", oif))
    flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_REPLACE | NLM_F_CREATE
    nl.send(struct.pack("IHHII", 16 + len(body), RTM_NEWROUTE, flags, seq, 0) + body)
    while True:
        msg = nl.recv(65536)
        ln, typ, _, s, _ = struct.unpack_from("IHHII", msg)
        if typ == NLMSG_ERROR and s == seq:
            err = struct.unpack_from("i", msg, 16)[0]
            if err:
                raise OSError(-err, "RTM_NEWROUTE %s via %s: %s" % (dst, gw, os.strerror(-err)))
            return


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dev", required=True, help="the server's interface (tapped)")
    ap.add_argument("--router-ns", required=True, help="the router's named network namespace")
    ap.add_argument("--oif", required=True, help="the router's interface towards the server")
    ap.add_argument("--dst", required=True)
    ap.add_argument("--port", type=int, required=True, help="the stream's UDP destination port")
    ap.add_argument("--gw-a", required=True)
    ap.add_argument("--mac-a", required=True)
    ap.add_argument("--gw-b", required=True)
    ap.add_argument("--mac-b", required=True)
    ap.add_argument("--seconds", type=float, default=5.0, help="changes are made for this long")
    ap.add_argument("--ready", help="a file made once the tap is open")
    ap.add_argument("--trace", help="a file for one line per change: its time (ns, CLOCK_REALTIME), the ack's and the first new frame's delay (ns), frames to the old next hop in between, the number and delay of the last frame before the first new one, that one's number")
    a = ap.parse_args()
    macs = {bytes.fromhex(a.mac_a.replace(":", "")): "a", bytes.fromhex(a.mac_b.replace(":", "")): "b"}

    tap = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
    keep, fprog = udp_port_filter(a.port)
    tap.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, fprog)
    tap.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    tap.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    tap.bind((a.dev, 0))
    libc = ctypes.CDLL(None, use_errno=True)
    with open("/var/run/netns/" + a.router_ns) as f:
        if libc.setns(f.fileno(), CLONE_NEWNET):
            raise OSError(ctypes.get_errno(), "setns " + a.router_ns)
    nl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    oif = socket.if_nametoindex(a.oif)
    if a.ready:
        open(a.ready, "w").close()

    def frames(until_ns):
        """(kernel timestamp ns, 'a'/'b'/None) of each stream frame until until_ns (monotonic)."""
        while True:
            left = until_ns - time.monotonic_ns()
            if left <= 0 or not select.select([tap], [], [], left / 1e9)[0]:
                return
            data, anc, _, _ = tap.recvmsg(64, 64)
            ts = next((struct.unpack("qq", d[:16]) for l, t, d in anc if t == SO_TIMESTAMPNS), None)
            if len(data) >= 58 and data[42:44] == b"\x78\x47":  # xsk-gen's numbered frame
                seq = int.from_bytes(data[50:58], "big")
                seen["n"] += 1
                seen["lo"] = min(seen["lo"], seq)
                seen["hi"] = max(seen["hi"], seq)
                seen["reordered"] += seq < seen["last"]
                seen["last"] = seq
                seen["other"] += data[:6] not in macs
            yield (ts[0] * 10**9 + ts[1]) if ts else time.time_ns(), macs.get(data[:6])

    seen = {"n": 0, "lo": 1 << 64, "hi": -1, "last": -1, "reordered": 0, "other": 0}
    seq, cur = 1, "a"
    route_replace(nl, seq, a.dst, a.gw_a, oif)
    got = next((m for _, m in frames(time.monotonic_ns() + 30 * 10**9) if m == "a"), None)
    if got != "a":
        print(json.dumps({"error": "no frame of the stream to %s within 30 s" % a.mac_a}))
        return 1
    lat, ack, stale, missed = [], [], 0, 0
    seen.update(n=0, lo=1 << 64, hi=-1, reordered=0, other=0)  # the stream's books from the first change on
    trace = open(a.trace, "w") if a.trace else None
    end = time.monotonic_ns() + int(a.seconds * 1e9)
    while time.monotonic_ns() < end:
        # A pause of 5-15 ms between changes, reading the tap meanwhile.
        for _ in frames(time.monotonic_ns() + random.randint(5, 15) * 10**6):
            pass
        new = "b" if cur == "a" else "a"
        seq += 1
        t0 = time.time_ns()
        route_replace(nl, seq, a.dst, a.gw_b if new == "b" else a.gw_a, oif)
        ack.append(time.time_ns() - t0)
        first, first_seq, old_between = None, -1, 0
        prev_seq, prev_ts = seen["last"], 0
        for ts, m in frames(time.monotonic_ns() + 10**9):
            if first is None and m == cur and ts > t0:
                old_between += 1
            if first is None and m != new:
                prev_seq, prev_ts = seen["last"], ts
            if m == new and first is None:
                first = ts
                first_seq = seen["last"]
                lat.append(max(ts - t0, 0))
                stop = time.monotonic_ns() + 10 * 10**6  # stale frames: 10 ms more
            elif first is not None and m == cur and ts > first:
                stale += 1
            if first is not None and time.monotonic_ns() > stop:
                break
        if first is None:
            missed += 1
        if trace:
            print(t0, ack[-1], first - t0 if first is not None else -1, old_between, prev_seq, prev_ts - t0, first_seq, file=trace)
        cur = new
    route_replace(nl, seq + 1, a.dst, a.gw_a, oif)
    lat.sort()
    ack.sort()
    pct = lambda v, p: round(v[min(len(v) - 1, int(p * len(v)))] / 1000, 1) if v else None
    print(json.dumps({"changes": len(lat) + missed, "seen": len(lat), "missed": missed,
                      "p50_us": pct(lat, 0.5), "p99_us": pct(lat, 0.99), "max_us": pct(lat, 1.0),
                      "ack_p50_us": pct(ack, 0.5), "stale": stale,
                      "frames": seen["n"], "lost": seen["hi"] - seen["lo"] + 1 - seen["n"] if seen["n"] else None,
                      "reordered": seen["reordered"], "other_mac": seen["other"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
