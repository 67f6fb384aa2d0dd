/* SPDX-License-Identifier: MIT */
/*
 * xdp-fwd stats: per-port counters (written by the port's worker only, read by the main
 * thread), their formatting as live lines, JSON objects and totals, and the sampling and
 * printing of a run.
 */
#ifndef XDP_FWD_STATS_H
#define XDP_FWD_STATS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fwd.h"

/* Why a frame was not forwarded. The first ones are xdp-fwd's, the XSK_ ones the kernel's
 * (XDP_STATISTICS of the socket), TX_KERNEL the output interface's (its link stats). */
enum fwd_drop {
	FWD_DROP_TX_FULL,    /* output TX ring full after retrying */
	FWD_DROP_NO_PORT,    /* l2: the destination is on the input interface */
	FWD_DROP_INVALID,    /* runt frame or a broken descriptor chain */
	FWD_DROP_XSK_RX,     /* kernel: rx_dropped */
	FWD_DROP_XSK_RX_FULL, /* kernel: rx_ring_full */
	FWD_DROP_XSK_FILL,   /* kernel: rx_fill_ring_empty_descs */
	FWD_DROP_XSK_RX_INVALID, /* kernel: rx_invalid_descs */
	FWD_DROP_XSK_TX_INVALID, /* kernel: tx_invalid_descs */
	FWD_DROP_DOWN,       /* the port is closed: its interface is gone, or it was closing with frames unread */
	FWD_DROP_TX_UNSENT,  /* queued for TX, never read by the kernel before the port closed or the exit */
	FWD_DROP_L2_RESERVED,  /* l2: to a reserved group address a bridge never relays (l2_classify) */
	FWD_DROP_L2_SRC_GROUP, /* l2: from a group (multicast) source address */
	FWD_DROP_L2_SRC_ZERO,  /* l2: from the all-zero source address */
	FWD_DROP_L3,           /* l3: not routed (no route, unresolved, ...: the l3 stats say why) */
	/* --offload-after: a frame of a flow whose gate drains (gate.h), which a full RX ring would
	 * have dropped for the most part */
	FWD_DROP_GATE_DRAIN,
	/* Kernel: the output interface's tx_dropped (a veth frees a frame its peer's ring has no
	 * room for, or its peer cannot take), since start; on the interface's first port only. */
	FWD_DROP_TX_KERNEL,
	FWD_DROP_MAX
};

extern const char *const fwd_drop_names[FWD_DROP_MAX];

/* Single-writer counters: the owner bumps them with a relaxed load+store (no locked
 * instruction); atomics only so that the printer's reads are not data races. */
struct fwd_port_counters {
	_Atomic uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes;
	_Atomic uint64_t drop[FWD_DROP_MAX];
	/* TCP/UDP frames with a partial checksum (csum.h): found, completed, left as they were. */
	_Atomic uint64_t csum_partial, csum_completed, csum_uncompleted;
};

static inline void fwd_count(_Atomic uint64_t *c, uint64_t n)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n, memory_order_relaxed);
}

/* --offload-after, per interface (on the first port of each interface; zero elsewhere). */
struct fwd_offload_sample {
	uint64_t packets, bytes; /* frames the kernel forwarded (or dropped, passed) for flows arriving here */
	uint64_t gated;          /* frames of arming flows sent to userspace (in rx_packets too) */
	uint64_t lost;           /* redirected to this interface by the kernel and not sent (two interfaces) */
	uint64_t installed, expired, invalidated, full, refused;
	uint64_t forced;         /* gates opened after 1 s without the RX ring running empty */
	/* Not offloaded, by reason (full and refused too; flows, each once per reason): no_target,
	 * flows whose target took no offload (it drops redirects, is on trial, gone, or an l2
	 * destination not learned); untracked, frames of flows the tracker had no slot for
	 * or evicted while counting. */
	uint64_t no_target, untracked;
	/* Partial TCP/UDP checksums (the sender's TX checksum offload; a redirect would not
	 * complete them): csum_kept, flows kept in or taken back to userspace (each once);
	 * csum_passed, frames of offloaded flows the program passed up instead (in rx_packets). */
	uint64_t csum_kept, csum_passed;
	uint64_t drained;        /* gates opened by a drain: the flow's RX ring could not run empty */
	/* l3: frames of offloaded flows the program did not route (a TTL to expire, IPv4 options,
	 * over the MTU, a VLAN tag) and sent the default way (in rx_packets). */
	uint64_t route_kept;
	uint64_t flows;          /* flows installed now (not a counter) */
};

