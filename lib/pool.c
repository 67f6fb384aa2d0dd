/* SPDX-License-Identifier: MIT */
/* The pool: page_pool's alloc cache, refill, return ring, recycling and teardown. */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

struct umem_pool *umem_pool__create(struct umem_area *area, const struct umem_pool_opts *opts)
{
	struct umem_pool *p;
	uint32_t ring_size;
	int err = -EINVAL;

	if (!area || !OPTS_VALID(opts)) {
		pr_warn("pool: %s\n", area ? "bad opts size" : "no area");
		goto fail;
	}
	ring_size = OPTS_GET(opts, ring_size, 0) ?: UMEM_POOL_RING_DEFAULT;
	if (ring_size < 64 || ring_size > 65536 || (ring_size & (ring_size - 1))) {
		pr_warn("pool: ring size %u is not a power of two in 64..65536\n", ring_size);
		goto fail;
	}
	err = -ENOMEM;
	p = aligned_alloc(UMEM_CACHELINE, sizeof(*p));
	if (!p)
		goto fail;
	memset(p, 0, sizeof(*p));
	err = umem__ring_init(&p->ring, ring_size);
	if (err)
		goto free_pool;
	p->area = area;
	p->f.area = &area->f;
	p->f.pages = area->f.pages;
	p->f.area_size = area->f.size;
	p->f.page_shift = area->f.page_shift;
	p->f.debug = area->f.debug;
	p->f.frag_page = UMEM_NO_PAGE;
	atomic_init(&p->life, 1);
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

static void pool_free(struct umem_pool *p)
{
	struct umem_area *a = p->area;

	umem__ring_fini(&p->ring);
	free(p);
	atomic_fetch_sub(&a->pools_draining, 1);
}

/* Gives pages of owner back to the area; the release that brings a destroyed pool's count to
 * zero frees it. */
static void pool_release(struct umem_pool *owner, const uint64_t *addrs, uint32_t n)
{
	struct umem_area *a = owner->area;

	for (uint32_t i = 0; i < n; i++)
		a->f.pages[addrs[i] >> a->f.page_shift].owner = NULL;
	umem_area__put_pages(a, addrs, n);
	atomic_fetch_add_explicit(&owner->pages_released, n, memory_order_relaxed);
	if (atomic_fetch_sub_explicit(&owner->life, n, memory_order_acq_rel) == (int64_t)n)
		pool_free(owner);
}

/* Takes up to n pages from the area for p: owner set, held and counted as one slow allocation. */
static int pool_take_from_area(struct umem_pool *p, uint64_t *addrs, uint32_t n)
{
	struct umem_pool_fast *f = &p->f;
	int got = umem_area__get_pages(p->area, addrs, n);

	if (got <= 0)
		return 0;
	for (int i = 0; i < got; i++)
		f->pages[addrs[i] >> f->page_shift].owner = p;
	atomic_fetch_add_explicit(&p->life, got, memory_order_relaxed);
	UMEM__STAT(f, pages_held, (uint64_t)got);
	if (f->area->page_size > 4096)
		UMEM__STAT(f, alloc_slow_high_order, 1);
	else
		UMEM__STAT(f, alloc_slow, 1);
	return got;
}

/* Refill the alloc cache: from the return ring first, else in bulk from the area. */
static void pool_refill(struct umem_pool *p)
{
	struct umem_pool_fast *f = &p->f;
	uint32_t n = umem__ring_pop(&p->ring, f->cache + f->count, UMEM_POOL_REFILL);

	if (n) {
		f->count += n;
		UMEM__STAT(f, alloc_refill, 1);
		return;
	}
	UMEM__STAT(f, alloc_empty, 1);
	f->count += (uint32_t)pool_take_from_area(p, f->cache + f->count, UMEM_POOL_REFILL);
}

int umem_pool__prefill(struct umem_pool *p, uint32_t n)
{
	uint64_t buf[UMEM_POOL_REFILL];
	uint32_t done = 0;

	if (!p)
		return -EINVAL;
	while (done < n) {
		uint64_t head = atomic_load_explicit(&p->ring.prod_head, memory_order_relaxed);
		uint64_t room = p->ring.size - (head - p->ring.cons);
		uint32_t want = n - done < UMEM_POOL_REFILL ? n - done : UMEM_POOL_REFILL;

		if (room < want)
			want = (uint32_t)room;
		int got = want ? pool_take_from_area(p, buf, want) : 0;
		if (!got)
			break;
		/* The owner is the ring's consumer, so the room it saw cannot shrink but by other
		 * producers; what does not fit goes straight back. */
		int k = umem__ring_push(&p->ring, buf, (uint32_t)got);
		if (k < got) {
			pool_release(p, buf + (k > 0 ? k : 0), (uint32_t)(got - (k > 0 ? k : 0)));
			done += k > 0 ? (uint32_t)k : 0;
			break;
		}
		done += (uint32_t)got;
	}
	return (int)done;
}

uint64_t umem__pool_take_page(struct umem_pool *p, int32_t refcnt)
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

