/* SPDX-License-Identifier: MIT */
/*
 * udp-responder: answers UDP port 7 (echo, RFC 862) from AF_XDP sockets, one per RX queue, and
 * leaves everything else (ARP, ping, the other ports, the ICMP errors for them) to the kernel.
 *   udp-responder IFNAME [PORT]        until SIGINT/SIGTERM
 * Built against the installed libumem: `make` (pkg-config) or CMakeLists.txt (find_package).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <umem/umem.h>

#define MAX_QUEUES 16
#define BATCH 64

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void swap(uint8_t *a, uint8_t *b, size_t n)
{
	uint8_t t[16];

	memcpy(t, a, n);
	memcpy(a, b, n);
	memcpy(b, t, n);
}

/* Turns a request into its answer in place. Swapping addresses and ports leaves the checksums
 * valid; a partial one (the sender's TX checksum offload) is completed first; the IPv4 TTL
 * starts again at 64, its header checksum updated per RFC 1624. false: nothing to answer. */
static bool answer(uint8_t *f, uint32_t len)
{
	struct umem_csum_loc loc;

	if ((f[0] & 1) || umem_csum__locate(f, len, &loc) || loc.proto != 17)
		return false;
	if (loc.partial && umem_csum__complete(&loc, &f, &len, 1))
		return false;
	swap(f, f + 6, 6);
	if (loc.family == 4) {
		uint8_t *ip = f + loc.l3_off;
		uint16_t old = (uint16_t)(ip[8] << 8 | ip[9]), c = (uint16_t)(ip[10] << 8 | ip[11]);

		ip[8] = 64;
		c = umem_csum__update16(c, old, (uint16_t)(64 << 8 | ip[9]));
		ip[10] = (uint8_t)(c >> 8), ip[11] = (uint8_t)c;
		swap(ip + 12, ip + 16, 4);
	} else {
		swap(f + loc.l3_off + 8, f + loc.l3_off + 24, 16);
	}
	swap(f + loc.l4_off, f + loc.l4_off + 2, 2);
	return true;
}

int main(int argc, char **argv)
{
	struct umem_port *ports[MAX_QUEUES] = { 0 };
	struct pollfd pfd[MAX_QUEUES];
	struct umem_steer_rule rule;
	uint64_t answered = 0, dropped = 0;
	char *end, text[64];
	int nq, rc = 1;

	unsigned long port = argc == 3 ? strtoul(argv[2], &end, 0) : 7;
	if (argc < 2 || argc > 3 || (argc == 3 && (*end || !port || port > 65535))) {
		fprintf(stderr, "usage: udp-responder IFNAME [PORT]\n");
		return 2;
	}
	/* Errors from here on: libumem has said why on stderr (umem_set_print), naming the cause. */
	nq = umem_netdev__queue_count(argv[1]);
	if (nq < 0)
		return 1;
	nq = nq < MAX_QUEUES ? nq : MAX_QUEUES; /* the kernel keeps the rest */
	UMEM_OPTS(umem_port_opts, po, .rx_size = 512, .tx_size = 512, .xdp_prog = UMEM_PORT_PROG_NONE);
	int64_t pages = umem_port__pages_needed((uint32_t)nq, 0, NULL, &po);
	struct umem_area *area = pages > 0 ? umem_area__create((uint32_t)pages, NULL) : NULL;
	struct umem_pool *pool = area ? umem_pool__create(area, NULL) : NULL;
	/* Default options: what no rule claims goes to the kernel. */
	struct umem_steer *steer = pool ? umem_steer__attach(argv[1], NULL) : NULL;
	if (!steer)
		goto out;
	for (int q = 0; q < nq; q++) {
		ports[q] = umem_port__create(area, pool, argv[1], (uint32_t)q, &po);
		/* Registered at its queue id: what the action "queue" names. */
		if (!ports[q] || umem_steer__set_socket(steer, (uint32_t)q, umem_port__fd(ports[q])))
			goto out;
		pfd[q] = (struct pollfd){ .fd = umem_port__fd(ports[q]), .events = POLLIN };
	}
	snprintf(text, sizeof(text), "udp dport %lu -> queue", port);
	if (umem_steer_rule__parse(text, &rule) || umem_steer__add_rule(steer, &rule))
		goto out;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("udp-responder: ready on %s, UDP port %lu, %d queue%s\n", argv[1], port, nq, nq == 1 ? "" : "s");
	fflush(stdout);

	while (!stop) {
		if (poll(pfd, (nfds_t)nq, 100) < 0 && errno != EINTR)
			break;
		for (int q = 0; q < nq; q++) {
			struct umem_desc d[BATCH], tx[BATCH];
			uint64_t drop[BATCH];
			uint32_t ntx = 0, ndrop = 0;
			int n = umem_port__rx_burst(ports[q], d, BATCH), sent;

			for (int i = 0; i < n; i++) {
				if (answer(umem_pool__ptr(pool, d[i].addr), d[i].len))
					tx[ntx++] = d[i];
				else
					drop[ndrop++] = d[i].addr;
			}
			sent = umem_port__tx_burst(ports[q], tx, ntx);
			for (uint32_t i = sent > 0 ? (uint32_t)sent : 0; i < ntx; i++)
				drop[ndrop++] = tx[i].addr; /* the TX ring's overflow is still ours */
			umem_pool__put_bulk(pool, drop, ndrop);
			answered += sent > 0 ? (uint64_t)sent : 0;
			dropped += ndrop;
			umem_port__service(ports[q]);
		}
	}
	rc = 0;
out:
	umem_steer__detach(steer); /* first: no frame for the sockets any more */
	int left = 0;
	for (int q = 0; q < MAX_QUEUES; q++)
		left += umem_port__destroy(ports[q]);
	left += pool ? umem_pool__destroy(pool) : 0;
	umem_area__destroy(area);
	if (!rc)
		printf("udp-responder: answered %llu, dropped %llu, buffers not returned %d\n",
		       (unsigned long long)answered, (unsigned long long)dropped, left);
	return rc || left ? 1 : 0;
}
