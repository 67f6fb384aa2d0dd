/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>

#include "l2.h"

static uint64_t mac_key(const uint8_t m[6])
{
	return (uint64_t)m[0] << 40 | (uint64_t)m[1] << 32 | (uint64_t)m[2] << 24 |
	       (uint64_t)m[3] << 16 | (uint64_t)m[4] << 8 | m[5];
}

static uint32_t mac_hash(uint64_t key)
{
	/* Fibonacci hashing: the low bits of MACs of one vendor are the varying ones. */
	return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32);
}

/* Refreshing the time of a known MAC is skipped within this much: every frame would otherwise
 * write the slot, and its cache line would bounce between the workers. */
#define L2_REFRESH_NS 1000000ull

#define KEY_MAC(k) ((k) >> 16)

static uint64_t key_of(uint64_t mac, int32_t port)
{
	return mac << 16 | (uint16_t)(port + 1);
}

static int32_t key_port(uint64_t k)
{
	return (int32_t)(k & 0xffff) - 1;
}

/* Signed: another worker's clock read may be a little ahead of ours. */
static bool live_at(const struct l2_table *t, uint64_t key, uint64_t seen_ns, uint64_t now_ns)
{
	return key && (int64_t)(now_ns - seen_ns) <= (int64_t)t->aging_ns;
}

static void stat_add(_Atomic uint64_t *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

int l2_table_init(struct l2_table *t, uint32_t size, uint64_t aging_ns)
{
	if (size < L2_PROBE || (size & (size - 1)))
		return -EINVAL;
	t->slots = calloc(size, sizeof(*t->slots));
	if (!t->slots)
		return -ENOMEM;
	t->mask = size - 1;
	t->aging_ns = aging_ns;
	t->group_fwd_mask = 0;
	atomic_init(&t->stats.learned, 0);
	atomic_init(&t->stats.moved, 0);
	atomic_init(&t->stats.evicted, 0);
	return 0;
}

void l2_table_fini(struct l2_table *t)
{
	free(t->slots);
	t->slots = NULL;
}

void l2_learn(struct l2_table *t, const uint8_t mac[6], int32_t port, uint64_t now_ns)
{
	uint64_t mac_k = mac_key(mac), want = key_of(mac_k, port), reuse_key = 0, oldest_seen = 0;
	uint32_t h = mac_hash(mac_k);
	struct l2_entry *reuse = NULL, *oldest = NULL;
	bool evict = false;

	if (l2_is_group(mac) || !mac_k)
		return;
	for (uint32_t i = 0; i < L2_PROBE; i++) {
		struct l2_entry *e = &t->slots[(h + i) & t->mask];
		uint64_t key = atomic_load_explicit(&e->key, memory_order_acquire);
		uint64_t seen = atomic_load_explicit(&e->seen_ns, memory_order_relaxed);
		bool alive = live_at(t, key, seen, now_ns);

		if (key && KEY_MAC(key) == mac_k) {
			if (key == want && alive && (int64_t)(now_ns - seen) < (int64_t)L2_REFRESH_NS)
				return;
			/* A sighting older than the entry's (the program's records of offloaded
			 * traffic are up to 100 ms old) never moves it back. */
			if (key != want && alive && (int64_t)(now_ns - seen) < 0)
				return;
			atomic_store_explicit(&e->seen_ns, now_ns, memory_order_relaxed);
			if (key != want &&
			    !atomic_compare_exchange_strong_explicit(&e->key, &key, want, memory_order_release,
								     memory_order_relaxed))
				return; /* another learner changed it meanwhile */
			if (alive && key != want)
				stat_add(&t->stats.moved);
			else if (!alive)
				stat_add(&t->stats.learned);
			return;
		}
		if (!reuse && !alive) {
			reuse = e;
			reuse_key = key;
		}
		if (!key)
			break; /* end of the chain: the key is not further on */
		if (!oldest || seen < oldest_seen) {
			oldest = e;
			oldest_seen = seen;
		}
	}
	if (!reuse) {
		reuse = oldest;
		reuse_key = atomic_load_explicit(&oldest->key, memory_order_relaxed);
		evict = true;
	}
	/* The time first: a reader that sees the new key (acquire) sees this time too. */
	atomic_store_explicit(&reuse->seen_ns, now_ns, memory_order_relaxed);
	if (!atomic_compare_exchange_strong_explicit(&reuse->key, &reuse_key, want, memory_order_release,
						     memory_order_relaxed))
		return;
	if (evict)
		stat_add(&t->stats.evicted);
	stat_add(&t->stats.learned);
}

int32_t l2_lookup(const struct l2_table *t, const uint8_t mac[6], uint64_t now_ns)
{
	uint64_t mac_k = mac_key(mac);
	uint32_t h = mac_hash(mac_k);

	if (l2_is_group(mac))
		return L2_NO_PORT;
	for (uint32_t i = 0; i < L2_PROBE; i++) {
		struct l2_entry *e = &t->slots[(h + i) & t->mask];
		uint64_t key = atomic_load_explicit(&e->key, memory_order_acquire);

		if (key && KEY_MAC(key) == mac_k)
			return live_at(t, key, atomic_load_explicit(&e->seen_ns, memory_order_relaxed), now_ns)
				       ? key_port(key)
				       : L2_NO_PORT;
		if (!key)
			break;
	}
	return L2_NO_PORT;
}

uint32_t l2_forget_port(struct l2_table *t, int32_t port)
{
	uint32_t n = 0;

	for (uint32_t i = 0; t->slots && i <= t->mask; i++) {
		struct l2_entry *e = &t->slots[i];
		uint64_t key = atomic_load_explicit(&e->key, memory_order_acquire);

		if (!key || key_port(key) != port)
			continue;
		/* The key stays non-zero: probe chains behind it stay intact (l2.h). */
		atomic_store_explicit(&e->seen_ns, 0, memory_order_relaxed);
		atomic_store_explicit(&e->key, key_of(KEY_MAC(key), L2_NO_PORT), memory_order_release);
		n++;
	}
	return n;
}

uint32_t l2_walk(const struct l2_table *t, uint64_t now_ns,
		 void (*fn)(const struct l2_entry_view *e, void *arg), void *arg)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i <= t->mask; i++) {
		struct l2_entry *e = &t->slots[i];
		/* Acquire: pairs with the learner's release, so the time read belongs to this key. */
		uint64_t key = atomic_load_explicit(&e->key, memory_order_acquire);
		uint64_t seen = atomic_load_explicit(&e->seen_ns, memory_order_relaxed);
		struct l2_entry_view v;
		uint64_t mac = KEY_MAC(key);

		if (!live_at(t, key, seen, now_ns))
			continue;
		for (int b = 0; b < 6; b++)
			v.mac[b] = (uint8_t)(mac >> (40 - 8 * b));
		v.port = key_port(key);
		/* Another worker's clock may be a little ahead of ours. */
		v.age_ns = (int64_t)(now_ns - seen) > 0 ? now_ns - seen : 0;
		if (fn)
			fn(&v, arg);
		n++;
	}
	return n;
}

uint32_t l2_count(const struct l2_table *t, uint64_t now_ns)
{
	return l2_walk(t, now_ns, NULL, NULL);
}
