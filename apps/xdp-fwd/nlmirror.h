/* SPDX-License-Identifier: MIT */
/*
 * xdp-fwd's mirror of the kernel's routing state (routes of one table, next hops, neighbours,
 * links, the namespace's own addresses), kept in sync over rtnetlink: one dump at start, then
 * events from a multicast socket; a lost event (ENOBUFS) makes a full resync. The routes feed
 * libumem's LPM (umem/lpm.h), which maps a destination to a next-hop id; the id names an entry
 * of the mirror's next-hop table, which workers read lock-free.
 *
 * Threads: one control thread owns the mirror (create, process, resync, resolve, reclaim,
 * destroy). Workers call only fwd_mirror_lookup4/6 on the view (fwd_mirror_view()), at any
 * time, lock-free:
 *  - a neighbour or link change rewrites next-hop records in place under a per-entry seqcount
 *    (a reader retries while a write is under way: it sees the old or the new record whole);
 *  - a route change updates the LPM (the reader sees the old or the new next hop);
 *  - a multipath group's member array is swapped atomically.
 * Memory a change frees (LPM groups, member arrays, next-hop ids) is reused only after
 * fwd_mirror_reclaim(), which the control thread calls once every worker has passed a
 * quiescent point (between bursts) since the last fwd_mirror_process(); so a reader that
 * looked an id up before a route change still reads that id's record, not a recycled one.
 */
#ifndef XDP_FWD_NLMIRROR_H
#define XDP_FWD_NLMIRROR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <umem/lpm.h>

/* Why a lookup does not give a complete forwarding record. FWD_NH_FORWARD: rewrite and send
 * out of ifindex; every other reason goes to the kernel or is dropped, counted by reason. */
enum fwd_nh_reason {
	FWD_NH_FORWARD = 0,
	FWD_NH_NOROUTE,     /* no route in the table (or a throw route): the kernel answers */
	FWD_NH_LOCAL,       /* one of the namespace's own addresses: the kernel's */
	FWD_NH_UNRESOLVED,  /* the next hop's MAC is not known (incomplete/failed/none) */
	FWD_NH_LINKDOWN,    /* the output link is down or unknown */
	FWD_NH_BLACKHOLE,   /* route types: dropped silently */
	FWD_NH_UNREACHABLE, /* ICMP host unreachable */
	FWD_NH_PROHIBIT,    /* ICMP administratively prohibited */
	FWD_NH_REASONS
};
extern const char *const fwd_nh_reason_names[FWD_NH_REASONS];

/* The record a worker forwards with. flags: FWD_NH_F_CONNECTED, the destination itself is
 * the neighbour (a directly connected route with no neighbour entry yet). */
#define FWD_NH_F_CONNECTED 1u
struct fwd_nh_rec {
	uint32_t ifindex;
	uint16_t mtu;
	uint8_t reason; /* enum fwd_nh_reason */
	uint8_t flags;
	uint8_t dmac[6];
	uint8_t smac[6];
	uint32_t nh; /* the next-hop id (a group's chosen member): for fwd_mirror_resolve */
};

/* A next-hop table entry, what workers read (the control thread's part is elsewhere). The record is three 64-bit words so a reader copies it with relaxed atomic loads
 * (no data race) between two reads of seq (odd: a write is under way). */
#define FWD_NH_REC_WORDS 3
_Static_assert(sizeof(struct fwd_nh_rec) == FWD_NH_REC_WORDS * 8, "record is three words");

struct fwd_nh_sel {
	uint32_t n; /* slots; a member appears in proportion to its weight */
	uint32_t member[];
};

struct fwd_nh {
	_Atomic uint32_t seq;
	_Atomic(struct fwd_nh_sel *) sel; /* a group: its members; NULL for a single next hop */
	_Atomic uint64_t w[FWD_NH_REC_WORDS];
};

/* Next-hop ids index a two-level table (chunks never move, so readers need no lock). */
#define FWD_NH_CHUNK_BITS 12
#define FWD_NH_CHUNKS (1u << (24 - FWD_NH_CHUNK_BITS))

struct fwd_mirror_view {
	struct umem_lpm4 *lpm4;
	struct umem_lpm6 *lpm6;
	struct fwd_nh *_Atomic chunk[FWD_NH_CHUNKS];
};

