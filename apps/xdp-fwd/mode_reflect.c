/* SPDX-License-Identifier: MIT */
/* --mode reflect: swap MACs, send back out of the input port (a loopback tester). */
#include "mode.h"
#include "path.h"

static void reflect_burst(struct fwd_worker *w, uint32_t in, struct umem_desc *d, uint32_t n, uint64_t now)
{
	fwd_worker_route(w, FWD_MODE_REFLECT, in, d, n, now);
}

const struct fwd_mode_ops fwd_mode_reflect = {
	.burst = reflect_burst,
};
