/* SPDX-License-Identifier: MIT */
/* --metrics and --metrics-file (metrics.h): the text, its publication, the HTTP thread. */
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <umem/common.h>

#include "capture.h"
#include "ctx.h"
#include "metrics.h"

struct fwd_metrics {
	int fd; /* the listening socket, until the daemon owns it */
	struct MHD_Daemon *daemon;
	const char *file;
	pthread_mutex_t lock; /* the text; taken by the main thread and the HTTP thread only */
	char *text;
	size_t len;
};

/* "# HELP" and "# TYPE" of one family: name carries the _total of counters. */
static void family(FILE *o, const char *name, const char *type, const char *help)
{
	fprintf(o, "# HELP xdp_fwd_%s %s\n# TYPE xdp_fwd_%s %s\n", name, help, name, type);
}

/* A family of one unlabelled sample: its HELP, TYPE and value. */
static void single(FILE *o, const char *name, const char *type, const char *help, unsigned long long v)
{
	family(o, name, type, help);
	fprintf(o, "xdp_fwd_%s %llu\n", name, v);
}

/* A label value: backslash, quote and newline escaped, as the format asks. */
static void label_value(FILE *o, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', o);
		if (*s == '\n')
			fputs("\\n", o);
		else
			fputc(*s, o);
	}
}

/* interface="m0",queue="0" from the port's "ifname@queue". */
static void port_labels(FILE *o, const struct fwd_port *p)
{
	const char *at = strrchr(p->name, '@');
	int n = at ? (int)(at - p->name) : (int)strlen(p->name);

	fprintf(o, "interface=\"%.*s\",queue=\"%s\"", n, p->name, at ? at + 1 : "0");
}

#define PORT_U64(field) offsetof(struct fwd_port_sample, field)

static const struct {
	const char *name, *type, *help;
	size_t off;
} port_metrics[] = {
	{ "port_rx_packets_total", "counter", "Frames received by the port.", PORT_U64(rx_packets) },
	{ "port_rx_bytes_total", "counter", "Bytes received by the port.", PORT_U64(rx_bytes) },
	{ "port_tx_packets_total", "counter", "Frames transmitted by the port.", PORT_U64(tx_packets) },
	{ "port_tx_bytes_total", "counter", "Bytes transmitted by the port.", PORT_U64(tx_bytes) },
	{ "port_csum_partial_total", "counter", "TCP/UDP frames received with a partial checksum.", PORT_U64(csum_partial) },
	{ "port_csum_completed_total", "counter", "Partial checksums completed.", PORT_U64(csum_completed) },
	{ "port_csum_uncompleted_total", "counter", "Partial checksums left as they were.", PORT_U64(csum_uncompleted) },
	{ "offload_packets_total", "counter", "Frames the XDP program forwarded for offloaded flows arriving here.", PORT_U64(offload.packets) },
	{ "offload_bytes_total", "counter", "Bytes of offloaded flows arriving here.", PORT_U64(offload.bytes) },
	{ "offload_gated_total", "counter", "Frames of arming flows sent to userspace.", PORT_U64(offload.gated) },
	{ "offload_lost_total", "counter", "Frames redirected here by the kernel and not sent.", PORT_U64(offload.lost) },
	{ "offload_installed_total", "counter", "Flows installed in the XDP program.", PORT_U64(offload.installed) },
	{ "offload_expired_total", "counter", "Offloaded flows removed when idle.", PORT_U64(offload.expired) },
	{ "offload_invalidated_total", "counter", "Offloaded flows removed because their path changed.", PORT_U64(offload.invalidated) },
	{ "offload_full_total", "counter", "Flows not offloaded: the table was full.", PORT_U64(offload.full) },
	{ "offload_refused_total", "counter", "Flows not offloaded: the kernel refused them.", PORT_U64(offload.refused) },
	{ "offload_forced_total", "counter", "Offload gates opened after 1 s without the RX ring running empty.", PORT_U64(offload.forced) },
	{ "offload_no_target_total", "counter", "Flows not offloaded: their target takes no offload.", PORT_U64(offload.no_target) },
	{ "offload_untracked_total", "counter", "Frames of flows the tracker had no slot for.", PORT_U64(offload.untracked) },
	{ "offload_csum_kept_total", "counter", "Flows kept in (or taken back to) userspace: their frames carried partial checksums.", PORT_U64(offload.csum_kept) },
	{ "offload_csum_passed_total", "counter", "Frames of offloaded flows the XDP program passed up: a partial checksum a redirect would not complete.", PORT_U64(offload.csum_passed) },
	{ "offload_route_kept_total", "counter", "Frames of offloaded routed flows the XDP program did not route (TTL, IP options, MTU, VLAN tag): sent the default way.", PORT_U64(offload.route_kept) },
	{ "offload_drained_total", "counter", "Offload gates opened by a drain: the flow's frames from a point on dropped until its RX ring had none left before them (drop reason gate_drain).", PORT_U64(offload.drained) },
};

