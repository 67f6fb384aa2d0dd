/* SPDX-License-Identifier: MIT */
/*
 * The DPDK baselines: rte_mempool get/put of one object, and get_bulk/put_bulk of a burst, on the
 * main lcore, through the mempool's per-lcore cache (DPDK's equivalent of our alloc cache). The
 * EAL is started once per process (it cannot start again after rte_eal_cleanup()), each path
 * gets a mempool of its own, and the EAL stops at exit. The EAL runs without hugepages, PCI
 * or shared config files (--no-shconf), so it needs no set-up and leaves nothing behind.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <rte_mempool.h>
#include "dpdk.h"

#define DPDK_OBJS 2047u   /* a power of two minus one: the ring's optimum */
#define DPDK_CACHE 256u   /* per-lcore cache, as applications size it for bursts of 32..64 */
#define DPDK_OBJ_SIZE 64u /* only the pointers travel; the object size does not matter */

/* EAL still makes a runtime directory (/var/run/dpdk/<prefix>): a prefix of our own, removed
 * after rte_eal_cleanup(). */
static char runtime_dir[256];
static bool eal_up, eal_tried; /* eal_stop undoes only what eal_start did */
static unsigned pools;           /* mempool names: one per path */

static void eal_stop(void)
{
	if (!eal_up)
		return;
	rte_eal_cleanup();
	eal_up = false;
	if (!runtime_dir[0])
		return;
	if (rmdir(runtime_dir))
		fprintf(stderr, "umem-bench: dpdk_mempool: cannot remove %s: %s\n", runtime_dir,
			strerror(errno));
	/* Its parent (/var/run/dpdk) too, unless another DPDK process uses it. */
	char *slash = strrchr(runtime_dir, '/');
	if (slash) {
		*slash = '\0';
		rmdir(runtime_dir);
	}
}

static int eal_start(void)
{
	cpu_set_t saved;
	char lcore[32], prefix[64];
	char *argv[] = { "umem-bench", "--no-huge", "-m", "64", "--no-pci", "--no-shconf",
			 "--no-telemetry", "--log-level=*:error", "--file-prefix", prefix, "-l",
			 lcore, NULL };
	int cpu = sched_getcpu();

	if (eal_tried)
		return eal_up ? 0 : -ENODEV;
	eal_tried = true;

	snprintf(lcore, sizeof(lcore), "%d", cpu < 0 ? 0 : cpu);
	snprintf(prefix, sizeof(prefix), "umem-bench-%d", (int)getpid());
	/* EAL pins the calling thread to its lcore; the other paths keep their own placement. */
	if (sched_getaffinity(0, sizeof(saved), &saved))
		return -errno;
	rte_openlog_stream(stderr); /* stdout carries the results (JSON) */
	int ret = rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv);

	sched_setaffinity(0, sizeof(saved), &saved);
	if (ret < 0) {
		fprintf(stderr, "umem-bench: dpdk_mempool: rte_eal_init: %s\n", rte_strerror(rte_errno));
		return -ENODEV;
	}
	eal_up = true;
	snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
	atexit(eal_stop);
	return 0;
}

int bench_dpdk_init(void **ctx)
{
	struct rte_mempool *mp;
	char name[32];
	int err = eal_start();

	if (err)
		return err;
	snprintf(name, sizeof(name), "umem_bench%u", pools++);
	mp = rte_mempool_create(name, DPDK_OBJS, DPDK_OBJ_SIZE, DPDK_CACHE, 0, NULL, NULL,
				NULL, NULL, SOCKET_ID_ANY, 0);
	if (!mp) {
		fprintf(stderr, "umem-bench: dpdk_mempool: rte_mempool_create: %s\n",
			rte_strerror(rte_errno));
		return -ENOMEM;
	}
	*ctx = mp;
	return 0;
}

uint64_t bench_dpdk_run(void *ctx, uint64_t ops)
{
	struct rte_mempool *mp = ctx;

	for (uint64_t i = 0; i < ops; i++) {
		void *obj;

		if (rte_mempool_get(mp, &obj)) { /* 2047 objects, one out at a time */
			fprintf(stderr, "umem-bench: dpdk_mempool: rte_mempool_get failed\n");
			abort();
		}
		__asm__ __volatile__("" : : "r"(obj) : "memory");
		rte_mempool_put(mp, obj);
	}
	return ops;
}

uint64_t bench_dpdk_run_bulk(void *ctx, uint64_t ops, unsigned n)
{
	struct rte_mempool *mp = ctx;
	void *objs[64];
	uint64_t rounds = (ops + n - 1) / n;

	for (uint64_t i = 0; i < rounds; i++) {
		if (rte_mempool_get_bulk(mp, objs, n)) {
			fprintf(stderr, "umem-bench: dpdk_mempool_bulk: rte_mempool_get_bulk failed\n");
			abort();
		}
		__asm__ __volatile__("" : : "r"(objs[n - 1]) : "memory");
		rte_mempool_put_bulk(mp, objs, n);
	}
	return rounds * n;
}

void bench_dpdk_fini(void *ctx)
{
	rte_mempool_free(ctx); /* NULL when set-up failed; the EAL stops at exit */
}
