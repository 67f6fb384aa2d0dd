/* SPDX-License-Identifier: MIT */
/*
 * xdp-fwd modes: what a worker does with a burst it received, as the rooms of VPP's graph nodes
 * or the kernel's protocol handlers. A mode is one file (mode_NAME.c) defining one of these as
 * fwd_mode_NAME, and one line in FWD_MODES (fwd.h: its id and --mode name); the worker's loop
 * calls its burst step once per burst through ctx->mode, and main.c and the report call its
 * optional hooks. Its per-frame code
 * calls the worker's hand-off (path.h: fwd_emit, fwd_flood, fwd_drop), which is inlined there.
 *
 * State a mode keeps lives in the mode's own struct, reached from the run (set up by setup),
 * from each worker (worker_init), and per interface as a member of struct fwd_iface.
 */
#ifndef XDP_FWD_MODE_H
#define XDP_FWD_MODE_H

#include <stdint.h>
#include <stdio.h>
#include <umem/port.h>
#include <umem/steer_abi.h>

#include "fwd.h"
#include "stats.h"

struct fwd_ctx;
struct fwd_worker;
struct umem_steer_rule;

struct fwd_mode_ops {
	/* The worker's step: routes the burst d[0..n) received on port in. Every descriptor ends
	 * staged or queued for an output port, or dropped (counted on in). */
	void (*burst)(struct fwd_worker *w, uint32_t in, struct umem_desc *d, uint32_t n, uint64_t now);
	/* Optional. Main thread, before the workers exist and anything is attached, with the
	 * interfaces known (ctx->ifaces): the mode's shared state (0 or -errno);
	 * undone by teardown, which runs whatever setup did. */
	int (*setup)(struct fwd_ctx *ctx);
	void (*teardown)(struct fwd_ctx *ctx);
	/* Optional. In the worker's thread, before its loop and after its drain. */
	int (*worker_init)(struct fwd_worker *w);
	void (*worker_fini)(struct fwd_worker *w);
	/* Optional stats: the mode's numbers into a sample; its words on the first line of a
	 * block and its member of a JSON object (",\"NAME\":{...}"); and what SIGUSR1 prints below
	 * the block (l2: the MAC table). */
	void (*sample)(struct fwd_ctx *ctx, struct fwd_samples *s);
	void (*print_head)(FILE *out, const struct fwd_samples *cur);
	void (*print_json)(FILE *out, const struct fwd_samples *cur);
	void (*print_table)(FILE *out, const struct fwd_ctx *ctx, uint64_t now_ns, double t);
	/* Optional. The steering rules the mode added of its own (l3: its addresses' pass rules),
	 * which a reload replacing the -r rules keeps: appended to rules/texts from n (at most
	 * max), the new count. */
	uint32_t (*own_rules)(const struct fwd_ctx *ctx, struct umem_steer_rule *rules, const char **texts, uint32_t n,
			      uint32_t max);
	/* Optional. The main thread's control work (l3: the routing mirror's events): the loop
	 * waits for control_fd (>= 0) as well as for signals and calls control when it is
	 * readable and at every tick. */
	int (*control_fd)(const struct fwd_ctx *ctx);
	void (*control)(struct fwd_ctx *ctx, uint64_t now_ns);
	/* Optional (--offload-after, offload.c): what the steering program of the flow's input
	 * interface must do to forward a 5-tuple flow of key (ingress ifindex in key) as the mode
	 * would, for a mode that rewrites frames (l3: UMEM_STEER_FLOW_F_ROUTE): fl's redirect
	 * index and rewrite, and the output port for a frame from port in. false: the flow stays
	 * in userspace. From worker worker's thread, or the main thread (worker -1). */
	bool (*offload_target)(struct fwd_ctx *ctx, int worker, uint32_t in, const struct umem_steer_flow_key *key,
			       uint32_t *out, struct umem_steer_flow *fl);
};

#define FWD_MODE_OPS(id, name, ...) extern const struct fwd_mode_ops fwd_mode_##name;
FWD_MODES(FWD_MODE_OPS)
#undef FWD_MODE_OPS
/* The room of a mode (NULL: no such mode). */
const struct fwd_mode_ops *fwd_mode_of(enum fwd_mode mode);

#endif
