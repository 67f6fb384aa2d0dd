/* SPDX-License-Identifier: MIT */
/*
 * xdp-fwd l2: the MAC table of the learning bridge.
 *
 * Open addressing with linear probing inside a bounded window (L2_PROBE slots). Entries age
 * lazily: an entry older than the aging time is invisible to lookups and free for reuse, but
 * stays in place so that probe chains behind it stay intact (no tombstones needed). When a
 * window is full of live entries the oldest one is evicted. Time is passed in by the caller
 * (nanoseconds, any monotonic origin), so the table is pure logic and tests drive the clock.
 * Not thread-safe: the caller serializes (xdp-fwd takes a lock once per burst).
 */
#ifndef XDP_FWD_L2_H
#define XDP_FWD_L2_H

#include <stdbool.h>
#include <stdint.h>

#define L2_PROBE 16
#define L2_NO_PORT (-1)

struct l2_entry {
	uint64_t mac;     /* 48-bit MAC; 0 = never used (all-zero is not a unicast source) */
	uint64_t seen_ns; /* last time the MAC was a source */
	int32_t port;
	uint32_t _pad;
};

struct l2_stats {
	uint64_t learned;  /* new MACs */
	uint64_t moved;    /* a known MAC seen on another port */
	uint64_t evicted;  /* live entries pushed out by a full probe window */
};

struct l2_table {
	struct l2_entry *slots;
	uint32_t mask;
	uint32_t _pad;
	uint64_t aging_ns;
	struct l2_stats stats;
};

/* size: power of two >= L2_PROBE. 0 or -ENOMEM/-EINVAL. */
int l2_table_init(struct l2_table *t, uint32_t size, uint64_t aging_ns);
void l2_table_fini(struct l2_table *t);

/* A frame from mac arrived on port at now_ns. Multicast/broadcast sources are ignored. */
void l2_learn(struct l2_table *t, const uint8_t mac[6], int32_t port, uint64_t now_ns);
/* The port behind mac, or L2_NO_PORT (unknown, aged out, or a group address: flood). */
int32_t l2_lookup(const struct l2_table *t, const uint8_t mac[6], uint64_t now_ns);
/* Live (not aged-out) entries. */
uint32_t l2_count(const struct l2_table *t, uint64_t now_ns);

static inline bool l2_is_group(const uint8_t mac[6])
{
	return mac[0] & 1; /* I/G bit: broadcast and multicast */
}

#endif
