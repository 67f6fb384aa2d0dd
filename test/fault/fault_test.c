/* SPDX-License-Identifier: MIT */
/*
 * Fault injection at the port level (label netns; root, else exit 77). Each case breaks one
 * thing under traffic and checks: no crash, no frame leaked (the pool ends with nothing in
 * flight and every page back in the area), the library said what happened in a log line, and
 * traffic recovers where it can. Frames sent by the peer are conserved: each one is received
 * or counted by the kernel as a drop with its reason.
 *
 *   fault_test exhaust   area smaller than the fill ring wants; no page free at all
 *   fault_test starve    the application holds every RX buffer: the fill ring runs dry
 *   fault_test slow      nobody reads the RX ring: it fills up (slow consumer)
 *   fault_test txfull    TX ring and completion ring smaller than the bursts (backpressure)
 *   fault_test flap      the peer's interface, then our own, set down and up under traffic
 *   fault_test ifdel     the port's interface deleted while frames sit in every ring
 *   fault_test rebind    the queue stays busy (EBUSY, injected) for 1 s: create waits for it
 *   fault_test holder    the queue is bound by another UMEM's live socket: refused, holder named
 *   fault_test rebind_wait  the same busy queue, the caller doing the waits (rebind_wait)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "portworld.h"
#include <stdarg.h>
#include <sys/wait.h>
#include <umem/fault.h> /* umem__fault_bind_busy */

#define FRAME_LEN 128

/* ---- the library's log, kept so cases can check what it said ---- */

static char log_text[16384];
static size_t log_len;

__attribute__((format(printf, 2, 0)))
static int keep_log(enum umem_print_level level, const char *fmt, va_list args)
{
	char line[512];
	int n;

	if (level == UMEM_DEBUG)
		return 0;
	n = vsnprintf(line, sizeof(line), fmt, args);
	fputs(line, stderr);
	if (n > 0 && log_len + (size_t)n < sizeof(log_text)) {
		memcpy(log_text + log_len, line, (size_t)n + 1);
		log_len += (size_t)n;
	}
	return n;
}

static void expect_log(const char *what)
{
	CHECK(strstr(log_text, what), "no log line saying \"%s\"", what);
}

/* ---- traffic ---- */

/* The peer sends n test frames (sequence numbers seq..seq+n-1) to our interface. */
static void peer_send(struct world *w, int pk, uint32_t seq, uint32_t n)
{
	uint8_t f[FRAME_LEN];

	for (uint32_t i = 0; i < n; i++) {
		uint32_t s = seq + i;

		uint32_t len = 0;

		make_test_frame(w, 0, f, sizeof(f), s);
		/* From the peer to us: swap the addresses. */
		frame_eth(f, &len, w->lmac[0], w->pmac[0], ETH_P_TEST);
		memcpy(f + len, &s, sizeof(s));
		CHECK(send(pk, f, sizeof(f), 0) == (ssize_t)sizeof(f), "peer send: %s", strerror(errno));
	}
}

/* A received test frame's sequence number, checking its bytes; -1 for another frame. */
static int64_t test_seq(const uint8_t *d, uint32_t len)
{
	uint8_t want[FRAME_LEN];
	uint32_t s;

	if (len != FRAME_LEN || (d[12] << 8 | d[13]) != ETH_P_TEST)
		return -1;
	memcpy(&s, d + 14, sizeof(s));
	pattern(want + 14, FRAME_LEN - 14, s);
	CHECK(!memcmp(d + 18, want + 18, FRAME_LEN - 18), "frame %u arrived corrupted", s);
	return s;
}

/* Receives test frames until `want` arrived or nothing came for `idle_ms`; their buffers go
 * to held[] (when given, up to cap) or back to the pool. Returns how many arrived. */
