/* SPDX-License-Identifier: MIT */
/*
 * xdp-fwd: forwards frames between AF_XDP ports that share one UMEM.
 *
 * Start-up creates, in order, the area, one pool per worker, the ports (first to last) and the
 * workers; any failure unwinds what exists, in reverse. SIGINT/SIGTERM/SIGHUP (and --duration,
 * --count) stop RX, let the workers drain TX completions, destroy the ports (which detaches
 * the XDP program and returns every buffer) and then the pools; the frames still out at that
 * point are reported and must be zero. Signals are blocked in every thread and taken by the
 * main thread with sigtimedwait(), which also paces the stats output (SIGUSR1: print them
 * now, in l2 mode with the MAC table) and the handling of live interface changes (live.c).
 */
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/sockios.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <umem/port.h>

#include "capture.h"
#include "fwd.h"
#include "offload.h"
#include "live.h"
#include "lock.h"
#include "privs.h"
#include "rules.h"
#include "stats.h"
#include "sys.h"
#include "worker.h"

#define FWD_TICK_NS 50000000ull   /* how often --duration and --count are checked */
/* How often the interfaces' tx_dropped is read (a gone device takes its last drops with it). */
#define FWD_TX_KERNEL_NS 250000000ull
#define FWD_MVPP2_XDP_MTU 1500u
#define FWD_TX_DRAIN_MS 500u      /* a closing port waits this long for its TX ring to be read */   /* mvpp2_xdp_setup() refuses a program above ETH_DATA_LEN */

static uint32_t pow2_at_least(uint64_t v)
{
	uint32_t p = 1;

	while (p < v && p < (1u << 31))
		p <<= 1;
	return p;
}

/* An interface ioctl on ifname in this namespace: 0 or -1 (ifr, or data, filled by the kernel). */
static int interface_ioctl_data(const char *ifname, unsigned long req, struct ifreq *ifr, void *data)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r;

	if (fd < 0)
		return -1;
	memset(ifr, 0, sizeof(*ifr));
	snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", ifname);
	ifr->ifr_data = data;
	r = ioctl(fd, req, ifr);
	close(fd);
	return r;
}

static int interface_ioctl(const char *ifname, unsigned long req, struct ifreq *ifr)
{
	return interface_ioctl_data(ifname, req, ifr, NULL);
}

/* The most RX queues `ethtool -L` can give ifname (combined plus RX-only channels), 0 when
 * the driver does not say. */
static uint32_t interface_queue_max(const char *ifname)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	struct ifreq ifr;

	return interface_ioctl_data(ifname, SIOCETHTOOL, &ifr, &ch) ? 0 : ch.max_combined + ch.max_rx;
}

/* -i IFNAME@all follows `ethtool -L` (live.c): the area keeps room for the ports of the queues
 * the device can still add, up to its channel maximum (FWD_MAX_PORTS ports in all). */
static uint32_t spare_ports(const struct fwd_config *cfg)
{
	uint32_t spare = 0;

	for (uint32_t i = 0; i < cfg->nr_specs; i++) {
		const struct fwd_if_spec *s = &cfg->specs[i];
		uint32_t max = s->from_all ? interface_queue_max(s->ifname) : 0;

		if (max > s->last + 1)
			spare += max - (s->last + 1);
	}
	return spare < FWD_MAX_PORTS - cfg->nr_ports ? spare : FWD_MAX_PORTS - cfg->nr_ports;
}

/* MTU of ifname in this namespace, 0 when unknown. */
static uint32_t interface_mtu(const char *ifname)
{
	struct ifreq ifr;

	return interface_ioctl(ifname, SIOCGIFMTU, &ifr) ? 0 : (uint32_t)ifr.ifr_mtu;
}

/* Up with a carrier (false also when it is gone). */
static bool interface_running(const char *ifname)
{
	struct ifreq ifr;

	return !interface_ioctl(ifname, SIOCGIFFLAGS, &ifr) && (ifr.ifr_flags & IFF_UP) &&
	       (ifr.ifr_flags & IFF_RUNNING);
}

/* An interface that is down (or without carrier) forwards nothing until it is up: said once
 * per interface at start, since xdp-fwd itself runs as if all were well. */
static void warn_down_interfaces(const struct fwd_config *cfg)
{
	for (uint32_t i = 0; i < cfg->nr_ports; i++) {
		struct ifreq ifr;
		bool first = true;

		for (uint32_t j = 0; j < i; j++)
			first &= !!strcmp(cfg->ports[j].ifname, cfg->ports[i].ifname);
		if (!first || interface_ioctl(cfg->ports[i].ifname, SIOCGIFFLAGS, &ifr))
			continue;
		if (!(ifr.ifr_flags & IFF_UP))
			fprintf(stderr, "xdp-fwd: warning: %s is down: its ports open, but nothing is "
				"received or sent there until it is up (ip link set dev %s up)\n",
				cfg->ports[i].ifname, cfg->ports[i].ifname);
		else if (!(ifr.ifr_flags & IFF_RUNNING))
			fprintf(stderr, "xdp-fwd: warning: %s has no carrier (its peer or cable is down): "
				"nothing is received or sent there until it has\n", cfg->ports[i].ifname);
	}
}

