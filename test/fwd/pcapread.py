#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Reads a pcap file (pcap-savefile(5)) for the --pcap test (pcap.sh), without libpcap.

  pcapread.py FILE [HEX]
      checks the header (either byte order, micro- or nanosecond magic) and every record
      (caplen <= snaplen, caplen <= len, the file ends on a record boundary), then prints
      "header SNAPLEN LINKTYPE" and one line per record:
      "CAPLEN LEN DST_MAC ETHERTYPE IPPROTO", with "-" for a field the frame does not have;
      with HEX, a last field: 1 when the captured bytes contain those bytes, else 0.
      Exit 1 with a message on stderr when the file is not a valid pcap file. Reads record by
      record, so a FIFO's reader prints each frame as it arrives.
"""
import struct
import sys


def read_exact(f, n):
    """n bytes, or fewer at the end of the file (a FIFO: waits for the writer)."""
    buf = b""
    while len(buf) < n:
        chunk = f.read(n - len(buf))
        if not chunk:
            break
        buf += chunk
    return buf


def main(path, needle=None):
    # Record by record, each line flushed: a FIFO's reader shows frames as they arrive.
    f = open(path, "rb", buffering=0)
    head = read_exact(f, 24)
    if len(head) < 24:
        sys.exit(f"{path}: {len(head)} bytes, shorter than a pcap header")
    for endian in "<>":
        magic = struct.unpack(endian + "I", head[:4])[0]
        if magic in (0xA1B2C3D4, 0xA1B23C4D):
            break
    else:
        sys.exit(f"{path}: bad magic {head[:4].hex()}")
    major, minor, _zone, _sigfigs, snaplen, linktype = struct.unpack(endian + "HHiIII", head[4:24])
    if (major, minor) != (2, 4):
        sys.exit(f"{path}: version {major}.{minor}, not 2.4")
    print(f"header {snaplen} {linktype}", flush=True)
    off, frac_max = 24, 1000000000 if magic == 0xA1B23C4D else 1000000
    while True:
        rec = read_exact(f, 16)
        if not rec:
            break
        if len(rec) < 16:
            sys.exit(f"{path}: a record header cut short at byte {off}")
        _sec, frac, caplen, length = struct.unpack(endian + "IIII", rec)
        if frac >= frac_max or caplen > snaplen or caplen > length:
            sys.exit(f"{path}: bad record at byte {off}: frac {frac} caplen {caplen} len {length}")
        frame = read_exact(f, caplen)
        if len(frame) != caplen:
            sys.exit(f"{path}: record at byte {off} cut short: {len(frame)} of {caplen} bytes")
        off += 16 + caplen
        dst = ":".join(f"{b:02x}" for b in frame[:6]) if caplen >= 6 else "-"
        etype, proto = "-", "-"
        if caplen >= 14:
            e = struct.unpack(">H", frame[12:14])[0]
            etype = f"0x{e:04x}"
            if e == 0x0800 and caplen >= 24:
                proto = str(frame[23])
            elif e == 0x86DD and caplen >= 21:
                proto = str(frame[20])
        tail = "" if needle is None else f" {int(needle in frame)}"
        print(f"{caplen} {length} {dst} {etype} {proto}{tail}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(sys.argv[1], bytes.fromhex(sys.argv[2]) if len(sys.argv) == 3 else None)
