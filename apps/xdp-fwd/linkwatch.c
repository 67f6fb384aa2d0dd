/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "linkwatch.h"

/* Messages are read one datagram at a time; a datagram may carry several, so the rest is kept
 * here (pos: the next message, len: the datagram's length). Walked by offsets: the headers
 * are naturally aligned in the buffer, which NLMSG_ALIGN keeps. */
static struct {
	char buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
	size_t len, pos;
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
	rx.len = rx.pos = 0;
	return fd;
}

static void parse(const struct nlmsghdr *h, struct fwd_link_event *ev)
{
	const char *a = (const char *)NLMSG_DATA(h) + NLMSG_ALIGN(sizeof(struct ifinfomsg));
	const char *end = (const char *)h + h->nlmsg_len;
	struct ifinfomsg ifi;

	memcpy(&ifi, NLMSG_DATA(h), sizeof(ifi));
	*ev = (struct fwd_link_event){ .deleted = h->nlmsg_type == RTM_DELLINK, .ifindex = (uint32_t)ifi.ifi_index };
	while (a + sizeof(struct rtattr) <= end) {
		const struct rtattr *ra = (const void *)a;
		size_t n = RTA_PAYLOAD(ra);

		if (ra->rta_len < sizeof(*ra) || ra->rta_len > (size_t)(end - a))
			break;
		if (ra->rta_type == IFLA_IFNAME) {
			n = n < sizeof(ev->ifname) ? n : sizeof(ev->ifname) - 1;
			memcpy(ev->ifname, RTA_DATA(ra), n);
			ev->ifname[n] = '\0';
		} else if (ra->rta_type == IFLA_MTU && n >= sizeof(uint32_t)) {
			memcpy(&ev->mtu, RTA_DATA(ra), sizeof(ev->mtu));
		}
		a += RTA_ALIGN(ra->rta_len);
	}
}

int fwd_linkwatch_next(int fd, struct fwd_link_event *ev)
{
	for (;;) {
		const struct nlmsghdr *h;

		if (rx.pos + sizeof(*h) > rx.len) {
			ssize_t n = recv(fd, rx.buf, sizeof(rx.buf), MSG_DONTWAIT);

			rx.len = rx.pos = 0;
			if (n < 0)
				return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
			rx.len = (size_t)n;
			continue;
		}
		h = (const void *)(rx.buf + rx.pos);
		if (h->nlmsg_len < sizeof(*h) || h->nlmsg_len > rx.len - rx.pos) {
			rx.pos = rx.len; /* truncated: drop the rest of the datagram */
			continue;
		}
		rx.pos += NLMSG_ALIGN(h->nlmsg_len);
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
