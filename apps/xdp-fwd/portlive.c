/* SPDX-License-Identifier: MIT */
/* Ports added and removed while running (portlive.h). */
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <umem/steer.h>

#include "ctx.h"
#include "netif.h"
#include "offload.h"
#include "portlive.h"
#include "ports.h"
#include "privs.h"
#include "worker.h"

static int fail(char *err, size_t errlen, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return code;
}

static bool names(const struct fwd_port_name *n, const struct fwd_port_spec *s)
{
	return n->queue == s->queue && !strcmp(n->ifname, s->ifname);
}

/* No addition before the k-th is on its interface. */
static bool first_on_iface(const struct fwd_port_name *add, uint32_t k)
{
	for (uint32_t j = 0; j < k; j++)
		if (!strcmp(add[j].ifname, add[k].ifname))
			return false;
	return true;
}

static bool same_name(const struct fwd_port_name *a, const struct fwd_port_name *b)
{
	return a->queue == b->queue && !strcmp(a->ifname, b->ifname);
}

/* The port named n that is (removed false) or was (true) served, or UINT32_MAX. */
static uint32_t find(const struct fwd_ctx *ctx, const struct fwd_port_name *n, bool removed)
{
	for (uint32_t i = 0; i < ctx->nr_ports; i++)
		if (ctx->ports[i].removed == removed && names(n, &ctx->cfg->ports[i]))
			return i;
	return UINT32_MAX;
}

static bool listed(const struct fwd_port_name *n, const struct fwd_port_name *list, uint32_t nr)
{
	for (uint32_t k = 0; k < nr; k++)
		if (same_name(n, &list[k]))
			return true;
	return false;
}

/* The slot the k-th addition takes back (a removed port of its name; in wire mode a removed
 * pair of both its names), or UINT32_MAX: a new one. gone[] marks the ports this change removes
 * first. */
static uint32_t revive_slot(const struct fwd_ctx *ctx, const struct fwd_port_name *add, uint32_t k, const bool *gone)
{
	bool wire = ctx->cfg->mode == FWD_MODE_WIRE;

	for (uint32_t i = 0; i < ctx->nr_ports; i++) {
		if (!(ctx->ports[i].removed || gone[i]) || !names(&add[k], &ctx->cfg->ports[i]))
			continue;
		if (!wire)
			return i;
		/* The partner slot must hold the other end of this pair. */
		if ((i ^ 1) < ctx->nr_ports && (ctx->ports[i ^ 1].removed || gone[i ^ 1]) &&
		    names(&add[k ^ 1], &ctx->cfg->ports[i ^ 1]))
			return i;
	}
	return UINT32_MAX;
}

/* Whether interface f keeps a port after the change (gone: removed by it; add: added). */
static bool iface_kept(const struct fwd_ctx *ctx, const struct fwd_iface *f, const bool *gone,
		       const struct fwd_port_name *add, uint32_t nr_add)
{
	for (uint32_t i = 0; i < ctx->nr_ports; i++)
		if (ctx->ports[i].iface == f->idx && !ctx->ports[i].removed && !gone[i])
			return true;
	for (uint32_t k = 0; k < nr_add; k++)
		if (!strcmp(add[k].ifname, f->name))
			return true;
	return false;
}

static int check_remove(const struct fwd_ctx *ctx, const struct fwd_port_name *rm, uint32_t nr_rm, bool *gone, char *err,
			size_t errlen)
{
	const struct fwd_config *cfg = ctx->cfg;
	bool wire = cfg->mode == FWD_MODE_WIRE;

	for (uint32_t k = 0; k < nr_rm; k++) {
		uint32_t i = find(ctx, &rm[k], false);

		if (i == UINT32_MAX)
			return fail(err, errlen, -ENOENT, "no port %s@%u is served (ports lists them)", rm[k].ifname,
				    rm[k].queue);
		if (gone[i])
			return fail(err, errlen, -EINVAL, "%s@%u is named twice", rm[k].ifname, rm[k].queue);
		gone[i] = true;
	}
	for (uint32_t k = 0; wire && k < nr_rm; k += 2) {
		uint32_t i = find(ctx, &rm[k], false), j = find(ctx, &rm[k + 1], false);

		if (j != (i ^ 1))
			return fail(err, errlen, -EINVAL, "--mode wire: %s pairs with %s: remove both ends (ports remove %s %s)",
				    ctx->ports[i].name, ctx->ports[i ^ 1].name, ctx->ports[i].name, ctx->ports[i ^ 1].name);
	}
	return 0;
}

