#!/usr/bin/env bash
# The layout check fails on each kind of violation (label unit): a copy of the tree with one
# violation at a time must fail, naming it; the untouched copy passes.
set -uo pipefail
src=${UMEM_SOURCE_DIR:?}
py=$(command -v /usr/bin/python3 || command -v python3) || { echo "FAIL: python3 missing (tools/setup.sh)"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
errors=0
fail() { echo "FAIL: $*" >&2; errors=$((errors + 1)); }
fresh() { rm -rf "$tmp/t"; mkdir -p "$tmp/t"; cp -r "$src"/{include,lib,apps,tools,bpf,docs,test} "$tmp/t/"; }
expect_fail() { # what message
	out=$("$py" "$src/test/arch/check_layout.py" "$tmp/t" 2>&1)
	[ $? = 1 ] || fail "$1: not caught"
	grep -qF "$2" <<<"$out" || fail "$1: the report lacks '$2': $out"
}

fresh
"$py" "$src/test/arch/check_layout.py" "$tmp/t" >/dev/null || fail "the untouched tree fails"

fresh; sed -i '0,/#include/s//#include "..\/..\/lib\/internal.h"\n&/' "$tmp/t/tools/xsk-gen/main.c"
expect_fail "a tool including lib/" "tools/xsk-gen/main.c includes lib/internal.h"

fresh; printf '#include "internal.h"\n' >>"$tmp/t/lib/xdp_attach.h"; printf '#include "xdp_attach.h"\n' >>"$tmp/t/lib/internal.h"
expect_fail "a cycle in lib/" "include cycle"

fresh; printf 'int umem_port__rx_burst(void *p)\n{\n\treturn 0;\n}\n' >>"$tmp/t/lib/port.c"
expect_fail "a hot function outside its file" "lib/port.c defines hot function umem_port__rx_burst"

fresh; sed -i 's|#include "port_internal.h"|#include <bpf/libbpf.h>\n&|' "$tmp/t/lib/port_data.c"
expect_fail "control plane in a hot file" "hot-path file lib/port_data.c reaches control-plane headers: bpf/libbpf.h"

fresh; printf '#include <umem/../../lib/internal.h>\n' >>"$tmp/t/include/umem/common.h"
expect_fail "a public header including lib/" "include/umem/common.h includes lib/internal.h"

fresh; printf '/* a file nobody put in a room */\n' >"$tmp/t/lib/stray.c"
expect_fail "a file in no room" "lib/stray.c is in no room of docs/ARCHITECTURE.md"

fresh; sed -i 's/`lib\/idle.c`/`lib\/idle_gone.c`/' "$tmp/t/docs/ARCHITECTURE.md"
expect_fail "a room naming a file that is not there" "names lib/idle_gone.c in a room, but there is no such file"

fresh; printf '#include "report.h"\n' >>"$tmp/t/apps/xdp-fwd/stats.c"
expect_fail "an include cycle among xdp-fwd's rooms" "include cycle among the rooms of apps/xdp-fwd: report -> stats -> report"

fresh; printf 'extern uint32_t umem__fault_bind_busy;\n' >>"$tmp/t/apps/xdp-fwd/lock.c"
expect_fail "an app declaring a library-private symbol" "apps/xdp-fwd/lock.c declares the library-private umem__fault_bind_busy"

fresh; sed -i 's|tools/common/netns.sh"|test/common/netns.sh"|' "$tmp/t/tools/soak.sh"
expect_fail "a tool sourcing test/" "tools/soak.sh sources a file of test/"

fresh; mv "$tmp/t/test/pool/area_test.c" "$tmp/t/test/pool/test_area.c"
expect_fail "a test_<what>.c" "test/pool/test_area.c: a test program's source is <what>_test.c"

fresh; sed -i 's|^\techo "skip: xdp-fwd not built.*|\tlog "skipped: xdp-fwd not built"|; s|^\texit 77$|\texit 0|' "$tmp/t/test/gen/gen_netns.sh"
# The line the check names, wherever the script has it now.
skip_line=$(grep -n 'log "skipped: xdp-fwd not built"' "$tmp/t/test/gen/gen_netns.sh" | cut -d: -f1)
expect_fail "a skip exiting 0" "test/gen/gen_netns.sh:$skip_line says it skips but does not exit 77 there"

[ $errors = 0 ] && echo "layout check: every violation caught"
exit $((errors > 0))
