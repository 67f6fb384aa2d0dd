/* SPDX-License-Identifier: MIT */
/*
 * The fragment page rules that skip an atomic, raced by another thread (also run under TSan):
 *  - exact: a page claimed for two 2 KiB fragments is closed by the second one with nothing to
 *    subtract, while another thread puts the first (the remote put racing the close);
 *  - rest: a page claimed for four 1 KiB fragments is closed early by a 2 KiB one, so the rest
 *    of its claim goes through the owner's put path (into the put slot), raced the same way;
 *  - then the owner puts its own fragment while the other thread puts its one: the owner either
 *    sees the last reference (count 1), or keeps its put in the slot, and the page waits there
 *    until the slot moves on.
 * Every round the owner checks that no fragment it gets overlaps one still live (a page
 * recycled twice, or while a fragment lives, is handed out again), and at the end every page
 * must be back in the area exactly once (a page in the store twice aborts).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <umem/pool.h>
#include "testutil.h"

#define NR_PAGES 256
#define ROUNDS 100000
#define GRAIN 1024 /* the smallest fragment here */

static struct umem_area *area;
static struct umem_pool *remote_pool;
static atomic_uchar live[NR_PAGES * 4096 / GRAIN];
static _Atomic uint64_t handed; /* fragment address + 1 for the remote thread; 0: none */
static uint32_t handed_len;     /* written before handed */
static atomic_uint done_rounds, spin_seed;
static atomic_int stop;

static void spin(uint32_t n)
{
	for (volatile uint32_t i = 0; i < n; i++)
		;
}

/* A wait for the other thread: spin first (the race wants both on a CPU at once), then give the
 * CPU away, so on a busy machine, where the two may share one CPU, a hand-off costs a switch
 * rather than a time slice. */
static void wait_turn(uint32_t *spins)
{
	if (++*spins > 256)
		sched_yield();
}

static void mark(uint64_t addr, uint32_t len, unsigned char v)
{
	for (uint64_t g = addr / GRAIN; g < (addr + len) / GRAIN; g++) {
		unsigned char was = atomic_exchange_explicit(&live[g], v, memory_order_acq_rel);

		CHECK(was != v, "fragment 0x%llx+%u: granule %llu already %s", (unsigned long long)addr,
		      len, (unsigned long long)g, v ? "live (handed out twice)" : "free");
	}
}

static void *remote(void *arg)
{
	(void)arg;
	for (uint32_t spins = 0; !atomic_load(&stop);) {
		uint64_t h = atomic_load_explicit(&handed, memory_order_acquire);

		if (!h) {
			wait_turn(&spins);
			continue;
		}
		spins = 0;
		atomic_store_explicit(&handed, 0, memory_order_relaxed);
		spin(atomic_load_explicit(&spin_seed, memory_order_relaxed) % 64);
		mark(h - 1, handed_len, 0);
		umem_pool__put(remote_pool, h - 1);
		atomic_fetch_add_explicit(&done_rounds, 1, memory_order_release);
	}
	return NULL;
}

/* One mode: the first fragment (first_size, handed to the remote thread) and the closing one. */
static void run(uint32_t first_size, const char *name)
{
	UMEM_OPTS(umem_area_opts, ao, .page_size = 4096);
	struct umem_pool *p;
	pthread_t th;
	uint64_t rng = 7;

	area = umem_area__create(NR_PAGES, &ao);
	CHECK(area, "area: %s", strerror(errno));
	p = umem_pool__create(area, NULL);
	remote_pool = umem_pool__create(area, NULL);
	CHECK(p && remote_pool, "pools: %s", strerror(errno));
	atomic_store(&stop, 0);
	atomic_store(&done_rounds, 0);
	CHECK(!pthread_create(&th, NULL, remote, NULL), "thread");
	for (uint32_t r = 0; r < ROUNDS; r++) {
		uint64_t f1, f2;
		uint32_t ts;

		CHECK_EQ(umem_pool__alloc_frag(p, first_size, &f1, NULL), 0);
		mark(f1, first_size, 1);
		/* The remote thread puts f1 while the owner still carves the page: its put races
		 * the close (exact: inline, nothing subtracted; rest: the claim's rest into the
		 * slot), and then the owner's own put. */
		handed_len = first_size;
		atomic_store_explicit(&spin_seed, (uint32_t)test_rand(&rng), memory_order_relaxed);
		atomic_store_explicit(&handed, f1 + 1, memory_order_release);
		spin((uint32_t)test_rand(&rng) % 64);
		CHECK_EQ(umem_pool__alloc_frag(p, 2048, &f2, &ts), 0);
		CHECK(f2 / 4096 == f1 / 4096 && f2 % 4096 + ts == 4096,
		      "%s: 0x%llx/%u does not close the page of 0x%llx", name,
		      (unsigned long long)f2, ts, (unsigned long long)f1);
		mark(f2, ts, 1);
		spin((uint32_t)test_rand(&rng) % 64);
		mark(f2, ts, 0);
		umem_pool__put(p, f2);
		for (uint32_t spins = 0; atomic_load_explicit(&done_rounds, memory_order_acquire) != r + 1;)
			wait_turn(&spins);
	}
	atomic_store(&stop, 1);
	pthread_join(th, NULL);

	struct umem_pool_stats s = { .sz = sizeof(s) };
	CHECK_EQ(umem_pool__stats(p, &s), 0);
	printf("%s: %u rounds, cached %llu, ring %llu, drained %llu\n", name, ROUNDS,
	       (unsigned long long)s.recycle.cached, (unsigned long long)s.recycle.ring,
	       (unsigned long long)s.frag_pages_drained);
	CHECK_EQ(s.frag_pages_drained, ROUNDS);
	/* Every page came home once: through the owner's cache or the ring, or waits in the slot
	 * (flushed by destroy). */
	CHECK(s.recycle.cached + s.recycle.ring >= ROUNDS - 1, "%s: pages lost", name);
	CHECK_EQ(umem_pool__destroy(remote_pool), 0);
	CHECK_EQ(umem_pool__destroy(p), 0);
	CHECK_EQ(umem_area__free_pages(area), NR_PAGES);
	CHECK_EQ(umem_area__destroy(area), 0);
}

int main(void)
{
	run(2048, "exact"); /* claim 2: the second fragment closes the page inline */
	run(1024, "rest");  /* claim 4, closed by a 2 KiB fragment: 2 references of rest */
	return 0;
}
