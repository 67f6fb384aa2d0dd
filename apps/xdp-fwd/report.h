/* SPDX-License-Identifier: MIT */
/* xdp-fwd's report of a run: samples of every counter, printed as lines or JSON. Main thread. */
#ifndef XDP_FWD_REPORT_H
#define XDP_FWD_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "stats.h"

struct fwd_ctx;

/* Every counter of the run now into s (the interfaces' tx_dropped and link state read first). */
void fwd_report_sample(struct fwd_ctx *ctx, struct fwd_samples *s);
/* One interval (or, with kind "total" and prev == start, the whole run) to out, as lines or
 * JSON (--json; with --json-totals its counts are from start, its rates over the interval). */
void fwd_print_stats(FILE *out, const struct fwd_ctx *ctx, const struct fwd_samples *start,
		     const struct fwd_samples *prev, const struct fwd_samples *cur, double dt, double t,
		     const char *kind);
/* Interfaces with a steering program (--rule): each gets a line. */
uint32_t fwd_steered_interfaces(const struct fwd_ctx *ctx);
/* Interfaces with several ports: each gets a sum line after the per-queue lines. */
uint32_t fwd_multi_queue_interfaces(const struct fwd_ctx *ctx);

#endif
