/* SPDX-License-Identifier: MIT */
/*
 * Zero-copy on a real driver: runs inside the QEMU guest of tools/zc-vm.sh (virtio-net with
 * AF_XDP zero-copy), one case per boot. The guest's NICs: eth0 <-> eth1 on one QEMU hub,
 * eth2 <-> eth3 on another; nothing else sends (no addresses, IPv6 off), so every counter is
 * checked for equality.
 *
 *   zc_test ports <chunk> [nowake]  ZC ports on eth0 and eth1 (one UMEM): frames eth0 -> eth1
 *                                   compared byte by byte, sent back from the very RX buffers
 *                                   (eth1 -> eth0), bursts larger than the rings; chunk: 2048,
 *                                   4096 or u<size> (unaligned); nowake: need_wakeup off
 *   zc_test teardown                ports destroyed with frames unread, TX in flight and the
 *                                   driver holding fill buffers: every buffer comes home, the
 *                                   NIC works again afterwards
 *   zc_test starve                  the pool runs dry while the application holds every RX
 *                                   buffer; frames flow again once they come back
 *   zc_test mbuf                    multi-buffer with zero-copy required: refused cleanly when
 *                                   the driver cannot; AUTO falls back to copy mode and says so
 *   zc_test steer                   the steering program in front of a ZC port: rules apply
 *   zc_test fwd <zc|copy> XDP_FWD [l2 [offload]]
 *                                   xdp-fwd in wire (or l2) mode between eth1 and eth2, traffic
 *                                   both ways from packet sockets on eth0 and eth3, counted at
 *                                   both ends and in xdp-fwd's totals; l2: the MAC table learned
 *                                   the two hosts; offload: --offload-after 8, both MAC flows
 *                                   installed and carried by the kernel, the books balanced
 *   zc_test fwd copy XDP_FWD l3     a routed ping: eth0 and eth3 in namespaces of their own
 *                                   (10.1.0.2, 10.2.0.2), xdp-fwd --mode l3 between eth1 and
 *                                   eth2 on the guest's tables: replies with TTL 63, the books
 *                                   exact
 *
 *   --copy first: ports, teardown, starve and steer with copy-mode ports instead
 *
 * Exit 0 pass, 1 fail. Outside such a guest (no eth0..eth3 with zero-copy) it fails: it is
 * only run by the zc suite, which skips before booting when the guest cannot be had.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <umem/umem.h>

#define ETH_P_TEST 0x88b5 /* IEEE local experimental */
#define TIMEOUT_MS 5000   /* TCG is slow: generous, but every wait ends */
#include "frame.h"
#include "portutil.h"
#define NR_IF 4

static const char *const ifn[NR_IF] = { "eth0", "eth1", "eth2", "eth3" };
static const uint8_t mac[NR_IF][6] = {
	{ 0x52, 0x54, 0, 0, 0, 0x10 }, { 0x52, 0x54, 0, 0, 0, 0x11 },
	{ 0x52, 0x54, 0, 0, 0, 0x12 }, { 0x52, 0x54, 0, 0, 0, 0x13 },
};

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	CHECK(system(cmd) == 0, "%s", cmd);
}

static void links_up(void)
{
	for (int i = 0; i < NR_IF; i++)
		sh("ip link set %s up", ifn[i]);
	/* Carrier comes with the link on virtio-net; wait for it rather than for time. */
	for (int i = 0; i < NR_IF; i++) {
		char path[64], c = '0';
		long long end = now_ms() + TIMEOUT_MS;

		snprintf(path, sizeof(path), "/sys/class/net/%s/carrier", ifn[i]);
		while (c != '1' && now_ms() < end) {
			int fd = open(path, O_RDONLY);

			if (fd >= 0) {
				if (read(fd, &c, 1) != 1)
					c = '0';
				close(fd);
			}
			if (c != '1')
				poll(NULL, 0, 10);
		}
		CHECK(c == '1', "%s has no carrier", ifn[i]);
	}
}

static void check_no_xdp(void)
{
	for (int i = 0; i < NR_IF; i++)
		check_no_xdp_on(ifn[i]);
}

/* A test frame from interface `from` to interface `to`: sequence number, then a pattern. */
static void make_frame(uint8_t *b, uint32_t len, int from, int to, uint32_t seq)
{
	uint32_t n = 0;

	frame_eth(b, &n, mac[to], mac[from], ETH_P_TEST);
	frame_put(b, &n, &seq, 4);
	for (uint32_t i = 18; i < len; i++)
		b[i] = (uint8_t)(seq * 131u + i * 7u);
}

static uint32_t frame_len(uint32_t seq)
{
	return 60 + (seq * 37u) % 1455u; /* 60 .. 1514 */
}

/* n test frames seq0.. from `from` to `to` in fresh buffers of pool, as TX descriptors. */
static void make_descs(struct umem_pool *pool, struct umem_desc *d, uint32_t n, int from, int to,
		       uint32_t seq0)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t len = frame_len(seq0 + i);

		CHECK(!umem_pool__alloc_frag(pool, len, &d[i].addr, NULL), "alloc TX buffer");
		make_frame(umem_pool__ptr(pool, d[i].addr), len, from, to, seq0 + i);
		d[i].len = len;
		d[i].options = 0;
	}
}

/* The frame must be test frame seq from `from` to `to`, whole. */
static void check_frame(const uint8_t *got, uint32_t len, int from, int to, uint32_t seq)
{
	static uint8_t want[2048];

	make_frame(want, frame_len(seq), from, to, seq);
	CHECK(len == frame_len(seq), "frame %u: %u bytes, expected %u", seq, len, frame_len(seq));
	CHECK(!memcmp(got, want, len), "frame %u (%u bytes) differs", seq, len);
}

/* ---- packet sockets (the traffic source and sink outside the ports) ---- */

static int packet_socket(int i)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_TEST),
				   .sll_ifindex = (int)if_nametoindex(ifn[i]) };
	int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_TEST)), big = 8 << 20;

	CHECK(fd >= 0 && sll.sll_ifindex > 0, "packet socket on %s: %s", ifn[i], strerror(errno));
	CHECK(!bind(fd, (struct sockaddr *)&sll, sizeof(sll)), "bind to %s: %s", ifn[i], strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
	return fd;
}

