# The offload tests' readers of xdp-fwd's JSON (sourced after lib.sh).
off_of() { # PORT FIELD < JSON lines: the field of PORT's "offload" object, one per line
	sed 's/{"name":/\n&/g' | grep "^{\"name\":\"$1\"" | grep -o '"offload":{[^}]*}' |
		grep -o "\"$2\":[0-9]*" | cut -d: -f2
}
# off_total PORT FIELD: a field of PORT's "offload" object in the total line.
off_total() { grep '"type":"total"' "$WORK/fwd.out" | off_of "$@"; }
# off_last PORT FIELD: the same in the last interval line.
off_last() { grep '"type":"interval"' "$WORK/fwd.out" | tail -1 | off_of "$@"; }
# off_any PORT FIELD: the largest value over all interval lines.
off_any() { grep '"type":"interval"' "$WORK/fwd.out" | off_of "$@" | sort -n | tail -1; }
# fwd_measure VAR CMD FWD-ARGS...: CMD run through xdp-fwd between m0 and m1 (--json FWD-ARGS),
# stopped after it; CMD's output in VAR, xdp-fwd's in $WORK/fwd.out as usual, the legs' veth
# drops meanwhile (leg_drops) in MEASURE_LEG_DROPS.
fwd_measure() {
	local var=$1 cmd=$2 d0
	shift 2
	d0=$(leg_drops)
	fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --json "$@"
	"$cmd" >"$WORK/measure.out"
	fwd_stop INT
	MEASURE_LEG_DROPS=$(($(leg_drops) - d0))
	printf -v "$var" '%s' "$(cat "$WORK/measure.out")"
}
# flows_unseen PER AFTER LEG-DROPS PORT...: the most flows of PER frames that the kernel's drops
# can have kept from reaching --offload-after AFTER in xdp-fwd: each such flow lost at least
# PER - AFTER + 1 of its frames before xdp-fwd saw them, at PORTs' sockets (kernel_drops) or on
# the veths before them (LEG-DROPS, from leg_drops; where those count the sockets' drops too,
# the bound is only looser).
flows_unseen() {
	local per=$1 after=$2 d=$3 p
	shift 3
	for p in "$@"; do d=$((d + $(kernel_drops "$p"))); done
	echo $((d / (per - after + 1)))
}
# not_offloaded PORT: the flows counted not offloaded, all reasons.
not_offloaded() {
	echo $(($(off_total "$1" full) + $(off_total "$1" refused) + $(off_total "$1" no_target) + $(off_total "$1" untracked)))
}