#define POOL_U64(field) offsetof(struct fwd_pool_sample, field)

static const struct {
	const char *name, *help;
	size_t off;
} pool_metrics[] = {
	{ "pool_allocs_total", "Buffers allocated by the worker's pool.", POOL_U64(allocs) },
	{ "pool_slow_allocs_total", "Allocations that took the slow path.", POOL_U64(slow) },
	{ "pool_fresh_pages_total", "Pages the pool took from the area.", POOL_U64(fresh) },
	{ "pool_recycled_total", "Pages recycled through the cache or the return ring.", POOL_U64(recycled) },
	{ "worker_sleeps_total", "Sleeps of the worker in poll().", POOL_U64(sleeps) },
	{ "worker_late_handoffs_total", "Sleeps that ended at the timeout with frames handed to the worker waiting.", POOL_U64(late_handoffs) },
};

static uint64_t at(const void *s, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)s + off, sizeof(v));
	return v;
}

static void render_ports(FILE *o, const struct fwd_ctx *ctx, const struct fwd_samples *start,
			 const struct fwd_samples *cur)
{
	for (size_t m = 0; m < sizeof(port_metrics) / sizeof(port_metrics[0]); m++) {
		family(o, port_metrics[m].name, port_metrics[m].type, port_metrics[m].help);
		for (uint32_t i = 0; i < ctx->nr_ports; i++) {
			fprintf(o, "xdp_fwd_%s{", port_metrics[m].name);
			port_labels(o, &ctx->ports[i]);
			fprintf(o, "} %llu\n", (unsigned long long)(at(&cur->port[i], port_metrics[m].off) -
								  at(&start->port[i], port_metrics[m].off)));
		}
	}
	family(o, "port_drops_total", "counter", "Frames not forwarded, by reason (the xsk_ reasons are the kernel's socket counts, tx_dropped_kernel the output interface's).");
	for (uint32_t i = 0; i < ctx->nr_ports; i++)
		for (int r = 0; r < FWD_DROP_MAX; r++) {
			fputs("xdp_fwd_port_drops_total{", o);
			port_labels(o, &ctx->ports[i]);
			fprintf(o, ",reason=\"%s\"} %llu\n", fwd_drop_names[r],
				(unsigned long long)(cur->port[i].drop[r] - start->port[i].drop[r]));
		}
	family(o, "port_link_down", "gauge", "1 while the port's interface is down, without carrier, or gone.");
	for (uint32_t i = 0; i < ctx->nr_ports; i++) {
		fputs("xdp_fwd_port_link_down{", o);
		port_labels(o, &ctx->ports[i]);
		fprintf(o, "} %d\n", cur->port[i].link_down);
	}
	family(o, "offload_flows", "gauge", "Flows installed in the XDP program now.");
	for (uint32_t i = 0; i < ctx->nr_ports; i++) {
		fputs("xdp_fwd_offload_flows{", o);
		port_labels(o, &ctx->ports[i]);
		fprintf(o, "} %llu\n", (unsigned long long)cur->port[i].offload.flows);
	}
}

