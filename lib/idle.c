/* SPDX-License-Identifier: MIT */
/* The idle policy (umem/idle.h): measurements per turn, one decision per empty turn. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <umem/idle.h>

#include "internal.h"

/* The time sums behind the busy share cover the last DECAY_NS to 2 * DECAY_NS: all of them
 * halve when they pass it, so the share follows a change of load within a few ms. */
#define DECAY_NS 4000000ull
/* The gap counts halve when they pass this many gaps. */
#define GAPS_MAX 64u
#define FILL_ONE 256 /* batch fill in 1/256 of a batch */
#define EWMA_SHIFT 3 /* decayed means: each new value weighs 1/8 */

struct umem_idle {
	uint64_t spin_min, spin_max;
	uint32_t share, batch;
	uint32_t sat_fill;  /* saturated_pct in FILL_ONE units */
	/* Decayed batch fill of the turns with frames, in FILL_ONE units << EWMA_SHIFT: kept
	 * scaled so the mean reaches a constant fill exactly (truncated at 1/256, full batches
	 * would stop at 97 % and never meet a saturated_pct of 98-100). */
	uint32_t fill8;
	/* The caller's clock at the previous call (end of a turn, or the wake after a sleep).
	 * Only its steps forward count: time is measured as elapsed durations, never as
	 * differences of readings, so a clock that steps back (or wraps) stalls nothing. */
	uint64_t read_ns;
	uint64_t quiet;     /* since the end of the last turn with frames (saturates) */
	uint64_t busy, idle, spun; /* decayed: time in turns with frames, without (asleep too), spun */
	uint64_t gap;       /* decayed mean of the near gaps, ns */
	uint32_t near, far; /* decayed counts of gaps that ended within / after spin_max */
	bool prev_work;     /* the previous turn had frames (no gap since) */
	bool gave_way;      /* preempted: sleep at every empty turn until the next frame */
	struct umem_idle_stats st;
};

struct umem_idle *umem_idle__create(const struct umem_idle_opts *opts, uint64_t now_ns)
{
	struct umem_idle *s;
	uint32_t pct;

