/* SPDX-License-Identifier: MIT */
/*
 * xdp-reflect: sends every frame received on an AF_XDP port back out of the same port, with
 * the MAC addresses swapped (and, with --swap-ip, the IPv4 addresses and UDP/TCP ports too).
 * The frame is edited where the kernel wrote it and its descriptor goes straight to the TX ring:
 * no copy in userspace. An example of embedding libumem: it uses only the installed headers
 * and builds the same way in-tree, with pkg-config and with find_package(umem).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <umem/umem.h>

#define BATCH 64

/* The option names are those of the other libumem tools (docs/CLI.md). This example parses them
 * itself, with plain getopt_long, so that it builds from an installed libumem alone. */
static const struct opt_help {
	struct option opt;
	const char *arg, *help;
} opts[] = {
	{ { "interface", required_argument, NULL, 'i' }, "IFNAME", "interface to reflect on (required)" },
	{ { "queue", required_argument, NULL, 'q' }, "N", "RX queue (default 0)" },
	{ { "swap-ip", no_argument, NULL, 'I' }, NULL, "also swap IPv4 addresses and UDP/TCP ports" },
	{ { "count", required_argument, NULL, 'n' }, "N", "exit after reflecting N frames" },
	{ { "xdp-mode", required_argument, NULL, 256 }, "MODE", "native, skb or auto (default)" },
	{ { "help", no_argument, NULL, 'h' }, NULL, "print this help and exit" },
	{ { "version", no_argument, NULL, 'V' }, NULL, "print the version and exit" },
};
#define NR_OPTS (sizeof(opts) / sizeof(opts[0]))

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *out)
{
	fprintf(out, "Usage: xdp-reflect -i IFNAME [OPTIONS]\n\n"
		     "Sends every frame received on an AF_XDP port back out, MAC addresses swapped.\n\n"
		     "Options:\n");
	for (size_t i = 0; i < NR_OPTS; i++) {
		char left[32];

		if (opts[i].opt.val < 256)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", opts[i].opt.val, opts[i].opt.name,
				 opts[i].arg ? " " : "", opts[i].arg ? opts[i].arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", opts[i].opt.name,
				 opts[i].arg ? " " : "", opts[i].arg ? opts[i].arg : "");
		fprintf(out, "  %-24s  %s\n", left, opts[i].help);
	}
}

/* A whole decimal or 0x-hex number up to max, or a message naming the option and exit 2. */
static unsigned long number(const char *text, const char *opt, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(text, &end, 0);
	if (errno || end == text || *end || text[0] == '-' || v > max) {
		fprintf(stderr, "xdp-reflect: --%s: '%s' is not a number up to %lu\n", opt, text, max);
		exit(2);
	}
	return v;
}

static void swap_bytes(uint8_t *a, uint8_t *b, size_t n)
{
	uint8_t t[6];

	memcpy(t, a, n);
	memcpy(a, b, n);
	memcpy(b, t, n);
}

/* Rewrites the frame in place into its answer. Swapping is checksum-neutral (the IPv4 header
 * and UDP/TCP pseudo-header sums are commutative), but a sender with TX checksum offload on (a
 * veth's default) leaves only the pseudo-header sum in a TCP/UDP checksum field, which its
 * own kernel would refuse on the way back: completed here (umem/csum.h). Returns false for a
 * frame that has no unicast sender to answer to (group destination, runt). */
static bool reflect(uint8_t *f, uint32_t len, bool swap_ip)
{
	struct umem_csum_loc loc;

	if (len < 14 || (f[0] & 1))
		return false;
	if (!umem_csum__locate(f, len, &loc) && loc.partial)
		umem_csum__complete(&loc, &f, &len, 1);
	swap_bytes(f, f + 6, 6);
	if (!swap_ip || len < 14 + 20 || f[12] != 0x08 || f[13] != 0x00)
		return true;
	uint8_t *ip = f + 14;
	uint32_t ihl = (ip[0] & 0x0f) * 4u;

	swap_bytes(ip + 12, ip + 16, 4);
	/* Ports only in the first fragment (fragment offset 0) and when the header is all there. */
	bool first_frag = ((ip[6] & 0x1f) | ip[7]) == 0;
	if ((ip[9] == 6 || ip[9] == 17) && first_frag && ihl >= 20 && len >= 14 + ihl + 4)
		swap_bytes(ip + ihl, ip + ihl + 2, 2);
	return true;
}