static inline const struct fwd_nh *fwd_nh_entry(const struct fwd_mirror_view *v, uint32_t id)
{
	const struct fwd_nh *c = atomic_load_explicit(&v->chunk[id >> FWD_NH_CHUNK_BITS], memory_order_acquire);

	return &c[id & ((1u << FWD_NH_CHUNK_BITS) - 1)];
}

static inline enum fwd_nh_reason fwd_nh_none(struct fwd_nh_rec *rec, enum fwd_nh_reason why, uint32_t id)
{
	memset(rec, 0, sizeof(*rec));
	rec->reason = (uint8_t)why;
	rec->nh = id;
	return why;
}

/* Reads next hop id (a group: the member the flow hash picks) into *rec; returns its reason. */
static inline enum fwd_nh_reason fwd_nh_read(const struct fwd_mirror_view *v, uint32_t id, uint32_t hash,
					     struct fwd_nh_rec *rec)
{
	const struct fwd_nh *e = fwd_nh_entry(v, id);
	const struct fwd_nh_sel *sel = atomic_load_explicit(&e->sel, memory_order_acquire);
	uint64_t w[FWD_NH_REC_WORDS];
	uint32_t s;

	if (sel) {
		if (!sel->n)
			return fwd_nh_none(rec, FWD_NH_UNRESOLVED, id);
		/* Multiply-shift, not modulo: one flow always picks the same slot. */
		e = fwd_nh_entry(v, sel->member[((uint64_t)hash * sel->n) >> 32]);
	}
	do {
		/* Pairs with the writer's release store of the even sequence number. */
		while ((s = atomic_load_explicit(&e->seq, memory_order_acquire)) & 1u)
			;
		/* Acquire: a word the writer stored (with release, after making seq odd) makes the
		 * odd seq visible to the re-read below, which cannot move above these loads. Plain
		 * loads on x86 and arm64's LDAR; no fence (which TSan does not model). */
		for (int i = 0; i < FWD_NH_REC_WORDS; i++)
			w[i] = atomic_load_explicit(&e->w[i], memory_order_acquire);
	} while (atomic_load_explicit(&e->seq, memory_order_relaxed) != s);
	memcpy(rec, w, sizeof(*rec));
	return (enum fwd_nh_reason)rec->reason;
}

/* addr in host byte order; hash: the flow's hash (multipath picks by it). */
static inline enum fwd_nh_reason fwd_mirror_lookup4(const struct fwd_mirror_view *v, uint32_t addr, uint32_t hash,
						    struct fwd_nh_rec *rec)
{
	uint32_t id;

	if (umem_lpm4__lookup(v->lpm4, addr, &id))
		return fwd_nh_none(rec, FWD_NH_NOROUTE, 0);
	return fwd_nh_read(v, id, hash, rec);
}

/* addr: 16 bytes in network byte order (as in the packet). */
static inline enum fwd_nh_reason fwd_mirror_lookup6(const struct fwd_mirror_view *v, const uint8_t addr[16],
						    uint32_t hash, struct fwd_nh_rec *rec)
{
	uint32_t id;

	if (umem_lpm6__lookup(v->lpm6, addr, &id))
		return fwd_nh_none(rec, FWD_NH_NOROUTE, 0);
	return fwd_nh_read(v, id, hash, rec);
}

struct fwd_mirror_opts {
	size_t sz;
	uint32_t table;        /* routing table id; 0: main (254) */
	int rcvbuf;            /* event socket's receive buffer in bytes; 0: 64 MiB */
	uint32_t resolve_ms;   /* fwd_mirror_resolve: at most one request per next hop per this; 0: 100 */
	bool quiet;            /* no messages on stderr (tests) */
	/* The LPMs' second-level groups (1 KiB each, mapped lazily). 0: sized for a full Internet
	 * table (65,536 for IPv4; 2^20 for IPv6, where a random /48 needs about three). */
	uint32_t lpm4_groups, lpm6_groups;
};

struct fwd_mirror_stats {
	uint64_t events;       /* netlink messages applied from the event socket */
	uint64_t resyncs;      /* full dumps after the first (lost events, links gone down) */
	uint64_t enobufs;      /* event socket overruns (each starts a resync) */
	uint64_t dump_retries; /* dumps interrupted by a concurrent change (NLM_F_DUMP_INTR), redone */
	uint64_t skipped;      /* routes of kinds the mirror does not model (tos, multicast, ...) */
	uint64_t lpm_errors;   /* LPM refused a prefix (-ENOSPC) */
	uint64_t resolves;     /* neighbour resolutions asked of the kernel */
	uint64_t resolves_limited; /* ... and not asked, too soon after the last for that next hop */
	uint64_t addr_changes; /* own addresses added or removed (a user rewrites what follows them) */
	uint32_t routes[2];    /* prefixes with a route, [0] IPv4, [1] IPv6 */
	uint32_t nexthops, neighbours, links, addrs;
	uint64_t last_dump_ns; /* the last full dump's duration */
};

