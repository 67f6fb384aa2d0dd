#!/usr/bin/env bash
# Soak: xsk-gen -> xdp-fwd (wire mode) -> xsk-gen sink across tools/topo.sh's namespaces for a
# long run, with link faults injected at intervals, then the books are checked:
#  - every frame the generator sent was received by the sink, or is lost with a counted reason
#    (xdp-fwd's drops by reason; the veths' drop counters, which include the kernel's AF_XDP
#    drops on the interface the frame arrived on);
#  - no frame is still out anywhere at exit (xdp-fwd, generator and sink all report 0);
#  - xdp-fwd's RSS stays flat after warm-up (grows by at most --rss-slack KiB);
#  - no slow-path allocation in xdp-fwd's pools after set-up (steady state recycles).
# Faults (every --fault-every seconds, alternating): the server's interface down and up (the
# peer of xdp-fwd's output), xdp-fwd's own output interface down and up.
# --live adds the live changes, in turn with those: the MTU of the generator's path switched
# between 1500 and 9000 (the first raise makes xdp-fwd reopen its ports with multi-buffer), a
# second wire (m2 <-> m3, carrying pings) whose m3 is deleted and created again, and a rule
# that drops the generator's frames added through umem-steer and removed 0.5 s later. xdp-fwd
# then runs with a steering rule, and its rule drops and no_socket passes count as drops.
#
#   tools/soak.sh [--minutes N | --seconds N] [--rate PPS] [--mix MIX] [--fault-every S]
#                 [--live] [--rss-slack KIB] [--build DIR] [--json FILE]
# Defaults: 10 minutes, 50000 frames/s, imix, a fault every 30 s, 2048 KiB slack, build/.
# Root; everything it creates (namespaces "rl-soak-<pid>-*", processes) goes on every exit.
# The CI runs a 20-second version (ctest -R rel_soak_short, label stress).
set -uo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${UMEM_BUILD_DIR:-$SRC/build}
seconds=600 rate=50000 mix=imix fault_every=30 rss_slack=2048 json_out="" live=0
usage() { sed -n '2,/^set -uo/p' "$0" | sed -e '/^set -uo/d' -e 's/^# \{0,1\}//'; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
	case "$1" in
	--minutes) seconds=$(awk -v m="${2:?}" 'BEGIN { printf "%d", m * 60 }'); shift 2 ;;
	--seconds) seconds=${2:?}; shift 2 ;;
	--rate) rate=${2:?}; shift 2 ;;
	--mix) mix=${2:?}; shift 2 ;;
	--fault-every) fault_every=${2:?}; shift 2 ;;
	--rss-slack) rss_slack=${2:?}; shift 2 ;;
	--live) live=1; shift ;;
	--build) BUILD=${2:?}; shift 2 ;;
	--json) json_out=${2:?}; shift 2 ;;
	-h|--help) usage 0 ;;
	*) echo "soak.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -ge 5 ] || { echo "soak.sh: the run must last at least 5 s" >&2; exit 2; }
[[ "$fault_every" =~ ^[0-9]+$ ]] || { echo "soak.sh: --fault-every takes whole seconds (0: none)" >&2; exit 2; }

GEN=$BUILD/tools/xsk-gen/xsk-gen
FWD=$BUILD/apps/xdp-fwd/xdp-fwd
TOPO=$SRC/tools/topo.sh
PREFIX="rl-soak-$$"

# shellcheck source=common/netns.sh
. "$SRC/tools/common/netns.sh"
netns_init rl
netns_topo "$TOPO" "$PREFIX"
netns_workdir WORK

