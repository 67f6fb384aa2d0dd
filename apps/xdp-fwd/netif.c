/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/sockios.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <umem/port.h>

#include "ctx.h"
#include "netif.h"

/* --- what the kernel says about an interface ------------------------------------------ */

/* An interface ioctl on ifname in this namespace: 0 or -1 (ifr, or data, filled by the kernel). */
static int interface_ioctl_data(const char *ifname, unsigned long req, struct ifreq *ifr, void *data)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r;

	if (fd < 0)
		return -1;
	memset(ifr, 0, sizeof(*ifr));
	snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", ifname);
	ifr->ifr_data = data;
	r = ioctl(fd, req, ifr);
	close(fd);
	return r;
}

static int interface_ioctl(const char *ifname, unsigned long req, struct ifreq *ifr)
{
	return interface_ioctl_data(ifname, req, ifr, NULL);
}

/* Combined plus RX-only channels. */
uint32_t fwd_ifname_queue_max(const char *ifname)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	struct ifreq ifr;

	return interface_ioctl_data(ifname, SIOCETHTOOL, &ifr, &ch) ? 0 : ch.max_combined + ch.max_rx;
}

uint32_t fwd_ifname_mtu(const char *ifname)
{
	struct ifreq ifr;

	return interface_ioctl(ifname, SIOCGIFMTU, &ifr) ? 0 : (uint32_t)ifr.ifr_mtu;
}

/* False also when it is gone. */
bool fwd_ifname_running(const char *ifname)
{
	struct ifreq ifr;

	return !interface_ioctl(ifname, SIOCGIFFLAGS, &ifr) && (ifr.ifr_flags & IFF_UP) &&
	       (ifr.ifr_flags & IFF_RUNNING);
}

void fwd_ifaces_read_links(struct fwd_ctx *ctx)
{
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		ctx->ifaces[f].link_down = !fwd_ifname_running(ctx->ifaces[f].name);
}

/* The kernel's TX drops (a veth counts there the frames it frees because its peer's ring is
 * full or its peer cannot take them, after xdp-fwd sent them). A device seen again after it was
 * gone (or on another ifindex) starts a new base: its count restarted, and what it counted
 * before xdp-fwd saw it was not xdp-fwd's. getifaddrs, not sysfs: the link dump is of this
 * process's namespace. offload.c takes the same drops out of "lost". */
struct tx_kernel_read {
	struct fwd_ctx *ctx;
	bool found[FWD_MAX_PORTS];
};

static void tx_kernel_one(void *arg, const char *name, uint32_t ifindex, const struct rtnl_link_stats *st)
{
	struct tx_kernel_read *r = arg;
	struct fwd_ctx *ctx = r->ctx;
	struct fwd_iface *f = fwd_iface_find(ctx->ifaces, ctx->nr_ifaces, name);
	uint64_t before;

	if (!f)
		return;
	before = f->tx_kernel_dropped.total;
	if (f->tx_kernel_dropped.seen && f->tx_kernel_ifindex == ifindex) {
		fwd_count(&ctx->ports[f->first].ctr.drop[FWD_DROP_TX_KERNEL],
			  fwd_wide32_read(&f->tx_kernel_dropped, st->tx_dropped) - before);
	} else { /* a new base: first seen, back, or another device under the name */
		f->tx_kernel_ifindex = ifindex;
		f->tx_kernel_dropped = (struct fwd_wide32){ 0 };
		fwd_wide32_read(&f->tx_kernel_dropped, st->tx_dropped);
	}
	r->found[f->idx] = true;
}

void fwd_ifaces_read_tx_kernel(struct fwd_ctx *ctx)
{
	struct tx_kernel_read r = { .ctx = ctx };

	ctx->tx_kernel_at = fwd_now_ns();
	if (fwd_each_link(tx_kernel_one, &r))
		return; /* the next read counts what this one would have */
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		if (!r.found[f])
			ctx->ifaces[f].tx_kernel_dropped.seen = false;
}

/* --- warnings at start ---------------------------------------------------------------- */

/* RX queues that no port serves: their frames never reach xdp-fwd (the port's program and
 * the steering program both pass a frame without a socket to the kernel). */
static void warn_unserved_queues(const struct fwd_ctx *ctx, const struct fwd_iface *f)
{
	const struct fwd_config *cfg = ctx->cfg;
	int n = umem_netdev__queue_count(f->name);
	char list[128];
	uint32_t missing = 0;
	size_t o = 0;

	for (uint32_t q = 0; n > 0 && q < (uint32_t)n; q++) {
		bool served = false;

		for (uint32_t j = f->first; j < ctx->nr_ports; j++)
			served |= ctx->ports[j].iface == f->idx && cfg->ports[j].queue == q;
		if (served)
			continue;
		if (o < sizeof(list))
			o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%u", missing ? "," : "", q);
		missing++;
	}
	if (!missing)
		return;
	fprintf(stderr, "xdp-fwd: warning: %s: RX queue%s %s of %d %s served by no socket: the frames "
		"the device puts there go to the kernel's stack, not through xdp-fwd (serve them "
		"with -i %s@all, or steer them to queue %u with ethtool -X/-N)\n",
		f->name, missing > 1 ? "s" : "", list, n, missing > 1 ? "are" : "is", f->name,
		cfg->ports[f->first].queue);
}

/* An interface that is down (or without carrier) forwards nothing until it is up: said once
 * per interface at start, since xdp-fwd itself runs as if all were well. */
static void warn_down(const struct fwd_iface *f)
{
	struct ifreq ifr;

	if (interface_ioctl(f->name, SIOCGIFFLAGS, &ifr))
		return;
	if (!(ifr.ifr_flags & IFF_UP))
		fprintf(stderr, "xdp-fwd: warning: %s is down: its ports open, but nothing is "
			"received or sent there until it is up (ip link set dev %s up)\n", f->name, f->name);
	else if (!(ifr.ifr_flags & IFF_RUNNING))
		fprintf(stderr, "xdp-fwd: warning: %s has no carrier (its peer or cable is down): "
			"nothing is received or sent there until it has\n", f->name);
}

void fwd_ifaces_warn(const struct fwd_ctx *ctx)
{
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		warn_unserved_queues(ctx, &ctx->ifaces[f]);
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		warn_down(&ctx->ifaces[f]);
}
