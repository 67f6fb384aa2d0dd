/* SPDX-License-Identifier: MIT */
/*
 * xdp-fwd and live interface changes (rtnetlink link events, linkwatch.c), handled by the main
 * thread with every worker parked:
 *  - an interface deleted: its ports are closed at once (every frame back in its pool) and
 *    frames routed to them are counted as drops ("down"); when an interface of that name comes
 *    back, its ports are opened again (cfg->reattach, on by default);
 *  - an MTU raised beyond one chunk on a forwarder without multi-buffer: every port is reopened
 *    with multi-buffer (the setting is UMEM-wide); where that is not possible, it says so
 *    loudly and stops the port instead of letting the kernel drop large frames silently;
 *  - -i IFNAME@all and `ethtool -L`: ports opened for the queues added (in wire mode a pair
 *    once both interfaces have the queue), closed for the queues removed.
 * A bind on a queue the kernel has not released yet waits with the workers running between its
 * tries (fwd_workers_run_for), so the other ports forward meanwhile.
 */
#ifndef XDP_FWD_LIVE_H
#define XDP_FWD_LIVE_H

#include <stdint.h>

struct fwd_ctx;

/* Subscribes to link events (before capabilities are dropped; it needs none) and notes the
 * ifindex each interface is open on. Ports and steering open and close through ports.h, as at
 * start. 0 or -errno. */
int fwd_live_open(struct fwd_ctx *ctx);
/* Handles every pending event. */
void fwd_live_poll(struct fwd_ctx *ctx);
void fwd_live_close(struct fwd_ctx *ctx);

#endif
