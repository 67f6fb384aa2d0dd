/* SPDX-License-Identifier: MIT */
/*
 * route-bench's DPDK side: rte_lpm (DIR-24-8) and rte_lpm6 on DPDK's heap, EAL without
 * hugepages (tools/common/eal.c). Compiled with DPDK's own flags; the umem side is not.
 */
#include <errno.h>
#include <stdio.h>
#include <rte_errno.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>
#include <rte_malloc.h>
#include "eal.h"
#include "rte.h"

#define BURST 32u

static unsigned tables; /* names: one per table */

int rte_side_start(unsigned mem_mb)
{
	return bench_eal_start("route-bench", "rte_lpm", mem_mb);
}

static size_t heap_used(void)
{
	struct rte_malloc_socket_stats st;

	if (rte_malloc_get_socket_stats(0, &st))
		return 0;
	return st.heap_allocsz_bytes;
}

void *rte4_create(uint32_t max_rules, uint32_t tbl8s, size_t *bytes)
{
	struct rte_lpm_config c = { .max_rules = max_rules, .number_tbl8s = tbl8s };
	char name[32];
	size_t before = heap_used();
	struct rte_lpm *l;

	snprintf(name, sizeof(name), "rb4_%u", tables++);
	l = rte_lpm_create(name, 0, &c);
	if (!l)
		fprintf(stderr, "route-bench: rte_lpm_create: %s\n", rte_strerror(rte_errno));
	*bytes = heap_used() - before;
	return l;
}

int rte4_add(void *t, uint32_t addr, uint8_t depth, uint32_t nh)
{
	return rte_lpm_add(t, addr, depth, nh);
}

uint64_t rte4_lookup(const void *t, const uint32_t *addrs, size_t n)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++) {
		uint32_t nh;

		if (!rte_lpm_lookup(t, addrs[i], &nh))
			sum += nh;
	}
	return sum;
}

uint64_t rte4_lookup_bulk(const void *t, const uint32_t *addrs, size_t n)
{
	uint64_t sum = 0;
	uint32_t nh[BURST];

	for (size_t i = 0; i + BURST <= n; i += BURST) {
		rte_lpm_lookup_bulk(t, addrs + i, nh, BURST);
		for (unsigned k = 0; k < BURST; k++)
			sum += nh[k] & 0xffffff; /* a miss has the success bit clear, hop 0 */
	}
	return sum;
}

void rte4_results(const void *t, const uint32_t *addrs, uint32_t *nh, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (rte_lpm_lookup(t, addrs[i], &nh[i]))
			nh[i] = UINT32_MAX;
}

void rte4_free(void *t)
{
	rte_lpm_free(t);
}

void *rte6_create(uint32_t max_rules, uint32_t tbl8s, size_t *bytes)
{
	struct rte_lpm6_config c = { .max_rules = max_rules, .number_tbl8s = tbl8s };
	char name[32];
	size_t before = heap_used();
	struct rte_lpm6 *l;

	snprintf(name, sizeof(name), "rb6_%u", tables++);
	l = rte_lpm6_create(name, 0, &c);
	if (!l)
		fprintf(stderr, "route-bench: rte_lpm6_create: %s\n", rte_strerror(rte_errno));
	*bytes = heap_used() - before;
	return l;
}

int rte6_add(void *t, const uint8_t *addr, uint8_t depth, uint32_t nh)
{
	return rte_lpm6_add(t, addr, depth, nh);
}

uint64_t rte6_lookup(const void *t, const uint8_t (*addrs)[16], size_t n)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++) {
		uint32_t nh;

		if (!rte_lpm6_lookup(t, addrs[i], &nh))
			sum += nh;
	}
	return sum;
}

uint64_t rte6_lookup_bulk(const void *t, const uint8_t (*addrs)[16], size_t n)
{
	uint64_t sum = 0;
	int32_t nh[BURST];

	for (size_t i = 0; i + BURST <= n; i += BURST) {
		/* DPDK 22.11 takes the addresses non-const; it does not write them. */
		rte_lpm6_lookup_bulk_func(t, (uint8_t (*)[RTE_LPM6_IPV6_ADDR_SIZE])(uintptr_t)(addrs + i),
					  nh, BURST);
		for (unsigned k = 0; k < BURST; k++)
			sum += (uint32_t)nh[k] & 0xffffff; /* a miss is -1 */
	}
	return sum;
}

void rte6_results(const void *t, const uint8_t (*addrs)[16], uint32_t *nh, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (rte_lpm6_lookup(t, addrs[i], &nh[i]))
			nh[i] = UINT32_MAX;
}

void rte6_free(void *t)
{
	rte_lpm6_free(t);
}
