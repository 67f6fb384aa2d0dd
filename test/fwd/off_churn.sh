#!/usr/bin/env bash
# xdp-fwd --offload-after under short-flow churn: 8000 UDP flows of 4 frames each, one after
# another, at 20 kpps (xsk-gen --flows 8000 --flow-frames 4).
#  - The gate work per loop turn is bounded whatever the number of arming flows: the run with
#    --offload-after 2 loses at most 20 % of the frames more (51 % before the bounded gate work; the margin holds on a busy machine) than plain xdp-fwd (its own
#    baseline on this machine, this moment: the best of up to 3 pairs; not compared in a
#    sanitizer build, whose install path is many times slower). Before, a scan of every arming flow on every turn
#    starved RX: about 40 % lost, against 0 without offload.
#  - Every flow is offloaded or counted with its reason: with the default --offload-max (the
#    table's 16384) more than the old tracker's 4096 flows are installed, and installed + full +
#    refused + no_target + untracked covers all 8000; with --offload-max 5000, 5000 installed
#    and the rest counted (full). Except the flows whose frames the kernel dropped before
#    xdp-fwd saw them (its RX ring full on a busy machine): with --offload-after 2 such a flow
#    reached xdp-fwd with at most one frame: it had at least PER - 1 frames dropped at the
#    socket or on the veths before it (flows_unseen).
. "$(dirname "$0")/lib.sh"
# shellcheck source=offload_lib.sh
. "$(dirname "$0")/offload_lib.sh"
# shellcheck source=../common/xsk_gen.sh
. "$SRC/test/common/xsk_gen.sh"
GEN=$BUILD/tools/xsk-gen/xsk-gen
[ -x "$GEN" ] || fail "xsk-gen not built at $GEN"
FLOWS=8000 PER=4
SENT=$((FLOWS * PER))

topo_up --hosts 2

# churn: the 8000 short flows from host 0 to host 1's sink; prints the frames the sink lost.
churn() {
	sink_start "$TOPO_H1" --idle 3
	in_host 0 "$GEN" gen -i eth0 --json --dst-ip "$TOPO_IP1" --count "$SENT" --rate 20000 --flows "$FLOWS" \
		--flow-frames "$PER" >"$WORK/gen.out" 2>"$WORK/gen.err" || fail "gen: $(cat "$WORK/gen.err")"
	sink_wait
	[ "$(json "$WORK/gen.out" frames)" = "$SENT" ] || fail "the generator sent $(json "$WORK/gen.out" frames) of $SENT"
	json "$WORK/sink.out" lost
}
# books_of_flows PORT: every flow installed, counted not offloaded, or unseen for the kernel's
# drops (--offload-after 2).
books_of_flows() {
	local installed missing
	installed=$(off_total "$1" installed)
	missing=$((FLOWS - installed - $(not_offloaded "$1")))
	[ "$missing" -le "$(flows_unseen $PER 2 "$MEASURE_LEG_DROPS" "$1")" ] ||
		fail "$installed flows installed and $(not_offloaded "$1") counted not offloaded, of $FLOWS: $missing missing, the kernel dropped only $(kernel_drops "$1") frames before xdp-fwd and the veths $MEASURE_LEG_DROPS"
}

# Plain, then with offload, as a pair, up to 3 pairs: on a shared machine a busy moment can
# fall on one run of a pair only; the unbounded gate work lost its 40 % in every pair.
for pair in 1 2 3; do
	log "plain xdp-fwd: the baseline loss"
	fwd_measure plain churn
	log "plain: $plain of $SENT lost"
	log "--offload-after 2: bounded gate work, every flow offloaded or counted"
	fwd_measure lost churn --offload-after 2
	installed=$(off_total m0@0 installed)
	log "offload: $lost of $SENT lost; $installed installed, $(not_offloaded m0@0) not offloaded, $(kernel_drops m0@0) frames dropped by the kernel before xdp-fwd"
	{ [ "$lost" -le $((plain + SENT / 5)) ] || sanitized_build; } && break
	log "pair $pair: offload lost $lost, plain $plain: measured again"
done
if sanitized_build; then
	log "a sanitizer build: offload lost $lost, plain $plain, not compared (its install path is many times slower)"
else
	[ "$lost" -le $((plain + SENT / 5)) ] || fail "offload lost $lost frames of $SENT under churn, plain xdp-fwd $plain, in 3 pairs"
fi
unseen=$(flows_unseen $PER 2 "$MEASURE_LEG_DROPS" m0@0)
[ $((installed + unseen)) -gt 4096 ] ||
	fail "$installed of $FLOWS flows installed, at most $unseen unseen: the tracker is smaller than the table"
books_of_flows m0@0

log "--offload-max 5000: the rest counted full"
fwd_measure _ churn --offload-after 2 --offload-max 5000
installed=$(off_total m0@0 installed)
log "offload-max 5000: $installed installed, $(off_total m0@0 full) full, $(not_offloaded m0@0) not offloaded"
[ "$installed" -le 5000 ] || fail "$installed flows installed with --offload-max 5000"
# Most of the others found the table full (the first ones waited for the target's trial).
[ $(($(off_total m0@0 full) + $(flows_unseen $PER 2 "$MEASURE_LEG_DROPS" m0@0))) -ge $(((FLOWS - 5000) / 2)) ] ||
	fail "$(off_total m0@0 full) flows counted full, at most $(flows_unseen $PER 2 "$MEASURE_LEG_DROPS" m0@0) unseen, $((FLOWS - installed)) not installed"
books_of_flows m0@0
log "ok"
