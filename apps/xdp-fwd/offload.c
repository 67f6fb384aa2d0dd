/* SPDX-License-Identifier: MIT */
/* --offload-after: the per-worker flow state machine and its gates, run in the worker's loop
 * (offload_internal.h has the rooms of offload). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "l2.h"
#include "mode.h"
#include "offload.h"
#include "offload_internal.h"
#include "offload_slots.h"
#include "route.h"

/* ---- frames ---- */

/* Whether a -r rule takes the frame of n descriptors d[0..) (its headers in d[0]). */
static bool any_rule_matches(const struct fwd_config *cfg, const uint8_t *p, const struct umem_desc *d, uint32_t n,
			     uint32_t queue)
{
	uint32_t frame_len = 0;

	for (uint32_t i = 0; i < n; i++) {
		frame_len += d[i].len;
		if (fwd_desc_last(&d[i]))
			break;
	}
	for (uint32_t r = 0; r < cfg->nr_rules; r++)
		if (umem_steer__match_frame(&cfg->rules[r].match, p, d[0].len, frame_len, queue))
			return true;
	return false;
}

/* ---- state changes ---- */

static struct off_iface_counters *ctr_of(struct fwd_ctx *ctx, const struct off_flow *e)
{
	return &ctx->off->ifc[ctx->ports[e->in].iface].ctr;
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

void fwd_off_to_counting(struct fwd_worker *w, struct off_flow *e, uint64_t now, bool remove)
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

/* Where flow e (whose frame is at eth) goes, as an egress port and the flow entry's redirect
 * (fl: index, and a mode's rewrite); false to keep it in userspace. */
static bool target_of(struct fwd_worker *w, const struct off_flow *e, const uint8_t *eth, uint64_t now,
		      uint32_t *out, struct umem_steer_flow *fl)
{
	struct fwd_ctx *ctx = w->ctx;
	uint32_t in = e->in, to;

	if (ctx->mode->offload_target) {
		if (!ctx->mode->offload_target(ctx, (int)w->idx, in, &e->key, out, fl))
			return false;
	} else if (ctx->cfg->mode == FWD_MODE_WIRE) {
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
	if (atomic_load_explicit(&ctx->off->ifc[to].bad_target, memory_order_relaxed))
		return false;
	fl->index = ctx->off->ifc[to].ifindex;
	return fl->index != 0; /* 0: the interface is gone */
}


/* A gate tag never used before by this process (never 0): a mark left in a chunk's headroom by
 * an earlier frame (another flow, an earlier add of this one) never matches. The UMEM is this
 * process's own, so no other process's tags are in it. A bijection of a count (murmur3's
 * finalizer) keyed at random: unique, and not 1, 2, 3 for a sender that would forge a mark in
 * front of a frame's data (mark_is_ours). */
static uint32_t next_tag(const struct fwd_offload *off)
{
	static _Atomic uint32_t tags;
	uint32_t t;

	do {
		t = atomic_fetch_add_explicit(&tags, 1, memory_order_relaxed) ^ off->tag_key;
		t ^= t >> 16;
		t *= 0x85ebca6bu;
		t ^= t >> 13;
		t *= 0xc2b2ae35u;
		t ^= t >> 16;
	} while (!t);
	return t;
}

/* The kind of flow the mode offloads (umem_steer_flow_key). */
static uint32_t flow_kind(const struct fwd_ctx *ctx)
{
	return ctx->cfg->mode == FWD_MODE_L2 ? UMEM_STEER_FLOW_L2 : UMEM_STEER_FLOW_IPV4;
}

/* Whether the frame at eth may carry a gate mark (steer_abi.h), read into *m: the 12 bytes
 * before it, inside the chunk's XDP headroom (256 bytes before every RX frame): its metadata, or
 * the mark in front of its data that fwd_offload_unwrap stepped over. */
static bool gate_mark_of(const uint8_t *eth, struct umem_steer_gate_mark *m)
{
	memcpy(m, eth - sizeof(*m), sizeof(*m));
	return m->magic == UMEM_STEER_GATE_MAGIC;
}

/* A mark taken is wiped, so that the chunk's next frame, if it has no metadata, cannot show it
 * again. */
static void gate_unmark(uint8_t *eth)
{
	memset(eth - sizeof(struct umem_steer_gate_mark), 0, sizeof(struct umem_steer_gate_mark));
}

/* Whether the frame at eth carries the gate mark of tag; *seq its number. */
static bool gate_marked(uint8_t *eth, uint32_t tag, uint32_t *seq)
{
	struct umem_steer_gate_mark m;

	if (!gate_mark_of(eth, &m) || m.tag != tag)
		return false;
	gate_unmark(eth);
	*seq = m.seq;
	return true;
}

/* Whether the frame at eth (len bytes, the first buffer) is one a drain drops: it carries the
 * mark of a drain's tag, at or past its first seq, and is of its flow (a mark left in the
 * chunk by an earlier frame can sit in front of another flow's frame). */
static bool drain_takes(struct fwd_worker *w, uint32_t in, uint8_t *eth, uint32_t len)
{
	struct fwd_ctx *ctx = w->ctx;
	struct off_worker *ow = &ctx->off->w[w->idx];
	uint32_t kind = flow_kind(ctx);
	struct umem_steer_gate_mark m;
	struct umem_steer_flow_key k;
	struct off_drain *dr = NULL;

	if (len < FWD_ETH_HLEN || !gate_mark_of(eth, &m))
		return false;
	for (uint32_t j = 0; j < ow->nr_drains && !dr; j++)
		if (ow->drains[j].tag == m.tag)
			dr = &ow->drains[j];
	if (!dr || m.seq < dr->from || m.seq >= dr->to)
		return false; /* outside the drain: a gated frame fwd_offload_burst counts, or userspace's again */
	if (umem_steer_flow_key__parse(eth, len, ctx->off->ifc[ctx->ports[in].iface].ifindex, kind, &k) ||
	    memcmp(&k, &dr->key, sizeof(k)))
		return false;
	gate_unmark(eth);
	if (!dr->tail_ns) { /* its flow arms still: the drain's tail is out of the kernel */
		struct off_flow *e = &ow->slots[dr->slot];

		if (e->state == OFF_ARMING && e->tag == dr->tag)
			fwd_gate_seen(&e->g, m.seq);
	}
	return true;
}

/* Whether mark m, in front of the frame at inner (len bytes) received on port in, is one the
 * program put there: the tag of the frame's own flow as this worker tracks it (arming, or in
 * or back from the kernel with gated frames still in the ring: a slot keeps its last tag), or
 * of a drain of that flow. Anything else stays as it came: an ordinary frame that reads so (its
 * source address has the group bit), or one built to get a frame past the steering program's
 * rules inside it (the tags are not guessable either: next_tag). */
static bool mark_is_ours(struct fwd_worker *w, uint32_t in, const struct umem_steer_gate_mark *m, const uint8_t *inner,
			 uint32_t len)
{
	struct fwd_ctx *ctx = w->ctx;
	struct off_worker *ow = &ctx->off->w[w->idx];
	struct umem_steer_flow_key k;
	const struct off_flow *e;

	if (!m->tag || umem_steer_flow_key__parse(inner, len, ctx->off->ifc[ctx->ports[in].iface].ifindex,
						  flow_kind(ctx), &k))
		return false;
	e = fwd_off_find(ow, &k);
	if (e && e->tag == m->tag)
		return true;
	for (uint32_t j = 0; j < ow->nr_drains; j++)
		if (ow->drains[j].tag == m->tag && !memcmp(&ow->drains[j].key, &k, sizeof(k)))
			return true;
	return false;
}

void fwd_offload_unwrap(struct fwd_worker *w, uint32_t in, struct umem_desc *d, uint32_t n)
{
	struct fwd_ctx *ctx = w->ctx;
	bool head = !ctx->ports[in].rx_in_chain; /* a chain cut at the last burst's end goes on */

	for (uint32_t i = 0; i < n; i++) {
		struct umem_steer_gate_mark m;
		bool first = head;
		uint8_t *data;
		uint32_t k;

		head = fwd_desc_last(&d[i]);
		if (!first) /* the mark is in front of a chain's first buffer */
			continue;
		data = umem_area__ptr(ctx->area, d[i].addr);
		k = umem_steer_gate__unwrap(data, d[i].len);
		if (k)
			memcpy(&m, data, sizeof(m));
		if (k && mark_is_ours(w, in, &m, data + k, d[i].len - k)) {
			d[i].addr += k;
			d[i].len -= k;
		}
	}
	ctx->ports[in].rx_in_chain = !head;
}

uint32_t fwd_offload_filter(struct fwd_worker *w, uint32_t in, struct umem_desc *d, uint32_t n,
			    struct umem_desc *dropped)
{
	struct fwd_ctx *ctx = w->ctx;
	struct off_worker *ow = &ctx->off->w[w->idx];
	uint32_t kept = 0, nd = 0;
	bool head = true, drop = false;

	ow->rx_full[in] = n >= ctx->cfg->batch;
	if (!ow->nr_drains)
		return n;
	for (uint32_t i = 0; i < n; i++) {
		bool first = head;

		head = fwd_desc_last(&d[i]);
		if (first) /* a chain goes whole, by its first buffer (the headers and the mark) */
			drop = drain_takes(w, in, umem_area__ptr(ctx->area, d[i].addr), d[i].len);
		if (drop)
			dropped[nd++] = d[i];
		else
			d[kept++] = d[i];
	}
	return kept;
}

uint32_t fwd_fault_install_stall_ms; /* offload.h: the tests' hook */

static void install(struct fwd_worker *w, struct off_flow *e, const uint8_t *eth, uint64_t now)
{
	struct fwd_ctx *ctx = w->ctx;
	struct off_worker *ow = &ctx->off->w[w->idx];
	struct off_iface_counters *c = ctr_of(ctx, e);
	/* Marks in front of the data where there is no metadata: the worker takes them off every
	 * frame first (fwd_offload_unwrap). */
	struct umem_steer_flow fl = { .action = UMEM_STEER_FLOW_A_REDIRECT,
				      .flags = UMEM_STEER_FLOW_F_ORDERED | UMEM_STEER_FLOW_F_MARK_DATA };
	uint32_t out, tag;
	char line[320];
	int err;

	if (!target_of(w, e, eth, now, &out, &fl) || !fwd_off_may_try(ctx, ctx->ports[out].iface)) {
		tell(&c->no_target, e, OFF_TOLD_NO_TARGET);
		return; /* still counting: the next frame tries again */
	}
	tag = next_tag(ctx->off);
	fl.tag = tag;
	err = umem_steer_flows__add(ow->flows[ctx->ports[e->in].iface], &e->key, &fl);
	if (err == -ENOSPC) {
		/* The table is full: the flow stays in userspace and counts again from zero. */
		tell(&c->full, e, OFF_TOLD_FULL);
		e->frames = 0;
		return;
	}
	if (err && err != -EEXIST) {
		umem_steer_flow__format(&e->key, &fl, line, sizeof(line));
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
	e->out_ifindex = fl.index;
	e->mtu = fl.mtu;
	memcpy(e->dmac, fl.dmac, 6);
	memcpy(e->smac, fl.smac, 6);
	memcpy(e->imac, fl.imac, 6);
	e->g = (struct fwd_gate){ .pre_hi = UINT32_MAX };
	e->tag = tag;
	e->have_released = false;
	e->arm_idx = ow->nr_arming;
	ow->arming[ow->nr_arming++] = (uint32_t)(e - ow->slots);
	if (fwd_fault_install_stall_ms)
		usleep(fwd_fault_install_stall_ms * 1000u);
}

void fwd_offload_burst(struct fwd_worker *w, uint32_t in, const struct umem_desc *d, uint32_t n, uint64_t now)
{
	struct fwd_ctx *ctx = w->ctx;
	const struct fwd_config *cfg = ctx->cfg;
	struct off_worker *ow;
	uint32_t kind = flow_kind(ctx);
	uint32_t ifindex;
	bool head = true;

	ow = &ctx->off->w[w->idx];
	/* No target takes offload (two interfaces): userspace forwards as without it, at its cost. */
	if (atomic_load_explicit(&ctx->off->nr_bad, memory_order_relaxed) >= ctx->nr_ifaces)
		return;
	ifindex = ctx->off->ifc[ctx->ports[in].iface].ifindex;
	for (uint32_t i = 0; i < n; i++) {
		bool partial = w->csum_partial[i];
		struct umem_steer_flow_key k;
		struct off_flow *e, gone;
		uint8_t *eth;
		bool first = head;

		head = fwd_desc_last(&d[i]);
		if (!first || d[i].len < FWD_ETH_HLEN)
			continue;
		eth = umem_area__ptr(ctx->area, d[i].addr);
		if (umem_steer_flow_key__parse(eth, d[i].len, ifindex, kind, &k))
			continue; /* floods, ARP/ND, fragments, neither TCP nor UDP */
		if (cfg->nr_rules && any_rule_matches(cfg, eth, &d[i], n - i, cfg->ports[in].queue))
			continue;
		e = fwd_off_slot_of(ow, &k, &gone);
		if (gone.state == OFF_COUNTING)
			atomic_fetch_add_explicit(&ctx->off->ifc[ctx->ports[gone.in].iface].ctr.untracked, gone.frames,
						  memory_order_relaxed);
		if (!e) {
			/* Every slot of its window holds an installed flow: not tracked, so not offloaded. */
			bump(&ctx->off->ifc[ctx->ports[in].iface].ctr.untracked);
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
				fwd_off_to_counting(w, e, now, true);
			e->frames = 0;
			continue;
		}
		switch (e->state) {
		case OFF_COUNTING:
			if (++e->frames >= cfg->offload_after)
				install(w, e, eth, now);
			break;
		case OFF_ARMING: {
			uint32_t seq;

			e->g.frames++; /* sent with this burst */
			if (gate_marked(eth, e->tag, &seq))
				fwd_gate_seen(&e->g, seq); /* below any drain: fwd_offload_filter took those */
			break;
		}
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

/* Flow e's gate is open, or opens at its next frame: gated, the program's count, is final, and
 * its drain drops no frame numbered from there on (gated again after a partial checksum shut
 * the gate: userspace's to forward). */
static void drain_closes(struct off_worker *ow, const struct off_flow *e, uint64_t gated)
{
	for (uint32_t j = 0; j < ow->nr_drains; j++)
		if (ow->drains[j].slot == (uint32_t)(e - ow->slots) && ow->drains[j].tag == e->tag)
			ow->drains[j].to = gated < UINT32_MAX ? (uint32_t)gated : UINT32_MAX;
}

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
		fwd_off_to_counting(w, e, now, false); /* gone (evicted) */
		return;
	}
	if (v.csum_partial) { /* the program passed up a partial checksum: its gate stays shut */
		tell(&ctr_of(ctx, e)->csum_kept, e, OFF_TOLD_CSUM);
		fwd_off_to_counting(w, e, now, true);
		return;
	}
	/* Open, or opening at its next frame (the release covers every gated frame): a flow that
	 * has no next frame yet (a short one) needs no more turns. */
	if (v.open || (e->have_released && v.gated <= e->released)) {
		if (e->g.draining)
			drain_closes(ow, e, v.gated);
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
	if (ow->nr_drains < OFF_DRAINS &&
	    fwd_gate_drain(&e->g, v.gated, v.unmarked, now - e->since_ns > OFF_DRAIN_NS))
		ow->drains[ow->nr_drains++] = (struct off_drain){ .key = e->key, .tag = e->tag, .from = e->g.drain,
								  .to = UINT32_MAX, .slot = (uint32_t)(e - ow->slots), .in = e->in };
	if (fwd_gate_release(&e->g, v.gated, v.unmarked, ow->rx_full[e->in], sent, &release) &&
	    (!e->have_released || release != e->released) && !umem_steer_flows__release(f, &e->key, release)) {
		e->released = release;
		e->have_released = true;
		if (release == UINT64_MAX) {
			bump(&ctr_of(ctx, e)->drained);
			/* A frame the program gated past the drain's start without a mark (between the
			 * lookup above and the release) is in the ring, not dropped: its order is at
			 * risk, as when forced, and counted so. Never seen: a driver marks all or none. */
			if (!umem_steer_flows__lookup(f, &e->key, &v) && v.unmarked)
				bump(&ctr_of(ctx, e)->forced);
		}
	}
}

/* Drains whose flow left arming (its gate opened, or it went) keep dropping their frames still
 * in the ring for OFF_DRAIN_TAIL_NS and until a burst of the port came back short: a frame of
 * theirs sent now would follow frames the program redirected. */
static void drains_tick(struct off_worker *ow, uint64_t now)
{
	for (uint32_t j = 0; j < ow->nr_drains;) {
		struct off_drain *dr = &ow->drains[j];
		const struct off_flow *e = &ow->slots[dr->slot];

		if (!dr->tail_ns && (e->state != OFF_ARMING || e->tag != dr->tag))
			dr->tail_ns = now;
		if (dr->tail_ns && now - dr->tail_ns > OFF_DRAIN_TAIL_NS && !ow->rx_full[dr->in]) {
			*dr = ow->drains[--ow->nr_drains];
			continue;
		}
		j++;
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

	for (f = 0; f < ctx->nr_ifaces && ctx->off->ifc[f].ifindex != key->ifindex; f++)
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
			port = (int32_t)ctx->ifaces[f].first;
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
		if (ctx->off->ifc[f].main_flows)
			umem_steer_flows__l2_sources(ctx->off->ifc[f].main_flows, source_seen, &sw);
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
		fwd_off_check_targets(ctx);
		fwd_off_reprobe_bad(ctx, now);
		if (cfg->mode == FWD_MODE_L2)
			refresh_sources(ctx, now);
		pthread_mutex_unlock(&ctx->off->lock);
	}
	for (uint32_t i = ow->nr_live; i-- > 0;) { /* from the end: it frees as it goes */
		struct off_flow *e = &ow->slots[ow->live[i]];
		struct umem_steer_flow v, fl = { 0 };
		uint32_t out;

		if (e->state == OFF_COUNTING || e->state == OFF_REFUSED) {
			if (now - e->seen_ns > idle_ns)
				fwd_off_slot_free(ow, e);
			continue;
		}
		if (e->state != OFF_ARMING && e->state != OFF_OFFLOADED)
			continue;
		if (umem_steer_flows__lookup(ow->flows[ctx->ports[e->in].iface], &e->key, &v)) {
			fwd_off_to_counting(w, e, now, false);
			continue;
		}
		/* A partial checksum the program found and userspace did not (its frame's headers
		 * read otherwise): the gate stays shut, the flow is userspace's again. */
		if (v.csum_partial) {
			tell(&ctr_of(ctx, e)->csum_kept, e, OFF_TOLD_CSUM);
			fwd_off_to_counting(w, e, now, true);
			continue;
		}
		if (know > v.last_ns && know - v.last_ns > idle_ns) {
			bump(&ctr_of(ctx, e)->expired);
			fwd_off_to_counting(w, e, now, true);
			continue;
		}
		if (e->l2 && (!target_of(w, e, e->key.dmac, now, &out, &fl) || fl.index != e->out_ifindex)) {
			bump(&ctr_of(ctx, e)->invalidated);
			fwd_off_to_counting(w, e, now, true);
			continue;
		}
	}
}

/* Whether the entry v of routed flow key still says what the mode's tables say now. */
static bool route_current(struct fwd_ctx *ctx, int worker, uint32_t in, const struct umem_steer_flow_key *key,
			  const struct umem_steer_flow *v)
{
	struct umem_steer_flow now = { 0 };
	uint32_t out;

	return ctx->mode->offload_target(ctx, worker, in, key, &out, &now) && now.index == v->index &&
	       !memcmp(now.dmac, v->dmac, 6) && !memcmp(now.smac, v->smac, 6) && !memcmp(now.imac, v->imac, 6) &&
	       now.mtu == v->mtu;
}

/* The tables changed (fwd_offload_routes_changed): this worker's routed flows whose route
 * moved come back to counting, out of the kernel: those the main thread removed, and those the
 * worker installed from the old tables meanwhile (looked up before the change, added after the
 * main thread's walk). By the rewrite each was installed with, not by a look at the kernel's
 * table: no system call per flow on the worker's thread. */
static void recheck_routes(struct fwd_worker *w, uint64_t now)
{
	struct fwd_ctx *ctx = w->ctx;
	struct off_worker *ow = &ctx->off->w[w->idx];

	for (uint32_t i = 0; i < ow->nr_live; i++) {
		struct off_flow *e = &ow->slots[ow->live[i]];
		struct umem_steer_flow v = { .index = e->out_ifindex, .mtu = e->mtu };

		if (e->state != OFF_ARMING && e->state != OFF_OFFLOADED)
			continue;
		memcpy(v.dmac, e->dmac, 6);
		memcpy(v.smac, e->smac, 6);
		memcpy(v.imac, e->imac, 6);
		if (route_current(ctx, (int)w->idx, e->in, &e->key, &v))
			continue;
		/* Counted by whoever removes it: here, or the main thread before. */
		if (!umem_steer_flows__delete(ow->flows[ctx->ports[e->in].iface], &e->key))
			bump(&ctr_of(ctx, e)->invalidated);
		fwd_off_to_counting(w, e, now, false);
	}
}

struct route_walk {
	struct fwd_ctx *ctx;
	uint32_t in; /* a port of the flows' input interface */
	struct umem_steer_flow_key *moved;
	uint32_t nr, cap;
};

static int route_moved(const struct umem_steer_flow_key *key, const struct umem_steer_flow *v, void *arg)
{
	struct route_walk *rw = arg;

	if (!(v->flags & UMEM_STEER_FLOW_F_ROUTE) || route_current(rw->ctx, -1, rw->in, key, v))
		return 0;
	if (rw->nr == rw->cap) {
		uint32_t cap = rw->cap ? 2 * rw->cap : 64;
		struct umem_steer_flow_key *m = realloc(rw->moved, cap * sizeof(*m));

		if (!m)
			return 1; /* the workers' own checks find the rest */
		rw->moved = m;
		rw->cap = cap;
	}
	rw->moved[rw->nr++] = *key;
	return 0;
}

/* Every routed flow is checked, not only those the batch's events name: which flows an event
 * moves is what the lookup itself decides. A new route moves the flows of every shorter prefix
 * it now covers, a deleted one those of the prefix that takes them over; a neighbour's MAC, a
 * link's MAC, MTU or state, or a nexthop group's members reach every route through them, and a
 * multipath member is picked by the flow's hash. Naming the touched flows would repeat that
 * logic per event kind; asking each flow's route again (route_current: the lookup the workers
 * make per frame) is one answer for all of them, and a batch is every event queued since the
 * last, so a burst of changes costs one walk. The walk is bounded by the flow limit
 * (--offload-max, at most UMEM_STEER_MAX_FLOWS per interface): two map reads per flow. */
void fwd_offload_routes_changed(struct fwd_ctx *ctx)
{
	struct fwd_offload *off = ctx->off;
	struct route_walk rw = { .ctx = ctx };

	if (!ctx->mode->offload_target)
		return;
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		struct umem_steer_flows *flows = off->ifc[f].main_flows;

		if (!flows || !atomic_load_explicit(&off->ifc[f].ctr.flows, memory_order_relaxed))
			continue;
		rw.in = ctx->ifaces[f].first;
		rw.nr = 0;
		/* Deleted after the walk: a hash map's walk restarts when its current key goes. */
		umem_steer_flows__foreach(flows, route_moved, &rw);
		for (uint32_t i = 0; i < rw.nr; i++)
			if (!umem_steer_flows__delete(flows, &rw.moved[i]))
				bump(&off->ifc[f].ctr.invalidated);
	}
	free(rw.moved);
	atomic_fetch_add_explicit(&off->route_gen, 1, memory_order_release);
}

/* A target turned bad (mark_bad): this worker's flows towards it leave the kernel. */
static void drop_bad(struct fwd_worker *w, uint64_t now)
{
	struct fwd_ctx *ctx = w->ctx;
	struct off_worker *ow = &ctx->off->w[w->idx];

	for (uint32_t i = 0; i < ow->nr_live; i++) {
		struct off_flow *e = &ow->slots[ow->live[i]];

		if ((e->state == OFF_ARMING || e->state == OFF_OFFLOADED) &&
		    atomic_load_explicit(&ctx->off->ifc[ctx->ports[e->out].iface].bad_target, memory_order_relaxed))
			fwd_off_to_counting(w, e, now, true);
	}
}

void fwd_offload_tick(struct fwd_worker *w, uint64_t now)
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
			fwd_off_check_delivery(w->ctx);
		}
		pthread_mutex_unlock(&off->lock);
	}
	if (ow->bad_gen != atomic_load_explicit(&off->bad_gen, memory_order_relaxed)) {
		ow->bad_gen = atomic_load(&off->bad_gen);
		drop_bad(w, now);
	}
	if (ow->route_gen != atomic_load_explicit(&off->route_gen, memory_order_acquire)) {
		ow->route_gen = atomic_load_explicit(&off->route_gen, memory_order_acquire);
		recheck_routes(w, now);
	}
	if (ow->nr_arming)
		release_gates(w, now);
	if (ow->nr_drains)
		drains_tick(ow, now);
	memset(ow->rx_full, 0, sizeof(ow->rx_full)); /* a turn without a burst drained the ring */
	ow->turn++;
	if (now - ow->housekeep_at >= OFF_HOUSEKEEP_NS) {
		ow->housekeep_at = now;
		housekeep(w, now);
	}
}

/* 1 ms while a gate, a drain's tail or a target's trial waits for the turns; OFF_TARGET_NS while flows are in
 * the kernel (the delivery check runs in the turns: a target that turns bad later is found
 * within a few periods); otherwise no limit. */
int fwd_offload_max_sleep_ms(const struct fwd_worker *w)
{
	const struct fwd_ctx *ctx = w->ctx;

	if (ctx->off->w[w->idx].nr_arming || ctx->off->w[w->idx].nr_drains ||
	    atomic_load_explicit(&ctx->off->watching, memory_order_relaxed))
		return 1;
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		if (atomic_load_explicit(&ctx->off->ifc[f].ctr.flows, memory_order_relaxed) > 0)
			return (int)(OFF_TARGET_NS / 1000000);
	return -1;
}