static void packet_send(int fd, int from, int to, uint32_t seq)
{
	static uint8_t b[2048];
	uint32_t len = frame_len(seq);

	make_frame(b, len, from, to, seq);
	for (long long end = now_ms() + TIMEOUT_MS;;) {
		if (send(fd, b, len, 0) == (ssize_t)len)
			return;
		CHECK(errno == ENOBUFS || errno == EAGAIN, "send on %s: %s", ifn[from], strerror(errno));
		CHECK(now_ms() < end, "send on %s: queue never drained", ifn[from]);
		poll(NULL, 0, 1);
	}
}


/* ---- ports ---- */

/* No XDP program left on the NICs, and frame accounting. */
static void world_fini(struct umem_area *area, struct umem_pool *pool)
{
	check_no_xdp();
	area_fini(area, pool);
}

/* --copy: the same cases with the ports in copy mode (native XDP still), for a guest whose
 * virtio_net refuses the zero-copy bind (arm64's 6.18 module: see docs/MVPP2.md). */
static bool copy_mode;

static struct umem_port *zc_port(struct umem_area *a, struct umem_pool *pool, int i,
				 const struct umem_port_opts *po)
{
	struct umem_port_opts o = *po;
	struct umem_port *p;

	if (copy_mode)
		o.zerocopy = UMEM_PORT_ZC_OFF;
	p = umem_port__create(a, pool, ifn[i], 0, &o);
	CHECK(p, "%s port on %s: %s", copy_mode ? "copy-mode" : "zero-copy", ifn[i], strerror(errno));
	CHECK_EQ(umem_port__mode(p), copy_mode ? UMEM_PORT_MODE_COPY : UMEM_PORT_MODE_ZEROCOPY);
	CHECK_EQ(umem_port__xdp_mode(p), UMEM_PORT_XDP_NATIVE);
	return p;
}

/* Receives exactly n descriptors on p (services tx so its completions flow meanwhile). */
static void rx_exactly(struct umem_port *p, struct umem_port *tx, struct umem_desc *d, uint32_t n)
{
	long long end = now_ms() + TIMEOUT_MS;

	for (uint32_t got = 0; got < n;) {
		int k = umem_port__rx_burst(p, d + got, n - got);

		CHECK(k >= 0, "rx_burst on %s: %d", umem_port__ifname(p), k);
		got += (uint32_t)k;
		if (tx)
			umem_port__service(tx);
		if (!k) {
			struct pollfd pfd = { .fd = umem_port__fd(p), .events = POLLIN };

			CHECK(now_ms() < end, "%s received %u of %u frames", umem_port__ifname(p), got, n);
			poll(&pfd, 1, 5);
		}
	}
}

static int test_ports(const char *chunk_arg, bool nowake)
{
	enum { BURST = 64, ROUNDS = 10, N = BURST * ROUNDS, BIG = 400 };
	uint32_t chunk = 0, uchunk = 0;
	static struct umem_desc d[BIG];
	uint32_t seq = 0;

	if (chunk_arg[0] == 'u')
		uchunk = (uint32_t)atoi(chunk_arg + 1);
	else
		chunk = (uint32_t)atoi(chunk_arg);
	links_up();
	/* Two fill rings of 1024 take 2048 buffers (one per page with 3000- or 4096-byte chunks). */
	struct umem_area *a = make_area(4096, chunk, 0);
	struct umem_pool *pool = umem_pool__create(a, NULL);
	CHECK(pool, "pool: %s", strerror(errno));
	/* RX ring above the largest burst: a receiver that lags under TCG never overflows it. */
	UMEM_OPTS(umem_port_opts, po, .rx_size = 512, .tx_size = 256, .chunk_size = uchunk,
		  .zerocopy = UMEM_PORT_ZC_REQUIRE, .flags = nowake ? UMEM_PORT_F_NO_NEED_WAKEUP : 0);
	struct umem_port *p0 = zc_port(a, pool, 0, &po), *p1 = zc_port(a, pool, 1, &po);
	printf("ports: %s and %s %s, XDP %s, chunk %u, RX frame up to %u bytes, need_wakeup %s\n",
	       ifn[0], ifn[1], umem_port__mode_str(umem_port__mode(p0)),
	       umem_port__xdp_mode_str(umem_port__xdp_mode(p0)), umem_port__chunk_size(p0),
	       umem_port__rx_frame_len(p0), nowake ? "off" : "on");

	/* eth0 -> eth1, burst by burst; then each burst goes back from its RX buffers. */
	for (int r = 0; r < ROUNDS; r++) {
		make_descs(pool, d, BURST, 0, 1, seq);
		port_tx_all(p0, d, BURST);
		rx_exactly(p1, p0, d, BURST);
		for (uint32_t i = 0; i < BURST; i++) {
			uint8_t *b = umem_pool__ptr(pool, d[i].addr);

			CHECK_EQ(d[i].options, 0);
			check_frame(b, d[i].len, 0, 1, seq + i);
			/* Back the other way, unchanged but for the MACs, from the buffer the driver
			 * wrote: zero-copy RX memory is TX memory. */
			memcpy(b, mac[0], 6);
			memcpy(b + 6, mac[1], 6);
		}
		port_tx_all(p1, d, BURST);
		rx_exactly(p0, p1, d, BURST);
		for (uint32_t i = 0; i < BURST; i++) {
			check_frame(umem_pool__ptr(pool, d[i].addr), d[i].len, 1, 0, seq + i);
			umem_pool__put(pool, d[i].addr);
		}
		seq += BURST;
	}
	/* One burst larger than the TX ring (256) and the RX ring: ring full, receiver keeps up. */
	make_descs(pool, d, BIG, 0, 1, seq);
	{
		static struct umem_desc r[BIG];
		uint32_t sent = 0, got = 0;
		long long end = now_ms() + TIMEOUT_MS;

		while (got < BIG) {
			int k = sent < BIG ? umem_port__tx_burst(p0, d + sent, BIG - sent) : 0;

			CHECK(k >= 0, "tx_burst: %d", k);
			sent += (uint32_t)k;
			umem_port__service(p0);
			k = umem_port__rx_burst(p1, r + got, BIG - got);
			CHECK(k >= 0, "rx_burst: %d", k);
			got += (uint32_t)k;
			CHECK(now_ms() < end, "big burst: %u sent, %u received of %u (RX ring full %llu)",
			      sent, got, BIG, (unsigned long long)port_stats(p1).rx_ring_full);
		}
		for (uint32_t i = 0; i < BIG; i++) {
			check_frame(umem_pool__ptr(pool, r[i].addr), r[i].len, 0, 1, seq + i);
			umem_pool__put(pool, r[i].addr);
		}
		seq += BIG;
	}
	port_wait_tx_done(p0);
	port_wait_tx_done(p1);

	struct umem_port_stats s0 = port_stats(p0), s1 = port_stats(p1);
	printf("ports: %s tx %llu (kicks %llu, ring full %llu) rx %llu; %s tx %llu (kicks %llu) rx %llu "
	       "(fill added %llu, rx kicks %llu)\n", ifn[0],
	       (unsigned long long)s0.tx_packets, (unsigned long long)s0.tx_kicks,
	       (unsigned long long)s0.tx_ring_full, (unsigned long long)s0.rx_packets, ifn[1],
	       (unsigned long long)s1.tx_packets, (unsigned long long)s1.tx_kicks,
	       (unsigned long long)s1.rx_packets, (unsigned long long)s1.fill_added,
	       (unsigned long long)s1.rx_kicks);
	CHECK_EQ(s0.tx_packets, N + BIG);
	CHECK_EQ(s1.rx_packets, N + BIG);
	CHECK_EQ(s1.tx_packets, N);
	CHECK_EQ(s0.rx_packets, N);
	CHECK_EQ(s0.completions, s0.tx_descs);
	CHECK_EQ(s1.completions, s1.tx_descs);
	CHECK(s0.tx_ring_full > 0, "a burst larger than the TX ring never found it full");
	CHECK(s0.tx_kicks > 0 && s1.tx_kicks > 0, "zero-copy TX is driven by kicks");
	/* The fill ring was topped up as the driver consumed it: at least every received frame. */
	CHECK(s1.fill_added >= N + BIG, "fill added %llu", (unsigned long long)s1.fill_added);
	for (int i = 0; i < 2; i++) {
		struct umem_port_stats s = i ? s1 : s0;

		CHECK(!s.rx_dropped && !s.rx_invalid_descs && !s.tx_invalid_descs && !s.rx_ring_full,
		      "%s: kernel counted drops %llu, invalid rx %llu tx %llu, ring full %llu", ifn[i],
		      (unsigned long long)s.rx_dropped, (unsigned long long)s.rx_invalid_descs,
		      (unsigned long long)s.tx_invalid_descs, (unsigned long long)s.rx_ring_full);
	}
	CHECK_EQ(umem_port__destroy(p1), 0);
	CHECK_EQ(umem_port__destroy(p0), 0);
	world_fini(a, pool);
	printf("ports: ok\n");
	return 0;
}

