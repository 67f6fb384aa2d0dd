/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <umem/port.h>

#include "linkwatch.h"
#include "live.h"
#include "offload.h"
#include "privs.h"
#include "rules.h"

static int watch_fd = -1;
/* The ifindex each interface's ports are open on (at its first port; 0 while closed). Events
 * are matched by it: a name is only how an interface is found, and a rename (m1 to m9, a new
 * m1 created) leaves the ports on the old device under a name that is no longer theirs. */
static uint32_t open_on[FWD_MAX_PORTS];

static const struct fwd_live_ops *ops;

int fwd_live_open(struct fwd_ctx *ctx, const struct fwd_live_ops *o)
{
	ops = o;
	for (uint32_t i = 0; i < ctx->nr_ports; i++)
		open_on[i] = ctx->ports[i].port ? if_nametoindex(ctx->cfg->ports[i].ifname) : 0;
	watch_fd = fwd_linkwatch_open();
	return watch_fd < 0 ? watch_fd : 0;
}

void fwd_live_close(struct fwd_ctx *ctx)
{
	(void)ctx;
	fwd_linkwatch_close(watch_fd);
	watch_fd = -1;
}

/* The first port on ifname, or UINT32_MAX when it is not one of ours. */
static uint32_t first_port(const struct fwd_ctx *ctx, const char *ifname)
{
	for (uint32_t i = 0; i < ctx->nr_ports; i++)
		if (!strcmp(ctx->cfg->ports[i].ifname, ifname))
			return i;
	return UINT32_MAX;
}

static bool iface_open(const struct fwd_ctx *ctx, uint32_t first)
{
	const char *ifname = ctx->cfg->ports[first].ifname;

	for (uint32_t i = first; i < ctx->nr_ports; i++)
		if (!strcmp(ctx->cfg->ports[i].ifname, ifname) && ctx->ports[i].port)
			return true;
	return false;
}

/* Closes the ports of the interface of port first, and its steering program unless
 * keep_steering (its empty socket slots pass frames to the kernel, counted as no_socket, while
 * the ports are away); workers parked. */
static void close_iface(struct fwd_ctx *ctx, uint32_t first, bool keep_steering)
{
	const char *ifname = ctx->cfg->ports[first].ifname;

	if (keep_steering) {
		ops->steer_sockets(ctx, first, false);
	} else {
		fwd_offload_iface_down(ctx, ctx->ports[first].iface);
		ops->close_steering(ctx, first);
	}
	for (uint32_t i = first; i < ctx->nr_ports; i++)
		if (!strcmp(ctx->cfg->ports[i].ifname, ifname))
			ops->close_port(ctx, i);
	open_on[first] = 0;
}

/* Opens them again; capabilities raised. On failure what opened is closed again. */
static int open_iface(struct fwd_ctx *ctx, uint32_t first)
{
	const char *ifname = ctx->cfg->ports[first].ifname;
	int err = 0;

	for (uint32_t i = first; i < ctx->nr_ports && !err; i++)
		if (!strcmp(ctx->cfg->ports[i].ifname, ifname))
			err = ops->open_port(ctx, i);
	if (!err && fwd_wants_steering(ctx->cfg))
		err = ctx->steer[first] ? ops->steer_sockets(ctx, first, true) :
		      ops->open_steering(ctx, first) ?: fwd_offload_iface_up(ctx, first);
	if (err)
		close_iface(ctx, first, false);
	else
		open_on[first] = if_nametoindex(ifname);
	return err;
}

/* The first port of the interface open on ifindex, or UINT32_MAX. */
static uint32_t port_on_index(const struct fwd_ctx *ctx, uint32_t ifindex)
{
	for (uint32_t i = 0; ifindex && i < ctx->nr_ports; i++)
		if (open_on[i] == ifindex && first_port(ctx, ctx->cfg->ports[i].ifname) == i)
			return i;
	return UINT32_MAX;
}

static void port_list(const struct fwd_ctx *ctx, uint32_t first, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (uint32_t i = first; i < ctx->nr_ports && o < len; i++)
		if (!strcmp(ctx->cfg->ports[i].ifname, ctx->cfg->ports[first].ifname))
			o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? "," : "", ctx->ports[i].name);
}

/* why: "gone", or "renamed to NAME" (the device stays, but the name the ports were asked
 * for now names another interface or none). */
static void gone(struct fwd_ctx *ctx, uint32_t first, const char *why)
{
	const char *ifname = ctx->cfg->ports[first].ifname;
	char ports[256];

	if (!iface_open(ctx, first))
		return;
	port_list(ctx, first, ports, sizeof(ports));
	fprintf(stderr, "xdp-fwd: %s: interface %s: port%s %s stopped, frames for %s counted as "
		"drops (down)%s\n", ifname, why, strchr(ports, ',') ? "s" : "", ports,
		strchr(ports, ',') ? "them" : "it",
		ctx->cfg->reattach ? "; re-attached when an interface of that name is back" :
				     "; --no-reattach: not re-attached");
	if (!fwd_workers_park(ctx))
		return;
	close_iface(ctx, first, false);
	fwd_workers_unpark(ctx);
}

