/* SPDX-License-Identifier: MIT */
/*
 * libumem steering: the XDP program that picks, per frame, the AF_XDP socket that receives it
 * (or the kernel stack, or nobody), and its control API.
 *
 * One call attaches it: umem_steer__attach("eth0", NULL) loads the program and attaches it in
 * native mode (generic with a notice when the driver has none) through a bpf_link. Rules (at
 * most UMEM_STEER_MAX_RULES, scanned by priority, plus rules on src/dst prefixes in LPM tries,
 * longest prefix first) claim frames for sockets registered with umem_steer__set_socket(s,
 * index, xsk_fd); what no rule claims gets the default action, which passes it to the kernel
 * unless opts.default_action says otherwise, so ARP, ICMP and the host's own traffic keep
 * working. A forwarder that takes a whole queue sets default_action to UMEM_STEER_A_QUEUE (the
 * socket registered at the index of the ingress queue), usually with UMEM_STEER_F_HOST_CONTROL.
 * A frame whose socket is not registered goes to the kernel. See STEERING.md
 * (share/doc/libumem).
 *
 * Crash safety: the bpf_link dies with the process that holds it, so a killed owner leaves the
 * interface as it was. A program of ours whose owner is dead (left by UMEM_STEER_ATTACH_LIBXDP,
 * which pins) is replaced at the next attach; a live one is reported (-EBUSY). A program that
 * is not ours is never removed unless UMEM_STEER_F_REPLACE says so.
 *
 * A part of a process that finds the program already attached (by xdp-fwd, say) uses
 * umem_steer__open() instead: attach refuses a second steerer while the first owner lives.
 *
 * Concurrency: a handle is not thread-safe. Edits of the table (add, remove, clear, default,
 * table flags) are serialized across handles and processes by an flock(2) on a file in
 * /run/umem named after the program's id, held for the whole edit and dropped by the kernel if
 * the writer dies: no edit is lost and every rule id is given to one rule at a time. Readers
 * take no lock (the program and they see a whole table, old or new).
 * Errors: negative errno, with a message through the libumem print callback.
 */
#ifndef UMEM_STEER_H
#define UMEM_STEER_H

#include <stdbool.h>
#include <umem/common.h>
#include <umem/steer_abi.h>

