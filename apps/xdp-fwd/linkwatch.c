/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "linkwatch.h"

/* Messages are read one datagram at a time; a datagram may carry several (NLM_F_MULTI is not
 * used for notifications, but the kernel may batch), so the rest is kept here. */
static struct {
	char buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
	ssize_t len;
	struct nlmsghdr *next;
} rx;

int fwd_linkwatch_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = RTMGRP_LINK };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = -errno;

		close(fd);
		return err;
	}
	rx.len = 0;
	rx.next = NULL;
	return fd;
}

static void parse(struct nlmsghdr *h, struct fwd_link_event *ev)
{
	struct ifinfomsg *ifi = NLMSG_DATA(h);
	int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*ifi));

	*ev = (struct fwd_link_event){ .deleted = h->nlmsg_type == RTM_DELLINK,
				       .ifindex = (uint32_t)ifi->ifi_index };
	for (struct rtattr *a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == IFLA_IFNAME) {
			size_t n = RTA_PAYLOAD(a) < sizeof(ev->ifname) ? RTA_PAYLOAD(a) : sizeof(ev->ifname) - 1;

			memcpy(ev->ifname, RTA_DATA(a), n);
			ev->ifname[n < sizeof(ev->ifname) ? n : sizeof(ev->ifname) - 1] = '\0';
		} else if (a->rta_type == IFLA_MTU && RTA_PAYLOAD(a) >= sizeof(uint32_t)) {
			memcpy(&ev->mtu, RTA_DATA(a), sizeof(ev->mtu));
		}
	}
}

int fwd_linkwatch_next(int fd, struct fwd_link_event *ev)
{
	for (;;) {
		int left;

		if (!rx.next) {
			rx.len = recv(fd, rx.buf, sizeof(rx.buf), MSG_DONTWAIT);
			if (rx.len < 0)
				return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
			rx.next = (struct nlmsghdr *)rx.buf;
		}
		left = (int)(rx.len - ((char *)rx.next - rx.buf));
		if (!NLMSG_OK(rx.next, left)) {
			rx.next = NULL;
			continue;
		}
		struct nlmsghdr *h = rx.next;

		rx.next = NLMSG_NEXT(h, left);
		if (!NLMSG_OK(rx.next, left))
			rx.next = NULL;
		if ((h->nlmsg_type == RTM_NEWLINK || h->nlmsg_type == RTM_DELLINK) &&
		    h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct ifinfomsg))) {
			parse(h, ev);
			return 1;
		}
	}
}

void fwd_linkwatch_close(int fd)
{
	if (fd >= 0)
		close(fd);
}
