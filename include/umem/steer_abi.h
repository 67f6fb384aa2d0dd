/* SPDX-License-Identifier: MIT */
/*
 * libumem steering: the layout shared by the XDP program (bpf/steer.bpf.c) and userspace.
 *
 * Compiled by both sides, so only <linux/types.h> types. Every multi-byte value is in host byte
 * order (the program converts what it reads from the frame), so a rule reads as it prints.
 * The rule table lives in two banks; the control API writes the idle bank whole and then flips
 * the active index (one 4-byte store), so the program never sees a half-written table.
 */
#ifndef UMEM_STEER_ABI_H
#define UMEM_STEER_ABI_H

#include <linux/types.h>

/* Bounded so the program's scan is: a loop of at most this many rules (64 cost ~90 ns, tools/steer-bench). */
#define UMEM_STEER_MAX_RULES 64
/* Index of the default action in the per-rule counters (rule ids are 0..MAX_RULES-1). */
#define UMEM_STEER_RULE_DEFAULT UMEM_STEER_MAX_RULES
#define UMEM_STEER_NR_RULE_STATS (UMEM_STEER_MAX_RULES + 1)
/* Rule reported in a trace for ARP/ND sent to the kernel by UMEM_STEER_F_HOST_CONTROL. */
#define UMEM_STEER_RULE_HOST_CONTROL (UMEM_STEER_MAX_RULES + 1)
/* Rule reported in a trace for a frame an offloaded flow decided (trace.flow says how). */
#define UMEM_STEER_RULE_FLOW (UMEM_STEER_MAX_RULES + 2)
/* VLAN tags the parser walks through (802.1ad outer + 802.1Q inner). */
#define UMEM_STEER_MAX_VLAN 2
/* IPv6 extension headers the parser walks through before it gives up on the L4 protocol. */
#define UMEM_STEER_MAX_EXTHDR 4

/* Fields a rule can match: all set fields must be present in the frame and equal. A field the
 * frame does not carry (an IPv4 fragment's ports, a truncated header) never matches. */
enum umem_steer_field {
	UMEM_STEER_M_QUEUE = 1u << 0,     /* ingress queue (rx_queue_index) */
	UMEM_STEER_M_ETHERTYPE = 1u << 1, /* ethertype after the VLAN tags */
	UMEM_STEER_M_VLAN = 1u << 2,      /* VLAN id of the outer tag */
	UMEM_STEER_M_L4PROTO = 1u << 3,   /* IPv4 protocol / IPv6 next header after extension headers */
	UMEM_STEER_M_SPORT = 1u << 4,     /* TCP/UDP/SCTP/UDP-Lite source port */
	UMEM_STEER_M_DPORT = 1u << 5,     /* TCP/UDP/SCTP/UDP-Lite destination port */
	UMEM_STEER_M_DMAC = 1u << 6,      /* destination MAC */
	UMEM_STEER_M_SRC = 1u << 7,       /* IPv4/IPv6 source address in a prefix (match.src) */
	UMEM_STEER_M_DST = 1u << 8,       /* IPv4/IPv6 destination address in a prefix (match.dst) */
	UMEM_STEER_M_ALL = (1u << 9) - 1,
};

enum umem_steer_action_type {
	UMEM_STEER_A_NONE = 0, /* invalid: a zeroed action is a caller's mistake */
	UMEM_STEER_A_SOCK,     /* the socket registered at index */
	UMEM_STEER_A_GROUP,    /* one of sockets [index, index + count), by symmetric flow hash */
	UMEM_STEER_A_QUEUE,    /* the socket registered at the index of the ingress queue */
	UMEM_STEER_A_PASS,     /* the kernel stack */
	UMEM_STEER_A_DROP,
	UMEM_STEER_A_NR,
};

/* Per-action counters: one per action type (what the deciding rule or default said), plus
 * outcomes that are not decisions. */