static int test_teardown(void)
{
	enum { UNREAD = 200, INFLIGHT = 256 };
	static struct umem_desc d[INFLIGHT];
	static uint8_t b[2048];

	links_up();
	struct umem_area *a = make_area(2048, 2048, 0);
	struct umem_pool *pool = umem_pool__create(a, NULL);
	CHECK(pool, "pool: %s", strerror(errno));
	UMEM_OPTS(umem_port_opts, po, .rx_size = 256, .tx_size = 256, .zerocopy = UMEM_PORT_ZC_REQUIRE);
	struct umem_port *p0 = zc_port(a, pool, 0, &po), *p1 = zc_port(a, pool, 1, &po);

	/* 200 frames left unread on eth1's RX ring... */
	make_descs(pool, d, UNREAD, 0, 1, 0);
	port_tx_all(p0, d, UNREAD);
	port_wait_tx_done(p0);
	{
		long long end = now_ms() + TIMEOUT_MS;
		struct pollfd pfd = { .fd = umem_port__fd(p1), .events = POLLIN };

		CHECK(poll(&pfd, 1, TIMEOUT_MS) == 1, "nothing arrived on %s", ifn[1]);
		(void)end;
	}
	/* ... a full TX ring queued on eth1 and not waited for ... */
	make_descs(pool, d, INFLIGHT, 1, 0, 0);
	CHECK_EQ(umem_port__tx_burst(p1, d, INFLIGHT), INFLIGHT);
	/* ... and the driver holding the fill ring's buffers on its RX queue. Destroy the UMEM
	 * owner first, then the port with everything in flight. */
	printf("teardown: %llu TX in flight on %s, RX ring unread\n",
	       (unsigned long long)port_stats(p1).tx_inflight, ifn[1]);
	CHECK_EQ(umem_port__destroy(p0), 0);
	CHECK_EQ(umem_port__destroy(p1), 0);
	world_fini(a, pool);

	/* The driver gave its queue back to the kernel stack: frames reach a packet socket. The
	 * queues come back asynchronously (the driver restarts them), so a frame sent at once can
	 * be lost on a slow guest: resend until one arrives, within the timeout. */
	int fd = packet_socket(1), tx = packet_socket(0), n = -1;

	for (long long end = now_ms() + TIMEOUT_MS; n <= 0 && now_ms() < end;) {
		packet_send(tx, 0, 1, 7);
		n = packet_recv(fd, b, sizeof(b), ETH_P_TEST, 200);
	}
	CHECK(n > 0, "%s receives nothing after the zero-copy socket is gone", ifn[1]);
	check_frame(b, (uint32_t)n, 0, 1, 7);
	close(fd);
	close(tx);
	printf("teardown: ok\n");
	return 0;
}

/* The pool runs dry while the application holds every received buffer. In zero-copy the
 * driver, not the socket, takes buffers off the fill ring (in batches, to post them to its RX
 * queue), so with the fill ring empty the device has nowhere to put frames. Once the buffers come
 * back, the fill ring is topped up and the driver must be woken (need_wakeup on the fill
 * ring): new frames arrive, and the sender's waiting TX completes. */
