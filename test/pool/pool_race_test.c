/* SPDX-License-Identifier: MIT */
/*
 * Deterministic interleavings of a late return with umem_pool__destroy(). The test links with
 * --wrap=umem__ring_publish, so a producer pauses exactly where it matters:
 *  - after_publish: the page is in the owner's ring and the producer has not returned yet.
 *    The destroyer takes the page, releases it and frees the pool. The producer must not write
 *    into the pool afterwards: the freed block is poisoned and kept (--wrap=free), and must
 *    still hold its poison when the producer is done.
 *  - before_publish: the producer reserved a slot and stalls before publishing it (a preempted
 *    thread under SCHED_FIFO). Destroy must return anyway, and the page must reach the area
 *    once the producer publishes.
 */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <umem/pool.h>
#include "testutil.h"

struct umem_ring;
void __real_umem__ring_publish(struct umem_ring *r, uint64_t pos, const uint64_t *addrs, uint32_t k);
void __real_free(void *ptr);

enum { NONE, AFTER, BEFORE };
static int mode;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int paused, resumed;
static void *watched, *kept;
static size_t kept_len;

static void pause_here(void)
{
	pthread_mutex_lock(&mu);
	paused = 1;
	pthread_cond_broadcast(&cv);
	while (!resumed)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

void __wrap_umem__ring_publish(struct umem_ring *r, uint64_t pos, const uint64_t *addrs, uint32_t k);
void __wrap_umem__ring_publish(struct umem_ring *r, uint64_t pos, const uint64_t *addrs, uint32_t k)
{
	int m = mode;

	mode = NONE; /* one pause per case */
	if (m == BEFORE)
		pause_here();
	__real_umem__ring_publish(r, pos, addrs, k);
	if (m == AFTER)
		pause_here();
}

void __wrap_free(void *ptr);
void __wrap_free(void *ptr)
{
	if (ptr && ptr == watched) {
		kept_len = malloc_usable_size(ptr);
		memset(ptr, 0x5a, kept_len);
		kept = ptr;
		watched = NULL;
		return;
	}
	__real_free(ptr);
}

static void wait_paused(void)
{
	pthread_mutex_lock(&mu);
	while (!paused)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

static void resume(void)
{
	pthread_mutex_lock(&mu);
	resumed = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

struct late {
	struct umem_area *area;
	uint64_t addr;
};

static void *producer(void *arg)
{
	struct late *l = arg;

	umem_area__put(l->area, l->addr); /* not the owner: through the owner's return ring */
	return NULL;
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "pool_race: destroy did not return (waits unbounded for an "
				  "unpublished slot)\n";
	ssize_t w = write(2, msg, sizeof(msg) - 1);
	(void)w;
	_exit(1);
}

static void run(int m)
{
	struct umem_area *a = umem_area__create(64, NULL);
	struct umem_pool *p = umem_pool__create(a, NULL);
	struct late l = { .area = a };
	pthread_t t;

	CHECK(a && p, "setup: %s", strerror(errno));
	CHECK_EQ(umem_pool__alloc(p, &l.addr), 0);
	paused = resumed = 0;
	mode = m;
	CHECK_EQ(pthread_create(&t, NULL, producer, &l), 0);
	wait_paused();
	if (m == AFTER) {
		watched = p;
		/* The page is in the ring: destroy takes it back, nothing is out, the pool is freed. */
		CHECK_EQ(umem_pool__destroy(p), 0);
		CHECK(kept == (void *)p, "the pool was not freed by destroy");
		resume();
		CHECK_EQ(pthread_join(t, NULL), 0);
		for (size_t i = 0; i < kept_len; i++)
			CHECK(((unsigned char *)kept)[i] == 0x5a,
			      "byte %zu of the freed pool was written after its page was published "
			      "(use after free)", i);
		__real_free(kept);
		kept = NULL;
	} else {
		alarm(20);
		/* The page's slot is reserved, not published: it is still out. */
		CHECK_EQ(umem_pool__destroy(p), 1);
		alarm(0);
		resume();
		CHECK_EQ(pthread_join(t, NULL), 0);
	}
	/* Whatever was late is home by the time the area goes. */
	CHECK_EQ(umem_area__destroy(a), 0);
}

int main(void)
{
	signal(SIGALRM, on_alarm);
	umem_set_print(NULL);
	run(AFTER);
	run(BEFORE);
	return 0;
}
