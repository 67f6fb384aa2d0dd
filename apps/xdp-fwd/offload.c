/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "gate.h"
#include "offload.h"
#include "redirect_probe.skel.h"
#include "route.h"
#include "sys.h"
#include "worker.h"

#define OFF_PROBE 8u
/* Arming flows whose gate a worker looks up per loop turn: the gate work of a turn is bounded
 * whatever the number of arming flows (a scan of them all starved RX under short-flow churn). */
#define OFF_GATE_BUDGET 16u
#define OFF_HOUSEKEEP_NS 250000000ull /* idle expiry, MAC checks, target drop checks */
#define OFF_ARM_MAX_NS 1000000000ull  /* a gate still shut after this is forced open (counted) */
/* The delivery check of redirect targets: a target that takes none is found within two periods,
 * and its flows leave the kernel at the next loop turn. */
#define OFF_TARGET_NS 20000000ull
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
	uint32_t arm_idx;      /* ARMING: its place in off_worker.arming */
	uint16_t in, out;      /* ports */
	uint8_t state;
	uint8_t l2;
	uint8_t told;          /* OFF_TOLD_*: the reasons it was counted not offloaded */
};

/* A flow that reached --offload-after and was not installed is counted once per reason. */
enum { OFF_TOLD_FULL = 1, OFF_TOLD_NO_TARGET = 2, OFF_TOLD_CSUM = 4 };

struct off_iface_counters {
	_Atomic uint64_t installed, expired, invalidated, full, refused, forced, no_target, untracked;
	_Atomic uint64_t csum_kept; /* flows kept in (or taken back to) userspace: partial checksums */
	_Atomic int64_t flows;
};