static int test_starve(void)
{
	enum { S = 600 };
	static struct umem_desc tx[S], held[S];
	uint32_t sent = 0, nheld = 0, got = 0;

	links_up();
	struct umem_area *a = make_area(1024, 2048, 0), *b = make_area(160, 2048, 0); /* b: 320 buffers */
	struct umem_pool *pa = umem_pool__create(a, NULL), *pb = umem_pool__create(b, NULL);
	CHECK(pa && pb, "pools: %s", strerror(errno));
	/* The RX ring holds more than b's buffers: frames are lost only for want of buffers. */
	UMEM_OPTS(umem_port_opts, po, .rx_size = 512, .tx_size = 256, .zerocopy = UMEM_PORT_ZC_REQUIRE);
	struct umem_port *p0 = zc_port(a, pa, 0, &po), *p1 = zc_port(b, pb, 1, &po);

	make_descs(pa, tx, S, 0, 1, 0);
	/* Send, receive and hold until nothing has arrived for 300 ms. */
	for (long long quiet_since = now_ms(); now_ms() - quiet_since < 300;) {
		int k = umem_port__tx_burst(p0, tx + sent, S - sent);

		CHECK(k >= 0, "tx_burst: %d", k);
		sent += (uint32_t)k;
		umem_port__service(p0);
		k = umem_port__rx_burst(p1, held + nheld, S - nheld);
		CHECK(k >= 0, "rx_burst: %d", k);
		if (k)
			quiet_since = now_ms();
		nheld += (uint32_t)k;
		poll(NULL, 0, 1);
	}
	struct umem_port_stats st = port_stats(p1);
	printf("starve: %u queued, %u received and held, fill added %llu, refills short %llu, "
	       "%llu TX waiting\n", sent, nheld, (unsigned long long)st.fill_added,
	       (unsigned long long)st.fill_alloc_fail, (unsigned long long)port_stats(p0).tx_inflight);
	CHECK(nheld < S, "every frame arrived: the pool never ran dry");
	CHECK(st.fill_alloc_fail > 0, "the pool never ran dry");
	/* Frames may have been lost (RX ring full) and, under the hub's back-pressure, come out of
	 * order; the held ones are intact and each came once: no buffer was handed out twice. */
	static bool seen[S + 64];
	for (uint32_t i = 0; i < nheld; i++) {
		uint32_t seq;

		memcpy(&seq, (uint8_t *)umem_pool__ptr(pb, held[i].addr) + 14, 4);
		CHECK(seq < S && !seen[seq], "frame %u: unknown or twice", seq);
		check_frame(umem_pool__ptr(pb, held[i].addr), held[i].len, 0, 1, seq);
		seen[seq] = true;
		umem_pool__put(pb, held[i].addr);
	}
	/* Buffers back (TX still waiting on eth0 is held back by QEMU's hub until eth1 has
	 * buffers again, as a NIC's pause frames would): new frames must come, with nothing but
	 * the usual bursts driving it. */
	CHECK(umem_port__refill(p1) > 0, "refill after the buffers came back");
	for (uint32_t r = 0; r < 4; r++) {
		struct umem_desc d[16];
		uint32_t base = S + r * 16, fresh = 0;

		make_descs(pa, d, 16, 0, 1, base);
		port_tx_all(p0, d, 16);
		for (long long end = now_ms() + TIMEOUT_MS; fresh < 16;) {
			int k = umem_port__rx_burst(p1, d, 16);

			CHECK(k >= 0, "rx_burst: %d", k);
			umem_port__service(p0);
			for (int i = 0; i < k; i++) {
				uint32_t seq;

				memcpy(&seq, (uint8_t *)umem_pool__ptr(pb, d[i].addr) + 14, 4);
				/* Late frames of the first phase may come too. */
				CHECK((seq < S || (seq >= base && seq < base + 16)) && !seen[seq],
				      "frame %u: unknown or twice", seq);
				check_frame(umem_pool__ptr(pb, d[i].addr), d[i].len, 0, 1, seq);
				seen[seq] = true;
				fresh += seq >= base;
				got++;
				umem_pool__put(pb, d[i].addr);
			}
			CHECK(now_ms() < end, "after the buffers came back: %u of frames %u..%u arrived "
			      "(rx kicks %llu, RX ring full %llu)", fresh, base, base + 15,
			      (unsigned long long)port_stats(p1).rx_kicks,
			      (unsigned long long)port_stats(p1).rx_ring_full);
			if (!k)
				poll(NULL, 0, 1);
		}
	}
	printf("starve: all 64 new frames (and %u late ones) arrived once the buffers came back "
	       "(rx kicks %llu)\n", got - 64,
	       (unsigned long long)port_stats(p1).rx_kicks);
	port_wait_tx_done(p0);
	CHECK_EQ(umem_port__destroy(p1), 0);
	CHECK_EQ(umem_port__destroy(p0), 0);
	area_fini(b, pb);
	world_fini(a, pa);
	printf("starve: ok\n");
	return 0;
}

/* Captures libumem's messages for the refusal check. */
static char logbuf[8192];
static size_t loglen;

static int capture(enum umem_print_level level, const char *fmt, va_list args)
	__attribute__((format(printf, 2, 0)));
static int capture(enum umem_print_level level, const char *fmt, va_list args)
{
	va_list copy;

	va_copy(copy, args);
	if (loglen < sizeof(logbuf)) {
		int n = vsnprintf(logbuf + loglen, sizeof(logbuf) - loglen, fmt, copy);

		if (n > 0)
			loglen = loglen + (size_t)n < sizeof(logbuf) ? loglen + (size_t)n : sizeof(logbuf) - 1;
	}
	va_end(copy);
	if (level <= UMEM_INFO)
		vfprintf(stderr, fmt, args);
	return 0;
}

