/* SPDX-License-Identifier: MIT */
/*
 * xdp-fwd's ICMP errors (--mode l3): the ones only userspace can see the need for, because the
 * kernel never sees the frame (the steering program gave it to the socket): no route, an
 * unreachable or prohibit route, a datagram over the output interface's MTU. Pure logic on the
 * bytes of one Ethernet frame, no ports: mode_l3.c decides when, counts and sends; the unit
 * test (test/fwd/icmp_test.c) drives the same code.
 *
 * The error is built in place, in the offending frame's own buffer: the datagram moves down
 * behind the new IP and ICMP headers (quoted as RFC 1812 4.3.2.3 and RFC 4443 2.4(c) say: as
 * much as fits in 576 bytes for IPv4, 1280 for IPv6) and the MACs swap, so it goes back to the
 * neighbour that sent it. No buffer is allocated, and the frame's drop is counted as before.
 */
#ifndef XDP_FWD_ICMP_H
#define XDP_FWD_ICMP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* The errors, each the kernel's answer to the same case (net/ipv4/route.c ip_error(),
 * net/ipv6/route.c ip6_pkt_drop()): IPv4 type 3 with code, IPv6 type 1 or 2 with code. */
enum fwd_icmp_kind {
	FWD_ICMP_NET_UNREACH,  /* no route: v4 3/0 net unreachable; v6 1/0 no route */
	FWD_ICMP_HOST_UNREACH, /* an unreachable route: v4 3/1 host unreachable; v6 1/0 */
	FWD_ICMP_PROHIBITED,   /* a prohibit route: v4 3/13 administratively prohibited; v6 1/1 */
	FWD_ICMP_TOO_BIG,      /* over the MTU: v4 3/4 fragmentation needed (DF set); v6 2/0 */
	FWD_ICMP_KINDS
};

/* The quoting bounds: the whole error datagram (IP header included) is at most this. */
#define FWD_ICMP4_MAX 576u
#define FWD_ICMP6_MAX 1280u
#define FWD_ICMP_ETH_HLEN 14u

/* Whether ICMP error kind may be sent about the untagged Ethernet frame (len bytes readable):
 * IPv4 or IPv6 that is not a fragment after the first, not to or from a link-layer group
 * address, not to a multicast or broadcast IP address, from an address that names one host
 * (not unspecified, loopback, multicast, or IPv4 class E), and not an ICMP error or redirect
 * itself (RFC 1812 4.3.2.7, RFC 4443 2.4(e)). An ICMPv4 type the kernel does not know is
 * taken for an error too, as net/ipv4/icmp.c does. FWD_ICMP_TOO_BIG about IPv4 only with DF
 * set: without it the router's answer is fragmentation, and no error exists for it. */
bool fwd_icmp_allowed(const uint8_t *frame, uint32_t len, enum fwd_icmp_kind kind);

/* Rewrites the frame (len bytes received, room bytes writable from its start) into the ICMP
 * error of kind about it: MACs swapped, a new IP header from src (the router's address, 4 or
 * 16 bytes by the frame's family) to the datagram's source, TTL / hop limit 64, and the quote.
 * mtu: FWD_ICMP_TOO_BIG's next-hop MTU. Checksums set with umem/csum.h. Returns the new frame
 * length, or 0 with the frame unchanged when it cannot be: not IPv4/IPv6, too short to quote
 * the IP header and 8 bytes (RFC 792), room too small. Call fwd_icmp_allowed first. */
uint32_t fwd_icmp_build(uint8_t *frame, uint32_t len, uint32_t room, enum fwd_icmp_kind kind, uint32_t mtu,
			const uint8_t *src);

/* A token bucket shared by every worker, as the kernel's icmp_msgs_per_sec/icmp_msgs_burst
 * bound its own errors: burst at once, then rate per second. Kept as a virtual time (the
 * generic cell rate algorithm): one 64-bit word, one compare-and-swap per error. */
struct fwd_icmp_limit {
	_Atomic uint64_t tat;  /* when the bucket is full again, in ns */
	uint64_t interval_ns;  /* one token's refill time; 0: nothing is ever allowed */
	uint64_t slack_ns;     /* (burst - 1) tokens' worth */
};

/* rate 0 or burst 0: every error refused. */
void fwd_icmp_limit_init(struct fwd_icmp_limit *l, uint32_t rate, uint32_t burst);
/* Takes a token at now_ns (a monotonic clock); false when there is none. */
bool fwd_icmp_limit_take(struct fwd_icmp_limit *l, uint64_t now_ns);

#endif