struct off_worker {
	struct off_flow *slots;
	uint32_t nr_slots; /* a power of two */
	uint32_t *arming;  /* slots of the arming flows, nr_arming of them */
	uint32_t gate_at;  /* where release_gates goes on next turn */
	struct umem_steer_flows *flows[FWD_MAX_PORTS]; /* by interface */
	uint32_t nr_arming;
	uint32_t bad_gen; /* the fwd_offload's bad_gen its flows were last checked against */
	uint64_t turn; /* loop turns so far */
	/* This turn's burst of the port filled the batch: its RX ring may hold more. */
	bool rx_full[FWD_MAX_PORTS];
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

struct fwd_offload {
	struct off_worker w[FWD_MAX_WORKERS];
	struct off_xmit xmit[FWD_MAX_PORTS]; /* by interface (under lock) */
	int ioctl_fd;                        /* for SIOCETHTOOL */
	_Atomic uint64_t targets_at;         /* the last delivery check */
	_Atomic uint32_t bad_gen;            /* bumped when a target turns bad */
	_Atomic uint32_t nr_bad;             /* interfaces that take no offload */
	/* A target not yet proven takes one flow (a trial) until it delivers a redirected frame. */
	_Atomic bool trial[FWD_MAX_PORTS];
	_Atomic bool xmit_proven[FWD_MAX_PORTS]; /* the target took a redirected frame */
	_Atomic bool watching; /* a trial runs: the workers take turns often (the check needs them) */
	/* The delivery probe (redirect_probe.bpf.c): a target is proven or found bad by one probe
	 * frame before any flow is offloaded to it. NULL: the first flow to a target is its trial. */
	struct redirect_probe *probe;
	bool probe_retry_said; /* a transient probe failure was reported (under lock) */
	uint64_t probe_retry_at[FWD_MAX_PORTS]; /* no probe of f before this (under lock) */
	uint64_t reprobe_at[FWD_MAX_PORTS]; /* the last probe of a bad target (under lock) */
	struct umem_steer_flows *main_flows[FWD_MAX_PORTS]; /* by interface, for the stats */
	uint32_t ifindex[FWD_MAX_PORTS];                    /* by interface */
	uint32_t first_port[FWD_MAX_PORTS];                 /* by interface */
	struct off_iface_counters ctr[FWD_MAX_PORTS];       /* by input interface */
	/* Redirect targets that drop what they get (a veth whose peer has neither GRO nor XDP). */
	_Atomic bool bad_target[FWD_MAX_PORTS];
	pthread_mutex_t lock;      /* the target check and the l2 sources, one worker at a time */
	/* The loss count compares counters that restart when an interface or its program is
	 * replaced, so it runs in epochs: what the interfaces and programs said at the start of
	 * this one, and what was lost before it. */
	uint64_t tx0[FWD_MAX_PORTS], user_tx0[FWD_MAX_PORTS], redirected0[FWD_MAX_PORTS];
	uint64_t dropped0[FWD_MAX_PORTS]; /* the interfaces' tx_dropped */
	/* The interfaces' 32-bit tx_packets and tx_dropped, widened at each delivery check (under
	 * lock); reset with the epoch, as a replaced interface counts from 0 again. */
	struct fwd_wide32 tx_wide[FWD_MAX_PORTS], dropped_wide[FWD_MAX_PORTS];
	uint64_t lost_before[FWD_MAX_PORTS];
	uint64_t redirected_seen[FWD_MAX_PORTS], lost_seen[FWD_MAX_PORTS];
	_Atomic uint64_t lost[FWD_MAX_PORTS]; /* redirected to the interface, not sent, since start */
	/* Probe frames the interface took into its peer's ring (under lock): its tx_packets counts
	 * them like the frames our sockets send, so the loss count takes them out likewise. */
	_Atomic uint64_t probe_tx[FWD_MAX_PORTS];
	uint64_t sources_at; /* the last walk of the l2 sources (under lock) */
	/* What the programs of interfaces that were replaced had counted. */
	struct umem_steer_counter gone[FWD_MAX_PORTS][UMEM_STEER_FS_NR];
};

static void bump(_Atomic uint64_t *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/* ---- frames ---- */

static bool any_rule_matches(const struct fwd_config *cfg, const uint8_t *p, uint32_t len, uint32_t queue)
{
	for (uint32_t r = 0; r < cfg->nr_rules; r++)
		if (fwd_frame_matches(&cfg->rules[r].match, p, len, queue))
			return true;
	return false;
}

static uint32_t key_hash(const struct umem_steer_flow_key *k)
{
	const uint8_t *b = (const uint8_t *)k;
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

/* The flow's slot, claimed when new (the oldest flow not in the kernel makes room); NULL when
 * the window holds only installed flows. */
static struct off_flow *slot_of(struct off_worker *ow, const struct umem_steer_flow_key *k)
{
	uint32_t h = key_hash(k);
	struct off_flow *victim = NULL;

	for (uint32_t i = 0; i < OFF_PROBE; i++) {
		struct off_flow *e = &ow->slots[(h + i) & (ow->nr_slots - 1)];

		if (e->state != OFF_FREE && !memcmp(&e->key, k, sizeof(*k)))
			return e;
		if (e->state == OFF_FREE) {
			if (!victim || victim->state != OFF_FREE)
				victim = e;
		} else if ((e->state == OFF_COUNTING || e->state == OFF_REFUSED) &&
			   (!victim || (victim->state != OFF_FREE && e->seen_ns < victim->seen_ns))) {
			victim = e;
		}
	}
	if (victim)
		*victim = (struct off_flow){ .key = *k, .state = OFF_COUNTING };
	return victim;
}

/* ---- state changes ---- */

static struct off_iface_counters *ctr_of(struct fwd_ctx *ctx, const struct off_flow *e)
{
	return &ctx->off->ctr[ctx->ports[e->in].iface];
}

static void arming_del(struct off_worker *ow, struct off_flow *e)
{
	uint32_t last = ow->arming[--ow->nr_arming];

	ow->arming[e->arm_idx] = last;
	ow->slots[last].arm_idx = e->arm_idx;
}

/* Counts flow e as not offloaded for reason told (once per flow and reason). */
static void tell(_Atomic uint64_t *c, struct off_flow *e, uint8_t told)
{
	if (!(e->told & told))
		bump(c);
	e->told |= told;
}

static void to_counting(struct fwd_worker *w, struct off_flow *e, uint64_t now, bool remove)
{
	struct fwd_ctx *ctx = w->ctx;
	struct off_worker *ow = &ctx->off->w[w->idx];

	if (e->state == OFF_ARMING || e->state == OFF_OFFLOADED) {
		if (remove)
			umem_steer_flows__delete(ow->flows[ctx->ports[e->in].iface], &e->key);
		atomic_fetch_sub_explicit(&ctr_of(ctx, e)->flows, 1, memory_order_relaxed);
		if (e->state == OFF_ARMING)
			arming_del(ow, e);
	}
	e->state = OFF_COUNTING;
	e->frames = 0;
	e->since_ns = now;
}

/* Where the flow goes, as an egress port and interface index; false to keep it in userspace. */
static bool target_of(struct fwd_worker *w, uint32_t in, const uint8_t *eth, uint64_t now, uint32_t *out,
		      uint32_t *ifindex)
{
	struct fwd_ctx *ctx = w->ctx;
	uint32_t to;

	if (ctx->cfg->mode == FWD_MODE_WIRE) {
		*out = in ^ 1;
	} else {
		int32_t port;

		port = l2_lookup(&ctx->l2, eth, now); /* the table is shared without a lock (l2.h) */
		if (port == L2_NO_PORT)
			return false; /* unknown, aged out or a group: flooded */
		to = ctx->ports[port].iface;
		if (to == ctx->ports[in].iface)
			return false;
		*out = ctx->via[in][to];
	}
	to = ctx->ports[*out].iface;
	if (atomic_load_explicit(&ctx->off->bad_target[to], memory_order_relaxed))
		return false;
	*ifindex = ctx->off->ifindex[to];
	return *ifindex != 0; /* 0: the interface is gone */
}

static bool probe_target(struct fwd_ctx *ctx, uint32_t f);

/* Whether a new flow may go to interface to: yes once it delivered redirected frames, else after
 * the delivery probe proved it, or (without the probe) as the one trial flow, which then proves
 * it or shows that it drops them. */
static bool may_try(struct fwd_ctx *ctx, uint32_t to)
{
	struct fwd_offload *off = ctx->off;

	/* No counters to check it by (the link counters' check is slower), or more than two
	 * interfaces, where check_delivery cannot tell the redirects towards each. */
	if (!off->xmit[to].nr || atomic_load_explicit(&off->xmit_proven[to], memory_order_relaxed))
		return true;
	if (off->probe) /* a target's counters move for the probe alone: no flow goes there yet */
		return probe_target(ctx, to);
	if (ctx->nr_ifaces != 2)
		return true;
	if (atomic_exchange(&off->trial[to], true))
		return false;
	atomic_store(&off->watching, true);
	return true;
}

/* A gate tag never used before by this process (never 0): a mark left in a chunk's headroom by
 * an earlier frame (another flow, an earlier add of this one) never matches. The UMEM is this
 * process's own, so no other process's tags are in it. */
static uint32_t next_tag(void)
{
	static _Atomic uint32_t tags;
	uint32_t t;

	while (!(t = atomic_fetch_add_explicit(&tags, 1, memory_order_relaxed) + 1))
		;
	return t;
}

/* Whether the frame at eth carries the gate mark of tag (steer_abi.h): the 8 bytes before it,
 * inside the chunk's XDP headroom (256 bytes before every RX frame). A mark that matches is
 * wiped, so that the chunk's next frame, if it has no metadata, cannot show it again. */
static bool gate_marked(uint8_t *eth, uint32_t tag)
{
	struct umem_steer_gate_mark m;

	memcpy(&m, eth - sizeof(m), sizeof(m));
	if (m.magic != UMEM_STEER_GATE_MAGIC || m.tag != tag)
		return false;
	memset(eth - sizeof(m), 0, sizeof(m));
	return true;
}

static void install(struct fwd_worker *w, struct off_flow *e, const uint8_t *eth, uint64_t now)
{
	struct fwd_ctx *ctx = w->ctx;
	struct off_worker *ow = &ctx->off->w[w->idx];
	struct off_iface_counters *c = ctr_of(ctx, e);
	uint32_t out, ifindex, tag;
	char line[256];
	int err;

	if (!target_of(w, e->in, eth, now, &out, &ifindex) || !may_try(ctx, ctx->ports[out].iface)) {
		tell(&c->no_target, e, OFF_TOLD_NO_TARGET);
		return; /* still counting: the next frame tries again */
	}
	tag = next_tag();
	err = umem_steer_flows__add(ow->flows[ctx->ports[e->in].iface], &e->key,
				    &(struct umem_steer_flow){ .action = UMEM_STEER_FLOW_A_REDIRECT,
							       .flags = UMEM_STEER_FLOW_F_ORDERED, .index = ifindex,
							       .tag = tag });
	if (err == -ENOSPC) {
		/* The table is full: the flow stays in userspace and counts again from zero. */
		tell(&c->full, e, OFF_TOLD_FULL);
		e->frames = 0;
		return;
	}
	if (err && err != -EEXIST) {
		umem_steer_flow__format(&e->key, &(struct umem_steer_flow){ .action = UMEM_STEER_FLOW_A_REDIRECT,
									.index = ifindex }, line, sizeof(line));
		if (!atomic_fetch_add(&c->refused, 1))
			fprintf(stderr, "xdp-fwd: offload: cannot install %s: %s; the flow stays in userspace\n",
				line, strerror(-err));
		e->state = OFF_REFUSED;
		return;
	}
	bump(&c->installed);
	atomic_fetch_add_explicit(&c->flows, 1, memory_order_relaxed);
	e->state = OFF_ARMING;
	e->frames = 0;
	e->since_ns = now;
	e->out = (uint16_t)out;
	e->out_ifindex = ifindex;
	e->g = (struct fwd_gate){ .pre_hi = UINT32_MAX };
	e->tag = tag;
	e->have_released = false;
	e->arm_idx = ow->nr_arming;
	ow->arming[ow->nr_arming++] = (uint32_t)(e - ow->slots);
}

static void offload_burst(struct fwd_worker *w, uint32_t in, const struct umem_desc *d, uint32_t n, uint64_t now)
{
	struct fwd_ctx *ctx = w->ctx;
	const struct fwd_config *cfg = ctx->cfg;
	struct off_worker *ow;
	uint32_t kind = cfg->mode == FWD_MODE_L2 ? UMEM_STEER_FLOW_L2 : UMEM_STEER_FLOW_IPV4;
	uint32_t ifindex;
	bool head = true;

	ow = &ctx->off->w[w->idx];
	ow->rx_full[in] = n >= cfg->batch;
	/* No target takes offload (two interfaces): userspace forwards as without it, at its cost. */
	if (atomic_load_explicit(&ctx->off->nr_bad, memory_order_relaxed) >= ctx->nr_ifaces)
		return;
	ifindex = ctx->off->ifindex[ctx->ports[in].iface];
	for (uint32_t i = 0; i < n; i++) {
		bool partial = w->csum_partial[i];
		struct umem_steer_flow_key k;
		struct off_flow *e;
		uint8_t *eth;
		bool first = head;

		head = fwd_desc_last(&d[i]);
		if (!first || d[i].len < FWD_ETH_HLEN)
			continue;
		eth = umem_area__ptr(ctx->area, d[i].addr);
		if (umem_steer_flow_key__parse(eth, d[i].len, ifindex, kind, &k))
			continue; /* floods, ARP/ND, fragments, neither TCP nor UDP */
		if (cfg->nr_rules && any_rule_matches(cfg, eth, d[i].len, cfg->ports[in].queue))
			continue;
		e = slot_of(ow, &k);
		if (!e) {
			/* Every slot of its window holds an installed flow: not tracked, so not offloaded. */
			bump(&ctx->off->ctr[ctx->ports[in].iface].untracked);
			continue;
		}
		e->seen_ns = now;
		e->in = (uint16_t)in;
		e->l2 = kind == UMEM_STEER_FLOW_L2;
		/* A partial checksum (the sender's TX checksum offload) is completed here only: its
		 * flow stays, or comes back, in userspace and counts again from zero. A real
		 * checksum equal to the pseudo-header sum (once in 65,536) only delays it. */
		if (partial) {
			tell(&ctr_of(ctx, e)->csum_kept, e, OFF_TOLD_CSUM);
			if (e->state == OFF_ARMING || e->state == OFF_OFFLOADED)
				to_counting(w, e, now, true);
			e->frames = 0;
			continue;
		}
		switch (e->state) {
		case OFF_COUNTING:
			if (++e->frames >= cfg->offload_after)
				install(w, e, eth, now);
			break;
		case OFF_ARMING:
			e->g.frames++; /* sent with this burst */
			if (gate_marked(eth, e->tag))
				e->g.marked++;
			break;
		case OFF_OFFLOADED:
			/* Frames queued before the gate opened still arrive here, a whole RX ring of
			 * them after an overload: not a sign that the program lost the flow. The
			 * housekeeping lookup finds a flow that is gone (evicted, removed behind our
			 * back) and counts it again. */
			break;
		default:
			break;
		}
	}
}

/* ---- per loop turn ---- */

/* Arming flow e: when userspace no longer holds its frames, it reports so: the gate opens at
 * the next frame, which then cannot overtake one of ours. */
static void release_gate(struct fwd_worker *w, struct off_flow *e, uint64_t now)
{
	struct fwd_ctx *ctx = w->ctx;
	struct off_worker *ow = &ctx->off->w[w->idx];
	struct umem_steer_flows *f = ow->flows[ctx->ports[e->in].iface];
	struct umem_steer_flow v;
	uint64_t release;
	bool sent;

	if (umem_steer_flows__lookup(f, &e->key, &v)) {
		to_counting(w, e, now, false); /* gone (evicted) */
		return;
	}
	if (v.csum_partial) { /* the program passed up a partial checksum: its gate stays shut */
		tell(&ctr_of(ctx, e)->csum_kept, e, OFF_TOLD_CSUM);
		to_counting(w, e, now, true);
		return;
	}
	/* Open, or opening at its next frame (the release covers every gated frame): a flow that
	 * has no next frame yet (a short one) needs no more turns. */
	if (v.open || (e->have_released && v.gated <= e->released)) {
		arming_del(ow, e);
		e->state = OFF_OFFLOADED;
		e->since_ns = now;
		return;
	}
	if (now - e->since_ns > OFF_ARM_MAX_NS) {
		/* Userspace never caught up (its rings never ran empty): open anyway. Not
		 * with v.gated: under a sustained overload the program gates more frames
		 * between that lookup and this release, so the gate stayed shut for good
		 * (and the flow in userspace). UINT64_MAX covers every frame ever gated. */
		bump(&ctr_of(ctx, e)->forced);
		umem_steer_flows__release(f, &e->key, UINT64_MAX);
		e->released = UINT64_MAX; /* opens at the next frame: the next turn takes it as offloaded */
		e->have_released = true;
		return;
	}
	/* Sent: nothing staged for the output port (the worker batches TX), its TX ring done. */
	sent = !w->nstage[e->out] && !umem_port__tx_inflight(ctx->ports[e->out].port);
	if (fwd_gate_release(&e->g, v.gated, v.unmarked, ow->rx_full[e->in], sent, &release) &&
	    (!e->have_released || release != e->released) && !umem_steer_flows__release(f, &e->key, release)) {
		e->released = release;
		e->have_released = true;
	}
}

/* OFF_GATE_BUDGET arming flows a turn, in turn: a flow looked up less often only releases later
 * (the bounds of release_gate hold over any number of turns). */
static void release_gates(struct fwd_worker *w, uint64_t now)
{
	struct off_worker *ow = &w->ctx->off->w[w->idx];
	uint32_t todo = ow->nr_arming < OFF_GATE_BUDGET ? ow->nr_arming : OFF_GATE_BUDGET;

	for (uint32_t n = 0; n < todo && ow->nr_arming; n++) {
		struct off_flow *e;

		if (ow->gate_at >= ow->nr_arming)
			ow->gate_at = 0;
		e = &ow->slots[ow->arming[ow->gate_at]];
		release_gate(w, e, now);
		if (e->state == OFF_ARMING)
			ow->gate_at++; /* else the last arming flow took its place */
	}
}

/* Frames every interface sent (rtnetlink link stats, this namespace), by interface. A veth counts
 * the frames redirected into it and delivered to its peer there, beside what sockets sent; and
 * in dropped (tx_dropped) those it freed, ours (its peer's ring full) and redirected ones its
 * peer refused, which xdp-fwd counts as drops of their own (tx_dropped_kernel, main.c). */
struct tx_read {
	struct fwd_offload *off;
	uint32_t nr_ifaces;
	uint64_t *out, found; /* found: bit f, interface f was there */
	uint64_t *dropped;
};

static void tx_read_one(void *arg, const char *name, uint32_t ifindex, const struct rtnl_link_stats *st)
{
	struct tx_read *r = arg;

	(void)name;
	for (uint32_t f = 0; f < r->nr_ifaces; f++)
		if (r->off->ifindex[f] && r->off->ifindex[f] == ifindex) {
			r->out[f] = fwd_wide32_read(&r->off->tx_wide[f], st->tx_packets);
			r->dropped[f] = fwd_wide32_read(&r->off->dropped_wide[f], st->tx_dropped);
			r->found |= 1ull << f;
		}
}

static uint64_t read_tx_packets(struct fwd_offload *off, uint32_t nr_ifaces, uint64_t *out, uint64_t *dropped)
{
	struct tx_read r = { off, nr_ifaces, out, 0, dropped };

	return fwd_each_link(tx_read_one, &r) ? 0 : r.found;
}

/* Frames the steering programs redirected towards interface f: with two interfaces, all that
 * the other one redirected (every flow there targets f). */
static uint64_t redirected_to(struct fwd_ctx *ctx, uint32_t f)
{
	struct umem_steer_counter c[UMEM_STEER_FS_NR];
	uint64_t n = 0;

	for (uint32_t g = 0; g < ctx->nr_ifaces; g++)
		if (g != f && ctx->off->main_flows[g] && !umem_steer_flows__counters(ctx->off->main_flows[g], c))
			n += c[UMEM_STEER_FS_REDIRECT].packets;
	return n;
}

/* The frames interface f sent that no steering program redirected: what our sockets sent, and
 * the delivery probe's frames it took. */
static uint64_t user_tx(struct fwd_ctx *ctx, uint32_t f)
{
	uint64_t n = atomic_load_explicit(&ctx->off->probe_tx[f], memory_order_relaxed);

	for (uint32_t i = 0; i < ctx->nr_ports; i++)
		if (ctx->ports[i].iface == f)
			n += atomic_load_explicit(&ctx->ports[i].ctr.tx_packets, memory_order_relaxed);
	return n;
}

/* Why interface name cannot send at all now (down, or no carrier: a veth whose peer is down),
 * or NULL: then a target that drops redirected frames lacks what it needs to take them. */
static const char *link_problem(const struct fwd_offload *off, const char *name)
{
	struct ifreq ifr = { 0 };

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (off->ioctl_fd < 0 || ioctl(off->ioctl_fd, SIOCGIFFLAGS, &ifr))
		return NULL;
	if (!(ifr.ifr_flags & IFF_UP))
		return "it is down";
	if (!(ifr.ifr_flags & IFF_RUNNING))
		return "it has no carrier (a veth whose peer is down)";
	return NULL;
}

/* Interface f delivered `took` of `redirected` frames redirected to it: no more offload to it,
 * its flows back to userspace at the workers' next turn; said once, with the fix (the GRO
 * advice is wrong for a link that is down: its redirects fail whatever the peer's NAPI). */
static void mark_bad(struct fwd_ctx *ctx, uint32_t f, uint64_t took, uint64_t redirected)
{
	struct fwd_offload *off = ctx->off;
	const char *name = ctx->cfg->ports[off->first_port[f]].ifname, *why;
	char peer[48] = "";

	if (atomic_exchange(&off->bad_target[f], true))
		return;
	atomic_fetch_add(&off->nr_bad, 1);
	atomic_fetch_add(&off->bad_gen, 1);
	if (off->xmit[f].peer)
		snprintf(peer, sizeof(peer), " (ifindex %u in its namespace)", off->xmit[f].peer);
	if ((why = link_problem(off, name)))
		fprintf(stderr, "xdp-fwd: offload: %s sent %llu of %llu frames redirected to it: %s. No more "
			"offload to %s: its flows go back to userspace\n",
			name, (unsigned long long)took, (unsigned long long)redirected, why, name);
	else
		fprintf(stderr, "xdp-fwd: offload: %s sent %llu of %llu frames redirected to it: a veth takes "
			"redirected frames only with NAPI on its peer; turn it on there: `ethtool -K <peer> gro on` "
			"or an XDP program on the peer%s. No more offload to %s: its flows go back to userspace\n",
			name, (unsigned long long)took, (unsigned long long)redirected, peer, name);
}

static int ethtool_ioctl(int fd, const char *ifname, void *cmd)
{
	struct ifreq ifr = { 0 };

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = cmd;
	return ioctl(fd, SIOCETHTOOL, &ifr) ? -errno : 0;
}

/* The ethtool reads write as many entries as the device has at that moment, whatever the
 * request says: room for a change between counting and reading (ethtool -L on a veth). */
#define XMIT_STATS_HEADROOM 256u

/* How many ethtool statistics the device has now; 0 when that cannot be read. */
static uint32_t stats_count(struct fwd_offload *off, const char *ifname)
{
	/* The header and the one count it returns (data[0]): a struct holding both would put a
	 * flexible array member mid-struct, which ISO C refuses. */
	uint64_t buf[(sizeof(struct ethtool_sset_info) + sizeof(uint32_t) + 7) / 8] = { 0 };
	struct ethtool_sset_info *ss = (struct ethtool_sset_info *)buf;

	ss->cmd = ETHTOOL_GSSET_INFO;
	ss->sset_mask = 1ull << ETH_SS_STATS;
	if (off->ioctl_fd < 0 || ethtool_ioctl(off->ioctl_fd, ifname, ss) || !ss->sset_mask)
		return 0;
	return ss->data[0];
}

/* Finds interface f's XDP transmit counters (struct off_xmit); none on a device without them. */
static void xmit_probe(struct fwd_offload *off, uint32_t f, const char *ifname)
{
	struct off_xmit *x = &off->xmit[f];
	struct ethtool_gstrings *gs;
	uint32_t nr_stats;

	*x = (struct off_xmit){ 0 };
	atomic_store(&off->xmit_proven[f], false);
	atomic_store(&off->trial[f], false);
	nr_stats = stats_count(off, ifname);
	if (!nr_stats || nr_stats > 65536)
		return;
	gs = calloc(1, sizeof(*gs) + ((size_t)nr_stats + XMIT_STATS_HEADROOM) * ETH_GSTRING_LEN);
	if (!gs)
		return;
	*gs = (struct ethtool_gstrings){ .cmd = ETHTOOL_GSTRINGS, .string_set = ETH_SS_STATS, .len = nr_stats };
	x->peer_idx = nr_stats;
	if (!ethtool_ioctl(off->ioctl_fd, ifname, gs)) {
		for (uint32_t i = 0; i < gs->len && i < nr_stats; i++) {
			char name[ETH_GSTRING_LEN + 1] = { 0 };
			size_t n;

			memcpy(name, gs->data + (size_t)i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
			n = strlen(name);
			if (!strcmp(name, "peer_ifindex"))
				x->peer_idx = i;
			if (strncmp(name, "tx_queue_", 9) || x->nr >= OFF_XMIT_STATS)
				continue;
			if (n > 9 && !strcmp(name + n - 9, "_xdp_xmit")) {
				x->refused[x->nr] = false;
				x->idx[x->nr++] = i;
			} else if (n > 16 && !strcmp(name + n - 16, "_xdp_xmit_errors")) {
				x->refused[x->nr] = true;
				x->idx[x->nr++] = i;
			}
		}
		x->nr_stats = nr_stats;
	}
	if (!x->nr)
		x->nr_stats = 0;
	free(gs);
}

/* The sum of interface f's XDP transmit counters, and of its refusals alone (NULL: not wanted);
 * false when they cannot be read. */
static bool xmit_read(struct fwd_offload *off, uint32_t f, const char *ifname, uint64_t *sum, uint64_t *refused)
{
	struct off_xmit *x = &off->xmit[f];
	struct ethtool_stats *st;
	bool ok;

	/* A veth's count follows its queue count (ethtool -L): probe again when it changed. */
	if (stats_count(off, ifname) != x->nr_stats) {
		xmit_probe(off, f, ifname);
		return false;
	}
	st = calloc(1, sizeof(*st) + ((size_t)x->nr_stats + XMIT_STATS_HEADROOM) * sizeof(uint64_t));
	if (!st)
		return false;
	*st = (struct ethtool_stats){ .cmd = ETHTOOL_GSTATS, .n_stats = x->nr_stats };
	ok = !ethtool_ioctl(off->ioctl_fd, ifname, st) && st->n_stats == x->nr_stats;
	*sum = 0;
	if (refused)
		*refused = 0;
	for (uint32_t i = 0; ok && i < x->nr; i++) {
		*sum += st->data[x->idx[i]];
		if (refused && x->refused[i])
			*refused += st->data[x->idx[i]];
	}
	if (ok && x->peer_idx < x->nr_stats)
		x->peer = (uint32_t)st->data[x->peer_idx];
	free(st);
	return ok;
}

uint32_t fwd_fault_probe_enomem; /* offload.h: the tests' hook */

/* One frame redirected to interface f through the delivery probe. It goes out to the peer: the
 * interface's own address as source and destination (another host's, so the peer's stack drops
 * it) and the IEEE 802 local experimental EtherType, which no protocol takes. */
static int probe_run(struct fwd_offload *off, uint32_t f, const char *ifname)
{
	uint8_t frame[60] = { 0 };
	struct xdp_md md = { .data_end = sizeof(frame), .ingress_ifindex = off->ifindex[f] };
	struct ifreq ifr = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame, .data_size_in = sizeof(frame), .ctx_in = &md,
		    .ctx_size_in = sizeof(md), .repeat = 1, .flags = BPF_F_TEST_XDP_LIVE_FRAMES);

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(off->ioctl_fd, SIOCGIFHWADDR, &ifr))
		return -errno;
	memcpy(frame, ifr.ifr_hwaddr.sa_data, 6);
	memcpy(frame + 6, ifr.ifr_hwaddr.sa_data, 6);
	frame[12] = 0x88;
	frame[13] = 0xb5;
	memcpy(frame + 14, "xdp-fwd delivery probe", 22);
	if (fwd_fault_probe_enomem) {
		fwd_fault_probe_enomem--;
		return -ENOMEM;
	}
	return bpf_prog_test_run_opts(bpf_program__fd(off->probe->progs.redirect_probe), &opts) ? -errno : 0;
}

/* Errors of a live-frame BPF_PROG_RUN that say nothing of the next one: memory for the frame
 * or its page pool, a signal. The probe is tried again then. */
static bool probe_error_transient(int err)
{
	return err == -ENOMEM || err == -ENOBUFS || err == -EAGAIN || err == -EBUSY || err == -EINTR;
}

/* One probe frame redirected to interface f, its XDP transmit counters read around it (under
 * lock): 1 when f counted it (it takes redirected frames), 0 when not (it drops them all: struct
 * off_xmit), -1 when nothing could be told now. A probe that fails for good (an older kernel,
 * or no privilege for it now) is not tried again: the first flow to each target is its trial
 * then. One that fails for want of memory is tried again 0.1 s later, said once.
 * A probe frame f took (not refused by a full ring) reaches f's tx_packets like a redirected
 * frame, but no steering program counted it: probe_tx keeps it out of the loss count, where it
 * would hide one lost frame. */
static int probe_delivery(struct fwd_offload *off, uint32_t f, const char *name)
{
	uint64_t before, after, refused0, refused1;
	int err;

	if (!off->probe || fwd_now_ns() < off->probe_retry_at[f] || !xmit_read(off, f, name, &before, &refused0))
		return -1;
	err = probe_run(off, f, name);
	if (err && probe_error_transient(err)) {
		off->probe_retry_at[f] = fwd_now_ns() + OFF_PROBE_RETRY_NS;
		if (!off->probe_retry_said)
			fprintf(stderr, "xdp-fwd: offload: the delivery probe towards %s failed (%s): tried "
				"again in 0.1 s; its flows stay in userspace until it answers\n", name, strerror(-err));
		off->probe_retry_said = true;
		return -1;
	}
	if (err) {
		fprintf(stderr, "xdp-fwd: offload: the delivery probe towards %s failed (%s): the first "
			"flow to each target is its trial\n", name, strerror(-err));
		redirect_probe__destroy(off->probe);
		off->probe = NULL;
		return -1;
	}
	if (!xmit_read(off, f, name, &after, &refused1)) {
		/* Unknown whether f took it: the loss count may then miss one frame. */
		return -1;
	}
	/* Taken: the transmits moved beyond the refusals. No flow goes to f while it is probed,
	 * so the counters moved for the probe alone. */
	if (after - before > refused1 - refused0)
		atomic_fetch_add(&off->probe_tx[f], 1);
	return after != before;
}

/* Before the first flow goes to interface f: the delivery probe, so that no flow finds a target
 * that drops redirects at its own cost (a TCP flow that loses its first offloaded frames waits
 * out retransmit timeouts). True when f may take flows. */
static bool probe_target(struct fwd_ctx *ctx, uint32_t f)
{
	struct fwd_offload *off = ctx->off;
	bool ok = false;

	pthread_mutex_lock(&off->lock);
	if (atomic_load(&off->xmit_proven[f])) {
		ok = true;
	} else if (!atomic_load(&off->bad_target[f])) {
		int r = probe_delivery(off, f, ctx->cfg->ports[off->first_port[f]].ifname);

		if (r > 0) {
			atomic_store(&off->xmit_proven[f], true);
			ok = true;
		} else if (r == 0) {
			mark_bad(ctx, f, 0, 1);
		} else if (!off->probe) {
			pthread_mutex_unlock(&off->lock);
			return may_try(ctx, f); /* the probe is gone: a trial */
		}
	}
	pthread_mutex_unlock(&off->lock);
	return ok;
}

/* A bad target probed again once a second (under lock): a peer given NAPI since (the fix the
 * log named) takes flows again, without a restart. */
static void reprobe_bad(struct fwd_ctx *ctx, uint64_t now)
{
	struct fwd_offload *off = ctx->off;

	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		const char *name = ctx->cfg->ports[off->first_port[f]].ifname;

		if (!atomic_load(&off->bad_target[f]) || !off->ifindex[f] || now - off->reprobe_at[f] < OFF_REPROBE_NS)
			continue;
		off->reprobe_at[f] = now;
		if (probe_delivery(off, f, name) <= 0)
			continue;
		off->xmit[f].samples = 0; /* fresh baselines for the delivery check */
		off->xmit[f].lost = 0;
		atomic_store(&off->xmit_proven[f], true);
		atomic_store(&off->bad_target[f], false);
		atomic_fetch_sub(&off->nr_bad, 1);
		fprintf(stderr, "xdp-fwd: offload: %s takes redirected frames now: offloading to it again\n", name);
	}
}

/* Every OFF_TARGET_NS: with its peer's NAPI a veth counts every redirected frame handed to it,
 * taken or refused (struct off_xmit), within the NAPI poll that redirected it, microseconds
 * later. So every frame redirected towards it by one sample is counted by the next: what is not
 * was dropped unseen, and a target that drops 4 frames in a period, or half of a period's
 * redirects, takes none (a peer without NAPI; GRO turned off there mid-flow loses a part of a
 * period, then all). Two interfaces only, where the redirects towards each are known. */
static void check_delivery(struct fwd_ctx *ctx)
{
	struct fwd_offload *off = ctx->off;
	bool watching = false;

	if (ctx->nr_ifaces != 2)
		return;
	for (uint32_t f = 0; f < 2; f++) {
		struct off_xmit *x = &off->xmit[f];
		const char *name = ctx->cfg->ports[off->first_port[f]].ifname;
		uint64_t xs, rs;

		if (!x->nr || !off->ifindex[f] || atomic_load(&off->bad_target[f]))
			continue;
		/* Nothing in the kernel towards f: no ioctl (each takes rtnl, from a worker), and the
		 * next flow starts from fresh baselines (the other table may have been replaced). */
		if (!atomic_load(&off->ctr[f ^ 1].flows) && !atomic_load(&off->trial[f])) {
			x->samples = 0;
			x->lost = 0;
			continue;
		}
		/* Transmits first, redirects after: a frame counted redirected here is transmitted
		 * (or not) before the next period's read. */
		if (!xmit_read(off, f, name, &xs, NULL))
			continue;
		rs = redirected_to(ctx, f);
		/* A count that went back: the other interface's table was replaced (deleted and
		 * back), or the device's counters were. Start again from fresh baselines. */
		if (x->samples && (rs < x->r[1] || xs < x->x)) {
			x->samples = 0;
			x->lost = 0;
		}
		if (!x->samples) {
			x->x0 = xs;
			x->r0 = x->r[0] = x->r[1] = rs;
		}
		if (x->samples && xs != x->x)
			atomic_store(&off->xmit_proven[f], true);
		if (x->samples && x->r[1] - x->r0 > xs - x->x0 && x->r[1] - x->r0 - (xs - x->x0) > x->lost) {
			uint64_t lost = x->r[1] - x->r0 - (xs - x->x0), dl = lost - x->lost, dr = x->r[1] - x->r[0];

			x->lost = lost;
			if (dl >= 4 || dl * 2 >= dr) {
				mark_bad(ctx, f, dr > dl ? dr - dl : 0, dr > dl ? dr : dl);
				continue;
			}
		}
		x->x = xs;
		x->r[0] = x->r[1];
		x->r[1] = rs;
		x->samples++;
		if (!atomic_load(&off->xmit_proven[f])) {
			/* A trial whose flow is gone (expired, or never installed) makes room for the next;
			 * one that redirected nothing in three periods (a short flow) lets the others in
			 * (the check above goes on for them). */
			if (!atomic_load(&off->ctr[f ^ 1].flows)) {
				atomic_store(&off->trial[f], false);
			} else if (rs == x->r[0] && ++x->trial_samples >= 3) {
				atomic_store(&off->xmit_proven[f], true);
			} else {
				watching = true;
			}
		}
	}
	atomic_store(&off->watching, watching);
}

/* Redirected frames an interface did not send are lost in the kernel: a veth whose peer has
 * neither GRO nor an XDP program drops them all (and counts them nowhere). Count the loss, say
 * so, and stop offloading to it. Only with two interfaces, where the redirects towards each are
 * known. */
static void check_targets(struct fwd_ctx *ctx)
{
	struct fwd_offload *off = ctx->off;
	uint64_t tx[FWD_MAX_PORTS], rs[FWD_MAX_PORTS], found, dropped[FWD_MAX_PORTS];

	if (ctx->nr_ifaces != 2)
		return;
	/* Redirects first, the interfaces' counts after: a frame redirected by then has had the
	 * time to be sent (the count lags by what the target still queues). */
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		rs[f] = redirected_to(ctx, f);
	memcpy(tx, off->tx0, sizeof(tx));
	memcpy(dropped, off->dropped0, sizeof(dropped));
	found = read_tx_packets(off, ctx->nr_ifaces, tx, dropped);
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		uint64_t r, sent, u, delivered, lost, dr, dl, counted, uncounted;

		if (!(found & (1ull << f)))
			continue; /* gone (maybe not yet seen gone by the main thread): no count */
		r = rs[f] - off->redirected0[f];
		sent = tx[f] - off->tx0[f];
		u = user_tx(ctx, f) - off->user_tx0[f];
		delivered = sent > u ? sent - u : 0;
		lost = r > delivered ? r - delivered : 0;
		/* What the interface counted in tx_dropped is a drop xdp-fwd reports already
		 * (tx_dropped_kernel): out of "lost", so that each frame is counted once. The
		 * target check below still sees every frame not sent. Same dump as sent: a drop
		 * is in one or the other. */
		counted = dropped[f] - off->dropped0[f];
		uncounted = lost > counted ? lost - counted : 0;
		dr = r - off->redirected_seen[f];
		dl = lost > off->lost_seen[f] ? lost - off->lost_seen[f] : 0;
		if (off->lost_before[f] + uncounted > atomic_load(&off->lost[f]))
			atomic_store(&off->lost[f], off->lost_before[f] + uncounted); /* a count never goes back */
		/* Ring overflows under load lose a share; a target that cannot take frames, all.
		 * Only where the transmit counters cannot tell (check_delivery). */
		if (!off->xmit[f].nr && dr >= 32 && dl * 2 >= dr)
			mark_bad(ctx, f, dr - dl, dr);
		off->redirected_seen[f] = r;
		off->lost_seen[f] = lost;
	}
}

