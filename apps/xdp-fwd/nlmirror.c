/* SPDX-License-Identifier: MIT */
/*
 * The mirror of the kernel's routing state (nlmirror.h). Three sockets: events (multicast
 * groups, non-blocking, a big receive buffer), dumps (blocking, strict checking so the kernel
 * filters routes by table) and requests (neighbour resolution, fire and forget).
 *
 * The route store maps (family, prefix, length) to an entry holding the table's routes for
 * that prefix (by metric: the lowest wins, as in the kernel), a count of the namespace's own
 * addresses equal to it (a host prefix) and a neighbour's host next hop. What the entry
 * resolves to is installed in the LPM: own address > route > neighbour. Neighbours on a
 * directly connected subnet get host prefixes of their own, so the LPM gives a worker the
 * neighbour's next hop directly (a connected route alone says "the destination is the
 * neighbour", which a worker cannot resolve without a second table).
 *
 * Next hops are deduplicated by (ifindex, gateway) and by member set for multipath; the
 * kernel's nexthop objects (RTM_NEWNEXTHOP) get entries of their own, since a route names
 * the object and the object may be replaced. References count the routes, groups and host
 * entries that use an entry; an id freed waits for fwd_mirror_reclaim before reuse.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/neighbour.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>

#include "nlmirror.h"

const char *const fwd_nh_reason_names[FWD_NH_REASONS] = {
	[FWD_NH_FORWARD] = "forward",       [FWD_NH_NOROUTE] = "no_route",
	[FWD_NH_LOCAL] = "local",           [FWD_NH_UNRESOLVED] = "unresolved",
	[FWD_NH_LINKDOWN] = "link_down",    [FWD_NH_BLACKHOLE] = "blackhole",
	[FWD_NH_UNREACHABLE] = "unreachable", [FWD_NH_PROHIBIT] = "prohibit",
};

/* Reserved next-hop ids for the route types that need no next hop. */
enum { NH_BLACKHOLE, NH_UNREACHABLE, NH_PROHIBIT, NH_LOCAL, NH_THROW, NH_FIRST };
#define NH_NONE UINT32_MAX
#define NH_PER_CHUNK (1u << FWD_NH_CHUNK_BITS)
#define SEL_SLOTS_MAX 256u /* a group's selection array: weights scaled to at most this */
#define MP_MAX 64u         /* paths of one multipath route */
/* A multipath member's weight carries the kernel's RTNH_F_DEAD in its top bit (weights are at
 * most 256): a member whose link went down stays in its group, out of the selection, and comes
 * back when the link comes up, as the kernel's fib_sync_up() revives it. Part of the group's
 * identity, so routes share a group only with the same dead members. */
#define WT_DEAD 0x8000u
/* nh_ctl.doom: the next hop is going, with the routes of these families that use it. */
#define DOOM4 1u
#define DOOM6 2u
/* The kernel's NUD_VALID (include/net/neighbour.h, not in the uapi): states with a MAC. */
#define NUD_WITH_MAC (NUD_PERMANENT | NUD_NOARP | NUD_REACHABLE | NUD_PROBE | NUD_STALE | NUD_DELAY)

/* ---- a chained hash, nodes embedded in their objects ---- */
struct hnode {
	struct hnode *next;
	uint64_t h;
};
struct htab {
	struct hnode **b;
	size_t mask, n;
};

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (; n >= 8; n -= 8, b += 8) {
		uint64_t w;

		memcpy(&w, b, 8);
		h = umem_hash__mix64(h ^ w);
	}
	for (; n; n--, b++)
		h = umem_hash__mix64(h ^ *b);
	return h;
}

static int ht_init(struct htab *t, size_t nb)
{
	t->b = calloc(nb, sizeof(*t->b));
	t->mask = nb - 1;
	t->n = 0;
	return t->b ? 0 : -ENOMEM;
}

static void ht_add(struct htab *t, struct hnode *n, uint64_t h)
{
	if (t->n >= t->mask + 1) {
		/* Doubling when the load reaches one; on failure the chains just grow longer. */
		size_t nb = (t->mask + 1) * 2;
		struct hnode **b = calloc(nb, sizeof(*b));

		if (b) {
			for (size_t i = 0; i <= t->mask; i++) {
				for (struct hnode *p = t->b[i], *next; p; p = next) {
					next = p->next;
					p->next = b[p->h & (nb - 1)];
					b[p->h & (nb - 1)] = p;
				}
			}
			free(t->b);
			t->b = b;
			t->mask = nb - 1;
		}
	}
	n->h = h;
	n->next = t->b[h & t->mask];
	t->b[h & t->mask] = n;
	t->n++;
}

static void ht_del(struct htab *t, struct hnode *n)
{
	for (struct hnode **pp = &t->b[n->h & t->mask]; *pp; pp = &(*pp)->next) {
		if (*pp == n) {
			*pp = n->next;
			t->n--;
			return;
		}
	}
}

#define ht_each(t, hv, p) for (struct hnode *p = (t)->b[(hv) & (t)->mask]; p; p = p->next) if (p->h == (hv))
#define container_of(p, type, member) ((type *)(void *)((char *)(p) - offsetof(type, member)))

/* ---- a growable array ---- */
struct vec {
	void *v;
	size_t n, cap, esz;
};

static void *vec_push(struct vec *a)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 16;
		void *v = realloc(a->v, cap * a->esz);

		if (!v)
			return NULL;
		a->v = v;
		a->cap = cap;
	}
	return (char *)a->v + a->n++ * a->esz;
}

static void *vec_at(const struct vec *a, size_t i)
{
	return (char *)a->v + i * a->esz;
}

static void vec_del(struct vec *a, size_t i) /* order not kept */
{
	memmove(vec_at(a, i), vec_at(a, a->n - 1), a->esz);
	a->n--;
}

/* ---- the model ---- */
struct link {
	uint32_t ifindex, mtu, flags, gen;
	uint8_t mac[6], has_mac;
	char name[IF_NAMESIZE];
};

struct neigh {
	struct hnode hn;
	uint32_t ifindex, gen, host_nh; /* host_nh: its host prefix's next hop, NH_NONE: none */
	uint8_t family, resolved;
	uint8_t addr[16], mac[6];
};

struct addr {
	uint32_t ifindex, gen;
	uint8_t family, addr[16];
};

enum nh_kind { NHK_SPECIAL, NHK_SINGLE, NHK_GROUP, NHK_OBJ_SINGLE, NHK_OBJ_GROUP };

struct nh_ctl {
	struct hnode hn;  /* singles and groups: the dedupe table; objects: by kernel id */
	uint32_t id, refcnt, ifindex, kid, gen, nmem;
	uint8_t kind, family, blackhole, present; /* present: a kernel object that exists */
	uint8_t doom;     /* DOOM4/DOOM6, between marking and purging (purge_doomed) */
	uint8_t gw[16];
	uint32_t *mem;    /* groups: member ids and weights */
	uint16_t *wt;
	uint64_t resolve_ns;
};

/* A prefix's route is named by its metric, and for IPv6 by its device too: IPv6 keeps one
 * route per device at one metric (fe80::/64 on every link), IPv4 one per metric. */
struct rt_path {
	uint32_t priority, oif, nh, gen;
	uint8_t type;
};

struct rt_entry {
	struct hnode hn;
	uint32_t installed, neigh_nh; /* NH_NONE: not in the LPM / no neighbour host entry */
	uint8_t family, len, nloc, npaths, cap;
	uint8_t addr[16];
	struct rt_path *paths; /* by priority; &inl while one fits */
	struct rt_path inl;
};

struct fwd_mirror {
	struct fwd_mirror_view view;
	struct nh_ctl *ctl[FWD_NH_CHUNKS];
	uint32_t table, resolve_ns, gen, seq, next_id, nlive;
	bool quiet, bulk, resync_needed;
	/* The kernel refused a resolution request (EPERM: no CAP_NET_ADMIN, as under --pinned):
	 * resolutions are a datagram of our own to the neighbour from then on (resolve_by_send). */
	bool resolve_refused;
	struct mnl_socket *ev, *dump, *req;
	char *buf;
	size_t buflen;
	struct htab rt, nb, nhs, objs;
	struct vec links, addrs, freelist, pending, retired;
	uint32_t lencount[2][129];
	int dump_err[2]; /* the last route dump's error per family (-ENOENT: no such table) */
	struct fwd_mirror_stats st;
	uint32_t *lat;
	size_t nlat;
};

#define say(m, ...) do { if (!(m)->quiet) fprintf(stderr, "xdp-fwd: " __VA_ARGS__); } while (0)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int fam_idx(uint8_t family)
{
	return family == AF_INET6;
}

static unsigned fam_len(uint8_t family)
{
	return family == AF_INET6 ? 16 : 4;
}

static bool zero16(const uint8_t *a)
{
	static const uint8_t z[16];

	return !memcmp(a, z, 16);
}

static void mask_addr(uint8_t *a, unsigned len, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++) {
		unsigned bits = len > i * 8 ? len - i * 8 : 0;

		if (bits < 8)
			a[i] &= (uint8_t)(0xff00u >> bits);
	}
	memset(a + bytes, 0, 16 - bytes);
}

/* ---- next hops ---- */
static struct nh_ctl *nhc(struct fwd_mirror *m, uint32_t id)
{
	return &m->ctl[id >> FWD_NH_CHUNK_BITS][id & (NH_PER_CHUNK - 1)];
}

static struct fwd_nh *nhe(struct fwd_mirror *m, uint32_t id)
{
	struct fwd_nh *c = atomic_load_explicit(&m->view.chunk[id >> FWD_NH_CHUNK_BITS], memory_order_relaxed);

	return &c[id & (NH_PER_CHUNK - 1)];
}

static void nh_write(struct fwd_mirror *m, uint32_t id, const struct fwd_nh_rec *rec)
{
	struct fwd_nh *e = nhe(m, id);
	uint32_t s = atomic_load_explicit(&e->seq, memory_order_relaxed);
	uint64_t w[FWD_NH_REC_WORDS];

	memcpy(w, rec, sizeof(w));
	atomic_store_explicit(&e->seq, s + 1, memory_order_relaxed);
	/* Release: each word is ordered after the odd sequence number (pairs with the reader's
	 * acquire load of the word), so a reader that sees a new word sees the write under way. */
	for (int i = 0; i < FWD_NH_REC_WORDS; i++)
		atomic_store_explicit(&e->w[i], w[i], memory_order_release);
	/* Pairs with the reader's acquire load of seq. */
	atomic_store_explicit(&e->seq, s + 2, memory_order_release);
}

