/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <umem/idle.h>

#include "capture.h"
#include "csum.h"
#include "ctx.h"
#include "mode.h"
#include "offload.h"
#include "path.h"
#include "route.h"
#include "sys.h"
#include "worker.h"

#define FWD_TX_TRIES 3               /* tx_burst attempts, draining completions between */
#define FWD_IDLE_POLL_MS 1    /* a sleep that something besides the sockets must end */
#define FWD_IDLE_SLEEP_MS 100 /* a sleep only the sockets, park or stop end */
#define FWD_KSTATS_NS 250000000ull   /* kernel XDP_STATISTICS refresh period */
#define FWD_DRAIN_NS 1000000000ull   /* how long shutdown waits for TX completions */

/* The idle policy's clock: precise (the window is microseconds), read through the vDSO. */
static uint64_t precise_ns(void)
{
	return fwd_clock_ns(CLOCK_MONOTONIC);
}

/* Moves up to max descriptors (whole chains) from q into the staging buffers. */
static uint32_t xq_drain(struct fwd_worker *w, struct fwd_xq *q, uint32_t max)
{
	uint32_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
	/* Acquire: pairs with the producer's release of tail. */
	uint32_t n = atomic_load_explicit(&q->tail, memory_order_acquire) - head;

	if (n > max) {
		n = max;
		while (n && !fwd_desc_last(&q->items[(head + n - 1) & q->mask].desc))
			n--;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct fwd_xq_item *it = &q->items[(head + i) & q->mask];

		fwd_stage(w, it->port, &it->desc, 1);
	}
	/* Release: pairs with the producer's acquire of head before it rewrites these slots. */
	atomic_store_explicit(&q->head, head + n, memory_order_release);
	return n;
}

static void wake_fd_write(struct fwd_worker *w)
{
	uint64_t one = 1;

	if (w->wake_open && write(w->wake_fd, &one, sizeof(one)) < 0)
		return; /* EAGAIN: the counter is full, so a wake is pending anyway */
}

/* Wakes the workers this turn queued frames for, if they sleep. The seq_cst fence pairs with
 * the one in idle_wait: either the sleeper sees the frames before it sleeps, or this sees it
 * asleep (the store-load order both sides need). */
static void wake_queued(struct fwd_worker *w)
{
	uint64_t to = w->queued_to;

	if (!to)
		return;
	w->queued_to = 0;
	atomic_thread_fence(memory_order_seq_cst);
	while (to) {
		struct fwd_worker *t = &w->ctx->workers[__builtin_ctzll(to)];

		to &= to - 1;
		if (atomic_load_explicit(&t->sleeping, memory_order_relaxed))
			wake_fd_write(t);
	}
}

/* Frames other workers queued for this one and it has not taken yet. */
static bool incoming_pending(struct fwd_worker *w)
{
	struct fwd_ctx *ctx = w->ctx;

	for (uint32_t from = 0; from < ctx->nr_workers; from++) {
		struct fwd_xq *q = &ctx->xq[from][w->idx];

		if (from != w->idx && atomic_load_explicit(&q->tail, memory_order_relaxed) !=
					      atomic_load_explicit(&q->head, memory_order_relaxed))
			return true;
	}
	return false;
}

/* --- transmit ------------------------------------------------------------------------- */

