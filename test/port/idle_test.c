/* SPDX-License-Identifier: MIT */
/* The idle policy (umem/idle.h) on a fake clock: a loop whose empty turns take 1 µs, that
 * sleeps when told to until the next frame comes (plus a wakeup), under saturated, bursty,
 * sparse and absent input. */
#include <errno.h>
#include <stddef.h>
#include <sys/mman.h>
#include <unistd.h>
#include <umem/idle.h>

#include "testutil.h"

#define US 1000ull
#define TURN_NS (1 * US) /* an empty turn */
#define WAKE_NS (20 * US) /* from a frame to the sleeping loop's next turn */

struct sim {
	struct umem_idle *s;
	uint64_t now;
	bool preempted; /* every UMEM_IDLE_SPIN finds the thread preempted */
	unsigned sleeps, spin_turns, poll_turns; /* empty turns by answer */
	uint64_t spun_ns;
};

static void sim_init(struct sim *m, uint32_t batch, uint32_t min_us, uint32_t max_us, uint32_t share)
{
	UMEM_OPTS(umem_idle_opts, o, .batch = batch, .spin_min_ns = min_us * 1000, .spin_max_ns = max_us * 1000,
		  .spin_share = share);

	umem_idle__destroy(m->s);
	*m = (struct sim){ .now = 1000 * US };
	m->s = umem_idle__create(&o, m->now);
	CHECK(m->s, "create: %s", strerror(errno));
}

static void sim_reset_counts(struct sim *m)
{
	m->sleeps = m->spin_turns = m->poll_turns = 0;
	m->spun_ns = 0;
}

/* No frame for gap_ns, then a turn of work_ns that brings frames. An empty turn answered with
 * a sleep sleeps until the frame comes, plus WAKE_NS. */
static void gap_then_work(struct sim *m, uint64_t gap_ns, uint32_t frames, uint64_t work_ns)
{
	uint64_t end = m->now + gap_ns;

	while (m->now + TURN_NS <= end) {
		enum umem_idle_action a;

		m->now += TURN_NS;
		a = umem_idle__turn(m->s, m->now, 0);
		if (a == UMEM_IDLE_SPIN && m->preempted)
			a = umem_idle__preempted(m->s);
		if (a == UMEM_IDLE_SLEEP) {
			m->sleeps++;
			m->now = end + WAKE_NS;
			umem_idle__woke(m->s, m->now);
			break;
		}
		if (a == UMEM_IDLE_SPIN)
			m->spin_turns++;
		else
			m->poll_turns++;
		m->spun_ns += TURN_NS;
	}
	if (m->now < end)
		m->now = end;
	m->now += work_ns;
	CHECK_EQ(umem_idle__turn(m->s, m->now, frames), UMEM_IDLE_POLL);
}

/* warm gaps to measure from, then the counts from zero over n more, all alike. */
static void steady(struct sim *m, unsigned warm, unsigned n, uint64_t gap_ns, uint32_t frames, uint64_t work_ns)
{
	for (unsigned i = 0; i < warm; i++)
		gap_then_work(m, gap_ns, frames, work_ns);
	sim_reset_counts(m);
	for (unsigned i = 0; i < n; i++)
		gap_then_work(m, gap_ns, frames, work_ns);
}

static struct umem_idle_stats stats(const struct sim *m)
{
	UMEM_OPTS(umem_idle_stats, st);

	CHECK_EQ(umem_idle__stats(m->s, &st), 0);
	return st;
}

/* Full batches with holes up to nearly spin_max: while the spin budget lasts every hole is
 * spun through (saturated: up to spin_max, whatever the gaps measured), never a sleep; a
 * preemption still ends each spin (the loop gives way, as the kernel's busy-poll loop does on
 * need_resched()). */
static void test_saturated_full_batches(void)
{
	struct sim m = { 0 };

	sim_init(&m, 64, 0, 200, 4);
	steady(&m, 100, 0, 2 * US, 64, 40 * US); /* the fill and the budget measured */
	for (unsigned i = 0; i < 5000; i++)
		gap_then_work(&m, i % 50 == 0 ? 150 * US : 2 * US, 64, 40 * US);
	CHECK_EQ(m.sleeps, 0);
	CHECK(m.spin_turns > 5000, "the holes were spun through: %u turns", m.spin_turns);
	CHECK(stats(&m).saturated, "full batches count as saturated");
	CHECK(stats(&m).fill_pct >= 90, "fill %u %%", stats(&m).fill_pct);

	m.preempted = true;
	sim_reset_counts(&m);
	for (unsigned i = 0; i < 1000; i++)
		gap_then_work(&m, i % 50 == 0 ? 150 * US : 2 * US, 64, 40 * US);
	CHECK_EQ(m.sleeps, 1000); /* every hole: preempted at its first empty turn */
	CHECK(stats(&m).saturated, "still saturated");
	umem_idle__destroy(m.s);
}

