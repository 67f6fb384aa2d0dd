/* SPDX-License-Identifier: MIT */
/* --offload-after: set-up and teardown, the interfaces' flow tables, the loss-accounting epochs
 * and the samples the stats print. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "offload.h"
#include "offload_internal.h"
#include "offload_slots.h"

/* Adds what the program behind flows counted, by outcome, to sum[UMEM_STEER_FS_NR]. */
static void add_program_counters(struct umem_steer_flows *flows, struct umem_steer_counter *sum)
{
	struct umem_steer_counter c[UMEM_STEER_FS_NR];

	if (umem_steer_flows__counters(flows, c))
		return;
	for (uint32_t s = 0; s < UMEM_STEER_FS_NR; s++) {
		sum[s].packets += c[s].packets;
		sum[s].bytes += c[s].bytes;
	}
}

/* A new epoch of the loss count (struct fwd_offload): every interface's counters as they are. */
static void loss_epoch(struct fwd_ctx *ctx)
{
	struct fwd_offload *off = ctx->off;
	uint64_t tx0[FWD_MAX_PORTS] = { 0 }, dropped0[FWD_MAX_PORTS] = { 0 };

	fwd_off_settle_targets(ctx); /* the epoch ends on counts read now */

	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		off->ifc[f].lost_before = atomic_load(&off->ifc[f].lost);
		off->ifc[f].redirected0 = fwd_off_redirected_to(ctx, f);
		off->ifc[f].user_tx0 = fwd_off_user_tx(ctx, f);
		off->ifc[f].loss = (struct fwd_loss){ 0 };
	}
	for (uint32_t f = 0; f < FWD_MAX_PORTS; f++) {
		off->ifc[f].tx_wide = (struct fwd_wide32){ 0 };
		off->ifc[f].dropped_wide = (struct fwd_wide32){ 0 };
	}
	fwd_off_read_tx_packets(off, ctx->nr_ifaces, tx0, dropped0);
	for (uint32_t f = 0; f < FWD_MAX_PORTS; f++) {
		off->ifc[f].tx0 = tx0[f];
		off->ifc[f].dropped0 = dropped0[f];
	}
}

/* Interface f's flow table handles, on its steering program. */
static int open_flows(struct fwd_ctx *ctx, uint32_t f)
{
	const struct fwd_config *cfg = ctx->cfg;
	struct fwd_offload *off = ctx->off;
	const struct fwd_iface *fi = &ctx->ifaces[f];
	int err;

	off->ifc[f].ifindex = (uint32_t)umem_port__ifindex(ctx->ports[fi->first].port);
	off->ifc[f].main_flows = umem_steer_flows__open(fi->steer);
	if (!off->ifc[f].main_flows) {
		err = -errno;
		fprintf(stderr, "xdp-fwd: offload: %s: no flow table: %s\n", fi->name,
			strerror(-err));
		return err;
	}
	umem_steer_flows__clear(off->ifc[f].main_flows);
	if (cfg->offload_max) {
		err = umem_steer_flows__set_limit(off->ifc[f].main_flows, cfg->offload_max);
		if (err) {
			fprintf(stderr, "xdp-fwd: --offload-max %u: %s\n", cfg->offload_max, strerror(-err));
			return err;
		}
	}
	for (uint32_t k = 0; k < ctx->nr_workers; k++) {
		off->w[k].flows[f] = umem_steer_flows__open(fi->steer);
		if (!off->w[k].flows[f])
			return -errno;
	}
	if (atomic_exchange(&off->ifc[f].bad_target, false))
		atomic_fetch_sub(&off->nr_bad, 1);
	fwd_off_xmit_probe(off, f, fi->name);
	return 0;
}

static void close_flows(struct fwd_offload *off, uint32_t f)
{
	for (uint32_t k = 0; k < FWD_MAX_WORKERS; k++) {
		umem_steer_flows__close(off->w[k].flows[f]);
		off->w[k].flows[f] = NULL;
	}
	umem_steer_flows__close(off->ifc[f].main_flows);
	off->ifc[f].main_flows = NULL;
	off->ifc[f].ifindex = 0;
}

int fwd_offload_init(struct fwd_ctx *ctx)
{
	struct fwd_offload *off;
	uint32_t limit, slots;

	if (!ctx->cfg->offload_after)
		return 0;
	off = calloc(1, sizeof(*off));
	if (!off)
		return -ENOMEM;
	ctx->off = off;
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		ctx->ifaces[f].off = &off->ifc[f];
	pthread_mutex_init(&off->lock, NULL);
	if (getrandom(&off->tag_key, sizeof(off->tag_key), 0) != sizeof(off->tag_key))
		off->tag_key = (uint32_t)getpid() * 2654435761u; /* no entropy yet: still not 1, 2, 3 */
	fwd_off_targets_open(off);
	/* A tracker for every flow the tables may hold, at half load (8-way probing fails rarely
	 * there): the limit is per interface (each has its table), and any worker may see the
	 * flows of every interface (its ports are queues of several, and -i IFNAME@all may deal
	 * it more). */
	limit = ctx->cfg->offload_max ? ctx->cfg->offload_max : UMEM_STEER_MAX_FLOWS;
	for (slots = 1; slots < 2ull * limit * (ctx->nr_ifaces ? ctx->nr_ifaces : 1); slots *= 2)
		;
	for (uint32_t k = 0; k < ctx->nr_workers; k++) {
		off->w[k].nr_slots = slots;
		off->w[k].slots = calloc(slots, sizeof(*off->w[k].slots));
		off->w[k].arming = calloc(slots, sizeof(*off->w[k].arming));
		off->w[k].live = calloc(slots, sizeof(*off->w[k].live));
		if (!off->w[k].slots || !off->w[k].arming || !off->w[k].live)
			return -ENOMEM;
	}
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		int err = ctx->ifaces[f].steer ? open_flows(ctx, f) : 0;

		if (err)
			return err;
	}
	loss_epoch(ctx);
	return 0;
}

