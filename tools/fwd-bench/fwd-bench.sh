#!/usr/bin/env bash
# fwd-bench: forwarding benchmark on tools/topo.sh's topology (client h0 -> middle -> server h1).
#
#   tools/fwd-bench/fwd-bench.sh [options]          (root; builds nothing: run cmake --build first)
#
# Two topologies (--topology): "l2" (default), one subnet, the middle a pure L2 hop; "router"
# (topo.sh --routed), client h0 -- m0 [router] m1 -- server h1, each host alone on its subnet
# with the middle as its gateway, static neighbours, net.ipv4.ip_forward=1 in the middle only.
# Systems in the middle namespace, alternated within every repetition (the starting one rotates):
#   bridge        a Linux bridge holding m0 and m1
#   xdp_redirect  the kernel's XDP_REDIRECT through a devmap (xdp_redirect_devmap.bpf.c here, xdp.frags)
#   xdp_fwd       apps/xdp-fwd in wire mode
#   xdp_fwd_offload  the same with --offload-after 64: a flow's first 64 frames in userspace, the
#                 rest redirected by the steering program (not in the default list: --systems)
#   xdp_fwd_lowlat  xdp_fwd with --latency low: idle CPUs poll instead of halting while it
#                 runs, so its sleeping worker wakes at once (not in the default list: --systems)
#   xdp_fwd_pcap  xdp_fwd with --pcap /dev/null: every frame sent copied to the capture and
#                 written (to /dev/null: the capture's cost without a disk's); xdp_fwd_pcap_none
#                 the same with a filter that takes nothing (--pcap-filter "vlan 4094"): the
#                 filter's cost alone (neither in the default list: --systems)
#   xdp_fwd_b     xdp_fwd (wire) run from the binary --fwd-b names: an A/B of two builds of
#                 xdp-fwd, alternated like any two systems (not in the default list)
#   xdp_fwd_scraped  xdp_fwd with --metrics and --interval 0.1, scraped at 10 Hz by one curl
#                 (--rate 10/s, one kept-alive connection) in the middle namespace: the cost of
#                 serving metrics (not in the default list)
#   dpdk_af_xdp   dpdk-testpmd, two af_xdp vdevs, io forwarding (skipped when not installed, and
#                 above MTU 3500: its XDP program is not frags-aware, so the veth refuses the MTU)
#   xsk_fwd       the AF_XDP-forwarding sample of xdp-project/bpf-examples, run as
#                 `xsk_fwd -i m0 -i m1 -c 1` (skipped without --xsk-fwd, and above MTU 3500:
#                 one 4 KiB buffer per frame, no multi-buffer)
# In the router topology the systems above pass frames unrouted: the hosts' neighbour entries
# for their gateways are crossed (each names the other host's MAC) while they run. Routers,
# for the router topology only (its default list is these six):
#   kernel_fwd    the kernel's IP forwarding (no program in the middle)
#   xdp_fib       bpf_fib_lookup on the kernel's tables and XDP_REDIRECT through a devmap
#                 (xdp_fib_devmap.bpf.c here, `xdp-redirect --fib m0 m1`)
#   dpdk_l3fwd    DPDK's l3fwd example, LPM, two af_xdp vdevs, one polling lcore on CPU 1, routes
#                 and next-hop MACs as the topology's (skipped without --l3fwd or dpdk-l3fwd)
#   xdp_fwd       (listed above) xdp-fwd --mode wire with the gateway MACs crossed: the baseline
#   xdp_fwd_l3    apps/xdp-fwd --mode l3
#   xdp_fwd_l3_offload  the same with --offload-after 8 (skipped, with xdp-fwd's reason, when
#                 xdp-fwd refuses the combination)
#   kernel_fwd_full, xdp_fib_full, xdp_fwd_l3_full  the same routers on the full table of
#                 --routes (not in the default list)
# Workloads:
#   tcp1500 tcp9000 tcp64000   one iperf3 TCP stream at that MTU (Gbit/s at the receiver)
#   udp64                      64-byte UDP frames from xsk-gen at full speed (Mpps at the sink,
#                              whose RX ring holds 16,384)
#   ping                       ICMP echo every 5 ms, MTU 1500 (median RTT in microseconds)
#   tcp1g                      one TCP stream paced at 1 Gbit/s, MTU 1500 (the figure to read
#                              is the forwarder's CPU at a fixed rate)
#   idle                       no traffic (the forwarder's CPU when idle)
#   rtchange                   (router topology, routers only) route changes under an iperf3
#                              TCP stream: the router's route to a probe address flips between
#                              two next hops every 5-15 ms while xsk-gen sends it 10,000 frames
#                              a second; the figure is the 99th percentile, in microseconds, of
#                              the time from a change's RTM_NEWROUTE to the stream's first frame
#                              with the new next hop's MAC at the server (tools/fwd-bench/
#                              rtchange.py: the sample also keeps p50, maximum, and frames
#                              still sent to the old next hop after the new one's first)
#
# Options:
#   --duration S     seconds per sample (default 5)
#   --repeats N      samples per (system, workload) (default 3)
#   --topology T     l2 (default) or router
#   --systems LIST   comma-separated subset (default l2: bridge, xdp_redirect, xdp_fwd,
#                    dpdk_af_xdp, xsk_fwd; router: the six routers above)
#   --workloads LIST comma-separated subset (default l2: all; router: tcp1500, udp64, ping)
#   --routes N       (router topology) a full table: N BGP-like IPv4 prefixes (tools/route-bench/
#                    mirror-load.sh --emit) in the router's table 200 beside the topology's two
#                    routes, through next hops on links of their own; the *_full systems route
#                    on it (an ip rule to table 200 while they run, xdp-fwd --table 200), the
#                    others on the main table: 10 routes (the topology's 2, the next hops'
#                    links' 4, 4 of the prefixes). Loaded once per run; no prefix is in 10/8.
#   --rtchange-alone rtchange without its iperf3 TCP stream: the probe stream alone, so the
#                    figure is the router's own path from a change to the wire, not the wake-up
#                    of its threads on CPUs the stream keeps busy
#   --pin P          where the work runs: "fwd" (default) xdp-fwd's worker on CPU 1 (--cpus 1),
#                    the rest where the scheduler puts it; "none" xdp-fwd without --cpus; "all"
#                    xdp-fwd's worker on CPU 1 and the endpoints' programs (iperf3, ping,
#                    xsk-gen) on CPU 0. DPDK's lcore and xsk_fwd's thread are on CPU 1 in all.
#   --l3fwd PATH     DPDK's l3fwd example for dpdk_l3fwd (default: dpdk-l3fwd from PATH). Debian
#                    packages no binary: build examples/l3fwd of the dpdk source package with
#                    `make static` against libdpdk-dev, with one change: no RX checksum offload
#                    requested (the af_xdp PMD has none, and l3fwd 22.11 asks for it; README.md).
#   --cc NAME        the TCP congestion control of the iperf3 streams (iperf3 -C; default: the
#                    host's, net.ipv4.tcp_congestion_control). The summary names the one used:
#                    BBR paces its sends by its own model of the path, cubic does not.
#   --out DIR        results folder (default results/fwd-bench-<UTC time>)
#   --build DIR      build folder (default build)
#   --fwd-args ARGS  extra xdp-fwd options for the xdp_fwd systems, split on spaces
#                    (e.g. "--chunk-size 4096" for an A/B of the chunk size)
#   --fwd-b PATH     the xdp-fwd binary of system xdp_fwd_b (another build: before/after a change)
#   --xsk-fwd PATH   the xsk_fwd binary for the xsk_fwd system. Build it from the public sample
#                    (bpf-examples, AF_XDP-forwarding/xsk_fwd.c) with four changes that make it a
#                    wire on veth: a failing setrlimit(RLIMIT_MEMLOCK) is reported, not fatal; no
#                    MAC address swap; when a port's RX poll returns nothing, its partial TX burst
#                    is sent; and in that same branch sendto() kicks the TX ring while it still
#                    holds descriptors the kernel has not consumed.
#   --receiver-gro   a topology variant, for every system of the run: the hosts' veths run
#                    their NAPI in a kernel thread, and the middle's veths have TSO off. Then
#                    frames that an AF_XDP forwarder sends (copy mode) reach the receiver through
#                    its NAPI, in batches that GRO merges, as XDP_REDIRECT's frames always do.
#                    By default every such frame is received on its own (docs/BENCHMARKS.md).
#   --host-offloads  the hosts keep their veths' default offloads (TX checksum, TSO, GSO on), as
#                    hosts do unless told otherwise: the kernel's paths (bridge) then move
#                    64 KB GSO frames per hop, frames reach XDP with partial checksums, which
#                    xdp-fwd completes and a bare XDP_REDIRECT passes on unchanged (the receiver
#                    drops them: its figure is what such hosts would get)
#   --smoke          1 s, 1 repeat, tcp1500 only: checks the machinery, not the numbers
#   -h, --help
#
# xdp_fwd, xdp_fwd_offload and xdp_fwd_lowlat samples also record its exit totals: slow-path allocations and
# frames still out (both must be 0; a note says otherwise), and in udp64 the frames no counter
# accounts for: sent - received - counted drops (xdp-fwd's and the sink socket's; must be 0).
# Output in the results folder: samples.json (every sample), summary.md (medians, min-max,
# ratio to xdp_redirect, CPU), chart.png (gnuplot), logs/. CPU: "fwd" is the forwarder
# process's utime+stime over the sample (user-space forwarders), "softirq" is the machine's
# softirq time (all CPUs, where kernel forwarding and veth delivery run), "idle poll" the idle
# time CPUs spent polling instead of halting (cpuidle's POLL state; xdp_fwd_lowlat's cost), all
# in % of one CPU.
# Every namespace, process and program goes on every exit path (trap), Ctrl-C included.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$SRC/build
DURATION=5
REPEATS=3
SYSTEMS=""
WORKLOADS=""
TOPOLOGY=l2
PIN=fwd
L3FWD=""
ROUTES=0
CC="" CC_GIVEN=""
OUT=""
XSK_FWD=""
FWD_B=""
FWD_ARGS=""
RECEIVER_GRO=""
HOST_OFFLOADS=""
RTCHANGE_ALONE=""

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; exit "${1:-0}"; }
die() { echo "fwd-bench: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
	case "$1" in
	--duration) DURATION=${2:?}; shift 2 ;;
	--repeats) REPEATS=${2:?}; shift 2 ;;
	--systems) SYSTEMS=${2:?}; shift 2 ;;
	--workloads) WORKLOADS=${2:?}; shift 2 ;;
	--out) OUT=${2:?}; shift 2 ;;
	--build) BUILD=$(cd "${2:?}" && pwd); shift 2 ;;
	--xsk-fwd) XSK_FWD=${2:?}; shift 2 ;;
	--fwd-b) FWD_B=$(cd "$(dirname "${2:?}")" && pwd)/$(basename "$2"); shift 2 ;;
	--fwd-args) FWD_ARGS=${2?}; shift 2 ;;
	--receiver-gro) RECEIVER_GRO=--receiver-gro; shift ;;
	--host-offloads) HOST_OFFLOADS=--host-offloads; shift ;;
	--topology) TOPOLOGY=${2:?}; shift 2 ;;
	--pin) PIN=${2:?}; shift 2 ;;
	--l3fwd) L3FWD=${2:?}; shift 2 ;;
	--cc) CC=${2:?}; CC_GIVEN=1; shift 2 ;;
	--routes) ROUTES=${2:?}; shift 2 ;;
	--rtchange-alone) RTCHANGE_ALONE=1; shift ;;
	--smoke) DURATION=1; REPEATS=1; WORKLOADS=tcp1500; shift ;;
	-h|--help) usage 0 ;;
	*) die "unknown option '$1' (see --help)" ;;
	esac
