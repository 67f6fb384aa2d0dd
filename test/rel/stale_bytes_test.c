/* SPDX-License-Identifier: MIT */
/*
 * No stale bytes in frames built for TX (label unit). The generator's frames are built in pool
 * fragments that earlier frames used: every page of the area starts filled with a canary, frames
 * of every size from the 60-byte minimum up are built, put back and built again smaller in the
 * recycled memory, and each must equal the same frame built in zeroed memory: no byte of the
 * canary or of an earlier frame survives. Frames are also checked as the sink checks them.
 */
#include <string.h>
#include <umem/umem.h>
#include "gen.h"
#include "testutil.h"

static const uint32_t sizes[] = { GEN_FRAME_MAX, 1514, 1500, 576, 129, 128, 65, 64, 61, GEN_FRAME_MIN };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define ROUNDS 64

int main(void)
{
	static uint8_t fresh[GEN_FRAME_MAX];
	const struct gen_flow flow = { .src_mac = { 2, 0, 0, 0, 0, 1 }, .dst_mac = { 2, 0, 0, 0, 0, 2 },
				       .src_ip = 0x0100000a, .dst_ip = 0x0200000a,
				       .src_port = 9090, .dst_port = 9091 };
	UMEM_OPTS(umem_area_opts, ao, .chunk_size = 4096);
	struct umem_area *area = umem_area__create(64, &ao);
	CHECK(area, "area: %s", strerror(errno));
	struct umem_pool *pool = umem_pool__create(area, NULL);
	CHECK(pool, "pool: %s", strerror(errno));
	uint64_t addr[NSIZES];
	uint64_t seq = 0, checked = 0;

	memset(umem_area__base(area), 0xa5, umem_area__size(area));
	for (uint32_t round = 0; round < ROUNDS; round++) {
		/* Each round builds in the memory the last one used (the pool recycles LIFO), with
		 * the sizes rotated so that short frames land where long ones were. */
		for (uint32_t k = 0; k < NSIZES; k++) {
			uint32_t len = sizes[(k + round) % NSIZES], stream;
			uint64_t got;
			uint8_t *buf;

			CHECK(!umem_pool__alloc_frag(pool, len, &addr[k], NULL), "alloc %u", len);
			buf = umem_pool__ptr(pool, addr[k]);
			gen_frame_build(buf, len, &flow, 7, seq);
			memset(fresh, 0, sizeof(fresh));
			gen_frame_build(fresh, len, &flow, 7, seq);
			CHECK(!memcmp(buf, fresh, len), "round %u: %u-byte frame at 0x%llx carries old bytes",
			      round, len, (unsigned long long)addr[k]);
			CHECK(gen_frame_parse(buf, len, flow.dst_port, &stream, &got) == GEN_PARSE_OK &&
			      got == seq, "round %u: %u-byte frame does not parse", round, len);
			seq++;
			checked++;
		}
		umem_pool__put_bulk(pool, addr, NSIZES);
	}
	printf("stale bytes: %llu frames of %zu sizes (%u..%u bytes) built over canaries and recycled "
	       "memory, none carries an old byte\n", (unsigned long long)checked, NSIZES, GEN_FRAME_MIN,
	       GEN_FRAME_MAX);
	CHECK_EQ(umem_pool__destroy(pool), 0);
	CHECK_EQ(umem_area__free_pages(area), umem_area__nr_pages(area));
	CHECK_EQ(umem_area__destroy(area), 0);
	return 0;
}
