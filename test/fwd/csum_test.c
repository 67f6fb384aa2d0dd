/* SPDX-License-Identifier: MIT */
/* xdp-fwd partial checksums (csum.h) over the library's (umem/csum.h; its own vectors, chains and
 * IPv6 extension headers are in test/csum): frames as xdp-fwd sees them (VLAN, wrong sums, UDP
 * 0) against a reference sum, the burst walker, its counters and the warning. */
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "testutil.h"
#include "csum.h"
#include <umem/csum.h>

static uint8_t frame[9100];

/* An IPv4 (v6) TCP or UDP frame with plen payload bytes, an optional VLAN tag; returns the
 * frame length and the pseudo-header sum's fold in *pseudo, the field offset in *field. */
static uint32_t build(int v6, int udp, int vlan, uint32_t plen, uint16_t *pseudo, uint32_t *field)
{
	static const uint8_t no_mac[6];
	uint32_t l4 = 0, hl = udp ? 8 : 20, s;
	uint8_t proto = udp ? 17 : 6, *ip;
	uint16_t type = v6 ? 0x86dd : 0x0800;

	memset(frame, 0, sizeof(frame));
	frame_eth(frame, &l4, no_mac, no_mac, vlan ? 0x8100 : type);
	if (vlan)
		frame_vlan(frame, &l4, 0, type);
	ip = frame + l4;
	if (v6) {
		struct frame_ipv6 h = { .next = proto, .hop_limit = 64 };

		for (int i = 0; i < 16; i++) {
			h.src[i] = (uint8_t)(0x20 + 7 * i);
			h.dst[i] = (uint8_t)(0x20 + 7 * (16 + i));
		}
		frame_ipv6(frame, &l4, &h, hl + plen);
		s = test_csum_fold(0, ip + 8, 32);
	} else {
		frame_ipv4(frame, &l4, &(struct frame_ipv4){ .src = 0x0a4d0001, .dst = 0x0a4d0002, .frag = 0x4000,
							     .ttl = 64, .proto = proto },
			   hl + plen);
		s = test_csum_fold(0, ip + 12, 8);
	}
	for (uint32_t i = 0; i < hl + plen; i++)
		frame[l4 + i] = (uint8_t)(i * 131 + 17);
	if (udp)
		frame[l4 + 4] = (uint8_t)((hl + plen) >> 8), frame[l4 + 5] = (uint8_t)(hl + plen);
	*pseudo = (uint16_t)test_csum_fold(s + proto + hl + plen, NULL, 0);
	*field = l4 + (udp ? 6 : 16);
	frame[*field] = (uint8_t)(*pseudo >> 8), frame[*field + 1] = (uint8_t)*pseudo; /* partial */
	return l4 + hl + plen;
}

/* True when the frame's L4 checksum verifies (pseudo + segment folds to 0xffff). */
static bool verifies(uint16_t pseudo, uint32_t field, uint32_t len, int udp)
{
	uint32_t l4 = field - (udp ? 6 : 16);

	return test_csum_fold(pseudo, frame + l4, len - l4) == 0xffff;
}

/* What fwd_csum_burst takes for partial. */
static bool partial(const uint8_t *f, uint32_t len, struct umem_csum_loc *loc)
{
	return umem_csum__locate(f, len, loc) == 0 && loc->partial;
}

static bool complete1(uint32_t len)
{
	struct umem_csum_loc loc;
	uint8_t *seg = frame;

	if (!partial(frame, len, &loc))
		return false;
	return umem_csum__complete(&loc, &seg, &len, 1) == 0;
}

static void test_one_buffer(void)
{
	for (int v6 = 0; v6 < 2; v6++)
		for (int udp = 0; udp < 2; udp++)
			for (int vlan = 0; vlan < 2; vlan++)
				for (uint32_t plen = 0; plen < 40; plen += 7) {
					uint16_t ps;
					uint32_t field, len = build(v6, udp, vlan, plen, &ps, &field);

					CHECK(!verifies(ps, field, len, udp), "partial frame verifies already");
					CHECK(complete1(len), "v6 %d udp %d vlan %d plen %u: not found", v6, udp, vlan, plen);
					CHECK(verifies(ps, field, len, udp), "v6 %d udp %d plen %u: wrong sum", v6, udp, plen);
					/* Complete now: the field is no longer the pseudo sum. */
					CHECK(!complete1(len), "a completed frame found partial again");
				}
}