done
[[ "$DURATION" =~ ^[0-9]+$ ]] && [ "$DURATION" -ge 1 ] && [ "$DURATION" -le 600 ] || die "--duration '$DURATION': 1..600 seconds"
[[ "$REPEATS" =~ ^[0-9]+$ ]] && [ "$REPEATS" -ge 1 ] && [ "$REPEATS" -le 50 ] || die "--repeats '$REPEATS': 1..50"
case "$TOPOLOGY" in
l2) SYSTEMS=${SYSTEMS:-bridge,xdp_redirect,xdp_fwd,dpdk_af_xdp,xsk_fwd}
    WORKLOADS=${WORKLOADS:-tcp1500,tcp9000,tcp64000,udp64,ping,tcp1g,idle} ;;
router) SYSTEMS=${SYSTEMS:-kernel_fwd,xdp_fib,dpdk_l3fwd,xdp_fwd,xdp_fwd_l3,xdp_fwd_l3_offload}
    WORKLOADS=${WORKLOADS:-tcp1500,udp64,ping} ;;
*) die "--topology '$TOPOLOGY': l2 or router" ;;
esac
case "$PIN" in fwd|none|all) ;; *) die "--pin '$PIN': fwd, none or all" ;; esac
[[ "$ROUTES" =~ ^[0-9]+$ ]] && [ "$ROUTES" -le 2000000 ] || die "--routes '$ROUTES': 0..2000000 prefixes"
[ "$ROUTES" = 0 ] || [ "$TOPOLOGY" = router ] || die "--routes: only with --topology router"
IFS=, read -ra SYS <<<"$SYSTEMS"
IFS=, read -ra WLS <<<"$WORKLOADS"
ROUTERS="kernel_fwd xdp_fib dpdk_l3fwd xdp_fwd_l3 xdp_fwd_l3_offload kernel_fwd_full xdp_fib_full xdp_fwd_l3_full"
for s in "${SYS[@]}"; do
	case "$s" in bridge|xdp_redirect|xdp_fwd|xdp_fwd_b|xdp_fwd_offload|xdp_fwd_lowlat|xdp_fwd_pcap|xdp_fwd_pcap_none|xdp_fwd_scraped|dpdk_af_xdp|xsk_fwd) ;;
	kernel_fwd|xdp_fib|dpdk_l3fwd|xdp_fwd_l3|xdp_fwd_l3_offload)
		[ "$TOPOLOGY" = router ] || die "system '$s' routes: it needs --topology router" ;;
	kernel_fwd_full|xdp_fib_full|xdp_fwd_l3_full)
		[ "$ROUTES" -gt 0 ] || die "system '$s' routes on the full table: it needs --routes N" ;;
	*) die "unknown system '$s' (bridge, xdp_redirect, xdp_fwd, xdp_fwd_b, xdp_fwd_offload, xdp_fwd_lowlat, xdp_fwd_pcap, xdp_fwd_pcap_none, xdp_fwd_scraped, dpdk_af_xdp, xsk_fwd; with --topology router: $ROUTERS)" ;; esac