/* The area's and the pools' one sizing rule: the frames a set of ports holds with every fill
 * ring and every TX ring full at once, and the pages they take. */
static uint64_t ring_frames(const struct fwd_config *cfg, uint32_t nr_ports)
{
	uint32_t rx = cfg->rx_ring ? cfg->rx_ring : UMEM_PORT_RX_SIZE_DEFAULT;
	uint32_t fill = cfg->fill_ring ? cfg->fill_ring : 2 * rx;
	uint32_t tx = cfg->tx_ring ? cfg->tx_ring : UMEM_PORT_TX_SIZE_DEFAULT;

	return (uint64_t)nr_ports * (fill + tx);
}

/* RX buffers are whole chunks; a 4 KiB page holds 4096 / chunk of them (aligned), one
 * (unaligned). */
static uint64_t frame_pages(const struct fwd_config *cfg, uint64_t frames)
{
	uint32_t chunk = cfg->chunk_size ? cfg->chunk_size : FWD_CHUNK_DEFAULT;

	return cfg->unaligned ? frames : (frames * chunk + UMEM_PAGE_SIZE_DEFAULT - 1) / UMEM_PAGE_SIZE_DEFAULT;
}

/* Frames that every fill ring and every TX ring full at once take, plus the pools' caches and
 * the cross-worker queues: with that many the pools never run dry in steady state. */
static uint64_t frames_needed(const struct fwd_config *cfg, uint32_t nr_workers)
{
	uint64_t frames = ring_frames(cfg, cfg->nr_ports + cfg->spare_ports) + nr_workers * 2ull * UMEM_POOL_CACHE_SIZE;

	if (nr_workers > 1)
		frames += nr_workers * (nr_workers - 1ull) * FWD_XQ_SIZE;
	return frames;
}

/* Checks that need the system but change nothing: every interface exists, multi-buffer is on
 * when an MTU needs it, every rule's target is served. */
static int check_system(struct fwd_config *cfg)
{
	uint32_t chunk, max_mtu = 0;
	bool unknown = false;

	for (uint32_t i = 0; i < cfg->nr_ports; i++) {
		uint32_t mtu = interface_mtu(cfg->ports[i].ifname);

		unknown |= !mtu;
		max_mtu = mtu > max_mtu ? mtu : max_mtu;
	}
	if (!cfg->chunk_size && !cfg->unaligned) /* an unknown MTU takes the 4 KiB chunk */
		cfg->chunk_size = fwd_default_chunk(cfg, unknown ? 0 : max_mtu);
	chunk = cfg->chunk_size ? cfg->chunk_size : FWD_CHUNK_DEFAULT;
	for (uint32_t i = 0; i < cfg->nr_ports; i++) {
		const char *ifname = cfg->ports[i].ifname;
		uint32_t mtu;

		if (!if_nametoindex(ifname)) {
			fprintf(stderr, "xdp-fwd: interface '%s' does not exist (in this network namespace)\n",
				ifname);
			return -ENODEV;
		}
		mtu = interface_mtu(ifname);
		if (cfg->profile == FWD_PROFILE_MVPP2 && mtu > FWD_MVPP2_XDP_MTU) {
			fprintf(stderr, "xdp-fwd: %s has MTU %u: mvpp2 attaches XDP only up to MTU %u (XDP needs its per-CPU buffer pools, which have no jumbo class); lower it with ip link set dev %s mtu %u\n",
				ifname, mtu, FWD_MVPP2_XDP_MTU, ifname, FWD_MVPP2_XDP_MTU);
			return -EINVAL;
		}
		if (!cfg->multi_buffer && fwd_mtu_needs_multi_buffer(cfg, mtu)) {
			fprintf(stderr, "xdp-fwd: %s has MTU %u, more than one %u-byte chunk holds: multi-buffer on\n",
				ifname, mtu, chunk);
			cfg->multi_buffer = true;
		}
	}
	cfg->spare_ports = spare_ports(cfg);
	return fwd_rules_check(cfg);
}

static struct umem_area *create_area(const struct fwd_config *cfg, uint32_t nr_workers)
{
	uint32_t chunk = cfg->chunk_size ? cfg->chunk_size : FWD_CHUNK_DEFAULT;
	uint64_t frames = cfg->frames ? cfg->frames : frames_needed(cfg, nr_workers);
	UMEM_OPTS(umem_area_opts, opts, .chunk_size = cfg->unaligned ? 0 : chunk,
		  .flags = cfg->hugepages ? UMEM_AREA_F_HUGEPAGES : 0);
	uint64_t pages;

