/* SPDX-License-Identifier: MIT */
/*
 * libumem checksums: the Internet checksum (RFC 1071) for frames an application edits or
 * builds in the UMEM: the IPv4 header checksum, TCP and UDP over IPv4 and IPv6 (with their
 * pseudo-header), the incremental update of RFC 1624 (a TTL decrement, a rewritten address or
 * port), and the completion of partial checksums.
 *
 * Partial checksums: a sender with TX checksum offload on (a veth's default) leaves the L4
 * checksum to whoever transmits the skb: the field holds the folded pseudo-header sum (the
 * kernel's CHECKSUM_PARTIAL; csum_start/csum_offset in the skb say where the rest goes). XDP,
 * and so AF_XDP, sees only the bytes, so a frame sent back or forwarded unchanged reaches its
 * receiver with that sum in place and is dropped as corrupt. The field's value tells it apart
 * from a wrong checksum; completing it is summing the L4 segment, as a NIC would.
 *
 * Conventions: sums are 64-bit accumulators of big-endian 16-bit words (umem_csum__add), folded
 * to 16 bits by umem_csum__fold; a checksum is the complement of a folded sum, in host byte
 * order: store it big-endian (the field's bytes are c >> 8, c & 0xff). Frames start with the
 * Ethernet header. No function here allocates, locks or logs: any thread, any frame.
 */
#ifndef UMEM_CSUM_H
#define UMEM_CSUM_H

#include <stdint.h>
#include <umem/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One's complement sum of len bytes at data, as big-endian 16-bit words (an odd last byte is
 * the high byte of a word), added to sum. Sum a chain part by part; a part that starts at an
 * odd offset of the segment adds its folded sum byte-swapped. */
UMEM_API uint64_t umem_csum__add(uint64_t sum, const void *data, uint32_t len);

/* The 64-bit accumulator folded to 16 bits (not complemented). */
static inline uint16_t umem_csum__fold(uint64_t sum);

/* The pseudo-header sum of a TCP/UDP segment of l4_len bytes (RFC 768, RFC 793): addresses as
 * on the wire (4 bytes each; 16 for IPv6, RFC 8200 8.1). */
static inline uint64_t umem_csum__pseudo4(const void *saddr, const void *daddr, uint8_t proto, uint32_t l4_len);
static inline uint64_t umem_csum__pseudo6(const void *saddr, const void *daddr, uint8_t proto, uint32_t l4_len);

/* RFC 1624 eqn. 3, HC' = ~(~HC + ~m + m'): the checksum check after a 16-bit word of the
 * covered data changes from old to new (all three as read big-endian, e.g. a TTL decrement:
 * the word TTL << 8 | protocol). Like recomputing, it never yields 0xffff (RFC 1624's point
 * against eqn. 2). */
static inline uint16_t umem_csum__update16(uint16_t check, uint16_t old, uint16_t new_);
/* The same for a 32-bit value (an IPv4 address, as read big-endian): two words at once. */
static inline uint16_t umem_csum__update32(uint16_t check, uint32_t old, uint32_t new_);

/* Computes and stores the header checksum of the IPv4 header at ip (len bytes readable; its
 * length from the IHL). -EINVAL, nothing written, when it is not IPv4 or longer than len. */
UMEM_API int umem_csum__ipv4(void *ip, uint32_t len);

/* Where a frame's L4 checksum is, from umem_csum__locate. Offsets from the frame start. */
struct umem_csum_loc {
	uint32_t l3_off;  /* the IP header */
	uint32_t l4_off;  /* the TCP/UDP header */
	uint32_t l4_len;  /* the segment's length, as the IP header gives it */
	uint32_t field;   /* the checksum field */
	uint16_t pseudo;  /* the folded pseudo-header sum */
	uint8_t proto;    /* 6 (TCP) or 17 (UDP) */
	uint8_t family;   /* 4 or 6 */
	uint8_t partial;  /* 1: the field holds pseudo (a CHECKSUM_PARTIAL frame, or a real checksum
			   * equal to it: umem_csum__verify tells) */
	uint8_t reserved[3];
};

/* Finds the TCP or UDP checksum of an Ethernet frame (one VLAN tag at most; IPv4 that is not a
 * fragment; IPv6 through up to 4 hop-by-hop, destination options and routing headers, a
 * routing header only with no segment left: else the pseudo-header holds an address the frame
 * does not carry here), reading only the first len bytes (at least the headers up to the
 * checksum field). Returns 0 with *loc filled, or -ENOENT (not TCP/UDP over IP, a fragment or
 * fragment header, other or more extension headers, truncated headers, an IP length that
 * cannot hold the field). UDP over IPv4 with checksum 0 ("none") is found, never partial. */
UMEM_API int umem_csum__locate(const void *frame, uint32_t len, struct umem_csum_loc *loc);

/* Computes and stores the L4 checksum at loc (from umem_csum__locate; partial or not) over a
 * frame held in nseg buffers (a multi-buffer chain: seg[i], seg_len[i] bytes; one for a plain
 * frame). A UDP result of 0 is stored as 0xffff (0 means "no checksum"). -EINVAL, nothing
 * changed, when the buffers hold fewer bytes than the IP header announces. */
UMEM_API int umem_csum__complete(const struct umem_csum_loc *loc, uint8_t *const *seg, const uint32_t *seg_len,
				 uint32_t nseg);

/* Whether the L4 checksum at loc (from umem_csum__locate) is valid, over a frame held in nseg
 * buffers as for umem_csum__complete: 1 valid, 0 not, -EINVAL when the buffers hold fewer bytes
 * than the IP header announces. It tells a partial checksum from a real one that equals the
 * pseudo-header sum (once in 65,536 frames; loc->partial is set for both): only the first needs
 * completing. */
UMEM_API int umem_csum__verify(const struct umem_csum_loc *loc, uint8_t *const *seg, const uint32_t *seg_len,
			       uint32_t nseg);

/* For a frame an application built or rewrote in one buffer: the IPv4 header checksum (IPv4)
 * and the TCP/UDP checksum, both recomputed. Returns 0, or -ENOENT when the frame has no
 * TCP/UDP checksum to set (umem_csum__locate), -EINVAL when the buffer is shorter than the IP
 * length. UDP over IPv4 with checksum 0 keeps 0. */
UMEM_API int umem_csum__frame(void *frame, uint32_t len);

/* ---- inline definitions ---- */

static inline uint16_t umem_csum__fold(uint64_t sum)
{
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static inline uint64_t umem_csum__pseudo4(const void *saddr, const void *daddr, uint8_t proto, uint32_t l4_len)
{
	return umem_csum__add(umem_csum__add(0, saddr, 4), daddr, 4) + proto + l4_len;
}

static inline uint64_t umem_csum__pseudo6(const void *saddr, const void *daddr, uint8_t proto, uint32_t l4_len)
{
	return umem_csum__add(umem_csum__add(0, saddr, 16), daddr, 16) + proto + l4_len;
}

static inline uint16_t umem_csum__update16(uint16_t check, uint16_t old, uint16_t new_)
{
	return (uint16_t)~umem_csum__fold((uint64_t)(uint16_t)~check + (uint16_t)~old + new_);
}

static inline uint16_t umem_csum__update32(uint16_t check, uint32_t old, uint32_t new_)
{
	return (uint16_t)~umem_csum__fold((uint64_t)(uint16_t)~check + (uint16_t)~(old >> 16) +
					  (uint16_t)~old + (new_ >> 16) + (new_ & 0xffff));
}

#ifdef __cplusplus
}
#endif
#endif
