/* SPDX-License-Identifier: MIT */
/*
 * xdp-fwd: forwards frames between AF_XDP ports that share one UMEM. This file is the order of
 * things: parse, set up, run, tear down.
 *
 * Start-up creates, in order, the area, one pool per worker, the ports (first to last) and the
 * workers; any failure unwinds what exists, in reverse, through one ladder whose labels say what
 * they undo. SIGINT/SIGTERM (and --duration, --count) stop RX, let the workers drain TX
 * completions, destroy the ports (which detaches the XDP program and returns every buffer) and
 * then the pools; the frames still out at that point are reported and must be zero. A SIGINT or
 * SIGTERM during start-up undoes it and exits 128 + the signal. Signals are blocked in every thread and taken by the main thread with sigtimedwait(), which also paces
 * the stats output (SIGUSR1: print them now, in l2 mode with the MAC table), SIGHUP (--config
 * read again: reload.c), SIGUSR2 (a successor started: restart.c), the control socket's requests (--control: control.c, served here
 * between the ticks, never by a worker) and the handling of live interface changes (live.c).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>
#include <umem/port.h>

#include "capture.h"
#include "control.h"
#include "ctx.h"
#include "fwd.h"
#include "handover.h"
#include "live.h"
#include "lock.h"
#include "metrics.h"
#include "mode.h"
#include "netif.h"
#include "offload.h"
#include "ports.h"
#include "reload.h"
#include "privs.h"
#include "report.h"
#include "restart.h"
#include "rules.h"
#include "service.h"
#include "sizing.h"
#include "sys.h"
#include "worker.h"

#define FWD_TICK_NS 50000000ull   /* how often --duration and --count are checked */
/* How often the interfaces' tx_dropped is read (a gone device takes its last drops with it). */
#define FWD_TX_KERNEL_NS 250000000ull

/* Destroys whatever setup() created, in reverse order of creation (what exists of it: setup may
 * have stopped half way). Returns the frames still out. */
static int64_t teardown(struct fwd_ctx *ctx)
{
	int64_t out = 0;

	fwd_workers_join(ctx);
	fwd_offload_fini(ctx);
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		fwd_iface_steer_close(ctx, &ctx->ifaces[f]);
	fwd_ports_close(ctx);
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
	if (ctx->mode && ctx->mode->teardown)
		ctx->mode->teardown(ctx);
	return out;
}

