/* SPDX-License-Identifier: MIT */
/*
 * Fuzz harness: xsk-gen's frame code (tools/xsk-gen/frame.c), the sink's userspace frame
 * parsing and the generator's frame building.
 *  - Any bytes: gen_frame_parse classifies them without reading past the frame (the input is
 *    copied into a heap block of exactly its size, so ASan sees any overread).
 *  - A frame built from fuzzed parameters parses back to its stream and number; it does not
 *    depend on what the buffer held before (built over two different canaries, the results are
 *    identical: no stale bytes of an earlier frame, at any size down to the 60-byte minimum);
 *    and any single changed payload byte is caught (BAD or FOREIGN, never OK).
 */
#include <stdlib.h>
#include <string.h>
#include "gen.h"
#include "testutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t take(const uint8_t **p, size_t *left, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes && *left; i++, (*p)++, (*left)--)
		v |= (uint64_t)**p << (8 * i);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t a[GEN_FRAME_MAX + 1], b[GEN_FRAME_MAX + 1]; /* + 1: the byte past the frame */
	const uint8_t *p = data;
	size_t left = size;
	uint32_t stream = 0, st;
	uint64_t seq = 0, n;

	/* Hostile bytes, as the sink sees them. */
	uint8_t *copy = malloc(size ? size : 1);
	CHECK(copy, "malloc");
	memcpy(copy, data, size);
	enum gen_parse r = gen_frame_parse(copy, (uint32_t)size, (uint16_t)(size >= 38 ? copy[36] << 8 | copy[37] : 0),
					   &stream, &seq);
	CHECK(r == GEN_PARSE_OK || r == GEN_PARSE_FOREIGN || r == GEN_PARSE_BAD, "parse returned %d", r);
	free(copy);

	/* A frame built from the same bytes taken as parameters. */
	struct gen_flow flow;
	uint32_t len = GEN_FRAME_MIN + (uint32_t)(take(&p, &left, 2) % (GEN_FRAME_MAX - GEN_FRAME_MIN + 1));
	memset(&flow, 0, sizeof(flow));
	for (int i = 0; i < 6; i++) {
		flow.src_mac[i] = (uint8_t)take(&p, &left, 1);
		flow.dst_mac[i] = (uint8_t)take(&p, &left, 1);
	}
	flow.src_ip = (uint32_t)take(&p, &left, 4);
	flow.dst_ip = (uint32_t)take(&p, &left, 4);
	flow.src_port = (uint16_t)take(&p, &left, 2);
	flow.dst_port = (uint16_t)take(&p, &left, 2);
	stream = (uint32_t)take(&p, &left, 4);
	seq = take(&p, &left, 8);
	memset(a, 0xa5, sizeof(a));
	memset(b, 0x5a, sizeof(b));
	gen_frame_build(a, len, &flow, stream, seq);
	gen_frame_build(b, len, &flow, stream, seq);
	CHECK(!memcmp(a, b, len), "a %u-byte frame carries bytes of what its buffer held before", len);
	CHECK(a[len] == 0xa5 && b[len] == 0x5a, "built past its length");
	CHECK(gen_frame_parse(a, len, flow.dst_port, &st, &n) == GEN_PARSE_OK && st == stream && n == seq,
	      "a built frame (len %u) does not parse back", len);

	/* One changed payload byte. */
	uint32_t at = GEN_L2_TO_PAYLOAD + (uint32_t)(take(&p, &left, 2) % (len - GEN_L2_TO_PAYLOAD));
	uint8_t flip = (uint8_t)(take(&p, &left, 1) | 1);
	a[at] ^= flip;
	CHECK(gen_frame_parse(a, len, flow.dst_port, &st, &n) != GEN_PARSE_OK,
	      "byte %u of a %u-byte frame changed and the sink accepted it", at, len);
	return 0;
}