static int check_add(const struct fwd_ctx *ctx, const struct fwd_port_name *add, uint32_t nr_add, const bool *gone,
		     char *err, size_t errlen)
{
	const struct fwd_config *cfg = ctx->cfg;
	uint32_t slots = 0;

	for (uint32_t k = 0; k < nr_add; k++) {
		const struct fwd_port_name *a = &add[k];
		uint32_t i = find(ctx, a, false), mtu, chunk;
		int queues;

		if (listed(a, add, k))
			return fail(err, errlen, -EINVAL, "%s@%u is named twice", a->ifname, a->queue);
		if (i != UINT32_MAX && !gone[i])
			return fail(err, errlen, -EEXIST, "%s@%u is served already (port %u)", a->ifname, a->queue, i);
		if (!if_nametoindex(a->ifname))
			return fail(err, errlen, -ENODEV, "no interface '%s' (in xdp-fwd's network namespace)", a->ifname);
		queues = fwd_queue_count(a->ifname);
		if (queues < 1)
			queues = 1; /* the driver does not say: queue 0 is there */
		if (a->queue >= (uint32_t)queues)
			return fail(err, errlen, -ERANGE, "%s has %d RX queue%s: no queue %u", a->ifname, queues,
				    queues > 1 ? "s" : "", a->queue);
		mtu = fwd_ifname_mtu(a->ifname);
		chunk = cfg->chunk_size ? cfg->chunk_size : FWD_CHUNK_DEFAULT;
		if (!cfg->multi_buffer && fwd_mtu_needs_multi_buffer(cfg, mtu))
			return fail(err, errlen, -EINVAL, "%s has MTU %u, more than one %u-byte chunk holds, and xdp-fwd "
				    "runs without multi-buffer: restart it with --multi-buffer, or lower the MTU", a->ifname,
				    mtu, chunk);
		if (!fwd_iface_find((struct fwd_iface *)ctx->ifaces, ctx->nr_ifaces, a->ifname)) {
			/* The router reads its interfaces' addresses at set-up, offload sizes its flow
			 * tables by the interfaces: both would need what only a start does. */
			if (cfg->mode == FWD_MODE_L3)
				return fail(err, errlen, -EOPNOTSUPP, "--mode l3 routes between the interfaces it "
					    "started with: %s is not one of them (a restart adds it)", a->ifname);
			if (ctx->off)
				return fail(err, errlen, -EOPNOTSUPP, "--offload-after sizes its flow tables for the "
					    "interfaces at start: %s is not one of them (a restart adds it)", a->ifname);
		}
		slots += revive_slot(ctx, add, k, gone) == UINT32_MAX;
	}
	if (nr_add && !cfg->reattach)
		return fail(err, errlen, -EPERM, "--no-reattach dropped the capabilities to open ports: a restart "
			    "adds them");
	/* A new slot takes at most one new -i spec. */
	if (ctx->nr_ports + slots > FWD_MAX_PORTS || cfg->nr_specs + slots > FWD_MAX_PORTS)
		return fail(err, errlen, -ENOSPC, "xdp-fwd serves at most %d ports (removed ones keep their slot "
			    "for their counts): %u slots used, %u more do not fit", FWD_MAX_PORTS, ctx->nr_ports, slots);
	return 0;
}