enum umem_steer_stat {
	UMEM_STEER_S_SOCK = UMEM_STEER_A_SOCK,
	UMEM_STEER_S_GROUP = UMEM_STEER_A_GROUP,
	UMEM_STEER_S_QUEUE = UMEM_STEER_A_QUEUE,
	UMEM_STEER_S_PASS = UMEM_STEER_A_PASS,
	UMEM_STEER_S_DROP = UMEM_STEER_A_DROP,
	UMEM_STEER_S_NO_SOCKET = UMEM_STEER_A_NR, /* redirect target empty: passed to the kernel */
	UMEM_STEER_S_HOST_CONTROL,                /* ARP/ND passed by UMEM_STEER_F_HOST_CONTROL */
	UMEM_STEER_S_MALFORMED,                   /* a header cut short or invalid */
	UMEM_STEER_S_NR,
};

enum umem_steer_table_flags {
	/* ARP and IPv6 neighbour discovery (ICMPv6 133..137) go to the kernel before any rule. */
	UMEM_STEER_F_HOST_CONTROL = 1u << 0,
	/* Record each decision in the per-CPU trace map (tests, debugging; costs a map write). */
	UMEM_STEER_F_TRACE = 1u << 1,
	/* A router's kernel part: IPv4 with a TTL of 1 or less or with header options, IPv6 with a
	 * hop limit of 1 or less go to the kernel before any rule (it sends the ICMP time exceeded
	 * and handles the options), counted as host_control. */
	UMEM_STEER_F_ROUTER = 1u << 2,
};

/* struct umem_steer_table's flows_first: which flows may decide before the rules (struct
 * umem_steer_flow's rules_gen), by what the rules match that a flow's key does not fix. */
enum umem_steer_flows_first {
	/* No rule matches on the RX queue: routed flows (UMEM_STEER_FLOW_F_ROUTE, whose
	 * forwarded frames all go to their imac) may. */
	UMEM_STEER_FIRST_ROUTED = 1u << 0,
	/* Nor on the destination MAC: every flow may. */
	UMEM_STEER_FIRST_ALL = 1u << 1,
	/* The control API's record of the prefix rules, which the two above account for: a rule
	 * on the queue or on the destination MAC was added since the tries were last empty (the
	 * tries are not read back on a removal). */
	UMEM_STEER_FIRST_PREFIX_QUEUE = 1u << 2,
	UMEM_STEER_FIRST_PREFIX_DMAC = 1u << 3,
};

/* An address prefix: the first len bits of addr (network byte order, as on the wire; IPv4 in
 * addr[0..3]). Bits past len are zero (the control API refuses host bits). */
struct umem_steer_prefix {
	__u8 family; /* 4 or 6 */
	__u8 len;    /* 0..32 (IPv4), 0..128 (IPv6) */
	__u8 addr[16];
};

struct umem_steer_match {
	__u32 fields; /* enum umem_steer_field */
	__u32 queue;
	__u16 ethertype;
	__u16 vlan;
	__u16 sport;
	__u16 dport;
	__u8 l4proto;
	__u8 dmac[6];
	__u8 :8;
	struct umem_steer_prefix src; /* UMEM_STEER_M_SRC */
	struct umem_steer_prefix dst; /* UMEM_STEER_M_DST */
};

struct umem_steer_action {
	__u16 type;  /* enum umem_steer_action_type */
	__u16 count; /* GROUP: number of sockets */
	__u32 index; /* SOCK: socket index; GROUP: first socket index */
};

struct umem_steer_rule {
	__u32 id;   /* set by umem_steer__add_rule(); names the rule for removal and counters */
	__u16 prio; /* lower runs first; equal priorities keep insertion order */
	__u16 :16;
	struct umem_steer_match match;
	struct umem_steer_action action;
};

/*
 * A trie's prefixes, listed in the table while it holds at most UMEM_STEER_MAX_LISTED rules
 * (a router's own addresses: a handful): a frame whose address lies in none of them needs no
 * trie lookup, which costs more than the scan (docs/BENCHMARKS.md, "A listed trie"). One
 * that lies in one starts the trie's walk at the longest listed prefix holding it. The writer
 * publishes the list with the trie's rule count, before it adds to the trie and after it
 * removes from it, so the list never lacks a prefix the trie holds; one it holds that the trie
 * lacks is looked up, not found, and passed over. nr UMEM_STEER_LISTED_NONE: too many rules,
 * the program walks the whole trie. The table grew by the list: the control API refuses an
 * older program's table (EPROTO, by its value size).
 */
