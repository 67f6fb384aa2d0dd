// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The kernel's own forwarding baseline for tools/fwd-bench: XDP_REDIRECT through a devmap,
 * frames never leave the kernel. The map is keyed by the ingress ifindex and names the egress
 * device (a port pair is two entries), so one program serves every attached interface.
 *
 * "xdp.frags": multi-buffer aware, so the veths keep MTU 9000 and 64000 (a non-frags program
 * caps the peer's MTU near 3500) and frames larger than a page are redirected whole.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);   /* ingress ifindex */
	__type(value, __u32); /* egress ifindex */
} tx_ports SEC(".maps");

SEC("xdp.frags")
int xdp_redirect_devmap(struct xdp_md *ctx)
{
	/* An interface without an entry drops: a forwarder in the middle has no stack to pass to. */
	return bpf_redirect_map(&tx_ports, ctx->ingress_ifindex, XDP_DROP);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
