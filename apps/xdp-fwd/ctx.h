/* SPDX-License-Identifier: MIT */
/*
 * xdp-fwd's run state, data only: the ports, the interfaces (iface.h), the workers and their
 * cross-worker queues, as the main thread sets them up and the workers read them. Every room
 * that works on the run includes this; it includes no room's functions, so no room depends
 * on another through it.
 *
 * A port is driven only by its worker (the port library's rule: the driving thread owns the
 * port's pool). A frame whose output port belongs to another worker crosses through a
 * single-producer single-consumer queue of descriptors (one per ordered pair of workers); the
 * output port's worker transmits it, and its completion puts the page back, which sends it home
 * to the pool it came from through that pool's return ring.
 */
#ifndef XDP_FWD_CTX_H
#define XDP_FWD_CTX_H

#include <pthread.h>
#include <stdatomic.h>
#include <umem/port.h>

#include "fwd.h"
#include "iface.h"
#include "l2.h"
#include "stats.h"

#define FWD_XQ_SIZE 4096u /* cross-worker queue entries (descriptors) */

struct fwd_xq_item {
	struct umem_desc desc;
	uint32_t port; /* output port index */
	uint32_t :32;
};

/* SPSC ring. The producer publishes whole chains with one release store of tail (pairs with
 * the consumer's acquire load); the consumer frees slots with a release store of head (pairs
 * with the producer's acquire load before it reuses them). */
struct fwd_xq {
	_Atomic uint32_t tail __attribute__((aligned(64)));
	_Atomic uint32_t head __attribute__((aligned(64)));
	uint32_t mask;
	struct fwd_xq_item *items;
};

struct fwd_port {
	/* NULL while the interface is gone. Written only by the main thread with every worker
	 * parked (fwd_workers_park), so a worker sees it change only across its park. */
	struct umem_port *port;
	uint32_t worker;
	uint32_t iface; /* its interface: ctx->ifaces[iface] (set once, O(1) from a port) */
	char name[IF_NAMESIZE + 8]; /* "ifname@queue" */
	/* Taken out while running (portlive.c): closed for good, its counters kept (the totals never
	 * go back) and its slot kept for them; the same IFNAME@QUEUE added again takes it back. */
	bool removed;
	/* Added by the control socket (portlive.c): a reload leaves it, as it leaves run-time
	 * rules, until the configuration names it. */
	bool runtime;
	bool skip_contd; /* worker only: drop descriptors up to the end of a cut chain */
	bool rx_in_chain; /* worker only, offload: the last burst ended inside a chain */
	bool csum_warned; /* worker only: the partial checksum warning was printed (csum.h) */
	/* Kernel drop counters of the sockets closed so far (a reopened socket counts from 0). */
	uint64_t kbase[FWD_DROP_MAX];
	struct fwd_port_counters ctr;
};

struct fwd_ctx;
struct fwd_mode_ops;
struct fwd_offload;

struct fwd_worker {
	struct fwd_ctx *ctx;
	uint32_t idx;
	int cpu; /* -1: not pinned */
	pthread_t thread;
	bool started;
	struct umem_pool *pool;
	uint32_t ports[FWD_MAX_PORTS]; /* indexes of the ports this worker drives */
	uint32_t nr_ports;
	/* Frames staged per output port (only ports of this worker), sent when a burst's worth
	 * is there or when an input that fed them comes back empty. */
	struct umem_desc *stage[FWD_MAX_PORTS];
	uint32_t nstage[FWD_MAX_PORTS];
	uint64_t fed[FWD_MAX_PORTS]; /* fed[in]: bit out set while in has frames staged on out */
	int error; /* negative errno when the worker could not run its loop */
	/* An eventfd in the worker's poll() set: the main thread wakes a sleeping worker with it
	 * to park or stop it (wake_open: created). */
	int wake_fd;
	bool wake_open;
	uint64_t queued_to; /* bit k: frames queued for worker k in this loop turn */
	/* This burst's frames found with a partial checksum (fwd_csum_burst's was_partial), for
	 * offload, which keeps their flows in userspace: a redirect would not complete them. */
	uint8_t csum_partial[FWD_MAX_BATCH];
	/* Set while the worker sleeps in poll() (or is about to): a worker that queues frames for
	 * it then writes wake_fd, so they do not wait for the poll timeout. Read by the other
	 * workers every turn they queue frames: on a line of its own. */
	_Atomic bool sleeping __attribute__((aligned(64)));
	/* Written by the worker only, read by the stats: its sleeps in poll(), and those that
	 * ended at the timeout with frames another worker had handed to it waiting (each one a
	 * handoff that did not wake it). */
	_Atomic uint64_t sleeps;
	_Atomic uint64_t late_handoffs;
	_Atomic uint64_t cpu_ns; /* the thread's CPU time, written with the kernel stats (worker.c) */
};

struct fwd_ctx {
	struct fwd_config *cfg;
	const struct fwd_mode_ops *mode; /* cfg->mode's room (mode.h) */
	struct umem_area *area;
	struct fwd_port ports[FWD_MAX_PORTS];
	uint32_t nr_ports;
	struct fwd_worker workers[FWD_MAX_WORKERS];
	uint32_t nr_workers;
	struct fwd_xq xq[FWD_MAX_WORKERS][FWD_MAX_WORKERS]; /* [from][to] */
	/* The interfaces, in order of their first port: ports[i].iface is port i's. */
	struct fwd_iface ifaces[FWD_MAX_PORTS];
	uint32_t nr_ifaces;
	/* l2: via[in][iface] is the port that takes frames from port in to interface iface. */
	uint8_t via[FWD_MAX_PORTS][FWD_MAX_PORTS];
	/* l2's flood outputs: the interfaces not removed, as fwd_ports_map_vias last saw them (a
	 * flood counts its references and emits from this one list, so the two always agree). */
	uint8_t live[FWD_MAX_PORTS];
	uint32_t nr_live;
	struct l2_table l2; /* shared by the workers without a lock (l2.h) */
	struct fwd_offload *off; /* --offload-after; NULL when off (offload.c) */
	struct fwd_l3 *l3;       /* --mode l3: the router's state (mode_l3.c) */
	struct fwd_capture *cap; /* --pcap; NULL when off (capture.c) */
	struct fwd_metrics *metrics; /* --metrics, --metrics-file; NULL when off (metrics.c) */
	struct fwd_control *control; /* --control; NULL when off (control.c) */
	struct fwd_handover *handover; /* --takeover: what the old instance handed over (handover.c) */
	/* The wait between binds of a busy queue at a port's open outside a live change (the
	 * library sleeps without one): --takeover's, which counts the waits for its timing line. */
	umem_port_wait_fn open_wait;
	void *open_wait_arg;
	bool handed_over; /* this instance gave its interfaces to a new one: its program stays */
	_Atomic int stop;        /* 1: stop receiving; workers drain and exit */
	_Atomic uint64_t forwarded; /* frames queued for TX, all ports (for --count) */
	_Atomic uint32_t nr_running; /* workers started (the drain waits for all of them) */
	_Atomic uint32_t stopped_rx; /* workers that stopped receiving */
	uint64_t abandoned; /* buffers closed ports had to abandon (never completed) */
	uint64_t tx_kernel_at; /* the last read of the interfaces' tx_dropped (iface.c) */
	_Atomic uint32_t latency_gen; /* moved on by a reload that changed --latency (reload.c) */
	_Atomic int park;            /* 1: workers wait in fwd_workers_park's loop */
	_Atomic uint32_t parked;     /* workers waiting there */
	_Atomic uint32_t exited;     /* workers whose thread is done with the ports (drained) */
};

#endif
