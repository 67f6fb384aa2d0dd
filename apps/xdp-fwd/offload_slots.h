/* SPDX-License-Identifier: MIT */
/* xdp-fwd --offload-after: a worker's flow tracker, open addressing over OFF_PROBE-slot windows
 * (offload.c; a header of its own so the unit test drives it without a data path). */
#ifndef XDP_FWD_OFFLOAD_SLOTS_H
#define XDP_FWD_OFFLOAD_SLOTS_H

#include <string.h>

#include "offload_internal.h"

static inline uint32_t fwd_off_key_hash(const struct umem_steer_flow_key *k)
{
	const uint8_t *b = (const uint8_t *)k;
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

/* The flow's slot, or NULL: a lookup that claims none. */
static inline struct off_flow *fwd_off_find(struct off_worker *ow, const struct umem_steer_flow_key *k)
{
	uint32_t h = fwd_off_key_hash(k);

	for (uint32_t i = 0; i < OFF_PROBE; i++) {
		struct off_flow *e = &ow->slots[(h + i) & (ow->nr_slots - 1)];

		if (e->state != OFF_FREE && !memcmp(&e->key, k, sizeof(*k)))
			return e;
	}
	return NULL;
}

/* The flow's slot, claimed when new (the oldest flow not in the kernel makes room); NULL when
 * the window holds only installed flows. *gone: the flow that made room (state OFF_FREE: none).
 * A counting flow that made room starts from zero if it comes back: the caller counts its frames
 * as untracked, or a flow could reach --offload-after in pieces and go uncounted. */
static inline struct off_flow *fwd_off_slot_of(struct off_worker *ow, const struct umem_steer_flow_key *k,
					       struct off_flow *gone)
{
	uint32_t h = fwd_off_key_hash(k);
	struct off_flow *victim = fwd_off_find(ow, k);

	gone->state = OFF_FREE;
	if (victim)
		return victim;
	/* New: a second walk of the window, for the slot it takes. */
	for (uint32_t i = 0; i < OFF_PROBE; i++) {
		struct off_flow *e = &ow->slots[(h + i) & (ow->nr_slots - 1)];

		if (e->state == OFF_FREE) {
			if (!victim || victim->state != OFF_FREE)
				victim = e;
		} else if ((e->state == OFF_COUNTING || e->state == OFF_REFUSED) &&
			   (!victim || (victim->state != OFF_FREE && e->seen_ns < victim->seen_ns))) {
			victim = e;
		}
	}
	if (victim) {
		uint32_t live_idx = victim->live_idx;

		*gone = *victim;
		*victim = (struct off_flow){ .key = *k, .state = OFF_COUNTING, .live_idx = live_idx };
		if (gone->state == OFF_FREE) {
			victim->live_idx = ow->nr_live;
			ow->live[ow->nr_live++] = (uint32_t)(victim - ow->slots);
		}
	}
	return victim;
}

/* Slot e (not FREE, not in the kernel) becomes FREE. The last live slot takes its place in the
 * live list: a walk that frees as it goes runs that list from its end. */
static inline void fwd_off_slot_free(struct off_worker *ow, struct off_flow *e)
{
	uint32_t last = ow->live[--ow->nr_live];

	ow->live[e->live_idx] = last;
	ow->slots[last].live_idx = e->live_idx;
	e->state = OFF_FREE;
}

#endif
