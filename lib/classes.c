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

	if (!area || !OPTS_VALID(opts))
		goto inval;
	nr = OPTS_GET(opts, nr, 0);
	bounds = nr ? opts->bounds : mvpp2_bounds;
	if (!nr)
		nr = sizeof(mvpp2_bounds) / sizeof(mvpp2_bounds[0]);
	if (nr > UMEM_CLASSES_MAX || (OPTS_GET(opts, nr, 0) && !OPTS_HAS(opts, bounds))) {
		pr_warn("classes: %u classes (at most %u)\n", nr, UMEM_CLASSES_MAX);
		goto inval;
	}
	for (uint32_t i = 0; i < nr; i++) {
		if (!bounds[i] || (i && bounds[i] <= bounds[i - 1])) {
			pr_warn("classes: bound %u (class %u) must be above 0 and above the previous one\n",
				bounds[i], i);
			goto inval;
		}
		if (bounds[i] > umem_area__page_size(area)) {
			pr_warn("classes: bound %u (class %u) exceeds the area's page size %u: use pages "
				"of at least %u bytes\n", bounds[i], i, umem_area__page_size(area),
				1u << (32 - __builtin_clz(bounds[i] - 1)));
			goto inval;
		}
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
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
		return -EINVAL;
	for (uint32_t i = 0; i < c->nr; i++)
		if (c->pools[i])
			out += umem_pool__destroy(c->pools[i]);
	free(c);
	return out;
}

int umem_classes__index(const struct umem_classes *c, uint32_t size)
{
	if (!c || !size)
		return -EINVAL;
	for (uint32_t i = 0; i < c->nr; i++)
		if (size <= c->bounds[i])
			return (int)i;
	return -EINVAL;
}

int umem_classes__alloc(struct umem_classes *c, uint32_t size, uint64_t *addr, uint32_t *truesize)
{
	int i = umem_classes__index(c, size);

	if (i < 0 || !addr)
		return -EINVAL;
	return umem_pool__alloc_frag(c->pools[i], c->bounds[i], addr, truesize);
}

void umem_classes__put(struct umem_classes *c, uint64_t addr)
{
	struct umem_pool *owner = umem__area_page(c->area, addr, "classes put")->owner;

	for (uint32_t i = 0; i < c->nr; i++)
		if (owner == c->pools[i])
			return umem_pool__put(owner, addr);
	umem_put(c->area, addr);
}

uint32_t umem_classes__count(const struct umem_classes *c) { return c ? c->nr : 0; }
uint32_t umem_classes__bound(const struct umem_classes *c, uint32_t i) { return c && i < c->nr ? c->bounds[i] : 0; }
struct umem_pool *umem_classes__pool(const struct umem_classes *c, uint32_t i) { return c && i < c->nr ? c->pools[i] : NULL; }
