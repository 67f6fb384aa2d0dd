/* SPDX-License-Identifier: MIT */
/*
 * Cross-thread returns under contention (also run under TSan in CI). Each worker owns a pool,
 * allocates pages and fragments, stamps them, and hands them to the other workers through
 * mailboxes; the receiver checks the stamp and puts them with its own pool (so they travel back
 * through the owner's lock-free return ring), sometimes after taking and dropping extra
 * references. Midway one worker destroys its pool while its pages are still out: the late
 * returns must be released safely. At the end every page is back in the area, and the pools
 * recycled: pages came back through the return rings and were handed out again, so far fewer
 * pages were taken from the area than allocated (a pool that released every put page to the
 * area would pass every other check).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <umem/pool.h>
#include "testutil.h"

#define WORKERS 4
#define ROUNDS 20000
#define BOX 256

struct msg {
	uint64_t addr;
	uint64_t stamp;
};

/* A tiny mutex mailbox: the test's own plumbing, not what is under test. */
struct box {
	pthread_mutex_t lock;
	struct msg m[BOX];
	uint32_t n;
};

static struct umem_area *area;
static struct box boxes[WORKERS];
static atomic_int done_sending;
static pthread_barrier_t start; /* the workers run together, not one after the other */
static atomic_ulong crossed; /* frames put by a thread other than their pool's owner */
static atomic_ulong page_allocs; /* whole pages allocated */
static struct umem_pool_stats final[WORKERS]; /* each pool's stats just before its destroy */

static void destroy(struct umem_pool *p, int id)
{
	final[id].sz = sizeof(final[id]);
	CHECK_EQ(umem_pool__stats(p, &final[id]), 0);
	umem_pool__destroy(p);
}

static bool box_push(struct box *b, struct msg m)
{
	bool ok;

	pthread_mutex_lock(&b->lock);
	ok = b->n < BOX;
	if (ok)
		b->m[b->n++] = m;
	pthread_mutex_unlock(&b->lock);
	return ok;
}

static uint32_t box_take(struct box *b, struct msg *out)
{
	uint32_t n;

	pthread_mutex_lock(&b->lock);
	n = b->n;
	memcpy(out, b->m, n * sizeof(*out));
	b->n = 0;
	pthread_mutex_unlock(&b->lock);
	return n;
}

static uint32_t box_count(struct box *b)
{
	pthread_mutex_lock(&b->lock);
	uint32_t n = b->n;
	pthread_mutex_unlock(&b->lock);
	return n;
}

static void consume(struct umem_pool *p, struct box *b, uint64_t *rng)
{
	struct msg in[BOX];
	uint64_t addrs[BOX];
	uint32_t n = box_take(b, in);

	for (uint32_t i = 0; i < n; i++) {
		uint64_t stamp;

		memcpy(&stamp, umem_area__ptr(area, in[i].addr), sizeof(stamp));
		CHECK(stamp == in[i].stamp, "frame 0x%llx changed hands while live",
		      (unsigned long long)in[i].addr);
		if (test_rand(rng) % 8 == 0) {
			CHECK_EQ(umem_pool__ref(p, in[i].addr, 1), 0);
			umem_pool__put(p, in[i].addr);
		}
		addrs[i] = in[i].addr;
	}
	atomic_fetch_add(&crossed, n);
	if (n && test_rand(rng) % 2)
		umem_pool__put_bulk(p, addrs, n);
	else
		for (uint32_t i = 0; i < n; i++)
			umem_pool__put(p, addrs[i]);
}

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	uint64_t rng = 0x9e3779b97f4a7c15ull * (uint64_t)(id + 1), stamp = (uint64_t)id << 48;
	UMEM_OPTS(umem_pool_opts, po, .ring_size = 256);
	struct umem_pool *p = umem_pool__create(area, &po);
	bool destroyed = false;

	CHECK(p, "pool: %s", strerror(errno));
	pthread_barrier_wait(&start);
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t addr;
		bool page = test_rand(&rng) % 2;
		int err = page ? umem_pool__alloc(p, &addr)
			       : umem_pool__alloc_frag(p, 64 + (uint32_t)(test_rand(&rng) % 1500), &addr, NULL);

		if (!err) {
			if (page)
				atomic_fetch_add(&page_allocs, 1);
			struct msg m = { .addr = addr, .stamp = ++stamp };
			int to = (id + 1 + (int)(test_rand(&rng) % (WORKERS - 1))) % WORKERS;

			memcpy(umem_area__ptr(area, addr), &m.stamp, sizeof(m.stamp));
			if (!box_push(&boxes[to], m))
				umem_pool__put(p, addr);
		} else {
			CHECK_EQ(err, -ENOMEM);
		}
		consume(p, &boxes[id], &rng);
		/* Worker 0 tears its pool down midway with pages in the other workers' hands. */
		if (id == 0 && r == ROUNDS / 2) {
			destroy(p, id);
			destroyed = true;
			break;
		}
	}
	atomic_fetch_add(&done_sending, 1);
	/* Keep draining until everyone stopped sending, so no mailbox keeps a page. */
	while (atomic_load(&done_sending) < WORKERS || box_count(&boxes[id])) {
		if (destroyed) {
			struct msg in[BOX];
			uint32_t n = box_take(&boxes[id], in);
			for (uint32_t i = 0; i < n; i++)
				umem_area__put(area, in[i].addr);
		} else {
			consume(p, &boxes[id], &rng);
		}
		sched_yield();
	}
	/* Pages of this pool may still sit in another live worker's mailbox: destroy copes. */
	if (!destroyed)
		destroy(p, id);
	return NULL;
}

