/* SPDX-License-Identifier: MIT */
/*
 * The pool: page_pool's alloc cache, refill, return ring, recycling, fragments and teardown, in
 * one file as net/core/page_pool.c has them (fragments are carved from pages the cache hands
 * out, and their pages recycle through the same paths).
 *
 * Fragments follow page_pool_alloc_frag(): the pool carves its current page at increasing
 * offsets. The page's refcount is set when claimed to the fragments of the requested size it
 * will take (frag_claim), and the fragments are counted in frag_users, a plain owner-only
 * counter. The fragment that fills the page makes the two equal: the count then equals the
 * fragments still alive and nothing is subtracted. A page closed early (a size that does not
 * fit) drops the claim's rest, frag_claim - frag_users, through the owner's put path; a page
 * that would take more fragments than claimed gets UMEM_FRAG_BIAS more first (page_pool's
 * BIAS scheme). So each fragment costs no atomic on the alloc side, and for fragments of one
 * size neither does the page change.
 */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

static inline uint32_t align_up(uint32_t v, uint32_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static inline uint64_t page_base(struct umem_area *a, uint64_t addr)
{
	return addr >> a->f.page_shift << a->f.page_shift;
}

/* ---- debug: the single-owner rule ------------------------------------------------------- */

/* An owner-only call marks the pool with its thread for its duration; another thread entering
 * one while the mark is set is two owners at once. A pool may change owner between calls (a
 * pool created by main and handed to a worker, or torn down by main after the worker joined):
 * that needs a happens-before the library cannot see, and is legal. */
struct owner_guard {
	struct umem_pool *p;
	bool took;
};

static void __attribute__((noinline)) owner_enter_debug(struct owner_guard *g, const char *what)
{
	unsigned long me = (unsigned long)pthread_self(), cur = 0;

	if (atomic_compare_exchange_strong(&g->p->owner_thread, &cur, me)) {
		g->took = true;
		return;
	}
	if (cur == me) /* nested: a slow path calling another */
		return;
	umem__die("debug: %s on pool %p from thread 0x%lx while thread 0x%lx is inside another call "
		  "of it (single-owner rule: alloc, put and ref through a pool on one thread at a "
		  "time)", what, (void *)g->p, me, cur);
}

/* Inline: outside debug mode every owner-only call pays one test for it. */
static inline struct owner_guard owner_enter(struct umem_pool *p, const char *what)
{
	struct owner_guard g = { p, false };

	if (umem_unlikely(p->f.debug))
		owner_enter_debug(&g, what);
	return g;
}

static inline void owner_exit(struct owner_guard *g)
{
	if (g->took)
		atomic_store(&g->p->owner_thread, 0);
}

#define OWNER_ONLY(p, what) \
	struct owner_guard _og __attribute__((cleanup(owner_exit), unused)) = owner_enter(p, what)

/* ---- life cycle ------------------------------------------------------------------------- */

struct umem_pool *umem_pool__create(struct umem_area *area, const struct umem_pool_opts *opts)
{
	struct umem_pool *p;
	uint32_t ring_size;
	int err = -EINVAL;

	if (!area) {
		pr_warn("pool: NULL area\n");
		goto fail;
	}
	if (!OPTS_CHECK(opts, umem_pool_opts, "pool") ||
	    !OPTS_PAD(opts, umem_pool_opts, ring_size, sizeof(struct umem_pool_opts), "pool"))
		goto fail;
	ring_size = OPTS_GET(opts, ring_size, 0) ?: UMEM_POOL_RING_DEFAULT;
	if (ring_size < 64 || ring_size > 65536 || (ring_size & (ring_size - 1))) {
		pr_warn("pool: umem_pool_opts.ring_size = %u is not a power of two in 64..65536\n",
			ring_size);
		goto fail;
	}
	err = -ENOMEM;
	p = aligned_alloc(UMEM_CACHELINE, sizeof(*p));
	if (!p) {
		pr_warn("pool: no memory\n");
		goto fail;
	}
	memset(p, 0, sizeof(*p));
	err = umem__ring_init(&p->ring, ring_size);
	if (err) {
		pr_warn("pool: no memory for a return ring of %u\n", ring_size);
		goto free_pool;
	}
	p->area = area;
	p->f.area = &area->f;
	p->f.pages = area->f.pages;
	p->f.page_shift = area->f.page_shift;
	p->f.debug = area->f.debug;
	/* Debug mode sends every inline put, ref and fragment to the checked paths. */
	p->f.area_size = area->f.debug ? 0 : area->f.size;
	p->f.frag_max = area->f.debug ? 0 : area->f.page_size / 2;
	p->f.frag_chunk = area->f.chunk_size ?: area->f.page_size;
	p->f.frag_page = UMEM_NO_PAGE;
	p->f.put_page = UMEM_NO_PAGE;
	atomic_init(&p->owner_thread, 0);
	atomic_init(&p->life, 1);
	pthread_mutex_lock(&area->lock);
	p->next = area->pools;
	if (p->next)
		p->next->pprev = &p->next;
	p->pprev = &area->pools;
	area->pools = p;
	area->reclaim = umem__pools_reclaim;
	pthread_mutex_unlock(&area->lock);
	atomic_fetch_add(&area->pools_alive, 1);
	return p;

free_pool:
	free(p);
fail:
	errno = -err;
	return NULL;
}

struct umem_area *umem_pool__area(const struct umem_pool *p)
{
	return p ? p->area : NULL;
}

/* The last page of a destroyed pool is home: unlink and free it. */
static void pool_free(struct umem_pool *p, bool locked)
{
	struct umem_area *a = p->area;

	if (!locked)
		pthread_mutex_lock(&a->lock);
	*p->pprev = p->next;
	if (p->next)
		p->next->pprev = p->pprev;
	if (!locked)
		pthread_mutex_unlock(&a->lock);
	umem__ring_fini(&p->ring);
	free(p);
	atomic_fetch_sub(&a->pools_draining, 1);
}

/* Gives pages of owner back to the area (locked: the caller holds the area lock); the release
 * that brings a destroyed pool's count to zero frees it. */
static bool pool_release_as(struct umem_pool *owner, const uint64_t *addrs, uint32_t n, bool locked)
{
	struct umem_area *a = owner->area;

	for (uint32_t i = 0; i < n; i++)
		a->f.pages[addrs[i] >> a->f.page_shift].owner = NULL;
	if (locked)
		umem__store_put(a, addrs, n);
	else
		umem_area__put_pages(a, addrs, n);
	atomic_fetch_add_explicit(&owner->pages_released, n, memory_order_relaxed);
	if (atomic_fetch_sub_explicit(&owner->life, n, memory_order_acq_rel) != (int64_t)n)
		return false;
	pool_free(owner, locked);
	return true;
}

static void pool_release(struct umem_pool *owner, const uint64_t *addrs, uint32_t n)
{
	pool_release_as(owner, addrs, n, false);
}

uint32_t umem__pools_reclaim(struct umem_area *a)
{
	uint64_t buf[UMEM_POOL_REFILL];
	uint32_t total = 0, k;

	for (struct umem_pool *q = a->pools, *next; q; q = next) {
		next = q->next;
		/* The ring lock is dropped before the pages go: the last of a destroyed pool's
		 * frees it. A busy ring is being refilled from by its owner: not idle. */
		while (umem__ring_trylock(&q->ring)) {
			k = umem__ring_pop(&q->ring, buf, UMEM_POOL_REFILL);
			umem__ring_unlock(&q->ring);
			if (!k)
				break;
			total += k;
			if (pool_release_as(q, buf, k, true))
				break;
		}
	}
	/* No message here: the caller holds the area lock, and the print callback may call into
	 * the area (umem_area__get_pages logs the count after unlocking). */
	return total;
}

/* ---- the slow allocation paths ---------------------------------------------------------- */

static void put_flush(struct umem_pool *p);
static void frag_close(struct umem_pool *p);

/* Takes up to n pages from the area for p: owner set, held. Counted as one slow allocation when
 * alloc is set (the page the caller gets; the rest are counted fast when taken from the cache). */
static int pool_take_from_area(struct umem_pool *p, uint64_t *addrs, uint32_t n, bool alloc)
{
	struct umem_pool_fast *f = &p->f;
	/* Only an allocation may reclaim idle rings: prefill builds a working set, and taking
	 * another's (or its own) would only move pages between rings. */
	int got = umem__area_get(p->area, addrs, n, alloc);

	if (got <= 0)
		return 0;
	for (int i = 0; i < got; i++)
		f->pages[addrs[i] >> f->page_shift].owner = p;
	atomic_fetch_add_explicit(&p->life, got, memory_order_relaxed);
	UMEM__STAT(f, pages_held, (uint64_t)got);
	if (!alloc)
		return got;
	if (f->area->page_size > 4096)
		UMEM__STAT(f, alloc_slow_high_order, 1);
	else
		UMEM__STAT(f, alloc_slow, 1);
	return got;
}

/* Refill the alloc cache: from the return ring first, else in bulk from the area. The page the
 * caller takes next is counted here (refill or slow), as in page_pool, so fast + slow +
 * slow_high_order + refill partition the pages handed out. */
static void pool_refill(struct umem_pool *p)
{
	struct umem_pool_fast *f = &p->f;
	uint32_t n = 0;

	/* A reclaimer draining this ring right now: the area has the pages. That ring is busy,
	 * not empty, so alloc.empty does not count it. */
	if (umem__ring_trylock(&p->ring)) {
		n = umem__ring_pop(&p->ring, f->cache + f->count, UMEM_POOL_REFILL);
		umem__ring_unlock(&p->ring);
		if (!n)
			UMEM__STAT(f, alloc_empty, 1);
	}
	if (n) {
		f->count += n;
		UMEM__STAT(f, alloc_refill, 1);
		return;
	}
	f->count += (uint32_t)pool_take_from_area(p, f->cache + f->count, UMEM_POOL_REFILL, true);
	/* The area is dry: the put slot may hold a page whose other holders are gone, and the
	 * current fragment page may have none left (closing it recycles it then). */
	if (!f->count) {
		if (f->frag_page != UMEM_NO_PAGE)
			frag_close(p);
		put_flush(p);
		if (f->count)
			UMEM__STAT(f, alloc_fast, 1); /* from the cache it was recycled into */
	}
}

/* Sends pages of one owner to its return ring; what does not fit, or a destroyed owner, goes
 * back to the area. Nothing of the owner is touched after the publication: from then on its
 * destroyer may take the pages and free it (the pages not published still hold it alive). */
static void pool_push(struct umem_pool *owner, const uint64_t *addrs, uint32_t n)
{
	uint64_t pos;
	int k = umem__ring_reserve(&owner->ring, n, &pos);

	if (k == -ESHUTDOWN)
		k = 0;
	else if (k < (int)n)
		atomic_fetch_add_explicit(&owner->recycle_ring_full, n - (uint32_t)k, memory_order_relaxed);
	if (k > 0) {
		/* Counted while the reserved slots still hold the pool: destroy waits for them. */
		atomic_fetch_add_explicit(&owner->recycle_ring, (uint64_t)k, memory_order_relaxed);
		umem__ring_publish(&owner->ring, pos, addrs, (uint32_t)k);
	}
	if (k < (int)n)
		pool_release(owner, addrs + k, n - (uint32_t)k);
}

int umem_pool__prefill(struct umem_pool *p, uint32_t n)
{
	uint64_t buf[UMEM_POOL_REFILL];
	uint32_t done = 0;

	if (!p) {
		pr_warn("pool prefill: NULL pool\n");
		return -EINVAL;
	}
	OWNER_ONLY(p, "prefill");
	while (done < n) {
		uint64_t head = atomic_load_explicit(&p->ring.prod_head, memory_order_relaxed);
		/* cons_pub: a reclaimer may be consuming this ring right now. */
		uint64_t room = p->ring.size -
				(head - atomic_load_explicit(&p->ring.cons_pub, memory_order_acquire));
		uint32_t want = n - done < UMEM_POOL_REFILL ? n - done : UMEM_POOL_REFILL;

		if (room < want)
			want = (uint32_t)room;
		int got = want ? pool_take_from_area(p, buf, want, false) : 0;
		if (!got)
			break;
		/* The owner is the ring's consumer, so the room it saw cannot shrink but by other
		 * producers; what does not fit goes straight back. */
		uint64_t pos;
		int k = umem__ring_reserve(&p->ring, (uint32_t)got, &pos);
		if (k < 0)
			k = 0;
		if (k)
			umem__ring_publish(&p->ring, pos, buf, (uint32_t)k);
		done += (uint32_t)k;
		if (k < got) {
			pool_release(p, buf + k, (uint32_t)(got - k));
			break;
		}
	}
	return (int)done;
}

/* A page from the cache (refilled when empty) with its refcount set; UMEM_NO_PAGE: exhausted. */
static uint64_t pool_take_page(struct umem_pool *p, int32_t refcnt)
{
	struct umem_pool_fast *f = &p->f;

	if (umem_likely(f->count))
		UMEM__STAT(f, alloc_fast, 1);
	else
		pool_refill(p);
	if (!f->count)
		return UMEM_NO_PAGE;
	uint64_t a = f->cache[--f->count];
	atomic_store_explicit(&f->pages[a >> f->page_shift].refcnt, refcnt, memory_order_relaxed);
	return a;
}

int umem__pool_alloc_slow(struct umem_pool *p, uint64_t *addr)
{
	uint64_t a;

	if (!p || !addr) {
		pr_warn("pool alloc: NULL %s\n", p ? "addr" : "pool");
		return -EINVAL;
	}
	OWNER_ONLY(p, "alloc");
	a = pool_take_page(p, 1);
	if (a == UMEM_NO_PAGE) {
		pr_debug("pool alloc: area exhausted\n");
		return -ENOMEM;
	}
	if (p->f.debug)
		umem__track_alloc(p->area, a, p->area->f.page_size);
	*addr = a;
	return 0;
}

/* Hands out the top n entries of the cache (n <= count, not debug mode), with each page's
 * refcount; their order within the batch does not matter (all of them are the cache's
 * warmest). One loop, no call: the caller's registers stay free. Locals: the refcount stores
 * could alias the pool's fields. */
static inline void alloc_cached(struct umem_pool_fast *f, uint64_t *addrs, uint32_t n)
{
	struct umem_page *pages = f->pages;
	uint32_t shift = f->page_shift;
	const uint64_t *src = f->cache + (f->count -= n);

#pragma GCC unroll 4
	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = src[i];

		addrs[i] = a;
		atomic_store_explicit(&pages[a >> shift].refcnt, 1, memory_order_relaxed);
	}
}