static int test_mbuf(void)
{
	links_up();
	struct umem_area *a = make_area(2048, 4096, 0);
	struct umem_pool *pool = umem_pool__create(a, NULL);
	CHECK(pool, "pool: %s", strerror(errno));
	UMEM_OPTS(umem_port_opts, po, .rx_size = 256, .tx_size = 256, .flags = UMEM_PORT_F_MULTI_BUFFER,
		  .zerocopy = UMEM_PORT_ZC_REQUIRE);

	umem_print_fn_t prev = umem_set_print(capture);
	errno = 0;
	struct umem_port *p = umem_port__create(a, pool, ifn[1], 0, &po);
	if (p) {
		/* A driver with zero-copy multi-buffer: then chains must work (not virtio-net of
		 * this kernel; the case is here for the day it does). */
		CHECK_EQ(umem_port__mode(p), UMEM_PORT_MODE_ZEROCOPY);
		CHECK(umem_port__multi_buffer(p), "multi-buffer on");
		CHECK(0, "%s took zero-copy multi-buffer: extend this test to send chains", ifn[1]);
	}
	CHECK(errno == EOPNOTSUPP, "multi-buffer + zero-copy required: %s, expected EOPNOTSUPP",
	      strerror(errno));
	CHECK(strstr(logbuf, "multi-buffer"), "the refusal does not name multi-buffer: %s", logbuf);
	printf("mbuf: refused as expected: %s", logbuf);
	check_no_xdp();

	/* Zero-copy alone works on the same queue afterwards: the refusal left nothing bound. */
	po.flags = 0;
	p = zc_port(a, pool, 1, &po);
	CHECK_EQ(umem_port__destroy(p), 0);
	world_fini(a, pool);

	/* AUTO: the kernel falls back to copy mode for multi-buffer, and the port reports it. */
	a = make_area(2048, 4096, 0);
	pool = umem_pool__create(a, NULL);
	CHECK(pool, "pool: %s", strerror(errno));
	po.flags = UMEM_PORT_F_MULTI_BUFFER;
	po.zerocopy = UMEM_PORT_ZC_AUTO;
	loglen = 0;
	logbuf[0] = 0;
	p = umem_port__create(a, pool, ifn[1], 0, &po);
	CHECK(p, "multi-buffer, zero-copy AUTO: %s", strerror(errno));
	CHECK_EQ(umem_port__mode(p), UMEM_PORT_MODE_COPY);
	CHECK(umem_port__multi_buffer(p), "multi-buffer on");
	/* Zero-copy works on this queue: the notice must not say the driver has none. */
	CHECK(strstr(logbuf, "copy mode (the driver has no AF_XDP zero-copy multi-buffer"),
	      "the copy-mode fallback is not reported as a multi-buffer matter: %s", logbuf);
	printf("mbuf: AUTO fell back to %s mode: %s", umem_port__mode_str(umem_port__mode(p)), logbuf);
	umem_set_print(prev);
	CHECK_EQ(umem_port__destroy(p), 0);
	world_fini(a, pool);
	printf("mbuf: ok\n");
	return 0;
}

/* ---- steering ---- */

/* An IPv4/UDP frame eth0 -> eth1 to dport; the sequence number in the payload. */
static uint32_t make_udp(uint8_t *b, uint16_t dport, uint32_t seq)
{
	uint32_t n = 0;

	frame_eth(b, &n, mac[1], mac[0], 0x0800);
	frame_ipv4(b, &n, &(struct frame_ipv4){ .src = 0x0a630001, .dst = 0x0a630002, .frag = 0x4000,
						.ttl = 64, .proto = 17 },
		   8 + 18);
	frame_udp(b, &n, 4000, dport, 18);
	frame_put(b, &n, &seq, 4);
	frame_zero(b, &n, 14);
	return n;
}

static int test_steer(void)
{
	enum { N = 20 };
	struct umem_steer_rule rule;
	struct umem_steer_counter c = { 0 };
	struct umem_desc d[N];
	uint32_t seen = 0;

	links_up();
	struct umem_area *a = make_area(2048, 2048, 0);
	struct umem_pool *pool = umem_pool__create(a, NULL);
	CHECK(pool, "pool: %s", strerror(errno));
	/* The queue's socket takes what no rule claims (the default action would pass it). */
	UMEM_OPTS(umem_steer_opts, so, .default_action = &(struct umem_steer_action){ .type = UMEM_STEER_A_QUEUE });
	struct umem_steer *s = umem_steer__attach(ifn[1], &so);
	CHECK(s, "steering program on %s: %s", ifn[1], strerror(errno));
	UMEM_OPTS(umem_port_opts, po, .rx_size = 256, .tx_size = 256,
		  .zerocopy = copy_mode ? UMEM_PORT_ZC_OFF : UMEM_PORT_ZC_REQUIRE);
	struct umem_port *p0 = zc_port(a, pool, 0, &po);
	po.xdp_prog = UMEM_PORT_PROG_NONE;
	struct umem_port *p1 = umem_port__create(a, pool, ifn[1], 0, &po);
	CHECK(p1, "port behind the steering program: %s", strerror(errno));
	CHECK_EQ(umem_port__mode(p1), copy_mode ? UMEM_PORT_MODE_COPY : UMEM_PORT_MODE_ZEROCOPY);
	CHECK_EQ(umem_port__xdp_mode(p1), UMEM_PORT_XDP_EXTERNAL);
	CHECK_EQ(umem_steer__set_socket(s, 0, umem_port__fd(p1)), 0);
	CHECK_EQ(umem_steer_rule__parse("udp dport 9999 -> drop", &rule), 0);
	CHECK_EQ(umem_steer__add_rule(s, &rule), 0);

	/* Even frames to the dropped port, odd ones to another: only the odd ones arrive. */
	for (uint32_t i = 0; i < N; i++) {
		CHECK(!umem_pool__alloc_frag(pool, 60, &d[i].addr, NULL), "alloc");
		d[i].len = make_udp(umem_pool__ptr(pool, d[i].addr), i % 2 ? 7777 : 9999, i);
		d[i].options = 0;
	}
	port_tx_all(p0, d, N);
	port_wait_tx_done(p0);
	rx_exactly(p1, NULL, d, N / 2);
	for (uint32_t i = 0; i < N / 2; i++) {
		uint32_t seq;
		uint16_t dport;
		uint8_t *b = umem_pool__ptr(pool, d[i].addr);

		memcpy(&seq, b + 42, 4);
		memcpy(&dport, b + 36, 2);
		CHECK(ntohs(dport) == 7777 && seq % 2 == 1 && seq < N, "frame %u to dport %u got through",
		      seq, ntohs(dport));
		seen |= 1u << seq;
		umem_pool__put(pool, d[i].addr);
	}
	CHECK_EQ(seen, 0xaaaaau);
	CHECK_EQ(umem_steer__rule_counter(s, rule.id, &c), 0);
	CHECK_EQ(c.packets, N / 2);
	printf("steer: rule \"udp dport 9999 -> drop\" dropped %llu, %u reached the zero-copy socket\n",
	       (unsigned long long)c.packets, N / 2);
	/* Nothing more arrives: the dropped frames are not late. */
	CHECK_EQ(umem_port__rx_burst(p1, d, N), 0);
	CHECK_EQ(umem_port__destroy(p1), 0);
	CHECK_EQ(umem_port__destroy(p0), 0);
	umem_steer__detach(s);
	world_fini(a, pool);
	printf("steer: ok\n");
	return 0;
}

/* ---- xdp-fwd ---- */

/* The "total" JSON line's field of port name (e.g. eth1@0 rx_packets), or of its object obj
 * (e.g. offload, for --offload-after) when obj is not NULL; -1 when absent. */
