/* SPDX-License-Identifier: MIT */
/* xdp-fwd offload: the flow tracker's slots (offload_slots.h). A window that holds installed
 * flows and one place to count in: two flows taking turns there evict each other at every frame,
 * so neither reaches --offload-after in one stay. Their frames must still be counted (untracked):
 * a flow that sent --offload-after frames is installed or counted under a reason.
 * The live list, which the worker's walks go by instead of the whole table: it holds exactly
 * the slots in use, through claims, evictions and frees in any order. */
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

/* The live list names every slot in use once, and no other; each slot knows its place. */
static void check_live(const struct off_worker *ow, const char *when)
{
	uint32_t used = 0;

	for (uint32_t s = 0; s < ow->nr_slots; s++) {
		const struct off_flow *e = &ow->slots[s];

		if (e->state == OFF_FREE)
			continue;
		used++;
		CHECK(e->live_idx < ow->nr_live && ow->live[e->live_idx] == s,
		      "%s: slot %u in use but at live[%u] of %u", when, s, e->live_idx, ow->nr_live);
	}
	CHECK(used == ow->nr_live, "%s: %u slots in use, %u live", when, used, ow->nr_live);
}

/* Many flows over a larger table, freed in a walk of the live list from its end (as housekeep
 * frees idle ones): the list stays exact, and the walk visits every slot in use once. */
static void live_list(void)
{
	enum { SLOTS = 256, FLOWS = 150 };
	static struct off_flow slots[SLOTS];
	static uint32_t live[SLOTS];
	struct off_worker ow = { .slots = slots, .nr_slots = SLOTS, .live = live };
	uint32_t visited = 0, freed = 0, before;

	for (uint32_t n = 0; n < FLOWS; n++) {
		struct umem_steer_flow_key k = key(1000 + n);
		struct off_flow gone, *e = fwd_off_slot_of(&ow, &k, &gone);

		if (e)
			e->seen_ns = n;
	}
	check_live(&ow, "after the claims");
	CHECK(ow.nr_live > FLOWS / 2, "only %u of %u flows tracked", ow.nr_live, FLOWS);
	before = ow.nr_live;
	for (uint32_t i = ow.nr_live; i-- > 0;) {
		struct off_flow *e = &slots[live[i]];

		visited++;
		if (e->seen_ns % 3 == 0) {
			fwd_off_slot_free(&ow, e);
			freed++;
		}
	}
	CHECK(visited == before, "the walk visited %u of %u live slots", visited, before);
	CHECK(ow.nr_live == before - freed, "%u live after freeing %u of %u", ow.nr_live, freed, before);
	check_live(&ow, "after the frees");
	/* Claims again, into freed slots and by eviction. */
	for (uint32_t n = 0; n < FLOWS; n++) {
		struct umem_steer_flow_key k = key(5000 + n);
		struct off_flow gone;

		fwd_off_slot_of(&ow, &k, &gone);
	}
	check_live(&ow, "after more claims");
}

int main(void)
{
	struct off_flow slots[OFF_PROBE];
	uint32_t live[OFF_PROBE];
	struct off_worker ow = { .slots = slots, .nr_slots = OFF_PROBE, .live = live };
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
	check_live(&ow, "after the turns");
	live_list();
	return 0;
}
