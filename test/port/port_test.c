/* SPDX-License-Identifier: MIT */
/*
 * AF_XDP ports over veth pairs in private namespaces (label netns; root, else exit 77).
 *
 *   port_test rx <chunk>     receive ICMP echo and UDP at 64/512/1500 bytes; payloads compared.
 *                            chunk: 2048 | 4096:<headroom> | u<size>[/<page size>] (unaligned
 *                            mode; with 8 KiB pages and 2500-byte chunks RX buffers are
 *                            fragments at unaligned offsets)
 *   port_test tx             frames sent by the port arrive at the peer's packet socket
 *   port_test shared         two veths on one UMEM: forward, flood (refs), several sockets on
 *                            one queue, the UMEM owner destroyed first, busy poll options
 *   port_test mbuf           multi-buffer chains at MTU 9000 (and 64000 when the kernel allows)
 *   port_test threads        two threads, one port and pool each, forwarding between them
 *   port_test queues         two queues of one interface, one shared default program
 *   port_test oneway         transmit-only and receive-only ports: no fill buffers, no program
 *                            for the former, no TX for the latter; a frame mirrored through them
 *   port_test errors         missing interface, queue out of range, zero-copy on veth, a foreign
 *                            XDP program, bad options, a missing pinned XSKMAP: clean errors,
 *                            nothing left attached
 *
 * The namespaces die with the process (netns.h), so every exit path leaves nothing behind.
 * Every test ends with frame accounting: ports destroyed, the pool returns 0 pages in flight
 * and every page is back in the area.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "portworld.h"
#include <arpa/inet.h>
#include <linux/if_link.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <netinet/udp.h>
#include <pthread.h>

struct frame {
	struct umem_desc d[MAX_CHAIN];
	uint32_t nd;
	uint32_t len;
	uint8_t bytes[MAX_FRAME];
};

static struct frame rxf; /* large: static, not on the stack */

/* ---- peer side ---- */

static void peer_udp(struct world *w, int pair, const uint8_t *payload, size_t len)
{
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(UDP_DPORT) };
	int fd = netns_socket(&w->ns, w->ns.peer, AF_INET, SOCK_DGRAM, 0);
	char ip[32];

	CHECK(fd >= 0, "udp socket: %s", strerror(errno));
	snprintf(ip, sizeof(ip), "10.77.%d.1", pair);
	inet_pton(AF_INET, ip, &dst.sin_addr);
	CHECK(sendto(fd, payload, len, 0, (struct sockaddr *)&dst, sizeof(dst)) == (ssize_t)len,
	      "udp send of %zu bytes: %s", len, strerror(errno));
	close(fd);
}

static uint16_t csum(const void *data, size_t len)
{
	return htons((uint16_t)~test_csum_fold(0, data, len));
}

/* An ICMP echo request (what ping sends) from the peer, with our payload. */
static void peer_ping(struct world *w, int pair, uint16_t seq, const uint8_t *payload, size_t len)
{
	static uint8_t pkt[2048];
	struct icmphdr *ic = (struct icmphdr *)pkt;
	struct sockaddr_in dst = { .sin_family = AF_INET };
	int fd = netns_socket(&w->ns, w->ns.peer, AF_INET, SOCK_RAW, IPPROTO_ICMP);
	char ip[32];

	CHECK(fd >= 0, "icmp socket: %s", strerror(errno));
	memset(ic, 0, sizeof(*ic));
	ic->type = ICMP_ECHO;
	ic->un.echo.id = htons(0x7074);
	ic->un.echo.sequence = htons(seq);
	memcpy(pkt + sizeof(*ic), payload, len);
	ic->checksum = csum(pkt, sizeof(*ic) + len);
	snprintf(ip, sizeof(ip), "10.77.%d.1", pair);
	inet_pton(AF_INET, ip, &dst.sin_addr);
	CHECK(sendto(fd, pkt, sizeof(*ic) + len, 0, (struct sockaddr *)&dst, sizeof(dst)) ==
		      (ssize_t)(sizeof(*ic) + len), "icmp send: %s", strerror(errno));
	close(fd);
}

/* ---- port side ---- */

typedef bool (*frame_filter)(const struct frame *f, const void *arg);

static void put_frame(struct umem_pool *pool, struct frame *f)
{
	for (uint32_t i = 0; i < f->nd; i++)
		umem_pool__put(pool, f->d[i].addr);
	f->nd = 0;
}

/* Receives the next frame that want() accepts (chains joined into f->bytes); frames it rejects
 * are put back. The accepted frame's buffers belong to the caller. Waits on the port's fd. */
static bool port_recv(struct umem_port *p, struct frame *f, frame_filter want, const void *arg)
{
	struct umem_pool *pool = umem_port__pool(p);
	long long end = now_ms() + TIMEOUT_MS;
	struct umem_desc d[64];

	f->nd = 0;
	f->len = 0;
	while (now_ms() < end) {
		struct pollfd pfd = { .fd = umem_port__fd(p), .events = POLLIN };
		int n = umem_port__rx_burst(p, d, 64);

		CHECK(n >= 0, "rx_burst: %d", n);
		if (!n) {
			poll(&pfd, 1, 20);
			continue;
		}
		for (int i = 0; i < n; i++) {
			CHECK(f->nd < MAX_CHAIN && f->len + d[i].len <= MAX_FRAME, "chain too long");
			memcpy(f->bytes + f->len, umem_pool__ptr(pool, d[i].addr), d[i].len);
			f->len += d[i].len;
			f->d[f->nd++] = d[i];
			if (d[i].options & UMEM_DESC_F_CONTD)
				continue;
			if (want(f, arg)) {
				/* Frames after it in this burst are not wanted: put them back. */
				for (int j = i + 1; j < n; j++)
					umem_pool__put(pool, d[j].addr);
				return true;
			}
			put_frame(pool, f);
			f->len = 0;
		}
	}
	put_frame(pool, f);
	return false;
}

