/* SPDX-License-Identifier: MIT */
/* The area: the mmap'd region, its out-of-band page metadata, and the bulk page store. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>
#include "internal.h"

/* LIBUMEM_DEBUG: unset, empty, 0, no, false or off (any case) leave debug mode off. */
static bool env_debug(void)
{
	static const char *const off[] = { "0", "no", "false", "off" };
	const char *e = getenv("LIBUMEM_DEBUG");

	if (!e || !*e)
		return false;
	for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++)
		if (!strcasecmp(e, off[i]))
			return false;
	return true;
}

struct umem_area *umem_area__create(uint32_t nr_pages, const struct umem_area_opts *opts)
{
	struct umem_area *a;
	uint32_t page_size, flags, chunk;
	uint64_t size;
	int err = -EINVAL, mflags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE;

	if (!OPTS_CHECK(opts, umem_area_opts, "area") ||
	    !OPTS_PAD(opts, umem_area_opts, chunk_size, sizeof(struct umem_area_opts), "area"))
		goto fail;
	page_size = OPTS_GET(opts, page_size, 0) ?: UMEM_PAGE_SIZE_DEFAULT;
	flags = OPTS_GET(opts, flags, 0);
	chunk = OPTS_GET(opts, chunk_size, 0);
	if (page_size < UMEM_PAGE_SIZE_MIN || page_size > UMEM_PAGE_SIZE_MAX ||
	    (page_size & (page_size - 1))) {
		pr_warn("area: umem_area_opts.page_size = %u is not a power of two in %u..%u\n", page_size,
			UMEM_PAGE_SIZE_MIN, UMEM_PAGE_SIZE_MAX);
		goto fail;
	}
	if (flags & ~(uint32_t)(UMEM_AREA_F_HUGEPAGES | UMEM_AREA_F_DEBUG)) {
		pr_warn("area: unknown flag 0x%x in umem_area_opts.flags\n",
			flags & ~(uint32_t)(UMEM_AREA_F_HUGEPAGES | UMEM_AREA_F_DEBUG));
		goto fail;
	}
	if (chunk && (chunk & (chunk - 1) || chunk < 2048 || chunk > page_size)) {
		pr_warn("area: umem_area_opts.chunk_size = %u must be a power of two from 2048 up to the "
			"page size %u\n",
			chunk, page_size);
		goto fail;
	}
	size = (uint64_t)nr_pages * page_size;
	/* Page indexes are 32-bit and the kernel caps a UMEM well below 2^48. */
	if (!nr_pages || size > (1ull << 40)) {
		pr_warn("area: nr_pages = %u of %u bytes is not a valid size (1 page up to 1 TiB)\n",
			nr_pages, page_size);
		goto fail;
	}
	/* The area is populated up front (and AF_XDP pins it): it must fit in memory. */
	err = -ENOMEM;
	if (size > (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE)) {
		pr_warn("area: %llu bytes is more than the machine's memory\n", (unsigned long long)size);
		goto fail;
	}
	if (flags & UMEM_AREA_F_HUGEPAGES)
		size = (size + UMEM_HUGEPAGE_SIZE - 1) & ~(uint64_t)(UMEM_HUGEPAGE_SIZE - 1);

	a = calloc(1, sizeof(*a));
	if (!a)
		goto fail;
	a->f.pages = calloc(nr_pages, sizeof(*a->f.pages));
	a->store = malloc((size_t)nr_pages * sizeof(*a->store));
	if (!a->f.pages || !a->store)
		goto free_meta;

	if (flags & UMEM_AREA_F_HUGEPAGES)
		mflags |= MAP_HUGETLB;
	a->f.base = mmap(NULL, size, PROT_READ | PROT_WRITE, mflags, -1, 0);
	if (a->f.base == MAP_FAILED) {
		if (flags & UMEM_AREA_F_HUGEPAGES)
			pr_warn("area: cannot map %llu bytes of 2 MiB hugepages: reserve them first "
				"(sysctl vm.nr_hugepages=%llu)\n", (unsigned long long)size,
				(unsigned long long)(size / UMEM_HUGEPAGE_SIZE));
		else
			pr_warn("area: cannot map %llu bytes\n", (unsigned long long)size);
		goto free_meta;
	}
	a->map_len = size;
	a->f.size = (uint64_t)nr_pages * page_size;
	a->f.page_size = page_size;
	a->f.page_shift = (uint32_t)__builtin_ctz(page_size);
	a->f.chunk_size = chunk;
	a->nr_pages = nr_pages;
	a->flags = flags;
	a->f.debug = (flags & UMEM_AREA_F_DEBUG) || env_debug();
	if (a->f.debug && umem__track_init(a))
		goto unmap;
	pthread_mutex_init(&a->lock, NULL);
	/* LIFO store, lowest pages handed out first. */
	for (uint32_t i = 0; i < nr_pages; i++) {
		a->store[i] = nr_pages - 1 - i;
		a->f.pages[i].state = UMEM_PG_STORE;
	}
	a->store_count = nr_pages;
	return a;

unmap:
	munmap(a->f.base, size);
free_meta:
	free(a->store);
	free(a->f.pages);
	free(a);
fail:
	errno = -err;
	return NULL;
}