static int __attribute__((noinline)) alloc_bulk_slow(struct umem_pool *p, uint64_t *addrs, uint32_t n)
{
	struct umem_pool_fast *f = &p->f;
	uint32_t k = 0;

	OWNER_ONLY(p, "alloc_bulk");
	while (k < n) {
		uint32_t charged = 0;

		if (!f->count) {
			pool_refill(p);
			if (!f->count)
				break;
			charged = 1; /* the refill counted the first page */
		}
		uint32_t take = n - k < f->count ? n - k : f->count;
		if (!f->debug) {
			alloc_cached(f, addrs + k, take);
			k += take;
		} else {
			for (uint32_t i = 0; i < take; i++) {
				uint64_t a = f->cache[--f->count];

				atomic_store_explicit(&f->pages[a >> f->page_shift].refcnt, 1,
						      memory_order_relaxed);
				umem__track_alloc(p->area, a, f->area->page_size);
				addrs[k++] = a;
			}
		}
		UMEM__STAT(f, alloc_fast, take - charged);
	}
	return (int)k;
}

int umem_pool__alloc_bulk(struct umem_pool *p, uint64_t *addrs, uint32_t n)
{
	if (!p || (n && !addrs)) {
		pr_warn("pool alloc_bulk: NULL %s\n", p ? "addrs" : "pool");
		return -EINVAL;
	}
	/* The common case first: the cache holds the batch (debug mode checks the single-owner
	 * rule before it touches the pool). */
	if (umem_likely(n <= p->f.count && !p->f.debug)) {
		alloc_cached(&p->f, addrs, n);
		UMEM__STAT(&p->f, alloc_fast, n);
		return (int)n;
	}
	return alloc_bulk_slow(p, addrs, n);
}