done
for w in "${WLS[@]}"; do
	case "$w" in tcp1500|tcp9000|tcp64000|udp64|ping|tcp1g|idle) ;;
	rtchange) [ "$TOPOLOGY" = router ] || die "workload 'rtchange' changes routes: it needs --topology router" ;;
	*) die "unknown workload '$w' (tcp1500, tcp9000, tcp64000, udp64, ping, tcp1g, idle; router: rtchange)" ;; esac
done
if [ -n "$L3FWD" ]; then
	[ -x "$L3FWD" ] || die "--l3fwd '$L3FWD': not an executable file"
	L3FWD=$(cd "$(dirname "$L3FWD")" && pwd)/$(basename "$L3FWD")
else
	L3FWD=$(command -v dpdk-l3fwd || true)
fi
if [ -n "$XSK_FWD" ]; then
	[ -x "$XSK_FWD" ] || die "--xsk-fwd '$XSK_FWD': not an executable file"
	XSK_FWD=$(cd "$(dirname "$XSK_FWD")" && pwd)/$(basename "$XSK_FWD")
fi
[ "$(id -u)" = 0 ] || die "needs root (namespaces, XDP)"
GEN=$BUILD/tools/xsk-gen/xsk-gen
FWD=$BUILD/apps/xdp-fwd/xdp-fwd
REDIRECT=$BUILD/tools/fwd-bench/xdp-redirect
TOPO=$SRC/tools/topo.sh
for b in "$GEN" "$REDIRECT"; do
	[ -x "$b" ] || die "$b is not built (cmake --build $BUILD)"
done
command -v iperf3 >/dev/null || die "iperf3 is not installed (tools/setup.sh)"
# A new namespace starts with the host's default congestion control. A named one must be
# loaded, or a module the kernel loads when iperf3 (root) asks for it (tcp_NAME).
CC=${CC:-$(cat /proc/sys/net/ipv4/tcp_congestion_control)}
[[ "$CC" =~ ^[A-Za-z0-9_]+$ ]] &&
	{ tr ' ' '\n' </proc/sys/net/ipv4/tcp_available_congestion_control | grep -qxF -- "$CC" ||
		[ -n "$(find "/lib/modules/$(uname -r)" -name "tcp_$CC.ko*" -print -quit 2>/dev/null)" ]; } ||
	die "--cc '$CC': not available here ($(cat /proc/sys/net/ipv4/tcp_available_congestion_control), nor a module tcp_$CC)"

