/* SPDX-License-Identifier: MIT */
/* Death tests: run a function in a child whose stderr the parent collects. */
#ifndef UMEM_CHILDRUN_H
#define UMEM_CHILDRUN_H

#include <sys/wait.h>
#include <unistd.h>
#include "testutil.h"

/* Runs fn in a child (stderr into out, NUL-terminated); returns the child's wait status. A fn
 * that returns prints "no abort" and exits 0. */
static inline int child_run(void (*fn)(void), char *out, size_t size)
{
	int fds[2], status;
	ssize_t n, len = 0;

	CHECK(!pipe(fds), "pipe");
	pid_t pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		fn();
		fprintf(stderr, "no abort\n");
		_exit(0);
	}
	close(fds[1]);
	while ((n = read(fds[0], out + len, size - 1 - (size_t)len)) > 0)
		len += n;
	close(fds[0]);
	out[len] = 0;
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	return status;
}

#endif