static long long fwd_total_in(const char *out, const char *port, const char *obj, const char *field)
{
	const char *t = strstr(out, "\"type\":\"total\""), *p, *end;
	char key[64];

	if (!t)
		return -1;
	snprintf(key, sizeof(key), "\"name\":\"%s\"", port);
	if (!(p = strstr(t, key)))
		return -1;
	if (obj) {
		snprintf(key, sizeof(key), "\"%s\":{", obj);
		if (!(p = strstr(p, key)))
			return -1;
	}
	end = strchr(p, '}');
	snprintf(key, sizeof(key), "\"%s\":", field);
	p = strstr(p, key);
	if (!p || (end && p > end))
		return -1;
	return atoll(p + strlen(key));
}

static long long fwd_total(const char *out, const char *port, const char *field)
{
	return fwd_total_in(out, port, NULL, field);
}

static long long fwd_offload_total(const char *out, const char *port, const char *field)
{
	return fwd_total_in(out, port, "offload", field);
}

static char *slurp(const char *path)
{
	static char buf[1 << 16];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	return buf;
}

static bool fwd_ready(const char *err)
{
	const char *p = strstr(err, "port 1 eth2@0: ");

	return p && strchr(p, '\n');
}

/* n frames from interface `from`'s packet socket; counts the test frames arriving at `to`
 * (each checked: in order, whole). */
/* One frame of a pass into b: false when none came within the timeout. In a lossy pass a frame
 * may be missing (*next jumps to the one after it: a later frame's seq says the earlier ones
 * are gone), but never out of order, duplicated or changed. */
static bool pass_recv(int rfd, uint8_t *b, int from, int to, uint32_t seq0, uint32_t sent, uint32_t *next,
		      bool lossy)
{
	int len = packet_recv(rfd, b, 2048, ETH_P_TEST, TIMEOUT_MS);
	uint32_t seq = seq0 + *next;

	if (len <= 0)
		return false;
	if (lossy && len >= 18) {
		memcpy(&seq, b + 14, 4);
		CHECK(seq >= seq0 + *next && seq < seq0 + sent, "%s -> %s: frame %u arrived, expected one of %u..%u "
		      "(out of order or duplicated)", ifn[from], ifn[to], seq, seq0 + *next, seq0 + sent - 1);
	}
	check_frame(b, (uint32_t)len, from, to, seq);
	*next = seq - seq0 + 1;
	return true;
}

/* n frames from `from` to `to`, 32 in flight. Every frame arrives, in order and unchanged; in a
 * lossy pass (flow offload: a gate's drain drops frames, counted as gate_drain) frames may be
 * missing. Returns the frames that arrived. */
static uint32_t fwd_pass(int sfd, int rfd, int from, int to, uint32_t n, uint32_t seq0, bool lossy)
{
	static uint8_t b[2048];
	uint32_t got = 0, next = 0; /* frames arrived; the index after the last one that did */

	for (uint32_t i = 0; i < n; i++) {
		packet_send(sfd, from, to, seq0 + i);
		/* A window of 32 in flight: the guest's socket buffers never overflow. */
		while (next + 32 <= i) {
			if (pass_recv(rfd, b, from, to, seq0, i + 1, &next, lossy)) {
				got++;
				continue;
			}
			CHECK(lossy, "%s -> %s: %u of %u frames arrived", ifn[from], ifn[to], got, n);
			next = i + 1; /* the window is gone */
		}
	}
	while (next < n) {
		if (pass_recv(rfd, b, from, to, seq0, n, &next, lossy)) {
			got++;
			continue;
		}
		CHECK(lossy, "%s -> %s: %u of %u frames arrived", ifn[from], ifn[to], got, n);
		next = n;
	}
	/* Nothing extra (no duplicates): the sink stays quiet. */
	CHECK(packet_recv(rfd, b, sizeof(b), ETH_P_TEST, 200) < 0, "%s got more than %u frames", ifn[to],
	      n);
	printf("fwd: %s -> %s: %u of %u frames arrived, in order and unchanged\n", ifn[from], ifn[to], got, n);
	return got;
}

/* xdp-fwd started with argv, its output in /tmp/fwd.out and /tmp/fwd.err (an earlier case's
 * output, several cases per boot, must not pass for this one's). */
static pid_t fwd_child; /* the running xdp-fwd, stopped at exit when a CHECK failed */

/* A failed case must not leave its xdp-fwd to the next case of the boot (it would hold the
 * interfaces): SIGINT, as an operator stops it, then SIGKILL 10 s later. */
static void fwd_child_stop(void)
{
	if (fwd_child <= 0)
		return;
	kill(fwd_child, SIGINT);
	for (int i = 0; i < 1000 && waitpid(fwd_child, NULL, WNOHANG) == 0; i++)
		poll(NULL, 0, 10);
	if (!kill(fwd_child, SIGKILL))
		waitpid(fwd_child, NULL, 0);
	fwd_child = 0;
}

static pid_t fwd_spawn(const char *const argv[])
{
	pid_t pid;

	unlink("/tmp/fwd.out");
	unlink("/tmp/fwd.err");
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (!pid) {
		int o = open("/tmp/fwd.out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open("/tmp/fwd.err", O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(o, 1);
		dup2(e, 2);
		/* execv takes char *const[] for C's history; it writes nothing. */
		execv(argv[0], (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	if (!fwd_child)
		atexit(fwd_child_stop);
	fwd_child = pid;
	return pid;
}

/* Waits up to ms for xdp-fwd's last port line (printed after "Ctrl-C stops"); prints its
 * start-up lines and how long it took. Past the deadline: where it waits (each thread's system
 * call and kernel stack), then a failure. */
static void fwd_await(pid_t pid, long long ms)
{
	long long t0 = now_ms();
	int status;

	while (!fwd_ready(slurp("/tmp/fwd.err"))) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w)
			fwd_child = -1; /* reaped */
		CHECK(w == 0, "xdp-fwd exited early: %s", slurp("/tmp/fwd.err"));
		if (now_ms() > t0 + ms) {
			sh("for t in /proc/%d/task/*; do echo \"$t: $(cat $t/comm) syscall $(cat $t/syscall)"
			   " wchan $(cat $t/wchan)\"; cat $t/stack; done 2>&1; true", (int)pid);
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			fwd_child = -1;
			CHECK(0, "xdp-fwd did not start: %s", slurp("/tmp/fwd.err"));
		}
		poll(NULL, 0, 20);
	}
	printf("%s(xdp-fwd started in %.1f s)\n", slurp("/tmp/fwd.err"), (double)(now_ms() - t0) / 1000);
}

/* Stops xdp-fwd with SIGINT: it must exit 0. Its stdout (the JSON, totals last). */
static const char *fwd_stop(pid_t pid)
{
	int status;

	CHECK(!kill(pid, SIGINT), "stop xdp-fwd");
	CHECK(waitpid(pid, &status, 0) == pid, "wait for xdp-fwd");
	fwd_child = -1; /* reaped (and the exit handler, once registered, stays so) */
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "xdp-fwd exited with %d: %s%s",
	      WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status), slurp("/tmp/fwd.out"),
	      slurp("/tmp/fwd.err"));
	return slurp("/tmp/fwd.out");
}

