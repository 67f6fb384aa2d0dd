/* SPDX-License-Identifier: MIT */
/* Destroy with pages in flight is legal: the pool lives until its last page comes back, late
 * returns go straight to the area, and the area refuses to go away while anything is out. */
#include <umem/pool.h>
#include "testutil.h"

int main(void)
{
	struct umem_area *a = umem_area__create(256, NULL);
	struct umem_pool *p = umem_pool__create(a, NULL), *q = umem_pool__create(a, NULL);
	uint64_t pages[10], frags[3], extra;

	CHECK(a && p && q, "setup: %s", strerror(errno));
	CHECK_EQ(umem_pool__alloc_bulk(p, pages, 10), 10);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(umem_pool__alloc_frag(p, 500, &frags[i], NULL), 0);
	CHECK_EQ(umem_pool__ref(p, frags[1], 1), 0);
	CHECK_EQ(umem_pool__alloc(p, &extra), 0);
	umem_pool__put(p, extra); /* one page in the cache, released by destroy */
	CHECK_EQ(umem_area__destroy(a), -EBUSY);

	/* Out: 10 whole pages and the fragment page. */
	CHECK_EQ(umem_pool__destroy(p), 11);
	CHECK_EQ(umem_area__free_pages(a), 256 - 11);
	CHECK_EQ(umem_area__destroy(a), -EBUSY); /* pages still out */

	/* Late returns from any context: single, bulk, through another pool. */
	umem_area__put(a, pages[0]);
	umem_area__put_bulk(a, pages + 1, 4);
	umem_pool__put_bulk(q, pages + 5, 5);
	struct umem_pool_stats s = { .sz = sizeof(s) };
	CHECK_EQ(umem_pool__stats(q, &s), 0);
	CHECK_EQ(s.recycle.ring, 0); /* nothing entered q: the pages were p's */
	CHECK_EQ(umem_area__free_pages(a), 256 - 1);
	for (int i = 0; i < 3; i++)
		umem_pool__put(q, frags[i]);
	CHECK_EQ(umem_area__free_pages(a), 256 - 1); /* frags[1] still has its extra reference */
	umem_area__put(a, frags[1] + 10);
	/* The last page is home: p's memory is gone (ASan would flag any later touch of it). */
	CHECK_EQ(umem_area__free_pages(a), 256);
	CHECK_EQ(umem_area__destroy(a), -EBUSY); /* q is alive */
	CHECK_EQ(umem_pool__destroy(q), 0);
	CHECK_EQ(umem_area__destroy(a), 0);

	/* Destroy with nothing out frees at once. */
	a = umem_area__create(64, NULL);
	p = umem_pool__create(a, NULL);
	CHECK_EQ(umem_pool__alloc(p, &extra), 0);
	umem_pool__put(p, extra);
	CHECK_EQ(umem_pool__destroy(p), 0);
	CHECK_EQ(umem_area__destroy(a), 0);
	return 0;
}
