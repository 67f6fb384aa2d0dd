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
	UMEM_STEER_M_ALL = (1u << 7) - 1,
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
	struct umem_steer_rule rules[UMEM_STEER_MAX_RULES];
};

struct umem_steer_counter {
	__u64 packets;
	__u64 bytes;
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
	__u32 malformed; /* 1 if a header was cut short or invalid */
};

/* Map and program names the control API looks up in an attached program (15 chars max). */
#define UMEM_STEER_PROG_NAME "umem_steer"
#define UMEM_STEER_MAP_TABLES "steer_tables"
#define UMEM_STEER_MAP_ACTIVE "steer_active"
#define UMEM_STEER_MAP_XSKS "steer_xsks"
#define UMEM_STEER_MAP_RULE_STATS "steer_rstats"
#define UMEM_STEER_MAP_ACTION_STATS "steer_astats"
#define UMEM_STEER_MAP_TRACE "steer_trace"

#endif
