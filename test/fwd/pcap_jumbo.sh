#!/usr/bin/env bash
# --pcap at MTU 9000: a frame crosses as a chain of 3 chunks (multi-buffer), and its record
# holds it whole, every byte in place, or its first --pcap-snaplen bytes when the cut falls
# inside a later chunk.
. "$(dirname "$0")/lib.sh"

# check FILE CAPLEN: every record an ICMP echo of 9014 bytes with CAPLEN kept, its payload
# ping's pattern (a5 5a from the payload's start, its first 16 bytes ping's timestamp).
check() {
	python3 - "$1" "$2" 2>"$WORK/check.err" <<'PY' || fail "$1: $(cat "$WORK/check.err")"
import struct, sys
f = open(sys.argv[1], "rb").read()
want = int(sys.argv[2])
off, n = 24, 0
while off < len(f):
    _s, _ns, caplen, length = struct.unpack("<IIII", f[off:off + 16])
    frame = f[off + 16:off + 16 + caplen]
    off += 16 + caplen
    if (caplen, length, len(frame)) != (want, 9014, want):
        sys.exit(f"record {n}: caplen {caplen} len {length}, {len(frame)} bytes; want {want} of 9014")
    for i in range(42 + 16, caplen):
        if frame[i] != (0xa5, 0x5a)[(i - 42) % 2]:
            sys.exit(f"record {n}: byte {i} is {frame[i]:#x}: not ping's pattern (a chunk out of place?)")
    n += 1
if n != 6:
    sys.exit(f"{n} records, not 6")
PY
}

topo_up --hosts 2 --mtu 9000
for snap in 262144 5000; do
	log "ping -s 8972 (9014-byte frames, 3 chunks of 4 KiB), --pcap-snaplen $snap"
	fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --json --pcap "$WORK/j$snap.pcap" --pcap-filter icmp --pcap-snaplen "$snap"
	grep -q "multi-buffer on" "$WORK/fwd.err" || fail "multi-buffer was not turned on for MTU 9000"
	in_host 0 ping -c 3 -i 0.2 -W 2 -M do -s 8972 -p a55a "$TOPO_IP1" >/dev/null || fail "ping 9000"
	fwd_stop INT
	check "$WORK/j$snap.pcap" $((snap < 9014 ? snap : 9014))
done
log "ok"