static int test_fwd(const char *mode, const char *fwd, bool l2, bool offload)
{
	enum { N = 500, M = 300 };
	bool zc = !strcmp(mode, "zc");
	/* --offload-after loads the steering program: its verification and JIT take ~15 s in
	 * the arm64 TCG guest, so the start is awaited for longer there. */
	long long start_ms = offload ? 240000 : 20000;
	pid_t pid;

	CHECK(zc || !strcmp(mode, "copy"), "mode %s: zc or copy", mode);
	links_up();
	/* A wire forwarder sees frames addressed to the hosts behind it: its NICs must not
	 * filter by MAC (QEMU's virtio-net does, like real NICs). */
	sh("ip link set %s promisc on && ip link set %s promisc on", ifn[1], ifn[2]);
	const char *argv[] = { fwd, "-i", ifn[1], "-i", ifn[2], "--mode", l2 ? "l2" : "wire",
			 zc ? "--zero-copy" : "--copy", "--json", "--interval", "10",
			 offload ? "--offload-after" : NULL, "8", NULL };

	pid = fwd_spawn(argv);
	fwd_await(pid, start_ms);
	/* With --offload-after the ports sit behind the steering program (native XDP too). */
	CHECK(strstr(slurp("/tmp/fwd.err"), offload ? (zc ? ": zero-copy, XDP through the steering program" :
							   ": copy, XDP through the steering program") :
				    zc ? ": zero-copy, XDP native" : ": copy, XDP native"),
	      "xdp-fwd's ports are not in %s mode", zc ? "zero-copy" : "copy");

	int s0 = packet_socket(0), s3 = packet_socket(3);
	/* offload: a flow whose gate stays shut past 50 ms while frames keep coming (a slow
	 * guest, a loaded host) drains: frames dropped and counted (gate_drain), never reordered.
	 * The books below count them. */
	uint32_t got03 = fwd_pass(s0, s3, 0, 3, N, 0, offload);
	uint32_t got30 = fwd_pass(s3, s0, 3, 0, M, 100000, offload);
	/* offload (l2): the flows are destination MACs, installed once the destination is learned:
	 * eth3 -> eth0's after its first 8 frames (eth0 learned in the first pass), then eth0 ->
	 * eth3's in a second pass (eth3 learned now). */
	if (offload)
		got03 += fwd_pass(s0, s3, 0, 3, N, 200000, true);
	close(s0);
	close(s3);
	const char *out = fwd_stop(pid);
	if (offload) {
		/* The books with the kernel's share (xdp-fwd(8)): frames in = frames out, userspace
		 * and kernel together; what the hosts sent = what they received + what xdp-fwd
		 * counted as drained. */
		long long k1 = fwd_offload_total(out, "eth1@0", "packets");
		long long k2 = fwd_offload_total(out, "eth2@0", "packets");
		long long d1 = fwd_total_in(out, "eth1@0", "drops", "gate_drain");
		long long d2 = fwd_total_in(out, "eth2@0", "drops", "gate_drain");
		long long inst = fwd_offload_total(out, "eth1@0", "installed") +
				 fwd_offload_total(out, "eth2@0", "installed");

		printf("fwd offload: installed %lld flows; the kernel forwarded %lld (eth1) + %lld "
		       "(eth2) frames, userspace %lld + %lld; drained %lld + %lld\n", inst, k1, k2,
		       fwd_total(out, "eth1@0", "rx_packets"), fwd_total(out, "eth2@0", "rx_packets"), d1, d2);
		CHECK(k1 >= 0 && k2 >= 0 && d1 >= 0 && d2 >= 0, "no offload or drop counters in the totals: %s", out);
		CHECK_EQ(fwd_total(out, "eth1@0", "rx_packets") + k1, 2 * N);
		CHECK_EQ(fwd_total(out, "eth2@0", "rx_packets") + k2, M);
		CHECK_EQ(fwd_total(out, "eth2@0", "tx_packets") + k1 - fwd_offload_total(out, "eth2@0", "lost"), got03);
		CHECK_EQ(fwd_total(out, "eth1@0", "tx_packets") + k2 - fwd_offload_total(out, "eth1@0", "lost"), got30);
		CHECK_EQ(got03 + d1 + fwd_offload_total(out, "eth2@0", "lost"), 2 * N);
		CHECK_EQ(got30 + d2 + fwd_offload_total(out, "eth1@0", "lost"), M);
		/* Both flows went to the kernel after their first frames (8, and those in flight
		 * at the switch-over: how many depends on the machine's load). */
		CHECK(inst >= 2, "%lld flows installed, expected both: %s", inst, out);
		CHECK(k1 > 0 && k2 > 0, "the kernel forwarded %lld and %lld frames: %s", k1, k2, out);
	} else {
		/* Both ends of the forwarder count exactly the frames the hosts sent and received. */
		CHECK_EQ(fwd_total(out, "eth1@0", "rx_packets"), N);
		CHECK_EQ(fwd_total(out, "eth2@0", "tx_packets"), N);
		CHECK_EQ(fwd_total(out, "eth2@0", "rx_packets"), M);
		CHECK_EQ(fwd_total(out, "eth1@0", "tx_packets"), M);
	}
	CHECK(strstr(out, "\"frames_out\":0"), "frames still out after xdp-fwd's exit: %s", out);
	/* l2: eth0's MAC learned on eth1, eth3's on eth2 (the first frame each way was flooded to
	 * the only other port, the rest forwarded by the table). */
	CHECK(!l2 || strstr(strstr(out, "\"type\":\"total\""), "\"l2\":{\"macs\":2}"),
	      "l2: the MAC table does not hold the two hosts: %s", out);
	check_no_xdp();
	printf("fwd %s%s%s: ok\n", mode, l2 ? " l2" : "", offload ? " offload" : "");
	return 0;
}

