/* SPDX-License-Identifier: MIT */
/*
 * Private network namespaces for C tests (label netns) and the benchmarks that build veth
 * topologies (port-bench): shared by tools and tests, so it lives with the shared tool code.
 *
 * netns_private() moves the test into a fresh namespace ("local") and creates a second one
 * ("peer"); both are held only by this process (the thread's namespace and an fd), so they and
 * every interface inside them vanish when the test exits, on any path, crash included: nothing
 * to clean up, nothing left behind. Commands run in either namespace with netns_run().
 * Exits 77 (skip) when not root or namespaces are unavailable.
 */
#ifndef UMEM_TEST_NETNS_H
#define UMEM_TEST_NETNS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* setns, unshare: include this header first */
#endif
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

struct netns_pair {
	int local; /* fd of the namespace the test runs in */
	int peer;  /* fd of the other namespace */
};

static inline int netns_open_self(void)
{
	return open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
}

/* Runs a shell command (printf format) inside namespace nsfd; returns its exit status. */
static inline int __attribute__((format(printf, 2, 3))) netns_run(int nsfd, const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int status;
	pid_t pid;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		if (setns(nsfd, CLONE_NEWNET))
			_exit(126);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* Like netns_run, but a failure ends the test. */
#define NETNS_MUST(nsfd, ...)                                                               \
	do {                                                                                \
		if (netns_run(nsfd, __VA_ARGS__)) {                                         \
			fprintf(stderr, "%s:%d: command failed: ", __FILE__, __LINE__);     \
			fprintf(stderr, __VA_ARGS__);                                       \
			fputc('\n', stderr);                                                \
			exit(1);                                                            \
		}                                                                           \
	} while (0)

/* Opens a socket that lives in namespace nsfd (a socket keeps the namespace it was created in). */
static inline int netns_socket(const struct netns_pair *ns, int nsfd, int domain, int type, int proto)
{
	int fd;

	if (setns(nsfd, CLONE_NEWNET))
		return -1;
	fd = socket(domain, type, proto);
	if (setns(ns->local, CLONE_NEWNET)) {
		perror("setns back");
		exit(1);
	}
	return fd;
}

/* ifindex of an interface of namespace nsfd (0 when missing). */
static inline int netns_ifindex(const struct netns_pair *ns, int nsfd, const char *ifname)
{
	int idx;

	if (setns(nsfd, CLONE_NEWNET))
		return 0;
	idx = (int)if_nametoindex(ifname);
	if (setns(ns->local, CLONE_NEWNET)) {
		perror("setns back");
		exit(1);
	}
	return idx;
}

/* Enters a private namespace and creates the peer one; IPv6 off in both so no router or
 * neighbour solicitation shows up among the frames a test inspects (a kernel booted with
 * ipv6.disable=1, as the QEMU guests of tools/zc-vm.sh, has none to turn off). */
static inline void netns_private(struct netns_pair *ns)
{
	if (geteuid() != 0) {
		fprintf(stderr, "skip: needs root\n");
		exit(77);
	}
	if (unshare(CLONE_NEWNET)) {
		perror("skip: unshare(CLONE_NEWNET)");
		exit(77);
	}
	ns->local = netns_open_self();
	if (ns->local < 0 || unshare(CLONE_NEWNET)) {
		perror("skip: second namespace");
		exit(77);
	}
	ns->peer = netns_open_self();
	if (ns->peer < 0 || setns(ns->local, CLONE_NEWNET)) {
		perror("skip: setns");
		exit(77);
	}
	for (int i = 0; i < 2; i++)
		NETNS_MUST(i ? ns->peer : ns->local, "ip link set lo up && { [ ! -d /proc/sys/net/ipv6 ] || "
			   "sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1; }");
}

/* A veth pair with nqueues RX and TX queues per end (0: 1): local_if in the test's namespace,
 * peer_if in the peer namespace. */
static inline void netns_veth(const struct netns_pair *ns, const char *local_if, const char *peer_if,
			      unsigned nqueues)
{
	nqueues = nqueues ? nqueues : 1;
	NETNS_MUST(ns->peer, "ip link add %s numtxqueues %u numrxqueues %u type veth peer name %s "
		   "numtxqueues %u numrxqueues %u netns %d", peer_if, nqueues, nqueues, local_if,
		   nqueues, nqueues, (int)getpid());
}

#endif
