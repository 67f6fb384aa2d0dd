/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <umem/port.h>

#include "ctx.h"
#include "linkwatch.h"
#include "live.h"
#include "offload.h"
#include "ports.h"
#include "privs.h"
#include "rules.h"
#include "worker.h"

static int watch_fd = -1;

#ifdef XDP_FWD_FAULTS
#include <umem/fault.h>

/* The tests' build only (xdp-fwd-faults): XDP_FWD_FAULT_BIND_BUSY=N makes the first N binds
 * after set-up, the live path's, meet a queue the kernel has not released yet;
 * XDP_FWD_FAULT_PROBE_ENOMEM=N fails the first N delivery probes of flow offload with ENOMEM;
 * XDP_FWD_FAULT_INSTALL_STALL_MS=N stalls the worker N ms after each flow it offloads (and
 * XDP_FWD_FAULT_NO_META below). */
static void arm_faults(void)
{
	const char *e = getenv("XDP_FWD_FAULT_BIND_BUSY");

	if (e)
		umem__fault_bind_busy = (uint32_t)strtoul(e, NULL, 10);
	e = getenv("XDP_FWD_FAULT_PROBE_ENOMEM");
	if (e)
		fwd_fault_probe_enomem = (uint32_t)strtoul(e, NULL, 10);
	e = getenv("XDP_FWD_FAULT_INSTALL_STALL_MS");
	if (e)
		fwd_fault_install_stall_ms = (uint32_t)strtoul(e, NULL, 10);
}

/* XDP_FWD_FAULT_NO_META=1: the steering programs load without metadata marks, as where the
 * kernel gives XDP programs no bpf_xdp_adjust_meta (the gate marks go in front of the data).
 * Before main: set-up attaches them. */
__attribute__((constructor)) static void arm_early_faults(void)
{
	const char *e = getenv("XDP_FWD_FAULT_NO_META");

	if (e && *e == '1') {
		umem__fault_no_meta = 1;
		fprintf(stderr, "xdp-fwd: fault: XDP_FWD_FAULT_NO_META: the steering programs load without "
			"metadata marks\n");
	}
}
#else
static void arm_faults(void)
{
}
#endif

int fwd_live_open(struct fwd_ctx *ctx)
{
	arm_faults();
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		ctx->ifaces[f].ifindex = fwd_iface_open(ctx, &ctx->ifaces[f]) ? if_nametoindex(ctx->ifaces[f].name) : 0;
	watch_fd = fwd_linkwatch_open();
	return watch_fd < 0 ? watch_fd : 0;
}

void fwd_live_close(struct fwd_ctx *ctx)
{
	(void)ctx;
	fwd_linkwatch_close(watch_fd);
	watch_fd = -1;
}

/* Closes the ports of interface f, and its steering program unless keep_steering (its empty
 * socket slots pass frames to the kernel, counted as no_socket, while the ports are away);
 * workers parked. */
static void close_iface(struct fwd_ctx *ctx, struct fwd_iface *f, bool keep_steering)
{
	if (keep_steering) {
		fwd_iface_steer_sockets(ctx, f, false);
	} else {
		fwd_offload_iface_down(ctx, f->idx);
		fwd_iface_steer_close(ctx, f);
	}
	for (uint32_t i = f->first; i < ctx->nr_ports; i++)
		if (ctx->ports[i].iface == f->idx)
			fwd_port_close(ctx, i);
	f->ifindex = 0;
}

/* Opens them again; capabilities raised. On failure what opened is closed again. */
static int open_iface(struct fwd_ctx *ctx, struct fwd_iface *f)
{
	int err = 0;

	if (f->removed) /* every port of it was removed (portlive.c): nothing to open */
		return 0;
	for (uint32_t i = f->first; i < ctx->nr_ports && !err; i++)
		if (ctx->ports[i].iface == f->idx && !ctx->ports[i].removed)
			err = fwd_port_open(ctx, i);
	if (!err && fwd_wants_steering(ctx->cfg))
		err = f->steer ? fwd_iface_steer_sockets(ctx, f, true) :
		      fwd_iface_steer_open(ctx, f) ?: fwd_offload_iface_up(ctx, f->idx);
	if (err)
		close_iface(ctx, f, false);
	else
		f->ifindex = if_nametoindex(f->name);
	return err;
}

