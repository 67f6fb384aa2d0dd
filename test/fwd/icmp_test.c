/* SPDX-License-Identifier: MIT */
/* xdp-fwd's ICMP errors (icmp.h), no privileges: the errors built from IPv4 and IPv6 frames
 * checked field by field against a reference checksum (test_csum_fold, not the library's), the
 * quote's length at its bounds (576 and 1280 bytes, the room, the datagram's own length), the
 * cases that get no error (ICMP errors, fragments after the first, multicast and broadcast,
 * sources that name no single host, IPv4 without DF over the MTU), and the rate limit. */
#include <arpa/inet.h>
#include <stdbool.h>
#include <string.h>

#include "frame.h"
#include "testutil.h"
#include "icmp.h"

static uint8_t frame[4096];
static uint8_t orig[4096];

static const uint8_t RMAC[6] = { 0x02, 0, 0, 0, 0, 0x01 }; /* the router's (the frame's dst) */
static const uint8_t HMAC[6] = { 0x02, 0, 0, 0, 0, 0x02 }; /* the sender's */
static const uint8_t SRC4[4] = { 10, 1, 0, 2 }, DST4[4] = { 10, 9, 0, 1 }, RTR4[4] = { 10, 1, 0, 1 };
static const uint8_t SRC6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 2 };
static const uint8_t DST6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 9, [15] = 1 };
static const uint8_t RTR6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 1 };

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* An IPv4 frame of an IP datagram of tot bytes (protocol proto, its payload a pattern); the
 * frame length. */
static uint32_t frame4(uint32_t tot, uint8_t proto, bool df)
{
	struct frame_ipv4 h = { .frag = df ? 0x4000 : 0, .ttl = 63, .proto = proto };
	uint8_t *ip = frame + 14;
	uint32_t n = 0;

	memset(frame, 0, sizeof(frame));
	memcpy(&h.src, SRC4, 4);
	memcpy(&h.dst, DST4, 4);
	h.src = ntohl(h.src);
	h.dst = ntohl(h.dst);
	frame_eth(frame, &n, RMAC, HMAC, 0x0800);
	frame_ipv4(frame, &n, &h, tot - 20);
	for (uint32_t i = 20; i < tot; i++)
		ip[i] = (uint8_t)(i * 7 + 3);
	frame_set16(ip + 10, (uint16_t)~test_csum_fold(0, ip, 20));
	memcpy(orig, frame, sizeof(frame));
	return 14 + tot;
}

static uint32_t frame6(uint32_t tot, uint8_t nh)
{
	struct frame_ipv6 h = { .next = nh, .hop_limit = 63 };
	uint8_t *ip = frame + 14;
	uint32_t n = 0;

	memset(frame, 0, sizeof(frame));
	memcpy(h.src, SRC6, 16);
	memcpy(h.dst, DST6, 16);
	frame_eth(frame, &n, RMAC, HMAC, 0x86dd);
	frame_ipv6(frame, &n, &h, tot - 40);
	for (uint32_t i = 40; i < tot; i++)
		ip[i] = (uint8_t)(i * 7 + 3);
	memcpy(orig, frame, sizeof(frame));
	return 14 + tot;
}

/* Checks an IPv4 error of type 3, code, quoting q bytes of the original datagram. */
static void check4(uint32_t len, uint8_t code, uint16_t mtu, uint32_t q)
{
	const uint8_t *ip = frame + 14, *icmp = ip + 20;

	CHECK_EQ(len, 14 + 20 + 8 + q);
	CHECK(!memcmp(frame, HMAC, 6) && !memcmp(frame + 6, RMAC, 6), "MACs not swapped");
	CHECK_EQ(be16(frame + 12), 0x0800);
	CHECK_EQ(ip[0], 0x45);
	CHECK_EQ(be16(ip + 2), 20 + 8 + q);
	CHECK_EQ(ip[8], 64);
	CHECK_EQ(ip[9], 1);
	CHECK(!memcmp(ip + 12, RTR4, 4), "source is not the router's");
	CHECK(!memcmp(ip + 16, SRC4, 4), "destination is not the sender");
	CHECK_EQ(test_csum_fold(0, ip, 20), 0xffff);
	CHECK_EQ(icmp[0], 3);
	CHECK_EQ(icmp[1], code);
	CHECK_EQ(be16(icmp + 4), 0);
	CHECK_EQ(be16(icmp + 6), mtu);
	CHECK_EQ(test_csum_fold(0, icmp, 8 + q), 0xffff);
	CHECK(!memcmp(icmp + 8, orig + 14, q), "the quote is not the datagram as received");
	CHECK_EQ(len <= 14 + FWD_ICMP4_MAX, 1);
}