/* A stream the loop just keeps up with: one frame a turn, back to back, with a 30 µs hole now
 * and then (the sender descheduled). Work takes most of the time: saturated though the
 * batches are nearly empty. Without a budget the holes are spun through; with 1/16 of the
 * work (3 µs of work a frame buys 3.75 µs of spin per 20 frames) the budget rules, saturated
 * or not: most holes are slept in. */
static void test_saturated_small_batches(void)
{
	struct sim m = { 0 };

	for (uint32_t share = 0; share <= 16; share += 16) {
		sim_init(&m, 64, 0, 200, share);
		for (unsigned i = 0; i < 2000; i++) /* the busy share measured: a few ms */
			gap_then_work(&m, i % 20 == 0 ? 30 * US : 0, 1, 3 * US);
		sim_reset_counts(&m);
		for (unsigned i = 0; i < 20000; i++)
			gap_then_work(&m, i % 20 == 0 ? 30 * US : 0, 1, 3 * US);
		if (share)
			CHECK(m.sleeps > 500, "1/16: only %u sleeps in 1000 holes", m.sleeps);
		else
			CHECK_EQ(m.sleeps, 0);
		CHECK(stats(&m).saturated, "busy most of the time counts as saturated");
		CHECK(stats(&m).fill_pct < 10, "fill %u %%", stats(&m).fill_pct);
	}
	umem_idle__destroy(m.s);
}

/* Input stops: the loop sleeps after at most spin_max, and from then on at every empty turn
 * (a poll timeout's wakeup) until a frame comes. */
static void test_idle_sleeps(void)
{
	struct sim m = { 0 };
	uint64_t last, before;

	sim_init(&m, 64, 0, 200, 4);
	for (unsigned i = 0; i < 1000; i++)
		gap_then_work(&m, 2 * US, 64, 20 * US);
	last = m.now;
	before = stats(&m).sleeps;
	for (;;) {
		m.now += TURN_NS;
		if (umem_idle__turn(m.s, m.now, 0) == UMEM_IDLE_SLEEP)
			break;
		CHECK(m.now - last < 200 * US, "spun past spin_max without a frame");
	}
	CHECK(m.now - last >= 199 * US, "saturated: spins up to spin_max (%llu ns)", (unsigned long long)(m.now - last));
	for (unsigned i = 0; i < 100; i++) {
		m.now += 100000 * US; /* the poll timeout */
		umem_idle__woke(m.s, m.now);
		CHECK_EQ(umem_idle__turn(m.s, m.now + TURN_NS, 0), UMEM_IDLE_SLEEP);
	}
	CHECK(!stats(&m).saturated, "asleep 10 s: not saturated any more");
	CHECK_EQ(stats(&m).sleeps - before, 101);
	umem_idle__destroy(m.s);
}

/* Sparse frames (one every 5 ms, as pings): every gap outlasts any spin, so after the first
 * few the loop spins only spin_min after each frame. */
static void test_sparse(void)
{
	struct sim m = { 0 };

	sim_init(&m, 64, 10, 200, 0);
	steady(&m, 50, 100, 5000 * US, 1, 5 * US);
	CHECK_EQ(m.sleeps, 100);
	CHECK(m.spun_ns <= 100 * 10 * US, "spun %llu ns: more than spin_min per gap", (unsigned long long)m.spun_ns);
	CHECK(m.spun_ns >= 100 * 9 * US, "spun %llu ns: less than spin_min per gap", (unsigned long long)m.spun_ns);
	CHECK_EQ(stats(&m).spin_limit_ns, 10 * US);
	umem_idle__destroy(m.s);
}

/* Bursts (20 frames 8 µs apart, 1 ms between bursts, as a paced sender): the gaps inside a
 * burst are spun through, the gap after it is slept in after a spin of about twice the short
 * gaps, far below spin_max. */