	if (!p || !addr)
		return -EINVAL;
	a = umem__pool_take_page(p, 1);
	if (a == UMEM_NO_PAGE)
		return -ENOMEM;
	if (p->f.debug)
		umem__track_alloc(p->area, a, p->area->f.page_size);
	*addr = a;
	return 0;
}

int umem_pool__alloc_bulk(struct umem_pool *p, uint64_t *addrs, uint32_t n)
{
	uint32_t k = 0;

	if (!p || !addrs || !n)
		return -EINVAL;
	while (k < n) {
		struct umem_pool_fast *f = &p->f;

		if (!f->count) {
			pool_refill(p);
			if (!f->count)
				break;
		}
		uint32_t take = n - k < f->count ? n - k : f->count;
		for (uint32_t i = 0; i < take; i++) {
			uint64_t a = f->cache[--f->count];

			atomic_store_explicit(&f->pages[a >> f->page_shift].refcnt, 1, memory_order_relaxed);
			if (f->debug)
				umem__track_alloc(p->area, a, f->area->page_size);
			addrs[k++] = a;
		}
		UMEM__STAT(f, alloc_fast, take);
	}
	return (int)k;
}

/* Drops n references; true when they were the last ones (the page is now at rest). */
bool umem__page_unref(struct umem_area *a, struct umem_page *pg, uint64_t addr, int32_t n)
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

/* Sends pages of one owner to its return ring; what does not fit, or a destroyed owner, goes
 * back to the area. */