struct source_walk {
	struct fwd_ctx *ctx;
	uint64_t now, know;
};

/* A source the program forwarded: learned (refreshed) as if its frame had reached userspace,
 * on the port of its interface and RX queue, or the port it is already known on there. */
static int source_seen(const struct umem_steer_l2_source_key *key, const struct umem_steer_l2_source *src, void *arg)
{
	const struct source_walk *sw = arg;
	struct fwd_ctx *ctx = sw->ctx;
	uint64_t age = sw->know > src->last_ns ? sw->know - src->last_ns : 0;
	int32_t port = L2_NO_PORT, known;
	uint32_t f;

	for (f = 0; f < ctx->nr_ifaces && ctx->off->ifindex[f] != key->ifindex; f++)
		;
	/* A source still sending was rewritten within the last 100 ms; an older record is a MAC
	 * that stopped (or moved) and must age out, not be refreshed. */
	if (f == ctx->nr_ifaces || age > OFF_SOURCE_FRESH_NS)
		return 0;
	known = l2_lookup(&ctx->l2, key->mac, sw->now);
	if (known != L2_NO_PORT && ctx->ports[known].iface == f) {
		port = known;
	} else {
		for (uint32_t i = 0; i < ctx->nr_ports && port == L2_NO_PORT; i++)
			if (ctx->ports[i].iface == f && ctx->cfg->ports[i].queue == src->queue)
				port = (int32_t)i;
		if (port == L2_NO_PORT)
			port = (int32_t)ctx->off->first_port[f];
	}
	l2_learn(&ctx->l2, key->mac, port, sw->now - age);
	return 0;
}

