/* SPDX-License-Identifier: MIT */
/* xdp-fwd MAC table: learning, moves, aging, group addresses, full probe windows, the walk of
 * live entries; the bridge's filtering of reserved destinations and bad sources. */
#include <pthread.h>

#include "testutil.h"
#include "l2.h"

#define SEC 1000000000ull

static void mac_of(uint8_t m[6], uint32_t i)
{
	m[0] = 0x02;
	m[1] = 0x77;
	m[2] = (uint8_t)(i >> 24);
	m[3] = (uint8_t)(i >> 16);
	m[4] = (uint8_t)(i >> 8);
	m[5] = (uint8_t)i;
}

static void test_learn_lookup_move(void)
{
	struct l2_table t;
	uint8_t a[6], b[6];

	CHECK_EQ(l2_table_init(&t, 64, 10 * SEC), 0);
	mac_of(a, 1);
	mac_of(b, 2);
	CHECK_EQ(l2_lookup(&t, a, 0), L2_NO_PORT);
	l2_learn(&t, a, 3, 0);
	CHECK_EQ(l2_lookup(&t, a, 1), 3);
	CHECK_EQ(l2_lookup(&t, b, 1), L2_NO_PORT);
	l2_learn(&t, a, 5, 2); /* the host moved */
	CHECK_EQ(l2_lookup(&t, a, 2), 5);
	CHECK_EQ(t.stats.learned, 1);
	CHECK_EQ(t.stats.moved, 1);
	CHECK_EQ(l2_count(&t, 2), 1);
	/* A sighting older than the entry's on another port (a stale report) does not move it. */
	l2_learn(&t, a, 3, 1);
	CHECK_EQ(l2_lookup(&t, a, 2), 5);
	CHECK_EQ(t.stats.moved, 1);
	l2_table_fini(&t);
}

static void test_aging(void)
{
	struct l2_table t;
	uint8_t a[6];

	CHECK_EQ(l2_table_init(&t, 64, 10 * SEC), 0);
	mac_of(a, 7);
	l2_learn(&t, a, 1, 100 * SEC);
	CHECK_EQ(l2_lookup(&t, a, 110 * SEC), 1); /* exactly the aging time: still valid */
	CHECK_EQ(l2_lookup(&t, a, 110 * SEC + 1), L2_NO_PORT);
	CHECK_EQ(l2_count(&t, 111 * SEC), 0);
	/* Seen again: valid again, counted as learned anew. */
	l2_learn(&t, a, 2, 111 * SEC);
	CHECK_EQ(l2_lookup(&t, a, 112 * SEC), 2);
	CHECK_EQ(t.stats.learned, 2);
	/* Refreshing keeps it alive past the first aging time. */
	l2_learn(&t, a, 2, 120 * SEC);
	CHECK_EQ(l2_lookup(&t, a, 129 * SEC), 2);
	l2_table_fini(&t);
}

static void test_group_addresses(void)
{
	struct l2_table t;
	uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t mcast[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };
	uint8_t zero[6] = { 0 };

	CHECK_EQ(l2_table_init(&t, 64, SEC), 0);
	l2_learn(&t, bcast, 1, 0); /* a group source is bogus: never learned */
	l2_learn(&t, mcast, 1, 0);
	l2_learn(&t, zero, 1, 0);
	CHECK_EQ(l2_count(&t, 0), 0);
	CHECK_EQ(l2_lookup(&t, bcast, 0), L2_NO_PORT);
	CHECK_EQ(l2_lookup(&t, mcast, 0), L2_NO_PORT);
	CHECK(l2_is_group(bcast) && l2_is_group(mcast) && !l2_is_group(zero), "I/G bit");
	l2_table_fini(&t);
}

/* More MACs than slots: every lookup answers the last port learned or "unknown", never a
 * wrong port; live entries are evicted only when a window is full of live ones. */
static void test_full_table(void)
{
	struct l2_table t;
	uint8_t m[6];
	uint32_t found = 0;

	CHECK_EQ(l2_table_init(&t, 16, 1000 * SEC), 0);
	for (uint32_t i = 0; i < 100; i++) {
		mac_of(m, i);
		l2_learn(&t, m, (int32_t)(i % 7), i);
	}
	CHECK_EQ(l2_count(&t, 200), 16);
	CHECK(t.stats.evicted >= 84, "evicted %llu", (unsigned long long)t.stats.evicted);
	for (uint32_t i = 0; i < 100; i++) {
		int32_t p;

		mac_of(m, i);
		p = l2_lookup(&t, m, 200);
		CHECK(p == L2_NO_PORT || p == (int32_t)(i % 7), "mac %u -> port %d", i, p);
		found += p != L2_NO_PORT;
	}
	CHECK_EQ(found, 16);
	/* Once everything aged out, new MACs reuse the slots without evicting live ones. */
	uint64_t evicted = t.stats.evicted;
	for (uint32_t i = 1000; i < 1016; i++) {
		mac_of(m, i);
		l2_learn(&t, m, 1, 5000 * SEC);
	}
	CHECK_EQ(t.stats.evicted, evicted);
	CHECK_EQ(l2_count(&t, 5000 * SEC), 16);
	l2_table_fini(&t);
}

