/* SPDX-License-Identifier: MIT */
/*
 * --metrics [ADDR:]PORT and --metrics-file PATH: every counter of the stats in the Prometheus
 * text format. The main thread renders the text at each stats sample (the one the interval
 * lines come from) and publishes it under a mutex; libmicrohttpd's thread copies the last text
 * out under that mutex for each scrape. Workers never take the mutex nor see a scrape.
 */
#ifndef XDP_FWD_METRICS_H
#define XDP_FWD_METRICS_H

#include <stdio.h>

#include "stats.h"

struct fwd_ctx;
struct fwd_metrics;

/* Binds the listening socket (before set-up: a port in use changes nothing). NULL with a
 * message on stderr when it cannot; with neither option, NULL and errno 0. */
struct fwd_metrics *fwd_metrics_open(const struct fwd_config *cfg);
/* The same with fd, a socket already listening at --metrics (handed over by the instance taken
 * over); fd < 0: as fwd_metrics_open. */
struct fwd_metrics *fwd_metrics_open_fd(const struct fwd_config *cfg, int fd);
/* The listening socket (-1 when none), given up: no scrape is taken any more, the ones under
 * way finish. Still m's (closed at fwd_metrics_close): handover.c sends a copy of it. */
int fwd_metrics_release(struct fwd_metrics *m);
/* Starts the HTTP thread (after the capabilities are dropped: it inherits none). 0 or -errno. */
int fwd_metrics_start(struct fwd_metrics *m);
/* Renders the counters since start (as the totals count them), serves them from now on and
 * writes --metrics-file (temp file + rename). Main thread. */
void fwd_metrics_publish(struct fwd_metrics *m, const struct fwd_ctx *ctx, const struct fwd_samples *start,
			 const struct fwd_samples *cur);
void fwd_metrics_close(struct fwd_metrics *m);
/* The text itself (exposition format 0.0.4). */
void fwd_metrics_render(FILE *out, const struct fwd_ctx *ctx, const struct fwd_samples *start,
			const struct fwd_samples *cur);
/* Every metric family the text can hold, whatever the options, one "NAME TYPE" line each (as
 * the TYPE lines name them): what a dashboard or an alert may use. 0 or -ENOMEM. */
int fwd_metrics_families(FILE *out);

#endif