/* Copies a frame into pool buffers of at most one chunk each, chained when longer, and sends it. */
static void port_send(struct umem_port *p, const uint8_t *frame, uint32_t len)
{
	struct umem_pool *pool = umem_port__pool(p);
	uint32_t chunk = umem_port__chunk_size(p), n = 0;
	struct umem_desc d[MAX_CHAIN];

	for (uint32_t off = 0; off < len; off += chunk, n++) {
		uint32_t part = len - off < chunk ? len - off : chunk;

		CHECK(n < MAX_CHAIN, "frame too long");
		CHECK(!umem_pool__alloc_frag(pool, part, &d[n].addr, NULL), "alloc TX buffer");
		memcpy(umem_pool__ptr(pool, d[n].addr), frame + off, part);
		d[n].len = part;
		d[n].options = off + part < len ? UMEM_DESC_F_CONTD : 0;
	}
	port_send_descs(p, d, n);
}

/* The L4 header of an IPv4 frame of protocol proto (headers are copied out: frame bytes after
 * the 14-byte Ethernet header are not aligned). */
static const uint8_t *l4(const struct frame *f, uint8_t proto, uint32_t *l4len)
{
	struct iphdr ip;

	if (f->len < 14 + sizeof(ip) || f->bytes[12] != 0x08 || f->bytes[13] != 0x00)
		return NULL;
	memcpy(&ip, f->bytes + 14, sizeof(ip));
	if (ip.protocol != proto)
		return NULL;
	*l4len = f->len - 14 - ip.ihl * 4u;
	return f->bytes + 14 + ip.ihl * 4u;
}

static bool is_udp_test(const struct frame *f, const void *arg)
{
	uint32_t len = 0;
	const uint8_t *p = l4(f, IPPROTO_UDP, &len);
	struct udphdr u;

	(void)arg;
	if (!p || len < sizeof(u))
		return false;
	memcpy(&u, p, sizeof(u));
	return ntohs(u.uh_dport) == UDP_DPORT;
}

static bool is_echo(const struct frame *f, const void *arg)
{
	uint32_t len = 0;
	const uint8_t *p = l4(f, IPPROTO_ICMP, &len);
	struct icmphdr ic;

	if (!p || len < sizeof(ic))
		return false;
	memcpy(&ic, p, sizeof(ic));
	return ic.type == ICMP_ECHO && ntohs(ic.un.echo.sequence) == *(const uint16_t *)arg;
}

/* ---- tests ---- */

static int test_rx(const char *mode)
{
	static const uint32_t sizes[] = { 64, 512, 1500 };
	UMEM_OPTS(umem_port_opts, po, .rx_size = 256, .tx_size = 256);
	struct umem_port_stats st = { .sz = sizeof(st) };
	uint32_t chunk = 2048, headroom = 0, uchunk = 0, page_size = 0;
	struct world w = { 0 };
	static uint8_t payload[2048];

	if (mode[0] == 'u')
		sscanf(mode + 1, "%u/%u", &uchunk, &page_size), chunk = 0;
	else if (sscanf(mode, "%u:%u", &chunk, &headroom) < 1)
		CHECK(0, "bad mode %s", mode);
	world_init(&w, 1, 1024, chunk, page_size);
	po.headroom = headroom;
	po.chunk_size = uchunk;
	struct umem_port *p = umem_port__create(w.area, w.pool, w.lif[0], 0, &po);
	CHECK(p, "port: %s", strerror(errno));
	CHECK_EQ(umem_port__mode(p), UMEM_PORT_MODE_COPY); /* veth has no zero-copy */
	CHECK_EQ(umem_port__xdp_mode(p), UMEM_PORT_XDP_NATIVE);
	CHECK_EQ(umem_port__chunk_size(p), chunk ? chunk : uchunk);
	printf("rx %s: port %s:0 %s mode, XDP %s, chunk %u, headroom %u, frame len %u\n", mode,
	       w.lif[0], umem_port__mode_str(umem_port__mode(p)),
	       umem_port__xdp_mode_str(umem_port__xdp_mode(p)), umem_port__chunk_size(p), headroom,
	       umem_port__rx_frame_len(p));

	for (uint32_t k = 0; k < 3; k++) {
		uint32_t plen = sizes[k] - 28, l4len = 0;
		uint16_t seq = (uint16_t)(k + 1);

		pattern(payload, plen, k);
		peer_udp(&w, 0, payload, plen);
		CHECK(port_recv(p, &rxf, is_udp_test, NULL), "UDP of %u bytes not received", sizes[k]);
		CHECK_EQ(rxf.nd, 1);
		CHECK_EQ(rxf.len, 14 + sizes[k]);
		const uint8_t *u = l4(&rxf, IPPROTO_UDP, &l4len);
		CHECK(l4len == 8 + plen && !memcmp(u + 8, payload, plen), "UDP payload of %u differs",
		      sizes[k]);
		/* The data starts behind the kernel's 256 bytes and our headroom. */
		uint64_t in_chunk = chunk ? rxf.d[0].addr & (chunk - 1) : 0;
		if (chunk)
			CHECK(in_chunk >= 256 + headroom, "data at %llu of its chunk, headroom %u",
			      (unsigned long long)in_chunk, headroom);
		put_frame(w.pool, &rxf);

		pattern(payload, plen, k + 100);
		peer_ping(&w, 0, seq, payload, plen);
		CHECK(port_recv(p, &rxf, is_echo, &seq), "echo request of %u bytes not received", sizes[k]);
		const uint8_t *ic = l4(&rxf, IPPROTO_ICMP, &l4len);
		CHECK(l4len == 8 + plen && !memcmp(ic + 8, payload, plen), "ICMP payload of %u differs",
		      sizes[k]);
		put_frame(w.pool, &rxf);
	}
	CHECK(!umem_port__stats(p, &st), "stats");
	CHECK(st.rx_packets >= 6 && st.rx_bytes >= 6 * 14 + 2 * (64 + 512 + 1500), "rx stats %llu %llu",
	      (unsigned long long)st.rx_packets, (unsigned long long)st.rx_bytes);
	CHECK(st.fill_added >= 512, "fill ring topped up: %llu", (unsigned long long)st.fill_added);
	CHECK_EQ(st.rx_invalid_descs, 0);
	CHECK_EQ(umem_port__destroy(p), 0);
	world_fini(&w);
	return 0;
}