static uint32_t port_take(struct umem_port *p, uint32_t want, int idle_ms, uint64_t *held,
			  uint32_t cap)
{
	struct umem_pool *pool = umem_port__pool(p);
	long long idle_end = now_ms() + idle_ms;
	uint32_t got = 0;

	while (got < want && now_ms() < idle_end) {
		struct pollfd pfd = { .fd = umem_port__fd(p), .events = POLLIN };
		struct umem_desc d[32];
		uint32_t burst = want - got < 32 ? want - got : 32;
		int n = umem_port__rx_burst(p, d, burst);

		CHECK(n >= 0, "rx_burst: %d", n);
		if (!n) {
			poll(&pfd, 1, 5);
			continue;
		}
		idle_end = now_ms() + idle_ms;
		for (int i = 0; i < n; i++) {
			bool mine = test_seq(umem_pool__ptr(pool, d[i].addr), d[i].len) >= 0;

			if (mine && held && got < cap)
				held[got] = d[i].addr;
			else
				umem_pool__put(pool, d[i].addr);
			got += mine;
		}
	}
	return got;
}

/* Frames the kernel dropped on their way to the socket, by reason. */
static uint64_t kernel_drops(const struct umem_port_stats *st)
{
	return st->rx_dropped + st->rx_ring_full;
}

/* Waits (bounded) until the kernel has accounted for `sent` frames: received by us (`got`)
 * or dropped. The peer's sends are processed by NAPI shortly after they return. */
static void expect_conserved(struct umem_port *p, uint64_t sent, uint64_t got)
{
	long long end = now_ms() + TIMEOUT_MS;
	struct umem_port_stats st;

	do {
		st = port_stats(p);
		if (got + kernel_drops(&st) >= sent)
			break;
		poll(NULL, 0, 5);
	} while (now_ms() < end);
	printf("  sent %llu = received %llu + dropped %llu (fill ring empty %llu descs, RX ring full "
	       "%llu)\n", (unsigned long long)sent, (unsigned long long)got,
	       (unsigned long long)kernel_drops(&st), (unsigned long long)st.rx_fill_ring_empty,
	       (unsigned long long)st.rx_ring_full);
	CHECK_EQ(got + kernel_drops(&st), sent);
}

/* Sends n frames in small batches, each received before the next goes: all must arrive. */
static void flow_ok(struct world *w, struct umem_port *p, int pk, uint32_t seq, uint32_t n)
{
	for (uint32_t done = 0; done < n; done += 16) {
		uint32_t b = n - done < 16 ? n - done : 16;

		peer_send(w, pk, seq + done, b);
		CHECK_EQ(port_take(p, b, TIMEOUT_MS, NULL, 0), b);
	}
}

static int wait_link(struct world *w, int nsfd, const char *ifname, bool up)
{
	long long end = now_ms() + TIMEOUT_MS;

	while (now_ms() < end) {
		/* "LOWER_UP" is the carrier: the veth's far end is up too. */
		int rc = netns_run(nsfd, "ip link show %s | grep -q LOWER_UP", ifname);

		if ((rc == 0) == up)
			return 0;
		poll(NULL, 0, 10);
	}
	(void)w;
	return -1;
}

/* Allocates n TX test frames (to the peer) into d[]. */
static void tx_frames(struct world *w, struct umem_desc *d, uint32_t n, uint32_t seed)
{
	for (uint32_t i = 0; i < n; i++) {
		CHECK(!umem_pool__alloc_frag(w->pool, FRAME_LEN, &d[i].addr, NULL), "alloc TX frame");
		make_test_frame(w, 0, umem_pool__ptr(w->pool, d[i].addr), FRAME_LEN, seed + i);
		d[i].len = FRAME_LEN;
		d[i].options = 0;
	}
}

/* The peer receives frames seed..seed+n-1, in order. */
static void peer_expect(struct world *w, int pk, uint32_t n, uint32_t seed)
{
	uint8_t want[FRAME_LEN], got[2048];

	for (uint32_t i = 0; i < n; i++) {
		int len = peer_recv(pk, got, sizeof(got), ETH_P_TEST);

		make_test_frame(w, 0, want, FRAME_LEN, seed + i);
		CHECK(len == FRAME_LEN && !memcmp(got, want, FRAME_LEN),
		      "peer: frame %u of %u missing or different (%d bytes)", i, n, len);
	}
}

