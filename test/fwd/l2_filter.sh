#!/usr/bin/env bash
# xdp-fwd l2 mode relays what a Linux bridge without STP relays (br_handle_frame,
# net/bridge/br_input.c), three hosts on three ports:
#  - LLDP (01:80:c2:00:00:0e), LACP (:02) and pause (:01) reach no other port, STP (:00) does;
#  - a frame from a multicast source or from 00:00:00:00:00:00 is dropped, and not learned;
#  - ordinary broadcast and learned unicast go where they always went;
#  - the drops are counted per reason (JSON and text), the MAC table (SIGUSR1) holds the two
#    senders only;
#  - with --group-fwd-mask 0x4000 LLDP is relayed, LACP still not; restricted bits are refused;
#  - with --offload-after, a bad source's frames to an offloaded destination are not forwarded
#    by the steering program either (they reach userspace, which drops and counts them).
# Each receiver counts the tagged frames (test/fwd/l2frames.py) until a last broadcast (the
# fence): one worker handles a port's frames in order, so every earlier frame is decided by then.
. "$(dirname "$0")/lib.sh"

FRAMES="python3 $SRC/test/fwd/l2frames.py"

log "restricted --group-fwd-mask bits are refused"
out=$("$FWD" -i a -i b --mode l2 --group-fwd-mask 0x4004 2>&1) && fail "--group-fwd-mask 0x4004 was accepted"
grep -q "bits 0-2 (0x0007) are restricted" <<<"$out" || fail "unclear message: $out"

topo_up --hosts 3

# receivers_start: a receiver on hosts 1 and 2, returns once both listen.
receivers_start() {
	local k
	for k in 1 2; do
		rm -f "$WORK/ready$k"
		netns_bg "RECV$k" "$(eval echo "\$TOPO_H$k")" $FRAMES recv eth0 "$WORK/ready$k" >"$WORK/got$k" 2>&1
	done
	wait_for 10 test -e "$WORK/ready1" -a -e "$WORK/ready2" || fail "receivers did not start"
}

# receivers_check "KIND N ..." "KIND N ...": what hosts 1 and 2 counted, once the fence came.
receivers_check() {
	local k want rc pid
	for k in 1 2; do
		want=$(tr ' ' '\n' <<<"${!k}" | paste -d' ' - - | sort)
		pid="RECV$k"
		rc=0
		wait "${!pid}" || rc=$?
		netns_stop "${!pid}"
		[ $rc = 0 ] || fail "host $k: $(cat "$WORK/got$k")"
		[ "$(cat "$WORK/got$k")" = "$want" ] || fail "host $k received: $(tr '\n' ' ' <"$WORK/got$k"), expected: $want"
	done
}

fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" -i "$TOPO_IF2" --mode l2 --json --interval 0.5
receivers_start

log "host 1 announces itself (a broadcast): learned on m1"
before2=$(rx_frames 2)
in_host 1 $FRAMES send eth0 "$TOPO_MAC1" bcast || fail "send from host 1"
wait_for 10 test "$(rx_frames 2)" -gt "$before2" || fail "host 1's broadcast did not reach host 2"

log "host 0 sends every kind, then the fence"
in_host 0 $FRAMES send eth0 "$TOPO_MAC0" lldp lacp pause stp msrc zsrc "uni@$TOPO_MAC1" bcast fence ||
	fail "send from host 0"
receivers_check "bcast 1 fence 1 stp 1 uni 1" "bcast 2 fence 1 stp 1"

log "the MAC table holds the two senders, nothing from the bad sources"
kill -USR1 "$FWD_PID"
wait_for 10 grep -q '"type":"mac_table"' "$WORK/fwd.out" || fail "no MAC table after SIGUSR1"
table=$(grep '"type":"mac_table"' "$WORK/fwd.out" | head -1)
grep -q "{\"mac\":\"$TOPO_MAC0\",\"port\":\"m0@0\",\"age\":" <<<"$table" || fail "host 0 not in the table: $table"
grep -q "{\"mac\":\"$TOPO_MAC1\",\"port\":\"m1@0\",\"age\":" <<<"$table" || fail "host 1 not in the table: $table"
grep -q '\],"macs":2}$' <<<"$table" || fail "the table is not 2 entries: $table"
wait_for 10 grep -q '"l2":{"macs":2}}$' "$WORK/fwd.out" || fail "no MAC count in the interval objects"

