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
				umem_put(area, in[i].addr);
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

int main(void)
{
	pthread_t th[WORKERS];

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
