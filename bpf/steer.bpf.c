// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * XDP steering: per frame, pick the AF_XDP socket that gets it, or the kernel, or nobody.
 *
 * A frame of a flow the rules already let decide goes first (flow_fast, struct umem_steer_flow's
 * rules_gen). Any other frame is parsed once into struct pkt (which fields it carries, and their values); the
 * rules are then scanned in priority order and the first whose fields are all present and
 * equal decides. Every header read is bounds-checked against data_end, and a header that is
 * cut short or invalid (IHL < 5, a length beyond the frame) stops the parse: the fields behind
 * it are absent, so no rule that needs them can match.
 *
 * Multi-buffer (xdp.frags): headers are read from the first buffer, which on every driver we
 * know (and on veth) holds at least the first 256 bytes; lengths are checked against the whole
 * frame (bpf_xdp_get_buff_len), so a jumbo frame is steered like any other.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <umem/steer_abi.h>

#ifndef IPPROTO_ICMPV6
#define IPPROTO_ICMPV6 58
#endif
#define NEXTHDR_HOP 0
#define NEXTHDR_ROUTING 43
#define NEXTHDR_FRAGMENT 44
#define NEXTHDR_DEST 60
#define ETH_P_8021AD_ 0x88A8

/* 0 where the kernel lets no XDP program call bpf_xdp_adjust_meta (a build without the helper
 * refuses the whole program): the loader probes and sets it before the load, the verifier then
 * skips the calls (a loader with CAP_PERFMON, as xdp-fwd is: without it the verifier also walks
 * the skipped branch), and gated frames are marked in front of their data where the flow asks
 * so, else go unmarked, as on a driver that takes no metadata. */
const volatile __u8 steer_meta = 1;
/* The same for bpf_xdp_adjust_head, the marks in front of the data (UMEM_STEER_FLOW_F_MARK_DATA). */
const volatile __u8 steer_head = 1;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct umem_steer_table);
} steer_tables SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} steer_active SEC(".maps");

/* Sized by the loader (umem_steer_opts.nr_sockets) before load. */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} steer_xsks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UMEM_STEER_NR_RULE_STATS);
	__type(key, __u32);
	__type(value, struct umem_steer_counter);
} steer_rstats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UMEM_STEER_S_NR);
	__type(key, __u32);
	__type(value, struct umem_steer_counter);
} steer_astats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct umem_steer_trace);
} steer_trace SEC(".maps");

/* Flow tables (see steer_abi.h): IPv4 5-tuples by their own short key, the other kinds by the
 * whole one. LRU: a table filled behind the control API's back (it counts and refuses beyond
 * its limit) loses its coldest flow, which returns to the default path, rather than refusing new
 * ones. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, UMEM_STEER_MAX_FLOWS);
	__type(key, struct umem_steer_flow_key);
	__type(value, struct umem_steer_flow);
} steer_flows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, UMEM_STEER_MAX_FLOWS);
	__type(key, struct umem_steer_flow_key4);
	__type(value, struct umem_steer_flow);
} steer_flows4 SEC(".maps");

/* ORDERED flows: frames userspace has sent since the flow was added (written by userspace),
 * by the whole key for every kind: only a gated frame looks here. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UMEM_STEER_MAX_FLOWS);
	__type(key, struct umem_steer_flow_key);
	__type(value, __u64);
} steer_fgate SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UMEM_STEER_FS_NR);
	__type(key, __u32);
	__type(value, struct umem_steer_counter);
} steer_fstats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct umem_steer_flow_conf);
} steer_fconf SEC(".maps");

/* Redirect targets of flows, keyed by ifindex (filled by the control API). */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u32);
} steer_devs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, UMEM_STEER_MAX_L2_SOURCES);
	__type(key, struct umem_steer_l2_source_key);
	__type(value, struct umem_steer_l2_source);
} steer_l2src SEC(".maps");

/* Prefix rules by source and destination address (see steer_abi.h): one map type, two maps. */
struct prefix_trie {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, UMEM_STEER_MAX_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct umem_steer_prefix_key);
	__type(value, struct umem_steer_prefix_rules);
};
struct prefix_trie steer_psrc SEC(".maps");
struct prefix_trie steer_pdst SEC(".maps");

/* Prefix rules' counters by rule id, apart from the tries so that an edit of a prefix (a
 * rewrite of its whole value) never touches a count. Shared by the CPUs (atomic adds): a
 * per-CPU entry would cost 16 bytes per CPU and rule, and is allocated from the percpu
 * allocator's atomic reserve, which a burst of adds runs dry (-ENOMEM). A hash element's value
 * sits 8-byte aligned after its key, as arm64's JIT needs for the atomic adds. The control API
 * creates a rule's entry, zeroed, before the rule shows in a trie, and deletes it after the
 * rule left; ids are not reused (see prefix_add_locked). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UMEM_STEER_MAX_PREFIX_RULES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct umem_steer_counter);
} steer_pstats SEC(".maps");

/* csum_verifies' view of a segment, a chunk at a time (the stack has no room for it). */
#define CSUM_CHUNK 512u /* bpf_csum_diff's largest buffer */
#define CSUM_CHUNKS 18u /* 9216 bytes: a jumbo frame's segment; longer ones are not verified */
struct csum_chunk {
	__u8 b[CSUM_CHUNK + 4]; /* + the zeros that round the last chunk up to whole words */
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct csum_chunk);
} steer_cchunk SEC(".maps");

struct pkt {
	/* The frame's fields in the rules' layout; f.fields says which the frame carries. */
	struct umem_steer_match f;
	__u8 icmp6_type;
	__u8 has_icmp6_type;
	__u8 malformed;
	__u8 frag; /* an IP fragment: hashed on addresses only, so a datagram's fragments stay together */
	__u8 router_kernel; /* TTL/hop limit <= 1 or IPv4 options: the kernel's (UMEM_STEER_F_ROUTER) */
	__u8 smac[6];
	/* The 5-tuple's address bytes (key layout), valid when kind is IPV4 or IPV6. */
	__u8 kind;
	__u8 saddr[16];
	__u8 daddr[16];
	/* TCP/UDP (ports present): the checksum field, and the transport length the IP header
	 * gives (the pseudo-header's). */
	__u16 l4_csum;
	__u16 l4_len;
	__u16 l4_off;
	/* csum_verifies ran (the field held the pseudo-header sum) and what it found. */
	__u8 csum_checked;
	__u8 csum_valid;
	__u8 flow4_missed; /* flow_fast looked the frame's IPv4 flow up and found none */
	/* IPv4/IPv6 (kind set): where the IP header starts, and the IP packet's length. */
	__u16 l3_off;
	__u16 ip_len;
};

static __always_inline __u32 mix32(__u32 h)
{
	/* murmur3 finalizer: cheap, and every input bit reaches every output bit. */
	h ^= h >> 16;
	h *= 0x85ebca6b;
	h ^= h >> 13;
	h *= 0xc2b2ae35;
	h ^= h >> 16;
	return h;
}

static __always_inline __u32 fold_mac(const __u8 *m)
{
	return mix32(((__u32)m[0] << 8 | m[1]) ^ mix32((__u32)m[2] << 24 | (__u32)m[3] << 16 |
						       (__u32)m[4] << 8 | m[5]));
}

