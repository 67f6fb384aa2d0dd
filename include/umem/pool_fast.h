/* SPDX-License-Identifier: MIT */
/*
 * libumem pool fast paths (allocation, put, ref), inline.
 *
 * Threading: a pool's alloc cache, fragment state and owner-side counters are touched only by
 * the pool's owner thread, with plain loads and stores (no locks, no atomics), as page_pool's
 * alloc cache is touched only from its NAPI context. Any thread may put or ref an address.
 *
 * Memory ordering: a page's refcount is the only shared word on these paths.
 *  - The last-user check loads it with acquire: it pairs with the release half of the
 *    fetch_sub by which every other holder dropped its reference, so their
 *    writes to the frame happen before the owner reuses it.
 *  - A page taken from the cache is exclusively the owner's: its refcount is set with a
 *    relaxed store; handing the address to another thread (a descriptor ring, a queue) is the
 *    publication point and must carry its own release/acquire.
 *  - The owner's put on a page it owns that others still hold stores nothing shared: it is
 *    counted in the pool's put slot (one page, put_n references), and the count keeps
 *    including it. The owner alone ever decides from put_n: a count that reads put_n + 1
 *    (acquire, as above) means every other holder is gone, and nobody can take a reference
 *    on a page without holding one. The slot is subtracted (one fetch_sub, or a store of 0
 *    when the count reads exactly put_n) when the owner puts on another such page, flushes,
 *    runs dry or destroys the pool; until then a page whose last other holder put it waits
 *    there.
 * The structs below are exposed only so these functions can be inlined. Their fields are
 * private, but their layout is ABI: a caller compiled against it reads them directly, so any
 * change to them (or to the constants below) bumps the SONAME (checked at build time, see
 * lib/abi.c). The exported functions keep their symbols within a SONAME.
 */
#ifndef UMEM_POOL_FAST_H
#define UMEM_POOL_FAST_H

#include <errno.h>
#include <stdatomic.h>
#include <umem/area.h>
#include <umem/config.h>