static int raise_caps(bool on)
{
	int err = fwd_privs_raise(on);

	if (err && on)
		fprintf(stderr, "xdp-fwd: cannot raise the capabilities to open ports: %s\n", strerror(-err));
	return err;
}

static void back(struct fwd_ctx *ctx, uint32_t first, uint32_t ifindex)
{
	const char *ifname = ctx->cfg->ports[first].ifname;
	char ports[256];
	int err;

	if (!ctx->cfg->reattach || iface_open(ctx, first))
		return;
	port_list(ctx, first, ports, sizeof(ports));
	if (raise_caps(true))
		return;
	if (!fwd_workers_park(ctx)) {
		raise_caps(false);
		return;
	}
	err = open_iface(ctx, first);
	fwd_workers_unpark(ctx);
	raise_caps(false);
	if (err)
		fprintf(stderr, "xdp-fwd: %s: interface back (ifindex %u) but its ports cannot be opened: "
			"%s; they stay stopped until the next change of %s\n", ifname, ifindex, strerror(-err),
			ifname);
	else
		fprintf(stderr, "xdp-fwd: %s: interface back (ifindex %u): %s re-attached\n", ifname,
			ifindex, ports);
}

/* An MTU that needs multi-buffer on a forwarder without it: every port reopened with it. */
static void mtu_changed(struct fwd_ctx *ctx, uint32_t first, uint32_t mtu)
{
	struct fwd_config *cfg = ctx->cfg;
	const char *ifname = cfg->ports[first].ifname;
	uint32_t chunk = cfg->chunk_size ? cfg->chunk_size : FWD_CHUNK_DEFAULT;
	int err = 0;

	if (cfg->multi_buffer || !fwd_mtu_needs_multi_buffer(cfg, mtu) || !iface_open(ctx, first))
		return;
	if (!cfg->reattach || raise_caps(true)) {
		fprintf(stderr, "xdp-fwd: %s: MTU %u is more than one %u-byte chunk holds, and the ports "
			"cannot be reopened with multi-buffer (%s): %s stopped rather than losing "
			"large frames silently; restart xdp-fwd (with --multi-buffer) or lower the MTU\n",
			ifname, mtu, chunk, cfg->reattach ? "no capabilities" : "--no-reattach", ifname);
		if (fwd_workers_park(ctx)) {
			close_iface(ctx, first, false);
			fwd_workers_unpark(ctx);
		}
		return;
	}
	fprintf(stderr, "xdp-fwd: %s: MTU %u is more than one %u-byte chunk holds: reopening every "
		"port with multi-buffer\n", ifname, mtu, chunk);
	if (!fwd_workers_park(ctx)) {
		raise_caps(false);
		return;
	}
	/* Multi-buffer is a UMEM-wide bind flag: every port goes, then comes back with it. */
	for (uint32_t i = 0; i < ctx->nr_ports; i++)
		if (first_port(ctx, cfg->ports[i].ifname) == i)
			close_iface(ctx, i, true);
	cfg->multi_buffer = true;
	for (uint32_t i = 0; i < ctx->nr_ports; i++) {
		int e;

		if (first_port(ctx, cfg->ports[i].ifname) != i || !if_nametoindex(cfg->ports[i].ifname))
			continue;
		e = open_iface(ctx, i);
		if (e) {
			fprintf(stderr, "xdp-fwd: %s: cannot reopen its ports with multi-buffer: %s; they "
				"stay stopped\n", cfg->ports[i].ifname, strerror(-e));
			err = e;
		}
	}
	fwd_workers_unpark(ctx);
	raise_caps(false);
	if (!err)
		fprintf(stderr, "xdp-fwd: ports reopened with multi-buffer (MTU %u on %s)\n", mtu, ifname);
}

/* After lost events: compare with the interfaces as they are now. */
static void resync(struct fwd_ctx *ctx)
{
	for (uint32_t i = 0; i < ctx->nr_ports; i++) {
		const char *ifname = ctx->cfg->ports[i].ifname;
		uint32_t idx;

		if (first_port(ctx, ifname) != i)
			continue;
		idx = if_nametoindex(ifname);
		if (open_on[i] && idx != open_on[i])
			gone(ctx, i, "gone");
		if (idx)
			back(ctx, i, idx);
	}
}

/* A live edit (umem-steer) may send frames to a socket index no port of ours serves: the
 * program passes them to the kernel (no_socket), so the edit is named once, when the table
 * changes. */
struct live_check {
	struct fwd_ctx *ctx;
	const char *ifname;
};

static int check_live_rule(const struct umem_steer_rule *rule, const struct umem_steer_counter *count, void *arg)
{
	const struct live_check *lc = arg;
	const struct umem_steer_action *a = &rule->action;
	uint32_t n = a->type == UMEM_STEER_A_SOCK ? 1 : a->type == UMEM_STEER_A_GROUP ? a->count : 0;
	char text[160];

	(void)count;
	for (uint32_t k = 0; k < n; k++) {
		if (fwd_socket_served(lc->ctx->cfg, lc->ifname, a->index + k))
			continue;
		umem_steer_rule__format(rule, text, sizeof(text));
		fprintf(stderr, "xdp-fwd: warning: %s: rule %u '%s' (edited live) sends frames to socket "
			"%u, which no port of xdp-fwd serves: they go to the kernel (counted as "
			"no_socket)\n", lc->ifname, rule->id, text, a->index + k);
		break;
	}
	return 0;
}