static void render_pools(FILE *o, const struct fwd_ctx *ctx, const struct fwd_samples *start,
			 const struct fwd_samples *cur)
{
	for (size_t m = 0; m < sizeof(pool_metrics) / sizeof(pool_metrics[0]); m++) {
		family(o, pool_metrics[m].name, "counter", pool_metrics[m].help);
		for (uint32_t k = 0; k < ctx->nr_workers; k++)
			fprintf(o, "xdp_fwd_%s{worker=\"%u\"} %llu\n", pool_metrics[m].name, k,
				(unsigned long long)(at(&cur->pool[k], pool_metrics[m].off) -
						     at(&start->pool[k], pool_metrics[m].off)));
	}
	family(o, "worker_cpu_seconds_total", "counter", "CPU time of the worker thread, user and system (read every 250 ms).");
	for (uint32_t k = 0; k < ctx->nr_workers; k++)
		fprintf(o, "xdp_fwd_worker_cpu_seconds_total{worker=\"%u\"} %.3f\n", k,
			(double)(cur->pool[k].cpu_ns - start->pool[k].cpu_ns) / 1e9);
	family(o, "pool_pages_held", "gauge", "Pages of the pool out in rings and in flight.");
	for (uint32_t k = 0; k < ctx->nr_workers; k++)
		fprintf(o, "xdp_fwd_pool_pages_held{worker=\"%u\"} %lld\n", k, (long long)cur->pool[k].inflight);
}

static void render_rules(FILE *o, const struct fwd_ctx *ctx, const struct fwd_samples *start,
			 const struct fwd_samples *cur, bool all)
{
	static const char *const what[] = { "drop", "pass", "no_socket" };

	if (!ctx->cfg->nr_rules && !all)
		return;
	family(o, "steer_frames_total", "counter", "Frames the steering program kept from xdp-fwd, by decision.");
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		const struct fwd_steer_sample *a = &start->steer[f], *b = &cur->steer[f];
		const uint64_t n[] = { b->drop - a->drop, b->pass - a->pass, b->no_socket - a->no_socket };

		for (int d = 0; d < 3; d++)
			fprintf(o, "xdp_fwd_steer_frames_total{interface=\"%s\",decision=\"%s\"} %llu\n",
				ctx->ifaces[f].name, what[d], (unsigned long long)n[d]);
	}
	family(o, "rule_hits_total", "counter", "Frames each steering rule decided.");
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		const struct fwd_rule_view *v = &ctx->ifaces[f].steer_view;

		for (uint32_t r = 0; r < v->nr; r++) {
			fprintf(o, "xdp_fwd_rule_hits_total{interface=\"%s\",id=\"%u\",rule=\"", ctx->ifaces[f].name,
				v->id[r]);
			label_value(o, v->text[r]);
			fprintf(o, "\"} %llu\n", fwd_rule_hits_since(&start->steer[f], &cur->steer[f], v->id[r]));
		}
	}
}

/* --mode l3: what the router did not forward and why, its ICMP errors, the mirror's sizes. */
static void render_l3(FILE *o, const struct fwd_samples *start, const struct fwd_samples *cur)
{
	const struct fwd_l3_sample *a = &start->l3, *b = &cur->l3;
	static const char *const fam[] = { "ipv4", "ipv6" };
	const uint32_t routes[] = { b->routes4, b->routes6 };

	family(o, "l3_not_routed_total", "counter", "Frames the router did not forward, by reason (the JSON l3.not_routed).");
	for (uint32_t r = 1; r < b->nr_reasons; r++)
		fprintf(o, "xdp_fwd_l3_not_routed_total{reason=\"%s\"} %llu\n", b->reason[r],
			(unsigned long long)(b->drop[r] - a->drop[r]));
	family(o, "l3_icmp_errors_total", "counter", "ICMP errors xdp-fwd sent: destination unreachable, or fragmentation needed / packet too big.");
	fprintf(o, "xdp_fwd_l3_icmp_errors_total{kind=\"unreachable\"} %llu\n",
		(unsigned long long)(b->icmp_unreach - a->icmp_unreach));
	fprintf(o, "xdp_fwd_l3_icmp_errors_total{kind=\"too_big\"} %llu\n",
		(unsigned long long)(b->icmp_too_big - a->icmp_too_big));
	single(o, "l3_icmp_limited_total", "counter", "ICMP errors the rate limit refused.", b->icmp_limited - a->icmp_limited);
	single(o, "l3_icmp_unsent_total", "counter", "ICMP errors not sent: no source address, or no room in the buffer.", b->icmp_unsent - a->icmp_unsent);
	family(o, "l3_routes", "gauge", "Routes of the mirrored table.");
	for (int f = 0; f < 2; f++)
		fprintf(o, "xdp_fwd_l3_routes{family=\"%s\"} %u\n", fam[f], routes[f]);
	single(o, "l3_nexthops", "gauge", "Next hops of the mirror.", b->nexthops);
	single(o, "l3_neighbours", "gauge", "Neighbours of the mirror.", b->neighbours);
	single(o, "l3_route_events_total", "counter", "Routing events (netlink messages) the mirror applied.", b->events - a->events);
	single(o, "l3_resyncs_total", "counter", "Full dumps after lost netlink events (ENOBUFS).", b->resyncs - a->resyncs);
	single(o, "l3_resolves_total", "counter", "Neighbour resolutions asked of the kernel.", b->resolves - a->resolves);
	single(o, "l3_resolve_failed_total", "counter", "Resolution requests the kernel refused.", b->resolve_failed - a->resolve_failed);
}

