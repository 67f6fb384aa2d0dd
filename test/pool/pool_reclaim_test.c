/* SPDX-License-Identifier: MIT */
/*
 * Idle pools do not strand pages. A pool whose pages all came back through its return ring
 * (returned by a thread that owns no pool) holds the whole area without using a frame: another
 * pool's allocation reclaims them. Pages in an idle pool's alloc cache go back with
 * umem_pool__flush(). Also: stats partition the allocations (fast + slow + slow_high_order +
 * refill = pages handed out, as in page_pool).
 */
#include <umem/pool.h>
#include "testutil.h"

#define PAGES 256u

static uint64_t stat_sum(struct umem_pool *p)
{
	UMEM_OPTS(umem_pool_stats, st);

	CHECK_EQ(umem_pool__stats(p, &st), 0);
	return st.alloc.fast + st.alloc.slow + st.alloc.slow_high_order + st.alloc.refill;
}

static void stranded_ring(void)
{
	struct umem_area *a = umem_area__create(PAGES, NULL);
	struct umem_pool *idle = umem_pool__create(a, NULL), *busy = umem_pool__create(a, NULL);
	uint64_t addrs[PAGES], x;

	CHECK(a && idle && busy, "setup: %s", strerror(errno));
	CHECK_EQ(umem_pool__alloc_bulk(idle, addrs, PAGES), PAGES);
	/* Returned from outside any pool: every page waits in idle's ring (1024 entries). */
	umem_area__put_bulk(a, addrs, PAGES);
	CHECK_EQ(umem_area__free_pages(a), 0);
	/* No frame is in use: busy gets the whole area. */
	CHECK_EQ(umem_pool__alloc_bulk(busy, addrs, PAGES), PAGES);
	CHECK_EQ(umem_pool__alloc(busy, &x), -ENOMEM);
	umem_pool__put_bulk(busy, addrs, PAGES);
	/* And idle, back to work, refills from what is free again. */
	CHECK_EQ(umem_pool__destroy(busy), 0);
	CHECK_EQ(umem_pool__alloc(idle, &x), 0);
	umem_pool__put(idle, x);
	CHECK_EQ(umem_pool__destroy(idle), 0);
	CHECK_EQ(umem_area__free_pages(a), PAGES);
	CHECK_EQ(umem_area__destroy(a), 0);
}

static void stranded_cache(void)
{
	struct umem_area *a = umem_area__create(100, NULL);
	struct umem_pool *idle = umem_pool__create(a, NULL), *busy = umem_pool__create(a, NULL);
	uint64_t addrs[100], x;

	CHECK_EQ(umem_pool__alloc_bulk(idle, addrs, 100), 100);
	umem_pool__put_bulk(idle, addrs, 100); /* into idle's alloc cache (128) */
	CHECK_EQ(umem_pool__alloc(busy, &x), -ENOMEM); /* only the owner can empty a cache */
	CHECK_EQ(umem_pool__flush(idle), 100);
	CHECK_EQ(umem_area__free_pages(a), 100);
	CHECK_EQ(umem_pool__alloc_bulk(busy, addrs, 100), 100);
	umem_pool__put_bulk(busy, addrs, 100);
	CHECK_EQ(umem_pool__flush(NULL), -EINVAL);
	CHECK_EQ(umem_pool__destroy(idle), 0);
	CHECK_EQ(umem_pool__destroy(busy), 0);
	CHECK_EQ(umem_area__destroy(a), 0);
}

/* Every page handed out is counted exactly once, whichever call and source. */
static void partition(void)
{
	struct umem_area *a = umem_area__create(512, NULL);
	UMEM_OPTS(umem_pool_opts, po, .ring_size = 64);
	struct umem_pool *p = umem_pool__create(a, &po);
	uint64_t addrs[200], x, handed = 0;

	/* alloc_bulk from an empty cache: the refill's page is slow, not also fast. */
	CHECK_EQ(umem_pool__alloc_bulk(p, addrs, 200), 200);
	handed += 200;
	CHECK_EQ(stat_sum(p), handed);
	umem_area__put_bulk(a, addrs, 64); /* through the ring */
	CHECK_EQ(umem_pool__alloc_bulk(p, addrs, 64), 64);
	handed += 64;
	CHECK_EQ(stat_sum(p), handed);
	umem_pool__put_bulk(p, addrs, 64);
	CHECK_EQ(umem_pool__alloc(p, &x), 0);
	handed++;
	CHECK_EQ(stat_sum(p), handed);
	umem_pool__put(p, x);
	umem_pool__put_bulk(p, addrs + 64, 136);
	CHECK_EQ(umem_pool__destroy(p), 0);
	CHECK_EQ(umem_area__destroy(a), 0);
}

int main(void)
{
	umem_set_print(NULL);
	stranded_ring();
	stranded_cache();
	partition();
	return 0;
}
