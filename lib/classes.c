/* SPDX-License-Identifier: MIT */
/* Size classes: one pool per class, picked by the requested size. */
#include <stdlib.h>
#include <umem/classes.h>
#include "internal.h"

struct umem_classes {
	struct umem_area *area;
	uint32_t nr;
	uint32_t bounds[UMEM_CLASSES_MAX];
	struct umem_pool *pools[UMEM_CLASSES_MAX];
};

static const uint32_t mvpp2_bounds[] = { UMEM_MVPP2_SHORT, UMEM_MVPP2_LONG, UMEM_MVPP2_JUMBO };

struct umem_classes *umem_classes__create(struct umem_area *area, const struct umem_classes_opts *opts)
{
	struct umem_classes *c;
	uint32_t nr;
	const uint32_t *bounds;

	if (!area) {
		pr_warn("classes: NULL area\n");
		goto inval;
	}
	if (!OPTS_CHECK(opts, umem_classes_opts, "classes"))
		goto inval;
	nr = OPTS_GET(opts, nr, 0);
	bounds = nr ? opts->bounds : mvpp2_bounds;
	if (!nr)
		nr = sizeof(mvpp2_bounds) / sizeof(mvpp2_bounds[0]);
	if (nr > UMEM_CLASSES_MAX || (OPTS_GET(opts, nr, 0) && !OPTS_HAS(opts, bounds))) {
		pr_warn("classes: umem_classes_opts.nr = %u %s\n", nr, nr > UMEM_CLASSES_MAX ?
			"is above UMEM_CLASSES_MAX (8)" : "but opts.sz does not cover bounds[]");
		goto inval;
	}
	for (uint32_t i = 0; i < nr; i++) {
		if (!bounds[i] || (i && bounds[i] <= bounds[i - 1])) {
			pr_warn("classes: umem_classes_opts.bounds[%u] = %u must be above 0 and above the "
				"previous one\n", i, bounds[i]);
			goto inval;
		}
		if (bounds[i] > umem_area__page_size(area)) {
			/* The next power of two, in 64 bits: a bound above 2^31 needs 2^32. */
			pr_warn("classes: umem_classes_opts.bounds[%u] = %u exceeds the area's page size "
				"%u: use pages of at least %llu bytes\n", i, bounds[i],
				umem_area__page_size(area),
				1ull << (32 - __builtin_clz(bounds[i] - 1)));
			goto inval;
		}
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		pr_warn("classes: no memory\n");
		return NULL;
	}
	c->area = area;
	c->nr = nr;
	UMEM_OPTS(umem_pool_opts, po, .ring_size = OPTS_GET(opts, ring_size, 0));
	for (uint32_t i = 0; i < nr; i++) {
		c->bounds[i] = bounds[i];
		c->pools[i] = umem_pool__create(area, &po);
		if (!c->pools[i]) {
			int err = errno;
			umem_classes__destroy(c);
			errno = err;
			return NULL;
		}
	}
	return c;
inval:
	errno = EINVAL;
	return NULL;
}

int umem_classes__destroy(struct umem_classes *c)
{
	int out = 0;

	if (!c)
		return 0;
	for (uint32_t i = 0; i < c->nr; i++)
		if (c->pools[i])
			out += umem_pool__destroy(c->pools[i]);
	free(c);
	return out;
}

static int class_index(const struct umem_classes *c, uint32_t size)
{
	for (uint32_t i = 0; i < c->nr; i++)
		if (size <= c->bounds[i])
			return (int)i;
	return -1;
}

int umem_classes__index(const struct umem_classes *c, uint32_t size)
{
	int i;

	if (!c) {
		pr_warn("classes index: NULL classes\n");
		return -EINVAL;
	}
	i = size ? class_index(c, size) : -1;
	if (i < 0) {
		pr_warn("classes index: size %u is not in 1..%u (the largest class)\n", size,
			c->bounds[c->nr - 1]);
		return -EINVAL;
	}
	return i;
}

int umem_classes__alloc(struct umem_classes *c, uint32_t size, uint64_t *addr, uint32_t *truesize)
{
	int i = umem_classes__index(c, size);

	if (i < 0)
		return -EINVAL;
	if (!addr) {
		pr_warn("classes alloc: NULL addr\n");
		return -EINVAL;
	}
	int err = umem_pool__alloc_frag(c->pools[i], c->bounds[i], addr, truesize);

	if (err != -ENOMEM)
		return err;
	/* Dry: the siblings' idle pages (alloc caches, return rings, an empty fragment page)
	 * go back to the area, so the set's memory follows the traffic mix. Every pool of the
	 * set is the caller's, so flushing them is an owner's call. */
	uint32_t freed = 0;
	for (uint32_t j = 0; j < c->nr; j++)
		if (j != (uint32_t)i) {
			int k = umem_pool__flush(c->pools[j]);
			freed += k > 0 ? (uint32_t)k : 0;
		}
	if (!freed)
		return -ENOMEM;
	return umem_pool__alloc_frag(c->pools[i], c->bounds[i], addr, truesize);
}

void umem_classes__put(struct umem_classes *c, uint64_t addr)
{
	struct umem_pool *owner;

	if (!c)
		umem__die("classes put of address 0x%llx through NULL classes", (unsigned long long)addr);
	owner = umem__page_owner(c->area, addr);

	for (uint32_t i = 0; i < c->nr; i++)
		if (owner == c->pools[i])
			return umem_pool__put(owner, addr);
	umem_area__put(c->area, addr);
}

uint32_t umem_classes__count(const struct umem_classes *c) { return c ? c->nr : 0; }
uint32_t umem_classes__bound(const struct umem_classes *c, uint32_t i) { return c && i < c->nr ? c->bounds[i] : 0; }
struct umem_pool *umem_classes__pool(const struct umem_classes *c, uint32_t i) { return c && i < c->nr ? c->pools[i] : NULL; }
