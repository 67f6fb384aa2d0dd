/* SPDX-License-Identifier: MIT */
/*
 * xdp-redirect: the kernel's XDP_REDIRECT between interface pairs (xdp_redirect_devmap.bpf.c),
 * for tools/fwd-bench. `xdp-redirect IF_A IF_B [IF_C IF_D ...]` attaches the program to each
 * interface through a bpf_link, wires A<->B, C<->D in its devmap, prints "ready" and waits for
 * SIGINT/SIGTERM. The links belong to this process: whatever way it ends, the kernel detaches
 * the program, so nothing stays behind.
 */
#include <errno.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdp_redirect_devmap.skel.h"

#define MAX_IFS 16

int main(int argc, char **argv)
{
	struct xdp_redirect_devmap *skel;
	struct bpf_link *links[MAX_IFS] = { 0 };
	unsigned ifindex[MAX_IFS];
	int nr = argc - 1, rc = 1, map_fd;
	sigset_t set;

	if (nr < 2 || nr % 2 || nr > MAX_IFS || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fprintf(nr < 2 || nr % 2 || nr > MAX_IFS ? stderr : stdout,
			"usage: xdp-redirect IF_A IF_B [IF_C IF_D ...]   (pairs, at most %d interfaces)\n"
			"XDP_REDIRECT through a devmap between each pair until SIGINT/SIGTERM.\n", MAX_IFS);
		return nr >= 2 && !(nr % 2) && nr <= MAX_IFS ? 0 : 2;
	}
	for (int i = 0; i < nr; i++) {
		ifindex[i] = if_nametoindex(argv[i + 1]);
		if (!ifindex[i]) {
			fprintf(stderr, "xdp-redirect: no interface '%s' here\n", argv[i + 1]);
			return 2;
		}
	}
	/* Block the signals before attaching, so one arriving early still ends the wait below. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);

	skel = xdp_redirect_devmap__open_and_load();
	if (!skel) {
		fprintf(stderr, "xdp-redirect: loading the program: %s\n", strerror(errno));
		return 1;
	}
	map_fd = bpf_map__fd(skel->maps.tx_ports);
	for (int i = 0; i < nr; i++) {
		__u32 in = ifindex[i], out = ifindex[i ^ 1];

		if (bpf_map_update_elem(map_fd, &in, &out, BPF_ANY)) {
			fprintf(stderr, "xdp-redirect: devmap %s -> %s: %s\n", argv[i + 1], argv[(i ^ 1) + 1],
				strerror(errno));
			goto detach;
		}
		links[i] = bpf_program__attach_xdp(skel->progs.xdp_redirect_devmap, (int)ifindex[i]);
		if (!links[i]) {
			fprintf(stderr, "xdp-redirect: attaching to %s: %s\n", argv[i + 1], strerror(errno));
			goto detach;
		}
	}
	printf("xdp-redirect: ready (%d interfaces)\n", nr);
	fflush(stdout);
	sigwaitinfo(&set, NULL);
	rc = 0;
detach:
	for (int i = 0; i < nr; i++)
		bpf_link__destroy(links[i]);
	xdp_redirect_devmap__destroy(skel);
	return rc;
}
