/* SPDX-License-Identifier: MIT */
/*
 * xsk-gen: the pure logic of the generator and sink (frame layout, size mix, sequence
 * accounting), kept apart from the port loop so unit tests link it without sockets.
 */
#ifndef XSK_GEN_H
#define XSK_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Frames are Ethernet + IPv4 (no options) + UDP + the generator header + a fill pattern.
 * Lengths count the frame as the descriptor carries it: no FCS ("64-byte frames" are 64 bytes
 * in the UMEM, as in xdpsock and testpmd). */
#define GEN_ETH_LEN 14u
#define GEN_IP_LEN 20u
#define GEN_UDP_LEN 8u
#define GEN_HDR_LEN 16u /* struct gen_hdr on the wire */
#define GEN_L2_TO_PAYLOAD (GEN_ETH_LEN + GEN_IP_LEN + GEN_UDP_LEN)
#define GEN_FRAME_MIN 60u  /* Ethernet minimum without FCS; 58 bytes of headers fit */
/* The largest frame an AF_XDP receiver with 4 KiB chunks takes: the chunk less the kernel's
 * XDP_PACKET_HEADROOM (256). Larger frames could be sent, but the sink (or xdp-fwd with its
 * default chunks) could not receive them. */
#define GEN_FRAME_MAX 3840u
#define GEN_FRAME_RANGE "60..3840" /* GEN_FRAME_MIN..GEN_FRAME_MAX, for --help */
#define GEN_MAGIC 0x7847u  /* "xG" */

/* The generator header, first bytes of the UDP payload, big-endian:
 *   magic u16 | csum u16 | stream u32 | seq u64
 * csum is the Internet checksum of the whole UDP payload computed with csum = 0, so a changed
 * or stale byte anywhere in the payload is caught; the fill after the header is a pattern of
 * (stream, seq) that the sink checks too. */

struct gen_flow {
	uint8_t src_mac[6], dst_mac[6];
	uint32_t src_ip, dst_ip; /* network order */
	uint16_t src_port, dst_port; /* host order */
	/* --flows N --flow-frames K: frame seq goes out from source port src_port + (seq / K) % N
	 * (N flows, K frames in a row each); N 0 or 1: one flow. */
	uint32_t nr_flows, flow_frames;
};

/* Writes a complete frame of len bytes (GEN_FRAME_MIN..GEN_FRAME_MAX) into buf: every byte
 * from 0 to len - 1 is written, so a recycled buffer never leaks bytes of an earlier frame.
 * IPv4 and UDP checksums are valid. */
void gen_frame_build(uint8_t *buf, uint32_t len, const struct gen_flow *flow, uint32_t stream,
		     uint64_t seq);

enum gen_parse {
	GEN_PARSE_OK = 0,
	GEN_PARSE_FOREIGN, /* not a generator frame for this flow (ARP, other ports, ...) */
	GEN_PARSE_BAD,     /* a generator frame with a wrong length, checksum or fill byte */
};

/* Classifies a received frame; for GEN_PARSE_OK fills *stream and *seq. dst_port (host order)
 * selects the flow; 0 accepts any UDP port. */
enum gen_parse gen_frame_parse(const uint8_t *buf, uint32_t len, uint16_t dst_port,
			       uint32_t *stream, uint64_t *seq);

/* Internet checksum helpers (RFC 1071): partial sums, folded and inverted by csum_fold. */
uint32_t gen_csum_add(uint32_t sum, const void *data, size_t len);
uint16_t gen_csum_fold(uint32_t sum);

/* Size mix: "64", "64:7,576:4,1500:1" or "imix" (= 64:7,576:4,1500:1). The schedule spreads
 * each size evenly over one period of sum(weights) frames (smooth weighted round-robin), so
 * the mix holds over any window, not just over whole periods. */
#define GEN_MIX_MAX_SIZES 16
#define GEN_MIX_MAX_PERIOD 4096
struct gen_mix {
	uint32_t nr;
	uint32_t size[GEN_MIX_MAX_SIZES];
	uint32_t weight[GEN_MIX_MAX_SIZES];
	uint32_t period;                      /* sum of weights */
	uint16_t schedule[GEN_MIX_MAX_PERIOD]; /* index into size[] for each slot of a period */
};
/* 0, or -1 with a message in err naming the bad token. Sizes GEN_FRAME_MIN..max_len. */
int gen_mix_parse(struct gen_mix *mix, const char *text, uint32_t max_len, char *err, size_t errlen);
/* Mean frame length of the mix. */
double gen_mix_mean(const struct gen_mix *mix);

/* Sink accounting of one stream's sequence numbers. A frame is "lost" while its number was
 * skipped; one arriving late (below the highest seen) is "reordered" and no longer lost; one
 * seen before is a "duplicate". Late frames are told apart from duplicates within a window of
 * GEN_SEQ_WINDOW numbers below the highest; older ones count as reordered. */
#define GEN_SEQ_WINDOW 65536u
struct gen_seq {
	uint64_t next;       /* highest seen + 1 */
	uint64_t received;   /* unique frames */
	uint64_t lost;       /* numbers below next never seen */
	uint64_t reordered;  /* frames that arrived after a higher number */
	uint64_t duplicates;
	uint64_t seen[GEN_SEQ_WINDOW / 64]; /* bit (n % WINDOW): number n seen, for n in [next - WINDOW, next) */
};
void gen_seq_init(struct gen_seq *s);
/* Accounts one frame. Streams start at number 0, so losing the first frames counts too (start
 * the sink before the generator). */
void gen_seq_account(struct gen_seq *s, uint64_t seq);

#endif