int umem_pool__flush(struct umem_pool *p)
{
	uint64_t buf[UMEM_POOL_REFILL];
	uint32_t k, total = 0;

	if (!p) {
		pr_warn("pool flush: NULL pool\n");
		return -EINVAL;
	}
	OWNER_ONLY(p, "flush");
	/* The current fragment page too: with no fragment left it is at rest and goes below;
	 * with some, it returns when the last one does. */
	if (p->f.frag_page != UMEM_NO_PAGE)
		frag_close(p);
	put_flush(p);
	if (p->f.count) {
		total = p->f.count;
		p->f.count = 0;
		pool_release(p, p->f.cache, total);
	}
	if (umem__ring_trylock(&p->ring)) {
		while ((k = umem__ring_pop(&p->ring, buf, UMEM_POOL_REFILL))) {
			pool_release(p, buf, k);
			total += k;
		}
		umem__ring_unlock(&p->ring);
	}
	return (int)total;
}

/* ---- puts ------------------------------------------------------------------------------- */

/* Drops n references; true when they were the last ones (the page is now at rest). */
static inline UMEM__HOT bool page_unref(struct umem_page *pg, uint64_t addr, int32_t n)
{
	/* Acquire: see the frame writes of the holders whose fetch_sub (release) preceded. */
	int32_t r = atomic_load_explicit(&pg->refcnt, memory_order_acquire);

	if (umem_likely(r == n)) {
		/* Nobody else holds a reference, so nobody can take one: no atomic RMW needed. */
		atomic_store_explicit(&pg->refcnt, 0, memory_order_relaxed);
		return true;
	}
	if (r < n)
		goto bad;
	r = atomic_fetch_sub_explicit(&pg->refcnt, n, memory_order_acq_rel);
	if (umem_likely(r > n))
		return false;
	if (r == n)
		return true;
bad:
	umem__die("put of address 0x%llx: %s (page refcount %d, dropping %d)",
		  (unsigned long long)addr, r == 0 ? "double put, or the address was never allocated"
						   : "refcount underflow",
		  r, n);
}

