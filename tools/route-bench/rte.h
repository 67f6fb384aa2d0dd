/* SPDX-License-Identifier: MIT */
/* route-bench's optional DPDK side (rte.c): rte_lpm and rte_lpm6, built when pkg-config finds
 * libdpdk. The calls mirror what route-bench does with umem_lpm4/umem_lpm6. */
#ifndef ROUTE_BENCH_RTE_H
#define ROUTE_BENCH_RTE_H

#include <stddef.h>
#include <stdint.h>

#ifdef ROUTE_BENCH_DPDK
int rte_side_start(unsigned mem_mb); /* 0, or -ENODEV (said on stderr) */
/* A table for max_rules prefixes with tbl8s second-level groups; NULL (said) on failure.
 * *bytes: what it took from DPDK's heap. */
void *rte4_create(uint32_t max_rules, uint32_t tbl8s, size_t *bytes);
int rte4_add(void *t, uint32_t addr, uint8_t depth, uint32_t nh);
uint64_t rte4_lookup(const void *t, const uint32_t *addrs, size_t n); /* sum of next hops */
uint64_t rte4_lookup_bulk(const void *t, const uint32_t *addrs, size_t n); /* bursts of 32 */
void rte4_results(const void *t, const uint32_t *addrs, uint32_t *nh, size_t n); /* MISS: UINT32_MAX */
void rte4_free(void *t);
void *rte6_create(uint32_t max_rules, uint32_t tbl8s, size_t *bytes);
int rte6_add(void *t, const uint8_t *addr, uint8_t depth, uint32_t nh);
uint64_t rte6_lookup(const void *t, const uint8_t (*addrs)[16], size_t n);
uint64_t rte6_lookup_bulk(const void *t, const uint8_t (*addrs)[16], size_t n);
void rte6_results(const void *t, const uint8_t (*addrs)[16], uint32_t *nh, size_t n);
void rte6_free(void *t);
#endif

#endif
