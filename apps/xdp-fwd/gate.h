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
	uint32_t pre_hi;    /* at least the frames seen that the program did not gate; UINT32_MAX: unknown */
	uint64_t gated_pre; /* the program's gated count at the previous lookup */
	bool have_pre;      /* gated_pre is valid */
};

/*
 * One lookup of the flow: gated is the program's count now; rx_full, this turn's RX burst filled
 * the batch; sent, userspace holds none of the frames it has seen (nothing staged, TX done).
 * Returns true with *release the count of sent frames to report, false when none can be told.
 *
 * Frames queued before the add are seen here but not in gated. This turn's RX burst came after
 * the last lookup: when it did not fill the batch, every frame gated before that lookup has been
 * seen, so frames - gated_pre bounds from above those that were not gated. Released as sent:
 * frames minus that bound, never more than the gated frames seen.
 */
static inline bool fwd_gate_release(struct fwd_gate *g, uint64_t gated, bool rx_full, bool sent, uint64_t *release)
{
	bool told = false;

	if (g->have_pre && !rx_full && g->frames >= g->gated_pre && g->frames - g->gated_pre < g->pre_hi)
		g->pre_hi = (uint32_t)(g->frames - g->gated_pre);
	if (g->pre_hi != UINT32_MAX && sent) {
		*release = g->frames - g->pre_hi;
		told = true;
	}
	g->gated_pre = gated;
	g->have_pre = true;
	return told;
}

#endif
