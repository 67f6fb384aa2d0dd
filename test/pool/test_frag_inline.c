/* SPDX-License-Identifier: MIT */
/*
 * Which fragment allocations stay inline. Linked with --wrap=umem__pool_alloc_frag_slow, so the
 * test counts the calls that leave the inline path: exact fits and the tail rule are inline, and
 * only page changes go out of line (one per page). Truesizes still add up to whole pages.
 */
#include <umem/classes.h>
#include "testutil.h"

int __real_umem__pool_alloc_frag_slow(struct umem_pool *p, uint32_t size, uint64_t *addr,
				      uint32_t *truesize);
int __wrap_umem__pool_alloc_frag_slow(struct umem_pool *p, uint32_t size, uint64_t *addr,
				      uint32_t *truesize);
static unsigned slow_calls;

int __wrap_umem__pool_alloc_frag_slow(struct umem_pool *p, uint32_t size, uint64_t *addr,
				      uint32_t *truesize)
{
	slow_calls++;
	return __real_umem__pool_alloc_frag_slow(p, size, addr, truesize);
}

#define CALLS 512u
#define BURST 32u

/* CALLS fragments of size, put back in bursts; returns the out-of-line calls. */
static unsigned run(uint32_t page_size, uint32_t chunk, uint32_t size, uint32_t per_page)
{
	UMEM_OPTS(umem_area_opts, ao, .page_size = page_size, .chunk_size = chunk);
	struct umem_area *a = umem_area__create(64, &ao);
	struct umem_pool *p = umem_pool__create(a, NULL);
	uint64_t addrs[BURST], bytes = 0;
	uint32_t ts;

	CHECK(a && p, "setup: %s", strerror(errno));
	slow_calls = 0;
	for (unsigned i = 0; i < CALLS; i += BURST) {
		for (unsigned j = 0; j < BURST; j++) {
			CHECK_EQ(umem_pool__alloc_frag(p, size, &addrs[j], &ts), 0);
			bytes += ts;
			CHECK(chunk == 0 || addrs[j] / chunk == (addrs[j] + size - 1) / chunk,
			      "fragment 0x%llx straddles a chunk", (unsigned long long)addrs[j]);
		}
		umem_pool__put_bulk(p, addrs, BURST);
	}
	/* Whole pages' worth of truesize: nothing under-reported, nothing lost. */
	CHECK_EQ(bytes, (uint64_t)CALLS / per_page * page_size);
	CHECK_EQ(umem_pool__destroy(p), 0);
	CHECK_EQ(umem_area__destroy(a), 0);
	return slow_calls;
}

int main(void)
{
	/* 2048-byte fragments on 4 KiB pages: the second of each page is an exact fit. */
	CHECK_EQ(run(4096, 0, 2048, 2), CALLS / 2);
	/* The 2 KiB-chunk fill path. */
	CHECK_EQ(run(4096, 2048, 2048, 2), CALLS / 2);
	/* 1500-byte frames: the second takes the tail. */
	CHECK_EQ(run(4096, 0, 1500, 2), CALLS / 2);
	CHECK_EQ(run(4096, 2048, 1500, 2), CALLS / 2);
	/* 64-byte fragments: 64 per page. */
	CHECK_EQ(run(4096, 0, 64, 64), CALLS / 64);

	/* The mvpp2 profile on 16 KiB pages: short and long classes change pages out of line
	 * only; jumbo buffers are whole pages, taken from the cache inline. */
	UMEM_OPTS(umem_area_opts, ao, .page_size = 16384);
	struct umem_area *a = umem_area__create(512, &ao); /* each pool refills 64 pages */
	struct umem_classes *c = umem_classes__create(a, NULL);
	uint64_t x[BURST];
	static const struct { uint32_t size, per_page; } cls[] = { { 100, 128 }, { 1500, 9 },
								   { 9000, 1 } };
	CHECK(a && c, "classes: %s", strerror(errno));
	for (size_t k = 0; k < 3; k++) {
		unsigned pages = 0;

		slow_calls = 0;
		for (unsigned i = 0; i < 9 * BURST; i += BURST) {
			for (unsigned j = 0; j < BURST; j++)
				CHECK_EQ(umem_classes__alloc(c, cls[k].size, &x[j], NULL), 0);
			for (unsigned j = 0; j < BURST; j++)
				umem_classes__put(c, x[j]);
		}
		pages = cls[k].per_page == 1 ? 0 : (9 * BURST + cls[k].per_page - 1) / cls[k].per_page;
		CHECK(slow_calls == pages, "class of %u: %u out-of-line calls, expected %u",
		      cls[k].size, slow_calls, pages);
	}
	CHECK_EQ(umem_classes__destroy(c), 0);
	CHECK_EQ(umem_area__destroy(a), 0);
	return 0;
}