static __always_inline __u32 fold_in6(const __u8 *b)
{
	const __u32 *a = (const __u32 *)b; /* 4-aligned in struct pkt */

	return mix32(a[0] ^ mix32(a[1] ^ mix32(a[2] ^ mix32(a[3]))));
}

/* A flow endpoint folded to 32 bits (dir 0: the source): its IP address when the frame has
 * one, else its MAC. Only a group's spread needs it, so it is not computed while parsing:
 * the steering program runs on the CPU that receives every frame. */
static __always_inline __u32 endpoint_fold(const struct pkt *p, __u32 dir)
{
	const __u8 *a = dir ? p->daddr : p->saddr;

	if (p->kind == UMEM_STEER_FLOW_IPV4)
		return mix32(*(const __u32 *)a);
	if (p->kind == UMEM_STEER_FLOW_IPV6)
		return fold_in6(a);
	return fold_mac(dir ? p->f.dmac : p->smac);
}

/* L4 ports (and the ICMPv6 type, for host control) at off; sets malformed if the transport
 * header is shorter than its minimum or runs past end_l3 (the end the IP length declares). */
static __always_inline void parse_l4(struct pkt *p, void *data, void *data_end, __u64 off, __u64 end_l3)
{
	__u32 need;

	switch (p->f.l4proto) {
	case IPPROTO_TCP: need = 20; break;
	case IPPROTO_UDP: need = 8; break;
	case IPPROTO_UDPLITE: need = 8; break;
	case IPPROTO_SCTP: need = 12; break;
	case IPPROTO_ICMPV6: need = 4; break;
	default: return;
	}
	/* off > 1024 never holds for real headers; the bound keeps the verifier's range of off small. */
	if (off + need > end_l3 || data + off + need > data_end || off > 1024) {
		p->malformed = 1;
		return;
	}
	if (p->f.l4proto == IPPROTO_ICMPV6) {
		p->icmp6_type = *(__u8 *)(data + off);
		p->has_icmp6_type = 1;
		return;
	}
	__be16 *ports = data + off;
	if (p->f.l4proto == IPPROTO_TCP || p->f.l4proto == IPPROTO_UDP) {
		/* Within need, checked again: the verifier keeps the smallest need of them all. */
		__be16 *csum = (void *)ports + (p->f.l4proto == IPPROTO_TCP ? 16 : 6);

		if ((void *)(csum + 1) <= data_end) {
			p->l4_csum = bpf_ntohs(*csum);
			p->l4_len = (__u16)(end_l3 - off);
			p->l4_off = (__u16)off;
		}
	}
	p->f.sport = bpf_ntohs(ports[0]);
	p->f.dport = bpf_ntohs(ports[1]);
	p->f.fields |= UMEM_STEER_M_SPORT | UMEM_STEER_M_DPORT;
}

static __always_inline void parse_ipv4(struct pkt *p, void *data, void *data_end, __u64 off, __u64 frame_len)
{
	struct iphdr *ip = data + off;
	__u32 hlen, tot;

	if ((void *)(ip + 1) > data_end || ip->version != 4 || ip->ihl < 5) {
		p->malformed = 1;
		return;
	}
	hlen = ip->ihl * 4;
	tot = bpf_ntohs(ip->tot_len);
	if (data + off + hlen > data_end || tot < hlen || off + tot > frame_len) {
		p->malformed = 1;
		return;
	}
	p->f.l4proto = ip->protocol;
	p->f.fields |= UMEM_STEER_M_L4PROTO;
	p->router_kernel = ip->ttl <= 1 || ip->ihl > 5;
	p->l3_off = (__u16)off;
	p->ip_len = (__u16)tot;
	__builtin_memcpy(p->saddr, &ip->saddr, 4);
	__builtin_memcpy(p->daddr, &ip->daddr, 4);
	p->kind = UMEM_STEER_FLOW_IPV4;
	p->f.fields |= UMEM_STEER_M_SRC | UMEM_STEER_M_DST;
	if (ip->frag_off & bpf_htons(0x3fff)) { /* MF or an offset */
		p->frag = 1;
		if (ip->frag_off & bpf_htons(0x1fff))
			return; /* only the first fragment carries the transport header */
	}
	parse_l4(p, data, data_end, off + hlen, off + tot);
}

static __always_inline void parse_ipv6(struct pkt *p, void *data, void *data_end, __u64 off, __u64 frame_len)
{
	struct ipv6hdr *ip6 = data + off;
	__u64 end;
	__u8 nh;

	if ((void *)(ip6 + 1) > data_end || ip6->version != 6) {
		p->malformed = 1;
		return;
	}
	end = off + sizeof(*ip6) + bpf_ntohs(ip6->payload_len);
	if (end > frame_len || ip6->payload_len == 0) { /* 0: jumbogram, not ours to parse */
		p->malformed = 1;
		return;
	}
	p->router_kernel = ip6->hop_limit <= 1;
	p->l3_off = (__u16)off;
	p->ip_len = (__u16)(end - off);
	__builtin_memcpy(p->saddr, &ip6->saddr, 16);
	__builtin_memcpy(p->daddr, &ip6->daddr, 16);
	p->kind = UMEM_STEER_FLOW_IPV6;
	p->f.fields |= UMEM_STEER_M_SRC | UMEM_STEER_M_DST;
	nh = ip6->nexthdr;
	off += sizeof(*ip6);
#pragma unroll
	for (int i = 0; i < UMEM_STEER_MAX_EXTHDR; i++) {
		__u8 *eh = data + off;

		if (nh != NEXTHDR_HOP && nh != NEXTHDR_ROUTING && nh != NEXTHDR_DEST && nh != NEXTHDR_FRAGMENT)
			break;
		if ((void *)(eh + 8) > data_end || off + 8 > end) {
			p->malformed = 1;
			return;
		}
		if (nh == NEXTHDR_FRAGMENT) {
			p->frag = 1;
			/* Offset != 0: no transport header here. */
			if ((eh[2] << 8 | eh[3]) & 0xfff8) {
				p->f.l4proto = eh[0];
				p->f.fields |= UMEM_STEER_M_L4PROTO;
				return;
			}
			nh = eh[0];
			off += 8;
			continue;
		}
		nh = eh[0];
		off += (eh[1] + 1) * 8;
	}
	if (nh == NEXTHDR_HOP || nh == NEXTHDR_ROUTING || nh == NEXTHDR_DEST || nh == NEXTHDR_FRAGMENT)
		return; /* more extension headers than we walk: protocol unknown */
	p->f.l4proto = nh;
	p->f.fields |= UMEM_STEER_M_L4PROTO;
	parse_l4(p, data, data_end, off, end);
}

