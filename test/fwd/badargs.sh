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
expect_refusal "unknown mode 'generic' (native, skb, auto)" -i "$TOPO_IF0" -i "$TOPO_IF1" --xdp-mode generic

log "a rule that hands ARP to a kernel without addresses is warned about; --xdp-mode skb"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --rule "arp -> pass" --xdp-mode skb
for ifc in "$TOPO_IF0" "$TOPO_IF1"; do
	grep -q "warning: rule 'arp -> pass' hands ARP arriving on $ifc to the kernel" "$WORK/fwd.err" ||
		fail "no warning about ARP on $ifc: $(cat "$WORK/fwd.err")"
	ip -n "$TOPO_MID" -d link show "$ifc" | grep -q xdpgeneric ||
		fail "--xdp-mode skb: no generic XDP program on $ifc"
done
fwd_stop INT
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --rule "udp dport 53 -> drop"
! grep -q "warning: rule" "$WORK/fwd.err" || fail "warning for a rule that keeps ARP: $(cat "$WORK/fwd.err")"
fwd_stop INT

log "the interfaces still work"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1"
in_host 0 ping -c 2 -i 0.2 -W 2 "$TOPO_IP1" >/dev/null || fail "no traffic after the refusals"
fwd_stop INT
log "ok"
