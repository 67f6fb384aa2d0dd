// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libumem's default port program: each frame goes to the AF_XDP socket registered for its RX
 * queue; frames of queues without a socket continue up the stack (XDP_PASS).
 *
 * "xdp.frags" marks it multi-buffer aware: without it a veth refuses a peer MTU above ~3500
 * and frames larger than a page never reach a socket bound with XDP_USE_SG.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

/* Sized by the loader to the device's queue count before loading. */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

SEC("xdp.frags")
int xsk_redirect(struct xdp_md *ctx)
{
	/* The flags argument is the action taken when the queue has no socket (kernel >= 5.3). */
	return bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
