/* SPDX-License-Identifier: MIT */
/*
 * A test world for AF_XDP ports (label netns): veth pairs between a private namespace and a
 * peer namespace (netns.h, both die with the process), an area and a pool; the peer's side
 * (packet sockets); frame accounting at the end (world_fini). Shared by the port tests and
 * the fault-injection tests; the helpers without a network are portutil.h's.
 */
#ifndef UMEM_TEST_PORTWORLD_H
#define UMEM_TEST_PORTWORLD_H

#include "netns.h"
#include "frame.h"
#include "portutil.h"
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <poll.h>
#include <stdbool.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <umem/umem.h>

#define UDP_DPORT 9999
#define ETH_P_TEST 0x88b5 /* IEEE local experimental: nothing else sends it */
#define MAX_FRAME 66000
#define MAX_CHAIN 32

struct world {
	struct netns_pair ns;
	int npairs;
	unsigned queues; /* per veth end; 0: 1 */
	char lif[2][IF_NAMESIZE], pif[2][IF_NAMESIZE];
	uint8_t lmac[2][6], pmac[2][6];
	struct umem_area *area;
	struct umem_pool *pool;
};

static inline void pattern(uint8_t *buf, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed * 131u + i * 7u + (i >> 8));
}

/* npairs veth pairs between the test's namespace and the peer's, and an area of pages pages
 * (chunk_size and page_size as umem_area_opts) with one pool. */
static inline void world_init(struct world *w, int npairs, uint32_t pages, uint32_t chunk, uint32_t page_size)
{
	netns_private(&w->ns);
	w->area = make_area(pages, chunk, page_size);
	w->pool = umem_pool__create(w->area, NULL);
	CHECK(w->pool, "pool: %s", strerror(errno));
	w->npairs = npairs;
	for (int i = 0; i < npairs; i++) {
		snprintf(w->lif[i], IF_NAMESIZE, "pt-l%d", i);
		snprintf(w->pif[i], IF_NAMESIZE, "pt-p%d", i);
		uint8_t l[6] = { 2, 0, 0, 0x77, (uint8_t)i, 1 }, p[6] = { 2, 0, 0, 0x77, (uint8_t)i, 2 };
		memcpy(w->lmac[i], l, 6);
		memcpy(w->pmac[i], p, 6);
		netns_veth(&w->ns, w->lif[i], w->pif[i], w->queues);
		NETNS_MUST(w->ns.local, "ip link set %s address 02:00:00:77:%02x:01 up && "
			   "ip addr add 10.77.%d.1/24 dev %s", w->lif[i], i, i, w->lif[i]);
		NETNS_MUST(w->ns.peer, "ip link set %s address 02:00:00:77:%02x:02 up && "
			   "ip addr add 10.77.%d.2/24 dev %s && "
			   "ip neigh replace 10.77.%d.1 lladdr 02:00:00:77:%02x:01 dev %s nud permanent",
			   w->pif[i], i, i, w->pif[i], i, i, w->pif[i]);
	}
}

static inline int set_mtu(struct world *w, int pair, int mtu)
{
	if (netns_run(w->ns.local, "ip link set %s mtu %d 2>/dev/null", w->lif[pair], mtu))
		return -1;
	return netns_run(w->ns.peer, "ip link set %s mtu %d 2>/dev/null", w->pif[pair], mtu) ? -1 : 0;
}

static inline void check_no_xdp(struct world *w)
{
	for (int i = 0; i < w->npairs; i++)
		check_no_xdp_on(w->lif[i]);
}

/* Nothing attached any more, and frame accounting (area_fini). */
static inline void world_fini(struct world *w)
{
	check_no_xdp(w);
	area_fini(w->area, w->pool);
}

static inline int peer_packet_socket(struct world *w, int pair)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	int fd = netns_socket(&w->ns, w->ns.peer, AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	int big = 8 << 20;

	CHECK(fd >= 0, "packet socket: %s", strerror(errno));
	sll.sll_ifindex = netns_ifindex(&w->ns, w->ns.peer, w->pif[pair]);
	CHECK(sll.sll_ifindex > 0, "no %s in the peer namespace", w->pif[pair]);
	CHECK(!bind(fd, (struct sockaddr *)&sll, sizeof(sll)), "bind packet socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	return fd;
}

/* Next frame the peer interface received whose EtherType is type (0: any); its length, -1 on
 * timeout. */
static inline int peer_recv(int fd, uint8_t *buf, size_t cap, uint16_t type)
{
	return packet_recv(fd, buf, cap, type, TIMEOUT_MS);
}

/* A test frame of len bytes from our end of pair to the peer's: a pattern of seed. */
static inline void make_test_frame(struct world *w, int pair, uint8_t *buf, uint32_t len, uint32_t seed)
{
	uint32_t n = 0;

	frame_eth(buf, &n, w->pmac[pair], w->lmac[pair], ETH_P_TEST);
	pattern(buf + n, len - n, seed);
}

#endif
