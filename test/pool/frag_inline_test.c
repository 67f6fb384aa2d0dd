/* SPDX-License-Identifier: MIT */
/*
 * Which fragment calls stay inline. Linked with --wrap=umem__pool_alloc_frag_slow and
 * --wrap=umem__pool_put_slow, so the test counts the calls that leave the inline paths: for
 * fragments of one size only the first call goes out of line (it learns how many fragments of
 * that size a page takes); exact fits, the tail rule and page changes are inline, and so are the
 * owner's puts of them (the put slot). Truesizes still add up to whole pages.
 */
#include <umem/classes.h>
#include "testutil.h"

int __real_umem__pool_alloc_frag_slow(struct umem_pool *p, uint32_t size, uint64_t *addr,
				      uint32_t *truesize);
int __wrap_umem__pool_alloc_frag_slow(struct umem_pool *p, uint32_t size, uint64_t *addr,
				      uint32_t *truesize);
void __real_umem__pool_put_slow(struct umem_pool *p, uint64_t addr);
void __wrap_umem__pool_put_slow(struct umem_pool *p, uint64_t addr);
static unsigned slow_calls, put_calls;

int __wrap_umem__pool_alloc_frag_slow(struct umem_pool *p, uint32_t size, uint64_t *addr,
				      uint32_t *truesize)
{
	slow_calls++;
	return __real_umem__pool_alloc_frag_slow(p, size, addr, truesize);
}

void __wrap_umem__pool_put_slow(struct umem_pool *p, uint64_t addr)
{
	put_calls++;
	__real_umem__pool_put_slow(p, addr);
}

#define CALLS 512u
#define BURST 32u

/* CALLS fragments of size, put back in bursts (one put_bulk, or a put each); returns the
 * out-of-line allocation calls. */
static unsigned run(uint32_t page_size, uint32_t chunk, uint32_t size, uint32_t per_page, bool each)
{
	UMEM_OPTS(umem_area_opts, ao, .page_size = page_size, .chunk_size = chunk);
	struct umem_area *a = umem_area__create(64, &ao);
	struct umem_pool *p = umem_pool__create(a, NULL);
	uint64_t addrs[BURST], bytes = 0;
	uint32_t ts;

	CHECK(a && p, "setup: %s", strerror(errno));
	slow_calls = put_calls = 0;
	for (unsigned i = 0; i < CALLS; i += BURST) {
		for (unsigned j = 0; j < BURST; j++) {
			CHECK_EQ(umem_pool__alloc_frag(p, size, &addrs[j], &ts), 0);
			bytes += ts;
			CHECK(chunk == 0 || addrs[j] / chunk == (addrs[j] + size - 1) / chunk,
			      "fragment 0x%llx straddles a chunk", (unsigned long long)addrs[j]);
		}
		if (each)
			for (unsigned j = 0; j < BURST; j++)
				umem_pool__put(p, addrs[j]);
		else
			umem_pool__put_bulk(p, addrs, BURST);
	}
	/* Every page came back to the cache, none to the ring or the area. */
	struct umem_pool_stats st = { .sz = sizeof(st) };
	CHECK_EQ(umem_pool__stats(p, &st), 0);
	CHECK(st.recycle.ring == 0 && st.alloc.slow + st.alloc.slow_high_order == 1,
	      "%u/%u/%u: ring %llu, slow %llu", page_size, chunk, size,
	      (unsigned long long)st.recycle.ring,
	      (unsigned long long)(st.alloc.slow + st.alloc.slow_high_order));
	/* Whole pages' worth of truesize: nothing under-reported, nothing lost. */
	if (CALLS % per_page == 0)
		CHECK_EQ(bytes, (uint64_t)CALLS / per_page * page_size);
	CHECK_EQ(umem_pool__destroy(p), 0);
	CHECK_EQ(umem_area__destroy(a), 0);
	return slow_calls;
}

/* The out-of-line calls expected for n fragments, per_page to a page, put back every burst:
 * the first (it learns the size), and each page that fills after the owner already put some of
 * its fragments (a burst boundary falls inside it): it closes with the rest of its claim. */
static unsigned expected_calls(unsigned n, unsigned per_page, unsigned burst)
{
	unsigned calls = 1;

	for (unsigned first = 0; first + per_page <= n; first += per_page)
		if ((first + per_page - 1) / burst != first / burst)
			calls++;
	return calls;
}

int main(void)
{
	static const struct { uint32_t page, chunk, size, per_page; } cases[] = {
		{ 4096, 0, 2048, 2 },     /* the second of each page is an exact fit */
		{ 4096, 2048, 2048, 2 },  /* the 2 KiB-chunk fill path */
		{ 4096, 0, 1500, 2 },     /* 1500-byte frames: the second takes the tail */
		{ 4096, 2048, 1500, 2 },  /* ... each absorbing its chunk's gap */
		{ 4096, 0, 64, 64 },
		{ 4096, 0, 256, 16 },
		{ 16384, 2048, 1000, 16 }, /* two per chunk */
		{ 32768, 0, 1500, 21 },
		{ 65536, 4096, 1500, 32 },
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		for (int each = 0; each < 2; each++) {
			unsigned calls = run(cases[k].page, cases[k].chunk, cases[k].size,
					     cases[k].per_page, each);

			unsigned want = expected_calls(CALLS, cases[k].per_page, BURST);

			CHECK(calls == want, "%u/%u/%u: %u out-of-line fragment calls, expected %u",
			      cases[k].page, cases[k].chunk, cases[k].size, calls, want);
			CHECK(!each || put_calls == 0, "%u/%u/%u: %u out-of-line puts, expected 0",
			      cases[k].page, cases[k].chunk, cases[k].size, put_calls);
		}
	}

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

		slow_calls = put_calls = 0;
		for (unsigned i = 0; i < 9 * BURST; i += BURST) {
			for (unsigned j = 0; j < BURST; j++)
				CHECK_EQ(umem_classes__alloc(c, cls[k].size, &x[j], NULL), 0);
			for (unsigned j = 0; j < BURST; j++)
				umem_classes__put(c, x[j]);
		}
		pages = cls[k].per_page == 1 ? 0 : expected_calls(9 * BURST, cls[k].per_page, BURST);
		CHECK(slow_calls == pages && put_calls == 0,
		      "class of %u: %u out-of-line calls (expected %u), %u out-of-line puts",
		      cls[k].size, slow_calls, pages, put_calls);
	}
	CHECK_EQ(umem_classes__destroy(c), 0);
	CHECK_EQ(umem_area__destroy(a), 0);
	return 0;
}
