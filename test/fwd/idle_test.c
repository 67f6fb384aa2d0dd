/* SPDX-License-Identifier: MIT */
/* xdp-fwd's idle policy (idle.h) on a fake clock: the window, the spin budget of auto, and
 * what counts as working time. */
#include "testutil.h"
#include "idle.h"

#define US 1000ull

/* Runs `cycles` of: one turn of work_us, then empty turns of 1 µs until gap_us has passed or the
 * policy says sleep (then the rest of the gap is asleep). Returns how many gaps ended asleep;
 * *spun gets the spinning time over the last half of the cycles. */
static unsigned run(struct fwd_idle *s, uint64_t *now, unsigned cycles, uint64_t work_us, uint64_t gap_us,
		    uint64_t *spun)
{
	unsigned slept = 0;

	*spun = 0;
	for (unsigned c = 0; c < cycles; c++) {
		uint64_t gap_end;

		*now += work_us * US;
		CHECK(!fwd_idle_turn(s, *now, true), "a turn with work never sleeps");
		gap_end = *now + gap_us * US;
		while (*now < gap_end) {
			*now += US;
			if (fwd_idle_turn(s, *now, false)) {
				slept++;
				*now = gap_end; /* asleep until the next frame */
				fwd_idle_woke(s, *now);
				break;
			}
			if (c >= cycles / 2)
				*spun += US;
		}
	}
	return slept;
}

/* Nearly saturated (gaps a twentieth of the work): auto spins through every gap. */
static void test_auto_spins_short_gaps(void)
{
	struct fwd_idle s;
	uint64_t now = 1000 * US, spun;

	fwd_idle_init(&s, 50 * US, true, now);
	CHECK_EQ(run(&s, &now, 2000, 40, 2, &spun), 0);
}

/* Slack (gaps longer than the work): auto spins at most its share of the working time and then
 * sleeps in every gap; a fixed window of the same length spins through them all. */
static void test_auto_budget(void)
{
	struct fwd_idle s;
	uint64_t now = 1000 * US, spun;
	const unsigned cycles = 2000;

	fwd_idle_init(&s, 50 * US, true, now);
	CHECK_EQ(run(&s, &now, cycles, 40, 60, &spun), cycles);
	/* Over the second half: 1000 cycles of 40 µs work (plus one 1 µs turn of overshoot each). */
	CHECK(spun <= (cycles / 2) * (40 * US / FWD_IDLE_SPIN_SHARE + US),
	      "auto spun more than its share of the working time");
	CHECK(spun > 0, "auto never spun");

	fwd_idle_init(&s, 50 * US, false, now);
	CHECK_EQ(run(&s, &now, cycles, 40, 45, &spun), 0);
}

/* The window: a fixed one sleeps once window_ns has passed since the last work, not before;
 * 0 sleeps at the first empty turn. */
static void test_window(void)
{
	struct fwd_idle s;
	uint64_t now = 1000 * US;

	fwd_idle_init(&s, 50 * US, false, now);
	now += 5 * US;
	CHECK(!fwd_idle_turn(&s, now, true), "work");
	for (unsigned i = 1; i < 50; i++)
		CHECK(!fwd_idle_turn(&s, now + i * US, false), "inside the window");
	CHECK(fwd_idle_turn(&s, now + 50 * US, false), "the window is over");
	CHECK(fwd_idle_turn(&s, now + 51 * US, false), "stays asleep until work");

	fwd_idle_init(&s, 0, false, now);
	CHECK(!fwd_idle_turn(&s, now + US, true), "work");
	CHECK(fwd_idle_turn(&s, now + 2 * US, false), "0: sleep at once");
}

/* Start: auto has no working time yet, so it sleeps at once; a fixed window spins from the
 * start. fwd_idle_stop ends a window early. */
static void test_start_and_stop(void)
{
	struct fwd_idle s;
	uint64_t now = 1000 * US;

	fwd_idle_init(&s, 50 * US, true, now);
	CHECK(fwd_idle_turn(&s, now + US, false), "auto: nothing to budget from");
	fwd_idle_init(&s, 50 * US, false, now);
	CHECK(!fwd_idle_turn(&s, now + US, false), "fixed: spins from the start");
	fwd_idle_stop(&s);
	CHECK(fwd_idle_turn(&s, now + 2 * US, false), "stopped: sleeps until work");
	CHECK(!fwd_idle_turn(&s, now + 3 * US, true), "work");
	CHECK(!fwd_idle_turn(&s, now + 4 * US, false), "a new window");
}

/* Time asleep is not working time: after a long sleep, one short turn of work buys only its own
 * share of spinning. */
static void test_sleep_is_not_work(void)
{
	struct fwd_idle s;
	uint64_t now = 1000 * US;

	fwd_idle_init(&s, 1000 * US, true, now);
	now += 5000 * US; /* asleep */
	fwd_idle_woke(&s, now);
	now += FWD_IDLE_SPIN_SHARE * US;
	CHECK(!fwd_idle_turn(&s, now, true), "work");
	CHECK(!fwd_idle_turn(&s, now + US, false), "1 µs of spin is its share of the work");
	CHECK(fwd_idle_turn(&s, now + 2 * US, false), "2 µs is more than its share");
}

int main(void)
{
	test_auto_spins_short_gaps();
	test_auto_budget();
	test_window();
	test_start_and_stop();
	test_sleep_is_not_work();
	printf("fwd_idle: ok\n");
	return 0;
}
