/* SPDX-License-Identifier: MIT */
/*
 * umem/csum.h: known vectors (RFC 1071's example, an IPv4 header, UDP over IPv4 and TCP over
 * IPv6 computed independently, RFC 1624's example), then random frames against a plain
 * word-by-word reference (testutil.h): every length and odd start for umem_csum__add, partial checksums
 * completed over chains split at every offset, incremental updates equal to recomputing.
 */
#include <stdbool.h>
#include <umem/csum.h>

#include "testutil.h"

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void hex(uint8_t *out, const char *text)
{
	for (size_t i = 0; text[2 * i]; i++)
		sscanf(text + 2 * i, "%2hhx", &out[i]);
}

/* Ethernet + IPv4 + UDP 10.0.0.1:1234 -> 10.0.0.2:7, "hello world\n"; UDP checksum 0x5512 and
 * pseudo-header sum 0x1428 (computed with Python's struct module, word by word). */
static uint32_t udp4_frame(uint8_t *f)
{
	static const char *h = "020000000002020000000001"
			       "0800"
			       "4500002800004000401100000a0000010a000002"
			       "04d20007001400006865"
			       "6c6c6f20776f726c640a";
	hex(f, h);
	return 14 + 40;
}

static void test_vectors(void)
{
	/* RFC 1071, 3: the sum of 00 01 f2 03 f4 f5 f6 f7 is dd f2. */
	static const uint8_t rfc[] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };
	uint8_t ip[20], f[128];
	struct umem_csum_loc loc;

	CHECK_EQ(umem_csum__fold(umem_csum__add(0, rfc, sizeof(rfc))), 0xddf2);
	/* An IPv4 header: 4500 0073 0000 4000 4011 b861 c0a8 0001 c0a8 00c7. */
	hex(ip, "450000730000400040110000c0a80001c0a800c7");
	CHECK_EQ(umem_csum__ipv4(ip, sizeof(ip)), 0);
	CHECK_EQ(rd16(ip + 10), 0xb861);
	CHECK_EQ(umem_csum__fold(umem_csum__add(0, ip, 20)), 0xffff); /* verifies */
	CHECK_EQ(umem_csum__ipv4(ip, 19), -EINVAL);
	ip[0] = 0x46; /* IHL 6: longer than the 20 bytes given */
	CHECK_EQ(umem_csum__ipv4(ip, sizeof(ip)), -EINVAL);
	CHECK_EQ(rd16(ip + 10), 0xb861); /* nothing written */

	/* UDP over IPv4. */
	uint32_t len = udp4_frame(f);
	CHECK_EQ(umem_csum__locate(f, len, &loc), 0);
	CHECK_EQ(loc.family, 4);
	CHECK_EQ(loc.proto, 17);
	CHECK_EQ(loc.l4_off, 34);
	CHECK_EQ(loc.l4_len, 20);
	CHECK_EQ(loc.field, 40);
	CHECK_EQ(loc.pseudo, 0x1428);
	CHECK_EQ(loc.partial, 0); /* checksum 0: none, not partial */
	CHECK_EQ(umem_csum__frame(f, len), 0);
	CHECK_EQ(rd16(f + 40), 0); /* UDP over IPv4 without a checksum keeps none */
	CHECK_EQ(umem_csum__fold(umem_csum__add(0, f + 14, 20)), 0xffff); /* IP header set */
	/* As a sender with TX checksum offload leaves it: the pseudo-header sum in the field. */
	f[40] = 0x14, f[41] = 0x28;
	CHECK_EQ(umem_csum__locate(f, len, &loc), 0);
	CHECK_EQ(loc.partial, 1);
	uint8_t *seg = f;
	CHECK_EQ(umem_csum__complete(&loc, &seg, &len, 1), 0);
	CHECK_EQ(rd16(f + 40), 0x5512);
	/* The pseudo-header helper agrees with what locate found. */
	CHECK_EQ(umem_csum__fold(umem_csum__pseudo4(f + 26, f + 30, 17, 20)), 0x1428);
	/* Cut short: the IP length announces more than the buffer holds. */
	uint32_t shorter = len - 1;
	CHECK_EQ(umem_csum__complete(&loc, &seg, &shorter, 1), -EINVAL);
	CHECK_EQ(rd16(f + 40), 0x5512);
	CHECK_EQ(umem_csum__frame(f, len - 1), -EINVAL);
	/* Not found: ARP, an IPv4 fragment, ICMP, a truncated header. */
	f[12] = 0x08, f[13] = 0x06;
	CHECK_EQ(umem_csum__locate(f, len, &loc), -ENOENT);
	f[13] = 0x00;
	f[20] = 0x20; /* more fragments */
	CHECK_EQ(umem_csum__locate(f, len, &loc), -ENOENT);
	f[20] = 0x40;
	f[23] = 1;
	CHECK_EQ(umem_csum__locate(f, len, &loc), -ENOENT);
	f[23] = 17;
	CHECK_EQ(umem_csum__locate(f, 41, &loc), -ENOENT);
	CHECK_EQ(umem_csum__locate(f, 42, &loc), 0);

	/* TCP over IPv6 2001:db8::1:40000 -> 2001:db8::2:80, SYN, "abc" (an odd length): 0xf376. */
	memset(f, 0, sizeof(f));
	hex(f, "02000000000202000000000186dd"
	       "6000000000170640"
	       "20010db8000000000000000000000001"
	       "20010db8000000000000000000000002"
	       "9c400050000000010000000050" "02ffff00000000616263");
	len = 14 + 40 + 23;
	CHECK_EQ(umem_csum__frame(f, len), 0);
	CHECK_EQ(rd16(f + 14 + 40 + 16), 0xf376);
	CHECK_EQ(umem_csum__locate(f, len, &loc), 0);
	CHECK_EQ(loc.family, 6);
	CHECK_EQ(loc.partial, 0);
	CHECK_EQ(umem_csum__fold(umem_csum__pseudo6(f + 22, f + 38, 6, 23)), loc.pseudo);

	/* RFC 1624, 4: HC 0xdd2f, a word 0x5555 becomes 0x3285: HC' 0x0000 (eqn. 3). */
	CHECK_EQ(umem_csum__update16(0xdd2f, 0x5555, 0x3285), 0x0000);
}