/* What the mode needs of what is left. */
static int check_left(const struct fwd_ctx *ctx, const bool *gone, const struct fwd_port_name *add, uint32_t nr_add,
		      char *err, size_t errlen)
{
	const struct fwd_config *cfg = ctx->cfg;
	uint32_t ifaces = 0, ports = nr_add, need = fwd_mode_min_ifaces(cfg->mode);

	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		const struct fwd_iface *fi = &ctx->ifaces[f];
		bool kept = iface_kept(ctx, fi, gone, add, nr_add);

		ifaces += kept;
		if (!kept && !fi->removed && cfg->mode == FWD_MODE_L3)
			return fail(err, errlen, -EINVAL, "--mode l3 routes to every interface it started with: %s keeps "
				    "at least one port", fi->name);
	}
	for (uint32_t k = 0; k < nr_add; k++)
		ifaces += !fwd_iface_find((struct fwd_iface *)ctx->ifaces, ctx->nr_ifaces, add[k].ifname) &&
			  first_on_iface(add, k);
	for (uint32_t i = 0; i < ctx->nr_ports; i++)
		ports += !ctx->ports[i].removed && !gone[i];
	if (cfg->mode == FWD_MODE_WIRE && ports < 2)
		return fail(err, errlen, -EINVAL, "--mode wire needs at least one pair of ports: this would leave none");
	if (ifaces < need)
		return fail(err, errlen, -EINVAL, "--mode %s needs ports on at least %u interface%s: this would leave %u",
			    fwd_mode_name(cfg->mode), need, need > 1 ? "s" : "", ifaces);
	return 0;
}

/* Workers parked. Interfaces left without ports lose their flows and program first (as a gone
 * interface's, live.c), then each port leaves its interface's socket map and closes. */
static void remove_ports(struct fwd_ctx *ctx, const bool *gone)
{
	bool emptied[FWD_MAX_PORTS] = { false };

	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		struct fwd_iface *fi = &ctx->ifaces[f];

		if (fi->removed || iface_kept(ctx, fi, gone, NULL, 0))
			continue;
		emptied[f] = true;
		fwd_offload_iface_down(ctx, f);
		fwd_iface_steer_close(ctx, fi);
	}
	for (uint32_t i = 0; i < ctx->nr_ports; i++) {
		struct fwd_port *p = &ctx->ports[i];
		struct fwd_iface *fi = &ctx->ifaces[p->iface];

		if (!gone[i])
			continue;
		if (ctx->l2.slots) /* l2 */
			l2_forget_port(&ctx->l2, (int32_t)i);
		if (!emptied[p->iface])
			fwd_offload_port_down(ctx, i);
		if (fi->steer && p->port)
			umem_steer__set_socket(fi->steer, ctx->cfg->ports[i].queue, -1);
		fwd_port_close(ctx, i);
		p->removed = true;
		fprintf(stderr, "xdp-fwd: port %s removed (its counts stay in the totals)\n", p->name);
	}
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		if (!emptied[f])
			continue;
		ctx->ifaces[f].removed = true;
		ctx->ifaces[f].ifindex = 0;
	}
}

/* The interface of a port being added: known, or the next entry (prepared by steer_early with
 * its program, or made here) whose first port is the next slot. */
static struct fwd_iface *iface_get(struct fwd_ctx *ctx, const char *ifname)
{
	struct fwd_iface *f = fwd_iface_find(ctx->ifaces, ctx->nr_ifaces, ifname);

	if (f)
		return f;
	f = &ctx->ifaces[ctx->nr_ifaces];
	if (!f->steer || strcmp(f->name, ifname)) {
		memset(f, 0, sizeof(*f));
		snprintf(f->name, sizeof(f->name), "%s", ifname);
	}
	f->idx = ctx->nr_ifaces++;
	f->first = ctx->nr_ports;
	return f;
}

/* The entries steer_early prepared past ctx->nr_ifaces that no port took: detached, cleared. */
static void steer_unprepare(struct fwd_ctx *ctx, uint32_t upto)
{
	for (uint32_t f = ctx->nr_ifaces; f < upto; f++) {
		fwd_iface_steer_close(ctx, &ctx->ifaces[f]);
		memset(&ctx->ifaces[f], 0, sizeof(ctx->ifaces[f]));
	}
}