/* ---- cases ---- */

static struct umem_port *port_up(struct world *w, const struct umem_port_opts *po)
{
	struct umem_port *p = umem_port__create(w->area, w->pool, w->lif[0], 0, po);

	CHECK(p, "port on %s: %s", w->lif[0], strerror(errno));
	return p;
}

/* Every case ends here: the port destroyed without abandoning a buffer, then the world's
 * accounting (world_fini). */
static int fault_end(struct world *w, struct umem_port *p, int pk)
{
	close(pk);
	CHECK_EQ(umem_port__destroy(p), 0);
	world_fini(w);
	return 0;
}

/* An area too small for the fill ring: creation degrades (fill ring short, counted, logged)
 * and frames still flow by recycling; an area with no page at all refuses the port cleanly. */
static int test_exhaust(void)
{
	UMEM_OPTS(umem_port_opts, po, .rx_size = 256, .tx_size = 256); /* fill ring: 512 */
	struct world w = { 0 };
	uint32_t pages;

	world_init(&w, 1, 64, 2048, 0); /* 128 chunks for a 512-entry fill ring */
	pages = umem_area__nr_pages(w.area);
	uint64_t *all = calloc(pages, sizeof(*all));
	CHECK(all, "calloc");

	/* Every page taken elsewhere: refused with ENOMEM, nothing attached, nothing taken. */
	CHECK_EQ(umem_area__get_pages(w.area, all, pages), pages);
	errno = 0;
	CHECK(!umem_port__create(w.area, w.pool, w.lif[0], 0, &po) && errno == ENOMEM,
	      "port on an empty area: %s", strerror(errno));
	expect_log("the pool has no buffers for the fill ring");
	check_no_xdp(&w);
	CHECK_EQ(umem_area__put_pages(w.area, all, pages), 0);
	free(all);

	/* 128 buffers for 512 slots: created, short, and saying so. */
	struct umem_port *p = port_up(&w, &po);
	struct umem_port_stats st = port_stats(p);
	CHECK(st.fill_added == 128 && st.fill_alloc_fail >= 1, "fill added %llu, short %llu",
	      (unsigned long long)st.fill_added, (unsigned long long)st.fill_alloc_fail);
	expect_log("pool empty: fill ring short of 384 buffers");
	int pk = peer_packet_socket(&w, 0);
	/* Eight times the area's buffers go through: each comes back and is reused. */
	flow_ok(&w, p, pk, 0, 1024);
	printf("exhaust: 1024 frames through a 128-buffer area with a 512-slot fill ring\n");
	expect_conserved(p, 1024, 1024);
	return fault_end(&w, p, pk);
}

/* The application keeps every buffer it receives (a stalled downstream): the pool runs out,
 * the fill ring runs dry and the kernel drops (rx_fill_ring_empty). Returning the buffers
 * brings it back. */
static int test_starve(void)
{
	UMEM_OPTS(umem_port_opts, po, .rx_size = 256, .tx_size = 256);
	enum { AREA_PAGES = 320, SENT = 1000 };
	static uint64_t held[SENT];
	struct world w = { 0 };
	uint32_t got = 0;

	world_init(&w, 1, AREA_PAGES, 2048, 0); /* 640 buffers: the fill ring's 512 + 128 */
	struct umem_port *p = port_up(&w, &po);
	int pk = peer_packet_socket(&w, 0);

	for (uint32_t done = 0; done < SENT; done += 50) {
		peer_send(&w, pk, done, 50);
		got += port_take(p, 50, 50, held + got, SENT - got);
	}
	got += port_take(p, SENT, 100, held + got, SENT - got);
	struct umem_port_stats st = port_stats(p);
	printf("starve: %u frames sent, %u received and held, fill ring empty for %llu descs, "
	       "%llu short refills\n", SENT, got, (unsigned long long)st.rx_fill_ring_empty,
	       (unsigned long long)st.fill_alloc_fail);
	CHECK(got <= 2 * AREA_PAGES, "held %u > the area's buffers", got);
	CHECK(st.rx_fill_ring_empty > 0, "the kernel never found the fill ring empty");
	CHECK(st.fill_alloc_fail > 0, "no short refill counted");
	expect_log("pool empty: fill ring short of");
	expect_conserved(p, SENT, got);

	umem_pool__put_bulk(w.pool, held, got);
	/* The buffers are back in the pool; the next refill (any rx_burst or service) puts
	 * them on the fill ring, before which the kernel still drops. */
	CHECK(umem_port__refill(p) > 0, "refill after the buffers came back");
	flow_ok(&w, p, pk, SENT, 200);
	expect_log("fill ring topped up again");
	return fault_end(&w, p, pk);
}

