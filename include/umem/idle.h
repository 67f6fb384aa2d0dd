/* SPDX-License-Identifier: MIT */
/*
 * libumem idle policy: when a polling loop spins on and when it sleeps.
 *
 * A loop that drives ports (rx_burst, tx_burst, service) calls umem_idle__turn once per turn
 * with the frames the turn found, and does what it answers: poll again at once, poll again
 * but give way to other tasks, or sleep (poll()/epoll_wait() on the ports' fds). The policy
 * decides from what it measures, not from a fixed spin time:
 *  - saturated input (the turns bring on average at least saturated_pct of a batch, or work
 *    takes more than half of the loop's time, both over the last few milliseconds): an empty
 *    turn is a short hole in a stream; the loop spins up to spin_max_ns after its last frame,
 *    whatever gaps it measured.
 *  - otherwise, from the gaps between frames (a turn with frames after empty turns): when
 *    most recent gaps ended within spin_max_ns, the loop spins for twice their decayed mean
 *    (at least spin_min_ns, at most spin_max_ns), which catches the next frame of a stream
 *    that pauses; when most outlasted spin_max_ns (single requests, a paced stream's idle
 *    milliseconds), it spins only spin_min_ns.
 *  - in both, spin_share bounds the spinning beyond spin_min_ns to a share of the working
 *    time, and a preemption ends a spin (UMEM_IDLE_SPIN). Where the loop shares its CPUs with
 *    the kernel's own work for the same traffic (veth, the endpoints), a spin is time that
 *    work waits for: a saturated loop that never gave way moved 0.8x the TCP throughput at
 *    MTU 64000 (docs/BENCHMARKS.md).
 * The same trade the kernel's NAPI makes with napi_defer_hard_irqs and gro_flush_timeout
 * (Linux commit 6f8b12d661d0, "net: napi: add hard irqs deferral feature": keep polling for
 * a bounded time after the queue ran empty instead of re-arming the interrupt), and VPP's
 * adaptive rx-mode (polling while the load is high, interrupts when it is low), here chosen
 * per turn from the measured load.
 *
 * Pure: the caller passes the clock (monotonic ns, e.g. CLOCK_MONOTONIC), so tests drive it
 * with a fake one. No system calls, no locks. One loop (thread) uses one state; the stats are
 * read by that thread (publish them itself to share them).
 */
#ifndef UMEM_IDLE_H
#define UMEM_IDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <umem/common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UMEM_IDLE_BATCH_DEFAULT 64u          /* opts.batch 0 */
#define UMEM_IDLE_SATURATED_PCT_DEFAULT 50u  /* opts.saturated_pct 0 */

struct umem_idle_opts {
	size_t sz;              /* sizeof(struct umem_idle_opts) */
	uint32_t batch;         /* the most frames one turn takes (its RX burst); 0 = 64 */
	uint32_t spin_min_ns;   /* an empty turn spins at least this long after the last frame */
	uint32_t spin_max_ns;   /* and at most this long; 0: sleep at the first empty turn */
	/* Spin (beyond spin_min_ns) at most 1/spin_share of the time spent in turns with frames,
	 * saturated or not; 0: no limit. */
	uint32_t spin_share;
	uint32_t saturated_pct; /* batch fill, in % of batch, that counts as saturated; 0 = 50 */
	uint32_t reserved;      /* zero */
};

/* What the loop does after a turn. */
enum umem_idle_action {
	UMEM_IDLE_POLL = 0, /* poll again at once (the turn had frames) */
	UMEM_IDLE_SPIN,     /* poll again, but give way: preempted, call umem_idle__preempted */
	UMEM_IDLE_SLEEP,    /* sleep until an fd is ready; then call umem_idle__woke */
};

/* Counters since umem_idle__create, and the measurements now. */
struct umem_idle_stats {
	size_t sz;               /* set to sizeof(struct umem_idle_stats) before the call */
	uint64_t turns;          /* umem_idle__turn calls */
	uint64_t busy_turns;     /* ... with frames */
	uint64_t frames;         /* frames those turns brought */
	uint64_t sleeps;         /* turns answered UMEM_IDLE_SLEEP (preemptions that ended a spin too) */
	uint64_t spin_ns;        /* time in empty turns answered UMEM_IDLE_SPIN (preempted or not) */
	uint64_t busy_ns;        /* time in turns with frames */
	uint64_t sleep_ns;       /* time between a sleep and umem_idle__woke */
	uint32_t fill_pct;       /* decayed batch fill of the turns with frames, % of batch */
	uint32_t gap_ns;         /* decayed mean of the gaps between frames that ended within spin_max_ns */
	uint32_t spin_limit_ns;  /* how long an empty turn now spins after the last frame */
	uint32_t saturated;      /* 1: the input counts as saturated now */
};

struct umem_idle;

/* A policy whose clock starts at now_ns. opts may be NULL (all defaults: spin_max_ns 0, i.e.
 * sleep at the first empty turn). Fails (NULL, errno) with EINVAL (spin_min_ns > spin_max_ns,
 * saturated_pct > 100, a bad sz or a non-zero reserved field; a message names it) or ENOMEM. */
UMEM_API struct umem_idle *umem_idle__create(const struct umem_idle_opts *opts, uint64_t now_ns);
UMEM_API void umem_idle__destroy(struct umem_idle *s);

/* One turn of the loop ended at now_ns and brought frames frames (0: empty). Returns what the
 * loop does next. A clock that goes back (or wraps) counts as no time passed at that step, and
 * from its new reading on as before (here and in umem_idle__woke). */
UMEM_API enum umem_idle_action umem_idle__turn(struct umem_idle *s, uint64_t now_ns, uint32_t frames);

/* After a UMEM_IDLE_SPIN: the thread was preempted (another task wants its CPU; e.g. its
 * involuntary context switches grew, getrusage(RUSAGE_THREAD)). Ends the spin: returns
 * UMEM_IDLE_SLEEP, counted as a sleep. The kernel's busy-poll loop stops on need_resched()
 * the same way. */
UMEM_API enum umem_idle_action umem_idle__preempted(struct umem_idle *s);

/* After a sleep: the loop woke at now_ns (the time asleep is neither work nor spin). */
UMEM_API void umem_idle__woke(struct umem_idle *s, uint64_t now_ns);

/* Counters and measurements into out (out->sz set: UMEM_OPTS(umem_idle_stats, st)). 0, or
 * -EINVAL (NULL, a bad out->sz). */
UMEM_API int umem_idle__stats(const struct umem_idle *s, struct umem_idle_stats *out);

#ifdef __cplusplus
}
#endif

#endif
