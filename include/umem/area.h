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

#include <stdatomic.h>
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
	uint32_t reserved; /* 0: room for a later field (checked) */
};

/* Creates an area of nr_pages pages. Returns NULL and sets errno (EINVAL, ENOMEM) on failure;
 * nothing is left allocated. opts may be NULL. */
UMEM_API struct umem_area *umem_area__create(uint32_t nr_pages, const struct umem_area_opts *opts);

/* Frees the area; NULL is a no-op (returns 0). Every pool created on it must have been
 * destroyed and every page put back: pages a late producer left in a destroyed pool's return
 * ring are collected here. Returns -EBUSY (frees nothing, logs what is out) while a pool is
 * alive or a destroyed pool still has pages in flight. */
UMEM_API int umem_area__destroy(struct umem_area *area);

UMEM_API void *umem_area__base(const struct umem_area *area);
UMEM_API uint64_t umem_area__size(const struct umem_area *area);
UMEM_API uint32_t umem_area__page_size(const struct umem_area *area);
UMEM_API uint32_t umem_area__nr_pages(const struct umem_area *area);
UMEM_API uint32_t umem_area__chunk_size(const struct umem_area *area);
/* Pages in the area's store (not held by any pool). */
UMEM_API uint32_t umem_area__free_pages(const struct umem_area *area);

/* Bulk page source ("page allocator"): thread-safe. get takes up to n pages (returns how many,
 * their base addresses in addrs; 0 for n = 0); put gives pages back (each must be unowned and
 * unreferenced; a page already in the store aborts: put twice). When the store is empty, get
 * first reclaims the pages waiting in other pools' return rings. Pools use these on their slow
 * path; applications rarely need them. */
UMEM_API int umem_area__get_pages(struct umem_area *area, uint64_t *addrs, uint32_t n);
UMEM_API int umem_area__put_pages(struct umem_area *area, const uint64_t *addrs, uint32_t n);

/* Translations between UMEM offsets and pointers. */
static inline void *umem_area__ptr(struct umem_area *area, uint64_t addr);
static inline uint64_t umem_area__addr(struct umem_area *area, const void *ptr);

/*
 * The structs below are exposed only so that the inline functions of this header and of
 * pool_fast.h can be compiled into the caller. Their fields are private, but their layout is
 * part of the ABI: a program built against one layout reads them directly. A layout change
 * therefore bumps the SONAME (the build checks a hash of this layout against the one recorded
 * for UMEM_SOVERSION, see lib/abi.c).
 */

/* Out-of-band per-page metadata. */
struct umem_page {
	_Atomic int32_t refcnt;  /* 0: at rest (a pool's cache or ring, or the area's store) */
	uint32_t state;          /* area-private: in the store, ever handed out */
	struct umem_pool *owner; /* pool holding the page; NULL in the area's store */
};

/* The area's hot, read-only fields: the first member of the private struct. */
struct umem_area_fast {
	uint8_t *base;
	struct umem_page *pages;
	uint64_t size;
	uint32_t page_shift;
	uint32_t page_size;
	uint32_t chunk_size; /* 0: no chunk constraint */
	uint32_t debug;      /* exact per-fragment tracking */
};

static inline void *umem_area__ptr(struct umem_area *area, uint64_t addr)
{
	return ((struct umem_area_fast *)area)->base + addr;
}

static inline uint64_t umem_area__addr(struct umem_area *area, const void *ptr)
{
	return (uint64_t)((const uint8_t *)ptr - ((struct umem_area_fast *)area)->base);
}

#ifdef __cplusplus
}
#endif

#endif