/* Nobody reads the RX ring for a while, then a slow reader takes few frames per call: the
 * kernel counts rx_ring_full for what did not fit; all else arrives; then full speed again. */
static int test_slow(void)
{
	UMEM_OPTS(umem_port_opts, po, .rx_size = 64, .tx_size = 64);
	enum { SENT = 300 };
	struct world w = { 0 };
	uint32_t got = 0;

	world_init(&w, 1, 1024, 2048, 0);
	struct umem_port *p = port_up(&w, &po);
	int pk = peer_packet_socket(&w, 0);

	peer_send(&w, pk, 0, SENT);
	/* The ring holds 64: wait until the kernel has dealt with the rest. */
	long long end = now_ms() + TIMEOUT_MS;
	while (port_stats(p).rx_ring_full < SENT - 64 && now_ms() < end)
		poll(NULL, 0, 5);
	/* A slow reader: two frames per call. */
	for (uint32_t n; (n = port_take(p, 2, 50, NULL, 0)) > 0;)
		got += n;
	struct umem_port_stats st = port_stats(p);
	printf("slow: %u sent, %u read, RX ring full %llu\n", SENT, got,
	       (unsigned long long)st.rx_ring_full);
	CHECK_EQ(got, 64);
	CHECK(st.rx_ring_full > 0, "RX ring full not counted");
	expect_conserved(p, SENT, got);
	flow_ok(&w, p, pk, SENT, 200);
	return fault_end(&w, p, pk);
}

/* Bursts far larger than the TX ring (64) and the completion ring (32): tx_burst takes what
 * fits (counted in tx_ring_full), the kernel stops when completions have no room and the
 * port drains them and kicks again; every frame arrives, in order, and every buffer returns. */
static int test_txfull(void)
{
	UMEM_OPTS(umem_port_opts, po, .rx_size = 256, .tx_size = 64, .comp_size = 32);
	enum { N = 1000 };
	static struct umem_desc d[N];
	struct world w = { 0 };
	uint32_t partial = 0;

	world_init(&w, 1, 1024, 2048, 0);
	struct umem_port *p = port_up(&w, &po);
	int pk = peer_packet_socket(&w, 0);

	tx_frames(&w, d, N, 0);
	long long end = now_ms() + TIMEOUT_MS;
	for (uint32_t done = 0; done < N;) {
		int k = umem_port__tx_burst(p, d + done, N - done);

		CHECK(k >= 0 && k <= 64, "tx_burst took %d of %u with a 64-slot ring", k, N - done);
		partial += (uint32_t)k < N - done;
		done += (uint32_t)k;
		CHECK(now_ms() < end, "TX ring never drained (%u of %u queued)", done, N);
		if (!k)
			umem_port__service(p);
	}
	port_wait_tx_done(p);
	peer_expect(&w, pk, N, 0);
	struct umem_port_stats st = port_stats(p);
	printf("txfull: %u frames, %u partial bursts, tx ring full %llu, kicks %llu (deferred %llu), "
	       "completions %llu\n", N, partial, (unsigned long long)st.tx_ring_full,
	       (unsigned long long)st.tx_kicks, (unsigned long long)st.tx_kick_again,
	       (unsigned long long)st.completions);
	CHECK(partial > 0 && st.tx_ring_full > 0, "the ring was never full");
	CHECK_EQ(st.tx_packets, N);
	CHECK_EQ(st.completions, N);
	CHECK_EQ(st.tx_invalid_descs, 0);
	return fault_end(&w, p, pk);
}

