/* SPDX-License-Identifier: MIT */
/*
 * The pool against a reference model over long random sequences of alloc, bulk alloc, fragment
 * alloc, extra references, put, bulk put and cross-thread put. Every live allocation is tagged
 * and shadow-mapped: no two live allocations may overlap, none may be overwritten before its last
 * put, and every page must come back at the end. The stats must show that every path ran.
 *   pool_model [--debug] [--seed N] [--ops N]
 */
#include <pthread.h>
#include "model.h"

#define NR_PAGES 512
#define CROSS_MAX 200

/* A second thread that puts what it is handed; the owner waits for each batch so that a run is
 * reproducible from its seed (the threaded stress test covers true concurrency). */
struct cross {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct umem_area *area;
	struct umem_pool *pool; /* the other thread's own pool: puts through it are foreign */
	uint64_t addrs[CROSS_MAX];
	uint32_t n;
	int bulk, pending, stop;
};

static void cross_put(struct cross *c)
{
	if (c->bulk == 1)
		umem_pool__put_bulk(c->pool, c->addrs, c->n);
	else if (c->bulk == 2)
		umem_area__put_bulk(c->area, c->addrs, c->n);
	else
		for (uint32_t i = 0; i < c->n; i++)
			umem_area__put(c->area, c->addrs[i]);
	c->pending = 0;
}

