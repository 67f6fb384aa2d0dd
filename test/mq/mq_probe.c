/* SPDX-License-Identifier: MIT */
/*
 * mq-probe: puts frames on chosen queues of a veth and checks which queue they arrive on
 * (test helper of the multi-queue netns test, not installed).
 *
 *   mq-probe send IFNAME QUEUES BASE DSTMAC SRCMAC
 *       sends (q + 1) * BASE tagged frames from TX queue q, q = 0..QUEUES-1, through one AF_XDP
 *       port per queue (a veth delivers a frame to the RX queue of its peer with the number of
 *       the TX queue it left by), and waits until all are completed
 *   mq-probe flows IP N
 *       sends one UDP datagram to IP:9999 from each of N sockets (source ports 20000..): the
 *       stack hashes each socket to a TX queue
 *   mq-probe recv IFNAME QUEUES BASE FLOWS TIMEOUT_MS
 *       one AF_XDP port per queue; prints "ready", then receives until it has every tagged frame
 *       and FLOWS datagrams; prints per queue "queue Q tagged T flows F" and exits 0 when each
 *       queue q got exactly (q + 1) * BASE tagged frames, all tagged with q, and FLOWS datagrams
 *       arrived in all
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <umem/port.h>
#include "frame.h"

#define MQ_MAX_QUEUES 64
#define MQ_ETH_P 0x88b5 /* IEEE local experimental: nothing else sends it */
#define MQ_MAGIC 0x6d712d39u
#define MQ_UDP_PORT 9999
#define MQ_FRAME_LEN 64u

struct tag {
	uint32_t magic, queue, seq;
};

struct probe {
	struct umem_area *area;
	struct umem_pool *pool;
	struct umem_port *port[MQ_MAX_QUEUES];
	uint32_t queues;
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ll + ts.tv_nsec / 1000000;
}

static void die(const char *what)
{
	fprintf(stderr, "mq-probe: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint32_t number(const char *s, uint32_t max)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (!*s || *end || v > max) {
		fprintf(stderr, "mq-probe: '%s' is not a number up to %u\n", s, max);
		exit(2);
	}
	return (uint32_t)v;
}

static void parse_mac(const char *s, uint8_t *mac)
{
	if (sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1], &mac[2], &mac[3], &mac[4],
		   &mac[5]) != 6) {
		fprintf(stderr, "mq-probe: '%s' is not a MAC address\n", s);
		exit(2);
	}
}

/* One port per queue of ifname on one area. prog: UMEM_PORT_PROG_* (senders attach nothing). */
static void probe_open(struct probe *p, const char *ifname, uint32_t queues, uint32_t prog)
{
	UMEM_OPTS(umem_area_opts, ao, .chunk_size = 2048);
	UMEM_OPTS(umem_port_opts, po, .rx_size = 256, .tx_size = 256, .xdp_prog = prog);

	p->queues = queues;
	/* Each queue's fill ring (512 chunks) plus frames in flight, two chunks per page. */
	p->area = umem_area__create(queues * 512 + 1024, &ao);
	if (!p->area)
		die("area");
	p->pool = umem_pool__create(p->area, NULL);
	if (!p->pool)
		die("pool");
	for (uint32_t q = 0; q < queues; q++) {
		p->port[q] = umem_port__create(p->area, p->pool, ifname, q, &po);
		if (!p->port[q]) {
			fprintf(stderr, "mq-probe: port %s@%u: %s\n", ifname, q, strerror(errno));
			exit(1);
		}
	}
}

/* Destroys everything; nonzero when a buffer did not come back. */
static int probe_close(struct probe *p)
{
	int lost = 0;

	for (uint32_t q = 0; q < p->queues; q++)
		lost += umem_port__destroy(p->port[q]);
	lost += umem_pool__destroy(p->pool);
	if (umem_area__destroy(p->area))
		lost++;
	if (lost)
		fprintf(stderr, "mq-probe: %d buffers not returned\n", lost);
	return lost != 0;
}

static int cmd_send(char **argv)
{
	uint32_t queues = number(argv[1], MQ_MAX_QUEUES), base = number(argv[2], 100000);
	uint8_t dst[6], src[6];
	struct probe p;
	long long end;

	parse_mac(argv[3], dst);
	parse_mac(argv[4], src);
	probe_open(&p, argv[0], queues, UMEM_PORT_PROG_NONE);
	for (uint32_t q = 0; q < queues; q++) {
		for (uint32_t seq = 0; seq < (q + 1) * base;) {
			struct umem_desc d;
			struct tag t = { MQ_MAGIC, q, seq };
			uint32_t n;
			uint8_t *f;

			if (umem_pool__alloc_frag(p.pool, MQ_FRAME_LEN, &d.addr, NULL))
				die("alloc");
			f = umem_pool__ptr(p.pool, d.addr);
			memset(f, 0, MQ_FRAME_LEN);
			n = 0;
			frame_eth(f, &n, dst, src, MQ_ETH_P);
			frame_put(f, &n, &t, sizeof(t));
			d.len = MQ_FRAME_LEN;
			d.options = 0;
			if (umem_port__tx_burst(p.port[q], &d, 1) == 1) {
				seq++;
			} else {
				umem_pool__put(p.pool, d.addr);
				umem_port__service(p.port[q]); /* ring full: completions make room */
			}
		}
	}
	/* Every frame completed: it left the veth. */
	end = now_ms() + 3000;
	for (uint32_t q = 0; q < queues; q++) {
		struct umem_port_stats st = { .sz = sizeof(st) };

		do {
			umem_port__service(p.port[q]);
			umem_port__stats(p.port[q], &st);
		} while (st.tx_inflight && now_ms() < end);
		if (st.tx_inflight) {
			fprintf(stderr, "mq-probe: queue %u: %llu frames never completed\n", q,
				(unsigned long long)st.tx_inflight);
			return 1;
		}
	}
	return probe_close(&p);
}

