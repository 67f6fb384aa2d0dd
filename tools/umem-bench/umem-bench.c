/* SPDX-License-Identifier: MIT */
/*
 * umem-bench: micro-benchmark of the libumem allocator paths, with the baselines (an empty loop,
 * a mutex-protected free list, DPDK's mempool when built) measured in the same run, and the
 * UMEM bytes each live frame costs. Medians over rounds; prints text, or JSON with --json.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <umem/pool.h>
#include "cli.h"
#include "counter.h"
#include "cpuinfo.h"
#include "dpdk.h"

#define FRAG_BATCH 32u   /* fragments allocated before they are put: an RX/TX burst */
#define BULK 64u         /* pool_bulk batch: a NAPI budget */
#define SLOW_BATCH 1024u /* pool_slow: pages per fresh pool */
#define RING_PAGES 512u  /* pool_ring: area size; fewer than cache + handoff + ring can park */
#define HANDOFF 256u     /* pool_ring: owner -> worker queue (power of two) */
#define RING_BATCH 32u   /* pool_ring: pages per handoff publication */
#define MEM_FRAMES 512u  /* memory table: live frames per measurement */

/* page_pool's fast path in bench_page_pool_simple (Xeon E5-1650 v4 @ 3.6 GHz), as quoted in
 * the kernel's page_pool commit messages. */
#define KERNEL_FAST_CYCLES 18
#define KERNEL_FAST_NS 5.2

static void die(const char *what, int err)
{
	fprintf(stderr, "umem-bench: %s: %s\n", what, strerror(err));
	exit(1);
}

