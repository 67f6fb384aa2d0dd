/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "sys.h"

static bool out_failed;
static int cpu_latency_fd = -1;

int fwd_std_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		int n;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		/* open() returns the lowest free descriptor, which is fd. */
		n = open("/dev/null", fd ? O_WRONLY : O_RDONLY);
		if (n < 0)
			return -errno;
		if (n != fd) {
			close(n);
			return -EBADF;
		}
	}
	return 0;
}

void fwd_signals(sigset_t *set)
{
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGUSR1);
}

bool fwd_out_ok(FILE *out)
{
	int err;

	if (out_failed)
		return false;
	if (!fflush(out) && !ferror(out))
		return true;
	err = errno;
	out_failed = true;
	fprintf(stderr, "xdp-fwd: cannot write the stats to %s (%s): stats output stops, forwarding "
		"goes on; the exit totals go to stderr\n", out == stdout ? "stdout" : "their stream",
		strerror(err));
	return false;
}

FILE *fwd_totals_stream(void)
{
	return out_failed ? stderr : stdout;
}

int fwd_cpu_latency_hold(uint32_t usecs)
{
	int32_t v = (int32_t)usecs;
	int fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (write(fd, &v, sizeof(v)) != sizeof(v)) {
		int err = errno ? -errno : -EIO;

		close(fd);
		return err;
	}
	cpu_latency_fd = fd;
	return 0;
}

void fwd_cpu_latency_release(void)
{
	if (cpu_latency_fd >= 0)
		close(cpu_latency_fd);
	cpu_latency_fd = -1;
}