	pages = frame_pages(cfg, frames);
	if (cfg->hugepages) /* whole 2 MiB pages */
		pages = (pages + 511) / 512 * 512;
	return umem_area__create((uint32_t)pages, &opts);
}

static int fwd_open_port(struct fwd_ctx *ctx, uint32_t i)
{
	const struct fwd_config *cfg = ctx->cfg;
	const struct fwd_port_spec *spec = &cfg->ports[i];
	struct fwd_port *p = &ctx->ports[i];
	UMEM_OPTS(umem_port_opts, opts, .rx_size = cfg->rx_ring, .tx_size = cfg->tx_ring,
		  .fill_size = cfg->fill_ring, .comp_size = cfg->comp_ring,
		  .chunk_size = cfg->unaligned ? cfg->chunk_size : 0,
		  .busy_poll_usecs = cfg->busy_poll_usecs,
		  .busy_poll_budget = cfg->busy_poll_budget ? cfg->busy_poll_budget : cfg->batch);

	opts.flags = (cfg->need_wakeup ? 0 : UMEM_PORT_F_NO_NEED_WAKEUP) |
		     (cfg->multi_buffer ? UMEM_PORT_F_MULTI_BUFFER : 0);
	if (fwd_wants_steering(cfg))
		opts.xdp_prog = UMEM_PORT_PROG_NONE; /* the steering program feeds the socket */
	opts.xdp_attach = cfg->xdp_attach;
	opts.zerocopy = cfg->bind == FWD_BIND_ZEROCOPY ? UMEM_PORT_ZC_REQUIRE :
			cfg->bind == FWD_BIND_COPY ? UMEM_PORT_ZC_OFF : UMEM_PORT_ZC_AUTO;
	/* Opened live (live.c parks the workers): a queue that a socket closed just before still
	 * holds is waited for with the workers running, not with every port stopped for it. */
	if (atomic_load(&ctx->park)) {
		opts.rebind_wait = fwd_workers_run_for;
		opts.rebind_wait_arg = ctx;
	}
	snprintf(p->name, sizeof(p->name), "%s@%u", spec->ifname, spec->queue);
	p->port = umem_port__create(ctx->area, ctx->workers[p->worker].pool, spec->ifname, spec->queue, &opts);
	if (!p->port) {
		int err = errno;

		fprintf(stderr, "xdp-fwd: cannot open port %s: %s\n", p->name, strerror(err));
		if (err == EOPNOTSUPP && cfg->bind == FWD_BIND_ZEROCOPY)
			fprintf(stderr, "xdp-fwd: %s has no AF_XDP zero-copy: run without -z (zero-copy where "
				"the driver has it, copy mode elsewhere) or with --copy\n", spec->ifname);
		if (err == ENOMEM && cfg->frames)
			fprintf(stderr, "xdp-fwd: --frames %u is too few: the rings need %llu frames (the fill "
				"and TX rings of %u ports, plus the pools' caches); raise --frames or shrink "
				"--fill-ring/--tx-ring\n", cfg->frames,
				(unsigned long long)frames_needed(cfg, ctx->nr_workers), cfg->nr_ports);
		return -err;
	}
	return 0;
}

static void fwd_close_port(struct fwd_ctx *ctx, uint32_t i)
{
	struct fwd_port *p = &ctx->ports[i];
	int left, unsent;

	if (!p->port)
		return;
	/* Frames the kernel delivered but the worker has not read yet: received, and dropped
	 * because the port closes (destroy would return them unseen). Workers are parked. */
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
	 * another namespace): counted in tx_packets, so counted again as drops. */
	unsent = umem_port__tx_drain(p->port, FWD_TX_DRAIN_MS);
	if (unsent > 0)
		fwd_count(&p->ctr.drop[FWD_DROP_TX_UNSENT], (uint64_t)unsent);
	fwd_port_save_kernel_stats(p);
	left = umem_port__destroy(p->port);
	p->port = NULL;
	if (left > 0) /* the kernel never completed them: they cannot come home */
		ctx->abandoned += (uint64_t)left;
}

/* First port on the interface of port i (the one that holds the interface's steering handle). */
static uint32_t first_on_interface(const struct fwd_ctx *ctx, uint32_t i)
{
	for (uint32_t j = 0; j < i; j++)
		if (!strcmp(ctx->cfg->ports[j].ifname, ctx->cfg->ports[i].ifname))
			return j;
	return i;
}

static int fwd_steer_sockets(struct fwd_ctx *ctx, uint32_t first, bool on);

/* --rule: one steering program per interface with every rule; each port's socket registered at
 * the index of its queue, which is what the default action (QUEUE) and "sock N" refer to. */
