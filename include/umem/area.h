/* SPDX-License-Identifier: MIT */
/*
 * libumem area: one mmap'd region (registered as the UMEM by its first port) cut into pages of
 * a power-of-two size.
 *
 * Per-page metadata (refcount, owner pool) lives in a separate array indexed by
 * addr >> page_shift, never inside packet memory, which the kernel and peers write.
 * The area is also the pools' "page allocator": a thread-safe page store with bulk get/put.
 * Addresses everywhere are UMEM offsets (uint64_t), exactly what AF_XDP descriptors carry.
 */
#ifndef UMEM_AREA_H
#define UMEM_AREA_H

#include <stdbool.h>
#include <umem/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct umem_area;

#define UMEM_PAGE_SIZE_MIN 4096u
#define UMEM_PAGE_SIZE_MAX 65536u
#define UMEM_PAGE_SIZE_DEFAULT 4096u
#define UMEM_HUGEPAGE_SIZE (2u << 20)

enum umem_area_flags {
	/* Back the area with 2 MiB hugepages (MAP_HUGETLB); fails with -ENOMEM and a message
	 * naming vm.nr_hugepages when none are reserved. Fewer TLB misses, same chunk limits. */
	UMEM_AREA_F_HUGEPAGES = 1u << 0,
	/* Exact per-fragment tracking: every put/ref is checked against the live allocation it
	 * names (double put of a fragment, put of a freed range). Slower; also turned on by the
	 * environment variable LIBUMEM_DEBUG=1. */
	UMEM_AREA_F_DEBUG = 1u << 1,
};

struct umem_area_opts {
	size_t sz;          /* sizeof(struct umem_area_opts) */
	uint32_t page_size; /* power of two, 4096..65536; 0 = 4096 */
	uint32_t flags;     /* enum umem_area_flags */
	/* Aligned-chunk mode: fragments never straddle a multiple of chunk_size (the AF_XDP
	 * aligned-mode rule for TX descriptors). 0 = no constraint (unaligned mode). */
	uint32_t chunk_size;
	uint32_t :32;
};

/* Creates an area of nr_pages pages. Returns NULL and sets errno (EINVAL, ENOMEM) on failure;
 * nothing is left allocated. opts may be NULL. */
UMEM_API struct umem_area *umem_area__create(uint32_t nr_pages, const struct umem_area_opts *opts);

/* Frees the area. Every pool created on it must have been destroyed; pools destroyed with
 * pages in flight are freed here at the latest. Returns -EBUSY (and frees nothing) while a
 * pool is still alive. */
UMEM_API int umem_area__destroy(struct umem_area *area);

UMEM_API void *umem_area__base(const struct umem_area *area);
UMEM_API uint64_t umem_area__size(const struct umem_area *area);
UMEM_API uint32_t umem_area__page_size(const struct umem_area *area);
UMEM_API uint32_t umem_area__nr_pages(const struct umem_area *area);
UMEM_API uint32_t umem_area__chunk_size(const struct umem_area *area);
/* Pages in the area's store (not held by any pool). */
UMEM_API uint32_t umem_area__free_pages(const struct umem_area *area);

/* Bulk page source ("page allocator"): thread-safe. get takes up to n pages (returns how many,
 * their base addresses in addrs); put gives pages back (each must be unowned and unreferenced).
 * Pools use these on their slow path; applications rarely need them. */
UMEM_API int umem_area__get_pages(struct umem_area *area, uint64_t *addrs, uint32_t n);
UMEM_API int umem_area__put_pages(struct umem_area *area, const uint64_t *addrs, uint32_t n);

/* Translations between UMEM offsets and pointers. */
static inline void *umem_area__ptr(struct umem_area *area, uint64_t addr);
static inline uint64_t umem_area__addr(struct umem_area *area, const void *ptr);

#ifdef __cplusplus
}
#endif

#include <umem/pool_fast.h>

#endif