/* l2: the sources of offloaded frames refresh the MAC table, which would otherwise age them out
 * (and with them the offloads towards them) while the kernel forwards their traffic. */
static void refresh_sources(struct fwd_ctx *ctx, uint64_t now)
{
	struct source_walk sw = { .ctx = ctx, .now = now, .know = umem_steer_flows__now_ns() };

	if (now - ctx->off->sources_at < OFF_HOUSEKEEP_NS)
		return; /* once per period, whichever worker comes first */
	ctx->off->sources_at = now;
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		if (ctx->off->main_flows[f])
			umem_steer_flows__l2_sources(ctx->off->main_flows[f], source_seen, &sw);
}

/* Idle flows out of the kernel, l2 flows whose MAC moved or aged out, flows to a bad target. */
static void housekeep(struct fwd_worker *w, uint64_t now)
{
	struct fwd_ctx *ctx = w->ctx;
	const struct fwd_config *cfg = ctx->cfg;
	struct off_worker *ow = &ctx->off->w[w->idx];
	uint64_t idle_ns = cfg->offload_idle * 1000000000ull, know = umem_steer_flows__now_ns();

	/* Interface-wide checks: one worker at a time, sources before the MAC checks below. */
	if (!pthread_mutex_trylock(&ctx->off->lock)) {
		check_targets(ctx);
		reprobe_bad(ctx, now);
		if (cfg->mode == FWD_MODE_L2)
			refresh_sources(ctx, now);
		pthread_mutex_unlock(&ctx->off->lock);
	}
	for (uint32_t s = 0; s < ow->nr_slots; s++) {
		struct off_flow *e = &ow->slots[s];
		struct umem_steer_flow v;
		uint32_t out, ifindex;

		if (e->state == OFF_COUNTING || e->state == OFF_REFUSED) {
			if (now - e->seen_ns > idle_ns)
				e->state = OFF_FREE;
			continue;
		}
		if (e->state != OFF_ARMING && e->state != OFF_OFFLOADED)
			continue;
		if (umem_steer_flows__lookup(ow->flows[ctx->ports[e->in].iface], &e->key, &v)) {
			to_counting(w, e, now, false);
			continue;
		}
		/* A partial checksum the program found and userspace did not (its frame's headers
		 * read otherwise): the gate stays shut, the flow is userspace's again. */
		if (v.csum_partial) {
			tell(&ctr_of(ctx, e)->csum_kept, e, OFF_TOLD_CSUM);
			to_counting(w, e, now, true);
			continue;
		}
		if (know > v.last_ns && know - v.last_ns > idle_ns) {
			bump(&ctr_of(ctx, e)->expired);
			to_counting(w, e, now, true);
			continue;
		}
		if (e->l2 && (!target_of(w, e->in, e->key.dmac, now, &out, &ifindex) || ifindex != e->out_ifindex)) {
			bump(&ctr_of(ctx, e)->invalidated);
			to_counting(w, e, now, true);
			continue;
		}
	}
}