static int test_tx(void)
{
	static const uint32_t sizes[] = { 60, 512, 1514 };
	UMEM_OPTS(umem_port_opts, po, .rx_size = 256, .tx_size = 256);
	struct umem_port_stats st = { .sz = sizeof(st) };
	static uint8_t frame[2048], got[4096];
	enum { BURST = 600 }; /* more than the TX ring: ring full, completion ring wraps */
	struct umem_desc d[BURST];
	struct world w = { 0 };

	world_init(&w, 1, 1024, 2048, 0);
	struct umem_port *p = umem_port__create(w.area, w.pool, w.lif[0], 0, &po);
	CHECK(p, "port: %s", strerror(errno));
	int pk = peer_packet_socket(&w, 0);

	/* One frame at a time: a partial burst must go out without any further traffic. */
	for (uint32_t k = 0; k < 3; k++) {
		make_test_frame(&w, 0, frame, sizes[k], k);
		port_send(p, frame, sizes[k]);
		int n = peer_recv(pk, got, sizeof(got), ETH_P_TEST);
		CHECK(n == (int)sizes[k] && !memcmp(got, frame, sizes[k]), "frame of %u: peer got %d bytes",
		      sizes[k], n);
	}
	/* A burst larger than the TX ring (256) and than what copy mode sends per kick (32). */
	for (uint32_t i = 0; i < BURST; i++) {
		uint32_t len = 60 + (i * 37) % 1455;

		CHECK(!umem_pool__alloc_frag(w.pool, len, &d[i].addr, NULL), "alloc");
		make_test_frame(&w, 0, umem_pool__ptr(w.pool, d[i].addr), len, 1000 + i);
		d[i].len = len;
		d[i].options = 0;
	}
	port_send_descs(p, d, BURST);
	for (uint32_t i = 0; i < BURST; i++) {
		uint32_t len = 60 + (i * 37) % 1455;
		int n = peer_recv(pk, got, sizeof(got), ETH_P_TEST);

		make_test_frame(&w, 0, frame, len, 1000 + i);
		CHECK(n == (int)len && !memcmp(got, frame, len), "burst frame %u (%u bytes): peer got %d",
		      i, len, n);
	}
	CHECK(!umem_port__stats(p, &st), "stats");
	CHECK_EQ(st.tx_packets, 3 + BURST);
	CHECK_EQ(st.completions, st.tx_descs);
	CHECK_EQ(st.tx_inflight, 0);
	CHECK_EQ(st.tx_invalid_descs, 0);
	/* Copy mode sends at most 32 frames per kick, or up to 256 where the kernel takes
	 * XDP_MAX_TX_SKB_BUDGET (6.17+, capped by the TX ring). */
	CHECK(st.tx_kicks >= BURST / 256, "kicks %llu", (unsigned long long)st.tx_kicks);
	CHECK(st.tx_ring_full > 0, "a burst larger than the ring must have found it full");
	printf("tx: %llu frames, %llu kicks (%llu deferred), %llu tx ring full\n",
	       (unsigned long long)st.tx_packets, (unsigned long long)st.tx_kicks,
	       (unsigned long long)st.tx_kick_again, (unsigned long long)st.tx_ring_full);
	close(pk);
	CHECK_EQ(umem_port__destroy(p), 0);
	world_fini(&w);
	return 0;
}

/* Peer sends UDP on pair `from`; port rx receives it; returns it in rxf (buffers owned). */
static void udp_into(struct world *w, struct umem_port *rx, int from, uint32_t plen, uint32_t seed,
		     uint8_t *payload)
{
	uint32_t l4len = 0;

	pattern(payload, plen, seed);
	peer_udp(w, from, payload, plen);
	CHECK(port_recv(rx, &rxf, is_udp_test, NULL), "UDP not received on %s", umem_port__ifname(rx));
	const uint8_t *u = l4(&rxf, IPPROTO_UDP, &l4len);
	CHECK(l4len == 8 + plen && !memcmp(u + 8, payload, plen), "received UDP payload differs");
}

static void expect_at_peer(int pk, const struct frame *f)
{
	static uint8_t got[MAX_FRAME];
	int n = peer_recv(pk, got, sizeof(got), 0x0800);

	CHECK(n == (int)f->len && !memcmp(got, f->bytes, f->len), "peer got %d bytes, expected %u", n,
	      f->len);
}

static int test_shared(void)
{
	UMEM_OPTS(umem_port_opts, po, .rx_size = 256, .tx_size = 256);
	UMEM_OPTS(umem_port_opts, bp, .rx_size = 256, .tx_size = 256, .busy_poll_usecs = 20);
	static uint8_t payload[2048];
	struct world w = { 0 };

	world_init(&w, 2, 1024, 2048, 0);
	struct umem_port *p0 = umem_port__create(w.area, w.pool, w.lif[0], 0, &po);
	CHECK(p0, "port 0: %s", strerror(errno));
	struct umem_port *p1 = umem_port__create(w.area, w.pool, w.lif[1], 0, &bp);
	CHECK(p1, "port 1 (shared UMEM): %s", strerror(errno));
	int pk0 = peer_packet_socket(&w, 0), pk1 = peer_packet_socket(&w, 1);

	/* Forward: received on veth 0, sent unchanged (same buffer) on veth 1. */
	udp_into(&w, p0, 0, 1000, 1, payload);
	CHECK_EQ(umem_port__tx_burst(p1, rxf.d, rxf.nd), rxf.nd);
	expect_at_peer(pk1, &rxf);

	/* Flood: one buffer on both TX rings, one reference per port; recycled after both. */
	udp_into(&w, p0, 0, 700, 2, payload);
	CHECK(!umem_pool__ref(w.pool, rxf.d[0].addr, 1), "ref");
	CHECK_EQ(umem_port__tx_burst(p0, rxf.d, 1), 1);
	CHECK_EQ(umem_port__tx_burst(p1, rxf.d, 1), 1);
	expect_at_peer(pk0, &rxf);
	expect_at_peer(pk1, &rxf);

	/* Several sockets on one queue share its fill and completion rings. */
	struct umem_port *p2 = umem_port__create(w.area, w.pool, w.lif[0], 0, &po);
	CHECK(p2, "second socket on %s:0: %s", w.lif[0], strerror(errno));
	static uint8_t frame[1514], got[2048];
	make_test_frame(&w, 0, frame, sizeof(frame), 7);
	port_send(p2, frame, sizeof(frame));
	CHECK(peer_recv(pk0, got, sizeof(got), ETH_P_TEST) == (int)sizeof(frame) &&
	      !memcmp(got, frame, sizeof(frame)), "frame from the second socket on one queue");

	/* The UMEM owner goes first: the others keep working on its UMEM. */
	port_send_descs(p0, NULL, 0);
	port_send_descs(p1, NULL, 0);
	CHECK_EQ(umem_port__destroy(p0), 0);
	udp_into(&w, p1, 1, 1200, 3, payload);
	CHECK_EQ(umem_port__tx_burst(p2, rxf.d, rxf.nd), rxf.nd);
	expect_at_peer(pk0, &rxf);
	port_send_descs(p2, NULL, 0);

	struct umem_port_stats s1 = { .sz = sizeof(s1) };
	CHECK(!umem_port__stats(p1, &s1), "stats");
	CHECK(s1.rx_packets >= 1 && s1.tx_packets == 2 && s1.completions == 2,
	      "port 1: rx %llu tx %llu completions %llu", (unsigned long long)s1.rx_packets,
	      (unsigned long long)s1.tx_packets, (unsigned long long)s1.completions);
	close(pk0);
	close(pk1);
	CHECK_EQ(umem_port__destroy(p1), 0);
	CHECK_EQ(umem_port__destroy(p2), 0);
	world_fini(&w);
	return 0;
}

