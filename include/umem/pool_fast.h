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
 * The structs this header defines are exposed only so these functions can be inlined; their
 * fields are private and may change between minor versions (the exported functions will not).
 */
#ifndef UMEM_POOL_FAST_H
#define UMEM_POOL_FAST_H

#include <errno.h>
#include <stdatomic.h>
#include <umem/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct umem_area;
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

/* Out-of-band per-page metadata. */
struct umem_page {
	_Atomic int32_t refcnt;  /* 0: at rest (a pool's cache or ring, or the area's store) */
	uint32_t _reserved;
	struct umem_pool *owner; /* pool holding the page; NULL in the area's store */
};

/* The area's hot, read-only fields. */
struct umem_area_fast {
	uint8_t *base;
	struct umem_page *pages;
	uint64_t size;
	uint32_t page_shift;
	uint32_t page_size;
	uint32_t chunk_size; /* 0: no chunk constraint */
	uint32_t debug;      /* exact per-fragment tracking */
};

/* Owner-side counters: only the owner writes them, with a relaxed load and store (a plain
 * increment, no locked instruction); atomics only so that a stats reader on another thread is
 * not a data race. */
struct umem_pool_owner_stats {
	_Atomic uint64_t alloc_fast, alloc_slow, alloc_slow_high_order, alloc_empty, alloc_refill;
	_Atomic uint64_t recycle_cached, recycle_cache_full;
	_Atomic uint64_t frag_allocs, frag_pages_drained, refs_taken, pages_held;
};

/* The owner's hot part of a pool: the first member of the private struct. */
struct umem_pool_fast {
	struct umem_area_fast *area;
	struct umem_page *pages;
	uint64_t area_size;
	uint32_t page_shift;
	uint32_t debug;
	uint32_t count; /* entries in cache[] */
	uint32_t frag_offset;
	uint32_t frag_users;
	uint32_t _pad;
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
#define UMEM__STAT(p, field, n) ((void)0)
#endif

/* Out-of-line halves of the inline paths (exported, not for direct use). */
UMEM_API int umem__pool_alloc_slow(struct umem_pool *pool, uint64_t *addr);
UMEM_API void umem__pool_put_slow(struct umem_pool *pool, uint64_t addr);
UMEM_API int umem__pool_ref_slow(struct umem_pool *pool, uint64_t addr, uint32_t n);
UMEM_API int umem__pool_alloc_frag_slow(struct umem_pool *pool, uint32_t size, uint64_t *addr,
					uint32_t *truesize);

static inline void *umem_area__ptr(struct umem_area *area, uint64_t addr)
{
	return ((struct umem_area_fast *)area)->base + addr;
}

static inline uint64_t umem_area__addr(struct umem_area *area, const void *ptr)
{
	return (uint64_t)((const uint8_t *)ptr - ((struct umem_area_fast *)area)->base);
}

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

	if (umem_likely(addr < p->area_size && !p->debug)) {
		struct umem_page *pg = &p->pages[addr >> p->page_shift];

		/* Last user reads 1: no read-modify-write needed (page_pool's unref shortcut). */
		if (umem_likely(atomic_load_explicit(&pg->refcnt, memory_order_acquire) == 1 &&
				pg->owner == pool && p->count < UMEM_POOL_CACHE_SIZE)) {
			atomic_store_explicit(&pg->refcnt, 0, memory_order_relaxed);
			p->cache[p->count++] = addr >> p->page_shift << p->page_shift;
			UMEM__STAT(p, recycle_cached, 1);
			return;
		}
	}
	umem__pool_put_slow(pool, addr);
}

/* A fragment of the current fragment page, when it fits with room for the next one of the same
 * size and needs no chunk alignment gap: one add to an owner-only counter, no atomic. Page
 * changes, tail absorption, whole-page requests and checks are out of line. */
static inline int umem_pool__alloc_frag(struct umem_pool *pool, uint32_t size, uint64_t *addr,
					uint32_t *truesize)
{
	struct umem_pool_fast *p = (struct umem_pool_fast *)pool;

	if (umem_likely(p && addr && size && p->frag_page != UINT64_MAX && !p->debug)) {
		uint32_t sz = (size + UMEM_FRAG_ALIGN - 1) & ~(UMEM_FRAG_ALIGN - 1);
		uint32_t off = p->frag_offset, next = off + sz, chunk = p->area->chunk_size;

		if (umem_likely(size * 2 <= p->area->page_size && next + sz <= p->area->page_size &&
				(!chunk || (sz <= chunk && (off & (chunk - 1)) + sz <= chunk &&
					    (next & (chunk - 1)) + sz <= chunk)))) {
			p->frag_users++;
			p->frag_offset = next;
			UMEM__STAT(p, frag_allocs, 1);
			*addr = p->frag_page + off;
			if (truesize)
				*truesize = sz;
			return 0;
		}
	}
	return umem__pool_alloc_frag_slow(pool, size, addr, truesize);
}

static inline int umem_pool__ref(struct umem_pool *pool, uint64_t addr, uint32_t n)
{
	struct umem_pool_fast *p = (struct umem_pool_fast *)pool;

	if (umem_likely(addr < p->area_size && !p->debug && n && n < UMEM_REF_MAX)) {
		struct umem_page *pg = &p->pages[addr >> p->page_shift];
		int32_t r = atomic_load_explicit(&pg->refcnt, memory_order_relaxed);

		/* The caller holds a reference, so r cannot drop to 0 under us. */
		if (umem_likely(r > 0 && r < UMEM_REF_MAX - (int32_t)n)) {
			atomic_fetch_add_explicit(&pg->refcnt, (int32_t)n, memory_order_relaxed);
			UMEM__STAT(p, refs_taken, n);
			return 0;
		}
	}
	return umem__pool_ref_slow(pool, addr, n);
}

#ifdef __cplusplus
}
#endif
#endif
