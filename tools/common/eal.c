/* SPDX-License-Identifier: MIT */
/* DPDK's EAL for the benchmarks (eal.h). */
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
#include "eal.h"

/* EAL still makes a runtime directory (/var/run/dpdk/<prefix>): a prefix of our own, removed
 * after rte_eal_cleanup(). */
static char runtime_dir[256];
static bool eal_up, eal_tried; /* eal_stop undoes only what bench_eal_start did */
static const char *eal_prog = "", *eal_what = "";

static void eal_stop(void)
{
	if (!eal_up)
		return;
	rte_eal_cleanup();
	eal_up = false;
	if (!runtime_dir[0])
		return;
	if (rmdir(runtime_dir))
		fprintf(stderr, "%s: %s: cannot remove %s: %s\n", eal_prog, eal_what, runtime_dir,
			strerror(errno));
	/* Its parent (/var/run/dpdk) too, unless another DPDK process uses it. */
	char *slash = strrchr(runtime_dir, '/');
	if (slash) {
		*slash = '\0';
		rmdir(runtime_dir);
	}
}

int bench_eal_start(const char *prog, const char *what, unsigned mem_mb)
{
	cpu_set_t saved;
	char lcore[32], prefix[64], mem[16], name[32];
	char *argv[] = { name, "--no-huge", "-m", mem, "--no-pci", "--no-shconf",
			 "--no-telemetry", "--log-level=*:error", "--file-prefix", prefix, "-l",
			 lcore, NULL };
	int cpu = sched_getcpu();

	if (eal_tried)
		return eal_up ? 0 : -ENODEV;
	eal_tried = true;
	eal_prog = prog;
	eal_what = what;

	snprintf(name, sizeof(name), "%s", prog);
	snprintf(mem, sizeof(mem), "%u", mem_mb);
	snprintf(lcore, sizeof(lcore), "%d", cpu < 0 ? 0 : cpu);
	snprintf(prefix, sizeof(prefix), "%s-%d", prog, (int)getpid());
	/* EAL pins the calling thread to its lcore; the other paths keep their own placement. */
	if (sched_getaffinity(0, sizeof(saved), &saved))
		return -errno;
	rte_openlog_stream(stderr); /* stdout carries the results (JSON) */
	int ret = rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv);

	sched_setaffinity(0, sizeof(saved), &saved);
	if (ret < 0) {
		fprintf(stderr, "%s: %s: rte_eal_init: %s\n", prog, what, rte_strerror(rte_errno));
		return -ENODEV;
	}
	eal_up = true;
	snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
	atexit(eal_stop);
	return 0;
}