static int cmd_flows(char **argv)
{
	uint32_t n = number(argv[1], 1000);
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(MQ_UDP_PORT) };

	if (inet_pton(AF_INET, argv[0], &dst.sin_addr) != 1) {
		fprintf(stderr, "mq-probe: '%s' is not an IPv4 address\n", argv[0]);
		return 2;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct sockaddr_in src = { .sin_family = AF_INET, .sin_port = htons((uint16_t)(20000 + i)) };
		int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		if (fd < 0 || bind(fd, (struct sockaddr *)&src, sizeof(src)) ||
		    sendto(fd, &i, sizeof(i), 0, (struct sockaddr *)&dst, sizeof(dst)) != sizeof(i))
			die("flow socket");
		close(fd);
	}
	return 0;
}

/* A UDP datagram to MQ_UDP_PORT in an untagged IPv4 frame. */
static bool is_flow(const uint8_t *f, uint32_t len)
{
	uint32_t ihl;

	if (len < 14 + 20 + 8 || f[12] != 0x08 || f[13] != 0x00 || f[14 + 9] != IPPROTO_UDP)
		return false;
	ihl = (f[14] & 0xfu) * 4;
	return len >= 14 + ihl + 8 && ((f[14 + ihl + 2] << 8) | f[14 + ihl + 3]) == MQ_UDP_PORT;
}

static int cmd_recv(char **argv)
{
	uint32_t queues = number(argv[1], MQ_MAX_QUEUES), base = number(argv[2], 100000);
	uint32_t flows = number(argv[3], 100000), timeout = number(argv[4], 600000);
	uint32_t tagged[MQ_MAX_QUEUES] = { 0 }, nflows[MQ_MAX_QUEUES] = { 0 }, wrong = 0;
	uint64_t want = 0, got = 0, got_flows = 0;
	struct probe p;
	long long end;
	int bad = 0;

	for (uint32_t q = 0; q < queues; q++)
		want += (q + 1) * (uint64_t)base;
	probe_open(&p, argv[0], queues, UMEM_PORT_PROG_DEFAULT);
	printf("ready\n");
	fflush(stdout);
	end = now_ms() + timeout;
	while ((got < want || got_flows < flows) && now_ms() < end) {
		struct pollfd pfd[MQ_MAX_QUEUES];

		for (uint32_t q = 0; q < queues; q++) {
			struct umem_desc d[64];
			int n = umem_port__rx_burst(p.port[q], d, 64);

			for (int k = 0; k < n; k++) {
				const uint8_t *f = umem_pool__ptr(p.pool, d[k].addr);
				struct tag t;

				if (d[k].len >= 14 + sizeof(t) && f[12] == MQ_ETH_P >> 8 && f[13] == (MQ_ETH_P & 0xff)) {
					memcpy(&t, f + 14, sizeof(t));
					if (t.magic == MQ_MAGIC) {
						tagged[q]++;
						got++;
						wrong += t.queue != q;
					}
				} else if (is_flow(f, d[k].len)) {
					nflows[q]++;
					got_flows++;
				}
				umem_pool__put(p.pool, d[k].addr);
			}
			pfd[q] = (struct pollfd){ .fd = umem_port__fd(p.port[q]), .events = POLLIN };
		}
		poll(pfd, queues, 10);
	}
	for (uint32_t q = 0; q < queues; q++) {
		printf("queue %u tagged %u flows %u\n", q, tagged[q], nflows[q]);
		if (tagged[q] != (q + 1) * base) {
			fprintf(stderr, "mq-probe: queue %u got %u tagged frames, expected %u\n", q, tagged[q],
				(q + 1) * base);
			bad = 1;
		}
	}
	if (wrong) {
		fprintf(stderr, "mq-probe: %u tagged frames arrived on another queue than they left by\n", wrong);
		bad = 1;
	}
	if (got_flows != flows) {
		fprintf(stderr, "mq-probe: %llu of %u datagrams arrived\n", (unsigned long long)got_flows, flows);
		bad = 1;
	}
	return probe_close(&p) | bad;
}

int main(int argc, char **argv)
{
	if (argc == 7 && !strcmp(argv[1], "send"))
		return cmd_send(argv + 2);
	if (argc == 4 && !strcmp(argv[1], "flows"))
		return cmd_flows(argv + 2);
	if (argc == 7 && !strcmp(argv[1], "recv"))
		return cmd_recv(argv + 2);
	fprintf(stderr, "usage: %s send IFNAME QUEUES BASE DSTMAC SRCMAC | flows IP N |"
			" recv IFNAME QUEUES BASE FLOWS TIMEOUT_MS\n", argv[0]);
	return 2;
}
