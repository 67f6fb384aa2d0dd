#!/usr/bin/env bash
# xdp-fwd --offload-after in a time namespace (unshare --time --monotonic OFFSET): the steering
# program stamps flows with the host's monotonic clock (bpf_ktime_get_coarse_ns has no namespace
# offset), xdp-fwd reads its namespace's. Compared as they were, a positive offset expired a
# flow still sending at every housekeeping (250 ms), a negative one never expired an idle flow.
. "$(dirname "$0")/lib.sh"
# shellcheck source=offload_lib.sh
. "$(dirname "$0")/offload_lib.sh"
GEN=$BUILD/tools/xsk-gen/xsk-gen
[ -x "$GEN" ] || fail "xsk-gen not built at $GEN"
# shellcheck source=../common/xsk_gen.sh
. "$SRC/test/common/xsk_gen.sh"
unshare --time --monotonic 1 true 2>/dev/null || { echo "SKIP: no time namespaces"; exit 77; }

REAL_FWD=$FWD
FWD=$WORK/xdp-fwd-timens
# exec: the time namespace of an unshare(CLONE_NEWTIME) caller is entered at its next execve.
printf '#!/bin/sh\nexec unshare --time --monotonic "$OFFSET" %q "$@"\n' "$REAL_FWD" >"$FWD"
chmod +x "$FWD"
export OFFSET

expired() { grep '"type":"interval"' "$WORK/fwd.out" | off_of "$TOPO_IF0@0" expired | awk '{ s += $1 } END { print s + 0 }'; }
expired_some() { [ "$(expired)" -ge 1 ]; }
offloaded() { [ "$(off_last "$TOPO_IF0@0" flows)" = 1 ]; }
# run OFFSET: a flow offloaded and sending for 2 s stays in the kernel; idle, it expires.
# --offload-idle 3: the broken comparison expired a sending flow at the first housekeeping
# whatever the idle time, and 3 s leaves a loaded machine time between the generator's last
# frame and the checks (at 1 s, the idle flow's own expiry sometimes came first).
run() {
	OFFSET=$1
	log "monotonic offset $OFFSET s"
	fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --mode wire --offload-after 8 --offload-idle 3 --json --interval 0.1
	in_host 0 "$GEN" gen -i eth0 --json --dst-ip "$TOPO_IP1" --count 4000 --rate 2000 \
		>"$WORK/gen.out" 2>"$WORK/gen.err" || fail "gen: $(cat "$WORK/gen.err")"
	[ "$(expired)" = 0 ] || fail "offset $OFFSET s: the flow expired $(expired) times while sending"
	offloaded || fail "offset $OFFSET s: the flow is not offloaded at the end of its stream"
	wait_for 20 expired_some || fail "offset $OFFSET s: the idle flow did not expire in 20 s (--offload-idle 3)"
	fwd_stop INT
}

topo_up --hosts 2
run 100000
# Negative: the namespace's clock stays above 0 (half the host's monotonic time back).
run "-$(python3 -c 'import time; print(int(time.monotonic() / 2))')"
log "ok"
