/* SPDX-License-Identifier: MIT */
/* xdp-fwd offload: the release arithmetic of an ordered flow's gate (gate.h), decision by
 * decision. The race it must survive is rare end to end (fwd_offload): the kernel publishes a
 * copy-mode socket's RX ring only at the end of a NAPI poll, so frames the program has counted
 * in gated can still be unseen by userspace when its burst comes back short. The overload it
 * must open under (a full RX ring dropping gated frames, the ring never empty) is modelled
 * frame by frame at the end. */
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
	fwd_gate_seen(&g, 0);
	fwd_gate_seen(&g, 1);
	rel = 0;
	CHECK(fwd_gate_release(&g, 3, 0, false, true, &rel) && rel == 2,
	      "5 queued + 2 of 3 gated frames seen, a short burst: released %llu, expected 2 (3 opens the gate "
	      "with a gated frame unsent)", (unsigned long long)rel);
	/* The third one arrives: now every gated frame was sent. */
	g.frames++;
	fwd_gate_seen(&g, 2);
	CHECK(fwd_gate_release(&g, 3, 0, false, true, &rel) && rel == 3, "all 3 gated frames seen: released %llu",
	      (unsigned long long)rel);
}

/* Exact mode: what was seen is released only once it was sent, and never a zero count. */
static void test_marked_needs_sent(void)
{
	struct fwd_gate g = fresh();
	uint64_t rel = 0;

	g.frames = 10;
	for (uint32_t q = 0; q < 4; q++)
		fwd_gate_seen(&g, q);
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
	g.frames = 9;
	for (uint32_t q = 0; q < 3; q++)
		fwd_gate_seen(&g, q);
	CHECK(fwd_gate_release(&g, 4, 1, false, true, &rel) && rel == 4, "mixed: released %llu, expected 4",
	      (unsigned long long)rel);
}

/* Gated frames dropped at the full RX ring never show; a seq above them proves they are gone
 * (the ring takes the flow's frames in order), so they do not hold the gate. Before seq marks
 * the release was the count of marked frames seen: 3 of 4, and the gate stayed shut. */
static void test_ring_drops(void)
{
	struct fwd_gate g = fresh();
	uint64_t rel = 0;

	g.frames = 3;
	fwd_gate_seen(&g, 0);
	fwd_gate_seen(&g, 1);
	fwd_gate_seen(&g, 3); /* 2 dropped at the ring */
	CHECK(fwd_gate_release(&g, 4, 0, true, true, &rel) && rel == 4,
	      "seqs 0, 1, 3 seen, 2 lost at the ring: released %llu, expected 4", (unsigned long long)rel);
	/* The lost frame at the end is not known lost: nothing above it was seen. */
	CHECK(fwd_gate_release(&g, 5, 0, true, true, &rel) && rel == 4, "seq 4 unseen: released %llu, expected 4",
	      (unsigned long long)rel);
	CHECK(!fwd_gate_release(&g, 5, 0, true, false, &rel), "released with frames staged");
}

/* When a drain starts: a lost gated frame, or late; never with unmarked frames (nothing tells
 * the drained ones apart) nor with nothing unseen. */
static void test_drain_start(void)
{
	struct fwd_gate g = fresh();

	fwd_gate_seen(&g, 0);
	fwd_gate_seen(&g, 1);
	CHECK(!fwd_gate_drain(&g, 9, 0, false), "drained without a lost frame, not late");
	CHECK(!fwd_gate_drain(&g, 2, 0, true), "drained with every gated frame seen");
	CHECK(!fwd_gate_drain(&g, 9, 1, true), "drained with an unmarked frame");
	CHECK(fwd_gate_drain(&g, 9, 0, true) && g.drain == 9, "late: drain from %u, expected 9", g.drain);
	CHECK(!fwd_gate_drain(&g, 12, 0, true) && g.drain == 9, "a second drain: from %u", g.drain);
	g = fresh();
	fwd_gate_seen(&g, 0);
	fwd_gate_seen(&g, 2); /* 1 lost */
	CHECK(fwd_gate_drain(&g, 7, 0, false) && g.drain == 7, "a lost frame: drain from %u, expected 7", g.drain);
}

/* A drain ends once a frame at or past its start was seen (its tail) and what was seen below
 * it was sent: every frame the program gates from then on is dropped here, so UINT64_MAX. */