static int fwd_open_steering(struct fwd_ctx *ctx, uint32_t first)
{
	const struct fwd_config *cfg = ctx->cfg;
	const char *ifname = cfg->ports[first].ifname;
	int err;

	UMEM_OPTS(umem_steer_opts, so, .mode = cfg->xdp_attach);

	ctx->steer[first] = umem_steer__attach(ifname, &so);
	if (!ctx->steer[first]) {
		err = -errno;
		fprintf(stderr, "xdp-fwd: cannot attach the steering program to %s: %s\n", ifname, strerror(-err));
		return err;
	}
	for (uint32_t r = 0; r < cfg->nr_rules; r++) {
		struct umem_steer_rule rule = cfg->rules[r];

		err = umem_steer__add_rule(ctx->steer[first], &rule);
		if (err) {
			fprintf(stderr, "xdp-fwd: %s: rule '%s': %s\n", ifname, cfg->rule_text[r], strerror(-err));
			return err;
		}
		ctx->rule_id[first][r] = rule.id;
	}
	/* Later changes of the table are live edits (live.c checks them). */
	UMEM_OPTS(umem_steer_info, info);
	ctx->steer_gen[first] = umem_steer__info(ctx->steer[first], &info) ? 0 : info.generation;
	return fwd_steer_sockets(ctx, first, true);
}

static int fwd_steer_sockets(struct fwd_ctx *ctx, uint32_t first, bool on)
{
	const struct fwd_config *cfg = ctx->cfg;

	for (uint32_t i = first; ctx->steer[first] && i < ctx->nr_ports; i++) {
		int err;

		if (first_on_interface(ctx, i) != first || !ctx->ports[i].port)
			continue;
		err = umem_steer__set_socket(ctx->steer[first], cfg->ports[i].queue,
					     on ? umem_port__fd(ctx->ports[i].port) : -1);
		if (err && on) {
			fprintf(stderr, "xdp-fwd: %s: cannot register the socket of queue %u: %s\n",
				cfg->ports[i].ifname, cfg->ports[i].queue, strerror(-err));
			return err;
		}
	}
	return 0;
}

static int attach_steering(struct fwd_ctx *ctx)
{
	for (uint32_t i = 0; i < ctx->nr_ports; i++) {
		int err = first_on_interface(ctx, i) == i ? fwd_open_steering(ctx, i) : 0;

		if (err)
			return err;
	}
	return 0;
}

static void fwd_close_steering(struct fwd_ctx *ctx, uint32_t first)
{
	struct umem_steer *s = ctx->steer[first];

	if (!s)
		return;
	/* Counters restart with a new program: what this one counted is kept. */
	fwd_steer_sample_read(ctx, first, &ctx->steer_base[first]);
	/* The port library wants its socket out of our map before it is destroyed. */
	fwd_steer_sockets(ctx, first, false);
	umem_steer__detach(s);
	ctx->steer[first] = NULL;
	ctx->steer_view[first].of = NULL; /* a new handle may get the same address */
}

static void detach_steering(struct fwd_ctx *ctx)
{
	for (uint32_t i = 0; i < ctx->nr_ports; i++)
		fwd_close_steering(ctx, i);
}

/* Groups (fwd_port_spec.group) are dealt to workers in contiguous blocks: without queue ranges
 * every port is a group, so wire pairs (0,1), (2,3) stay on one worker when the counts allow;
 * with them, both ends of a queue's wire (or queue q of every interface) share a worker. */
static void assign_ports(struct fwd_ctx *ctx)
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
static void map_vias(struct fwd_ctx *ctx)
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
}

static void map_interfaces(struct fwd_ctx *ctx)
{
	ctx->nr_ifaces = 0;
	for (uint32_t i = 0; i < ctx->nr_ports; i++) {
		uint32_t first = first_on_interface(ctx, i);

		ctx->ports[i].iface = first == i ? ctx->nr_ifaces++ : ctx->ports[first].iface;
	}
	map_vias(ctx);
}

/* A port for a queue that `ethtool -L` added under -i IFNAME@all (live.c; workers parked),
 * appended after the others, not yet open. It joins its queue's group as at start (the wire
 * partner added just before it, or the same queue of another interface), else it is a group
 * of its own on the worker with the fewest ports. Returns its index or -errno. */
static int fwd_add_port(struct fwd_ctx *ctx, uint32_t spec, uint32_t queue)
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
	ctx->ports[n] = (struct fwd_port){ .worker = k, .iface = ctx->ports[first_on_interface(ctx, n)].iface };
	snprintf(ctx->ports[n].name, sizeof(ctx->ports[n].name), "%s@%u", p->ifname, queue);
	w->ports[w->nr_ports++] = n;
	ctx->nr_ports = cfg->nr_ports = n + 1;
	/* Captured as the others: "every port", or its interface's dev word. */
	if (ctx->cap)
		fwd_capture_port(ctx->cap, cfg, n);
	return (int)n;
}