#define UMEM_STEER_MAX_LISTED 16
#define UMEM_STEER_LISTED_NONE 0xffffffffu
struct umem_steer_listed_v4 {
	__u32 addr; /* the prefix's bits, network byte order */
	__u32 mask; /* its length as a mask over addr */
};

struct umem_steer_listed_v6 {
	__u32 addr[4];
	__u32 mask[4];
};

/* By family, so that an IPv4 frame's scan reads 8 bytes a prefix (the list is read for every
 * frame, on the CPU that receives it, where the lines it touches are often cold). */
struct umem_steer_listed {
	__u32 nr; /* prefixes listed, or UMEM_STEER_LISTED_NONE */
	__u8 nr4; /* of which IPv4, in v4[]; the other nr - nr4 in v6[]; each longest first */
	__u8 :8;
	__u16 :16;
	struct umem_steer_listed_v4 v4[UMEM_STEER_MAX_LISTED];
	__u8 len4[UMEM_STEER_MAX_LISTED]; /* v4[i]'s length */
	__u8 len6[UMEM_STEER_MAX_LISTED];
	struct umem_steer_listed_v6 v6[UMEM_STEER_MAX_LISTED];
};

/* One bank of the rule table, rules sorted by priority. */
struct umem_steer_table {
	__u32 nr_rules;
	__u32 flags; /* enum umem_steer_table_flags */
	struct umem_steer_action default_action;
	/* The controlling process, so the next start can tell a stale program from a live one. */
	__u32 owner_pid;
	__u32 nr_sockets;
	__u64 owner_start; /* its start time (clock ticks since boot): a reused pid differs */
	__u64 generation;  /* bumped on every table change */
	/* Prefix rules in the src and dst tries (0: the program skips that lookup). */
	__u32 nr_prefix_rules[2];
	__u32 next_prefix_id; /* the next prefix rule's id, from UMEM_STEER_PREFIX_ID_BASE */
	/* Set by the control API on each change (enum umem_steer_flows_first), valid while
	 * flows_first_gen is the generation's low 16 bits: a writer that does not know the field
	 * (an older library) bumps the generation and leaves both, which turns it off. */
	__u16 flows_first;
	__u16 flows_first_gen;
	/* Each trie's prefixes while it holds few (see struct umem_steer_listed). */
	struct umem_steer_listed listed[2];
	struct umem_steer_rule rules[UMEM_STEER_MAX_RULES];
};


struct umem_steer_counter {
	__u64 packets;
	__u64 bytes;
};

/*
 * Prefix rules: a rule with a src or dst prefix is not in the table but in an LPM trie
 * (BPF_MAP_TYPE_LPM_TRIE) keyed by that prefix, src trie first (a rule with both is keyed by src
 * and checks dst inline). Per frame, each trie is looked up once for the longest prefix holding
 * the address; its rules (at most UMEM_STEER_PREFIX_SLOTS, by priority) are tried in turn, and if
 * none matches the frame's other fields, the next shorter prefix is. So the cost follows the
 * nesting of prefixes, not their number. The src winner, the dst winner and the first table rule
 * that matches are then ordered by priority; at equal priority a prefix rule goes first, the
 * longer prefix first, src before dst at equal length.
 */
#define UMEM_STEER_MAX_PREFIXES 262144 /* prefixes per trie */
#define UMEM_STEER_PREFIX_SLOTS 4      /* rules per prefix (a power of two) */
#define UMEM_STEER_PREFIX_ID_BASE 0x1000u /* prefix rule ids start here (table ids are 0..MAX_RULES-1) */
/* Prefix rules in all, both tries (their counters' map holds one entry each). */
#define UMEM_STEER_MAX_PREFIX_RULES (2 * UMEM_STEER_MAX_PREFIXES)
/* Nested prefixes the program walks in one trie (a /0 to a /128 has 129). */
#define UMEM_STEER_PREFIX_DEPTH 129