/* The interface open on ifindex, or NULL. */
static struct fwd_iface *iface_on_index(struct fwd_ctx *ctx, uint32_t ifindex)
{
	for (uint32_t f = 0; ifindex && f < ctx->nr_ifaces; f++)
		if (ctx->ifaces[f].ifindex == ifindex)
			return &ctx->ifaces[f];
	return NULL;
}

static void port_list(const struct fwd_ctx *ctx, const struct fwd_iface *f, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (uint32_t i = f->first; i < ctx->nr_ports && o < len; i++)
		if (ctx->ports[i].iface == f->idx && !ctx->ports[i].removed)
			o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? "," : "", ctx->ports[i].name);
}

/* why: "gone", or "renamed to NAME" (the device stays, but the name the ports were asked
 * for now names another interface or none). */
static void gone(struct fwd_ctx *ctx, struct fwd_iface *f, const char *why)
{
	const char *ifname = f->name;
	char ports[256];

	if (!fwd_iface_open(ctx, f))
		return;
	port_list(ctx, f, ports, sizeof(ports));
	fprintf(stderr, "xdp-fwd: %s: interface %s: port%s %s stopped, frames for %s counted as "
		"drops (down)%s\n", ifname, why, strchr(ports, ',') ? "s" : "", ports,
		strchr(ports, ',') ? "them" : "it",
		ctx->cfg->reattach ? "; re-attached when an interface of that name is back" :
				     "; --no-reattach: not re-attached");
	if (!fwd_workers_park(ctx))
		return;
	close_iface(ctx, f, false);
	fwd_workers_unpark(ctx);
}

static int raise_caps(bool on)
{
	int err = fwd_privs_raise(on);

	if (err && on)
		fprintf(stderr, "xdp-fwd: cannot raise the capabilities to open ports: %s\n", strerror(-err));
	return err;
}