#ifdef __cplusplus
extern "C" {
#endif

struct umem_pool;

#define UMEM_POOL_CACHE_SIZE 128u /* page_pool's PP_ALLOC_CACHE_SIZE */
#define UMEM_POOL_REFILL 64u      /* page_pool's PP_ALLOC_CACHE_REFILL */
#define UMEM_FRAG_ALIGN 64u       /* fragments start on a cache line */
/* Added to a fragment page carved into more fragments than its count was claimed for; it must
 * exceed the fragments one page can hold (64 KiB / 64 B = 1024) and leave room below INT32_MAX
 * for extra references. It also bounds the owner's put slot. */
#define UMEM_FRAG_BIAS (1 << 22)
/* A reference that would lift a page's count to this is refused (-EOVERFLOW), so neither a
 * fragment page (count near BIAS) nor a whole page can ever wrap. */
#define UMEM_REF_MAX (2 * UMEM_FRAG_BIAS)

/* Owner-side counters: only the owner writes them (every call that takes a pool is made by its
 * owner), with a relaxed load and store (a plain increment, no locked instruction); atomics only
 * so that a stats reader on another thread is not a data race. The counters other threads bump
 * (the return ring's, in the private struct) use atomic adds. Both are exact. */
struct umem_pool_owner_stats {
	_Atomic uint64_t alloc_fast, alloc_slow, alloc_slow_high_order, alloc_empty, alloc_refill;
	_Atomic uint64_t recycle_cached, recycle_cache_full;
	_Atomic uint64_t frag_allocs, frag_pages_drained, refs_taken, pages_held;
};

/* The owner's hot part of a pool: the first member of the private struct. */
struct umem_pool_fast {
	struct umem_area_fast *area;
	struct umem_page *pages;
	uint64_t area_size; /* 0 in debug mode: every inline put and ref takes the checked path */
	uint32_t page_shift;
	uint32_t debug;
	uint32_t count; /* entries in cache[] */
	uint32_t frag_offset;
	uint32_t frag_users; /* fragments of the current page handed out, less the owner's puts */
	uint32_t frag_max;   /* largest inline fragment (half a page); 0 in debug mode */
	uint64_t frag_page;  /* base of the current fragment page; UINT64_MAX: none */
	/* References the current fragment page's count was given for its fragments. While the
	 * page is open frag_claim > frag_users, so the pool keeps a reference of its own and no
	 * put can bring the page to 0; the fragment that makes them equal closes the page with
	 * nothing left to subtract. */
	uint32_t frag_claim;
	uint32_t frag_fit_size; /* aligned fragment size frag_fit was computed for; 0: none */
	uint32_t frag_fit;      /* fragments of frag_fit_size one page takes in a row */
	uint32_t frag_chunk;    /* no fragment of up to this size straddles a multiple of it:
				 * the area's chunk size, or the page size */
	/* The put slot: references the owner dropped on one page it owns that others still hold,
	 * not yet subtracted from its count (put_n 0: empty, put_page UINT64_MAX). */
	uint32_t put_n;
	uint64_t put_page;
	struct umem_pool_owner_stats st;
	uint64_t cache[UMEM_POOL_CACHE_SIZE];
};

#ifndef UMEM_NO_STATS
#define UMEM__STAT(p, field, n)                                                              \
	atomic_store_explicit(&(p)->st.field,                                                 \
			      atomic_load_explicit(&(p)->st.field, memory_order_relaxed) + (n),  \
			      memory_order_relaxed)
#else
#define UMEM__STAT(p, field, n) ((void)sizeof(n)) /* n counts as used, is not evaluated */
#endif

/* The hot paths are inlined at every call site, whatever the compiler's size heuristics: a call
 * (and its spills) would cost as much as the path itself. */
#define UMEM__HOT __attribute__((always_inline))

/* Out-of-line halves of the inline paths (exported, not for direct use). */
UMEM_API int umem__pool_alloc_slow(struct umem_pool *pool, uint64_t *addr);
UMEM_API void umem__pool_put_slow(struct umem_pool *pool, uint64_t addr);
UMEM_API void umem__pool_put_last(struct umem_pool *pool, uint64_t addr, int32_t old);
UMEM_API int umem__pool_ref_slow(struct umem_pool *pool, uint64_t addr, uint32_t n);
UMEM_API int umem__pool_alloc_frag_slow(struct umem_pool *pool, uint32_t size, uint64_t *addr,
					uint32_t *truesize);

static inline void *umem_pool__ptr(struct umem_pool *pool, uint64_t addr)
{
	return ((struct umem_pool_fast *)pool)->area->base + addr;
}

static inline UMEM__HOT int umem_pool__alloc(struct umem_pool *pool, uint64_t *addr)
{
	struct umem_pool_fast *p = (struct umem_pool_fast *)pool;

	/* NULL pool or addr: the out-of-line half says so (-EINVAL), as for every other call. */
	if (umem_likely(p && addr && p->count && !p->debug)) {
		uint64_t a = p->cache[--p->count];

		atomic_store_explicit(&p->pages[a >> p->page_shift].refcnt, 1, memory_order_relaxed);
		UMEM__STAT(p, alloc_fast, 1);
		*addr = a;
		return 0;
	}
	return umem__pool_alloc_slow(pool, addr);
}

static inline UMEM__HOT void umem_pool__put(struct umem_pool *pool, uint64_t addr)
{
	struct umem_pool_fast *p = (struct umem_pool_fast *)pool;

	if (umem_likely(p && addr < p->area_size)) {
		struct umem_page *pg = &p->pages[addr >> p->page_shift];
		uint64_t base = addr >> p->page_shift << p->page_shift;
		int32_t r = atomic_load_explicit(&pg->refcnt, memory_order_acquire);

		if (umem_likely(pg->owner == pool)) {
			/* Last user reads 1: no read-modify-write needed (page_pool's unref shortcut).
			 * Never on the current fragment page, which keeps a reference of its own
			 * (frag_claim): 1 there is an underflow, left to the checked path. */
			if (umem_likely(r == 1 && p->count < UMEM_POOL_CACHE_SIZE &&
					base != p->frag_page)) {
				atomic_store_explicit(&pg->refcnt, 0, memory_order_relaxed);
				p->cache[p->count++] = base;
				UMEM__STAT(p, recycle_cached, 1);
				return;
			}
			if (base == p->frag_page) {
				/* A fragment of the current fragment page: undo its frag_users count,
				 * so the page ends at the same count when it closes (owner-only state).
				 * Only while frag_users > 0, so the count stays bounded. */
				if (p->frag_users) {
					p->frag_users--;
					return;
				}
			} else if (base == p->put_page) {
				/* Others hold the page too: the reference goes into the put slot
				 * instead of a locked subtraction, and the count reads put_n + 1 when
				 * this is the last one (the unref shortcut again). */
				if (r == (int32_t)p->put_n + 1 && p->count < UMEM_POOL_CACHE_SIZE) {
					atomic_store_explicit(&pg->refcnt, 0, memory_order_relaxed);
					p->put_page = UINT64_MAX;
					p->put_n = 0;
					p->cache[p->count++] = base;
					UMEM__STAT(p, recycle_cached, 1);
					return;
				}
				if (r > (int32_t)p->put_n + 1 && p->put_n < UMEM_FRAG_BIAS) {
					p->put_n++;
					return;
				}
			} else if (!p->put_n && r > 1) {
				p->put_page = base;
				p->put_n = 1;
				return;
			} else {
				goto slow; /* the slot holds another page: subtracted out of line */
			}
		}
		/* Not the last reference (another pool's page, or the rare cases above): one
		 * atomic, and done unless it turned out to be the last after all. */
		if (umem_likely(r > 1)) {
			int32_t old = atomic_fetch_sub_explicit(&pg->refcnt, 1, memory_order_acq_rel);

			if (umem_likely(old > 1))
				return;
			umem__pool_put_last(pool, addr, old);
			return;
		}
	}
slow:
	umem__pool_put_slow(pool, addr);
}

/* A fragment of the current fragment page when it fits there at its aligned offset: one add to
 * an owner-only counter, no atomic. That includes exact fits and the tail rule (the last
 * fragment of a page takes the rest of it when the next one of this size would not fit, and
 * in aligned-chunk mode a fragment takes the gap the next one would skip), so 2048-byte
 * fragments of 4 KiB pages, 2 KiB chunks, and the mvpp2 classes stay here. With no current
 * page, a size seen before claims the next page from the cache inline, its count set to the
 * fragments of that size it takes (frag_fit), so the fragment that fills the page also closes
 * it with nothing to subtract. A size above half a page is a whole page (page_pool_alloc()),
 * taken inline from the cache. A new size, a chunk-alignment gap, fragments larger than a
 * chunk, a page closed early and every error are out of line. size is compared before any
 * arithmetic on it, so no size can wrap. */
static inline UMEM__HOT int umem_pool__alloc_frag(struct umem_pool *pool, uint32_t size, uint64_t *addr,
					uint32_t *truesize)
{
	struct umem_pool_fast *p = (struct umem_pool_fast *)pool;

	if (umem_likely(p && addr && size - 1 < p->frag_max)) {
		uint32_t sz = (size + UMEM_FRAG_ALIGN - 1) & ~(UMEM_FRAG_ALIGN - 1);
		uint32_t page = p->area->page_size, chunk = p->frag_chunk, m = chunk - 1;

		if (p->frag_page == UINT64_MAX) {
			if (umem_unlikely(sz != p->frag_fit_size || !p->count))
				goto slow;
			uint64_t a = p->cache[--p->count];

			atomic_store_explicit(&p->pages[a >> p->page_shift].refcnt, (int32_t)p->frag_fit,
					      memory_order_relaxed);
			UMEM__STAT(p, alloc_fast, 1);
			p->frag_page = a;
			p->frag_offset = 0;
			p->frag_users = 0;
			p->frag_claim = p->frag_fit;
		}
		uint64_t base = p->frag_page;
		uint32_t off = p->frag_offset, next = off + sz, users = p->frag_users + 1;

		/* This one must fit where it starts, within its chunk (and so within the page). */
		if (umem_unlikely((off & m) + sz > chunk))
			goto slow;
		/* Where the next one of this size would start: right after this one, or past a
		 * chunk gap; this one ends there, or takes the page's tail when that is past it. */
		uint32_t nstart = (next & m) + sz <= chunk ? next : (next + m) & ~m;
		uint32_t end = nstart + sz <= page ? nstart : page;

		if (end < page) {
			if (umem_unlikely(users >= p->frag_claim))
				goto slow; /* the claim runs out before the page: top it up */
			p->frag_offset = end;
		} else {
			if (umem_unlikely(users != p->frag_claim))
				goto slow; /* closing early: the rest of the claim goes */
			p->frag_page = UINT64_MAX;
			UMEM__STAT(p, frag_pages_drained, 1);
		}
		p->frag_users = users;
		UMEM__STAT(p, frag_allocs, 1);
		*addr = base + off;
		if (truesize)
			*truesize = end - off;
		return 0;
	} else if (umem_likely(p && addr && p->frag_max && size > p->frag_max &&
			       size <= p->area->page_size)) {
		int err = umem_pool__alloc(pool, addr);

		if (umem_likely(!err) && truesize)
			*truesize = p->area->page_size;
		return err;
	}
slow:
	return umem__pool_alloc_frag_slow(pool, size, addr, truesize);
}

static inline UMEM__HOT int umem_pool__ref(struct umem_pool *pool, uint64_t addr, uint32_t n)
{
	struct umem_pool_fast *p = (struct umem_pool_fast *)pool;

	if (umem_likely(p && addr < p->area_size && n - 1 < UMEM_REF_MAX - 1)) {
		struct umem_page *pg = &p->pages[addr >> p->page_shift];
		int32_t r = atomic_load_explicit(&pg->refcnt, memory_order_relaxed);

		/* The caller holds a reference, so r cannot drop to 0 under us. The bound is checked
		 * and applied in one compare-and-swap, so concurrent refs cannot overshoot it. */
		while (umem_likely(r > 0 && r < UMEM_REF_MAX - (int32_t)n)) {
			if (umem_likely(atomic_compare_exchange_weak_explicit(
				    &pg->refcnt, &r, r + (int32_t)n, memory_order_relaxed,
				    memory_order_relaxed))) {
				UMEM__STAT(p, refs_taken, n);
				return 0;
			}
		}
	}
	return umem__pool_ref_slow(pool, addr, n);
}

#ifdef __cplusplus
}
#endif
#endif
