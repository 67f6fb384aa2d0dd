/* SPDX-License-Identifier: MIT */
/* xdp-fwd's --latency levels as idle policies (fwd_latency_idle_opts into umem/idle.h), on a
 * fake clock: at every level saturated input whose holes fit the level's spin budget never
 * sleeps and an idle worker sleeps; the levels spin more from saver to low; the deprecated
 * --idle-spin USECS is a fixed window. */
#include <umem/idle.h>

#include "testutil.h"
#include "fwd.h"

#define US 1000ull

static struct umem_idle *policy(const struct fwd_config *cfg, struct umem_idle_opts *o, uint64_t now)
{
	struct umem_idle *s;

	fwd_latency_idle_opts(cfg, o);
	s = umem_idle__create(o, now);
	CHECK(s, "the options of a level are valid: %s", strerror(errno));
	return s;
}

/* Full batches of 40 µs with 2 µs holes (5 % of the work: within every level's budget), then
 * nothing: no sleep while they come, a sleep within the level's longest spin once they stop.
 * Returns how long it spun after the last frame. */
static uint64_t saturated_then_idle(const struct fwd_config *cfg)
{
	struct umem_idle_opts o;
	uint64_t now = 1000 * US, last;
	struct umem_idle *s = policy(cfg, &o, now);

	for (unsigned i = 0; i < 10000; i++) {
		now += 40 * US;
		CHECK_EQ(umem_idle__turn(s, now, cfg->batch), UMEM_IDLE_POLL);
		now += 2 * US;
		CHECK(umem_idle__turn(s, now, 0) != UMEM_IDLE_SLEEP || i < 10,
		      "%s: slept in a 2 µs hole of saturated input", fwd_latency_names[cfg->latency]);
	}
	last = now;
	do {
		now += US;
		CHECK(now - last <= o.spin_max_ns + US, "%s: spun past its longest spin",
		      fwd_latency_names[cfg->latency]);
	} while (umem_idle__turn(s, now, 0) != UMEM_IDLE_SLEEP);
	umem_idle__destroy(s);
	return now - last;
}

static void test_levels(void)
{
	struct fwd_config cfg;
	uint64_t spun[FWD_LATENCY_MAX];
	struct umem_idle_opts prev = { 0 };

	fwd_config_defaults(&cfg);
	CHECK_EQ(cfg.latency, FWD_LATENCY_BALANCED);
	for (int l = 0; l < FWD_LATENCY_MAX; l++) {
		struct umem_idle_opts o;

		cfg.latency = (enum fwd_latency)l;
		fwd_latency_idle_opts(&cfg, &o);
		CHECK_EQ(o.batch, cfg.batch);
		CHECK(o.spin_max_ns > 0, "%s: never spins", fwd_latency_names[l]);
		/* Lower latency: spins at least as long and with at least as much budget. */
		CHECK(o.spin_max_ns >= prev.spin_max_ns && o.spin_min_ns >= prev.spin_min_ns,
		      "%s spins less than the level before", fwd_latency_names[l]);
		CHECK(!o.spin_share || (prev.spin_share && o.spin_share <= prev.spin_share) || !l,
		      "%s: a tighter budget than the level before", fwd_latency_names[l]);
		spun[l] = saturated_then_idle(&cfg);
		prev = o;
	}
	CHECK(spun[FWD_LATENCY_SAVER] < spun[FWD_LATENCY_LOW], "saver spins as long as low when idle");
}

/* --idle-spin USECS (deprecated): a fixed window of USECS, beyond 4.29 s the policy's longest;
 * --idle-spin auto: the default level. */
static void test_idle_spin_alias(void)
{
	struct fwd_config cfg, dflt;
	struct umem_idle_opts o, d;

	fwd_config_defaults(&cfg);
	dflt = cfg;
	cfg.idle_spin_given = true;
	cfg.idle_spin_usecs = 100;
	fwd_latency_idle_opts(&cfg, &o);
	CHECK(o.spin_min_ns == 100 * US && o.spin_max_ns == 100 * US && !o.spin_share, "a fixed window");
	cfg.idle_spin_usecs = 10000000;
	fwd_latency_idle_opts(&cfg, &o);
	CHECK_EQ(o.spin_max_ns, UINT32_MAX);
	cfg.idle_spin_auto = true;
	fwd_latency_idle_opts(&cfg, &o);
	fwd_latency_idle_opts(&dflt, &d);
	CHECK(!memcmp(&o, &d, sizeof(o)), "auto is the default level");
}

int main(void)
{
	test_levels();
	test_idle_spin_alias();
	printf("fwd_idle: ok\n");
	return 0;
}