/* frame_len: bpf_xdp_get_buff_len(), which the caller has read (a helper call spared). */
static __always_inline void parse(struct xdp_md *ctx, struct pkt *p, __u64 frame_len)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u64 off = sizeof(*eth);
	__u16 proto;

	p->f.queue = ctx->rx_queue_index;
	p->f.fields = UMEM_STEER_M_QUEUE;
	if ((void *)(eth + 1) > data_end) {
		p->malformed = 1;
		return;
	}
	__builtin_memcpy(p->f.dmac, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(p->smac, eth->h_source, ETH_ALEN);
	p->f.fields |= UMEM_STEER_M_DMAC;
	proto = bpf_ntohs(eth->h_proto);
#pragma unroll
	for (int i = 0; i < UMEM_STEER_MAX_VLAN; i++) {
		__u16 *tag = data + off;

		if (proto != ETH_P_8021Q && proto != ETH_P_8021AD_)
			break;
		if ((void *)(tag + 2) > data_end) {
			p->malformed = 1;
			return;
		}
		if (i == 0) {
			p->f.vlan = bpf_ntohs(tag[0]) & 0x0fff;
			p->f.fields |= UMEM_STEER_M_VLAN;
		}
		proto = bpf_ntohs(tag[1]);
		off += 4;
	}
	if (proto == ETH_P_8021Q || proto == ETH_P_8021AD_)
		return; /* more tags than we walk: the payload's ethertype is unknown */
	p->f.ethertype = proto;
	p->f.fields |= UMEM_STEER_M_ETHERTYPE;
	if (proto == ETH_P_IP)
		parse_ipv4(p, data, data_end, off, frame_len);
	else if (proto == ETH_P_IPV6)
		parse_ipv6(p, data, data_end, off, frame_len);
}

static __always_inline int rule_matches(const struct umem_steer_match *m, const struct umem_steer_match *frame)
{
	__u32 f = m->fields;

	if (f & ~frame->fields)
		return 0;
	if ((f & UMEM_STEER_M_QUEUE) && m->queue != frame->queue)
		return 0;
	if ((f & UMEM_STEER_M_ETHERTYPE) && m->ethertype != frame->ethertype)
		return 0;
	if ((f & UMEM_STEER_M_VLAN) && m->vlan != frame->vlan)
		return 0;
	if ((f & UMEM_STEER_M_L4PROTO) && m->l4proto != frame->l4proto)
		return 0;
	if ((f & UMEM_STEER_M_SPORT) && m->sport != frame->sport)
		return 0;
	if ((f & UMEM_STEER_M_DPORT) && m->dport != frame->dport)
		return 0;
	if (f & UMEM_STEER_M_DMAC) {
		for (int i = 0; i < ETH_ALEN; i++)
			if (m->dmac[i] != frame->dmac[i])
				return 0;
	}
	return 1;
}

/* Whether addr (of the frame's family) lies in the prefix, whose bits past len are zero. */
static __always_inline int in_prefix(const struct umem_steer_prefix *pf, const struct pkt *p, const __u8 *addr)
{
	__u32 len = pf->len;

	if (pf->family != (p->kind == UMEM_STEER_FLOW_IPV4 ? 4 : 6))
		return 0;
	for (int i = 0; i < 16; i++) {
		if (len == 0)
			break;
		if ((addr[i] & (len >= 8 ? 0xff : (__u8)(0xff << (8 - len)))) != pf->addr[i])
			return 0;
		len = len >= 8 ? len - 8 : 0;
	}
	return 1;
}

/* A prefix rule: the table's fields, then both prefixes (the one its trie found is checked
 * again: cheaper than telling the two apart, and a rule matches by its text alone). */
static __always_inline int prefix_rule_matches(const struct umem_steer_match *m, const struct pkt *p)
{
	if (!rule_matches(m, &p->f))
		return 0;
	if ((m->fields & UMEM_STEER_M_SRC) && !in_prefix(&m->src, p, p->saddr))
		return 0;
	if ((m->fields & UMEM_STEER_M_DST) && !in_prefix(&m->dst, p, p->daddr))
		return 0;
	return 1;
}

/* The first slot of v whose rule matches the frame, or UMEM_STEER_PREFIX_SLOTS. A global
 * function: verified once, not once per step of the walk (whose history it would overflow). */
__noinline int prefix_slot(const struct umem_steer_prefix_rules *v, const struct pkt *p)
{
	__u32 n;

	if (!v || !p)
		return UMEM_STEER_PREFIX_SLOTS;
	n = v->nr;
	for (__u32 j = 0; j < UMEM_STEER_PREFIX_SLOTS; j++) {
		if (j >= n)
			break;
		if (prefix_rule_matches(&v->slots[j].rule.match, p))
			return j;
	}
	return UMEM_STEER_PREFIX_SLOTS;
}

/* The length of the longest listed prefix (struct umem_steer_listed) holding the frame's src
 * (dir 0) or dst address, or -1 if none does. Inlined into prefix_decide, whose verification
 * takes about as long either way (steer-bench -n 1, 11.0-11.4 s inlined against 10.4-11.2 s as a
 * global function): a call of its own cost every IP frame of a table with prefix rules a
 * return, and each return from a BPF subprogram or helper goes through the kernel's return
 * thunk where it mitigates return-stack attacks (SRSO's safe RET on AMD Zen 3 and 4). Inlined
 * into umem_steer instead, ahead of prefix_decide, it tripled the program's verification time. */
static __always_inline int listed_longest(const struct umem_steer_listed *l, const struct pkt *p, __u32 dir)
{
	const __u32 *a = (const __u32 *)(dir ? p->daddr : p->saddr); /* 4-aligned in struct pkt */
	__u32 nr;

	if (p->kind == UMEM_STEER_FLOW_IPV4) {
		nr = l->nr4;
#pragma clang loop unroll(disable)
		for (__u32 i = 0; i < UMEM_STEER_MAX_LISTED; i++) {
			if (i >= nr)
				break;
			if (!((a[0] & l->v4[i].mask) ^ l->v4[i].addr))
				return l->len4[i];
		}
		return -1;
	}
	nr = l->nr - l->nr4;
#pragma clang loop unroll(disable)
	for (__u32 i = 0; i < UMEM_STEER_MAX_LISTED; i++) {
		const struct umem_steer_listed_v6 *e = &l->v6[i];

		if (i >= nr)
			break;
		if (!(((a[0] & e->mask[0]) ^ e->addr[0]) | ((a[1] & e->mask[1]) ^ e->addr[1]) |
		      ((a[2] & e->mask[2]) ^ e->addr[2]) | ((a[3] & e->mask[3]) ^ e->addr[3])))
			return l->len6[i];
	}
	return -1;
}

/* The prefix rule one trie holds for the frame: the longest prefix holding addr whose rules
 * (by priority) match the frame, walking to shorter prefixes while none does. *rank orders it
 * against the other trie's and the table's (lower first): priority, then the longer prefix,
 * then src before dst. With the trie's prefixes listed in the table, a frame in none of them
 * skips the trie, and the walk starts at the longest that holds it. */
