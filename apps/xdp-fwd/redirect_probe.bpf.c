// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * xdp-fwd's delivery probe: run once through BPF_PROG_RUN in live-frame mode with the target
 * as the frame's ingress device, it redirects the frame to that device, so the frame takes the
 * same ndo_xdp_xmit path as an offloaded flow's. The target's XDP transmit counters then say
 * whether it takes redirected frames, before any flow's frames depend on it.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int redirect_probe(struct xdp_md *ctx)
{
	return bpf_redirect(ctx->ingress_ifindex, 0);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
