/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <umem/port.h>

#include "capture.h"
#include "ctx.h"
#include "ports.h"
#include "sizing.h"
#include "worker.h"

void fwd_ifaces_map(struct fwd_ctx *ctx)
{
	for (uint32_t i = 0; i < ctx->nr_ports; i++) {
		const char *ifname = ctx->cfg->ports[i].ifname;
		struct fwd_iface *f = fwd_iface_find(ctx->ifaces, ctx->nr_ifaces, ifname);

		if (!f) {
			f = &ctx->ifaces[ctx->nr_ifaces];
			f->idx = ctx->nr_ifaces++;
			f->first = i;
			snprintf(f->name, sizeof(f->name), "%s", ifname);
		}
		ctx->ports[i].iface = f->idx;
	}
}

bool fwd_iface_open(const struct fwd_ctx *ctx, const struct fwd_iface *f)
{
	for (uint32_t i = f->first; i < ctx->nr_ports; i++)
		if (ctx->ports[i].iface == f->idx && ctx->ports[i].port)
			return true;
	return false;
}

/* --- ports ----------------------------------------------------------------------------- */

#define FWD_TX_DRAIN_MS 500u /* a closing port waits this long for its TX ring to be read */

/* Port i's options (a create from the main thread, parked workers or not). */
static void port_opts(struct fwd_ctx *ctx, uint32_t i, struct umem_port_opts *opts)
{
	const struct fwd_config *cfg = ctx->cfg;
	UMEM_OPTS(umem_port_opts, o, .rx_size = cfg->rx_ring, .tx_size = cfg->tx_ring,
		  .fill_size = cfg->fill_ring, .comp_size = cfg->comp_ring,
		  .chunk_size = cfg->unaligned ? cfg->chunk_size : 0,
		  .busy_poll_usecs = cfg->busy_poll_usecs,
		  .busy_poll_budget = cfg->busy_poll_budget ? cfg->busy_poll_budget : cfg->batch);

	o.flags = (cfg->need_wakeup ? 0 : UMEM_PORT_F_NO_NEED_WAKEUP) |
		  (cfg->multi_buffer ? UMEM_PORT_F_MULTI_BUFFER : 0);
	if (fwd_wants_steering(cfg))
		o.xdp_prog = UMEM_PORT_PROG_NONE; /* the steering program feeds the socket */
	o.xdp_attach = cfg->xdp_attach;
	o.zerocopy = cfg->bind == FWD_BIND_ZEROCOPY ? UMEM_PORT_ZC_REQUIRE :
		     cfg->bind == FWD_BIND_COPY ? UMEM_PORT_ZC_OFF : UMEM_PORT_ZC_AUTO;
	/* Opened live (live.c parks the workers): a queue that a socket closed just before still
	 * holds is waited for with the workers running, not with every port stopped for it. */
	if (atomic_load(&ctx->park)) {
		o.rebind_wait = fwd_workers_run_for;
		o.rebind_wait_arg = ctx;
	} else {
		o.rebind_wait = ctx->open_wait;
		o.rebind_wait_arg = ctx->open_wait_arg;
	}
	snprintf(ctx->ports[i].name, sizeof(ctx->ports[i].name), "%s@%u", cfg->ports[i].ifname, cfg->ports[i].queue);
	*opts = o;
}

int fwd_port_prepare(struct fwd_ctx *ctx, uint32_t i)
{
	const struct fwd_port_spec *spec = &ctx->cfg->ports[i];
	struct fwd_port *p = &ctx->ports[i];
	struct umem_port_opts opts;

	port_opts(ctx, i, &opts);
	opts.flags |= UMEM_PORT_F_UNBOUND;
	p->port = umem_port__create(ctx->area, ctx->workers[p->worker].pool, spec->ifname, spec->queue, &opts);
	return p->port ? 0 : -errno;
}

