/* SPDX-License-Identifier: MIT */
/* The release arithmetic of an ordered flow's gate (offload.c), apart from the maps and rings so
 * that its decisions can be tested one by one. */
#ifndef XDP_FWD_GATE_H
#define XDP_FWD_GATE_H

#include <stdbool.h>
#include <stdint.h>

/* What userspace knows of one arming flow. */
struct fwd_gate {
	uint32_t frames;    /* frames of the flow seen since the add (not the drained ones) */
	uint32_t marked;    /* of those, the ones carrying the flow's gate mark: gated frames seen */
	uint32_t hi;        /* the highest gate mark's seq seen, plus one; 0: none seen */
	uint32_t pre_hi;    /* fallback: at least the frames seen that the program did not gate;
			     * UINT32_MAX: unknown */
	uint64_t gated_pre; /* the program's gated count at the previous lookup */
	bool have_pre;      /* gated_pre is valid */
	/* Draining (fwd_gate_drain): the gated frames from seq drain on are dropped as they come,
	 * and tail says one of them was seen: every frame before it is out of the kernel. */
	bool draining, tail;
	uint32_t drain;
};

/* A frame with the flow's gate mark, numbered seq: true when it is to be dropped (draining, seq
 * at or past the drain's first), else it counts as a gated frame seen. */
static inline bool fwd_gate_seen(struct fwd_gate *g, uint32_t seq)
{
	if (g->draining && seq >= g->drain) {
		g->tail = true;
		return true;
	}
	g->marked++;
	if (seq >= g->hi)
		g->hi = seq + 1;
	return false;
}

/*
 * Whether the flow starts draining now (then g->drain is its first seq): every gate mark seen
 * (unmarked 0: the program marks), gated frames the program counted that userspace has not seen
 * (gated past hi), and a sign that it cannot catch up: a gated frame lost on the way (a seq
 * below hi that never showed: the RX ring was full, so it is full still or was lately), or
 * late, the gate shut for long.
 *
 * Why draining: the gate opens only once userspace has sent every frame gated so far, while
 * the program gates each new frame until then; under a sustained overload the RX ring always
 * holds gated frames, so that never happens. Draining ends the count: the frames from gated on
 * are dropped as they come out of the ring (counted), so once userspace has seen one of them
 * (the ring takes a flow's frames in the program's order: none before it is still in the
 * kernel) and sent what it holds, no frame of the flow is left for a redirected one to
 * overtake, whatever the program gates meanwhile (see fwd_gate_release). What drains is what
 * the full ring would have dropped for the most part.
 */
static inline bool fwd_gate_drain(struct fwd_gate *g, uint64_t gated, uint64_t unmarked, bool late)
{
	if (g->draining || unmarked || gated <= g->hi || gated >= UINT32_MAX)
		return false;
	if (g->hi == g->marked && !late)
		return false;
	g->draining = true;
	g->drain = (uint32_t)gated;
	return true;
}

/*
 * One lookup of the flow: gated and unmarked are the program's counts now (unmarked: gated
 * frames it could not mark); rx_full, this turn's RX burst filled the batch; sent, userspace
 * holds none of the frames it has seen (nothing staged, TX done). Returns true with *release
 * the count of sent gated frames to report, false when there is nothing to tell.
 *
 * Exact (every gated frame marked): each mark carries its frame's seq, so the gated frames up to
 * the highest seq seen were seen, or lost on the way (never to show, so never overtaken): the
 * gate opens once those were sent and the program gated no more. Draining, once its tail was
 * seen and the rest sent: UINT64_MAX, every frame the program gates later is dropped here.
 *
 * Fallback (some gated frame unmarked: it had no XDP metadata, and the program could not grow
 * it at its head for a mark in front of the data either): frames queued before the add are
 * seen too, and only a bound tells them apart. When this turn's burst
 * (after the last lookup) did not fill the batch, frames - gated_pre bounds from above those
 * that were not gated. Its weakness: it assumes every frame gated before that lookup had
 * reached the RX ring, but copy mode publishes the ring only at the end of the kernel's NAPI
 * poll, so a gated frame still unpublished can be overtaken (rare, and only there). A drain
 * started before the first unmarked frame does not end in the fallback: the dropped frames are
 * not in frames, so the bound stays below gated, and the 1 s bound decides.
 */
static inline bool fwd_gate_release(struct fwd_gate *g, uint64_t gated, uint64_t unmarked, bool rx_full, bool sent,
				    uint64_t *release)
{
	bool told = false;

	/* The bound is kept in both modes: a flow may turn to the fallback mid-arming. */
	if (g->have_pre && !rx_full && g->frames >= g->gated_pre && g->frames - g->gated_pre < g->pre_hi)
		g->pre_hi = (uint32_t)(g->frames - g->gated_pre);
	if (!unmarked) {
		if (sent && g->draining && g->tail) {
			*release = UINT64_MAX;
			told = true;
		} else if (sent && g->hi) {
			*release = g->hi;
			told = true;
		}
	} else if (g->pre_hi != UINT32_MAX && sent) {
		*release = g->frames - g->pre_hi;
		told = true;
	}
	g->gated_pre = gated;
	g->have_pre = true;
	return told;
}

#endif
