#!/usr/bin/env bash
# xdp-fwd --offload-after where frames get no XDP metadata (xdp-fwd-faults with
# XDP_FWD_FAULT_NO_META=1 loads the steering program as on a kernel without
# bpf_xdp_adjust_meta): the gate marks go in front of the frames' data, xdp-fwd takes them off,
# and the switch stays exact. Streams cross the switch point; every gated frame was marked (no
# flow counts one unmarked), no gate was forced, no frame reached a sink damaged or out of
# order, and the books balance. Before the data marks, such frames went unmarked, the gate
# opened on a bound that copy mode's late ring publication can outrun, and a loaded CI run
# reordered 2 frames. Then a sender forges marks: frames that start with one (every tag from 1
# to 16) in front of a UDP datagram; xdp-fwd takes off only marks of its own flows' tags, so
# the datagrams inside stay wrapped and never reach the receiver, while the same datagram sent
# plainly does.
. "$(dirname "$0")/lib.sh"
# shellcheck source=offload_lib.sh
. "$(dirname "$0")/offload_lib.sh"
fail() { fail_tail "$@"; }
off_need_gen
off_need_faults
STREAMS=4

topo_up --hosts 2
log "$STREAMS UDP streams across the switch point, no XDP metadata: marked in the data, in order"
export XDP_FWD_FAULT_NO_META=1
# --offload-idle 60: the flows stay in the table, with their gate counts, until the listing.
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --offload-after 64 --offload-idle 60 --json --interval 0.2
for i in $(seq "$STREAMS"); do
	stream 0 1 5000 --rate 20000 --size 200 --sport $((7000 + i))
done
off_flows "$TOPO_IF0" >/dev/null # the listing, in $WORK/flows.out

log "forged marks: the datagram inside is not taken out"
MAC0=$(in_host 0 cat /sys/class/net/eth0/address) MAC1=$(in_host 1 cat /sys/class/net/eth0/address)
rm -f "$WORK/got" "$WORK/got.ready" "$WORK/got.stop"
netns_bg RECV_PID "$TOPO_H1" python3 -c "$UDP_RECV" "$WORK/got"
wait_for 5 test -e "$WORK/got.ready" || fail "UDP receiver did not start"
in_host 0 python3 - "$MAC0" "$MAC1" "$TOPO_IP0" "$TOPO_IP1" <<'EOF' || fail "forged frames not sent"
import socket, struct, sys
src, dst = (bytes.fromhex(m.replace(":", "")) for m in sys.argv[1:3])
sip, dip = (socket.inet_aton(a) for a in sys.argv[3:5])
udp = struct.pack("!HHHH", 7200, 5302, 8 + 16, 0) + b"forged mark test"
ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0, sip, dip))
c = sum(struct.unpack("!10H", ip))
c = (c & 0xffff) + (c >> 16)
ip[10:12] = struct.pack("!H", ~((c & 0xffff) + (c >> 16)) & 0xffff)
inner = dst + src + b"\x08\x00" + bytes(ip) + udp
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("eth0", 0))
for tag in range(1, 17):  # the mark: seq, UMEM_STEER_GATE_MAGIC, tag (host order, little-endian)
    s.send(struct.pack("<III", 0, 0x47617465, tag) + inner)
s.send(inner)  # the control: the same datagram, plainly
EOF
touch "$WORK/got.stop"
wait_for 10 test -s "$WORK/got" || fail "the UDP receiver did not finish"
netns_stop "$RECV_PID"
[ "$(cat "$WORK/got")" = 1 ] || fail "the receiver got $(cat "$WORK/got") datagrams; 1 sent plainly, 16 behind forged marks"

fwd_stop INT
books m0@0 m1@0
grep -q "fault: XDP_FWD_FAULT_NO_META" "$WORK/fwd.err" || fail "the fault did not take: $(cat "$WORK/fwd.err")"
[ "$(off_total m0@0 forced)" = 0 ] || fail "$(off_total m0@0 forced) gates forced open: a mark not read?"
cat "$WORK/flows.out"
[ "$(grep -c -- "-> redirect $TOPO_IF1" "$WORK/flows.out")" = "$STREAMS" ] ||
	fail "expected $STREAMS offloaded flows: $(cat "$WORK/flows.out")"
! grep -q unmarked "$WORK/flows.out" || fail "gated frames went unmarked: $(cat "$WORK/flows.out")"
gated=$(grep -o 'gated [0-9]*' "$WORK/flows.out" | awk '{ s += $2 } END { print s + 0 }')
# The condition: frames came while a gate was shut (the switch had frames to order).
[ "$gated" -ge 1 ] || fail "no frame was gated: the marks were not tested"
log "$gated frames gated, all marked"
log "ok"