OUT=${OUT:-$SRC/results/fwd-bench-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT/logs"
OUT=$(cd "$OUT" && pwd)
SAMPLES=$OUT/samples.jsonl
: >"$SAMPLES"
PREFIX="gnb-$$"
DPDK_PREFIX="gnb-dpdk-$$" # EAL runtime directory under /var/run/dpdk, removed at exit
FWD_PID=""
NOTES=()

note() { NOTES+=("$*"); echo "note: $*" >&2; }
# alive PID: the process runs (a zombie does not: kill -0 would say it does).
alive() { [ -n "$1" ] && sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | grep -q '^[^ZX]'; }

# Background jobs in their own process groups, stopped by PID (netns_bg, netns_stop), and
# wait_for: the helpers the netns tests use.
# shellcheck source=../common/netns.sh
. "$SRC/tools/common/netns.sh"

cleanup() {
	local rc=$?
	set +e
	netns_cleanup
	"$TOPO" down --prefix "$PREFIX" 2>/dev/null
	rm -rf "/var/run/dpdk/$DPDK_PREFIX"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ROUTED=()
[ "$TOPOLOGY" = l2 ] || ROUTED=(--routed)
eval "$("$TOPO" up --prefix "$PREFIX" --hosts 2 "${ROUTED[@]}")"
H0=$TOPO_H0 H1=$TOPO_H1 MID=$TOPO_MID IP1=$TOPO_IP1
# Where the endpoints' programs run (--pin all: CPU 0) and xdp-fwd's --cpus.
EP=() FWD_CPUS=(--cpus 1)
[ "$PIN" != all ] || EP=(taskset -c 0)
[ "$PIN" != none ] || FWD_CPUS=()
# The generator's destination MAC: the client's next hop as its neighbour table says (the
# gateway, or in the router topology under an L2 system the server); "" lets xsk-gen ARP.
GEN_DST_MAC=()

# --routes: the full table in table 200 (with the topology's two routes), 4 of its prefixes in
# the main table; the time the kernel took is in the log.
FULL_TABLE=200
load_routes() {
	local t0 t1 dir=$OUT/logs/table
	"$SRC/tools/route-bench/mirror-load.sh" --emit "$dir" --v4 "$ROUTES" --v6 0
	ip -n "$MID" -batch "$dir/links"
	ip -n "$MID" route add "${TOPO_GW0%.*}.0/24" dev m0 table "$FULL_TABLE"
	ip -n "$MID" route add "${TOPO_GW1%.*}.0/24" dev m1 table "$FULL_TABLE"
	head -4 "$dir/v4" | ip -n "$MID" -batch -
	t0=$(date +%s.%N)
	sed "s/\$/ table $FULL_TABLE/" "$dir/v4" | ip -n "$MID" -batch -
	t1=$(date +%s.%N)
	echo "routes: $(ip -n "$MID" route show table "$FULL_TABLE" | wc -l) in table $FULL_TABLE (loaded in $(echo "$t1 - $t0" | bc) s), $(ip -n "$MID" route show | wc -l) in main" >&2
}
[ "$ROUTES" = 0 ] || load_routes

# gateway_macs own|crossed (router topology): the hosts' neighbour entries for their gateways
# name the gateway (routed) or the other host (a system that forwards frames unrouted).
gateway_macs() {
	local mac0=$TOPO_GWMAC0 mac1=$TOPO_GWMAC1
	[ "$1" = own ] || { mac0=$TOPO_MAC1; mac1=$TOPO_MAC0; }
	ip -n "$H0" neigh replace "$TOPO_GW0" lladdr "$mac0" dev eth0 nud permanent
	ip -n "$H1" neigh replace "$TOPO_GW1" lladdr "$mac1" dev eth0 nud permanent
	GEN_DST_MAC=(--dst-mac "$mac0")
}

# --receiver-gro: why it takes both settings is in tools/fwd-bench/README.md.
receiver_gro() {
	local h m
	for h in "$H0" "$H1"; do
		ip netns exec "$h" sh -c 'echo 1 >/sys/class/net/eth0/threaded' ||
			die "--receiver-gro: cannot make $h's eth0 NAPI threaded"
		echo "receiver-gro: $h eth0 threaded $(ip netns exec "$h" cat /sys/class/net/eth0/threaded)" >&2
	done
	for m in m0 m1; do
		ip netns exec "$MID" ethtool -K "$m" tso off >/dev/null || die "--receiver-gro: cannot turn TSO off on $m"
		echo "receiver-gro: $MID $m $(ip netns exec "$MID" ethtool -k "$m" | grep '^tcp-segmentation-offload:')" >&2
	done
}
[ -z "$RECEIVER_GRO" ] || receiver_gro
# topo.sh turns TX checksum offload off on the hosts (TCP across AF_XDP on veth needs it);
# --host-offloads puts the defaults back.
if [ -n "$HOST_OFFLOADS" ]; then
	for h in "$H0" "$H1"; do
		ip netns exec "$h" ethtool -K eth0 tx on tso on gso on >/dev/null || die "--host-offloads: cannot turn $h's offloads on"
	done
fi

set_mtu() {
	ip -n "$H0" link set eth0 mtu "$1"
	ip -n "$H1" link set eth0 mtu "$1"
	ip -n "$MID" link set m0 mtu "$1"
	ip -n "$MID" link set m1 mtu "$1"
}

# --- systems: start_<sys> sets FWD_PID (empty for the bridge); stop_system undoes it ---

start_bridge() {
	ip -n "$MID" link add br0 type bridge
	ip -n "$MID" link set br0 type bridge stp_state 0 forward_delay 0
	ip -n "$MID" link set m0 master br0
	ip -n "$MID" link set m1 master br0
	ip -n "$MID" link set br0 up
	# A bridge port forwards once it is in the forwarding state.
	wait_for 5 sh -c "ip -n '$MID' -d link show m1 | grep -q 'state forwarding'"
}

start_xdp_redirect() {
	netns_bg FWD_PID "$MID" "$REDIRECT" m0 m1 >"$LOG.fwd" 2>&1
	wait_for 10 grep -q ready "$LOG.fwd"
}

start_xdp_fwd() { # MTU [--mode M] [xdp-fwd options...]; --fwd-args last
	local extra=() mode=(--mode wire)
	read -ra extra <<<"$FWD_ARGS"
	[ "${2:-}" != --mode ] || { mode=("$2" "$3"); set -- "$1" "${@:4}"; }
	netns_bg FWD_PID "$MID" "$FWD" -i m0 -i m1 "${mode[@]}" "${FWD_CPUS[@]}" --interval 3600 "${@:2}" "${extra[@]}" >"$LOG.fwd" 2>&1
	# Ready, or gone (a refusal at start: its message is in the log).
	wait_for "${START_WAIT:-30}" fwd_started_or_gone
	grep -q "Ctrl-C stops" "$LOG.fwd"
}
fwd_started_or_gone() { grep -q "Ctrl-C stops" "$LOG.fwd" || ! alive "$FWD_PID"; }

start_xdp_fwd_b() { FWD=$FWD_B start_xdp_fwd "$1"; }

start_xdp_fwd_l3() {
	start_xdp_fwd "$1" --mode l3
}

# The *_full systems: the same router, its lookups in the full table. xdp-fwd loads the table
# at start, so its wait for "ready" is longer.
start_kernel_fwd_full() { start_kernel_fwd "$1"; }
start_xdp_fib_full() { start_xdp_fib "$1"; }
start_xdp_fwd_l3_full() { START_WAIT=120 start_xdp_fwd "$1" --mode l3 --table "$FULL_TABLE"; }

start_xdp_fwd_l3_offload() {
	start_xdp_fwd "$1" --mode l3 --offload-after 8
}

start_kernel_fwd() {
	[ "$(ip netns exec "$MID" sysctl -n net.ipv4.ip_forward)" = 1 ]
}

start_xdp_fib() {
	netns_bg FWD_PID "$MID" "$REDIRECT" --fib m0 m1 >"$LOG.fwd" 2>&1
	wait_for 10 grep -q ready "$LOG.fwd"
}

# DPDK's l3fwd as a router of this topology: port 0 is m0, port 1 m1 (the vdevs' order), an
# LPM route per host subnet to its port, and each port's next hop the host's MAC (l3fwd has no
# ARP; its source MAC is the port's, the gateway's). IPv6 has one route that no frame matches
# (l3fwd takes both rule files or neither).
start_dpdk_l3fwd() {
	printf 'R%s/24 0\nR%s/24 1\n' "${TOPO_GW0%.*}.0" "${TOPO_GW1%.*}.0" >"$OUT/logs/l3fwd-v4.cfg"
	echo "R2001:db8::/32 1" >"$OUT/logs/l3fwd-v6.cfg"
	netns_bg FWD_PID "$MID" "$L3FWD" -l 1 --no-huge -m 512 --no-pci --file-prefix "$DPDK_PREFIX" \
		--vdev net_af_xdp0,iface=m0 --vdev net_af_xdp1,iface=m1 -- -p 0x3 --lookup lpm --parse-ptype \
		--config "(0,0,1),(1,0,1)" --eth-dest "0,$TOPO_MAC0" --eth-dest "1,$TOPO_MAC1" \
		--rule_ipv4 "$OUT/logs/l3fwd-v4.cfg" --rule_ipv6 "$OUT/logs/l3fwd-v6.cfg" >"$LOG.fwd" 2>&1
	wait_for 20 grep -q "entering main loop" "$LOG.fwd"
}

start_xdp_fwd_offload() {
	start_xdp_fwd "$1" --offload-after 64
}

start_xdp_fwd_lowlat() {
	start_xdp_fwd "$1" --latency low
}

start_xdp_fwd_pcap() {
	start_xdp_fwd "$1" --pcap /dev/null
}

start_xdp_fwd_pcap_none() {
	start_xdp_fwd "$1" --pcap /dev/null --pcap-filter "vlan 4094"
}

# The worst case of a scrape: a fresh text every 100 ms, fetched every 100 ms. One curl on one
# kept-alive connection, as Prometheus scrapes: a curl started per scrape would add 10 process
# starts a second to the CPUs the forwarder shares, a cost of that scraper, not of serving.
start_xdp_fwd_scraped() {
	start_xdp_fwd "$1" --metrics 127.0.0.1:9477 --interval 0.1 || return 1
	wait_for 5 ip netns exec "$MID" curl -sf -o /dev/null http://127.0.0.1:9477/metrics || return 1
	netns_bg SCRAPE_PID "$MID" curl -s --rate 10/s -o /dev/null "http://127.0.0.1:9477/metrics?n=[1-100000000]"
}

start_xsk_fwd() {
	# One forwarding thread on CPU 1 (as xdp-fwd's --cpus 1): m0's RX to m1's TX and back.
	netns_bg FWD_PID "$MID" "$XSK_FWD" -i m0 -i m1 -c 1 >"$LOG.fwd" 2>&1
	wait_for 15 grep -q "All threads created" "$LOG.fwd"
}

start_dpdk_af_xdp() {
	local mbuf=()
	[ "$1" -le 1500 ] || mbuf=(--mbuf-size=3840)
	# Main lcore 0, forwarding lcore 1; no hugepages, no PCI; stats every second keep it running
	# without a terminal (it stops on SIGINT).
	netns_bg FWD_PID "$MID" dpdk-testpmd -l 0,1 --no-huge -m 512 --no-pci --file-prefix "$DPDK_PREFIX" \
		--vdev net_af_xdp0,iface=m0 --vdev net_af_xdp1,iface=m1 -- --forward-mode=io \
		--auto-start --nb-cores=1 --total-num-mbufs=16384 "${mbuf[@]}" --stats-period 1 >"$LOG.fwd" 2>&1
	wait_for 15 grep -q "Port statistics" "$LOG.fwd"
}

start_system() { # SYS MTU: 0 when running, 1 when this system cannot run this MTU (noted)
	local sys=$1 mtu=$2
	FWD_PID=""
	case "$sys" in
	xdp_fwd|xdp_fwd_offload|xdp_fwd_lowlat|xdp_fwd_pcap|xdp_fwd_pcap_none|xdp_fwd_scraped) [ -x "$FWD" ] || { note "$sys skipped: $FWD not built"; return 1; } ;;
	xdp_fwd_l3|xdp_fwd_l3_offload|xdp_fwd_l3_full) [ -x "$FWD" ] || { note "$sys skipped: $FWD not built"; return 1; } ;;
	xdp_fwd_b) [ -x "$FWD_B" ] || { note "xdp_fwd_b skipped: no --fwd-b binary"; return 1; } ;;
	dpdk_l3fwd) [ -n "$L3FWD" ] || { note "dpdk_l3fwd skipped: no --l3fwd binary and no dpdk-l3fwd in PATH (Debian packages none: see --help)"; return 1; } ;;
	dpdk_af_xdp)
		command -v dpdk-testpmd >/dev/null || { note "dpdk_af_xdp skipped: dpdk-testpmd not installed (Debian: dpdk-dev, librte-net-af-xdp23)"; return 1; }
		[ "$mtu" -le 3500 ] || { note "dpdk_af_xdp skipped at MTU $mtu: its libxdp program is not frags-aware, the veth refuses MTUs above ~3500 with it"; return 1; } ;;
	xsk_fwd)
		[ -n "$XSK_FWD" ] || { note "xsk_fwd skipped: no --xsk-fwd binary (see --help)"; return 1; }
		[ "$mtu" -le 3500 ] || { note "xsk_fwd skipped at MTU $mtu: one 4 KiB buffer per frame, no multi-buffer"; return 1; } ;;
	esac
	if [ "$TOPOLOGY" = router ]; then
		case " $ROUTERS " in *" $sys "*) gateway_macs own ;; *) gateway_macs crossed ;; esac
	fi
	[ "${sys%_full}" = "$sys" ] || ip -n "$MID" rule add pref 100 lookup "$FULL_TABLE"
	if ! "start_$sys" "$mtu"; then
		# An option combination xdp-fwd refuses (its last line says why) is a skip, not a failure.
		if [ "$sys" = xdp_fwd_l3_offload ] && ! alive "$FWD_PID"; then
			note "xdp_fwd_l3_offload skipped: $(grep -v warning "$LOG.fwd" | tail -1)"
			netns_stop "$FWD_PID" || true
			FWD_PID=""
			return 1
		fi
		echo "fwd-bench: $sys did not start; log:" >&2
		cat "$LOG.fwd" >&2 2>/dev/null
		exit 1
	fi
}

