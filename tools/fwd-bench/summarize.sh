#!/usr/bin/env bash
# summarize.sh DIR MACHINE COMMAND LOADAVG [NOTE...]: turns DIR/samples.json (one sample per
# line, as fwd-bench.sh writes it) into DIR/summary.md (medians, min-max, ratio to
# xdp_redirect, CPU, the project's targets) and DIR/chart.png (gnuplot; skipped without it).
# Samples of the router topology ("topology":"router") get the router table instead: medians,
# the minimum of the runs, ratios to xdp-fwd's wire (xdp_fwd) and to DPDK's l3fwd, and the
# router targets.
# Run it again on an old results folder to redo the table.
set -euo pipefail
dir=${1:?results folder}
machine=${2:-?} cmdline=${3:-?} load=${4:-?}
shift 4 || shift $#
[ -s "$dir/samples.json" ] || { echo "summarize.sh: no $dir/samples.json" >&2; exit 2; }

SYSTEMS="bridge kernel_fwd xdp_redirect xdp_fib dpdk_l3fwd xdp_fwd xdp_fwd_b xdp_fwd_offload xdp_fwd_lowlat xdp_fwd_pcap xdp_fwd_pcap_none xdp_fwd_scraped xsk_fwd dpdk_af_xdp xdp_fwd_l3 xdp_fwd_l3_offload kernel_fwd_full xdp_fib_full xdp_fwd_l3_full"
WORKLOADS="tcp1500 tcp9000 tcp64000 udp64 ping tcp1g idle rtchange"

# awk functions: a sample line's field k (quotes kept), and the median of a space-separated
# list (its minimum and maximum left in MIN and MAX).
# shellcheck disable=SC2016 # awk's $0, not the shell's
AWK_FNS='
	function field(k,   m) { return match($0, "\"" k "\":[^,}]*") ? substr($0, RSTART + length(k) + 3, RLENGTH - length(k) - 3) : "" }
	function median(list,   a, n, i, j, t) {
		n = split(list, a, " ")
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		MIN = a[1]; MAX = a[n]
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}'

