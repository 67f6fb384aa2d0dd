#!/usr/bin/env bash
# tools/test.sh runs every stage whichever failed before it, ends with a summary line per stage
# (pass, FAIL, skipped) and exits 1 when any failed. Run on a copy of the script in a scratch
# tree, with cmake, ctest and id stubbed: no build, no set-up, nothing written to the sources.
set -uo pipefail
src=${UMEM_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p "$tmp/tree/tools" "$tmp/bin"
cp "$src/tools/test.sh" "$tmp/tree/tools/"
# Stubs: configure fails for the build folder named in $STUB_FAIL_CONFIGURE, ctest for the one in
# $STUB_FAIL_CTEST; each call is logged so the stages run can be checked.
cat >"$tmp/bin/cmake" <<'STUB'
#!/bin/sh
echo "cmake $*" >>"$STUB_LOG"
case " $* " in *" -B ${STUB_FAIL_CONFIGURE:-none} "*) exit 1 ;; esac
exit 0
STUB
cat >"$tmp/bin/ctest" <<'STUB'
#!/bin/sh
echo "ctest $*" >>"$STUB_LOG"
case " $* " in *" --test-dir ${STUB_FAIL_CTEST:-none} "*) exit 8 ;; esac
exit 0
STUB
printf '#!/bin/sh\necho 1000\n' >"$tmp/bin/id" # not root: no set-up, no bpffs mount
chmod +x "$tmp/bin/"*
export STUB_LOG=$tmp/log PATH=$tmp/bin:$PATH

# run ARGS...: tools/test.sh ARGS in the scratch tree; its output in $out, exit code in $rc.
run() {
	: >"$STUB_LOG"
	rc=0
	out=$("$tmp/tree/tools/test.sh" "$@" 2>&1) || rc=$?
}
line() { grep -E "^$1 +$2" <<<"$out" >/dev/null || fail "no summary line '$1 $2' in: $out"; }

STUB_FAIL_CONFIGURE=build-asan run
[ "$rc" = 1 ] || fail "exit $rc with the ASan stage failing, expected 1: $out"
line build-asan FAIL
for s in build build-release build-tsan build-fuzz; do line "$s" pass; done
grep -E '^build-arm64 +(pass|skipped)' <<<"$out" >/dev/null || fail "no arm64 line: $out"
grep -q -- "--test-dir build-tsan" "$STUB_LOG" || fail "TSan never ran after the ASan stage failed"
grep -q -- "--test-dir build-fuzz" "$STUB_LOG" || fail "the fuzz stage never ran after the ASan stage failed"

STUB_FAIL_CTEST=build-release run
[ "$rc" = 1 ] || fail "exit $rc with the release ctest failing: $out"
line build-release FAIL
line build-asan pass

run
[ "$rc" = 0 ] || fail "exit $rc with every stage passing: $out"

run --quick
[ "$rc" = 0 ] || fail "--quick: exit $rc: $out"
line build pass
line build-asan skipped
grep -q -- "--test-dir build-asan" "$STUB_LOG" && fail "--quick ran the ASan suite"

STUB_FAIL_CTEST=build-asan run --under-load --asan
[ "$rc" = 1 ] || fail "--under-load --asan: exit $rc with the ASan netns suite failing: $out"
grep -q -- "--test-dir build-asan .*-L netns|bpf" "$STUB_LOG" || fail "--under-load --asan ran no ASan netns suite"
grep -E '^netns \(load\) +pass' <<<"$out" >/dev/null || fail "no load line: $out"
grep -E '^asan netns \(load\) +FAIL' <<<"$out" >/dev/null || fail "no ASan load line: $out"

run --asan
[ "$rc" = 2 ] || fail "--asan without --under-load: exit $rc, expected 2"
echo "test.sh: every stage runs, a summary, exit 1 on any failure: ok"
