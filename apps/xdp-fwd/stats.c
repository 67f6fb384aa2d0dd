/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <umem/pool.h>

#include "stats.h"

const char *const fwd_drop_names[FWD_DROP_MAX] = {
	[FWD_DROP_TX_FULL] = "tx_full",
	[FWD_DROP_NO_PORT] = "no_port",
	[FWD_DROP_INVALID] = "invalid",
	[FWD_DROP_XSK_RX] = "xsk_rx_dropped",
	[FWD_DROP_XSK_RX_FULL] = "xsk_rx_ring_full",
	[FWD_DROP_XSK_FILL] = "xsk_fill_empty",
	[FWD_DROP_XSK_RX_INVALID] = "xsk_rx_invalid",
	[FWD_DROP_XSK_TX_INVALID] = "xsk_tx_invalid",
	[FWD_DROP_DOWN] = "down",
	[FWD_DROP_TX_UNSENT] = "tx_unsent",
	[FWD_DROP_L2_RESERVED] = "l2_reserved",
	[FWD_DROP_L2_SRC_GROUP] = "l2_src_group",
	[FWD_DROP_L2_SRC_ZERO] = "l2_src_zero",
	[FWD_DROP_L3] = "l3",
	[FWD_DROP_GATE_DRAIN] = "gate_drain",
	[FWD_DROP_TX_KERNEL] = "tx_dropped_kernel",
};

/* The offload counters, in the order of the JSON's "offload" object (the rates follow bytes);
 * flows is a level (flows installed now), the others count. */
#define OFF_FIELD(f) { #f, offsetof(struct fwd_offload_sample, f) }
static const struct {
	const char *name;
	size_t off;
} offload_fields[] = {
	OFF_FIELD(packets),   OFF_FIELD(bytes),     OFF_FIELD(gated),      OFF_FIELD(lost),      OFF_FIELD(installed),
	OFF_FIELD(expired),   OFF_FIELD(invalidated), OFF_FIELD(full),     OFF_FIELD(refused),   OFF_FIELD(forced),
	OFF_FIELD(no_target), OFF_FIELD(untracked), OFF_FIELD(csum_kept),  OFF_FIELD(csum_passed), OFF_FIELD(route_kept),
	OFF_FIELD(drained),   OFF_FIELD(flows),
};
#define OFFLOAD_FIELDS (sizeof(offload_fields) / sizeof(offload_fields[0]))
_Static_assert(OFFLOAD_FIELDS * sizeof(uint64_t) == sizeof(struct fwd_offload_sample),
	       "every offload counter is in offload_fields");

static inline uint64_t off_get(const struct fwd_offload_sample *o, size_t i)
{
	return *(const uint64_t *)(const void *)((const char *)o + offload_fields[i].off);
}

static inline uint64_t *off_at(struct fwd_offload_sample *o, size_t i)
{
	return (uint64_t *)(void *)((char *)o + offload_fields[i].off);
}

void fwd_port_sample_read(struct fwd_port_sample *s, const struct fwd_port_counters *c)
{
	s->rx_packets = atomic_load_explicit(&c->rx_packets, memory_order_relaxed);
	s->rx_bytes = atomic_load_explicit(&c->rx_bytes, memory_order_relaxed);
	s->tx_packets = atomic_load_explicit(&c->tx_packets, memory_order_relaxed);
	s->tx_bytes = atomic_load_explicit(&c->tx_bytes, memory_order_relaxed);
	for (int i = 0; i < FWD_DROP_MAX; i++)
		s->drop[i] = atomic_load_explicit(&c->drop[i], memory_order_relaxed);
	s->csum_partial = atomic_load_explicit(&c->csum_partial, memory_order_relaxed);
	s->csum_completed = atomic_load_explicit(&c->csum_completed, memory_order_relaxed);
	s->csum_uncompleted = atomic_load_explicit(&c->csum_uncompleted, memory_order_relaxed);
}