static void test_bursts(void)
{
	struct sim m = { 0 };

	sim_init(&m, 64, 0, 500, 0);
	for (unsigned b = 0; b < 50; b++)
		for (unsigned f = 0; f < 20; f++)
			gap_then_work(&m, f ? 8 * US : 1000 * US, 1, 2 * US);
	sim_reset_counts(&m);
	for (unsigned b = 0; b < 100; b++)
		for (unsigned f = 0; f < 20; f++)
			gap_then_work(&m, f ? 8 * US : 1000 * US, 1, 2 * US);
	CHECK_EQ(m.sleeps, 100); /* once per burst gap, never inside a burst */
	CHECK(!stats(&m).saturated, "a paced stream is not saturated");
	/* Spun: the short gaps (19 x 8 µs) plus at most 2 x ~8 µs before each sleep. */
	CHECK(m.spun_ns <= 100 * (19 * 8 + 20) * US, "spun %llu µs over 100 bursts",
	      (unsigned long long)(m.spun_ns / US));
	umem_idle__destroy(m.s);
}

/* The spin budget: spinning beyond spin_min stays within 1/share of the
 * working time. Gaps of 30 µs after 10 µs of work: without a budget every gap is spun through;
 * with 1/16 most of them are slept in. */
static void test_budget(void)
{
	struct sim m = { 0 };

	sim_init(&m, 64, 0, 200, 0);
	steady(&m, 4000, 2000, 30 * US, 1, 10 * US);
	CHECK(m.sleeps < 20, "no budget: %u sleeps in 2000 gaps", m.sleeps);

	sim_init(&m, 64, 0, 200, 16);
	steady(&m, 4000, 2000, 30 * US, 1, 10 * US);
	CHECK(m.sleeps > 1500, "1/16: only %u sleeps in 2000 gaps", m.sleeps);
	/* 2000 x 10 µs of work buys 1.25 ms of spin, plus one 1 µs overshoot a gap. */
	CHECK(m.spun_ns <= 2000 * 10 * US / 16 + 2000 * US, "spun %llu µs", (unsigned long long)(m.spun_ns / US));
	umem_idle__destroy(m.s);
}

/* A preemption ends the spin: the loop sleeps at every empty turn until the
 * next frame, then spins again. */
static void test_preempted(void)
{
	struct sim m = { 0 };

	sim_init(&m, 64, 100, 100, 0); /* a fixed window of 100 µs */
	gap_then_work(&m, 1000 * US, 1, 5 * US); /* spun 100 µs, then slept */
	CHECK_EQ(m.sleeps, 1);
	m.now += TURN_NS;
	CHECK_EQ(umem_idle__turn(m.s, m.now, 0), UMEM_IDLE_SPIN);
	CHECK_EQ(umem_idle__preempted(m.s), UMEM_IDLE_SLEEP);
	umem_idle__woke(m.s, m.now + US);
	CHECK_EQ(umem_idle__turn(m.s, m.now + 2 * US, 0), UMEM_IDLE_SLEEP);
	CHECK_EQ(umem_idle__turn(m.s, m.now + 3 * US, 1), UMEM_IDLE_POLL);
	CHECK_EQ(umem_idle__turn(m.s, m.now + 4 * US, 0), UMEM_IDLE_SPIN);
	CHECK_EQ(stats(&m).sleeps, 3); /* the preemption's, and the empty turn's after it */
	umem_idle__destroy(m.s);
}

/* spin_max 0 sleeps at the first empty turn, saturated or not; a fixed window (min = max)
 * spins exactly that long; a clock that goes back counts as no time. */
static void test_limits(void)
{
	struct sim m = { 0 };

	sim_init(&m, 64, 0, 0, 0);
	for (unsigned i = 0; i < 100; i++)
		gap_then_work(&m, 5 * US, 64, 20 * US);
	CHECK_EQ(m.sleeps, 100);
	CHECK_EQ(m.spun_ns, 0);

	sim_init(&m, 64, 50, 50, 0);
	gap_then_work(&m, 0, 1, US);
	for (unsigned i = 1; i < 50; i++)
		CHECK_EQ(umem_idle__turn(m.s, m.now + i * US, 0), UMEM_IDLE_SPIN);
	CHECK_EQ(umem_idle__turn(m.s, m.now + 50 * US, 0), UMEM_IDLE_SLEEP);
	umem_idle__woke(m.s, m.now + 60 * US);
	CHECK_EQ(umem_idle__turn(m.s, m.now + 10 * US, 1), UMEM_IDLE_POLL); /* back in time */
	CHECK_EQ(stats(&m).busy_turns, 2);
	umem_idle__destroy(m.s);
}

