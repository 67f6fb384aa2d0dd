/* SPDX-License-Identifier: MIT */
/* Facts about a network device that ports and steering both need. */
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include "internal.h"

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
