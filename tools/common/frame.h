/* SPDX-License-Identifier: MIT */
/*
 * Frame building for the tools and the tests: xsk-gen's frames and the tests' crafted ones
 * (steering, rules, checksums, capture). Each append function writes one header, or bytes, at
 * buf + *len in network byte order and advances *len; the caller's buffer must hold the frame.
 * Checksum fields are written as 0: a caller that wants them computes them. Lengths in the
 * headers come from the arguments, not from what follows, so a test can build a header that
 * lies about its length.
 */
#ifndef UMEM_TOOLS_FRAME_H
#define UMEM_TOOLS_FRAME_H

#include <stdint.h>

/* IPv4 header fields (20 bytes, no options). */
struct frame_ipv4 {
	uint32_t src, dst; /* host order */
	uint16_t id;
	uint16_t frag;     /* flags and fragment offset as on the wire: 0x4000 DF, 0x2000 MF */
	uint8_t ttl, proto;
};

/* IPv6 header fields (40 bytes). */
struct frame_ipv6 {
	uint8_t src[16], dst[16];
	uint8_t next, hop_limit;
};

/* v big-endian at p (no cursor: for fields filled in afterwards, e.g. checksums). */
void frame_set16(uint8_t *p, uint16_t v);
void frame_set32(uint8_t *p, uint32_t v);

void frame_put(uint8_t *buf, uint32_t *len, const void *bytes, uint32_t n);
void frame_put16(uint8_t *buf, uint32_t *len, uint16_t v);
void frame_put32(uint8_t *buf, uint32_t *len, uint32_t v);
void frame_zero(uint8_t *buf, uint32_t *len, uint32_t n);

/* Ethernet: destination, source, EtherType (0x8100 or 0x88a8 for a tag: frame_vlan next). */
void frame_eth(uint8_t *buf, uint32_t *len, const uint8_t dst[6], const uint8_t src[6], uint16_t type);
/* One VLAN tag: its TCI and the EtherType after it. */
void frame_vlan(uint8_t *buf, uint32_t *len, uint16_t tci, uint16_t next);
/* payload: the bytes after the header, for the total (IPv4) or payload (IPv6) length. */
void frame_ipv4(uint8_t *buf, uint32_t *len, const struct frame_ipv4 *h, uint32_t payload);
void frame_ipv6(uint8_t *buf, uint32_t *len, const struct frame_ipv6 *h, uint32_t payload);
/* A UDP header: ports and the length of header and payload. */
void frame_udp(uint8_t *buf, uint32_t *len, uint16_t sport, uint16_t dport, uint32_t payload);
/* The ports of a TCP, UDP or SCTP header and zeros to hdrlen bytes (at least 4), lengths
 * included: what a parser reads for ports, nothing more. */
void frame_ports(uint8_t *buf, uint32_t *len, uint16_t sport, uint16_t dport, uint32_t hdrlen);

#endif
