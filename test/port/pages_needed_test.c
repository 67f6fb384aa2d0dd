/* SPDX-License-Identifier: MIT */
/* umem_port__pages_needed: the defaults, each input's effect, and refusals with a message. */
#include <unistd.h>
#include <umem/umem.h>
#include "testutil.h"

static char last_msg[512];

__attribute__((format(printf, 2, 0)))
static int capture(enum umem_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	vsnprintf(last_msg, sizeof(last_msg), fmt, ap);
	return 0;
}

#define REFUSED(err, needle, ...)                                                        \
	do {                                                                             \
		last_msg[0] = '\0';                                                      \
		CHECK_EQ(umem_port__pages_needed(__VA_ARGS__), err);                     \
		CHECK(strstr(last_msg, needle), "message '%s' lacks '%s'", last_msg, needle); \
	} while (0)

int main(void)
{
	const uint32_t per_port = 4096 + 2048 + 2048 + 2 * UMEM_POOL_CACHE_SIZE; /* fill, RX, TX, cache */

	umem_set_print(capture);
	if (sysconf(_SC_PAGESIZE) != 4096) {
		printf("port_pages_needed: skipped, the kernel page is not 4 KiB\n");
		return TEST_SKIP;
	}
	/* Defaults: 4 KiB pages and chunks, one frame per page. */
	CHECK_EQ(umem_port__pages_needed(1, 0, NULL, NULL), per_port);
	CHECK_EQ(umem_port__pages_needed(1, 0, NULL, NULL), 8448); /* the number port.h promises */
	CHECK_EQ(umem_port__pages_needed(2, 100, NULL, NULL), 2 * per_port + 100);
	/* 2 KiB aligned chunks: two frames per page. */
	UMEM_OPTS(umem_area_opts, a2k, .chunk_size = 2048);
	CHECK_EQ(umem_port__pages_needed(2, 0, &a2k, NULL), per_port);
	/* 64 KiB area pages with 4 KiB chunks: sixteen per page. */
	UMEM_OPTS(umem_area_opts, a64k, .page_size = 65536, .chunk_size = 4096);
	CHECK_EQ(umem_port__pages_needed(1, 0, &a64k, NULL), (per_port + 15) / 16);
	/* Unaligned 3000-byte chunks in 4 KiB pages: one per page (two do not fit). */
	UMEM_OPTS(umem_port_opts, p3000, .chunk_size = 3000);
	CHECK_EQ(umem_port__pages_needed(1, 0, NULL, &p3000), per_port);
	/* Ring sizes as the port takes them: fill defaults to 2 * RX, completion to TX. */
	UMEM_OPTS(umem_port_opts, small, .rx_size = 256, .tx_size = 512);
	CHECK_EQ(umem_port__pages_needed(1, 0, NULL, &small), 512 + 256 + 512 + 2 * UMEM_POOL_CACHE_SIZE);
	UMEM_OPTS(umem_port_opts, bigcomp, .rx_size = 256, .tx_size = 512, .fill_size = 1024, .comp_size = 2048);
	CHECK_EQ(umem_port__pages_needed(1, 0, NULL, &bigcomp), 1024 + 256 + 2048 + 2 * UMEM_POOL_CACHE_SIZE);
	/* Only the rings a port has: a transmit-only port no fill or RX buffers, a receive-only
	 * one no TX or completion buffers. A mirror (one input, two outputs) with 2 KiB chunks. */
	UMEM_OPTS(umem_port_opts, txo, .flags = UMEM_PORT_F_TX_ONLY);
	UMEM_OPTS(umem_port_opts, rxo, .flags = UMEM_PORT_F_RX_ONLY);
	CHECK_EQ(umem_port__pages_needed(1, 0, NULL, &txo), 2048 + 2 * UMEM_POOL_CACHE_SIZE);
	CHECK_EQ(umem_port__pages_needed(1, 0, NULL, &txo), 2304); /* the number port.h promises */
	CHECK_EQ(umem_port__pages_needed(1, 0, NULL, &rxo), 4096 + 2048 + 2 * UMEM_POOL_CACHE_SIZE);
	CHECK_EQ(umem_port__pages_needed(1, 0, &a2k, NULL) + umem_port__pages_needed(2, 128, &a2k, &txo),
		 per_port / 2 + (2 * (2048 + 2 * UMEM_POOL_CACHE_SIZE) + 128) / 2);
	/* Hugepage backing: whole 2 MiB pages. */
	UMEM_OPTS(umem_area_opts, huge, .flags = UMEM_AREA_F_HUGEPAGES);
	CHECK_EQ(umem_port__pages_needed(1, 0, &huge, NULL), (per_port + 511) / 512 * 512);

	/* Refusals, each with a message naming the problem. */
	REFUSED(-EINVAL, "nr_ports = 0", 0, 0, NULL, NULL);
	struct umem_area_opts nosz = { 0 };
	REFUSED(-EINVAL, "area_opts.sz = 0", 1, 0, &nosz, NULL);
	struct umem_port_opts pnosz = { 0 };
	REFUSED(-EINVAL, "port_opts.sz = 0", 1, 0, NULL, &pnosz);
	UMEM_OPTS(umem_port_opts, shortfill, .rx_size = 2048, .fill_size = 2048);
	REFUSED(-EINVAL, "fill >= 2 * rx", 1, 0, NULL, &shortfill);
	UMEM_OPTS(umem_port_opts, odd, .tx_size = 1000);
	REFUSED(-EINVAL, "powers of two", 1, 0, NULL, &odd);
	UMEM_OPTS(umem_area_opts, badpage, .page_size = 3000);
	REFUSED(-EINVAL, "page size 3000", 1, 0, &badpage, NULL);
	UMEM_OPTS(umem_port_opts, tiny, .chunk_size = 1024);
	REFUSED(-EINVAL, "chunk size 1024", 1, 0, NULL, &tiny);
	UMEM_OPTS(umem_port_opts, both, .flags = UMEM_PORT_F_TX_ONLY | UMEM_PORT_F_RX_ONLY);
	REFUSED(-EINVAL, "both transmit-only and receive-only", 1, 0, NULL, &both);
	UMEM_OPTS(umem_port_opts, huge_rings, .rx_size = 1u << 30, .tx_size = 1u << 30);
	REFUSED(-EOVERFLOW, "more than an area holds", 8, 0, NULL, &huge_rings);

	/* The count creates an area of that size. */
	int64_t pages = umem_port__pages_needed(1, 0, &a2k, NULL);
	struct umem_area *area = umem_area__create((uint32_t)pages, &a2k);

	CHECK(area, "umem_area__create(%lld): %s", (long long)pages, strerror(errno));
	CHECK_EQ(umem_area__nr_pages(area), pages);
	CHECK_EQ(umem_area__destroy(area), 0);
	printf("port_pages_needed: ok (%u pages per port with the defaults)\n", per_port);
	return 0;
}