#ifdef __cplusplus
extern "C" {
#endif

struct umem_steer;

/* How the program is attached (the same choice and fallback policy as umem_port_opts'
 * xdp_attach): AUTO falls back to generic mode after any native refusal except EBUSY/EEXIST,
 * with a notice naming the native error. */
enum umem_steer_mode {
	UMEM_STEER_MODE_AUTO = 0, /* native; generic (skb) with a notice when native is refused */
	UMEM_STEER_MODE_NATIVE,
	UMEM_STEER_MODE_GENERIC,
};

enum umem_steer_attach_kind {
	/* bpf_link owned by this process: detached by the kernel when the process dies. The
	 * interface holds no other XDP program in that mode meanwhile. */
	UMEM_STEER_ATTACH_LINK = 0,
	/* libxdp: coexists with other programs through libxdp's dispatcher (bpffs mounted).
	 * Survives its owner; a stale one is replaced at the next attach. */
	UMEM_STEER_ATTACH_LIBXDP,
};

enum umem_steer_flags {
	/* Replace an XDP program on the interface that is not ours (default: refuse). */
	UMEM_STEER_F_REPLACE = 1u << 0,
	/* Load the program and its maps but attach nothing (BPF_PROG_TEST_RUN, dry runs). The
	 * interface name may then be NULL; without it, queues are not validated. */
	UMEM_STEER_F_LOAD_ONLY = 1u << 1,
};

struct umem_steer_opts {
	size_t sz;            /* sizeof(struct umem_steer_opts) */
	uint32_t mode;        /* enum umem_steer_mode */
	uint32_t attach;      /* enum umem_steer_attach_kind */
	uint32_t flags;       /* enum umem_steer_flags */
	uint32_t table_flags; /* enum umem_steer_table_flags (HOST_CONTROL, TRACE) */
	uint32_t nr_sockets;  /* socket map size; 0 = max(64, rx queues) */
	uint32_t reserved; /* 0: room for a later field (checked) */
	/* What a frame no rule matches gets; NULL = UMEM_STEER_A_PASS (the kernel stack). */
	const struct umem_steer_action *default_action;
	/* A folder on a bpffs (created if missing, e.g. /sys/fs/bpf/xdp-fwd/eth0): the bpf_link,
	 * the program and every map are pinned there, so the program stays attached after this
	 * process exits, until umem_steer__unpin(). Another process, without CAP_BPF or
	 * CAP_NET_ADMIN, then edits it and registers its sockets through
	 * umem_steer__open_pinned(). UMEM_STEER_ATTACH_LINK only. NULL: nothing pinned. */
	const char *pin_dir;
	/* Owner of the pins, the folder and the writers' lock file: mode 0660 (folder 0770) for
	 * pin_uid:pin_gid, so that this user (or group) may open them. 0:0 = root only. */
	uint32_t pin_uid, pin_gid;
};

/* Loads and attaches the steering program on ifname. NULL and errno on failure (ENODEV no such
 * interface, EOPNOTSUPP native XDP unsupported, EBUSY another program is there); nothing stays
 * attached then. opts may be NULL. */
UMEM_API struct umem_steer *umem_steer__attach(const char *ifname, const struct umem_steer_opts *opts);

/* Opens the steering program already attached to ifname (by any process) to inspect or edit
 * it. The handle does not own the attachment. NULL and errno (ENOENT: none there; EPERM: a
 * program is attached but this process lacks CAP_BPF and CAP_NET_ADMIN to open it). */
UMEM_API struct umem_steer *umem_steer__open(const char *ifname);

/* Opens the program that umem_steer_opts.pin_dir pinned in dir, attached to ifname: the
 * maps through their pins, which needs no capability, only read and write permission on the
 * pins (the kernel lets every user open a pin it may access, whatever
 * kernel.unprivileged_bpf_disabled says; from kernel 6.5 that setting only gates creating maps
 * and loading programs). NULL and errno: ENOENT no pins there (a message says how to make
 * them), EACCES the pins' owner or mode refuse this user, EINVAL they are for another
 * interface, EPROTO pins of another program or libumem version. The handle does not own the
 * attachment (detach only closes it); table edits take the writers' lock as any handle. */
UMEM_API struct umem_steer *umem_steer__open_pinned(const char *dir, const char *ifname);

/* Descriptors of a steering program that another process holds (umem_steer__open_fds). */
struct umem_steer_fds {
	size_t sz;          /* sizeof(struct umem_steer_fds) */
	int prog_fd;        /* the program: umem_steer__prog_fd() of the holder's handle */
	int link_fd;        /* its bpf_link, or -1 (then UMEM_STEER_ATTACH_LIBXDP is assumed) */
	const int *map_fds; /* its maps, any order: umem_steer__map_fds() and, with a flow */
	uint32_t nr_map_fds; /* table, umem_steer_flows__map_fds() of the holder's handles */
};

/* Opens the steering program attached to ifname from descriptors that the process holding it
 * handed over (SCM_RIGHTS over a unix socket: a restart's successor): as umem_steer__open, but
 * with no lookup by id, which the kernel allows CAP_SYS_ADMIN only; the maps need no
 * capability at all then. The handle keeps copies of the descriptors (the caller closes its
 * own), and umem_steer_flows__open on it takes the flow maps from them too. The program must
 * be the umem_steer program ifname runs now, attached by a bpf_link or directly (not one
 * behind libxdp's dispatcher: the interface runs the dispatcher's id). NULL and errno: EINVAL
 * fds (a bad sz, no prog_fd), ENOENT not the program attached to ifname, EPERM a map it needs
 * not handed over and not to be opened by id. */
UMEM_API struct umem_steer *umem_steer__open_fds(const char *ifname, const struct umem_steer_fds *fds);

/* The descriptors of the handle's maps into out (not copies: the handle's own, for sending),
 * for umem_steer__open_fds in another process. Their count, -ENOSPC when out holds fewer than
 * UMEM_STEER_MAP_FDS_MAX, -EINVAL no handle. */
UMEM_API int umem_steer__map_fds(const struct umem_steer *s, int *out, uint32_t max);
#define UMEM_STEER_MAP_FDS_MAX 16

/* Removes what umem_steer_opts.pin_dir pinned in dir (the pins, the folder, the writers' lock
 * file): once no process holds the link any more, the kernel detaches the program. -ENOENT no
 * pins there, -EPROTO dir holds something else (left as it is). */
UMEM_API int umem_steer__unpin(const char *dir);

/* Detaches the program if this handle attached it, and frees the handle. NULL is a no-op. */
UMEM_API void umem_steer__detach(struct umem_steer *s);

/* Adds a rule (its id is written to rule->id). -EINVAL for an unknown field or action, a socket
 * index beyond nr_sockets, a queue the interface does not have, a bad prefix (length beyond the
 * family's, host bits set, src and dst of different families); -ENOSPC when the table is full.
 * A rule with a src or dst prefix goes to the prefix tries instead of the table (id from
 * UMEM_STEER_PREFIX_ID_BASE; -ENOSPC when its prefix holds UMEM_STEER_PREFIX_SLOTS rules, the
 * trie UMEM_STEER_MAX_PREFIXES prefixes, or the tries UMEM_STEER_MAX_PREFIX_RULES rules). On
 * error the rules are as they were (a full trie, found only at its write, moves the generation
 * on). */
UMEM_API int umem_steer__add_rule(struct umem_steer *s, struct umem_steer_rule *rule);
/* Removes the rule with that id and copies it into *removed (may be NULL). -ENOENT if no rule
 * has that id. */
UMEM_API int umem_steer__remove_rule(struct umem_steer *s, uint32_t id, struct umem_steer_rule *removed);
/* umem_steer__remove_rule's name until 0.1, kept for one release. */
UMEM_API int umem_steer__remove_rule_get(struct umem_steer *s, uint32_t id, struct umem_steer_rule *removed)
	UMEM_DEPRECATED("use umem_steer__remove_rule");
/* Removes every rule. */
UMEM_API int umem_steer__clear_rules(struct umem_steer *s);
/* Copies up to max rules of the table (rules without a prefix) in evaluation order; returns how
 * many there are (may exceed max). */
UMEM_API int umem_steer__rules(struct umem_steer *s, struct umem_steer_rule *out, uint32_t max);
/* Per prefix rule, with its counter; a non-zero return stops the walk (and is returned). */
typedef int (*umem_steer_rule_fn)(const struct umem_steer_rule *rule, const struct umem_steer_counter *count,
				  void *arg);
/* Calls fn (may be NULL) for every prefix rule, src trie then dst trie, each prefix's rules by
 * priority; returns how many it visited, or negative errno. */
UMEM_API int umem_steer__prefix_rules(struct umem_steer *s, umem_steer_rule_fn fn, void *arg);
/* A place in a walk of the prefix rules (umem_steer__prefix_rules_step); zeroed: the start. */
struct umem_steer_prefix_cursor {
	uint32_t dir;     /* the trie walked (enum umem_steer_prefix_dir); 2: the walk is complete */
	uint32_t started; /* key is the last prefix visited in that trie */
	struct umem_steer_prefix_key key;
};
/* umem_steer__prefix_rules in steps, for a loop that must not stall on a large table (a whole
 * walk of 100,000 prefixes takes about a second of CPU): the rules of at most max
 * prefixes from *cur on, cur moved past them. Returns the rules visited, or negative errno; cur->dir
 * is 2 once the walk is complete. The tries may change between steps: a rule added behind the
 * cursor is not visited, and a prefix removed under it starts its trie again (the kernel goes on
 * from a key its LPM trie still holds). */
UMEM_API int umem_steer__prefix_rules_step(struct umem_steer *s, struct umem_steer_prefix_cursor *cur,
					   uint32_t max, umem_steer_rule_fn fn, void *arg);
/* The action a frame no rule matches gets: set it (-EINVAL as add_rule for a bad action), read it. */
UMEM_API int umem_steer__set_default(struct umem_steer *s, const struct umem_steer_action *action);
UMEM_API int umem_steer__default(struct umem_steer *s, struct umem_steer_action *out);
/* The table's enum umem_steer_table_flags (HOST_CONTROL, TRACE): replace them, read them. */
UMEM_API int umem_steer__set_table_flags(struct umem_steer *s, uint32_t table_flags);
UMEM_API int umem_steer__table_flags(struct umem_steer *s, uint32_t *out);

/* Registers an AF_XDP socket (any bound AF_XDP socket fd) at index; xsk_fd < 0 clears it. A
 * closed socket leaves the map by itself. The index is what actions name: "sock N" and "group
 * N-M" mean the sockets registered at N (..M); "queue" means the socket registered at the index
 * equal to the frame's ingress queue. So a socket bound to queue q that takes its queue's
 * traffic through "queue" is registered at q; one named by "sock N" at N (any free slot below
 * nr_sockets, whatever queue it is bound to). Mixing both on one table, keep the "sock" slots
 * clear of the queue numbers in use. */
UMEM_API int umem_steer__set_socket(struct umem_steer *s, uint32_t index, int xsk_fd);

/* Counters summed over CPUs. rule_id: a rule's id (a prefix rule's too: -ENOENT if none has it)
 * or UMEM_STEER_RULE_DEFAULT. */
UMEM_API int umem_steer__rule_counter(struct umem_steer *s, uint32_t rule_id, struct umem_steer_counter *out);
/* The same for a rule as listed (umem_steer__rules, umem_steer__prefix_rules): a prefix rule's
 * counter in one lookup of its prefix, where by id alone the tries are walked. -ENOENT when
 * that rule is gone. */
UMEM_API int umem_steer__rule_counter_of(struct umem_steer *s, const struct umem_steer_rule *rule,
					 struct umem_steer_counter *out);
/* out[UMEM_STEER_S_NR], indexed by enum umem_steer_stat. */
UMEM_API int umem_steer__action_counters(struct umem_steer *s, struct umem_steer_counter *out);
UMEM_API int umem_steer__reset_counters(struct umem_steer *s);
/* Last decision on a CPU (needs UMEM_STEER_F_TRACE). */
UMEM_API int umem_steer__trace(struct umem_steer *s, int cpu, struct umem_steer_trace *out);

struct umem_steer_info {
	size_t sz;             /* sizeof(struct umem_steer_info) */
	uint32_t ifindex;      /* 0 when loaded without an interface */
	uint32_t prog_id;
	uint32_t mode;         /* enum umem_steer_mode actually in use (NATIVE or GENERIC) */
	uint32_t attach;       /* enum umem_steer_attach_kind */
	uint32_t nr_sockets;
	uint32_t nr_queues;    /* rx queues of the interface; 0 unknown */
	uint32_t owner_pid;    /* process that attached it */
	uint32_t owned;        /* 1 if this handle attached it */
	uint64_t generation;   /* table changes so far */
	uint32_t owner_alive;  /* 1 if the owner process still runs (pid and start time match) */
	/* Prefix rule ids handed out so far (ids are monotonic: the next one is
	 * UMEM_STEER_PREFIX_ID_BASE + prefix_ids, wrapping to 0 after 2^32 - BASE): a reader can tell
	 * new prefix rules from the ones it has seen without walking the tries. */
	uint32_t prefix_ids;
};
UMEM_API int umem_steer__info(struct umem_steer *s, struct umem_steer_info *out);
UMEM_API int umem_steer__prog_fd(const struct umem_steer *s);
UMEM_API int umem_steer__xsks_fd(const struct umem_steer *s);
/* The bpf_link of a handle that attached the program through one (UMEM_STEER_ATTACH_LINK), or
 * -ENOENT (opened, pinned, libxdp). The program stays attached while any process holds a
 * descriptor of its link: a duplicate passed to another process (SCM_RIGHTS) keeps it attached
 * after this handle is detached or its process exits, which is how one owner hands a running
 * program to the next (xdp-fwd --takeover). Owned by the handle: not to be closed. */
UMEM_API int umem_steer__link_fd(const struct umem_steer *s);

/* Rule text, shared by every tool ("udp dport 5000 -> sock 1", "prio 5 arp -> pass"):
 *   rule   := [prio N] match... -> action
 *   match  := queue N | vlan N | ethertype (N|arp|ipv4|ipv6) | arp | ipv4 | ipv6
 *           | tcp | udp | sctp | udplite | icmp | icmp6 | proto N | sport N | dport N
 *           | dmac XX:XX:XX:XX:XX:XX | src PREFIX | dst PREFIX | any
 *   PREFIX := A.B.C.D[/0..32] | IPv6[/0..128] (no length: one host; no host bits set)
 *   action := sock N | group FIRST-LAST | queue | pass | drop
 * Numbers are decimal or 0x-hex. -EINVAL with a message naming the bad token; out untouched. */
UMEM_API int umem_steer_rule__parse(const char *text, struct umem_steer_rule *out);
UMEM_API int umem_steer_action__parse(const char *text, struct umem_steer_action *out);
/* Writes the rule as parseable text; returns the length snprintf would have written. */
UMEM_API int umem_steer_rule__format(const struct umem_steer_rule *rule, char *buf, size_t len);
UMEM_API int umem_steer_action__format(const struct umem_steer_action *action, char *buf, size_t len);
/* "sock", "group", ..., "no_socket", "host_control", "malformed"; NULL when out of range. */
UMEM_API const char *umem_steer_stat__name(uint32_t stat);
/* Whether a frame received on RX queue queue matches m (m->fields 0: any frame), as the
 * steering program decides it: the same headers read the same way (up to two VLAN tags, IPv6
 * extension headers, no ports in a later fragment; a header cut short, or IP lengths beyond the
 * frame, end the parse with the fields found so far). frame[0..len) holds the headers (a first
 * buffer); frame_len is the whole frame's length with later buffers (at most len counts as
 * len). For the program's decisions in userspace: a capture filter, whether a rule takes a
 * frame. */
UMEM_API bool umem_steer__match_frame(const struct umem_steer_match *m, const void *frame, uint32_t len,
				      uint32_t frame_len, uint32_t queue);

/*
 * Flow table (offload): a controller in userspace decides a flow, then installs it so the
 * program applies the decision itself (redirect out of an interface, drop, pass, a socket).
 * Only frames no rule matches are looked up (rules keep priority); see docs/STEERING.md.
 *
 *   struct umem_steer_flows *f = umem_steer_flows__open(s);
 *   umem_steer_flow_key__parse(frame, len, ifindex, UMEM_STEER_FLOW_IPV4, &key);
 *   umem_steer_flows__add(f, &key, &(struct umem_steer_flow){
 *           .action = UMEM_STEER_FLOW_A_REDIRECT, .index = out_ifindex });
 *
 * The handle holds the flow maps of the program behind s (attached or opened); it outlives s
 * harmlessly (the maps stay until closed). Not thread-safe, like the steering handle. NULL with
 * errno EPROTO when the program's flows are laid out by another libumem version.
 */
struct umem_steer_flows;

UMEM_API struct umem_steer_flows *umem_steer_flows__open(struct umem_steer *s);
UMEM_API void umem_steer_flows__close(struct umem_steer_flows *f);
/* The descriptors of the flow table's maps into out (the handle's own), for
 * umem_steer__open_fds in another process. Their count, -ENOSPC when out holds fewer than
 * UMEM_STEER_MAP_FDS_MAX. */
UMEM_API int umem_steer_flows__map_fds(const struct umem_steer_flows *f, int *out, uint32_t max);

/* Adds a flow (counters start at zero). -EINVAL a malformed key (unknown kind, unused bytes not
 * zero, group MAC, not TCP/UDP) or flow (unknown action or flags, a tag without
 * UMEM_STEER_FLOW_F_ORDERED; UMEM_STEER_FLOW_F_ROUTE on other than a 5-tuple's redirect, with a
 * zero or group MAC, or an MTU below the protocol's minimum); -ENODEV redirect to an
 * interface that does not exist; -EEXIST already there; -ENOSPC the table holds its limit (the
 * caller keeps the flow on its own path). Nothing changes on error. */
UMEM_API int umem_steer_flows__add(struct umem_steer_flows *f, const struct umem_steer_flow_key *key,
				   const struct umem_steer_flow *flow);
/* -ENOENT when the flow is not there. */
UMEM_API int umem_steer_flows__delete(struct umem_steer_flows *f, const struct umem_steer_flow_key *key);
UMEM_API int umem_steer_flows__lookup(struct umem_steer_flows *f, const struct umem_steer_flow_key *key,
				      struct umem_steer_flow *out);
/* UMEM_STEER_FLOW_F_ORDERED: the caller holds no frame of the flow any more and has sent sent
 * frames of it since adding it. The gate stays shut until the first call, then opens at the
 * next frame once sent covers every frame the program gave the caller (flow.gated). UINT64_MAX
 * opens it at the next frame whatever is still gated (the order across the switch is then the
 * caller's risk). With flow.tag set, sent can be exact: the frames seen with the flow's gate mark
 * in front of them (struct umem_steer_gate_mark) are the gated ones, and the highest seq seen
 * plus one covers those lost on the way too. UINT64_MAX is also in order once the caller drops
 * every marked frame from some seq on and has seen one of them (sent the rest it holds). */
UMEM_API int umem_steer_flows__release(struct umem_steer_flows *f, const struct umem_steer_flow_key *key,
				       uint64_t sent);

/* UMEM_STEER_FLOW_F_MARK_DATA: the bytes a received frame (its first buffer, len bytes at data)
 * carries in front of it as its gate mark: sizeof(struct umem_steer_gate_mark), or 0 when it
 * starts with none. Once the mark's tag is found to be one of the caller's flows' (a sender can
 * forge a mark), move the descriptor's addr forward and its len back by as much before any
 * other use; the mark then sits right before the frame, where a metadata mark would. Needs a
 * little-endian host (see the mark's layout in steer_abi.h). */
static inline uint32_t umem_steer_gate__unwrap(const void *data, uint32_t len);

static inline uint32_t umem_steer_gate__unwrap(const void *data, uint32_t len)
{
	uint32_t magic;

	if (len < sizeof(struct umem_steer_gate_mark) + 14)
		return 0;
	/* The frame's bytes may sit at any alignment. */
	__builtin_memcpy(&magic, (const unsigned char *)data + __builtin_offsetof(struct umem_steer_gate_mark, magic),
			 sizeof(magic));
	return magic == UMEM_STEER_GATE_MAGIC ? (uint32_t)sizeof(struct umem_steer_gate_mark) : 0;
}

/* Per flow; a non-zero return stops the walk. */
typedef int (*umem_steer_flow_fn)(const struct umem_steer_flow_key *key, const struct umem_steer_flow *flow,
				  void *arg);
/* Calls fn (may be NULL) for every flow; returns how many it visited, or negative errno. */
UMEM_API int umem_steer_flows__foreach(struct umem_steer_flows *f, umem_steer_flow_fn fn, void *arg);
/* Deletes flows without a frame for more than idle_ns (gated frames count), calling fn (may be
 * NULL) with each one's last counters; returns how many. Also recounts the table. */
UMEM_API int umem_steer_flows__expire(struct umem_steer_flows *f, uint64_t idle_ns, umem_steer_flow_fn fn,
				      void *arg);
/* Per source MAC; a non-zero return stops the walk. */
typedef int (*umem_steer_l2_source_fn)(const struct umem_steer_l2_source_key *key,
				       const struct umem_steer_l2_source *src, void *arg);
/* Calls fn for every source MAC the program saw on frames it forwarded by an L2 flow, with the
 * time and RX queue of the latest (at most UMEM_STEER_L2_SOURCE_NS old while the source sends):
 * those frames never reach userspace, so a learning bridge refreshes its table from this.
 * Returns how many it visited, or negative errno (-EOPNOTSUPP: a program built before the
 * sources were recorded). */
UMEM_API int umem_steer_flows__l2_sources(struct umem_steer_flows *f, umem_steer_l2_source_fn fn, void *arg);
/* Deletes every flow (and every recorded L2 source). */
UMEM_API int umem_steer_flows__clear(struct umem_steer_flows *f);
/* At most limit flows (0: UMEM_STEER_MAX_FLOWS); -EINVAL beyond the table's size. */
UMEM_API int umem_steer_flows__set_limit(struct umem_steer_flows *f, uint32_t limit);
/* Flows added (through this API) and the limit; either pointer may be NULL. */
UMEM_API int umem_steer_flows__count(struct umem_steer_flows *f, uint32_t *nr, uint32_t *limit);
/* out[UMEM_STEER_FS_NR], summed over CPUs: frames flows decided, by outcome. They outlive the
 * flows, so they add up across expiry. */
UMEM_API int umem_steer_flows__counters(struct umem_steer_flows *f, struct umem_steer_counter *out);
/* The clock of umem_steer_flow.last_ns (CLOCK_MONOTONIC_COARSE as the host sees it: in a time
 * namespace, without its monotonic offset), in ns. */
UMEM_API uint64_t umem_steer_flows__now_ns(void);

/* The key the program builds for a frame: kind UMEM_STEER_FLOW_L2 (destination MAC, outer VLAN)
 * or UMEM_STEER_FLOW_IPV4 for a 5-tuple (IPv4 or IPv6, which sets the kind it finds).
 * -ENOENT when the frame has none the program would match: group destination, ARP/ND, a
 * fragment, not TCP/UDP, cut short. IPv6 through the extension headers the program walks
 * (hop-by-hop, routing, destination options; UMEM_STEER_MAX_EXTHDR), as it does. */
UMEM_API int umem_steer_flow_key__parse(const void *frame, uint32_t len, uint32_t ifindex, uint32_t kind,
					struct umem_steer_flow_key *out);
/* One line, "in IF ipv4 udp A:P > B:Q -> redirect IF packets N bytes N gated N idle S". */
UMEM_API int umem_steer_flow__format(const struct umem_steer_flow_key *key, const struct umem_steer_flow *flow,
				     char *buf, size_t len);
/* "redirect", "drop", "pass", "sock", "gated", "no_dev", "csum_partial"; NULL when out of range. */
UMEM_API const char *umem_steer_flow_stat__name(uint32_t stat);

#ifdef __cplusplus
}
#endif
#endif