/* Caller holds a->lock. */
static uint32_t area_reclaim(struct umem_area *a)
{
	return a->reclaim ? a->reclaim(a) : 0;
}

int umem_area__destroy(struct umem_area *a)
{
	if (!a)
		return 0;
	/* Pages late producers left in destroyed pools' rings come home (and free those pools). */
	pthread_mutex_lock(&a->lock);
	area_reclaim(a);
	pthread_mutex_unlock(&a->lock);
	uint32_t alive = atomic_load(&a->pools_alive), draining = atomic_load(&a->pools_draining);
	if (alive || draining) {
		pr_warn("area: cannot destroy: %u pool(s) alive, %u destroyed pool(s) with pages in flight, "
			"%u of %u pages out\n", alive, draining, a->nr_pages - umem_area__free_pages(a),
			a->nr_pages);
		return -EBUSY;
	}
	munmap(a->f.base, a->map_len);
	pthread_mutex_destroy(&a->lock);
	free(a->track);
	free(a->store);
	free(a->f.pages);
	free(a);
	return 0;
}

void *umem_area__base(const struct umem_area *a) { return a ? a->f.base : NULL; }
uint64_t umem_area__size(const struct umem_area *a) { return a ? a->f.size : 0; }
uint32_t umem_area__page_size(const struct umem_area *a) { return a ? a->f.page_size : 0; }
uint32_t umem_area__nr_pages(const struct umem_area *a) { return a ? a->nr_pages : 0; }
uint32_t umem_area__chunk_size(const struct umem_area *a) { return a ? a->f.chunk_size : 0; }

uint32_t umem_area__free_pages(const struct umem_area *a)
{
	uint32_t n;

	if (!a)
		return 0;
	pthread_mutex_lock((pthread_mutex_t *)&a->lock);
	n = a->store_count;
	pthread_mutex_unlock((pthread_mutex_t *)&a->lock);
	return n;
}

uint32_t umem__store_get(struct umem_area *a, uint64_t *addrs, uint32_t n)
{
	uint32_t k = n < a->store_count ? n : a->store_count;

	for (uint32_t i = 0; i < k; i++) {
		uint32_t idx = a->store[--a->store_count];

		a->f.pages[idx].state = UMEM_PG_USED;
		addrs[i] = (uint64_t)idx << a->f.page_shift;
	}
	return k;
}

void umem__store_put(struct umem_area *a, const uint64_t *addrs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct umem_page *pg = &a->f.pages[addrs[i] >> a->f.page_shift];

		/* The state is only written under the lock: a page already home was put twice. */
		if (pg->state & UMEM_PG_STORE) {
			pthread_mutex_unlock(&a->lock);
			umem__die("area put of page 0x%llx that is already in the store: a page was put "
				  "twice", (unsigned long long)addrs[i]);
		}
		pg->state = UMEM_PG_STORE | UMEM_PG_USED;
		a->store[a->store_count++] = (uint32_t)(addrs[i] >> a->f.page_shift);
	}
}

int umem__area_get(struct umem_area *a, uint64_t *addrs, uint32_t n, bool reclaim)
{
	uint32_t k, got = 0;

	pthread_mutex_lock(&a->lock);
	k = umem__store_get(a, addrs, n);
	/* Dry: pages idle pools keep in their return rings are nobody's working set. */
	if (!k && reclaim && (got = area_reclaim(a)))
		k = umem__store_get(a, addrs, n);
	pthread_mutex_unlock(&a->lock);
	/* Logged unlocked: the print callback may call into the area. */
	if (got)
		pr_debug("area: reclaimed %u page(s) from idle return rings\n", got);
	return (int)k;
}

int umem_area__get_pages(struct umem_area *a, uint64_t *addrs, uint32_t n)
{
	if (!a || !addrs) {
		pr_warn("area get_pages: NULL %s\n", a ? "addrs" : "area");
		return -EINVAL;
	}
	if (!n)
		return 0;
	return umem__area_get(a, addrs, n, true);
}

int umem_area__put_pages(struct umem_area *a, const uint64_t *addrs, uint32_t n)
{
	if (!a || (n && !addrs)) {
		pr_warn("area put_pages: NULL %s\n", a ? "addrs" : "area");
		return -EINVAL;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct umem_page *pg = umem__area_page(a, addrs[i], "area put");

		if (addrs[i] & (a->f.page_size - 1))
			umem__die("area put of address 0x%llx, which is not a page base",
				  (unsigned long long)addrs[i]);
		if (atomic_load_explicit(&pg->refcnt, memory_order_relaxed) || pg->owner)
			umem__die("area put of page 0x%llx that is still owned or referenced",
				  (unsigned long long)addrs[i]);
	}
	pthread_mutex_lock(&a->lock);
	umem__store_put(a, addrs, n);
	pthread_mutex_unlock(&a->lock);
	return 0;
}

void umem__area_outside(struct umem_area *a, uint64_t addr, const char *what)
{
	umem__die("%s: address 0x%llx is outside the area (size 0x%llx)", what,
		  (unsigned long long)addr, (unsigned long long)a->f.size);
}