static void test_left_alone(void)
{
	uint16_t ps;
	uint32_t field, len;
	uint8_t copy[sizeof(frame)];
	struct umem_csum_loc loc;

	/* A wrong checksum (not the pseudo sum): untouched. */
	len = build(0, 0, 0, 100, &ps, &field);
	frame[field] ^= 0x12;
	memcpy(copy, frame, len);
	CHECK(!partial(frame, len, &loc), "wrong checksum taken for partial");
	CHECK(!memcmp(copy, frame, len), "changed");
	/* UDP over IPv4 without a checksum. */
	len = build(0, 1, 0, 10, &ps, &field);
	frame[field] = frame[field + 1] = 0;
	CHECK(!partial(frame, len, &loc), "UDP checksum 0 taken for partial");
	/* A fragment (MF set). */
	len = build(0, 0, 0, 10, &ps, &field);
	frame[14 + 6] = 0x20;
	CHECK(!partial(frame, len, &loc), "fragment taken for partial");
	/* Not IP; ICMP; truncated before the field. */
	len = build(0, 0, 0, 10, &ps, &field);
	frame[12] = 0x08, frame[13] = 0x06;
	CHECK(!partial(frame, len, &loc), "ARP");
	len = build(0, 0, 0, 10, &ps, &field);
	frame[14 + 9] = 1;
	CHECK(!partial(frame, len, &loc), "ICMP");
	len = build(0, 0, 0, 10, &ps, &field);
	CHECK(!partial(frame, field + 1, &loc), "truncated");
	/* The IP length beyond the buffer: found, not completed, unchanged. */
	len = build(0, 0, 0, 10, &ps, &field);
	CHECK(partial(frame, len, &loc), "find");
	memcpy(copy, frame, len);
	uint8_t *seg = frame;
	uint32_t short_len = len - 1;
	CHECK(umem_csum__complete(&loc, &seg, &short_len, 1) == -EINVAL, "completed beyond the buffer");
	CHECK(!memcmp(copy, frame, len), "changed");
}

static void test_udp_zero(void)
{
	uint16_t ps;
	uint32_t field, len = build(0, 1, 0, 20, &ps, &field);
	uint32_t l4 = field - 6, x;
	uint16_t w;

	/* Two payload bytes chosen so that the real checksum is 0: it must go out as 0xffff. */
	frame[l4 + 8] = frame[l4 + 9] = 0;
	frame[field] = frame[field + 1] = 0;
	x = test_csum_fold(ps, frame + l4, len - l4);
	w = (uint16_t)(0xffff - x);
	frame[l4 + 8] = (uint8_t)(w >> 8), frame[l4 + 9] = (uint8_t)w;
	frame[field] = (uint8_t)(ps >> 8), frame[field + 1] = (uint8_t)ps;
	CHECK(complete1(len), "not found");
	CHECK(frame[field] == 0xff && frame[field + 1] == 0xff, "UDP 0 written as %02x%02x", frame[field],
	      frame[field + 1]);
}

/* The burst walker: chain links, counters, the completion switch, a cut chain's tail skipped. */
static uint8_t bufs[4][4096];

static uint8_t *buf_data(void *arg, uint64_t addr)
{
	(void)arg;
	return bufs[addr];
}

