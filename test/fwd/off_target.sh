#!/usr/bin/env bash
# xdp-fwd --offload-after towards a veth that cannot take redirected frames: the man page's
# topology with the veth default on the hosts (GRO off, no XDP program: no NAPI, so every frame
# the steering program redirects there is dropped, and counted nowhere). xdp-fwd must find it
# out before any flow's frames go there (a probe frame), say so once with the fix, and forward
# in userspace: the TCP flow goes on through the sockets. Before the check it moved about ten
# frames in 3 s (the lost TCP window slowed the flow below the loss check's threshold, and no
# frame came back to userspace); with a trial flow instead of the probe, the trial lost 20-30
# frames and TCP waited out its retransmit timeouts. Then GRO on at the peers: the same target is offloaded to (the check does not
# take a working target for a bad one); and GRO off again while the flow is offloaded: found
# again (the check goes on), the flow back in userspace. A peer that is down: found by the probe
# and said so, not with the GRO advice (GRO is on there); up again, offloaded to.
. "$(dirname "$0")/lib.sh"
# shellcheck source=offload_lib.sh
. "$(dirname "$0")/offload_lib.sh"

topo_up --hosts 2
off_skip_without probe
for k in 0 1; do in_host $k ethtool -K eth0 gro off >/dev/null || fail "ethtool -K eth0 gro off"; done

# tcp_kbits: a 3 s iperf3 through the forwarder; prints the receiver's kbit/s.
tcp_kbits() {
	iperf_server
	in_host 0 iperf3 -c "$TOPO_IP1" -p 5201 -t 3 -f k >"$WORK/iperf.out" 2>&1 || fail "iperf3: $(cat "$WORK/iperf.out")"
	netns_stop "$IPERF_PID"
	awk '/receiver/ { for (i = 1; i <= NF; i++) if ($(i + 1) == "Kbits/sec") { print int($i); exit } }' "$WORK/iperf.out"
}

log "--offload-after 10, peers without NAPI: found before offloading, said once, the flow in userspace"
fwd_measure kbits tcp_kbits --offload-after 10 --interval 0.2
log "offload: $kbits kbit/s; m0 took $(port_total m0@0 rx_packets) frames in userspace, $(off_total m1@0 lost) lost on m1"
# The books, not a rate: a loaded machine can halve a 3 s transfer, never to ten frames. TCP
# data at 8 Mbit/s for 3 s is 2000 frames of 1500 bytes.
[ "$(port_total m0@0 rx_packets)" -ge 2000 ] ||
	fail "only $(port_total m0@0 rx_packets) frames came back to userspace after the bad target was found"
grep -q "m1 sent 0 of [0-9]* frames redirected to it: .*ethtool -K <peer> gro on" "$WORK/fwd.err" ||
	fail "the target that drops redirected frames was not reported with its fix"
[ "$(grep -c "m1 sent .* frames redirected to it" "$WORK/fwd.err")" = 1 ] || fail "m1's report is not said once"
[ "$(off_total m0@0 flows)" = 0 ] || fail "$(off_total m0@0 flows) flows still installed towards the bad target"
[ "$(off_total m0@0 installed)" = 0 ] || fail "$(off_total m0@0 installed) flows were offloaded towards the bad target"
[ "$(off_total m1@0 lost)" = 0 ] || fail "$(off_total m1@0 lost) frames were lost on m1 before it was found bad"
[ "$(off_total m0@0 no_target)" -ge 1 ] || fail "the flow kept in userspace is not counted (no_target)"

log "the fix the log names, applied while xdp-fwd runs: the targets probed again, offloaded to"
# tcp_then_gro_on: a 3 s iperf3 towards the bad targets, then GRO on at both peers; once xdp-fwd
# says each takes redirected frames now (it probes a bad target once a second), another 3 s.
tcp_then_gro_on() {
	tcp_kbits >/dev/null
	for k in 0 1; do in_host $k ethtool -K eth0 gro on >/dev/null || fail "ethtool -K eth0 gro on"; done
	wait_for 5 grep -q "m1 takes redirected frames now" "$WORK/fwd.err" || fail "m1 fixed was not probed again"
	wait_for 5 grep -q "m0 takes redirected frames now" "$WORK/fwd.err" || fail "m0 fixed was not probed again"
	tcp_kbits
}
for k in 0 1; do in_host $k ethtool -K eth0 gro off >/dev/null || fail "ethtool -K eth0 gro off"; done
fwd_measure _ tcp_then_gro_on --offload-after 10 --interval 0.2
grep -q "m1 sent 0 of" "$WORK/fwd.err" || fail "the bad target was not found before the fix"
[ "$(off_total m0@0 packets)" -gt 10000 ] || fail "fixed while running: only $(off_total m0@0 packets) frames offloaded"

