/* SPDX-License-Identifier: MIT */
/* Stats exactly as expected on scripted sequences (the kernel's counter names and rules). */
#include <umem/pool.h>
#include "testutil.h"

static struct umem_pool_stats stats(struct umem_pool *p)
{
	struct umem_pool_stats s = { .sz = sizeof(s) };

	CHECK_EQ(umem_pool__stats(p, &s), 0);
	return s;
}

#define EXPECT(p, field, v) CHECK_EQ(stats(p).field, v)

static void first_alloc_is_slow(void)
{
	struct umem_area *a = umem_area__create(256, NULL);
	struct umem_pool *p = umem_pool__create(a, NULL);
	uint64_t addr, again;

	CHECK_EQ(umem_pool__alloc(p, &addr), 0);
	/* Empty cache, empty ring: one refill attempt (empty), one bulk slow allocation of 64. */
	EXPECT(p, alloc.fast, 0);
	EXPECT(p, alloc.empty, 1);
	EXPECT(p, alloc.slow, 1);
	EXPECT(p, alloc.slow_high_order, 0);
	EXPECT(p, pages_held, UMEM_POOL_REFILL);
	EXPECT(p, inflight, UMEM_POOL_REFILL);
	CHECK_EQ(umem_area__free_pages(a), 256 - UMEM_POOL_REFILL);

	/* The owner's put goes to the cache and the next alloc is a fast one, LIFO. */
	umem_pool__put(p, addr);
	EXPECT(p, recycle.cached, 1);
	CHECK_EQ(umem_pool__alloc(p, &again), 0);
	CHECK_EQ(again, addr);
	EXPECT(p, alloc.fast, 1);
	umem_pool__put(p, again);

	/* Steady state: thousands of alloc/put pairs never touch the slow path. */
	for (int i = 0; i < 10000; i++) {
		CHECK_EQ(umem_pool__alloc(p, &addr), 0);
		umem_pool__put(p, addr);
	}
	EXPECT(p, alloc.slow, 1);
	EXPECT(p, alloc.fast, 10001);
	EXPECT(p, recycle.cached, 10002);
	CHECK_EQ(umem_pool__destroy(p), 0);
	CHECK_EQ(umem_area__destroy(a), 0);
}

static void cache_full_goes_to_ring(void)
{
	struct umem_area *a = umem_area__create(512, NULL);
	struct umem_pool *p = umem_pool__create(a, NULL);
	uint64_t addrs[200];

	CHECK_EQ(umem_pool__alloc_bulk(p, addrs, 200), 200);
	/* 200 pages = 4 slow refills of 64 (the last partly used). */
	EXPECT(p, alloc.slow, 4);
	EXPECT(p, alloc.empty, 4);
	EXPECT(p, pages_held, 256);
	for (int i = 0; i < 200; i++)
		umem_pool__put(p, addrs[i]);
	/* 56 were left in the cache: 72 more fit, the remaining 128 overflow into the ring. */
	EXPECT(p, recycle.cached, 72);
	EXPECT(p, recycle.cache_full, 128);
	EXPECT(p, recycle.ring, 128);

	/* Draining the cache makes the next allocation refill from the ring, 64 at a time. */
	CHECK_EQ(umem_pool__alloc_bulk(p, addrs, 128 + 1), 129);
	EXPECT(p, alloc.refill, 1);
	EXPECT(p, alloc.slow, 4);
	umem_pool__put_bulk(p, addrs, 129);
	CHECK_EQ(umem_pool__destroy(p), 0);
	CHECK_EQ(umem_area__free_pages(a), 512);
	CHECK_EQ(umem_area__destroy(a), 0);
}

/* The sizing rule: every page in a pool's ring is one it holds, so a ring at least as large as
 * the most pages the pool holds at once never falls back to the area. */
static void sized_ring_never_full(void)
{
	struct umem_area *a = umem_area__create(512, NULL);
	UMEM_OPTS(umem_pool_opts, po, .ring_size = 128);
	struct umem_pool *p = umem_pool__create(a, &po);
	struct umem_pool *q = umem_pool__create(a, NULL);
	uint64_t addrs[100];

	for (int round = 0; round < 10; round++) {
		CHECK_EQ(umem_pool__alloc_bulk(p, addrs, 100), 100);
		umem_pool__put_bulk(q, addrs, 100);
		CHECK(stats(p).pages_held <= 128, "round %d: p holds %llu pages", round,
		      (unsigned long long)stats(p).pages_held);
	}
	EXPECT(p, recycle.ring, 1000);
	EXPECT(p, recycle.ring_full, 0);
	CHECK_EQ(umem_pool__destroy(q), 0);
	CHECK_EQ(umem_pool__destroy(p), 0);
	CHECK_EQ(umem_area__destroy(a), 0);
}

static void foreign_puts_and_ring_full(void)
{
	struct umem_area *a = umem_area__create(512, NULL);
	UMEM_OPTS(umem_pool_opts, po, .ring_size = 64);
	struct umem_pool *p = umem_pool__create(a, &po);
	struct umem_pool *q = umem_pool__create(a, NULL);
	uint64_t addrs[100];

	CHECK_EQ(umem_pool__alloc_bulk(p, addrs, 100), 100);
	/* q does not own these pages: they go to p's ring; 64 fit, 36 are released to the area. */
	umem_pool__put_bulk(q, addrs, 100);
	EXPECT(p, recycle.ring, 64);
	EXPECT(p, recycle.ring_full, 36);
	EXPECT(p, pages_released, 36);
	EXPECT(q, recycle.ring, 0);
	EXPECT(q, recycle.cached, 0);
	EXPECT(p, inflight, 128 - 36);
	CHECK_EQ(umem_pool__destroy(q), 0);
	CHECK_EQ(umem_pool__destroy(p), 0);
	CHECK_EQ(umem_area__free_pages(a), 512);
	CHECK_EQ(umem_area__destroy(a), 0);
}

