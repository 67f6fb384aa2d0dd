/* SPDX-License-Identifier: MIT */
/*
 * Exact allocation tracking for UMEM_AREA_F_DEBUG. Page refcounts cannot tell which fragment a
 * put belongs to, so a debug area keeps one word per UMEM_FRAG_ALIGN granule:
 *   START | len (granules) << 32 | refs   on a live allocation's first granule,
 *   CONT  | distance back to the start    on its other granules,
 *   0                                     on free memory.
 * A put or a reference must land inside a live allocation; anything else aborts with the address.
 */
#include <stdlib.h>
#include "internal.h"

#define T_START (1ull << 63)
#define T_CONT (1ull << 62)
#define T_REFS 0xffffffffull
#define G_SHIFT 6 /* log2(UMEM_FRAG_ALIGN) */

_Static_assert(UMEM_FRAG_ALIGN == 1u << G_SHIFT, "granule must match the fragment alignment");

int umem__track_init(struct umem_area *a)
{
	a->track = calloc(a->f.size >> G_SHIFT, sizeof(*a->track));
	if (!a->track) {
		pr_warn("area: no memory for debug tracking\n");
		return -ENOMEM;
	}
	return 0;
}

void umem__track_alloc(struct umem_area *a, uint64_t addr, uint32_t len)
{
	uint64_t g = addr >> G_SHIFT, n = len >> G_SHIFT;

	for (uint64_t i = 0; i < n; i++) {
		if (atomic_load_explicit(&a->track[g + i], memory_order_relaxed))
			umem__die("debug: allocation at 0x%llx overlaps live memory at 0x%llx",
				  (unsigned long long)addr, (unsigned long long)((g + i) << G_SHIFT));
		atomic_store_explicit(&a->track[g + i], i ? T_CONT | i : T_START | n << 32 | 1,
				      memory_order_relaxed);
	}
}

/* The first granule of the live allocation holding addr, or UINT64_MAX. */
static uint64_t track_start(struct umem_area *a, uint64_t addr)
{
	uint64_t g = addr >> G_SHIFT, e = atomic_load_explicit(&a->track[g], memory_order_acquire);

	if (e & T_CONT)
		g -= e & T_REFS;
	else if (!(e & T_START))
		return UINT64_MAX;
	return g;
}

void umem__track_put(struct umem_area *a, uint64_t addr, uint32_t n)
{
	uint64_t g = track_start(a, addr), e, refs;

	if (g == UINT64_MAX)
		umem__die("put of address 0x%llx: double put, or the address was never allocated "
			  "(no live allocation there)", (unsigned long long)addr);
	e = atomic_load_explicit(&a->track[g], memory_order_relaxed);
	do {
		refs = e & T_REFS;
		if (!(e & T_START) || refs < n)
			umem__die("put of address 0x%llx: refcount underflow (fragment has %llu reference(s)): a "
				  "double put, or more puts than references",
				  (unsigned long long)addr, (unsigned long long)refs);
	} while (!atomic_compare_exchange_weak_explicit(&a->track[g], &e, e - n,
							memory_order_acq_rel, memory_order_relaxed));
	if (refs > n)
		return;
	/* Last reference: clear the range before the page refcount drops, so a reuse of this memory
	 * (which happens only after that drop) starts from free granules. */
	uint64_t len = (e >> 32) & 0x3fffffff;
	for (uint64_t i = len; i-- > 0;)
		atomic_store_explicit(&a->track[g + i], 0, memory_order_release);
}

int umem__track_ref(struct umem_area *a, uint64_t addr, uint32_t n)
{
	uint64_t g = track_start(a, addr), e;

	if (g == UINT64_MAX)
		umem__die("reference on address 0x%llx: the fragment there was freed (use after free)",
			  (unsigned long long)addr);
	e = atomic_load_explicit(&a->track[g], memory_order_relaxed);
	do {
		if (!(e & T_START) || !(e & T_REFS))
			umem__die("reference on address 0x%llx: the fragment there was freed (use after free)",
				  (unsigned long long)addr);
	} while (!atomic_compare_exchange_weak_explicit(&a->track[g], &e, e + n,
							memory_order_acq_rel, memory_order_relaxed));
	return 0;
}