/* Keeps v alive so the compiler cannot drop the work that produced it. */
static inline void keep(uint64_t v)
{
	__asm__ __volatile__("" : : "r"(v) : "memory");
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

struct path;

/* State of one path while it runs. */
struct run {
	const struct path *path;
	struct umem_area *area;
	struct umem_pool *pool;  /* its stats give the slow-path counts */
	uint64_t slow_acc;       /* slow-path counts of pools already destroyed (pool_slow) */
	uint64_t held_acc;
	void *priv;
};

struct path {
	const char *name;
	const char *what; /* --help */
	int (*init)(struct run *r);
	/* Runs about ops operations and returns how many it ran (whole batches). */
	uint64_t (*loop)(struct run *r, uint64_t ops);
	void (*fini)(struct run *r);
	uint32_t frag_size, page_size; /* frag_* paths */
	uint32_t variant;              /* pool_ring*: enum ring_mode; frag_*: enum frag_put */
	bool pool_stats;               /* report slow-path allocations */
};

/* ---- shared set-up ---------------------------------------------------------------------- */

static int env_init(struct run *r, uint32_t nr_pages, uint32_t page_size)
{
	UMEM_OPTS(umem_area_opts, ao, .page_size = page_size);

	r->area = umem_area__create(nr_pages, &ao);
	if (!r->area)
		return -errno;
	r->pool = umem_pool__create(r->area, NULL);
	if (!r->pool) {
		int err = -errno;

		umem_area__destroy(r->area);
		r->area = NULL;
		return err;
	}
	return 0;
}

static void env_fini(struct run *r)
{
	int out;

	free(r->priv);
	if (r->pool && (out = umem_pool__destroy(r->pool)))
		fprintf(stderr, "umem-bench: %s: %d page(s) still out at the end\n", r->path->name, out);
	if (r->area && umem_area__destroy(r->area))
		fprintf(stderr, "umem-bench: %s: area still busy at the end\n", r->path->name);
}

static void slow_counts(const struct run *r, uint64_t *slow, uint64_t *held)
{
	UMEM_OPTS(umem_pool_stats, st);

	*slow = r->slow_acc;
	*held = r->held_acc;
	if (r->pool && !umem_pool__stats(r->pool, &st)) {
		*slow += st.alloc.slow + st.alloc.slow_high_order;
		*held += st.pages_held;
	}
}

/* ---- baselines ---------------------------------------------------------------------------- */

static int none_init(struct run *r) { return 0; }
static void none_fini(struct run *r) {}

static uint64_t loop_run(struct run *r, uint64_t ops)
{
	for (uint64_t i = 0; i < ops; i++)
		__asm__ __volatile__("" ::: "memory");
	return ops;
}

/* A LIFO stack of frame addresses under a mutex, the allocator of most AF_XDP programs. */
#define FREELIST_FRAMES 1024u
struct freelist {
	pthread_mutex_t lock;
	uint32_t count;
	uint64_t addrs[FREELIST_FRAMES];
};

static struct freelist *freelist_new(void)
{
	struct freelist *fl = malloc(sizeof(*fl));

	if (!fl)
		return NULL;
	pthread_mutex_init(&fl->lock, NULL);
	for (uint32_t i = 0; i < FREELIST_FRAMES; i++)
		fl->addrs[i] = (uint64_t)i * 4096;
	fl->count = FREELIST_FRAMES;
	return fl;
}

static void freelist_free(struct freelist *fl)
{
	if (!fl)
		return;
	pthread_mutex_destroy(&fl->lock);
	free(fl);
}

static int freelist_init(struct run *r)
{
	r->priv = freelist_new();
	return r->priv ? 0 : -ENOMEM;
}

static inline int freelist_alloc(struct freelist *fl, uint64_t *addr)
{
	int err = 0;

	pthread_mutex_lock(&fl->lock);
	if (fl->count)
		*addr = fl->addrs[--fl->count];
	else
		err = -ENOMEM;
	pthread_mutex_unlock(&fl->lock);
	return err;
}

static inline void freelist_put(struct freelist *fl, uint64_t addr)
{
	pthread_mutex_lock(&fl->lock);
	fl->addrs[fl->count++] = addr;
	pthread_mutex_unlock(&fl->lock);
}

static uint64_t freelist_run(struct run *r, uint64_t ops)
{
	struct freelist *fl = r->priv;

	for (uint64_t i = 0; i < ops; i++) {
		uint64_t a;

		if (umem_unlikely(freelist_alloc(fl, &a)))
			die("mutex_freelist", ENOMEM);
		keep(a);
		freelist_put(fl, a);
	}
	return ops;
}

static void freelist_fini(struct run *r)
{
	freelist_free(r->priv);
}

#ifdef UMEM_BENCH_DPDK
static int dpdk_init(struct run *r) { return bench_dpdk_init(&r->priv); }
static uint64_t dpdk_run(struct run *r, uint64_t ops) { return bench_dpdk_run(r->priv, ops); }
static void dpdk_fini(struct run *r) { bench_dpdk_fini(r->priv); }
static uint64_t dpdk_bulk_run(struct run *r, uint64_t ops) { return bench_dpdk_run_bulk(r->priv, ops, BULK); }
#endif

/* ---- whole pages ------------------------------------------------------------------------ */

static int pages_init(struct run *r)
{
	return env_init(r, 1024, 4096);
}

static uint64_t fast_run(struct run *r, uint64_t ops)
{
	for (uint64_t i = 0; i < ops; i++) {
		uint64_t a;

		if (umem_unlikely(umem_pool__alloc(r->pool, &a)))
			die("pool_fast: alloc", ENOMEM);
		keep(a);
		umem_pool__put(r->pool, a);
	}
	return ops;
}

static uint64_t bulk_run(struct run *r, uint64_t ops)
{
	uint64_t addrs[BULK], n = (ops + BULK - 1) / BULK;

	for (uint64_t i = 0; i < n; i++) {
		if (umem_unlikely(umem_pool__alloc_bulk(r->pool, addrs, BULK) != (int)BULK))
			die("pool_bulk: alloc_bulk", ENOMEM);
		keep(addrs[BULK - 1]);
		umem_pool__put_bulk(r->pool, addrs, BULK);
	}
	return n * BULK;
}

/* A fresh pool per SLOW_BATCH pages, so no page can come from a cache or ring: every
 * allocation is a bulk refill from the area, and with a 64-entry ring all but 192 of the puts
 * release their page to the area (page_pool's release path), as bench_page_pool03_slow does. */
static int slow_init(struct run *r)
{
	UMEM_OPTS(umem_area_opts, ao, .page_size = 4096);

	r->priv = malloc(SLOW_BATCH * sizeof(uint64_t));
	if (!r->priv)
		return -ENOMEM;
	r->area = umem_area__create(SLOW_BATCH, &ao);
	return r->area ? 0 : -errno;
}

static uint64_t slow_run(struct run *r, uint64_t ops)
{
	UMEM_OPTS(umem_pool_opts, po, .ring_size = 64);
	uint64_t *addrs = r->priv, n = (ops + SLOW_BATCH - 1) / SLOW_BATCH;

	for (uint64_t b = 0; b < n; b++) {
		UMEM_OPTS(umem_pool_stats, st);
		struct umem_pool *p = umem_pool__create(r->area, &po);

		if (!p)
			die("pool_slow: pool create", errno);
		for (uint32_t i = 0; i < SLOW_BATCH; i++)
			if (umem_unlikely(umem_pool__alloc(p, &addrs[i])))
				die("pool_slow: alloc", ENOMEM);
		for (uint32_t i = 0; i < SLOW_BATCH; i++)
			umem_pool__put(p, addrs[i]);
		umem_pool__stats(p, &st);
		r->slow_acc += st.alloc.slow + st.alloc.slow_high_order;
		r->held_acc += st.pages_held;
		if (umem_pool__destroy(p))
			die("pool_slow: pool destroyed with pages out", EBUSY);
	}
	return n * SLOW_BATCH;
}

/* pool_ring: the owner allocates and hands pages to a worker thread through a single-producer
 * queue; the worker puts each page with its own pool, so it travels through the owner's return
 * ring, from which the owner's cache refills. The area holds fewer pages than the queue, the
 * cache and the ring could park, so once warm every allocation is served by the ring.
 * The same harness measures the worker putting in bulk, and the mutex free list shared by
 * both threads (the cross-thread baseline). */
enum ring_mode {
	RING_PUT,      /* umem_pool__put per page */
	RING_PUT_BULK, /* umem_pool__put_bulk per batch */
	RING_MUTEX,    /* mutex free list shared by owner and worker */
};

struct ring_bench {
	_Alignas(64) _Atomic uint64_t tail; /* pages published by the owner */
	_Alignas(64) _Atomic uint64_t head; /* pages put by the worker */
	_Alignas(64) _Atomic int stop;
	bool yield; /* one CPU only: spinning would wait for preemption */
	enum ring_mode mode;
	struct umem_pool *owner_pool;
	struct umem_pool *worker_pool;
	struct freelist *fl;
	pthread_t thread;
	cpu_set_t saved;
	bool pinned, started;
	uint64_t slot[HANDOFF];
};

static inline void ring_wait(const struct ring_bench *rb)
{
	if (rb->yield)
		sched_yield();
	else
		cpu_relax();
}

static void *ring_worker(void *arg)
{
	struct ring_bench *rb = arg;
	uint64_t h = atomic_load_explicit(&rb->head, memory_order_relaxed);

	for (;;) {
		/* Acquire pairs with the owner's release store of tail: the slots are written. */
		uint64_t t = atomic_load_explicit(&rb->tail, memory_order_acquire);

		if (t == h) {
			if (atomic_load_explicit(&rb->stop, memory_order_relaxed))
				break;
			ring_wait(rb);
			continue;
		}
		/* The owner publishes whole batches and HANDOFF is a multiple of RING_BATCH, so a
		 * batch never wraps. */
		for (; h != t; h += RING_BATCH) {
			uint64_t *batch = &rb->slot[h % HANDOFF];

			if (rb->mode == RING_PUT_BULK)
				umem_pool__put_bulk(rb->worker_pool, batch, RING_BATCH);
			else if (rb->mode == RING_PUT)
				for (uint32_t i = 0; i < RING_BATCH; i++)
					umem_pool__put(rb->worker_pool, batch[i]);
			else
				for (uint32_t i = 0; i < RING_BATCH; i++)
					freelist_put(rb->fl, batch[i]);
		}
		/* Release pairs with the owner's acquire load of head: the slots may be reused. */
		atomic_store_explicit(&rb->head, h, memory_order_release);
	}
	return NULL;
}

/* The owner and the worker on two different CPUs, so a page really crosses cores. */
static void ring_pin(struct ring_bench *rb, pthread_attr_t *attr)
{
	cpu_set_t one;
	int cpus[2], k = 0;

	if (sched_getaffinity(0, sizeof(rb->saved), &rb->saved))
		return;
	for (int c = 0; c < CPU_SETSIZE && k < 2; c++)
		if (CPU_ISSET(c, &rb->saved))
			cpus[k++] = c;
	rb->yield = k < 2;
	if (k < 2)
		return;
	CPU_ZERO(&one);
	CPU_SET(cpus[0], &one);
	rb->pinned = !sched_setaffinity(0, sizeof(one), &one);
	CPU_ZERO(&one);
	CPU_SET(cpus[1], &one);
	pthread_attr_setaffinity_np(attr, sizeof(one), &one);
}

static int ring_init(struct run *r)
{
	struct ring_bench *rb = aligned_alloc(64, sizeof(*rb));
	pthread_attr_t attr;
	int err;

	if (!rb)
		return -ENOMEM;
	memset(rb, 0, sizeof(*rb));
	r->priv = rb;
	rb->mode = (enum ring_mode)r->path->variant;
	if (rb->mode == RING_MUTEX) {
		rb->fl = freelist_new();
		if (!rb->fl)
			return -ENOMEM;
	} else {
		err = env_init(r, RING_PAGES, 4096);
		if (err)
			return err;
		rb->owner_pool = r->pool;
		rb->worker_pool = umem_pool__create(r->area, NULL);
		if (!rb->worker_pool)
			return -errno;
	}
	pthread_attr_init(&attr);
	ring_pin(rb, &attr);
	err = -pthread_create(&rb->thread, &attr, ring_worker, rb);
	pthread_attr_destroy(&attr);
	if (!err)
		rb->started = true;
	return err;
}

static inline int ring_alloc(struct ring_bench *rb, uint64_t *addr)
{
	return rb->mode == RING_MUTEX ? freelist_alloc(rb->fl, addr)
				      : umem_pool__alloc(rb->owner_pool, addr);
}

static uint64_t ring_run(struct run *r, uint64_t ops)
{
	struct ring_bench *rb = r->priv;
	uint64_t t = atomic_load_explicit(&rb->tail, memory_order_relaxed), done = 0;

	while (done < ops) {
		/* Acquire pairs with the worker's release store of head: those slots were read. */
		while (t - atomic_load_explicit(&rb->head, memory_order_acquire) > HANDOFF - RING_BATCH)
			ring_wait(rb);
		for (uint32_t i = 0; i < RING_BATCH; i++) {
			uint64_t a;

			/* -ENOMEM: every page is on its way back; it will be in the ring shortly. */
			while (ring_alloc(rb, &a))
				ring_wait(rb);
			rb->slot[(t + i) % HANDOFF] = a;
		}
		t += RING_BATCH;
		/* Release pairs with the worker's acquire load of tail. */
		atomic_store_explicit(&rb->tail, t, memory_order_release);
		done += RING_BATCH;
	}
	/* A round ends when every page it allocated has been put. */
	while (atomic_load_explicit(&rb->head, memory_order_acquire) != t)
		ring_wait(rb);
	return done;
}

static void ring_fini(struct run *r)
{
	struct ring_bench *rb = r->priv;

	if (rb && rb->started) {
		atomic_store_explicit(&rb->stop, 1, memory_order_relaxed);
		pthread_join(rb->thread, NULL);
	}
	if (rb && rb->worker_pool)
		umem_pool__destroy(rb->worker_pool);
	if (rb && rb->pinned)
		sched_setaffinity(0, sizeof(rb->saved), &rb->saved);
	if (rb)
		freelist_free(rb->fl);
	env_fini(r);
}

/* ---- fragments ---------------------------------------------------------------------------- */

enum frag_put {
	FRAG_PUT_EACH, /* umem_pool__put per fragment */
	FRAG_PUT_BULK, /* umem_pool__put_bulk per batch */
};

static int frag_init(struct run *r)
{
	int err = env_init(r, 256, r->path->page_size);

	if (err)
		return err;
	r->priv = malloc(FRAG_BATCH * sizeof(uint64_t));
	return r->priv ? 0 : -ENOMEM;
}

static uint64_t frag_run(struct run *r, uint64_t ops)
{
	uint64_t *addrs = r->priv, n = (ops + FRAG_BATCH - 1) / FRAG_BATCH;
	uint32_t size = r->path->frag_size;

	for (uint64_t b = 0; b < n; b++) {
		for (uint32_t i = 0; i < FRAG_BATCH; i++)
			if (umem_unlikely(umem_pool__alloc_frag(r->pool, size, &addrs[i], NULL)))
				die("frag: alloc_frag", ENOMEM);
		if (r->path->variant == FRAG_PUT_BULK)
			umem_pool__put_bulk(r->pool, addrs, FRAG_BATCH);
		else
			for (uint32_t i = 0; i < FRAG_BATCH; i++)
				umem_pool__put(r->pool, addrs[i]);
	}
	return n * FRAG_BATCH;
}

static int ref_init(struct run *r)
{
	int err = frag_init(r);

	if (err)
		return err;
	err = umem_pool__alloc_frag(r->pool, 64, r->priv, NULL);
	if (err)
		*(uint64_t *)r->priv = UINT64_MAX; /* nothing for ref_fini to put */
	return err;
}

static uint64_t ref_run(struct run *r, uint64_t ops)
{
	uint64_t a = *(uint64_t *)r->priv;

	for (uint64_t i = 0; i < ops; i++) {
		if (umem_unlikely(umem_pool__ref(r->pool, a, 1)))
			die("frag_ref: ref", EOVERFLOW);
		umem_pool__put(r->pool, a);
	}
	return ops;
}

static void ref_fini(struct run *r)
{
	if (r->priv && *(uint64_t *)r->priv != UINT64_MAX)
		umem_pool__put(r->pool, *(uint64_t *)r->priv);
	env_fini(r);
}

/* ---- the path table (order of the output) ------------------------------------------------ */

/* FRAG(name, size, page_size, put, help): a fragment path. */
#define FRAG(n, size, page, put, help)                                                          \
	{ .name = n, .what = help, .init = frag_init, .loop = frag_run, .fini = env_fini,        \
	  .frag_size = size, .page_size = page, .pool_stats = true, .variant = put }

/* ---- the floor of the address-array API ------------------------------------------------- */

/* alloc_bulk/put_bulk with pool_bulk's signature that only move addresses between the caller's
 * array and a per-thread cache array: no per-page state, no checks. Any allocator that hands out
 * addresses in an array costs at least this; it tells which bulk targets are reachable at all.
 * FLOOR_CALL keeps them real calls, as pool_bulk's are (the library's). */
#define FLOOR_CAP 1024u
#ifdef __clang__
#define FLOOR_CALL __attribute__((noinline))
#else
#define FLOOR_CALL __attribute__((noipa))
#endif

struct floor_cache {
	uint32_t count;
	uint64_t addrs[FLOOR_CAP];
};

static FLOOR_CALL int floor_alloc_bulk(struct floor_cache *c, uint64_t *addrs, uint32_t n)
{
	if (umem_unlikely(n > c->count))
		return 0;
	c->count -= n;
	memcpy(addrs, c->addrs + c->count, n * sizeof(*addrs));
	return (int)n;
}

static FLOOR_CALL void floor_put_bulk(struct floor_cache *c, const uint64_t *addrs, uint32_t n)
{
	if (umem_unlikely(n > FLOOR_CAP - c->count))
		die("floor_bulk: put_bulk", ENOSPC);
	memcpy(c->addrs + c->count, addrs, n * sizeof(*addrs));
	c->count += n;
}

static int floor_init(struct run *r)
{
	struct floor_cache *c = aligned_alloc(64, (sizeof(*c) + 63) & ~(size_t)63);

	if (!c)
		return -ENOMEM;
	c->count = FLOOR_CAP;
	for (uint32_t i = 0; i < FLOOR_CAP; i++)
		c->addrs[i] = (uint64_t)i * 4096;
	r->priv = c;
	return 0;
}

static uint64_t floor_run(struct run *r, uint64_t ops)
{
	struct floor_cache *c = r->priv;
	uint64_t addrs[BULK], n = (ops + BULK - 1) / BULK;

	for (uint64_t i = 0; i < n; i++) {
		if (umem_unlikely(floor_alloc_bulk(c, addrs, BULK) != (int)BULK))
			die("floor_bulk: alloc_bulk", ENOMEM);
		keep(addrs[BULK - 1]);
		floor_put_bulk(c, addrs, BULK);
	}
	return n * BULK;
}

static void floor_fini(struct run *r)
{
	free(r->priv);
}

/* RING(name, mode, pool_stats, help): a two-thread hand-over path. */
#define RING(n, mode, stats, help)                                                              \
	{ .name = n, .what = help, .init = ring_init, .loop = ring_run, .fini = ring_fini,       \
	  .pool_stats = stats, .variant = mode }

static const struct path paths[] = {
	{ .name = "loop", .what = "empty loop: the loop and timer overhead", .init = none_init,
	  .loop = loop_run, .fini = none_fini },
	{ .name = "mutex_freelist",
	  .what = "baseline: alloc+put on a LIFO free list under a pthread mutex (uncontended), "
		  "the frame allocator of most AF_XDP applications today",
	  .init = freelist_init, .loop = freelist_run, .fini = freelist_fini },
#ifdef UMEM_BENCH_DPDK
	{ .name = "dpdk_mempool",
	  .what = "baseline: rte_mempool_get + rte_mempool_put of one object through the "
		  "per-lcore cache (DPDK EAL with --no-huge --no-pci)",
	  .init = dpdk_init, .loop = dpdk_run, .fini = dpdk_fini },
	{ .name = "dpdk_mempool_bulk",
	  .what = "baseline for pool_bulk: rte_mempool_get_bulk + rte_mempool_put_bulk of 64 "
		  "objects through the per-lcore cache (the forwarder's shape); per object",
	  .init = dpdk_init, .loop = dpdk_bulk_run, .fini = dpdk_fini },
#endif
	{ .name = "pool_fast",
	  .what = "umem_pool__alloc + umem_pool__put by the owner: the alloc cache only",
	  .init = pages_init, .loop = fast_run, .fini = env_fini, .pool_stats = true },
	{ .name = "pool_bulk",
	  .what = "umem_pool__alloc_bulk + umem_pool__put_bulk of 64 pages by the owner; per page",
	  .init = pages_init, .loop = bulk_run, .fini = env_fini, .pool_stats = true },
	{ .name = "floor_bulk",
	  .what = "the floor of pool_bulk's API: alloc_bulk + put_bulk of 64 that only copy the "
		  "addresses out of and into a per-thread array (no per-page state, no checks); "
		  "per page",
	  .init = floor_init, .loop = floor_run, .fini = floor_fini },
	RING("pool_ring", RING_PUT, true,
	     "owner allocates, a second thread (on another CPU) puts each page with its own pool, "
	     "so it returns through the owner's return ring, which refills the owner's cache; per "
	     "page round trip (handed over in batches of 32)"),
	RING("pool_ring_bulk", RING_PUT_BULK, true,
	     "the same, the worker putting each batch of 32 with umem_pool__put_bulk (one ring "
	     "operation per batch, as a completion-ring drain does)"),
	RING("mutex_xthread", RING_MUTEX, false,
	     "baseline for pool_ring: the same two threads and hand-over, allocating from and "
	     "putting to one mutex free list (contended)"),
	{ .name = "pool_slow",
	  .what = "nothing cached: a fresh pool (ring of 64) per 1024 pages, so every page comes "
		  "from the area (refills of 64) and most puts release to the area; per page, pool "
		  "create/destroy amortized",
	  .init = slow_init, .loop = slow_run, .fini = env_fini, .pool_stats = true },
	FRAG("frag_64", 64, 4096, FRAG_PUT_EACH,
	     "umem_pool__alloc_frag of 32 x 64 B (4 KiB pages), then umem_pool__put of each; "
	     "per fragment"),
	FRAG("frag_256", 256, 4096, FRAG_PUT_EACH, "the same with 256-B fragments (4 KiB pages)"),
	FRAG("frag_1500", 1500, 4096, FRAG_PUT_EACH,
	     "the same with 1500-B fragments (4 KiB pages: 2 per page)"),
	FRAG("frag_2048", 2048, 4096, FRAG_PUT_EACH,
	     "the same with 2048-B fragments (4 KiB pages: 2 per page, an exact fit; the 2 KiB-chunk "
	     "fill ring's shape)"),
	FRAG("frag_1500_32k", 1500, 32768, FRAG_PUT_EACH,
	     "the same with 1500-B fragments on 32 KiB pages (21 per page)"),
	FRAG("frag_64_bulk", 64, 4096, FRAG_PUT_BULK,
	     "frag_64 with the 32 fragments put by one umem_pool__put_bulk"),
	{ .name = "frag_ref",
	  .what = "umem_pool__ref + umem_pool__put of a live 64-B fragment (a second user of a "
		  "frame, e.g. sent on two ports)",
	  .init = ref_init, .loop = ref_run, .fini = ref_fini, .pool_stats = true },
};
#define NR_PATHS (sizeof(paths) / sizeof(paths[0]))

/* Paths that exist but were left out of this build. */
static const struct {
	const char *name, *why;
} not_built[] = {
#ifndef UMEM_BENCH_DPDK
	{ "dpdk_mempool", UMEM_BENCH_DPDK_NO_WHY },
	{ "dpdk_mempool_bulk", UMEM_BENCH_DPDK_NO_WHY },
#endif
	{ NULL, NULL },
};

static const struct path *path_find(const char *name)
{
	for (size_t i = 0; i < NR_PATHS; i++)
		if (!strcmp(paths[i].name, name))
			return &paths[i];
	return NULL;
}

/* ---- measurement -------------------------------------------------------------------------- */

struct result {
	const struct path *path;
	bool ran, failed; /* failed: its set-up failed (the reason went to stderr) */
	double ns, cycles, min_ns, max_ns, min_cycles, max_cycles;
	uint64_t slow, held; /* after warm-up */
	uint64_t total_ns, total_ticks;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int measure(const struct path *p, unsigned rounds, uint64_t ops, struct result *res)
{
	struct run r = { .path = p };
	double *ns = calloc(rounds, sizeof(double)), *cyc = calloc(rounds, sizeof(double));
	uint64_t slow0, held0, slow1, held1;
	int err = -ENOMEM;

	if (!ns || !cyc)
		goto out;
	err = p->init(&r);
	if (err) {
		fprintf(stderr, "umem-bench: %s: set-up failed: %s\n", p->name, strerror(-err));
		p->fini(&r);
		goto out;
	}
	/* Warm-up: fills caches, drains areas into the pool's circulation, faults pages in. */
	p->loop(&r, ops / 4 > 8192 ? ops / 4 : 8192);
	slow_counts(&r, &slow0, &held0);
	for (unsigned k = 0; k < rounds; k++) {
		uint64_t t0 = now_ns(), c0 = counter_read();
		uint64_t n = p->loop(&r, ops);
		uint64_t c1 = counter_read(), t1 = now_ns();

		ns[k] = (double)(t1 - t0) / (double)n;
		cyc[k] = (double)(c1 - c0) / (double)n;
		res->total_ns += t1 - t0;
		res->total_ticks += c1 - c0;
	}
	slow_counts(&r, &slow1, &held1);
	p->fini(&r);
	res->path = p;
	res->ran = true;
	res->slow = slow1 - slow0;
	res->held = held1 - held0;
	res->ns = median(ns, rounds);
	res->min_ns = ns[0];
	res->max_ns = ns[rounds - 1];
	res->cycles = median(cyc, rounds);
	res->min_cycles = cyc[0];
	res->max_cycles = cyc[rounds - 1];
	err = 0;
out:
	free(ns);
	free(cyc);
	return err;
}

/* ---- memory efficiency -------------------------------------------------------------------- */

static const uint32_t mem_frames[] = { 64, 256, 1500, 9000 };
static const uint32_t mem_pages[] = { 4096, 16384, 32768, 65536 };
#define NR_MEM_FRAMES (sizeof(mem_frames) / sizeof(mem_frames[0]))
#define NR_MEM_PAGES (sizeof(mem_pages) / sizeof(mem_pages[0]))

struct mem_row {
	uint32_t frame;
	double frag[NR_MEM_PAGES]; /* bytes per live frame; NAN: frame larger than the page */
	double chunk4k, chunk2k;
};

/* UMEM bytes per live frame when MEM_FRAMES frames of this size are fragments of pages of
 * page_size: the mean truesize, checked against the pages they occupy. */
static double frag_bytes(uint32_t frame, uint32_t page_size)
{
	uint64_t addrs[MEM_FRAMES], sum = 0, pages_used = 0, last = UINT64_MAX;
	struct run r = { .path = &paths[0] };
	int err;

	/* A frame larger than the page cannot be one fragment: that cell is skipped ("-"), not
	 * asked of alloc_frag, which would log an error on a plain run. */
	if (frame > page_size)
		return NAN;
	err = env_init(&r, MEM_FRAMES, page_size);
	if (err)
		die("memory: area", -err);
	for (uint32_t i = 0; i < MEM_FRAMES; i++) {
		uint32_t truesize;

		err = umem_pool__alloc_frag(r.pool, frame, &addrs[i], &truesize);
		if (err)
			die("memory: alloc_frag", -err);
		sum += truesize;
		/* Fragments fill one page before the next. */
		if (addrs[i] / page_size != last)
			pages_used++;
		last = addrs[i] / page_size;
	}
	/* The last page may be part-filled; every other byte must be charged to a frame. */
	if (sum > pages_used * page_size || sum <= (pages_used - 1) * page_size)
		fprintf(stderr, "umem-bench: memory: %u-B frames on %u-B pages: truesizes sum to %llu "
			"bytes but occupy %llu pages\n", frame, page_size, (unsigned long long)sum,
			(unsigned long long)pages_used);
	for (uint32_t i = 0; i < MEM_FRAMES; i++)
		umem_pool__put(r.pool, addrs[i]);
	env_fini(&r);
	return (double)sum / MEM_FRAMES;
}

static double chunk_bytes(uint32_t frame, uint32_t chunk)
{
	return (double)((frame + chunk - 1) / chunk * chunk);
}

static void memory_table(struct mem_row *rows)
{
	for (size_t i = 0; i < NR_MEM_FRAMES; i++) {
		rows[i].frame = mem_frames[i];
		for (size_t j = 0; j < NR_MEM_PAGES; j++)
			rows[i].frag[j] = frag_bytes(mem_frames[i], mem_pages[j]);
		rows[i].chunk4k = chunk_bytes(mem_frames[i], 4096);
		rows[i].chunk2k = chunk_bytes(mem_frames[i], 2048);
	}
}

static double best_frag(const struct mem_row *row)
{
	double best = NAN;

	for (size_t j = 0; j < NR_MEM_PAGES; j++)
		if (!isnan(row->frag[j]) && (isnan(best) || row->frag[j] < best))
			best = row->frag[j];
	return best;
}

/* ---- targets (reported, never asserted) ---------------------------------------------------- */

struct target {
	const char *name;
	const char *num, *den; /* result names: the ratio num/den is checked against limit */
	double limit;
	uint32_t mem_frame;    /* memory targets: 4 KiB chunk / fragment bytes >= limit */
};

static const struct target targets[] = {
	{ "pool_fast <= 0.5 x mutex_freelist", "pool_fast", "mutex_freelist", 0.5, 0 },
	{ "pool_fast <= 0.8 x dpdk_mempool", "pool_fast", "dpdk_mempool", 0.8, 0 },
	{ "pool_bulk <= 0.5 x dpdk_mempool_bulk", "pool_bulk", "dpdk_mempool_bulk", 0.5, 0 },
	{ "pool_ring <= 3 x pool_fast", "pool_ring", "pool_fast", 3, 0 },
	{ "pool_ring_bulk <= 2 x pool_fast", "pool_ring_bulk", "pool_fast", 2, 0 },
	{ "frag_64 <= 2 x pool_fast", "frag_64", "pool_fast", 2, 0 },
	{ "frag_256 <= 2 x pool_fast", "frag_256", "pool_fast", 2, 0 },
	{ "frag_1500 <= 2 x pool_fast", "frag_1500", "pool_fast", 2, 0 },
	{ "frag_2048 <= 1.5 x pool_fast", "frag_2048", "pool_fast", 1.5, 0 },
	{ "frag_1500_32k <= 2 x pool_fast", "frag_1500_32k", "pool_fast", 2, 0 },
	{ "1500-B frames: >= 2x less memory than 4 KiB chunks", NULL, NULL, 2, 1500 },
	{ "64-B frames: >= 10x less memory than 4 KiB chunks", NULL, NULL, 10, 64 },
};
#define NR_TARGETS (sizeof(targets) / sizeof(targets[0]))

static const struct result *result_find(const struct result *res, const char *name)
{
	for (size_t i = 0; i < NR_PATHS; i++)
		if (res[i].ran && !strcmp(res[i].path->name, name))
			return &res[i];
	return NULL;
}

/* The target's ratio, or NAN when its inputs were not measured. */
static double target_ratio(const struct target *t, const struct result *res,
			   const struct mem_row *rows, bool have_mem)
{
	if (t->mem_frame) {
		if (!have_mem)
			return NAN;
		for (size_t i = 0; i < NR_MEM_FRAMES; i++)
			if (rows[i].frame == t->mem_frame)
				return rows[i].chunk4k / best_frag(&rows[i]);
		return NAN;
	}
	const struct result *n = result_find(res, t->num), *d = result_find(res, t->den);
	return n && d ? n->ns / d->ns : NAN;
}

static bool target_met(const struct target *t, double ratio)
{
	return t->mem_frame ? ratio >= t->limit : ratio <= t->limit;
}

/* ---- output ------------------------------------------------------------------------------- */

/* The 1-minute load average: the machine may be shared; other work skews the numbers. */
static double loadavg(void)
{
	double l = NAN;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = NAN;
		fclose(f);
	}
	return l;
}

/* A heuristic: other work keeps 3/4 of the CPUs busy before we start (the load at the end
 * includes our own threads), so it will also take CPUs the measured paths run on. */
static bool machine_busy(double load_start)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	return cpus > 0 && !isnan(load_start) && load_start >= 0.75 * (double)cpus;
}

