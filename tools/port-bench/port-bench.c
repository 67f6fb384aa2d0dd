/* SPDX-License-Identifier: MIT */
/*
 * port-bench: AF_XDP port throughput over veth pairs, one thread, in private namespaces.
 *
 *   peer namespace                 bench namespace
 *   gen port  --pb-p0 ==== pb-l0-->  port A --rx--+
 *                                                 | (same buffers, zero copy)
 *   sink port <--pb-p1 ==== pb-l1--  port B <-tx--+
 *
 * Phase "rx": gen -> A, A puts every frame back (what a port can receive).
 * Phase "fwd": gen -> A -> B -> sink (what a port pair can forward; the baseline is "rx").
 * Reports packets per second at the sink (rx: at A), medians over --runs, and the slow-path
 * allocations of A's pool after warm-up (steady-state forwarding must show none).
 * veth AF_XDP is copy mode: these numbers measure the kernel copy path plus libumem.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "netns.h"
#include <errno.h>
#include <string.h>
#include <time.h>
#include <umem/umem.h>

#include "cli.h"
#include "frame.h"

enum { OPT_SIZE, OPT_BATCH, OPT_MS, OPT_RUNS, OPT_CHUNK, NR_OPTS };
static uint32_t optv[NR_OPTS] = { [OPT_SIZE] = 64, [OPT_BATCH] = 64, [OPT_MS] = 1000, [OPT_RUNS] = 5,
				  [OPT_CHUNK] = 2048 };

static int set_chunk(void *v, const char *arg, char *err, size_t errlen)
{
	uint32_t *chunk = &((uint32_t *)v)[OPT_CHUNK];

	if (strcmp(arg, "2048") && strcmp(arg, "4096"))
		return cli_fail(err, errlen, "--chunk-size: '%s' is not 2048 or 4096", arg);
	*chunk = (uint32_t)atoi(arg);
	return 0;
}

#define AT(i) .kind = CLI_U32, .off = (i) * sizeof(uint32_t)
static const struct cli_opt opts[] = {
	{ "size", 's', "BYTES", "frame size, 60..1514 (default 64)", AT(OPT_SIZE), .min = 60, .max = 1514 },
	{ "batch", 'b', "N", "descriptors per burst, 1..256 (default 64)", AT(OPT_BATCH), .min = 1, .max = 256 },
	{ "ms", 't', "MS", "duration of one measured run (default 1000)", AT(OPT_MS), .min = 1, .max = 3600000 },
	{ "runs", 0, "N", "runs per phase; the median is reported (default 5)", AT(OPT_RUNS), .min = 1, .max = 1000 },
	{ "chunk-size", 0, "BYTES", "AF_XDP chunk size, 2048 or 4096 (default 2048)", CLI_SET(set_chunk) },
};
#undef AT

static const struct cli_prog cli = {
	.name = "port-bench",
	.synopsis = "[OPTIONS]",
	.summary = "AF_XDP port throughput over veth pairs in private namespaces: receive (rx) and "
		   "forward between two ports (fwd). Needs root: creates namespaces and veths.",
	CLI_OPTS(opts),
};

static void parse(int argc, char **argv)
{
	int next = cli_parse_or_exit(&cli, optv, argc, argv, 1);

	if (next < argc)
		cli_die(&cli, "unexpected argument '%s'", argv[next]);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
	fprintf(stderr, "port-bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

struct side {
	struct umem_area *area;
	struct umem_pool *pool;
};

static void side_init(struct side *s)
{
	UMEM_OPTS(umem_area_opts, ao, .chunk_size = optv[OPT_CHUNK]);

	/* 32 MiB: two queues' fill rings (2 x 2048 chunks) and both TX rings with room to spare. */
	s->area = umem_area__create(8192, &ao);
	if (!s->area || !(s->pool = umem_pool__create(s->area, NULL)))
		die("area/pool");
}

static struct umem_port *port_in(const struct netns_pair *ns, int nsfd, struct side *s,
				 const char *ifname, uint32_t prog)
{
	UMEM_OPTS(umem_port_opts, po, .rx_size = 1024, .tx_size = 1024, .xdp_prog = prog);
	struct umem_port *p;

	if (setns(nsfd, CLONE_NEWNET))
		die("setns");
	p = umem_port__create(s->area, s->pool, ifname, 0, &po);
	if (setns(ns->local, CLONE_NEWNET))
		die("setns back");
	if (!p)
		die(ifname);
	return p;
}

/* The generator queues one batch of fresh frames (a copy of the template each). */
static void generate(struct umem_port *gen, struct side *s, const uint8_t *tmpl)
{
	struct umem_desc d[256];
	uint32_t n = optv[OPT_BATCH], size = optv[OPT_SIZE];
	int sent;

	for (uint32_t i = 0; i < n; i++) {
		if (umem_pool__alloc_frag(s->pool, size, &d[i].addr, NULL)) {
			n = i;
			break;
		}
		memcpy(umem_pool__ptr(s->pool, d[i].addr), tmpl, size);
		d[i].len = size;
		d[i].options = 0;
	}
	sent = umem_port__tx_burst(gen, d, n);
	for (uint32_t i = sent < 0 ? 0 : (uint32_t)sent; i < n; i++)
		umem_pool__put(s->pool, d[i].addr);
	umem_port__service(gen);
}

