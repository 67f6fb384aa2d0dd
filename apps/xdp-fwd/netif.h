/* SPDX-License-Identifier: MIT */
/* xdp-fwd: what the kernel says about an interface (MTU, carrier, channels, tx_dropped), and
 * the warnings at start that come of it. */
#ifndef XDP_FWD_NETIF_H
#define XDP_FWD_NETIF_H

#include <stdbool.h>
#include <stdint.h>

struct fwd_ctx;

/* The kernel's TX drops of every interface (its link stats' tx_dropped) into its first port's
 * counters, as the increase since the last read. */
void fwd_ifaces_read_tx_kernel(struct fwd_ctx *ctx);
/* Each interface's link state (up with a carrier) into f->link_down. */
void fwd_ifaces_read_links(struct fwd_ctx *ctx);

/* What the kernel says about ifname in this namespace: its MTU (0: unknown); whether it is up
 * with a carrier; the most RX queues `ethtool -L` can give it (0: the driver does not say). */
uint32_t fwd_ifname_mtu(const char *ifname);
bool fwd_ifname_running(const char *ifname);
uint32_t fwd_ifname_queue_max(const char *ifname);
/* Warnings at start: interfaces down or without carrier; RX queues no port serves. */
void fwd_ifaces_warn(const struct fwd_ctx *ctx);

#endif