static void check6(uint32_t len, uint8_t type, uint8_t code, uint32_t mtu, uint32_t q)
{
	const uint8_t *ip = frame + 14, *icmp = ip + 40;
	uint32_t s;

	CHECK_EQ(len, 14 + 40 + 8 + q);
	CHECK(!memcmp(frame, HMAC, 6) && !memcmp(frame + 6, RMAC, 6), "MACs not swapped");
	CHECK_EQ(be16(frame + 12), 0x86dd);
	CHECK_EQ(ip[0] >> 4, 6);
	CHECK_EQ(be16(ip + 4), 8 + q);
	CHECK_EQ(ip[6], 58);
	CHECK_EQ(ip[7], 64);
	CHECK(!memcmp(ip + 8, RTR6, 16), "source is not the router's");
	CHECK(!memcmp(ip + 24, SRC6, 16), "destination is not the sender");
	CHECK_EQ(icmp[0], type);
	CHECK_EQ(icmp[1], code);
	CHECK_EQ((uint32_t)be16(icmp + 4) << 16 | be16(icmp + 6), mtu);
	/* The pseudo-header (RFC 8200 8.1): addresses, upper-layer length, next header. */
	s = test_csum_fold(0, ip + 8, 32);
	s = test_csum_fold(s + 8 + q + 58, icmp, 8 + q);
	CHECK_EQ(s, 0xffff);
	CHECK(!memcmp(icmp + 8, orig + 14, q), "the quote is not the datagram as received");
	CHECK_EQ(len <= 14 + FWD_ICMP6_MAX, 1);
}

static void test_v4(void)
{
	uint32_t len;

	/* Over the MTU with DF: fragmentation needed with the MTU, the quote cut at 576 bytes. */
	len = frame4(1500, 17, true);
	CHECK(fwd_icmp_allowed(frame, len, FWD_ICMP_TOO_BIG), "DF over the MTU: no error");
	check4(fwd_icmp_build(frame, len, 2048, FWD_ICMP_TOO_BIG, 1280, RTR4), 4, 1280, 576 - 28);
	/* Without DF: no error (the router fragments). */
	len = frame4(1500, 17, false);
	CHECK(!fwd_icmp_allowed(frame, len, FWD_ICMP_TOO_BIG), "an error for a datagram without DF");
	CHECK(fwd_icmp_allowed(frame, len, FWD_ICMP_NET_UNREACH), "no route: no error without DF");
	/* The codes; a short datagram quoted whole. */
	len = frame4(84, 1, false);
	frame[14 + 20] = 8; /* an echo request */
	orig[14 + 20] = 8;
	CHECK(fwd_icmp_allowed(frame, len, FWD_ICMP_NET_UNREACH), "echo request: no error");
	check4(fwd_icmp_build(frame, len, 2048, FWD_ICMP_NET_UNREACH, 0, RTR4), 0, 0, 84);
	len = frame4(84, 6, false);
	check4(fwd_icmp_build(frame, len, 2048, FWD_ICMP_HOST_UNREACH, 0, RTR4), 1, 0, 84);
	len = frame4(84, 6, false);
	check4(fwd_icmp_build(frame, len, 2048, FWD_ICMP_PROHIBITED, 0, RTR4), 13, 0, 84);
	/* The quote is bounded by the bytes the buffer holds (a chain's first), and the room. */
	len = frame4(1500, 17, true);
	check4(fwd_icmp_build(frame, 14 + 300, 2048, FWD_ICMP_TOO_BIG, 1400, RTR4), 4, 1400, 300);
	len = frame4(1500, 17, true);
	check4(fwd_icmp_build(frame, len, 14 + 28 + 100, FWD_ICMP_TOO_BIG, 1400, RTR4), 4, 1400, 100);
	/* Less than the header and 8 bytes of a longer datagram: nothing, the frame untouched. */
	len = frame4(1500, 17, true);
	CHECK_EQ(fwd_icmp_build(frame, 14 + 27, 2048, FWD_ICMP_TOO_BIG, 1400, RTR4), 0);
	CHECK_EQ(fwd_icmp_build(frame, len, 14 + 28 + 27, FWD_ICMP_TOO_BIG, 1400, RTR4), 0);
	CHECK(!memcmp(frame, orig, sizeof(frame)), "a refused build changed the frame");
	/* Ethernet padding is not quoted: the datagram's own length bounds it. */
	len = frame4(28, 17, false);
	check4(fwd_icmp_build(frame, 60, 2048, FWD_ICMP_NET_UNREACH, 0, RTR4), 0, 0, 28);
}