/* A plain copy of the counters at one moment. */
struct fwd_port_sample {
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes;
	uint64_t drop[FWD_DROP_MAX];
	uint64_t csum_partial, csum_completed, csum_uncompleted;
	struct fwd_offload_sample offload;
	bool link_down; /* its interface is down or without carrier now (main.c), or gone */
};

struct fwd_pool_sample {
	uint64_t allocs;     /* alloc.fast + alloc.slow + alloc.slow_high_order */
	uint64_t slow;       /* alloc.slow + alloc.slow_high_order */
	uint64_t fresh;      /* pages taken from the area (pages_held) */
	uint64_t recycled;   /* recycle.cached + recycle.ring */
	int64_t inflight;
	/* The pool's worker: its sleeps in poll(), and the sleeps that ended at the timeout with
	 * frames handed to it waiting (a handoff that did not wake it). */
	uint64_t sleeps;
	uint64_t late_handoffs;
	uint64_t cpu_ns; /* the worker thread's CPU time, user and system (at most 250 ms old) */
};

void fwd_port_sample_read(struct fwd_port_sample *s, const struct fwd_port_counters *c);
/* sum += s, counter by counter (an interface's line is the sum of its queues' ports). */
void fwd_port_sample_add(struct fwd_port_sample *sum, const struct fwd_port_sample *s);

/* Human-readable value with an SI prefix: "0", "999", "1.23 k", "45.6 M", "7.89 G". */
char *fwd_fmt_si(char *buf, size_t len, double v);

/* Share of allocations served by recycled pages rather than fresh pages from the area, in
 * percent, between two samples; negative when there were no allocations. */
double fwd_recycle_hit_rate(const struct fwd_pool_sample *prev, const struct fwd_pool_sample *cur);

/* One live line for a port between two samples dt seconds apart: rates and drops by reason
 * (only the reasons that moved). */
void fwd_fmt_port_line(FILE *out, const char *name, const struct fwd_port_sample *prev,
		       const struct fwd_port_sample *cur, double dt);
void fwd_fmt_pool_line(FILE *out, const char *name, const struct fwd_pool_sample *prev,
		       const struct fwd_pool_sample *cur);

/* Steering of one interface (--rule): frames each rule decided (hits), and the decisions that
 * kept frames from xdp-fwd: dropped, passed to the kernel, or sent to an empty socket slot
 * (which the program passes to the kernel too). Frames in = received + these. */
/* Rules the stats follow: the table's (ids 0..63) and the first 64 prefix rules of a program
 * (the -r ones come first, so they are always among them). */
#define FWD_HIT_SLOTS (2 * UMEM_STEER_MAX_RULES)

/* Where a rule id's hits are kept, or -1 for a prefix rule past the first 64. */
static inline int fwd_hit_slot(uint32_t id)
{
	if (id < UMEM_STEER_MAX_RULES)
		return (int)id;
	if (id >= UMEM_STEER_PREFIX_ID_BASE && id - UMEM_STEER_PREFIX_ID_BASE < UMEM_STEER_MAX_RULES)
		return (int)(UMEM_STEER_MAX_RULES + id - UMEM_STEER_PREFIX_ID_BASE);
	return -1;
}

struct fwd_steer_sample {
	uint64_t hits[FWD_HIT_SLOTS]; /* by fwd_hit_slot(rule id) */
	uint64_t drop, pass, no_socket;
};

/* A rule's hits since prev; an id given to a new rule meanwhile starts again from 0. */
unsigned long long fwd_rule_hits_since(const struct fwd_steer_sample *prev, const struct fwd_steer_sample *cur,
				       uint32_t id);
/* hits are by rule id: rule r is named rule_text[r] and has id ids[r]. */
void fwd_fmt_steer_line(FILE *out, const char *ifname, const char *const *rule_text, const uint32_t *ids,
			uint32_t nr_rules, const struct fwd_steer_sample *prev, const struct fwd_steer_sample *cur);