static __always_inline struct umem_steer_prefix_slot *prefix_walk(void *trie, const struct umem_steer_listed *l,
								   const struct pkt *p, const __u8 *addr, __u32 dir,
								   __u32 *rank)
{
	struct umem_steer_prefix_key k = {};
	struct umem_steer_prefix_rules *v;
	int len;

	k.family[0] = p->kind == UMEM_STEER_FLOW_IPV4 ? 4 : 6;
	k.prefixlen = 32 + (p->kind == UMEM_STEER_FLOW_IPV4 ? 32 : 128);
	if (l->nr != UMEM_STEER_LISTED_NONE) {
		len = listed_longest(l, p, dir);
		if (len < 0)
			return NULL;
		k.prefixlen = 32 + (__u32)len;
	}
	__builtin_memcpy(k.addr, addr, 16);
#pragma clang loop unroll(disable)
	for (int i = 0; i < UMEM_STEER_PREFIX_DEPTH; i++) {
		struct umem_steer_prefix_slot *sl;
		__u32 j;

		v = bpf_map_lookup_elem(trie, &k);
		if (!v)
			return NULL;
		j = (__u32)prefix_slot(v, p);
		if (j < UMEM_STEER_PREFIX_SLOTS) {
			/* The mask (SLOTS is a power of two) keeps the bound the verifier sees. */
			sl = &v->slots[j & (UMEM_STEER_PREFIX_SLOTS - 1)];
			*rank = (__u32)sl->rule.prio << 16 | (255 - (v->prefixlen & 0xff)) << 8 | dir;
			return sl;
		}
		if (v->prefixlen <= 32 || v->prefixlen > k.prefixlen)
			return NULL; /* a /0 holds nothing shorter */
		k.prefixlen = v->prefixlen - 1;
	}
	return NULL;
}

/* A global function, verified once (see flow_decide). Returns 1 and the winner's action and id
 * if a prefix rule of table t's tries ranks before table_rank (the first table rule that
 * matched, or ~0), counting its frame; else 0. */
__noinline int prefix_decide(const struct umem_steer_table *t, const struct pkt *p, __u32 table_rank, __u64 bytes,
			     struct umem_steer_rule *out)
{
	struct umem_steer_prefix_slot *win = NULL, *c;
	struct umem_steer_counter *cnt;
	__u32 best = table_rank, rank = ~0u, id;

	if (!t || !p || !out)
		return 0;
	if (t->nr_prefix_rules[UMEM_STEER_DIR_SRC]) {
		c = prefix_walk(&steer_psrc, &t->listed[UMEM_STEER_DIR_SRC], p, p->saddr, UMEM_STEER_DIR_SRC, &rank);
		if (c && rank < best) {
			win = c;
			best = rank;
		}
	}
	if (t->nr_prefix_rules[UMEM_STEER_DIR_DST]) {
		c = prefix_walk(&steer_pdst, &t->listed[UMEM_STEER_DIR_DST], p, p->daddr, UMEM_STEER_DIR_DST, &rank);
		if (c && rank < best)
			win = c;
	}
	if (!win)
		return 0;
	id = win->rule.id;
	cnt = bpf_map_lookup_elem(&steer_pstats, &id);
	if (cnt) { /* none: the rule is being removed */
		__sync_fetch_and_add(&cnt->packets, 1);
		__sync_fetch_and_add(&cnt->bytes, bytes);
	}
	out->id = id;
	out->action = win->rule.action;
	return 1;
}

/* Position of the first rule that matches, or MAX_RULES. A plain bounded loop: bpf_loop()
 * cost 12 ns per rule here against 1.5 ns for this (tools/steer-bench). */
static __always_inline __u32 first_match(const struct umem_steer_table *t, const struct pkt *p)
{
	__u32 nr = t->nr_rules;

#pragma clang loop unroll(disable)
	for (__u32 i = 0; i < UMEM_STEER_MAX_RULES; i++) {
		if (i >= nr)
			break;
		if (rule_matches(&t->rules[i].match, &p->f))
			return i;
	}
	return UMEM_STEER_MAX_RULES;
}

/* Symmetric: the endpoints are ordered before hashing, so both directions of a flow agree. */
static __always_inline __u32 flow_hash(const struct pkt *p)
{
	__u32 a = endpoint_fold(p, 0), b = endpoint_fold(p, 1), t;
	__u32 pa = p->frag ? 0 : p->f.sport, pb = p->frag ? 0 : p->f.dport;

	if (a > b || (a == b && pa > pb)) {
		t = a; a = b; b = t;
		t = pa; pa = pb; pb = t;
	}
	return mix32(a ^ mix32(b ^ mix32((pa << 16 | pb) ^ mix32(p->f.l4proto))));
}

static __always_inline void count(void *map, __u32 key, __u64 bytes)
{
	struct umem_steer_counter *c = bpf_map_lookup_elem(map, &key);

	if (c) {
		c->packets++;
		c->bytes += bytes;
	}
}

static __always_inline int is_host_control(const struct pkt *p)
{
	if ((p->f.fields & UMEM_STEER_M_ETHERTYPE) && p->f.ethertype == ETH_P_ARP)
		return 1;
	/* Router/neighbour solicitation and advertisement, redirect. */
	return p->has_icmp6_type && p->f.l4proto == IPPROTO_ICMPV6 && p->icmp6_type >= 133 &&
	       p->icmp6_type <= 137;
}

/* A source a bridge accepts (is_valid_ether_addr in br_handle_frame): frames from a group or
 * the all-zero address are userspace's to drop and count, never an L2 flow's to forward. */
static __always_inline int bridge_source(const struct pkt *p)
{
	return !(p->smac[0] & 1) && (p->smac[0] | p->smac[1] | p->smac[2] | p->smac[3] | p->smac[4] | p->smac[5]);
}

/* The frame's 5-tuple as the whole key (steer_flows', and steer_fgate's for every kind). The
 * addresses are zero past an IPv4 address (struct pkt), as an IPv4 key's are. */
static __always_inline void key_5tuple(struct xdp_md *ctx, const struct pkt *p, struct umem_steer_flow_key *k)
{
	__builtin_memset(k, 0, sizeof(*k));
	k->ifindex = ctx->ingress_ifindex;
	k->kind = p->kind;
	k->l4proto = p->f.l4proto;
	k->sport = p->f.sport;
	k->dport = p->f.dport;
	__builtin_memcpy(k->saddr, p->saddr, 16);
	__builtin_memcpy(k->daddr, p->daddr, 16);
}

/* The IPv4 5-tuple flow of steer_flows4 (ports in host order, addresses as on the wire). By
 * value: flow_fast reads them from the header as words. */
static __always_inline struct umem_steer_flow *flow4_lookup(struct xdp_md *ctx, __u8 l4proto, __u16 sport,
							     __u16 dport, __be32 saddr, __be32 daddr)
{
	struct umem_steer_flow_key4 k4;

	/* Each byte: clang leaves the unnamed fields of an initializer unset. */
	__builtin_memset(&k4, 0, sizeof(k4));
	k4.ifindex = ctx->ingress_ifindex;
	k4.l4proto = l4proto;
	k4.sport = sport;
	k4.dport = dport;
	__builtin_memcpy(k4.saddr, &saddr, 4);
	__builtin_memcpy(k4.daddr, &daddr, 4);
	return bpf_map_lookup_elem(&steer_flows4, &k4);
}

/* The flow that decides this frame, or NULL: the 5-tuple first (more specific), then the
 * destination MAC. Fragments, non-TCP/UDP, group addresses and ARP/ND never match. On a hit,
 * k->kind is the flow's kind; the rest of k is filled for the kinds of steer_flows only (an
 * IPv4 flow's gate fills it, key_5tuple). */
static __always_inline struct umem_steer_flow *flow_find(struct xdp_md *ctx, const struct pkt *p,
							  struct umem_steer_flow_key *k)
{
	struct umem_steer_flow_conf *conf;
	struct umem_steer_flow *fl;
	__u32 zero = 0;

