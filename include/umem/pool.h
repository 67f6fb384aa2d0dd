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
 * no fragment accounting; a smaller one gets a fragment of the pool's current page, whose count
 * was set, when the page was claimed, to the fragments of that size it takes (no atomic per
 * fragment, none to close a page filled with one size). Extra references (one frame sent on
 * several ports) are atomic increments of the page's refcount; a page is recycled when its last
 * one drops. The owner's put on a page that others still hold waits in a one-page slot instead
 * of an atomic subtraction; the page is recycled when the owner finds it has the last reference,
 * or when the slot moves on.
 *
 * Memory-safety violations abort with the address named. Release builds check at page level:
 * a put on a page at rest (double put of a whole page, in one thread), an address outside the
 * area, refcount underflow, a page put twice into the area, a reference on a page at rest or
 * back in the area. They cannot catch misuse on a page that is live again: a put or reference
 * through a stale address after its page was reallocated (to any pool, or as another fragment
 * of the current fragment page), nor on the page in the owner's put slot, nor another thread's
 * extra put on the owner's current fragment page, nor two threads putting one whole page at the
 * same time (both may succeed, and the page is then handed out twice; the kernel has the same
 * window).
 * UMEM_AREA_F_DEBUG (or LIBUMEM_DEBUG=1) checks every fragment exactly (which also catches the
 * concurrent double put and the stale fragment) and the single-owner rule: no two threads are
 * inside owner-only calls (alloc*, prefill, flush, and put/put_bulk/ref through the pool) of one
 * pool at the same time. Handing a pool to another thread between calls stays legal.
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
	/* Return ring entries: power of two, 64..65536; 0 = 1024. Every page in the ring is one
	 * the pool holds, so a ring of at least the most pages it holds at once never falls back
	 * to the area (recycle.ring_full). */
	uint32_t ring_size;
	uint32_t reserved; /* 0: room for a later field (checked) */
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
		uint64_t released_refcnt; /* always 0: a page never leaves with a reference held */
	} recycle;
	uint64_t frag_allocs;        /* fragments handed out (whole-page allocations excluded) */
	uint64_t frag_pages_drained; /* fragment pages closed (full, or left for another size) */
	uint64_t refs_taken;         /* extra references taken through this pool */
	uint64_t pages_held;         /* pages taken from the area (kernel: hold_cnt) */
	uint64_t pages_released;     /* pages given back to the area (kernel: release_cnt) */
	int32_t inflight;            /* (int32_t)(held - released): pages out, cached or in the ring */
	uint32_t reserved; /* 0: room for a later field (checked) */
};

/* Creates a pool on area. NULL and errno (EINVAL, ENOMEM) on failure, with a message; opts may
 * be NULL. */
UMEM_API struct umem_pool *umem_pool__create(struct umem_area *area, const struct umem_pool_opts *opts);

/* Gives the cache and ring back to the area. Legal with pages in flight: the pool's memory is
 * freed when its last page returns. Returns the number of pages still out (and logs it when
 * not 0); NULL is a no-op (0). It waits a bounded time for producers that reserved a ring slot
 * but have not published it; such a page counts as out, and reaches the area with the next
 * reclaim or umem_area__destroy(). The handle is invalid afterwards. */
UMEM_API int umem_pool__destroy(struct umem_pool *pool);

UMEM_API struct umem_area *umem_pool__area(const struct umem_pool *pool);
/* Fills stats up to stats->sz bytes (output structs follow one rule: set .sz, e.g.
 * UMEM_OPTS(umem_pool_stats, st); a size below the first release's struct is -EINVAL with a
 * message; bytes beyond what this library knows are left untouched). */
UMEM_API int umem_pool__stats(const struct umem_pool *pool, struct umem_pool_stats *stats);

/* Gives the pages the pool holds at rest (its alloc cache, return ring, and the put slot's page
 * once its other holders are gone) back to the area, so an idle pool strands nothing; returns
 * how many, or -EINVAL. Owner only. Pages out and the current fragment page stay. The area also reclaims other pools' return rings by itself when
 * it runs dry; only the owner can empty a cache, hence this call. */
UMEM_API int umem_pool__flush(struct umem_pool *pool);

/* Takes up to n pages from the area into the pool's return ring ahead of demand (counted in
 * pages_held now, and as refills when they are handed out), so a workload whose working set is known (fill + TX rings) reaches its
 * steady state, zero slow-path allocations, from the first packet. Bounded by the ring's free
 * room and the area's free pages; returns how many pages were taken, or -EINVAL. Owner only. */
UMEM_API int umem_pool__prefill(struct umem_pool *pool, uint32_t n);

/* Whole pages. alloc returns 0 or -ENOMEM (area exhausted). alloc_bulk returns how many
 * pages it placed in addrs (0..n; 0 for n = 0), or -EINVAL. */
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
 * pool is the caller's own pool: pages it owns go back to its cache (its puts on pages others
 * still hold wait in its put slot, see the top of this header), others to their owner's
 * return ring. put_bulk does the same for an array, one ring operation per run of one owner
 * (the shape of an AF_XDP completion-ring drain); an address may appear several times. */
static inline void umem_pool__put(struct umem_pool *pool, uint64_t addr);
UMEM_API void umem_pool__put_bulk(struct umem_pool *pool, const uint64_t *addrs, uint32_t n);

/* Put from a thread that owns no pool: always through the owner's return ring. */
UMEM_API void umem_area__put(struct umem_area *area, uint64_t addr);
UMEM_API void umem_area__put_bulk(struct umem_area *area, const uint64_t *addrs, uint32_t n);
/* The names of umem_area__put and umem_area__put_bulk until 0.1, kept for one release. */
UMEM_API void umem_put(struct umem_area *area, uint64_t addr) UMEM_DEPRECATED("use umem_area__put");
UMEM_API void umem_put_bulk(struct umem_area *area, const uint64_t *addrs, uint32_t n)
	UMEM_DEPRECATED("use umem_area__put_bulk");

/* Take n extra references on the page holding addr (a live allocation of the caller's). As for
 * put, pool is the caller's own pool (its refs_taken counts the references taken through it);
 * the frame may belong to any pool. -EINVAL: outside the area or n == 0; -ENOENT: the page
 * never left the area's store; -EOVERFLOW: the page would exceed UMEM_REF_MAX references (exact under concurrency).
 * Nothing changes on error. A reference on a page at rest (held unallocated in a pool's cache
 * or ring: use after free, or an address never handed out, since pools take pages in bulk) or
 * returned to the area (use after free) aborts; on a page allocated again it cannot be told from a legitimate one (see the top
 * of this header). */
static inline int umem_pool__ref(struct umem_pool *pool, uint64_t addr, uint32_t n);

/* Pointer to the frame at addr. */
static inline void *umem_pool__ptr(struct umem_pool *pool, uint64_t addr);

#ifdef __cplusplus
}
#endif

#include <umem/pool_fast.h>

#endif