/* The peer's interface goes down under traffic (what we send is dropped by the veth and
 * completed; nothing arrives), then up: traffic resumes both ways. Then our own interface
 * goes down: kicks fail (logged once), frames wait on the TX ring, and go out once it is up. */
static int test_flap(void)
{
	UMEM_OPTS(umem_port_opts, po, .rx_size = 256, .tx_size = 256);
	static struct umem_desc d[64];
	struct world w = { 0 };

	world_init(&w, 1, 1024, 2048, 0);
	struct umem_port *p = port_up(&w, &po);
	int pk = peer_packet_socket(&w, 0);
	flow_ok(&w, p, pk, 0, 100);

	NETNS_MUST(w.ns.peer, "ip link set %s down", w.pif[0]);
	CHECK(!wait_link(&w, w.ns.local, w.lif[0], false), "carrier still on");
	tx_frames(&w, d, 64, 0);
	port_send_descs(p, d, 64); /* dropped by the veth, completed all the same */
	CHECK_EQ(port_take(p, 1, 100, NULL, 0), 0);
	NETNS_MUST(w.ns.peer, "ip link set %s up", w.pif[0]);
	CHECK(!wait_link(&w, w.ns.local, w.lif[0], true), "carrier never came back");
	/* A packet socket reports its interface going down (ENETDOWN) on the next send: a new one. */
	close(pk);
	pk = peer_packet_socket(&w, 0);
	flow_ok(&w, p, pk, 100, 100);
	tx_frames(&w, d, 16, 100);
	port_send_descs(p, d, 16);
	peer_expect(&w, pk, 16, 100);

	NETNS_MUST(w.ns.local, "ip link set %s down", w.lif[0]);
	tx_frames(&w, d, 16, 200);
	CHECK_EQ(umem_port__tx_burst(p, d, 16), 16);
	umem_port__service(p);
	CHECK_EQ(port_stats(p).tx_inflight, 16); /* waiting for the link */
	expect_log("TX kick failed: Network is down (the interface is down");
	NETNS_MUST(w.ns.local, "ip link set %s up", w.lif[0]);
	CHECK(!wait_link(&w, w.ns.local, w.lif[0], true), "carrier never came back");
	port_wait_tx_done(p);
	expect_log("TX kicks work again");
	peer_expect(&w, pk, 16, 200);
	flow_ok(&w, p, pk, 300, 100);
	printf("flap: traffic resumed after the peer's and our own link went down and up\n");
	return fault_end(&w, p, pk);
}

/* The interface is deleted while the kernel holds fill buffers, frames wait unread on the RX
 * ring and others wait on the TX ring: the port's calls keep working on what is left (no
 * crash), the failure is logged, and destroy returns every buffer. A port on an interface of
 * the same name created afterwards works. */
