/* SPDX-License-Identifier: MIT */
/* xdp-fwd offload: the release arithmetic of an ordered flow's gate (gate.h), decision by
 * decision. The race it must survive is rare end to end (fwd_offload): the kernel publishes a
 * copy-mode socket's RX ring only at the end of a NAPI poll, so frames the program has counted
 * in gated can still be unseen by userspace when its burst comes back short. */
#include "testutil.h"
#include "gate.h"

static struct fwd_gate fresh(void)
{
	return (struct fwd_gate){ .pre_hi = UINT32_MAX };
}

/* 5 frames queued before the add sit in the ring; the program gates 3 more, of which 2 are
 * published when userspace reads gated = 3 and then gets a short burst of 7 frames. Releasing 3
 * would open the gate with the third gated frame still unsent: the kernel's next frame of the
 * flow would overtake it. Only the 2 marked frames seen may be released. */
static void test_unpublished_gated_frame(void)
{
	struct fwd_gate g = fresh();
	uint64_t rel = 0;

	CHECK(!fwd_gate_release(&g, 3, 0, false, true, &rel), "nothing seen yet: released %llu",
	      (unsigned long long)rel);
	g.frames += 7; /* 5 queued before the add, 2 gated (marked) */
	g.marked += 2;
	rel = 0;
	CHECK(fwd_gate_release(&g, 3, 0, false, true, &rel) && rel == 2,
	      "5 queued + 2 of 3 gated frames seen, a short burst: released %llu, expected 2 (3 opens the gate "
	      "with a gated frame unsent)", (unsigned long long)rel);
	/* The third one arrives: now every gated frame was sent. */
	g.frames++;
	g.marked++;
	CHECK(fwd_gate_release(&g, 3, 0, false, true, &rel) && rel == 3, "all 3 gated frames seen: released %llu",
	      (unsigned long long)rel);
}

/* Exact mode: what was seen is released only once it was sent, and never a zero count. */
static void test_marked_needs_sent(void)
{
	struct fwd_gate g = fresh();
	uint64_t rel = 0;

	g.frames = 10, g.marked = 4;
	CHECK(!fwd_gate_release(&g, 4, 0, false, false, &rel), "released %llu with frames staged",
	      (unsigned long long)rel);
	CHECK(fwd_gate_release(&g, 4, 0, true, true, &rel) && rel == 4,
	      "a full burst does not matter when the frames are marked: released %llu", (unsigned long long)rel);
	g = fresh();
	g.frames = 6; /* only frames queued before the add */
	CHECK(!fwd_gate_release(&g, 0, 0, false, true, &rel), "none gated seen: released %llu", (unsigned long long)rel);
	CHECK(!fwd_gate_release(&g, 2, 0, false, true, &rel), "none gated seen: released %llu", (unsigned long long)rel);
}

/* The fallback (the program could not mark some gated frames: a driver without metadata): the
 * bound by the previous lookup, as before marking. */
static void test_unmarked_fallback(void)
{
	struct fwd_gate g = fresh();
	uint64_t rel = 0;

	CHECK(!fwd_gate_release(&g, 3, 3, false, true, &rel), "no bound before a lookup: released %llu",
	      (unsigned long long)rel);
	g.frames = 8; /* 5 queued before the add, the 3 gated, all published */
	CHECK(!fwd_gate_release(&g, 3, 3, true, true, &rel), "a full burst gives no bound: released %llu",
	      (unsigned long long)rel);
	CHECK(fwd_gate_release(&g, 3, 3, false, true, &rel) && rel == 3, "fallback: released %llu, expected 3",
	      (unsigned long long)rel);
	CHECK(!fwd_gate_release(&g, 3, 3, false, false, &rel), "fallback with frames staged: released %llu",
	      (unsigned long long)rel);
	/* Marked frames seen too (some were marked): the bound still counts them as gated. */
	g = fresh();
	CHECK(!fwd_gate_release(&g, 4, 1, false, true, &rel), "no bound yet");
	g.frames = 9, g.marked = 3;
	CHECK(fwd_gate_release(&g, 4, 1, false, true, &rel) && rel == 4, "mixed: released %llu, expected 4",
	      (unsigned long long)rel);
}

int main(void)
{
	test_unpublished_gated_frame();
	test_marked_needs_sent();
	test_unmarked_fallback();
	printf("ok\n");
	return 0;
}