enum umem_steer_prefix_dir { UMEM_STEER_DIR_SRC = 0, UMEM_STEER_DIR_DST = 1 };

/* The trie key: prefixlen covers family[0..3] (32 bits, so an IPv6 ::/0 holds no IPv4 address)
 * and then the prefix's len bits of addr. */
struct umem_steer_prefix_key {
	__u32 prefixlen; /* 32 + prefix len */
	__u8 family[4];  /* { 4 or 6, 0, 0, 0 } */
	__u8 addr[16];
	/* Zero, never in a prefix: a trie node stores the value right after the key's data, so 24
	 * bytes of data keep the value 8-byte aligned (20 left it at 4 mod 8, and the atomic adds
	 * of arm64's BPF JIT fault on a misaligned address: a kernel oops, when the counters lived
	 * in the value). */
	__u8 pad[4];
};

/* A prefix rule's counter is not here but in steer_pstats, keyed by its id: every edit of a
 * prefix rewrites the whole value, and a count kept in it would lose the frames counted between
 * the writer's read and its write. */
struct umem_steer_prefix_slot {
	struct umem_steer_rule rule; /* match holds the prefix too, so it prints whole */
};

struct umem_steer_prefix_rules {
	__u32 prefixlen; /* the key's, for the walk to shorter prefixes */
	__u32 nr;        /* slots in use, by priority then insertion */
	struct umem_steer_prefix_slot slots[UMEM_STEER_PREFIX_SLOTS];
};

/* Last decision on a CPU, written when UMEM_STEER_F_TRACE is set. */
struct umem_steer_trace {
	__u64 seq;       /* decisions traced on this CPU */
	__u32 rule;      /* id of the deciding rule, UMEM_STEER_RULE_DEFAULT or _HOST_CONTROL */
	__u32 index;     /* socket index chosen (SOCK, GROUP, QUEUE) */
	__u32 hash;      /* flow hash (GROUP) */
	__u32 present;   /* enum umem_steer_field bits the frame carried */
	__u16 action;    /* enum umem_steer_action_type; PASS for host control */
	__u16 verdict;   /* XDP_* returned */
	__u16 malformed; /* 1 if a header was cut short or invalid */
	__u16 flow;      /* enum umem_steer_flow_action of the flow that decided, 0 if none */
};

/*
 * Flow table (offload): beside the rules, LRU hashes of decided flows (IPv4 5-tuples in
 * steer_flows4, the other kinds in steer_flows; UMEM_STEER_MAX_FLOWS each, and as many in all
 * through the control API). A frame that no rule matches (the default action would decide it)
 * is looked up by its 5-tuple (IPv4/IPv6 TCP/UDP, not a fragment) and then by its destination
 * MAC (unicast, not ARP/ND); a hit applies the flow's action instead of the default. A rule
 * that matches always wins, so a "-> sock" or "-> pass" rule keeps its frames where it sends
 * them.
 */
#define UMEM_STEER_MAX_FLOWS 16384

enum umem_steer_flow_kind {
	UMEM_STEER_FLOW_NONE = 0,
	UMEM_STEER_FLOW_IPV4, /* 5-tuple; addresses in the first 4 bytes of saddr/daddr */
	UMEM_STEER_FLOW_IPV6, /* 5-tuple */
	UMEM_STEER_FLOW_L2,   /* destination MAC (and outer VLAN id) */
	UMEM_STEER_FLOW_KIND_NR,
};

enum umem_steer_flow_action {
	UMEM_STEER_FLOW_A_NONE = 0,
	UMEM_STEER_FLOW_A_REDIRECT, /* out of interface index (devmap) */
	UMEM_STEER_FLOW_A_DROP,
	UMEM_STEER_FLOW_A_PASS,     /* the kernel stack */
	UMEM_STEER_FLOW_A_SOCK,     /* the socket registered at index */
	UMEM_STEER_FLOW_A_NR,
};

