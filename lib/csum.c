/* SPDX-License-Identifier: MIT */
/* The Internet checksum for frames in the UMEM (umem/csum.h). */
#include <errno.h>
#include <string.h>
#include <umem/csum.h>
#include <umem/steer_abi.h> /* UMEM_STEER_MAX_EXTHDR */

#include "internal.h"

#define ETH_HLEN 14u

static inline uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline uint16_t swap16(uint16_t v)
{
	return (uint16_t)(v << 8 | v >> 8);
}

/* The one's complement sum does not depend on byte order (RFC 1071, 2.B): the bulk is summed as
 * native 64-bit words with the carries added back, folded, and swapped to big-endian once. */
static inline uint16_t sum_native(const uint8_t *p, uint32_t n)
{
	uint64_t s0 = 0, s1 = 0, v, w;
	uint32_t i = 0;

	for (; i + 16 <= n; i += 16) { /* two chains: the carries of one do not wait on the other */
		memcpy(&v, p + i, 8);
		memcpy(&w, p + i + 8, 8);
		s0 += v;
		s0 += s0 < v;
		s1 += w;
		s1 += s1 < w;
	}
	for (; i + 8 <= n; i += 8) {
		memcpy(&v, p + i, 8);
		s0 += v;
		s0 += s0 < v;
	}
	s0 += s1;
	s0 += s0 < s1;
	return umem_csum__fold(s0);
}

/* umem_csum__add, inline for the fixed-length sums of umem_csum__locate (the pseudo-header's
 * addresses, per frame in xdp-fwd): an exported function is not inlined in its own file. */
