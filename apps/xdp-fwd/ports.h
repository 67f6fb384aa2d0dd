/* SPDX-License-Identifier: MIT */
/*
 * xdp-fwd ports and steering, per interface: opening and closing them at start (main.c) and
 * live (live.c) alike, on the main thread, with the workers parked whenever a port they drive
 * changes. One way: main.c and live.c call here; nothing here calls them.
 */
#ifndef XDP_FWD_PORTS_H
#define XDP_FWD_PORTS_H

#include <stdbool.h>
#include <stdint.h>

#include "iface.h"
#include "stats.h"

struct fwd_ctx;

/* The interfaces of ctx's ports, numbered in order of their first port (set-up), and a port
 * added live joins its interface. */
void fwd_ifaces_map(struct fwd_ctx *ctx);
/* Whether any port of f is open. */
bool fwd_iface_open(const struct fwd_ctx *ctx, const struct fwd_iface *f);

/* Ports (ports.c). Opening a prepared port binds it. */
int fwd_port_open(struct fwd_ctx *ctx, uint32_t i);
/* --takeover: port i (the area's first) created unbound before the handover, so that the
 * area's registration as UMEM (every page pinned) is not in the gap. 0 or -errno (then it is
 * opened as any other). */
int fwd_port_prepare(struct fwd_ctx *ctx, uint32_t i);
/* Counts what the port still holds (unread RX: down; unread TX: tx_unsent); workers stopped. */
void fwd_port_settle(struct fwd_ctx *ctx, uint32_t i);
/* Counts what the kernel still held (received, or queued and never sent) and destroys it. */
void fwd_port_close(struct fwd_ctx *ctx, uint32_t i);
/* The same for every open port, destroyed together (one grace period, the sockets closed at
 * once: umem_port__destroy_bulk): a stop, a handover. */
void fwd_ports_close(struct fwd_ctx *ctx);
/* Deals the ports to the workers (set-up). */
void fwd_ports_assign(struct fwd_ctx *ctx);
/* -i IFNAME@all: a port (closed) for a queue `ethtool -L` added (workers parked): its index
 * or -errno. */
int fwd_port_add(struct fwd_ctx *ctx, uint32_t spec, uint32_t queue);
/* l2: the output port towards each interface, from each input (again after ports opened or
 * closed). */
void fwd_ports_map_vias(struct fwd_ctx *ctx);

/* Steering: a program on f with every rule, the sockets of its open ports registered at the
 * index of their queue; detached (its counts kept); the sockets registered (on) or removed. */
int fwd_iface_steer_open(struct fwd_ctx *ctx, struct fwd_iface *f);
void fwd_iface_steer_close(struct fwd_ctx *ctx, struct fwd_iface *f);
int fwd_iface_steer_sockets(struct fwd_ctx *ctx, struct fwd_iface *f, bool on);
/* The steering counts of f: those of its programs closed so far plus the attached one's. */
void fwd_iface_steer_sample(const struct fwd_ctx *ctx, struct fwd_iface *f, struct fwd_steer_sample *out);

#endif