enum umem_steer_flow_flags {
	/*
	 * Ordered switch: the flow's frames keep taking the default path (to userspace) until
	 * userspace reports, through the gate map, that it has sent every frame the program gave
	 * it since the flow was added; only then does the action apply. So a flow that moves to
	 * the fast path is never overtaken by its own older frames still queued in userspace.
	 */
	UMEM_STEER_FLOW_F_ORDERED = 1u << 0,
	/*
	 * A router's flow (REDIRECT, 5-tuple kinds): before the redirect the program rewrites the
	 * frame as a router does: destination and source MAC from dmac and smac, the TTL or hop
	 * limit down by one (IPv4: the header checksum updated incrementally, RFC 1624). A frame it
	 * cannot route so goes the default way, counted in route_kept: a VLAN tag, IPv4 options, a
	 * TTL or hop limit of 1 or less (the kernel's ICMP time exceeded), an IP packet over mtu,
	 * a destination MAC other than imac (the router's input interface's).
	 */
	UMEM_STEER_FLOW_F_ROUTE = 1u << 1,
	/*
	 * With a tag: where the frame has no XDP metadata to mark (the driver sets up no room for
	 * it, or the kernel gives XDP programs no bpf_xdp_adjust_meta), the program puts the gate
	 * mark in front of the frame's data instead (bpf_xdp_adjust_head), and takes it off again
	 * when the frame does not go to a socket. The consumer must take it off every frame it
	 * receives (umem_steer_gate__unwrap), then reads it as a metadata mark, right before the
	 * frame. Without the flag such frames go unmarked (umem_steer_flow.unmarked).
	 */
	UMEM_STEER_FLOW_F_MARK_DATA = 1u << 2,
};

/*
 * The gate mark: with umem_steer_flow.tag set, the program puts this in the XDP metadata of
 * every frame it gates (bpf_xdp_adjust_meta), and AF_XDP copies the metadata into the UMEM
 * right before the frame's data (zero-copy and copy mode alike; measured in copy mode on a
 * veth, Linux 6.18). Userspace tells the gated frames from those queued before the add by it,
 * and so releases exactly the gated frames it has sent. A frame without metadata leaves those
 * bytes as an earlier frame of the chunk left them: the tag, fresh for each add, keeps a stale
 * mark from matching. Where the driver takes no metadata, or the kernel gives XDP programs no
 * bpf_xdp_adjust_meta (the program is then loaded without metadata marks), the program puts the
 * mark in front of the frame's data for a flow with UMEM_STEER_FLOW_F_MARK_DATA; otherwise the
 * frame goes unmarked and counts in umem_steer_flow.unmarked.
 *
 * In the data, the mark's magic takes bytes 4 to 7 of what reads as an Ethernet header, and so
 * the first byte of its source address: 0x61 there (the mark is in host order; little-endian
 * hosts) has the group bit set, which no valid frame's source address carries (IEEE 802.3), so
 * a valid frame cannot be taken for one that starts with a mark. A forged one can: take a mark
 * off only when its tag is one of your flows' and the frame behind it of that flow.
 *
 * seq numbers the flow's gated frames from 0 (the value of gated before the frame). A flow's
 * frames reach one RX queue, whose ring takes them in the order the program ran (the program
 * runs for one queue on one CPU at a time, so seq needs no atomic fetch): a seq below the
 * highest one seen that never showed was dropped on the way, at a full ring most often, and
 * can no longer be overtaken. magic and tag sit last, right before the frame, where the mark
 * of 8 bytes had them.
 */
#define UMEM_STEER_GATE_MAGIC 0x47617465u /* "Gate" */

struct umem_steer_gate_mark {
	__u32 seq;   /* the gated frame's number since the add */
	__u32 magic; /* UMEM_STEER_GATE_MAGIC */
	__u32 tag;   /* the flow's tag */
};

/* All multi-byte fields in host byte order, like the rules; unused bytes zero. */
struct umem_steer_flow_key {
	__u32 ifindex; /* ingress interface */
	__u8 kind;     /* enum umem_steer_flow_kind */
	__u8 l4proto;  /* IPPROTO_TCP or IPPROTO_UDP (5-tuple kinds) */
	__u16 vlan;    /* outer VLAN id, 0 untagged (L2 kind) */
	__u16 sport;
	__u16 dport;
	__u8 dmac[6];  /* L2 kind */
	__u16 :16;
	__u8 saddr[16]; /* network byte order, as on the wire */
	__u8 daddr[16];
};