int main(int argc, char **argv)
{
	struct option lopts[NR_OPTS + 1];
	const char *ifname = NULL;
	unsigned long queue = 0, count = 0;
	bool swap_ip = false;
	uint32_t xdp_attach = UMEM_PORT_ATTACH_AUTO;
	int c;

	for (size_t i = 0; i < NR_OPTS; i++)
		lopts[i] = opts[i].opt;
	memset(&lopts[NR_OPTS], 0, sizeof(lopts[NR_OPTS]));
	opterr = 0;
	/* The leading ':' tells a missing argument (':') from an unknown option ('?'). */
	while ((c = getopt_long(argc, argv, ":i:q:In:hV", lopts, NULL)) != -1) {
		switch (c) {
		case 'i': ifname = optarg; break;
		case 'q': queue = number(optarg, "queue", UINT32_MAX); break;
		case 'I': swap_ip = true; break;
		case 'n': count = number(optarg, "count", ULONG_MAX); break;
		case 256: /* --xdp-mode, long only */
			if (!strcmp(optarg, "native"))
				xdp_attach = UMEM_PORT_ATTACH_NATIVE;
			else if (!strcmp(optarg, "skb"))
				xdp_attach = UMEM_PORT_ATTACH_GENERIC;
			else if (strcmp(optarg, "auto")) {
				fprintf(stderr, "xdp-reflect: --xdp-mode: unknown mode '%s' (native, skb, auto)\n", optarg);
				return 2;
			}
			break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("xdp-reflect (libumem) %d.%d\n", UMEM_VERSION_MAJOR, UMEM_VERSION_MINOR); return 0;
		case ':': /* getopt's own messages would name argv[0], a path; these are cli.c's */
			fprintf(stderr, "xdp-reflect: option '%s' needs an argument (see --help)\n",
				argv[optind - 1]);
			return 2;
		default:
			if (optopt && optopt < 256)
				fprintf(stderr, "xdp-reflect: unknown option '-%c' (see --help)\n", optopt);
			else
				fprintf(stderr, "xdp-reflect: unknown option '%s' (see --help)\n", argv[optind - 1]);
			return 2;
		}
	}
	if (!ifname || optind != argc) {
		fprintf(stderr, "xdp-reflect: %s (see --help)\n",
			ifname ? "unexpected argument" : "--interface is required");
		return 2;
	}

	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	/* The embedding in four calls: area (the UMEM), pool (buffers), port (the AF_XDP socket). */
	/* Sized for the default rings of one port, all full at once (fill 4096, RX and TX 2048). */
	int64_t pages = umem_port__pages_needed(1, 0, NULL, NULL);
	struct umem_area *area = pages > 0 ? umem_area__create((uint32_t)pages, NULL) : NULL;
	struct umem_pool *pool = area ? umem_pool__create(area, NULL) : NULL;
	UMEM_OPTS(umem_port_opts, po, .xdp_attach = xdp_attach);
	struct umem_port *port = pool ? umem_port__create(area, pool, ifname, (uint32_t)queue, &po) : NULL;
	if (!port) {
		fprintf(stderr, "xdp-reflect: %s@%lu: %s\n", ifname, queue,
			strerror(pages < 0 ? (int)-pages : errno));
		umem_pool__destroy(pool);
		umem_area__destroy(area);
		return 1;
	}
	printf("xdp-reflect: ready on %s queue %lu (%s, %s XDP)\n", ifname, queue,
	       umem_port__mode_str(umem_port__mode(port)),
	       umem_port__xdp_mode_str(umem_port__xdp_mode(port)));
	fflush(stdout);

	uint64_t reflected = 0, dropped = 0;
	struct pollfd pfd = { .fd = umem_port__fd(port), .events = POLLIN };

	while (!stop && (!count || reflected < count)) {
		struct umem_desc rx[BATCH], tx[BATCH];
		uint64_t drop[BATCH];
		uint32_t ntx = 0, ndrop = 0;
		int n, sent;

		umem_port__service(port);
		/* A bounded wait, so a signal or --count is noticed without traffic. */
		if (poll(&pfd, 1, 100) < 0 && errno != EINTR)
			break;
		n = umem_port__rx_burst(port, rx, BATCH);
		for (int i = 0; i < n; i++) {
			if (reflect(umem_pool__ptr(pool, rx[i].addr), rx[i].len, swap_ip))
				tx[ntx++] = rx[i];
			else
				drop[ndrop++] = rx[i].addr;
		}
		sent = umem_port__tx_burst(port, tx, ntx);
		if (sent < 0)
			sent = 0;
		/* Whatever the TX ring did not take is still ours to give back. */
		for (uint32_t i = (uint32_t)sent; i < ntx; i++)
			drop[ndrop++] = tx[i].addr;
		umem_pool__put_bulk(pool, drop, ndrop);
		reflected += (uint64_t)sent;
		dropped += ndrop;
	}

	int abandoned = umem_port__destroy(port);
	int inflight = umem_pool__destroy(pool);
	umem_area__destroy(area);
	printf("xdp-reflect: reflected %llu, dropped %llu, buffers not returned %d\n",
	       (unsigned long long)reflected, (unsigned long long)dropped, abandoned + inflight);
	return abandoned || inflight ? 1 : 0;
}