static void test_burst(void)
{
	struct fwd_port_counters ctr;
	uint16_t ps;
	uint32_t field, len = build(0, 0, 0, 5000, &ps, &field);
	uint8_t wp[4];
	struct umem_desc d[4] = {
		{ .addr = 0, .len = 100 }, /* a frame that is not partial */
		{ .addr = 1, .len = 3000, .options = UMEM_DESC_F_CONTD }, /* a partial one in two */
		{ .addr = 2, .len = len - 3000 },
		{ .addr = 3, .len = 3000, .options = UMEM_DESC_F_CONTD }, /* cut by the burst's end */
	};

	memset(&ctr, 0, sizeof(ctr));
	memset(bufs[0], 0, 100);
	memcpy(bufs[1], frame, 3000);
	memcpy(bufs[2], frame + 3000, len - 3000);
	memcpy(bufs[3], frame, 3000);
	memset(wp, 7, sizeof(wp));
	CHECK(fwd_csum_burst(buf_data, NULL, d, 4, false, false, &ctr, wp) == 2, "partial frames");
	/* Offload's view: the first descriptor of each partial frame. */
	CHECK(!wp[0] && wp[1] == 1 && !wp[2] && wp[3] == 1, "was_partial %u %u %u %u", wp[0], wp[1], wp[2], wp[3]);
	CHECK(ctr.csum_partial == 2 && ctr.csum_completed == 0 && ctr.csum_uncompleted == 2, "off: counters");
	CHECK(bufs[1][field] == frame[field] && bufs[1][field + 1] == frame[field + 1], "off: changed");
	CHECK(fwd_csum_burst(buf_data, NULL, d, 4, false, true, &ctr, NULL) == 2, "partial frames");
	CHECK(ctr.csum_partial == 4 && ctr.csum_completed == 1 && ctr.csum_uncompleted == 3, "on: counters");
	CHECK(complete1(len), "one buffer");
	CHECK(bufs[1][field] == frame[field] && bufs[1][field + 1] == frame[field + 1], "on: wrong sum");
	/* The first two descriptors the tail of a cut chain: only d[3] is looked at. */
	d[0].options = UMEM_DESC_F_CONTD;
	d[1].options = 0;
	CHECK(fwd_csum_burst(buf_data, NULL, d, 4, true, true, &ctr, NULL) == 1, "tail not skipped");
}

/* A real checksum that equals the pseudo-header sum (once in 65,536 frames) is valid, not
 * partial: neither counted nor marked for offload (whose flow it would take out of the kernel),
 * left as it is, with completion on or off, in one buffer or two. The library's verification
 * tells the two apart; a partial frame of the same length still counts. */
static void test_valid_as_pseudo(void)
{
	for (int udp = 0; udp < 2; udp++) {
		struct fwd_port_counters ctr;
		struct umem_csum_loc loc;
		uint16_t ps, w;
		uint32_t field, len = build(0, udp, 0, 5000, &ps, &field), l4 = field - (udp ? 6 : 16);
		uint8_t *seg[2] = { frame, frame + 3000 }, wp[2];
		uint32_t seg_len[2] = { 3000, len - 3000 };
		struct umem_desc d[2] = {
			{ .addr = 1, .len = 3000, .options = UMEM_DESC_F_CONTD },
			{ .addr = 2, .len = len - 3000 },
		};

		CHECK(partial(frame, len, &loc) && umem_csum__verify(&loc, seg, seg_len, 2) == 0, "a partial frame verified");
		/* The payload's first word makes the segment sum to the field's pseudo-header sum. */
		w = (uint16_t)(frame[l4 + 20] << 8 | frame[l4 + 21]);
		w = (uint16_t)test_csum_fold((uint32_t)w + (uint16_t)~test_csum_fold(ps, frame + l4, len - l4), NULL, 0);
		frame[l4 + 20] = (uint8_t)(w >> 8), frame[l4 + 21] = (uint8_t)w;
		CHECK(verifies(ps, field, len, udp) && partial(frame, len, &loc), "the crafted frame");
		CHECK(umem_csum__verify(&loc, seg, seg_len, 2) == 1, "a valid checksum not verified");
		CHECK(umem_csum__verify(&loc, seg, (uint32_t[]){ 3000, 10 }, 2) == -EINVAL, "a short chain verified");
		for (int complete = 0; complete < 2; complete++) {
			memset(&ctr, 0, sizeof(ctr));
			memcpy(bufs[1], frame, 3000);
			memcpy(bufs[2], frame + 3000, len - 3000);
			memset(wp, 7, sizeof(wp));
			CHECK(fwd_csum_burst(buf_data, NULL, d, 2, false, complete, &ctr, wp) == 0,
			      "udp %d complete %d: a valid checksum taken for partial", udp, complete);
			CHECK(!wp[0] && !wp[1] && ctr.csum_partial == 0 && ctr.csum_completed == 0,
			      "udp %d complete %d: marked or counted", udp, complete);
			CHECK(!memcmp(bufs[1], frame, 3000) && !memcmp(bufs[2], frame + 3000, len - 3000),
			      "udp %d complete %d: the frame changed", udp, complete);
		}
		frame[len - 1] ^= 1; /* partial again: the field no longer verifies */
		memcpy(bufs[1], frame, 3000);
		memcpy(bufs[2], frame + 3000, len - 3000);
		memset(&ctr, 0, sizeof(ctr));
		CHECK(fwd_csum_burst(buf_data, NULL, d, 2, false, true, &ctr, wp) == 1 && wp[0] == 1 &&
			      ctr.csum_completed == 1, "udp %d: a partial frame not completed", udp);
	}
}