/* Destroys whatever exists, in reverse order of creation. Returns the frames still out. */
static int64_t teardown(struct fwd_ctx *ctx)
{
	int64_t out = 0;

	fwd_workers_join(ctx);
	fwd_offload_fini(ctx);
	detach_steering(ctx);
	for (uint32_t i = ctx->nr_ports; i-- > 0;)
		fwd_close_port(ctx, i);
	out += (int64_t)ctx->abandoned;
	for (uint32_t k = ctx->nr_workers; k-- > 0;) {
		if (ctx->workers[k].pool) {
			int left = umem_pool__destroy(ctx->workers[k].pool);

			if (left > 0)
				out += left;
			ctx->workers[k].pool = NULL;
		}
	}
	fwd_workers_fini(ctx);
	if (ctx->area && umem_area__destroy(ctx->area))
		fprintf(stderr, "xdp-fwd: the UMEM area is still in use and was not freed\n");
	ctx->area = NULL;
	if (ctx->l2.slots)
		l2_table_fini(&ctx->l2);
	fwd_capture_free(ctx->cap);
	ctx->cap = NULL;
	return out;
}

static int setup(struct fwd_ctx *ctx, struct fwd_config *cfg)
{
	int err;

	ctx->cfg = cfg;
	ctx->nr_ports = cfg->nr_ports;
	ctx->nr_workers = cfg->workers;
	if (cfg->mode == FWD_MODE_L2) {
		err = l2_table_init(&ctx->l2, cfg->l2_size, cfg->l2_aging * 1000000000ull);
		if (err)
			return err;
		ctx->l2.group_fwd_mask = cfg->group_fwd_mask;
	}
	ctx->area = create_area(cfg, ctx->nr_workers);
	if (!ctx->area) {
		err = -errno;
		fprintf(stderr, "xdp-fwd: cannot create the UMEM area: %s%s\n", strerror(-err),
			cfg->hugepages ? " (are hugepages reserved? see vm.nr_hugepages)" : "");
		return err;
	}
	if (ctx->cap)
		fwd_capture_bind(ctx->cap, ctx->area);
	assign_ports(ctx);
	map_interfaces(ctx);
	for (uint32_t k = 0; k < ctx->nr_workers; k++) {
		struct fwd_worker *w = &ctx->workers[k];
		/* The worker's working set: its fill rings and TX rings full at once. The return
		 * ring holds all of it, so a burst of returns never spills to the area, and the
		 * pool takes it up front: no slow-path allocation once traffic flows. */
		uint64_t pages = frame_pages(cfg, ring_frames(cfg, w->nr_ports));
		UMEM_OPTS(umem_pool_opts, popts, .ring_size = pow2_at_least(pages < 1024 ? 1024 : pages > 65536 ? 65536 : pages));
		w->ctx = ctx;
		w->idx = k;
		w->cpu = k < cfg->nr_cpus ? cfg->cpus[k] : -1;
		w->pool = umem_pool__create(ctx->area, &popts);
		if (!w->pool) {
			err = -errno;
			fprintf(stderr, "xdp-fwd: cannot create pool %u: %s\n", k, strerror(-err));
			return err;
		}
		umem_pool__prefill(w->pool, (uint32_t)(pages < 65536 ? pages : 65536));
	}
	for (uint32_t i = 0; i < ctx->nr_ports; i++) {
		err = fwd_open_port(ctx, i);
		if (err)
			return err;
	}
	if (fwd_wants_steering(cfg)) {
		err = attach_steering(ctx);
		if (err)
			return err;
	}
	err = fwd_offload_init(ctx);
	if (err)
		return err;
	err = fwd_workers_init(ctx);
	if (err) {
		fprintf(stderr, "xdp-fwd: %s\n", strerror(-err));
		return err;
	}
	return 0;
}

/* The kernel's TX drops of every interface (its link stats' tx_dropped: a veth counts there the
 * frames it frees because its peer's ring is full or its peer cannot take them, after xdp-fwd
 * sent them) into its first port's counters, as the increase since the last read. A device seen
 * again after it was gone (or on another ifindex) starts a new base: its count restarted, and
 * what it counted before xdp-fwd saw it was not xdp-fwd's. getifaddrs, not sysfs: the link
 * dump is of this process's namespace. offload.c takes the same drops out of "lost". */
struct tx_kernel_read {
	struct fwd_ctx *ctx;
	bool found[FWD_MAX_PORTS];
};

