/* SPDX-License-Identifier: MIT */
/*
 * xdp-fwd --offload-after, inside: the state the three rooms of offload share, and what each
 * calls of the others. offload.c: the per-worker flow state machine and its gates (the hot
 * path); offload_target.c: target health (the delivery probe, the delivery and loss checks of
 * redirect targets); offload_books.c: set-up, the interfaces' flow tables, the loss-accounting
 * epochs and the samples. Included by those three only.
 */
#ifndef XDP_FWD_OFFLOAD_INTERNAL_H
#define XDP_FWD_OFFLOAD_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <umem/steer.h>

#include "ctx.h"
#include "gate.h"
#include "offload_loss.h"
#include "sys.h"

struct redirect_probe;

#define OFF_PROBE 8u
/* Arming flows whose gate a worker looks up per loop turn: the gate work of a turn is bounded
 * whatever the number of arming flows (a scan of them all starved RX under short-flow churn). */
#define OFF_GATE_BUDGET 16u
#define OFF_HOUSEKEEP_NS 250000000ull /* idle expiry, MAC checks, target drop checks */
#define OFF_ARM_MAX_NS 1000000000ull  /* a gate still shut after this is forced open (counted) */
/* A gate still shut after this drains (gate.h), lost gated frames or not: a backlog that never
 * runs empty without a drop. Well above what a gate takes without an overload (6 ms at 60 kpps). */
#define OFF_DRAIN_NS 50000000ull
/* Drains a worker runs at once; a flow that finds none free stays gated (forced after 1 s). */
#define OFF_DRAINS 16u
/* A drain's frames still in the RX ring when its gate opened: dropped for this long after, and
 * until a burst of the port came back short (the ring ran empty). */
#define OFF_DRAIN_TAIL_NS 20000000ull
/* The delivery check of redirect targets: a target that takes none is found within two periods,
 * and its flows leave the kernel at the next loop turn. */
#define OFF_TARGET_NS 20000000ull
/* The longest fwd_off_settle_targets waits for frames in flight to be sent. */
#define OFF_SETTLE_NS 20000000ull
#define OFF_REPROBE_NS 1000000000ull /* a bad target is probed again this often */
#define OFF_PROBE_RETRY_NS 100000000ull /* after a transient probe failure, no probe for this long */
#define OFF_XMIT_STATS 128u /* ethtool counters of a target's XDP transmits we sum (64 queues) */
/* l2 sources: a record at most this old is a MAC still sending (rewritten every 100 ms). */
#define OFF_SOURCE_FRESH_NS (UMEM_STEER_L2_SOURCE_NS + OFF_HOUSEKEEP_NS)

enum off_state { OFF_FREE, OFF_COUNTING, OFF_ARMING, OFF_OFFLOADED, OFF_REFUSED };

struct off_flow {
	struct umem_steer_flow_key key;
	uint64_t seen_ns;      /* last frame in userspace */
	uint64_t since_ns;     /* when the state began */
	uint32_t frames;       /* COUNTING: frames seen */
	struct fwd_gate g;     /* ARMING: what the release of its gate goes by */
	uint32_t tag;          /* ARMING: its gate mark's tag, this add's own */
	uint64_t released;     /* ARMING: the count last released, when have_released */
	bool have_released;
	uint32_t out_ifindex;
	uint32_t mtu;          /* a routed flow's rewrite as installed (UMEM_STEER_FLOW_F_ROUTE) */
	uint8_t dmac[6], smac[6], imac[6];
	uint32_t arm_idx;      /* ARMING: its place in off_worker.arming */
	uint32_t live_idx;     /* not FREE: its place in off_worker.live */
	uint16_t in, out;      /* ports */
	uint8_t state;
	uint8_t l2;
	uint8_t told;          /* OFF_TOLD_*: the reasons it was counted not offloaded */
};

/* A drain (gate.h): its flow's marked frames from seq from on are dropped as they come, while
 * the flow arms and for a tail after (its frames still in the ring). Apart from the flow's slot,
 * which may be reused meanwhile. In the tail, a frame of the flow the program passed up
 * unmarked (route_kept) into a chunk whose headroom still holds a mark of the drain (its frame
 * dropped at the full ring, the chunk reused) is dropped too, counted as gate_drain. */