static uint32_t nh_alloc(struct fwd_mirror *m)
{
	uint32_t id;

	if (m->freelist.n) {
		id = *(uint32_t *)vec_at(&m->freelist, --m->freelist.n);
	} else {
		uint32_t c;

		if (m->next_id > UMEM_LPM_NH_MAX)
			return NH_NONE;
		id = m->next_id;
		c = id >> FWD_NH_CHUNK_BITS;
		if (!m->ctl[c]) {
			struct fwd_nh *e = calloc(NH_PER_CHUNK, sizeof(*e));

			m->ctl[c] = calloc(NH_PER_CHUNK, sizeof(struct nh_ctl));
			if (!e || !m->ctl[c]) {
				free(e);
				free(m->ctl[c]);
				m->ctl[c] = NULL;
				return NH_NONE;
			}
			/* Pairs with the reader's acquire load in fwd_nh_entry. */
			atomic_store_explicit(&m->view.chunk[c], e, memory_order_release);
		}
		m->next_id++;
	}
	memset(nhc(m, id), 0, sizeof(struct nh_ctl));
	nhc(m, id)->id = id;
	m->nlive++;
	/* Until it is filled in (or if a group's array cannot be allocated): not forwardable. */
	nh_write(m, id, &(struct fwd_nh_rec){ .reason = FWD_NH_LINKDOWN, .nh = id });
	return id;
}

static const struct link *link_find(const struct fwd_mirror *m, uint32_t ifindex)
{
	for (size_t i = 0; i < m->links.n; i++) {
		const struct link *l = vec_at(&m->links, i);

		if (l->ifindex == ifindex)
			return l;
	}
	return NULL;
}

static bool link_usable(const struct link *l)
{
	return (l->flags & IFF_UP) && (l->flags & IFF_RUNNING);
}

static uint64_t neigh_hash(uint32_t ifindex, uint8_t family, const uint8_t *addr)
{
	return hash_bytes(umem_hash__mix64(((uint64_t)ifindex << 8) | family), addr, 16);
}

static struct neigh *neigh_find(const struct fwd_mirror *m, uint32_t ifindex, uint8_t family, const uint8_t *addr)
{
	uint64_t h = neigh_hash(ifindex, family, addr);

	ht_each(&m->nb, h, p)
	{
		struct neigh *n = container_of(p, struct neigh, hn);

		if (n->ifindex == ifindex && n->family == family && !memcmp(n->addr, addr, 16))
			return n;
	}
	return NULL;
}

/* A single next hop's record from its link and neighbour. */
static void nh_publish(struct fwd_mirror *m, uint32_t id)
{
	struct nh_ctl *c = nhc(m, id);
	struct fwd_nh_rec rec = { .nh = id, .ifindex = c->ifindex };
	const struct link *l;

	if (c->blackhole) {
		rec.reason = FWD_NH_BLACKHOLE;
		nh_write(m, id, &rec);
		return;
	}
	l = link_find(m, c->ifindex);
	if (l) {
		memcpy(rec.smac, l->mac, 6);
		rec.mtu = (uint16_t)(l->mtu > UINT16_MAX ? UINT16_MAX : l->mtu);
	}
	if (!l || !link_usable(l)) {
		rec.reason = FWD_NH_LINKDOWN;
	} else if (zero16(c->gw)) {
		rec.reason = FWD_NH_UNRESOLVED;
		rec.flags = FWD_NH_F_CONNECTED;
	} else {
		const struct neigh *n = neigh_find(m, c->ifindex, c->family, c->gw);

		rec.reason = n && n->resolved ? FWD_NH_FORWARD : FWD_NH_UNRESOLVED;
		if (n && n->resolved)
			memcpy(rec.dmac, n->mac, 6);
	}
	nh_write(m, id, &rec);
}

static bool is_single(const struct nh_ctl *c)
{
	return c->kind == NHK_SINGLE || c->kind == NHK_OBJ_SINGLE;
}

/* The deduplicated next hop (ifindex, gateway), or NULL. */
static struct nh_ctl *nh_single_find(struct fwd_mirror *m, uint32_t ifindex, uint8_t family, const uint8_t *gw)
{
	uint64_t h = neigh_hash(ifindex, family, gw);

	ht_each(&m->nhs, h, p)
	{
		struct nh_ctl *c = container_of(p, struct nh_ctl, hn);

		if (c->kind == NHK_SINGLE && c->ifindex == ifindex && c->family == family && !memcmp(c->gw, gw, 16))
			return c;
	}
	return NULL;
}

/* Republishes every single next hop on ifindex (0: all), or with gateway (family, gw). */
static void nh_refresh(struct fwd_mirror *m, uint32_t ifindex, uint8_t family, const uint8_t *gw)
{
	if (gw) {
		/* The deduplicated one directly; objects (few) by a walk below. */
		struct nh_ctl *c = nh_single_find(m, ifindex, family, gw);

		if (c)
			nh_publish(m, c->id);
	}
	for (uint32_t id = NH_FIRST; id < m->next_id; id++) {
		struct nh_ctl *c = nhc(m, id);

		if (!c->refcnt || !is_single(c) || (ifindex && c->ifindex != ifindex))
			continue;
		if (gw && (c->kind != NHK_OBJ_SINGLE || c->family != family || memcmp(c->gw, gw, 16)))
			continue;
		nh_publish(m, id);
	}
}

/* A reference to the next hop (ifindex, gateway); all-zero gateway: directly connected. */
static uint32_t nh_single_get(struct fwd_mirror *m, uint32_t ifindex, uint8_t family, const uint8_t *gw)
{
	struct nh_ctl *c = nh_single_find(m, ifindex, family, gw);
	uint32_t id;

	if (c) {
		c->refcnt++;
		return c->id;
	}
	id = nh_alloc(m);
	if (id == NH_NONE)
		return NH_NONE;
	c = nhc(m, id);
	c->kind = NHK_SINGLE;
	c->refcnt = 1;
	c->ifindex = ifindex;
	c->family = family;
	memcpy(c->gw, gw, 16);
	ht_add(&m->nhs, &c->hn, neigh_hash(ifindex, family, gw));
	nh_publish(m, id);
	return id;
}

/* Weights expanded into slots (scaled when they add up to more than SEL_SLOTS_MAX), so a
 * flow hash picks a member in proportion to its weight with one multiply. */
static struct fwd_nh_sel *sel_build(const uint32_t *mem, const uint16_t *wt, uint32_t n)
{
	uint64_t total = 0;
	uint32_t slots = 0, k = 0;
	struct fwd_nh_sel *s;

	for (uint32_t i = 0; i < n; i++)
		total += wt[i] & WT_DEAD ? 0 : wt[i];
	for (uint32_t i = 0; i < n; i++)
		slots += wt[i] & WT_DEAD ? 0 : total <= SEL_SLOTS_MAX ? wt[i] : (uint32_t)(wt[i] * SEL_SLOTS_MAX / total) + 1;
	s = malloc(sizeof(*s) + slots * sizeof(s->member[0]));
	if (!s)
		return NULL;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t c = wt[i] & WT_DEAD ? 0 : total <= SEL_SLOTS_MAX ? wt[i] : (uint32_t)(wt[i] * SEL_SLOTS_MAX / total) + 1;

		while (c--)
			s->member[k++] = mem[i];
	}
	s->n = k;
	return s;
}

/* A retired array stays readable until reclaim. */
static void sel_swap(struct fwd_mirror *m, uint32_t id, struct fwd_nh_sel *s)
{
	struct fwd_nh *e = nhe(m, id);
	/* Pairs with the reader's acquire load of sel: the array's contents before the pointer. */
	struct fwd_nh_sel *old = atomic_exchange_explicit(&e->sel, s, memory_order_acq_rel);
	struct fwd_nh_sel **slot;

	if (old && (slot = vec_push(&m->retired)))
		*slot = old;
	else if (old)
		free(old); /* cannot defer: no memory; a reader may still hold it, so keep rare */
}

static void nh_put(struct fwd_mirror *m, uint32_t id);

static void group_set_members(struct fwd_mirror *m, uint32_t id, uint32_t *mem, uint16_t *wt, uint32_t n)
{
	struct nh_ctl *c = nhc(m, id);
	uint32_t *omem = c->mem, on = c->nmem;
	uint16_t *owt = c->wt;
	struct fwd_nh_sel *s = sel_build(mem, wt, n);

	c->mem = mem;
	c->wt = wt;
	c->nmem = n;
	if (!s) { /* no memory: an empty selection, the group reads as unresolved */
		s = calloc(1, sizeof(*s));
	}
	sel_swap(m, id, s);
	for (uint32_t i = 0; i < on; i++)
		nh_put(m, omem[i]);
	free(omem);
	free(owt);
}

static uint64_t group_hash(const uint32_t *mem, const uint16_t *wt, uint32_t n)
{
	return hash_bytes(hash_bytes(umem_hash__mix64(n) ^ 0x6770, mem, n * sizeof(*mem)), wt, n * sizeof(*wt));
}

/* A multipath group of members (the caller's references, which this takes over). */
static uint32_t nh_group_get(struct fwd_mirror *m, uint32_t *mem, uint16_t *wt, uint32_t n)
{
	uint32_t *cm, id;
	uint16_t *cw;
	uint64_t h;
	struct nh_ctl *c;

	/* Sorted by member id: the same set in another order is the same group. */
	for (uint32_t i = 1; i < n; i++) {
		for (uint32_t j = i; j && (mem[j - 1] > mem[j] || (mem[j - 1] == mem[j] && wt[j - 1] > wt[j])); j--) {
			uint32_t tm = mem[j];
			uint16_t tw = wt[j];

			mem[j] = mem[j - 1], wt[j] = wt[j - 1];
			mem[j - 1] = tm, wt[j - 1] = tw;
		}
	}
	h = group_hash(mem, wt, n);
	ht_each(&m->nhs, h, p)
	{
		c = container_of(p, struct nh_ctl, hn);
		if (c->kind == NHK_GROUP && c->nmem == n && !memcmp(c->mem, mem, n * sizeof(*mem)) &&
		    !memcmp(c->wt, wt, n * sizeof(*wt))) {
			for (uint32_t i = 0; i < n; i++)
				nh_put(m, mem[i]);
			c->refcnt++;
			return c->id;
		}
	}
	cm = malloc(n * sizeof(*cm));
	cw = malloc(n * sizeof(*cw));
	id = cm && cw ? nh_alloc(m) : NH_NONE;
	if (id == NH_NONE) {
		free(cm);
		free(cw);
		goto fail;
	}
	c = nhc(m, id);
	c->kind = NHK_GROUP;
	c->refcnt = 1;
	memcpy(cm, mem, n * sizeof(*cm));
	memcpy(cw, wt, n * sizeof(*cw));
	group_set_members(m, id, cm, cw, n);
	ht_add(&m->nhs, &c->hn, h);
	return id;
fail:
	for (uint32_t i = 0; i < n; i++)
		nh_put(m, mem[i]);
	return NH_NONE;
}