static void test_random(void)
{
	uint64_t seed = 0x1624;
	static uint8_t buf[9100], f[9100];

	/* Every length and alignment against the reference. */
	for (uint32_t n = 0; n < 300; n++)
		for (uint32_t off = 0; off < 8; off++) {
			for (uint32_t i = 0; i < n + off; i++)
				buf[i] = (uint8_t)test_rand(&seed);
			CHECK(umem_csum__fold(umem_csum__add(7, buf + off, n)) == test_csum_fold(7, buf + off, n),
			      "length %u offset %u", n, off);
		}
	/* Partial checksums completed over chains cut anywhere (multi-buffer): equal to the
	 * checksum of the whole, for UDP and TCP over IPv4 and IPv6. */
	for (int round = 0; round < 400; round++) {
		bool v6 = round & 1, udp = round & 2;
		uint32_t plen = (uint32_t)(test_rand(&seed) % 3000), l3 = 14, ihl = v6 ? 40 : 20;
		uint32_t l4h = udp ? 8 : 20, l4len = l4h + plen, len = l3 + ihl + l4len;
		struct umem_csum_loc loc;

		for (uint32_t i = 0; i < len; i++)
			f[i] = (uint8_t)test_rand(&seed);
		f[0] &= 0xfe;
		f[12] = v6 ? 0x86 : 0x08, f[13] = v6 ? 0xdd : 0x00;
		if (v6) {
			f[14] = 0x60, f[18] = (uint8_t)(l4len >> 8), f[19] = (uint8_t)l4len, f[20] = udp ? 17 : 6;
		} else {
			f[14] = 0x45, f[16] = (uint8_t)((ihl + l4len) >> 8), f[17] = (uint8_t)(ihl + l4len);
			f[20] = 0x40, f[21] = 0, f[23] = udp ? 17 : 6;
		}
		if (udp)
			f[l3 + ihl + 4] = (uint8_t)(l4len >> 8), f[l3 + ihl + 5] = (uint8_t)l4len;
		CHECK_EQ(umem_csum__frame(f, len), 0);
		uint32_t field = l3 + ihl + (udp ? 6 : 16);
		uint16_t want = rd16(f + field);
		/* The receiver's check: pseudo header + segment sums to 0xffff. */
		uint64_t ps = v6 ? umem_csum__pseudo6(f + 22, f + 38, udp ? 17 : 6, l4len) :
				   umem_csum__pseudo4(f + 26, f + 30, udp ? 17 : 6, l4len);
		CHECK_EQ(umem_csum__fold(umem_csum__add(ps, f + l3 + ihl, l4len)), 0xffff);
		CHECK_EQ(umem_csum__locate(f, len, &loc), 0);
		f[field] = (uint8_t)(loc.pseudo >> 8), f[field + 1] = (uint8_t)loc.pseudo;
		CHECK_EQ(umem_csum__locate(f, len, &loc), 0);
		CHECK(loc.partial, "partial not seen (round %d)", round);
		uint32_t cut = field + 2 + (uint32_t)(test_rand(&seed) % (len - field - 1));
		uint8_t *seg[2] = { f, buf };
		uint32_t seg_len[2] = { cut, len - cut };
		memcpy(buf, f + cut, len - cut);
		CHECK_EQ(umem_csum__complete(&loc, seg, seg_len, 2), 0);
		CHECK(rd16(f + field) == want, "round %d cut %u: 0x%04x, expected 0x%04x", round, cut,
		      rd16(f + field), want);
		/* RFC 1624: a TTL decrement updated in place equals the recomputed header sum. */
		if (!v6) {
			uint16_t old = rd16(f + 22), check = rd16(f + 24);

			f[22]--;
			uint16_t inc = umem_csum__update16(check, old, rd16(f + 22));
			CHECK_EQ(umem_csum__ipv4(f + 14, len - 14), 0);
			CHECK(inc == rd16(f + 24), "TTL: incremental 0x%04x, recomputed 0x%04x", inc, rd16(f + 24));
			/* A new source address: the L4 checksum follows the pseudo header. */
			uint32_t a_old = (uint32_t)rd16(f + 26) << 16 | rd16(f + 28), a_new = a_old ^ 0x0a0b0c0d;
			uint16_t l4c = umem_csum__update32(rd16(f + field), a_old, a_new);
			f[26] ^= 0x0a, f[27] ^= 0x0b, f[28] ^= 0x0c, f[29] ^= 0x0d;
			CHECK_EQ(umem_csum__frame(f, len), 0);
			CHECK(l4c == rd16(f + field) || (udp && l4c == 0 && rd16(f + field) == 0xffff),
			      "address: incremental 0x%04x, recomputed 0x%04x", l4c, rd16(f + field));
		}
	}
}

