/* SPDX-License-Identifier: MIT */
/*
 * The DPDK baselines: rte_mempool get/put of one object, and get_bulk/put_bulk of a burst, on the
 * main lcore, through the mempool's per-lcore cache (DPDK's equivalent of our alloc cache). Each
 * path gets a mempool of its own; the EAL (tools/common/eal.c) starts once and stops at exit.
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
#include "eal.h"

#define DPDK_OBJS 2047u   /* a power of two minus one: the ring's optimum */
#define DPDK_CACHE 256u   /* per-lcore cache, as applications size it for bursts of 32..64 */
#define DPDK_OBJ_SIZE 64u /* only the pointers travel; the object size does not matter */

static unsigned pools; /* mempool names: one per path */

int bench_dpdk_init(void **ctx)
{
	struct rte_mempool *mp;
	char name[32];
	int err = bench_eal_start("umem-bench", "dpdk_mempool", 64);

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