stop_system() {
	local sys=$1
	if [ -n "${SCRAPE_PID:-}" ]; then
		netns_stop "$SCRAPE_PID" || true
		SCRAPE_PID=""
	fi
	if [ -n "$FWD_PID" ]; then
		netns_stop "$FWD_PID" || true
		FWD_PID=""
	fi
	if [ "$sys" = bridge ]; then
		ip -n "$MID" link del br0
	fi
	[ "${sys%_full}" = "$sys" ] || ip -n "$MID" rule del pref 100
	rm -rf "/var/run/dpdk/$DPDK_PREFIX"
	# The next system needs interfaces without an XDP program.
	wait_for 5 sh -c "! ip -n '$MID' -d link show | grep -q 'prog/xdp'" ||
		{ echo "fwd-bench: an XDP program stayed in the middle after $sys" >&2; exit 1; }
}

# --- CPU accounting ---

proc_ticks() { # PID: utime + stime (clock ticks), 0 without a process
	if [ -n "$1" ]; then cpu_ticks "/proc/$1/stat"; else echo 0; fi
}
softirq_ticks() { awk '/^cpu / {print $8}' /proc/stat; }
# Idle time the CPUs spent polling instead of halting (cpuidle's POLL state, all CPUs, µs; 0
# without cpuidle): what --latency low (its CPU latency request 0) costs, which neither the forwarder's CPU time nor the
# machine's busy time shows.
poll_idle_us() {
	local s t=0
	for s in /sys/devices/system/cpu/cpu[0-9]*/cpuidle/state[0-9]*; do
		[ "$(cat "$s/name" 2>/dev/null)" = POLL ] && t=$((t + $(cat "$s/time")))
	done
	echo $t
}
HZ=$(getconf CLK_TCK)
# cpu_mark: appends "wall forwarder softirq idle-poll" to $LOG.cpu; the workloads call it right
# before and after their traffic, so set-up and teardown do not dilute the CPU figures.
cpu_mark() { echo "$(date +%s.%N) $(proc_ticks "$FWD_PID") $(softirq_ticks) $(poll_idle_us)" >>"$LOG.cpu"; }