void fwd_port_sample_add(struct fwd_port_sample *sum, const struct fwd_port_sample *s)
{
	sum->rx_packets += s->rx_packets;
	sum->rx_bytes += s->rx_bytes;
	sum->tx_packets += s->tx_packets;
	sum->tx_bytes += s->tx_bytes;
	for (int i = 0; i < FWD_DROP_MAX; i++)
		sum->drop[i] += s->drop[i];
	sum->link_down |= s->link_down;
	sum->csum_partial += s->csum_partial;
	sum->csum_completed += s->csum_completed;
	sum->csum_uncompleted += s->csum_uncompleted;
	for (size_t i = 0; i < OFFLOAD_FIELDS; i++)
		*off_at(&sum->offload, i) += off_get(&s->offload, i);
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
	if (cur->csum_partial != prev->csum_partial)
		fprintf(out, "  csum partial %llu completed %llu", (unsigned long long)(cur->csum_partial - prev->csum_partial),
			(unsigned long long)(cur->csum_completed - prev->csum_completed));
	if (cur->offload.installed || cur->offload.full || cur->offload.refused || cur->offload.lost ||
	    cur->offload.no_target || cur->offload.untracked || cur->offload.csum_kept) {
		const struct fwd_offload_sample *a = &prev->offload, *b = &cur->offload;

		fprintf(out, "  offload %spps %sbit/s flows %llu", fwd_fmt_si(rxp, sizeof(rxp), rate(a->packets, b->packets, dt)),
			fwd_fmt_si(rxb, sizeof(rxb), 8 * rate(a->bytes, b->bytes, dt)), (unsigned long long)b->flows);
		if (b->lost != a->lost)
			fprintf(out, " lost %llu", (unsigned long long)(b->lost - a->lost));
		if (b->full != a->full)
			fprintf(out, " full %llu", (unsigned long long)(b->full - a->full));
		if (b->refused != a->refused)
			fprintf(out, " refused %llu", (unsigned long long)(b->refused - a->refused));
		if (b->no_target != a->no_target)
			fprintf(out, " no-target %llu", (unsigned long long)(b->no_target - a->no_target));
		if (b->untracked != a->untracked)
			fprintf(out, " untracked %llu", (unsigned long long)(b->untracked - a->untracked));
		if (b->csum_kept != a->csum_kept)
			fprintf(out, " csum-kept %llu", (unsigned long long)(b->csum_kept - a->csum_kept));
		if (b->csum_passed != a->csum_passed)
			fprintf(out, " csum-passed %llu", (unsigned long long)(b->csum_passed - a->csum_passed));
		if (b->route_kept != a->route_kept)
			fprintf(out, " route-kept %llu", (unsigned long long)(b->route_kept - a->route_kept));
		if (b->drained != a->drained)
			fprintf(out, " drained %llu", (unsigned long long)(b->drained - a->drained));
		if (b->forced != a->forced)
			fprintf(out, " forced %llu", (unsigned long long)(b->forced - a->forced));
	}
	if (cur->link_down)
		fputs("  link down", out);
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
	fprintf(out, "  slow allocs %llu  pages held %lld  sleeps %llu", (unsigned long long)(cur->slow - prev->slow),
		(long long)cur->inflight, (unsigned long long)(cur->sleeps - prev->sleeps));
	if (cur->late_handoffs != prev->late_handoffs)
		fprintf(out, "  late handoffs %llu", (unsigned long long)(cur->late_handoffs - prev->late_handoffs));
	fputc('\n', out);
}

/* A rule's hits since prev; an id given to a new rule meanwhile starts again from 0. */
unsigned long long fwd_rule_hits_since(const struct fwd_steer_sample *prev, const struct fwd_steer_sample *cur,
				     uint32_t id)
{
	int k = fwd_hit_slot(id);

	if (k < 0)
		return 0;
	return cur->hits[k] >= prev->hits[k] ? cur->hits[k] - prev->hits[k] : cur->hits[k];
}

void fwd_fmt_steer_line(FILE *out, const char *ifname, const char *const *rule_text, const uint32_t *ids,
			uint32_t nr_rules, const struct fwd_steer_sample *prev, const struct fwd_steer_sample *cur)
{
	fprintf(out, "steer %-6s drop %llu  pass %llu  no_socket %llu  rule hits", ifname,
		(unsigned long long)(cur->drop - prev->drop), (unsigned long long)(cur->pass - prev->pass),
		(unsigned long long)(cur->no_socket - prev->no_socket));
	for (uint32_t r = 0; r < nr_rules; r++)
		fprintf(out, "%s '%s' %llu", r ? "," : "", rule_text[r], fwd_rule_hits_since(prev, cur, ids[r]));
	fputc('\n', out);
}