/* A target turned bad (mark_bad): this worker's flows towards it leave the kernel. */
static void drop_bad(struct fwd_worker *w, uint64_t now)
{
	struct fwd_ctx *ctx = w->ctx;
	struct off_worker *ow = &ctx->off->w[w->idx];

	for (uint32_t s = 0; s < ow->nr_slots; s++) {
		struct off_flow *e = &ow->slots[s];

		if ((e->state == OFF_ARMING || e->state == OFF_OFFLOADED) &&
		    atomic_load_explicit(&ctx->off->bad_target[ctx->ports[e->out].iface], memory_order_relaxed))
			to_counting(w, e, now, true);
	}
}

static void offload_tick(struct fwd_worker *w, uint64_t now)
{
	struct fwd_offload *off;
	struct off_worker *ow;

	if (!w->ctx->off)
		return;
	off = w->ctx->off;
	ow = &off->w[w->idx];
	if (now - atomic_load_explicit(&off->targets_at, memory_order_relaxed) >= OFF_TARGET_NS &&
	    !pthread_mutex_trylock(&off->lock)) {
		if (now - atomic_load(&off->targets_at) >= OFF_TARGET_NS) { /* not another worker's */
			atomic_store(&off->targets_at, now);
			check_delivery(w->ctx);
		}
		pthread_mutex_unlock(&off->lock);
	}
	if (ow->bad_gen != atomic_load_explicit(&off->bad_gen, memory_order_relaxed)) {
		ow->bad_gen = atomic_load(&off->bad_gen);
		drop_bad(w, now);
	}
	if (ow->nr_arming)
		release_gates(w, now);
	memset(ow->rx_full, 0, sizeof(ow->rx_full)); /* a turn without a burst drained the ring */
	ow->turn++;
	if (now - ow->housekeep_at >= OFF_HOUSEKEEP_NS) {
		ow->housekeep_at = now;
		housekeep(w, now);
	}
}

