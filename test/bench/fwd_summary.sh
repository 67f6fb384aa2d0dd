#!/usr/bin/env bash
# fwd-bench's summary judges a target from the unrounded ratio: a median 0.04 % or 0.015 %
# short of "at least 1.0x" is missed, not "1.00 (met)"; one just inside a limit is met; and
# the shown ratio never looks better than the real one. The router topology's table: ratios to
# the wire and to l3fwd, the "no run below l3fwd's median" target taken from the minimum, the
# repetitions' own ratios ("pairs") beside the medians' ratio, and the route change's p99
# against its absolute limit.
set -uo pipefail
SRC=${UMEM_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sample() { # WORKLOAD SYSTEM VALUE UNIT
	printf '{"repeat":1,"workload":"%s","system":"%s","value":%s,"unit":"%s","seconds":4,"fwd_cpu_pct":50.0,"softirq_cpu_pct":10.0,"idle_poll_cpu_pct":0.0}\n' "$@"
}
{
	echo "["
	sample udp64 xdp_fwd 0.5468 Mpps
	echo ","
	sample udp64 xsk_fwd 0.5470 Mpps
	echo ","
	sample udp64 dpdk_af_xdp 0.54704 Mpps
	echo ","
	sample udp64 xdp_fwd 0.54696 Mpps
	echo ","
	sample udp64 xdp_fwd 0.54696 Mpps
	echo ","
	sample tcp1500 xdp_fwd 2.01 Gbit/s
	echo ","
	sample tcp1500 xsk_fwd 1.0 Gbit/s
	echo ","
	sample ping xdp_fwd 15.9 us
	echo ","
	sample ping xdp_redirect 8.0 us
	echo "]"
} >"$dir/samples.json"
"$SRC/tools/fwd-bench/summarize.sh" "$dir" machine command load >/dev/null 2>&1 || { echo "FAIL: summarize.sh failed"; exit 1; }
rc=0
expect() { # PATTERN FILE WHAT SHOWN: a line of FILE matches PATTERN, else WHAT fails (and SHOWN's lines)
	grep -q -- "$1" "$2" || { echo "FAIL: $3:"; grep -- "$4" "$2"; rc=1; }
}
# xdp_fwd's UDP median is 0.54696: 0.99993x xsk_fwd, 0.99985x testpmd.
expect '| UDP 64 B pps vs xsk_fwd | 0.999 (target ≥ 1.0: missed)' "$dir/summary.md" "0.99993x is not judged missed" 'UDP 64 B pps vs xsk_fwd'
expect '| UDP 64 B pps vs dpdk_af_xdp | 0.999 (target ≥ 1.0: missed)' "$dir/summary.md" "0.99985x is not judged missed" 'vs dpdk_af_xdp'
expect '| TCP MTU 1500 vs xsk_fwd | 2.010 (target ≥ 1.2: met)' "$dir/summary.md" "2.01x is not shown as 2.010" 'TCP MTU 1500 vs xsk_fwd'
expect '| ping RTT vs xdp_redirect | 1.988 (target ≤ 2.0: met)' "$dir/summary.md" "1.9875x is not judged met (shown rounded up)" 'ping RTT'

# Router samples, by repetition: xdp_fwd_l3 3.0 (median), 2.0 (min), 4.0; the wire 3.1
# (median), 2.5, 5.0; l3fwd 2.5 in the first only. The medians' ratio to the wire (0.967) and
# the repetitions' own ratios (0.97, 0.80, 0.80: median 0.80) tell apart.
rdir=$dir/router
mkdir -p "$rdir"
rsample() { # REPEAT SYSTEM VALUE
	printf '{"repeat":%s,"workload":"tcp1500","system":"%s","value":%s,"unit":"Gbit/s","topology":"router","seconds":4,"fwd_cpu_pct":50.0,"softirq_cpu_pct":10.0,"idle_poll_cpu_pct":0.0}\n' "$@"
}
{
	echo "["
	rsample 1 xdp_fwd_l3 3.0; echo ","
	rsample 2 xdp_fwd_l3 2.0; echo ","
	rsample 3 xdp_fwd_l3 4.0; echo ","
	rsample 1 dpdk_l3fwd 2.5; echo ","
	rsample 1 xdp_fwd 3.1; echo ","
	rsample 2 xdp_fwd 2.5; echo ","
	rsample 3 xdp_fwd 5.0; echo ","
	# rtchange: p99 µs of a route change on the wire, against an absolute 10 ms.
	printf '{"repeat":1,"workload":"rtchange","system":"xdp_fwd_l3","value":9999.5,"unit":"us","topology":"router","seconds":4,"fwd_cpu_pct":50.0,"softirq_cpu_pct":10.0,"idle_poll_cpu_pct":0.0,"rtchange":{"changes":300,"p50_us":210.0,"p99_us":9999.5}}\n'; echo ","
	printf '{"repeat":1,"workload":"rtchange","system":"xdp_fwd_l3_offload","value":10000.5,"unit":"us","topology":"router","seconds":4,"fwd_cpu_pct":50.0,"softirq_cpu_pct":10.0,"idle_poll_cpu_pct":0.0}\n'
	echo "]"
} >"$rdir/samples.json"
"$SRC/tools/fwd-bench/summarize.sh" "$rdir" machine command load >/dev/null 2>&1 || { echo "FAIL: summarize.sh failed on router samples"; exit 1; }
expect '^| tcp1500 | xdp_fwd_l3 | 3 Gbit/s | 2 | 2-4 | 0.97 | 1.20 | 50 | 10 | 3 |$' "$rdir/summary.md" "the router row of xdp_fwd_l3" 'xdp_fwd_l3 |'
expect '| TCP MTU 1500: l3 vs wire | 0.967 (target ≥ 0.95: met); pairs 0.80 (0.80-0.97, n 3) |' "$rdir/summary.md" "l3 vs wire, with its repetitions' ratios" 'l3 vs wire'
expect '| TCP MTU 1500: l3 vs l3fwd | 1.200 (target ≥ 1.1: met); pairs 1.20 (1.20-1.20, n 1) |' "$rdir/summary.md" "pairs only of the repetitions that ran both" 'l3 vs l3fwd'
expect "| TCP MTU 1500: l3's slowest run vs l3fwd's median | 0.800 (target ≥ 1.0: missed) |" "$rdir/summary.md" "the slowest run is not judged from the minimum" 'slowest'
expect '| route change on the wire, p99 (median of the samples): l3 | 9999.5 µs (target ≤ 10000 µs: met) |' "$rdir/summary.md" "a p99 of 9999.5 µs is not judged met" 'route change'
expect '| route change on the wire, p99 (median of the samples): l3 with offload | 10000.5 µs (target ≤ 10000 µs: missed) |' "$rdir/summary.md" "a p99 of 10000.5 µs is not judged missed" 'route change'
! grep -q 'vs xdp_redirect' "$rdir/summary.md" || { echo "FAIL: router samples got the l2 table"; rc=1; }
[ $rc = 0 ] && echo "ok"
exit $rc