	conf = bpf_map_lookup_elem(&steer_fconf, &zero);
	if (!conf || !conf->kinds || p->malformed)
		return NULL;
	if (p->kind && !p->frag && (conf->kinds & (1u << p->kind)) &&
	    (p->f.fields & UMEM_STEER_M_DPORT) &&
	    (p->f.l4proto == IPPROTO_TCP || p->f.l4proto == IPPROTO_UDP)) {
		if (p->kind == UMEM_STEER_FLOW_IPV4 && p->flow4_missed) {
			fl = NULL;
		} else if (p->kind == UMEM_STEER_FLOW_IPV4) {
			__be32 sa, da;

			__builtin_memcpy(&sa, p->saddr, 4);
			__builtin_memcpy(&da, p->daddr, 4);
			fl = flow4_lookup(ctx, p->f.l4proto, p->f.sport, p->f.dport, sa, da);
		} else {
			key_5tuple(ctx, p, k);
			fl = bpf_map_lookup_elem(&steer_flows, k);
		}
		if (fl) {
			k->kind = p->kind;
			return fl;
		}
	}
	if ((conf->kinds & (1u << UMEM_STEER_FLOW_L2)) && (p->f.fields & UMEM_STEER_M_DMAC) &&
	    !(p->f.dmac[0] & 1) && bridge_source(p) && !is_host_control(p)) {
		__builtin_memset(k, 0, sizeof(*k));
		k->ifindex = ctx->ingress_ifindex;
		k->kind = UMEM_STEER_FLOW_L2;
		k->vlan = (p->f.fields & UMEM_STEER_M_VLAN) ? p->f.vlan : 0;
		__builtin_memcpy(k->dmac, p->f.dmac, 6);
		return bpf_map_lookup_elem(&steer_flows, k);
	}
	return NULL;
}

/* Where gate_mark put the mark: the caller takes it off a frame that goes to no socket. */
enum { GATE_MARK_NONE, GATE_MARK_META, GATE_MARK_DATA };

/* Puts the gate mark in front of a gated frame (steer_abi.h): in its XDP metadata, or where
 * there is none (the driver did not set up room for it, e.g. mvpp2: bpf_xdp_adjust_meta fails;
 * or the kernel has no such helper: steer_meta) in front of its data for a flow that asks so
 * (UMEM_STEER_FLOW_F_MARK_DATA). 12 bytes: the metadata length must be a multiple of 4. */
static __always_inline int gate_mark(struct xdp_md *ctx, const struct umem_steer_flow *fl, __u32 seq)
{
	struct umem_steer_gate_mark *m;
	int where = GATE_MARK_META;

	if (steer_meta && !bpf_xdp_adjust_meta(ctx, -(int)sizeof(*m))) {
		m = (void *)(long)ctx->data_meta;
		if ((void *)(m + 1) > (void *)(long)ctx->data) {
			bpf_xdp_adjust_meta(ctx, (int)sizeof(*m)); /* never: the helper made the room */
			return GATE_MARK_NONE;
		}
	} else {
		if (!steer_head || !(fl->flags & UMEM_STEER_FLOW_F_MARK_DATA) ||
		    bpf_xdp_adjust_head(ctx, -(int)sizeof(*m)))
			return GATE_MARK_NONE;
		m = (void *)(long)ctx->data;
		if ((void *)(m + 1) > (void *)(long)ctx->data_end) {
			bpf_xdp_adjust_head(ctx, (int)sizeof(*m)); /* never: the helper made the room */
			return GATE_MARK_NONE;
		}
		where = GATE_MARK_DATA;
	}
	m->seq = seq;
	m->magic = UMEM_STEER_GATE_MAGIC;
	m->tag = fl->tag;
	return where;
}

/* A one's complement sum below 2^32 folded to 16 bits (not complemented). */
static __always_inline __u16 csum_fold16(__u64 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)sum;
}

/* A global function, verified once (see flow_decide): whether the TCP/UDP segment of l4_len
 * bytes at l4_off, with its pseudo-header sum pseudo, carries a valid checksum. Read in chunks
 * through bpf_xdp_load_bytes, which crosses a multi-buffer frame's fragments; a segment longer
 * than CSUM_CHUNKS chunks is not verified (0). */
__noinline int csum_verifies(struct xdp_md *ctx, __u32 l4_off, __u32 l4_len, __u32 pseudo)
{
	struct csum_chunk *c;
	__u32 zero = 0, wsum = 0;
	__s64 r;

	c = bpf_map_lookup_elem(&steer_cchunk, &zero);
	if (!ctx || !c || !l4_len || l4_len > CSUM_CHUNK * CSUM_CHUNKS)
		return 0;
	for (__u32 i = 0; i < CSUM_CHUNKS; i++) {
		__u32 off = i * CSUM_CHUNK;
		__u64 n, words;

		if (off >= l4_len)
			break;
		n = l4_len - off;
		if (n > CSUM_CHUNK)
			n = CSUM_CHUNK;
		/* Opaque to the compiler, which would drop the checks below as known true and leave
		 * the verifier without n's range on the register the call takes. */
		asm volatile("%[n] &= 0x3ff" : [n] "+r"(n));
		if (n < 1 || n > CSUM_CHUNK)
			return 0;
		if (bpf_xdp_load_bytes(ctx, l4_off + off, c->b, n))
			return 0;
		/* bpf_csum_diff sums whole words: zeros after the last byte add nothing. */
		c->b[n] = 0;
		c->b[n + 1] = 0;
		c->b[n + 2] = 0;
		words = (n + 3) & ~3u;
		if (words > CSUM_CHUNK)
			return 0;
		r = bpf_csum_diff(NULL, 0, (__be32 *)c->b, words, wsum);
		if (r < 0)
			return 0;
		wsum = (__u32)r;
	}
	/* The sum of the segment's bytes as they lie in memory, folded, then as a big-endian word
	 * (the one's complement sum commutes with the byte order, RFC 1071 2(B)). */
	return csum_fold16(pseudo + bpf_ntohs(csum_fold16(wsum))) == 0xffff;
}

/* Whether a TCP/UDP checksum (host order) equals the folded pseudo-header sum of the protocol
 * and length proto_len and the addresses' n bytes (as on the wire). Bytes, not words: struct
 * pkt's addresses are not word-aligned, and a copy into words takes stack the program lacks. */
static __always_inline int csum_is_pseudo(__u16 l4_csum, __u32 proto_len, const __u8 *sa, const __u8 *da, int n)
{
	__u32 sum = proto_len;

	for (int i = 0; i < n; i += 2)
		sum += ((__u32)sa[i] << 8 | sa[i + 1]) + ((__u32)da[i] << 8 | da[i + 1]);
	return l4_csum == csum_fold16(sum);
}

/* Whether the frame's TCP/UDP checksum field holds the folded pseudo-header sum: a sender's
 * TX checksum offload left it partial (CHECKSUM_PARTIAL, which XDP loses) and nobody completes
 * it on a redirect, so the receiver would drop it. A real checksum equals that sum about once
 * in 65,536 frames (several times a second at line rate): csum_verifies then tells the two
 * apart (umem_steer asks it when flow_decide returns FLOW_VERIFY_CSUM), so that such a frame
 * does not take its flow out of the kernel. The addresses are zero past an IPv4 address
 * (struct pkt), so one sum serves both families. */
