#!/usr/bin/env bash
# xdp-fwd refuses bad arguments with a clear message and a non-zero exit code, and leaves
# nothing behind, also when the mistake is found after some ports were set up.
. "$(dirname "$0")/lib.sh"

topo_up --hosts 2
pins_before=$(ls /sys/fs/bpf 2>/dev/null)

# expect_refusal MESSAGE ARGS...: xdp-fwd exits non-zero with MESSAGE on stderr, nothing left.
expect_refusal() {
	local msg=$1 rc=0
	shift
	ip netns exec "$TOPO_MID" "$FWD" "$@" >"$WORK/out" 2>"$WORK/err" </dev/null || rc=$?
	[ $rc != 0 ] || fail "xdp-fwd $* succeeded"
	grep -q -- "$msg" "$WORK/err" || fail "xdp-fwd $*: no '$msg' in: $(cat "$WORK/err")"
	no_xdp_left || fail "xdp-fwd $*: an XDP program was left attached"
	[ "$(ls /sys/fs/bpf 2>/dev/null)" = "$pins_before" ] || fail "xdp-fwd $*: left a pin in /sys/fs/bpf"
	echo "   $* -> rc $rc: $(grep -- "$msg" "$WORK/err" | head -1)"
}

log "bad arguments"
expect_refusal "interface 'nosuch0' does not exist" -i nosuch0 -i "$TOPO_IF1"
expect_refusal "given twice" -i "$TOPO_IF0" -i "$TOPO_IF0@0"
expect_refusal "odd number" -i "$TOPO_IF0" -i "$TOPO_IF1" -i "$TOPO_IF0@1" --mode wire
# The first port is set up (program attached, socket bound) before the second one fails.
expect_refusal "cannot open port $TOPO_IF1@7" -i "$TOPO_IF0" -i "$TOPO_IF1@7"
expect_refusal "unknown mode" -i "$TOPO_IF0" -i "$TOPO_IF1" --mode hub
expect_refusal "not a steering rule" -i "$TOPO_IF0" -i "$TOPO_IF1" --rule "tcp dport 99999 -> drop"

log "the interfaces still work"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1"
in_host 0 ping -c 2 -i 0.2 -W 2 "$TOPO_IP1" >/dev/null || fail "no traffic after the refusals"
fwd_stop INT
log "ok"