static void back(struct fwd_ctx *ctx, struct fwd_iface *f, uint32_t ifindex)
{
	const char *ifname = f->name;
	char ports[256];
	int err;

	if (!ctx->cfg->reattach || f->removed || fwd_iface_open(ctx, f))
		return;
	port_list(ctx, f, ports, sizeof(ports));
	if (raise_caps(true))
		return;
	if (!fwd_workers_park(ctx)) {
		raise_caps(false);
		return;
	}
	err = open_iface(ctx, f);
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
static void mtu_changed(struct fwd_ctx *ctx, struct fwd_iface *f, uint32_t mtu)
{
	struct fwd_config *cfg = ctx->cfg;
	const char *ifname = f->name;
	uint32_t chunk = cfg->chunk_size ? cfg->chunk_size : FWD_CHUNK_DEFAULT;
	int err = 0;

	if (cfg->multi_buffer || !fwd_mtu_needs_multi_buffer(cfg, mtu) || !fwd_iface_open(ctx, f))
		return;
	if (!cfg->reattach || raise_caps(true)) {
		fprintf(stderr, "xdp-fwd: %s: MTU %u is more than one %u-byte chunk holds, and the ports "
			"cannot be reopened with multi-buffer (%s): %s stopped rather than losing "
			"large frames silently; restart xdp-fwd (with --multi-buffer) or lower the MTU\n",
			ifname, mtu, chunk, cfg->reattach ? "no capabilities" : "--no-reattach", ifname);
		if (fwd_workers_park(ctx)) {
			close_iface(ctx, f, false);
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
	for (uint32_t g = 0; g < ctx->nr_ifaces; g++)
		close_iface(ctx, &ctx->ifaces[g], true);
	cfg->multi_buffer = true;
	for (uint32_t g = 0; g < ctx->nr_ifaces; g++) {
		int e;

		if (!if_nametoindex(ctx->ifaces[g].name))
			continue;
		e = open_iface(ctx, &ctx->ifaces[g]);
		if (e) {
			fprintf(stderr, "xdp-fwd: %s: cannot reopen its ports with multi-buffer: %s; they "
				"stay stopped\n", ctx->ifaces[g].name, strerror(-e));
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
	for (uint32_t g = 0; g < ctx->nr_ifaces; g++) {
		struct fwd_iface *f = &ctx->ifaces[g];
		uint32_t idx = if_nametoindex(f->name);

		if (f->ifindex && idx != f->ifindex)
			gone(ctx, f, "gone");
		if (idx)
			back(ctx, f, idx);
	}
}

/* A live edit (umem-steer) may send frames to a socket index no port of ours serves: the
 * program passes them to the kernel (no_socket), so each such rule is named once, when it comes:
 * a table rule that was not in the table before, a prefix rule whose id is new. */
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

/* A large edit (`umem-steer load` of 100,000 prefix rules) changes the table thousands of times
 * a second: the table's rules are compared with the last ones seen, and the prefix rules are
 * walked in slices (fwd_prefix_scan), so no poll takes more than a few milliseconds. */
static void check_live_rules(struct fwd_ctx *ctx, struct fwd_iface *f)
{
	struct live_check lc = { ctx, f->name };
	struct umem_steer_info info = { .sz = sizeof(info) };
	struct umem_steer_rule rules[UMEM_STEER_MAX_RULES];
	int n;

	if (umem_steer__info(f->steer, &info))
		return;
	if (info.generation != f->steer_gen && (n = umem_steer__rules(f->steer, rules, UMEM_STEER_MAX_RULES)) >= 0) {
		n = n < UMEM_STEER_MAX_RULES ? n : UMEM_STEER_MAX_RULES;
		for (int r = 0; r < n; r++) {
			bool seen = false;

			for (uint32_t q = 0; q < f->live_nr && !seen; q++)
				seen = !memcmp(&rules[r], &f->live_table[q], sizeof(rules[r]));
			if (!seen)
				check_live_rule(&rules[r], NULL, &lc);
		}
		memcpy(f->live_table, rules, (size_t)n * sizeof(rules[0]));
		f->live_nr = (uint32_t)n;
		f->steer_gen = info.generation;
	}
	fwd_prefix_scan(&f->live_scan, f->steer, info.prefix_ids, UINT32_MAX, check_live_rule, &lc);
}

#define FWD_QUEUES_CHECK_NS 1000000000ull /* ethtool -L sends no link event: looked at this often */

/* The port on queue q of ifname, or UINT32_MAX. */
static uint32_t port_of(const struct fwd_ctx *ctx, const char *ifname, uint32_t q)
{
	for (uint32_t i = 0; i < ctx->nr_ports; i++)
		if (!ctx->ports[i].removed && ctx->cfg->ports[i].queue == q && !strcmp(ctx->cfg->ports[i].ifname, ifname))
			return i;
	return UINT32_MAX;
}

/* A unit follows the queue count as one: a spec, or in wire mode a pair of specs (their k-th
 * queues are the two ends of a wire, so both open or neither). */
struct queue_unit {
	uint32_t spec[2];
	uint32_t nr;
};

static uint32_t unit_queue(const struct fwd_ctx *ctx, const struct queue_unit *u, uint32_t k, uint32_t idx)
{
	return ctx->cfg->specs[u->spec[k]].first + idx;
}

/* Registers (on) or removes the sockets of the unit's interfaces in their steering maps. */
static void unit_steer(struct fwd_ctx *ctx, const struct queue_unit *u, bool on)
{
	for (uint32_t k = 0; k < u->nr; k++) {
		struct fwd_iface *f = fwd_iface_find(ctx->ifaces, ctx->nr_ifaces, ctx->cfg->specs[u->spec[k]].ifname);

		if (f->steer)
			fwd_iface_steer_sockets(ctx, f, on);
	}
}

/* Opens the unit's queues from..to-1 (by index in the spec; workers parked, capabilities
 * raised), adding ports where there were none. Returns the first index that did not open
 * (to when all did), with *err and *why (the port) set. */
static uint32_t open_queues(struct fwd_ctx *ctx, const struct queue_unit *u, uint32_t from, uint32_t to,
			    int *err, uint32_t *why)
{
	for (uint32_t idx = from; idx < to; idx++) {
		uint32_t opened[2], k;

		for (k = 0; k < u->nr; k++) {
			const char *ifname = ctx->cfg->specs[u->spec[k]].ifname;
			uint32_t q = unit_queue(ctx, u, k, idx), i = port_of(ctx, ifname, q);
			int r = i == UINT32_MAX ? fwd_port_add(ctx, u->spec[k], q) : (int)i;

			if (r >= 0 && !ctx->ports[r].port)
				*err = fwd_port_open(ctx, (uint32_t)r);
			else
				*err = r < 0 ? r : 0;
			*why = r >= 0 ? (uint32_t)r : UINT32_MAX;
			if (*err)
				break;
			opened[k] = (uint32_t)r;
		}
		if (k < u->nr) {
			while (k--)
				fwd_port_close(ctx, opened[k]);
			return idx;
		}
	}
	return to;
}

/* Closes the unit's queues from..to-1 (workers parked): their frames are counted as the
 * ports close (fwd_port_close), and their sockets leave the steering maps first. */
static void close_queues(struct fwd_ctx *ctx, const struct queue_unit *u, uint32_t from, uint32_t to)
{
	unit_steer(ctx, u, false);
	for (uint32_t idx = from; idx < to; idx++)
		for (uint32_t k = 0; k < u->nr; k++) {
			uint32_t i = port_of(ctx, ctx->cfg->specs[u->spec[k]].ifname, unit_queue(ctx, u, k, idx));

			if (i != UINT32_MAX)
				fwd_port_close(ctx, i);
		}
	unit_steer(ctx, u, true);
}

/* "m0@2,m0@3" for the spec's queues from..to-1. */
static void queue_list(const struct fwd_ctx *ctx, uint32_t spec, uint32_t from, uint32_t to, char *buf, size_t len)
{
	const struct fwd_if_spec *s = &ctx->cfg->specs[spec];
	size_t o = 0;

	buf[0] = '\0';
	for (uint32_t idx = from; idx < to && o < len; idx++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s@%u", o ? "," : "", s->ifname, s->first + idx);
}

/* -i IFNAME@all opened the queues the interface had at start; `ethtool -L` changes the count
 * without a link event. The ports follow it: a queue added gets a port (the area keeps room
 * for the device's maximum, fwd_config.spare_ports), a queue removed loses its port. In wire
 * mode queue k of one interface pairs with queue k of its partner, so a pair opens once both
 * have it. What cannot be served (no capabilities, the partner short of queues, an open that
 * failed) is said once per change, with where the frames go. */
static void follow_queues(struct fwd_ctx *ctx)
{
	static uint64_t next;
	/* Per spec: the queues served (0: not looked at yet) and the count last seen. */
	static uint32_t served[FWD_MAX_PORTS], seen[FWD_MAX_PORTS];
	const struct fwd_config *cfg = ctx->cfg;
	bool wire = cfg->mode == FWD_MODE_WIRE;
	uint64_t now = fwd_now_ns();

	if (now < next)
		return;
	next = now + FWD_QUEUES_CHECK_NS;
	for (uint32_t i = 0; i < cfg->nr_specs; i++) {
		struct queue_unit u = { .spec = { i, i ^ 1 }, .nr = wire ? 2 : 1 };
		uint32_t count[2], want = UINT32_MAX, got, k, fail_port = UINT32_MAX;
		bool changed = false, all = false, raised = false;
		char list[256], why[128], range[24];
		int err = 0;

		if (wire && (i & 1))
			continue; /* with its pair's first spec */
		for (k = 0; k < u.nr; k++) {
			const struct fwd_if_spec *s = &cfg->specs[u.spec[k]];
			uint32_t fixed = s->last - s->first + 1;
			int n = s->from_all && fwd_iface_find(ctx->ifaces, ctx->nr_ifaces, s->ifname)->ifindex ? umem_netdev__queue_count(s->ifname) : 0;

			if (!served[u.spec[k]])
				served[u.spec[k]] = seen[u.spec[k]] = fixed;
			all |= s->from_all;
			if (s->from_all && n <= 0)
				break; /* closed, or the count unknown: nothing to follow now */
			count[k] = s->from_all ? (uint32_t)n : fixed;
			changed |= count[k] != seen[u.spec[k]];
			want = count[k] < want ? count[k] : want;
		}
		if (!all || k < u.nr || !changed)
			continue;
		got = served[i];
		why[0] = '\0';
		if (want > got && !cfg->reattach)
			snprintf(why, sizeof(why), "--no-reattach dropped the capabilities to open ports");
		else if (want > got && raise_caps(true))
			snprintf(why, sizeof(why), "the capabilities to open ports cannot be raised");
		else
			raised = want > got;
		if (want != got && !why[0] && fwd_workers_park(ctx)) {
			if (want > got) {
				got = open_queues(ctx, &u, got, want, &err, &fail_port);
				unit_steer(ctx, &u, true);
				if (got < want)
					snprintf(why, sizeof(why), "port %s cannot be opened: %s",
						 fail_port != UINT32_MAX ? ctx->ports[fail_port].name : "?", strerror(-err));
			} else {
				close_queues(ctx, &u, want, got);
				got = want;
			}
			fwd_ports_map_vias(ctx);
			fwd_workers_unpark(ctx);
		}
		if (raised)
			raise_caps(false);
		for (k = 0; k < u.nr; k++) {
			uint32_t sp = u.spec[k], was = seen[sp];
			const char *ifname = cfg->specs[sp].ifname;
			char has[IF_NAMESIZE + 48];

			if (count[k] != was)
				snprintf(has, sizeof(has), "%s now has %u RX queue%s (was %u)", ifname, count[k],
					 count[k] > 1 ? "s" : "", was);
			else
				snprintf(has, sizeof(has), "%s has %u RX queue%s", ifname, count[k], count[k] > 1 ? "s" : "");
			if (got != served[sp]) {
				queue_list(ctx, sp, got > served[sp] ? served[sp] : got, got > served[sp] ? got : served[sp],
					   list, sizeof(list));
				fprintf(stderr, "xdp-fwd: %s: %s %s%s\n", has, got > served[sp] ? "opened" : "closed",
					list, got > served[sp] ? "" : ", their frames counted");
			}
			if (count[k] > got && count[k] != was) {
				if (count[k] - got > 1)
					snprintf(range, sizeof(range), "s %u-%u", got, count[k] - 1);
				else
					snprintf(range, sizeof(range), " %u", got);
				fprintf(stderr, "xdp-fwd: warning: %s: frames on queue%s go to the kernel's stack, not "
					"through xdp-fwd (%s)\n", has, range,
					why[0] ? why : wire ? "--mode wire pairs queue k with queue k of the partner, which has fewer" :
					"restart xdp-fwd to serve them");
			}
			seen[sp] = count[k];
			served[sp] = got;
		}
	}
}

void fwd_live_poll(struct fwd_ctx *ctx)
{
	follow_queues(ctx);
	for (uint32_t f = 0; ctx->cfg->nr_rules && f < ctx->nr_ifaces; f++)
		if (ctx->ifaces[f].steer)
			check_live_rules(ctx, &ctx->ifaces[f]);
	struct fwd_link_event ev;
	int r;

	if (watch_fd < 0)
		return;
	while ((r = fwd_linkwatch_next(watch_fd, &ev)) != 0) {
		struct fwd_iface *f;

		if (r < 0) {
			if (r == -ENOBUFS)
				resync(ctx);
			if (r != -ENOBUFS && r != -EINTR)
				return;
			continue;
		}
		/* The device our ports are on: deleted (or moved to another namespace), or
		 * renamed away from the configured name. */
		f = iface_on_index(ctx, ev.ifindex);
		if (f) {
			char why[IF_NAMESIZE + 16];

			if (ev.deleted) {
				gone(ctx, f, "gone");
				continue;
			}
			if (ev.ifname[0] && strcmp(ev.ifname, f->name)) {
				snprintf(why, sizeof(why), "renamed to %s", ev.ifname);
				gone(ctx, f, why);
				continue;
			}
		}
		f = ev.ifname[0] ? fwd_iface_find(ctx->ifaces, ctx->nr_ifaces, ev.ifname) : NULL;
		if (!f || ev.deleted)
			continue; /* not ours, or an interface of our name that we are not on */
		if (f->ifindex && f->ifindex != ev.ifindex) {
			/* Our name on another device while we are open on one: events were lost */
			gone(ctx, f, "gone");
		}
		if (!fwd_iface_open(ctx, f)) {
			back(ctx, f, ev.ifindex);
			if (ev.mtu) /* back with an MTU the ports were not opened for */
				mtu_changed(ctx, f, ev.mtu);
		} else if (ev.mtu) {
			mtu_changed(ctx, f, ev.mtu);
		}
	}
}
