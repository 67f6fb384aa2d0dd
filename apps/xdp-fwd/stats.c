/* SPDX-License-Identifier: MIT */
#include <string.h>
#include <umem/pool.h>

#include "stats.h"
#include "worker.h"

const char *const fwd_drop_names[FWD_DROP_MAX] = {
	[FWD_DROP_TX_FULL] = "tx_full",
	[FWD_DROP_NO_PORT] = "no_port",
	[FWD_DROP_INVALID] = "invalid",
	[FWD_DROP_XSK_RX] = "xsk_rx_dropped",
	[FWD_DROP_XSK_RX_FULL] = "xsk_rx_ring_full",
	[FWD_DROP_XSK_FILL] = "xsk_fill_empty",
	[FWD_DROP_XSK_RX_INVALID] = "xsk_rx_invalid",
	[FWD_DROP_XSK_TX_INVALID] = "xsk_tx_invalid",
};

void fwd_port_sample_read(struct fwd_port_sample *s, const struct fwd_port_counters *c)
{
	s->rx_packets = atomic_load_explicit(&c->rx_packets, memory_order_relaxed);
	s->rx_bytes = atomic_load_explicit(&c->rx_bytes, memory_order_relaxed);
	s->tx_packets = atomic_load_explicit(&c->tx_packets, memory_order_relaxed);
	s->tx_bytes = atomic_load_explicit(&c->tx_bytes, memory_order_relaxed);
	for (int i = 0; i < FWD_DROP_MAX; i++)
		s->drop[i] = atomic_load_explicit(&c->drop[i], memory_order_relaxed);
}

void fwd_port_sample_add(struct fwd_port_sample *sum, const struct fwd_port_sample *s)
{
	sum->rx_packets += s->rx_packets;
	sum->rx_bytes += s->rx_bytes;
	sum->tx_packets += s->tx_packets;
	sum->tx_bytes += s->tx_bytes;
	for (int i = 0; i < FWD_DROP_MAX; i++)
		sum->drop[i] += s->drop[i];
}

char *fwd_fmt_si(char *buf, size_t len, double v)
{
	static const char prefix[] = " kMGTP";
	int i = 0;

	if (v < 1000) {
		snprintf(buf, len, "%.0f", v);
		return buf;
	}
	while (v >= 999.5 && prefix[i + 1]) {
		v /= 1000;
		i++;
	}
	/* Three significant digits. */
	snprintf(buf, len, v < 9.995 ? "%.2f %c" : v < 99.95 ? "%.1f %c" : "%.0f %c", v, prefix[i]);
	return buf;
}

double fwd_recycle_hit_rate(const struct fwd_pool_sample *prev, const struct fwd_pool_sample *cur)
{
	uint64_t allocs = cur->allocs - prev->allocs;
	uint64_t fresh = cur->fresh - prev->fresh;

	if (!allocs)
		return -1;
	/* A slow-path refill takes a batch of pages at once: never report below 0 %. */
	if (fresh > allocs)
		fresh = allocs;
	return 100.0 * (double)(allocs - fresh) / (double)allocs;
}

static double rate(uint64_t a, uint64_t b, double dt)
{
	return dt > 0 ? (double)(b - a) / dt : 0;
}

void fwd_fmt_port_line(FILE *out, const char *name, const struct fwd_port_sample *prev,
		       const struct fwd_port_sample *cur, double dt)
{
	char rxp[16], rxb[16], txp[16], txb[16];
	bool any = false;

	fprintf(out, "%-12s rx %8spps %8sbit/s  tx %8spps %8sbit/s", name,
		fwd_fmt_si(rxp, sizeof(rxp), rate(prev->rx_packets, cur->rx_packets, dt)),
		fwd_fmt_si(rxb, sizeof(rxb), 8 * rate(prev->rx_bytes, cur->rx_bytes, dt)),
		fwd_fmt_si(txp, sizeof(txp), rate(prev->tx_packets, cur->tx_packets, dt)),
		fwd_fmt_si(txb, sizeof(txb), 8 * rate(prev->tx_bytes, cur->tx_bytes, dt)));
	for (int i = 0; i < FWD_DROP_MAX; i++) {
		if (cur->drop[i] == prev->drop[i])
			continue;
		fprintf(out, "%s %s %llu", any ? "," : "  drops:", fwd_drop_names[i],
			(unsigned long long)(cur->drop[i] - prev->drop[i]));
		any = true;
	}
	fputc('\n', out);
}

void fwd_fmt_pool_line(FILE *out, const char *name, const struct fwd_pool_sample *prev,
		       const struct fwd_pool_sample *cur)
{
	double hit = fwd_recycle_hit_rate(prev, cur);

	fprintf(out, "%-12s recycle hit ", name);
	if (hit < 0)
		fputs("    -", out);
	else
		fprintf(out, "%5.1f%%", hit);
	fprintf(out, "  slow allocs %llu  inflight %lld\n",
		(unsigned long long)(cur->slow - prev->slow), (long long)cur->inflight);
}

void fwd_json_begin(FILE *out, double t, const char *kind)
{
	fprintf(out, "{\"type\":\"%s\",\"time\":%.3f,\"ports\":[", kind, t);
}