static void nh_put(struct fwd_mirror *m, uint32_t id)
{
	struct nh_ctl *c;
	uint32_t *slot;

	if (id < NH_FIRST || id == NH_NONE)
		return;
	c = nhc(m, id);
	if (--c->refcnt)
		return;
	if (c->kind == NHK_SINGLE || c->kind == NHK_GROUP)
		ht_del(&m->nhs, &c->hn);
	else
		ht_del(&m->objs, &c->hn);
	if (c->kind == NHK_GROUP || c->kind == NHK_OBJ_GROUP) {
		/* The selection array stays for readers of this id until reclaim. */
		for (uint32_t i = 0; i < c->nmem; i++)
			nh_put(m, c->mem[i]);
		free(c->mem);
		free(c->wt);
		c->mem = NULL;
		c->wt = NULL;
		c->nmem = 0;
	}
	c->kind = NHK_SPECIAL;
	m->nlive--;
	slot = vec_push(&m->pending);
	if (slot)
		*slot = id;
}

/* ---- the kernel's nexthop objects ---- */
static uint32_t obj_find(struct fwd_mirror *m, uint32_t kid)
{
	uint64_t h = umem_hash__mix64(kid ^ 0x6f626aull);

	ht_each(&m->objs, h, p)
	{
		struct nh_ctl *c = container_of(p, struct nh_ctl, hn);

		if (c->kid == kid)
			return c->id;
	}
	return NH_NONE;
}

/* A reference to object kid; one not seen yet (a group's member dumped after the group, a
 * route before its object) is a placeholder that reads as link down until it arrives. */
static uint32_t obj_ref(struct fwd_mirror *m, uint32_t kid, bool group)
{
	uint32_t id = obj_find(m, kid);
	struct nh_ctl *c;

	if (id != NH_NONE) {
		nhc(m, id)->refcnt++;
		return id;
	}
	id = nh_alloc(m);
	if (id == NH_NONE)
		return NH_NONE;
	c = nhc(m, id);
	c->kind = group ? NHK_OBJ_GROUP : NHK_OBJ_SINGLE;
	c->kid = kid;
	c->refcnt = 1;
	ht_add(&m->objs, &c->hn, umem_hash__mix64(kid ^ 0x6f626aull));
	if (group)
		sel_swap(m, id, calloc(1, sizeof(struct fwd_nh_sel)));
	else
		nh_publish(m, id);
	return id;
}

/* ---- the route store ---- */
static uint64_t rt_hash(uint8_t family, unsigned len, const uint8_t *addr)
{
	return hash_bytes(umem_hash__mix64(((uint64_t)family << 8) | len), addr, fam_len(family));
}

static struct rt_entry *rt_find(struct fwd_mirror *m, uint8_t family, unsigned len, const uint8_t *addr)
{
	uint64_t h = rt_hash(family, len, addr);

	ht_each(&m->rt, h, p)
	{
		struct rt_entry *e = container_of(p, struct rt_entry, hn);

		if (e->family == family && e->len == len && !memcmp(e->addr, addr, fam_len(family)))
			return e;
	}
	return NULL;
}

static struct rt_entry *rt_get(struct fwd_mirror *m, uint8_t family, unsigned len, const uint8_t *addr)
{
	struct rt_entry *e = rt_find(m, family, len, addr);

	if (e)
		return e;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->family = family;
	e->len = (uint8_t)len;
	memcpy(e->addr, addr, 16);
	e->installed = e->neigh_nh = NH_NONE;
	e->paths = &e->inl;
	e->cap = 1;
	ht_add(&m->rt, &e->hn, rt_hash(family, len, addr));
	return e;
}

static int lpm_set(struct fwd_mirror *m, const struct rt_entry *e, uint32_t nh)
{
	if (e->family == AF_INET) {
		uint32_t a;

		memcpy(&a, e->addr, 4);
		return nh == NH_NONE ? umem_lpm4__delete(m->view.lpm4, ntohl(a), e->len)
				     : umem_lpm4__add(m->view.lpm4, ntohl(a), e->len, nh);
	}
	return nh == NH_NONE ? umem_lpm6__delete(m->view.lpm6, e->addr, e->len)
			     : umem_lpm6__add(m->view.lpm6, e->addr, e->len, nh);
}

/* Installs what the entry resolves to; frees an entry left empty. */
static void rt_commit(struct fwd_mirror *m, struct rt_entry *e)
{
	uint32_t nh = e->nloc ? NH_LOCAL : e->npaths ? e->paths[0].nh : e->neigh_nh;

	if (nh != e->installed) {
		int err = lpm_set(m, e, nh);

		if (err && !(err == -ENOENT && nh == NH_NONE)) {
			char s[INET6_ADDRSTRLEN];

			if (!m->st.lpm_errors++)
				say(m, "mirror: the lookup table refused %s/%u: %s (counted as lpm_errors)\n",
				    inet_ntop(e->family, e->addr, s, sizeof(s)), e->len, strerror(-err));
			nh = NH_NONE; /* not installed: the next change tries again */
		}
		e->installed = nh;
	}
	if (!e->nloc && !e->npaths && e->neigh_nh == NH_NONE && e->installed == NH_NONE) {
		ht_del(&m->rt, &e->hn);
		if (e->paths != &e->inl)
			free(e->paths);
		free(e);
	}
}

/* Sets the route of metric priority (taking over the caller's reference to nh). */
static int rt_set_path(struct fwd_mirror *m, struct rt_entry *e, uint32_t priority, uint32_t oif, uint8_t type,
		       uint32_t nh)
{
	struct rt_path np = { .priority = priority, .oif = oif, .nh = nh, .type = type, .gen = m->gen };
	uint8_t i;

	for (i = 0; i < e->npaths; i++) {
		if (e->paths[i].priority == priority && e->paths[i].oif == oif) {
			nh_put(m, e->paths[i].nh);
			e->paths[i] = np;
			return 0;
		}
	}
	if (e->npaths == e->cap) {
		struct rt_path *p;

		if (e->cap >= 128 || !(p = malloc(sizeof(*p) * e->cap * 2u))) {
			nh_put(m, nh);
			return -ENOMEM;
		}
		memcpy(p, e->paths, sizeof(*p) * e->npaths);
		if (e->paths != &e->inl)
			free(e->paths);
		e->paths = p;
		e->cap = (uint8_t)(e->cap * 2);
	}
	for (i = e->npaths; i && e->paths[i - 1].priority > priority; i--)
		e->paths[i] = e->paths[i - 1];
	e->paths[i] = np;
	if (!e->npaths++) {
		m->lencount[fam_idx(e->family)][e->len]++;
		m->st.routes[fam_idx(e->family)]++;
	}
	return 0;
}

static void rt_del_path_at(struct fwd_mirror *m, struct rt_entry *e, uint8_t i)
{
	nh_put(m, e->paths[i].nh);
	memmove(&e->paths[i], &e->paths[i + 1], sizeof(e->paths[0]) * (e->npaths - i - 1u));
	if (!--e->npaths) {
		m->lencount[fam_idx(e->family)][e->len]--;
		m->st.routes[fam_idx(e->family)]--;
	}
}

/* Is addr's longest route in the table a directly connected one out of ifindex? */
static bool connected_on(struct fwd_mirror *m, uint8_t family, const uint8_t *addr, uint32_t ifindex)
{
	unsigned bytes = fam_len(family);

	for (int len = (int)bytes * 8; len >= 0; len--) {
		uint8_t a[16];
		struct rt_entry *e;
		struct nh_ctl *c;

		if (!m->lencount[fam_idx(family)][len])
			continue;
		memcpy(a, addr, 16);
		mask_addr(a, (unsigned)len, bytes);
		e = rt_find(m, family, (unsigned)len, a);
		if (!e || !e->npaths)
			continue;
		if (e->paths[0].type != RTN_UNICAST || e->paths[0].nh < NH_FIRST)
			return false;
		c = nhc(m, e->paths[0].nh);
		return is_single(c) && !c->blackhole && zero16(c->gw) && c->ifindex == ifindex;
	}
	return false;
}

/* A neighbour on a connected subnet gets a host prefix to its own next hop. */
static void neigh_host(struct fwd_mirror *m, struct neigh *n, bool want)
{
	unsigned bits = fam_len(n->family) * 8;
	struct rt_entry *e;

	want = want && connected_on(m, n->family, n->addr, n->ifindex);
	if (want && n->host_nh == NH_NONE) {
		uint32_t id = nh_single_get(m, n->ifindex, n->family, n->addr);

		if (id == NH_NONE)
			return;
		e = rt_get(m, n->family, bits, n->addr);
		if (!e || e->neigh_nh != NH_NONE) { /* two interfaces' neighbours with one address: first wins */
			nh_put(m, id);
			return;
		}
		e->neigh_nh = n->host_nh = id;
		rt_commit(m, e);
	} else if (!want && n->host_nh != NH_NONE) {
		e = rt_find(m, n->family, bits, n->addr);
		if (e && e->neigh_nh == n->host_nh) {
			e->neigh_nh = NH_NONE;
			rt_commit(m, e);
		}
		nh_put(m, n->host_nh);
		n->host_nh = NH_NONE;
	}
}

/* After a change of prefix (family, addr/len): the neighbours it covers (len 0xff: all). */
static void neigh_reeval(struct fwd_mirror *m, uint8_t family, const uint8_t *addr, unsigned len)
{
	for (size_t i = 0; i <= m->nb.mask; i++) {
		for (struct hnode *p = m->nb.b[i]; p; p = p->next) {
			struct neigh *n = container_of(p, struct neigh, hn);
			uint8_t a[16];

			if (len != 0xff) {
				if (n->family != family)
					continue;
				memcpy(a, n->addr, 16);
				mask_addr(a, len, fam_len(family));
				if (memcmp(a, addr, 16))
					continue;
			}
			neigh_host(m, n, true);
		}
	}
}

/* Removes the routes through doomed next hops (of the families they are doomed for), as the
 * kernel flushes them without a message, and clears the marks. One walk of the route store. */
static void purge_doomed(struct fwd_mirror *m)
{
	for (size_t i = 0; i <= m->rt.mask; i++) {
		for (struct hnode *p = m->rt.b[i], *next; p; p = next) {
			struct rt_entry *e = container_of(p, struct rt_entry, hn);
			unsigned fam = e->family == AF_INET ? DOOM4 : DOOM6;
			bool hit = false;

			next = p->next;
			for (uint8_t k = 0; k < e->npaths;) {
				if (e->paths[k].nh >= NH_FIRST && (nhc(m, e->paths[k].nh)->doom & fam)) {
					rt_del_path_at(m, e, k);
					hit = true;
				} else {
					k++;
				}
			}
			if (hit)
				rt_commit(m, e);
		}
	}
	for (uint32_t id = NH_FIRST; id < m->next_id; id++)
		nhc(m, id)->doom = 0;
}