struct report {
	struct cpu_ident cpu;
	double load_start, load_end;
	unsigned rounds;
	uint64_t ops;
	double counter_hz;
	const struct result *res;
	const struct mem_row *rows;
	bool have_mem;
};

static void json_num(const char *key, double v, const char *sep)
{
	if (isnan(v))
		printf("\"%s\":null%s", key, sep);
	else
		printf("\"%s\":%.3f%s", key, v, sep);
}

static void print_json(const struct report *rp)
{
	const struct result *fast = result_find(rp->res, "pool_fast");
	bool first = true;

	printf("{\"cpu\":{\"vendor\":\"%s\",\"family\":\"%s\",\"model\":\"%s\",\"name\":\"%s\"},",
	       rp->cpu.vendor, rp->cpu.family, rp->cpu.model, rp->cpu.name);
	printf("\"counter\":{\"name\":\"%s\",\"what\":\"%s\",", COUNTER_NAME, COUNTER_WHAT);
	json_num("hz", rp->counter_hz, "},");
	json_num("loadavg_start", rp->load_start, ",");
	json_num("loadavg_end", rp->load_end, ",");
	printf("\"busy\":%s,", machine_busy(rp->load_start) ? "true" : "false");
	printf("\"rounds\":%u,\"ops\":%llu,\"results\":[", rp->rounds, (unsigned long long)rp->ops);
	for (size_t i = 0; i < NR_PATHS; i++) {
		const struct result *r = &rp->res[i];

		if (!r->ran)
			continue;
		printf("%s{\"name\":\"%s\",", first ? "" : ",", r->path->name);
		json_num("ns_per_op", r->ns, ",");
		json_num("cycles_per_op", r->cycles, ",");
		json_num("min_ns", r->min_ns, ",");
		json_num("max_ns", r->max_ns, ",");
		json_num("min_cycles", r->min_cycles, ",");
		json_num("max_cycles", r->max_cycles, ",");
		if (r->path->pool_stats)
			printf("\"slow_allocs\":%llu,\"area_pages\":%llu}", (unsigned long long)r->slow,
			       (unsigned long long)r->held);
		else
			printf("\"slow_allocs\":null,\"area_pages\":null}");
		first = false;
	}
	printf("],\"not_built\":[");
	for (size_t i = 0; not_built[i].name; i++)
		printf("%s\"%s\"", i ? "," : "", not_built[i].name);
	printf("],\"failed\":[");
	first = true;
	for (size_t i = 0; i < NR_PATHS; i++)
		if (rp->res[i].failed) {
			printf("%s\"%s\"", first ? "" : ",", rp->res[i].path->name);
			first = false;
		}
	printf("],\"steady_state\":");
	if (fast)
		printf("{\"path\":\"pool_fast\",\"slow_allocs_after_warmup\":%llu,"
		       "\"area_pages_after_warmup\":%llu}", (unsigned long long)fast->slow,
		       (unsigned long long)fast->held);
	else
		printf("null");
	printf(",\"kernel_page_pool_fast\":{\"cycles\":%d,\"ns\":%.1f},\"memory\":[",
	       KERNEL_FAST_CYCLES, KERNEL_FAST_NS);
	for (size_t i = 0; rp->have_mem && i < NR_MEM_FRAMES; i++) {
		const struct mem_row *m = &rp->rows[i];
		char key[32];

		printf("%s{\"frame_bytes\":%u,", i ? "," : "", m->frame);
		for (size_t j = 0; j < NR_MEM_PAGES; j++) {
			snprintf(key, sizeof(key), "frag_%uk", mem_pages[j] / 1024);
			json_num(key, m->frag[j], ",");
		}
		json_num("chunk_4k", m->chunk4k, ",");
		json_num("chunk_2k", m->chunk2k, "}");
	}
	printf("],\"targets\":[");
	for (size_t i = 0; i < NR_TARGETS; i++) {
		double v = target_ratio(&targets[i], rp->res, rp->rows, rp->have_mem);

		printf("%s{\"target\":\"%s\",", i ? "," : "", targets[i].name);
		json_num("ratio", v, ",");
		json_num("limit", targets[i].limit, ",");
		printf("\"met\":%s}", isnan(v) ? "null" : target_met(&targets[i], v) ? "true" : "false");
	}
	printf("]}\n");
}

