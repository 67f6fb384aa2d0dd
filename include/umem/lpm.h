/* SPDX-License-Identifier: MIT */
/*
 * libumem longest-prefix match for IPv4 and IPv6: an index from a destination address to a
 * next-hop id (0..UMEM_LPM_NH_MAX), one writer, any number of lock-free readers.
 *
 * Structure: a multibit trie whose first level is indexed by the address's top 24 bits (a
 * 2^24-entry table) and whose further levels are groups of 256 entries, one per following
 * byte. For IPv4 that is DIR-24-8 (Gupta, Lin, McKeown, "Routing Lookups in Hardware at
 * Memory Access Speeds", INFOCOM 1998): one load for a prefix up to /24, two beyond. IPv6
 * walks one group per byte beyond the 24th bit (a /48 is four loads), as DPDK's rte_lpm6.
 * Every entry is 4 bytes: valid, extended (points to a group), the depth relative to its
 * level, and 24 bits of next hop or group index. The writer keeps the prefixes in a hash on
 * the side (a delete restores the longest covering prefix from it) and, per group, the prefix
 * its unmarked entries inherit from above.
 *
 * Memory: the first level is 64 MiB (2^24 entries of 4 bytes) per family, backed at creation,
 * in transparent huge pages where the kernel allows (every lookup reads it at a random place);
 * groups are 1 KiB each, from a lazily mapped pool of opts.tbl8_groups / opts.groups; the
 * prefix hash is 12 (IPv4) or 24 (IPv6) bytes a slot at most 3/4 full. umem_lpm4__memory
 * gives the sum for a table (docs/ROUTING.md, "Lookup structure", has the figures for a full
 * Internet table).
 *
 * Concurrency: one writer (add, delete, reclaim) at a time; lookups from any thread at any
 * time, lock-free, see either the old or the new next hop of a prefix being changed, never
 * garbage: every entry changes with one aligned 32-bit store, and a new group is filled before
 * the release store that links it. A group a change frees is not reused until the writer calls
 * reclaim, which the caller does only after every reader has passed a quiescent point since
 * the change (an RCU grace period: the router's workers report one per burst). A writer that
 * runs out of groups while some wait for reclaim gets -ENOSPC; reclaim and retry.
 *
 * Addresses: IPv4 in host byte order (a uint32_t, 10.0.0.1 is 0x0a000001), IPv6 as 16 bytes in
 * network byte order (as in the packet). Bits beyond the depth are ignored (masked).
 */
#ifndef UMEM_LPM_H
#define UMEM_LPM_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <umem/common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UMEM_LPM_NH_MAX ((1u << 24) - 1) /* next hops are ids 0..UMEM_LPM_NH_MAX */
#define UMEM_LPM_MISS UINT32_MAX         /* a bulk lookup's result where no prefix matches */
#define UMEM_LPM4_GROUPS_DEFAULT 65536u  /* opts.tbl8_groups 0 (64 MiB of address space) */
#define UMEM_LPM6_GROUPS_DEFAULT 262144u /* opts.groups 0 (256 MiB of address space) */
#define UMEM_LPM_GROUPS_MAX (1u << 24)   /* a group index is 24 bits */

struct umem_lpm4_opts {
	size_t sz;             /* sizeof(struct umem_lpm4_opts) */
	uint32_t max_prefixes; /* more are refused with -ENOSPC; 0: no limit but memory */
	uint32_t tbl8_groups;  /* 256-entry groups for prefixes longer than /24 (1 KiB each,
				* mapped lazily); 0: UMEM_LPM4_GROUPS_DEFAULT */
};

struct umem_lpm4;

/* An empty table. opts may be NULL (all defaults). Fails (NULL, errno) with EINVAL (a bad sz,
 * tbl8_groups over UMEM_LPM_GROUPS_MAX; a message names it) or ENOMEM. */
UMEM_API struct umem_lpm4 *umem_lpm4__create(const struct umem_lpm4_opts *opts);
/* Frees the table, quarantined groups included. NULL is a no-op. Readers must be gone. */
UMEM_API void umem_lpm4__destroy(struct umem_lpm4 *lpm);
/* Adds addr/depth -> next_hop, or replaces the next hop of that prefix when it exists.
 * 0, or -EINVAL (depth over 32, next_hop over UMEM_LPM_NH_MAX), -ENOSPC (max_prefixes reached,
 * or no free group: reclaim may free some), -ENOMEM. On error nothing changed. */
