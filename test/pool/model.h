/* SPDX-License-Identifier: MIT */
/* A reference model of live allocations for the pool tests: what the allocator handed out, with
 * how many references, and a shadow map that proves no two live allocations overlap. */
#ifndef UMEM_TEST_MODEL_H
#define UMEM_TEST_MODEL_H

#include <umem/pool.h>
#include "testutil.h"

struct live {
	uint64_t addr;
	uint32_t len;
	uint32_t refs;
	uint64_t tag;
};

struct model {
	struct umem_area *area;
	struct live *live;
	uint32_t nr_live, cap;
	uint16_t *shadow; /* live allocations covering each 64-byte granule: 0 or 1 */
	uint64_t next_tag;
};

static inline void model_init(struct model *m, struct umem_area *a, uint32_t cap)
{
	memset(m, 0, sizeof(*m));
	m->area = a;
	m->cap = cap;
	m->live = calloc(cap, sizeof(*m->live));
	m->shadow = calloc(umem_area__size(a) / 64, sizeof(*m->shadow));
	m->next_tag = 1;
	CHECK(m->live && m->shadow, "out of memory");
}

static inline void model_fini(struct model *m)
{
	free(m->live);
	free(m->shadow);
}

/* The tag sits in the first and last bytes of the allocation: an allocator that hands out live
 * memory again gets it overwritten, which the put-time check catches. */
static inline void tag_write(struct model *m, const struct live *l)
{
	uint8_t *p = umem_area__ptr(m->area, l->addr);
	uint32_t n = l->len < 8 ? l->len : 8;

	memcpy(p, &l->tag, n);
	if (l->len >= 16)
		memcpy(p + l->len - n, &l->tag, n);
}

static inline void tag_check(struct model *m, const struct live *l)
{
	uint8_t *p = umem_area__ptr(m->area, l->addr);
	uint32_t n = l->len < 8 ? l->len : 8;

	CHECK(!memcmp(p, &l->tag, n) && (l->len < 16 || !memcmp(p + l->len - n, &l->tag, n)),
	      "allocation 0x%llx (len %u) was overwritten: live memory handed out twice",
	      (unsigned long long)l->addr, l->len);
}

static inline void shadow_mark(struct model *m, uint64_t addr, uint32_t len, int delta)
{
	for (uint64_t g = addr / 64; g <= (addr + len - 1) / 64; g++) {
		if (delta > 0)
			CHECK(m->shadow[g] == 0, "allocation 0x%llx+%u overlaps a live allocation at 0x%llx",
			      (unsigned long long)addr, len, (unsigned long long)(g * 64));
		m->shadow[g] = (uint16_t)(m->shadow[g] + delta);
	}
}

/* Records a fresh allocation, checking placement rules. */
static inline struct live *model_add(struct model *m, uint64_t addr, uint32_t len, uint32_t truesize)
{
	uint32_t page = umem_area__page_size(m->area), chunk = umem_area__chunk_size(m->area);

	CHECK(m->nr_live < m->cap, "model full");
	CHECK(addr + len <= umem_area__size(m->area), "0x%llx+%u beyond the area", (unsigned long long)addr, len);
	CHECK(addr % UMEM_FRAG_ALIGN == 0, "0x%llx not aligned", (unsigned long long)addr);
	if (len * 2 > page)
		CHECK(addr % page == 0 && truesize == page, "whole-page alloc 0x%llx truesize %u",
		      (unsigned long long)addr, truesize);
	CHECK(truesize >= len && truesize <= page, "truesize %u for len %u", truesize, len);
	CHECK((addr % page) + len <= page, "0x%llx+%u crosses a page", (unsigned long long)addr, len);
	if (chunk && len <= chunk)
		CHECK(addr % chunk + len <= chunk, "0x%llx+%u straddles a %u-byte chunk",
		      (unsigned long long)addr, len, chunk);
	shadow_mark(m, addr, len, 1);
	struct live *l = &m->live[m->nr_live++];
	*l = (struct live){ .addr = addr, .len = len, .refs = 1, .tag = m->next_tag++ };
	tag_write(m, l);
	return l;
}

/* One reference of live[i] is being dropped by the caller; returns the address to put. */
static inline uint64_t model_drop(struct model *m, uint32_t i)
{
	struct live *l = &m->live[i];
	uint64_t addr = l->addr;

	tag_check(m, l);
	if (--l->refs == 0) {
		shadow_mark(m, l->addr, l->len, -1);
		*l = m->live[--m->nr_live];
	}
	return addr;
}

#endif