/* A transmit-only port takes no buffer from the area and attaches no program; a receive-only
 * one refuses TX. The receive-only port shares the queue of the transmit-only UMEM owner (the
 * fill ring it left empty), a second transmit-only port opens a queue of its own; one frame
 * goes in on the first and out of both transmit-only ports by reference. */
static int test_oneway(void)
{
	UMEM_OPTS(umem_port_opts, txo, .rx_size = 256, .tx_size = 256, .flags = UMEM_PORT_F_TX_ONLY);
	UMEM_OPTS(umem_port_opts, rxo, .rx_size = 256, .tx_size = 256, .flags = UMEM_PORT_F_RX_ONLY);
	UMEM_OPTS(umem_port_opts, both, .flags = UMEM_PORT_F_TX_ONLY | UMEM_PORT_F_RX_ONLY);
	static uint8_t payload[1200];
	struct umem_desc d = { 0 };
	struct world w = { 0 };
	uint32_t id = 0;

	world_init(&w, 2, 1024, 2048, 0);
	errno = 0;
	CHECK(!umem_port__create(w.area, w.pool, w.lif[1], 0, &both) && errno == EINVAL,
	      "TX_ONLY | RX_ONLY accepted: %s", strerror(errno));
	/* The UMEM's first socket, transmit-only: the kernel's fill ring exists but stays empty. */
	struct umem_port *out = umem_port__create(w.area, w.pool, w.lif[1], 0, &txo);
	CHECK(out, "transmit-only port: %s", strerror(errno));
	CHECK_EQ(umem_area__free_pages(w.area), umem_area__nr_pages(w.area));
	CHECK_EQ(umem_port__xdp_mode(out), UMEM_PORT_XDP_NONE);
	CHECK(!strcmp(umem_port__xdp_mode_str(umem_port__xdp_mode(out)), "none"), "mode string");
	CHECK(!bpf_xdp_query_id((int)if_nametoindex(w.lif[1]), 0, &id) && !id, "program %u on a TX-only port", id);
	CHECK_EQ(umem_port__rx_burst(out, &d, 1), -EOPNOTSUPP);
	struct umem_port *back = umem_port__create(w.area, w.pool, w.lif[0], 0, &txo);
	CHECK(back, "transmit-only port on a queue of its own: %s", strerror(errno));
	CHECK_EQ(umem_area__free_pages(w.area), umem_area__nr_pages(w.area));
	struct umem_port *in = umem_port__create(w.area, w.pool, w.lif[1], 0, &rxo);
	CHECK(in, "receive-only port: %s", strerror(errno));
	CHECK(umem_area__free_pages(w.area) < umem_area__nr_pages(w.area), "receive-only port did not fill");
	int pk0 = peer_packet_socket(&w, 0), pk1 = peer_packet_socket(&w, 1);

	udp_into(&w, in, 1, sizeof(payload), 5, payload);
	CHECK_EQ(umem_port__tx_burst(in, rxf.d, rxf.nd), -EOPNOTSUPP);
	CHECK(!umem_pool__ref(w.pool, rxf.d[0].addr, 1), "ref");
	CHECK_EQ(umem_port__tx_burst(out, rxf.d, 1), 1);
	CHECK_EQ(umem_port__tx_burst(back, rxf.d, 1), 1);
	expect_at_peer(pk1, &rxf);
	expect_at_peer(pk0, &rxf);
	port_send_descs(out, NULL, 0);
	port_send_descs(back, NULL, 0);
	CHECK_EQ(umem_port__tx_inflight(back), 0);
	CHECK_EQ(umem_port__service(in), 0);
	close(pk0);
	close(pk1);
	CHECK_EQ(umem_port__destroy(out), 0); /* the UMEM owner first */
	CHECK_EQ(umem_port__destroy(back), 0);
	CHECK_EQ(umem_port__destroy(in), 0);
	world_fini(&w);
	return 0;
}

static void mbuf_round(struct world *w, struct umem_port *p, int pk, int mtu)
{
	static uint8_t payload[MAX_FRAME];
	uint32_t plen = (uint32_t)mtu - 28, frame_len = 14 + (uint32_t)mtu;
	uint32_t expect_descs = (frame_len + umem_port__rx_frame_len(p) - 1) / umem_port__rx_frame_len(p);

	udp_into(w, p, 0, plen, (uint32_t)mtu, payload);
	CHECK_EQ(rxf.len, frame_len);
	CHECK(rxf.nd >= expect_descs && rxf.nd > 1, "MTU %d: %u descriptors, expected %u", mtu, rxf.nd,
	      expect_descs);
	for (uint32_t i = 0; i < rxf.nd; i++)
		CHECK(!(rxf.d[i].options & UMEM_DESC_F_CONTD) == (i == rxf.nd - 1),
		      "CONTD flags of the chain");
	printf("mbuf: MTU %d frame of %u bytes arrived as %u descriptors\n", mtu, rxf.len, rxf.nd);
	/* The received chain goes back out as a chain. */
	port_send_descs(p, rxf.d, rxf.nd);
	expect_at_peer(pk, &rxf);
}