/* The owner's direct recycling (page_pool's allow_direct): true when the page at rest went
 * into self's cache; false when it must travel to its owner's ring. */
static inline bool cache_put(struct umem_pool *self, struct umem_pool *owner, uint64_t base)
{
	if (owner != self)
		return false;
	if (self->f.count < UMEM_POOL_CACHE_SIZE) {
		self->f.cache[self->f.count++] = base;
		UMEM__STAT(&self->f, recycle_cached, 1);
		return true;
	}
	UMEM__STAT(&self->f, recycle_cache_full, 1);
	return false;
}

/* A page at rest goes back to its owner: into self's cache when self owns it, else a ring. */
static void pool_recycle(struct umem_area *a, struct umem_pool *self, uint64_t base)
{
	struct umem_pool *owner = a->f.pages[base >> a->f.page_shift].owner;

	if (!cache_put(self, owner, base))
		pool_push(owner, &base, 1);
}

static void __attribute__((noreturn)) frag_underflow(struct umem_pool_fast *f, uint64_t addr)
{
	umem__die("put of address 0x%llx: refcount underflow on fragment page 0x%llx, which is "
		  "still being carved (a fragment was put twice)", (unsigned long long)addr,
		  (unsigned long long)f->frag_page);
}

/* Subtracts the put slot's references from its page (recycled when they were the last). */
static void put_flush(struct umem_pool *p)
{
	struct umem_pool_fast *f = &p->f;
	uint64_t base = f->put_page;
	int32_t n = (int32_t)f->put_n;

	if (!n)
		return;
	f->put_page = UMEM_NO_PAGE;
	f->put_n = 0;
	if (page_unref(&f->pages[base >> f->page_shift], base, n))
		pool_recycle(p->area, p, base);
}

/* The owner drops n references on pg, a page it owns: from the current fragment page's
 * frag_users, or into the put slot while others hold the page (the inline put's rules, for any
 * n); true when the page is now at rest. Debug mode counts every reference on the page. */