static void pool_push(struct umem_pool *owner, const uint64_t *addrs, uint32_t n)
{
	int k = umem__ring_push(&owner->ring, addrs, n);

	if (k > 0)
		atomic_fetch_add_explicit(&owner->recycle_ring, (uint64_t)k, memory_order_relaxed);
	if (k == (int)n)
		return;
	if (k == -ESHUTDOWN) {
		atomic_fetch_add_explicit(&owner->recycle_released_refcnt, n, memory_order_relaxed);
		k = 0;
	} else {
		atomic_fetch_add_explicit(&owner->recycle_ring_full, n - (uint32_t)k, memory_order_relaxed);
	}
	pool_release(owner, addrs + k, n - (uint32_t)k);
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
void umem__pool_recycle(struct umem_area *a, struct umem_pool *self, uint64_t base)
{
	struct umem_pool *owner = a->f.pages[base >> a->f.page_shift].owner;

	if (!cache_put(self, owner, base))
		pool_push(owner, &base, 1);
}

static inline uint64_t page_base(struct umem_area *a, uint64_t addr)
{
	return addr >> a->f.page_shift << a->f.page_shift;
}

static void put_one(struct umem_area *a, struct umem_pool *self, uint64_t addr)
{
	struct umem_page *pg = umem__area_page(a, addr, "put");

	if (a->f.debug)
		umem__track_put(a, addr, 1);
	if (umem__page_unref(a, pg, addr, 1))
		umem__pool_recycle(a, self, page_base(a, addr));
}

void umem__pool_put_slow(struct umem_pool *p, uint64_t addr)
{
	put_one(p->area, p, addr);
}

void umem_put(struct umem_area *a, uint64_t addr)
{
	if (!a)
		umem__die("put of address 0x%llx without an area", (unsigned long long)addr);
	put_one(a, NULL, addr);
}

/* Bulk put: pages whose last reference drops are recycled; runs of one foreign owner go to its
 * ring in one operation (completion rings arrive in batches, mostly of one owner). */
static void put_bulk(struct umem_area *a, struct umem_pool *self, const uint64_t *addrs, uint32_t n)
{
	uint64_t run[UMEM_POOL_REFILL];
	struct umem_pool *run_owner = NULL;
	uint32_t run_len = 0;

	for (uint32_t i = 0, k; i < n; i += k) {
		uint64_t addr = addrs[i];
		struct umem_page *pg = umem__area_page(a, addr, "put");

		/* Consecutive addresses on one page (fragments of it, or one frame sent on several
		 * ports) drop their references together: one atomic for the run. */
		for (k = 1; i + k < n && addrs[i + k] >> a->f.page_shift == addr >> a->f.page_shift; k++)
			;
		if (a->f.debug)
			for (uint32_t j = 0; j < k; j++)
				umem__track_put(a, addrs[i + j], 1);
		if (!umem__page_unref(a, pg, addr, (int32_t)k))
			continue;
		struct umem_pool *owner = pg->owner;
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

void umem_pool__put_bulk(struct umem_pool *p, const uint64_t *addrs, uint32_t n)
{
	if (!p || (n && !addrs))
		umem__die("put_bulk: %s", p ? "NULL address array" : "NULL pool");
	put_bulk(p->area, p, addrs, n);
}

void umem_put_bulk(struct umem_area *a, const uint64_t *addrs, uint32_t n)
{
	if (!a || (n && !addrs))
		umem__die("put_bulk: %s", a ? "NULL address array" : "NULL area");
	put_bulk(a, NULL, addrs, n);
}

int umem__pool_ref_slow(struct umem_pool *p, uint64_t addr, uint32_t n)
{
	struct umem_area *a;
	struct umem_page *pg;
	int32_t r;

	if (!p || !n || addr >= p->f.area_size)
		return -EINVAL;
	a = p->area;
	if (n >= UMEM_REF_MAX)
		return -EOVERFLOW;
	pg = &a->f.pages[addr >> a->f.page_shift];
	r = atomic_load_explicit(&pg->refcnt, memory_order_relaxed);
	if (r <= 0) {
		if (!pg->owner)
			return -ENOENT; /* in the area's store: never handed out */
		umem__die("reference on address 0x%llx of a freed page (use after free)",
			  (unsigned long long)addr);
	}
	if (r >= UMEM_REF_MAX - (int32_t)n)
		return -EOVERFLOW;
	if (a->f.debug) {
		int err = umem__track_ref(a, addr, n);
		if (err)
			return err;
	}
	atomic_fetch_add_explicit(&pg->refcnt, (int32_t)n, memory_order_relaxed);
	UMEM__STAT(&p->f, refs_taken, n);
	return 0;
}

int umem_pool__destroy(struct umem_pool *p)
{
	struct umem_area *a;
	uint64_t buf[UMEM_POOL_REFILL], end;
	uint32_t k;
	int64_t out;

	if (!p)
		return -EINVAL;
	a = p->area;
	/* The current fragment page stops taking fragments; if all were freed it is at rest. */
	if (p->f.frag_page != UMEM_NO_PAGE && umem__pool_frag_drain(p))
		pool_release(p, &p->f.frag_page, 1);
	p->f.frag_page = UMEM_NO_PAGE;

	atomic_fetch_add(&a->pools_draining, 1);
	atomic_fetch_sub(&a->pools_alive, 1);
	/* Closing the ring makes late returns go straight to the area (released_refcnt). */
	end = umem__ring_close(&p->ring);
	while ((k = umem__ring_pop_until(&p->ring, end, buf, UMEM_POOL_REFILL)))
		pool_release(p, buf, k);
	if (p->f.count)
		pool_release(p, p->f.cache, p->f.count);
	p->f.count = 0;

	out = atomic_load(&p->life) - 1;
	if (out)
		pr_warn("pool: destroyed with %lld page(s) in flight; freed when the last returns\n",
			(long long)out);
	if (atomic_fetch_sub_explicit(&p->life, 1, memory_order_acq_rel) == 1)
		pool_free(p);
	return (int)out;
}

int umem_pool__stats(const struct umem_pool *p, struct umem_pool_stats *s)
{
	struct umem_pool_stats t;
	const struct umem_pool_owner_stats *o;

	if (!p || !s || s->sz < offsetof(struct umem_pool_stats, inflight) + sizeof(s->inflight) ||
	    s->sz > 4096)
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
	t.recycle.released_refcnt = LD(p->recycle_released_refcnt);
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