fail() {
	echo "soak: FAIL: $*" >&2
	for f in "$WORK"/*.out "$WORK"/*.err; do [ -s "$f" ] && { echo "--- $f"; tail -n 20 "$f"; } >&2; done
	exit 1
}
log() { echo "soak: $*"; }
[ -x "$GEN" ] && [ -x "$FWD" ] || fail "xsk-gen or xdp-fwd not built in $BUILD"

json() { grep -o "\"$2\":[0-9.]*" "$1" | head -1 | cut -d: -f2; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }

eval "$("$TOPO" up --prefix "$PREFIX" --hosts $((2 + 2 * live)))" || fail "topo.sh up"
# The counters of every interface on the path, before: what the run adds is its own.
path=("$TOPO_H0 eth0" "$TOPO_MID $TOPO_IF0" "$TOPO_MID $TOPO_IF1" "$TOPO_H1 eth0")
veth_before=()
for p in "${path[@]}"; do veth_before+=("$(path_drops "$p")"); done

fwd_args=(-i "$TOPO_IF0" -i "$TOPO_IF1")
[ $live = 1 ] && fwd_args+=(-i m2 -i m3 -r "udp dport 7 -> drop")
netns_bg FWD_PID "$TOPO_MID" "$FWD" "${fwd_args[@]}" --mode wire --json --interval 5 \
	>"$WORK/fwd.out" 2>"$WORK/fwd.err"
wait_for 10 grep -q "Ctrl-C stops" "$WORK/fwd.err" || fail "xdp-fwd did not start"
# The pid of xdp-fwd itself (netns_bg's job is `ip netns exec`, which execs it: the same pid).
fwd_pid=$FWD_PID
netns_bg SINK_PID "$TOPO_H1" "$GEN" sink -i eth0 --json --duration $((seconds + 30)) --idle 3 \
	>"$WORK/sink.out" 2>"$WORK/sink.err"
wait_for 10 grep -q "sink ready" "$WORK/sink.err" || fail "sink did not start"
netns_bg GEN_PID "$TOPO_H0" "$GEN" gen -i eth0 --dst-ip "$TOPO_IP1" --mix "$mix" --rate "$rate" \
	--duration "$seconds" --json >"$WORK/gen.out" 2>"$WORK/gen.err"
log "$seconds s at $rate frames/s ($mix), a fault every ${fault_every:-0} s$([ $live = 1 ] && echo ", live changes")"
STEER=$BUILD/tools/umem-steer/umem-steer
if [ $live = 1 ]; then
	# The second wire's traffic: pings h2 -> h3, restarted when m3 comes back.
	netns_bg PING_PID "$TOPO_H2" ping -q -i 0.01 -W 1 "$TOPO_IP3" >/dev/null 2>&1
fi
mtu=1500
# live_fault K: the K-th live change.
live_fault() {
	case $(($1 % 3)) in
	0)
		mtu=$((mtu == 1500 ? 9000 : 1500))
		where="MTU $mtu on the generator's path"
		for k in 0 1; do
			ip -n "$(eval echo "\$TOPO_H$k")" link set eth0 mtu $mtu 2>/dev/null || where="$where (h$k refused)"
			ip -n "$TOPO_MID" link set "m$k" mtu $mtu 2>/dev/null || where="$where (m$k refused)"
		done ;;
	1)
		where="m3 deleted and created again"
		backs=$(grep -c "m3: interface back" "$WORK/fwd.err")
		ip -n "$TOPO_MID" link del m3
		wait_for 5 grep -q "m3: interface gone" "$WORK/fwd.err" || fail "xdp-fwd did not see m3 go"
		ip -n "$TOPO_MID" link add m3 type veth peer name eth0 netns "$TOPO_H3"
		ip -n "$TOPO_MID" link set m3 up
		ip -n "$TOPO_H3" link set eth0 address "$TOPO_MAC3" up
		ip -n "$TOPO_H3" addr add "$TOPO_IP3/24" dev eth0
		ip netns exec "$TOPO_H3" ethtool -K eth0 tx off gro on >/dev/null
		more_backs() { [ "$(grep -c "m3: interface back" "$WORK/fwd.err")" -gt "$1" ]; }
		wait_for 5 more_backs "$backs" || fail "m3 not re-attached" ;;
	2)
		where="rule 'udp dport 9091 -> drop' on m0 for 0.5 s (umem-steer)"
		id=$(ip netns exec "$TOPO_MID" "$STEER" add "$TOPO_IF0" "udp dport 9091 -> drop" | grep -o '[0-9]*' | head -1)
		sleep 0.5
		ip netns exec "$TOPO_MID" "$STEER" remove "$TOPO_IF0" "$id" >/dev/null || fail "cannot remove rule $id" ;;
	esac
}

start=$SECONDS faults=0 rss_base="" rss_max=0 rss_min=0 next_fault=$((SECONDS + fault_every))
warm=$((seconds / 4 < 5 ? seconds / 4 : 5))
while kill -0 "$GEN_PID" 2>/dev/null; do
	sleep 1
	rss=$(rss_kib "$fwd_pid")
	[ -n "$rss" ] || fail "xdp-fwd died during the run"
	if [ $((SECONDS - start)) -ge "$warm" ]; then
		[ -n "$rss_base" ] || { rss_base=$rss rss_min=$rss; }
		[ "$rss" -gt "$rss_max" ] && rss_max=$rss
		[ "$rss" -lt "$rss_min" ] && rss_min=$rss
	fi
	if [ "$fault_every" -gt 0 ] && [ $SECONDS -ge $next_fault ] && [ $((SECONDS - start)) -lt $((seconds - 2)) ]; then
		# Link faults alternate (server side, xdp-fwd's side); --live puts a live change
		# between each two.
		kind=$((faults % 2)) step=$faults
		if [ $live = 1 ]; then kind=$((faults % 2 ? 2 : faults / 2 % 2)) step=$((faults / 2)); fi
		if [ $kind = 2 ]; then
			live_fault "$step"
		elif [ $kind = 0 ]; then
			where="$TOPO_H1 eth0 (the server, peer of xdp-fwd's output)"
			ip -n "$TOPO_H1" link set eth0 down; sleep 0.5; ip -n "$TOPO_H1" link set eth0 up
		else
			where="$TOPO_MID $TOPO_IF1 (xdp-fwd's own output interface)"
			ip -n "$TOPO_MID" link set "$TOPO_IF1" down; sleep 0.5; ip -n "$TOPO_MID" link set "$TOPO_IF1" up
		fi
		faults=$((faults + 1))
		log "fault $faults at $((SECONDS - start)) s: $where$([ "$kind" = 2 ] || echo " down 0.5 s, up")"
		next_fault=$((SECONDS + fault_every))
	fi
done
wait "$GEN_PID"; gen_rc=$?
netns_stop "$GEN_PID"
[ $gen_rc = 0 ] || fail "xsk-gen gen exited with $gen_rc"
wait "$SINK_PID"; sink_rc=$?
netns_stop "$SINK_PID"
[ $sink_rc = 0 ] || fail "xsk-gen sink exited with $sink_rc"
rss_end=$(rss_kib "$fwd_pid")
kill -INT "$fwd_pid"
wait "$fwd_pid"; fwd_rc=$?
netns_stop "$fwd_pid"

sent=$(json "$WORK/gen.out" frames)
received=$(json "$WORK/sink.out" frames)
lost=$(json "$WORK/sink.out" lost)
bad=$(json "$WORK/sink.out" bad)
dups=$(json "$WORK/sink.out" duplicates)
sink_drops=$(( $(json "$WORK/sink.out" rx_dropped) + $(json "$WORK/sink.out" rx_ring_full) ))
veth=() veth_sum=0
for i in "${!path[@]}"; do
	veth+=($(( $(path_drops "${path[$i]}") - veth_before[i] )))
	veth_sum=$((veth_sum + veth[i]))
done
fwd_dropped=$(fwd_drops "$WORK/fwd.out")
# --live: what the steering program on the generator's input kept from xdp-fwd (rule drops,
# frames passed to the kernel while the ports were reopened).
steer_m0=$(grep '"type":"total"' "$WORK/fwd.out" | grep -o "{\"ifname\":\"$TOPO_IF0\",\"rules\":\[[^]]*\],[^}]*}")
steer_dropped=0
for k in drop pass no_socket; do steer_dropped=$((steer_dropped + $(grep -o "\"$k\":[0-9]*" <<<"$steer_m0" | cut -d: -f2 || echo 0))); done
fwd_xsk=$(grep '"type":"total"' "$WORK/fwd.out" | grep -o '"xsk_rx_[a-z_]*":[0-9]*' | grep -v fill | cut -d: -f2 | awk '{ s += $1 } END { print s + 0 }')
counted=$((fwd_dropped + veth_sum + steer_dropped))
fwd_out=$(grep -o '"frames_out":-\?[0-9]*' "$WORK/fwd.out" | tail -1 | cut -d: -f2)
# Slow-path allocations after warm-up: the interval lines after the first one.
slow=$(grep '"type":"interval"' "$WORK/fwd.out" | tail -n +2 | grep -o '"slow":[0-9]*' | cut -d: -f2 | awk '{ s += $1 } END { print s + 0 }')
rss_growth=$((rss_end - rss_base))

summary=$(cat <<EOF
{"seconds":$seconds,"rate":$rate,"mix":"$mix","faults":$faults,"sent":$sent,"received":$received,"lost":$lost,"bad":$bad,"duplicates":$dups,"drops_counted":$counted,"drops":{"xdp_fwd":$fwd_dropped,"steer":$steer_dropped,"veth_client":${veth[0]},"veth_fwd_in":${veth[1]},"veth_fwd_out":${veth[2]},"veth_server":${veth[3]}},"sink_socket_drops":$sink_drops,"fwd_socket_drops":$fwd_xsk,"frames_out":{"xdp_fwd":${fwd_out:-null},"gen":$(json "$WORK/gen.out" frames_out),"sink":$(json "$WORK/sink.out" frames_out)},"slow_allocs":$slow,"rss_kib":{"after_warmup":$rss_base,"min":$rss_min,"max":$rss_max,"end":$rss_end}}
EOF
)
echo "$summary"
[ -n "$json_out" ] && echo "$summary" >"$json_out"

[ $fwd_rc = 0 ] || fail "xdp-fwd exited with $fwd_rc"
[ "$fwd_out" = 0 ] || fail "xdp-fwd: $fwd_out frames still out"
[ "$(json "$WORK/gen.out" frames_out)" = 0 ] && [ "$(json "$WORK/sink.out" frames_out)" = 0 ] ||
	fail "generator or sink has frames still out"
[ "$bad" = 0 ] || fail "$bad frames arrived damaged"
[ "$dups" = 0 ] || fail "$dups duplicate frames"
[ $((received + lost)) = "$sent" ] || fail "sent $sent != received $received + lost $lost"
# Equal in practice; more counted than lost would be drops of other frames (ARP).
[ "$lost" -le "$counted" ] || fail "$lost frames lost but only $counted drops counted with a reason"
# Faults hold frames in TX rings, which takes pages beyond the steady state's: only a run
# without faults must stay on the fast path.
[ "$slow" = 0 ] || [ "$faults" -gt 0 ] || fail "$slow slow-path allocations in steady state"
[ "$rss_growth" -le "$rss_slack" ] || fail "xdp-fwd's RSS grew by $rss_growth KiB (slack $rss_slack)"
log "ok: $sent frames sent, $received received, $lost lost ($counted drops counted), $faults faults, RSS $rss_base -> $rss_end KiB"