/* Receives a batch on p; forwards it on out (NULL: puts it back). Returns frames received. */
static uint32_t forward(struct umem_port *p, struct umem_port *out, struct umem_pool *pool)
{
	struct umem_desc d[256];
	uint64_t addrs[256];
	int n = umem_port__rx_burst(p, d, optv[OPT_BATCH]), sent = 0;

	if (n <= 0)
		return 0;
	if (out) {
		sent = umem_port__tx_burst(out, d, (uint32_t)n);
		sent = sent < 0 ? 0 : sent;
		umem_port__service(out);
	}
	for (int i = sent; i < n; i++)
		addrs[i - sent] = d[i].addr;
	umem_pool__put_bulk(pool, addrs, (uint32_t)(n - sent));
	return (uint32_t)n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct netns_pair ns;
	struct side local, peer;
	uint8_t tmpl[1514];
	double rates[2][64];
	uint64_t slow_after_warmup = 0;

	parse(argc, argv);
	netns_private(&ns);
	netns_veth(&ns, "pb-l0", "pb-p0", 1);
	netns_veth(&ns, "pb-l1", "pb-p1", 1);
	NETNS_MUST(ns.local, "ip link set pb-l0 up && ip link set pb-l1 up");
	NETNS_MUST(ns.peer, "ip link set pb-p0 up && ip link set pb-p1 up");
	side_init(&local);
	side_init(&peer);
	struct umem_port *gen = port_in(&ns, ns.peer, &peer, "pb-p0", UMEM_PORT_PROG_NONE);
	struct umem_port *sink = port_in(&ns, ns.peer, &peer, "pb-p1", UMEM_PORT_PROG_DEFAULT);
	struct umem_port *a = port_in(&ns, ns.local, &local, "pb-l0", UMEM_PORT_PROG_DEFAULT);
	struct umem_port *b = port_in(&ns, ns.local, &local, "pb-l1", UMEM_PORT_PROG_NONE);

	/* Broadcast destination: no MAC filter anywhere drops it; EtherType 0x88b5 (local). */
	uint32_t n = 0;
	frame_eth(tmpl, &n, (const uint8_t[6]){ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
		  (const uint8_t[6]){ 0x02, 0x00, 0x00, 0x70, 0x62, 0x01 }, 0x88b5);
	for (uint32_t i = n; i < sizeof(tmpl); i++)
		tmpl[i] = (uint8_t)i;

	printf("port-bench: %u-byte frames, batch %u, chunk %u, %u x %u ms per phase, %s mode\n",
	       optv[OPT_SIZE], optv[OPT_BATCH], optv[OPT_CHUNK], optv[OPT_RUNS], optv[OPT_MS],
	       umem_port__mode_str(umem_port__mode(a)));
	for (int phase = 0; phase < 2; phase++) {
		struct umem_port *out = phase ? b : NULL;

		for (uint32_t run = 0; run <= optv[OPT_RUNS]; run++) { /* run 0 warms up */
			struct umem_pool_stats ps = { .sz = sizeof(ps) };
			double t0 = now_s(), end = t0 + optv[OPT_MS] / 1000.0, t;
			uint64_t count = 0, slow0;

			umem_pool__stats(local.pool, &ps);
			slow0 = ps.alloc.slow;
			do {
				generate(gen, &peer, tmpl);
				uint32_t got = forward(a, out, local.pool);
				if (phase)
					got = forward(sink, NULL, peer.pool);
				count += got;
			} while ((t = now_s()) < end);
			if (!run)
				continue;
			rates[phase][run - 1] = (double)count / (t - t0);
			umem_pool__stats(local.pool, &ps);
			slow_after_warmup += ps.alloc.slow - slow0;
		}
		qsort(rates[phase], optv[OPT_RUNS], sizeof(double), cmp_double);
	}
	double rx = rates[0][optv[OPT_RUNS] / 2], fwd = rates[1][optv[OPT_RUNS] / 2];
	printf("%-8s %12s %10s\n", "phase", "Mpps", "Gbit/s");
	printf("%-8s %12.3f %10.2f   (gen -> port A, put back: baseline)\n", "rx", rx / 1e6,
	       rx * optv[OPT_SIZE] * 8 / 1e9);
	printf("%-8s %12.3f %10.2f   (gen -> A -> B -> sink, no userspace copy; %.0f%% of rx)\n", "fwd",
	       fwd / 1e6, fwd * optv[OPT_SIZE] * 8 / 1e9, 100.0 * fwd / rx);
	printf("slow-path allocations of A's pool after warm-up: %llu\n",
	       (unsigned long long)slow_after_warmup);

	umem_port__destroy(gen);
	umem_port__destroy(sink);
	umem_port__destroy(a);
	umem_port__destroy(b);
	int left = umem_pool__destroy(local.pool) + umem_pool__destroy(peer.pool);
	umem_area__destroy(local.area);
	umem_area__destroy(peer.area);
	if (left) {
		fprintf(stderr, "port-bench: %d pages never came back\n", left);
		return 1;
	}
	return 0;
}
