/* SPDX-License-Identifier: MIT */
/*
 * Fragments, after page_pool_alloc_frag(): the pool carves its current page at increasing
 * offsets. The page's refcount is set to UMEM_FRAG_BIAS when claimed and the fragments are
 * counted in frag_users, a plain owner-only counter; when the pool moves on it subtracts
 * BIAS - frag_users in one atomic, so each fragment costs no atomic on the alloc side and the
 * page's count ends equal to the fragments still alive.
 */
#include "internal.h"

static inline uint32_t align_up(uint32_t v, uint32_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* Closes the current fragment page; true when every fragment was already freed (the page is
 * at rest and belongs to the caller to recycle or release). */
bool umem__pool_frag_drain(struct umem_pool *p)
{
	struct umem_pool_fast *f = &p->f;
	struct umem_page *pg = &f->pages[f->frag_page >> f->page_shift];
	int32_t drop = UMEM_FRAG_BIAS - (int32_t)f->frag_users;

	UMEM__STAT(f, frag_pages_drained, 1);
	int32_t r = atomic_fetch_sub_explicit(&pg->refcnt, drop, memory_order_acq_rel) - drop;
	if (r < 0)
		umem__die("fragment page 0x%llx: refcount underflow (%d): a fragment was put twice",
			  (unsigned long long)f->frag_page, r);
	return r == 0;
}

/* Where a fragment of sz bytes would start at or after off; chunk-aligned mode keeps a fragment
 * that fits in a chunk inside one, and starts larger ones on a chunk boundary. */
static inline uint32_t frag_place(uint32_t off, uint32_t sz, uint32_t chunk)
{
	if (chunk && (sz > chunk ? off & (chunk - 1) : (off & (chunk - 1)) + sz > chunk))
		return align_up(off, chunk);
	return off;
}

int umem__pool_alloc_frag_slow(struct umem_pool *p, uint32_t size, uint64_t *addr, uint32_t *truesize)
{
	struct umem_pool_fast *f;
	uint32_t page_size, chunk, sz, off = 0, start;

	if (!p || !addr)
		return -EINVAL;
	f = &p->f;
	page_size = f->area->page_size;
	if (!size || size > page_size)
		return -EINVAL;
	/* page_pool_alloc(): a fragment that cannot share its page only pays bookkeeping. */
	if (size * 2 > page_size) {
		int err = umem_pool__alloc(p, addr);

		if (!err && truesize)
			*truesize = page_size;
		return err;
	}
	chunk = f->area->chunk_size;
	sz = align_up(size, UMEM_FRAG_ALIGN);
	if (f->frag_page != UMEM_NO_PAGE) {
		off = frag_place(f->frag_offset, sz, chunk);
		if (off + sz > page_size) {
			if (umem__pool_frag_drain(p))
				umem__pool_recycle(p->area, p, f->frag_page);
			f->frag_page = UMEM_NO_PAGE;
		}
	}
	if (f->frag_page == UMEM_NO_PAGE) {
		uint64_t a = umem__pool_take_page(p, UMEM_FRAG_BIAS);

		if (a == UMEM_NO_PAGE)
			return -ENOMEM;
		f->frag_page = a;
		f->frag_offset = 0;
		f->frag_users = 0;
		off = 0;
	}
	start = f->frag_offset; /* a gap skipped to respect a chunk is charged to this fragment */
	f->frag_users++;
	f->frag_offset = off + sz;
	/* Tail absorption: if the next fragment of this size cannot fit, this one takes the rest
	 * of the page, so truesize never under-reports. */
	if (frag_place(f->frag_offset, sz, chunk) + sz > page_size)
		f->frag_offset = page_size;
	if (f->debug)
		umem__track_alloc(p->area, f->frag_page + off, f->frag_offset - off);
	UMEM__STAT(f, frag_allocs, 1);
	*addr = f->frag_page + off;
	if (truesize)
		*truesize = f->frag_offset - start;
	return 0;
}

void *umem_pool__alloc_va(struct umem_pool *p, uint32_t size, uint32_t *truesize)
{
	uint64_t addr;
	int err = umem_pool__alloc_frag(p, size, &addr, truesize);

	if (err) {
		errno = -err;
		return NULL;
	}
	return umem_pool__ptr(p, addr);
}
