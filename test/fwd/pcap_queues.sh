#!/usr/bin/env bash
# --pcap and queues that appear under a running xdp-fwd (-i IFNAME@all, then `ethtool -L`): the
# ports opened live are captured as those of set-up, so the books hold (captured + capture
# dropped = the ports' tx_packets). The capture used to know the ports of set-up only, and
# frames sent by a new port never reached the file.
FWD_TEST_TAG=pq
. "$(dirname "$0")/lib.sh"
GEN=$BUILD/tools/xsk-gen/xsk-gen
[ -x "$GEN" ] || fail "xsk-gen not built at $GEN"

cap_total() {
	grep '"type":"total"' "$WORK/fwd.out" | grep -o '"capture":{[^}]*}' | grep -o "\"$1\":[0-9]*" | cut -d: -f2
}

topo_up --hosts 2 --queues 3
for m in "$TOPO_IF0" "$TOPO_IF1"; do
	ip netns exec "$TOPO_MID" ethtool -L "$m" rx 1 tx 1 || fail "ethtool -L $m rx 1 tx 1"
done
# Generic XDP: veth runs a native program only on the queues it had when it was attached.
fwd_start -i "$TOPO_IF0@all" -i "$TOPO_IF1@all" --mode wire --json --interval 60 --xdp-mode skb \
	--pcap "$WORK/q.pcap"
for m in "$TOPO_IF0" "$TOPO_IF1"; do
	ip netns exec "$TOPO_MID" ethtool -L "$m" rx 3 tx 3 || fail "ethtool -L $m rx 3 tx 3"
done
wait_for 10 grep -q "opened $TOPO_IF1@1" "$WORK/fwd.err" && grep -q "opened $TOPO_IF0@1" "$WORK/fwd.err" ||
	fail "the new queues were not opened: $(cat "$WORK/fwd.err")"

# Host 0 sends on its queues 0 and 2. With generic XDP a veth hands a frame sent on TX queue
# q > 0 to RX queue q - 1 (the skb's queue mapping, read as a recorded RX queue + 1): queue 2
# reaches m0@1, opened live, whose wire partner m1@1 sends it on. The totals below check it.
for q in 0 2; do
	in_host 0 "$GEN" gen -i eth0 -q "$q" --dst-ip "$TOPO_IP1" --count 500 --rate 10000 >"$WORK/gen.out" 2>&1 ||
		fail "xsk-gen on queue $q: $(cat "$WORK/gen.out")"
done
fwd_stop INT

sent=0
for p in "$TOPO_IF0@0" "$TOPO_IF0@1" "$TOPO_IF1@0" "$TOPO_IF1@1"; do
	sent=$((sent + $(port_total "$p" tx_packets)))
done
new=$(( $(port_total "$TOPO_IF0@1" tx_packets) + $(port_total "$TOPO_IF1@1" tx_packets) ))
captured=$(cap_total captured) dropped=$(cap_total dropped)
n=$(python3 "$SRC/test/fwd/pcapread.py" "$WORK/q.pcap" | tail -n +2 | wc -l)
log "sent $sent ($new by the new ports), captured $captured, capture dropped $dropped, $n records"
[ "$new" -gt 0 ] || fail "no frame left by a port opened live: the test shows nothing"
[ $((captured + dropped)) = "$sent" ] || fail "captured $captured + capture dropped $dropped != $sent frames sent"
[ "$n" = "$captured" ] || fail "$n records in the file, the stats say $captured captured"
no_xdp_left || fail "XDP program left"
log "ok"