/* The key of steer_flows4, which holds the IPv4 5-tuple flows apart from the others (the program
 * and the control API only: the API takes and gives struct umem_steer_flow_key). The kernel
 * hashes and compares a hash map's whole key for each lookup: 20 bytes instead of 52 took an
 * offloaded frame's program from 64 to 46 ns over a bare XDP_PASS (steer-bench). Addresses in
 * network byte order, the rest in host order, unused bytes zero. */
struct umem_steer_flow_key4 {
	__u32 ifindex; /* ingress interface */
	__u8 l4proto;
	__u8 :8;
	__u16 sport;
	__u16 dport;
	__u16 :16;
	__u8 saddr[4];
	__u8 daddr[4];
};

/* 8-byte aligned u64 fields (the program's atomic adds fault on arm64 otherwise). */
struct umem_steer_flow {
	/* Set by userspace. */
	__u16 action;  /* enum umem_steer_flow_action */
	__u16 flags;   /* enum umem_steer_flow_flags */
	__u32 index;   /* REDIRECT: egress ifindex; SOCK: socket index */
	__u32 tag;     /* ORDERED: non-zero, the program marks each gated frame (struct umem_steer_gate_mark) */
	/* Updated by the program. */
	__u32 open;    /* ORDERED: 1 once the gate opened (the action applies) */
	__u64 gated;   /* ORDERED: frames sent down the default path while the gate was shut */
	__u64 unmarked; /* ORDERED with a tag: gated frames it could not mark (see the gate mark) */
	/* Frames the action took, and their bytes. Plain adds, not atomic ones: an atomic add waits
	 * for the frame's rewritten bytes to be stored (the two took 12 of the 76 ns an offloaded
	 * frame's program took over a bare XDP_PASS, steer-bench). A flow's frames come on one RX
	 * queue, whose program runs on one CPU at a time, so no add is lost while the flow stays
	 * there; while its sender moves it to another queue, two CPUs may count at once and one
	 * may lose a count. Exact totals are the per-program counters (steer_fstats, per CPU). */
	__u64 packets;
	__u64 bytes;
	__u64 last_ns; /* CLOCK_MONOTONIC_COARSE time of the last frame (gated ones included) */
	/* REDIRECT: frames whose TCP/UDP checksum was partial (it held the pseudo-header sum: the
	 * sender's TX checksum offload), sent the default way, as a redirect would not complete
	 * it. After the first, an ORDERED flow's gate stays shut: the flow is userspace's again. */
	__u64 csum_partial;
	/* UMEM_STEER_FLOW_F_ROUTE, set by userspace: the rewrite. Added after csum_partial, so
	 * the value grew from 64 to 88 bytes (96 with imac): the control API refuses an older
	 * program's table (EPROTO, by its value size). */
	__u8 dmac[6]; /* the next hop's MAC */
	__u8 smac[6]; /* the egress interface's MAC */
	__u32 mtu;    /* the egress MTU: a longer IP packet goes the default way; 0: no limit */
	/* UMEM_STEER_FLOW_F_ROUTE, updated by the program: frames it did not route (see the flag)
	 * and sent the default way. They never open or shut the gate. */
	__u64 route_kept;
	/* UMEM_STEER_FLOW_F_ROUTE, set by userspace: the ingress interface's MAC. A frame of the
	 * flow addressed to another (flooded by a switch, sent to another host on the segment) is
	 * not the router's: it goes the default way, counted in route_kept. */
	__u8 imac[6];
	/* Updated by the program: the low 16 bits of the rule table's generation under which a
	 * frame of this IPv4 5-tuple flow found no rule and the flow decided it; 0 never. While
	 * it is the table's and the table lets such flows decide first (flows_first), the program
	 * decides the flow's ordinary frames (untagged, no options, TTL above 1, the gate open)
	 * before it parses them for the rules, which would decide nothing else: every rule field
	 * but the RX queue and the destination MAC is fixed by the flow's key and by those frames
	 * being untagged. A table change bumps the generation, and the next frame goes through
	 * the rules again. The value is 16 bits: a flow that a later rule took over keeps its old
	 * one, which is current again for one generation in 65,536 (a flow idle that long: callers
	 * that keep flows expire idle ones, xdp-fwd within --offload-idle; a load of 32,768 prefix
	 * rules or more passes through one). */
	__u16 rules_gen;
};