static int test_ifdel(void)
{
	UMEM_OPTS(umem_port_opts, po, .rx_size = 256, .tx_size = 256);
	static struct umem_desc d[32];
	struct umem_desc rx[64];
	struct world w = { 0 };

	world_init(&w, 1, 1024, 2048, 0);
	struct umem_port *p = port_up(&w, &po);
	int pk = peer_packet_socket(&w, 0);
	flow_ok(&w, p, pk, 0, 32);
	peer_send(&w, pk, 32, 10); /* left unread on the RX ring */
	struct pollfd pfd = { .fd = umem_port__fd(p), .events = POLLIN };
	CHECK(poll(&pfd, 1, TIMEOUT_MS) == 1, "frames on the RX ring");
	NETNS_MUST(w.ns.local, "ip link set %s down", w.lif[0]);
	tx_frames(&w, d, 32, 0);
	CHECK_EQ(umem_port__tx_burst(p, d, 32), 32); /* link down: they wait on the ring */
	close(pk);
	NETNS_MUST(w.ns.local, "ip link del %s", w.lif[0]);

	/* Whatever the rings still hold is served; nothing new arrives; nothing crashes. */
	uint32_t unread = 0;
	for (int n; (n = umem_port__rx_burst(p, rx, 64)) > 0;) {
		for (int i = 0; i < n; i++)
			umem_pool__put(w.pool, rx[i].addr);
		unread += (uint32_t)n;
	}
	tx_frames(&w, d, 8, 100);
	int k = umem_port__tx_burst(p, d, 8);
	CHECK(k >= 0, "tx_burst after deletion: %d", k);
	for (int i = k; i < 8; i++)
		umem_pool__put(w.pool, d[i].addr);
	CHECK(umem_port__service(p) >= 0, "service");
	umem_port__refill(p); /* the fill ring is full: nothing to do, and no harm */
	struct umem_port_stats st = port_stats(p);
	expect_log("the socket is unbound: its interface was deleted");
	printf("ifdel: %u unread RX frames served after deletion, %llu TX frames stranded\n", unread,
	       (unsigned long long)st.tx_inflight);
	CHECK_EQ(umem_port__destroy(p), 0);

	/* Same name, new interface: a new port works. */
	netns_veth(&w.ns, w.lif[0], w.pif[0], 1);
	NETNS_MUST(w.ns.local, "ip link set %s address 02:00:00:77:00:01 up", w.lif[0]);
	NETNS_MUST(w.ns.peer, "ip link set %s address 02:00:00:77:00:02 up", w.pif[0]);
	p = port_up(&w, &po);
	pk = peer_packet_socket(&w, 0);
	CHECK(!wait_link(&w, w.ns.local, w.lif[0], true), "carrier");
	flow_ok(&w, p, pk, 1000, 32);
	return fault_end(&w, p, pk);
}

/* A queue in deferred release for 1 s (200 binds 5 ms apart): create waits, says it waits,
 * and binds once the queue is free. It used to give up after 500 ms. Every bind is retried on
 * the one registration of the area (it used to register the area again for each, pinning it
 * again: milliseconds of a restart's gap per try). */
static int test_rebind(void)
{
	UMEM_OPTS(umem_port_opts, po, .rx_size = 256, .tx_size = 256);
	struct world w = { 0 };

	world_init(&w, 1, 1024, 2048, 0);
	umem__fault_bind_busy = 200;
	uint32_t regs = umem__fault_umem_regs;
	long long t0 = now_ms();
	struct umem_port *p = port_up(&w, &po);
	long long took = now_ms() - t0;
	CHECK_EQ(umem__fault_bind_busy, 0);
	CHECK_EQ(umem__fault_umem_regs - regs, 1);
	expect_log("the kernel has not released yet: waiting up to 5 s for it");
	int pk = peer_packet_socket(&w, 0);
	flow_ok(&w, p, pk, 0, 32);
	printf("rebind: bound after %lld ms of EBUSY\n", took);
	return fault_end(&w, p, pk);
}

/* The caller's wait between binds (umem_port_opts.rebind_wait): counts the calls, and ends
 * the wait with -EINTR at call stop_at (0: never). */
struct wait_log {
	uint32_t calls, stop_at, bad_ms;
};

static int logged_wait(void *arg, uint32_t ms)
{
	struct wait_log *wl = arg;

	wl->bad_ms += ms != 5;
	if (++wl->calls == wl->stop_at)
		return -EINTR;
	poll(NULL, 0, (int)ms);
	return 0;
}

/* The same busy queue with the caller doing the waits (xdp-fwd lets its workers run then): one
 * call per failed bind, 5 ms each, the same notice; a wait the caller ends fails the create
 * with its error, names it, and leaves nothing behind (the next create binds). */
