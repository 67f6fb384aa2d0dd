/* SPDX-License-Identifier: MIT */
/* How many area pages a set of ports needs (umem_port__pages_needed, umem/port.h). Cold code:
 * arithmetic over the same defaults umem_port__create applies. */
#include <errno.h>
#include <unistd.h>
#include <umem/area.h>
#include <umem/port.h>

#include "internal.h"

static bool pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

int64_t umem_port__pages_needed(uint32_t nr_ports, uint32_t extra_frames,
				const struct umem_area_opts *area_opts,
				const struct umem_port_opts *port_opts)
{
	uint32_t page, chunk, rx, tx, fill, comp, per_page, flags, kernel_page = (uint32_t)sysconf(_SC_PAGESIZE);
	uint64_t frames, pages, per_port;

	if (!OPTS_CHECK(area_opts, umem_area_opts, "pages_needed") ||
	    !OPTS_CHECK(port_opts, umem_port_opts, "pages_needed"))
		return -EINVAL;
	if (!nr_ports) {
		pr_warn("pages_needed: nr_ports = 0\n");
		return -EINVAL;
	}
	page = OPTS_GET(area_opts, page_size, 0) ?: UMEM_PAGE_SIZE_DEFAULT;
	if (page < UMEM_PAGE_SIZE_MIN || page > UMEM_PAGE_SIZE_MAX || !pow2(page)) {
		pr_warn("pages_needed: area page size %u is not a power of two in %u..%u\n", page,
			UMEM_PAGE_SIZE_MIN, UMEM_PAGE_SIZE_MAX);
		return -EINVAL;
	}
	/* The chunk as umem_port__create picks it: the area's in aligned mode, else the port's,
	 * else the smaller of the kernel's page and the area's page. */
	chunk = OPTS_GET(area_opts, chunk_size, 0) ?: OPTS_GET(port_opts, chunk_size, 0) ?:
		(kernel_page < page ? kernel_page : page);
	if (chunk < 2048 || chunk > page) {
		pr_warn("pages_needed: chunk size %u is not in 2048..%u (the area page)\n", chunk, page);
		return -EINVAL;
	}
	rx = OPTS_GET(port_opts, rx_size, 0) ?: UMEM_PORT_RX_SIZE_DEFAULT;
	tx = OPTS_GET(port_opts, tx_size, 0) ?: UMEM_PORT_TX_SIZE_DEFAULT;
	fill = OPTS_GET(port_opts, fill_size, 0) ?: 2 * rx;
	comp = OPTS_GET(port_opts, comp_size, 0) ?: tx;
	if (!pow2(rx) || !pow2(tx) || !pow2(fill) || !pow2(comp) || fill < 2 * rx) {
		pr_warn("pages_needed: ring sizes rx %u, tx %u, fill %u, comp %u: powers of two, fill >= 2 * rx\n",
			rx, tx, fill, comp);
		return -EINVAL;
	}
	flags = OPTS_GET(port_opts, flags, 0);
	if ((flags & UMEM_PORT_F_TX_ONLY) && (flags & UMEM_PORT_F_RX_ONLY)) {
		pr_warn("pages_needed: a port cannot be both transmit-only and receive-only\n");
		return -EINVAL;
	}
	/* Per port, at the worst moment: a full fill ring, a full RX ring the application has
	 * not handled yet, and TX descriptors up to the larger of the TX and completion rings,
	 * each only where the port has it. Per port's pool (one each at most), what its
	 * per-thread cache can hold. */
	per_port = 2 * UMEM_POOL_CACHE_SIZE;
	if (!(flags & UMEM_PORT_F_TX_ONLY))
		per_port += (uint64_t)fill + rx;
	if (!(flags & UMEM_PORT_F_RX_ONLY))
		per_port += tx > comp ? tx : comp;
	frames = (uint64_t)nr_ports * per_port + extra_frames;
	/* RX buffers of up to half a page share pages as fragments; larger ones take a page. */
	per_page = chunk * 2 > page ? 1 : page / ((chunk + UMEM_FRAG_ALIGN - 1) & ~(UMEM_FRAG_ALIGN - 1));
	pages = (frames + per_page - 1) / per_page;
	if (OPTS_GET(area_opts, flags, 0) & UMEM_AREA_F_HUGEPAGES) {
		uint64_t per_huge = UMEM_HUGEPAGE_SIZE / page;

		pages = (pages + per_huge - 1) / per_huge * per_huge;
	}
	if (pages > UINT32_MAX) {
		pr_warn("pages_needed: %llu pages, more than an area holds\n", (unsigned long long)pages);
		return -EOVERFLOW;
	}
	return (int64_t)pages;
}
