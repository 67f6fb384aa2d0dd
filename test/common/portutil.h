/* SPDX-License-Identifier: MIT */
/*
 * Area, pool and port helpers shared by the tests that run real ports: on veth pairs
 * (portworld.h: port, fault) and on a QEMU guest's NICs (test/zc). Every wait ends: a test that
 * needs longer than TIMEOUT_MS (3 s) defines its own before including this header.
 */
#ifndef UMEM_TEST_PORTUTIL_H
#define UMEM_TEST_PORTUTIL_H

#include "testutil.h"
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>
#include <bpf/libbpf.h>
#include <umem/umem.h>

#ifndef TIMEOUT_MS
#define TIMEOUT_MS 3000
#endif

/* An area of pages pages; chunk and page_size as umem_area_opts (0: the defaults). */
static inline struct umem_area *make_area(uint32_t pages, uint32_t chunk, uint32_t page_size)
{
	UMEM_OPTS(umem_area_opts, ao, .chunk_size = chunk, .page_size = page_size);
	struct umem_area *a = umem_area__create(pages, &ao);

	CHECK(a, "area: %s", strerror(errno));
	return a;
}

/* Frame accounting at the end: the pool has no page in flight and every page is back in the
 * area, which then goes. */
static inline void area_fini(struct umem_area *area, struct umem_pool *pool)
{
	CHECK_EQ(umem_pool__destroy(pool), 0);
	CHECK_EQ(umem_area__free_pages(area), umem_area__nr_pages(area));
	CHECK_EQ(umem_area__destroy(area), 0);
}

/* No XDP program left on the interface. */
static inline void check_no_xdp_on(const char *ifname)
{
	uint32_t id = 0;

	CHECK(!bpf_xdp_query_id((int)if_nametoindex(ifname), 0, &id), "query %s", ifname);
	CHECK(id == 0, "XDP program %u left attached to %s", id, ifname);
}

static inline struct umem_port_stats port_stats(const struct umem_port *p)
{
	struct umem_port_stats st = { .sz = sizeof(st) };

	CHECK(!umem_port__stats(p, &st), "stats of %s", umem_port__ifname(p));
	return st;
}

/* Queues every descriptor, retrying while the TX ring is full (servicing in between). */
static inline void port_tx_all(struct umem_port *p, const struct umem_desc *d, uint32_t n)
{
	long long end = now_ms() + TIMEOUT_MS;

	for (uint32_t done = 0; done < n;) {
		int k = umem_port__tx_burst(p, d + done, n - done);

		CHECK(k >= 0, "tx_burst on %s: %d", umem_port__ifname(p), k);
		done += (uint32_t)k;
		if (done < n) {
			CHECK(now_ms() < end, "TX ring of %s never drained", umem_port__ifname(p));
			umem_port__service(p);
			poll(NULL, 0, 1);
		}
	}
}

/* Services the port until every TX buffer completed. */
static inline void port_wait_tx_done(struct umem_port *p)
{
	long long end = now_ms() + TIMEOUT_MS;

	while (port_stats(p).tx_inflight) {
		CHECK(now_ms() < end, "%s: %llu TX buffers never completed", umem_port__ifname(p),
		      (unsigned long long)port_stats(p).tx_inflight);
		umem_port__service(p);
		poll(NULL, 0, 1);
	}
}

/* Next frame a packet socket received (not one it sent) whose EtherType is type (0: any);
 * returns its length, -1 after timeout_ms. */
static inline int packet_recv(int fd, uint8_t *buf, size_t cap, uint16_t type, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;

	do {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		ssize_t n;

		if (poll(&pfd, 1, 20) <= 0)
			continue;
		n = recvfrom(fd, buf, cap, MSG_TRUNC, (struct sockaddr *)&from, &fl);
		if (n < 14 || from.sll_pkttype == PACKET_OUTGOING)
			continue;
		if (!type || (buf[12] << 8 | buf[13]) == type)
			return (int)n;
	} while (now_ms() < end);
	return -1;
}

/* Queues descs on the port and waits for every completion. */
static inline void port_send_descs(struct umem_port *p, const struct umem_desc *d, uint32_t n)
{
	port_tx_all(p, d, n);
	port_wait_tx_done(p);
}

#endif