void fwd_json_port(FILE *out, bool first, const char *name, const struct fwd_port_sample *prev,
		   const struct fwd_port_sample *cur, double dt)
{
	fprintf(out,
		"%s{\"name\":\"%s\",\"rx_packets\":%llu,\"rx_bytes\":%llu,\"tx_packets\":%llu,"
		"\"tx_bytes\":%llu,\"rx_pps\":%.0f,\"rx_bps\":%.0f,\"tx_pps\":%.0f,\"tx_bps\":%.0f,"
		"\"drops\":{",
		first ? "" : ",", name, (unsigned long long)(cur->rx_packets - prev->rx_packets),
		(unsigned long long)(cur->rx_bytes - prev->rx_bytes),
		(unsigned long long)(cur->tx_packets - prev->tx_packets),
		(unsigned long long)(cur->tx_bytes - prev->tx_bytes),
		rate(prev->rx_packets, cur->rx_packets, dt), 8 * rate(prev->rx_bytes, cur->rx_bytes, dt),
		rate(prev->tx_packets, cur->tx_packets, dt), 8 * rate(prev->tx_bytes, cur->tx_bytes, dt));
	for (int i = 0; i < FWD_DROP_MAX; i++)
		fprintf(out, "%s\"%s\":%llu", i ? "," : "", fwd_drop_names[i],
			(unsigned long long)(cur->drop[i] - prev->drop[i]));
	fputs("}}", out);
}

void fwd_json_pools(FILE *out)
{
	fputs("],\"pools\":[", out);
}

void fwd_json_pool(FILE *out, bool first, const char *name, const struct fwd_pool_sample *prev,
		   const struct fwd_pool_sample *cur)
{
	double hit = fwd_recycle_hit_rate(prev, cur);

	fprintf(out, "%s{\"name\":\"%s\",\"allocs\":%llu,\"slow\":%llu,\"recycled\":%llu,",
		first ? "" : ",", name, (unsigned long long)(cur->allocs - prev->allocs),
		(unsigned long long)(cur->slow - prev->slow),
		(unsigned long long)(cur->recycled - prev->recycled));
	if (hit < 0)
		fputs("\"recycle_hit_pct\":null,", out);
	else
		fprintf(out, "\"recycle_hit_pct\":%.2f,", hit);
	fprintf(out, "\"inflight\":%lld}", (long long)cur->inflight);
}

void fwd_json_end(FILE *out)
{
	fputs("]}\n", out);
	fflush(out);
}

/* ---- sampling and printing a run ---- */


void fwd_sample(const struct fwd_ctx *ctx, struct fwd_samples *s)
{
	for (uint32_t i = 0; i < ctx->nr_ports; i++)
		fwd_port_sample_read(&s->port[i], &ctx->ports[i].ctr);
	for (uint32_t k = 0; k < ctx->nr_workers; k++) {
		struct umem_pool_stats st = { .sz = sizeof(st) };

		if (!ctx->workers[k].pool || umem_pool__stats(ctx->workers[k].pool, &st))
			continue;
		s->pool[k] = (struct fwd_pool_sample){
			.allocs = st.alloc.fast + st.alloc.slow + st.alloc.slow_high_order,
			.slow = st.alloc.slow + st.alloc.slow_high_order,
			.fresh = st.pages_held,
			.recycled = st.recycle.cached + st.recycle.ring,
			.inflight = st.inflight,
		};
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

void fwd_print_stats(const struct fwd_ctx *ctx, const struct fwd_samples *prev,
			const struct fwd_samples *cur, double dt, double t, const char *kind)
{
	const struct fwd_config *cfg = ctx->cfg;
	char name[32];

	if (cfg->json) {
		fwd_json_begin(stdout, t, kind);
		for (uint32_t i = 0; i < ctx->nr_ports; i++)
			fwd_json_port(stdout, i == 0, ctx->ports[i].name, &prev->port[i], &cur->port[i], dt);
		fwd_json_pools(stdout);
		for (uint32_t k = 0; k < ctx->nr_workers; k++) {
			pool_name(name, sizeof(name), k);
			fwd_json_pool(stdout, k == 0, name, &prev->pool[k], &cur->pool[k]);
		}
		fwd_json_end(stdout);
		return;
	}
	printf("%s %.1fs\n", kind, t);
	for (uint32_t i = 0; i < ctx->nr_ports; i++)
		fwd_fmt_port_line(stdout, ctx->ports[i].name, &prev->port[i], &cur->port[i], dt);
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		struct fwd_port_sample a = { 0 }, b = { 0 };
		const char *ifname = NULL;

		if (ports_on_interface(ctx, f) < 2)
			continue;
		for (uint32_t i = 0; i < ctx->nr_ports; i++) {
			if (ctx->ports[i].iface != f)
				continue;
			fwd_port_sample_add(&a, &prev->port[i]);
			fwd_port_sample_add(&b, &cur->port[i]);
			ifname = cfg->ports[i].ifname;
		}
		snprintf(name, sizeof(name), "%s@all", ifname);
		fwd_fmt_port_line(stdout, name, &a, &b, dt);
	}
	for (uint32_t k = 0; k < ctx->nr_workers; k++) {
		pool_name(name, sizeof(name), k);
		fwd_fmt_pool_line(stdout, name, &prev->pool[k], &cur->pool[k]);
	}
	fflush(stdout);
}
