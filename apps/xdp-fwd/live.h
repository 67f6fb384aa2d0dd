/* SPDX-License-Identifier: MIT */
/*
 * xdp-fwd and live interface changes (rtnetlink link events, linkwatch.c), handled by the main
 * thread with every worker parked:
 *  - an interface deleted: its ports are closed at once (every frame back in its pool) and
 *    frames routed to them are counted as drops ("down"); when an interface of that name comes
 *    back, its ports are opened again (cfg->reattach, on by default);
 *  - an MTU raised beyond one chunk on a forwarder without multi-buffer: every port is reopened
 *    with multi-buffer (the setting is UMEM-wide); where that is not possible, it says so
 *    loudly and stops the port instead of letting the kernel drop large frames silently.
 */
#ifndef XDP_FWD_LIVE_H
#define XDP_FWD_LIVE_H

#include "worker.h"

/* Implemented by main.c (the same code as at start). */
int fwd_open_port(struct fwd_ctx *ctx, uint32_t i);
void fwd_close_port(struct fwd_ctx *ctx, uint32_t i);
/* Steering of the interface whose first port is first: attach with every rule and register
 * the sockets of its open ports; detach. */
int fwd_open_steering(struct fwd_ctx *ctx, uint32_t first);
void fwd_close_steering(struct fwd_ctx *ctx, uint32_t first);
/* Registers (on) or removes the sockets of the interface's open ports in its steering map. */
int fwd_steer_sockets(struct fwd_ctx *ctx, uint32_t first, bool on);

/* Subscribes to link events (before capabilities are dropped; it needs none). 0 or -errno. */
int fwd_live_open(struct fwd_ctx *ctx);
/* Handles every pending event. */
void fwd_live_poll(struct fwd_ctx *ctx);
void fwd_live_close(struct fwd_ctx *ctx);

#endif
