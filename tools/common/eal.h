/* SPDX-License-Identifier: MIT */
/*
 * DPDK's EAL for the benchmarks' DPDK baselines (umem-bench, route-bench), compiled into a
 * tool only when pkg-config finds libdpdk. The EAL runs without hugepages, PCI or shared config
 * files (--no-shconf), so it needs no set-up and leaves nothing behind.
 */
#ifndef UMEM_TOOLS_EAL_H
#define UMEM_TOOLS_EAL_H

/* Starts the EAL once per process (it cannot start again after rte_eal_cleanup()) on the
 * calling thread's CPU, with mem_mb MiB of ordinary memory; it stops at exit. prog and what
 * name the messages ("umem-bench: dpdk_mempool: ..."). 0, or -ENODEV (said on stderr). */
int bench_eal_start(const char *prog, const char *what, unsigned mem_mb);

#endif
