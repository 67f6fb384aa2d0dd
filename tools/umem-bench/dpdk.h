/* SPDX-License-Identifier: MIT */
/* The optional DPDK baseline (dpdk.c), built when pkg-config finds libdpdk. */
#ifndef UMEM_BENCH_DPDK_H
#define UMEM_BENCH_DPDK_H

#include <stdint.h>

#ifdef UMEM_BENCH_DPDK
int bench_dpdk_init(void **ctx);
uint64_t bench_dpdk_run(void *ctx, uint64_t ops);
void bench_dpdk_fini(void *ctx);
#endif

#endif