static void tx_kernel_one(void *arg, const char *name, uint32_t ifindex, const struct rtnl_link_stats *st)
{
	struct tx_kernel_read *r = arg;
	struct fwd_ctx *ctx = r->ctx;

	for (uint32_t p = 0; p < ctx->nr_ports; p++) {
		struct fwd_tx_kernel *t = &ctx->tx_kernel[ctx->ports[p].iface];
		uint64_t before = t->dropped.total;

		if (strcmp(ctx->cfg->ports[p].ifname, name) || first_on_interface(ctx, p) != p)
			continue;
		if (t->dropped.seen && t->ifindex == ifindex) {
			fwd_count(&ctx->ports[p].ctr.drop[FWD_DROP_TX_KERNEL],
				  fwd_wide32_read(&t->dropped, st->tx_dropped) - before);
		} else { /* a new base: first seen, back, or another device under the name */
			*t = (struct fwd_tx_kernel){ .ifindex = ifindex };
			fwd_wide32_read(&t->dropped, st->tx_dropped);
		}
		r->found[ctx->ports[p].iface] = true;
	}
}

static void read_tx_kernel(struct fwd_ctx *ctx)
{
	struct tx_kernel_read r = { .ctx = ctx };

	ctx->tx_kernel_at = fwd_now_ns();
	if (fwd_each_link(tx_kernel_one, &r))
		return; /* the next read counts what this one would have */
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		if (!r.found[f])
			ctx->tx_kernel[f].dropped.seen = false;
}

/* The stats sample, with the kernel's share of --offload-after beside each port's counters. */
static void sample(struct fwd_ctx *ctx, struct fwd_samples *s)
{
	read_tx_kernel(ctx);
	for (uint32_t i = 0; i < ctx->nr_ports; i++)
		fwd_rule_view_refresh(&ctx->steer_view[i], ctx->steer[i], ctx->cfg, ctx->rule_id[i]);
	fwd_sample(ctx, s);
	if (ctx->cfg->mode == FWD_MODE_L2)
		s->l2_macs = l2_count(&ctx->l2, fwd_now_ns());
	for (uint32_t i = 0; i < ctx->nr_ports; i++) {
		uint32_t first = first_on_interface(ctx, i);

		fwd_offload_sample(ctx, i, &s->port[i].offload);
		s->port[i].link_down = first == i ? !interface_running(ctx->cfg->ports[i].ifname) :
				       s->port[first].link_down;
	}
}

