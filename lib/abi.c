/* SPDX-License-Identifier: MIT */
/*
 * The inline fast paths (umem/area.h, umem/pool_fast.h) compile the layout of their structs and
 * constants into every caller, so that layout is ABI: it may only change together with the
 * SONAME. UMEM_LAYOUT is a hash of it as an integer constant expression; the static assert below
 * ties it to UMEM_SOVERSION. After a deliberate layout change, bump UMEM_SOVERSION in
 * include/umem/common.h and record the new value for that SOVERSION: umem__abi_layout() returns
 * it, in a build with -DUMEM_ABI_NO_ASSERT (which skips the assert below).
 */
#include <umem/lpm.h>
#include "internal.h"

#define F(t, m) (offsetof(struct t, m) * 131u + sizeof(((struct t *)0)->m))
#define MIX(h, v) (((h) * 1000003ull) ^ (unsigned long long)(v))

#define L_PAGE MIX(MIX(MIX(MIX(sizeof(struct umem_page), F(umem_page, refcnt)), F(umem_page, state)), \
		       F(umem_page, owner)), 1)
#define L_AREA                                                                                  \
	MIX(MIX(MIX(MIX(MIX(MIX(MIX(MIX(sizeof(struct umem_area_fast), F(umem_area_fast, base)),     \
				F(umem_area_fast, pages)), F(umem_area_fast, size)),               \
			F(umem_area_fast, page_shift)), F(umem_area_fast, page_size)),             \
		F(umem_area_fast, chunk_size)), F(umem_area_fast, debug)), 2)
/* Every counter, not only the struct's size: inline code in callers writes them at fixed
 * offsets, so a swap of two of them is a layout change. */
#define S(m) F(umem_pool_owner_stats, m)
#define L_STATS                                                                                 \
	MIX(MIX(MIX(MIX(MIX(MIX(MIX(MIX(MIX(MIX(MIX(sizeof(struct umem_pool_owner_stats),          \
		S(alloc_fast)), S(alloc_slow)), S(alloc_slow_high_order)), S(alloc_empty)),         \
		S(alloc_refill)), S(recycle_cached)), S(recycle_cache_full)), S(frag_allocs)),      \
		S(frag_pages_drained)), S(refs_taken)), S(pages_held))
#define L_POOL                                                                                  \
	MIX(MIX(MIX(MIX(MIX(MIX(MIX(MIX(MIX(MIX(MIX(MIX(MIX(sizeof(struct umem_pool_fast),          \
		F(umem_pool_fast, area)), F(umem_pool_fast, pages)), F(umem_pool_fast, area_size)),  \
		F(umem_pool_fast, page_shift)), F(umem_pool_fast, debug)), F(umem_pool_fast, count)), \
		F(umem_pool_fast, frag_offset)), F(umem_pool_fast, frag_users)),                       \
		F(umem_pool_fast, frag_max)), F(umem_pool_fast, frag_page)), F(umem_pool_fast, st)),  \
		F(umem_pool_fast, cache)), L_STATS)
#define L_POOL2                                                                                 \
	MIX(MIX(MIX(MIX(MIX(MIX(L_POOL, F(umem_pool_fast, frag_claim)), F(umem_pool_fast, frag_fit_size)), \
		    F(umem_pool_fast, frag_fit)), F(umem_pool_fast, frag_chunk)), F(umem_pool_fast, put_n)), \
	    F(umem_pool_fast, put_page))
#define L_CONST MIX(MIX(MIX(MIX(UMEM_POOL_CACHE_SIZE, UMEM_POOL_REFILL), UMEM_FRAG_ALIGN), \
			UMEM_FRAG_BIAS), UMEM_REF_MAX)
#define UMEM_LAYOUT (MIX(MIX(MIX(L_PAGE, L_AREA), L_POOL2), L_CONST) & 0xffffffffull)

/* The layout each SONAME shipped with (x86_64 and aarch64: LP64, same layout). */
#if UMEM_SOVERSION == 0
#define UMEM_LAYOUT_RECORDED 0x8afc505ull
#else
#error "no layout recorded for this UMEM_SOVERSION (see lib/abi.c)"
#endif

#ifndef UMEM_ABI_NO_ASSERT
_Static_assert(UMEM_LAYOUT == UMEM_LAYOUT_RECORDED,
	       "the inline fast path's struct layout changed: bump UMEM_SOVERSION in "
	       "include/umem/common.h and record the new layout in lib/abi.c");
#endif

/* The inline LPM lookup (umem/lpm.h) reads its struct and entry bits the same way: a hash of
 * its own, so adding it left the layout recorded above as it was. */
#define UMEM_LPM_LAYOUT                                                                         \
	(MIX(MIX(MIX(MIX(MIX(MIX(sizeof(struct umem_lpm4_fast), F(umem_lpm4_fast, tbl24)),       \
			 F(umem_lpm4_fast, tbl8)), UMEM__LPM_VALID), UMEM__LPM_EXT), UMEM__LPM_LOW), \
	     UMEM_LPM_NH_MAX) & 0xffffffffull)
#if UMEM_SOVERSION == 0
#define UMEM_LPM_LAYOUT_RECORDED 0x2bd34aull
#endif
#ifndef UMEM_ABI_NO_ASSERT
_Static_assert(UMEM_LPM_LAYOUT == UMEM_LPM_LAYOUT_RECORDED,
	       "the inline LPM lookup's struct layout changed: bump UMEM_SOVERSION in "
	       "include/umem/common.h and record the new layout in lib/abi.c");
#endif

/* The layouts this build computes, to record after a deliberate change. */
UMEM_PRIVATE unsigned long long umem__abi_layout(void);
unsigned long long umem__abi_layout(void)
{
	return UMEM_LAYOUT;
}

UMEM_PRIVATE unsigned long long umem__abi_lpm_layout(void);
unsigned long long umem__abi_lpm_layout(void)
{
	return UMEM_LPM_LAYOUT;
}
