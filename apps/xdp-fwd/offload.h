/* SPDX-License-Identifier: MIT */
/*
 * xdp-fwd --offload-after N: userspace forwards a flow's first N frames, then installs it in the
 * steering program's flow table, which redirects the rest in the kernel (wire: the paired
 * interface, 5-tuple flows; l2: the learned port's interface, by destination MAC, unicast only;
 * l3: the route's interface, 5-tuple flows, the program rewriting MACs and TTL as the router does).
 *
 * Each worker keeps its own table of the flows it sees (a flow arrives on one port, so on one
 * worker) and drives their state: counting -> arming (installed with the ordered gate: its frames
 * still come to userspace until userspace holds none) -> offloaded, and back to counting when the
 * flow idles out, its MAC moves or ages out, or it reappears in userspace (evicted). Floods,
 * ARP/ND, frames a --rule matches and frames without a flow key stay in userspace.
 */
#ifndef XDP_FWD_OFFLOAD_H
#define XDP_FWD_OFFLOAD_H

#include <stdint.h>
#include <umem/port.h>

#include "stats.h"

struct fwd_ctx;
struct fwd_worker;

/* After the ports and the steering programs exist; 0 or negative errno. No-op when off (ctx->off
 * stays NULL, and the workers call nothing here). */
int fwd_offload_init(struct fwd_ctx *ctx);
void fwd_offload_fini(struct fwd_ctx *ctx);
/* Before the totals, workers stopped: the loss count on the counts as they are, the frames in
 * flight sent first (a millisecond; at most 20 when frames were lost). */
void fwd_offload_settle(struct fwd_ctx *ctx);
/* Main thread, workers parked. Interface f's steering program is about to go (the interface is
 * gone): its flows leave the kernel, and so do the other interfaces' flows towards it (the
 * kernel drops a device's devmap entries with it); what its counters said is kept. */
void fwd_offload_iface_down(struct fwd_ctx *ctx, uint32_t f);
/* Main thread, workers parked: port i is removed while its interface stays (portlive.c): the
 * flows installed from it or towards it leave the kernel, their frames back to userspace. */
void fwd_offload_port_down(struct fwd_ctx *ctx, uint32_t i);
/* Main thread, workers parked: interface f has a new steering program (the interface is
 * back). 0 or negative errno; on error that interface is not offloaded to. */
int fwd_offload_iface_up(struct fwd_ctx *ctx, uint32_t f);
/* The worker's stage, with ctx->off set: a burst d[0..n) received on port in was routed (not
 * yet transmitted); once per loop turn, after the transmits; the longest the worker may sleep
 * without frames, in ms (its checks run in the turns), negative: no limit. Offload calls
 * nothing of the worker back. */
void fwd_offload_burst(struct fwd_worker *w, uint32_t in, const struct umem_desc *d, uint32_t n, uint64_t now);
/* Before anything reads a burst d[0..n) received on port in (counts included): the gate marks
 * the steering program put in front of frames' data (where they have no XDP metadata) taken
 * off, so that each sits right before its frame, where a metadata mark would. */
void fwd_offload_unwrap(struct fwd_worker *w, uint32_t in, struct umem_desc *d, uint32_t n);
/* Before anything else reads a burst d[0..n) received on port in: the frames of a draining gate
 * (gate.h) moved to dropped[0..) in order, the others kept in d, in order; returns how many
 * were kept (the worker drops the rest, counted as gate_drain). */
uint32_t fwd_offload_filter(struct fwd_worker *w, uint32_t in, struct umem_desc *d, uint32_t n,
			    struct umem_desc *dropped);
void fwd_offload_tick(struct fwd_worker *w, uint64_t now);
int fwd_offload_max_sleep_ms(const struct fwd_worker *w);
/* Main thread, after the mode's tables changed (l3: the routing mirror applied events): the
 * flows whose rewrite moved (route, next hop's MAC, output interface or MTU) leave the kernel
 * now, their frames back to userspace, which forwards them by the new tables; each worker checks
 * its own flows again at its next turn (a flow it installed from the old tables meanwhile). */
void fwd_offload_routes_changed(struct fwd_ctx *ctx);
/* Main thread: the descriptors of interface f's flow table maps into out (a handover's): their
 * count, 0 without offload; -ENOSPC when more than max. */
int fwd_offload_map_fds(struct fwd_ctx *ctx, uint32_t f, int *out, uint32_t max);
/* Main thread: the numbers of port i (zero unless it is the first port of its interface). */
void fwd_offload_sample(struct fwd_ctx *ctx, uint32_t port, struct fwd_offload_sample *out);

/* The tests' hooks (xdp-fwd-faults, live.c): the next N delivery probes fail with ENOMEM; the
 * worker sleeps this many ms right after each flow it installs (userspace stalled while the
 * program gates the flow's frames: a sure overload of its RX ring). */
extern uint32_t fwd_fault_probe_enomem;
extern uint32_t fwd_fault_install_stall_ms;

#endif
