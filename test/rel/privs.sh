#!/usr/bin/env bash
# xdp-fwd's privileges (docs/RELIABILITY.md): a missing capability is named before anything is
# touched; the documented set is enough, --rule included; once set up, xdp-fwd holds no
# capability at all (effective, permitted, bounding, ambient; no_new_privs) and still forwards
# and tears down cleanly.
FWD_TEST_TAG=rl
. "$(dirname "$0")/../fwd/lib.sh"

topo_up --hosts 2

# fwd_caps CAPS ARGS...: xdp-fwd started with only CAPS (comma list) in its bounding set, as root.
fwd_caps() {
	local caps=$1
	shift
	: >"$WORK/fwd.out"
	: >"$WORK/fwd.err"
	netns_bg FWD_PID "$TOPO_MID" setpriv --inh-caps=-all --bounding-set="-all,+${caps//,/,+}" -- \
		"$FWD" "$@" >"$WORK/fwd.out" 2>"$WORK/fwd.err"
}

# cap_field NAME: a field of xdp-fwd's /proc status (CapEff, CapPrm, CapBnd, CapAmb, NoNewPrivs).
cap_field() { awk -v f="$1:" '$1 == f { print $2 }' "/proc/$FWD_PID/status"; }

log "cap_net_admin missing: refused with a message naming it, nothing attached"
fwd_caps net_raw,bpf,ipc_lock -i "$TOPO_IF0" -i "$TOPO_IF1"
rc=0; wait "$FWD_PID" || rc=$?; netns_stop "$FWD_PID"
[ $rc = 1 ] || fail "exit code $rc without cap_net_admin"
grep -q "missing capabilities" "$WORK/fwd.err" && grep -q "cap_net_admin (attaching XDP programs)" "$WORK/fwd.err" ||
	fail "message: $(cat "$WORK/fwd.err")"
grep -q "setcap cap_net_raw,cap_net_admin,cap_bpf,cap_ipc_lock+ep" "$WORK/fwd.err" || fail "no setcap hint"
no_xdp_left || fail "a program was attached although set-up was refused"

log "--rule without cap_perfmon: named"
fwd_caps net_raw,net_admin,bpf,ipc_lock -i "$TOPO_IF0" -i "$TOPO_IF1" --rule "udp dport 9 -> drop"
rc=0; wait "$FWD_PID" || rc=$?; netns_stop "$FWD_PID"
[ $rc = 1 ] && grep -q "cap_perfmon (loading the steering program" "$WORK/fwd.err" ||
	fail "exit $rc, message: $(cat "$WORK/fwd.err")"

log "exactly the documented capabilities, --rule: forwards, exits cleanly"
fwd_caps net_raw,net_admin,bpf,perfmon,ipc_lock -i "$TOPO_IF0" -i "$TOPO_IF1" --rule "udp dport 9 -> drop"
wait_for 10 grep -q "Ctrl-C stops" "$WORK/fwd.err" || fail "did not start: $(cat "$WORK/fwd.err")"
in_host 0 ping -c 3 -i 0.2 -W 2 "$TOPO_IP1" >/dev/null || fail "no traffic"
fwd_stop INT
no_xdp_left || fail "XDP program left"

log "exactly the documented capabilities, --offload-after: flows installed, exits cleanly"
fwd_caps net_raw,net_admin,bpf,perfmon,ipc_lock -i "$TOPO_IF0" -i "$TOPO_IF1" --offload-after 4 --json --interval 0.2
wait_for 10 grep -q "Ctrl-C stops" "$WORK/fwd.err" || fail "did not start: $(cat "$WORK/fwd.err")"
in_host 0 ping -c 1 -W 2 "$TOPO_IP1" >/dev/null || fail "no traffic"
# A UDP flow (offload takes TCP/UDP 5-tuples) from one socket, 4 datagrams through userspace.
# The port is closed: the ICMP errors coming back fail every other write (ECONNREFUSED).
in_host 0 bash -c "exec 3>/dev/udp/$TOPO_IP1/9999; for i in \$(seq 30); do echo x >&3; done 2>/dev/null; true"
wait_for 5 grep -q '"installed":[1-9]' "$WORK/fwd.out"
fwd_stop INT
grep -q '"installed":[1-9]' "$WORK/fwd.out" || fail "no flow installed with the documented capabilities: $(cat "$WORK/fwd.err")"
no_xdp_left || fail "XDP program left"

log "started as root, --no-reattach: no capability left after set-up, still forwarding, clean exit"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --no-reattach
grep -q "capabilities dropped (none kept)" "$WORK/fwd.err" || fail "no drop reported"
for f in CapEff CapPrm CapInh CapBnd CapAmb; do
	v=$(cap_field $f)
	[ "$v" = 0000000000000000 ] || fail "$f = $v after set-up"
done
[ "$(cap_field NoNewPrivs)" = 1 ] || fail "no_new_privs not set"
in_host 0 ping -c 3 -i 0.2 -W 2 "$TOPO_IP1" >/dev/null || fail "no traffic without capabilities"
fwd_stop TERM
no_xdp_left || fail "XDP program left after a capability-less teardown"

log "default (re-attach on): the set-up capabilities permitted only, none effective, none other"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1"
grep -q "cap_net_raw,cap_net_admin,cap_ipc_lock,cap_bpf,cap_perfmon kept in the permitted set\|kept in the permitted set" "$WORK/fwd.err" ||
	fail "kept capabilities not reported: $(cat "$WORK/fwd.err")"
[ "$(cap_field CapEff)" = 0000000000000000 ] || fail "CapEff = $(cap_field CapEff) after set-up"
# cap_net_raw 13, cap_net_admin 12, cap_ipc_lock 14, cap_perfmon 38, cap_bpf 39.
want=$(printf '%016x' $(( (1 << 12) | (1 << 13) | (1 << 14) | (1 << 38) | (1 << 39) )))
[ "$(cap_field CapPrm)" = "$want" ] || fail "CapPrm = $(cap_field CapPrm), want $want"
[ "$(cap_field NoNewPrivs)" = 1 ] || fail "no_new_privs not set"
in_host 0 ping -c 3 -i 0.2 -W 2 "$TOPO_IP1" >/dev/null || fail "no traffic"
fwd_stop INT
log "ok"