static int test_mbuf(void)
{
	UMEM_OPTS(umem_port_opts, po, .rx_size = 256, .tx_size = 256, .flags = UMEM_PORT_F_MULTI_BUFFER);
	struct world w = { 0 };

	world_init(&w, 1, 2048, 4096, 0);
	CHECK(!set_mtu(&w, 0, 9000), "MTU 9000 on veth");
	struct umem_port *p = umem_port__create(w.area, w.pool, w.lif[0], 0, &po);
	CHECK(p, "port: %s", strerror(errno));
	CHECK(umem_port__multi_buffer(p), "multi-buffer on");
	int pk = peer_packet_socket(&w, 0);

	mbuf_round(&w, p, pk, 9000);
	/* A chain we build ourselves (not a received one) goes out too. */
	static uint8_t frame[9014], got[10000];
	make_test_frame(&w, 0, frame, sizeof(frame), 9);
	port_send(p, frame, sizeof(frame));
	CHECK(peer_recv(pk, got, sizeof(got), ETH_P_TEST) == (int)sizeof(frame) &&
	      !memcmp(got, frame, sizeof(frame)), "built 9014-byte chain at the peer");
	/* A kernel that refuses MTU 64000 on veth: the rest is checked, the case reports a skip. */
	bool big = !set_mtu(&w, 0, 64000);

	if (big)
		mbuf_round(&w, p, pk, 64000);
	else
		printf("skip: this kernel refuses MTU 64000 on veth: the 64000-byte round did not run\n");
	close(pk);
	CHECK_EQ(umem_port__destroy(p), 0);
	world_fini(&w);
	return big ? 0 : TEST_SKIP;
}

#define EXPECT_FAIL(expr, err)                                                                  \
	do {                                                                                    \
		errno = 0;                                                                      \
		CHECK((expr) == NULL && errno == (err), "%s: expected %s, got %s", #expr,         \
		      strerror(err), strerror(errno));                                          \
	} while (0)

/* Two queues of one interface: one default program serves both ports (each queue with its own
 * fill ring); it stays attached until the interface's last port goes. */
static int test_queues(void)
{
	/* Also the need_wakeup-off paths (RX). */
	UMEM_OPTS(umem_port_opts, po, .rx_size = 256, .tx_size = 256, .flags = UMEM_PORT_F_NO_NEED_WAKEUP);
	enum { N = 64 };
	struct world w = { .queues = 2 };
	uint32_t per_queue[2] = { 0 }, seen[N] = { 0 }, total = 0, id = 0;
	long long end;

	world_init(&w, 1, 1024, 2048, 0);
	CHECK_EQ(umem_netdev__queue_count(w.lif[0]), 2);
	EXPECT_FAIL(umem_port__create(w.area, w.pool, w.lif[0], 2, &po), EINVAL);
	struct umem_port *p[2];
	for (uint32_t q = 0; q < 2; q++) {
		p[q] = umem_port__create(w.area, w.pool, w.lif[0], q, &po);
		CHECK(p[q], "port on queue %u: %s", q, strerror(errno));
	}
	/* Flows from different source ports spread over the peer's TX queues, which are our RX
	 * queues. The payload carries the flow number. */
	for (uint32_t i = 0; i < N; i++) {
		struct sockaddr_in src = { .sin_family = AF_INET, .sin_port = htons((uint16_t)(20000 + i)) };
		struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(UDP_DPORT) };
		int fd = netns_socket(&w.ns, w.ns.peer, AF_INET, SOCK_DGRAM, 0);

		inet_pton(AF_INET, "10.77.0.1", &dst.sin_addr);
		CHECK(fd >= 0 && !bind(fd, (struct sockaddr *)&src, sizeof(src)), "flow socket");
		CHECK(sendto(fd, &i, sizeof(i), 0, (struct sockaddr *)&dst, sizeof(dst)) == sizeof(i),
		      "send");
		close(fd);
	}
	end = now_ms() + TIMEOUT_MS;
	while (total < N && now_ms() < end)
		for (uint32_t q = 0; q < 2; q++) {
			uint32_t l4len = 0, flow;
			struct umem_desc d[16];
			int n = umem_port__rx_burst(p[q], d, 16);

			for (int k = 0; k < n; k++) {
				rxf.len = d[k].len;
				memcpy(rxf.bytes, umem_pool__ptr(w.pool, d[k].addr), d[k].len);
				umem_pool__put(w.pool, d[k].addr);
				const uint8_t *u = l4(&rxf, IPPROTO_UDP, &l4len);
				if (!is_udp_test(&rxf, NULL) || l4len != 8 + sizeof(flow))
					continue;
				memcpy(&flow, u + 8, sizeof(flow));
				CHECK(flow < N && !seen[flow]++, "flow %u twice", flow);
				per_queue[q]++;
				total++;
			}
		}
	printf("queues: %u flows, %u on queue 0, %u on queue 1\n", total, per_queue[0], per_queue[1]);
	CHECK_EQ(total, N);
	CHECK_EQ(umem_port__destroy(p[0]), 0);
	CHECK(!bpf_xdp_query_id((int)if_nametoindex(w.lif[0]), 0, &id) && id,
	      "program detached while queue 1 still has a port");
	CHECK_EQ(umem_port__destroy(p[1]), 0);
	world_fini(&w);
	return 0;
}

/* Two threads, each the owner of its pool and the driver of its port: frames received on port
 * A (thread 0, pool 0) are sent on port B by thread 1, whose completions return pool 0's pages
 * through pool 0's return ring. Run under TSan by the threads label. */
enum { XT_FRAMES = 200, XT_PAYLOAD = 600 };

struct xthread {
	pthread_mutex_t lock;
	struct umem_desc q[XT_FRAMES];
	uint32_t head, tail;   /* handed over by thread 0, taken by thread 1 */
	struct umem_port *a, *b;
	struct umem_pool *pool0, *pool1;
	_Atomic uint32_t received, forwarded;
	_Atomic bool stop;
};