/* Per-program flow counters (steer_fstats, per CPU): they outlive the flows (expired or
 * evicted), so totals add up. */
enum umem_steer_flow_stat {
	UMEM_STEER_FS_REDIRECT = 0, /* frames the program redirected to an interface */
	UMEM_STEER_FS_DROP,
	UMEM_STEER_FS_PASS,
	UMEM_STEER_FS_SOCK,
	UMEM_STEER_FS_GATED,        /* ORDERED flows: frames sent the default way, gate shut */
	UMEM_STEER_FS_NO_DEV,       /* redirect target not in the devmap: default way */
	UMEM_STEER_FS_CSUM_PARTIAL, /* partial TCP/UDP checksum, not redirected: default way */
	UMEM_STEER_FS_ROUTE_KEPT,   /* a router's flow's frame it could not route: default way */
	UMEM_STEER_FS_NR,
};

/* steer_fconf[0], written by the control API only. kinds: the kinds added (1 << kind), so a
 * program with no flow of a kind skips its lookup. nr/limit: flows added through the API and
 * the most it accepts (0: UMEM_STEER_MAX_FLOWS), so a full table refuses new flows rather than
 * letting the LRU evict live ones. */
struct umem_steer_flow_conf {
	__u32 kinds;
	__u32 nr;
	__u32 limit;
	__u32 :32;
};

/* steer_l2src: the source MACs of frames the program forwarded by an L2 flow. Those frames
 * never reach userspace, so its MAC learning cannot see them; it reads this instead (what a
 * switch's hardware reports to its bridge). LRU: the coldest source makes room. Written at most
 * every UMEM_STEER_L2_SOURCE_NS per source, so a busy source costs one lookup per frame. */
#define UMEM_STEER_MAX_L2_SOURCES 4096
#define UMEM_STEER_L2_SOURCE_NS 100000000ull

struct umem_steer_l2_source_key {
	__u32 ifindex; /* ingress interface */
	__u16 vlan;    /* outer VLAN id, 0 untagged */
	__u8 mac[6];
};

struct umem_steer_l2_source {
	__u64 last_ns; /* CLOCK_MONOTONIC_COARSE, like umem_steer_flow.last_ns */
	__u32 queue;   /* RX queue of that frame */
	__u32 :32;
};

/* Map and program names the control API looks up in an attached program (15 chars max). */
#define UMEM_STEER_PROG_NAME "umem_steer"
#define UMEM_STEER_MAP_TABLES "steer_tables"
#define UMEM_STEER_MAP_ACTIVE "steer_active"
#define UMEM_STEER_MAP_XSKS "steer_xsks"
#define UMEM_STEER_MAP_RULE_STATS "steer_rstats"
#define UMEM_STEER_MAP_ACTION_STATS "steer_astats"
#define UMEM_STEER_MAP_TRACE "steer_trace"
#define UMEM_STEER_MAP_FLOWS "steer_flows"
#define UMEM_STEER_MAP_FLOWS4 "steer_flows4"
#define UMEM_STEER_MAP_FLOW_GATE "steer_fgate"
#define UMEM_STEER_MAP_FLOW_STATS "steer_fstats"
#define UMEM_STEER_MAP_FLOW_CONF "steer_fconf"
#define UMEM_STEER_MAP_DEVS "steer_devs"
#define UMEM_STEER_MAP_L2_SOURCES "steer_l2src"
#define UMEM_STEER_MAP_PREFIX_SRC "steer_psrc"
#define UMEM_STEER_MAP_PREFIX_DST "steer_pdst"
#define UMEM_STEER_MAP_PREFIX_STATS "steer_pstats"

#endif
