/* SPDX-License-Identifier: MIT */
/*
 * libumem pool: the kernel's page_pool, in userspace.
 *
 * A pool is owned by one thread (as a page_pool belongs to one NAPI context). Its owner
 * allocates from a lockless LIFO alloc cache (128 entries, refilled 64 at a time) that is
 * refilled first from the pool's return ring and then, in bulk, from the area (the slow path).
 * The last reference to a page, dropped by the owner, goes straight back into the cache; dropped
 * by any other thread it goes into the owner's return ring, which is lock-free for many
 * producers (page_pool's ptr_ring takes a spinlock there). Ring full: back to the area.
 *
 * Fragments follow page_pool_alloc(): a request larger than half a page gets a whole page with
 * no fragment accounting; a smaller one gets a fragment of the pool's current page, counted with
 * the BIAS scheme (no atomic per fragment). Extra references (one frame sent on several ports)
 * are atomic increments of the page's refcount; a page is recycled when its last one drops.
 *
 * Memory-safety violations (double put, an address outside the area, refcount underflow, a
 * reference on a freed page) abort with the address named. Release builds check at page level;
 * UMEM_AREA_F_DEBUG (or LIBUMEM_DEBUG=1) checks every fragment exactly.
 */
#ifndef UMEM_POOL_H
#define UMEM_POOL_H

#include <umem/area.h>

#ifdef __cplusplus
extern "C" {
#endif

struct umem_pool;

#define UMEM_POOL_RING_DEFAULT 1024u

struct umem_pool_opts {
	size_t sz;          /* sizeof(struct umem_pool_opts) */
	uint32_t ring_size; /* return ring entries: power of two, 64..65536; 0 = 1024 */
	uint32_t :32;
};

/* The kernel's page_pool stats (same names), plus ours. */
struct umem_pool_stats {
	size_t sz; /* sizeof(struct umem_pool_stats) */
	struct {
		uint64_t fast;            /* from the alloc cache */
		uint64_t slow;            /* slow-path calls that went to the area */
		uint64_t slow_high_order; /* the same, for pages above 4 KiB */
		uint64_t empty;           /* refill found the return ring empty */
		uint64_t refill;          /* refill took pages from the return ring */
		uint64_t waive;           /* always 0: no NUMA placement to enforce in userspace */
	} alloc;
	struct {
		uint64_t cached;          /* last put by the owner, into the alloc cache */
		uint64_t cache_full;      /* owner put found the cache full */
		uint64_t ring;            /* into the return ring */
		uint64_t ring_full;       /* return ring full: page released to the area */
		uint64_t released_refcnt; /* released to the area because the pool was destroyed */
	} recycle;
	uint64_t frag_allocs;        /* fragments handed out (whole-page allocations excluded) */
	uint64_t frag_pages_drained; /* fragment pages closed (BIAS - users subtracted) */
	uint64_t refs_taken;         /* extra references taken through this pool */
	uint64_t pages_held;         /* pages taken from the area (kernel: hold_cnt) */
	uint64_t pages_released;     /* pages given back to the area (kernel: release_cnt) */
	int32_t inflight;            /* (int32_t)(held - released): pages out, cached or in the ring */
	uint32_t :32;
};

/* Creates a pool on area. NULL and errno (EINVAL, ENOMEM) on failure; opts may be NULL. */
UMEM_API struct umem_pool *umem_pool__create(struct umem_area *area, const struct umem_pool_opts *opts);

/* Gives the cache and ring back to the area. Legal with pages in flight: the pool's memory is
 * freed when its last page returns. Returns the number of pages still out (and logs it when
 * not 0). The handle is invalid afterwards. */
UMEM_API int umem_pool__destroy(struct umem_pool *pool);

UMEM_API struct umem_area *umem_pool__area(const struct umem_pool *pool);
UMEM_API int umem_pool__stats(const struct umem_pool *pool, struct umem_pool_stats *stats);

/* Takes up to n pages from the area into the pool's return ring ahead of demand (counted as slow
 * allocations now), so a workload whose working set is known (fill + TX rings) reaches its
 * steady state, zero slow-path allocations, from the first packet. Bounded by the ring's free
 * room and the area's free pages; returns how many pages were taken, or -EINVAL. Owner only. */
UMEM_API int umem_pool__prefill(struct umem_pool *pool, uint32_t n);

/* Whole pages. alloc returns 0 or -ENOMEM (area exhausted). alloc_bulk returns how many
 * pages it placed in addrs (0..n), or -EINVAL. */
static inline int umem_pool__alloc(struct umem_pool *pool, uint64_t *addr);
UMEM_API int umem_pool__alloc_bulk(struct umem_pool *pool, uint64_t *addrs, uint32_t n);

/* page_pool_alloc(): size * 2 > page size gets a whole page (truesize = page size); smaller sizes
 * get a fragment aligned to UMEM_FRAG_ALIGN, never straddling a chunk in aligned-chunk mode.
 * truesize (may be NULL) is the memory the fragment consumes, including a page tail absorbed
 * when the next fragment of the same size would not fit. -EINVAL for size 0 or above the page
 * size, -ENOMEM when the area is exhausted. */
static inline int umem_pool__alloc_frag(struct umem_pool *pool, uint32_t size, uint64_t *addr,
					uint32_t *truesize);
/* The same, returning a pointer into the area (NULL and errno on failure). */
UMEM_API void *umem_pool__alloc_va(struct umem_pool *pool, uint32_t size, uint32_t *truesize);

/* Drop one reference to the page holding addr (any address inside a frame or fragment).
 * pool is the caller's own pool: pages it owns go back to its cache, others to their owner's
 * return ring. put_bulk does the same for an array, one ring operation per run of one owner
 * (the shape of an AF_XDP completion-ring drain); an address may appear several times. */
static inline void umem_pool__put(struct umem_pool *pool, uint64_t addr);
UMEM_API void umem_pool__put_bulk(struct umem_pool *pool, const uint64_t *addrs, uint32_t n);

/* Put from a thread that owns no pool: always through the owner's return ring. */
UMEM_API void umem_put(struct umem_area *area, uint64_t addr);
UMEM_API void umem_put_bulk(struct umem_area *area, const uint64_t *addrs, uint32_t n);

/* Take n extra references on the page holding addr (a live allocation of the caller's).
 * -EINVAL: outside the area or n == 0; -ENOENT: the page is in the area's store (no pool took
 * it); -EOVERFLOW: the page would exceed UMEM_REF_MAX references. Nothing changes on error.
 * A reference on a page that a pool holds unallocated, in its cache or return ring (use after
 * free, or an address never handed out: pools take pages from the area in bulk), aborts. */
static inline int umem_pool__ref(struct umem_pool *pool, uint64_t addr, uint32_t n);

/* Pointer to the frame at addr. */
static inline void *umem_pool__ptr(struct umem_pool *pool, uint64_t addr);

#ifdef __cplusplus
}
#endif

#include <umem/pool_fast.h>

#endif
