/* SPDX-License-Identifier: MIT */
/* The names deprecated in 0.1 still link and do what their replacements do (kept for one
 * release): umem_put, umem_put_bulk, umem_port__queue_count, umem_steer__remove_rule_get. */
#define UMEM_SUPPRESS_DEPRECATED
#include <umem/umem.h>

#include "testutil.h"

int main(void)
{
	struct umem_area *area = umem_area__create(8, NULL);
	struct umem_pool *pool = area ? umem_pool__create(area, NULL) : NULL;
	uint64_t a[3];

	CHECK(pool, "pool: %s", strerror(errno));
	for (int i = 0; i < 3; i++)
		CHECK(!umem_pool__alloc(pool, &a[i]), "alloc");
	umem_put(area, a[0]);
	umem_put_bulk(area, a + 1, 2);
	CHECK_EQ(umem_pool__destroy(pool), 0); /* every buffer back */
	CHECK_EQ(umem_area__free_pages(area), umem_area__nr_pages(area));
	CHECK_EQ(umem_area__destroy(area), 0);
	CHECK_EQ(umem_port__queue_count("lo"), umem_netdev__queue_count("lo"));
	CHECK_EQ(umem_port__queue_count(""), -EINVAL);
	CHECK_EQ(umem_steer__remove_rule_get(NULL, 0, NULL), -EINVAL);
	printf("abi_deprecated: ok\n");
	return 0;
}