static void test_v4_none(void)
{
	static const uint8_t errors[] = { 3, 4, 5, 11, 12, 19, 40, 255 }, queries[] = { 0, 8, 13, 14, 17, 18 };
	uint32_t len;

	for (size_t k = 0; k < sizeof(errors); k++) {
		len = frame4(84, 1, false);
		frame[14 + 20] = errors[k];
		CHECK(!fwd_icmp_allowed(frame, len, FWD_ICMP_NET_UNREACH), "an error about ICMP type %u", errors[k]);
	}
	for (size_t k = 0; k < sizeof(queries); k++) {
		len = frame4(84, 1, false);
		frame[14 + 20] = queries[k];
		CHECK(fwd_icmp_allowed(frame, len, FWD_ICMP_NET_UNREACH), "no error about ICMP type %u", queries[k]);
	}
	/* ICMP with its type cut off. */
	len = frame4(84, 1, false);
	CHECK(!fwd_icmp_allowed(frame, 14 + 20, FWD_ICMP_NET_UNREACH), "an error about an unreadable ICMP type");
	/* A fragment after the first; the first is answered. */
	len = frame4(1500, 17, true);
	frame[14 + 7] = 185;
	CHECK(!fwd_icmp_allowed(frame, len, FWD_ICMP_TOO_BIG), "an error about a non-first fragment");
	len = frame4(1500, 17, false);
	frame[14 + 6] = 0x20; /* MF, offset 0 */
	CHECK(fwd_icmp_allowed(frame, len, FWD_ICMP_NET_UNREACH), "no error about a first fragment");
	/* Destinations: multicast, limited broadcast, class E; link-layer group addresses. */
	static const uint8_t dst[][4] = { { 224, 0, 0, 5 }, { 239, 1, 2, 3 }, { 255, 255, 255, 255 }, { 240, 0, 0, 1 } };
	for (size_t k = 0; k < sizeof(dst) / 4; k++) {
		len = frame4(84, 17, false);
		memcpy(frame + 14 + 16, dst[k], 4);
		CHECK(!fwd_icmp_allowed(frame, len, FWD_ICMP_NET_UNREACH), "an error to destination %u.x", dst[k][0]);
	}
	len = frame4(84, 17, false);
	frame[0] = 0x01;
	CHECK(!fwd_icmp_allowed(frame, len, FWD_ICMP_NET_UNREACH), "an error about a link-layer multicast");
	len = frame4(84, 17, false);
	frame[6] = 0x03;
	CHECK(!fwd_icmp_allowed(frame, len, FWD_ICMP_NET_UNREACH), "an error to a group source MAC");
	/* Sources naming no single host: zero, loopback, multicast, broadcast, class E. */
	static const uint8_t src[][4] = { { 0, 0, 0, 0 }, { 127, 0, 0, 1 }, { 224, 0, 0, 1 }, { 255, 255, 255, 255 }, { 250, 1, 1, 1 } };
	for (size_t k = 0; k < sizeof(src) / 4; k++) {
		len = frame4(84, 17, false);
		memcpy(frame + 14 + 12, src[k], 4);
		CHECK(!fwd_icmp_allowed(frame, len, FWD_ICMP_NET_UNREACH), "an error to source %u.x", src[k][0]);
	}
	/* Not IP; IPv4 cut short. */
	len = frame4(84, 17, false);
	frame[12] = 0x08, frame[13] = 0x06;
	CHECK(!fwd_icmp_allowed(frame, len, FWD_ICMP_NET_UNREACH), "an error about ARP");
	CHECK_EQ(fwd_icmp_build(frame, len, 2048, FWD_ICMP_NET_UNREACH, 0, RTR4), 0);
	len = frame4(84, 17, false);
	CHECK(!fwd_icmp_allowed(frame, 14 + 19, FWD_ICMP_NET_UNREACH), "an error about a cut header");
}