/* ---- what the kernel does to a link's routes without a message ---- */
enum link_ev {
	LE_CARRIER, /* carrier lost: nexthop objects on it go (nexthop_flush_dev) */
	LE_DOWN,    /* set down: also fib_sync_down_dev(NETDEV_DOWN) */
	LE_GONE,    /* deleted: NETDEV_UNREGISTER, an IPv4 multipath route with a member on it goes */
	LE_NOADDR4, /* its last IPv4 address deleted: fib_disable_ip(force), IPv4 only */
};

/* net.ipv6.route.skip_notify_on_dev_down: IPv6 then drops a downed link's routes silently too
 * (read at each event: it may change; the mirror runs in the namespace it mirrors). */
static bool ipv6_silent_down(void)
{
	FILE *f = fopen("/proc/sys/net/ipv6/route/skip_notify_on_dev_down", "re");
	int v = 0;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v > 0;
}

/* Sets or clears the dead mark of group id's members on ifindex (v4only: IPv4 next hops
 * only); the group is rehashed (the marks are part of its identity) and its selection
 * rebuilt. Returns how many members on ifindex it has; *live: members left alive. */
static uint32_t group_mark(struct fwd_mirror *m, uint32_t id, uint32_t ifindex, bool dead, bool v4only, uint32_t *live)
{
	struct nh_ctl *c = nhc(m, id);
	uint32_t on = 0, alive = 0;
	bool changed = false;

	for (uint32_t i = 0; i < c->nmem; i++) {
		const struct nh_ctl *x = nhc(m, c->mem[i]);

		if (x->ifindex == ifindex && (!v4only || x->family == AF_INET)) {
			uint16_t w = dead ? (uint16_t)(c->wt[i] | WT_DEAD) : (uint16_t)(c->wt[i] & ~WT_DEAD);

			on++;
			changed |= w != c->wt[i];
			c->wt[i] = w;
		}
		alive += !(c->wt[i] & WT_DEAD);
	}
	if (changed) {
		struct fwd_nh_sel *s = sel_build(c->mem, c->wt, c->nmem);

		ht_del(&m->nhs, &c->hn);
		ht_add(&m->nhs, &c->hn, group_hash(c->mem, c->wt, c->nmem));
		sel_swap(m, id, s ? s : calloc(1, sizeof(*s)));
	}
	*live = alive;
	return on;
}

/* A nexthop object group loses its doomed members (the kernel's remove_nh_grp_entry, without
 * a message when a link flush removes them); one left empty is doomed itself. */
static void objgroup_prune(struct fwd_mirror *m, uint32_t id)
{
	struct nh_ctl *c = nhc(m, id);
	uint32_t *mem = malloc((c->nmem ? c->nmem : 1) * sizeof(*mem)), k = 0;
	uint16_t *wt = malloc((c->nmem ? c->nmem : 1) * sizeof(*wt));
	bool hit = false;

	if (!mem || !wt) {
		free(mem);
		free(wt);
		return;
	}
	for (uint32_t i = 0; i < c->nmem; i++) {
		if (nhc(m, c->mem[i])->doom) {
			hit = true;
			continue;
		}
		nhc(m, c->mem[i])->refcnt++;
		mem[k] = c->mem[i];
		wt[k++] = c->wt[i];
	}
	if (hit)
		group_set_members(m, id, mem, wt, k);
	else {
		for (uint32_t i = 0; i < k; i++)
			nhc(m, mem[i])->refcnt--;
		free(mem);
		free(wt);
	}
	if (hit && !k)
		c->doom = DOOM4 | DOOM6;
}

/* Applies to the mirror what the kernel does, without telling, when link ifindex loses its
 * carrier, goes down, goes away, or loses its last IPv4 address: nexthop objects on it are
 * removed (and taken out of their groups), IPv4 routes whose next hops all went through it are
 * removed, multipath members through it are marked dead. IPv6 sends its own deletions, unless
 * skip_notify_on_dev_down is set: then its routes go here too. (net/ipv4/fib_semantics.c
 * fib_sync_down_dev, net/ipv4/nexthop.c nexthop_flush_dev, net/ipv6/route.c fib6_ifdown.) */
static void link_down_local(struct fwd_mirror *m, uint32_t ifindex, enum link_ev ev)
{
	unsigned quiet6 = ev != LE_NOADDR4 && ipv6_silent_down() ? DOOM6 : 0;
	bool any = false, objs = false;

	for (uint32_t id = NH_FIRST; id < m->next_id; id++) {
		struct nh_ctl *c = nhc(m, id);
		uint32_t on, live;

		if (!c->refcnt)
			continue;
		switch (c->kind) {
		case NHK_OBJ_SINGLE:
			/* A blackhole object has no link of its own (the kernel's is lo, kept on down). */
			if (ev != LE_NOADDR4 && c->present && !c->blackhole && c->ifindex == ifindex)
				c->doom = DOOM4 | DOOM6, any = objs = true;
			break;
		case NHK_SINGLE:
			if (ev != LE_CARRIER && c->ifindex == ifindex && (ev != LE_NOADDR4 || c->family == AF_INET))
				c->doom = (uint8_t)(DOOM4 | quiet6), any = true;
			break;
		case NHK_GROUP:
			if (ev == LE_CARRIER)
				break;
			on = group_mark(m, id, ifindex, true, ev == LE_NOADDR4, &live);
			/* All dead: the route goes (IPv6 tells, unless quiet). Deleted: an IPv4
			 * multipath route with a member on it goes whole; IPv6 deletes (and tells of)
			 * the sibling alone, here a member left dead. */
			if (on && !live)
				c->doom = (uint8_t)(DOOM4 | quiet6), any = true;
			else if (on && ev == LE_GONE)
				c->doom = DOOM4, any = true;
			break;
		}
	}
	if (objs) {
		for (uint32_t id = NH_FIRST; id < m->next_id; id++)
			if (nhc(m, id)->refcnt && nhc(m, id)->kind == NHK_OBJ_GROUP && nhc(m, id)->present)
				objgroup_prune(m, id);
	}
	if (!any)
		return;
	{
		/* The objects removed: collected (the purge clears the marks) and held across it,
		 * then the kernel's references dropped. */
		struct vec gone = { .esz = sizeof(uint32_t) };

		for (uint32_t id = NH_FIRST; id < m->next_id; id++) {
			struct nh_ctl *c = nhc(m, id);
			uint32_t *slot;

			if (c->doom && (c->kind == NHK_OBJ_SINGLE || c->kind == NHK_OBJ_GROUP) && (slot = vec_push(&gone))) {
				*slot = id;
				c->refcnt++;
			}
		}
		purge_doomed(m);
		for (size_t i = 0; i < gone.n; i++) {
			uint32_t id = *(uint32_t *)vec_at(&gone, i);

			if (nhc(m, id)->present) {
				nhc(m, id)->present = 0;
				nh_put(m, id);
			}
			nh_put(m, id);
		}
		free(gone.v);
	}
	/* Neighbours whose connected route went lose their host entries. */
	neigh_reeval(m, 0, NULL, 0xff);
}

/* The link is up again (or has an IPv4 address again: v4only): multipath members through it
 * come back (fib_sync_up with RTNH_F_DEAD; IPv6's rt6_sync_up). Removed routes do not: the
 * kernel does not restore them either (its own connected routes it re-adds, and tells). */
static void link_up_local(struct fwd_mirror *m, uint32_t ifindex, bool v4only)
{
	for (uint32_t id = NH_FIRST; id < m->next_id; id++) {
		uint32_t live;

		if (nhc(m, id)->refcnt && nhc(m, id)->kind == NHK_GROUP)
			group_mark(m, id, ifindex, false, v4only, &live);
	}
}

/* ---- netlink messages ---- */
struct attrs {
	const struct nlattr *a[64];
	int max;
};

static int attr_cb(const struct nlattr *attr, void *data)
{
	struct attrs *t = data;
	int type = mnl_attr_get_type(attr);

	if (type <= t->max && type < 64)
		t->a[type] = attr;
	return MNL_CB_OK;
}

static void parse(const struct nlmsghdr *nlh, size_t hdrlen, struct attrs *t, int max)
{
	memset(t->a, 0, sizeof(t->a));
	t->max = max;
	mnl_attr_parse(nlh, (unsigned)hdrlen, attr_cb, t);
}

static bool attr_u32(const struct nlattr *a, uint32_t *v)
{
	if (!a || mnl_attr_get_payload_len(a) < 4)
		return false;
	*v = mnl_attr_get_u32(a);
	return true;
}

/* An address attribute of the family's size into a 16-byte buffer. */
static bool attr_addr(const struct nlattr *a, uint8_t family, uint8_t *out)
{
	memset(out, 0, 16);
	if (!a || mnl_attr_get_payload_len(a) != fam_len(family))
		return false;
	memcpy(out, mnl_attr_get_payload(a), fam_len(family));
	return true;
}

static void link_msg(struct fwd_mirror *m, const struct nlmsghdr *nlh)
{
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	uint32_t ifindex = (uint32_t)ifi->ifi_index;
	struct link *l = NULL;
	struct attrs t;
	size_t i;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ifi)))
		return;
	for (i = 0; i < m->links.n; i++) {
		struct link *x = vec_at(&m->links, i);

		if (x->ifindex == ifindex) {
			l = x;
			break;
		}
	}
	if (nlh->nlmsg_type == RTM_DELLINK) {
		if (l) {
			vec_del(&m->links, i);
			nh_refresh(m, ifindex, 0, NULL);
			/* The kernel drops what went through a vanished link without a message. */
			if (!m->bulk)
				link_down_local(m, ifindex, LE_GONE);
		}
		return;
	}
	if (!l) {
		l = vec_push(&m->links);
		if (!l)
			return;
		memset(l, 0, sizeof(*l));
		l->ifindex = ifindex;
	} else if (!m->bulk) {
		/* Set down, a link loses its IPv4 routes and nexthop objects, and multipath
		 * members through it are marked dead; losing its carrier, its nexthop objects; set
		 * up, the dead members are alive again. None of it is told: applied here (a dump
		 * says it already). */
		const unsigned carrier = IFF_RUNNING | 0x10000u; /* IFF_LOWER_UP: linux/if.h clashes with net/if.h */

		if ((l->flags & IFF_UP) && !(ifi->ifi_flags & IFF_UP))
			link_down_local(m, ifindex, LE_DOWN);
		else if (!(l->flags & IFF_UP) && (ifi->ifi_flags & IFF_UP))
			link_up_local(m, ifindex, false);
		else if ((l->flags & carrier) && !(ifi->ifi_flags & carrier))
			link_down_local(m, ifindex, LE_CARRIER);
	}
	parse(nlh, sizeof(*ifi), &t, IFLA_MAX);
	l->flags = ifi->ifi_flags;
	l->gen = m->gen;
	attr_u32(t.a[IFLA_MTU], &l->mtu);
	if (t.a[IFLA_ADDRESS] && mnl_attr_get_payload_len(t.a[IFLA_ADDRESS]) == 6) {
		memcpy(l->mac, mnl_attr_get_payload(t.a[IFLA_ADDRESS]), 6);
		l->has_mac = 1;
	}
	if (t.a[IFLA_IFNAME]) {
		snprintf(l->name, sizeof(l->name), "%.*s", (int)mnl_attr_get_payload_len(t.a[IFLA_IFNAME]),
			 mnl_attr_get_str(t.a[IFLA_IFNAME]));
		l->name[strnlen(l->name, sizeof(l->name))] = '\0';
	}
	if (!m->bulk)
		nh_refresh(m, ifindex, 0, NULL);
}