static __always_inline int csum_partial(const struct pkt *p)
{
	if (!p->kind || p->frag || !(p->f.fields & UMEM_STEER_M_DPORT) ||
	    (p->f.l4proto != IPPROTO_TCP && p->f.l4proto != IPPROTO_UDP))
		return 0;
	return csum_is_pseudo(p->l4_csum, p->f.l4proto + p->l4_len, p->saddr, p->daddr, 16);
}

/* flow_decide's answer when a redirect flow's frame may hold a partial checksum: its caller
 * verifies the segment (csum_verifies: a call from flow_decide would pass the 512 bytes of stack
 * the chain of calls may take) and asks again. */
#define FLOW_VERIFY_CSUM (-2)

/* Two MACs as 4 + 2 bytes: two compares, not six. Copied into locals, since a MAC may sit at an
 * odd offset (clang then builds the words from byte loads, as BPF must). */
static __always_inline int mac_eq(const __u8 *a, const __u8 *b)
{
	__u32 a4, b4;
	__u16 a2, b2;

	__builtin_memcpy(&a4, a, 4);
	__builtin_memcpy(&a2, a + 4, 2);
	__builtin_memcpy(&b4, b, 4);
	__builtin_memcpy(&b2, b + 4, 2);
	return a4 == b4 && a2 == b2;
}

/* A router's flow (UMEM_STEER_FLOW_F_ROUTE): whether the program leaves this frame to the
 * default way: not addressed to the input interface's MAC (XDP sees every frame the wire
 * brings, the kernel and userspace drop those as another host's), tagged (the router routes
 * untagged frames only), IPv4 options or a TTL/hop limit <= 1 (the kernel's:
 * UMEM_STEER_F_ROUTER sends them there before any flow when set), or longer than the egress
 * MTU (the kernel's fragmentation needed / packet too big). */
static __always_inline int route_kept(const struct pkt *p, const struct umem_steer_flow *fl)
{
	if (!mac_eq(fl->imac, p->f.dmac))
		return 1;
	return p->l3_off != sizeof(struct ethhdr) || p->router_kernel || (fl->mtu && p->ip_len > fl->mtu);
}

/* RFC 1624 eqn. 3: the checksum HC of a header whose 16-bit word m became m': ~(~HC + ~m + m'). */
static __always_inline __u16 csum_update16(__u16 check, __u16 old, __u16 new)
{
	return (__u16)~csum_fold16((__u16)~check + (__u32)(__u16)~old + new);
}

/* Rewrites a router's flow's frame, whose redirect is decided (route_kept said no): both MACs,
 * and the TTL (with the IPv4 checksum) or hop limit down by one. 0, or -1 if the headers are
 * not in the first buffer (never after the parse; the verifier wants the checks). */
static __always_inline int route_rewrite(struct xdp_md *ctx, __u8 kind, const struct umem_steer_flow *fl)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;

	if (kind == UMEM_STEER_FLOW_IPV4) {
		struct iphdr *ip = data + sizeof(*eth);
		__u16 old, check;

		if ((void *)(ip + 1) > data_end)
			return -1;
		old = bpf_ntohs(*(__be16 *)&ip->ttl); /* TTL and protocol, one 16-bit word */
		ip->ttl--;
		check = csum_update16(bpf_ntohs(ip->check), old, bpf_ntohs(*(__be16 *)&ip->ttl));
		ip->check = bpf_htons(check);
	} else {
		struct ipv6hdr *ip6 = data + sizeof(*eth);

		if ((void *)(ip6 + 1) > data_end)
			return -1;
		ip6->hop_limit--;
	}
	__builtin_memcpy(eth->h_dest, fl->dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, fl->smac, ETH_ALEN);
	return 0;
}

/* A flow's action on its frame, with the rewrite and the counts: a verdict, or -1 when the
 * redirect's target is gone (the default way decides). fast: flow_fast's frame. */
static __always_inline int flow_act(struct xdp_md *ctx, __u8 kind, struct umem_steer_flow *fl, __u64 bytes, int fast)
{
	__u32 stat;
	int verdict;

	switch (fl->action) {
	case UMEM_STEER_FLOW_A_REDIRECT:
		verdict = bpf_redirect_map(&steer_devs, fl->index, 0);
		if (verdict != XDP_REDIRECT) {
			if (!fast) /* flow_fast's frame takes the whole way, which counts it */
				count(&steer_fstats, UMEM_STEER_FS_NO_DEV, bytes);
			return -1;
		}
		/* After the redirect is decided (it happens when the program returns): a frame
		 * that goes the default way instead must reach userspace as it came. */
		if ((fl->flags & UMEM_STEER_FLOW_F_ROUTE) && route_rewrite(ctx, kind, fl))
			return XDP_ABORTED;
		stat = UMEM_STEER_FS_REDIRECT;
		break;
	case UMEM_STEER_FLOW_A_DROP:
		verdict = XDP_DROP;
		stat = UMEM_STEER_FS_DROP;
		break;
	case UMEM_STEER_FLOW_A_SOCK:
		verdict = bpf_redirect_map(&steer_xsks, fl->index, XDP_PASS);
		if (verdict != XDP_REDIRECT)
			count(&steer_astats, UMEM_STEER_S_NO_SOCKET, bytes);
		stat = UMEM_STEER_FS_SOCK;
		break;
	case UMEM_STEER_FLOW_A_PASS:
		verdict = XDP_PASS;
		stat = UMEM_STEER_FS_PASS;
		break;
	default:
		return -1;
	}
	fl->packets++; /* not atomic: see struct umem_steer_flow */
	fl->bytes += bytes;
	count(&steer_fstats, stat, bytes);
	return verdict;
}

/* Applies a flow: a verdict, or -1 to let the default action decide (gate shut, target gone).
 * *marked: the frame was gated and carries the gate mark (GATE_MARK_*, where). */
static __always_inline int flow_apply(struct xdp_md *ctx, const struct pkt *p, struct umem_steer_flow *fl,
				      struct umem_steer_flow_key *k, __u64 bytes, __u32 *marked)
{
	fl->last_ns = bpf_ktime_get_coarse_ns();
	/* A redirect cannot complete a partial checksum: the frame goes the default way
	 * (userspace completes it), and an ordered flow's gate shuts for good behind it, so that
	 * its later frames cannot overtake it; userspace takes the flow back. */
	if (fl->action == UMEM_STEER_FLOW_A_REDIRECT && csum_partial(p) && !p->csum_valid) {
		if (!p->csum_checked)
			return FLOW_VERIFY_CSUM;
		__sync_fetch_and_add(&fl->csum_partial, 1);
		count(&steer_fstats, UMEM_STEER_FS_CSUM_PARTIAL, bytes);
		fl->open = 0;
		return -1;
	}
	/* Not a frame this router's flow forwards: the kernel's or userspace's to drop and count.
	 * Before the gate, as such a frame leaves nothing behind for a later one to overtake. */
	if ((fl->flags & UMEM_STEER_FLOW_F_ROUTE) && route_kept(p, fl)) {
		__sync_fetch_and_add(&fl->route_kept, 1);
		count(&steer_fstats, UMEM_STEER_FS_ROUTE_KEPT, bytes);
		return -1;
	}
	if ((fl->flags & UMEM_STEER_FLOW_F_ORDERED) && !fl->open) {
		__u64 *sent;

		if (k->kind == UMEM_STEER_FLOW_IPV4)
			key_5tuple(ctx, p, k);
		sent = bpf_map_lookup_elem(&steer_fgate, k);

		/* Open only once userspace has sent all it was given: nothing older is left (and
		 * never after a partial checksum). */
		if (!sent || *sent < fl->gated || fl->csum_partial) {
			/* Read before the add: its number (steer_abi.h: one CPU per queue at a time). */
			__u32 seq = (__u32)fl->gated;

			__sync_fetch_and_add(&fl->gated, 1);
			count(&steer_fstats, UMEM_STEER_FS_GATED, bytes);
			if (fl->tag) {
				*marked = gate_mark(ctx, fl, seq);
				if (*marked == GATE_MARK_NONE) /* userspace falls back to a bound for this flow */
					__sync_fetch_and_add(&fl->unmarked, 1);
			}
			return -1;
		}
		fl->open = 1;
	}
	return flow_act(ctx, p->kind, fl, bytes, 0);
}