int fwd_port_open(struct fwd_ctx *ctx, uint32_t i)
{
	const struct fwd_config *cfg = ctx->cfg;
	const struct fwd_port_spec *spec = &cfg->ports[i];
	struct fwd_port *p = &ctx->ports[i];
	struct umem_port_opts opts;
	int err = 0;

	if (p->port) { /* prepared (--takeover): its bind is what is left */
		err = umem_port__bind(p->port);
		if (err) {
			umem_port__destroy(p->port);
			p->port = NULL;
		}
	} else {
		port_opts(ctx, i, &opts);
		p->port = umem_port__create(ctx->area, ctx->workers[p->worker].pool, spec->ifname, spec->queue, &opts);
		err = p->port ? 0 : -errno;
	}
	if (err) {
		fprintf(stderr, "xdp-fwd: cannot open port %s: %s\n", p->name, strerror(-err));
		if (err == -EOPNOTSUPP && cfg->bind == FWD_BIND_ZEROCOPY)
			fprintf(stderr, "xdp-fwd: %s has no AF_XDP zero-copy: run without -z (zero-copy where "
				"the driver has it, copy mode elsewhere) or with --copy\n", spec->ifname);
		if (err == -ENOMEM && cfg->frames)
			fprintf(stderr, "xdp-fwd: --frames %u is too few: the rings need %llu frames (the fill "
				"and TX rings of %u ports, plus the pools' caches); raise --frames or shrink "
				"--fill-ring/--tx-ring\n", cfg->frames,
				(unsigned long long)fwd_frames_needed(cfg, ctx->nr_workers), cfg->nr_ports);
		return err;
	}
	return 0;
}

/* What port i still holds, counted: frames the kernel delivered that the worker has not read
 * (received, dropped as down) and frames on its TX ring the kernel never read (tx_unsent: a link
 * that is down refuses every kick, so they stay until the port closes). At exit before the
 * totals (main.c), else they would count as sent and dropped nowhere; again at the close, for
 * what came since. Workers are parked or joined. */
void fwd_port_settle(struct fwd_ctx *ctx, uint32_t i)
{
	struct fwd_port *p = &ctx->ports[i];
	int unsent;

	if (!p->port)
		return;
	for (;;) {
		struct umem_desc d[64];
		int n = umem_port__rx_burst(p->port, d, 64);
		uint64_t frames = 0, bytes = 0;

		if (n <= 0)
			break;
		for (int k = 0; k < n; k++) {
			frames += !(d[k].options & UMEM_DESC_F_CONTD);
			bytes += d[k].len;
			umem_pool__put(umem_port__pool(p->port), d[k].addr);
		}
		fwd_count(&p->ctr.rx_packets, frames);
		fwd_count(&p->ctr.rx_bytes, bytes);
		fwd_count(&p->ctr.drop[FWD_DROP_DOWN], frames);
	}
	/* Frames queued for TX that the kernel never read (its device left: deleted, moved to
	 * another namespace; or is down): counted in tx_packets, so counted again as drops. Taken
	 * back once: a second call only waits for completions. */
	unsent = umem_port__tx_drain(p->port, FWD_TX_DRAIN_MS);
	if (unsent > 0)
		fwd_count(&p->ctr.drop[FWD_DROP_TX_UNSENT], (uint64_t)unsent);
}

/* Port i counted for the last time and taken off it, to be destroyed (NULL: not open). */
static struct umem_port *port_release(struct fwd_ctx *ctx, uint32_t i)
{
	struct fwd_port *p = &ctx->ports[i];
	struct umem_port *port = p->port;

	if (!port)
		return NULL;
	if (umem_port__fd(port) >= 0) { /* a port prepared and never bound has nothing to count */
		fwd_port_settle(ctx, i);
		fwd_port_save_kernel_stats(p);
	}
	p->port = NULL;
	return port;
}

static void count_abandoned(struct fwd_ctx *ctx, int left)
{
	if (left > 0) /* the kernel never completed them: they cannot come home */
		ctx->abandoned += (uint64_t)left;
}

void fwd_port_close(struct fwd_ctx *ctx, uint32_t i)
{
	struct umem_port *port = port_release(ctx, i);

	if (port)
		count_abandoned(ctx, umem_port__destroy(port));
}

void fwd_ports_close(struct fwd_ctx *ctx)
{
	struct umem_port *ports[FWD_MAX_PORTS];
	uint32_t n = 0;

	for (uint32_t i = 0; i < ctx->nr_ports; i++)
		if ((ports[n] = port_release(ctx, i)))
			n++;
	count_abandoned(ctx, umem_port__destroy_bulk(ports, n));
}

/* Groups (fwd_port_spec.group) are dealt to workers in contiguous blocks: without queue ranges
 * every port is a group, so wire pairs (0,1), (2,3) stay on one worker when the counts allow;
 * with them, both ends of a queue's wire (or queue q of every interface) share a worker. */
void fwd_ports_assign(struct fwd_ctx *ctx)
{
	const struct fwd_config *cfg = ctx->cfg;

	for (uint32_t i = 0; i < ctx->nr_ports; i++) {
		uint32_t k = cfg->ports[i].group * ctx->nr_workers / cfg->nr_groups;
		struct fwd_worker *w = &ctx->workers[k];

		ctx->ports[i].worker = k;
		w->ports[w->nr_ports++] = i;
	}
}