# --- workloads: run_<kind> prints the figure (Gbit/s or Mpps) ---

run_tcp() { # [RATE]: iperf3's -b (default unlimited)
	local srv rate=()
	[ $# -eq 0 ] || rate=(-b "$1")
	netns_bg srv "$H1" "${EP[@]}" iperf3 -s -1 -p 5201 >"$LOG.server" 2>&1
	wait_for 5 sh -c "ip netns exec '$H1' ss -ltn | grep -q ':5201 '"
	cpu_mark
	ip netns exec "$H0" "${EP[@]}" iperf3 -c "$IP1" -p 5201 -t "$DURATION" "${rate[@]}" -C "$CC" -J >"$LOG.client" 2>&1 || true
	cpu_mark
	netns_stop "$srv" || true
	# end.sum_received.bits_per_second, from iperf3's JSON without a JSON tool.
	tr -d ' \n\t' <"$LOG.client" | grep -o '"sum_received":{[^}]*}' |
		grep -o '"bits_per_second":[0-9.e+]*' | cut -d: -f2 | awk '{printf "%.3f\n", $1 / 1e9}'
}

run_udp64() {
	local sink
	# A deep RX ring (23 ms at 700 kpps): pinned, the sink shares CPU 0 with the generator,
	# and its default 2,048 entries overflowed between its turns there, whatever the forwarder.
	netns_bg sink "$H1" "${EP[@]}" "$GEN" sink -i eth0 --rx-ring 16384 --json --idle 1 --duration $((DURATION + 10)) >"$LOG.sink" 2>"$LOG.sink.err"
	wait_for 10 grep -q "sink ready" "$LOG.sink.err"
	cpu_mark
	ip netns exec "$H0" "${EP[@]}" "$GEN" gen -i eth0 --dst-ip "$IP1" "${GEN_DST_MAC[@]}" --size 64 --duration "$DURATION" --json \
		>"$LOG.gen" 2>"$LOG.gen.err" || true
	cpu_mark
	wait "$sink" 2>/dev/null || true
	netns_stop "$sink" || true
	grep -o '"pps":[0-9.]*' "$LOG.sink" | cut -d: -f2 | awk '{printf "%.4f\n", $1 / 1e6}'
}

run_ping() { # median RTT (microseconds) of one echo every 5 ms, from ping's per-echo lines
	cpu_mark
	ip netns exec "$H0" "${EP[@]}" ping -n -i 0.005 -c $((DURATION * 200)) -W 1 "$IP1" >"$LOG.ping" 2>&1 || true
	cpu_mark
	ping_median_us "$LOG.ping"
}

run_rtchange() { # p99 (µs) of a route change reaching the wire, under a TCP stream (none with --rtchange-alone); all in $LOG.rtchange
	local net=${TOPO_GW1%.*} srv probe gen
	local alt=$net.3 altmac=02:00:00:00:00:99 probe_ip=$net.200
	ip -n "$MID" neigh replace "$alt" lladdr "$altmac" dev m1 nud permanent
	netns_bg srv "$H1" "${EP[@]}" iperf3 -s -1 -p 5201 >"$LOG.server" 2>&1
	wait_for 5 sh -c "ip netns exec '$H1' ss -ltn | grep -q ':5201 '"
	rm -f "$LOG.ready"
	netns_bg probe "$H1" python3 "$SRC/tools/fwd-bench/rtchange.py" --dev eth0 --router-ns "$MID" --oif m1 \
		--dst "$probe_ip" --port 7777 --gw-a "$IP1" --mac-a "$TOPO_MAC1" --gw-b "$alt" --mac-b "$altmac" \
		--seconds "$DURATION" --ready "$LOG.ready" --trace "$LOG.rtchange.trace" >"$LOG.rtchange" 2>&1
	wait_for 10 test -e "$LOG.ready"
	cpu_mark
	netns_bg gen "$H0" "${EP[@]}" "$GEN" gen -i eth0 --dst-ip "$probe_ip" "${GEN_DST_MAC[@]}" --dport 7777 \
		--rate 10000 --duration $((DURATION + 60)) >"$LOG.gen" 2>&1
	local client=""
	if [ -z "$RTCHANGE_ALONE" ]; then
		ip netns exec "$H0" "${EP[@]}" iperf3 -c "$IP1" -p 5201 -t $((DURATION + 60)) -C "$CC" >"$LOG.client" 2>&1 &
		client=$!
	fi
	wait "$probe" 2>/dev/null || true
	cpu_mark
	[ -z "$client" ] || { kill "$client" 2>/dev/null; wait "$client" 2>/dev/null; }
	netns_stop "$gen" || true
	netns_stop "$srv" || true
	ip -n "$MID" route del "$probe_ip/32" 2>/dev/null
	ip -n "$MID" neigh del "$alt" dev m1 2>/dev/null
	grep -o '"p99_us": [0-9.]*' "$LOG.rtchange" | cut -d' ' -f2
}

run_idle() { # the forwarder's CPU with no traffic; the figure is that CPU %
	cpu_mark
	sleep "$DURATION"
	cpu_mark
	read -r t0 p0 _ < <(head -1 "$LOG.cpu")
	read -r t1 p1 _ < <(tail -1 "$LOG.cpu")
	awk -v p="$((p1 - p0))" -v hz="$HZ" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.1f\n", 100 * p / hz / (t1 - t0) }'
}

# accounting WHAT: sets ACCOUNTING to ',"unaccounted":N' for a udp64 sample through xdp-fwd
# (runs in this shell, so that its notes reach the summary), N = frames the
# generator sent - frames the sink received - the drops that were counted: xdp-fwd's (every
# drop counter of its exit totals (gate_drain too: an offload gate's drain) and the offload's "lost"; not xsk_fill_empty, which in copy
# mode counts frames xsk_rx_dropped already counts; tx_unsent and tx_dropped_kernel, frames in
# tx_packets that never left, the second what the output veth freed with its peer's ring full)
# and the sink socket's kernel counters. A note when N is not 0.
accounting() {
	local sent recv sink_drops fwd_drops n
	ACCOUNTING=""
	sent=$(grep -o '"frames":[0-9]*' "$LOG.gen" | head -1 | cut -d: -f2)
	recv=$(grep -o '"frames":[0-9]*' "$LOG.sink" | head -1 | cut -d: -f2)
	sink_drops=$(grep -o '"rx_dropped":[0-9]*\|"rx_ring_full":[0-9]*' "$LOG.sink" | cut -d: -f2 | awk '{s += $1} END {print s + 0}')
	fwd_drops=$(awk '/^total/ {t = 1; next}
		t { for (i = 1; i < NF; i++) { k = $i; sub(/:$/, "", k)
			if (k ~ /^(tx_full|no_port|invalid|xsk_rx_dropped|xsk_rx_ring_full|xsk_rx_invalid|xsk_tx_invalid|down|tx_unsent|tx_dropped_kernel|gate_drain|lost)$/) { v = $(i + 1); sub(/,$/, "", v); s += v } } }
		END {print s + 0}' "$LOG.fwd")
	# Without a report the sample counts as not exact (null) in the summary.
	[ -n "$sent" ] && [ -n "$recv" ] || { ACCOUNTING=',"unaccounted":null'; note "$1: no generator or sink report"; return; }
	n=$((sent - recv - sink_drops - fwd_drops))
	[ "$n" = 0 ] || note "$1: $n frames unaccounted ($sent sent, $recv received, $sink_drops dropped at the sink, $fwd_drops counted by xdp-fwd)"
	ACCOUNTING=$(printf ',"unaccounted":%s' "$n")
}

# sample REP WORKLOAD SYSTEM
sample() {
	local rep=$1 wl=$2 sys=$3 mtu unit value t0 t1 p0 p1 s0 s1 q0 q1 extra=""
	case "$wl" in
	tcp1g) mtu=1500; unit=Gbit/s ;;
	tcp*) mtu=${wl#tcp}; unit=Gbit/s ;;
	udp64) mtu=1500; unit=Mpps ;;
	ping|rtchange) mtu=1500; unit=us ;;
	idle) mtu=1500; unit=cpu% ;;
	esac
	if [ "$wl" = rtchange ] && [ "$TOPOLOGY" = router ]; then
		case " $ROUTERS " in *" $sys "*) ;; *) note "rtchange/$sys skipped: it does not route"; return 0 ;; esac
		[ "$sys" != dpdk_l3fwd ] || { note "rtchange/dpdk_l3fwd skipped: its routes are its own, set at start"; return 0; }
	fi
	LOG=$OUT/logs/$wl-$sys-$rep
	set_mtu "$mtu"
	start_system "$sys" "$mtu" || return 0
	rm -f "$LOG.cpu"
	case "$wl" in
	tcp1g) value=$(run_tcp 1G) || value="" ;;
	tcp*) value=$(run_tcp) || value="" ;;
	udp64) value=$(run_udp64) || value="" ;;
	ping) value=$(run_ping) || value="" ;;
	idle) value=$(run_idle) || value="" ;;
	rtchange) RTCHANGE=""; value=$(run_rtchange) || value=""; RTCHANGE=$(grep -o '{.*}' "$LOG.rtchange" 2>/dev/null | tail -1) ;;
	esac
	read -r t0 p0 s0 q0 < <(head -1 "$LOG.cpu")
	read -r t1 p1 s1 q1 < <(tail -1 "$LOG.cpu")
	# A forwarder that died during the sample left the traffic to whatever took over (in the
	# router topology the kernel forwards once its XDP program is gone): no figure.
	if [ -n "$FWD_PID" ] && ! alive "$FWD_PID"; then
		local st=0
		wait "$FWD_PID" 2>/dev/null || st=$?
		FWD_PID=""
		note "$wl/$sys repeat $rep: the forwarder died during the sample (exit status $st$([ "$st" -gt 128 ] && echo ", signal $(kill -l $((st - 128)))")), no figure (logs/$wl-$sys-$rep.fwd)"
		stop_system "$sys"
		return 0
	fi
	stop_system "$sys"
	[ -n "$value" ] || { value=0; note "$wl/$sys repeat $rep: no result (logs/$wl-$sys-$rep.*)"; }
	if [ "${sys#xdp_fwd}" != "$sys" ]; then
		# Its exit totals: slow-path allocations (summed over pools) and frames still out.
		local slow out
		slow=$(awk '/^total/ {t = 1} t && /slow allocs/ {for (i = 1; i < NF; i++) if ($i == "allocs") s += $(i + 1)} END {print s + 0}' "$LOG.fwd")
		out=$(sed -n 's/^frames still out: \([0-9]*\)$/\1/p' "$LOG.fwd")
		extra=$(printf ',"slow_allocs":%s,"frames_out":%s' "$slow" "${out:-null}")
		[ "$slow" = 0 ] && [ "${out:-x}" = 0 ] ||
			note "$wl/$sys repeat $rep: $slow slow-path allocations, frames still out at exit: ${out:-not reported}"
		if [ "${sys#xdp_fwd_pcap}" != "$sys" ]; then # frames the capture had no room for
			extra=$extra$(printf ',"capture_dropped":%s' \
				"$(sed -n 's/.*capture dropped \([0-9]*\) .*/\1/p' "$LOG.fwd" | tail -1 | grep . || echo null)")
		fi
		if [ "$wl" = udp64 ]; then
			accounting "$wl/$sys repeat $rep"
			extra=$extra$ACCOUNTING
		fi
	fi
	if [ "$wl" = rtchange ] && [ -n "$RTCHANGE" ]; then
		extra=$extra,\"rtchange\":$(tr -d ' ' <<<"$RTCHANGE")
	fi
	if [ "$wl" = udp64 ]; then
		extra=$extra$(printf ',"sent_mpps":%s,"loss_pct":%s' \
			"$(grep -o '"pps":[0-9.]*' "$LOG.gen" | cut -d: -f2 | awk '{printf "%.4f", $1 / 1e6}')" \
			"$(grep -o '"loss_pct":[0-9.]*' "$LOG.sink" | cut -d: -f2)")
	fi
	awk -v rep="$rep" -v wl="$wl" -v sys="$sys" -v unit="$unit" -v v="$value" -v hz="$HZ" \
		-v p="$((p1 - p0))" -v s="$((s1 - s0))" -v q="$((q1 - q0))" -v t0="$t0" -v t1="$t1" -v pid="$FWD_PID" -v extra="$extra" -v topo="$TOPOLOGY" \
		'BEGIN { w = t1 - t0; fwd = (sys == "bridge" || sys == "xdp_redirect" || sys ~ /^(kernel_fwd|xdp_fib)/) ? "null" : sprintf("%.1f", 100 * p / hz / w);
			 printf "{\"repeat\":%d,\"workload\":\"%s\",\"system\":\"%s\",\"value\":%s,\"unit\":\"%s\",\"topology\":\"%s\",\"seconds\":%.2f,\"fwd_cpu_pct\":%s,\"softirq_cpu_pct\":%.1f,\"idle_poll_cpu_pct\":%.1f%s}\n",
			 rep, wl, sys, v, unit, topo, w, fwd, 100 * s / hz / w, q / 1e4 / w, extra }' >>"$SAMPLES"
	echo "  $wl $sys #$rep: $value $unit" >&2
}