/* The source of a frame an L2 flow took: recorded for userspace's MAC learning, rewritten only
 * once the record is UMEM_STEER_L2_SOURCE_NS old, whatever queue the frame came on (no store
 * per frame on a line other CPUs read, even when one source's traffic spreads over queues). */
static __always_inline void l2_source_seen(struct xdp_md *ctx, const struct pkt *p, __u16 vlan, __u64 now)
{
	struct umem_steer_l2_source_key sk = { .ifindex = ctx->ingress_ifindex, .vlan = vlan };
	struct umem_steer_l2_source *v, nv = { .last_ns = now, .queue = ctx->rx_queue_index };

	__builtin_memcpy(sk.mac, p->smac, 6);
	v = bpf_map_lookup_elem(&steer_l2src, &sk);
	/* Signed: another CPU may have written a later time since now was read. */
	if (v && (__s64)(now - v->last_ns) < (__s64)UMEM_STEER_L2_SOURCE_NS)
		return;
	if (v)
		*v = nv;
	else
		bpf_map_update_elem(&steer_l2src, &sk, &nv, BPF_ANY);
}

/* The table's generation g as a flow's rules_gen records it: 0 when no flow may skip the rules
 * (a rule matches on the RX queue, the table's writer did not say, or decisions are traced). */
static __always_inline __u16 rules_gen(const struct umem_steer_table *t, __u64 g)
{
	return t->flows_first_gen == (__u16)g && (t->flows_first & UMEM_STEER_FIRST_ROUTED) &&
		       !(t->flags & UMEM_STEER_F_TRACE)
		       ? (__u16)g
		       : 0;
}

/* An IPv4 5-tuple flow whose frames no rule takes (struct umem_steer_flow's rules_gen): its
 * frame decided before the parse and the rules, as flow_apply would. Only the ordinary frame:
 * anything else (tagged, TTL <= 1, options, a fragment, a partial checksum, another MAC, over
 * the MTU, the gate shut, no such device) returns -1 and takes the whole way, which decides
 * and counts it. *missed: the frame's flow was looked up and is not there. */
static __always_inline int flow_fast(struct xdp_md *ctx, const struct umem_steer_table *t, __u16 gen, __u64 bytes,
				     __u8 *missed)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);
	void *l4 = ip + 1;
	struct umem_steer_flow_conf *conf;
	struct umem_steer_flow *fl;
	__u16 tot, *csum;
	__u32 zero = 0, need;

	if (!gen)
		return -1;
	conf = bpf_map_lookup_elem(&steer_fconf, &zero);
	if (!conf || !(conf->kinds & (1u << UMEM_STEER_FLOW_IPV4)))
		return -1;
	if (l4 > data_end || eth->h_proto != bpf_htons(ETH_P_IP) || *(__u8 *)ip != 0x45 || ip->ttl <= 1 ||
	    (ip->frag_off & bpf_htons(0x3fff)))
		return -1;
	if (ip->protocol == IPPROTO_TCP) {
		need = 20;
		csum = l4 + 16;
	} else if (ip->protocol == IPPROTO_UDP) {
		need = 8;
		csum = l4 + 6;
	} else {
		return -1;
	}
	tot = bpf_ntohs(ip->tot_len);
	if (l4 + need > data_end || tot < sizeof(*ip) + need || sizeof(*eth) + tot > bytes)
		return -1;
	fl = flow4_lookup(ctx, ip->protocol, bpf_ntohs(((__be16 *)l4)[0]), bpf_ntohs(((__be16 *)l4)[1]), ip->saddr,
			  ip->daddr);
	if (!fl) {
		*missed = 1;
		return -1;
	}
	if (fl->rules_gen != gen || ((fl->flags & UMEM_STEER_FLOW_F_ORDERED) && !fl->open))
		return -1;
	if (fl->flags & UMEM_STEER_FLOW_F_ROUTE) {
		/* route_kept's tests; the TTL and options were tested above. */
		if (!mac_eq(fl->imac, eth->h_dest) || (fl->mtu && tot > fl->mtu))
			return -1;
	} else if (!(t->flows_first & UMEM_STEER_FIRST_ALL)) {
		return -1; /* the flow's frames may differ in what such a rule matches */
	}
	if (fl->action == UMEM_STEER_FLOW_A_REDIRECT) {
		/* csum_partial's test, on the header in place. */
		if (csum_is_pseudo(bpf_ntohs(*csum), ip->protocol + (tot - sizeof(*ip)), (const __u8 *)&ip->saddr,
				   (const __u8 *)&ip->daddr, 4))
			return -1;
	}
	fl->last_ns = bpf_ktime_get_coarse_ns();
	return flow_act(ctx, UMEM_STEER_FLOW_IPV4, fl, bytes, 1);
}

/* Whether flow_find may find the frame a flow, by the kinds added to the table since its last
 * clear (struct umem_steer_flow_conf): the frame's own 5-tuple kind (not an IPv4 flow flow_fast
 * looked up and missed) or L2. Neither spares flow_decide's call and return (see
 * listed_longest). */
static __always_inline int flow_may_decide(const struct pkt *p)
{
	struct umem_steer_flow_conf *conf;
	__u32 zero = 0, kinds = 1u << UMEM_STEER_FLOW_L2;

	conf = bpf_map_lookup_elem(&steer_fconf, &zero);
	if (!conf || p->malformed)
		return 0;
	if (p->kind && !(p->kind == UMEM_STEER_FLOW_IPV4 && p->flow4_missed))
		kinds |= 1u << p->kind;
	return (conf->kinds & kinds) != 0;
}

/* What flow_decide tells its caller (a global function takes at most 5 arguments). */
struct flow_out {
	__u32 index;  /* the flow's index, when it decided */
	__u16 action; /* the flow's action, when it decided */
	__u16 marked; /* gated and marked (GATE_MARK_*): the caller takes the mark off unless the frame goes to a socket */
	__u16 gen;    /* in: the rule table's rules_gen for flows it let decide, 0 none */
	__u16 :16;
};

