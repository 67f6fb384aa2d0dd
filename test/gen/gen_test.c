/* SPDX-License-Identifier: MIT */
/* xsk-gen's pure logic: sink accounting on crafted sequences (loss, reordering, duplicates,
 * the window edge), frames (every byte written, checksums valid, damage caught), size mixes. */
#include <arpa/inet.h>

#include "testutil.h"
#include "gen.h"

static struct gen_seq acc; /* 8 KiB bitmap */

static void feed(const uint64_t *seqs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		gen_seq_account(&acc, seqs[i]);
}

static void test_seq_crafted(void)
{
	static const uint64_t gap[] = { 0, 1, 2, 5, 6 };

	gen_seq_init(&acc);
	for (uint64_t i = 0; i < 1000; i++)
		gen_seq_account(&acc, i);
	CHECK(acc.received == 1000 && !acc.lost && !acc.reordered && !acc.duplicates, "in order");

	gen_seq_init(&acc);
	feed(gap, 5);
	CHECK_EQ(acc.lost, 2);
	CHECK_EQ(acc.next, 7);
	gen_seq_account(&acc, 3); /* late: no longer lost */
	CHECK_EQ(acc.lost, 1);
	CHECK_EQ(acc.reordered, 1);
	gen_seq_account(&acc, 3); /* again: a duplicate, loss unchanged */
	CHECK_EQ(acc.duplicates, 1);
	CHECK_EQ(acc.lost, 1);
	gen_seq_account(&acc, 6);
	CHECK_EQ(acc.duplicates, 2);
	gen_seq_account(&acc, 4);
	CHECK(acc.lost == 0 && acc.reordered == 2 && acc.received == 7, "gap filled");

	/* The first frames lost: the stream starts at 0. */
	gen_seq_init(&acc);
	gen_seq_account(&acc, 10);
	CHECK_EQ(acc.lost, 10);
}

static void test_seq_window(void)
{
	const uint64_t w = GEN_SEQ_WINDOW;

	/* Bits reused across the window: a duplicate just inside it is still recognized, a number
	 * skipped one window ago is not mistaken for seen. */
	gen_seq_init(&acc);
	for (uint64_t i = 0; i < w + 10; i++)
		if (i != 20)
			gen_seq_account(&acc, i);
	CHECK_EQ(acc.lost, 1);
	gen_seq_account(&acc, w + 5);
	CHECK_EQ(acc.duplicates, 1);
	gen_seq_account(&acc, 20); /* skipped, w - 10 below the highest: late, not a duplicate */
	CHECK(acc.lost == 0 && acc.reordered == 1 && acc.duplicates == 1, "late inside the window");

	/* A jump of more than a window clears the bitmap; an older number counts as late. */
	gen_seq_init(&acc);
	gen_seq_account(&acc, 0);
	gen_seq_account(&acc, 3 * w);
	CHECK_EQ(acc.lost, 3 * w - 1);
	gen_seq_account(&acc, 3 * w - 1);
	CHECK(acc.reordered == 1 && acc.lost == 3 * w - 2, "late after a jump");
	gen_seq_account(&acc, 3 * w - 1);
	CHECK_EQ(acc.duplicates, 1);
	gen_seq_account(&acc, 5); /* beyond the window: late (cannot tell a duplicate) */
	CHECK_EQ(acc.reordered, 2);
}

/* Blocks of 8 shuffled, every 100th dropped, some repeated: the counters must match a model
 * computed independently (late = some higher number arrived before it). */
static void test_seq_shuffled(void)
{
	enum { N = 20000 };
	static uint64_t order[N], arrivals[N + N / 50];
	static uint8_t seen[N];
	uint64_t rng = 12345, max_seen = 0, late = 0, dup = 0, uniq = 0;
	size_t n = 0;

	for (uint64_t i = 0; i < N; i++)
		order[i] = i;
	for (size_t b = 0; b + 8 <= N; b += 8)
		for (size_t i = 7; i > 0; i--) {
			size_t j = test_rand(&rng) % (i + 1);
			uint64_t t = order[b + i];

			order[b + i] = order[b + j];
			order[b + j] = t;
		}
	for (size_t i = 0; i < N; i++) {
		if (order[i] % 100 == 42)
			continue;
		arrivals[n++] = order[i];
		if (i % 97 == 0) /* a duplicate right after */
			arrivals[n++] = order[i];
	}
	gen_seq_init(&acc);
	for (size_t i = 0; i < n; i++) {
		uint64_t s = arrivals[i];

		gen_seq_account(&acc, s);
		if (seen[s]) {
			dup++;
			continue;
		}
		seen[s] = 1;
		uniq++;
		if (uniq > 1 && s < max_seen)
			late++;
		if (s > max_seen)
			max_seen = s;
	}
	CHECK_EQ(acc.received, uniq);
	CHECK_EQ(acc.duplicates, dup);
	CHECK_EQ(acc.reordered, late);
	CHECK_EQ(acc.lost, max_seen + 1 - uniq);
	CHECK(late > 1000 && dup > 100, "the crafted sequence reorders (%llu) and repeats (%llu)",
	      (unsigned long long)late, (unsigned long long)dup);
}

static const struct gen_flow flow = {
	.src_mac = { 2, 0x77, 0, 0, 0, 1 },
	.dst_mac = { 2, 0x77, 0, 0, 0, 2 },
	.src_ip = 0x0100000a, /* 10.0.0.1 in network order on little-endian; any value works */
	.dst_ip = 0x0200000a,
	.src_port = 9090,
	.dst_port = 9091,
};