/* l2 bridges interfaces: for each input port, the port that carries its frames to each other
 * interface, preferring an open one, then the same queue, then a port of the same worker (no
 * crossing). Again whenever ports open or close under -i IFNAME@all (workers parked). */
void fwd_ports_map_vias(struct fwd_ctx *ctx)
{
	const struct fwd_config *cfg = ctx->cfg;

	for (uint32_t in = 0; in < ctx->nr_ports; in++) {
		for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
			uint32_t best = UINT32_MAX, score = 0;

			for (uint32_t o = 0; o < ctx->nr_ports; o++) {
				uint32_t sc = 1 + 4 * !!ctx->ports[o].port +
					      2 * (cfg->ports[o].queue == cfg->ports[in].queue) +
					      (ctx->ports[o].worker == ctx->ports[in].worker);

				if (ctx->ports[o].iface == f && sc > score) {
					best = o;
					score = sc;
				}
			}
			ctx->via[in][f] = (uint8_t)best;
		}
	}
	ctx->nr_live = 0;
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		if (!ctx->ifaces[f].removed)
			ctx->live[ctx->nr_live++] = (uint8_t)f;
}

/* A port for a queue that `ethtool -L` added under -i IFNAME@all (live.c; workers parked),
 * appended after the others, not yet open. It joins its queue's group as at start (the wire
 * partner added just before it, or the same queue of another interface), else it is a group
 * of its own on the worker with the fewest ports. Returns its index or -errno. */
int fwd_port_add(struct fwd_ctx *ctx, uint32_t spec, uint32_t queue)
{
	struct fwd_config *cfg = ctx->cfg;
	uint32_t n = ctx->nr_ports, k = 0, group = UINT32_MAX;
	struct fwd_port_spec *p = &cfg->ports[n];
	struct fwd_worker *w;

	if (n == FWD_MAX_PORTS)
		return -ENOSPC;
	*p = (struct fwd_port_spec){ .queue = queue, .spec = spec };
	memcpy(p->ifname, cfg->specs[spec].ifname, sizeof(p->ifname));
	for (uint32_t i = 0; i < n && group == UINT32_MAX; i++) {
		if (cfg->mode == FWD_MODE_WIRE ? i == (n ^ 1) : cfg->queue_ranges && cfg->ports[i].queue == queue) {
			group = cfg->ports[i].group;
			k = ctx->ports[i].worker;
		}
	}
	if (group == UINT32_MAX) {
		group = cfg->nr_groups;
		for (uint32_t j = 1; j < ctx->nr_workers; j++)
			k = ctx->workers[j].nr_ports < ctx->workers[k].nr_ports ? j : k;
	}
	w = &ctx->workers[k];
	/* Up to a burst short of full, plus one burst (flush_fed), as fwd_workers_init. */
	w->stage[n] = calloc(2 * (size_t)cfg->batch, sizeof(struct umem_desc));
	if (!w->stage[n])
		return -ENOMEM;
	p->group = group;
	cfg->nr_groups += group == cfg->nr_groups;
	ctx->ports[n] = (struct fwd_port){ .worker = k, .iface = fwd_iface_find(ctx->ifaces, ctx->nr_ifaces, p->ifname)->idx };
	snprintf(ctx->ports[n].name, sizeof(ctx->ports[n].name), "%s@%u", p->ifname, queue);
	w->ports[w->nr_ports++] = n;
	ctx->nr_ports = cfg->nr_ports = n + 1;
	/* Captured as the others: "every port", or its interface's dev word. */
	if (ctx->cap)
		fwd_capture_port(ctx->cap, cfg, n);
	return (int)n;
}

/* --- steering -------------------------------------------------------------------------- */

static int steer_fill(struct fwd_ctx *ctx, struct fwd_iface *f);

/* --takeover: the old instance's offloaded flows leave its program before this instance's
 * sockets take frames. Nobody here would expire or release them, and their gate tags are the
 * old instance's: a gate left shut marks its flow's frames in front of their data where frames
 * have no XDP metadata, and a mark of an unknown tag stays on the frame. (--pinned programs get
 * none: xdp-fwd refuses --offload-after with --pinned.) */