/* Bad options and stats are refused with EINVAL, naming the problem (on stderr). */
static void test_bad_input(void)
{
	UMEM_OPTS(umem_idle_opts, o, .spin_min_ns = 20, .spin_max_ns = 10);
	UMEM_OPTS(umem_idle_opts, r, .reserved = 1);
	UMEM_OPTS(umem_idle_opts, p, .saturated_pct = 101);
	struct umem_idle_opts z = { 0 };
	struct umem_idle_stats st = { .sz = 4 };
	struct umem_idle *s;

	errno = 0;
	CHECK(!umem_idle__create(&o, 0) && errno == EINVAL, "spin_min above spin_max");
	errno = 0;
	CHECK(!umem_idle__create(&r, 0) && errno == EINVAL, "reserved set");
	errno = 0;
	CHECK(!umem_idle__create(&p, 0) && errno == EINVAL, "saturated_pct above 100");
	errno = 0;
	CHECK(!umem_idle__create(&z, 0) && errno == EINVAL, "sz 0");
	s = umem_idle__create(NULL, 0);
	CHECK(s, "NULL opts: the defaults");
	CHECK_EQ(umem_idle__turn(s, 1, 0), UMEM_IDLE_SLEEP); /* spin_max 0 by default */
	CHECK_EQ(umem_idle__stats(s, &st), -EINVAL);
	CHECK_EQ(umem_idle__stats(s, NULL), -EINVAL);
	CHECK_EQ(umem_idle__stats(NULL, &st), -EINVAL);
	umem_idle__destroy(s);
	umem_idle__destroy(NULL);
}


/* Turns of 1 µs without a frame from the clock reading now until the policy says sleep, at most
 * max; returns how many were answered UMEM_IDLE_SPIN. */
static unsigned spin_until_sleep(struct umem_idle *s, uint64_t *now, unsigned max)
{
	unsigned spins = 0;

	for (unsigned i = 0; i < max; i++) {
		*now += TURN_NS;
		if (umem_idle__turn(s, *now, 0) == UMEM_IDLE_SLEEP)
			return spins;
		spins++;
	}
	return spins;
}

/* A clock that steps back (by an hour, or a 64-bit fake clock that wraps past zero) counts as
 * no time passed at that step, and time passes again from its new reading on: the spin after
 * the last frame still ends within spin_max, the working time is still measured. */
static void test_clock_back(void)
{
	UMEM_OPTS(umem_idle_opts, o, .spin_max_ns = 200 * US);
	const uint64_t hour = 3600ull * 1000000000ull;
	uint64_t starts[] = { 10 * hour, UINT64_MAX - 500 * US };
	uint64_t steps[] = { hour, 0 };

	for (unsigned c = 0; c < 2; c++) {
		uint64_t now = starts[c];
		struct umem_idle *s = umem_idle__create(&o, now);
		UMEM_OPTS(umem_idle_stats, st);
		unsigned spins;

		CHECK(s, "create: %s", strerror(errno));
		for (unsigned i = 0; i < 10; i++) { /* full batches: saturated, spins up to spin_max */
			now += 20 * US;
			CHECK_EQ(umem_idle__turn(s, now, 64), UMEM_IDLE_POLL);
		}
		/* An hour back; or on to the wrap: the reading after UINT64_MAX is 0. */
		now = c == 0 ? now - steps[c] : 0;
		spins = spin_until_sleep(s, &now, 10000);
		/* The turn at the step measures no time: 200 µs of spin take 201 turns. */
		CHECK(spins <= 201, "case %u: still spinning after %u turns of 1 µs past a step back of the clock "
		      "(spin_max 200 µs)", c, spins);
		CHECK(spins >= 150, "case %u: spun only %u µs", c, spins);
		umem_idle__woke(s, now + 50 * US);
		CHECK_EQ(umem_idle__turn(s, now + 60 * US, 1), UMEM_IDLE_POLL);
		CHECK_EQ(umem_idle__stats(s, &st), 0);
		CHECK(st.busy_ns >= 200 * US + 10 * US, "case %u: busy %llu ns: the turn after the step measured none",
		      c, (unsigned long long)st.busy_ns);
		CHECK(st.sleep_ns == 50 * US, "case %u: asleep %llu ns, expected 50 µs", c,
		      (unsigned long long)st.sleep_ns);
		umem_idle__destroy(s);
	}
}