/* all: every family, also those of options ctx's run does not have (fwd_metrics_families). */
static void render(FILE *o, const struct fwd_ctx *ctx, const struct fwd_samples *start,
		   const struct fwd_samples *cur, bool all)
{
	family(o, "build_info", "gauge", "The version of xdp-fwd (libumem) that runs, as a label.");
	fprintf(o, "xdp_fwd_build_info{version=\"%d.%d\",mode=\"%s\"} 1\n", UMEM_VERSION_MAJOR, UMEM_VERSION_MINOR,
		fwd_mode_name(ctx->cfg->mode));
	render_ports(o, ctx, start, cur);
	render_pools(o, ctx, start, cur);
	render_rules(o, ctx, start, cur, all);
	if (ctx->cfg->mode == FWD_MODE_L2 || all)
		single(o, "l2_macs", "gauge", "Live entries of the MAC table.", cur->l2_macs);
	if (ctx->cfg->mode == FWD_MODE_L3 || all)
		render_l3(o, start, cur);
	if (ctx->cap || all) {
		const struct fwd_capture_sample *a = &start->capture, *b = &cur->capture;

		single(o, "capture_frames_total", "counter", "Frames copied for --pcap.", b->captured - a->captured);
		single(o, "capture_bytes_total", "counter", "Bytes captured for --pcap (at most the snap length each).", b->bytes - a->bytes);
		single(o, "capture_dropped_total", "counter", "Frames the --pcap filter took that found the capture ring full.", b->dropped - a->dropped);
	}
}

void fwd_metrics_render(FILE *o, const struct fwd_ctx *ctx, const struct fwd_samples *start,
			const struct fwd_samples *cur)
{
	render(o, ctx, start, cur, false);
}

int fwd_metrics_families(FILE *out)
{
	/* The text of a run without ports or workers, every optional family on: its TYPE lines. */
	struct fwd_config *cfg = malloc(sizeof(*cfg));
	struct fwd_ctx *ctx = calloc(1, sizeof(*ctx));
	struct fwd_samples *zero = calloc(1, sizeof(*zero));
	char *text = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *o = NULL;
	int ret = -ENOMEM;

	if (cfg && ctx && zero && (o = open_memstream(&text, &len))) {
		fwd_config_defaults(cfg);
		ctx->cfg = cfg;
		render(o, ctx, zero, zero, true);
		if (!fclose(o)) {
			for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
				if (!strncmp(line, "# TYPE ", 7))
					fprintf(out, "%s\n", line + 7);
			ret = 0;
		}
	}
	free(text);
	free(zero);
	free(ctx);
	free(cfg);
	return ret;
}

struct fwd_metrics *fwd_metrics_open(const struct fwd_config *cfg)
{
	return fwd_metrics_open_fd(cfg, -1);
}

struct fwd_metrics *fwd_metrics_open_fd(const struct fwd_config *cfg, int fd)
{
	struct fwd_metrics *m;
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1;

