/* SPDX-License-Identifier: MIT */
/*
 * xdp-fwd checksums: TCP and UDP frames whose checksum field holds only the pseudo-header sum,
 * found and completed with umem/csum.h (umem_csum__locate, umem_csum__complete); what is
 * xdp-fwd's own is the policy: when to complete, the counters, the warning.
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