/* Every turn a full batch: the decayed fill reaches 100 %, so saturated_pct 100 (accepted) is a
 * threshold full batches meet; and a batch beyond 2^24 frames measures its fill without
 * overflow. The turns' work takes less than half the time, so only the fill can make them
 * saturated. */
static void test_fill_full(void)
{
	const uint32_t batches[] = { 64, 1u << 25, UINT32_MAX };

	for (unsigned b = 0; b < 3; b++) {
		UMEM_OPTS(umem_idle_opts, o, .batch = batches[b], .spin_max_ns = 200 * US, .saturated_pct = 100);
		UMEM_OPTS(umem_idle_stats, st);
		uint64_t now = 1000 * US;
		struct umem_idle *s = umem_idle__create(&o, now);

		CHECK(s, "create: %s", strerror(errno));
		for (unsigned i = 0; i < 200; i++) {
			now += 10 * US;
			CHECK_EQ(umem_idle__turn(s, now, batches[b]), UMEM_IDLE_POLL);
			for (unsigned k = 0; k < 15; k++) {
				now += US;
				CHECK(umem_idle__turn(s, now, 0) != UMEM_IDLE_SLEEP || i < 100,
				      "batch %u: slept in a 15 µs hole between full batches", batches[b]);
			}
		}
		CHECK_EQ(umem_idle__stats(s, &st), 0);
		CHECK(st.fill_pct == 100, "batch %u: full batches measure a fill of %u %%", batches[b], st.fill_pct);
		CHECK(st.saturated, "batch %u: full batches at saturated_pct 100 are not saturated", batches[b]);
		CHECK_EQ(st.spin_limit_ns, 200 * US);
		/* Half batches: half full, and below the threshold. */
		for (unsigned i = 0; i < 200; i++) {
			now += 10 * US;
			CHECK_EQ(umem_idle__turn(s, now, batches[b] / 2), UMEM_IDLE_POLL);
			now += 15 * US;
			umem_idle__turn(s, now, 0);
		}
		CHECK_EQ(umem_idle__stats(s, &st), 0);
		CHECK(st.fill_pct >= 49 && st.fill_pct <= 50, "batch %u: half batches measure a fill of %u %%", batches[b], st.fill_pct);
		CHECK(!st.saturated, "batch %u: half batches at saturated_pct 100 count as saturated", batches[b]);
		umem_idle__destroy(s);
	}
}

/* An older caller's struct ends before spin_max_ns (sz 16): the policy reads no byte past sz,
 * not even to name the problem. The struct sits at the end of a page before an inaccessible
 * one, so a read past it faults. */
static void test_short_opts(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	const size_t sz = offsetof(struct umem_idle_opts, spin_max_ns);
	unsigned char *m = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct umem_idle_opts *o;
	struct umem_idle *s;

	CHECK(m != MAP_FAILED, "mmap: %s", strerror(errno));
	CHECK_EQ(mprotect(m + pg, (size_t)pg, PROT_NONE), 0);
	o = (struct umem_idle_opts *)(void *)(m + pg - sz); /* sz is a multiple of 8: aligned */
	memset(o, 0, sz);
	o->sz = sz;
	o->batch = 32;
	s = umem_idle__create(o, 0); /* spin_min 0, spin_max beyond sz: 0 */
	CHECK(s, "sz %zu, spin_min 0: %s", sz, strerror(errno));
	CHECK_EQ(umem_idle__turn(s, 1, 0), UMEM_IDLE_SLEEP);
	umem_idle__destroy(s);
	o->spin_min_ns = 5; /* above the default spin_max 0 */
	errno = 0;
	CHECK(!umem_idle__create(o, 0) && errno == EINVAL, "sz %zu, spin_min 5 above spin_max 0", sz);
	munmap(m, 2 * (size_t)pg);
}

int main(void)
{
	test_saturated_full_batches();
	test_saturated_small_batches();
	test_idle_sleeps();
	test_sparse();
	test_bursts();
	test_budget();
	test_preempted();
	test_limits();
	test_bad_input();
	test_clock_back();
	test_fill_full();
	test_short_opts();
	printf("port_idle: ok\n");
	return 0;
}
