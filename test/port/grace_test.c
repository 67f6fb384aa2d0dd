/* SPDX-License-Identifier: MIT */
/*
 * Port destroy when membarrier() is refused (as nohz_full kernels do), label netns: the port
 * still waits for an RCU grace period before its last RX drain, through the kernel's
 * map-in-map update, and every buffer comes back. A seccomp filter makes membarrier fail with
 * EINVAL for this process only.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "portworld.h"
#include <stddef.h>
#include <linux/filter.h>
#include <linux/membarrier.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

static char debug_log[8192];

__attribute__((format(printf, 2, 0)))
static int capture(enum umem_print_level level, const char *fmt, va_list args)
{
	size_t used = strlen(debug_log);

	if (level == UMEM_DEBUG && used < sizeof(debug_log) - 1)
		vsnprintf(debug_log + used, sizeof(debug_log) - used, fmt, args);
	return 0;
}

static void refuse_membarrier(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_membarrier, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	CHECK(!prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs: %s", strerror(errno));
	CHECK(!prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog), "seccomp: %s", strerror(errno));
	CHECK(syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) && errno == EINVAL,
	      "membarrier still works under the filter");
}

int main(void)
{
	UMEM_OPTS(umem_port_opts, po, .rx_size = 256, .tx_size = 256);
	struct world w = { 0 };
	uint8_t frame[128];
	int fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	world_init(&w, 1, 1024, 2048, 0);
	struct umem_port *p = umem_port__create(w.area, w.pool, w.lif[0], 0, &po);
	CHECK(p, "port: %s", strerror(errno));
	/* Frames on the RX ring, never read: destroy's drain returns them. */
	fd = peer_packet_socket(&w, 0);
	for (uint32_t i = 0; i < 32; i++) {
		make_test_frame(&w, 0, frame, sizeof(frame), i);
		CHECK(send(fd, frame, sizeof(frame), 0) == (ssize_t)sizeof(frame), "send: %s", strerror(errno));
	}
	close(fd);
	refuse_membarrier();
	umem_print_fn_t old = umem_set_print(capture);
	CHECK_EQ(umem_port__destroy(p), 0);
	umem_set_print(old);
	CHECK(strstr(debug_log, "RCU grace period through a map-in-map update"),
	      "no grace period when membarrier is refused; log: %s", debug_log);
	world_fini(&w);
	printf("grace: membarrier refused, destroy waited through a map-in-map update\n");
	return 0;
}
