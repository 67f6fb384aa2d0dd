/* SPDX-License-Identifier: MIT */
/* The release arithmetic of an ordered flow's gate (offload.c), apart from the maps and rings so
 * that its decisions can be tested one by one. */
#ifndef XDP_FWD_GATE_H
#define XDP_FWD_GATE_H

#include <stdbool.h>
#include <stdint.h>

/* What userspace knows of one arming flow. */
struct fwd_gate {
	uint32_t frames;    /* frames of the flow seen since the add */
	uint32_t marked;    /* of those, the ones carrying the flow's gate mark: gated frames seen */
	uint32_t pre_hi;    /* fallback: at least the frames seen that the program did not gate;
			     * UINT32_MAX: unknown */
	uint64_t gated_pre; /* the program's gated count at the previous lookup */
	bool have_pre;      /* gated_pre is valid */
};

/*
 * One lookup of the flow: gated and unmarked are the program's counts now (unmarked: gated
 * frames it could not mark); rx_full, this turn's RX burst filled the batch; sent, userspace
 * holds none of the frames it has seen (nothing staged, TX done). Returns true with *release
 * the count of sent gated frames to report, false when there is nothing to tell.
 *
 * Exact (every gated frame marked): the marked frames seen are the gated frames seen, one each
 * (the mark carries a tag of this arming only), so the gate opens once all of them were sent.
 *
 * Fallback (some gated frame unmarked: the driver takes no XDP metadata, e.g. mvpp2): frames
 * queued before the add are seen too, and only a bound tells them apart. When this turn's burst
 * (after the last lookup) did not fill the batch, frames - gated_pre bounds from above those
 * that were not gated. Its weakness: it assumes every frame gated before that lookup had
 * reached the RX ring, but copy mode publishes the ring only at the end of the kernel's NAPI
 * poll, so a gated frame still unpublished can be overtaken (rare, and only there).
 */
static inline bool fwd_gate_release(struct fwd_gate *g, uint64_t gated, uint64_t unmarked, bool rx_full, bool sent,
				    uint64_t *release)
{
	bool told = false;

	/* The bound is kept in both modes: a flow may turn to the fallback mid-arming. */
	if (g->have_pre && !rx_full && g->frames >= g->gated_pre && g->frames - g->gated_pre < g->pre_hi)
		g->pre_hi = (uint32_t)(g->frames - g->gated_pre);
	if (!unmarked) {
		if (sent && g->marked) {
			*release = g->marked;
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
