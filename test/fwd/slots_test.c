/* SPDX-License-Identifier: MIT */
/* xdp-fwd offload: the flow tracker's slots (offload_slots.h). A window that holds installed
 * flows and one place to count in: two flows taking turns there evict each other at every frame,
 * so neither reaches --offload-after in one stay. Their frames must still be counted (untracked):
 * a flow that sent --offload-after frames is installed or counted under a reason. */
#include "testutil.h"
#include "offload_slots.h"

#define AFTER 2u
#define PER 6u

static struct umem_steer_flow_key key(uint32_t n)
{
	struct umem_steer_flow_key k;

	memset(&k, 0, sizeof(k));
	memcpy(&k, &n, sizeof(n));
	return k;
}

int main(void)
{
	struct off_flow slots[OFF_PROBE];
	struct off_worker ow = { .slots = slots, .nr_slots = OFF_PROBE };
	uint64_t untracked = 0, installed = 0, now = 1;

	memset(slots, 0, sizeof(slots));
	/* One window is the whole table: OFF_PROBE - 1 installed flows leave one place. */
	for (uint32_t n = 0; n < OFF_PROBE - 1; n++) {
		struct umem_steer_flow_key k = key(100 + n);
		struct off_flow gone, *e = fwd_off_slot_of(&ow, &k, &gone);

		CHECK(e && gone.state == OFF_FREE, "installed flow %u found no free slot", n);
		e->state = OFF_OFFLOADED;
	}
	/* Flows 1 and 2 take turns, PER frames each, counted as offload.c counts them. */
	for (uint32_t i = 0; i < 2 * PER; i++) {
		struct umem_steer_flow_key k = key(1 + i % 2);
		struct off_flow gone, *e = fwd_off_slot_of(&ow, &k, &gone);

		if (gone.state == OFF_COUNTING)
			untracked += gone.frames;
		CHECK(e, "frame %u: no slot although a counting flow could make room", i);
		e->seen_ns = now++;
		if (e->state == OFF_COUNTING && ++e->frames >= AFTER) {
			installed++;
			e->state = OFF_OFFLOADED;
		}
	}
	/* The books: every frame counted toward an install, evicted (untracked), or still counting. */
	uint64_t counting = 0;

	for (uint32_t s = 0; s < OFF_PROBE; s++)
		if (slots[s].state == OFF_COUNTING)
			counting += slots[s].frames;
	CHECK(installed * AFTER + untracked + counting == 2 * PER,
	      "%llu installed (%u frames each), %llu frames untracked, %llu still counting: %u frames sent",
	      (unsigned long long)installed, AFTER, (unsigned long long)untracked, (unsigned long long)counting,
	      2 * PER);
	CHECK(installed + !!untracked >= 1, "neither flow installed nor counted");
	return 0;
}