static void print_text(const struct report *rp)
{
	const struct result *mutex = result_find(rp->res, "mutex_freelist");
	const struct result *fast = result_find(rp->res, "pool_fast");
	bool any = false;

	for (size_t i = 0; i < NR_PATHS; i++)
		any |= rp->res[i].ran || rp->res[i].failed;
	if (any) {
		printf("umem-bench: %u rounds x %llu ops per path; counter %s, %.1f MHz (%s)\n"
		       "load average %.2f at start, %.2f at end\n",
		       rp->rounds, (unsigned long long)rp->ops, COUNTER_NAME, rp->counter_hz / 1e6,
		       COUNTER_WHAT, rp->load_start, rp->load_end);
		printf("cpu: %s family %s model %s (%s)\n\n", rp->cpu.vendor, rp->cpu.family,
		       rp->cpu.model, rp->cpu.name);
		if (machine_busy(rp->load_start))
			printf("WARNING: the machine is busy (load average %.2f on %ld CPUs): other work "
			       "skews these numbers, above all the two-thread paths; run again when "
			       "quiet, several times\n\n", rp->load_start, sysconf(_SC_NPROCESSORS_ONLN));
		printf("%-17s %8s %19s %10s %8s %8s %12s\n", "path", "ns/op", "[min - max] ns",
		       COUNTER_UNIT "/op", "x mutex", "x fast", "slow/area*");
		for (size_t i = 0; i < NR_PATHS; i++) {
			const struct result *r = &rp->res[i];
			char range[40], slow[32] = "-", xm[16] = "-", xf[16] = "-";

			if (!r->ran)
				continue;
			snprintf(range, sizeof(range), "[%.2f - %.2f]", r->min_ns, r->max_ns);
			if (r->path->pool_stats)
				snprintf(slow, sizeof(slow), "%llu/%llu", (unsigned long long)r->slow,
					 (unsigned long long)r->held);
			if (mutex)
				snprintf(xm, sizeof(xm), "%.2f", r->ns / mutex->ns);
			if (fast)
				snprintf(xf, sizeof(xf), "%.2f", r->ns / fast->ns);
			printf("%-17s %8.2f %19s %10.1f %8s %8s %12s\n", r->path->name, r->ns, range,
			       r->cycles, xm, xf, slow);
		}
		printf("* slow-path allocation calls / pages taken from the area, after warm-up\n");
		for (size_t i = 0; not_built[i].name; i++)
			printf("not built: %s (%s)\n", not_built[i].name, not_built[i].why);
		for (size_t i = 0; i < NR_PATHS; i++)
			if (rp->res[i].failed)
				printf("FAILED: %s could not be set up (see the message above)\n",
				       rp->res[i].path->name);
		if (fast)
			printf("\nsteady state: pool_fast slow-path allocations after warm-up: %llu "
			       "(pages from the area: %llu)\n", (unsigned long long)fast->slow,
			       (unsigned long long)fast->held);
		if (fast)
			printf("kernel page_pool fast path: %d cycles(tsc), %.1f ns (Xeon E5-1650 v4, "
			       "bench_page_pool_simple); pool_fast here: %.1f %s %s, %.2f ns\n",
			       KERNEL_FAST_CYCLES, KERNEL_FAST_NS, fast->cycles, COUNTER_NAME, COUNTER_UNIT, fast->ns);
	}
	if (rp->have_mem) {
		printf("\nUMEM bytes per live frame (fragments: mean truesize of %u live frames)\n",
		       MEM_FRAMES);
		printf("%-7s", "frame");
		for (size_t j = 0; j < NR_MEM_PAGES; j++) {
			char h[32];

			snprintf(h, sizeof(h), "frag/%uK page", mem_pages[j] / 1024);
			printf(" %14s", h);
		}
		printf(" %9s %9s %11s\n", "4K chunk", "2K chunk", "4K/best");
		for (size_t i = 0; i < NR_MEM_FRAMES; i++) {
			const struct mem_row *m = &rp->rows[i];

			printf("%-7u", m->frame);
			for (size_t j = 0; j < NR_MEM_PAGES; j++)
				if (isnan(m->frag[j]))
					printf(" %14s", "n/a");
				else
					printf(" %14.0f", m->frag[j]);
			printf(" %9.0f %9.0f %10.1fx\n", m->chunk4k, m->chunk2k,
			       m->chunk4k / best_frag(m));
		}
		printf("(AF_XDP RX still needs whole chunks; fragments serve TX and application buffers.)\n");
	}
	printf("\ntargets (reported, not asserted):\n");
	for (size_t i = 0; i < NR_TARGETS; i++) {
		double v = target_ratio(&targets[i], rp->res, rp->rows, rp->have_mem);

		if (isnan(v))
			printf("  %-52s not measured\n", targets[i].name);
		else
			printf("  %-52s %6.2fx  %s\n", targets[i].name, v,
			       target_met(&targets[i], v) ? "met" : "MISSED");
	}
}