log "the peers with GRO on from the start: offloaded, nothing reported"
fwd_measure _ tcp_kbits --offload-after 10 --interval 0.2
! grep -q "frames redirected to it" "$WORK/fwd.err" || fail "a working target was reported bad"
[ "$(off_total m0@0 packets)" -gt 10000 ] || fail "GRO on: only $(off_total m0@0 packets) frames offloaded"

log "a target that turns bad while its flow is offloaded: found again, the flow back in userspace"
# tcp_then_gro_off: a 4 s iperf3; once its flow is offloaded, GRO off at host 1 (m1's peer);
# prints the milliseconds from its return until xdp-fwd reported it (the wait polls every 50 ms).
tcp_then_gro_off() {
	local t0 t1
	iperf_server
	in_host 0 iperf3 -c "$TOPO_IP1" -p 5201 -t 4 -f k >"$WORK/iperf.out" 2>&1 &
	local client=$!
	offloaded() { [ "$(off_last m0@0 flows)" = 1 ] && [ "$(off_last m0@0 packets)" -gt 1000 ]; }
	wait_for 5 offloaded || fail "the TCP flow was not offloaded"
	in_host 1 ethtool -K eth0 gro off >/dev/null || fail "ethtool -K eth0 gro off"
	t0=$(date +%s%N)
	wait_for 5 grep -q "m1 sent .* frames redirected to it" "$WORK/fwd.err" || fail "the target turned bad was not found"
	t1=$(date +%s%N)
	wait $client || fail "iperf3 after the target turned bad: $(cat "$WORK/iperf.out")"
	netns_stop "$IPERF_PID"
	echo $(((t1 - t0) / 1000000))
}
fwd_measure ms tcp_then_gro_off --offload-after 10 --interval 0.2
log "reported $ms ms after GRO went off; iperf3: $(grep receiver "$WORK/iperf.out")"
[ "$(off_total m0@0 flows)" = 0 ] || fail "$(off_total m0@0 flows) flows still installed towards the target turned bad"
[ "$(off_total m1@0 lost)" -gt 0 ] || fail "the frames lost on m1 once GRO went off are not counted"
# 100 ms on an idle machine (two 20 ms periods and a turn); a loaded one delays the turns.
[ "$ms" -lt 1000 ] || fail "the target turned bad was found after $ms ms"
log "a target whose peer is down: found by the probe, said so (not the GRO advice); up again, offloaded to"
# udp_peer_down: host 1's eth0 down (m1 without carrier, GRO still on), 200 UDP datagrams from
# host 0 towards it, then eth0 up again and the same; prints nothing.
udp_peer_down() {
	udp200() {
		in_host 0 python3 -c "
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(200):
    s.sendto(b'x' * 100, ('$TOPO_IP1', 7777)); time.sleep(0.002)
" || fail "udp from host 0"
	}
	in_host 0 ping -c 2 -i 0.2 "$TOPO_IP1" >/dev/null || fail "ping before the peer went down"
	in_host 1 ip link set eth0 down || fail "eth0 down"
	udp200
	wait_for 5 grep -q "m1 sent 0 of [0-9]* frames redirected to it" "$WORK/fwd.err" || fail "the target without carrier was not found"
	in_host 1 ip link set eth0 up || fail "eth0 up"
	wait_for 5 grep -q "m1 takes redirected frames now" "$WORK/fwd.err" || fail "m1 with its peer up again was not probed again"
	in_host 0 ping -c 1 -W 2 "$TOPO_IP1" >/dev/null || fail "ping after the peer came up"
	udp200
}
for k in 0 1; do in_host $k ethtool -K eth0 gro on >/dev/null || fail "ethtool -K eth0 gro on"; done
fwd_measure _ udp_peer_down --offload-after 10 --interval 0.2
grep -q "m1 sent 0 of [0-9]* frames redirected to it: it has no carrier" "$WORK/fwd.err" ||
	fail "the target without carrier is not reported as such: $(grep 'redirected to it' "$WORK/fwd.err")"
! grep -q "gro on" "$WORK/fwd.err" || fail "the GRO advice given for a peer that is down (GRO is on there)"
[ "$(off_total m0@0 installed)" -ge 1 ] || fail "no flow offloaded to m1 once its peer was up"
log "ok"
