/* SPDX-License-Identifier: MIT */
/* Naming the process that holds a busy queue walks the fds of every process of the namespace:
 * only socket fds may be asked for their protocol (getxattr "system.sockprotoname"); asking a
 * FIFO, a file or a device reaches what is behind it (a FUSE server, a hung NFS mount). This
 * wraps getxattr() and checks every fd of this process: the non-sockets are never asked, the
 * sockets are, and an AF_XDP socket is told apart from a UDP one. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "testutil.h"
#include "internal.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

static int asked_non_socket, asked_socket;

/* The library's calls land here (the test links it statically); counted, then passed on. */
ssize_t getxattr(const char *path, const char *name, void *value, size_t size)
{
	static ssize_t (*real)(const char *, const char *, void *, size_t);
	char link[64];
	ssize_t n = readlink(path, link, sizeof(link) - 1);

	if (!real)
		real = (ssize_t (*)(const char *, const char *, void *, size_t))dlsym(RTLD_NEXT, "getxattr");
	if (n > 0 && (link[n] = '\0', !strncmp(link, "socket:[", 8)))
		asked_socket++;
	else
		asked_non_socket++;
	return real ? real(path, name, value, size) : -1;
}

static bool is_xsk(int fd)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return umem__netdev_fd_is_xsk(path);
}

int main(void)
{
	int pipefd[2], file = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	int udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int xsk = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	struct dirent *e;
	DIR *d;

	CHECK(pipe(pipefd) == 0, "pipe: %d", errno);
	CHECK(file >= 0 && udp >= 0 && devnull >= 0, "open: %d", errno);
	CHECK(!is_xsk(pipefd[0]) && !is_xsk(file) && !is_xsk(devnull), "a non-socket taken for AF_XDP");
	CHECK_EQ(asked_non_socket, 0);
	CHECK(!is_xsk(udp), "a UDP socket taken for AF_XDP");
	CHECK_EQ(asked_socket, 1);
	if (xsk >= 0)
		CHECK(is_xsk(xsk), "the AF_XDP socket not recognized");
	else
		printf("no AF_XDP socket (%d): the other fds were checked\n", errno);
	/* Every fd this process has, as the holder search walks them. */
	d = opendir("/proc/self/fd");
	CHECK(d != NULL, "opendir: %d", errno);
	while ((e = readdir(d))) {
		char path[300];

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		if (e->d_name[0] != '.')
			(void)umem__netdev_fd_is_xsk(path);
	}
	closedir(d);
	CHECK_EQ(asked_non_socket, 0);
	printf("ok: %d socket fds asked, no other fd\n", asked_socket);
	return 0;
}