/* IPv6 extension headers (8 bytes each, next header nh; segments left sl for a routing header)
 * inserted after the IPv6 header of f (len bytes, no VLAN); returns the new length. */
static uint32_t add_exthdr(uint8_t *f, uint32_t len, uint8_t nh, uint8_t sl)
{
	uint32_t pl = rd16(f + 18) + 8u;

	memmove(f + 14 + 48, f + 14 + 40, len - 14 - 40);
	memset(f + 14 + 40, 0, 8);
	f[14 + 40] = f[20]; /* its next header: what followed the IPv6 header */
	f[14 + 43] = sl;    /* a routing header's segments left; padding elsewhere */
	f[20] = nh;
	f[18] = (uint8_t)(pl >> 8), f[19] = (uint8_t)pl;
	return len + 8;
}

/* Through hop-by-hop, destination options and a routing header with no segment left: located
 * with the same segment and pseudo sum as without them, so completing gives the checksum the
 * frame had without them; a routing header with a segment left, a fragment header and more
 * headers than walked: not located. */
static void test_exthdr(void)
{
	static const struct {
		uint8_t nh[5], sl, n;
		int found;
	} c[] = {
		{ { 0 }, 0, 1, 1 },           /* hop-by-hop */
		{ { 60 }, 0, 1, 1 },          /* destination options */
		{ { 0, 60 }, 0, 2, 1 },       /* both */
		{ { 43 }, 0, 1, 1 },          /* routing, no segment left */
		{ { 0, 60, 43, 60 }, 0, 4, 1 }, /* as many as walked */
		{ { 43 }, 1, 1, 0 },          /* routing with a segment left */
		{ { 44 }, 0, 1, 0 },          /* fragment */
		{ { 60, 60, 60, 60, 60 }, 0, 5, 0 }, /* more than walked */
	};
	uint8_t f[256];

	for (int udp = 0; udp < 2; udp++)
		for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
			struct umem_csum_loc loc, plain;
			uint32_t len = 14 + 40 + 20, field;
			uint16_t want;

			memset(f, 0, sizeof(f));
			hex(f, "02000000000202000000000186dd"
			       "6000000000140040"
			       "20010db8000000000000000000000001"
			       "20010db8000000000000000000000002"
			       "04d20007001400006865"
			       "6c6c6f20776f726c640a");
			f[20] = udp ? 17 : 6;
			if (!udp) /* the same 20 bytes as a TCP header: summed all the same */
				f[14 + 40 + 12] = 0x50;
			CHECK_EQ(umem_csum__frame(f, len), 0);
			CHECK_EQ(umem_csum__locate(f, len, &plain), 0);
			want = rd16(f + plain.field);
			/* in reverse so that c[i].nh[0] comes first */
			for (uint8_t k = c[i].n; k-- > 0;)
				len = add_exthdr(f, len, c[i].nh[k], c[i].sl);
			field = plain.field + 8u * c[i].n;
			f[field] = (uint8_t)(plain.pseudo >> 8), f[field + 1] = (uint8_t)plain.pseudo; /* partial */
			if (!c[i].found) {
				CHECK(umem_csum__locate(f, len, &loc) == -ENOENT, "udp %d case %zu located", udp, i);
				continue;
			}
			CHECK(umem_csum__locate(f, len, &loc) == 0, "udp %d case %zu not located", udp, i);
			CHECK_EQ(loc.field, field);
			CHECK_EQ(loc.l4_off, plain.l4_off + 8u * c[i].n);
			CHECK_EQ(loc.l4_len, plain.l4_len);
			CHECK_EQ(loc.pseudo, plain.pseudo);
			CHECK_EQ(loc.proto, udp ? 17 : 6);
			CHECK(loc.partial, "udp %d case %zu not partial", udp, i);
			uint8_t *seg = f;
			CHECK_EQ(umem_csum__complete(&loc, &seg, &len, 1), 0);
			CHECK(rd16(f + field) == want, "udp %d case %zu: 0x%04x, expected 0x%04x", udp, i,
			      rd16(f + field), want);
			/* Cut inside the extension headers: not located. */
			CHECK(umem_csum__locate(f, 14 + 40 + 7, &loc) == -ENOENT, "udp %d case %zu: cut", udp, i);
		}
}

int main(void)
{
	test_vectors();
	test_exthdr();
	test_random();
	printf("csum_vectors: ok\n");
	return 0;
}
