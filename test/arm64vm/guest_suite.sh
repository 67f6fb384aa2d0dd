#!/usr/bin/env bash
# Runs in the arm64 guest (tools/zc-vm.sh --arch arm64): a suite's cases one after the other in
# one boot (a boot costs 10 to 20 s under TCG, more than most cases), each as
#   NAME=COMMAND ARGS...     (one argument per case; COMMAND relative to the build tree)
# with UMEM_BUILD_DIR and UMEM_SOURCE_DIR set to the trees put in the guest. Prints one line per
# case with its result and time, and exits 1 when any case failed or skipped: the guest has
# everything the cases need, so a skip there means a case did not run.
set -u
export UMEM_BUILD_DIR=/zc/build UMEM_SOURCE_DIR=/zc/src
cd "$UMEM_BUILD_DIR" || exit 1
failed=() skipped=() start=$EPOCHREALTIME
for c in "$@"; do
	name=${c%%=*}
	t0=$EPOCHREALTIME
	echo "arm64vm: -- $name: ${c#*=}"
	# shellcheck disable=SC2086 # the case's command line splits into its words
	${c#*=} </dev/null 2>&1
	rc=$?
	dt=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	case $rc in
	0) res=pass ;;
	77) res=SKIP; skipped+=("$name") ;;
	*) res="FAIL (exit $rc)"; failed+=("$name") ;;
	esac
	echo "arm64vm: $name: $res in ${dt} s"
done
echo "arm64vm: $# cases in $(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s;" \
	"failed: ${failed[*]:-none}; skipped: ${skipped[*]:-none}"
[ ${#failed[@]} = 0 ] && [ ${#skipped[@]} = 0 ]
