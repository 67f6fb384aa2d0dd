/* SPDX-License-Identifier: MIT */
#include <string.h>
#include <umem/csum.h>

#include "icmp.h"
#include "route.h"

#define IP4_HLEN 20u
#define IP6_HLEN 40u
#define ICMP_HLEN 8u
#define IPPROTO_ICMP_ 1u
#define IPPROTO_ICMPV6_ 58u

static bool allowed4(const uint8_t *ip, uint32_t len)
{
	uint32_t hl = (ip[0] & 15u) * 4;

	if (len < IP4_HLEN || (ip[0] >> 4) != 4 || hl < IP4_HLEN || hl > len)
		return false;
	if (fwd_be16(ip + 6) & 0x1fff) /* a fragment after the first */
		return false;
	/* To multicast, class E, or the limited broadcast; from 0/8, loopback, or those. */
	if (ip[16] >= 224 || ip[12] >= 224 || ip[12] == 0 || ip[12] == 127)
		return false;
	if (ip[9] == IPPROTO_ICMP_) {
		uint8_t t;

		if (hl >= len) /* its type unreadable: taken for an error, as the kernel does */
			return false;
		t = ip[hl];
		/* Errors (unreachable, source quench, redirect, time exceeded, parameter problem)
		 * and types past the last the kernel knows (18). */
		if (t == 3 || t == 4 || t == 5 || t == 11 || t == 12 || t > 18)
			return false;
	}
	return true;
}

static bool allowed6(const uint8_t *ip, uint32_t len)
{
	static const uint8_t loopback[16] = { [15] = 1 }, unspec[16] = { 0 };
	uint32_t off = IP6_HLEN;
	uint8_t nh;

	if (len < IP6_HLEN || (ip[0] >> 4) != 6)
		return false;
	if (ip[24] == 0xff || ip[8] == 0xff || !memcmp(ip + 8, unspec, 16) || !memcmp(ip + 8, loopback, 16))
		return false;
	/* Through the extension headers to the upper layer, as far as the bytes go (unreadable:
	 * allowed, as the kernel's ipv6_skip_exthdr() failing is). */
	nh = ip[6];
	for (int k = 0; k < 8; k++) {
		if (nh == 0 || nh == 43 || nh == 60 || nh == 51) { /* hop-by-hop, routing, dest. options, AH */
			if (off + 2 > len)
				return true;
			uint32_t l = nh == 51 ? (ip[off + 1] + 2u) * 4 : (ip[off + 1] + 1u) * 8;

			nh = ip[off];
			off += l;
		} else if (nh == 44) { /* fragment */
			if (off + 8 > len)
				return true;
			if (fwd_be16(ip + off + 2) & 0xfff8)
				return false; /* a fragment after the first */
			nh = ip[off];
			off += 8;
		} else {
			break;
		}
	}
	if (nh == IPPROTO_ICMPV6_) {
		/* An error (types below 128) or a redirect (137); unreadable: taken for an error. */
		if (off >= len)
			return false;
		return ip[off] >= 128 && ip[off] != 137;
	}
	return true;
}

bool fwd_icmp_allowed(const uint8_t *frame, uint32_t len, enum fwd_icmp_kind kind)
{
	uint16_t type;

	if (len < FWD_ICMP_ETH_HLEN + IP4_HLEN)
		return false;
	/* To or from a link-layer group address (the I/G bit). */
	if ((frame[0] & 1) || (frame[6] & 1))
		return false;
	type = fwd_be16(frame + 12);
	if (type == 0x0800)
		return allowed4(frame + FWD_ICMP_ETH_HLEN, len - FWD_ICMP_ETH_HLEN) &&
		       (kind != FWD_ICMP_TOO_BIG || (frame[FWD_ICMP_ETH_HLEN + 6] & 0x40));
	if (type == 0x86dd)
		return allowed6(frame + FWD_ICMP_ETH_HLEN, len - FWD_ICMP_ETH_HLEN);
	return false;
}

static inline uint32_t min3(uint32_t a, uint32_t b, uint32_t c)
{
	uint32_t m = a < b ? a : b;

	return m < c ? m : c;
}

