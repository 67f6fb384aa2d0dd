/* SPDX-License-Identifier: MIT */
/*
 * xdp-redirect: the kernel's XDP forwarding baselines for tools/fwd-bench.
 *
 *   xdp-redirect IF_A IF_B [IF_C IF_D ...]   a wire: XDP_REDIRECT through a devmap between each
 *                                            pair (xdp_redirect_devmap.bpf.c), A<->B, C<->D
 *   xdp-redirect --fib IF [IF ...]           a router: bpf_fib_lookup on the namespace's tables
 *                                            and XDP_REDIRECT to the route's interface among
 *                                            those given (xdp_fib_devmap.bpf.c)
 *
 * It attaches the program to each interface through a bpf_link, prints "ready" and waits for
 * SIGINT/SIGTERM. The links belong to this process: whatever way it ends, the kernel detaches
 * the program, so nothing stays behind.
 */
#include <errno.h>
#include <net/if.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdp_fib_devmap.skel.h"
#include "xdp_redirect_devmap.skel.h"

#define MAX_IFS 16

static int usage(FILE *f, int rc)
{
	fprintf(f, "usage: xdp-redirect IF_A IF_B [IF_C IF_D ...]   (pairs, at most %d interfaces)\n"
		   "       xdp-redirect --fib IF [IF ...]             (at most %d interfaces)\n"
		   "XDP_REDIRECT through a devmap between each pair, or to the interface that\n"
		   "bpf_fib_lookup routes to (--fib), until SIGINT/SIGTERM.\n", MAX_IFS, MAX_IFS);
	return rc;
}

int main(int argc, char **argv)
{
	struct xdp_redirect_devmap *wire = NULL;
	struct xdp_fib_devmap *fib = NULL;
	struct bpf_link *links[MAX_IFS] = { 0 };
	struct bpf_program *prog;
	bool is_fib = argc > 1 && !strcmp(argv[1], "--fib");
	char **ifs = argv + 1 + is_fib;
	int nr = argc - 1 - is_fib, rc = 1, map_fd;
	unsigned ifindex[MAX_IFS];
	sigset_t set;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))
		return usage(stdout, 0);
	if (nr < 1 || nr > MAX_IFS || (!is_fib && (nr < 2 || nr % 2)))
		return usage(stderr, 2);
	for (int i = 0; i < nr; i++) {
		ifindex[i] = if_nametoindex(ifs[i]);
		if (!ifindex[i]) {
			fprintf(stderr, "xdp-redirect: no interface '%s' here\n", ifs[i]);
			return 2;
		}
	}
	/* Block the signals before attaching, so one arriving early still ends the wait below. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);

	if (is_fib)
		fib = xdp_fib_devmap__open_and_load();
	else
		wire = xdp_redirect_devmap__open_and_load();
	if (!fib && !wire) {
		fprintf(stderr, "xdp-redirect: loading the program: %s\n", strerror(errno));
		return 1;
	}
	map_fd = is_fib ? bpf_map__fd(fib->maps.fib_ports) : bpf_map__fd(wire->maps.tx_ports);
	prog = is_fib ? fib->progs.xdp_fib_devmap : wire->progs.xdp_redirect_devmap;
	for (int i = 0; i < nr; i++) {
		/* The wire's key is the ingress, its value the pair's other end; the router's key is
		 * an egress the lookup may return. */
		__u32 key = ifindex[i], out = ifindex[is_fib ? i : i ^ 1];

		if (bpf_map_update_elem(map_fd, &key, &out, BPF_ANY)) {
			fprintf(stderr, "xdp-redirect: devmap entry for %s: %s\n", ifs[i], strerror(errno));
			goto detach;
		}
		links[i] = bpf_program__attach_xdp(prog, (int)ifindex[i]);
		if (!links[i]) {
			fprintf(stderr, "xdp-redirect: attaching to %s: %s\n", ifs[i], strerror(errno));
			goto detach;
		}
	}
	printf("xdp-redirect: ready (%d interfaces%s)\n", nr, is_fib ? ", fib" : "");
	fflush(stdout);
	sigwaitinfo(&set, NULL);
	rc = 0;
detach:
	for (int i = 0; i < nr; i++)
		bpf_link__destroy(links[i]);
	xdp_fib_devmap__destroy(fib);
	xdp_redirect_devmap__destroy(wire);
	return rc;
}