static void flush_port(struct fwd_worker *w, uint32_t out)
{
	struct fwd_port *p = &w->ctx->ports[out];
	struct umem_desc *d = w->stage[out];
	uint32_t n = w->nstage[out], sent = 0;
	uint64_t frames, bytes;

	if (!n)
		return;
	w->nstage[out] = 0;
	if (!p->port) { /* the interface is gone: counted, never "sent" */
		fwd_drop(w, p, FWD_DROP_DOWN, d, n);
		return;
	}
	for (int tries = 0; tries < FWD_TX_TRIES && sent < n; tries++) {
		int r = umem_port__tx_burst(p->port, d + sent, n - sent);

		if (r > 0) {
			/* --pcap: before a completion can take the buffers back. */
			if (umem_unlikely(w->ctx->cap != NULL))
				fwd_capture_frames(w->ctx->cap, w->idx, out, d + sent, (uint32_t)r);
			sent += (uint32_t)r;
		}
		if (sent < n)
			umem_port__complete(p->port); /* make room */
	}
	fwd_count_frames(d, sent, &frames, &bytes);
	fwd_count(&p->ctr.tx_packets, frames);
	fwd_count(&p->ctr.tx_bytes, bytes);
	if (frames)
		atomic_fetch_add_explicit(&w->ctx->forwarded, frames, memory_order_relaxed);
	if (sent < n)
		fwd_drop(w, p, FWD_DROP_TX_FULL, d + sent, n - sent);
}

static void flush_all(struct fwd_worker *w)
{
	for (uint32_t k = 0; k < w->nr_ports; k++)
		flush_port(w, w->ports[k]);
}

/* Sends the outputs input port in has staged frames for: the full ones only (full: a burst's
 * worth), or all of them once in's RX ring came back empty. Larger TX bursts cost fewer
 * kicks, and they reach the next hop together (GRO merges them: fewer ACKs come back). */
static void flush_fed(struct fwd_worker *w, uint32_t in, bool all)
{
	uint64_t fed = w->fed[in];

	while (fed) {
		uint32_t out = (uint32_t)__builtin_ctzll(fed);

		fed &= fed - 1;
		if (all || w->nstage[out] >= w->ctx->cfg->batch)
			flush_port(w, out);
	}
	if (all)
		w->fed[in] = 0;
}

static uint32_t drain_incoming(struct fwd_worker *w)
{
	struct fwd_ctx *ctx = w->ctx;
	uint32_t work = 0;

	for (uint32_t from = 0; from < ctx->nr_workers; from++) {
		if (from == w->idx)
			continue;
		work += xq_drain(w, &ctx->xq[from][w->idx], ctx->cfg->batch);
		flush_all(w);
	}
	return work;
}

/* Kernel drop counters (XDP_STATISTICS) into the port's counters, as absolute values over the
 * sockets the port has had (kbase: those closed before). */
static const enum fwd_drop kernel_drops[] = { FWD_DROP_XSK_RX, FWD_DROP_XSK_RX_FULL, FWD_DROP_XSK_FILL,
					       FWD_DROP_XSK_RX_INVALID, FWD_DROP_XSK_TX_INVALID };
#define NR_KERNEL_DROPS (sizeof(kernel_drops) / sizeof(kernel_drops[0]))

static void read_kernel_stats(struct fwd_port *p)
{
	struct umem_port_stats st = { .sz = sizeof(st) };
	uint64_t v[NR_KERNEL_DROPS];

	if (!p->port || umem_port__stats(p->port, &st))
		return;
	v[0] = st.rx_dropped;
	v[1] = st.rx_ring_full;
	v[2] = st.rx_fill_ring_empty;
	v[3] = st.rx_invalid_descs;
	v[4] = st.tx_invalid_descs;
	for (size_t i = 0; i < NR_KERNEL_DROPS; i++)
		atomic_store_explicit(&p->ctr.drop[kernel_drops[i]], p->kbase[kernel_drops[i]] + v[i],
				      memory_order_relaxed);
}

void fwd_port_save_kernel_stats(struct fwd_port *p)
{
	read_kernel_stats(p);
	for (size_t i = 0; i < NR_KERNEL_DROPS; i++)
		p->kbase[kernel_drops[i]] = atomic_load_explicit(&p->ctr.drop[kernel_drops[i]], memory_order_relaxed);
}