/* refs_taken is exact: two threads reference one frame, each through its own pool (the rule),
 * and the counts add up. The reference bound holds under the same concurrency: refs that would
 * pass UMEM_REF_MAX are refused in the same compare-and-swap, never applied. */
#define REFS 200000
static struct umem_pool *ref_pools[2];
static uint64_t ref_addr;
static pthread_barrier_t ref_start;

static void *ref_worker(void *arg)
{
	struct umem_pool *p = ref_pools[(intptr_t)arg];

	pthread_barrier_wait(&ref_start);
	for (int i = 0; i < REFS; i++)
		CHECK_EQ(umem_pool__ref(p, ref_addr, 1), 0);
	return NULL;
}

static void *ref_bound_worker(void *arg)
{
	struct umem_pool *p = ref_pools[(intptr_t)arg];

	pthread_barrier_wait(&ref_start);
	for (int i = 0; i < 64; i++)
		umem_pool__ref(p, ref_addr, UMEM_REF_MAX / 64);
	return NULL;
}

static uint64_t refs_of(struct umem_pool *p)
{
	UMEM_OPTS(umem_pool_stats, st);

	CHECK_EQ(umem_pool__stats(p, &st), 0);
	return st.refs_taken;
}

static void ref_race(void *(*fn)(void *))
{
	pthread_t t[2];

	for (intptr_t i = 0; i < 2; i++)
		CHECK(!pthread_create(&t[i], NULL, fn, (void *)i), "thread");
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

static void exact_refs(void)
{
	struct umem_area *a = umem_area__create(16, NULL);
	struct umem_pool *owner = umem_pool__create(a, NULL);
	uint64_t refs;

	for (int i = 0; i < 2; i++)
		ref_pools[i] = umem_pool__create(a, NULL);
	pthread_barrier_init(&ref_start, NULL, 2);
	CHECK_EQ(umem_pool__alloc(owner, &ref_addr), 0);
	ref_race(ref_worker);
	CHECK_EQ(refs_of(ref_pools[0]), REFS);
	CHECK_EQ(refs_of(ref_pools[1]), REFS);
	umem_area__put(a, ref_addr);
	for (int i = 0; i < 2 * REFS; i++)
		umem_pool__put(owner, ref_addr);

	/* Two threads race to the bound: the page's count never reaches it. */
	CHECK_EQ(umem_pool__alloc(owner, &ref_addr), 0);
	ref_race(ref_bound_worker);
	refs = refs_of(ref_pools[0]) - REFS + refs_of(ref_pools[1]) - REFS;
	CHECK(refs < UMEM_REF_MAX, "%llu references taken", (unsigned long long)refs);
	CHECK(refs + UMEM_REF_MAX / 64 >= UMEM_REF_MAX - 1, "bound refused too early: %llu",
	      (unsigned long long)refs);
	for (uint64_t i = 0; i < refs + 1; i++)
		umem_pool__put(owner, ref_addr);
	pthread_barrier_destroy(&ref_start);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(umem_pool__destroy(ref_pools[i]), 0);
	CHECK_EQ(umem_pool__destroy(owner), 0);
	CHECK_EQ(umem_area__destroy(a), 0);
}

int main(void)
{
	pthread_t th[WORKERS];

	umem_set_print(NULL);
	exact_refs();

	area = umem_area__create(4096, NULL);
	CHECK(area, "area: %s", strerror(errno));
	for (int i = 0; i < WORKERS; i++)
		pthread_mutex_init(&boxes[i].lock, NULL);
	pthread_barrier_init(&start, NULL, WORKERS);
	for (int i = 0; i < WORKERS; i++)
		CHECK(!pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i), "thread");
	for (int i = 0; i < WORKERS; i++)
		pthread_join(th[i], NULL);
	CHECK(atomic_load(&crossed) > 0, "no frame crossed threads");
	uint64_t held = 0, ring = 0;

	for (int i = 0; i < WORKERS; i++) {
		held += final[i].pages_held;
		ring += final[i].recycle.ring;
	}
	/* Whole pages put by another thread travel back through their owner's return ring. */
	CHECK(ring > 0, "no page came back through a return ring");
	/* Recycled pages are reused: the area supplied a fraction of the pages allocated. */
	CHECK(held * 2 < atomic_load(&page_allocs), "%llu pages taken from the area for %llu page "
	      "allocations: the pools do not recycle", (unsigned long long)held,
	      (unsigned long long)atomic_load(&page_allocs));
	CHECK_EQ(umem_area__free_pages(area), 4096);
	CHECK_EQ(umem_area__destroy(area), 0);
	return 0;
}
