/* SPDX-License-Identifier: MIT */
/*
 * Helper of the offload tests (not a test by itself), run as root in a test's namespace: what
 * this kernel lets the steering program and xdp-fwd's offload do, 1 or 0 on stdout.
 *   kernel_probe live   a live-frame BPF_PROG_RUN (BPF_F_TEST_XDP_LIVE_FRAMES) of an XDP
 *                       program that drops the frame, on the namespace's loopback, runs: what
 *                       the offload's delivery probe needs
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>

static int live_frames(void)
{
	const struct bpf_insn drop[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_DROP },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	unsigned char frame[60] = { [12] = 0x88, [13] = 0xb5 }; /* local experimental EtherType */
	struct xdp_md md = { .data_end = sizeof(frame), .ingress_ifindex = 1 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = sizeof(frame), .ctx_in = &md,
		    .ctx_size_in = sizeof(md), .repeat = 1, .flags = BPF_F_TEST_XDP_LIVE_FRAMES);
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, NULL, "GPL", drop, 2, NULL), r;

	if (fd < 0) {
		fprintf(stderr, "kernel_probe: cannot load a program: %s\n", strerror(errno));
		return -1;
	}
	r = bpf_prog_test_run_opts(fd, &o) ? 0 : 1;
	close(fd);
	return r;
}

int main(int argc, char **argv)
{
	int r = -1;

	if (argc == 2 && !strcmp(argv[1], "live"))
		r = live_frames();
	else
		fprintf(stderr, "usage: kernel_probe live\n");
	if (r < 0)
		return 2;
	printf("%d\n", r);
	return 0;
}