UMEM_API int umem_lpm4__add(struct umem_lpm4 *lpm, uint32_t addr, uint8_t depth, uint32_t next_hop);
/* Removes addr/depth; its addresses fall back to the longest prefix that covers it, if any.
 * 0, or -EINVAL (depth over 32), -ENOENT (no such prefix). */
UMEM_API int umem_lpm4__delete(struct umem_lpm4 *lpm, uint32_t addr, uint8_t depth);
/* 0 and *next_hop, or -ENOENT when no prefix matches addr. Inline, the fast path: one load
 * for a match up to /24, two beyond. lookup_bulk: n lookups, next_hops[i] is UMEM_LPM_MISS
 * where no prefix matches addrs[i]; inline too (a constant n, as 32, is compiled for), and
 * exported under the same name for a caller that takes its address or was built before. */
static inline int umem_lpm4__lookup(const struct umem_lpm4 *lpm, uint32_t addr, uint32_t *next_hop);
UMEM_API void umem_lpm4__lookup_bulk(const struct umem_lpm4 *lpm, const uint32_t *addrs,
				     uint32_t *next_hops, uint32_t n);
/* Bytes in use: the first level, the groups ever used, the writer's prefix hash. */
UMEM_API size_t umem_lpm4__memory(const struct umem_lpm4 *lpm);
/* Makes the groups freed before the last quiescent point of every reader reusable. */
UMEM_API void umem_lpm4__reclaim(struct umem_lpm4 *lpm);
/* Prefixes in the table. */
UMEM_API uint32_t umem_lpm4__count(const struct umem_lpm4 *lpm);

/* Entry bits. Exposed only for the inline lookup: their layout is ABI (lib/abi.c). */
#define UMEM__LPM_VALID 0x80000000u /* a next hop is in the low 24 bits */
#define UMEM__LPM_EXT 0x40000000u   /* a group index is in the low 24 bits */
#define UMEM__LPM_LOW 0x00ffffffu

/* The first member of struct umem_lpm4, for the inline lookup: private fields, ABI layout. */
struct umem_lpm4_fast {
	const uint32_t *tbl24; /* 2^24 entries, by the address's top 24 bits */
	const uint32_t *tbl8;  /* groups of 256 entries, by group index * 256 + the low byte */
};

static inline int umem_lpm4__lookup(const struct umem_lpm4 *lpm, uint32_t addr, uint32_t *next_hop)
{
	const struct umem_lpm4_fast *f = (const struct umem_lpm4_fast *)lpm;
	/* Acquire pairs with the writer's release stores (a filled group is linked, a next hop
	 * stored after the caller's record of it): plain loads on x86. */
	uint32_t e = __atomic_load_n(&f->tbl24[addr >> 8], __ATOMIC_ACQUIRE);

	if (__builtin_expect(!!(e & UMEM__LPM_EXT), 0))
		e = __atomic_load_n(&f->tbl8[((e & UMEM__LPM_LOW) << 8) | (addr & 0xffu)],
				    __ATOMIC_ACQUIRE);
	if (!(e & UMEM__LPM_VALID))
		return -ENOENT;
	*next_hop = e & UMEM__LPM_LOW;
	return 0;
}

/* An entry's next hop, or UMEM_LPM_MISS, in masks (UMEM__LPM_VALID is the top bit): branch-free,
 * for a pass over a bulk's entries of their own, where a branch would be mispredicted at every
 * other miss of random addresses. e is read more than once: a plain variable. */
#define UMEM__LPM_RESULT(e) (((e) & UMEM__LPM_LOW & (0u - ((e) >> 31))) | ~(0u - ((e) >> 31)))

/* GNU C's extern inline (as glibc's __extern_always_inline): the body below is only ever inlined,
 * a call that takes the function's address gets the library's exported copy, which lib/lpm.c
 * compiles from the same body by defining this macro empty. */