/* Route-change apply latency (netlink message received -> LPM updated), last samples in ns. */
#define FWD_MIRROR_LAT_SAMPLES 65536

struct fwd_mirror;

/* Opens the sockets and loads the tables (a full dump). NULL and errno: ENOENT a table other
 * than main that does not exist or holds no routes (said on stderr, naming the table); EPERM
 * etc. from the sockets. */
struct fwd_mirror *fwd_mirror_create(const struct fwd_mirror_opts *opts);
void fwd_mirror_destroy(struct fwd_mirror *m);
const struct fwd_mirror_view *fwd_mirror_view(const struct fwd_mirror *m);
/* The event socket: non-blocking, poll it for POLLIN and call fwd_mirror_process. */
int fwd_mirror_fd(const struct fwd_mirror *m);
/* Applies every queued event (a full resync when events were lost). Number applied or -errno. */
int fwd_mirror_process(struct fwd_mirror *m);
/* A full dump now, reconciled with the mirror (what the dump lacks is removed). */
int fwd_mirror_resync(struct fwd_mirror *m);
/* Frees what changes since the last reclaim retired; call only after every reader has passed
 * a quiescent point since the last process/resync. */
void fwd_mirror_reclaim(struct fwd_mirror *m);
/* Asks the kernel to resolve next hop nh's neighbour (dst: the destination, used when the next
 * hop is directly connected; IPv4 4 bytes or IPv6 16, network order), rate-limited per next
 * hop: NTF_USE, or once the kernel refused that (no CAP_NET_ADMIN), an empty UDP datagram to
 * the neighbour's discard port. 0 sent, -EAGAIN too soon, -EINVAL not a next hop with a
 * neighbour. */
int fwd_mirror_resolve(struct fwd_mirror *m, uint32_t nh, int family, const void *dst);
const struct fwd_mirror_stats *fwd_mirror_stats(struct fwd_mirror *m);
/* The link's MAC address as last heard: 0, or -ENOENT (no such link, or not Ethernet). */
int fwd_mirror_link_mac(const struct fwd_mirror *m, uint32_t ifindex, uint8_t mac[6]);
/* Route-change latencies recorded so far (up to FWD_MIRROR_LAT_SAMPLES, oldest overwritten). */
size_t fwd_mirror_latencies(const struct fwd_mirror *m, const uint32_t **ns);

/* What a destination's route is, for checks and diagnostics (control thread): the reason,
 * and for a route through next hops each path's output ifindex and gateway (zero: connected).
 * A gateway equal to the destination means connected (a neighbour's host entry). */
#define FWD_MIRROR_PATHS_MAX 16
struct fwd_mirror_route {
	enum fwd_nh_reason reason; /* FORWARD/UNRESOLVED/LINKDOWN: through next hops */
	uint32_t npaths;
	struct {
		uint32_t ifindex;
		uint8_t gw[16];
		uint8_t dmac[6];
		bool resolved;
	} path[FWD_MIRROR_PATHS_MAX];
};
int fwd_mirror_explain(struct fwd_mirror *m, int family, const void *addr, struct fwd_mirror_route *r);

/* An address of the namespace (control thread), family AF_INET or AF_INET6, of interface
 * ifindex (0: of any), into out in network order (4 or 16 bytes used): one of global scope
 * before an IPv6 link-local one, never a loopback address. 0 (global), 1 (only a link-local
 * one), or -ENOENT when there is none. */
int fwd_mirror_addr(struct fwd_mirror *m, uint32_t ifindex, int family, uint8_t out[16]);

/* Reads net.ipv4.ip_forward and net.ipv6.conf.all.forwarding in the current namespace.
 * 0, or -errno if the IPv4 one cannot be read. A kernel without IPv6 (ipv6.disable=1) gives
 * *v6 true: there is no IPv6 traffic whose kernel part would be missing. */
int fwd_forwarding_check(bool *v4, bool *v6);

#endif
