/* SPDX-License-Identifier: MIT */
/* xdp-fwd's process environment: standard descriptors, signals, an output that may go away. */
#ifndef XDP_FWD_SYS_H
#define XDP_FWD_SYS_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

struct rtnl_link_stats;

static inline uint64_t fwd_clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Monotonic time in ns (CLOCK_MONOTONIC_COARSE is precise enough for aging and stats). */
static inline uint64_t fwd_now_ns(void)
{
	return fwd_clock_ns(CLOCK_MONOTONIC_COARSE);
}

/* Opens /dev/null on each of fds 0-2 that is closed. Called first thing: otherwise the first
 * socket created takes fd 1 or 2 and the stats or messages are written into it. 0 or -errno. */
int fwd_std_fds(void);
/* Ignores SIGPIPE and SIGXFSZ (a closed stats or --pcap reader, a file past ulimit -f: the write
 * fails and says so, rather than ending the forwarder attached) and fills set with the
 * signals the main thread takes: SIGINT, SIGTERM stop; SIGHUP reloads; SIGUSR1 prints the stats
 * now; SIGUSR2 restarts (restart.h). Called first: until set is blocked, handlers record a
 * SIGINT/SIGTERM (interrupting a blocking call) and ignore SIGHUP/SIGUSR1/SIGUSR2, so that no
 * signal of the start-up ends xdp-fwd with state left behind. */
void fwd_signals(sigset_t *set);
/* The SIGINT or SIGTERM that arrived during start-up (recorded, or pending once blocked), or 0:
 * the start-up is to be undone. */
int fwd_startup_stopped(void);
/* After a write to out: false once it has failed (EPIPE, EBADF, ...). The first failure is
 * reported on stderr once; out is not written again. */
bool fwd_out_ok(FILE *out);
/* stdout into a pipe or socket becomes non-blocking behind a bounded queue of whole lines, so
 * that a reader that stops reading never holds up the main thread: a line that does not fit is
 * dropped and counted (said on stderr once). After the arguments are parsed, before any stats. */
void fwd_out_init(void);
/* Writes what the reader takes of the queue now (each tick of the main loop). */
void fwd_out_pump(void);
/* At exit: the queue written, waiting a second at most for the reader; the dropped lines said. */
void fwd_out_drain(void);
/* The stream the exit totals go to: stdout, or stderr once stdout has failed. */
FILE *fwd_totals_stream(void);

/* Calls fn for every interface of this network namespace with its link stats (one rtnetlink
 * dump through getifaddrs; 32-bit counts). 0, or -errno when the dump fails. */
typedef void (*fwd_link_fn)(void *arg, const char *name, uint32_t ifindex, const struct rtnl_link_stats *st);
int fwd_each_link(fwd_link_fn fn, void *arg);

/* A 32-bit kernel count (struct rtnl_link_stats: tx_packets wraps after 2^32 frames, 71 minutes
 * at 1 Mpps) widened to 64 bits. Read at least once per 2^32 of its events, the sum of the
 * differences is exact across wraps; the first read starts the sum at the count itself. */
struct fwd_wide32 {
	uint64_t total;
	uint32_t last;
	bool seen;
};

static inline uint64_t fwd_wide32_read(struct fwd_wide32 *w, uint32_t count)
{
	w->total = w->seen ? w->total + (uint32_t)(count - w->last) : count;
	w->last = count;
	w->seen = true;
	return w->total;
}

/* Asks the kernel to keep idle CPUs within usecs of waking (the CPU latency QoS request of
 * /dev/cpu_dma_latency) until fwd_cpu_latency_release() or the process's exit, however it
 * exits: the kernel drops the request with the descriptor. 0 or -errno. */
int fwd_cpu_latency_hold(uint32_t usecs);
void fwd_cpu_latency_release(void);
/* Why the request may not shorten wakeups here (no cpuidle driver; for 0, no polling state,
 * e.g. arm64's shallowest state is WFI), or NULL. */
const char *fwd_cpu_latency_caveat(uint32_t usecs);

#endif
