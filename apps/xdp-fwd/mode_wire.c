/* SPDX-License-Identifier: MIT */
/* --mode wire: ports in pairs, 0<->1, 2<->3: a cable. */
#include "mode.h"
#include "path.h"

static void wire_burst(struct fwd_worker *w, uint32_t in, struct umem_desc *d, uint32_t n, uint64_t now)
{
	fwd_worker_route(w, FWD_MODE_WIRE, in, d, n, now);
}

const struct fwd_mode_ops fwd_mode_wire = {
	.burst = wire_burst,
};