static void flows_clear(struct fwd_iface *f)
{
	struct umem_steer_flows *fl = umem_steer_flows__open(f->steer);
	int err = fl ? umem_steer_flows__clear(fl) : -errno;

	if (err)
		fprintf(stderr, "xdp-fwd: --takeover: %s: cannot clear the offloaded flows handed over: %s\n", f->name,
			strerror(-err));
	umem_steer_flows__close(fl);
}

/* --pinned: the program a privileged step attached and pinned in DIR/IFNAME, opened through
 * its pins, then given this run's default action and table flags as an attach would (the old
 * ones kept for the close). */
static int pinned_open(struct fwd_ctx *ctx, struct fwd_iface *f, const struct umem_steer_opts *so)
{
	char dir[4200];
	int err;

	snprintf(dir, sizeof(dir), "%s/%s", ctx->cfg->pinned, f->name);
	f->steer = umem_steer__open_pinned(dir, f->name);
	if (!f->steer) {
		err = -errno;
		fprintf(stderr, "xdp-fwd: --pinned: cannot open the steering program pinned for %s in %s: %s\n",
			f->name, dir, strerror(-err));
		return err;
	}
	if ((err = umem_steer__default(f->steer, &f->pin_default)) ||
	    (err = umem_steer__table_flags(f->steer, &f->pin_flags)) ||
	    (err = umem_steer__set_table_flags(f->steer, so->table_flags)) ||
	    (err = umem_steer__set_default(f->steer, so->default_action))) {
		fprintf(stderr, "xdp-fwd: --pinned: cannot set the table of %s's program: %s\n", f->name, strerror(-err));
		umem_steer__detach(f->steer);
		f->steer = NULL;
		return err;
	}
	return steer_fill(ctx, f);
}

/* --rule: one steering program per interface with every rule; each port's socket registered at
 * the index of its queue, which is what the default action (QUEUE) and "sock N" refer to. */
int fwd_iface_steer_open(struct fwd_ctx *ctx, struct fwd_iface *f)
{
	const struct fwd_config *cfg = ctx->cfg;
	int err;

	/* A forwarder takes whole queues: what no rule claims goes to its socket (the library's
	 * default is pass). The router leaves ARP/ND, TTL <= 1 and IP options to the kernel. */
	static const struct umem_steer_action queue = { .type = UMEM_STEER_A_QUEUE };
	UMEM_OPTS(umem_steer_opts, so, .mode = cfg->xdp_attach, .default_action = &queue,
		  .table_flags = fwd_mode_steer_flags(cfg->mode));

	if (cfg->pinned)
		return pinned_open(ctx, f, &so);
	/* --takeover: the old instance's program, kept attached (handover.c). */
	if (f->adopt) {
		f->steer = f->adopt;
		f->adopt = NULL;
		if ((err = umem_steer__set_table_flags(f->steer, so.table_flags)) ||
		    (err = umem_steer__set_default(f->steer, so.default_action))) {
			fprintf(stderr, "xdp-fwd: --takeover: %s: cannot set the table: %s\n", f->name, strerror(-err));
			return err;
		}
		flows_clear(f);
		return steer_fill(ctx, f);
	}
	f->steer = umem_steer__attach(f->name, &so);
	if (!f->steer) {
		err = -errno;
		fprintf(stderr, "xdp-fwd: cannot attach the steering program to %s: %s\n", f->name, strerror(-err));
		return err;
	}
	return steer_fill(ctx, f);
}

/* The -r rules into a program just opened, and the sockets registered. */
static int steer_fill(struct fwd_ctx *ctx, struct fwd_iface *f)
{
	const struct fwd_config *cfg = ctx->cfg;
	int err, n;

	for (uint32_t r = 0; r < cfg->nr_rules; r++) {
		struct umem_steer_rule rule = cfg->rules[r];

		if (f->rule_kept >> r & 1)
			continue; /* --takeover: in the table already, rule_id[r] its id */
		err = umem_steer__add_rule(f->steer, &rule);
		if (err) {
			fprintf(stderr, "xdp-fwd: %s: rule '%s': %s\n", f->name, cfg->rule_text[r], strerror(-err));
			return err;
		}
		f->rule_id[r] = rule.id;
	}
	/* Later changes of the table are live edits (live.c checks them). */
	UMEM_OPTS(umem_steer_info, info);
	if (umem_steer__info(f->steer, &info))
		info = (struct umem_steer_info){ 0 };
	f->steer_gen = info.generation;
	n = umem_steer__rules(f->steer, f->live_table, UMEM_STEER_MAX_RULES);
	f->live_nr = n < 0 ? 0 : n < UMEM_STEER_MAX_RULES ? (uint32_t)n : UMEM_STEER_MAX_RULES;
	f->live_scan = (struct fwd_prefix_scan){ .done = info.prefix_ids };
	return fwd_iface_steer_sockets(ctx, f, true);
}

