/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "sys.h"

static bool out_failed;

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