int fwd_offload_map_fds(struct fwd_ctx *ctx, uint32_t f, int *out, uint32_t max)
{
	if (!ctx->off || !ctx->off->ifc[f].main_flows)
		return 0;
	return umem_steer_flows__map_fds(ctx->off->ifc[f].main_flows, out, max);
}

void fwd_offload_iface_down(struct fwd_ctx *ctx, uint32_t f)
{
	struct fwd_offload *off = ctx->off;
	uint64_t now = fwd_now_ns();

	if (!off || !off->ifc[f].main_flows)
		return;
	add_program_counters(off->ifc[f].main_flows, off->ifc[f].gone);
	for (uint32_t k = 0; k < ctx->nr_workers; k++) {
		struct fwd_worker *w = &ctx->workers[k];
		struct off_worker *ow = &off->w[k];

		for (uint32_t i = ow->nr_live; i-- > 0;) { /* from the end: it frees as it goes */
			struct off_flow *e = &ow->slots[ow->live[i]];
			bool installed = e->state == OFF_ARMING || e->state == OFF_OFFLOADED;

			if (ctx->ports[e->in].iface == f) {
				fwd_off_to_counting(w, e, now, false); /* its table goes with the program */
				fwd_off_slot_free(ow, e);
			} else if (installed && ctx->ports[e->out].iface == f) {
				fwd_off_to_counting(w, e, now, true); /* the kernel dropped its devmap entry */
			}
		}
	}
	close_flows(off, f);
	loss_epoch(ctx);
}

void fwd_offload_port_down(struct fwd_ctx *ctx, uint32_t i)
{
	struct fwd_offload *off = ctx->off;
	uint64_t now = fwd_now_ns();

	for (uint32_t k = 0; off && k < ctx->nr_workers; k++)
		for (uint32_t j = 0; j < off->w[k].nr_live; j++) {
			struct off_flow *e = &off->w[k].slots[off->w[k].live[j]];

			if ((e->state == OFF_ARMING || e->state == OFF_OFFLOADED) && (e->in == i || e->out == i))
				fwd_off_to_counting(&ctx->workers[k], e, now, true);
		}
}

int fwd_offload_iface_up(struct fwd_ctx *ctx, uint32_t f)
{
	int err;

	if (!ctx->off || !ctx->ifaces[f].steer)
		return 0;
	err = open_flows(ctx, f);
	if (err)
		close_flows(ctx->off, f);
	loss_epoch(ctx);
	return err;
}

void fwd_offload_fini(struct fwd_ctx *ctx)
{
	struct fwd_offload *off = ctx->off;

	if (!off)
		return;
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		ctx->ifaces[f].off = NULL;
	for (uint32_t k = 0; k < FWD_MAX_WORKERS; k++) {
		free(off->w[k].slots);
		free(off->w[k].arming);
		free(off->w[k].live);
	}
	for (uint32_t f = 0; f < FWD_MAX_PORTS; f++)
		close_flows(off, f);
	pthread_mutex_destroy(&off->lock);
	fwd_off_targets_close(off);
	free(off);
	ctx->off = NULL;
}

void fwd_offload_settle(struct fwd_ctx *ctx)
{
	if (ctx->off)
		fwd_off_settle_targets(ctx);
}

void fwd_offload_sample(struct fwd_ctx *ctx, uint32_t port, struct fwd_offload_sample *out)
{
	const struct fwd_iface *fi = &ctx->ifaces[ctx->ports[port].iface];
	const struct fwd_off_iface *oi = fi->off;
	struct umem_steer_counter c[UMEM_STEER_FS_NR];
	const struct off_iface_counters *k;

	*out = (struct fwd_offload_sample){ 0 };
	if (!oi || fi->first != port)
		return;
	memcpy(c, oi->gone, sizeof(c));
	if (oi->main_flows)
		add_program_counters(oi->main_flows, c);
	for (uint32_t s = 0; s < UMEM_STEER_FS_NR; s++) {
		if (s == UMEM_STEER_FS_GATED || s == UMEM_STEER_FS_NO_DEV || s == UMEM_STEER_FS_CSUM_PARTIAL ||
		    s == UMEM_STEER_FS_ROUTE_KEPT)
			continue; /* those went to userspace: counted in rx */
		out->packets += c[s].packets;
		out->bytes += c[s].bytes;
	}
	out->gated = c[UMEM_STEER_FS_GATED].packets;
	out->csum_passed = c[UMEM_STEER_FS_CSUM_PARTIAL].packets;
	out->route_kept = c[UMEM_STEER_FS_ROUTE_KEPT].packets;
	k = &oi->ctr;
	out->lost = atomic_load(&oi->lost);
	out->installed = atomic_load(&k->installed);
	out->expired = atomic_load(&k->expired);
	out->invalidated = atomic_load(&k->invalidated);
	out->full = atomic_load(&k->full);
	out->refused = atomic_load(&k->refused);
	out->forced = atomic_load(&k->forced);
	out->no_target = atomic_load(&k->no_target);
	out->untracked = atomic_load(&k->untracked);
	out->csum_kept = atomic_load(&k->csum_kept);
	out->drained = atomic_load(&k->drained);
	out->flows = (uint64_t)atomic_load(&k->flows);
}
