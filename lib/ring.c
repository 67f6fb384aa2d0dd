/* SPDX-License-Identifier: MIT */
/* The pool's return ring: many producers (any thread putting a page), one consumer (the owner). */
#include <sched.h>
#include <stdlib.h>
#include "internal.h"

int umem__ring_init(struct umem_ring *r, uint32_t size)
{
	r->slots = aligned_alloc(UMEM_CACHELINE, (size_t)size * sizeof(*r->slots));
	if (!r->slots)
		return -ENOMEM;
	for (uint32_t i = 0; i < size; i++)
		atomic_init(&r->slots[i].seq, 0); /* position i is ready at i + 1: never 0 */
	atomic_init(&r->prod_head, 0);
	atomic_init(&r->cons_pub, 0);
	r->cons = 0;
	r->size = size;
	r->mask = size - 1;
	return 0;
}

void umem__ring_fini(struct umem_ring *r)
{
	free(r->slots);
	r->slots = NULL;
}

/* Pushes up to n addresses; returns how many (0: full), or -ESHUTDOWN once the ring is closed. */
int umem__ring_push(struct umem_ring *r, const uint64_t *addrs, uint32_t n)
{
	uint64_t head = atomic_load_explicit(&r->prod_head, memory_order_relaxed);
	uint32_t k;

	for (;;) {
		if (head & UMEM_RING_DEAD)
			return -ESHUTDOWN;
		/* Acquire pairs with the consumer's release store of cons_pub: the slots we are about
		 * to overwrite have been read by the consumer. */
		uint64_t cons = atomic_load_explicit(&r->cons_pub, memory_order_acquire);
		uint64_t room = r->size - (head - cons);

		k = n < room ? n : (uint32_t)room;
		if (!k)
			return 0;
		if (atomic_compare_exchange_weak_explicit(&r->prod_head, &head, head + k,
							  memory_order_relaxed, memory_order_relaxed))
			break;
	}
	for (uint32_t i = 0; i < k; i++) {
		struct umem_ring_slot *s = &r->slots[(head + i) & r->mask];

		s->addr = addrs[i];
		/* Release pairs with the consumer's acquire load of seq: the address is visible. */
		atomic_store_explicit(&s->seq, head + i + 1, memory_order_release);
	}
	return (int)k;
}

static uint32_t ring_take(struct umem_ring *r, uint64_t *addrs, uint32_t max)
{
	uint64_t c = r->cons;
	uint32_t k = 0;

	while (k < max) {
		struct umem_ring_slot *s = &r->slots[c & r->mask];

		/* Acquire pairs with the producer's release store of seq. */
		if (atomic_load_explicit(&s->seq, memory_order_acquire) != c + 1)
			break;
		addrs[k++] = s->addr;
		c++;
	}
	if (k) {
		r->cons = c;
		/* Release pairs with the producers' acquire load of cons_pub: slots are free. */
		atomic_store_explicit(&r->cons_pub, c, memory_order_release);
	}
	return k;
}

uint32_t umem__ring_pop(struct umem_ring *r, uint64_t *addrs, uint32_t max)
{
	return ring_take(r, addrs, max);
}

/* Closes the ring to producers; returns the final head: every position below it was reserved
 * and will be published by its producer. */
uint64_t umem__ring_close(struct umem_ring *r)
{
	return atomic_fetch_or_explicit(&r->prod_head, UMEM_RING_DEAD, memory_order_acq_rel) &
	       ~UMEM_RING_DEAD;
}

/* After close: takes up to max addresses below end, waiting for producers that reserved a slot
 * but have not published it yet (they are a few instructions from doing so). */
uint32_t umem__ring_pop_until(struct umem_ring *r, uint64_t end, uint64_t *addrs, uint32_t max)
{
	uint64_t left = end - r->cons;

	if (left < max)
		max = (uint32_t)left;
	uint32_t k = 0;
	while (k < max) {
		k += ring_take(r, addrs + k, max - k);
		if (k < max)
			sched_yield();
	}
	return k;
}
