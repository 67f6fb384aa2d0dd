#!/usr/bin/env bash
# Runs route-bench briefly on 1000-prefix tables and checks what it prints: the JSON shape,
# every table and system with its numbers, the two systems agreeing when rte_lpm is built in,
# the text output's ratio line, and clear errors for bad options. Timings are not checked:
# benchmarks measure, tests do not.
set -euo pipefail
bench=${UMEM_BUILD_DIR:?}/tools/route-bench/route-bench
read -ra emu <<<"${UMEM_EMULATOR:-}" # cross builds: qemu-user and its arguments
fail() { echo "FAIL: $*" >&2; exit 1; }
if ! command -v jq >/dev/null; then
	echo "SKIP: jq not installed (tools/setup.sh installs it)" >&2
	exit 77
fi
[ -x "$bench" ] || fail "$bench not built"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"${emu[@]}" "$bench" --help >"$tmp/help"
for o in --ipv4 --ipv6 --seed --rounds --lookups --no-dpdk --dpdk-mem --json --help --version; do
	grep -qE -- "^  (-[a-zA-Z0-9], |    )$o( |\$)" "$tmp/help" || fail "--help does not list $o"
done

run=(--ipv4 1000 --ipv6 1000 --rounds 1 --lookups 4096)
"${emu[@]}" "$bench" "${run[@]}" --json >"$tmp/out.json" 2>"$tmp/err" || fail "route-bench --json exited $?: $(cat "$tmp/err")"
jq -e . "$tmp/out.json" >/dev/null || fail "output is not JSON"
jq -e '.cpu | (.vendor, .family, .model, .name) | type == "string"' "$tmp/out.json" >/dev/null ||
	fail "no cpu in the JSON"
[ "$(jq -r '[.tables[] | "\(.family):\(.prefixes)"] | join(" ")' "$tmp/out.json")" = "4:1000 6:1000" ] ||
	fail "tables: $(jq -c '[.tables[] | [.family, .prefixes]]' "$tmp/out.json")"
# umem first in every table; rte_lpm beside it exactly when it is built in and not skipped.
want4="umem_lpm4" want6="umem_lpm6"
if jq -e 'has("rte_absent") | not' "$tmp/out.json" >/dev/null; then
	want4="umem_lpm4 rte_lpm" want6="umem_lpm6 rte_lpm6"
	jq -e '[.tables[].agree] | all' "$tmp/out.json" >/dev/null || fail "umem and rte disagree"
fi
[ "$(jq -r '.tables[0].systems | map(.name) | join(" ")' "$tmp/out.json")" = "$want4" ] || fail "IPv4 systems"
[ "$(jq -r '.tables[1].systems | map(.name) | join(" ")' "$tmp/out.json")" = "$want6" ] || fail "IPv6 systems"
bad=$(jq -r '.tables[].systems[] | select(([.load_s, .load_cpu_s, .memory_bytes, .ns.random, .ns.random_bulk32,
	.ns.table, .ns.table_bulk32] | all(type == "number" and . > 0)) | not) | .name' "$tmp/out.json")
[ -z "$bad" ] || fail "systems with missing numbers: $bad"
# The tables are the seed's: the same seed, the same tables (group counts included).
"${emu[@]}" "$bench" "${run[@]}" --json --no-dpdk >"$tmp/again.json" 2>/dev/null || fail "second run failed"
[ "$(jq -c '[.tables[] | .groups]' "$tmp/out.json")" = "$(jq -c '[.tables[] | .groups]' "$tmp/again.json")" ] ||
	fail "the same seed made different tables"
# Without DPDK at build time the first run said why already; with it, --no-dpdk is the reason.
absent=$(jq -r '.rte_absent // "--no-dpdk"' "$tmp/out.json")
jq -e --arg why "$absent" '(.rte_absent == $why or .rte_absent == "--no-dpdk") and ([.tables[].systems | length] == [1, 1])' "$tmp/again.json" >/dev/null ||
	fail "--no-dpdk still measured rte_lpm"

# Text: a table per size, and the ratio line when both ran.
"${emu[@]}" "$bench" "${run[@]}" >"$tmp/out.txt" 2>&1 || fail "text run failed"
grep -q "^IPv4, 1000 prefixes" "$tmp/out.txt" || fail "no IPv4 table in the text"
grep -q "^umem_lpm6 " "$tmp/out.txt" || fail "no umem_lpm6 row in the text"
if [ "$want4" != umem_lpm4 ]; then
	grep -q "^umem/rte " "$tmp/out.txt" || fail "no ratio line"
fi

# Bad input: a clear message naming the option, exit 2.
for bad in "--rounds 0" "--lookups 33" "--ipv4 0x10" "--ipv6 1,,2,x" "--bogus"; do
	set +e
	# shellcheck disable=SC2086
	"${emu[@]}" "$bench" $bad >/dev/null 2>"$tmp/e"
	rc=$?
	set -e
	[ $rc = 2 ] || fail "'$bad' exited $rc, not 2"
	grep -q "^route-bench: " "$tmp/e" || fail "'$bad': no message naming the program: $(cat "$tmp/e")"
done
echo "route-bench: JSON and text output as expected"