fwd_stop TERM
# The books: m0 received the 9 frames; 5 were dropped (3 reserved, 1 each bad source), the
# rest sent on m1 and m2 with host 1's broadcast (m2) and nothing back to host 0 but that.
for f in rx_packets:9 l2_reserved:3 l2_src_group:1 l2_src_zero:1 no_port:0 tx_packets:1; do
	[ "$(port_total m0@0 "${f%%:*}")" = "${f#*:}" ] || fail "m0@0 ${f%%:*} is $(port_total m0@0 "${f%%:*}"), expected ${f#*:}"
done
[ "$(port_total m1@0 tx_packets)" = 4 ] || fail "m1 sent $(port_total m1@0 tx_packets) frames, expected 4"
[ "$(port_total m2@0 tx_packets)" = 4 ] || fail "m2 sent $(port_total m2@0 tx_packets) frames, expected 4"
grep '"type":"total"' "$WORK/fwd.out" | grep -q '"l2":{"macs":2}}$' || fail "no MAC count in the totals"
python3 -c 'import json, sys; [json.loads(l) for l in sys.stdin]' <"$WORK/fwd.out" || fail "the JSON output does not parse"

log "--group-fwd-mask 0x4000 relays LLDP, never LACP (text output)"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" -i "$TOPO_IF2" --mode l2 --group-fwd-mask 0x4000 --interval 1000
receivers_start
in_host 0 $FRAMES send eth0 "$TOPO_MAC0" lldp lacp fence || fail "send from host 0"
receivers_check "fence 1 lldp 1" "fence 1 lldp 1"
kill -USR1 "$FWD_PID"
wait_for 10 grep -q "^mac table: 1 entries$" "$WORK/fwd.out" || fail "no text MAC table after SIGUSR1"
grep -Eq "^mac $TOPO_MAC0  port m0@0 +age [0-9.]+s$" "$WORK/fwd.out" || fail "host 0 not in the text table"
fwd_stop TERM
grep -Eq "^total over [0-9.]+s  l2 macs 1$" "$WORK/fwd.out" || fail "no MAC count in the text totals"
grep -A1 "^total" "$WORK/fwd.out" | grep -Eq "^m0@0 .*  drops: l2_reserved 1$" || fail "m0's total line lacks 'drops: l2_reserved 1'"

log "offloaded unicast (--offload-after): frames from bad sources to it still go nowhere"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" -i "$TOPO_IF2" --mode l2 --offload-after 4 --json --interval 0.2
before2=$(rx_frames 2)
in_host 1 $FRAMES send eth0 "$TOPO_MAC1" bcast || fail "send from host 1"
wait_for 10 test "$(rx_frames 2)" -gt "$before2" || fail "host 1's broadcast did not reach host 2"
# Unicast from host 0 to host 1 until the steering program holds its flow: --offload-after 4
# frames in each call (one python start per frame took 4-5 s each on a loaded machine).
installed() {
	in_host 0 $FRAMES send eth0 "$TOPO_MAC0" "uni@$TOPO_MAC1" "uni@$TOPO_MAC1" "uni@$TOPO_MAC1" \
		"uni@$TOPO_MAC1" "uni@$TOPO_MAC1" || return 1
	grep '"type":"interval"' "$WORK/fwd.out" | tail -1 | grep -q '"flows":1}'
}
wait_for 30 installed || fail "the l2 flow to host 1 was not installed"
receivers_start
in_host 0 $FRAMES send eth0 "$TOPO_MAC0" "msrc@$TOPO_MAC1" "zsrc@$TOPO_MAC1" "uni@$TOPO_MAC1" fence ||
	fail "send from host 0"
receivers_check "fence 1 uni 1" "fence 1"
fwd_stop TERM
[ "$(port_total m0@0 l2_src_group)" = 1 ] || fail "m0@0 l2_src_group is $(port_total m0@0 l2_src_group), expected 1"
[ "$(port_total m0@0 l2_src_zero)" = 1 ] || fail "m0@0 l2_src_zero is $(port_total m0@0 l2_src_zero), expected 1"
no_xdp_left || fail "an XDP program is still attached after exit"
log "ok"