/* ---- options ------------------------------------------------------------------------------ */

struct bench_cfg {
	bool want[NR_PATHS], only, json, memory_only;
	uint32_t rounds;
	uint64_t ops;
};

/* Marks the paths named in list; refuses an unknown or unbuilt one by name. */
static int set_only(void *v, const char *list, char *err, size_t errlen)
{
	struct bench_cfg *cfg = v;
	char *copy = strdup(list), *save = NULL;
	int ret = 0;

	if (!copy)
		return cli_fail(err, errlen, "--only: out of memory");
	for (char *name = strtok_r(copy, ",", &save); name && !ret; name = strtok_r(NULL, ",", &save)) {
		const struct path *p = path_find(name);

		if (p) {
			cfg->want[p - paths] = true;
			continue;
		}
		ret = cli_fail(err, errlen, "--only: unknown path '%s'", name);
		for (size_t i = 0; not_built[i].name; i++)
			if (!strcmp(not_built[i].name, name))
				ret = cli_fail(err, errlen, "--only: %s is not built: %s", name, not_built[i].why);
	}
	free(copy);
	cfg->only = true;
	return ret;
}

#define CFG struct bench_cfg
static const struct cli_opt opts[] = {
	{ "json", 'j', NULL, "print JSON: {\"results\":[{\"name\",\"ns_per_op\",...}], ...}", CLI_FLAG_AT(CFG, json, true) },
	{ "rounds", 0, "N", "timed rounds per path; median, min and max over them (default 7)", CLI_U32_AT(CFG, rounds, 1, 1000) },
	{ "ops", 0, "N", "operations per round (default 2000000)", CLI_U64_AT(CFG, ops, 1, 10000000000ull) },
	{ "only", 0, "NAME[,NAME]", "run only these paths (the memory table is skipped)", CLI_SET(set_only) },
	{ "memory", 0, NULL, "print only the memory-efficiency table", CLI_FLAG_AT(CFG, memory_only, true) },
};