/* ,"steer":[ ... ] after the pools: call with first for the first interface, then end. */
void fwd_json_steer(FILE *out, bool first, const char *ifname, const char *const *rule_text, const uint32_t *ids,
		    uint32_t nr_rules, const struct fwd_steer_sample *prev, const struct fwd_steer_sample *cur);

/* Counters at one moment of --pcap (capture.c). */
struct fwd_capture_sample {
	uint64_t captured; /* frames copied to the rings (written to the file by exit) */
	uint64_t bytes;    /* their bytes as captured (at most the snap length each) */
	uint64_t dropped;  /* frames the filter took that found their worker's ring full */
	bool limit_reached; /* --pcap-count frames captured: capture over, forwarding goes on */
	int error;          /* the errno that stopped the writer (the capture ends), 0; ETIMEDOUT:
			     * at exit, a reader (a FIFO's) that took nothing for 2 s */
};

/* --pcap between two samples: frames and bytes captured, frames dropped from the capture (its
 * ring full), and why it stopped (count reached, a write error). */
void fwd_fmt_capture_line(FILE *out, const char *path, const struct fwd_capture_sample *prev,
			  const struct fwd_capture_sample *cur);
/* ,"capture":{...} before the object's end. */
void fwd_json_capture(FILE *out, const char *path, const struct fwd_capture_sample *prev,
		      const struct fwd_capture_sample *cur);

/* JSON: an object is {"type":KIND,"timestamp":UNIX,"time":T,"counts":"interval"|"total",
 * "ports":[...],"pools":[...]}; the caller brackets it with fwd_json_begin/end and one
 * fwd_json_port/pool per item. Counts are cur - base (base: the previous sample, or the start
 * sample for totals), rates (cur - prev) / dt. docs/OPERATING.md lists every field. */
/* s as a JSON string, quoted (RFC 8259): " \\ and controls escaped, UTF-8 kept, and a byte that
 * is not UTF-8 written as the code point of its value (\u00XX). Every name in the JSON output
 * (interfaces are any bytes but / and space) goes through it. */
void fwd_json_string(FILE *out, const char *s);
void fwd_json_begin(FILE *out, double t, const char *kind, bool totals);
void fwd_json_port(FILE *out, bool first, const char *name, const struct fwd_port_sample *base,
		   const struct fwd_port_sample *prev, const struct fwd_port_sample *cur, double dt);
void fwd_json_pools(FILE *out);
void fwd_json_pool(FILE *out, bool first, const char *name, const struct fwd_pool_sample *base,
		   const struct fwd_pool_sample *prev, const struct fwd_pool_sample *cur);
void fwd_json_end(FILE *out);
/* The end of a JSON object line (flushed). */
void fwd_json_close(FILE *out);

/* --mode l3: frames the router did not forward, by reason (mode_l3.c names them), and the
 * mirror's state. */
#define FWD_L3_REASONS 16
struct fwd_l3_sample {
	uint64_t drop[FWD_L3_REASONS];
	uint64_t resolves, resolve_failed, resyncs, events;
	uint32_t routes4, routes6, nexthops, neighbours;
	/* ICMP errors xdp-fwd sent (unreachable, too big), refused by the rate limit, and not
	 * sent for want of a source address or of room (icmp.h). */
	uint64_t icmp_unreach, icmp_too_big, icmp_limited, icmp_unsent;
	/* The reasons' names (mode_l3.c's; [0] unused): the metrics label drop[r] with them. */
	const char *reason[FWD_L3_REASONS];
	uint32_t nr_reasons;
};

/* A run's counters at one moment: every port's and every worker pool's. */
struct fwd_samples {
	struct fwd_port_sample port[FWD_MAX_PORTS];
	struct fwd_pool_sample pool[FWD_MAX_WORKERS];
	struct fwd_steer_sample steer[FWD_MAX_PORTS]; /* by interface (ctx->ifaces) */
	uint32_t l2_macs; /* l2: live MAC table entries (not a counter) */
	struct fwd_l3_sample l3; /* l3: frames not routed by reason, the mirror's sizes */
	struct fwd_capture_sample capture; /* --pcap */
};

#endif