static inline UMEM__HOT bool owner_unref(struct umem_pool *p, struct umem_page *pg, uint64_t addr, int32_t n)
{
	struct umem_pool_fast *f = &p->f;
	uint64_t base = page_base(p->area, addr);
	int32_t held, r;

	if (f->debug)
		return page_unref(pg, addr, n);
	if (base == f->frag_page) {
		if (f->frag_users >= (uint32_t)n) {
			f->frag_users -= (uint32_t)n;
			return false;
		}
		/* The page keeps a reference of its own while it is carved: reaching 0 here
		 * means more puts than references. */
		if (page_unref(pg, addr, n))
			frag_underflow(f, addr);
		return false;
	}
	held = base == f->put_page ? (int32_t)f->put_n : 0;
	r = atomic_load_explicit(&pg->refcnt, memory_order_acquire);
	if (r > held + n && held + n <= UMEM_FRAG_BIAS) { /* others hold it: into the slot */
		if (!held)
			put_flush(p); /* the slot's page, if any, makes room */
		f->put_page = base;
		f->put_n = (uint32_t)(held + n);
		return false;
	}
	if (held) {
		f->put_page = UMEM_NO_PAGE;
		f->put_n = 0;
	}
	/* At rest (the count reads exactly what we drop), a slot grown to its bound, or an
	 * underflow, which page_unref reports. */
	return page_unref(pg, addr, held + n);
}

static void put_one(struct umem_area *a, struct umem_pool *self, uint64_t addr)
{
	struct umem_page *pg = umem__area_page(a, addr, "put");

	if (a->f.debug)
		umem__track_put(a, addr, 1);
	if (page_unref(pg, addr, 1))
		pool_recycle(a, self, page_base(a, addr));
}

void umem__pool_put_slow(struct umem_pool *p, uint64_t addr)
{
	struct umem_page *pg;

	if (!p)
		umem__die("put of address 0x%llx through a NULL pool", (unsigned long long)addr);
	OWNER_ONLY(p, "put");
	pg = umem__area_page(p->area, addr, "put");
	if (p->f.debug || pg->owner != p) {
		put_one(p->area, p, addr);
		return;
	}
	if (owner_unref(p, pg, addr, 1))
		pool_recycle(p->area, p, page_base(p->area, addr));
}

/* The inline put's atomic dropped the count from old: 1 means that was the last reference. */
void umem__pool_put_last(struct umem_pool *p, uint64_t addr, int32_t old)
{
	struct umem_area *a = p->area;

	if (old != 1)
		umem__die("put of address 0x%llx: %s (page refcount %d, dropping 1)",
			  (unsigned long long)addr, old == 0 ? "double put, or the address was never "
			  "allocated" : "refcount underflow", old);
	if (page_base(a, addr) == p->f.frag_page)
		frag_underflow(&p->f, addr);
	pool_recycle(a, p, page_base(a, addr));
}

void umem_area__put(struct umem_area *a, uint64_t addr)
{
	if (!a)
		umem__die("put of address 0x%llx without an area", (unsigned long long)addr);
	put_one(a, NULL, addr);
}

static void __attribute__((noreturn, cold)) put_bulk_underflow(struct umem_pool *self,
								 const uint64_t *addrs, uint32_t n,
								 uint64_t page);

/* The owner's common case of a bulk put, as the inline put's shortcut: the last reference on one
 * of its whole pages (count 1) goes to its cache with a plain store. Returns the index of the
 * first address it does not take (n: all), which the checked path handles: another pool's
 * page, one still shared, or a second address on a page this loop just cached (it reads 0
 * there: a double put). A function of its own so that its state stays in registers.
 * The current fragment page and the put slot's page are not tested per address: a legitimate
 * put on either always reads at least 2 (the fragment page keeps a reference of its own while
 * it is carved, the slot's references are in the count), so 1 there is a put with no reference
 * behind it. Such a page is cached here like any other, and found by its count of 0 after the
 * loop (neither page can read 0 otherwise): the same abort as the checked path's, one test per
 * batch instead of two per address. Debug mode takes nothing here (area_size 0). */
static __attribute__((noinline)) uint32_t put_bulk_cached(struct umem_pool *self, const uint64_t *addrs,
							   uint32_t i, uint32_t n)
{
	struct umem_pool_fast *f = &self->f;
	struct umem_page *pages = f->pages;
	uint64_t size = f->area_size, mask = ~(((uint64_t)1 << f->page_shift) - 1);
	uint64_t *cache = f->cache + f->count;
	uint32_t shift = f->page_shift, room = UMEM_POOL_CACHE_SIZE - f->count;
	const uint64_t *ad = addrs + i;
	uint32_t took = 0, max = n - i < room ? n - i : room;

#pragma GCC unroll 2
	for (; took < max; took++) {
		uint64_t a = ad[took];
		struct umem_page *q = &pages[a >> shift];

		if (umem_unlikely(a >= size) || umem_unlikely(q->owner != self) ||
		    umem_unlikely(atomic_load_explicit(&q->refcnt, memory_order_acquire) != 1))
			break;
		atomic_store_explicit(&q->refcnt, 0, memory_order_relaxed);
		cache[took] = a & mask;
	}

	if (umem_unlikely(!took))
		return i;
	f->count += took;
	UMEM__STAT(f, recycle_cached, took);
	uint64_t fp = f->frag_page, pp = f->put_page;
	if (umem_unlikely(fp != UMEM_NO_PAGE &&
			  !atomic_load_explicit(&pages[fp >> shift].refcnt, memory_order_relaxed)))
		put_bulk_underflow(self, addrs + i, took, fp);
	if (umem_unlikely(pp != UMEM_NO_PAGE &&
			  !atomic_load_explicit(&pages[pp >> shift].refcnt, memory_order_relaxed)))
		put_bulk_underflow(self, addrs + i, took, pp);
	return i + took;
}

