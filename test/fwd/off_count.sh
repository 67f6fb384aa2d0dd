#!/usr/bin/env bash
# xdp-fwd --count with --offload-after: -n counts the frames forwarded by either path. A flow
# past --offload-after goes on in the kernel; counting only userspace's frames, -n 2000 with
# --offload-after 8 never stopped (8 frames of 20000 reached userspace).
. "$(dirname "$0")/lib.sh"
# shellcheck source=offload_lib.sh
. "$(dirname "$0")/offload_lib.sh"
GEN=$BUILD/tools/xsk-gen/xsk-gen
[ -x "$GEN" ] || fail "xsk-gen not built at $GEN"
# shellcheck source=../common/xsk_gen.sh
. "$SRC/test/common/xsk_gen.sh"

topo_up --hosts 2
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --mode wire --offload-after 8 --offload-idle 30 --json -n 2000
in_host 0 "$GEN" gen -i eth0 --json --dst-ip "$TOPO_IP1" --count 20000 --rate 10000 \
	>"$WORK/gen.out" 2>"$WORK/gen.err" || fail "gen: $(cat "$WORK/gen.err")"
wait_for 10 sh -c "! kill -0 $FWD_PID 2>/dev/null" ||
	fail "xdp-fwd -n 2000 did not stop by itself after 20000 frames (offloaded $(off_any "$TOPO_IF0@0" packets))"
fwd_reap
kernel=$(off_total "$TOPO_IF0@0" packets)
[ "${kernel:-0}" -ge 1 ] || fail "no frame was offloaded: the test did not test -n across the paths"
log "stopped by itself; $kernel frames went through the kernel"
log "ok"