/* The steering programs of the interfaces this change brings (new, or with every port removed
 * before), loaded and attached before the workers are parked: the verifier takes long on a
 * loaded host, and the ports that forward meanwhile would fill their rings. No frame of those
 * interfaces reaches a socket of ours yet (their table's sockets are registered once the ports
 * open), and the workers read none of it: a new interface's entry is prepared past
 * ctx->nr_ifaces, where no worker looks, a removed one is skipped by every worker. With
 * --offload-after its flow tables come with the program, with the workers parked (add_ports).
 * *upto: the end of the prepared entries. */
static int steer_early(struct fwd_ctx *ctx, const struct fwd_port_name *add, uint32_t nr_add, uint32_t *upto, char *err,
		       size_t errlen)
{
	*upto = ctx->nr_ifaces;
	if (!fwd_wants_steering(ctx->cfg) || ctx->off)
		return 0;
	for (uint32_t k = 0; k < nr_add; k++) {
		struct fwd_iface *f = fwd_iface_find(ctx->ifaces, ctx->nr_ifaces, add[k].ifname);
		int e;

		if (!first_on_iface(add, k) || (f && (!f->removed || f->steer)))
			continue;
		if (!f) {
			f = &ctx->ifaces[*upto];
			memset(f, 0, sizeof(*f));
			snprintf(f->name, sizeof(f->name), "%s", add[k].ifname);
			f->idx = (*upto)++;
			f->first = ctx->nr_ports; /* no port yet: no socket to register */
		}
		e = fwd_iface_steer_open(ctx, f);
		if (e) {
			if (f->idx >= ctx->nr_ifaces)
				steer_unprepare(ctx, *upto);
			else
				fwd_iface_steer_close(ctx, f);
			return fail(err, errlen, e, "%s: its steering program: %s", add[k].ifname, strerror(-e));
		}
	}
	return 0;
}

/* The -i spec a new port belongs to: its interface's (wire: a new pair of specs, as two -i
 * make a pair at start, so that live.c's queue following pairs them alike). */
static uint32_t spec_get(struct fwd_config *cfg, const struct fwd_port_name *a, bool wire)
{
	struct fwd_if_spec *s;

	for (uint32_t i = 0; !wire && i < cfg->nr_specs; i++)
		if (!strcmp(cfg->specs[i].ifname, a->ifname))
			return i;
	s = &cfg->specs[cfg->nr_specs];
	*s = (struct fwd_if_spec){ .first = a->queue, .last = a->queue, .queue_given = true };
	snprintf(s->ifname, sizeof(s->ifname), "%s", a->ifname);
	return cfg->nr_specs++;
}

/* Workers parked, capabilities raised. On failure the ports this added are closed and stay as
 * removed slots (their counts kept: frames may have come in), and err says which failed. */