/* An aged-out entry in front of a live one on the same probe chain must not hide it. */
static void test_chain_survives_aging(void)
{
	struct l2_table t;
	uint8_t m[6];
	uint64_t seed = 42;

	CHECK_EQ(l2_table_init(&t, 1024, 10 * SEC), 0);
	for (uint32_t i = 0; i < 600; i++) {
		mac_of(m, (uint32_t)test_rand(&seed));
		l2_learn(&t, m, 1, i < 300 ? 0 : 50 * SEC);
	}
	seed = 42;
	for (uint32_t i = 0; i < 600; i++) {
		mac_of(m, (uint32_t)test_rand(&seed));
		if (i >= 300 && l2_lookup(&t, m, 55 * SEC) != 1 && !t.stats.evicted)
			CHECK(0, "live MAC %u lost behind aged entries", i);
	}
	CHECK_EQ(l2_table_init(&t, 100, SEC), -EINVAL);
	l2_table_fini(&t);
}

/* Two workers learn and look up at once (xdp-fwd's l2 mode, no lock): each owns half of the
 * MACs and moves them between two ports of its own; every lookup must give a port the MAC was
 * learned on (never another worker's port, never a torn entry), and at the end every MAC sits
 * on its worker's last port. */
#define RACE_MACS 512u
#define RACE_ROUNDS 2000u

struct race {
	struct l2_table *t;
	uint32_t worker; /* ports 2w and 2w+1 */
	uint32_t bad;
};

static void *race_worker(void *arg)
{
	struct race *r = arg;
	uint8_t m[6];

	for (uint32_t round = 0; round < RACE_ROUNDS; round++) {
		int32_t port = (int32_t)(2 * r->worker + (round & 1));
		uint64_t now = (uint64_t)round * 2000000ull; /* past the refresh granularity */

		for (uint32_t i = r->worker; i < RACE_MACS; i += 2) {
			int32_t got;

			mac_of(m, i);
			l2_learn(r->t, m, port, now);
			mac_of(m, i ^ 1); /* the other worker's MAC */
			got = l2_lookup(r->t, m, now);
			if (got != L2_NO_PORT && (uint32_t)got / 2 != (r->worker ^ 1))
				r->bad++;
		}
	}
	return NULL;
}

static void test_concurrent_learners(void)
{
	struct l2_table t;
	struct race r[2];
	pthread_t th[2];
	uint8_t m[6];

	CHECK_EQ(l2_table_init(&t, 4096, 3600 * SEC), 0);
	for (uint32_t k = 0; k < 2; k++) {
		r[k] = (struct race){ .t = &t, .worker = k };
		CHECK_EQ(pthread_create(&th[k], NULL, race_worker, &r[k]), 0);
	}
	for (uint32_t k = 0; k < 2; k++)
		CHECK_EQ(pthread_join(th[k], NULL), 0);
	CHECK_EQ(r[0].bad + r[1].bad, 0);
	for (uint32_t i = 0; i < RACE_MACS; i++) {
		mac_of(m, i);
		CHECK_EQ(l2_lookup(&t, m, RACE_ROUNDS * 2000000ull), (int32_t)(2 * (i & 1) + 1));
	}
	CHECK_EQ(t.stats.learned, RACE_MACS);
	CHECK_EQ(t.stats.evicted, 0);
	l2_table_fini(&t);
}

static enum l2_verdict classify(const uint8_t dst[6], const uint8_t src[6], uint16_t mask)
{
	uint8_t eth[14] = { 0 };

	memcpy(eth, dst, 6);
	memcpy(eth + 6, src, 6);
	return l2_classify(eth, mask);
}

