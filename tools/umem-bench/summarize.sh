#!/usr/bin/env bash
# Summarizes several `umem-bench --json` runs as the Markdown table of docs/BENCHMARKS.md:
# per path the median over runs of the per-run medians, the best run's median (the quietest
# moment of a shared machine), the lowest min and highest max, and the ratios to the baselines
# of the same run (median over runs).
#   tools/umem-bench/summarize.sh run1.json run2.json ...
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 RUN.json..." >&2; exit 2; }
command -v jq >/dev/null || { echo "summarize.sh: jq is not installed" >&2; exit 1; }
jq -rs '
def median: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor]
	else (.[length / 2 - 1] + .[length / 2]) / 2 end;
def r(d): if . == null then "-" else (. * pow(10; d) | round / pow(10; d) | tostring) end;
def ratio(a; b): if a == null or b == null then null else a / b end;
length as $runs | (.[0].results | map(.name)) as $order
| [.[] | (.results | map({key: .name, value: .}) | from_entries) as $by
	| .results[] | . + {x_mutex: ratio(.ns_per_op; $by.mutex_freelist.ns_per_op),
			    x_fast: ratio(.ns_per_op; $by.pool_fast.ns_per_op),
			    x_dpdk: ratio(.ns_per_op; $by.dpdk_mempool.ns_per_op)}]
| group_by(.name) | map({key: .[0].name, value: {
	n: length,
	ns: (map(.ns_per_op) | median), cyc: (map(.cycles_per_op) | median),
	best: (map(.ns_per_op) | min), best_cyc: (map(.cycles_per_op) | min),
	min: (map(.min_ns) | min), max: (map(.max_ns) | max),
	xm: (map(.x_mutex | select(. != null)) | median),
	xf: (map(.x_fast | select(. != null)) | median),
	xd: (map(.x_dpdk | select(. != null)) | median)}}) | from_entries as $s
| "| path | ns/op | cycles/op | best run ns (cycles) | min - max ns | x mutex_freelist | x pool_fast | x dpdk_mempool |",
  "|---|---:|---:|---:|---:|---:|---:|---:|",
  ($order[] | . as $p | $s[$p] |
	"| `\($p)` | \(.ns | r(2)) | \(.cyc | r(1)) | \(.best | r(2)) (\(.best_cyc | r(1))) | \(.min | r(2)) - \(.max | r(2)) | \(.xm | r(2)) | \(.xf | r(2)) | \(.xd | r(2)) |"),
  "",
  "\($runs) runs; ns/op, cycles/op and the ratios: median over the runs of each run'"'"'s median (ratios within each run); min - max: over every round of every run."
' "$@"
