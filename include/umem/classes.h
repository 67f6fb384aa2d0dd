/* SPDX-License-Identifier: MIT */
/*
 * Size classes: a set of pools, one per buffer size, selected by requested size. The default set
 * is mvpp2's buffer manager (short frames up to 128 B, long up to 1664 B, jumbo up to 9856 B):
 * the "mvpp2 profile". Every class hands out buffers of its bound, carved as fragments of the
 * area's pages by the page_pool_alloc() rule, so small frames share pages and the set's memory
 * follows the traffic mix. All pools of a set belong to the calling thread.
 */
#ifndef UMEM_CLASSES_H
#define UMEM_CLASSES_H

#include <umem/pool.h>

#ifdef __cplusplus
extern "C" {
#endif

struct umem_classes;

#define UMEM_CLASSES_MAX 8u
/* mvpp2's buffer-manager pools: short, long, jumbo. */
#define UMEM_MVPP2_SHORT 128u
#define UMEM_MVPP2_LONG 1664u
#define UMEM_MVPP2_JUMBO 9856u

struct umem_classes_opts {
	size_t sz;          /* sizeof(struct umem_classes_opts) */
	uint32_t nr;        /* number of classes; 0 = the mvpp2 profile */
	uint32_t ring_size; /* each pool's return ring; 0 = default */
	uint32_t bounds[UMEM_CLASSES_MAX]; /* strictly increasing; the largest <= the page size */
};

/* NULL and errno EINVAL when a bound is 0, out of order, or above the area's page size (the
 * message names the bound; mvpp2's jumbo class needs pages of 16 KiB or more). */
UMEM_API struct umem_classes *umem_classes__create(struct umem_area *area,
						   const struct umem_classes_opts *opts);
/* Destroys every pool; returns the pages still in flight (see umem_pool__destroy). */
UMEM_API int umem_classes__destroy(struct umem_classes *c);

/* A buffer of the smallest class that holds size bytes: -EINVAL for 0 or above the largest
 * class, -ENOMEM when the area is exhausted. A class that runs dry first flushes its siblings
 * (umem_pool__flush: their cached and returned pages, and an empty fragment page, go back to
 * the area), so pages idle in one class serve another. truesize (may be NULL) as in umem_pool__alloc_frag. */
UMEM_API int umem_classes__alloc(struct umem_classes *c, uint32_t size, uint64_t *addr,
				 uint32_t *truesize);
/* Drops a reference; pages of the set's pools go back to their cache. */
UMEM_API void umem_classes__put(struct umem_classes *c, uint64_t addr);
/* Number of classes, and the bound (largest size) of class idx (0 when idx >= count). */
UMEM_API uint32_t umem_classes__count(const struct umem_classes *c);
UMEM_API uint32_t umem_classes__bound(const struct umem_classes *c, uint32_t idx);
/* Index of the class that serves size, or -EINVAL. */
UMEM_API int umem_classes__index(const struct umem_classes *c, uint32_t size);
/* The pool of class idx (NULL when idx >= count), e.g. for umem_pool__stats(). */
UMEM_API struct umem_pool *umem_classes__pool(const struct umem_classes *c, uint32_t idx);

#ifdef __cplusplus
}
#endif
#endif