static uint32_t build4(uint8_t *frame, uint32_t len, uint32_t room, enum fwd_icmp_kind kind, uint32_t mtu,
		       const uint8_t *src)
{
	static const uint8_t code[FWD_ICMP_KINDS] = { [FWD_ICMP_NET_UNREACH] = 0, [FWD_ICMP_HOST_UNREACH] = 1,
						      [FWD_ICMP_PROHIBITED] = 13, [FWD_ICMP_TOO_BIG] = 4 };
	const uint32_t hdrs = FWD_ICMP_ETH_HLEN + IP4_HLEN + ICMP_HLEN;
	uint8_t *ip = frame + FWD_ICMP_ETH_HLEN, *icmp = ip + IP4_HLEN, *q = icmp + ICMP_HLEN;
	uint32_t hl, tot, quote;
	uint16_t c;

	if (len < FWD_ICMP_ETH_HLEN + IP4_HLEN || (ip[0] >> 4) != 4 || room < hdrs)
		return 0;
	hl = (ip[0] & 15u) * 4;
	tot = fwd_be16(ip + 2);
	if (hl < IP4_HLEN || tot < hl)
		return 0;
	quote = min3(tot, len - FWD_ICMP_ETH_HLEN, FWD_ICMP4_MAX - IP4_HLEN - ICMP_HLEN);
	if (quote > room - hdrs)
		quote = room - hdrs;
	/* The header and 8 bytes at least (RFC 792), or all of a shorter datagram. */
	if (quote < (tot < hl + 8 ? tot : hl + 8))
		return 0;
	memmove(q, ip, quote);
	fwd_swap_macs(frame);
	memset(ip, 0, IP4_HLEN + ICMP_HLEN);
	ip[0] = 0x45;
	ip[1] = 0xc0; /* precedence internetwork control, as the kernel's errors */
	fwd_put16(ip + 2, IP4_HLEN + ICMP_HLEN + quote);
	ip[6] = 0x40; /* DF: an atomic datagram (RFC 6864), no identification needed */
	ip[8] = 64;
	ip[9] = IPPROTO_ICMP_;
	memcpy(ip + 12, src, 4);
	memcpy(ip + 16, q + 12, 4); /* the quoted datagram's source */
	umem_csum__ipv4(ip, IP4_HLEN);
	icmp[0] = 3;
	icmp[1] = code[kind];
	if (kind == FWD_ICMP_TOO_BIG) /* RFC 1191: the next-hop MTU in the low 16 bits */
		fwd_put16(icmp + 6, mtu > 0xffff ? 0xffff : mtu);
	c = (uint16_t)~umem_csum__fold(umem_csum__add(0, icmp, ICMP_HLEN + quote));
	fwd_put16(icmp + 2, c);
	return hdrs + quote;
}

static uint32_t build6(uint8_t *frame, uint32_t len, uint32_t room, enum fwd_icmp_kind kind, uint32_t mtu,
		       const uint8_t *src)
{
	static const uint8_t type[FWD_ICMP_KINDS] = { 1, 1, 1, 2 }, code[FWD_ICMP_KINDS] = { 0, 0, 1, 0 };
	const uint32_t hdrs = FWD_ICMP_ETH_HLEN + IP6_HLEN + ICMP_HLEN;
	uint8_t *ip = frame + FWD_ICMP_ETH_HLEN, *icmp = ip + IP6_HLEN, *q = icmp + ICMP_HLEN;
	uint32_t tot, quote;
	uint16_t c;

	if (len < FWD_ICMP_ETH_HLEN + IP6_HLEN || (ip[0] >> 4) != 6 || room < hdrs)
		return 0;
	tot = IP6_HLEN + fwd_be16(ip + 4);
	quote = min3(tot, len - FWD_ICMP_ETH_HLEN, FWD_ICMP6_MAX - IP6_HLEN - ICMP_HLEN);
	if (quote > room - hdrs)
		quote = room - hdrs;
	if (quote < IP6_HLEN)
		return 0;
	memmove(q, ip, quote);
	fwd_swap_macs(frame);
	memset(ip, 0, IP6_HLEN + ICMP_HLEN);
	ip[0] = 0x60;
	fwd_put16(ip + 4, ICMP_HLEN + quote);
	ip[6] = IPPROTO_ICMPV6_;
	ip[7] = 64;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, q + 8, 16); /* the quoted datagram's source */
	icmp[0] = type[kind];
	icmp[1] = code[kind];
	if (kind == FWD_ICMP_TOO_BIG) { /* RFC 8201: the MTU, 32 bits */
		fwd_put16(icmp + 4, mtu >> 16);
		fwd_put16(icmp + 6, mtu);
	}
	c = (uint16_t)~umem_csum__fold(umem_csum__add(umem_csum__pseudo6(ip + 8, ip + 24, IPPROTO_ICMPV6_,
									 ICMP_HLEN + quote),
						      icmp, ICMP_HLEN + quote));
	fwd_put16(icmp + 2, c);
	return hdrs + quote;
}

uint32_t fwd_icmp_build(uint8_t *frame, uint32_t len, uint32_t room, enum fwd_icmp_kind kind, uint32_t mtu,
			const uint8_t *src)
{
	uint16_t type;

	if (len < FWD_ICMP_ETH_HLEN || (unsigned)kind >= FWD_ICMP_KINDS)
		return 0;
	type = fwd_be16(frame + 12);
	if (type == 0x0800)
		return build4(frame, len, room, kind, mtu, src);
	if (type == 0x86dd)
		return build6(frame, len, room, kind, mtu, src);
	return 0;
}

void fwd_icmp_limit_init(struct fwd_icmp_limit *l, uint32_t rate, uint32_t burst)
{
	atomic_init(&l->tat, 0);
	l->interval_ns = rate && burst ? (1000000000ull + rate - 1) / rate : 0;
	l->slack_ns = burst ? (uint64_t)(burst - 1) * l->interval_ns : 0;
}

bool fwd_icmp_limit_take(struct fwd_icmp_limit *l, uint64_t now_ns)
{
	uint64_t tat = atomic_load_explicit(&l->tat, memory_order_relaxed), t;

	if (!l->interval_ns)
		return false;
	do {
		/* An empty bucket fills while nobody asks: the virtual time never lags now. */
		t = tat > now_ns ? tat : now_ns;
		if (t - now_ns > l->slack_ns)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(&l->tat, &tat, t + l->interval_ns, memory_order_relaxed,
							memory_order_relaxed));
	return true;
}