	errno = 0;
	if (!cfg->metrics_addr && !cfg->metrics_file)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->fd = -1;
	m->file = cfg->metrics_file;
	pthread_mutex_init(&m->lock, NULL);
	if (fd >= 0 && !cfg->metrics_addr)
		close(fd);
	if (!cfg->metrics_addr)
		return m;
	if (fd >= 0) { /* bound and listening already: the instance taken over served it */
		m->fd = fd;
		return m;
	}
	if (fwd_parse_listen(cfg->metrics_addr, &ss, &len)) { /* options.c checked it */
		errno = EINVAL;
		goto fail;
	}
	m->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (m->fd < 0 || setsockopt(m->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(m->fd, (struct sockaddr *)&ss, len) || listen(m->fd, 16))
		goto fail;
	return m;
fail:
	fprintf(stderr, "xdp-fwd: --metrics %s: cannot listen there: %s\n", cfg->metrics_addr, strerror(errno));
	fwd_metrics_close(m);
	errno = errno ? errno : EINVAL;
	return NULL;
}

static enum MHD_Result serve(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
			     const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct fwd_metrics *m = cls;
	struct MHD_Response *resp;
	enum MHD_Result ret;
	unsigned int status = MHD_HTTP_OK;
	char *copy = NULL;
	size_t len = 0;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)con_cls;
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		status = MHD_HTTP_METHOD_NOT_ALLOWED;
	} else if (strcmp(url, "/metrics")) {
		status = MHD_HTTP_NOT_FOUND;
	} else {
		pthread_mutex_lock(&m->lock);
		if (m->text && (copy = malloc(m->len ? m->len : 1))) {
			memcpy(copy, m->text, m->len);
			len = m->len;
		}
		pthread_mutex_unlock(&m->lock);
		if (!copy)
			status = MHD_HTTP_SERVICE_UNAVAILABLE; /* before the first sample, or no memory */
	}
	if (copy) {
		resp = MHD_create_response_from_buffer(len, copy, MHD_RESPMEM_MUST_FREE);
	} else {
		static char msg[] = "see /metrics\n";

		resp = MHD_create_response_from_buffer(strlen(msg), msg, MHD_RESPMEM_PERSISTENT);
	}
	if (!resp) {
		free(copy);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				copy ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain");
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

int fwd_metrics_start(struct fwd_metrics *m)
{
	if (!m || m->fd < 0)
		return 0;
	/* One polling thread: a scrape is a copy of a few KiB, and connections are few. */
	/* ITC: the listening socket can be given up live (fwd_metrics_release). */
	m->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC, 0, NULL, NULL, serve, m,
				     MHD_OPTION_LISTEN_SOCKET, m->fd, MHD_OPTION_CONNECTION_LIMIT, 64u,
				     MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
	if (!m->daemon)
		return -EIO;
	m->fd = -1; /* the daemon's now, closed by MHD_stop_daemon */
	return 0;
}

/* --metrics-file: a whole file or none (node_exporter's textfile collector reads it any time). */
static void write_file(const char *path, const char *text, size_t len)
{
	char tmp[4200];
	FILE *f;
	bool ok;

	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	f = fopen(tmp, "we");
	if (!f) {
		fprintf(stderr, "xdp-fwd: --metrics-file: cannot write %s: %s\n", tmp, strerror(errno));
		return;
	}
	ok = fwrite(text, 1, len, f) == len;
	ok &= fclose(f) == 0;
	if (!ok || rename(tmp, path)) {
		fprintf(stderr, "xdp-fwd: --metrics-file: cannot write %s: %s\n", path, strerror(errno));
		unlink(tmp);
	}
}

void fwd_metrics_publish(struct fwd_metrics *m, const struct fwd_ctx *ctx, const struct fwd_samples *start,
			 const struct fwd_samples *cur)
{
	char *text = NULL, *old;
	size_t len = 0;
	FILE *o;

	if (!m || !(o = open_memstream(&text, &len)))
		return;
	fwd_metrics_render(o, ctx, start, cur);
	if (fclose(o)) {
		free(text);
		return;
	}
	if (m->file)
		write_file(m->file, text, len);
	pthread_mutex_lock(&m->lock);
	old = m->text;
	m->text = text;
	m->len = len;
	pthread_mutex_unlock(&m->lock);
	free(old);
}

int fwd_metrics_release(struct fwd_metrics *m)
{
	int fd = -1;

	if (!m)
		return -1;
	if (m->daemon && m->fd < 0) {
		MHD_socket s = MHD_quiesce_daemon(m->daemon);

		/* Still m's: closed at fwd_metrics_close, after the daemon's thread is gone. */
		m->fd = s == MHD_INVALID_SOCKET ? -1 : (int)s;
	}
	fd = m->fd;
	return fd;
}

void fwd_metrics_close(struct fwd_metrics *m)
{
	if (!m)
		return;
	if (m->daemon)
		MHD_stop_daemon(m->daemon);
	if (m->fd >= 0)
		close(m->fd);
	pthread_mutex_destroy(&m->lock);
	free(m->text);
	free(m);
}
