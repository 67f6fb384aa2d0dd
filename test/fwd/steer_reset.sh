#!/usr/bin/env bash
# xdp-fwd reads its steering programs' counters as running totals; `umem-steer reset` zeroes
# them behind its back. A counter that went down is taken as a reset and carried forward: no
# interval shows a negative count (an unsigned 2^64 - 30), and the total keeps the drops
# counted before the reset (it said 10 where 40 were dropped).
. "$(dirname "$0")/lib.sh"
GEN=$BUILD/tools/xsk-gen/xsk-gen
STEER=$BUILD/tools/umem-steer/umem-steer
[ -x "$GEN" ] || fail "xsk-gen not built at $GEN"
[ -x "$STEER" ] || fail "umem-steer not built at $STEER"

# steer_drops KIND: the drop counts of m0's program in the JSON lines of KIND, one a line.
steer_drops() {
	grep "\"type\":\"$1\"" "$WORK/fwd.out" | python3 -c '
import json, sys
for line in sys.stdin:
    for s in json.loads(line).get("steer", []):
        if s["ifname"] == sys.argv[1]:
            print(s["drop"])' "$TOPO_IF0"
}
dropped_so_far() { steer_drops interval | awk '{ s += $1 } END { printf "%.0f\n", s }'; }
dropped_at_least() { [ "$(dropped_so_far)" -ge "$1" ]; }
send() { # N frames to UDP port 7 from host 0
	in_host 0 "$GEN" gen -i eth0 --json --dst-ip "$TOPO_IP1" --dport 7 --count "$1" --rate 1000 \
		>"$WORK/gen.out" 2>"$WORK/gen.err" || fail "gen: $(cat "$WORK/gen.err")"
}

topo_up --hosts 2
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --rule "udp dport 7 -> drop" --json --interval 0.1
send 30
wait_for 10 dropped_at_least 30 || fail "the rule dropped $(dropped_so_far) of 30"
ip netns exec "$TOPO_MID" "$STEER" reset "$TOPO_IF0" >"$WORK/reset.out" 2>&1 || fail "umem-steer reset: $(cat "$WORK/reset.out")"
send 10
wait_for 10 dropped_at_least 40 || fail "the intervals add up to $(dropped_so_far) drops of 40"
fwd_stop INT
max=$(steer_drops interval | sort -n | tail -1)
total=$(steer_drops total)
log "intervals: at most $max drops in one; total $total"
[ "$max" -le 40 ] || fail "an interval counted $max drops (a counter that went back, unsigned)"
[ "$total" = 40 ] || fail "the total counted $total drops of 40"
log "ok"