/* 1 ms while a gate or a target's trial waits for the turns; OFF_TARGET_NS while flows are in
 * the kernel (the delivery check runs in the turns: a target that turns bad later is found
 * within a few periods); otherwise no limit. */
static int offload_max_sleep_ms(const struct fwd_worker *w)
{
	const struct fwd_ctx *ctx = w->ctx;

	if (ctx->off->w[w->idx].nr_arming || atomic_load_explicit(&ctx->off->watching, memory_order_relaxed))
		return 1;
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		if (atomic_load_explicit(&ctx->off->ctr[f].flows, memory_order_relaxed) > 0)
			return (int)(OFF_TARGET_NS / 1000000);
	return -1;
}

static const struct fwd_flow_ops offload_ops = {
	.burst = offload_burst,
	.tick = offload_tick,
	.max_sleep_ms = offload_max_sleep_ms,
};

/* ---- set-up and stats ---- */

/* Adds what the program behind flows counted, by outcome, to sum[UMEM_STEER_FS_NR]. */
static void add_program_counters(struct umem_steer_flows *flows, struct umem_steer_counter *sum)
{
	struct umem_steer_counter c[UMEM_STEER_FS_NR];

	if (umem_steer_flows__counters(flows, c))
		return;
	for (uint32_t s = 0; s < UMEM_STEER_FS_NR; s++) {
		sum[s].packets += c[s].packets;
		sum[s].bytes += c[s].bytes;
	}
}