static inline uint64_t csum_add(uint64_t sum, const uint8_t *p, uint32_t len)
{
	uint32_t bulk = len & ~7u;

	if (bulk) {
		uint16_t s = sum_native(p, bulk);

		sum += __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? swap16(s) : s;
		p += bulk;
		len -= bulk;
	}
	for (; len >= 2; p += 2, len -= 2)
		sum += rd16(p);
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

uint64_t umem_csum__add(uint64_t sum, const void *data, uint32_t len)
{
	return csum_add(sum, data, len);
}

int umem_csum__ipv4(void *ip, uint32_t len)
{
	uint8_t *h = ip;
	uint32_t ihl;

	if (!h || len < 20 || (h[0] >> 4) != 4)
		return -EINVAL;
	ihl = (h[0] & 15u) * 4;
	if (ihl < 20 || ihl > len)
		return -EINVAL;
	wr16(h + 10, 0);
	wr16(h + 10, (uint16_t)~umem_csum__fold(umem_csum__add(0, h, ihl)));
	return 0;
}

int umem_csum__locate(const void *frame, uint32_t len, struct umem_csum_loc *loc)
{
	const uint8_t *f = frame;
	struct umem_csum_loc l = { .l3_off = ETH_HLEN };
	uint16_t type;
	uint64_t sum;

	if (!f || !loc || len < ETH_HLEN)
		return -ENOENT;
	type = rd16(f + 12);
	if (type == 0x8100 || type == 0x88a8) { /* one VLAN tag */
		if (len < ETH_HLEN + 4)
			return -ENOENT;
		type = rd16(f + 16);
		l.l3_off += 4;
	}
	if (type == 0x0800) {
		const uint8_t *ip = f + l.l3_off;
		uint32_t ihl;

		if (len < l.l3_off + 20 || (ip[0] >> 4) != 4)
			return -ENOENT;
		ihl = (ip[0] & 15u) * 4;
		/* Fragments carry no partial checksum: the stack completes it before fragmenting. */
		if (ihl < 20 || rd16(ip + 2) < ihl || (rd16(ip + 6) & 0x3fff))
			return -ENOENT;
		l.family = 4;
		l.proto = ip[9];
		l.l4_off = l.l3_off + ihl;
		l.l4_len = rd16(ip + 2) - ihl;
		sum = csum_add(0, ip + 12, 8);
	} else if (type == 0x86dd) {
		const uint8_t *ip = f + l.l3_off;

		if (len < l.l3_off + 40 || (ip[0] >> 4) != 6)
			return -ENOENT;
		l.family = 6;
		l.proto = ip[6];
		l.l4_off = l.l3_off + 40;
		/* Through hop-by-hop and destination options headers, and a routing header with no
		 * segment left (else the pseudo-header holds its final address, not the one here);
		 * as many as the steering program walks (UMEM_STEER_MAX_EXTHDR). A fragment header
		 * ends it: not TCP or UDP here. */
		for (uint32_t i = 0; i < UMEM_STEER_MAX_EXTHDR && (l.proto == 0 || l.proto == 60 || l.proto == 43); i++) {
			if (len < l.l4_off + 8 || (l.proto == 43 && f[l.l4_off + 3]))
				return -ENOENT;
			l.proto = f[l.l4_off];
			l.l4_off += (f[l.l4_off + 1] + 1u) * 8;
		}
		if (rd16(ip + 4) < l.l4_off - l.l3_off - 40)
			return -ENOENT;
		l.l4_len = rd16(ip + 4) - (l.l4_off - l.l3_off - 40);
		sum = csum_add(0, ip + 8, 32);
	} else {
		return -ENOENT;
	}
	if (l.proto == 6)
		l.field = l.l4_off + 16;
	else if (l.proto == 17)
		l.field = l.l4_off + 6;
	else
		return -ENOENT;
	if (len < l.field + 2 || l.l4_len < l.field + 2 - l.l4_off)
		return -ENOENT;
	/* A pseudo sum is never 0 (a one's complement sum of non-zero words), so UDP over IPv4
	 * without a checksum is never taken for partial. */
	l.pseudo = umem_csum__fold(sum + l.proto + l.l4_len);
	l.partial = rd16(f + l.field) == l.pseudo;
	*loc = l;
	return 0;
}

/* The pseudo-header sum plus the L4 segment's bytes as they are (the field included), over a
 * frame held in nseg buffers; -EINVAL when they hold less than the IP header announces. */
static int segment_sum(const struct umem_csum_loc *loc, uint8_t *const *seg, const uint32_t *seg_len, uint32_t nseg,
		       uint64_t *out)
{
	uint32_t skip, left, pos = 0, total = 0;
	uint64_t sum;

	if (!loc || !seg || !seg_len || !nseg)
		return -EINVAL;
	for (uint32_t i = 0; i < nseg; i++)
		total += seg_len[i];
	if (total < loc->l4_off || total - loc->l4_off < loc->l4_len || seg_len[0] < loc->field + 2)
		return -EINVAL;
	skip = loc->l4_off;
	left = loc->l4_len;
	sum = loc->pseudo;
	for (uint32_t i = 0; i < nseg && left; i++) {
		uint32_t off = skip < seg_len[i] ? skip : seg_len[i];
		uint32_t n = seg_len[i] - off < left ? seg_len[i] - off : left;
		uint16_t s;

		skip -= off;
		if (!n)
			continue;
		s = umem_csum__fold(umem_csum__add(0, seg[i] + off, n));
		/* A part that starts at an odd offset of the segment has its bytes swapped. */
		sum += pos & 1 ? swap16(s) : s;
		pos += n;
		left -= n;
	}
	*out = sum;
	return 0;
}

int umem_csum__complete(const struct umem_csum_loc *loc, uint8_t *const *seg, const uint32_t *seg_len,
			uint32_t nseg)
{
	uint64_t sum;
	uint16_t c, was;
	int err;

	if (!loc || !seg || !seg_len || !nseg || seg_len[0] < loc->field + 2)
		return -EINVAL;
	was = rd16(seg[0] + loc->field);
	wr16(seg[0] + loc->field, 0); /* summed as zero: the pseudo sum is added instead */
	err = segment_sum(loc, seg, seg_len, nseg, &sum);
	if (err) {
		wr16(seg[0] + loc->field, was);
		return err;
	}
	c = (uint16_t)~umem_csum__fold(sum);
	if (loc->proto == 17 && !c)
		c = 0xffff;
	wr16(seg[0] + loc->field, c);
	return 0;
}

int umem_csum__verify(const struct umem_csum_loc *loc, uint8_t *const *seg, const uint32_t *seg_len, uint32_t nseg)
{
	uint64_t sum;
	int err = segment_sum(loc, seg, seg_len, nseg, &sum);

	return err ? err : umem_csum__fold(sum) == 0xffff;
}

int umem_csum__frame(void *frame, uint32_t len)
{
	struct umem_csum_loc loc;
	uint8_t *f = frame;
	int err = umem_csum__locate(frame, len, &loc);

	if (err)
		return err;
	if (len - loc.l4_off < loc.l4_len)
		return -EINVAL;
	if (loc.family == 4 && (err = umem_csum__ipv4(f + loc.l3_off, len - loc.l3_off)))
		return err;
	if (loc.family == 4 && loc.proto == 17 && !rd16(f + loc.field))
		return 0;
	return umem_csum__complete(&loc, &f, &len, 1);
}