#ifndef UMEM__LPM_INLINE
#define UMEM__LPM_INLINE extern __inline__ __attribute__((__gnu_inline__, __always_inline__))
#endif

/* A bulk's burst: the entries a prefetch pass has in flight before they are read. */
#define UMEM__LPM_BURST 32u

/* A burst at a time: its first-level entries prefetched, so their misses overlap; then loaded
 * and stored raw; then made next hops or UMEM_LPM_MISS in a pass of their own, branch-free
 * (vectorised for a constant n), so no result's test stands between the loads. Inline, for
 * the caller's constant (32 in the router). Measured (route-bench, 1M IPv4 prefixes, random
 * addresses): without the prefetch pass the bulk of 32 was 1.2x-1.3x rte_lpm's time, with it
 * below; a choice made in the loading loop (cmov) was slower than the pass of its own. */
UMEM_API UMEM__LPM_INLINE void umem_lpm4__lookup_bulk(const struct umem_lpm4 *lpm, const uint32_t *addrs,
						      uint32_t *next_hops, uint32_t n)
{
	const struct umem_lpm4_fast *f = (const struct umem_lpm4_fast *)lpm;
	/* Read once: an acquire load would make the compiler read them again after each. */
	const uint32_t *tbl24 = f->tbl24, *tbl8 = f->tbl8;
	uint32_t base, i; /* declared here: a caller's C may predate C99 */

	for (base = 0; base < n; base += UMEM__LPM_BURST) {
		uint32_t m = n - base < UMEM__LPM_BURST ? n - base : UMEM__LPM_BURST;
		const uint32_t *a = addrs + base;
		uint32_t *r = next_hops + base;

		for (i = 0; i < m; i++)
			__builtin_prefetch(&tbl24[a[i] >> 8]);
		for (i = 0; i < m; i++) {
			uint32_t e = __atomic_load_n(&tbl24[a[i] >> 8], __ATOMIC_ACQUIRE);

			if (__builtin_expect(!!(e & UMEM__LPM_EXT), 0))
				e = __atomic_load_n(&tbl8[((e & UMEM__LPM_LOW) << 8) | (a[i] & 0xffu)],
						    __ATOMIC_ACQUIRE);
			r[i] = e;
		}
		for (i = 0; i < m; i++) {
			uint32_t e = r[i];

			r[i] = UMEM__LPM_RESULT(e);
		}
	}
}

/* IPv6: the same with 16-byte addresses in network byte order, depth 0..128. */
struct umem_lpm6_opts {
	size_t sz;             /* sizeof(struct umem_lpm6_opts) */
	uint32_t max_prefixes; /* more are refused with -ENOSPC; 0: no limit but memory */
	uint32_t groups;       /* 256-entry groups below the first 24 bits; 0: UMEM_LPM6_GROUPS_DEFAULT */
};

struct umem_lpm6;

/* As umem_lpm4__create. */
UMEM_API struct umem_lpm6 *umem_lpm6__create(const struct umem_lpm6_opts *opts);
UMEM_API void umem_lpm6__destroy(struct umem_lpm6 *lpm);
/* As umem_lpm4__add; depth 0..128. A prefix may need up to 13 groups; on -ENOSPC nothing
 * changed. */
UMEM_API int umem_lpm6__add(struct umem_lpm6 *lpm, const uint8_t addr[16], uint8_t depth,
			    uint32_t next_hop);
UMEM_API int umem_lpm6__delete(struct umem_lpm6 *lpm, const uint8_t addr[16], uint8_t depth);
/* 0 and *next_hop, or -ENOENT. */
UMEM_API int umem_lpm6__lookup(const struct umem_lpm6 *lpm, const uint8_t addr[16], uint32_t *next_hop);
UMEM_API void umem_lpm6__lookup_bulk(const struct umem_lpm6 *lpm, const uint8_t (*addrs)[16],
				     uint32_t *next_hops, uint32_t n);
UMEM_API size_t umem_lpm6__memory(const struct umem_lpm6 *lpm);
UMEM_API void umem_lpm6__reclaim(struct umem_lpm6 *lpm);
UMEM_API uint32_t umem_lpm6__count(const struct umem_lpm6 *lpm);

#ifdef __cplusplus
}
#endif

#endif