/* A new epoch of the loss count (struct fwd_offload): every interface's counters as they are. */
static void loss_epoch(struct fwd_ctx *ctx)
{
	struct fwd_offload *off = ctx->off;

	check_targets(ctx); /* the epoch ends on counts read now */

	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		off->lost_before[f] = atomic_load(&off->lost[f]);
		off->redirected0[f] = redirected_to(ctx, f);
		off->user_tx0[f] = user_tx(ctx, f);
		off->redirected_seen[f] = 0;
		off->lost_seen[f] = 0;
	}
	memset(off->tx0, 0, sizeof(off->tx0));
	memset(off->dropped0, 0, sizeof(off->dropped0));
	memset(off->tx_wide, 0, sizeof(off->tx_wide));
	memset(off->dropped_wide, 0, sizeof(off->dropped_wide));
	read_tx_packets(off, ctx->nr_ifaces, off->tx0, off->dropped0);
}

/* Interface f's flow table handles, on the steering program that port first attached. */
static int open_flows(struct fwd_ctx *ctx, uint32_t f, uint32_t first)
{
	const struct fwd_config *cfg = ctx->cfg;
	struct fwd_offload *off = ctx->off;
	int err;

	off->first_port[f] = first;
	off->ifindex[f] = (uint32_t)umem_port__ifindex(ctx->ports[first].port);
	off->main_flows[f] = umem_steer_flows__open(ctx->steer[first]);
	if (!off->main_flows[f]) {
		err = -errno;
		fprintf(stderr, "xdp-fwd: offload: %s: no flow table: %s\n", cfg->ports[first].ifname,
			strerror(-err));
		return err;
	}
	umem_steer_flows__clear(off->main_flows[f]);
	if (cfg->offload_max) {
		err = umem_steer_flows__set_limit(off->main_flows[f], cfg->offload_max);
		if (err) {
			fprintf(stderr, "xdp-fwd: --offload-max %u: %s\n", cfg->offload_max, strerror(-err));
			return err;
		}
	}
	for (uint32_t k = 0; k < ctx->nr_workers; k++) {
		off->w[k].flows[f] = umem_steer_flows__open(ctx->steer[first]);
		if (!off->w[k].flows[f])
			return -errno;
	}
	if (atomic_exchange(&off->bad_target[f], false))
		atomic_fetch_sub(&off->nr_bad, 1);
	xmit_probe(off, f, cfg->ports[first].ifname);
	return 0;
}