static bool addr4_on(const struct fwd_mirror *m, uint32_t ifindex)
{
	for (size_t i = 0; i < m->addrs.n; i++) {
		const struct addr *x = vec_at(&m->addrs, i);

		if (x->ifindex == ifindex && x->family == AF_INET)
			return true;
	}
	return false;
}

static void addr_msg(struct fwd_mirror *m, const struct nlmsghdr *nlh)
{
	const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	uint8_t a[16];
	struct attrs t;
	struct rt_entry *e;
	size_t i;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ifa)) || (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6))
		return;
	parse(nlh, sizeof(*ifa), &t, IFA_MAX);
	/* IFA_LOCAL is the own address (IFA_ADDRESS the peer's on a point-to-point link). */
	if (!attr_addr(t.a[IFA_LOCAL], ifa->ifa_family, a) && !attr_addr(t.a[IFA_ADDRESS], ifa->ifa_family, a))
		return;
	for (i = 0; i < m->addrs.n; i++) {
		struct addr *x = vec_at(&m->addrs, i);

		if (x->ifindex == ifa->ifa_index && x->family == ifa->ifa_family && !memcmp(x->addr, a, 16))
			break;
	}
	if (nlh->nlmsg_type == RTM_DELADDR) {
		if (i == m->addrs.n)
			return;
		vec_del(&m->addrs, i);
		m->st.addr_changes++;
		e = rt_find(m, ifa->ifa_family, fam_len(ifa->ifa_family) * 8, a);
		if (e) {
			e->nloc--;
			rt_commit(m, e);
		}
		/* The link's last IPv4 address gone: the kernel disables IPv4 on it (fib_disable_ip
		 * with force), its IPv4 routes go without a message. */
		if (ifa->ifa_family == AF_INET && !m->bulk && !addr4_on(m, ifa->ifa_index))
			link_down_local(m, ifa->ifa_index, LE_NOADDR4);
		return;
	}
	if (i < m->addrs.n) {
		((struct addr *)vec_at(&m->addrs, i))->gen = m->gen;
		return;
	}
	e = rt_get(m, ifa->ifa_family, fam_len(ifa->ifa_family) * 8, a);
	if (!e)
		return;
	{
		struct addr *x = vec_push(&m->addrs);

		if (!x) {
			rt_commit(m, e);
			return;
		}
		*x = (struct addr){ .ifindex = ifa->ifa_index, .gen = m->gen, .family = ifa->ifa_family };
		memcpy(x->addr, a, 16);
	}
	e->nloc++;
	m->st.addr_changes++;
	rt_commit(m, e);
	/* An IPv4 address added revives dead members through an up link (fib_sync_up). */
	if (ifa->ifa_family == AF_INET && !m->bulk) {
		const struct link *l = link_find(m, ifa->ifa_index);

		if (l && (l->flags & IFF_UP))
			link_up_local(m, ifa->ifa_index, true);
	}
}

static void neigh_msg(struct fwd_mirror *m, const struct nlmsghdr *nlh)
{
	const struct ndmsg *ndm = mnl_nlmsg_get_payload(nlh);
	uint32_t ifindex;
	struct neigh *n;
	struct attrs t;
	uint8_t a[16];

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*ndm)) || (ndm->ndm_family != AF_INET && ndm->ndm_family != AF_INET6) ||
	    (ndm->ndm_flags & NTF_PROXY))
		return;
	parse(nlh, sizeof(*ndm), &t, NDA_MAX);
	if (!attr_addr(t.a[NDA_DST], ndm->ndm_family, a))
		return;
	ifindex = (uint32_t)ndm->ndm_ifindex;
	n = neigh_find(m, ifindex, ndm->ndm_family, a);
	if (nlh->nlmsg_type == RTM_DELNEIGH) {
		if (!n)
			return;
		neigh_host(m, n, false);
		ht_del(&m->nb, &n->hn);
		free(n);
		nh_refresh(m, ifindex, ndm->ndm_family, a);
		return;
	}
	if (!n) {
		n = calloc(1, sizeof(*n));
		if (!n)
			return;
		n->ifindex = ifindex;
		n->family = ndm->ndm_family;
		n->host_nh = NH_NONE;
		memcpy(n->addr, a, 16);
		ht_add(&m->nb, &n->hn, neigh_hash(ifindex, n->family, a));
	}
	n->gen = m->gen;
	/* Incomplete, failed or none: no usable MAC. Stale/delay/probe still forward (as the
	 * kernel does, confirming in the background). */
	n->resolved = (ndm->ndm_state & NUD_WITH_MAC) && t.a[NDA_LLADDR] && mnl_attr_get_payload_len(t.a[NDA_LLADDR]) == 6 &&
		      /* A group MAC (the kernel's noarp entry for a subnet broadcast): the kernel's
		       * to decide (directed broadcasts are not forwarded by default). */
		      !(*(const uint8_t *)mnl_attr_get_payload(t.a[NDA_LLADDR]) & 1);
	if (n->resolved)
		memcpy(n->mac, mnl_attr_get_payload(t.a[NDA_LLADDR]), 6);
	nh_refresh(m, ifindex, n->family, a);
	if (!m->bulk)
		neigh_host(m, n, true);
}

static void nhobj_msg(struct fwd_mirror *m, const struct nlmsghdr *nlh)
{
	const struct nhmsg *nhm = mnl_nlmsg_get_payload(nlh);
	uint32_t kid, id;
	struct nh_ctl *c;
	struct attrs t;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*nhm)))
		return;
	parse(nlh, sizeof(*nhm), &t, NHA_MAX);
	if (!attr_u32(t.a[NHA_ID], &kid) || t.a[NHA_FDB])
		return;
	if (nlh->nlmsg_type == RTM_DELNEXTHOP) {
		id = obj_find(m, kid);
		if (id == NH_NONE || !nhc(m, id)->present)
			return;
		nhc(m, id)->refcnt++; /* held across the purge */
		/* IPv4 routes using it go without a message; IPv6's are told, and find nothing. */
		nhc(m, id)->doom = DOOM4 | DOOM6;
		purge_doomed(m);
		nhc(m, id)->present = 0;
		nh_put(m, id);
		nh_put(m, id);
		return;
	}
	id = obj_ref(m, kid, t.a[NHA_GROUP] != NULL);
	if (id == NH_NONE)
		return;
	c = nhc(m, id);
	if (!c->present) {
		c->present = 1; /* the kernel's reference: the one obj_ref just took */
		/* A placeholder (referenced before it arrived) takes the kind it arrives with. */
		if (t.a[NHA_GROUP] && c->kind == NHK_OBJ_SINGLE) {
			c->kind = NHK_OBJ_GROUP;
			sel_swap(m, id, calloc(1, sizeof(struct fwd_nh_sel)));
		}
	} else {
		c->refcnt--;
	}
	c->gen = m->gen;
	if (t.a[NHA_GROUP]) {
		const struct nexthop_grp *g = mnl_attr_get_payload(t.a[NHA_GROUP]);
		uint32_t n = mnl_attr_get_payload_len(t.a[NHA_GROUP]) / sizeof(*g);
		uint32_t *mem = malloc((n ? n : 1) * sizeof(*mem));
		uint16_t *wt = malloc((n ? n : 1) * sizeof(*wt));
		uint32_t k = 0;

		if (c->kind != NHK_OBJ_GROUP || !mem || !wt) { /* a single cannot become a group */
			free(mem);
			free(wt);
			return;
		}
		for (uint32_t i = 0; i < n; i++) {
			uint32_t mid = obj_ref(m, g[i].id, false);

			if (mid == NH_NONE)
				continue;
			mem[k] = mid;
			wt[k++] = (uint16_t)(g[i].weight + 1u);
		}
		group_set_members(m, id, mem, wt, k);
		return;
	}
	if (c->kind != NHK_OBJ_SINGLE)
		return;
	c->blackhole = t.a[NHA_BLACKHOLE] != NULL;
	c->ifindex = 0;
	attr_u32(t.a[NHA_OIF], &c->ifindex);
	c->family = nhm->nh_family;
	if (!attr_addr(t.a[NHA_GATEWAY], nhm->nh_family, c->gw))
		memset(c->gw, 0, 16);
	nh_publish(m, id);
}

/* A gateway from RTA_GATEWAY (the route's family) or RTA_VIA (any family). */
static uint8_t gateway(const struct nlattr *gw, const struct nlattr *via, uint8_t family, uint8_t *out)
{
	memset(out, 0, 16);
	if (gw)
		return attr_addr(gw, family, out) ? family : 0;
	if (via && mnl_attr_get_payload_len(via) >= sizeof(struct rtvia)) {
		const struct rtvia *v = mnl_attr_get_payload(via);
		unsigned n = mnl_attr_get_payload_len(via) - (unsigned)sizeof(*v);

		if ((v->rtvia_family == AF_INET || v->rtvia_family == AF_INET6) && n == fam_len(v->rtvia_family)) {
			memcpy(out, v->rtvia_addr, n);
			return (uint8_t)v->rtvia_family;
		}
		return 0;
	}
	return family; /* none: directly connected */
}