static void test_classify(void)
{
	static const uint8_t host[6] = { 0x02, 0, 0, 0, 0, 1 }, other[6] = { 0x02, 0, 0, 0, 0, 2 };
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t mcast[6] = { 0x01, 0x00, 0x5e, 0, 0, 1 }, zero[6] = { 0 };
	uint8_t r[6] = { 0x01, 0x80, 0xc2, 0, 0, 0 };

	CHECK_EQ(classify(other, host, 0), L2_FORWARD);
	CHECK_EQ(classify(bcast, host, 0), L2_FORWARD);
	CHECK_EQ(classify(mcast, host, 0), L2_FORWARD);
	/* Bad sources, whatever the destination; the source check comes first (br_handle_frame). */
	CHECK_EQ(classify(other, mcast, 0), L2_SRC_GROUP);
	CHECK_EQ(classify(other, bcast, 0xffff), L2_SRC_GROUP);
	CHECK_EQ(classify(other, zero, 0), L2_SRC_ZERO);
	r[5] = 0x0e;
	CHECK_EQ(classify(r, zero, 0xffff), L2_SRC_ZERO);
	/* Every reserved address :00-:0f, without and with each mask bit. */
	for (uint32_t x = 0; x < 16; x++) {
		r[5] = (uint8_t)x;
		CHECK_EQ(classify(r, host, 0), x == 0 ? L2_FORWARD : L2_RESERVED);
		CHECK_EQ(classify(r, host, 0xffff), x == 1 ? L2_RESERVED : L2_FORWARD); /* pause: never */
		CHECK_EQ(classify(r, host, (uint16_t)(1u << x)), x == 1 ? L2_RESERVED : L2_FORWARD);
		CHECK_EQ(classify(r, host, (uint16_t)~(1u << x)), x == 0 ? L2_FORWARD : L2_RESERVED);
	}
	/* Neighbours of the block are ordinary multicast. */
	r[5] = 0x10;
	CHECK_EQ(classify(r, host, 0), L2_FORWARD);
	r[5] = 0x0e;
	r[4] = 0x01;
	CHECK_EQ(classify(r, host, 0), L2_FORWARD);
	CHECK_EQ(L2_GROUPFWD_RESTRICTED, 0x0007); /* STP, pause, LACP, as the kernel's */
}

struct walked {
	uint32_t n;
	int32_t port[4];
	uint64_t age[4];
	uint8_t last[6];
};

static void walk_one(const struct l2_entry_view *e, void *arg)
{
	struct walked *w = arg;

	CHECK(w->n < 4, "walked more entries than are live");
	w->port[e->mac[5]] = e->port;
	w->age[e->mac[5]] = e->age_ns;
	memcpy(w->last, e->mac, 6);
	w->n++;
}

static void test_walk(void)
{
	struct l2_table t;
	struct walked w = { 0 };
	uint8_t a[6] = { 0x02, 0xaa, 0xbb, 0xcc, 0xdd, 1 }, b[6] = { 0x02, 0xaa, 0xbb, 0xcc, 0xdd, 2 };
	uint8_t c[6] = { 0x02, 0xaa, 0xbb, 0xcc, 0xdd, 3 };

	CHECK_EQ(l2_table_init(&t, 64, 10 * SEC), 0);
	l2_learn(&t, a, 0, 1 * SEC);
	l2_learn(&t, b, 2, 5 * SEC);
	l2_learn(&t, c, 1, 0); /* ages out by 11 s */
	CHECK_EQ(l2_walk(&t, 11 * SEC, walk_one, &w), 2);
	CHECK_EQ(w.n, 2);
	CHECK_EQ(w.port[1], 0);
	CHECK_EQ(w.port[2], 2);
	CHECK_EQ(w.age[1], 10 * SEC);
	CHECK_EQ(w.age[2], 6 * SEC);
	CHECK(!memcmp(w.last, a, 5), "the walk's MAC bytes are not the learned ones");
	CHECK_EQ(l2_count(&t, 11 * SEC), 2);
	/* Another worker's clock slightly ahead: age 0, never a wrapped huge one. */
	memset(&w, 0, sizeof(w));
	CHECK_EQ(l2_walk(&t, 4 * SEC, walk_one, &w), 3);
	CHECK_EQ(w.age[2], 0);
	l2_table_fini(&t);
}

/* A removed port's entries point nowhere at once (a lookup floods), the others, chained behind
 * them in a crowded table, are still found, and a forgotten MAC is learned again elsewhere. */
static void test_forget_port(void)
{
	struct l2_table t;
	uint8_t m[12][6];

	CHECK_EQ(l2_table_init(&t, 16, 10 * SEC), 0);
	for (int i = 0; i < 12; i++) {
		uint8_t mac[6] = { 0x02, 0, 0, 0, (uint8_t)(i * 37), (uint8_t)(i + 1) };

		memcpy(m[i], mac, 6);
		l2_learn(&t, m[i], i % 2, 1 * SEC);
	}
	CHECK_EQ(l2_forget_port(&t, 0), 6);
	for (int i = 0; i < 12; i++)
		CHECK_EQ(l2_lookup(&t, m[i], 2 * SEC), i % 2 ? 1 : L2_NO_PORT);
	CHECK_EQ(l2_forget_port(&t, 0), 0);
	l2_learn(&t, m[0], 3, 2 * SEC);
	CHECK_EQ(l2_lookup(&t, m[0], 2 * SEC), 3);
	l2_table_fini(&t);
}

int main(void)
{
	test_classify();
	test_forget_port();
	test_walk();
	test_concurrent_learners();
	test_learn_lookup_move();
	test_aging();
	test_group_addresses();
	test_full_table();
	test_chain_survives_aging();
	printf("fwd_l2: ok\n");
	return 0;
}
