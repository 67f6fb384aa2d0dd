/* SPDX-License-Identifier: MIT */
/*
 * netns test helper: attaches the steering program to IFACE with the given rules, opens two
 * AF_XDP sockets on queue 0 (one shared UMEM), registers them at indexes 0 and 1, and prints
 * "ready", then "sock0=N sock1=M wrong=W big=B" whenever frames arrive (wrong: a UDP frame whose
 * destination port is not 5001 + the socket's index; big: frames longer than one 4 KiB buffer,
 * received as chained descriptors since the sockets are bound with XDP_USE_SG). Runs until
 * killed.
 *   steer_xsk_rx [--libxdp] [--default ACTION] IFACE RULE...
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>
#include <umem/steer.h>

/* Debian 12's kernel headers are 6.1: multi-buffer AF_XDP came in 6.6. */
#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)
#endif

#define NR_FRAMES 1024
#define FRAME_SIZE 4096

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	stop = 1;
}

int main(int argc, char **argv)
{
	UMEM_OPTS(umem_steer_opts, o);
	struct umem_steer_action dflt;
	struct xsk_socket_config cfg = { .rx_size = 2048, .tx_size = 0, .bind_flags = XDP_COPY | XDP_USE_SG,
					 .libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD };
	struct xsk_ring_prod fill;
	struct xsk_ring_cons comp, rx[2];
	struct xsk_socket *xsk[2] = {};
	struct xsk_umem *umem = NULL;
	struct umem_steer *s;
	unsigned long count[2] = {}, wrong = 0, big = 0;
	uint32_t frame_len[2] = {}; /* bytes so far of the frame being chained on each socket */
	void *area;
	int i = 1, rc = 1;
	uint32_t idx;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--libxdp")) {
			o.attach = UMEM_STEER_ATTACH_LIBXDP;
		} else if (!strcmp(argv[i], "--default") && i + 1 < argc) {
			if (umem_steer_action__parse(argv[++i], &dflt))
				return 2;
			o.default_action = &dflt;
		} else {
			fprintf(stderr, "usage: %s [--libxdp] [--default ACTION] IFACE RULE...\n", argv[0]);
			return 2;
		}
	}
	if (i >= argc)
		return 2;
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	s = umem_steer__attach(argv[i], &o);
	if (!s)
		return 1;
	for (int r = i + 1; r < argc; r++) {
		struct umem_steer_rule rule;

		if (umem_steer_rule__parse(argv[r], &rule) || umem_steer__add_rule(s, &rule))
			goto out;
	}
	area = mmap(NULL, NR_FRAMES * FRAME_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		goto out;
	if (xsk_umem__create(&umem, area, NR_FRAMES * FRAME_SIZE, &fill, &comp,
			     &(struct xsk_umem_config){ .fill_size = 2048, .comp_size = 2048,
							.frame_size = FRAME_SIZE }) ||
	    xsk_socket__create(&xsk[0], argv[i], 0, umem, &rx[0], NULL, &cfg) ||
	    xsk_socket__create_shared(&xsk[1], argv[i], 0, umem, &rx[1], NULL, &fill, &comp, &cfg)) {
		fprintf(stderr, "steer_xsk_rx: AF_XDP sockets: %s\n", strerror(errno));
		goto out;
	}
	for (int k = 0; k < 2; k++)
		if (umem_steer__set_socket(s, k, xsk_socket__fd(xsk[k])))
			goto out;
	if (xsk_ring_prod__reserve(&fill, NR_FRAMES, &idx) != NR_FRAMES)
		goto out;
	for (uint32_t f = 0; f < NR_FRAMES; f++)
		*xsk_ring_prod__fill_addr(&fill, idx + f) = (uint64_t)f * FRAME_SIZE;
	xsk_ring_prod__submit(&fill, NR_FRAMES);
	printf("ready\n");
	fflush(stdout);

	while (!stop) {
		struct pollfd pfd[2] = { { .fd = xsk_socket__fd(xsk[0]), .events = POLLIN }, { .fd = xsk_socket__fd(xsk[1]), .events = POLLIN } };
		int got = 0;

		if (poll(pfd, 2, 100) < 0 && errno != EINTR)
			break;
		for (int k = 0; k < 2; k++) {
			uint32_t n = xsk_ring_cons__peek(&rx[k], 64, &idx), fidx;

			for (uint32_t d = 0; d < n; d++) {
				const struct xdp_desc *desc = xsk_ring_cons__rx_desc(&rx[k], idx + d);
				const uint8_t *p = xsk_umem__get_data(area, desc->addr);

				/* First buffer of a frame. IPv4 without options, UDP: destination port
				 * at 14 + 20 + 2. */
				if (!frame_len[k] && desc->len >= 42 && p[12] == 0x08 && p[13] == 0 &&
				    p[23] == 17 && ((p[36] << 8) | p[37]) != 5001 + k)
					wrong++;
				frame_len[k] += desc->len;
				if (!(desc->options & XDP_PKT_CONTD)) {
					count[k]++;
					big += frame_len[k] > FRAME_SIZE;
					frame_len[k] = 0;
				}
				while (xsk_ring_prod__reserve(&fill, 1, &fidx) != 1)
					;
				*xsk_ring_prod__fill_addr(&fill, fidx) = xsk_umem__extract_addr(desc->addr);
				xsk_ring_prod__submit(&fill, 1);
			}
			xsk_ring_cons__release(&rx[k], n);
			got += n;
		}
		if (got) {
			printf("sock0=%lu sock1=%lu wrong=%lu big=%lu\n", count[0], count[1], wrong, big);
			fflush(stdout);
		}
	}
	rc = 0;
out:
	for (int k = 0; k < 2; k++)
		if (xsk[k])
			xsk_socket__delete(xsk[k]);
	if (umem)
		xsk_umem__delete(umem);
	umem_steer__detach(s);
	return rc;
}