static void test_frames(void)
{
	static const uint32_t lens[] = { GEN_FRAME_MIN, 61, 64, 127, 576, 1500, 1514, GEN_FRAME_MAX };
	static uint8_t a[GEN_FRAME_MAX + 16], b[GEN_FRAME_MAX + 16];

	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		uint32_t len = lens[k], stream;
		uint64_t seq;

		/* Built over different garbage, the frames are identical: every byte is written
		 * (no stale bytes), and nothing after the frame is touched. */
		memset(a, 0xaa, sizeof(a));
		memset(b, 0x55, sizeof(b));
		gen_frame_build(a, len, &flow, 7, 1000 + k);
		gen_frame_build(b, len, &flow, 7, 1000 + k);
		CHECK(!memcmp(a, b, len), "len %u: bytes depend on the buffer's old contents", len);
		CHECK(a[len] == 0xaa && b[len] == 0x55, "len %u: wrote past the frame", len);

		CHECK_EQ(gen_frame_parse(a, len, 9091, &stream, &seq), GEN_PARSE_OK);
		CHECK(stream == 7 && seq == 1000 + k, "len %u: stream/seq", len);
		CHECK_EQ(gen_frame_parse(a, len, 0, &stream, &seq), GEN_PARSE_OK);
		CHECK_EQ(gen_frame_parse(a, len, 9092, &stream, &seq), GEN_PARSE_FOREIGN);
		/* IPv4 header checksum and UDP checksum (pseudo header) both verify to 0. */
		CHECK_EQ(gen_csum_fold(gen_csum_add(0, a + GEN_ETH_LEN, GEN_IP_LEN)), 0);
		uint32_t udp_len = len - GEN_ETH_LEN - GEN_IP_LEN;
		uint32_t sum = gen_csum_add(0, a + GEN_ETH_LEN + 12, 8) + 17 + udp_len;
		CHECK_EQ(gen_csum_fold(gen_csum_add(sum, a + GEN_ETH_LEN + GEN_IP_LEN, udp_len)), 0);

		/* One changed byte anywhere after the magic is damage; the same frame one number
		 * later differs in its fill, so a stale fill would be caught too. */
		for (uint32_t off = GEN_L2_TO_PAYLOAD + 2; off < len; off++) {
			memcpy(b, a, len);
			b[off] ^= 0x01;
			CHECK(gen_frame_parse(b, len, 9091, &stream, &seq) == GEN_PARSE_BAD,
			      "len %u: flipped byte %u not caught", len, off);
		}
		if (len > GEN_L2_TO_PAYLOAD + GEN_HDR_LEN) {
			gen_frame_build(b, len, &flow, 7, 1001 + k);
			memcpy(b + GEN_L2_TO_PAYLOAD, a + GEN_L2_TO_PAYLOAD, GEN_HDR_LEN);
			CHECK(gen_frame_parse(b, len, 9091, &stream, &seq) == GEN_PARSE_BAD,
			      "len %u: fill of another number accepted", len);
		}
		/* Cut short: the IP length no longer fits. */
		CHECK_EQ(gen_frame_parse(a, len - 1, 9091, &stream, &seq),
			 len - 1 < GEN_L2_TO_PAYLOAD + GEN_HDR_LEN ? GEN_PARSE_FOREIGN : GEN_PARSE_BAD);
	}
	/* Not ours: ARP, a plain UDP frame. */
	memset(a, 0, 64);
	a[12] = 0x08, a[13] = 0x06;
	CHECK_EQ(gen_frame_parse(a, 64, 0, &(uint32_t){ 0 }, &(uint64_t){ 0 }), GEN_PARSE_FOREIGN);
}

static void test_mix(void)
{
	static struct gen_mix mix;
	char err[160];
	uint32_t count[3] = { 0 }, run = 0, max_run = 0;

	CHECK_EQ(gen_mix_parse(&mix, "imix", GEN_FRAME_MAX, err, sizeof(err)), 0);
	CHECK(mix.nr == 3 && mix.period == 12 && mix.size[2] == 1500, "imix");
	for (uint32_t i = 0; i < mix.period; i++) {
		count[mix.schedule[i]]++;
		run = i && mix.schedule[i] == mix.schedule[i - 1] ? run + 1 : 1;
		max_run = run > max_run ? run : max_run;
	}
	CHECK(count[0] == 7 && count[1] == 4 && count[2] == 1, "imix counts %u %u %u", count[0],
	      count[1], count[2]);
	CHECK(max_run <= 2, "sizes spread over the period (longest run %u)", max_run);
	CHECK(gen_mix_mean(&mix) > 354.3 && gen_mix_mean(&mix) < 354.4, "imix mean");
	CHECK_EQ(gen_mix_parse(&mix, "64", GEN_FRAME_MAX, err, sizeof(err)), 0);
	CHECK(mix.nr == 1 && mix.period == 1 && mix.size[0] == 64, "single size");

	static const char *const bad[] = { "", "59", "64:0", "64:", "64,", "abc", "64:7,x:1",
					   "5000", "-64", "64:4097", "64:1:2" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		CHECK(gen_mix_parse(&mix, bad[i], GEN_FRAME_MAX, err, sizeof(err)) == -1 && err[0],
		      "mix '%s' accepted", bad[i]);
	}
	CHECK(strstr(err, "64:1:2") != NULL, "message names the mix: %s", err);
}

int main(void)
{
	test_seq_crafted();
	test_seq_window();
	test_seq_shuffled();
	test_frames();
	test_mix();
	printf("ok\n");
	return 0;
}
