/* SPDX-License-Identifier: MIT */
/* xdp-fwd data path: the workers' threads, each owning one pool and the ports dealt to it
 * (the state they run on: ctx.h). */
#ifndef XDP_FWD_WORKER_H
#define XDP_FWD_WORKER_H

#include <stdbool.h>
#include <stdint.h>

struct fwd_ctx;
struct fwd_port;

/* Allocates the queues and staging buffers (the ports and pools exist already). */
int fwd_workers_init(struct fwd_ctx *ctx);
void fwd_workers_fini(struct fwd_ctx *ctx);
int fwd_workers_start(struct fwd_ctx *ctx);
void fwd_workers_join(struct fwd_ctx *ctx);
/* Main thread: stops every running worker at the top of its loop (nothing staged, no port in
 * use) so that ports can be closed and reopened, then lets them go on. Park returns false when
 * the workers are stopping instead (nothing is parked then). */
bool fwd_workers_park(struct fwd_ctx *ctx);
void fwd_workers_unpark(struct fwd_ctx *ctx);
/* Main thread, workers parked: lets them run for ms, then parks them again. The wait of a port
 * bind on a queue the kernel has not released yet (umem_port_opts.rebind_wait, arg the ctx), so
 * that the other ports forward meanwhile. -ECANCELED when they stop instead: it returns once
 * every worker has exited, so the caller may still close ports. */
int fwd_workers_run_for(void *ctx, uint32_t ms);
/* Reads the port's kernel drop counters into its base before the port is closed. */
void fwd_port_save_kernel_stats(struct fwd_port *p);

#endif
