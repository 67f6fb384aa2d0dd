/* SPDX-License-Identifier: MIT */
/* The optional DPDK baseline (dpdk.c), built when pkg-config finds libdpdk. */
#ifndef UMEM_BENCH_DPDK_H
#define UMEM_BENCH_DPDK_H

#include <stdint.h>

#ifdef UMEM_BENCH_DPDK
int bench_dpdk_init(void **ctx);
uint64_t bench_dpdk_run(void *ctx, uint64_t ops);
/* rte_mempool_get_bulk + rte_mempool_put_bulk of n (<= 64) objects; returns the objects moved. */
uint64_t bench_dpdk_run_bulk(void *ctx, uint64_t ops, unsigned n);
void bench_dpdk_fini(void *ctx);
#endif

#endif