static void *xt_rx(void *arg)
{
	struct xthread *x = arg;
	static struct frame f; /* this thread's only */

	while (!atomic_load(&x->stop) && atomic_load(&x->received) < XT_FRAMES) {
		struct umem_desc d[32];
		int n = umem_port__rx_burst(x->a, d, 32);

		for (int i = 0; i < n; i++) {
			f.len = d[i].len < MAX_FRAME ? d[i].len : MAX_FRAME;
			memcpy(f.bytes, umem_pool__ptr(x->pool0, d[i].addr), f.len);
			if (!is_udp_test(&f, NULL)) {
				umem_pool__put(x->pool0, d[i].addr);
				continue;
			}
			pthread_mutex_lock(&x->lock);
			x->q[x->tail++] = d[i];
			pthread_mutex_unlock(&x->lock);
			atomic_fetch_add(&x->received, 1);
		}
		if (!n)
			poll(NULL, 0, 1);
	}
	return NULL;
}

static void *xt_tx(void *arg)
{
	struct xthread *x = arg;
	struct umem_port_stats st = { .sz = sizeof(st) };

	while (!atomic_load(&x->stop)) {
		struct umem_desc d[32];
		uint32_t n = 0;
		int sent;

		pthread_mutex_lock(&x->lock);
		while (x->head < x->tail && n < 32)
			d[n++] = x->q[x->head++];
		pthread_mutex_unlock(&x->lock);
		for (uint32_t done = 0; done < n; done += (uint32_t)sent) {
			sent = umem_port__tx_burst(x->b, d + done, n - done);
			CHECK(sent >= 0, "tx_burst: %d", sent);
			umem_port__service(x->b);
		}
		atomic_fetch_add(&x->forwarded, n);
		umem_port__service(x->b);
		umem_port__stats(x->b, &st);
		if (atomic_load(&x->forwarded) == XT_FRAMES && !st.tx_inflight)
			break;
		if (!n)
			poll(NULL, 0, 1);
	}
	return NULL;
}

static int test_threads(void)
{
	/* Also the need_wakeup-off paths (TX kicks on every burst). */
	UMEM_OPTS(umem_port_opts, po, .rx_size = 256, .tx_size = 256, .flags = UMEM_PORT_F_NO_NEED_WAKEUP);
	static struct xthread x = { .lock = PTHREAD_MUTEX_INITIALIZER };
	static uint8_t payload[XT_PAYLOAD], got[2048];
	struct world w = { 0 };
	pthread_t t0, t1;
	uint32_t arrived = 0;

	world_init(&w, 2, 2048, 2048, 0);
	x.pool0 = w.pool;
	x.pool1 = umem_pool__create(w.area, NULL);
	CHECK(x.pool1, "second pool");
	x.a = umem_port__create(w.area, x.pool0, w.lif[0], 0, &po);
	x.b = umem_port__create(w.area, x.pool1, w.lif[1], 0, &po);
	CHECK(x.a && x.b, "ports: %s", strerror(errno));
	int pk = peer_packet_socket(&w, 1);
	CHECK(!pthread_create(&t0, NULL, xt_rx, &x) && !pthread_create(&t1, NULL, xt_tx, &x), "threads");
	for (uint32_t i = 0; i < XT_FRAMES; i++) {
		pattern(payload, sizeof(payload), i);
		peer_udp(&w, 0, payload, sizeof(payload));
	}
	while (arrived < XT_FRAMES && peer_recv(pk, got, sizeof(got), 0x0800) == 14 + 28 + XT_PAYLOAD)
		arrived++;
	atomic_store(&x.stop, true);
	pthread_join(t0, NULL);
	pthread_join(t1, NULL);
	printf("threads: %u received by thread 0, %u forwarded by thread 1, %u at the peer\n",
	       atomic_load(&x.received), atomic_load(&x.forwarded), arrived);
	CHECK_EQ(arrived, XT_FRAMES);
	close(pk);
	CHECK_EQ(umem_port__destroy(x.a), 0);
	CHECK_EQ(umem_port__destroy(x.b), 0);
	CHECK_EQ(umem_pool__destroy(x.pool1), 0);
	world_fini(&w);
	return 0;
}

/* A trivial XDP program ("return XDP_PASS") standing for somebody else's. */
static int foreign_prog(void)
{
	struct bpf_insn insns[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = XDP_PASS }, /* r0 = XDP_PASS */
		{ .code = 0x95 },                                 /* exit */
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "pt_foreign", "GPL", insns, 2, NULL);

	CHECK(fd >= 0, "load a foreign XDP program: %s", strerror(errno));
	return fd;
}

