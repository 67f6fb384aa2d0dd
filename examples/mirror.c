/* SPDX-License-Identifier: MIT */
/*
 * mirror: every frame received on IN goes out of OUT1 and OUT2, the same buffer on both TX
 * rings (one reference per port), never copied. IN only receives and the outputs only send, so
 * the UMEM holds fill-ring buffers for IN alone.
 *   mirror IN OUT1 OUT2            until SIGINT/SIGTERM
 * Built against the installed libumem: `make` (pkg-config) or CMakeLists.txt (find_package).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <umem/umem.h>

#define BATCH 64

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct umem_port *in = NULL, *out[2] = { NULL, NULL };
	uint64_t frames = 0, sent[2] = { 0, 0 }, lost = 0;
	int rc = 1;

	if (argc != 4) {
		fprintf(stderr, "usage: mirror IN OUT1 OUT2\n");
		return 2;
	}
	/* Errors from here on: libumem has said why on stderr (umem_set_print), naming the cause. */
	UMEM_OPTS(umem_port_opts, in_o, .rx_size = 512, .tx_size = 512, .flags = UMEM_PORT_F_RX_ONLY);
	UMEM_OPTS(umem_port_opts, out_o, .rx_size = 512, .tx_size = 512, .flags = UMEM_PORT_F_TX_ONLY);
	int64_t in_pages = umem_port__pages_needed(1, 0, NULL, &in_o);
	int64_t out_pages = umem_port__pages_needed(2, 0, NULL, &out_o);
	struct umem_area *area = in_pages > 0 && out_pages > 0 ?
					 umem_area__create((uint32_t)(in_pages + out_pages), NULL) : NULL;
	struct umem_pool *pool = area ? umem_pool__create(area, NULL) : NULL;
	in = pool ? umem_port__create(area, pool, argv[1], 0, &in_o) : NULL;
	for (int k = 0; k < 2 && in; k++)
		if (!(out[k] = umem_port__create(area, pool, argv[2 + k], 0, &out_o)))
			goto out;
	if (!in)
		goto out;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("mirror: ready, %s -> %s + %s, %lld pages\n", argv[1], argv[2], argv[3],
	       (long long)(in_pages + out_pages));
	fflush(stdout);

	struct pollfd pfd = { .fd = umem_port__fd(in), .events = POLLIN };
	while (!stop) {
		struct umem_desc d[BATCH];
		uint64_t back[2 * BATCH];
		uint32_t nback = 0;

		if (poll(&pfd, 1, 100) < 0 && errno != EINTR)
			break;
		int n = umem_port__rx_burst(in, d, BATCH);
		for (int i = 0; i < n; i++)
			umem_pool__ref(pool, d[i].addr, 1); /* two references: one per output */
		for (int k = 0; k < 2; k++) {
			int m = n ? umem_port__tx_burst(out[k], d, (uint32_t)n) : 0;

			m = m < 0 ? 0 : m;
			for (int i = m; i < n; i++) /* not queued on this output: its reference back */
				back[nback++] = d[i].addr;
			sent[k] += (uint64_t)m;
			umem_port__service(out[k]); /* completions drop the other references */
		}
		umem_pool__put_bulk(pool, back, nback);
		frames += n > 0 ? (uint64_t)n : 0;
		lost += nback;
	}
	rc = 0;
out:;
	int left = umem_port__destroy(in) + umem_port__destroy(out[0]) + umem_port__destroy(out[1]);
	left += pool ? umem_pool__destroy(pool) : 0;
	umem_area__destroy(area);
	if (!rc)
		printf("mirror: frames in %llu, out %llu and %llu, not queued %llu, frames still out %d\n",
		       (unsigned long long)frames, (unsigned long long)sent[0], (unsigned long long)sent[1],
		       (unsigned long long)lost, left);
	return rc || left ? 1 : 0;
}