/* put_bulk_cached() took the current fragment page or the put slot's page at a count of 1: the
 * abort the checked path gives, naming the address of the batch on that page. */
static void put_bulk_underflow(struct umem_pool *self, const uint64_t *addrs, uint32_t n, uint64_t page)
{
	struct umem_pool_fast *f = &self->f;
	uint64_t addr = page;

	for (uint32_t j = 0; j < n; j++)
		if (page_base(self->area, addrs[j]) == page) {
			addr = addrs[j];
			break;
		}
	if (page == f->frag_page)
		frag_underflow(f, addr);
	umem__die("put of address 0x%llx: refcount underflow (page refcount 1, dropping %u)",
		  (unsigned long long)addr, f->put_n + 1);
}

/* Bulk put: pages whose last reference drops are recycled; runs of one foreign owner go to its
 * ring in one operation (completion rings arrive in batches, mostly of one owner). */
static void put_bulk(struct umem_area *a, struct umem_pool *self, const uint64_t *addrs, uint32_t n)
{
	uint64_t run[UMEM_POOL_REFILL];
	struct umem_pool *run_owner = NULL;
	uint32_t run_len = 0;
	bool quick = self && !a->f.debug;

	for (uint32_t i = 0, k; i < n; i += k) {
		if (quick && (i = put_bulk_cached(self, addrs, i, n)) == n)
			break;
		uint64_t addr = addrs[i];
		struct umem_page *pg = umem__area_page(a, addr, "put");

		/* Consecutive addresses on one page (fragments of it, or one frame sent on several
		 * ports) drop their references together: one atomic for the run. */
		for (k = 1; i + k < n && addrs[i + k] >> a->f.page_shift == addr >> a->f.page_shift; k++)
			;
		if (a->f.debug)
			for (uint32_t j = 0; j < k; j++)
				umem__track_put(a, addrs[i + j], 1);
		struct umem_pool *owner = pg->owner;
		if (!(self && owner == self ? owner_unref(self, pg, addr, (int32_t)k)
					    : page_unref(pg, addr, (int32_t)k)))
			continue;
		uint64_t base = page_base(a, addr);
		if (cache_put(self, owner, base))
			continue;
		if (run_len && (owner != run_owner || run_len == UMEM_POOL_REFILL)) {
			pool_push(run_owner, run, run_len);
			run_len = 0;
		}
		run_owner = owner;
		run[run_len++] = base;
	}
	if (run_len)
		pool_push(run_owner, run, run_len);
}

static void __attribute__((noinline)) put_bulk_owner(struct umem_pool *p, const uint64_t *addrs, uint32_t n)
{
	OWNER_ONLY(p, "put_bulk");
	put_bulk(p->area, p, addrs, n);
}

void umem_pool__put_bulk(struct umem_pool *p, const uint64_t *addrs, uint32_t n)
{
	if (!p || (n && !addrs))
		umem__die("put_bulk: %s", p ? "NULL address array" : "NULL pool");
	if (!n) /* addrs may be NULL then: no arithmetic on it */
		return;
	/* The common case first, with nothing else to set up: the cache takes every address.
	 * Debug mode checks the single-owner rule before it touches the pool. */
	uint32_t i = p->f.debug ? 0 : put_bulk_cached(p, addrs, 0, n);
	if (i != n)
		put_bulk_owner(p, addrs + i, n - i);
}

void umem_area__put_bulk(struct umem_area *a, const uint64_t *addrs, uint32_t n)
{
	if (!a || (n && !addrs))
		umem__die("put_bulk: %s", a ? "NULL address array" : "NULL area");
	put_bulk(a, NULL, addrs, n);
}

struct umem_pool *umem__page_owner(struct umem_area *a, uint64_t addr)
{
	return umem__area_page(a, addr, "owner")->owner;
}

/* ---- extra references ------------------------------------------------------------------- */

int umem__pool_ref_slow(struct umem_pool *p, uint64_t addr, uint32_t n)
{
	struct umem_area *a;
	struct umem_page *pg;
	int32_t r;

	if (!p) {
		pr_warn("pool ref: NULL pool\n");
		return -EINVAL;
	}
	OWNER_ONLY(p, "ref");
	a = p->area;
	if (!n || addr >= a->f.size) {
		pr_warn("pool ref: %s\n", n ? "address outside the area" : "n = 0");
		return -EINVAL;
	}
	if (n >= UMEM_REF_MAX) {
		pr_warn("pool ref: n = %u exceeds UMEM_REF_MAX\n", n);
		return -EOVERFLOW;
	}
	pg = &a->f.pages[addr >> a->f.page_shift];
	r = atomic_load_explicit(&pg->refcnt, memory_order_relaxed);
	if (r <= 0) {
		if (pg->owner)
			umem__die("reference on address 0x%llx of a freed page, at rest in a pool "
				  "(use after free)", (unsigned long long)addr);
		/* In the store. The state word is written under the area lock; a racy read can
		 * only confuse two kinds of misuse. */
		if (__atomic_load_n(&pg->state, __ATOMIC_RELAXED) & UMEM_PG_USED)
			umem__die("reference on address 0x%llx of a freed page, returned to the area "
				  "(use after free)", (unsigned long long)addr);
		pr_warn("pool ref: address 0x%llx was never allocated\n", (unsigned long long)addr);
		return -ENOENT;
	}
	if (a->f.debug) {
		int err = umem__track_ref(a, addr, n);
		if (err)
			return err;
	}
	/* Checked and applied in one step: concurrent references cannot overshoot the bound. */
	do {
		if (r >= UMEM_REF_MAX - (int32_t)n) {
			if (a->f.debug)
				umem__track_put(a, addr, n);
			pr_warn("pool ref: address 0x%llx would exceed UMEM_REF_MAX references\n",
				(unsigned long long)addr);
			return -EOVERFLOW;
		}
	} while (!atomic_compare_exchange_weak_explicit(&pg->refcnt, &r, r + (int32_t)n,
							memory_order_relaxed, memory_order_relaxed));
	UMEM__STAT(&p->f, refs_taken, n);
	return 0;
}