static void *cross_main(void *arg)
{
	struct cross *c = arg;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		while (!c->pending && !c->stop)
			pthread_cond_wait(&c->cond, &c->lock);
		if (c->stop)
			break;
		cross_put(c);
		pthread_cond_broadcast(&c->cond);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

static void cross_run(struct cross *c)
{
	pthread_mutex_lock(&c->lock);
	c->pending = 1;
	pthread_cond_broadcast(&c->cond);
	while (c->pending)
		pthread_cond_wait(&c->cond, &c->lock);
	pthread_mutex_unlock(&c->lock);
}

static uint64_t inside(struct model *m, uint32_t i, uint64_t *rng)
{
	return m->live[i].addr + test_rand(rng) % m->live[i].len;
}

int main(int argc, char **argv)
{
	uint64_t seed = 42, ops = 300000, rng;
	bool debug = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--debug"))
			debug = true;
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--ops") && i + 1 < argc)
			ops = strtoull(argv[++i], NULL, 0);
	}
	rng = seed;
	UMEM_OPTS(umem_area_opts, ao, .chunk_size = 2048, .flags = debug ? UMEM_AREA_F_DEBUG : 0);
	struct umem_area *a = umem_area__create(NR_PAGES, &ao);
	CHECK(a, "area: %s", strerror(errno));
	UMEM_OPTS(umem_pool_opts, po, .ring_size = 64); /* small, so ring_full happens */
	struct umem_pool *p = umem_pool__create(a, &po);
	struct umem_pool *other = umem_pool__create(a, NULL);
	CHECK(p && other, "pool: %s", strerror(errno));

	struct model m;
	model_init(&m, a, NR_PAGES * 64);
	struct cross c = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
			   .area = a, .pool = other };
	pthread_t th;
	CHECK(!pthread_create(&th, NULL, cross_main, &c), "thread");

	uint64_t addrs[CROSS_MAX];
	for (uint64_t op = 0; op < ops; op++) {
		/* Alternate growing and shrinking phases so the cache fills, overflows and empties. */
		bool grow = (op / 2000) % 2 == 0;
		uint32_t r = (uint32_t)(test_rand(&rng) % 100);
		uint32_t alloc_weight = grow ? 60 : 25;

		if (r < alloc_weight) {
			uint32_t kind = (uint32_t)(test_rand(&rng) % 4);
			if (kind == 0) {
				uint64_t addr;
				int err = umem_pool__alloc(p, &addr);
				if (err) {
					CHECK(err == -ENOMEM && umem_area__free_pages(a) == 0, "alloc: %d", err);
					continue;
				}
				model_add(&m, addr, 4096, 4096);
			} else if (kind == 1) {
				uint32_t n = 1 + (uint32_t)(test_rand(&rng) % 16);
				int got = umem_pool__alloc_bulk(p, addrs, n);
				CHECK(got >= 0 && (uint32_t)got <= n, "alloc_bulk: %d", got);
				if ((uint32_t)got < n)
					CHECK(umem_area__free_pages(a) == 0, "short bulk with pages left");
				for (int i = 0; i < got; i++)
					model_add(&m, addrs[i], 4096, 4096);
			} else {
				/* Mostly small fragments, sometimes more than half a page. */
				uint32_t size = kind == 2 ? 1 + (uint32_t)(test_rand(&rng) % 300)
							  : 1 + (uint32_t)(test_rand(&rng) % 4096);
				uint64_t addr;
				uint32_t ts;
				int err = umem_pool__alloc_frag(p, size, &addr, &ts);
				if (err) {
					CHECK(err == -ENOMEM && umem_area__free_pages(a) == 0, "frag: %d", err);
					continue;
				}
				model_add(&m, addr, size, ts);
			}
		} else if (!m.nr_live) {
			continue;
		} else if (r < alloc_weight + 8) {
			uint32_t i = (uint32_t)(test_rand(&rng) % m.nr_live), n = 1 + (uint32_t)(test_rand(&rng) % 3);
			CHECK_EQ(umem_pool__ref(p, inside(&m, i, &rng), n), 0);
			m.live[i].refs += n;
		} else if (r < 85) {
			uint32_t i = (uint32_t)(test_rand(&rng) % m.nr_live);
			uint64_t addr = inside(&m, i, &rng);
			model_drop(&m, i);
			umem_pool__put(p, addr);
		} else if (r < 93) {
			uint32_t n = 1 + (uint32_t)(test_rand(&rng) % 40), k = 0;
			for (; k < n && m.nr_live; k++) {
				uint32_t i = (uint32_t)(test_rand(&rng) % m.nr_live);
				addrs[k] = inside(&m, i, &rng);
				model_drop(&m, i);
			}
			umem_pool__put_bulk(p, addrs, k);
		} else {
			uint32_t n = 1 + (uint32_t)(test_rand(&rng) % CROSS_MAX), k = 0;
			for (; k < n && m.nr_live; k++) {
				uint32_t i = (uint32_t)(test_rand(&rng) % m.nr_live);
				c.addrs[k] = inside(&m, i, &rng);
				model_drop(&m, i);
			}
			c.n = k;
			c.bulk = (int)(test_rand(&rng) % 3);
			cross_run(&c);
		}
	}

	/* Everything still live goes back, then every page must be home. */
	while (m.nr_live) {
		uint64_t addr = inside(&m, 0, &rng);
		model_drop(&m, 0);
		umem_pool__put(p, addr);
	}
	pthread_mutex_lock(&c.lock);
	c.stop = 1;
	pthread_cond_broadcast(&c.cond);
	pthread_mutex_unlock(&c.lock);
	pthread_join(th, NULL);

	struct umem_pool_stats s = { .sz = sizeof(s) };
	CHECK_EQ(umem_pool__stats(p, &s), 0);
	printf("seed %llu ops %llu: fast %llu slow %llu empty %llu refill %llu cached %llu cache_full %llu "
	       "ring %llu ring_full %llu frags %llu drained %llu refs %llu held %llu released %llu\n",
	       (unsigned long long)seed, (unsigned long long)ops, (unsigned long long)s.alloc.fast,
	       (unsigned long long)s.alloc.slow, (unsigned long long)s.alloc.empty,
	       (unsigned long long)s.alloc.refill, (unsigned long long)s.recycle.cached,
	       (unsigned long long)s.recycle.cache_full, (unsigned long long)s.recycle.ring,
	       (unsigned long long)s.recycle.ring_full, (unsigned long long)s.frag_allocs,
	       (unsigned long long)s.frag_pages_drained, (unsigned long long)s.refs_taken,
	       (unsigned long long)s.pages_held, (unsigned long long)s.pages_released);
	CHECK(s.alloc.fast && s.alloc.slow && s.alloc.empty && s.alloc.refill, "an alloc path never ran");
	CHECK(s.recycle.cached && s.recycle.cache_full && s.recycle.ring && s.recycle.ring_full,
	      "a recycle path never ran");
	CHECK(s.frag_allocs && s.frag_pages_drained && s.refs_taken, "a fragment path never ran");

	CHECK_EQ(umem_pool__destroy(other), 0);
	CHECK_EQ(umem_pool__destroy(p), 0);
	CHECK_EQ(umem_area__free_pages(a), NR_PAGES);
	CHECK_EQ(umem_area__destroy(a), 0);
	model_fini(&m);
	return 0;
}
