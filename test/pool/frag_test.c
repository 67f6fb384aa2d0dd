/* SPDX-License-Identifier: MIT */
/* Fragments: the page_pool_alloc() rule, placement, truesize accounting, chunk boundaries,
 * larger pages, the reference bound, and bad input. */
#include <umem/pool.h>
#include "testutil.h"

static struct umem_area *mk_area(uint32_t pages, uint32_t page_size, uint32_t chunk)
{
	UMEM_OPTS(umem_area_opts, ao, .page_size = page_size, .chunk_size = chunk);
	struct umem_area *a = umem_area__create(pages, &ao);

	CHECK(a, "area %u/%u: %s", page_size, chunk, strerror(errno));
	return a;
}

static void done(struct umem_area *a, struct umem_pool *p)
{
	CHECK_EQ(umem_pool__destroy(p), 0);
	CHECK_EQ(umem_area__free_pages(a), umem_area__nr_pages(a));
	CHECK_EQ(umem_area__destroy(a), 0);
}

/* Same-size fragments fill pages at increasing aligned offsets; per page the truesizes add up
 * to exactly the page (the last one absorbs the tail). */
static void uniform_sizes(uint32_t page_size, uint32_t size, uint32_t expect_per_page)
{
	struct umem_area *a = mk_area(64, page_size, 0);
	struct umem_pool *p = umem_pool__create(a, NULL);
	uint64_t addrs[256], prev = 0;
	uint32_t ts, sum = 0, on_page = 0, n = 0;
	uint32_t aligned = (size + UMEM_FRAG_ALIGN - 1) & ~(UMEM_FRAG_ALIGN - 1);

	for (; n < 3 * expect_per_page; n++) {
		CHECK_EQ(umem_pool__alloc_frag(p, size, &addrs[n], &ts), 0);
		if (on_page && addrs[n] / page_size != prev / page_size) {
			CHECK(sum == page_size && on_page == expect_per_page,
			      "page %u/%u: %u fragments, truesizes sum %u", page_size, size, on_page, sum);
			sum = on_page = 0;
		}
		if (on_page)
			CHECK_EQ(addrs[n] - prev, aligned);
		CHECK_EQ(addrs[n] % UMEM_FRAG_ALIGN, 0);
		sum += ts;
		on_page++;
		prev = addrs[n];
	}
	CHECK(sum == page_size && on_page == expect_per_page, "last page: %u fragments, sum %u", on_page, sum);
	umem_pool__put_bulk(p, addrs, n);
	done(a, p);
}

static void half_page_rule(void)
{
	struct umem_area *a = mk_area(16, 4096, 0);
	struct umem_pool *p = umem_pool__create(a, NULL);
	uint64_t x, y;
	uint32_t ts;

	/* size * 2 > page: a whole page, no fragment accounting. */
	CHECK_EQ(umem_pool__alloc_frag(p, 2049, &x, &ts), 0);
	CHECK_EQ(ts, 4096);
	CHECK_EQ(x % 4096, 0);
	struct umem_pool_stats s = { .sz = sizeof(s) };
	umem_pool__stats(p, &s);
	CHECK_EQ(s.frag_allocs, 0);
	/* size * 2 == page: still a fragment (two per page). */
	CHECK_EQ(umem_pool__alloc_frag(p, 2048, &y, &ts), 0);
	CHECK_EQ(ts, 2048);
	umem_pool__put(p, x);
	umem_pool__put(p, y);
	/* The va variant. */
	uint8_t *v = umem_pool__alloc_va(p, 100, &ts);
	CHECK(v && ts == 128, "alloc_va: %p truesize %u", (void *)v, ts);
	umem_area__put(a, umem_area__addr(a, v));
	done(a, p);
}

/* Aligned-chunk mode: a fragment that fits in a chunk never straddles one; the gap the next
 * fragment of the same size would skip is charged to the fragment before it, and a gap left
 * by a size change to the fragment after it. */
static void chunk_boundaries(void)
{
	struct umem_area *a = mk_area(16, 8192, 2048);
	struct umem_pool *p = umem_pool__create(a, NULL);
	uint64_t x, y, z;
	uint32_t ts;

	CHECK_EQ(umem_pool__alloc_frag(p, 1500, &x, &ts), 0); /* [0, 1536) + the gap to 2048 */
	CHECK_EQ(ts, 2048);
	CHECK_EQ(umem_pool__alloc_frag(p, 1000, &y, &ts), 0);
	CHECK_EQ(y - x, 2048);
	CHECK_EQ(ts, 1024);
	CHECK_EQ(umem_pool__alloc_frag(p, 1500, &z, &ts), 0); /* 3072 + 1536 crosses 4096 */
	CHECK_EQ(z, x + 4096);
	CHECK_EQ(ts, 1024 + 1536 + 512); /* the size change's gap, itself, the gap to 6144 */
	umem_pool__put(p, z);
	/* Larger than a chunk: starts on a chunk boundary. */
	CHECK_EQ(umem_pool__alloc_frag(p, 3000, &z, &ts), 0);
	CHECK_EQ(z % 2048, 0);
	umem_pool__put(p, x);
	umem_pool__put(p, y);
	umem_pool__put(p, z);
	done(a, p);
}