static void test_drain_release(void)
{
	struct fwd_gate g = fresh();
	uint64_t rel = 0;

	fwd_gate_seen(&g, 0);
	fwd_gate_seen(&g, 2);
	CHECK(fwd_gate_drain(&g, 6, 0, false), "drain");
	CHECK(!fwd_gate_seen(&g, 3) && !fwd_gate_seen(&g, 5), "frames below the drain are forwarded");
	CHECK(fwd_gate_release(&g, 9, 0, true, true, &rel) && rel == 6, "no tail yet: released %llu, expected 6",
	      (unsigned long long)rel);
	CHECK(fwd_gate_seen(&g, 7) && g.tail, "a frame past the drain is dropped, the tail");
	CHECK(!fwd_gate_release(&g, 11, 0, true, false, &rel) || rel != UINT64_MAX,
	      "released all with frames below the drain unsent");
	CHECK(fwd_gate_release(&g, 11, 0, true, true, &rel) && rel == UINT64_MAX, "tail and sent: released %llu",
	      (unsigned long long)rel);
	/* A flow that turned unmarked mid-drain: the fallback's bound, never all. */
	g = fresh();
	fwd_gate_seen(&g, 1);
	CHECK(fwd_gate_drain(&g, 4, 0, false), "drain");
	fwd_gate_seen(&g, 5);
	CHECK(!fwd_gate_release(&g, 8, 1, false, true, &rel) || rel != UINT64_MAX, "unmarked: released all");
}

/* A sustained overload, frame by frame: the program gates RATE frames a turn into an RX ring of
 * RING entries (dropped when full: xsk_rx_ring_full), userspace reads SERVE a turn and sends at
 * once, then looks the flow up. The gate must open, with no frame userspace would still send
 * in the ring (the order), and the books must close. Without the drain it never opens (the 1 s
 * force of before). */
static void test_overload(bool drain)
{
	enum { RING = 64, RATE = 8, SERVE = 3, TURNS = 400 };
	struct fwd_gate g = fresh();
	uint32_t ring[RING], head = 0, len = 0, turn;
	uint64_t gated = 0, released = 0, rel = 0, lost = 0, sent = 0, dropped = 0, redirected = 0;
	bool have_released = false, open = false;

	for (turn = 0; turn < TURNS; turn++) {
		for (int f = 0; f < RATE; f++) {
			if (!open && have_released && released >= gated) {
				open = true;
				for (uint32_t i = 0; i < len; i++)
					CHECK(g.draining && ring[(head + i) % RING] >= g.drain,
					      "opened with seq %u in the ring (drain from %u)", ring[(head + i) % RING], g.drain);
			}
			if (open) {
				redirected++;
				continue;
			}
			if (len == RING)
				lost++, gated++;
			else
				ring[(head + len++) % RING] = (uint32_t)gated++;
		}
		for (int r = 0; r < SERVE && len; r++, len--, head = (head + 1) % RING) {
			g.frames++;
			if (fwd_gate_seen(&g, ring[head]))
				g.frames--, dropped++;
			else
				sent++;
		}
		if (!open) {
			if (drain)
				fwd_gate_drain(&g, gated, 0, false);
			if (fwd_gate_release(&g, gated, 0, len == RING, true, &rel))
				released = rel, have_released = true;
		}
	}
	if (!drain) {
		CHECK(!open, "opened without a drain under the overload: the model lost its overload");
		return;
	}
	while (len) { /* what the ring still holds: the drain's tail, dropped */
		CHECK(fwd_gate_seen(&g, ring[head]), "seq %u left in the ring after the open is not dropped", ring[head]);
		dropped++, len--, head = (head + 1) % RING;
	}
	CHECK(open, "the gate never opened under the overload (%llu gated, %llu sent, %llu lost at the ring)",
	      (unsigned long long)gated, (unsigned long long)sent, (unsigned long long)lost);
	CHECK(gated == sent + dropped + lost, "books: %llu gated, %llu sent + %llu drained + %llu lost at the ring",
	      (unsigned long long)gated, (unsigned long long)sent, (unsigned long long)dropped, (unsigned long long)lost);
	CHECK(gated + redirected == (uint64_t)TURNS * RATE, "frames: %llu gated + %llu redirected",
	      (unsigned long long)gated, (unsigned long long)redirected);
}

int main(void)
{
	test_unpublished_gated_frame();
	test_marked_needs_sent();
	test_unmarked_fallback();
	test_ring_drops();
	test_drain_start();
	test_drain_release();
	test_overload(false);
	test_overload(true);
	printf("ok\n");
	return 0;
}