static int test_errors(void)
{
	UMEM_OPTS(umem_port_opts, po, .rx_size = 256, .tx_size = 256);
	struct world w = { 0 };

	world_init(&w, 1, 1024, 2048, 0);
	int ifindex = (int)if_nametoindex(w.lif[0]);

	EXPECT_FAIL(umem_port__create(w.area, w.pool, "pt-missing", 0, &po), ENODEV);
	EXPECT_FAIL(umem_port__create(w.area, w.pool, w.lif[0], 5, &po), EINVAL);
	UMEM_OPTS(umem_port_opts, small_fill, .rx_size = 256, .fill_size = 256);
	EXPECT_FAIL(umem_port__create(w.area, w.pool, w.lif[0], 0, &small_fill), EINVAL);
	UMEM_OPTS(umem_port_opts, zc, .rx_size = 256, .tx_size = 256, .zerocopy = UMEM_PORT_ZC_REQUIRE);
	EXPECT_FAIL(umem_port__create(w.area, w.pool, w.lif[0], 0, &zc), EOPNOTSUPP);
	/* 8 KiB chunks: the kernel takes at most one of its pages; refused before any socket. */
	struct umem_area *big = make_area(64, 8192, 8192);
	struct umem_pool *big_pool = umem_pool__create(big, NULL);
	EXPECT_FAIL(umem_port__create(big, big_pool, w.lif[0], 0, &po), EINVAL);
	CHECK_EQ(umem_pool__destroy(big_pool), 0);
	CHECK_EQ(umem_area__destroy(big), 0);
	check_no_xdp(&w);
	/* A pinned XSKMAP that is not there: refused after the socket, which goes; nothing attached. */
	UMEM_OPTS(umem_port_opts, nopin, .rx_size = 256, .tx_size = 256, .xskmap_pin = "/sys/fs/bpf/pt-no-such-pin");
	EXPECT_FAIL(umem_port__create(w.area, w.pool, w.lif[0], 0, &nopin), ENOENT);
	check_no_xdp(&w);

	/* Somebody else's program on the interface: refused, and theirs stays. */
	int fp = foreign_prog();
	uint32_t id = 0, id_after = 0;
	CHECK(!bpf_xdp_attach(ifindex, fp, XDP_FLAGS_DRV_MODE, NULL), "attach foreign program");
	CHECK(!bpf_xdp_query_id(ifindex, 0, &id) && id, "foreign program attached");
	EXPECT_FAIL(umem_port__create(w.area, w.pool, w.lif[0], 0, &po), EBUSY);
	CHECK(!bpf_xdp_query_id(ifindex, 0, &id_after) && id_after == id, "foreign program untouched");
	/* ... unless the caller steers itself. */
	UMEM_OPTS(umem_port_opts, ext, .rx_size = 256, .tx_size = 256, .xdp_prog = UMEM_PORT_PROG_NONE);
	struct umem_port *p = umem_port__create(w.area, w.pool, w.lif[0], 0, &ext);
	CHECK(p, "port without a program: %s", strerror(errno));
	CHECK_EQ(umem_port__xdp_mode(p), UMEM_PORT_XDP_EXTERNAL);
	/* UMEM-wide settings must match the first port's. */
	UMEM_OPTS(umem_port_opts, other, .rx_size = 256, .tx_size = 256, .headroom = 64,
		  .xdp_prog = UMEM_PORT_PROG_NONE);
	EXPECT_FAIL(umem_port__create(w.area, w.pool, w.lif[0], 0, &other), EINVAL);
	CHECK_EQ(umem_port__destroy(p), 0);
	CHECK(!bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE, NULL), "detach foreign program");
	close(fp);
	check_no_xdp(&w);

	/* A device without native XDP (a bridge): AUTO falls back to generic mode, NATIVE fails cleanly. */
	NETNS_MUST(w.ns.local, "ip link add pt-d0 type bridge && ip link set pt-d0 up");
	UMEM_OPTS(umem_port_opts, native, .rx_size = 256, .tx_size = 256,
		  .xdp_attach = UMEM_PORT_ATTACH_NATIVE);
	EXPECT_FAIL(umem_port__create(w.area, w.pool, "pt-d0", 0, &native), EOPNOTSUPP);
	p = umem_port__create(w.area, w.pool, "pt-d0", 0, &po);
	CHECK(p, "port on a bridge: %s", strerror(errno));
	CHECK_EQ(umem_port__xdp_mode(p), UMEM_PORT_XDP_GENERIC);
	CHECK_EQ(umem_port__destroy(p), 0);
	uint32_t dummy_id = 0;
	CHECK(!bpf_xdp_query_id((int)if_nametoindex("pt-d0"), 0, &dummy_id) && !dummy_id,
	      "program left on the bridge");

	/* Generic mode on request; frames still arrive. */
	UMEM_OPTS(umem_port_opts, gen, .rx_size = 256, .tx_size = 256,
		  .xdp_attach = UMEM_PORT_ATTACH_GENERIC);
	p = umem_port__create(w.area, w.pool, w.lif[0], 0, &gen);
	CHECK(p, "generic port: %s", strerror(errno));
	CHECK_EQ(umem_port__xdp_mode(p), UMEM_PORT_XDP_GENERIC);
	static uint8_t payload[512];
	udp_into(&w, p, 0, 400, 4, payload);
	put_frame(w.pool, &rxf);

	/* Descriptors the kernel would drop without a completion are refused, nothing queued. */
	struct umem_port_stats st = { .sz = sizeof(st) };
	uint64_t buf;
	CHECK(!umem_pool__alloc_frag(w.pool, 2048, &buf, NULL), "alloc");
	const struct umem_desc bad[] = {
		{ .addr = buf + 1024, .len = 1500 },                         /* crosses a chunk */
		{ .addr = buf, .len = 0 },                                     /* empty */
		{ .addr = umem_area__size(w.area), .len = 60 },               /* outside the UMEM */
		{ .addr = buf, .len = 60, .options = UMEM_DESC_F_CONTD },    /* chain, no multi-buffer */
	};
	for (uint32_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const struct umem_desc burst[2] = { { .addr = buf, .len = 60 }, bad[i] };

		CHECK_EQ(umem_port__tx_burst(p, burst, 2), -EINVAL);
	}
	CHECK(!umem_port__stats(p, &st) && st.tx_descs == 0, "nothing queued");
	umem_pool__put(w.pool, buf);
	CHECK_EQ(umem_port__destroy(p), 0);
	world_fini(&w);
	return 0;
}

/* The busy-queue waits of a create, counted (umem_port_opts.rebind_wait). */
static int count_wait(void *arg, uint32_t ms)
{
	(*(uint32_t *)arg)++;
	poll(NULL, 0, (int)ms);
	return 0;
}

/* umem_port__destroy_bulk: the UMEM owner, a port on a second interface and a second socket on
 * the owner's queue, with frames unread on their RX rings, destroyed in one call (a NULL entry
 * skipped): every buffer comes back, no program is left. Ports of a second area then bind the
 * same queues at once: a queue the kernel still releases answers EBUSY and the bind is retried
 * on the same registration; the new ports carry traffic. NULL with n > 0 is refused. */