/* The walker's inline rejection lets through every partial frame the library finds: IPv4 and
 * IPv6, TCP and UDP, with and without a VLAN tag (IPv6 extension headers: fwd_ipv6_exthdr). */
static void test_burst_kinds(void)
{
	for (int v6 = 0; v6 < 2; v6++)
		for (int udp = 0; udp < 2; udp++)
			for (int vlan = 0; vlan < 2; vlan++) {
				struct fwd_port_counters ctr;
				uint16_t ps;
				uint32_t field, len = build(v6, udp, vlan, 30, &ps, &field);
				struct umem_desc d = { .addr = 0, .len = len };

				memset(&ctr, 0, sizeof(ctr));
				memcpy(bufs[0], frame, len);
				CHECK(fwd_csum_burst(buf_data, NULL, &d, 1, false, true, &ctr, NULL) == 1,
				      "v6 %d udp %d vlan %d: not found", v6, udp, vlan);
				memcpy(frame, bufs[0], len);
				CHECK(verifies(ps, field, len, udp), "v6 %d udp %d vlan %d: wrong sum", v6, udp, vlan);
			}
}

/* The warning waits for partial frames beyond what chance gives (a correct checksum equal to
 * the pseudo-header sum): 4 of 305,000 frames from a sender with the offload off warned. */
static void test_warn_due(void)
{
	static const struct {
		uint64_t partial, rx;
		bool due;
	} c[] = {
		{ 4, 305000, false }, { 7, 7, false }, { 8, 100, true }, { 300, 305000, true }, { 200, 305000, false },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct fwd_port_counters ctr;

		memset(&ctr, 0, sizeof(ctr));
		ctr.csum_partial = c[i].partial;
		ctr.rx_packets = c[i].rx;
		CHECK(fwd_csum_warn_due(&ctr) == c[i].due, "%llu partial of %llu frames: warn %d",
		      (unsigned long long)c[i].partial, (unsigned long long)c[i].rx, !c[i].due);
	}
}

/* The counters in the text line (when they moved) and in JSON. */
static void test_stats(void)
{
	struct fwd_port_sample a = { 0 }, b = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fwd_fmt_port_line(f, "m0@0", &a, &b, 1.0);
	b.csum_partial = 5, b.csum_completed = 4, b.csum_uncompleted = 1;
	fwd_fmt_port_line(f, "m0@0", &a, &b, 1.0);
	fwd_json_port(f, true, "m0@0", &a, &a, &b, 1.0);
	fclose(f);
	CHECK(strstr(buf, "csum partial 5 completed 4\n"), "%s", buf);
	CHECK(strstr(buf, "csum") == strstr(buf, "csum partial 5"), "csum in an idle line: %s", buf);
	CHECK(strstr(buf, "\"csum\":{\"partial\":5,\"completed\":4,\"uncompleted\":1}"), "%s", buf);
	free(buf);
}

int main(void)
{
	test_stats();
	test_one_buffer();
	test_left_alone();
	test_udp_zero();
	test_burst();
	test_valid_as_pseudo();
	test_burst_kinds();
	test_warn_due();
	printf("fwd_csum: ok\n");
	return 0;
}
