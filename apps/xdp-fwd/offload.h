/* SPDX-License-Identifier: MIT */
/*
 * xdp-fwd --offload-after N: userspace forwards a flow's first N frames, then installs it in the
 * steering program's flow table, which redirects the rest in the kernel (wire: the paired
 * interface, 5-tuple flows; l2: the learned port's interface, by destination MAC, unicast only).
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

/* After the ports and the steering programs exist; 0 or negative errno. No-op when off. Sets
 * ctx->flow_ops: the workers call offload through it (worker.h), offload never the loop. */
int fwd_offload_init(struct fwd_ctx *ctx);
void fwd_offload_fini(struct fwd_ctx *ctx);
/* Main thread, workers parked. Interface f's steering program is about to go (the interface is
 * gone): its flows leave the kernel, and so do the other interfaces' flows towards it (the
 * kernel drops a device's devmap entries with it); what its counters said is kept. */
void fwd_offload_iface_down(struct fwd_ctx *ctx, uint32_t f);
/* Main thread, workers parked: port first's interface has a new steering program (the
 * interface is back). 0 or negative errno; on error that interface is not offloaded to. */
int fwd_offload_iface_up(struct fwd_ctx *ctx, uint32_t first);
/* Main thread: the numbers of port i (zero unless it is the first port of its interface). */
void fwd_offload_sample(struct fwd_ctx *ctx, uint32_t port, struct fwd_offload_sample *out);

/* The tests' hook (xdp-fwd-faults, live.c): the next N delivery probes fail with ENOMEM. */
extern uint32_t fwd_fault_probe_enomem;

#endif