static void refresh_kernel_stats(struct fwd_worker *w)
{
	struct timespec ts;

	for (uint32_t k = 0; k < w->nr_ports; k++)
		read_kernel_stats(&w->ctx->ports[w->ports[k]]);
	/* The thread's own CPU time, for the metrics: read here, every 250 ms, because another
	 * thread's clock (pthread_getcpuclockid) is gone once the worker is joined. */
	if (!clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		atomic_store_explicit(&w->cpu_ns, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec,
				      memory_order_relaxed);
}

static uint64_t tx_inflight(struct fwd_worker *w)
{
	uint64_t n = 0;

	for (uint32_t k = 0; k < w->nr_ports; k++)
		n += umem_port__tx_inflight(w->ctx->ports[w->ports[k]].port);
	return n;
}

/* preempted() is a system call, and a spinning loop turns every few hundred ns: it is asked at
 * most this often. A preemption hands the CPU over for a scheduler slice (ms), so the spin still
 * ends within a few µs of it. */
#define FWD_PREEMPT_CHECK_NS 4000ull

/* True when this thread was preempted since the last call: another task wanted its CPU. The
 * spin window then ends, as the kernel's busy-poll loop ends on need_resched(). sched_yield()
 * would not do: the fair scheduler still gives a yielding spinner half of a contended CPU, and
 * on a machine whose endpoints share the forwarder's CPUs that half starves the very traffic
 * the worker waits for. */
static bool preempted(long *seen)
{
	struct rusage ru;
	long before = *seen;

	if (getrusage(RUSAGE_THREAD, &ru))
		return false;
	*seen = ru.ru_nivcsw;
	return ru.ru_nivcsw != before;
}

/* Sleeps until a socket has frames, another worker queued frames for this one, or the main
 * thread parks or stops the workers (the last two: the wake eventfd). TX completions, pages
 * other workers return to this one's pool (its fill rings refill from them) and an offload
 * gate that waits for this worker's turns wake nothing: with any of them possible, 1 ms at
 * most. Otherwise the periodic duties (kernel counters, offload housekeeping: every 250 ms)
 * bound it. A worker whose traffic is all offloaded then wakes 50 times a second (offload's
 * delivery check, fwd_offload_max_sleep_ms), not 1000:
 * at MTU 64000 those wakeups cost the kernel's forwarding on the same CPUs about a tenth of
 * its throughput. */
static void idle_wait(struct fwd_worker *w)
{
	struct pollfd pfd[FWD_MAX_PORTS + 1];
	uint32_t n = w->nr_ports;
	int timeout = w->ctx->nr_workers > 1 || tx_inflight(w) ? FWD_IDLE_POLL_MS : FWD_IDLE_SLEEP_MS;
	int limit = w->ctx->off ? fwd_offload_max_sleep_ms(w) : -1;

	for (uint32_t k = 0; k < n; k++) {
		struct umem_port *port = w->ctx->ports[w->ports[k]].port;

		/* poll() skips a negative fd: a gone port. */
		pfd[k] = (struct pollfd){ .fd = port ? umem_port__fd(port) : -1, .events = POLLIN };
	}
	pfd[n] = (struct pollfd){ .fd = w->wake_open ? w->wake_fd : -1, .events = POLLIN };
	if (limit >= 0 && limit < timeout)
		timeout = limit;
	wake_queued(w); /* whatever this turn queued, before this worker sleeps too */
	atomic_store_explicit(&w->sleeping, true, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst); /* pairs with wake_queued's */
	if (!incoming_pending(w)) {
		int ready = poll(pfd, n + 1, timeout);

		fwd_count(&w->sleeps, 1);
		if (ready > 0 && (pfd[n].revents & POLLIN)) {
			uint64_t v;

			if (read(w->wake_fd, &v, sizeof(v)) < 0)
				v = 0; /* EAGAIN: another read took it */
		} else if (ready == 0 && incoming_pending(w)) {
			fwd_count(&w->late_handoffs, 1);
		}
	}
	atomic_store_explicit(&w->sleeping, false, memory_order_relaxed);
}

/* Shutdown: RX has stopped everywhere (barrier); hand over what other workers queued to us,
 * then wait (bounded) until the kernel has completed every TX buffer. */
static void drain(struct fwd_worker *w)
{
	uint64_t deadline = fwd_now_ns() + FWD_DRAIN_NS;

	flush_all(w);
	/* Every running worker has stopped RX and queued its last cross-worker frames. */
	atomic_fetch_add(&w->ctx->stopped_rx, 1);
	while (atomic_load(&w->ctx->stopped_rx) < atomic_load(&w->ctx->nr_running))
		sched_yield();
	while (drain_incoming(w))
		;
	do {
		for (uint32_t k = 0; k < w->nr_ports; k++)
			if (w->ctx->ports[w->ports[k]].port)
				umem_port__service(w->ctx->ports[w->ports[k]].port);
	} while (tx_inflight(w) && fwd_now_ns() < deadline);
	refresh_kernel_stats(w);
}

/* Waits while the main thread changes ports. The seq_cst accesses order this worker's earlier
 * use of the ports before the main thread's changes, and those before its later use. */
static void park(struct fwd_worker *w)
{
	struct fwd_ctx *ctx = w->ctx;

	atomic_fetch_add(&ctx->parked, 1);
	while (atomic_load(&ctx->park))
		sched_yield();
	atomic_fetch_sub(&ctx->parked, 1);
}

static void *worker_main(void *arg)
{
	struct fwd_worker *w = arg;
	struct fwd_ctx *ctx = w->ctx;
	struct umem_desc *rx = calloc(ctx->cfg->batch, sizeof(*rx));
	struct umem_desc *drained = calloc(ctx->cfg->batch, sizeof(*drained)); /* fwd_offload_filter's */
	uint64_t kstats_at = 0;
	long nivcsw = 0;
	uint64_t preempt_checked = 0; /* when preempted() was last asked */
	struct umem_idle_opts io;
	struct umem_idle *idle;
	uint32_t latency_gen = atomic_load(&ctx->latency_gen);
	bool mode_ready = false; /* the mode's worker_init ran and succeeded */

	/* The idle policy (umem/idle.h): saturated input spins like a polling loop; below it the
	 * worker spins for about the gaps it measures between frames (waking a sleeping thread
	 * costs ~20 µs of latency on a VM), then sleeps; a preemption ends a spin early
	 * (preempted()). */
	fwd_latency_idle_opts(ctx->cfg, &io);
	idle = umem_idle__create(&io, precise_ns());
	preempted(&nivcsw); /* the count so far */
	if (!rx || !drained || !idle) {
		w->error = -ENOMEM;
		atomic_store(&ctx->stop, 1);
	} else if (ctx->mode->worker_init) {
		w->error = ctx->mode->worker_init(w);
		mode_ready = !w->error;
		if (w->error)
			atomic_store(&ctx->stop, 1);
	}
	while (!atomic_load_explicit(&ctx->stop, memory_order_relaxed)) {
		uint64_t now = fwd_now_ns();
		uint32_t work = 0;

		if (atomic_load_explicit(&ctx->park, memory_order_relaxed))
			park(w);
		for (uint32_t k = 0; k < w->nr_ports; k++) {
			uint32_t in = w->ports[k];
			int n = ctx->ports[in].port ? umem_port__rx_burst(ctx->ports[in].port, rx, ctx->cfg->batch) : 0;
			uint64_t frames, bytes;

			if (n <= 0) {
				flush_fed(w, in, true);
				continue;
			}
			if (ctx->off)
				fwd_offload_unwrap(w, in, rx, (uint32_t)n);
			fwd_count_frames(rx, (uint32_t)n, &frames, &bytes);
			fwd_count(&ctx->ports[in].ctr.rx_packets, frames);
			fwd_count(&ctx->ports[in].ctr.rx_bytes, bytes);
			if (ctx->off) {
				/* Frames of a draining gate (offload): dropped, counted, before any use. */
				uint32_t kept = fwd_offload_filter(w, in, rx, (uint32_t)n, drained);

				if (kept < (uint32_t)n)
					fwd_drop(w, &ctx->ports[in], FWD_DROP_GATE_DRAIN, drained, (uint32_t)n - kept);
				work += (uint32_t)n - kept;
				n = (int)kept;
				if (!n) {
					/* Nothing more for the outputs from this burst; and a drain
					 * ends only once what is staged was sent (offload.c). */
					flush_fed(w, in, true);
					continue;
				}
			}
			if (fwd_csum_burst(fwd_route_data, w, rx, (uint32_t)n, ctx->ports[in].skip_contd,
					   ctx->cfg->csum_complete, &ctx->ports[in].ctr, w->csum_partial) &&
			    !ctx->ports[in].csum_warned && fwd_csum_warn_due(&ctx->ports[in].ctr)) {
				ctx->ports[in].csum_warned = true;
				fwd_csum_warn(stderr, ctx->ports[in].name, ctx->cfg->csum_complete, ctx->off != NULL);
			}
			ctx->mode->burst(w, in, rx, (uint32_t)n, now);
			if (ctx->off)
				fwd_offload_burst(w, in, rx, (uint32_t)n, now);
			flush_fed(w, in, false);
			work += (uint32_t)n;
		}
		wake_queued(w);
		work += drain_incoming(w);
		if (!work)
			flush_all(w);
		for (uint32_t k = 0; k < w->nr_ports; k++)
			if (ctx->ports[w->ports[k]].port)
				work += (uint32_t)(umem_port__service(ctx->ports[w->ports[k]].port) > 0);
		if (ctx->off)
			fwd_offload_tick(w, now);
		if (now - kstats_at >= FWD_KSTATS_NS) {
			refresh_kernel_stats(w);
			kstats_at = now;
		}
		uint64_t turn_end = precise_ns();
		enum umem_idle_action next = umem_idle__turn(idle, turn_end, work);

		if (next == UMEM_IDLE_SPIN && turn_end - preempt_checked >= FWD_PREEMPT_CHECK_NS) {
			preempt_checked = turn_end;
			if (preempted(&nivcsw))
				next = umem_idle__preempted(idle);
		}
		if (next == UMEM_IDLE_SLEEP) {
			idle_wait(w);
			umem_idle__woke(idle, precise_ns());
		}
		/* A reload changed --latency: the new level's policy, checked in idle turns only
		 * (saturated input never sleeps at any level). */
		if (next != UMEM_IDLE_POLL &&
		    atomic_load_explicit(&ctx->latency_gen, memory_order_acquire) != latency_gen) {
			struct umem_idle *fresh;

			latency_gen = atomic_load_explicit(&ctx->latency_gen, memory_order_acquire);
			fwd_latency_idle_opts(ctx->cfg, &io);
			fresh = umem_idle__create(&io, precise_ns());
			if (fresh) {
				umem_idle__destroy(idle);
				idle = fresh;
			}
		}
	}
	drain(w);
	if (mode_ready && ctx->mode->worker_fini)
		ctx->mode->worker_fini(w);
	umem_idle__destroy(idle);
	free(rx);
	free(drained);
	atomic_fetch_add(&ctx->exited, 1); /* its ports are not touched by it any more */
	return NULL;
}

/* --- set-up ----------------------------------------------------------------------------- */

int fwd_workers_init(struct fwd_ctx *ctx)
{
	uint32_t batch = ctx->cfg->batch;
	for (uint32_t from = 0; from < ctx->nr_workers; from++) {
		for (uint32_t to = 0; to < ctx->nr_workers; to++) {
			struct fwd_xq *q = &ctx->xq[from][to];

			if (from == to)
				continue;
			q->items = calloc(FWD_XQ_SIZE, sizeof(*q->items));
			if (!q->items)
				return -ENOMEM;
			q->mask = FWD_XQ_SIZE - 1;
		}
	}
	for (uint32_t k = 0; k < ctx->nr_workers; k++) {
		struct fwd_worker *w = &ctx->workers[k];

		w->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (w->wake_fd < 0)
			return -errno;
		w->wake_open = true;
		for (uint32_t i = 0; i < w->nr_ports; i++) {
			/* Up to a burst short of full, plus one burst (flush_fed). */
			w->stage[w->ports[i]] = calloc(2 * (size_t)batch, sizeof(struct umem_desc));
			if (!w->stage[w->ports[i]])
				return -ENOMEM;
		}
	}
	atomic_store(&ctx->nr_running, ctx->nr_workers);
	return 0;
}

void fwd_workers_fini(struct fwd_ctx *ctx)
{
	for (uint32_t from = 0; from < FWD_MAX_WORKERS; from++)
		for (uint32_t to = 0; to < FWD_MAX_WORKERS; to++) {
			free(ctx->xq[from][to].items);
			ctx->xq[from][to].items = NULL;
		}
	for (uint32_t k = 0; k < ctx->nr_workers; k++) {
		for (uint32_t i = 0; i < FWD_MAX_PORTS; i++) {
			free(ctx->workers[k].stage[i]);
			ctx->workers[k].stage[i] = NULL;
		}
		if (ctx->workers[k].wake_open)
			close(ctx->workers[k].wake_fd);
		ctx->workers[k].wake_open = false;
	}
}

int fwd_workers_start(struct fwd_ctx *ctx)
{
	for (uint32_t k = 0; k < ctx->nr_workers; k++) {
		struct fwd_worker *w = &ctx->workers[k];
		pthread_attr_t attr;
		char name[24];
		int err;

		pthread_attr_init(&attr);
		if (w->cpu >= 0) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(w->cpu, &set);
			pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		}
		err = pthread_create(&w->thread, &attr, worker_main, w);
		pthread_attr_destroy(&attr);
		if (err) {
			/* The workers already running wait for this count when they drain. */
			atomic_store(&ctx->nr_running, k);
			fprintf(stderr, "xdp-fwd: worker %u%s: %s\n", k,
				w->cpu >= 0 ? " (pinned; is the CPU online and allowed?)" : "", strerror(err));
			return -err;
		}
		w->started = true;
		/* top -H, perf and /proc/PID/task/TID/comm tell the workers apart; the kernel
		 * keeps 15 characters (enough below worker 100000). */
		snprintf(name, sizeof(name), "xdp-fwd/w%u", k);
		name[15] = '\0';
		pthread_setname_np(w->thread, name);
	}
	return 0;
}