/* A global function: the verifier checks it once, on its own (inlined after the rule scan its
 * branches multiply the states past the verifier's limit; a static subprogram is checked again
 * for every state it is called in, which took seconds). Returns a verdict, -1 when no flow
 * decides, or FLOW_VERIFY_CSUM. */
__noinline int flow_decide(struct xdp_md *ctx, const struct pkt *p, __u64 bytes, struct flow_out *out)
{
	struct umem_steer_flow_key k; /* filled as flow_find says */
	struct umem_steer_flow *fl;
	__u32 marked = 0;
	int verdict;

	if (!ctx || !p || !out)
		return -1;
	fl = flow_find(ctx, p, &k);
	if (!fl)
		return -1;
	verdict = flow_apply(ctx, p, fl, &k, bytes, &marked);
	out->marked = (__u16)marked;
	/* No rule took the frame and the flow forwarded it: its next frames may skip the rules
	 * (flow_fast). */
	if (verdict >= 0 && k.kind == UMEM_STEER_FLOW_IPV4 && out->gen && fl->rules_gen != out->gen)
		fl->rules_gen = out->gen;
	if (verdict >= 0) {
		out->action = fl->action;
		out->index = fl->index;
		if (k.kind == UMEM_STEER_FLOW_L2)
			l2_source_seen(ctx, p, k.vlan, fl->last_ns);
	}
	return verdict;
}

SEC("xdp.frags")
int umem_steer(struct xdp_md *ctx)
{
	struct umem_steer_trace *tr;
	struct umem_steer_table *t;
	struct umem_steer_action act;
	struct umem_steer_rule won;
	struct pkt p;
	__u32 hit;
	__u32 zero = 0, rule = UMEM_STEER_RULE_DEFAULT, index = 0, hash = 0, stat;
	struct flow_out fo = {};
	__u64 bytes = bpf_xdp_get_buff_len(ctx);
	__u32 *bank, b0;
	__u64 g0;
	__u16 flow = 0, gen;
	__u8 missed = 0;
	int verdict;

	bank = bpf_map_lookup_elem(&steer_active, &zero);
	if (!bank)
		return XDP_PASS;
	b0 = *(volatile __u32 *)bank;
	t = bpf_map_lookup_elem(&steer_tables, bank); /* b0's bank, or gen is 0 below */
	if (!t)
		return XDP_PASS; /* never: the bank index is 0 or 1 */
	g0 = *(volatile __u64 *)&t->generation;
	gen = rules_gen(t, g0);
	/* Read while the bank was the active one, so not in the middle of a rewrite: the writer
	 * rewrites a bank only while the other is active (see the check before flow_decide). */
	if (*(volatile __u32 *)bank != b0)
		g0 = 0, gen = 0;
	verdict = flow_fast(ctx, t, gen, bytes, &missed);
	if (verdict >= 0)
		return verdict;
	__builtin_memset(&p, 0, sizeof(p));
	p.flow4_missed = missed;
	parse(ctx, &p, bytes);
	if (p.malformed)
		count(&steer_astats, UMEM_STEER_S_MALFORMED, bytes);

	if (((t->flags & UMEM_STEER_F_HOST_CONTROL) && is_host_control(&p)) ||
	    ((t->flags & UMEM_STEER_F_ROUTER) && p.router_kernel)) {
		act.type = UMEM_STEER_A_PASS;
		stat = UMEM_STEER_S_HOST_CONTROL;
		rule = UMEM_STEER_RULE_HOST_CONTROL; /* counted as an action only */
		goto decide;
	}
	hit = first_match(t, &p);
	if (p.kind && (t->nr_prefix_rules[0] || t->nr_prefix_rules[1]) &&
	    prefix_decide(t, &p, hit < UMEM_STEER_MAX_RULES ? (__u32)t->rules[hit].prio << 16 | 0xffff : ~0u, bytes,
			  &won)) {
		act = won.action;
		rule = won.id; /* counted in steer_pstats, not in steer_rstats */
	} else if (hit < UMEM_STEER_MAX_RULES) {
		act = t->rules[hit].action;
		rule = t->rules[hit].id;
	} else {
		/* No rule took the frame under generation g0, unless the writer rewrote this bank
		 * meanwhile (a frame that read it before two publishes in a row): the generation
		 * differs then, and the flow records nothing. One the frame read before the rewrite
		 * got to it would be recorded, and is out of date once the rewrite is done. */
		fo.gen = *(volatile __u64 *)&t->generation == g0 ? gen : 0;
		verdict = flow_may_decide(&p) ? flow_decide(ctx, &p, bytes, &fo) : -1;
		if (verdict == FLOW_VERIFY_CSUM) {
			p.csum_checked = 1;
			p.csum_valid = (__u8)csum_verifies(ctx, p.l4_off, p.l4_len, p.l4_csum);
			verdict = flow_decide(ctx, &p, bytes, &fo);
		}
		if (verdict >= 0) {
			index = fo.index;
			flow = fo.action;
			act.type = UMEM_STEER_A_NONE;
			rule = UMEM_STEER_RULE_FLOW;
			goto traced;
		}
		act = t->default_action;
	}
	stat = act.type;

decide:
	switch (act.type) {
	case UMEM_STEER_A_SOCK:
		index = act.index;
		break;
	case UMEM_STEER_A_GROUP:
		hash = flow_hash(&p);
		/* Multiply-shift maps the hash onto [0, count) without a division. */
		index = act.index + (__u32)(((__u64)hash * act.count) >> 32);
		break;
	case UMEM_STEER_A_QUEUE:
		index = p.f.queue;
		break;
	case UMEM_STEER_A_DROP:
		verdict = XDP_DROP;
		goto out;
	default:
		verdict = XDP_PASS;
		goto out;
	}
	/* An empty slot (socket not registered yet, or its owner died) falls back to the kernel:
	 * a missing consumer never black-holes traffic. */
	verdict = bpf_redirect_map(&steer_xsks, index, XDP_PASS);
	if (verdict != XDP_REDIRECT)
		count(&steer_astats, UMEM_STEER_S_NO_SOCKET, bytes);
out:
	/* The gate mark is for the socket alone: off a frame the stack gets (no socket there) or
	 * that is dropped. */
	if (fo.marked != GATE_MARK_NONE && verdict != XDP_REDIRECT) {
		if (steer_meta && fo.marked == GATE_MARK_META)
			bpf_xdp_adjust_meta(ctx, (int)sizeof(struct umem_steer_gate_mark));
		else if (steer_head && fo.marked == GATE_MARK_DATA)
			bpf_xdp_adjust_head(ctx, (int)sizeof(struct umem_steer_gate_mark));
	}
	if (rule <= UMEM_STEER_RULE_DEFAULT)
		count(&steer_rstats, rule, bytes);
	count(&steer_astats, stat, bytes);
traced:
	if (t->flags & UMEM_STEER_F_TRACE) {
		tr = bpf_map_lookup_elem(&steer_trace, &zero);
		if (tr) {
			tr->seq++;
			tr->rule = rule;
			tr->index = index;
			tr->hash = hash;
			tr->present = p.f.fields;
			tr->action = act.type;
			tr->verdict = verdict;
			tr->malformed = p.malformed;
			tr->flow = flow;
		}
	}
	return verdict;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