	if (!OPTS_CHECK(opts, umem_idle_opts, "idle") ||
	    !OPTS_PAD(opts, umem_idle_opts, saturated_pct, sizeof(struct umem_idle_opts), "idle"))
		goto inval;
	/* Through OPTS_GET only: an older caller's struct may end before either field. */
	if (OPTS_GET(opts, spin_min_ns, 0) > OPTS_GET(opts, spin_max_ns, 0)) {
		pr_warn("idle: spin_min_ns %u is above spin_max_ns %u\n", OPTS_GET(opts, spin_min_ns, 0),
			OPTS_GET(opts, spin_max_ns, 0));
		goto inval;
	}
	pct = OPTS_GET(opts, saturated_pct, 0) ?: UMEM_IDLE_SATURATED_PCT_DEFAULT;
	if (pct > 100) {
		pr_warn("idle: saturated_pct %u is above 100\n", pct);
		goto inval;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->spin_min = OPTS_GET(opts, spin_min_ns, 0);
	s->spin_max = OPTS_GET(opts, spin_max_ns, 0);
	s->share = OPTS_GET(opts, spin_share, 0);
	s->batch = OPTS_GET(opts, batch, 0) ?: UMEM_IDLE_BATCH_DEFAULT;
	s->sat_fill = pct * FILL_ONE / 100;
	s->read_ns = now_ns;
	s->st.sz = sizeof(s->st);
	return s;
inval:
	errno = EINVAL;
	return NULL;
}

void umem_idle__destroy(struct umem_idle *s)
{
	free(s);
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The time since the previous call; a reading behind it counts as none, and the next one
 * counts from it. */
static uint64_t elapsed(struct umem_idle *s, uint64_t now_ns)
{
	uint64_t dt = now_ns > s->read_ns ? now_ns - s->read_ns : 0;

	s->read_ns = now_ns;
	return dt;
}

static void decay(struct umem_idle *s)
{
	while (s->busy > DECAY_NS || s->idle > DECAY_NS - s->busy) { /* busy + idle, unwrapped */
		s->busy /= 2;
		s->idle /= 2;
		s->spun /= 2;
	}
}

/* A gap between frames ended after g ns. */
static void note_gap(struct umem_idle *s, uint64_t g)
{
	if (g <= s->spin_max) {
		s->near++;
		s->gap = s->gap + (g >> EWMA_SHIFT) - (s->gap >> EWMA_SHIFT);
	} else {
		s->far++;
	}
	if (s->near + s->far > GAPS_MAX) {
		s->near /= 2;
		s->far /= 2;
	}
}

/* Saturated: the turns bring full batches, or work takes most of the time (a stream that the
 * loop just keeps up with brings small batches, but back to back). */
static bool saturated(const struct umem_idle *s)
{
	return s->fill8 >> EWMA_SHIFT >= s->sat_fill || s->busy > s->idle;
}

static uint64_t spin_limit(const struct umem_idle *s)
{
	uint64_t lim;

	if (s->share && s->spun * s->share > s->busy)
		return s->spin_min; /* the budget is spent, saturated or not: on a shared CPU the
				     * kernel's work for the same traffic waits for a spin */
	if (saturated(s))
		return s->spin_max;
	if (s->far > s->near)
		return s->spin_min; /* the next frame most likely comes after any spin */
	lim = 2 * s->gap;
	if (lim < s->spin_min)
		lim = s->spin_min;
	return lim < s->spin_max ? lim : s->spin_max;
}

enum umem_idle_action umem_idle__turn(struct umem_idle *s, uint64_t now_ns, uint32_t frames)
{
	uint64_t dt = elapsed(s, now_ns);

	s->st.turns++;
	if (frames) {
		/* 64 bits: a batch beyond 2^24 frames would overflow 32. */
		uint32_t f = (uint32_t)((uint64_t)(frames < s->batch ? frames : s->batch) * FILL_ONE / s->batch);

		s->st.busy_turns++;
		s->st.frames += frames;
		s->st.busy_ns += dt;
		s->busy = add_sat(s->busy, dt);
		if (!s->prev_work)
			note_gap(s, s->quiet); /* from the last frame to this turn's start */
		s->fill8 += f - (s->fill8 >> EWMA_SHIFT);
		s->quiet = 0;
		s->prev_work = true;
		s->gave_way = false;
		decay(s);
		return UMEM_IDLE_POLL;
	}
	s->prev_work = false;
	s->idle = add_sat(s->idle, dt);
	s->quiet = add_sat(s->quiet, dt);
	decay(s);
	if (!s->gave_way && s->quiet < spin_limit(s)) {
		s->st.spin_ns += dt;
		s->spun += dt;
		return UMEM_IDLE_SPIN;
	}
	s->st.sleeps++;
	return UMEM_IDLE_SLEEP;
}

enum umem_idle_action umem_idle__preempted(struct umem_idle *s)
{
	s->gave_way = true;
	s->st.sleeps++;
	return UMEM_IDLE_SLEEP;
}

void umem_idle__woke(struct umem_idle *s, uint64_t now_ns)
{
	uint64_t d = elapsed(s, now_ns);

	s->st.sleep_ns += d;
	s->idle = add_sat(s->idle, d);
	s->quiet = add_sat(s->quiet, d);
	if (d >= DECAY_NS)
		s->fill8 = 0; /* the stream stopped: what comes next is measured afresh */
	decay(s);
}

int umem_idle__stats(const struct umem_idle *s, struct umem_idle_stats *out)
{
	struct umem_idle_stats t;
	size_t n;

	if (!s) {
		pr_warn("idle stats: NULL policy\n");
		return -EINVAL;
	}
	if (!umem__out_check(out, sizeof(struct umem_idle_stats), "umem_idle_stats", "idle stats"))
		return -EINVAL;
	t = s->st;
	t.fill_pct = (s->fill8 >> EWMA_SHIFT) * 100 / FILL_ONE;
	t.gap_ns = s->gap > UINT32_MAX ? UINT32_MAX : (uint32_t)s->gap;
	t.spin_limit_ns = (uint32_t)spin_limit(s);
	t.saturated = saturated(s);
	n = out->sz < sizeof(t) ? out->sz : sizeof(t);
	t.sz = out->sz;
	memcpy(out, &t, n);
	return 0;
}
