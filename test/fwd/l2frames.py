#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Raw Ethernet frames over an AF_PACKET socket, for the l2 filtering test (l2_filter.sh).

  l2frames.py send IFACE SRC_MAC KIND[@DST_MAC]...
      one frame per KIND: lldp, lacp, pause (reserved destinations), stp (01:80:c2:00:00:00),
      msrc / zsrc (a broadcast from a multicast / the all-zero source), bcast, fence
      (broadcasts), uni@MAC (unicast to MAC); msrc@MAC, zsrc@MAC: to MAC. Each carries
      "TAG:KIND;" in its payload.
  l2frames.py recv IFACE READY_FILE [SECONDS]
      counts the tagged frames that arrive (not the host's own outgoing ones) until a fence
      arrives, then prints them as "KIND COUNT" lines; exit 1 on timeout (default 20 s).
"""
import socket
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
BCAST = "ff:ff:ff:ff:ff:ff"


def mac(s):
    return bytes(int(b, 16) for b in s.split(":"))


def frame(kind, src):
    kind, _, to = kind.partition("@")
    dst, ethertype, body = to or BCAST, b"\x88\xb5", b""  # 0x88b5: IEEE local experimental
    if kind == "lldp":
        dst, ethertype = "01:80:c2:00:00:0e", b"\x88\xcc"
    elif kind == "lacp":
        dst, ethertype, body = "01:80:c2:00:00:02", b"\x88\x09", b"\x01\x01"  # slow protocols, LACP
    elif kind == "pause":
        dst, ethertype, body = "01:80:c2:00:00:01", b"\x88\x08", b"\x00\x01\xff\xff"  # MAC control
    elif kind == "stp":
        dst, ethertype, body = "01:80:c2:00:00:00", b"\x00\x26", b"\x42\x42\x03"  # 802.3 length, LLC
    elif kind == "msrc":
        src = "01:00:5e:00:00:01"
    elif kind == "zsrc":
        src = "00:00:00:00:00:00"
    elif kind not in ("bcast", "fence", "uni"):
        sys.exit(f"l2frames.py: unknown frame kind '{kind}'")
    payload = body + b"TAG:" + kind.encode() + b";"
    return mac(dst) + mac(src) + ethertype + payload.ljust(46, b"\0")


def send(iface, src, kinds):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    for k in kinds:
        s.send(frame(k, src))


def recv(iface, ready, seconds):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, ETH_P_ALL))
    s.settimeout(0.2)
    open(ready, "w").close()
    counts, end = {}, time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            data, addr = s.recvfrom(65536)
        except socket.timeout:
            continue
        at = data.find(b"TAG:")
        if addr[2] == PACKET_OUTGOING or at < 0:
            continue
        kind = data[at + 4:data.index(b";", at)].decode()
        counts[kind] = counts.get(kind, 0) + 1
        if kind == "fence":
            for k in sorted(counts):
                print(k, counts[k])
            return 0
    print("l2frames.py: no fence frame within", seconds, "s; saw", counts, file=sys.stderr)
    return 1


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "send":
        send(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif len(sys.argv) in (4, 5) and sys.argv[1] == "recv":
        sys.exit(recv(sys.argv[2], sys.argv[3], float(sys.argv[4]) if len(sys.argv) == 5 else 20))
    else:
        sys.exit(__doc__)