static double seconds(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* RX queues that no port serves: their frames never reach xdp-fwd (the port's program and
 * the steering program both pass a frame without a socket to the kernel). */
static void warn_unserved_queues(const struct fwd_ctx *ctx)
{
	const struct fwd_config *cfg = ctx->cfg;

	for (uint32_t i = 0; i < ctx->nr_ports; i++) {
		int n = first_on_interface(ctx, i) == i ? umem_port__queue_count(cfg->ports[i].ifname) : 0;
		char list[128];
		uint32_t missing = 0;
		size_t o = 0;

		for (uint32_t q = 0; n > 0 && q < (uint32_t)n; q++) {
			bool served = false;

			for (uint32_t j = i; j < ctx->nr_ports; j++)
				served |= !strcmp(cfg->ports[j].ifname, cfg->ports[i].ifname) && cfg->ports[j].queue == q;
			if (served)
				continue;
			if (o < sizeof(list))
				o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%u", missing ? "," : "", q);
			missing++;
		}
		if (!missing)
			continue;
		fprintf(stderr, "xdp-fwd: warning: %s: RX queue%s %s of %d %s served by no socket: the frames "
			"the device puts there go to the kernel's stack, not through xdp-fwd (serve them "
			"with -i %s@all, or steer them to queue %u with ethtool -X/-N)\n",
			cfg->ports[i].ifname, missing > 1 ? "s" : "", list, n, missing > 1 ? "are" : "is",
			cfg->ports[i].ifname, cfg->ports[i].queue);
	}
}

/* Runs until a signal, --duration, --count, or a worker failure. */
static void run(struct fwd_ctx *ctx, const sigset_t *sigs, const struct fwd_samples *start)
{
	const struct fwd_config *cfg = ctx->cfg;
	uint64_t interval_ns = (uint64_t)(cfg->interval * 1e9);
	uint64_t t0 = fwd_now_ns(), next = t0 + interval_ns;
	bool tty = !cfg->json && isatty(STDOUT_FILENO);
	static struct fwd_samples cur; /* static: zero for ports -i IFNAME@all adds later */
	struct fwd_samples prev = *start;
	uint32_t lines = 0; /* of the block printed last (ports may be added since) */
	bool printed = false, now_asked = false;

	while (!atomic_load(&ctx->stop)) {
		uint64_t now = fwd_now_ns(), wait = next > now ? next - now : 0;
		struct timespec ts;
		int sig;

		if (wait > FWD_TICK_NS)
			wait = FWD_TICK_NS;
		ts = (struct timespec){ .tv_sec = (time_t)(wait / 1000000000ull), .tv_nsec = (long)(wait % 1000000000ull) };
		sig = sigtimedwait(sigs, NULL, &ts);
		now = fwd_now_ns();
		if (sig == SIGUSR1) {
			now_asked = true; /* the stats of the interval so far, at once */
		} else if (sig > 0) {
			if (!cfg->quiet && !cfg->json)
				fprintf(stderr, "xdp-fwd: %s, stopping\n", strsignal(sig));
			break;
		}
		/* Before the link events: a device back under its name gets its base before its
		 * ports reopen. */
		if (now - ctx->tx_kernel_at >= FWD_TX_KERNEL_NS)
			read_tx_kernel(ctx);
		fwd_live_poll(ctx);
		if (cfg->count && atomic_load(&ctx->forwarded) >= cfg->count)
			break;
		if (cfg->duration > 0 && seconds(now - t0) >= cfg->duration)
			break;
		if (now < next && !now_asked)
			continue;
		sample(ctx, &cur);
		if ((!cfg->quiet || now_asked) && fwd_out_ok(stdout)) {
			if (tty && printed)
				printf("\033[%uA", lines); /* redraw the block in place */
			fwd_print_stats(stdout, ctx, &prev, &cur, seconds(interval_ns + now - next), seconds(now - t0),
					"interval");
			lines = 1 + ctx->nr_ports + fwd_multi_queue_interfaces(ctx) + ctx->nr_workers +
				fwd_steered_interfaces(ctx) + (ctx->cap != NULL);
			printed = fwd_out_ok(stdout);
			if (now_asked && cfg->mode == FWD_MODE_L2) {
				fwd_print_l2_table(stdout, ctx, now, seconds(now - t0));
				printed = false; /* the next block goes below the table, not over it */
			}
		}
		now_asked = false;
		prev = cur;
		next = now + interval_ns;
	}
	atomic_store(&ctx->stop, 1);
}

static const struct fwd_live_ops live_ops = {
	.open_port = fwd_open_port,
	.close_port = fwd_close_port,
	.open_steering = fwd_open_steering,
	.close_steering = fwd_close_steering,
	.steer_sockets = fwd_steer_sockets,
	.add_port = fwd_add_port,
	.map_ports = map_vias,
};

int main(int argc, char **argv)
{
	static struct fwd_config cfg;
	static struct fwd_ctx ctx;
	static struct fwd_samples start, total; /* zero for ports added later */
	char err[256];
	sigset_t sigs;
	uint64_t t0;
	int64_t out;
	FILE *tot;
	int ret;

	/* Before anything can open a descriptor. */
	if (fwd_std_fds())
		return 1;
	ret = fwd_parse_args(&cfg, argc, argv, err, sizeof(err));
	if (ret > 0)
		return 0;
	if (ret < 0) {
		fprintf(stderr, "xdp-fwd: %s\n", err);
		return 2;
	}
	if (check_system(&cfg) || fwd_privs_check(&cfg) || fwd_lock_interfaces(&cfg))
		return 1;
	fwd_warn_deprecated(&cfg, stderr);
	/* Before the --pcap header is written: SIGPIPE and SIGXFSZ ignored (sys.c). */
	fwd_signals(&sigs);
	/* The file before anything is attached: a path that cannot be written changes nothing. */
	if (cfg.pcap_path && !(ctx.cap = fwd_capture_open(&cfg, cfg.workers))) {
		fwd_unlock_interfaces();
		return 1;
	}
	/* Before set-up, so that a refusal leaves nothing attached. */
	if (cfg.cpu_latency) {
		const char *caveat = fwd_cpu_latency_caveat(cfg.cpu_latency_usecs);

		ret = fwd_cpu_latency_hold(cfg.cpu_latency_usecs);
		if (ret) {
			fprintf(stderr, "xdp-fwd: --cpu-latency: cannot hold a CPU latency request on "
				"/dev/cpu_dma_latency: %s\n", strerror(-ret));
			fwd_capture_free(ctx.cap);
			fwd_unlock_interfaces();
			return 1;
		}
		if (caveat)
			fprintf(stderr, "xdp-fwd: warning: --cpu-latency: %s\n", caveat);
	}
	fwd_rules_warn(&cfg, stderr);
	/* Blocked before any thread exists, so every thread inherits it and the main thread
	 * alone takes the signal; a Ctrl-C during set-up waits until set-up can be undone. */
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);

	if (setup(&ctx, &cfg)) {
		teardown(&ctx);
		fwd_cpu_latency_release();
		fwd_unlock_interfaces();
		return 1;
	}
	ret = fwd_live_open(&ctx, &live_ops);
	if (ret)
		fprintf(stderr, "xdp-fwd: cannot watch link changes (rtnetlink): %s; interfaces deleted "
			"or changed under it are not followed\n", strerror(-ret));
	/* Sockets bound, programs attached: nothing from here to exit needs a capability, unless
	 * ports are to be reopened. */
	ret = fwd_privs_drop(cfg.reattach);
	if (ret) {
		fprintf(stderr, "xdp-fwd: cannot drop capabilities after set-up: %s\n", strerror(-ret));
		teardown(&ctx);
		fwd_cpu_latency_release();
		fwd_unlock_interfaces();
		return 1;
	}
	if (!cfg.quiet) {
		fprintf(stderr, "xdp-fwd: %s mode, %u port%s, %u worker%s, %s%s\n", fwd_mode_name(cfg.mode),
			ctx.nr_ports, ctx.nr_ports > 1 ? "s" : "", ctx.nr_workers, ctx.nr_workers > 1 ? "s" : "",
			cfg.multi_buffer ? "multi-buffer, " : "", "Ctrl-C stops");
		if (fwd_privs_kept()[0])
			fprintf(stderr, "xdp-fwd: set up; capabilities dropped (%s kept in the permitted "
				"set to re-attach interfaces; --no-reattach drops them)\n", fwd_privs_kept());
		else
			fprintf(stderr, "xdp-fwd: set up; capabilities dropped (%s)\n",
				fwd_privs_none() ? "none kept" : "some remain");
		for (uint32_t i = 0; i < ctx.nr_ports; i++)
			fprintf(stderr, "xdp-fwd:   port %u %s: %s, XDP %s, worker %u\n", i, ctx.ports[i].name,
				umem_port__mode_str(umem_port__mode(ctx.ports[i].port)),
				umem_port__xdp_mode(ctx.ports[i].port) == UMEM_PORT_XDP_EXTERNAL ? "through the steering program" :
				umem_port__xdp_mode_str(umem_port__xdp_mode(ctx.ports[i].port)), ctx.ports[i].worker);
		/* What a frame in flight costs: the chunk each RX buffer takes out of the area. */
		fprintf(stderr, "xdp-fwd:   UMEM %llu KiB, %u-byte chunks\n",
			(unsigned long long)(umem_area__size(ctx.area) >> 10),
			umem_port__chunk_size(ctx.ports[0].port));
		fprintf(stderr, "xdp-fwd:   latency %s%s\n", fwd_latency_names[cfg.latency],
			cfg.idle_spin_given && !cfg.idle_spin_auto ? " (a fixed spin window: --idle-spin)" : "");
		if (cfg.pcap_path) {
			fprintf(stderr, "xdp-fwd:   pcap %s: the frames sent%s%s%s, at most %u bytes each", cfg.pcap_path,
				cfg.pcap_filter ? " that match '" : "", cfg.pcap_filter ? cfg.pcap_filter : "",
				cfg.pcap_filter ? "'" : "", cfg.pcap_snaplen);
			if (cfg.pcap_count)
				fprintf(stderr, ", the first %llu", (unsigned long long)cfg.pcap_count);
			fputc('\n', stderr);
		}
		if (cfg.cpu_latency)
			fprintf(stderr, "xdp-fwd:   CPU latency held at %u µs while running (/dev/cpu_dma_latency)%s\n",
				cfg.cpu_latency_usecs, cfg.cpu_latency_usecs ? "" : ": idle CPUs poll instead of halting");
	}
	warn_unserved_queues(&ctx);
	warn_down_interfaces(&cfg);
	/* Totals leave out the set-up (filling the fill rings is all fresh pages by design). */
	sample(&ctx, &start);
	t0 = fwd_now_ns();
	ret = ctx.cap ? fwd_capture_start(ctx.cap) : 0;
	if (!ret)
		ret = fwd_workers_start(&ctx);
	if (!ret)
		run(&ctx, &sigs, &start);
	atomic_store(&ctx.stop, 1);
	fwd_workers_join(&ctx);
	fwd_capture_stop(ctx.cap); /* every record in the file before the totals say so */
	for (uint32_t k = 0; k < ctx.nr_workers; k++)
		if (ctx.workers[k].error)
			ret = ctx.workers[k].error;
	sample(&ctx, &total);
	/* A closed stdout (the reader went away) gets the totals on stderr instead. */
	for (int attempt = 0; attempt < 2; attempt++) {
		tot = fwd_totals_stream();
		fwd_print_stats(tot, &ctx, &start, &total, seconds(fwd_now_ns() - t0), seconds(fwd_now_ns() - t0),
				"total");
		if (tot == stderr || fwd_out_ok(tot))
			break;
	}
	fwd_live_close(&ctx);
	out = teardown(&ctx);
	fwd_cpu_latency_release();
	fwd_unlock_interfaces();
	tot = fwd_totals_stream();
	if (cfg.json)
		fprintf(tot, "{\"type\":\"exit\",\"frames_out\":%lld}\n", (long long)out);
	else
		fprintf(tot, "frames still out: %lld\n", (long long)out);
	if (tot == stdout && !fwd_out_ok(stdout))
		fprintf(stderr, "frames still out: %lld\n", (long long)out);
	if (out)
		fprintf(stderr, "xdp-fwd: %lld frames were not returned to their pools\n", (long long)out);
	return ret || out ? 1 : 0;
}