/* The length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong form, no surrogate,
 * nothing above U+10FFFF), or 0. */
static int utf8_len(const unsigned char *s)
{
	int n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2;

	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f))
		return 0;
	return n;
}

void fwd_json_string(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', out);
	while (*s) {
		int n = *s < 0x80 ? 1 : utf8_len(s);

		if (*s == '"' || *s == '\\') {
			fputc('\\', out);
			fputc(*s++, out);
		} else if (*s < 0x20 || !n) {
			/* Controls must be escaped (RFC 8259 section 7); a byte that is not UTF-8 is
			 * kept as the code point of its value (Latin-1), so no byte is lost. */
			fprintf(out, "\\u%04x", *s++);
		} else {
			fwrite(s, 1, (size_t)n, out);
			s += n;
		}
	}
	fputc('"', out);
}

void fwd_json_steer(FILE *out, bool first, const char *ifname, const char *const *rule_text, const uint32_t *ids,
		    uint32_t nr_rules, const struct fwd_steer_sample *prev, const struct fwd_steer_sample *cur)
{
	fprintf(out, "%s{\"ifname\":", first ? "],\"steer\":[" : ",");
	fwd_json_string(out, ifname);
	fputs(",\"rules\":[", out);
	for (uint32_t r = 0; r < nr_rules; r++) {
		fprintf(out, "%s{\"rule\":", r ? "," : "");
		fwd_json_string(out, rule_text[r]);
		fprintf(out, ",\"id\":%u,\"hits\":%llu}", ids[r], fwd_rule_hits_since(prev, cur, ids[r]));
	}
	fprintf(out, "],\"drop\":%llu,\"pass\":%llu,\"no_socket\":%llu}",
		(unsigned long long)(cur->drop - prev->drop), (unsigned long long)(cur->pass - prev->pass),
		(unsigned long long)(cur->no_socket - prev->no_socket));
}

void fwd_json_begin(FILE *out, double t, const char *kind, bool totals)
{
	struct timespec now;

	/* The wall clock for a collector that stores the lines; time is since the start. */
	clock_gettime(CLOCK_REALTIME, &now);
	fprintf(out, "{\"type\":\"%s\",\"timestamp\":%lld.%03ld,\"time\":%.3f,\"counts\":\"%s\",\"ports\":[",
		kind, (long long)now.tv_sec, now.tv_nsec / 1000000, t, totals ? "total" : "interval");
}

void fwd_json_port(FILE *out, bool first, const char *name, const struct fwd_port_sample *base,
		   const struct fwd_port_sample *prev, const struct fwd_port_sample *cur, double dt)
{
	fprintf(out, "%s{\"name\":", first ? "" : ",");
	fwd_json_string(out, name);
	fprintf(out,
		",\"rx_packets\":%llu,\"rx_bytes\":%llu,\"tx_packets\":%llu,"
		"\"tx_bytes\":%llu,\"rx_pps\":%.0f,\"rx_bps\":%.0f,\"tx_pps\":%.0f,\"tx_bps\":%.0f,"
		"\"drops\":{",
		(unsigned long long)(cur->rx_packets - base->rx_packets),
		(unsigned long long)(cur->rx_bytes - base->rx_bytes),
		(unsigned long long)(cur->tx_packets - base->tx_packets),
		(unsigned long long)(cur->tx_bytes - base->tx_bytes),
		rate(prev->rx_packets, cur->rx_packets, dt), 8 * rate(prev->rx_bytes, cur->rx_bytes, dt),
		rate(prev->tx_packets, cur->tx_packets, dt), 8 * rate(prev->tx_bytes, cur->tx_bytes, dt));
	for (int i = 0; i < FWD_DROP_MAX; i++)
		fprintf(out, "%s\"%s\":%llu", i ? "," : "", fwd_drop_names[i],
			(unsigned long long)(cur->drop[i] - base->drop[i]));
	fprintf(out, "},\"csum\":{\"partial\":%llu,\"completed\":%llu,\"uncompleted\":%llu",
		(unsigned long long)(cur->csum_partial - base->csum_partial),
		(unsigned long long)(cur->csum_completed - base->csum_completed),
		(unsigned long long)(cur->csum_uncompleted - base->csum_uncompleted));
	fprintf(out, "},\"link_down\":%s,\"offload\":{", cur->link_down ? "true" : "false");
	for (size_t i = 0; i < OFFLOAD_FIELDS; i++) {
		uint64_t v = off_get(&cur->offload, i);

		if (offload_fields[i].off != offsetof(struct fwd_offload_sample, flows))
			v -= off_get(&base->offload, i);
		fprintf(out, "%s\"%s\":%llu", i ? "," : "", offload_fields[i].name, (unsigned long long)v);
		if (offload_fields[i].off == offsetof(struct fwd_offload_sample, bytes))
			fprintf(out, ",\"pps\":%.0f,\"bps\":%.0f", rate(prev->offload.packets, cur->offload.packets, dt),
				8 * rate(prev->offload.bytes, cur->offload.bytes, dt));
	}
	fputs("}}", out);
}