/* The next hop of a unicast route (a reference), NH_NONE if it cannot be modelled. */
static uint32_t route_nh(struct fwd_mirror *m, uint8_t family, const struct attrs *t)
{
	uint32_t oif = 0, kid;
	uint8_t gw[16], gf;

	if (attr_u32(t->a[RTA_NH_ID], &kid))
		return obj_ref(m, kid, false) ;
	if (t->a[RTA_MULTIPATH]) {
		const struct rtnexthop *rtnh = mnl_attr_get_payload(t->a[RTA_MULTIPATH]);
		int len = (int)mnl_attr_get_payload_len(t->a[RTA_MULTIPATH]);
		uint32_t mem[MP_MAX];
		uint16_t wt[MP_MAX];
		uint32_t n = 0;

		while (len >= (int)sizeof(*rtnh) && rtnh->rtnh_len >= sizeof(*rtnh) && rtnh->rtnh_len <= len && n < MP_MAX) {
			const struct nlattr *ga = NULL, *va = NULL;
			const struct nlattr *a;
			size_t alen = rtnh->rtnh_len - RTNH_ALIGN(sizeof(*rtnh));

			a = (const struct nlattr *)(const void *)((const char *)rtnh + RTNH_ALIGN(sizeof(*rtnh)));
			while (mnl_attr_ok(a, (int)alen)) {
				if (mnl_attr_get_type(a) == RTA_GATEWAY)
					ga = a;
				else if (mnl_attr_get_type(a) == RTA_VIA)
					va = a;
				alen -= MNL_ALIGN(a->nla_len);
				a = mnl_attr_next(a);
			}
			gf = gateway(ga, va, family, gw);
			/* A dead member (its link set down) is not chosen, but comes back with its link. */
			if (gf) {
				mem[n] = nh_single_get(m, (uint32_t)rtnh->rtnh_ifindex, gf, gw);
				wt[n] = (uint16_t)((rtnh->rtnh_hops + 1u) | (rtnh->rtnh_flags & RTNH_F_DEAD ? WT_DEAD : 0));
				if (mem[n] != NH_NONE)
					n++;
			}
			len -= RTNH_ALIGN(rtnh->rtnh_len);
			rtnh = (const struct rtnexthop *)(const void *)((const char *)rtnh + RTNH_ALIGN(rtnh->rtnh_len)); /* RTNH_NEXT, without its cast-align */
		}
		if (n == 1)
			return mem[0];
		return n ? nh_group_get(m, mem, wt, n) : NH_NONE;
	}
	attr_u32(t->a[RTA_OIF], &oif);
	gf = gateway(t->a[RTA_GATEWAY], t->a[RTA_VIA], family, gw);
	if (!oif || !gf)
		return NH_NONE;
	return nh_single_get(m, oif, gf, gw);
}

/* IPv6 multipath is built of sibling routes: an append is told as the whole multipath route,
 * a sibling's delete as that one route alone. So a multipath route replaces the single
 * gateway routes at its metric (they are its siblings now), and a single route's delete that
 * names no route of its own takes its member out of the multipath route at its metric. */
static void ipv6_siblings(struct fwd_mirror *m, struct rt_entry *e, uint32_t priority, const struct attrs *t,
			  bool del)
{
	for (uint8_t i = 0; i < e->npaths; i++) {
		struct rt_path *p = &e->paths[i];
		struct nh_ctl *c;

		if (p->priority != priority || p->type != RTN_UNICAST || p->nh < NH_FIRST)
			continue;
		c = nhc(m, p->nh);
		if (!del && p->oif && c->kind == NHK_SINGLE && !zero16(c->gw)) {
			rt_del_path_at(m, e, i--);
		} else if (del && !p->oif && c->kind == NHK_GROUP) {
			uint32_t oif = 0, mem[MP_MAX], n = 0;
			uint16_t wt[MP_MAX];
			uint8_t gw[16], gf = gateway(t->a[RTA_GATEWAY], t->a[RTA_VIA], AF_INET6, gw);

			attr_u32(t->a[RTA_OIF], &oif);
			for (uint32_t k = 0; k < c->nmem && n < MP_MAX; k++) {
				const struct nh_ctl *x = nhc(m, c->mem[k]);

				if (x->ifindex == oif && x->family == gf && !memcmp(x->gw, gw, 16))
					continue;
				nhc(m, c->mem[k])->refcnt++;
				mem[n] = c->mem[k];
				wt[n++] = c->wt[k];
			}
			if (n == c->nmem) { /* not a member: nothing to take out */
				for (uint32_t k = 0; k < n; k++)
					nh_put(m, mem[k]);
				continue;
			}
			rt_del_path_at(m, e, i);
			if (n == 1)
				rt_set_path(m, e, priority, nhc(m, mem[0])->ifindex, RTN_UNICAST, mem[0]);
			else if (n > 1)
				rt_set_path(m, e, priority, 0, RTN_UNICAST, nh_group_get(m, mem, wt, n));
			return;
		}
	}
}

static void route_msg(struct fwd_mirror *m, const struct nlmsghdr *nlh)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	uint32_t table, priority = 0, nh, oif = 0;
	uint8_t a[16];
	struct rt_entry *e;
	struct attrs t;
	unsigned bytes;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*rtm)) || (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6))
		return;
	parse(nlh, sizeof(*rtm), &t, RTA_MAX);
	table = rtm->rtm_table;
	attr_u32(t.a[RTA_TABLE], &table);
	if (table != m->table || (rtm->rtm_flags & RTM_F_CLONED))
		return;
	bytes = fam_len(rtm->rtm_family);
	if (rtm->rtm_dst_len > bytes * 8)
		return;
	if (rtm->rtm_tos || rtm->rtm_src_len) {
		m->st.skipped++; /* tos and source-specific routes: the lookup is by destination only */
		return;
	}
	if (t.a[RTA_DST] ? !attr_addr(t.a[RTA_DST], rtm->rtm_family, a) : (memset(a, 0, 16), false))
		return;
	mask_addr(a, rtm->rtm_dst_len, bytes);
	attr_u32(t.a[RTA_PRIORITY], &priority);
	if (rtm->rtm_family == AF_INET6 && !t.a[RTA_MULTIPATH] && !t.a[RTA_NH_ID])
		attr_u32(t.a[RTA_OIF], &oif);
	if (nlh->nlmsg_type == RTM_DELROUTE) {
		e = rt_find(m, rtm->rtm_family, rtm->rtm_dst_len, a);
		if (!e)
			return;
		uint8_t i;

		for (i = 0; i < e->npaths; i++) {
			if (e->paths[i].priority == priority && e->paths[i].oif == oif) {
				rt_del_path_at(m, e, i);
				break;
			}
		}
		if (i == e->npaths && oif && rtm->rtm_family == AF_INET6)
			ipv6_siblings(m, e, priority, &t, true);
		rt_commit(m, e);
	} else {
		switch (rtm->rtm_type) {
		case RTN_UNICAST:
			nh = route_nh(m, rtm->rtm_family, &t);
			break;
		case RTN_LOCAL:
			nh = NH_LOCAL;
			break;
		case RTN_BLACKHOLE:
			nh = NH_BLACKHOLE;
			break;
		case RTN_UNREACHABLE:
			nh = NH_UNREACHABLE;
			break;
		case RTN_PROHIBIT:
			nh = NH_PROHIBIT;
			break;
		case RTN_THROW:
			nh = NH_THROW;
			break;
		default:
			nh = NH_NONE;
		}
		if (nh == NH_NONE) {
			m->st.skipped++;
			return;
		}
		e = rt_get(m, rtm->rtm_family, rtm->rtm_dst_len, a);
		if (!e) {
			nh_put(m, nh);
			return;
		}
		if (rtm->rtm_family == AF_INET6 && t.a[RTA_MULTIPATH])
			ipv6_siblings(m, e, priority, &t, false);
		rt_set_path(m, e, priority, oif, rtm->rtm_type, nh);
		rt_commit(m, e);
	}
	if (!m->bulk)
		neigh_reeval(m, rtm->rtm_family, a, rtm->rtm_dst_len);
}

static void apply(struct fwd_mirror *m, const struct nlmsghdr *nlh)
{
	switch (nlh->nlmsg_type) {
	case RTM_NEWLINK:
	case RTM_DELLINK:
		link_msg(m, nlh);
		break;
	case RTM_NEWADDR:
	case RTM_DELADDR:
		addr_msg(m, nlh);
		break;
	case RTM_NEWNEIGH:
	case RTM_DELNEIGH:
		neigh_msg(m, nlh);
		break;
	case RTM_NEWNEXTHOP:
	case RTM_DELNEXTHOP:
		nhobj_msg(m, nlh);
		break;
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
		route_msg(m, nlh);
		break;
	}
}

/* ---- dumps and events ---- */
static int dump_one(struct fwd_mirror *m, uint16_t type, uint8_t family)
{
	char req[256] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
	uint32_t seq = ++m->seq, portid = mnl_socket_get_portid(m->dump);
	bool intr = false;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	switch (type) {
	case RTM_GETLINK: {
		struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));

		ifi->ifi_family = family;
		break;
	}
	case RTM_GETADDR:
		((struct ifaddrmsg *)mnl_nlmsg_put_extra_header(nlh, sizeof(struct ifaddrmsg)))->ifa_family = family;
		break;
	case RTM_GETNEIGH:
		((struct ndmsg *)mnl_nlmsg_put_extra_header(nlh, sizeof(struct ndmsg)))->ndm_family = family;
		break;
	case RTM_GETNEXTHOP:
		((struct nhmsg *)mnl_nlmsg_put_extra_header(nlh, sizeof(struct nhmsg)))->nh_family = family;
		break;
	case RTM_GETROUTE: {
		struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));

		/* Strict checking (set on the socket) makes the kernel filter by table. */
		rtm->rtm_family = family;
		rtm->rtm_table = m->table < 256 ? (uint8_t)m->table : RT_TABLE_UNSPEC;
		mnl_attr_put_u32(nlh, RTA_TABLE, m->table);
		break;
	}
	}
	if (mnl_socket_sendto(m->dump, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(m->dump, m->buf, m->buflen);
		const struct nlmsghdr *h = (const void *)m->buf;
		int len = (int)n;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (; mnl_nlmsg_ok(h, len); h = mnl_nlmsg_next(h, &len)) {
			if (h->nlmsg_seq != seq || h->nlmsg_pid != portid)
				continue;
			if (h->nlmsg_flags & NLM_F_DUMP_INTR)
				intr = true;
			if (h->nlmsg_type == NLMSG_DONE) {
				/* Since Linux 4.x a dump that fails says why in its DONE message. */
				if (mnl_nlmsg_get_payload_len(h) >= sizeof(int)) {
					int err;

					memcpy(&err, mnl_nlmsg_get_payload(h), sizeof(err));
					if (err < 0)
						return err;
				}
				return intr ? -EINTR : 0;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = mnl_nlmsg_get_payload(h);

				if (e->error)
					return e->error;
				continue;
			}
			apply(m, h);
		}
	}
}

/* Redone while the kernel says a concurrent change may have made it skip something. */
static int dump(struct fwd_mirror *m, uint16_t type, uint8_t family)
{
	int err, tries = 0;

	while ((err = dump_one(m, type, family)) == -EINTR && ++tries < 16)
		m->st.dump_retries++;
	return err;
}