/* Main thread: wakes every worker sleeping in poll() (after setting park or stop). */
static void workers_wake(struct fwd_ctx *ctx)
{
	for (uint32_t k = 0; k < ctx->nr_workers; k++)
		wake_fd_write(&ctx->workers[k]);
}

bool fwd_workers_park(struct fwd_ctx *ctx)
{
	atomic_store(&ctx->park, 1);
	workers_wake(ctx);
	/* A worker that is stopping (an error) never parks: give up on it. */
	while (atomic_load(&ctx->parked) < atomic_load(&ctx->nr_running)) {
		if (atomic_load(&ctx->stop)) {
			fwd_workers_unpark(ctx);
			return false;
		}
		sched_yield();
	}
	return true;
}

void fwd_workers_unpark(struct fwd_ctx *ctx)
{
	atomic_store(&ctx->park, 0);
}

int fwd_workers_run_for(void *arg, uint32_t ms)
{
	struct fwd_ctx *ctx = arg;

	fwd_workers_unpark(ctx);
	poll(NULL, 0, (int)ms);
	if (fwd_workers_park(ctx))
		return 0;
	/* They stop instead (a worker failed): the caller goes on with the ports as if they were
	 * parked (closes what it opened), so it may only once no worker runs any more. */
	while (atomic_load(&ctx->exited) < atomic_load(&ctx->nr_running))
		sched_yield();
	return -ECANCELED;
}

void fwd_workers_join(struct fwd_ctx *ctx)
{
	workers_wake(ctx); /* stop is set: sleeping workers see it now */
	for (uint32_t k = 0; k < ctx->nr_workers; k++) {
		if (ctx->workers[k].started)
			pthread_join(ctx->workers[k].thread, NULL);
		ctx->workers[k].started = false;
	}
}