static void close_flows(struct fwd_offload *off, uint32_t f)
{
	for (uint32_t k = 0; k < FWD_MAX_WORKERS; k++) {
		umem_steer_flows__close(off->w[k].flows[f]);
		off->w[k].flows[f] = NULL;
	}
	umem_steer_flows__close(off->main_flows[f]);
	off->main_flows[f] = NULL;
	off->ifindex[f] = 0;
}

int fwd_offload_init(struct fwd_ctx *ctx)
{
	struct fwd_offload *off;
	uint32_t limit, slots;

	if (!ctx->cfg->offload_after)
		return 0;
	off = calloc(1, sizeof(*off));
	if (!off)
		return -ENOMEM;
	ctx->off = off;
	pthread_mutex_init(&off->lock, NULL);
	off->ioctl_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0); /* < 0: the slower check only */
	/* Loaded while privileged; NULL (an old kernel, a BPF failure): trial flows instead. */
	off->probe = off->ioctl_fd >= 0 ? redirect_probe__open_and_load() : NULL;
	/* A tracker for every flow the tables may hold, at half load (8-way probing fails rarely
	 * there): the limit is per interface (each has its table), and any worker may see the
	 * flows of every interface (its ports are queues of several, and -i IFNAME@all may deal
	 * it more). */
	limit = ctx->cfg->offload_max ? ctx->cfg->offload_max : UMEM_STEER_MAX_FLOWS;
	for (slots = 1; slots < 2ull * limit * (ctx->nr_ifaces ? ctx->nr_ifaces : 1); slots *= 2)
		;
	for (uint32_t k = 0; k < ctx->nr_workers; k++) {
		off->w[k].nr_slots = slots;
		off->w[k].slots = calloc(slots, sizeof(*off->w[k].slots));
		off->w[k].arming = calloc(slots, sizeof(*off->w[k].arming));
		if (!off->w[k].slots || !off->w[k].arming)
			return -ENOMEM;
	}
	for (uint32_t i = 0; i < ctx->nr_ports; i++) {
		int err = ctx->steer[i] ? open_flows(ctx, ctx->ports[i].iface, i) : 0;

		if (err)
			return err;
	}
	loss_epoch(ctx);
	ctx->flow_ops = &offload_ops;
	return 0;
}

void fwd_offload_iface_down(struct fwd_ctx *ctx, uint32_t f)
{
	struct fwd_offload *off = ctx->off;
	uint64_t now = fwd_now_ns();

	if (!off || !off->main_flows[f])
		return;
	add_program_counters(off->main_flows[f], off->gone[f]);
	for (uint32_t k = 0; k < ctx->nr_workers; k++) {
		struct fwd_worker *w = &ctx->workers[k];

		for (uint32_t s = 0; s < off->w[k].nr_slots; s++) {
			struct off_flow *e = &off->w[k].slots[s];
			bool installed = e->state == OFF_ARMING || e->state == OFF_OFFLOADED;

			if (e->state == OFF_FREE)
				continue;
			if (ctx->ports[e->in].iface == f) {
				to_counting(w, e, now, false); /* its table goes with the program */
				e->state = OFF_FREE;
			} else if (installed && ctx->ports[e->out].iface == f) {
				to_counting(w, e, now, true); /* the kernel dropped its devmap entry */
			}
		}
	}
	close_flows(off, f);
	loss_epoch(ctx);
}

int fwd_offload_iface_up(struct fwd_ctx *ctx, uint32_t first)
{
	uint32_t f = ctx->ports[first].iface;
	int err;

	if (!ctx->off || !ctx->steer[first])
		return 0;
	err = open_flows(ctx, f, first);
	if (err)
		close_flows(ctx->off, f);
	loss_epoch(ctx);
	return err;
}

void fwd_offload_fini(struct fwd_ctx *ctx)
{
	struct fwd_offload *off = ctx->off;

	if (!off)
		return;
	ctx->flow_ops = NULL;
	for (uint32_t k = 0; k < FWD_MAX_WORKERS; k++) {
		free(off->w[k].slots);
		free(off->w[k].arming);
	}
	for (uint32_t f = 0; f < FWD_MAX_PORTS; f++)
		close_flows(off, f);
	pthread_mutex_destroy(&off->lock);
	redirect_probe__destroy(off->probe);
	if (off->ioctl_fd >= 0)
		close(off->ioctl_fd);
	free(off);
	ctx->off = NULL;
}

void fwd_offload_sample(struct fwd_ctx *ctx, uint32_t port, struct fwd_offload_sample *out)
{
	struct fwd_offload *off = ctx->off;
	struct umem_steer_counter c[UMEM_STEER_FS_NR];
	uint32_t f = ctx->ports[port].iface;
	struct off_iface_counters *k;

	*out = (struct fwd_offload_sample){ 0 };
	if (!off || off->first_port[f] != port)
		return;
	memcpy(c, off->gone[f], sizeof(c));
	if (off->main_flows[f])
		add_program_counters(off->main_flows[f], c);
	for (uint32_t s = 0; s < UMEM_STEER_FS_NR; s++) {
		if (s == UMEM_STEER_FS_GATED || s == UMEM_STEER_FS_NO_DEV || s == UMEM_STEER_FS_CSUM_PARTIAL)
			continue; /* those went to userspace: counted in rx */
		out->packets += c[s].packets;
		out->bytes += c[s].bytes;
	}
	out->gated = c[UMEM_STEER_FS_GATED].packets;
	out->csum_passed = c[UMEM_STEER_FS_CSUM_PARTIAL].packets;
	k = &off->ctr[f];
	out->lost = atomic_load(&off->lost[f]);
	out->installed = atomic_load(&k->installed);
	out->expired = atomic_load(&k->expired);
	out->invalidated = atomic_load(&k->invalidated);
	out->full = atomic_load(&k->full);
	out->refused = atomic_load(&k->refused);
	out->forced = atomic_load(&k->forced);
	out->no_target = atomic_load(&k->no_target);
	out->untracked = atomic_load(&k->untracked);
	out->csum_kept = atomic_load(&k->csum_kept);
	out->flows = (uint64_t)atomic_load(&k->flows);
}