static void test_v6(void)
{
	uint32_t len;

	/* Packet too big with the MTU, the quote cut at 1280 bytes. */
	len = frame6(1500, 17);
	CHECK(fwd_icmp_allowed(frame, len, FWD_ICMP_TOO_BIG), "no packet too big");
	check6(fwd_icmp_build(frame, len, 2048, FWD_ICMP_TOO_BIG, 1280, RTR6), 2, 0, 1280, 1280 - 48);
	len = frame6(1448, 6);
	check6(fwd_icmp_build(frame, len, 2048, FWD_ICMP_NET_UNREACH, 0, RTR6), 1, 0, 0, 1280 - 48);
	len = frame6(100, 6);
	check6(fwd_icmp_build(frame, len, 2048, FWD_ICMP_HOST_UNREACH, 0, RTR6), 1, 0, 0, 100);
	len = frame6(100, 6);
	check6(fwd_icmp_build(frame, len, 2048, FWD_ICMP_PROHIBITED, 0, RTR6), 1, 1, 0, 100);
	/* An odd quote length (the checksum's last byte alone). */
	len = frame6(101, 17);
	check6(fwd_icmp_build(frame, len, 2048, FWD_ICMP_NET_UNREACH, 0, RTR6), 1, 0, 0, 101);
	/* The room bounds the quote; below the IPv6 header nothing is built. */
	len = frame6(1500, 17);
	check6(fwd_icmp_build(frame, len, 14 + 48 + 200, FWD_ICMP_TOO_BIG, 1280, RTR6), 2, 0, 1280, 200);
	len = frame6(1500, 17);
	CHECK_EQ(fwd_icmp_build(frame, len, 14 + 48 + 39, FWD_ICMP_TOO_BIG, 1280, RTR6), 0);
	CHECK(!memcmp(frame, orig, sizeof(frame)), "a refused build changed the frame");
}

