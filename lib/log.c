/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include "internal.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

/* A process started with fd 2 closed gets its first socket there: an AF_XDP socket of ours,
 * say. Text written into it fails (EOPNOTSUPP) at best, so the default printer checks first;
 * a message is rare enough for one getsockopt. */
static bool stderr_is_xsk(void)
{
	int domain = 0;
	socklen_t len = sizeof(domain);

	return !getsockopt(STDERR_FILENO, SOL_SOCKET, SO_DOMAIN, &domain, &len) && domain == AF_XDP;
}

__attribute__((format(printf, 2, 0)))
static int default_print(enum umem_print_level level, const char *fmt, va_list args)
{
	if (level == UMEM_DEBUG && !getenv("LIBUMEM_VERBOSE"))
		return 0;
	if (stderr_is_xsk())
		return 0;
	return vfprintf(stderr, fmt, args);
}

static umem_print_fn_t print_fn = default_print;

umem_print_fn_t umem_set_print(umem_print_fn_t fn)
{
	umem_print_fn_t old = print_fn;

	print_fn = fn;
	return old;
}

void umem__pr(enum umem_print_level level, const char *fmt, ...)
{
	char buf[512];
	va_list args;
	umem_print_fn_t fn = print_fn;
	int saved = errno;

	if (!fn)
		return;
	/* One prefix for every message, added here so callers never repeat it. */
	snprintf(buf, sizeof(buf), "libumem: %s", fmt);
	va_start(args, fmt);
	fn(level, buf, args);
	va_end(args);
	/* The printer (getsockopt, stdio, the application's) may change errno; callers read it
	 * after logging, as around any other library call that does not fail. */
	errno = saved;
}

void umem__die(const char *fmt, ...)
{
	va_list args;

	if (stderr_is_xsk())
		abort();
	fputs("libumem: FATAL: ", stderr);
	va_start(args, fmt);
	vfprintf(stderr, fmt, args);
	va_end(args);
	fputc('\n', stderr);
	fflush(stderr);
	abort();
}
