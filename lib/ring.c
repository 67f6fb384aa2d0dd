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
		atomic_init(&r->slots[i], UMEM_RING_EMPTY);
	atomic_init(&r->prod_head, 0);
	atomic_init(&r->cons_seen, 0);
	atomic_init(&r->cons_pub, 0);
	atomic_init(&r->cons_lock, 0);
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

/* Reserves up to n slots for a producer; returns how many (0: full) with the first position in
 * *pos, or -ESHUTDOWN once the ring is closed. The slots must then be published. */
int umem__ring_reserve(struct umem_ring *r, uint32_t n, uint64_t *pos)
{
	/* cons_seen before prod_head: every position the consumer passed was reserved, so the
	 * head read next is at least cons and head - cons never wraps. Acquire pairs with the
	 * release store below by the producer that read it from cons_pub, and through that with
	 * the consumer's release store of cons_pub: the slots we are about to overwrite have been
	 * read by the consumer. */
	uint64_t cons = atomic_load_explicit(&r->cons_seen, memory_order_acquire);
	uint64_t head = atomic_load_explicit(&r->prod_head, memory_order_relaxed);
	bool fresh = false;
	uint32_t k;

	for (;;) {
		if (head & UMEM_RING_DEAD)
			return -ESHUTDOWN;
		/* A cons_seen that another producer's older read overwrote can trail the head by
		 * more than the ring: no room by it. */
		uint64_t used = head - cons, room = used < r->size ? r->size - used : 0;

		if (room < n && !fresh) {
			/* Acquire pairs with the consumer's release store of cons_pub. */
			cons = atomic_load_explicit(&r->cons_pub, memory_order_acquire);
			atomic_store_explicit(&r->cons_seen, cons, memory_order_release);
			head = atomic_load_explicit(&r->prod_head, memory_order_relaxed);
			fresh = true;
			continue;
		}
		k = n < room ? n : (uint32_t)room;
		if (!k)
			return 0;
		if (atomic_compare_exchange_weak_explicit(&r->prod_head, &head, head + k,
							  memory_order_relaxed, memory_order_relaxed))
			break;
		fresh = false; /* others reserved meanwhile: the consumer may have moved too */
	}
	*pos = head;
	return (int)k;
}

/* Publishes k reserved slots from pos. Once the last one is stored the consumer may take the
 * pages, and a closed ring's pool may then be freed: nothing of the ring (or its pool) may be
 * touched after this returns. */
void umem__ring_publish(struct umem_ring *r, uint64_t pos, const uint64_t *addrs, uint32_t k)
{
	_Atomic uint64_t *slots = r->slots;
	uint32_t mask = r->mask;

	/* Release pairs with the consumer's acquire load of the slot: the page's last writes
	 * (its refcount at rest) are visible with the address. */
	for (uint32_t i = 0; i < k; i++)
		atomic_store_explicit(&slots[(pos + i) & mask], addrs[i], memory_order_release);
}

static uint32_t ring_take(struct umem_ring *r, uint64_t *addrs, uint32_t max)
{
	uint64_t c = r->cons;
	uint32_t k = 0;

	while (k < max) {
		_Atomic uint64_t *s = &r->slots[c & r->mask];
		/* Acquire pairs with the producer's release store of the address. A slot not yet
		 * published still holds EMPTY: every older address was taken before cons_pub let a
		 * producer reserve it again. */
		uint64_t a = atomic_load_explicit(s, memory_order_acquire);

		if (a == UMEM_RING_EMPTY)
			break;
		/* Ordered before the producers' next write of this slot by the release store of
		 * cons_pub below, which they acquire before reserving it. */
		atomic_store_explicit(s, UMEM_RING_EMPTY, memory_order_relaxed);
		addrs[k++] = a;
		c++;
	}
	if (k) {
		r->cons = c;
		/* Release pairs with the producers' acquire load of cons_pub: slots are free. */
		atomic_store_explicit(&r->cons_pub, c, memory_order_release);
	}
	return k;
}

bool umem__ring_trylock(struct umem_ring *r)
{
	/* Acquire pairs with the release in umem__ring_unlock: the last consumer's cons is seen. */
	return !atomic_exchange_explicit(&r->cons_lock, 1, memory_order_acquire);
}

void umem__ring_unlock(struct umem_ring *r)
{
	atomic_store_explicit(&r->cons_lock, 0, memory_order_release);
}

/* The consumer's pop; the caller holds the consumer lock. */
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

/* Slots still to drain after close (positions below end not taken yet). */
uint64_t umem__ring_left(const struct umem_ring *r, uint64_t end)
{
	return end - r->cons;
}

/* After close: takes up to max addresses below end. A producer that reserved a slot is a few
 * instructions from publishing it, so this yields a bounded number of times for it; a producer
 * preempted for longer (a SCHED_FIFO thread on the same CPU would never let it run) leaves its
 * page in the ring, for umem__pools_reclaim() to collect. */
#define POP_UNTIL_YIELDS 256
uint32_t umem__ring_pop_until(struct umem_ring *r, uint64_t end, uint64_t *addrs, uint32_t max)
{
	uint64_t left = end - r->cons;
	uint32_t k = 0;

	if (left < max)
		max = (uint32_t)left;
	for (int tries = 0; k < max; tries++) {
		k += ring_take(r, addrs + k, max - k);
		if (k == max || tries == POP_UNTIL_YIELDS)
			break;
		sched_yield();
	}
	return k;
}