void fwd_json_pools(FILE *out)
{
	fputs("],\"pools\":[", out);
}

void fwd_json_pool(FILE *out, bool first, const char *name, const struct fwd_pool_sample *base,
		   const struct fwd_pool_sample *prev, const struct fwd_pool_sample *cur)
{
	double hit = fwd_recycle_hit_rate(prev, cur);

	fprintf(out, "%s{\"name\":", first ? "" : ",");
	fwd_json_string(out, name);
	fprintf(out, ",\"allocs\":%llu,\"slow\":%llu,\"recycled\":%llu,",
		(unsigned long long)(cur->allocs - base->allocs),
		(unsigned long long)(cur->slow - base->slow),
		(unsigned long long)(cur->recycled - base->recycled));
	if (hit >= 0) /* absent when the interval allocated nothing: no rate to give */
		fprintf(out, "\"recycle_hit_pct\":%.2f,", hit);
	fprintf(out, "\"pages_held\":%lld,\"sleeps\":%llu,\"late_handoffs\":%llu}", (long long)cur->inflight,
		(unsigned long long)(cur->sleeps - base->sleeps),
		(unsigned long long)(cur->late_handoffs - base->late_handoffs));
}

static const char *capture_state(const struct fwd_capture_sample *cur)
{
	/* ETIMEDOUT: the writer's own, for a reader that took nothing at exit (capture.c). */
	return cur->error == ETIMEDOUT ? "the reader stalled" : cur->error ? strerror(cur->error) :
	       cur->limit_reached ? "count reached" : NULL;
}

void fwd_fmt_capture_line(FILE *out, const char *path, const struct fwd_capture_sample *prev,
			  const struct fwd_capture_sample *cur)
{
	char f[16], b[16];
	const char *state = capture_state(cur);

	fprintf(out, "pcap %s  captured %s frames %sB  capture dropped %llu (ring full)", path,
		fwd_fmt_si(f, sizeof(f), (double)(cur->captured - prev->captured)),
		fwd_fmt_si(b, sizeof(b), (double)(cur->bytes - prev->bytes)),
		(unsigned long long)(cur->dropped - prev->dropped));
	if (state)
		fprintf(out, "  stopped: %s", state);
	fputc('\n', out);
}

void fwd_json_capture(FILE *out, const char *path, const struct fwd_capture_sample *prev,
		      const struct fwd_capture_sample *cur)
{
	const char *state = capture_state(cur);

	fputs(",\"capture\":{\"file\":", out);
	fwd_json_string(out, path);
	fprintf(out, ",\"captured\":%llu,\"bytes\":%llu,\"dropped\":%llu,\"stopped\":",
		(unsigned long long)(cur->captured - prev->captured), (unsigned long long)(cur->bytes - prev->bytes),
		(unsigned long long)(cur->dropped - prev->dropped));
	if (state)
		fwd_json_string(out, state);
	else
		fputs("null", out);
	fputc('}', out);
}

void fwd_json_close(FILE *out)
{
	fputs("}\n", out);
	fflush(out);
}

void fwd_json_end(FILE *out)
{
	fputc(']', out);
	fwd_json_close(out);
}
