#!/usr/bin/env python3
"""A numbered UDP stream for the router tests (test/fwd/l3.sh), and its books.

  l3flow.py recv PORT OUT         receives (IPv4) until SIGTERM/SIGINT; then writes the sequence
                                  numbers received to OUT, one a line
  l3flow.py send DST PORT N PPS OUT
                                  sends N datagrams (64 bytes, the first 4 the sequence number)
                                  paced at PPS, fewer if stopped by SIGTERM; then writes "SEQ T" lines to OUT (T: CLOCK_MONOTONIC,
                                  the clock `l3flow.py now` prints, shared by every namespace)
  l3flow.py now                   the monotonic clock, seconds
  l3flow.py books SENT RECV T0 T1 sent, received, lost; lost sent before T0, between T0 and
                                  T1, after T1; the latest lost one's send time minus T1 (ms)
"""
import signal
import socket
import struct
import sys
import time


def recv(port, out):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind(("0.0.0.0", port))
    got = set()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    s.settimeout(0.05)
    while not stop:
        try:
            b = s.recv(2048)
        except socket.timeout:
            continue
        except InterruptedError:
            continue
        if len(b) >= 4:
            got.add(struct.unpack("!I", b[:4])[0])
    with open(out, "w") as f:
        f.write("".join("%d\n" % q for q in sorted(got)))


def send(dst, port, n, pps, out):
    fam = socket.AF_INET6 if ":" in dst else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    times = []
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    t0 = time.monotonic()
    for q in range(n):
        if stop:
            break
        due = t0 + q / pps
        while True:
            now = time.monotonic()
            if now >= due:
                break
            time.sleep(min(due - now, 0.002))
        times.append(time.monotonic())
        try:
            s.sendto(struct.pack("!I", q) + b"x" * 60, (dst, port))
        except OSError:
            pass  # counted as lost: a local refusal (no route) is not the router's
    with open(out, "w") as f:
        f.write("".join("%d %.6f\n" % (q, t) for q, t in enumerate(times)))


def books(sent_file, recv_file, t0, t1):
    sent = [tuple(l.split()) for l in open(sent_file)]
    got = {int(l) for l in open(recv_file) if l.strip()}
    lost = [(int(q), float(t)) for q, t in sent if int(q) not in got]
    before = sum(1 for _, t in lost if t < t0)
    during = sum(1 for _, t in lost if t0 <= t <= t1)
    after = len(lost) - before - during
    last = max((t for _, t in lost), default=t1)
    print(len(sent), len(got), len(lost), before, during, after, int((last - t1) * 1000))


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[0] == "recv":
        recv(int(a[1]), a[2])
    elif a[0] == "send":
        send(a[1], int(a[2]), int(a[3]), float(a[4]), a[5])
    elif a[0] == "now":
        print("%.6f" % time.monotonic())
    elif a[0] == "books":
        books(a[1], a[2], float(a[3]), float(a[4]))
    else:
        sys.exit("usage: see the docstring")
