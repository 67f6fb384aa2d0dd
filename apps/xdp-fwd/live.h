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

#include "worker.h"

/* What live.c does to ports and steering, given by its caller (main.c: the same code as at
 * start), so that calls run one way: main.c -> live.c. */
struct fwd_live_ops {
	int (*open_port)(struct fwd_ctx *ctx, uint32_t i);
	void (*close_port)(struct fwd_ctx *ctx, uint32_t i);
	/* Steering of the interface whose first port is first: attach with every rule and
	 * register the sockets of its open ports; detach. */
	int (*open_steering)(struct fwd_ctx *ctx, uint32_t first);
	void (*close_steering)(struct fwd_ctx *ctx, uint32_t first);
	/* Registers (on) or removes the sockets of the interface's open ports in its map. */
	int (*steer_sockets)(struct fwd_ctx *ctx, uint32_t first, bool on);
	/* -i IFNAME@all: a port (closed) for a queue `ethtool -L` added, its index or -errno;
	 * and the l2 output choice again once ports opened or closed. */
	int (*add_port)(struct fwd_ctx *ctx, uint32_t spec, uint32_t queue);
	void (*map_ports)(struct fwd_ctx *ctx);
};

/* Subscribes to link events (before capabilities are dropped; it needs none) and notes the
 * ifindex each interface is open on; ops is kept. 0 or -errno. */
int fwd_live_open(struct fwd_ctx *ctx, const struct fwd_live_ops *ops);
/* Handles every pending event. */
void fwd_live_poll(struct fwd_ctx *ctx);
void fwd_live_close(struct fwd_ctx *ctx);

#endif