static void check_live_rules(struct fwd_ctx *ctx, uint32_t first)
{
	struct live_check lc = { ctx, ctx->cfg->ports[first].ifname };
	struct umem_steer_info info = { .sz = sizeof(info) };
	struct umem_steer_rule rules[UMEM_STEER_MAX_RULES];
	int n;

	if (umem_steer__info(ctx->steer[first], &info) || info.generation == ctx->steer_gen[first])
		return;
	n = umem_steer__rules(ctx->steer[first], rules, UMEM_STEER_MAX_RULES);
	for (int r = 0; r < n && r < UMEM_STEER_MAX_RULES; r++)
		check_live_rule(&rules[r], NULL, &lc);
	umem_steer__prefix_rules(ctx->steer[first], check_live_rule, &lc);
	ctx->steer_gen[first] = info.generation;
}

#define FWD_QUEUES_CHECK_NS 1000000000ull /* ethtool -L sends no link event: looked at this often */

/* -i IFNAME@all opened the queues the interface had at start. A later `ethtool -L` changes the
 * count without a link event, and the device then spreads frames over queues no socket serves
 * (they go to the kernel's stack). The ports are not reopened for it (the area, the pools and
 * the workers are sized at start); it is said, once per change, with what to do. */
static void check_queue_counts(struct fwd_ctx *ctx)
{
	static uint64_t next;
	static uint32_t seen[FWD_MAX_PORTS]; /* per spec: the count last reported (0: at start) */
	uint64_t now = fwd_now_ns();

	if (now < next)
		return;
	next = now + FWD_QUEUES_CHECK_NS;
	for (uint32_t i = 0; i < ctx->cfg->nr_specs; i++) {
		const struct fwd_if_spec *s = &ctx->cfg->specs[i];
		uint32_t served = s->last + 1, was = seen[i] ? seen[i] : served;
		int n;

		if (!s->from_all || (n = umem_port__queue_count(s->ifname)) <= 0 || (uint32_t)n == was)
			continue;
		seen[i] = (uint32_t)n;
		if ((uint32_t)n > served)
			fprintf(stderr, "xdp-fwd: warning: %s now has %d RX queues (was %u): -i %s@all serves "
				"the %u it had at start; frames on queues %u-%d go to the kernel's stack, "
				"not through xdp-fwd (restart xdp-fwd to serve them)\n", s->ifname, n, was,
				s->ifname, served, served, n - 1);
		else if ((uint32_t)n < served)
			fprintf(stderr, "xdp-fwd: %s now has %d RX queue%s (was %u): the ports of queues "
				"%d-%u stay open and idle\n", s->ifname, n, n > 1 ? "s" : "", was, n,
				served - 1);
		else
			fprintf(stderr, "xdp-fwd: %s has its %d RX queues again (was %u): every queue is "
				"served\n", s->ifname, n, was);
	}
}

void fwd_live_poll(struct fwd_ctx *ctx)
{
	check_queue_counts(ctx);
	for (uint32_t i = 0; ctx->cfg->nr_rules && i < ctx->nr_ports; i++)
		if (ctx->steer[i])
			check_live_rules(ctx, i);
	struct fwd_link_event ev;
	int r;

	if (watch_fd < 0)
		return;
	while ((r = fwd_linkwatch_next(watch_fd, &ev)) != 0) {
		uint32_t first;

		if (r < 0) {
			if (r == -ENOBUFS)
				resync(ctx);
			if (r != -ENOBUFS && r != -EINTR)
				return;
			continue;
		}
		/* The device our ports are on: deleted (or moved to another namespace), or
		 * renamed away from the configured name. */
		first = port_on_index(ctx, ev.ifindex);
		if (first != UINT32_MAX) {
			char why[IF_NAMESIZE + 16];

			if (ev.deleted) {
				gone(ctx, first, "gone");
				continue;
			}
			if (ev.ifname[0] && strcmp(ev.ifname, ctx->cfg->ports[first].ifname)) {
				snprintf(why, sizeof(why), "renamed to %s", ev.ifname);
				gone(ctx, first, why);
				continue;
			}
		}
		first = ev.ifname[0] ? first_port(ctx, ev.ifname) : UINT32_MAX;
		if (first == UINT32_MAX || ev.deleted)
			continue; /* not ours, or an interface of our name that we are not on */
		if (open_on[first] && open_on[first] != ev.ifindex) {
			/* Our name on another device while we are open on one: events were lost */
			gone(ctx, first, "gone");
		}
		if (!iface_open(ctx, first)) {
			back(ctx, first, ev.ifindex);
			if (ev.mtu) /* back with an MTU the ports were not opened for */
				mtu_changed(ctx, first, ev.mtu);
		} else if (ev.mtu) {
			mtu_changed(ctx, first, ev.mtu);
		}
	}
}
