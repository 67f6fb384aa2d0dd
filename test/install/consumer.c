/* SPDX-License-Identifier: MIT */
/* A program built against the INSTALLED libumem: allocates, shares and returns a frame. */
#include <stdio.h>
#include <umem/umem.h>

int main(void)
{
	struct umem_area *area = umem_area__create(64, NULL);
	struct umem_pool *pool = area ? umem_pool__create(area, NULL) : NULL;
	uint64_t addr;

	if (!pool || umem_pool__alloc_frag(pool, 1500, &addr, NULL) || umem_pool__ref(pool, addr, 1))
		return 1;
	umem_pool__put(pool, addr);
	umem_pool__put(pool, addr);
	if (umem_pool__destroy(pool) || umem_area__destroy(area))
		return 1;
	puts("consumer: ok");
	return 0;
}