/* ---- fragments -------------------------------------------------------------------------- */

/* Closes the current fragment page: the rest of its claim goes through the owner's put path
 * (into the put slot while fragments live, recycled when none does). */
static void frag_close(struct umem_pool *p)
{
	struct umem_pool_fast *f = &p->f;
	uint64_t base = f->frag_page;
	int32_t rest = (int32_t)(f->frag_claim - f->frag_users);

	f->frag_page = UMEM_NO_PAGE;
	UMEM__STAT(f, frag_pages_drained, 1);
	if (rest && owner_unref(p, &f->pages[base >> f->page_shift], base, rest))
		pool_recycle(p->area, p, base);
}

/* Where a fragment of sz bytes would start at or after off; chunk-aligned mode keeps a fragment
 * that fits in a chunk inside one, and starts larger ones on a chunk boundary. */
static inline uint32_t frag_place(uint32_t off, uint32_t sz, uint32_t chunk)
{
	if (chunk && (sz > chunk ? off & (chunk - 1) : (off & (chunk - 1)) + sz > chunk))
		return align_up(off, chunk);
	return off;
}

/* Fragments of sz one page takes in a row from offset 0 under frag_place() and the tail rule:
 * the count a page claimed for this size starts at. A wrong count costs an atomic, never
 * correctness (see frag_claim). */
static uint32_t frag_fit(uint32_t sz, uint32_t page_size, uint32_t chunk)
{
	if (!chunk || chunk == page_size)
		return page_size / sz;
	if (sz <= chunk)
		return page_size / chunk * (chunk / sz);
	return page_size / chunk / ((sz + chunk - 1) / chunk); /* each starts on a chunk */
}

int umem__pool_alloc_frag_slow(struct umem_pool *p, uint32_t size, uint64_t *addr, uint32_t *truesize)
{
	struct umem_pool_fast *f;
	uint32_t page_size, chunk, sz, off = 0, start;
	uint64_t base;

	if (!p || !addr) {
		pr_warn("pool alloc_frag: NULL %s\n", p ? "addr" : "pool");
		return -EINVAL;
	}
	f = &p->f;
	page_size = f->area->page_size;
	if (!size || size > page_size) {
		pr_warn("pool alloc_frag: size %u is not in 1..%u (the page size)\n", size, page_size);
		return -EINVAL;
	}
	OWNER_ONLY(p, "alloc_frag");
	/* page_pool_alloc(): a fragment that cannot share its page only pays bookkeeping. */
	if (size > page_size / 2) {
		int err = umem_pool__alloc(p, addr);

		if (!err && truesize)
			*truesize = page_size;
		return err;
	}
	chunk = f->area->chunk_size;
	sz = align_up(size, UMEM_FRAG_ALIGN);
	if (f->frag_page != UMEM_NO_PAGE) {
		off = frag_place(f->frag_offset, sz, chunk);
		if (off + sz > page_size)
			frag_close(p);
	}
	if (sz != f->frag_fit_size) {
		f->frag_fit = frag_fit(sz, page_size, chunk);
		f->frag_fit_size = sz;
	}
	if (f->frag_page == UMEM_NO_PAGE) {
		uint64_t a = pool_take_page(p, (int32_t)f->frag_fit);

		if (a == UMEM_NO_PAGE) {
			pr_debug("pool alloc_frag: area exhausted\n");
			return -ENOMEM;
		}
		f->frag_page = a;
		f->frag_offset = 0;
		f->frag_users = 0;
		f->frag_claim = f->frag_fit;
		off = 0;
	}
	start = f->frag_offset; /* a gap skipped to respect a chunk is charged to this fragment */
	base = f->frag_page;
	/* Tail absorption: if the next fragment of this size cannot fit, this one takes the rest
	 * of the page, so truesize never under-reports; a chunk gap the next one would skip is
	 * charged to this one too (the inline path's rule: the next call then fits exactly). */
	uint32_t nstart = frag_place(off + sz, sz, chunk);
	uint32_t end = nstart + sz > page_size ? page_size : nstart;
	/* The page must keep a reference of its own while it stays open: more fragments than it
	 * was claimed for (smaller sizes than the first) add BIAS while it still has that one. */
	if (end < page_size && f->frag_users + 1 >= f->frag_claim) {
		atomic_fetch_add_explicit(&f->pages[base >> f->page_shift].refcnt, UMEM_FRAG_BIAS,
					  memory_order_relaxed);
		f->frag_claim += UMEM_FRAG_BIAS;
	}
	f->frag_users++;
	f->frag_offset = end;
	if (f->debug)
		umem__track_alloc(p->area, base + off, end - off);
	UMEM__STAT(f, frag_allocs, 1);
	if (end == page_size) /* full: never current, so the inline paths need no check for it */
		frag_close(p);
	*addr = base + off;
	if (truesize)
		*truesize = end - start;
	return 0;
}

