/* SPDX-License-Identifier: MIT */
/* Facts about a network device that ports and steering both need. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <linux/xdp_diag.h>
#include "internal.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

/* ETHTOOL_GCHANNELS: 0, or negative errno (-EOPNOTSUPP: the driver has no get_channels, e.g.
 * lo, bridges, tun, mvpp2). */
static int get_channels(const char *ifname, struct ethtool_channels *ch)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	*ch = (struct ethtool_channels){ .cmd = ETHTOOL_GCHANNELS };
	strncpy(ifr.ifr_name, ifname, IF_NAMESIZE - 1);
	ifr.ifr_data = (void *)ch;
	if (ioctl(fd, SIOCETHTOOL, &ifr))
		err = -errno;
	close(fd);
	return err;
}

/* The RX queues the device was created with (IFLA_NUM_RX_QUEUES), asked by ifindex over
 * rtnetlink, so the answer is the caller's namespace's (sysfs may show another one). 0 when
 * unknown. */
static uint32_t netlink_rx_queues(int ifindex)
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
	} req = {
		.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETLINK, .nlmsg_flags = NLM_F_REQUEST },
		.ifi = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex },
	};
	union {
		struct nlmsghdr nh; /* aligns the buffer for the headers in it */
		char buf[16384];
	} resp;
	uint32_t n = 0;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	ssize_t len;

	if (fd < 0)
		return 0;
	if (send(fd, &req, sizeof(req), 0) < 0 || (len = recv(fd, resp.buf, sizeof(resp.buf), 0)) < 0) {
		close(fd);
		return 0;
	}
	close(fd);
	/* Walked by hand: the <linux/netlink.h> macros cast char * to aligned types (-Wcast-align). */
	for (char *pos = resp.buf; len >= (ssize_t)sizeof(struct nlmsghdr);) {
		struct nlmsghdr *nh = (void *)pos;
		char *a, *end;

		if (nh->nlmsg_len < sizeof(*nh) || nh->nlmsg_len > (size_t)len)
			break;
		end = pos + nh->nlmsg_len;
		a = (char *)NLMSG_DATA(nh) + NLMSG_ALIGN(sizeof(struct ifinfomsg));
		while (nh->nlmsg_type == RTM_NEWLINK && a + sizeof(struct rtattr) <= end) {
			struct rtattr *ra = (void *)a;

			if (ra->rta_len < sizeof(*ra) || a + ra->rta_len > end)
				break;
			if (ra->rta_type == IFLA_NUM_RX_QUEUES && RTA_PAYLOAD(ra) >= sizeof(uint32_t))
				memcpy(&n, RTA_DATA(ra), sizeof(n));
			a += RTA_ALIGN(ra->rta_len);
		}
		len -= NLMSG_ALIGN(nh->nlmsg_len);
		pos += NLMSG_ALIGN(nh->nlmsg_len);
	}
	return n;
}

int umem__netdev_rx_queues(const char *ifname, int ifindex, uint32_t *cur, uint32_t *max)
{
	struct ethtool_channels ch;
	int err = get_channels(ifname, &ch);

	*cur = *max = 0;
	/* AF_XDP queue ids index RX queues: the combined channels first, then RX-only ones.
	 * The channel count follows `ethtool -L`; the maxima bound the ids. */
	if (!err) {
		*cur = ch.combined_count + ch.rx_count;
		*max = ch.max_combined + ch.max_rx;
	}
	/* Drivers without get_channels, and emulators (qemu-user) that do not pass SIOCETHTOOL
	 * through, fall back to the queues the device was created with. */
	if (!*cur)
		*cur = netlink_rx_queues(ifindex);
	if (*max < *cur)
		*max = *cur;
	return *cur ? 0 : err ? err : -EOPNOTSUPP;
}

