#!/usr/bin/env bash
# A second xdp-fwd on interfaces the first one serves, reached through their altnames
# (docs/RELIABILITY.md): refused, naming the first one's pid, and the first one keeps
# forwarding. The per-interface lock used to be per name, which an altname bypassed; the
# refusal then came from the kernel (EBUSY) without saying who held the queue.
FWD_TEST_TAG=an
. "$(dirname "$0")/../fwd/lib.sh"

topo_up --hosts 2
alt0="${TOPO_IF0}alt" alt1="${TOPO_IF1}alt"
ip -n "$TOPO_MID" link property add dev "$TOPO_IF0" altname "$alt0" || fail "cannot add an altname"
ip -n "$TOPO_MID" link property add dev "$TOPO_IF1" altname "$alt1" || fail "cannot add an altname"
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1"
rc=0
timeout 20 ip netns exec "$TOPO_MID" "$FWD" -i "$alt0" -i "$alt1" >"$WORK/out2" 2>"$WORK/err2" </dev/null || rc=$?
[ $rc != 0 ] || fail "a second xdp-fwd through the altnames was accepted"
grep -q "in use by another xdp-fwd (pid $FWD_PID)" "$WORK/err2" ||
	fail "the refusal does not name the first instance (pid $FWD_PID): $(cat "$WORK/err2")"
in_host 0 ping -c 3 -i 0.2 -W 2 "$TOPO_IP1" >/dev/null || fail "the first instance stopped forwarding"
fwd_stop INT
no_xdp_left || fail "XDP program left"
log "ok"
