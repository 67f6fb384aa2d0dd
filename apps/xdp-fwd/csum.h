/* SPDX-License-Identifier: MIT */
/*
 * xdp-fwd checksums: TCP and UDP frames whose checksum field holds only the pseudo-header sum.
 *
 * A sender with TX checksum offload on (a veth's default) leaves the L4 checksum to whoever
 * transmits the skb (CHECKSUM_PARTIAL: the field holds the folded pseudo-header sum, and
 * csum_start/csum_offset in the skb say where the rest goes). XDP sees only the bytes, so a
 * frame forwarded through AF_XDP reaches its receiver with that sum in place and is dropped as
 * corrupt: TCP stalls while ping works. Such a field equals the folded pseudo-header sum (the
 * kernel stores ~csum_tcpudp_magic(), i.e. the sum itself, not its complement), which tells it
 * apart from a wrong checksum; completing it is summing the L4 segment, as a NIC would.
 */
#ifndef XDP_FWD_CSUM_H
#define XDP_FWD_CSUM_H

#include <stdbool.h>
#include <stdint.h>
#include <umem/port.h>

#include "stats.h"

/* Where a frame's L4 checksum is (fwd_csum_find): the field's offset from the frame start, the
 * L4 segment's offset and length, and the folded pseudo-header sum (host order). */
struct fwd_csum_loc {
	uint32_t field, l4_off, l4_len;
	uint16_t pseudo;
	bool udp;
};

/* One's complement sum of len bytes, as 16-bit big-endian words, into a 64-bit accumulator
 * (fold it with fwd_csum_fold). */
uint64_t fwd_csum_add(uint64_t sum, const uint8_t *p, uint32_t len);

static inline uint16_t fwd_csum_fold(uint64_t s)
{
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* Whether frame (the first len bytes, at least the headers) is an IPv4 or IPv6 TCP or UDP
 * frame whose checksum field holds the pseudo-header sum; *loc says where. Reads the Ethernet
 * header (one VLAN tag at most), the IP header and one 16-bit field: cheap for other frames.
 * IPv6 through up to 4 hop-by-hop, destination options and routing headers (a routing header
 * only with no segment left: else the pseudo-header holds an address of its own). Not partial:
 * non-IP, fragments, other IPv6 extension headers, UDP over IPv4 without a checksum (0),
 * truncated headers. */
bool fwd_csum_find(const uint8_t *frame, uint32_t len, struct fwd_csum_loc *loc);

/* Completes the checksum of a frame fwd_csum_find found partial, held in nseg buffers (a
 * multi-buffer chain: seg[i], seg_len[i]). Returns false, changing nothing, when the segment
 * the IP header announces is longer than the buffers hold. A UDP result of 0 is written as
 * 0xffff (0 means "no checksum"). */
bool fwd_csum_complete(const struct fwd_csum_loc *loc, uint8_t *const *seg, const uint32_t *seg_len,
		       uint32_t nseg);

/* The worker's hook: every frame of the burst d[0..n) (chains of UMEM_DESC_F_CONTD, the first
 * ones the tail of a cut chain when skip_contd) checked and, with complete, completed;
 * counted in ctr (csum_partial, and csum_completed or csum_uncompleted). was_partial (NULL: not
 * wanted; else n entries): 1 at the first descriptor of each frame found partial, 0 elsewhere,
 * for offload, which sees the frames completed. Returns the number of partial frames found. */
uint32_t fwd_csum_burst(uint8_t *(*data)(void *arg, uint64_t addr), void *arg, const struct umem_desc *d,
			uint32_t n, bool skip_contd, bool complete, struct fwd_port_counters *ctr, uint8_t *was_partial);

/* A correct checksum equals the folded pseudo-header sum about once in 65,536 frames, and is
 * counted partial too (completing it writes the same value): 4 such frames of 305,000 from a
 * sender with TX checksum offload off warned as if it had it on. The warning waits until a port
 * has counted FWD_CSUM_WARN_MIN partial frames and at least one in FWD_CSUM_WARN_SHARE of its
 * frames (64 times what chance gives); a sender with the offload on has nearly all of its
 * TCP/UDP frames partial. */
#define FWD_CSUM_WARN_MIN 8u
#define FWD_CSUM_WARN_SHARE 1024u

/* Whether port counters ctr call for the warning (above). */
bool fwd_csum_warn_due(const struct fwd_port_counters *ctr);

/* The once-per-port warning (stderr) for the partial frames seen on port name; offload: their
 * flows stay in userspace (--offload-after). */
void fwd_csum_warn(FILE *out, const char *name, bool complete, bool offload);

#endif