void *umem_pool__alloc_va(struct umem_pool *p, uint32_t size, uint32_t *truesize)
{
	uint64_t addr;
	int err = umem_pool__alloc_frag(p, size, &addr, truesize);

	if (err) {
		errno = -err;
		return NULL;
	}
	return umem_pool__ptr(p, addr);
}

/* ---- teardown and stats ----------------------------------------------------------------- */

int umem_pool__destroy(struct umem_pool *p)
{
	struct umem_area *a;
	uint64_t buf[UMEM_POOL_REFILL], end;
	uint32_t k;
	int64_t out;

	if (!p)
		return 0;
	a = p->area;
	/* Not OWNER_ONLY: the guard's cleanup would run after the pool may be freed below. */
	struct owner_guard og = owner_enter(p, "destroy");
	/* The current fragment page stops taking fragments and the put slot is subtracted; pages
	 * at rest go to the cache or ring, released below. */
	if (p->f.frag_page != UMEM_NO_PAGE)
		frag_close(p);
	put_flush(p);

	pthread_mutex_lock(&a->lock);
	p->dead = true;
	pthread_mutex_unlock(&a->lock);
	atomic_fetch_add(&a->pools_draining, 1);
	atomic_fetch_sub(&a->pools_alive, 1);
	/* Closing the ring makes late returns go straight to the area. A reclaimer holding the
	 * consumer side drains it instead; pages of producers too slow to publish stay for the
	 * next reclaim. */
	end = umem__ring_close(&p->ring);
	if (umem__ring_trylock(&p->ring)) {
		while (umem__ring_left(&p->ring, end) &&
		       (k = umem__ring_pop_until(&p->ring, end, buf, UMEM_POOL_REFILL)))
			pool_release(p, buf, k);
		if (umem__ring_left(&p->ring, end))
			pr_debug("pool: %llu return(s) not yet published at destroy; reclaimed later\n",
				 (unsigned long long)umem__ring_left(&p->ring, end));
		umem__ring_unlock(&p->ring);
	}
	if (p->f.count)
		pool_release(p, p->f.cache, p->f.count);
	p->f.count = 0;

	out = atomic_load(&p->life) - 1;
	if (out)
		pr_warn("pool: destroyed with %lld page(s) in flight; freed when the last returns\n",
			(long long)out);
	owner_exit(&og);
	if (atomic_fetch_sub_explicit(&p->life, 1, memory_order_acq_rel) == 1)
		pool_free(p, false);
	return (int)out;
}

int umem_pool__stats(const struct umem_pool *p, struct umem_pool_stats *s)
{
	struct umem_pool_stats t;
	const struct umem_pool_owner_stats *o;

	if (!p) {
		pr_warn("pool stats: NULL pool\n");
		return -EINVAL;
	}
	if (!umem__out_check(s, offsetof(struct umem_pool_stats, inflight) + sizeof(s->inflight),
			     "umem_pool_stats", "pool stats"))
		return -EINVAL;
	o = &p->f.st;
	memset(&t, 0, sizeof(t));
#define LD(x) atomic_load_explicit(&(x), memory_order_relaxed)
	t.alloc.fast = LD(o->alloc_fast);
	t.alloc.slow = LD(o->alloc_slow);
	t.alloc.slow_high_order = LD(o->alloc_slow_high_order);
	t.alloc.empty = LD(o->alloc_empty);
	t.alloc.refill = LD(o->alloc_refill);
	t.recycle.cached = LD(o->recycle_cached);
	t.recycle.cache_full = LD(o->recycle_cache_full);
	t.recycle.ring = LD(p->recycle_ring);
	t.recycle.ring_full = LD(p->recycle_ring_full);
	t.frag_allocs = LD(o->frag_allocs);
	t.frag_pages_drained = LD(o->frag_pages_drained);
	t.refs_taken = LD(o->refs_taken);
	t.pages_held = LD(o->pages_held);
	t.pages_released = LD(p->pages_released);
#undef LD
	t.inflight = (int32_t)(t.pages_held - t.pages_released);
	size_t sz = s->sz < sizeof(t) ? s->sz : sizeof(t);
	memcpy((char *)s + sizeof(size_t), (char *)&t + sizeof(size_t), sz - sizeof(size_t));
	return 0;
}

/* The deprecated names (pool.h). */
void umem_put(struct umem_area *a, uint64_t addr)
{
	umem_area__put(a, addr);
}

void umem_put_bulk(struct umem_area *a, const uint64_t *addrs, uint32_t n)
{
	umem_area__put_bulk(a, addrs, n);
}