static int add_ports(struct fwd_ctx *ctx, const struct fwd_port_name *add, uint32_t nr_add, const bool *gone, bool runtime,
		     char *err, size_t errlen)
{
	struct fwd_config *cfg = ctx->cfg;
	bool wire = cfg->mode == FWD_MODE_WIRE;
	uint32_t done[FWD_MAX_PORTS], nr_done = 0, slot[FWD_MAX_PORTS];
	int e = 0;

	/* Slots first (the wire pairs' both ends before either opens), then the opens. */
	for (uint32_t k = 0; k < nr_add; k++)
		slot[k] = revive_slot(ctx, add, k, gone);
	for (uint32_t k = 0; k < nr_add && !e; k++) {
		const struct fwd_port_name *a = &add[k];
		uint32_t i = slot[k];

		if (i == UINT32_MAX) {
			iface_get(ctx, a->ifname);
			e = fwd_port_add(ctx, spec_get(cfg, a, wire), a->queue);
			if (e < 0) {
				fail(err, errlen, e, "%s@%u: no slot: %s", a->ifname, a->queue, strerror(-e));
				break;
			}
			i = (uint32_t)e;
			e = 0;
			/* A bind that waits lets the workers run (fwd_workers_run_for): l2 floods then
			 * reach the new interface through its port, closed (counted as down), never
			 * through a stale choice. */
			fwd_ports_map_vias(ctx);
		}
		ctx->ports[i].removed = false;
		ctx->ports[i].runtime = runtime;
		ctx->ports[i].skip_contd = false;
		ctx->ports[i].rx_in_chain = false;
		done[nr_done++] = i;
		e = fwd_port_open(ctx, i);
		if (e)
			fail(err, errlen, e, "%s@%u cannot be opened: %s%s", a->ifname, a->queue, strerror(-e),
			     e == -ENOMEM ? " (the area was sized at start: --frames makes room for ports added later)" : "");
	}
	for (uint32_t d = 0; d < nr_done && !e; d++) {
		struct fwd_iface *fi = &ctx->ifaces[ctx->ports[done[d]].iface];

		fi->removed = false;
		fi->ifindex = if_nametoindex(fi->name);
		if (!fwd_wants_steering(cfg))
			continue;
		/* Its first port opens the interface's program (with the -r rules and every open
		 * socket); the others are registered in it. */
		e = fi->steer ? fwd_iface_steer_sockets(ctx, fi, true) : fwd_iface_steer_open(ctx, fi) ?: fwd_offload_iface_up(ctx, fi->idx);
		if (e)
			fail(err, errlen, e, "%s: its steering program: %s", fi->name, strerror(-e));
	}
	if (e) {
		bool back[FWD_MAX_PORTS] = { false };

		for (uint32_t d = 0; d < nr_done; d++)
			back[done[d]] = true;
		remove_ports(ctx, back);
	} else {
		for (uint32_t d = 0; d < nr_done; d++)
			fprintf(stderr, "xdp-fwd: port %s added (port %u, worker %u)\n", ctx->ports[done[d]].name, done[d],
				ctx->ports[done[d]].worker);
	}
	fwd_ports_map_vias(ctx);
	return e;
}

int fwd_ports_change(struct fwd_ctx *ctx, const struct fwd_port_name *rm, uint32_t nr_rm, const struct fwd_port_name *add,
		     uint32_t nr_add, uint32_t flags, char *err, size_t errlen)
{
	bool wire = ctx->cfg->mode == FWD_MODE_WIRE;
	bool gone[FWD_MAX_PORTS] = { false };
	uint32_t prepared = ctx->nr_ifaces;
	int e;

	err[0] = '\0';
	if (wire && (nr_rm % 2 || nr_add % 2))
		return fail(err, errlen, -EINVAL, "--mode wire joins ports in pairs (a cable's two ends): name both, "
			    "e.g. ports %s IF_A[@Q] IF_B[@Q]", nr_add ? "add" : "remove");
	if ((e = check_remove(ctx, rm, nr_rm, gone, err, errlen)) || (e = check_add(ctx, add, nr_add, gone, err, errlen)) ||
	    (e = check_left(ctx, gone, add, nr_add, err, errlen)))
		return e;
	if ((flags & FWD_PORTS_CHECK) || (!nr_rm && !nr_add))
		return 0;
	if (nr_add && (e = fwd_privs_raise(true)))
		return fail(err, errlen, e, "cannot raise the capabilities to open ports: %s", strerror(-e));
	if (nr_add && (e = steer_early(ctx, add, nr_add, &prepared, err, errlen))) {
		fwd_privs_raise(false);
		return e;
	}
	if (!fwd_workers_park(ctx)) {
		steer_unprepare(ctx, prepared);
		for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
			if (ctx->ifaces[f].removed)
				fwd_iface_steer_close(ctx, &ctx->ifaces[f]);
		if (nr_add)
			fwd_privs_raise(false);
		return fail(err, errlen, -ESHUTDOWN, "xdp-fwd is stopping");
	}
	remove_ports(ctx, gone);
	fwd_ports_map_vias(ctx);
	e = nr_add ? add_ports(ctx, add, nr_add, gone, (flags & FWD_PORTS_RUNTIME) != 0, err, errlen) : 0;
	fwd_workers_unpark(ctx);
	/* What add_ports did not come to (a port before failed), and removed interfaces whose
	 * program was attached early for nothing. */
	steer_unprepare(ctx, prepared);
	for (uint32_t f = 0; e && f < ctx->nr_ifaces; f++)
		if (ctx->ifaces[f].removed)
			fwd_iface_steer_close(ctx, &ctx->ifaces[f]);
	if (nr_add)
		fwd_privs_raise(false);
	if (e) {
		snprintf(err + strlen(err), errlen - strlen(err), "; the ports it added are closed again%s",
			 nr_rm ? ", the removals stand" : "");
		/* Begun, then undone: the journal says so too (a reload logs its own line). */
		if (flags & FWD_PORTS_RUNTIME)
			fprintf(stderr, "xdp-fwd: ports %s: %s\n", nr_add && !nr_rm ? "add" : "change", err);
	}
	return e;
}