/* Everything not seen in the dump of generation m->gen is gone from the kernel. */
static void sweep(struct fwd_mirror *m)
{
	for (size_t i = 0; i <= m->rt.mask; i++) {
		for (struct hnode *p = m->rt.b[i], *next; p; p = next) {
			struct rt_entry *e = container_of(p, struct rt_entry, hn);

			next = p->next;
			for (uint8_t k = 0; k < e->npaths;) {
				if (e->paths[k].gen != m->gen)
					rt_del_path_at(m, e, k);
				else
					k++;
			}
			rt_commit(m, e);
		}
	}
	for (size_t i = 0; i < m->addrs.n;) {
		struct addr *x = vec_at(&m->addrs, i);
		struct rt_entry *e;

		if (x->gen == m->gen) {
			i++;
			continue;
		}
		e = rt_find(m, x->family, fam_len(x->family) * 8, x->addr);
		if (e) {
			e->nloc--;
			rt_commit(m, e);
		}
		vec_del(&m->addrs, i);
		m->st.addr_changes++;
	}
	for (size_t i = 0; i <= m->nb.mask; i++) {
		for (struct hnode *p = m->nb.b[i], *next; p; p = next) {
			struct neigh *n = container_of(p, struct neigh, hn);

			next = p->next;
			if (n->gen == m->gen)
				continue;
			neigh_host(m, n, false);
			ht_del(&m->nb, &n->hn);
			free(n);
		}
	}
	for (uint32_t id = NH_FIRST; id < m->next_id; id++) {
		struct nh_ctl *c = nhc(m, id);

		if (c->refcnt && c->present && c->gen != m->gen) {
			c->present = 0;
			nh_put(m, id);
		}
	}
	for (size_t i = 0; i < m->links.n;) {
		struct link *l = vec_at(&m->links, i);

		if (l->gen == m->gen)
			i++;
		else
			vec_del(&m->links, i);
	}
}

static int full_dump(struct fwd_mirror *m)
{
	static const struct {
		uint16_t type;
		uint8_t family;
	} order[] = {
		/* Links before what refers to them; objects before the routes that name them. */
		{ RTM_GETLINK, AF_UNSPEC },    { RTM_GETADDR, AF_UNSPEC }, { RTM_GETNEIGH, AF_UNSPEC },
		{ RTM_GETNEXTHOP, AF_UNSPEC }, { RTM_GETROUTE, AF_INET },  { RTM_GETROUTE, AF_INET6 },
	};
	uint64_t t0 = now_ns();
	int err = 0;

	m->gen++;
	m->bulk = true;
	m->resync_needed = false;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		int e = dump(m, order[i].type, order[i].family);

		if (order[i].type == RTM_GETROUTE) {
			m->dump_err[fam_idx(order[i].family)] = e;
			/* No such table: nothing to mirror for that family (main may lack one). */
			if (e == -ENOENT)
				e = 0;
		} else if (order[i].type == RTM_GETNEXTHOP && (e == -EOPNOTSUPP || e == -EINVAL)) {
			e = 0; /* a kernel without nexthop objects */
		}
		if (e && !err)
			err = e;
	}
	if (err) {
		/* A partial dump cannot tell what is gone: keep everything, try again later. */
		m->bulk = false;
		m->resync_needed = true;
		return err;
	}
	sweep(m);
	m->bulk = false;
	nh_refresh(m, 0, 0, NULL);
	neigh_reeval(m, 0, NULL, 0xff);
	m->st.last_dump_ns = now_ns() - t0;
	return 0;
}

int fwd_mirror_resync(struct fwd_mirror *m)
{
	int err = full_dump(m);

	m->st.resyncs++;
	if (err)
		say(m, "mirror: resync failed (%s); tried again at the next event\n", strerror(-err));
	return err;
}

int fwd_mirror_process(struct fwd_mirror *m)
{
	int applied = 0, fd = mnl_socket_get_fd(m->ev);

	for (;;) {
		ssize_t n = recv(fd, m->buf, m->buflen, MSG_DONTWAIT);
		const struct nlmsghdr *h = (const void *)m->buf;
		int len = (int)n;
		uint64_t t0;

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				/* Events were dropped: only a full dump can tell what they said. */
				if (!m->st.enobufs++)
					say(m, "mirror: netlink events lost (receive buffer full): resyncing; counted as enobufs\n");
				m->resync_needed = true;
				continue;
			}
			return -errno;
		}
		t0 = now_ns();
		for (; mnl_nlmsg_ok(h, len); h = mnl_nlmsg_next(h, &len)) {
			apply(m, h);
			applied++;
			m->st.events++;
			if (h->nlmsg_type == RTM_NEWROUTE || h->nlmsg_type == RTM_DELROUTE) {
				m->lat[m->nlat++ % FWD_MIRROR_LAT_SAMPLES] = (uint32_t)(now_ns() - t0);
			}
		}
	}
	/* The request socket hears only errors of resolution requests (a link gone meanwhile, or
	 * not permitted). */
	for (ssize_t n; (n = recv(mnl_socket_get_fd(m->req), m->buf, m->buflen, MSG_DONTWAIT)) > 0;) {
		int len = (int)n;

		for (const struct nlmsghdr *h = (const void *)m->buf; mnl_nlmsg_ok(h, len); h = mnl_nlmsg_next(h, &len)) {
			const struct nlmsgerr *e = mnl_nlmsg_get_payload(h);

			if (h->nlmsg_type != NLMSG_ERROR || h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)) ||
			    e->error != -EPERM || m->resolve_refused)
				continue;
			m->resolve_refused = true;
			say(m, "mirror: the kernel refuses resolution requests (NTF_USE needs CAP_NET_ADMIN): "
			       "next hops are resolved by a datagram to them instead\n");
		}
	}
	if (m->resync_needed)
		fwd_mirror_resync(m);
	return applied;
}

size_t fwd_mirror_latencies(const struct fwd_mirror *m, const uint32_t **ns)
{
	*ns = m->lat;
	return m->nlat < FWD_MIRROR_LAT_SAMPLES ? m->nlat : FWD_MIRROR_LAT_SAMPLES;
}

void fwd_mirror_reclaim(struct fwd_mirror *m)
{
	for (size_t i = 0; i < m->retired.n; i++)
		free(*(struct fwd_nh_sel **)vec_at(&m->retired, i));
	m->retired.n = 0;
	for (size_t i = 0; i < m->pending.n; i++) {
		uint32_t id = *(uint32_t *)vec_at(&m->pending, i);
		struct fwd_nh *e = nhe(m, id);
		uint32_t *slot = vec_push(&m->freelist);

		free(atomic_exchange_explicit(&e->sel, NULL, memory_order_relaxed));
		if (slot)
			*slot = id;
	}
	m->pending.n = 0;
	umem_lpm4__reclaim(m->view.lpm4);
	umem_lpm6__reclaim(m->view.lpm6);
}

/* Resolution without CAP_NET_ADMIN: an empty UDP datagram to the discard port of the neighbour
 * (addr, on ifindex), which the kernel's own output resolves as it sends it. */
static int resolve_by_send(uint8_t fam, uint32_t ifindex, const void *addr)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(9), .sin6_scope_id = ifindex };
	struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons(9) };
	int fd = socket(fam, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), err = 0;

	if (fd < 0)
		return -errno;
	memcpy(fam == AF_INET ? (void *)&s4.sin_addr : (void *)&s6.sin6_addr, addr, fam_len(fam));
	if (fam == AF_INET ? sendto(fd, "", 0, 0, (const struct sockaddr *)&s4, sizeof(s4)) :
			     sendto(fd, "", 0, 0, (const struct sockaddr *)&s6, sizeof(s6)))
		err = -errno;
	close(fd);
	return err;
}

