/* SPDX-License-Identifier: MIT */
/*
 * Debug mode's single-owner rule, deterministically. Linked with --wrap=umem__track_alloc, so
 * thread A stops inside an allocation (debug mode tracks every one); thread B then allocates
 * from the same pool and must abort, naming the rule. A hand-over between calls (the pool used
 * by one thread, then by another after a join) stays legal. With the argument "destroy", B
 * destroys the pool instead, which the rule covers too.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <umem/pool.h>
#include "childrun.h"

struct umem_area;
void __real_umem__track_alloc(struct umem_area *a, uint64_t addr, uint32_t len);
void __wrap_umem__track_alloc(struct umem_area *a, uint64_t addr, uint32_t len);

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int armed, inside;
static struct umem_pool *pool;
static int use_destroy;

void __wrap_umem__track_alloc(struct umem_area *a, uint64_t addr, uint32_t len)
{
	__real_umem__track_alloc(a, addr, len);
	pthread_mutex_lock(&mu);
	if (armed) {
		inside = 1;
		pthread_cond_broadcast(&cv);
		for (;;) /* until the other thread's abort ends the process */
			pthread_cond_wait(&cv, &mu);
	}
	pthread_mutex_unlock(&mu);
}

static void *alloc_one(void *arg)
{
	uint64_t a;

	(void)arg;
	CHECK_EQ(umem_pool__alloc(pool, &a), 0);
	return NULL;
}

static void scenario(void)
{
	UMEM_OPTS(umem_area_opts, ao, .flags = UMEM_AREA_F_DEBUG);
	struct umem_area *area = umem_area__create(64, &ao);
	pthread_t t;
	uint64_t a;

	pool = umem_pool__create(area, NULL);
	CHECK(area && pool, "setup: %s", strerror(errno));
	/* Hand-over: another thread, then this one again, one after the other. */
	CHECK(!pthread_create(&t, NULL, alloc_one, NULL), "thread");
	pthread_join(t, NULL);
	CHECK_EQ(umem_pool__alloc(pool, &a), 0);
	/* Two at once: A stops inside an allocation, B allocates. */
	armed = 1;
	CHECK(!pthread_create(&t, NULL, alloc_one, NULL), "thread");
	pthread_mutex_lock(&mu);
	while (!inside)
		pthread_cond_wait(&cv, &mu);
	armed = 0;
	pthread_mutex_unlock(&mu);
	if (use_destroy)
		umem_pool__destroy(pool);
	else
		umem_pool__alloc(pool, &a);
}

int main(int argc, char **argv)
{
	char out[4096] = "";

	use_destroy = argc > 1 && !strcmp(argv[1], "destroy");
	int status = child_run(scenario, out, sizeof(out));

	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "did not abort:\n%s", out);
	CHECK(strstr(out, "single-owner rule"), "message lacks the rule:\n%s", out);
	printf("aborted: %s", strstr(out, "libumem: FATAL: "));
	return 0;
}