uint32_t fwd_ports_find(const struct fwd_ctx *ctx, const struct fwd_port_name *n)
{
	return find(ctx, n, false);
}

/* Whether ports a[0..step) are, in any order, the names of n[0..step). */
static bool unit_is(const struct fwd_port_name *n, const struct fwd_port_spec *a, uint32_t step)
{
	if (step == 1)
		return names(&n[0], &a[0]);
	return (names(&n[0], &a[0]) && names(&n[1], &a[1])) || (names(&n[0], &a[1]) && names(&n[1], &a[0]));
}

static struct fwd_port_name name_of(const struct fwd_port_spec *s)
{
	struct fwd_port_name n = { .queue = s->queue };

	memcpy(n.ifname, s->ifname, sizeof(n.ifname));
	return n;
}

void fwd_ports_diff(const struct fwd_ctx *ctx, const struct fwd_config *next, struct fwd_port_name *rm, uint32_t *nr_rm,
		    struct fwd_port_name *add, uint32_t *nr_add)
{
	uint32_t step = ctx->cfg->mode == FWD_MODE_WIRE ? 2 : 1;

	*nr_rm = *nr_add = 0;
	for (uint32_t i = 0; i + step <= ctx->nr_ports; i += step) {
		struct fwd_port_name u[2];
		bool kept = false;

		if (ctx->ports[i].removed || ctx->ports[i].runtime)
			continue;
		for (uint32_t k = 0; k < step; k++)
			u[k] = name_of(&ctx->cfg->ports[i + k]);
		for (uint32_t j = 0; j + step <= next->nr_ports && !kept; j += step)
			kept = unit_is(u, &next->ports[j], step);
		for (uint32_t k = 0; !kept && k < step; k++)
			rm[(*nr_rm)++] = u[k];
	}
	for (uint32_t j = 0; j + step <= next->nr_ports; j += step) {
		struct fwd_port_name u[2];
		bool there = false;

		for (uint32_t k = 0; k < step; k++)
			u[k] = name_of(&next->ports[j + k]);
		for (uint32_t i = 0; i + step <= ctx->nr_ports && !there; i += step)
			there = !ctx->ports[i].removed && unit_is(u, &ctx->cfg->ports[i], step);
		for (uint32_t k = 0; !there && k < step; k++)
			add[(*nr_add)++] = u[k];
	}
}

void fwd_ports_adopt(struct fwd_ctx *ctx, const struct fwd_config *next)
{
	for (uint32_t i = 0; i < ctx->nr_ports; i++)
		for (uint32_t j = 0; ctx->ports[i].runtime && j < next->nr_ports; j++)
			if (!strcmp(ctx->cfg->ports[i].ifname, next->ports[j].ifname) &&
			    ctx->cfg->ports[i].queue == next->ports[j].queue)
				ctx->ports[i].runtime = false;
}