echo "fwd-bench: ${#SYS[@]} systems x ${#WLS[@]} workloads x $REPEATS repeats, $DURATION s each -> $OUT" >&2
for ((rep = 1; rep <= REPEATS; rep++)); do
	for wl in "${WLS[@]}"; do
		# Rotate the order each repetition so no system always runs first (or after another).
		for ((i = 0; i < ${#SYS[@]}; i++)); do
			sample "$rep" "$wl" "${SYS[(i + rep - 1) % ${#SYS[@]}]}"
		done
	done
done

# --- summary: samples.json, summary.md, chart.png ---

{ echo "["; sed '$!s/$/,/' "$SAMPLES"; echo "]"; } >"$OUT/samples.json"
rm -f "$SAMPLES"
machine="$(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs, kernel $(uname -r), TCP $CC"
opts=""
[ "$TOPOLOGY" = l2 ] || opts+=" --topology $TOPOLOGY"
[ "$PIN" = fwd ] || opts+=" --pin $PIN"
[ "$ROUTES" = 0 ] || opts+=" --routes $ROUTES"
[ -z "$CC_GIVEN" ] || opts+=" --cc $CC"
case " ${SYS[*]} " in *" dpdk_l3fwd "*) [ -z "$L3FWD" ] || opts+=" --l3fwd L3FWD" ;; esac
cmdline="tools/fwd-bench/fwd-bench.sh$opts${XSK_FWD:+ --xsk-fwd XSK_FWD}${RECEIVER_GRO:+ $RECEIVER_GRO}${HOST_OFFLOADS:+ $HOST_OFFLOADS} --duration $DURATION --repeats $REPEATS --systems $SYSTEMS --workloads $WORKLOADS"
"$SRC/tools/fwd-bench/summarize.sh" "$OUT" "$machine" "$cmdline" "$(uptime | sed 's/.*load average: //')" "${NOTES[@]+"${NOTES[@]}"}"
cat "$OUT/summary.md"
