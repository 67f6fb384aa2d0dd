/* SPDX-License-Identifier: MIT */
/* xdp-fwd's report of a run: its counters sampled (ports, pools, interfaces' steering and
 * offload, capture) and printed as lines or JSON (the formats themselves: stats.c). */
#include <string.h>
#include <umem/pool.h>

#include "capture.h"
#include "ctx.h"
#include "mode.h"
#include "netif.h"
#include "offload.h"
#include "ports.h"
#include "report.h"

uint32_t fwd_steered_interfaces(const struct fwd_ctx *ctx)
{
	return ctx->cfg->nr_rules ? ctx->nr_ifaces : 0;
}

static void sample_counters(struct fwd_ctx *ctx, struct fwd_samples *s)
{
	for (uint32_t i = 0; i < ctx->nr_ports; i++)
		fwd_port_sample_read(&s->port[i], &ctx->ports[i].ctr);
	for (uint32_t f = 0; ctx->cfg->nr_rules && f < ctx->nr_ifaces; f++)
		fwd_iface_steer_sample(ctx, &ctx->ifaces[f], &s->steer[f]);
	for (uint32_t k = 0; k < ctx->nr_workers; k++) {
		const struct fwd_worker *w = &ctx->workers[k];
		struct umem_pool_stats st = { .sz = sizeof(st) };

		if (!w->pool || umem_pool__stats(w->pool, &st))
			continue;
		s->pool[k] = (struct fwd_pool_sample){
			.allocs = st.alloc.fast + st.alloc.slow + st.alloc.slow_high_order,
			.slow = st.alloc.slow + st.alloc.slow_high_order,
			.fresh = st.pages_held,
			.recycled = st.recycle.cached + st.recycle.ring,
			.inflight = st.inflight,
			.sleeps = atomic_load_explicit(&w->sleeps, memory_order_relaxed),
			.late_handoffs = atomic_load_explicit(&w->late_handoffs, memory_order_relaxed),
			.cpu_ns = atomic_load_explicit(&w->cpu_ns, memory_order_relaxed),
		};
	}
	if (ctx->cap)
		fwd_capture_sample(ctx->cap, &s->capture);
}

/* The stats sample, with the kernel's share of --offload-after and the link state beside each
 * port's counters. */
void fwd_report_sample(struct fwd_ctx *ctx, struct fwd_samples *s)
{
	fwd_ifaces_read_tx_kernel(ctx);
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		fwd_rule_view_refresh(&ctx->ifaces[f].steer_view, ctx->ifaces[f].steer, ctx->cfg, ctx->ifaces[f].rule_id);
	sample_counters(ctx, s);
	if (ctx->mode->sample)
		ctx->mode->sample(ctx, s);
	fwd_ifaces_read_links(ctx);
	for (uint32_t i = 0; i < ctx->nr_ports; i++) {
		fwd_offload_sample(ctx, i, &s->port[i].offload);
		/* A removed port reads as down: its series stay, frozen at their totals. */
		s->port[i].link_down = ctx->ifaces[ctx->ports[i].iface].link_down || ctx->ports[i].removed;
	}
}

static uint32_t ports_on_interface(const struct fwd_ctx *ctx, uint32_t iface)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < ctx->nr_ports; i++)
		n += ctx->ports[i].iface == iface;
	return n;
}

uint32_t fwd_multi_queue_interfaces(const struct fwd_ctx *ctx)
{
	uint32_t n = 0;

	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		n += ports_on_interface(ctx, f) > 1;
	return n;
}

static void pool_name(char *buf, size_t len, uint32_t k)
{
	snprintf(buf, len, "pool w%u", k);
}

void fwd_print_stats(FILE *out, const struct fwd_ctx *ctx, const struct fwd_samples *start,
		     const struct fwd_samples *prev, const struct fwd_samples *cur, double dt, double t,
		     const char *kind)
{
	const struct fwd_config *cfg = ctx->cfg;
	bool totals = cfg->json_totals || prev == start;
	const struct fwd_samples *base = totals ? start : prev;
	char name[32];

	if (cfg->json) {
		fwd_json_begin(out, t, kind, totals);
		for (uint32_t i = 0; i < ctx->nr_ports; i++)
			fwd_json_port(out, i == 0, ctx->ports[i].name, &base->port[i], &prev->port[i], &cur->port[i], dt);
		fwd_json_pools(out);
		for (uint32_t k = 0; k < ctx->nr_workers; k++) {
			pool_name(name, sizeof(name), k);
			fwd_json_pool(out, k == 0, name, &base->pool[k], &prev->pool[k], &cur->pool[k]);
		}
		for (uint32_t f = 0; cfg->nr_rules && f < ctx->nr_ifaces; f++)
			fwd_json_steer(out, f == 0, ctx->ifaces[f].name, ctx->ifaces[f].steer_view.text,
				       ctx->ifaces[f].steer_view.id, ctx->ifaces[f].steer_view.nr,
				       &base->steer[f], &cur->steer[f]);
		fputc(']', out);
		if (ctx->mode->print_json)
			ctx->mode->print_json(out, cur);
		if (ctx->cap)
			fwd_json_capture(out, fwd_capture_path(ctx->cap), &base->capture, &cur->capture);
		fwd_json_close(out);
		return;
	}
	/* t is the time since start; the rates are over the interval (the whole run for "total"). */
	fprintf(out, strcmp(kind, "total") ? "elapsed %.1fs" : "total over %.1fs", t);
	if (ctx->mode->print_head)
		ctx->mode->print_head(out, cur);
	fputc('\n', out);
	for (uint32_t i = 0; i < ctx->nr_ports; i++)
		fwd_fmt_port_line(out, ctx->ports[i].name, &prev->port[i], &cur->port[i], dt);
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		struct fwd_port_sample a = { 0 }, b = { 0 };
		if (ports_on_interface(ctx, f) < 2)
			continue;
		for (uint32_t i = 0; i < ctx->nr_ports; i++) {
			if (ctx->ports[i].iface != f)
				continue;
			fwd_port_sample_add(&a, &prev->port[i]);
			fwd_port_sample_add(&b, &cur->port[i]);
		}
		snprintf(name, sizeof(name), "%s@all", ctx->ifaces[f].name);
		fwd_fmt_port_line(out, name, &a, &b, dt);
	}
	for (uint32_t k = 0; k < ctx->nr_workers; k++) {
		pool_name(name, sizeof(name), k);
		fwd_fmt_pool_line(out, name, &prev->pool[k], &cur->pool[k]);
	}
	for (uint32_t f = 0; cfg->nr_rules && f < ctx->nr_ifaces; f++)
		fwd_fmt_steer_line(out, ctx->ifaces[f].name, ctx->ifaces[f].steer_view.text,
				   ctx->ifaces[f].steer_view.id, ctx->ifaces[f].steer_view.nr,
				   &prev->steer[f], &cur->steer[f]);
	if (ctx->cap)
		fwd_fmt_capture_line(out, fwd_capture_path(ctx->cap), &prev->capture, &cur->capture);
	fflush(out);
}
