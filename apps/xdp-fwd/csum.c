/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "csum.h"

#define ETH_HLEN 14u
#define FWD_CSUM_MAX_EXTHDR 4u /* IPv6 extension headers walked, as the steering program */
#define MAX_SEGS 32u /* descriptors of a chain this completes (a 9000-byte frame needs 3 at 4 KiB) */

static inline uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The one's complement sum does not depend on byte order (RFC 1071, 2.B): the bulk is summed as
 * native 64-bit words with the carries added back, folded, and swapped to big-endian once. */
static uint16_t sum_native(const uint8_t *p, uint32_t n)
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
	return fwd_csum_fold(s0);
}

uint64_t fwd_csum_add(uint64_t sum, const uint8_t *p, uint32_t len)
{
	uint32_t bulk = len & ~7u;

	if (bulk) {
		uint16_t s = sum_native(p, bulk);

		sum += __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? (uint16_t)(s << 8 | s >> 8) : s;
		p += bulk;
		len -= bulk;
	}
	for (; len >= 2; p += 2, len -= 2)
		sum += rd16(p);
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

bool fwd_csum_find(const uint8_t *f, uint32_t len, struct fwd_csum_loc *loc)
{
	uint32_t l3 = ETH_HLEN, l4, l4_len;
	uint16_t type;
	uint8_t proto;
	uint64_t sum;

	if (len < ETH_HLEN)
		return false;
	type = rd16(f + 12);
	if (type == 0x8100 || type == 0x88a8) { /* one VLAN tag */
		if (len < ETH_HLEN + 4)
			return false;
		type = rd16(f + 16);
		l3 += 4;
	}
	if (type == 0x0800) {
		const uint8_t *ip = f + l3;
		uint32_t ihl;

		if (len < l3 + 20 || (ip[0] >> 4) != 4)
			return false;
		ihl = (ip[0] & 15u) * 4;
		/* Fragments carry no partial checksum: the stack completes it before fragmenting. */
		if (ihl < 20 || rd16(ip + 2) < ihl || (rd16(ip + 6) & 0x3fff))
			return false;
		proto = ip[9];
		l4 = l3 + ihl;
		l4_len = rd16(ip + 2) - ihl;
		sum = fwd_csum_add(0, ip + 12, 8);
	} else if (type == 0x86dd) {
		const uint8_t *ip = f + l3;

		if (len < l3 + 40 || (ip[0] >> 4) != 6)
			return false;
		proto = ip[6];
		l4 = l3 + 40;
		/* Through hop-by-hop and destination options headers, and a routing header with no
		 * segment left (else the pseudo-header holds its final address); as many as the
		 * steering program walks. A fragment header ends it: not TCP or UDP here. */
		for (uint32_t i = 0; i < FWD_CSUM_MAX_EXTHDR && (proto == 0 || proto == 60 || proto == 43); i++) {
			if (len < l4 + 8 || (proto == 43 && f[l4 + 3]))
				return false;
			proto = f[l4];
			l4 += (f[l4 + 1] + 1u) * 8;
		}
		if (rd16(ip + 4) < l4 - l3 - 40)
			return false;
		l4_len = rd16(ip + 4) - (l4 - l3 - 40);
		sum = fwd_csum_add(0, ip + 8, 32);
	} else {
		return false;
	}
	if (proto == 6) {
		loc->field = l4 + 16;
		loc->udp = false;
	} else if (proto == 17) {
		loc->field = l4 + 6;
		loc->udp = true;
	} else {
		return false;
	}
	if (len < loc->field + 2 || l4_len < loc->field + 2 - l4)
		return false;
	/* UDP over IPv4 with checksum 0: none, nothing to complete (never a pseudo sum: that
	 * one's complement sum of non-zero words is never 0). */
	loc->pseudo = fwd_csum_fold(sum + proto + l4_len);
	loc->l4_off = l4;
	loc->l4_len = l4_len;
	return rd16(f + loc->field) == loc->pseudo;
}

bool fwd_csum_complete(const struct fwd_csum_loc *loc, uint8_t *const *seg, const uint32_t *seg_len,
		       uint32_t nseg)
{
	uint32_t skip = loc->l4_off, left = loc->l4_len, pos = 0, total = 0;
	uint64_t sum = loc->pseudo;
	uint8_t *field = NULL;
	uint16_t c;

	for (uint32_t i = 0; i < nseg; i++)
		total += seg_len[i];
	if (total < loc->l4_off || total - loc->l4_off < loc->l4_len || seg_len[0] < loc->field + 2)
		return false;
	field = seg[0] + loc->field;
	field[0] = field[1] = 0; /* summed as zero: the pseudo sum is added above */
	for (uint32_t i = 0; i < nseg && left; i++) {
		uint32_t off = skip < seg_len[i] ? skip : seg_len[i];
		uint32_t n = seg_len[i] - off < left ? seg_len[i] - off : left;
		uint16_t s;

		skip -= off;
		if (!n)
			continue;
		s = fwd_csum_fold(fwd_csum_add(0, seg[i] + off, n));
		/* A part that starts at an odd offset of the segment has its bytes swapped. */
		sum += pos & 1 ? (uint16_t)(s << 8 | s >> 8) : s;
		pos += n;
		left -= n;
	}
	c = (uint16_t)~fwd_csum_fold(sum);
	if (loc->udp && !c)
		c = 0xffff;
	field[0] = (uint8_t)(c >> 8);
	field[1] = (uint8_t)c;
	return true;
}

uint32_t fwd_csum_burst(uint8_t *(*data)(void *arg, uint64_t addr), void *arg, const struct umem_desc *d,
			uint32_t n, bool skip_contd, bool complete, struct fwd_port_counters *ctr, uint8_t *was_partial)
{
	uint32_t i = 0, partial = 0, done = 0;

	if (was_partial)
		memset(was_partial, 0, n);
	if (skip_contd) /* the tail of a chain that routing drops */
		while (i < n && (d[i++].options & UMEM_DESC_F_CONTD))
			;
	/* In copy mode the kernel wrote each frame on the CPU that sent it: the first read of its
	 * headers below is a cache miss, the only one per frame in wire mode (the sample xsk_fwd
	 * reads no frame at all). Asked for all at once, the misses overlap instead of coming
	 * one after the other. */
	for (uint32_t k = i; k < n; k++)
		if (k == i || !(d[k - 1].options & UMEM_DESC_F_CONTD)) /* a frame's first buffer */
			__builtin_prefetch(data(arg, d[k].addr));
	while (i < n) {
		uint32_t len = 1;
		struct fwd_csum_loc loc;
		uint8_t *f = data(arg, d[i].addr);

		while (i + len <= n && (d[i + len - 1].options & UMEM_DESC_F_CONTD))
			len++;
		if (fwd_csum_find(f, d[i].len, &loc)) {
			partial++;
			if (was_partial)
				was_partial[i] = 1;
			if (complete && i + len <= n && len <= MAX_SEGS) {
				uint8_t *seg[MAX_SEGS];
				uint32_t seg_len[MAX_SEGS];

				for (uint32_t k = 0; k < len; k++) {
					seg[k] = k ? data(arg, d[i + k].addr) : f;
					seg_len[k] = d[i + k].len;
				}
				done += fwd_csum_complete(&loc, seg, seg_len, len);
			}
		}
		i += len;
	}
	if (partial) {
		fwd_count(&ctr->csum_partial, partial);
		fwd_count(&ctr->csum_completed, done);
		fwd_count(&ctr->csum_uncompleted, partial - done);
	}
	return partial;
}

bool fwd_csum_warn_due(const struct fwd_port_counters *ctr)
{
	uint64_t partial = atomic_load_explicit(&ctr->csum_partial, memory_order_relaxed);
	uint64_t rx = atomic_load_explicit(&ctr->rx_packets, memory_order_relaxed);

	return partial >= FWD_CSUM_WARN_MIN && partial * FWD_CSUM_WARN_SHARE >= rx;
}

void fwd_csum_warn(FILE *out, const char *name, bool complete, bool offload)
{
	fprintf(out,
		"xdp-fwd: %s: TCP/UDP frames with a partial checksum (the sender's TX checksum offload: "
		"an XDP frame loses CHECKSUM_PARTIAL); %s%s. Fix at the sender: ethtool -K <sender> tx off\n",
		name, complete ? "completing them in software (--csum-complete off: leave them)" :
				 "forwarded as they are, the receiver drops them (--csum-complete on: complete them)",
		offload ? "; their flows stay in userspace, not offloaded (a redirect would not complete them)" : "");
}
