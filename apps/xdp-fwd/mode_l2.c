/* SPDX-License-Identifier: MIT */
/* --mode l2: a learning bridge. The MAC table (l2.c, ctx->l2) is shared by the workers without a
 * lock; the l2 offload reads it too (offload.c). */
#include <stdbool.h>

#include "ctx.h"
#include "l2.h"
#include "mode.h"
#include "path.h"

static void l2_burst(struct fwd_worker *w, uint32_t in, struct umem_desc *d, uint32_t n, uint64_t now)
{
	/* The MAC table takes concurrent learners and readers (l2.h), no lock. */
	fwd_worker_route(w, FWD_MODE_L2, in, d, n, now);
}

static int l2_setup(struct fwd_ctx *ctx)
{
	const struct fwd_config *cfg = ctx->cfg;
	int err = l2_table_init(&ctx->l2, cfg->l2_size, cfg->l2_aging * 1000000000ull);

	if (!err)
		ctx->l2.group_fwd_mask = cfg->group_fwd_mask;
	return err;
}

static void l2_teardown(struct fwd_ctx *ctx)
{
	if (ctx->l2.slots)
		l2_table_fini(&ctx->l2);
}

static void l2_sample(struct fwd_ctx *ctx, struct fwd_samples *s)
{
	s->l2_macs = l2_count(&ctx->l2, fwd_now_ns());
}

static void l2_print_head(FILE *out, const struct fwd_samples *cur)
{
	fprintf(out, "  l2 macs %u", cur->l2_macs);
}

static void l2_print_json(FILE *out, const struct fwd_samples *cur)
{
	fprintf(out, ",\"l2\":{\"macs\":%u}", cur->l2_macs);
}

struct l2_print {
	FILE *out;
	const struct fwd_ctx *ctx;
	bool json, first;
};

static void l2_print_entry(const struct l2_entry_view *e, void *arg)
{
	struct l2_print *p = arg;
	const uint8_t *m = e->mac;
	const char *port = e->port >= 0 && (uint32_t)e->port < p->ctx->nr_ports ? p->ctx->ports[e->port].name : "?";

	if (p->json) {
		fprintf(p->out, "%s{\"mac\":\"%02x:%02x:%02x:%02x:%02x:%02x\",\"port\":", p->first ? "" : ",",
			m[0], m[1], m[2], m[3], m[4], m[5]);
		fwd_json_string(p->out, port);
		fprintf(p->out, ",\"age\":%.1f}", (double)e->age_ns / 1e9);
	} else {
		fprintf(p->out, "mac %02x:%02x:%02x:%02x:%02x:%02x  port %-12s  age %.1fs\n", m[0], m[1], m[2],
			m[3], m[4], m[5], port, (double)e->age_ns / 1e9);
	}
	p->first = false;
}

/* The MAC table's live entries (MAC, port, age) to out, as lines or one JSON object of type
 * "mac_table" (SIGUSR1 asks for it with the stats). */
static void l2_print_table(FILE *out, const struct fwd_ctx *ctx, uint64_t now_ns, double t)
{
	struct l2_print p = { .out = out, .ctx = ctx, .json = ctx->cfg->json, .first = true };
	uint32_t n;

	if (p.json)
		fprintf(out, "{\"type\":\"mac_table\",\"time\":%.3f,\"entries\":[", t);
	n = l2_walk(&ctx->l2, now_ns, l2_print_entry, &p);
	if (p.json)
		fprintf(out, "],\"macs\":%u}\n", n);
	else
		fprintf(out, "mac table: %u entries\n", n);
	fflush(out);
}

const struct fwd_mode_ops fwd_mode_l2 = {
	.burst = l2_burst,
	.setup = l2_setup,
	.teardown = l2_teardown,
	.sample = l2_sample,
	.print_head = l2_print_head,
	.print_json = l2_print_json,
	.print_table = l2_print_table,
};