static int setup(struct fwd_ctx *ctx, struct fwd_config *cfg)
{
	int err;

	ctx->cfg = cfg;
	ctx->nr_ports = cfg->nr_ports;
	ctx->nr_workers = cfg->workers;
	ctx->mode = fwd_mode_of(cfg->mode);
	ctx->area = fwd_area_create(cfg, ctx->nr_workers);
	if (!ctx->area) {
		err = -errno;
		fprintf(stderr, "xdp-fwd: cannot create the UMEM area: %s%s\n", strerror(-err),
			cfg->hugepages ? " (are hugepages reserved? see vm.nr_hugepages)" : "");
		return err;
	}
	if (ctx->cap)
		fwd_capture_bind(ctx->cap, ctx->area);
	fwd_ports_assign(ctx);
	fwd_ifaces_map(ctx);
	fwd_ports_map_vias(ctx);
	/* The interfaces are known, nothing is attached yet. */
	if (ctx->mode->setup) {
		err = ctx->mode->setup(ctx);
		if (err)
			return err;
	}
	for (uint32_t k = 0; k < ctx->nr_workers; k++) {
		struct fwd_worker *w = &ctx->workers[k];
		/* The worker's working set: its fill rings and TX rings full at once. The return
		 * ring holds all of it, so a burst of returns never spills to the area, and the
		 * pool takes it up front: no slow-path allocation once traffic flows. */
		uint64_t pages = fwd_frame_pages(cfg, fwd_ring_frames(cfg, w->nr_ports));
		UMEM_OPTS(umem_pool_opts, popts, .ring_size = fwd_pow2_at_least(pages < 1024 ? 1024 : pages > 65536 ? 65536 : pages));
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
	/* --takeover: everything above is ready; the old instance stops and hands over now. */
	if (ctx->handover && (err = fwd_handover_take(ctx)))
		return err;
	for (uint32_t i = 0; i < ctx->nr_ports; i++) {
		err = fwd_port_open(ctx, i);
		if (err)
			return err;
		fwd_handover_mark(ctx, "%s bound", ctx->ports[i].name);
	}
	for (uint32_t f = 0; fwd_wants_steering(cfg) && f < ctx->nr_ifaces; f++) {
		err = fwd_iface_steer_open(ctx, &ctx->ifaces[f]);
		if (err)
			return err;
	}
	fwd_handover_timing(ctx);
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

static double seconds(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* --count: the frames forwarded by either path, the kernel's offloaded ones included (those of
 * a flow past --offload-after never reach userspace). */
static uint64_t forwarded(struct fwd_ctx *ctx)
{
	uint64_t n = atomic_load(&ctx->forwarded);

	for (uint32_t i = 0; ctx->off && i < ctx->nr_ports; i++) {
		struct fwd_offload_sample s;

		fwd_offload_sample(ctx, i, &s);
		n += s.packets;
	}
	return n;
}

/* Runs until a signal, --duration, --count, or a worker failure. */
static void run(struct fwd_ctx *ctx, const sigset_t *sigs, const struct fwd_samples *start,
		const struct fwd_samples *first, int argc, char **argv)
{
	const struct fwd_config *cfg = ctx->cfg;
	uint64_t interval_ns = (uint64_t)(cfg->interval * 1e9);
	uint64_t t0 = fwd_now_ns(), next = t0 + interval_ns;
	bool tty = !cfg->json && isatty(STDOUT_FILENO);
	static struct fwd_samples cur; /* static: zero for ports -i IFNAME@all adds later */
	struct fwd_samples prev = *first; /* the intervals count this run's frames only */
	uint32_t lines = 0; /* of the block printed last (ports may be added since) */
	bool printed = false, now_asked = false;
	/* The mode's control socket (l3: routing events), the control socket's connections and the
	 * signals, waited for together. */
	int ctl_fd = ctx->mode->control_fd ? ctx->mode->control_fd(ctx) : -1;
	int sig_fd = ctl_fd >= 0 || ctx->control ? signalfd(-1, sigs, SFD_CLOEXEC | SFD_NONBLOCK) : -1;

	while (!atomic_load(&ctx->stop)) {
		uint64_t now = fwd_now_ns(), wait = next > now ? next - now : 0;
		struct fwd_control_taken taken;
		struct timespec ts;
		int sig, tfd;

		if (wait > FWD_TICK_NS)
			wait = FWD_TICK_NS;
		ts = (struct timespec){ .tv_sec = (time_t)(wait / 1000000000ull), .tv_nsec = (long)(wait % 1000000000ull) };
		if (sig_fd >= 0) {
			struct pollfd pfd[2 + 1 + FWD_CONTROL_CONNS + 1] = { { .fd = sig_fd, .events = POLLIN },
									       { .fd = ctl_fd, .events = POLLIN } };
			int n = 2 + fwd_control_pollfds(ctx->control, pfd + 2, 1 + FWD_CONTROL_CONNS);

			n += fwd_restart_pollfds(pfd + n, 1);

			poll(pfd, (nfds_t)n, (int)((wait + 999999) / 1000000));
			ts = (struct timespec){ 0 }; /* the signal, if one came, is pending: take it */
		}
		sig = sigtimedwait(sigs, NULL, &ts);
		now = fwd_now_ns();
		if (ctx->mode->control)
			ctx->mode->control(ctx, now);
		fwd_control_serve(ctx->control, now);
		if ((tfd = fwd_control_take(ctx->control, &taken)) >= 0 && taken.cmd == FWD_CTL_HANDOVER) {
			/* Stops on success; a restart's requester is answered once its successor is set up. */
			fwd_handover_give(ctx, ctx->control, tfd, taken.version, start, fwd_restart_successor());
			close(tfd);
			fwd_restart_handed_over(ctx);
		} else if (tfd >= 0) {
			fwd_restart_begin(ctx, tfd, taken.json);
		}
		fwd_restart_poll(ctx, now);
		if (atomic_load(&ctx->stop)) /* handed over to a new instance */
			break;
		fwd_out_pump();
		if (sig == SIGUSR1) {
			now_asked = true; /* the stats of the interval so far, at once */
		} else if (sig == SIGUSR2) {
			fwd_restart_begin(ctx, -1, false); /* `systemctl kill -s USR2`: no one to answer */
		} else if (sig == SIGHUP) {
			/* A reload, never a stop: systemd's ExecReload=kill -HUP must not take the link
			 * down. Without --config there is nothing to read again. */
			char why[512];

			if (cfg->config_path)
				fwd_reload(ctx, argc, argv, why, sizeof(why));
			else
				fprintf(stderr, "xdp-fwd: SIGHUP: nothing to reload (no --config); still running\n");
		} else if (sig > 0) {
			if (!cfg->quiet && !cfg->json)
				fprintf(stderr, "xdp-fwd: %s, stopping\n", strsignal(sig));
			break;
		}
		/* Before the link events: a device back under its name gets its base before its
		 * ports reopen. */
		if (now - ctx->tx_kernel_at >= FWD_TX_KERNEL_NS)
			fwd_ifaces_read_tx_kernel(ctx);
		fwd_live_poll(ctx);
		fwd_service_tick(now);
		if (cfg->count && forwarded(ctx) >= cfg->count)
			break;
		if (cfg->duration > 0 && seconds(now - t0) >= cfg->duration)
			break;
		if (now < next && !now_asked)
			continue;
		fwd_report_sample(ctx, &cur);
		fwd_metrics_publish(ctx->metrics, ctx, start, &cur);
		if ((!cfg->quiet || now_asked) && fwd_out_ok(stdout)) {
			if (tty && printed)
				printf("\033[%uA", lines); /* redraw the block in place */
			fwd_print_stats(stdout, ctx, start, &prev, &cur, seconds(interval_ns + now - next), seconds(now - t0),
					"interval");
			lines = 1 + ctx->nr_ports + fwd_multi_queue_interfaces(ctx) + ctx->nr_workers +
				fwd_steered_interfaces(ctx) + (ctx->cap != NULL);
			printed = fwd_out_ok(stdout);
			if (now_asked && ctx->mode->print_table) {
				ctx->mode->print_table(stdout, ctx, now, seconds(now - t0));
				printed = false; /* the next block goes below the table, not over it */
			}
		}
		now_asked = false;
		prev = cur;
		next = now + interval_ns;
	}
	if (sig_fd >= 0)
		close(sig_fd);
	atomic_store(&ctx->stop, 1);
}


/* The lines that say what was set up. */
static void banner(const struct fwd_ctx *ctx, const struct fwd_config *cfg)
{
	fprintf(stderr, "xdp-fwd: %s mode, %u port%s, %u worker%s, %s%s\n", fwd_mode_name(cfg->mode),
		ctx->nr_ports, ctx->nr_ports > 1 ? "s" : "", ctx->nr_workers, ctx->nr_workers > 1 ? "s" : "",
		cfg->multi_buffer ? "multi-buffer, " : "", "Ctrl-C stops");
	if (fwd_privs_kept()[0])
		fprintf(stderr, "xdp-fwd: set up; capabilities dropped (%s kept in the permitted "
			"set to re-attach interfaces; --no-reattach drops them)\n", fwd_privs_kept());
	else
		fprintf(stderr, "xdp-fwd: set up; capabilities dropped (%s)\n",
			fwd_privs_none() ? "none kept" : "some remain");
	for (uint32_t i = 0; i < ctx->nr_ports; i++)
		fprintf(stderr, "xdp-fwd:   port %u %s: %s, XDP %s, worker %u\n", i, ctx->ports[i].name,
			umem_port__mode_str(umem_port__mode(ctx->ports[i].port)),
			umem_port__xdp_mode(ctx->ports[i].port) == UMEM_PORT_XDP_EXTERNAL ? "through the steering program" :
			umem_port__xdp_mode_str(umem_port__xdp_mode(ctx->ports[i].port)), ctx->ports[i].worker);
	/* What a frame in flight costs: the chunk each RX buffer takes out of the area. */
	fprintf(stderr, "xdp-fwd:   UMEM %llu KiB, %u-byte chunks\n",
		(unsigned long long)(umem_area__size(ctx->area) >> 10), umem_port__chunk_size(ctx->ports[0].port));
	if (ctx->control)
		fprintf(stderr, "xdp-fwd:   control socket %s (xdp-fwdctl -s %s help)\n", fwd_control_path(ctx->control),
			fwd_control_path(ctx->control));
	fprintf(stderr, "xdp-fwd:   latency %s%s\n", fwd_latency_names[cfg->latency],
		cfg->idle_spin_given && !cfg->idle_spin_auto ? " (a fixed spin window: --idle-spin)" : "");
	if (cfg->pcap_path) {
		fprintf(stderr, "xdp-fwd:   pcap %s: the frames sent%s%s%s, at most %u bytes each", cfg->pcap_path,
			cfg->pcap_filter ? " that match '" : "", cfg->pcap_filter ? cfg->pcap_filter : "",
			cfg->pcap_filter ? "'" : "", cfg->pcap_snaplen);
		if (cfg->pcap_count)
			fprintf(stderr, ", the first %llu", (unsigned long long)cfg->pcap_count);
		fputc('\n', stderr);
	}
	if (cfg->cpu_latency)
		fprintf(stderr, "xdp-fwd:   CPU latency held at %u µs while running (/dev/cpu_dma_latency)%s\n",
			cfg->cpu_latency_usecs, cfg->cpu_latency_usecs ? "" : ": idle CPUs poll instead of halting");
}

/* The CPU latency request (--cpu-latency, or the --latency level's): held before set-up, so that
 * a refusal leaves nothing attached. 0 or -errno. */
static int hold_cpu_latency(const struct fwd_config *cfg)
{
	const char *caveat = fwd_cpu_latency_caveat(cfg->cpu_latency_usecs);
	int err = fwd_cpu_latency_hold(cfg->cpu_latency_usecs);
	/* Messages name the option the user gave: --latency low must not read as --cpu-latency. */
	char opt[32];

	if (cfg->cpu_latency_given)
		snprintf(opt, sizeof(opt), "--cpu-latency");
	else
		snprintf(opt, sizeof(opt), "--latency %s", fwd_latency_names[cfg->latency]);
	if (err) {
		fprintf(stderr, "xdp-fwd: %s: cannot hold a CPU latency request on "
			"/dev/cpu_dma_latency: %s\n", opt, strerror(-err));
		return err;
	}
	if (caveat)
		fprintf(stderr, "xdp-fwd: warning: %s: %s\n", opt, caveat);
	return 0;
}

/* Set up: drops the capabilities, starts the workers, runs until stopped, prints the totals.
 * 0, or the error of a worker or of the start. */
static int forward(struct fwd_ctx *ctx, const sigset_t *sigs, int argc, char **argv)
{
	static struct fwd_samples start, first, total; /* zero for ports added later */
	const struct fwd_config *cfg = ctx->cfg;
	uint64_t t0;
	FILE *tot;
	int ret;

	if (!cfg->quiet)
		banner(ctx, cfg);
	fwd_ifaces_warn(ctx);
	/* Totals leave out the set-up (filling the fill rings is all fresh pages by design). */
	fwd_report_sample(ctx, &start);
	first = start;
	fwd_handover_carry(ctx, &start); /* --takeover: totals go on from the old instance's */
	/* A scrape before the first interval: the totals taken over, if any (first - start). */
	fwd_metrics_publish(ctx->metrics, ctx, &start, &first);
	fwd_control_attach(ctx->control, ctx, &start, argc, argv);
	t0 = fwd_now_ns();
	ret = ctx->cap ? fwd_capture_start(ctx->cap) : 0;
	if (!ret)
		ret = fwd_workers_start(ctx);
	if (!ret) {
		fwd_service_ready(ctx);
		run(ctx, sigs, &start, &first, argc, argv);
	}
	fwd_restart_fini(); /* a successor that did not take over goes with this instance */
	fwd_service_stopping();
	atomic_store(&ctx->stop, 1);
	fwd_workers_join(ctx);
	fwd_capture_stop(ctx->cap); /* every record in the file before the totals say so */
	/* What the ports still hold is in the totals: a down link's TX ring keeps its frames. */
	for (uint32_t i = 0; i < ctx->nr_ports; i++)
		fwd_port_settle(ctx, i);
	for (uint32_t k = 0; k < ctx->nr_workers; k++)
		if (ctx->workers[k].error)
			ret = ctx->workers[k].error;
	fwd_offload_settle(ctx);
	fwd_report_sample(ctx, &total);
	/* The last scrape and --metrics-file agree with the totals below. */
	fwd_metrics_publish(ctx->metrics, ctx, &start, &total);
	/* A closed stdout (the reader went away) gets the totals on stderr instead. */
	for (int attempt = 0; attempt < 2; attempt++) {
		tot = fwd_totals_stream();
		fwd_print_stats(tot, ctx, &start, &start, &total, seconds(fwd_now_ns() - t0), seconds(fwd_now_ns() - t0),
				"total");
		if (tot == stderr || fwd_out_ok(tot))
			break;
	}
	return ret;
}

static void print_frames_out(const struct fwd_config *cfg, int64_t out)
{
	FILE *tot = fwd_totals_stream();

	if (cfg->json)
		fprintf(tot, "{\"type\":\"exit\",\"frames_out\":%lld}\n", (long long)out);
	else
		fprintf(tot, "frames still out: %lld\n", (long long)out);
	if (tot == stdout && !fwd_out_ok(stdout))
		fprintf(stderr, "frames still out: %lld\n", (long long)out);
	if (out)
		fprintf(stderr, "xdp-fwd: %lld frames were not returned to their pools\n", (long long)out);
}

int main(int argc, char **argv)
{
	static struct fwd_config cfg;
	static struct fwd_ctx ctx;
	bool ran = false;
	char err[256];
	sigset_t sigs;
	int64_t out = 0;
	int ret;

	/* Before anything can open a descriptor. */
	if (fwd_std_fds())
		return 1;
	fwd_restart_init(argc, argv);
	/* Before anything that can block or leave state: a signal of the start-up never ends
	 * xdp-fwd with a lock file or a program left (SIGPIPE and SIGXFSZ ignored: sys.c). */
	fwd_signals(&sigs);
	ret = fwd_parse_args(&cfg, argc, argv, err, sizeof(err));
	if (ret) {
		if (ret < 0)
			fprintf(stderr, "xdp-fwd: %s\n", err);
		fwd_config_free(&cfg);
		return ret > 0 ? 0 : 2;
	}
	/* --takeover: the interfaces are locked once the running instance lets them go (setup). */
	if (fwd_check_system(&cfg) || fwd_privs_check(&cfg) || fwd_handover_probe(&cfg, &ctx.handover) ||
	    (!ctx.handover && fwd_lock_interfaces(&cfg))) {
		fwd_config_free(&cfg);
		return 1;
	}
	if (fwd_startup_stopped())
		goto unlock;
	fwd_out_init();
	fwd_warn_deprecated(&cfg, stderr);
	/* The listening socket before anything is attached: a port in use changes nothing.
	 * --takeover: the running instance's, after it hands them over (below). */
	ctx.metrics = ctx.handover ? NULL : fwd_metrics_open(&cfg);
	if (!ctx.handover && !ctx.metrics && errno)
		goto unlock;
	/* The same for the control socket: a path in use changes nothing. */
	ctx.control = ctx.handover ? NULL : fwd_control_open(&cfg);
	if (!ctx.handover && !ctx.control && errno)
		goto unlock;
	/* The file before anything is attached: a path that cannot be written changes nothing.
	 * A FIFO's open waits for its reader; a SIGINT/SIGTERM interrupts it. */
	if (cfg.pcap_path && !(ctx.cap = fwd_capture_open(&cfg, cfg.workers)))
		goto unlock;
	if (fwd_startup_stopped())
		goto free_capture;
	if (cfg.cpu_latency && hold_cpu_latency(&cfg))
		goto free_capture;
	fwd_rules_warn(&cfg, stderr);
	/* Blocked before any thread exists, so every thread inherits it and the main thread
	 * alone takes the signal; a Ctrl-C during set-up waits until set-up can be undone. */
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	if (setup(&ctx, &cfg))
		goto teardown;
	if (ctx.handover)
		fwd_handover_listeners(&ctx);
	/* A restart's successor: set up; the old instance answers its requester and exits. */
	fwd_restart_set_up();
	ret = fwd_live_open(&ctx);
	if (ret)
		fprintf(stderr, "xdp-fwd: cannot watch link changes (rtnetlink): %s; interfaces deleted "
			"or changed under it are not followed\n", strerror(-ret));
	/* Sockets bound, programs attached: nothing from here to exit needs a capability, unless
	 * ports are to be reopened. */
	ret = fwd_privs_drop(cfg.reattach);
	if (ret) {
		fprintf(stderr, "xdp-fwd: cannot drop capabilities after set-up: %s\n", strerror(-ret));
		goto close_live;
	}
	/* After the drop: the HTTP thread starts with no capability. */
	ret = fwd_metrics_start(ctx.metrics);
	if (ret) {
		fprintf(stderr, "xdp-fwd: --metrics: cannot start the HTTP server: %s\n", strerror(-ret));
		goto close_live;
	}
	/* A stop during set-up (blocked, so pending): undone before it ever runs. */
	if (fwd_startup_stopped())
		goto close_live;
	ret = forward(&ctx, &sigs, argc, argv);
	ran = true;
close_live:
	fwd_live_close(&ctx);
teardown:
	out = teardown(&ctx);
	fwd_cpu_latency_release();
free_capture:
	fwd_capture_free(ctx.cap);
	ctx.cap = NULL;
unlock:
	fwd_metrics_close(ctx.metrics);
	ctx.metrics = NULL;
	fwd_control_close(ctx.control);
	ctx.control = NULL;
	fwd_handover_free(&ctx); /* after teardown: the programs held go with their links */
	fwd_unlock_interfaces();
	if (ran)
		print_frames_out(&cfg, out);
	fwd_out_drain();
	fwd_config_free(&cfg);
	if (!ran && fwd_startup_stopped()) {
		/* The shell's convention for a process a signal ended, after a clean unwind. */
		fprintf(stderr, "xdp-fwd: %s during start-up: undone, nothing left attached\n",
			strsignal(fwd_startup_stopped()));
		return 128 + fwd_startup_stopped();
	}
	return !ran || ret || out ? 1 : 0;
}
