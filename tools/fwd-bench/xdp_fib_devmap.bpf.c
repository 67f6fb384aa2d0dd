// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The kernel's XDP router for tools/fwd-bench's router topology: per frame, bpf_fib_lookup() on
 * the namespace's own tables (route and neighbour), the TTL or hop limit down by one, both MACs
 * rewritten, and XDP_REDIRECT through a devmap to the route's interface. Frames the lookup
 * cannot finish here (the router's own addresses, TTL <= 1, an unresolved neighbour, no route,
 * forwarding off) go to the kernel, which answers them as a router does.
 *
 * The devmap is keyed by the egress ifindex (the loader adds every attached interface), so a
 * route out of an interface that is not attached is passed to the kernel rather than dropped.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define AF_INET 2
#define AF_INET6 10

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, 64);
	__type(key, __u32);   /* egress ifindex */
	__type(value, __u32); /* the same ifindex */
} fib_ports SEC(".maps");

/* TTL down by one with the header checksum updated incrementally (RFC 1624 eqn. 3: the 16-bit
 * word holding the TTL drops by 0x0100, so its one's complement sum rises by the same). */
static __always_inline void ipv4_ttl_dec(struct iphdr *ip)
{
	__u32 sum = ip->check + bpf_htons(0x0100);

	ip->check = (__u16)(sum + (sum >= 0xffff));
	ip->ttl--;
}

SEC("xdp.frags")
int xdp_fib_devmap(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	struct bpf_fib_lookup fib = { .ifindex = ctx->ingress_ifindex };
	struct ethhdr *eth = data;
	struct ipv6hdr *ip6 = (void *)(eth + 1);
	struct iphdr *ip = (void *)(eth + 1);

	if ((void *)(eth + 1) > data_end)
		return XDP_PASS;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		if ((void *)(ip + 1) > data_end || ip->ttl <= 1)
			return XDP_PASS;
		fib.family = AF_INET;
		fib.tos = ip->tos;
		fib.l4_protocol = ip->protocol;
		fib.tot_len = bpf_ntohs(ip->tot_len);
		fib.ipv4_src = ip->saddr;
		fib.ipv4_dst = ip->daddr;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		if ((void *)(ip6 + 1) > data_end || ip6->hop_limit <= 1)
			return XDP_PASS;
		fib.family = AF_INET6;
		fib.flowinfo = *(__be32 *)ip6 & bpf_htonl(0x0fffffff);
		fib.l4_protocol = ip6->nexthdr;
		fib.tot_len = bpf_ntohs(ip6->payload_len);
		__builtin_memcpy(fib.ipv6_src, &ip6->saddr, sizeof(fib.ipv6_src));
		__builtin_memcpy(fib.ipv6_dst, &ip6->daddr, sizeof(fib.ipv6_dst));
	} else {
		return XDP_PASS;
	}
	if (bpf_fib_lookup(ctx, &fib, sizeof(fib), 0) != BPF_FIB_LKUP_RET_SUCCESS ||
	    !bpf_map_lookup_elem(&fib_ports, &fib.ifindex))
		return XDP_PASS;
	/* The bounds are checked again: the verifier does not carry them across the helper call. */
	if (fib.family == AF_INET && (void *)(ip + 1) <= data_end)
		ipv4_ttl_dec(ip);
	else if (fib.family == AF_INET6 && (void *)(ip6 + 1) <= data_end)
		ip6->hop_limit--;
	__builtin_memcpy(eth->h_dest, fib.dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, fib.smac, ETH_ALEN);
	return bpf_redirect_map(&fib_ports, fib.ifindex, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
