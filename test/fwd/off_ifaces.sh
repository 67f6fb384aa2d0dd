#!/usr/bin/env bash
# xdp-fwd --offload-after: the flow tracker is sized for every interface's table. The limit
# (--offload-max) is per interface, and one worker sees the flows of both: 480 UDP flows each
# way with --offload-max 500 are 960 flows to track at once. The tracker held 2 x 500 slots
# (rounded to 1024) for all of them: at 94 % load its 8-slot windows filled with installed
# flows, and about 96 flows went untracked (never offloaded; 827 installed). Sized
# 2 x 500 x 2 interfaces (2048), all 960 are installed.
. "$(dirname "$0")/lib.sh"
# shellcheck source=offload_lib.sh
. "$(dirname "$0")/offload_lib.sh"
# shellcheck source=../common/xsk_gen.sh
. "$SRC/test/common/xsk_gen.sh"
GEN=$BUILD/tools/xsk-gen/xsk-gen
[ -x "$GEN" ] || fail "xsk-gen not built at $GEN"
FLOWS=480 PER=6

topo_up --hosts 2
# One worker drives both ports; flows stay installed for the whole run (--offload-idle 60).
fwd_start -i "$TOPO_IF0" -i "$TOPO_IF1" --json --offload-after 2 --offload-max 500 --offload-idle 60 -w 1
# flows K DST: FLOWS flows of PER frames from host K (to the kernel of the other host).
flows() {
	in_host "$1" "$GEN" gen -i eth0 --json --dst-ip "$2" --count $((FLOWS * PER)) --rate 10000 --flows "$FLOWS" \
		--flow-frames 1 >"$WORK/gen$1.out" 2>"$WORK/gen$1.err" || fail "gen from host $1: $(cat "$WORK/gen$1.err")"
	[ "$(json "$WORK/gen$1.out" frames)" = $((FLOWS * PER)) ] ||
		fail "the generator on host $1 sent $(json "$WORK/gen$1.out" frames) of $((FLOWS * PER)) frames"
}
flows 0 "$TOPO_IP1"
flows 1 "$TOPO_IP0"
fwd_stop INT
inst=$(( $(off_total "$TOPO_IF0@0" installed) + $(off_total "$TOPO_IF1@0" installed) ))
untracked=$(( $(off_total "$TOPO_IF0@0" untracked) + $(off_total "$TOPO_IF1@0" untracked) ))
other=0
for f in full refused no_target; do
	other=$((other + $(off_total "$TOPO_IF0@0" $f) + $(off_total "$TOPO_IF1@0" $f)))
done
# A flow the kernel kept from xdp-fwd (its RX ring full on a busy machine) is neither
# installed nor counted: at most flows_unseen of them.
unseen=$(flows_unseen $PER 2 "$(leg_drops)" "$TOPO_IF0@0" "$TOPO_IF1@0")
log "$inst of $((2 * FLOWS)) flows installed, $untracked untracked, $other not offloaded for another reason, at most $unseen unseen (the kernel's drops)"
# A few may find their window full even at half load (8-way probing): 2 % at most.
[ "$untracked" -le $((2 * FLOWS / 50)) ] || fail "$untracked flows untracked: the tracker is sized for one interface"
[ $((inst + untracked + other + unseen)) -ge $((2 * FLOWS)) ] || fail "flows neither installed nor counted"
[ $((inst + unseen)) -ge $((2 * FLOWS * 9 / 10)) ] || fail "only $inst of $((2 * FLOWS)) flows installed, $unseen unseen"
log "ok"
