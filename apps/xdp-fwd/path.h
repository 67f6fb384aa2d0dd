/* SPDX-License-Identifier: MIT */
/*
 * xdp-fwd's per-frame hand-off, shared by the worker's loop (worker.c) and the modes
 * (mode_*.c): a frame staged on an output port of this worker, queued to the worker that drives
 * it, or dropped and counted. Static inline: the modes' burst steps call these per frame, and
 * they must cost what they cost inside worker.c.
 */
#ifndef XDP_FWD_PATH_H
#define XDP_FWD_PATH_H

#include <stdatomic.h>
#include <string.h>
#include <umem/area.h>
#include <umem/pool_fast.h>

#include "ctx.h"
#include "route.h"

/* Frames and bytes in n descriptors (a chain counts once). */
static inline void fwd_count_frames(const struct umem_desc *d, uint32_t n, uint64_t *frames, uint64_t *bytes)
{
	uint64_t f = 0, b = 0;

	for (uint32_t i = 0; i < n; i++) {
		f += fwd_desc_last(&d[i]);
		b += d[i].len;
	}
	*frames = f;
	*bytes = b;
}

static inline void fwd_drop(struct fwd_worker *w, struct fwd_port *counted_on, enum fwd_drop why,
		 const struct umem_desc *d, uint32_t n)
{
	uint64_t frames, bytes;

	for (uint32_t i = 0; i < n; i++)
		umem_pool__put(w->pool, d[i].addr);
	fwd_count_frames(d, n, &frames, &bytes);
	fwd_count(&counted_on->ctr.drop[why], frames);
}

/* --- cross-worker queues -------------------------------------------------------------- */

static inline bool fwd_xq_push(struct fwd_xq *q, const struct umem_desc *d, uint32_t n, uint32_t port)
{
	uint32_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
	/* Acquire: pairs with the consumer's release of head; its reads of those slots are done. */
	uint32_t head = atomic_load_explicit(&q->head, memory_order_acquire);

	if (q->mask + 1 - (tail - head) < n)
		return false;
	for (uint32_t i = 0; i < n; i++)
		q->items[(tail + i) & q->mask] = (struct fwd_xq_item){ .desc = d[i], .port = port };
	/* Release: pairs with the consumer's acquire of tail; publishes the whole chain at once. */
	atomic_store_explicit(&q->tail, tail + n, memory_order_release);
	return true;
}

static inline void fwd_stage(struct fwd_worker *w, uint32_t out, const struct umem_desc *d, uint32_t n)
{
	memcpy(&w->stage[out][w->nstage[out]], d, n * sizeof(*d));
	w->nstage[out] += n;
}

/* Hands one frame (chain of n descriptors) to output port out: staged when this worker drives
 * out, queued to the worker that does otherwise. */
static inline void fwd_emit(struct fwd_worker *w, uint32_t in, uint32_t out, const struct umem_desc *d, uint32_t n)
{
	struct fwd_ctx *ctx = w->ctx;
	uint32_t owner = ctx->ports[out].worker;

	if (owner == w->idx) {
		fwd_stage(w, out, d, n);
		w->fed[in] |= 1ull << out;
	} else if (fwd_xq_push(&ctx->xq[w->idx][owner], d, n, out))
		w->queued_to |= 1ull << owner;
	else
		fwd_drop(w, &ctx->ports[in], FWD_DROP_TX_FULL, d, n);
}

/* l2: one reference per output interface, never a copy (the caller holds one already). l2
 * mode keeps at least two interfaces, so there is at least one output. */
static inline void fwd_flood(struct fwd_worker *w, uint32_t in, const struct umem_desc *d, uint32_t n)
{
	struct fwd_ctx *ctx = w->ctx;
	uint32_t self = ctx->ports[in].iface, outs = 0;

	/* Interfaces whose ports were all removed (portlive.c) are not in ctx->live. */
	for (uint32_t k = 0; k < ctx->nr_live; k++)
		outs += ctx->live[k] != self;
	if (!outs) { /* cannot happen: l2 keeps two interfaces */
		fwd_drop(w, &ctx->ports[in], FWD_DROP_INVALID, d, n);
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (outs > 1 && umem_pool__ref(w->pool, d[i].addr, outs - 1)) {
			/* Cannot happen short of a bug (a reference on a live buffer fails only
			 * near UMEM_REF_MAX); undo the references already taken. */
			for (uint32_t j = 0; j < i; j++)
				for (uint32_t k = 1; k < outs; k++)
					umem_pool__put(w->pool, d[j].addr);
			fwd_drop(w, &ctx->ports[in], FWD_DROP_INVALID, d, n);
			return;
		}
	}
	for (uint32_t k = 0; k < ctx->nr_live; k++)
		if (ctx->live[k] != self)
			fwd_emit(w, in, ctx->via[in][ctx->live[k]], d, n);
}

/* fwd_route_burst's callbacks (route.h): arg is the worker. */
static inline uint8_t *fwd_route_data(void *arg, uint64_t addr)
{
	return umem_area__ptr(((struct fwd_worker *)arg)->ctx->area, addr);
}

static inline void fwd_route_emit(void *arg, uint32_t in, uint32_t out, const struct umem_desc *d, uint32_t n)
{
	fwd_emit(arg, in, out, d, n);
}

static inline void fwd_route_flood(void *arg, uint32_t in, const struct umem_desc *d, uint32_t n)
{
	fwd_flood(arg, in, d, n);
}

static inline void fwd_route_drop(void *arg, uint32_t in, enum fwd_drop why, const struct umem_desc *d, uint32_t n)
{
	struct fwd_worker *w = arg;

	fwd_drop(w, &w->ctx->ports[in], why, d, n);
}

static inline uint32_t fwd_route_iface(void *arg, uint32_t port)
{
	return ((struct fwd_worker *)arg)->ctx->ports[port].iface;
}

static inline uint32_t fwd_route_via(void *arg, uint32_t in, uint32_t iface)
{
	return ((struct fwd_worker *)arg)->ctx->via[in][iface];
}

/* Routes the burst d[0..n) received on port in as mode does (a constant in each mode's call,
 * so the compiler keeps only that mode's branch and inlines the callbacks: no per-frame
 * indirect call). */
static inline void fwd_worker_route(struct fwd_worker *w, enum fwd_mode mode, uint32_t in, struct umem_desc *d, uint32_t n,
				    uint64_t now)
{
	const struct fwd_route_io io = { .arg = w, .data = fwd_route_data, .emit = fwd_route_emit,
					 .flood = fwd_route_flood, .drop = fwd_route_drop,
					 .iface = fwd_route_iface, .via = fwd_route_via };
	struct fwd_ctx *ctx = w->ctx;

	/* l2: the MAC table takes concurrent learners and readers (l2.h), no lock. */
	fwd_route_burst(&io, mode, &ctx->l2, &ctx->ports[in].skip_contd, in, d, n, now);
}


#endif
