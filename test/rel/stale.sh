#!/usr/bin/env bash
# Stale state after kill -9 (docs/RELIABILITY.md): xdp-fwd killed under traffic, three times in a
# row, with the steering program (--rule) and with the default one, is restarted at once (no
# wait for the kernel to release the dead process's sockets and programs) and forwards again;
# nothing is ever pinned in bpffs, and nothing is left attached after the last clean exit.
# (A libxdp attachment outliving its owner is detected and replaced by the steering library:
# test/steer/steer_netns.sh.)
FWD_TEST_TAG=rl
. "$(dirname "$0")/../fwd/lib.sh"

topo_up --hosts 2
pins_before=$(ls -R /sys/fs/bpf 2>/dev/null | sort | md5sum)
more_than() { [ "$(rx_frames 1)" -gt "$1" ]; }

for args in "--rule udp_dport_9_drop" ""; do
	for round in 1 2 3; do
		# shellcheck disable=SC2086
		fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" ${args:+--rule "udp dport 9 -> drop"}
		in_host 0 ping -c 2 -i 0.1 -W 2 "$TOPO_IP1" >/dev/null ||
			fail "${args:-default program}, round $round: no traffic after the restart"
		# Traffic in flight when it dies: the server has seen the flood start.
		seen=$(rx_frames 1)
		netns_bg PING_PID "$TOPO_H0" ping -f -c 100000 -W 1 "$TOPO_IP1"
		wait_for 5 more_than $((seen + 100)) || fail "no flood through xdp-fwd"
		kill -KILL "$FWD_PID"
		wait "$FWD_PID" 2>/dev/null
		netns_stop "$FWD_PID"
		netns_stop "$PING_PID"
	done
	log "${args:-default program}: killed 3 times under traffic, restarted at once each time"
done
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --rule "udp dport 9 -> drop"
in_host 0 ping -c 2 -i 0.1 -W 2 "$TOPO_IP1" >/dev/null || fail "no traffic after the last restart"
fwd_stop INT
no_xdp_left || fail "XDP program left after the last clean exit"
[ "$(ls -R /sys/fs/bpf 2>/dev/null | sort | md5sum)" = "$pins_before" ] || fail "bpffs pins changed"
log "ok"