struct off_drain {
	struct umem_steer_flow_key key;
	uint64_t tail_ns; /* when its flow left arming (the gate opened, or the flow went); 0: arming */
	uint32_t tag;     /* its flow's gate tag */
	uint32_t from;    /* the first seq dropped */
	uint32_t to;      /* past the last: the program's gated count once the gate opened */
	uint32_t slot;    /* its flow's slot, while arming */
	uint16_t in;      /* the port its frames arrive on */
};

/* A flow that reached --offload-after and was not installed is counted once per reason. */
enum { OFF_TOLD_FULL = 1, OFF_TOLD_NO_TARGET = 2, OFF_TOLD_CSUM = 4 };

struct off_iface_counters {
	_Atomic uint64_t installed, expired, invalidated, full, refused, forced, no_target, untracked;
	_Atomic uint64_t csum_kept; /* flows kept in (or taken back to) userspace: partial checksums */
	_Atomic uint64_t drained;   /* gates opened by a drain (gate.h) */
	_Atomic int64_t flows;
};

struct off_worker {
	struct off_flow *slots;
	uint32_t nr_slots; /* a power of two */
	/* The slots in use (not FREE), nr_live of them: what the walks over the flows visit. The
	 * table is sized for every flow the kernel may hold (65,536 slots, 11 MB with two
	 * interfaces), and a walk of all of it took the worker about 0.8 ms at every route change
	 * and housekeeping period, frames waiting meanwhile. */
	uint32_t *live;
	uint32_t nr_live;
	uint32_t *arming;  /* slots of the arming flows, nr_arming of them */
	uint32_t gate_at;  /* where release_gates goes on next turn */
	struct umem_steer_flows *flows[FWD_MAX_PORTS]; /* by interface */
	uint32_t nr_arming;
	uint32_t bad_gen; /* the fwd_offload's bad_gen its flows were last checked against */
	uint32_t route_gen; /* the fwd_offload's route_gen its routed flows were last checked against */
	uint64_t turn; /* loop turns so far */
	/* This turn's burst of the port filled the batch: its RX ring may hold more. */
	bool rx_full[FWD_MAX_PORTS];
	struct off_drain drains[OFF_DRAINS];
	uint32_t nr_drains;
	uint64_t housekeep_at;
};

/* A redirect target's XDP transmit counters (ethtool -S): on a veth, tx_queue_N_xdp_xmit and
 * tx_queue_N_xdp_xmit_errors count every batch the devmap hands to ndo_xdp_xmit once its peer
 * has NAPI (taken, or refused by a full ring); without NAPI the transmit fails before either is
 * counted, and no other counter of either end sees the frames (measured on Linux 6.18). */
struct off_xmit {
	uint32_t nr_stats;          /* the device's ETH_SS_STATS count; 0: none we know */
	uint32_t nr;                /* used entries of idx */
	uint32_t idx[OFF_XMIT_STATS];
	bool refused[OFF_XMIT_STATS]; /* idx[i] is an _xdp_xmit_errors counter */
	uint64_t x0, r0;            /* the first sample: transmits, redirects towards it */
	uint64_t x, r[2];           /* the last sample's transmits; the last two's redirects */
	uint64_t lost;              /* the most redirected by one sample and not transmitted by the next */
	uint32_t samples;
	uint32_t trial_samples;     /* checks while its trial flow ran without a redirect */
	uint32_t peer;              /* its peer_ifindex (in the peer's namespace) */
	uint32_t peer_idx;          /* the index of peer_ifindex; nr_stats: none */
};