# One line per (workload, system): wl sys n median min max unit fwd_cpu softirq_cpu idle_poll_cpu
# (CPU: medians; "-" when the forwarder is the kernel). Workload and system order as above.
stats() {
	awk -v systems="$SYSTEMS" -v workloads="$WORKLOADS" "$AWK_FNS"'
	/"workload"/ {
		k = field("workload") SUBSEP field("system"); gsub(/"/, "", k)
		v[k] = v[k] " " field("value"); n[k]++; unit[k] = field("unit")
		c = field("fwd_cpu_pct"); if (c != "null") cpu[k] = cpu[k] " " c
		sq[k] = sq[k] " " field("softirq_cpu_pct")
		q = field("idle_poll_cpu_pct"); if (q != "") ip[k] = ip[k] " " q
	}
	END {
		ns = split(systems, S, " "); nw = split(workloads, W, " ")
		for (i = 1; i <= nw; i++) for (j = 1; j <= ns; j++) {
			k = W[i] SUBSEP S[j]
			if (!(k in n)) continue
			m = median(v[k]); lo = MIN; hi = MAX
			u = unit[k]; gsub(/"/, "", u)
			# Full precision: the ratios and verdicts are taken from these; the tables round.
			printf "%s %s %d %.10g %.10g %.10g %s %s %.0f %s\n", W[i], S[j], n[k], m, lo, hi, u,
				(k in cpu) ? sprintf("%.0f", median(cpu[k])) : "-", median(sq[k]),
				(k in ip) ? sprintf("%.0f", median(ip[k])) : "-"
		}
	}' "$dir/samples.json"
}
stats >"$dir/stats.txt"

ratio() { # WORKLOAD SYSTEM BASE [DIGITS [min]]: median(SYSTEM) / median(BASE) (2 digits), or "-";
	# with "min" SYSTEM's minimum instead of its median
	awk -v w="$1" -v s="$2" -v b="$3" -v d="${4:-2}" -v c="$([ "${5:-}" = min ] && echo 5 || echo 4)" \
		'$1 == w && $2 == s {x = $c} $1 == w && $2 == b {y = $4}
		END { if (x != "" && y > 0) printf "%.*f", d, x / y; else printf "-" }' "$dir/stats.txt"
}

pairs() { # WORKLOAD SYSTEM BASE: "; pairs MEDIAN (MIN-MAX, n N)", the repetitions' own ratios
	# (SYSTEM's sample over BASE's of the same repetition, which ran beside it: they weigh the
	# machine's drift between repetitions less than the ratio of the medians does); nothing
	# when no repetition ran both
	awk -v w="\"$1\"" -v s="\"$2\"" -v b="\"$3\"" "$AWK_FNS"'
	/"workload"/ && field("workload") == w {
		r = field("repeat")
		if (field("system") == s) x[r] = field("value"); else if (field("system") == b) y[r] = field("value")
	}
	END {
		for (r in x) if ((r in y) && y[r] > 0) { l = l " " x[r] / y[r]; n++ }
		if (n) { m = median(l); printf "; pairs %.2f (%.2f-%.2f, n %d)", m, MIN, MAX, n }
	}' "$dir/samples.json"
}

cpu_of() { # WORKLOAD SYSTEM: median forwarder CPU %, or "-"
	awk -v w="$1" -v s="$2" '$1 == w && $2 == s {x = $8} END { printf "%s", (x == "") ? "-" : x }' "$dir/stats.txt"
}

verdict() { # VALUE OP LIMIT: "met" or "missed" (OP: ge or le)
	awk -v v="$1" -v op="$2" -v l="$3" 'BEGIN { print ((op == "ge") ? (v >= l) : (v <= l)) ? "met" : "missed" }'
}

target() { # LABEL WORKLOAD BASE OP LIMIT [SYSTEM [min]]: SYSTEM's (default xdp_fwd) median
	# (its minimum with "min") against BASE's median (a ratio)
	local r
	# The verdict from the unrounded ratio, shown to 3 digits rounded away from the limit's
	# side (down for "at least", up for "at most"): 0.9996 rounded to 1.00 would read as
	# meeting "at least 1.0".
	r=$(ratio "$2" "${6:-xdp_fwd}" "$3" 9 "${7:-}")
	if [ "$r" = - ]; then
		echo "| $1 | not measured |"
	else
		echo "| $1 | $(awk -v r="$r" -v op="$4" 'BEGIN { x = r * 1000; c = int(x + 1e-6); if (op == "le" && c < x - 1e-6) c++; printf "%.3f", c / 1000 }') (target $([ "$4" = ge ] && echo ≥ || echo ≤) $5: $(verdict "$r" "$4" "$5"))$([ "${7:-}" = min ] || pairs "$2" "${6:-xdp_fwd}" "$3") |"
	fi
}

abs_target() { # LABEL WORKLOAD SYSTEM LIMIT UNIT: SYSTEM's median at most LIMIT
	local m
	m=$(awk -v w="$2" -v s="$3" '$1 == w && $2 == s {x = $4} END { printf "%s", x }' "$dir/stats.txt")
	if [ -z "$m" ]; then
		echo "| $1 | not measured |"
	else
		echo "| $1 | $(printf %.1f "$m") $5 (target ≤ $4 $5: $(verdict "$m" le "$4")) |"
	fi
}

cpu_target() { # LABEL WORKLOAD LIMIT: xdp_fwd's median forwarder CPU %
	local c
	c=$(cpu_of "$2" xdp_fwd)
	if [ "$c" = - ]; then
		echo "| $1 | not measured |"
	else
		echo "| $1 | $c % (target ≤ $3 %: $(verdict "$c" le "$3")) |"
	fi
}

router_summary() {
	echo "| workload | system | median | min | min-max | vs wire (xdp_fwd) | vs l3fwd | fwd CPU % | softirq CPU % | n |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	while read -r wl sys n med lo hi unit cpu sq _; do
		echo "| $wl | $sys | $(printf %.4g "$med") $unit | $(printf %.4g "$lo") | $(printf %.4g "$lo")-$(printf %.4g "$hi") | $(ratio "$wl" "$sys" xdp_fwd) | $(ratio "$wl" "$sys" dpdk_l3fwd) | $cpu | $sq | $n |"
	done <"$dir/stats.txt"
	echo
	echo "| target | ratio |"
	echo "|---|---|"
	target "TCP MTU 1500: l3 vs wire" tcp1500 xdp_fwd ge 0.95 xdp_fwd_l3
	target "UDP 64 B pps: l3 vs wire" udp64 xdp_fwd ge 0.95 xdp_fwd_l3
	target "TCP MTU 1500: l3 vs l3fwd" tcp1500 dpdk_l3fwd ge 1.1 xdp_fwd_l3
	target "UDP 64 B pps: l3 vs l3fwd" udp64 dpdk_l3fwd ge 1.1 xdp_fwd_l3
	target "TCP MTU 1500: l3's slowest run vs l3fwd's median" tcp1500 dpdk_l3fwd ge 1.0 xdp_fwd_l3 min
	target "UDP 64 B pps: l3's slowest run vs l3fwd's median" udp64 dpdk_l3fwd ge 1.0 xdp_fwd_l3 min
	target "TCP MTU 1500: l3 offload vs xdp_fib" tcp1500 xdp_fib ge 1.0 xdp_fwd_l3_offload
	target "UDP 64 B pps: l3 offload vs xdp_fib" udp64 xdp_fib ge 1.0 xdp_fwd_l3_offload
	target "ping RTT: l3 vs wire" ping xdp_fwd le 1.0 xdp_fwd_l3
	target "TCP MTU 1500: l3, full table vs 10 routes" tcp1500 xdp_fwd_l3 ge 0.95 xdp_fwd_l3_full
	target "UDP 64 B pps: l3, full table vs 10 routes" udp64 xdp_fwd_l3 ge 0.95 xdp_fwd_l3_full
	abs_target "route change on the wire, p99 (median of the samples): l3" rtchange xdp_fwd_l3 10000 µs
	abs_target "route change on the wire, p99 (median of the samples): l3 with offload" rtchange xdp_fwd_l3_offload 10000 µs
}

{
	echo "Machine: $machine. Load average at the end: $load."
	echo
	echo "Command: \`$cmdline\`"
	echo
	if grep -q '"topology":"router"' "$dir/samples.json"; then
		router_summary
	else
		echo "| workload | system | median | min-max | vs xdp_redirect | fwd CPU % | softirq CPU % | idle poll CPU % | n |"
		echo "|---|---|---|---|---|---|---|---|---|"
		while read -r wl sys n med lo hi unit cpu sq ipoll; do
			echo "| $wl | $sys | $(printf %.4g "$med") $unit | $(printf %.4g "$lo")-$(printf %.4g "$hi") | $(ratio "$wl" "$sys" xdp_redirect) | $cpu | $sq | $ipoll | $n |"
		done <"$dir/stats.txt"
		echo
		echo "| target | xdp_fwd |"
		echo "|---|---|"
		target "TCP MTU 1500 vs xdp_redirect" tcp1500 xdp_redirect ge 0.6
		target "TCP MTU 1500 vs xsk_fwd" tcp1500 xsk_fwd ge 1.2
		target "TCP MTU 9000 vs xdp_redirect" tcp9000 xdp_redirect ge 0.75
		target "TCP MTU 64000 vs xdp_redirect" tcp64000 xdp_redirect ge 0.95
		target "UDP 64 B pps vs xsk_fwd" udp64 xsk_fwd ge 1.0
		target "UDP 64 B pps vs dpdk_af_xdp" udp64 dpdk_af_xdp ge 1.0
		target "ping RTT vs xdp_redirect" ping xdp_redirect le 2.0
		grep -q '"system":"xdp_fwd_lowlat"' "$dir/samples.json" &&
			target "ping RTT vs xdp_redirect, --latency low (xdp_fwd_lowlat)" ping xdp_redirect le 2.0 xdp_fwd_lowlat
		cpu_target "CPU idle" idle 3
		cpu_target "CPU at TCP 1 Gbit/s" tcp1g 25
		if grep -q '"system":"xdp_fwd_offload"' "$dir/samples.json"; then
			echo
			echo "| target | xdp_fwd_offload ratio |"
			echo "|---|---|"
			target "TCP MTU 1500 vs xdp_redirect" tcp1500 xdp_redirect ge 0.9 xdp_fwd_offload
			target "TCP MTU 9000 vs xdp_redirect" tcp9000 xdp_redirect ge 0.9 xdp_fwd_offload
			target "TCP MTU 64000 vs xdp_redirect" tcp64000 xdp_redirect ge 0.9 xdp_fwd_offload
		fi
	fi
	# sent = received + counted drops, in every 64-byte UDP sample through xdp-fwd.
	for sys in xdp_fwd xdp_fwd_offload xdp_fwd_lowlat xdp_fwd_l3 xdp_fwd_l3_offload xdp_fwd_l3_full; do
		total=$(grep -c "\"system\":\"$sys\".*\"unaccounted\"" "$dir/samples.json" || true)
		[ "$total" -gt 0 ] || continue
		exact=$(grep -c "\"system\":\"$sys\".*\"unaccounted\":0[,}]" "$dir/samples.json" || true)
		echo
		echo "| target | $sys |"
		echo "|---|---|"
		echo "| UDP 64 B: sent = received + counted drops | $exact of $total samples ($([ "$exact" = "$total" ] && echo met || echo missed)) |"
	done
	if [ $# -gt 0 ]; then
		echo
		printf -- '- %s\n' "$@" | sort -u
	fi
} >"$dir/summary.md"

command -v gnuplot >/dev/null || { echo "summarize.sh: gnuplot not installed, no chart" >&2; exit 0; }
# Two panels: TCP Gbit/s by MTU, 64-byte UDP Mpps; bars are medians, whiskers min-max.
for panel in tcp udp; do
	awk -v panel="$panel" -v systems="$SYSTEMS" -v workloads="$WORKLOADS" '
	{ m[$1, $2] = $4; lo[$1, $2] = $5; hi[$1, $2] = $6 }
	END {
		ns = split(systems, S, " "); nw = split(workloads, W, " ")
		for (i = 1; i <= nw; i++) {
			if (substr(W[i], 1, 3) != panel || W[i] == "tcp1g") continue
			any = 0
			for (j = 1; j <= ns; j++) any += ((W[i], S[j]) in m)
			if (!any) continue
			line = W[i]
			for (j = 1; j <= ns; j++)
				line = line " " (((W[i], S[j]) in m) ? m[W[i], S[j]] " " lo[W[i], S[j]] " " hi[W[i], S[j]] : "NaN NaN NaN")
			print line
		}
	}' "$dir/stats.txt" >"$dir/chart-$panel.dat"
done
panels=()
[ -s "$dir/chart-tcp.dat" ] && panels+=("tcp:Gbit/s (iperf3, one TCP stream)")
[ -s "$dir/chart-udp.dat" ] && panels+=("udp:Mpps (64-byte UDP at the sink)")
{
	echo "set terminal pngcairo size $((300 + 450 * ${#panels[@]})),480 font \",10\""
	echo "set termoption noenhanced"
	echo "set output \"$dir/chart.png\""
	echo "set multiplot layout 1,${#panels[@]} title \"Forwarding through the middle namespace (median, min-max)\""
	echo "set style data histogram"
	echo "set style histogram errorbars gap 2 lw 1"
	echo "set style fill solid 0.8 border -1"
	echo "set key top left"
	echo "set grid ytics"
	echo "set yrange [0:*]"
	for p in "${panels[@]}"; do
		# Only systems with a figure in this panel (a column of NaN stops gnuplot).
		cols=() i=0
		for s in $SYSTEMS; do
			awk -v c=$((2 + 3 * i)) '$c != "NaN" {f = 1} END {exit !f}' "$dir/chart-${p%%:*}.dat" &&
				cols+=("\"$dir/chart-${p%%:*}.dat\" using $((2 + 3 * i)):$((3 + 3 * i)):$((4 + 3 * i)):xtic(1) title \"$s\" lc $((i + 1))")
			i=$((i + 1))
		done
		echo "set ylabel \"${p#*:}\""
		(IFS=,; echo "plot ${cols[*]}")
	done
	echo "unset multiplot"
} | gnuplot
