/* SPDX-License-Identifier: MIT */
/*
 * Lock-free readers against one writer (umem/lpm.h's concurrency contract): readers look up
 * addresses in a small region while the writer adds, replaces and deletes prefixes there, with
 * few groups, so groups are created, folded, quarantined and reused all the time. Every next
 * hop is used once: the writer records which prefix it went to before the add, so a reader
 * checks that what it found was assigned to a prefix covering its address. A group reused
 * before every reader passed a quiescent point (reclaim too early) or an unfilled group linked
 * would show as a next hop of a prefix elsewhere, or one never assigned.
 *   test_lpm_threads 4|6 [--ops N]
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <umem/lpm.h>
#include "testutil.h"

#define READERS 2
#define SLOTS 512 /* live prefixes the writer keeps */

struct assigned {
	uint8_t key[16];
	uint8_t depth;
};

static unsigned alen;
static struct umem_lpm4 *l4;
static struct umem_lpm6 *l6;
static struct assigned *hist;         /* by next hop */
static _Atomic uint32_t next_nh;      /* next hops below this were assigned (release) */
static _Atomic bool stop;
static _Atomic uint64_t quiescent[READERS];
static _Atomic uint64_t reader_hits[READERS], reader_lookups[READERS];
/* The region: base's first 14 bits (IPv4) or 20 bits (IPv6) are fixed. */
static uint8_t base[16] = { 0x0a, 0x40, 0x00, 0x00, 0x20, 0x01, 0x0d, 0xb8 };

static void region_addr(uint64_t *seed, uint8_t *a)
{
	unsigned fixed = alen == 4 ? 14 : 20;

	for (unsigned i = 0; i < alen; i++)
		a[i] = (uint8_t)test_rand(seed);
	for (unsigned i = 0; i < fixed; i++) {
		unsigned byte = i / 8, bit = 7 - i % 8;

		a[byte] = (uint8_t)((a[byte] & ~(1u << bit)) | (base[byte] & (1u << bit)));
	}
	if (alen == 16) /* keep IPv6 addresses in few /48s, so the walk is deep */
		for (unsigned i = 3; i < 6; i++)
			a[i] = (uint8_t)(base[i] ^ (a[i] & 0x01));
}

static bool covers(const uint8_t *key, unsigned depth, const uint8_t *addr)
{
	unsigned whole = depth / 8, rest = depth % 8;

	if (memcmp(key, addr, whole))
		return false;
	return !rest || !((key[whole] ^ addr[whole]) & (0xff00u >> rest));
}

static uint32_t be32(const uint8_t *a)
{
	return (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
}

static void *reader(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	uint64_t seed = 0x1234567ull + id * 7919;
	uint8_t a[32][16];
	uint32_t nh[32], v4[32];

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (unsigned i = 0; i < 32; i++)
			region_addr(&seed, a[i]);
		if (alen == 4) {
			for (unsigned i = 0; i < 32; i++)
				v4[i] = be32(a[i]);
			if (seed & 1) {
				umem_lpm4__lookup_bulk(l4, v4, nh, 32);
			} else {
				for (unsigned i = 0; i < 32; i++)
					if (umem_lpm4__lookup(l4, v4[i], &nh[i]))
						nh[i] = UMEM_LPM_MISS;
			}
		} else {
			umem_lpm6__lookup_bulk(l6, (const uint8_t (*)[16])a, nh, 32);
		}
		uint32_t limit = atomic_load_explicit(&next_nh, memory_order_acquire);

		for (unsigned i = 0; i < 32; i++) {
			if (nh[i] == UMEM_LPM_MISS)
				continue;
			CHECK(nh[i] < limit, "reader %u: next hop %u was never assigned (%u so far)", id,
			      nh[i], limit);
			CHECK(covers(hist[nh[i]].key, hist[nh[i]].depth, a[i]),
			      "reader %u: next hop %u belongs to a /%u that does not cover the address", id,
			      nh[i], hist[nh[i]].depth);
			atomic_fetch_add_explicit(&reader_hits[id], 1, memory_order_relaxed);
		}
		atomic_fetch_add_explicit(&reader_lookups[id], 32, memory_order_relaxed);
		/* A quiescent point: this reader holds nothing it read before. */
		atomic_fetch_add_explicit(&quiescent[id], 1, memory_order_release);
	}
	return NULL;
}

/* Waits until every reader passed a quiescent point after now, then reclaims. */
static void grace_and_reclaim(void)
{
	uint64_t snap[READERS];

	for (unsigned i = 0; i < READERS; i++)
		snap[i] = atomic_load_explicit(&quiescent[i], memory_order_acquire);
	for (unsigned i = 0; i < READERS; i++)
		while (atomic_load_explicit(&quiescent[i], memory_order_acquire) == snap[i])
			sched_yield();
	if (alen == 4)
		umem_lpm4__reclaim(l4);
	else
		umem_lpm6__reclaim(l6);
}