static int test_bulk(void)
{
	UMEM_OPTS(umem_port_opts, po, .rx_size = 256, .tx_size = 256);
	static uint8_t payload[2048], frame[1000], got[2048];
	struct umem_port *ps[4] = { NULL }, *qs[2];
	uint32_t waits = 0;
	struct world w = { 0 };

	world_init(&w, 2, 1024, 2048, 0);
	CHECK_EQ(umem_port__destroy_bulk(NULL, 1), -EINVAL);
	CHECK_EQ(umem_port__destroy_bulk(NULL, 0), 0);
	CHECK((ps[0] = umem_port__create(w.area, w.pool, w.lif[0], 0, &po)), "owner: %s", strerror(errno));
	CHECK((ps[2] = umem_port__create(w.area, w.pool, w.lif[1], 0, &po)), "port 1: %s", strerror(errno));
	CHECK((ps[3] = umem_port__create(w.area, w.pool, w.lif[0], 0, &po)), "second socket: %s", strerror(errno));
	udp_into(&w, ps[0], 0, 100, 1, payload); /* the path works */
	put_frame(w.pool, &rxf);
	for (uint32_t i = 0; i < 16; i++) { /* left unread */
		peer_udp(&w, 0, payload, 200);
		peer_udp(&w, 1, payload, 200);
	}
	long long t0 = now_ms();
	CHECK_EQ(umem_port__destroy_bulk(ps, 4), 0);
	long long took = now_ms() - t0;
	check_no_xdp(&w);

	struct umem_area *a2 = make_area(1024, 2048, 0);
	struct umem_pool *p2 = umem_pool__create(a2, NULL);
	CHECK(p2, "pool 2: %s", strerror(errno));
	po.rebind_wait = count_wait;
	po.rebind_wait_arg = &waits;
	CHECK((qs[0] = umem_port__create(a2, p2, w.lif[0], 0, &po)), "rebind %s:0: %s", w.lif[0], strerror(errno));
	CHECK((qs[1] = umem_port__create(a2, p2, w.lif[1], 0, &po)), "rebind %s:0: %s", w.lif[1], strerror(errno));
	udp_into(&w, qs[0], 0, 300, 2, payload);
	put_frame(p2, &rxf);
	int pk1 = peer_packet_socket(&w, 1);
	make_test_frame(&w, 1, frame, sizeof(frame), 3);
	port_send(qs[1], frame, sizeof(frame));
	CHECK(peer_recv(pk1, got, sizeof(got), ETH_P_TEST) == (int)sizeof(frame) && !memcmp(got, frame, sizeof(frame)),
	      "frame sent by the port bound again");
	close(pk1);
	port_send_descs(qs[1], NULL, 0);
	CHECK_EQ(umem_port__destroy_bulk(qs, 2), 0);
	area_fini(a2, p2);
	world_fini(&w);
	printf("bulk: 3 ports destroyed in %lld ms; bound again after %u busy binds\n", took, waits);
	return 0;
}

/* UMEM_PORT_F_UNBOUND and umem_port__bind, as a restart uses them: a second area's first port
 * is created unbound (the area registered, no socket) while the first area's port holds the
 * queue; the area takes no other port until it is bound; the holder goes and the bind takes
 * the queue (retrying while the kernel releases it) and carries traffic. An unbound port is
 * destroyed with nothing left; bad uses are refused. */
static int test_unbound(void)
{
	UMEM_OPTS(umem_port_opts, po, .rx_size = 256, .tx_size = 256);
	UMEM_OPTS(umem_port_opts, ub, .rx_size = 256, .tx_size = 256, .flags = UMEM_PORT_F_UNBOUND);
	static uint8_t payload[2048];
	uint32_t waits = 0;
	struct world w = { 0 };

	world_init(&w, 2, 1024, 2048, 0);
	struct umem_port *old = umem_port__create(w.area, w.pool, w.lif[0], 0, &po);
	CHECK(old, "holder: %s", strerror(errno));
	CHECK(!umem_port__create(w.area, w.pool, w.lif[1], 0, &ub) && errno == EINVAL,
	      "unbound on an area with ports: %s", strerror(errno));
	CHECK_EQ(umem_port__bind(NULL), -EINVAL);
	CHECK_EQ(umem_port__bind(old), -EINVAL); /* bound already */

	struct umem_area *a2 = make_area(1024, 2048, 0);
	struct umem_pool *p2 = umem_pool__create(a2, NULL);
	CHECK(p2, "pool 2: %s", strerror(errno));
	/* Never bound, then destroyed: nothing left (area_fini at the end counts the pages). */
	struct umem_port *gone = umem_port__create(a2, p2, w.lif[0], 0, &ub);
	CHECK(gone, "unbound: %s", strerror(errno));
	CHECK_EQ(umem_port__destroy(gone), 0);

	ub.rebind_wait = count_wait;
	ub.rebind_wait_arg = &waits;
	struct umem_port *next = umem_port__create(a2, p2, w.lif[0], 0, &ub);
	CHECK(next, "unbound while the queue is held: %s", strerror(errno));
	CHECK_EQ(umem_port__fd(next), -1);
	CHECK(!umem_port__create(a2, p2, w.lif[1], 0, &po) && errno == EBUSY,
	      "a second port before the first is bound: %s", strerror(errno));
	CHECK_EQ(umem_port__destroy(old), 0);
	CHECK_EQ(umem_port__bind(next), 0);
	CHECK(umem_port__fd(next) >= 0, "no socket after bind");
	CHECK_EQ(umem_port__bind(next), -EINVAL);
	struct umem_port *more = umem_port__create(a2, p2, w.lif[1], 0, &po);
	CHECK(more, "second port once the first is bound: %s", strerror(errno));
	udp_into(&w, next, 0, 400, 5, payload);
	put_frame(p2, &rxf);
	udp_into(&w, more, 1, 400, 6, payload);
	put_frame(p2, &rxf);
	struct umem_port *both[] = { next, more };
	CHECK_EQ(umem_port__destroy_bulk(both, 2), 0);
	area_fini(a2, p2);
	world_fini(&w);
	printf("unbound: registered ahead, bound after %u busy binds, traffic through it\n", waits);
	return 0;
}

static int test_rx_default(void)
{
	return test_rx("2048");
}

int main(int argc, char **argv)
{
	static const struct test_case tests[] = {
		{ "rx", test_rx_default }, { "tx", test_tx }, { "shared", test_shared },
		{ "mbuf", test_mbuf }, { "threads", test_threads }, { "queues", test_queues },
		{ "errors", test_errors }, { "oneway", test_oneway }, { "bulk", test_bulk },
		{ "unbound", test_unbound },
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 3 && !strcmp(argv[1], "rx"))
		return test_rx(argv[2]);
	/* rx also takes the chunk: 2048, 4096:<headroom> or u<chunk>[/<page size>]. */
	return test_case_run(tests, sizeof(tests) / sizeof(tests[0]), argc, argv);
}