/* Offload's state of one interface (ctx->ifaces[f].off points here). */
struct fwd_off_iface {
	struct off_xmit xmit; /* under lock */
	/* A target not yet proven takes one flow (a trial) until it delivers a redirected frame. */
	_Atomic bool trial;
	_Atomic bool xmit_proven; /* the target took a redirected frame */
	/* Redirect targets that drop what they get (a veth whose peer has neither GRO nor XDP). */
	_Atomic bool bad_target;
	uint64_t probe_retry_at; /* no probe of it before this (under lock) */
	uint64_t reprobe_at;     /* the last probe of a bad target (under lock) */
	struct umem_steer_flows *main_flows; /* for the stats */
	uint32_t ifindex;
	struct off_iface_counters ctr; /* of the flows arriving here */
	/* The loss count compares counters that restart when an interface or its program is
	 * replaced, so it runs in epochs: what the interface and programs said at the start of
	 * this one, and what was lost before it. */
	uint64_t tx0, user_tx0, redirected0;
	uint64_t dropped0; /* its tx_dropped */
	/* Its 32-bit tx_packets and tx_dropped, widened at each delivery check (under lock); reset
	 * with the epoch, as a replaced interface counts from 0 again. */
	struct fwd_wide32 tx_wide, dropped_wide;
	uint64_t lost_before;
	struct fwd_loss loss; /* this epoch's readings (under lock) */
	_Atomic uint64_t lost; /* redirected to the interface, not sent, since start */
	/* Probe frames the interface took into its peer's ring (under lock): its tx_packets counts
	 * them like the frames our sockets send, so the loss count takes them out likewise. */
	_Atomic uint64_t probe_tx;
	/* What the programs of the interface that were replaced had counted. */
	struct umem_steer_counter gone[UMEM_STEER_FS_NR];
};

struct fwd_offload {
	struct off_worker w[FWD_MAX_WORKERS];
	struct fwd_off_iface ifc[FWD_MAX_PORTS]; /* by interface */
	int ioctl_fd;                        /* for SIOCETHTOOL */
	_Atomic uint64_t targets_at;         /* the last delivery check */
	_Atomic uint32_t bad_gen;            /* bumped when a target turns bad */
	_Atomic uint32_t route_gen;          /* bumped when the routing tables changed (l3) */
	_Atomic uint32_t nr_bad;             /* interfaces that take no offload */
	_Atomic bool watching; /* a trial runs: the workers take turns often (the check needs them) */
	/* The delivery probe (redirect_probe.bpf.c): a target is proven or found bad by one probe
	 * frame before any flow is offloaded to it. NULL: the first flow to a target is its trial. */
	struct redirect_probe *probe;
	bool probe_retry_said; /* a transient probe failure was reported (under lock) */
	uint32_t tag_key;      /* next_tag's: the gate tags follow no pattern a sender could guess */
	pthread_mutex_t lock;      /* the target check and the l2 sources, one worker at a time */
	uint64_t sources_at; /* the last walk of the l2 sources (under lock) */
};

static inline void bump(_Atomic uint64_t *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/* offload.c: flow e back to counting (removed from the kernel's table when remove). */
void fwd_off_to_counting(struct fwd_worker *w, struct off_flow *e, uint64_t now, bool remove);

/* offload_target.c: the socket and the probe program (set-up, privileged), and their end. */
void fwd_off_targets_open(struct fwd_offload *off);
void fwd_off_targets_close(struct fwd_offload *off);
/* Interface f's XDP transmit counters found (ethtool -S), before its first flow. */
void fwd_off_xmit_probe(struct fwd_offload *off, uint32_t f, const char *ifname);
/* Whether a new flow may go to interface f: once it delivered redirected frames, else after the
 * delivery probe proved it, or (without the probe) as the one trial flow. */
bool fwd_off_may_try(struct fwd_ctx *ctx, uint32_t f);
/* Under off->lock: the delivery check of the targets by their transmit counters (each loop
 * turn, every OFF_TARGET_NS); by their link counters, which also counts what was lost; a bad
 * target probed again. */
void fwd_off_check_delivery(struct fwd_ctx *ctx);
uint64_t fwd_off_check_targets(struct fwd_ctx *ctx);
void fwd_off_settle_targets(struct fwd_ctx *ctx);
void fwd_off_reprobe_bad(struct fwd_ctx *ctx, uint64_t now);
/* The loss books' inputs: every interface's tx_packets and tx_dropped (widened; bit f of the
 * result: interface f was there), the frames the programs redirected towards f, and the frames
 * f sent that no program redirected. */
uint64_t fwd_off_read_tx_packets(struct fwd_offload *off, uint32_t nr_ifaces, uint64_t *out, uint64_t *dropped);
uint64_t fwd_off_redirected_to(struct fwd_ctx *ctx, uint32_t f);
uint64_t fwd_off_user_tx(struct fwd_ctx *ctx, uint32_t f);

#endif