static void test_v6_none(void)
{
	static const uint8_t errors[] = { 1, 2, 3, 4, 100, 127, 137 }, info[] = { 128, 129, 135, 136, 143 };
	static const uint8_t mcast[16] = { 0xff, 0x02, [15] = 1 }, lo[16] = { [15] = 1 }, unspec[16] = { 0 };
	uint32_t len;

	for (size_t k = 0; k < sizeof(errors); k++) {
		len = frame6(100, 58);
		frame[14 + 40] = errors[k];
		CHECK(!fwd_icmp_allowed(frame, len, FWD_ICMP_NET_UNREACH), "an error about ICMPv6 type %u", errors[k]);
	}
	for (size_t k = 0; k < sizeof(info); k++) {
		len = frame6(100, 58);
		frame[14 + 40] = info[k];
		CHECK(fwd_icmp_allowed(frame, len, FWD_ICMP_NET_UNREACH), "no error about ICMPv6 type %u", info[k]);
	}
	/* Behind a hop-by-hop header (8 bytes) and a destination options header (16 bytes). */
	len = frame6(100, 0);
	frame[14 + 40] = 60, frame[14 + 41] = 0;
	frame[14 + 48] = 58, frame[14 + 49] = 1;
	frame[14 + 64] = 1; /* destination unreachable */
	CHECK(!fwd_icmp_allowed(frame, len, FWD_ICMP_TOO_BIG), "an error about an ICMPv6 error behind options");
	frame[14 + 64] = 128;
	CHECK(fwd_icmp_allowed(frame, len, FWD_ICMP_TOO_BIG), "no error about an echo request behind options");
	/* Fragments: the first answered, a later one not. */
	len = frame6(1500, 44);
	frame[14 + 40] = 17, frame[14 + 42] = 0, frame[14 + 43] = 1; /* offset 0, M */
	CHECK(fwd_icmp_allowed(frame, len, FWD_ICMP_TOO_BIG), "no error about a first fragment");
	frame[14 + 42] = 0x05, frame[14 + 43] = 0x01; /* offset 160 */
	CHECK(!fwd_icmp_allowed(frame, len, FWD_ICMP_TOO_BIG), "an error about a non-first fragment");
	/* A multicast destination; sources: multicast, loopback, unspecified. */
	len = frame6(100, 17);
	memcpy(frame + 14 + 24, mcast, 16);
	CHECK(!fwd_icmp_allowed(frame, len, FWD_ICMP_TOO_BIG), "an error about a multicast destination");
	const uint8_t *bad[] = { mcast, lo, unspec };
	for (size_t k = 0; k < 3; k++) {
		len = frame6(100, 17);
		memcpy(frame + 14 + 8, bad[k], 16);
		CHECK(!fwd_icmp_allowed(frame, len, FWD_ICMP_NET_UNREACH), "an error to source %zu", k);
	}
	len = frame6(100, 17);
	frame[0] = 0x33, frame[1] = 0x33;
	CHECK(!fwd_icmp_allowed(frame, len, FWD_ICMP_NET_UNREACH), "an error about a link-layer multicast");
}

static void test_limit(void)
{
	struct fwd_icmp_limit l;
	uint64_t t = 5000000000ull;
	uint32_t ok = 0;

	/* 1000/s, burst 50: 50 at once, then one a millisecond. */
	fwd_icmp_limit_init(&l, 1000, 50);
	for (int i = 0; i < 200; i++)
		ok += fwd_icmp_limit_take(&l, t);
	CHECK_EQ(ok, 50);
	CHECK(!fwd_icmp_limit_take(&l, t + 999999), "a token before its millisecond");
	CHECK(fwd_icmp_limit_take(&l, t + 1000000), "no token after a millisecond");
	CHECK(!fwd_icmp_limit_take(&l, t + 1000000), "two tokens in a millisecond");
	/* A flood of 10 frames a millisecond for a second: burst + rate * time at most. */
	fwd_icmp_limit_init(&l, 1000, 50);
	ok = 0;
	for (uint64_t ns = 0; ns <= 1000000000ull; ns += 100000)
		ok += fwd_icmp_limit_take(&l, t + ns);
	CHECK(ok >= 1000 && ok <= 1051, "%u errors in a second of flood", ok);
	/* Idle refills to the burst, never beyond. */
	ok = 0;
	for (int i = 0; i < 200; i++)
		ok += fwd_icmp_limit_take(&l, t + 100000000000ull);
	CHECK_EQ(ok, 50);
	/* Zero: none. */
	fwd_icmp_limit_init(&l, 0, 50);
	CHECK(!fwd_icmp_limit_take(&l, t), "rate 0 allowed one");
	fwd_icmp_limit_init(&l, 1000, 0);
	CHECK(!fwd_icmp_limit_take(&l, t), "burst 0 allowed one");
	fwd_icmp_limit_init(&l, 1, 1);
	CHECK(fwd_icmp_limit_take(&l, t), "rate 1 burst 1: the first refused");
	CHECK(!fwd_icmp_limit_take(&l, t + 999999999ull), "rate 1: two in a second");
	CHECK(fwd_icmp_limit_take(&l, t + 1000000000ull), "rate 1: none after a second");
}

int main(void)
{
	test_v4();
	test_v4_none();
	test_v6();
	test_v6_none();
	test_limit();
	printf("fwd_icmp: ok\n");
	return 0;
}