static void more_help(FILE *f)
{
	fprintf(f, "Paths:\n");
	for (size_t i = 0; i < NR_PATHS; i++)
		cli_help_item(f, paths[i].name, paths[i].what);
	for (size_t i = 0; not_built[i].name; i++) {
		char why[160];

		snprintf(why, sizeof(why), "not built: %s", not_built[i].why);
		cli_help_item(f, not_built[i].name, why);
	}
}

static const struct cli_prog cli = {
	.name = "umem-bench",
	.synopsis = "[OPTIONS]",
	.summary = "Micro-benchmark of the libumem allocator, with baselines measured in the same run. "
		   "Per path: median ns/op and " COUNTER_NAME " " COUNTER_UNIT "/op over the rounds, with "
		   "min and max (JSON: cycles_per_op, whatever the counter).",
	CLI_OPTS(opts),
	.more_help = more_help,
};

int main(int argc, char **argv)
{
	struct bench_cfg cfg = { .rounds = 7, .ops = 2000000 };
	struct result res[NR_PATHS];
	struct mem_row rows[NR_MEM_FRAMES];
	uint64_t ticks = 0, ns = 0;
	double load_start = loadavg();
	bool failed = false;
	int next = cli_parse_or_exit(&cli, &cfg, argc, argv, 1);
	bool *want = cfg.want, only = cfg.only, json = cfg.json, memory_only = cfg.memory_only;
	unsigned rounds = cfg.rounds;
	uint64_t ops = cfg.ops;

	if (next < argc)
		cli_die(&cli, "unexpected argument '%s'", argv[next]);
	if (only && memory_only)
		cli_die(&cli, "--only and --memory exclude each other");

	memset(res, 0, sizeof(res));
	for (size_t i = 0; i < NR_PATHS && !memory_only; i++) {
		if (only && !want[i])
			continue;
		/* A path that cannot be set up (e.g. DPDK's EAL) does not cost the others. */
		if (measure(&paths[i], rounds, ops, &res[i])) {
			res[i].path = &paths[i];
			res[i].failed = true;
			failed = true;
			continue;
		}
		ticks += res[i].total_ticks;
		ns += res[i].total_ns;
	}
	if (!only)
		memory_table(rows);

	struct report rp = {
		.load_start = load_start, .load_end = loadavg(), .rounds = rounds, .ops = ops, .res = res, .rows = rows, .have_mem = !only,
		.counter_hz = counter_hz_declared() ? (double)counter_hz_declared()
			      : ns ? (double)ticks * 1e9 / (double)ns : NAN,
	};
	cpu_identify(&rp.cpu);
	if (json)
		print_json(&rp);
	else
		print_text(&rp);
	return failed;
}
