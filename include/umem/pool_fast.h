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
/* A fragment page's refcount starts at BIAS; it must exceed the fragments one page can hold
 * (64 KiB / 64 B = 1024) and leave room below INT32_MAX for extra references. */
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
	uint32_t frag_users;
	uint32_t frag_max;  /* largest inline fragment (half a page); 0 in debug mode */
	uint64_t frag_page; /* base of the current fragment page; UINT64_MAX: none */
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

static inline int umem_pool__alloc(struct umem_pool *pool, uint64_t *addr)
{
	struct umem_pool_fast *p = (struct umem_pool_fast *)pool;

	if (umem_likely(p->count && !p->debug)) {
		uint64_t a = p->cache[--p->count];

		atomic_store_explicit(&p->pages[a >> p->page_shift].refcnt, 1, memory_order_relaxed);
		UMEM__STAT(p, alloc_fast, 1);
		*addr = a;
		return 0;
	}
	return umem__pool_alloc_slow(pool, addr);
}

static inline void umem_pool__put(struct umem_pool *pool, uint64_t addr)
{
	struct umem_pool_fast *p = (struct umem_pool_fast *)pool;

	if (umem_likely(addr < p->area_size)) {
		struct umem_page *pg = &p->pages[addr >> p->page_shift];

		int32_t r = atomic_load_explicit(&pg->refcnt, memory_order_acquire);

		/* Last user reads 1: no read-modify-write needed (page_pool's unref shortcut). */
		if (umem_likely(r == 1 && pg->owner == pool && p->count < UMEM_POOL_CACHE_SIZE)) {
			atomic_store_explicit(&pg->refcnt, 0, memory_order_relaxed);
			p->cache[p->count++] = addr >> p->page_shift << p->page_shift;
			UMEM__STAT(p, recycle_cached, 1);
			return;
		}
		/* A fragment of the owner's own current fragment page: undo its frag_users count
		 * instead of touching the refcount; the drain subtracts BIAS - frag_users, so the
		 * page ends at the same count, and no atomic is spent (owner-only state). Only
		 * while frag_users > 0, so extra references still drop from the refcount and it
		 * stays bounded. */
		if ((addr ^ p->frag_page) >> p->page_shift == 0 && p->frag_users) {
			p->frag_users--;
			return;
		}
		/* Not the last reference (a fragment of a closed page, an extra reference): one
		 * atomic, and done unless it turned out to be the last after all. */
		if (umem_likely(r > 1)) {
			int32_t old = atomic_fetch_sub_explicit(&pg->refcnt, 1, memory_order_acq_rel);

			if (umem_likely(old > 1))
				return;
			umem__pool_put_last(pool, addr, old);
			return;
		}
	}
	umem__pool_put_slow(pool, addr);
}

/* A fragment of the current fragment page when it fits there at its aligned offset: one add to
 * an owner-only counter, no atomic. That includes exact fits and the tail rule (the last
 * fragment of a page takes the rest of it when the next one of this size would not fit, and
 * in aligned-chunk mode a fragment takes the gap the next one would skip), so
 * 2048-byte fragments of 4 KiB pages, 2 KiB chunks, and the mvpp2 classes stay here. A size
 * above half a page is a whole page (page_pool_alloc()), taken inline from the cache. Page
 * changes, a chunk-alignment gap, fragments larger than a chunk and every error are out of
 * line. size is compared before any arithmetic on it, so no size can wrap. */
static inline int umem_pool__alloc_frag(struct umem_pool *pool, uint32_t size, uint64_t *addr,
					uint32_t *truesize)
{
	struct umem_pool_fast *p = (struct umem_pool_fast *)pool;

	if (umem_likely(p && addr && size - 1 < p->frag_max)) {
		uint32_t sz = (size + UMEM_FRAG_ALIGN - 1) & ~(UMEM_FRAG_ALIGN - 1);
		uint32_t off = p->frag_offset, next = off + sz, page = p->area->page_size;
		uint32_t chunk = p->area->chunk_size, m = chunk - 1;

		/* The common case first: this one and the next of its size fit without a gap. */
		if (umem_likely(p->frag_page != UINT64_MAX && next + sz <= page &&
				(!chunk || ((off & m) + sz <= chunk && (next & m) + sz <= chunk)))) {
			p->frag_users++;
			p->frag_offset = next;
			UMEM__STAT(p, frag_allocs, 1);
			*addr = p->frag_page + off;
			if (truesize)
				*truesize = sz;
			return 0;
		}
		/* This one fits, the next would need a chunk gap or not fit at all: this one
		 * absorbs the gap, or the page's tail, so the next call is inline again. */
		if (p->frag_page != UINT64_MAX && next <= page && (!chunk || (off & m) + sz <= chunk)) {
			uint32_t nstart = (next + m) & ~m; /* chunk != 0 here unless next + sz > page */
			uint32_t end = !chunk || nstart + sz > page ? page : nstart;

			p->frag_users++;
			p->frag_offset = end;
			UMEM__STAT(p, frag_allocs, 1);
			*addr = p->frag_page + off;
			if (truesize)
				*truesize = end - off;
			return 0;
		}
	} else if (umem_likely(p && addr && p->frag_max && size > p->frag_max &&
			       size <= p->area->page_size)) {
		int err = umem_pool__alloc(pool, addr);

		if (umem_likely(!err) && truesize)
			*truesize = p->area->page_size;
		return err;
	}
	return umem__pool_alloc_frag_slow(pool, size, addr, truesize);
}

static inline int umem_pool__ref(struct umem_pool *pool, uint64_t addr, uint32_t n)
{
	struct umem_pool_fast *p = (struct umem_pool_fast *)pool;

	if (umem_likely(addr < p->area_size && n - 1 < UMEM_REF_MAX - 1)) {
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