/* Producers read the consumer's position only when the ring looks full by the one they saw
 * last: over many laps, a put must still find exactly the room the owner's consumption left
 * (no false "full", no slot overwritten), and every page must come back. */
static void ring_room_every_lap(void)
{
	struct umem_area *a = umem_area__create(512, NULL);
	UMEM_OPTS(umem_pool_opts, po, .ring_size = 64);
	struct umem_pool *p = umem_pool__create(a, &po);
	struct umem_pool *q = umem_pool__create(a, NULL);
	uint64_t addrs[100], ring = 0, full = 0;

	for (uint32_t r = 0; r < 200; r++) {
		uint32_t k = 1 + r * 37 % 64; /* 1..64: the first put fits whole */

		CHECK_EQ(umem_pool__alloc_bulk(p, addrs, 100), 100);
		umem_pool__put_bulk(q, addrs, k);
		EXPECT(p, recycle.ring, ring += k);
		EXPECT(p, recycle.ring_full, full);
		/* The ring takes 64 - k more; the rest goes to the area. */
		umem_pool__put_bulk(q, addrs + k, 100 - k);
		EXPECT(p, recycle.ring, ring += 64 - k);
		EXPECT(p, recycle.ring_full, full += 36);
		/* The owner takes all 64 back (the consumer moves one lap), and releases its cache. */
		CHECK(umem_pool__flush(p) >= 64, "round %u: the ring's 64 pages not flushed", r);
		CHECK_EQ(umem_area__free_pages(a), 512);
	}
	CHECK_EQ(umem_pool__destroy(q), 0);
	CHECK_EQ(umem_pool__destroy(p), 0);
	CHECK_EQ(umem_area__destroy(a), 0);
}

static void fragments_and_refs(void)
{
	struct umem_area *a = umem_area__create(64, NULL);
	struct umem_pool *p = umem_pool__create(a, NULL);
	uint64_t f[4];
	uint32_t ts;

	/* Two 2 KiB fragments per 4 KiB page: the second absorbs nothing (it ends the page). */
	for (int i = 0; i < 4; i++)
		CHECK_EQ(umem_pool__alloc_frag(p, 2048, &f[i], &ts), 0);
	EXPECT(p, frag_allocs, 4);
	EXPECT(p, frag_pages_drained, 2); /* each page closed by the fragment that filled it */
	CHECK_EQ(f[1] - f[0], 2048);
	CHECK_EQ(f[2] % 4096, 0);
	CHECK_EQ(umem_pool__ref(p, f[0], 2), 0);
	EXPECT(p, refs_taken, 2);
	for (int i = 0; i < 4; i++)
		umem_pool__put(p, f[i]);
	/* f[0] holds two more references: its page is not back yet; the second page is. */
	EXPECT(p, recycle.cached, 1);
	umem_pool__put(p, f[0]);
	EXPECT(p, recycle.cached, 1);
	umem_pool__put(p, f[0]);
	EXPECT(p, recycle.cached, 2);
	EXPECT(p, inflight, 64);
	CHECK_EQ(umem_pool__destroy(p), 0);
	CHECK_EQ(umem_area__free_pages(a), 64);
	CHECK_EQ(umem_area__destroy(a), 0);
}

/* Prefill takes the working set up front: afterwards allocation never reaches the area. */
static void prefill(void)
{
	struct umem_area *a = umem_area__create(512, NULL);
	UMEM_OPTS(umem_pool_opts, po, .ring_size = 256);
	struct umem_pool *p = umem_pool__create(a, &po);
	uint64_t addrs[300];

	CHECK_EQ(umem_pool__prefill(p, 300), 256); /* bounded by the ring */
	EXPECT(p, alloc.slow, 0); /* not an allocation: counted when a refill hands them out */
	EXPECT(p, pages_held, 256);
	CHECK_EQ(umem_pool__alloc_bulk(p, addrs, 256), 256);
	EXPECT(p, alloc.slow, 0);
	EXPECT(p, alloc.refill, 4);
	EXPECT(p, alloc.empty, 0);
	umem_pool__put_bulk(p, addrs, 256);
	for (int round = 0; round < 10; round++) {
		CHECK_EQ(umem_pool__alloc_bulk(p, addrs, 256), 256);
		umem_pool__put_bulk(p, addrs, 256);
	}
	EXPECT(p, alloc.slow, 0);
	CHECK_EQ(umem_pool__prefill(NULL, 1), -EINVAL);
	CHECK_EQ(umem_pool__destroy(p), 0);
	CHECK_EQ(umem_area__destroy(a), 0);
}

static void high_order_pages(void)
{
	UMEM_OPTS(umem_area_opts, ao, .page_size = 32768);
	struct umem_area *a = umem_area__create(128, &ao);
	struct umem_pool *p = umem_pool__create(a, NULL);
	uint64_t addr;

	CHECK_EQ(umem_pool__alloc(p, &addr), 0);
	EXPECT(p, alloc.slow, 0);
	EXPECT(p, alloc.slow_high_order, 1);
	umem_pool__put(p, addr);
	CHECK_EQ(umem_pool__destroy(p), 0);
	CHECK_EQ(umem_area__destroy(a), 0);
}

int main(void)
{
	first_alloc_is_slow();
	cache_full_goes_to_ring();
	foreign_puts_and_ring_full();
	sized_ring_never_full();
	ring_room_every_lap();
	fragments_and_refs();
	high_order_pages();
	prefill();
	return 0;
}