int fwd_mirror_resolve(struct fwd_mirror *m, uint32_t nh, int family, const void *dst)
{
	char buf[128] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	const struct nh_ctl *c;
	struct ndmsg *ndm;
	uint64_t now = now_ns();
	uint8_t fam;

	if (nh < NH_FIRST || nh >= m->next_id || !is_single(nhc(m, nh)) || !nhc(m, nh)->refcnt || nhc(m, nh)->blackhole)
		return -EINVAL;
	c = nhc(m, nh);
	fam = zero16(c->gw) ? (uint8_t)family : c->family;
	if ((fam != AF_INET && fam != AF_INET6) || (zero16(c->gw) && !dst) || !c->ifindex)
		return -EINVAL;
	if (c->resolve_ns && now - c->resolve_ns < m->resolve_ns) {
		m->st.resolves_limited++;
		return -EAGAIN;
	}
	nhc(m, nh)->resolve_ns = now;
	if (m->resolve_refused) {
		int err = resolve_by_send(fam, c->ifindex, zero16(c->gw) ? dst : c->gw);

		if (!err)
			m->st.resolves++;
		return err;
	}
	nlh->nlmsg_type = RTM_NEWNEIGH;
	/* NTF_USE: the kernel starts resolution (as for a packet it routes) and changes nothing
	 * else; CREATE for a neighbour it does not know yet. No ACK: errors alone come back. */
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_REPLACE;
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = fam;
	ndm->ndm_ifindex = (int)c->ifindex;
	ndm->ndm_state = NUD_NONE;
	ndm->ndm_flags = NTF_USE;
	mnl_attr_put(nlh, NDA_DST, fam_len(fam), zero16(c->gw) ? dst : c->gw);
	if (mnl_socket_sendto(m->req, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	m->st.resolves++;
	return 0;
}

const struct fwd_mirror_stats *fwd_mirror_stats(struct fwd_mirror *m)
{
	struct fwd_mirror_stats *st = &m->st;

	st->nexthops = m->nlive;
	st->neighbours = (uint32_t)m->nb.n;
	st->links = (uint32_t)m->links.n;
	st->addrs = (uint32_t)m->addrs.n;
	return st;
}

int fwd_mirror_link_mac(const struct fwd_mirror *m, uint32_t ifindex, uint8_t mac[6])
{
	const struct link *l = link_find(m, ifindex);

	if (!l || !l->has_mac)
		return -ENOENT;
	memcpy(mac, l->mac, 6);
	return 0;
}

const struct fwd_mirror_view *fwd_mirror_view(const struct fwd_mirror *m)
{
	return &m->view;
}

int fwd_mirror_fd(const struct fwd_mirror *m)
{
	return mnl_socket_get_fd(m->ev);
}

static void explain_path(struct fwd_mirror *m, uint32_t id, struct fwd_mirror_route *r)
{
	const struct nh_ctl *c = nhc(m, id);
	struct fwd_nh_rec rec;

	for (uint32_t i = 0; i < r->npaths; i++)
		if (r->path[i].ifindex == c->ifindex && !memcmp(r->path[i].gw, c->gw, 16))
			return;
	if (r->npaths == FWD_MIRROR_PATHS_MAX)
		return;
	fwd_nh_read(&m->view, id, 0, &rec);
	r->path[r->npaths].ifindex = c->ifindex;
	memcpy(r->path[r->npaths].gw, c->gw, 16);
	memcpy(r->path[r->npaths].dmac, rec.dmac, 6);
	r->path[r->npaths].resolved = rec.reason == FWD_NH_FORWARD;
	r->npaths++;
	if (r->reason != FWD_NH_FORWARD)
		r->reason = (enum fwd_nh_reason)rec.reason;
}

int fwd_mirror_explain(struct fwd_mirror *m, int family, const void *addr, struct fwd_mirror_route *r)
{
	uint32_t id;
	const struct nh_ctl *c;

	memset(r, 0, sizeof(*r));
	r->reason = FWD_NH_NOROUTE;
	if (family == AF_INET) {
		uint32_t a;

		memcpy(&a, addr, 4);
		if (umem_lpm4__lookup(m->view.lpm4, ntohl(a), &id))
			return 0;
	} else if (family == AF_INET6) {
		if (umem_lpm6__lookup(m->view.lpm6, addr, &id))
			return 0;
	} else {
		return -EAFNOSUPPORT;
	}
	if (id < NH_FIRST) {
		struct fwd_nh_rec rec;

		r->reason = fwd_nh_read(&m->view, id, 0, &rec);
		return 0;
	}
	c = nhc(m, id);
	r->reason = FWD_NH_LINKDOWN;
	if (is_single(c)) {
		if (c->blackhole) {
			r->reason = FWD_NH_BLACKHOLE;
			return 0;
		}
		explain_path(m, id, r);
		return 0;
	}
	for (uint32_t i = 0; i < c->nmem; i++) {
		if (nhc(m, c->mem[i])->blackhole || (c->wt[i] & WT_DEAD))
			continue;
		explain_path(m, c->mem[i], r);
	}
	return 0;
}

int fwd_mirror_addr(struct fwd_mirror *m, uint32_t ifindex, int family, uint8_t out[16])
{
	static const uint8_t loopback6[16] = { [15] = 1 };
	int best = 0; /* 2: global scope, 1: IPv6 link-local */

	for (size_t i = 0; i < m->addrs.n && best < 2; i++) {
		const struct addr *x = vec_at(&m->addrs, i);
		int rank;

		if (x->family != family || (ifindex && x->ifindex != ifindex))
			continue;
		if (family == AF_INET)
			rank = x->addr[0] == 127 ? 0 : 2;
		else
			rank = !memcmp(x->addr, loopback6, 16)			    ? 0 :
			       x->addr[0] == 0xfe && (x->addr[1] & 0xc0) == 0x80 ? 1 : 2;
		if (rank > best) {
			best = rank;
			memcpy(out, x->addr, 16);
		}
	}
	return best == 2 ? 0 : best == 1 ? 1 : -ENOENT;
}

/* ---- life ---- */
static struct mnl_socket *nl_open(bool nonblock)
{
	struct mnl_socket *s = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0));

	if (!s)
		return NULL;
	if (mnl_socket_bind(s, 0, MNL_SOCKET_AUTOPID) < 0) {
		int err = errno;

		mnl_socket_close(s);
		errno = err;
		return NULL;
	}
	return s;
}

static int ev_subscribe(struct fwd_mirror *m, int rcvbuf)
{
	static const int groups[] = { RTNLGRP_LINK, RTNLGRP_NEIGH, RTNLGRP_IPV4_IFADDR, RTNLGRP_IPV6_IFADDR,
				      RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE, RTNLGRP_NEXTHOP };
	int fd = mnl_socket_get_fd(m->ev);

	/* FORCE passes rmem_max (with CAP_NET_ADMIN); without it the kernel caps the request. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)))
		return -errno;
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		int g = groups[i];

		if (mnl_socket_setsockopt(m->ev, NETLINK_ADD_MEMBERSHIP, &g, sizeof(g)) && g != RTNLGRP_NEXTHOP)
			return -errno;
	}
	return 0;
}

static void mirror_free(struct fwd_mirror *m)
{
	if (m->rt.b) {
		for (size_t i = 0; i <= m->rt.mask; i++) {
			for (struct hnode *p = m->rt.b[i], *next; p; p = next) {
				struct rt_entry *e = container_of(p, struct rt_entry, hn);

				next = p->next;
				if (e->paths != &e->inl)
					free(e->paths);
				free(e);
			}
		}
	}
	if (m->nb.b) {
		for (size_t i = 0; i <= m->nb.mask; i++) {
			for (struct hnode *p = m->nb.b[i], *next; p; p = next) {
				next = p->next;
				free(container_of(p, struct neigh, hn));
			}
		}
	}
	for (uint32_t c = 0; c < FWD_NH_CHUNKS && m->ctl[c]; c++) {
		struct fwd_nh *e = atomic_load_explicit(&m->view.chunk[c], memory_order_relaxed);

		for (uint32_t i = 0; i < NH_PER_CHUNK; i++) {
			free(m->ctl[c][i].mem);
			free(m->ctl[c][i].wt);
			free(atomic_load_explicit(&e[i].sel, memory_order_relaxed));
		}
		free(e);
		free(m->ctl[c]);
	}
	for (size_t i = 0; i < m->retired.n; i++)
		free(*(struct fwd_nh_sel **)vec_at(&m->retired, i));
	free(m->rt.b);
	free(m->nb.b);
	free(m->nhs.b);
	free(m->objs.b);
	free(m->links.v);
	free(m->addrs.v);
	free(m->freelist.v);
	free(m->pending.v);
	free(m->retired.v);
	if (m->ev)
		mnl_socket_close(m->ev);
	if (m->dump)
		mnl_socket_close(m->dump);
	if (m->req)
		mnl_socket_close(m->req);
	if (m->view.lpm4)
		umem_lpm4__destroy(m->view.lpm4);
	if (m->view.lpm6)
		umem_lpm6__destroy(m->view.lpm6);
	free(m->lat);
	free(m->buf);
	free(m);
}

void fwd_mirror_destroy(struct fwd_mirror *m)
{
	if (m)
		mirror_free(m);
}

struct fwd_mirror *fwd_mirror_create(const struct fwd_mirror_opts *opts)
{
	struct fwd_mirror_opts o = { 0 };
	struct fwd_mirror *m;
	int err, one = 1;

	if (opts)
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	if (o.rcvbuf < 0) {
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->table = o.table ? o.table : RT_TABLE_MAIN;
	m->quiet = o.quiet;
	m->resolve_ns = (o.resolve_ms ? o.resolve_ms : 100) * 1000000u;
	m->buflen = 1u << 16; /* above MNL_SOCKET_DUMP_SIZE: a dump's datagrams fit */
	m->links.esz = sizeof(struct link);
	m->addrs.esz = sizeof(struct addr);
	m->freelist.esz = m->pending.esz = sizeof(uint32_t);
	m->retired.esz = sizeof(struct fwd_nh_sel *);
	m->buf = malloc(m->buflen);
	m->lat = calloc(FWD_MIRROR_LAT_SAMPLES, sizeof(*m->lat));
	m->view.lpm4 = umem_lpm4__create(&(struct umem_lpm4_opts){ .sz = sizeof(struct umem_lpm4_opts),
								   .tbl8_groups = o.lpm4_groups });
	m->view.lpm6 = umem_lpm6__create(&(struct umem_lpm6_opts){ .sz = sizeof(struct umem_lpm6_opts),
								   .groups = o.lpm6_groups ? o.lpm6_groups : 1u << 20 });
	if (!m->buf || !m->lat || !m->view.lpm4 || !m->view.lpm6 || ht_init(&m->rt, 1024) || ht_init(&m->nb, 64) ||
	    ht_init(&m->nhs, 64) || ht_init(&m->objs, 64)) {
		err = -ENOMEM;
		goto fail;
	}
	/* The reserved ids: route types with no next hop. */
	for (uint32_t id = 0; id < NH_FIRST; id++) {
		static const uint8_t reason[NH_FIRST] = { FWD_NH_BLACKHOLE, FWD_NH_UNREACHABLE, FWD_NH_PROHIBIT,
							  FWD_NH_LOCAL, FWD_NH_NOROUTE };

		if (nh_alloc(m) != id) {
			err = -ENOMEM;
			goto fail;
		}
		nhc(m, id)->refcnt = 1;
		nh_write(m, id, &(struct fwd_nh_rec){ .reason = reason[id], .nh = id });
	}
	m->nlive = 0;
	/* The event socket first: events during the dump queue there and apply after it. */
	m->ev = nl_open(true);
	m->dump = nl_open(false);
	m->req = nl_open(true);
	if (!m->ev || !m->dump || !m->req) {
		err = -errno;
		say(m, "mirror: cannot open a netlink socket: %s\n", strerror(-err));
		goto fail;
	}
	err = ev_subscribe(m, o.rcvbuf ? o.rcvbuf : 64 << 20);
	if (err) {
		say(m, "mirror: cannot subscribe to routing events: %s\n", strerror(-err));
		goto fail;
	}
	/* Strict checking: the kernel filters route dumps by table (Linux 4.20+). */
	mnl_socket_setsockopt(m->dump, NETLINK_GET_STRICT_CHK, &one, sizeof(one));
	mnl_socket_setsockopt(m->dump, NETLINK_EXT_ACK, &one, sizeof(one));
	err = full_dump(m);
	if (err) {
		say(m, "mirror: the initial dump of the kernel's tables failed: %s\n", strerror(-err));
		goto fail;
	}
	if (m->table != RT_TABLE_MAIN && !m->st.routes[0] && !m->st.routes[1]) {
		err = -ENOENT;
		if (m->dump_err[0] == -ENOENT && m->dump_err[1] == -ENOENT)
			say(m, "routing table %u does not exist (ip route show table %u)\n", m->table, m->table);
		else
			say(m, "routing table %u holds no routes (ip route show table %u)\n", m->table, m->table);
		goto fail;
	}
	return m;
fail:
	mirror_free(m);
	errno = -err;
	return NULL;
}

int fwd_forwarding_check(bool *v4, bool *v6)
{
	static const char *const path[2] = { "/proc/sys/net/ipv4/ip_forward", "/proc/sys/net/ipv6/conf/all/forwarding" };
	bool *out[2] = { v4, v6 };

	for (int i = 0; i < 2; i++) {
		FILE *f = fopen(path[i], "re");
		int v = 0;

		*out[i] = false;
		if (!f) {
			if (i == 0)
				return -errno;
			*out[i] = errno == ENOENT;
			continue;
		}
		*out[i] = fscanf(f, "%d", &v) == 1 && v > 0;
		fclose(f);
	}
	return 0;
}
