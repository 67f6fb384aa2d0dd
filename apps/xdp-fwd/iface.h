/* SPDX-License-Identifier: MIT */
/*
 * xdp-fwd interfaces: one object per interface its ports are on, as the kernel's net_device
 * holds what is per device and its drivers hang their private state off it. A port reaches its
 * interface in O(1) (ctx->ifaces[ctx->ports[i].iface]); what a mode or a feature keeps per
 * interface is one member here (offload's below; the router's next), never an array of its
 * own indexed by interface or by an interface's first port.
 *
 * Data only, as ctx.h: what is done to an interface is in ports.h (its ports and steering) and
 * netif.h (what the kernel says about the device).
 */
#ifndef XDP_FWD_IFACE_H
#define XDP_FWD_IFACE_H

#include <net/if.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <umem/steer.h>

#include "fwd.h"
#include "rules.h"
#include "stats.h"
#include "sys.h"

struct fwd_off_iface;

struct fwd_iface {
	char name[IF_NAMESIZE];
	uint32_t idx;   /* its place in ctx->ifaces */
	uint32_t first; /* its first port (lowest index; its line carries the interface's counts) */
	/* The ifindex its ports are open on, 0 while closed. Link events are matched by it: a name
	 * is only how an interface is found, and a rename (m1 to m9, a new m1 created) leaves
	 * the ports on the old device under a name that is no longer theirs (live.c). */
	uint32_t ifindex;
	/* --rule, --offload-after: its steering program (NULL: none, or the interface is gone);
	 * the ids the -r rules got on it; what the programs closed so far counted; the table
	 * generation last checked for live edits; the rules the stats show. */
	struct umem_steer *steer;
	uint32_t rule_id[FWD_MAX_RULES];
	struct fwd_steer_sample steer_base;
	/* This program's counters as last read, and what they had counted before they went down
	 * (umem-steer reset zeroes them): carried forward, so totals keep it and intervals never
	 * go back. */
	struct fwd_steer_sample steer_raw, steer_reset;
	uint64_t steer_gen;
	/* Live edits already checked (live.c): the table's rules as last seen, the prefix ids. */
	struct umem_steer_rule live_table[UMEM_STEER_MAX_RULES];
	uint32_t live_nr;
	struct fwd_prefix_scan live_scan;
	struct fwd_rule_view steer_view;
	/* --pinned: the table's default action and flags before xdp-fwd set its own, put back when
	 * it closes the program (which stays: the pins hold it). */
	struct umem_steer_action pin_default;
	uint32_t pin_flags;
	/* The kernel's tx_dropped as last read (main thread): the ifindex it was read on, and the
	 * count widened (not seen: gone, or not read yet, so the next read is a new base). */
	uint32_t tx_kernel_ifindex;
	struct fwd_wide32 tx_kernel_dropped;
	bool link_down; /* down or without carrier at the last sample, or gone */
	/* Every port of it removed while running (portlive.c): nothing attached, never reopened by
	 * a link event, left out of floods; adding a port of it again brings it back. */
	bool removed;
	struct fwd_off_iface *off; /* --offload-after: offload's state of it (offload_internal.h) */
	struct {
		/* The frames it routes are addressed to this MAC (6 bytes copied into the word):
		 * the main thread follows the link's address, workers compare. */
		_Atomic uint64_t mac;
		/* The source of the ICMP errors it sends: an address of the interface (else of
		 * the namespace) from the mirror, [0] IPv4 (0: none), [1..2] IPv6 (zero: none).
		 * The main thread writes them under src_seq (odd while it does), workers read. */
		_Atomic uint32_t src_seq;
		_Atomic uint64_t src[3];
		uint32_t src_ifindex; /* the ifindex src was chosen for (main thread) */
	} l3;              /* --mode l3 (mode_l3.c) */
};

/* The interface named ifname among ifaces[0..n), or NULL when no port of ours is on it. */
static inline struct fwd_iface *fwd_iface_find(struct fwd_iface *ifaces, uint32_t n, const char *ifname)
{
	for (uint32_t f = 0; f < n; f++)
		if (!strcmp(ifaces[f].name, ifname))
			return &ifaces[f];
	return NULL;
}

#endif
