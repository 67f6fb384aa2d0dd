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

static bool live(const struct l2_table *t, const struct l2_entry *e, uint64_t now_ns)
{
	return e->mac && now_ns - e->seen_ns <= t->aging_ns;
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
	t->stats = (struct l2_stats){ 0 };
	return 0;
}

void l2_table_fini(struct l2_table *t)
{
	free(t->slots);
	t->slots = NULL;
}

void l2_learn(struct l2_table *t, const uint8_t mac[6], int32_t port, uint64_t now_ns)
{
	uint64_t key = mac_key(mac);
	uint32_t h = mac_hash(key);
	struct l2_entry *reuse = NULL, *oldest = NULL;

	if (l2_is_group(mac) || !key)
		return;
	for (uint32_t i = 0; i < L2_PROBE; i++) {
		struct l2_entry *e = &t->slots[(h + i) & t->mask];

		if (e->mac == key) {
			if (live(t, e, now_ns) && e->port != port)
				t->stats.moved++;
			else if (!live(t, e, now_ns))
				t->stats.learned++;
			e->port = port;
			e->seen_ns = now_ns;
			return;
		}
		if (!reuse && !live(t, e, now_ns))
			reuse = e;
		if (!e->mac)
			break; /* end of the chain: the key is not further on */
		if (!oldest || e->seen_ns < oldest->seen_ns)
			oldest = e;
	}
	if (!reuse) {
		reuse = oldest;
		t->stats.evicted++;
	}
	t->stats.learned++;
	*reuse = (struct l2_entry){ .mac = key, .seen_ns = now_ns, .port = port };
}

int32_t l2_lookup(const struct l2_table *t, const uint8_t mac[6], uint64_t now_ns)
{
	uint64_t key = mac_key(mac);
	uint32_t h = mac_hash(key);

	if (l2_is_group(mac))
		return L2_NO_PORT;
	for (uint32_t i = 0; i < L2_PROBE; i++) {
		const struct l2_entry *e = &t->slots[(h + i) & t->mask];

		if (e->mac == key)
			return live(t, e, now_ns) ? e->port : L2_NO_PORT;
		if (!e->mac)
			break;
	}
	return L2_NO_PORT;
}

uint32_t l2_count(const struct l2_table *t, uint64_t now_ns)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i <= t->mask; i++)
		n += live(t, &t->slots[i], now_ns);
	return n;
}