static void proc_comm(long pid, char *comm, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(comm, len, "?");
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	if ((f = fopen(path, "re"))) {
		if (fgets(comm, (int)len, f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
}

/* Whether an fd of process pid (its /proc/<pid>/fd/N path) satisfies fd_is. */
static bool proc_has_fd(long pid, bool (*fd_is)(const char *path, const void *arg), const void *arg)
{
	char path[64];
	struct dirent *fe;
	bool found = false;
	DIR *fds;

	snprintf(path, sizeof(path), "/proc/%ld/fd", pid);
	if (!(fds = opendir(path)))
		return false; /* gone, or not ours to inspect */
	while (!found && (fe = readdir(fds))) {
		snprintf(path, sizeof(path), "/proc/%ld/fd/%.16s", pid, fe->d_name);
		found = fd_is(path, arg);
	}
	closedir(fds);
	return found;
}

static bool fd_is_socket(const char *path, const void *want)
{
	char link[32];
	ssize_t n = readlink(path, link, sizeof(link) - 1);

	return n > 0 && (link[n] = '\0', !strcmp(link, want));
}

/* sockfs names a socket's protocol in the xattr system.sockprotoname. */
/* The link of a socket fd reads "socket:[INODE]"; only then is its protocol asked for: a
 * getxattr() on any other fd reaches the file behind it (a FUSE server, a hung NFS mount). */
bool umem__netdev_fd_is_xsk(const char *path)
{
	char link[32], proto[16];
	ssize_t n = readlink(path, link, sizeof(link) - 1);

	if (n <= 0 || (link[n] = '\0', strncmp(link, "socket:[", 8)))
		return false;
	n = getxattr(path, "system.sockprotoname", proto, sizeof(proto) - 1);
	return n > 0 && (proto[n] = '\0', !strcmp(proto, "XDP"));
}

static bool fd_is_xsk(const char *path, const void *arg)
{
	(void)arg;
	return umem__netdev_fd_is_xsk(path);
}

/* Appends "pid N (comm)" for every process of this network namespace (but this one unless
 * self) with an fd that fd_is, comma-separated; first only: stops at the first. Returns how
 * many were named. Only the processes this one may inspect are seen. */
static int name_processes(bool (*fd_is)(const char *, const void *), const void *arg, bool self,
			  bool first, char *who, size_t len)
{
	struct stat self_ns, ns;
	DIR *procs = opendir("/proc");
	struct dirent *pe;
	size_t o = 0;
	int named = 0;

	who[0] = '\0';
	if (!procs)
		return 0;
	if (stat("/proc/self/ns/net", &self_ns)) {
		closedir(procs);
		return 0;
	}
	while ((pe = readdir(procs)) && o + 1 < len && !(first && named)) {
		char path[64], comm[32];
		char *e;
		long pid = strtol(pe->d_name, &e, 10);

		if (pid <= 0 || *e || (!self && pid == (long)getpid()))
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/ns/net", pid);
		if (stat(path, &ns) || ns.st_ino != self_ns.st_ino || ns.st_dev != self_ns.st_dev ||
		    !proc_has_fd(pid, fd_is, arg))
			continue;
		proc_comm(pid, comm, sizeof(comm));
		o += (size_t)snprintf(who + o, len - o, "%spid %ld (%s)", o ? ", " : "", pid, comm);
		named++;
	}
	closedir(procs);
	return named;
}

int umem__netdev_xsk_holder(int ifindex, uint32_t queue, char *who, size_t len)
{
	struct {
		struct nlmsghdr nh;
		struct xdp_diag_req r;
	} req = {
		.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.r = { .sdiag_family = AF_XDP, .xdiag_show = XDP_SHOW_INFO },
	};
	union {
		struct nlmsghdr nh;
		char buf[16384];
	} resp;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG), ret = -ENOENT;
	uint32_t ino = 0;

	who[0] = '\0'; /* the callers print it when this fails too */
	if (fd < 0)
		return -errno;
	if (send(fd, &req, sizeof(req), 0) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	/* A dump: datagrams until NLMSG_DONE. Walked by hand, as above. */
	for (bool done = false; !done && !ino;) {
		ssize_t n = recv(fd, resp.buf, sizeof(resp.buf), 0);

		if (n < 0) {
			ret = -errno;
			break;
		}
		for (char *pos = resp.buf; n >= (ssize_t)sizeof(struct nlmsghdr);) {
			struct nlmsghdr *nh = (void *)pos;
			struct xdp_diag_msg msg;
			char *a, *end;

			if (nh->nlmsg_type == NLMSG_ERROR)
				ret = -EOPNOTSUPP; /* no AF_XDP sock_diag (CONFIG_XDP_SOCKETS_DIAG) */
			if (nh->nlmsg_len < sizeof(*nh) || nh->nlmsg_len > (size_t)n ||
			    nh->nlmsg_type == NLMSG_DONE || nh->nlmsg_type == NLMSG_ERROR) {
				done = true;
				break;
			}
			end = pos + nh->nlmsg_len;
			memcpy(&msg, NLMSG_DATA(nh), sizeof(msg));
			a = (char *)NLMSG_DATA(nh) + NLMSG_ALIGN(sizeof(msg));
			while (a + sizeof(struct rtattr) <= end) {
				struct rtattr *ra = (void *)a;
				struct xdp_diag_info info;

				if (ra->rta_len < sizeof(*ra) || a + ra->rta_len > end)
					break;
				if (ra->rta_type == XDP_DIAG_INFO && RTA_PAYLOAD(ra) >= sizeof(info)) {
					memcpy(&info, RTA_DATA(ra), sizeof(info));
					if ((int)info.ifindex == ifindex && info.queue_id == queue)
						ino = msg.xdiag_ino;
				}
				a += RTA_ALIGN(ra->rta_len);
			}
			n -= NLMSG_ALIGN(nh->nlmsg_len);
			pos += NLMSG_ALIGN(nh->nlmsg_len);
		}
	}
	close(fd);
	who[0] = '\0';
	if (ino) {
		char want[32];

		snprintf(want, sizeof(want), "socket:[%u]", ino);
		if (!name_processes(fd_is_socket, want, true, true, who, len))
			snprintf(who, len, "socket inode %u, in no process this one can see", ino);
		return 1;
	}
	if (ret != -ENOENT)
		name_processes(fd_is_xsk, NULL, false, false, who, len);
	return ret == -ENOENT ? 0 : ret;
}