static int w_add(const uint8_t *a, unsigned depth, uint32_t nh)
{
	return alen == 4 ? umem_lpm4__add(l4, be32(a), (uint8_t)depth, nh)
			 : umem_lpm6__add(l6, a, (uint8_t)depth, nh);
}

static int w_delete(const uint8_t *a, unsigned depth)
{
	return alen == 4 ? umem_lpm4__delete(l4, be32(a), (uint8_t)depth)
			 : umem_lpm6__delete(l6, a, (uint8_t)depth);
}

static unsigned w_depth(uint64_t *seed)
{
	static const unsigned v4[] = { 14, 16, 20, 24, 24, 25, 26, 28, 30, 32, 32, 32 };
	static const unsigned v6[] = { 20, 24, 32, 40, 47, 48, 48, 52, 56, 64, 96, 128 };

	return alen == 4 ? v4[test_rand(seed) % 12] : v6[test_rand(seed) % 12];
}

int main(int argc, char **argv)
{
	unsigned ops = argc > 3 && !strcmp(argv[2], "--ops") ? (unsigned)strtoul(argv[3], NULL, 0) : 200000;
	uint64_t seed = 0xfeedull;
	struct assigned live[SLOTS];
	bool used[SLOTS] = { false };
	pthread_t th[READERS];
	unsigned enospc = 0, reclaims = 0;

	alen = argc > 1 && !strcmp(argv[1], "6") ? 16 : 4;
	hist = calloc((size_t)ops + 1, sizeof(*hist));
	CHECK(hist, "out of memory");
	if (alen == 4) {
		struct umem_lpm4_opts o = { .sz = sizeof(o), .tbl8_groups = 16 };

		l4 = umem_lpm4__create(&o);
		CHECK(l4, "create: %s", strerror(errno));
	} else {
		struct umem_lpm6_opts o = { .sz = sizeof(o), .groups = 160 };

		l6 = umem_lpm6__create(&o);
		CHECK(l6, "create: %s", strerror(errno));
	}
	for (unsigned i = 0; i < READERS; i++)
		CHECK(!pthread_create(&th[i], NULL, reader, (void *)(uintptr_t)i), "pthread_create");

	for (unsigned op = 0; op < ops; op++) {
		unsigned s = (unsigned)(test_rand(&seed) % SLOTS);

		if (used[s] && test_rand(&seed) % 3 == 0) {
			CHECK_EQ(w_delete(live[s].key, live[s].depth), 0);
			used[s] = false;
			continue;
		}
		/* An add or a replace of slot s's prefix, with a next hop never used before. */
		uint32_t nh = atomic_load_explicit(&next_nh, memory_order_relaxed);
		struct assigned p = { .depth = 0 };

		if (used[s]) {
			p = live[s];
		} else {
			region_addr(&seed, p.key);
			p.depth = (uint8_t)w_depth(&seed);
			for (unsigned i = p.depth; i < alen * 8; i++)
				p.key[i / 8] &= (uint8_t)~(1u << (7 - i % 8));
			bool dup = false; /* one slot per prefix, so a slot's delete finds it */

			for (unsigned i = 0; i < SLOTS && !dup; i++)
				dup = used[i] && live[i].depth == p.depth && !memcmp(live[i].key, p.key, 16);
			if (dup)
				continue;
		}
		hist[nh] = p;
		atomic_store_explicit(&next_nh, nh + 1, memory_order_release);
		int err = w_add(p.key, p.depth, nh);

		if (err == -ENOSPC) { /* out of groups: wait for the readers, reclaim, retry */
			enospc++;
			grace_and_reclaim();
			reclaims++;
			err = w_add(p.key, p.depth, nh);
		}
		if (err == -ENOSPC) { /* still full: make room */
			for (unsigned i = 0; i < SLOTS; i++)
				if (used[i] && i != s) {
					CHECK_EQ(w_delete(live[i].key, live[i].depth), 0);
					used[i] = false;
				}
			grace_and_reclaim();
			err = w_add(p.key, p.depth, nh);
		}
		CHECK_EQ(err, 0);
		live[s] = p;
		used[s] = true;
		if (op % 4096 == 0) {
			grace_and_reclaim();
			reclaims++;
		}
	}
	atomic_store(&stop, true);
	uint64_t hits = 0, lookups = 0;

	for (unsigned i = 0; i < READERS; i++) {
		pthread_join(th[i], NULL);
		hits += reader_hits[i];
		lookups += reader_lookups[i];
	}
	CHECK(hits > 0, "the readers never found a prefix");
	printf("lpm%u threads: %u writer ops, %llu lookups (%llu matched), %u ENOSPC, %u reclaims\n",
	       alen == 4 ? 4 : 6, ops, (unsigned long long)lookups, (unsigned long long)hits, enospc,
	       reclaims);
	umem_lpm4__destroy(l4);
	umem_lpm6__destroy(l6);
	free(hist);
	return 0;
}
