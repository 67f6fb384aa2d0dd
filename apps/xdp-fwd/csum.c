/* SPDX-License-Identifier: MIT */
#include <string.h>
#include <umem/csum.h>

#include "csum.h"
#include "route.h"

#define MAX_SEGS 32u /* descriptors of a chain this completes (a 9000-byte frame needs 3 at 4 KiB) */

/* The per-frame fast rejection before the library call: frames that cannot be TCP or UDP over
 * IP (the Ethernet type, after one VLAN tag, and the IP protocol or first next header), read
 * inline here. umem_csum__locate does the full check. */
static inline bool maybe_l4(const uint8_t *f, uint32_t len)
{
	uint32_t l3 = FWD_ETH_HLEN;
	uint16_t type;
	uint8_t proto;

	if (len < FWD_ETH_HLEN + 20)
		return false;
	type = fwd_be16(f + 12);
	if (type == 0x8100 || type == 0x88a8) {
		type = fwd_be16(f + 16);
		l3 += 4;
	}
	if (type == 0x0800)
		proto = f[l3 + 9];
	else if (type == 0x86dd && len >= l3 + 40)
		proto = f[l3 + 6];
	else
		return false;
	/* TCP, UDP, or an IPv6 extension header the library walks (hop-by-hop, routing, options) */
	return proto == 6 || proto == 17 || proto == 0 || proto == 43 || proto == 60;
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
		struct umem_csum_loc loc;
		uint8_t *f = data(arg, d[i].addr);

		while (i + len <= n && (d[i + len - 1].options & UMEM_DESC_F_CONTD))
			len++;
		if (maybe_l4(f, d[i].len) && !umem_csum__locate(f, d[i].len, &loc) && loc.partial) {
			bool whole = i + len <= n && len <= MAX_SEGS, completed = false;
			uint8_t *seg[MAX_SEGS];
			uint32_t seg_len[MAX_SEGS];

			for (uint32_t k = 0; whole && k < len; k++) {
				seg[k] = k ? data(arg, d[i + k].addr) : f;
				seg_len[k] = d[i + k].len;
			}
			/* A real checksum equal to the pseudo-header sum (once in 65,536 frames) is
			 * valid as it is: not partial, or its flow would leave offload for nothing.
			 * Completing it writes the same value, which tells it in the same pass. */
			if (whole && complete) {
				uint16_t was = fwd_be16(f + loc.field);

				completed = !umem_csum__complete(&loc, seg, seg_len, len);
				if (completed && fwd_be16(f + loc.field) == was) {
					i += len;
					continue;
				}
			} else if (whole && umem_csum__verify(&loc, seg, seg_len, len) == 1) {
				i += len;
				continue;
			}
			partial++;
			done += completed;
			if (was_partial)
				was_partial[i] = 1;
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
