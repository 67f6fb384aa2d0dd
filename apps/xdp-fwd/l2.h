/* SPDX-License-Identifier: MIT */
/*
 * xdp-fwd l2: the MAC table of the learning bridge.
 *
 * Open addressing with linear probing inside a bounded window (L2_PROBE slots). Entries age
 * lazily: an entry older than the aging time is invisible to lookups and free for reuse, but
 * stays in place so that probe chains behind it stay intact (no tombstones needed). When a
 * window is full of live entries the oldest one is evicted. Time is passed in by the caller
 * (nanoseconds, any monotonic origin), so the table is pure logic and tests drive the clock.
 * Safe for concurrent learners and readers without a lock: a slot is two atomic words, the MAC
 * and port packed in one (changed by one compare-and-swap, so a reader never sees a MAC with
 * another entry's port), the last-seen time in the other. Learning is best effort: a learner
 * that loses a slot to another one skips this frame, the MAC's next frame learns it.
 */
#ifndef XDP_FWD_L2_H
#define XDP_FWD_L2_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define L2_PROBE 16
#define L2_NO_PORT (-1)

struct l2_entry {
	/* 48-bit MAC << 16 | (port + 1); 0 = never used (all-zero is not a unicast source). */
	_Atomic uint64_t key;
	_Atomic uint64_t seen_ns; /* last time the MAC was a source */
};

struct l2_stats {
	_Atomic uint64_t learned;  /* new MACs */
	_Atomic uint64_t moved;    /* a known MAC seen on another port */
	_Atomic uint64_t evicted;  /* live entries pushed out by a full probe window */
};

struct l2_table {
	struct l2_entry *slots;
	uint32_t mask;
	uint16_t group_fwd_mask; /* reserved group addresses let through (l2_classify) */
	uint16_t _pad;
	uint64_t aging_ns;
	struct l2_stats stats;
};

/* size: power of two >= L2_PROBE. 0 or -ENOMEM/-EINVAL. */
int l2_table_init(struct l2_table *t, uint32_t size, uint64_t aging_ns);
void l2_table_fini(struct l2_table *t);

/* A frame from mac arrived on port (0..65534) at now_ns. Multicast/broadcast sources are
 * ignored, and so is a sighting on another port older than the entry's last one. */
void l2_learn(struct l2_table *t, const uint8_t mac[6], int32_t port, uint64_t now_ns);
/* The port behind mac, or L2_NO_PORT (unknown, aged out, or a group address: flood). */
int32_t l2_lookup(const struct l2_table *t, const uint8_t mac[6], uint64_t now_ns);
/* A port removed (main thread, workers parked): its entries point nowhere (L2_NO_PORT, so a
 * frame to them floods until the MAC is seen again) and are aged out. Returns how many. */
uint32_t l2_forget_port(struct l2_table *t, int32_t port);
/* Live (not aged-out) entries. */
uint32_t l2_count(const struct l2_table *t, uint64_t now_ns);

static inline bool l2_is_group(const uint8_t mac[6])
{
	return mac[0] & 1; /* I/G bit: broadcast and multicast */
}

/* What a bridge does with a frame before learning and forwarding it (the Linux bridge's
 * br_handle_frame, net/bridge/br_input.c, without STP). */
enum l2_verdict {
	L2_FORWARD,
	L2_RESERVED,  /* an IEEE 802.1D reserved group address (01:80:c2:00:00:01-0f) */
	L2_SRC_GROUP, /* the source is a group (multicast, broadcast) address */
	L2_SRC_ZERO,  /* the source is 00:00:00:00:00:00 */
};

/* The bits of group_fwd_mask a Linux 802.1D bridge refuses (BR_GROUPFWD_RESTRICTED in
 * net/bridge/br_private.h: STP :00, pause :01, LACP :02): :00 is always forwarded here (no
 * STP), :01 and :02 never. */
#define L2_GROUPFWD_RESTRICTED 0x0007u

/* eth: at least the 14-byte Ethernet header. group_fwd_mask: bit X lets 01:80:c2:00:00:0X
 * through (as the bridge's group_fwd_mask; restricted bits are the caller's to refuse). */
static inline enum l2_verdict l2_classify(const uint8_t *eth, uint16_t group_fwd_mask)
{
	static const uint8_t reserved[5] = { 0x01, 0x80, 0xc2, 0x00, 0x00 };
	const uint8_t *src = eth + 6;

	/* The bridge's is_valid_ether_addr() check on the source comes first. */
	if (l2_is_group(src))
		return L2_SRC_GROUP;
	if (!(src[0] | src[1] | src[2] | src[3] | src[4] | src[5]))
		return L2_SRC_ZERO;
	if (memcmp(eth, reserved, 5) || (eth[5] & 0xf0))
		return L2_FORWARD;
	/* :00 (STP BPDUs): a bridge without STP relays them, so that loops stay detectable. */
	if (eth[5] == 0x00)
		return L2_FORWARD;
	if (eth[5] == 0x01) /* MAC control (pause): never, whatever the mask */
		return L2_RESERVED;
	return (group_fwd_mask >> eth[5]) & 1 ? L2_FORWARD : L2_RESERVED;
}

/* A live entry of the table, as l2_walk reports it. */
struct l2_entry_view {
	uint8_t mac[6];
	int32_t port;
	uint64_t age_ns;
};

/* Calls fn (unless NULL) for each live entry (table order). Returns the number of entries reported. */
uint32_t l2_walk(const struct l2_table *t, uint64_t now_ns,
		 void (*fn)(const struct l2_entry_view *e, void *arg), void *arg);

#endif