static int test_rebind_wait(void)
{
	struct wait_log wl = { 0 };
	UMEM_OPTS(umem_port_opts, po, .rx_size = 256, .tx_size = 256, .rebind_wait = logged_wait,
		  .rebind_wait_arg = &wl);
	struct world w = { 0 };

	world_init(&w, 1, 1024, 2048, 0);
	umem__fault_bind_busy = 150;
	struct umem_port *p = port_up(&w, &po);
	CHECK_EQ(umem__fault_bind_busy, 0);
	CHECK_EQ(wl.calls, 150);
	CHECK_EQ(wl.bad_ms, 0);
	expect_log("the kernel has not released yet: waiting up to 5 s for it");
	CHECK_EQ(umem_port__destroy(p), 0);

	wl = (struct wait_log){ .stop_at = 10 };
	umem__fault_bind_busy = 50;
	p = umem_port__create(w.area, w.pool, w.lif[0], 0, &po);
	CHECK(!p && errno == EINTR, "a wait ended by the caller: %p, %s", (void *)p, strerror(errno));
	CHECK_EQ(wl.calls, 10);
	CHECK_EQ(umem__fault_bind_busy, 40); /* no bind after the wait ended */
	expect_log("the queue is busy and the caller ended the wait for it after 45 ms");
	umem__fault_bind_busy = 0;
	po.rebind_wait = NULL;
	p = port_up(&w, &po);
	int pk = peer_packet_socket(&w, 0);
	flow_ok(&w, p, pk, 0, 32);
	printf("rebind_wait: 150 waits by the caller, then bound; a wait it ended failed cleanly\n");
	return fault_end(&w, p, pk);
}

/* A queue bound by another process's live socket: refused, naming that process (at once with
 * AF_XDP sock_diag; without it after the bounded wait, among the namespace's AF_XDP holders).
 * Once the holder exits, the next create waits out the kernel's deferred release and binds. */
static int test_holder(void)
{
	UMEM_OPTS(umem_port_opts, po, .rx_size = 256, .tx_size = 256);
	struct world w = { 0 };
	int ready[2], hold[2];
	char want[64], c;

	world_init(&w, 1, 1024, 2048, 0);
	CHECK(!pipe(ready) && !pipe(hold), "pipe");
	pid_t child = fork();
	CHECK(child >= 0, "fork");
	if (!child) { /* the holder: its own area and port on the same queue, until told */
		struct umem_area *a = make_area(1024, 2048, 0);
		struct umem_pool *pool = umem_pool__create(a, NULL);
		struct umem_port *hp = pool ? umem_port__create(a, pool, w.lif[0], 0, &po) : NULL;

		close(hold[1]);
		c = hp ? 'y' : 'n';
		if (write(ready[1], &c, 1) != 1 || read(hold[0], &c, 1) < 0)
			_exit(1);
		_exit(0); /* the kernel closes the socket */
	}
	close(ready[1]);
	close(hold[0]);
	CHECK(read(ready[0], &c, 1) == 1 && c == 'y', "the holder could not bind");
	struct umem_port *p = umem_port__create(w.area, w.pool, w.lif[0], 0, &po);
	CHECK(!p && errno == EBUSY, "a port on a queue another process holds: %p, %s", (void *)p,
	      strerror(errno));
	snprintf(want, sizeof(want), "pid %ld (fault_test)", (long)child);
	expect_log(want);
	close(hold[1]); /* the holder exits */
	CHECK(waitpid(child, NULL, 0) == child, "waitpid");
	p = port_up(&w, &po);
	int pk = peer_packet_socket(&w, 0);
	flow_ok(&w, p, pk, 0, 32);
	printf("holder: refused naming %s; bound once it exited\n", want);
	return fault_end(&w, p, pk);
}

int main(int argc, char **argv)
{
	static const struct test_case cases[] = {
		{ "exhaust", test_exhaust }, { "starve", test_starve }, { "slow", test_slow },
		{ "txfull", test_txfull },   { "flap", test_flap },     { "ifdel", test_ifdel },
		{ "rebind", test_rebind },   { "holder", test_holder },   { "rebind_wait", test_rebind_wait },
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	umem_set_print(keep_log);
	return test_case_run(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