int fwd_iface_steer_sockets(struct fwd_ctx *ctx, struct fwd_iface *f, bool on)
{
	const struct fwd_config *cfg = ctx->cfg;

	for (uint32_t i = f->first; f->steer && i < ctx->nr_ports; i++) {
		int err;

		if (ctx->ports[i].iface != f->idx || !ctx->ports[i].port)
			continue;
		err = umem_steer__set_socket(f->steer, cfg->ports[i].queue, on ? umem_port__fd(ctx->ports[i].port) : -1);
		if (err && on) {
			fprintf(stderr, "xdp-fwd: %s: cannot register the socket of queue %u: %s\n", f->name,
				cfg->ports[i].queue, strerror(-err));
			return err;
		}
	}
	return 0;
}

void fwd_iface_steer_close(struct fwd_ctx *ctx, struct fwd_iface *f)
{
	if (!f->steer)
		return;
	/* Counters restart with a new program: what this one counted is kept. */
	fwd_iface_steer_sample(ctx, f, &f->steer_base);
	/* The next program counts from zero: not a reset. */
	f->steer_raw = (struct fwd_steer_sample){ 0 };
	f->steer_reset = (struct fwd_steer_sample){ 0 };
	/* The port library wants its socket out of our map before it is destroyed. */
	fwd_iface_steer_sockets(ctx, f, false);
	/* A pinned program stays: it goes back to how xdp-fwd found it. */
	for (uint32_t r = 0; ctx->cfg->pinned && r < ctx->cfg->nr_rules; r++)
		umem_steer__remove_rule(f->steer, f->rule_id[r], NULL);
	if (ctx->cfg->pinned && (umem_steer__set_default(f->steer, &f->pin_default) ||
				 umem_steer__set_table_flags(f->steer, f->pin_flags)))
		fprintf(stderr, "xdp-fwd: warning: %s: the pinned program's table keeps this run's default action\n",
			f->name);
	umem_steer__detach(f->steer);
	f->steer = NULL;
	f->steer_view.of = NULL; /* a new handle may get the same address */
}

/* A counter of this program read as v: one that went down was reset, and what it had counted
 * is carried (the frames between the last read and the reset are not seen). */
static uint64_t monotonic(uint64_t v, uint64_t *raw, uint64_t *reset)
{
	if (v < *raw)
		*reset += *raw;
	*raw = v;
	return v + *reset;
}

void fwd_iface_steer_sample(const struct fwd_ctx *ctx, struct fwd_iface *f, struct fwd_steer_sample *out)
{
	struct fwd_steer_sample cur = { 0 }, *raw = &f->steer_raw, *reset = &f->steer_reset;
	struct umem_steer_counter a[UMEM_STEER_S_NR], c;

	if (f->steer) {
		for (uint32_t r = 0; r < f->steer_view.nr; r++) {
			int k = fwd_hit_slot(f->steer_view.id[r]);

			if (k >= 0 && !umem_steer__rule_counter_of(f->steer, &f->steer_view.rule[r], &c))
				cur.hits[k] = monotonic(c.packets, &raw->hits[k], &reset->hits[k]);
		}
		if (!umem_steer__action_counters(f->steer, a)) {
			cur.drop = monotonic(a[UMEM_STEER_S_DROP].packets, &raw->drop, &reset->drop);
			/* Host control (l3: ARP/ND, TTL <= 1, IPv4 options) hands frames to the kernel as a
			 * pass rule does. */
			cur.pass = monotonic(a[UMEM_STEER_S_PASS].packets + a[UMEM_STEER_S_HOST_CONTROL].packets, &raw->pass, &reset->pass);
			cur.no_socket = monotonic(a[UMEM_STEER_S_NO_SOCKET].packets, &raw->no_socket, &reset->no_socket);
		}
	}
	/* Closed programs' counts carry over for the -r rules only: they get their ids again on
	 * the next program, while run-time rules die with theirs. */
	cur.drop += f->steer_base.drop;
	cur.pass += f->steer_base.pass;
	cur.no_socket += f->steer_base.no_socket;
	for (uint32_t r = 0; r < ctx->cfg->nr_rules; r++) {
		int k = fwd_hit_slot(f->rule_id[r]);

		if (k >= 0)
			cur.hits[k] += f->steer_base.hits[k];
	}
	*out = cur;
}