/* The reference bound: refused with -EOVERFLOW, never wraps; the page still comes back. */
static void ref_bound(void)
{
	struct umem_area *a = mk_area(128, 4096, 0); /* two pools refill 64 each */
	struct umem_pool *p = umem_pool__create(a, NULL);
	uint64_t x, f;

	CHECK_EQ(umem_pool__alloc(p, &x), 0);
	CHECK_EQ(umem_pool__ref(p, x, UMEM_REF_MAX - 2), 0); /* count UMEM_REF_MAX - 1 */
	CHECK_EQ(umem_pool__ref(p, x, 1), -EOVERFLOW);
	CHECK_EQ(umem_pool__ref(p, x, UMEM_REF_MAX), -EOVERFLOW);
	/* A fragment page's count includes what it was claimed for (64 fragments of 64 B): the
	 * same bound holds. */
	CHECK_EQ(umem_pool__alloc_frag(p, 64, &f, NULL), 0);
	CHECK_EQ(umem_pool__ref(p, f, UMEM_REF_MAX - 64), -EOVERFLOW);
	CHECK_EQ(umem_pool__ref(p, f, 1000), 0);
	for (int i = 0; i < 1001; i++)
		umem_pool__put(p, f);
	/* A page claimed for two 2 KiB fragments, then carved smaller, sits near BIAS. */
	struct umem_pool *q = umem_pool__create(a, NULL);
	uint64_t g[2];
	CHECK_EQ(umem_pool__alloc_frag(q, 2048, &g[0], NULL), 0);
	CHECK_EQ(umem_pool__alloc_frag(q, 64, &g[1], NULL), 0);
	CHECK_EQ(g[1] - g[0], 2048);
	CHECK_EQ(umem_pool__ref(q, g[1], UMEM_REF_MAX - UMEM_FRAG_BIAS), -EOVERFLOW);
	CHECK_EQ(umem_pool__ref(q, g[1], 3), 0);
	for (int i = 0; i < 4; i++)
		umem_pool__put(q, g[1]);
	umem_pool__put(q, g[0]);
	CHECK_EQ(umem_pool__destroy(q), 0);
	for (uint32_t i = 0; i < UMEM_REF_MAX - 1; i++)
		umem_pool__put(p, x);
	done(a, p);
}

/* Bad input: an error code and nothing changed. */
static void bad_input(void)
{
	struct umem_area *a = mk_area(16, 4096, 0);
	struct umem_pool *p = umem_pool__create(a, NULL);
	struct umem_pool_stats before = { .sz = sizeof(before) }, after = { .sz = sizeof(after) };
	uint64_t x = 12345;
	uint32_t ts = 777;

	umem_pool__stats(p, &before);
	CHECK_EQ(umem_pool__alloc_frag(p, 0, &x, &ts), -EINVAL);
	CHECK_EQ(umem_pool__alloc_frag(p, 4097, &x, &ts), -EINVAL);
	CHECK_EQ(umem_pool__alloc_frag(NULL, 64, &x, &ts), -EINVAL);
	CHECK_EQ(umem_pool__alloc_frag(p, 64, NULL, &ts), -EINVAL);
	CHECK(x == 12345 && ts == 777, "outputs written on error");
	CHECK(!umem_pool__alloc_va(p, 0, NULL) && errno == EINVAL, "alloc_va(0)");
	CHECK_EQ(umem_pool__ref(p, 0, 1), -ENOENT);           /* never allocated */
	CHECK_EQ(umem_pool__ref(p, 1ull << 30, 1), -EINVAL);  /* outside the area */
	CHECK_EQ(umem_pool__ref(p, 0, 0), -EINVAL);
	CHECK_EQ(umem_pool__alloc_bulk(p, &x, 0), 0);
	CHECK_EQ(umem_pool__alloc_bulk(p, NULL, 1), -EINVAL);
	umem_pool__stats(p, &after);
	CHECK(!memcmp(&before, &after, sizeof(before)), "stats changed by bad input");
	CHECK_EQ(umem_area__free_pages(a), 16);
	done(a, p);
}

/* Sizes of 2^31 and more once a fragment page is current: the inline check must not wrap. */
static void huge_sizes(void)
{
	struct umem_area *a = mk_area(16, 4096, 0);
	struct umem_pool *p = umem_pool__create(a, NULL);
	uint64_t f, x = 12345;
	uint32_t ts = 777;
	static const uint32_t sizes[] = { 0x80000000u, 0x80000001u, 0xfffff000u, UINT32_MAX };

	CHECK_EQ(umem_pool__alloc_frag(p, 64, &f, NULL), 0); /* a current fragment page */
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		CHECK_EQ(umem_pool__alloc_frag(p, sizes[i], &x, &ts), -EINVAL);
		CHECK(x == 12345 && ts == 777, "size 0x%x: outputs written", sizes[i]);
	}
	umem_pool__put(p, f);
	done(a, p);
}

/* Exhaustion: -ENOMEM, and everything works again once pages return. */
static void exhaustion(void)
{
	struct umem_area *a = mk_area(4, 4096, 0);
	struct umem_pool *p = umem_pool__create(a, NULL);
	uint64_t x[5];

	CHECK_EQ(umem_pool__alloc_bulk(p, x, 5), 4);
	CHECK_EQ(umem_pool__alloc(p, &x[4]), -ENOMEM);
	CHECK_EQ(umem_pool__alloc_frag(p, 64, &x[4], NULL), -ENOMEM);
	umem_pool__put(p, x[3]);
	CHECK_EQ(umem_pool__alloc_frag(p, 64, &x[3], NULL), 0);
	umem_pool__put_bulk(p, x, 4);
	done(a, p);
}

int main(void)
{
	uniform_sizes(4096, 64, 64);
	uniform_sizes(4096, 256, 16);
	uniform_sizes(4096, 1500, 2);   /* 1536 each, the second absorbs the last 1024 */
	uniform_sizes(32768, 1500, 21); /* many MTU frames per 32 KiB page */
	uniform_sizes(65536, 9000, 7);
	half_page_rule();
	chunk_boundaries();
	ref_bound();
	bad_input();
	huge_sizes();
	exhaustion();
	return 0;
}
