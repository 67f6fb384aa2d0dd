/* SPDX-License-Identifier: MIT */
/*
 * Fuzz harness: the allocator API driven by a byte stream, as a sequence of operations checked
 * against the reference model (test/pool/model.h): allocations, fragments of any size, extra
 * references, puts, bulk puts, puts through another pool (the cross-thread path: a foreign owner's
 * return ring) and owner-less puts. Any overlap of live allocations, any overwritten live frame,
 * any page missing at the end, or any abort of the library is a finding.
 */
#include <umem/pool.h>
#include "../pool/model.h"

#define FUZZ_PAGES 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t take(const uint8_t **d, const uint8_t *end, uint32_t bytes)
{
	uint32_t v = 0;

	for (uint32_t i = 0; i < bytes && *d < end; i++)
		v |= (uint32_t)*(*d)++ << (8 * i);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *d = data, *end = data + size;
	uint32_t cfg = take(&d, end, 1);
	UMEM_OPTS(umem_area_opts, ao, .page_size = 4096u << (cfg & 3),
		  .chunk_size = cfg & 4 ? 2048 : 0, .flags = cfg & 8 ? UMEM_AREA_F_DEBUG : 0);
	struct umem_area *a = umem_area__create(FUZZ_PAGES, &ao);
	UMEM_OPTS(umem_pool_opts, po, .ring_size = 64);
	struct umem_pool *p = umem_pool__create(a, &po), *q = umem_pool__create(a, &po);
	uint32_t page = umem_area__page_size(a);
	uint64_t addrs[64];
	struct model m;

	CHECK(a && p && q, "setup");
	model_init(&m, a, FUZZ_PAGES * page / 64);
	while (d < end) {
		uint32_t op = take(&d, end, 1), arg = take(&d, end, 2);
		uint32_t i = m.nr_live ? arg % m.nr_live : 0;
		uint64_t addr;
		uint32_t ts;

		switch (op % 8) {
		case 0:
			if (!umem_pool__alloc(p, &addr))
				model_add(&m, addr, page, page);
			else
				CHECK(umem_area__free_pages(a) == 0, "alloc failed with pages free");
			break;
		case 1: {
			uint32_t n = 1 + arg % 64;
			int got = umem_pool__alloc_bulk(p, addrs, n);
			CHECK(got >= 0, "bulk %d", got);
			for (int k = 0; k < got; k++)
				model_add(&m, addrs[k], page, page);
			break;
		}
		case 2: {
			/* Mostly sizes around the page (0 and page + 1 are refused); with the top bit
			 * of arg, any 32-bit size, so sizes of 2^31 and more meet a current page. */
			uint32_t sz = arg & 0x8000 ? (uint32_t)take(&d, end, 4) : arg % (page + 2);
			int err = umem_pool__alloc_frag(p, sz, &addr, &ts);
			if (sz == 0 || sz > page)
				CHECK(err == -EINVAL, "bad size %u accepted", sz);
			else if (!err)
				model_add(&m, addr, sz, ts);
			else
				CHECK(err == -ENOMEM && umem_area__free_pages(a) == 0, "frag: %d", err);
			break;
		}
		case 3:
			if (m.nr_live) {
				uint32_t n = 1 + (arg >> 8) % 4;
				CHECK(umem_pool__ref(p, m.live[i].addr + arg % m.live[i].len, n) == 0, "ref");
				m.live[i].refs += n;
			}
			break;
		case 4: /* owner put */
		case 5: /* put through another pool: the foreign-owner ring path */
		case 6: /* owner-less put */
			if (m.nr_live) {
				addr = m.live[i].addr + (arg >> 4) % m.live[i].len;
				model_drop(&m, i);
				if (op % 8 == 4)
					umem_pool__put(p, addr);
				else if (op % 8 == 5)
					umem_pool__put(q, addr);
				else
					umem_area__put(a, addr);
			}
			break;
		case 7: {
			uint32_t n = 1 + arg % 64, k = 0;
			for (; k < n && m.nr_live; k++) {
				uint32_t j = (arg * 7 + k * 13) % m.nr_live;
				addrs[k] = m.live[j].addr;
				model_drop(&m, j);
			}
			umem_pool__put_bulk(op & 8 ? q : p, addrs, k);
			break;
		}
		}
	}
	while (m.nr_live)
		umem_pool__put(p, model_drop(&m, 0));
	CHECK(umem_pool__destroy(q) == 0 && umem_pool__destroy(p) == 0, "pages still out at the end");
	CHECK(umem_area__free_pages(a) == FUZZ_PAGES, "pages missing at the end");
	CHECK(umem_area__destroy(a) == 0, "area busy");
	model_fini(&m);
	return 0;
}