/* The MAC of interface i as ip-neigh writes it. */
static const char *mac_str(int i)
{
	static char s[NR_IF][18];

	snprintf(s[i], sizeof(s[i]), "%02x:%02x:%02x:%02x:%02x:%02x", mac[i][0], mac[i][1], mac[i][2],
		 mac[i][3], mac[i][4], mac[i][5]);
	return s[i];
}

/* The routed ping: eth0 in namespace zca (10.1.0.2/24), eth3 in zcb (10.2.0.2/24), xdp-fwd
 * --mode l3 routing between eth1 (10.1.0.1) and eth2 (10.2.0.1) on the kernel's tables of the
 * guest's own namespace. Byte order and alignment bite here first on arm64: the LPM's keys, the
 * TTL's incremental checksum, the MAC rewrite from the mirrored neighbour table. Neighbours
 * are permanent so that nothing but the pings crosses and the books are exact. */
static int test_fwd_l3(const char *fwd)
{
	enum { PINGS = 5 };
	pid_t pid;
	char cmd[256];

	links_up();
	sh("ip netns add zca && ip netns add zcb && ip link set eth0 netns zca && ip link set eth3 netns zcb");
	sh("ip -n zca addr add 10.1.0.2/24 dev eth0 && ip -n zca link set eth0 up && ip -n zca link set lo up"
	   " && ip -n zca route add default via 10.1.0.1");
	sh("ip -n zcb addr add 10.2.0.2/24 dev eth3 && ip -n zcb link set eth3 up && ip -n zcb link set lo up"
	   " && ip -n zcb route add default via 10.2.0.1");
	sh("ip addr add 10.1.0.1/24 dev eth1 && ip addr add 10.2.0.1/24 dev eth2");
	sh("ip -n zca neigh replace 10.1.0.1 lladdr %s dev eth0 nud permanent", mac_str(1));
	sh("ip -n zcb neigh replace 10.2.0.1 lladdr %s dev eth3 nud permanent", mac_str(2));
	sh("ip neigh replace 10.1.0.2 lladdr %s dev eth1 nud permanent", mac_str(0));
	sh("ip neigh replace 10.2.0.2 lladdr %s dev eth2 nud permanent", mac_str(3));
	sh("echo 1 > /proc/sys/net/ipv4/ip_forward");
	const char *argv[] = { fwd, "-i", "eth1", "-i", "eth2", "--mode", "l3", "--copy", "--json", "--interval", "10",
			 NULL };

	/* The l3 mode loads the steering program (local addresses and ARP stay with the kernel):
	 * its load and JIT take 15 to 60 s under TCG, more on a busy host. */
	pid = fwd_spawn(argv);
	fwd_await(pid, 300000);
	/* The guest has no IPv6 (ipv6.disable=1): nothing to warn about its forwarding. */
	CHECK(!strstr(slurp("/tmp/fwd.err"), "ipv6"), "a warning about IPv6 in a kernel without it: %s",
	      slurp("/tmp/fwd.err"));
	/* busybox ping: the replies' TTL shows the one hop (64 at zcb, 63 at zca). */
	snprintf(cmd, sizeof(cmd), "ip netns exec zca ping -c %d -W 10 10.2.0.2 > /tmp/ping.out 2>&1", PINGS);
	int ping_rc = system(cmd);
	const char *ping = slurp("/tmp/ping.out");

	printf("%s", ping);
	CHECK(ping_rc == 0, "ping through xdp-fwd --mode l3 failed (%d): %s", ping_rc, ping);
	CHECK(strstr(ping, "ttl=63"), "the replies did not cross one routed hop (ttl=63): %s", ping);
	const char *out = fwd_stop(pid);

	/* The books: every echo request that came in on eth1 left on eth2 and every reply the
	 * other way (nothing else crosses: static neighbours, IPv6 off in the guest); ping
	 * counted at least PINGS each way, more only if it retried. */
	long long rq = fwd_total(out, "eth1@0", "rx_packets"), rp = fwd_total(out, "eth2@0", "rx_packets");

	printf("fwd l3: eth1 rx %lld tx %lld, eth2 rx %lld tx %lld\n", rq, fwd_total(out, "eth1@0", "tx_packets"),
	       rp, fwd_total(out, "eth2@0", "tx_packets"));
	CHECK(rq >= PINGS && rp >= PINGS, "xdp-fwd routed %lld requests and %lld replies, expected %d: %s",
	      rq, rp, PINGS, out);
	CHECK_EQ(fwd_total(out, "eth2@0", "tx_packets"), rq);
	CHECK_EQ(fwd_total(out, "eth1@0", "tx_packets"), rp);
	CHECK(strstr(out, "\"frames_out\":0"), "frames still out after xdp-fwd's exit: %s", out);
	/* Leave the guest as the other cases expect it. */
	sh("ip -n zca link set eth0 netns 1 && ip -n zcb link set eth3 netns 1 && ip netns del zca && ip netns del zcb");
	sh("ip addr flush dev eth1 && ip addr flush dev eth2 && echo 0 > /proc/sys/net/ipv4/ip_forward");
	check_no_xdp();
	printf("fwd l3: ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "--copy")) {
		copy_mode = true;
		argv++;
		argc--;
	}
	if (argc >= 3 && !strcmp(argv[1], "ports"))
		return test_ports(argv[2], argc >= 4 && !strcmp(argv[3], "nowake"));
	if (argc >= 2 && !strcmp(argv[1], "teardown"))
		return test_teardown();
	if (argc >= 2 && !strcmp(argv[1], "starve"))
		return test_starve();
	if (argc >= 2 && !strcmp(argv[1], "mbuf"))
		return test_mbuf();
	if (argc >= 2 && !strcmp(argv[1], "steer"))
		return test_steer();
	if (argc >= 4 && !strcmp(argv[1], "fwd") && argc >= 5 && !strcmp(argv[4], "l3"))
		return test_fwd_l3(argv[3]);
	if (argc >= 4 && !strcmp(argv[1], "fwd"))
		return test_fwd(argv[2], argv[3], argc >= 5 && !strcmp(argv[4], "l2"),
				argc >= 6 && !strcmp(argv[5], "offload"));
	fprintf(stderr, "usage: %s [--copy] ports 2048|4096|u<size> [nowake] | teardown | starve | mbuf | steer | "
		"fwd zc|copy XDP-FWD [l2 [offload]]\n", argv[0]);
	return 2;
}
