/* SPDX-License-Identifier: MIT */
/* The worker's idle policy: when an empty loop turn spins on and when it sleeps in poll().
 * Pure (the caller passes the clock), so test/fwd/idle_test.c drives it with a fake one. */
#ifndef XDP_FWD_IDLE_H
#define XDP_FWD_IDLE_H

#include <stdbool.h>
#include <stdint.h>

/* auto: spin at most this share of the time spent working (1/FWD_IDLE_SPIN_SHARE)... */
#define FWD_IDLE_SPIN_SHARE 16u
/* ...over the last ~FWD_IDLE_DECAY_NS of turns (both sums halve when they pass it). */
#define FWD_IDLE_DECAY_NS 10000000ull

struct fwd_idle {
	uint64_t window_ns; /* spin this long after the last frame */
	bool budget;        /* auto: also within FWD_IDLE_SPIN_SHARE of the working time */
	bool spinning;      /* a window is open (from a turn with work until a sleep) */
	uint64_t last_ns;   /* end of the previous turn, or of the last sleep */
	uint64_t busy_at;   /* end of the last turn with work */
	uint64_t busy_ns;   /* decayed time of turns with work */
	uint64_t spun_ns;   /* decayed time of empty turns inside a window */
};

static inline void fwd_idle_init(struct fwd_idle *s, uint64_t window_ns, bool budget, uint64_t now)
{
	*s = (struct fwd_idle){ .window_ns = window_ns, .budget = budget, .spinning = true,
				.last_ns = now, .busy_at = now };
}

/* One loop turn ended at now, with or without work: true when the worker should sleep. A
 * window opens with each turn that had work and lasts window_ns. With the budget (auto), it
 * also ends once spinning has taken more than 1/FWD_IDLE_SPIN_SHARE of the working time: the
 * wakeups spinning saves then cost less than the CPU it takes, which on a machine whose
 * endpoints share the forwarder's CPUs is time the traffic itself needs. */
static inline bool fwd_idle_turn(struct fwd_idle *s, uint64_t now, bool work)
{
	uint64_t dt = now - s->last_ns;

	s->last_ns = now;
	if (work) {
		s->busy_ns += dt;
		s->busy_at = now;
		s->spinning = true;
	} else if (s->spinning) {
		s->spun_ns += dt;
	}
	if (s->busy_ns + s->spun_ns > FWD_IDLE_DECAY_NS) {
		s->busy_ns /= 2;
		s->spun_ns /= 2;
	}
	if (work)
		return false;
	if (s->spinning && now - s->busy_at < s->window_ns &&
	    (!s->budget || s->spun_ns * FWD_IDLE_SPIN_SHARE <= s->busy_ns))
		return false;
	s->spinning = false; /* until the next turn with work */
	return true;
}

/* Ends the window now (the worker was preempted: another task wants its CPU). */
static inline void fwd_idle_stop(struct fwd_idle *s)
{
	s->spinning = false;
}

/* After a sleep: the time asleep is neither work nor spin. */
static inline void fwd_idle_woke(struct fwd_idle *s, uint64_t now)
{
	s->last_ns = now;
}

#endif
