/* SPDX-License-Identifier: MIT */
/*
 * --mode l3: an IP router on the kernel's own tables. Per frame (IPv4 or IPv6 in an untagged
 * Ethernet frame): the destination's longest-prefix match and next hop from the netlink mirror
 * (nlmirror.h), the TTL or hop limit down (IPv4: the header checksum updated as RFC 1624 says),
 * both MACs rewritten, out of the route's interface. A multipath route picks its member by a
 * hash of the 5-tuple, so one flow keeps one path and its order.
 *
 * What a router's kernel does stays with it. The steering program decides before the socket
 * what it can: ARP and neighbour discovery (UMEM_STEER_F_HOST_CONTROL), TTL or hop limit <= 1
 * and IPv4 options (UMEM_STEER_F_ROUTER), the namespace's own addresses, broadcast and
 * multicast (rules "dst ADDR -> pass", written at start and rewritten as the mirror sees
 * addresses come and go). What only the lookup tells is dropped and counted by reason (the l3
 * stats): no route, a local address (one the rules do not pass yet), an unresolved next hop (resolution is asked of the kernel, NTF_USE, so the flow's next frames
 * are routed), a link down, blackhole/unreachable/prohibit routes, an output interface that is
 * not one of ours, a frame over the output MTU.
 *
 * The kernel never sees those frames, so the ICMP errors it would send for some of them come
 * from here (icmp.h): no route and unreachable or prohibit routes get destination unreachable,
 * a datagram over the MTU (IPv4 with DF, IPv6) fragmentation needed or packet too big with the
 * MTU. Each is built in the offending frame's buffer and sent back out of its input port, to
 * the MAC it came from, from an address of that interface; rate-limited by two token buckets
 * shared by the workers, sized as the namespace's icmp_msgs_per_sec and icmp_msgs_burst (one
 * for the unreachables, one for PMTU discovery, which the kernel never lets the others starve).
 *
 * The main thread applies the routing events (the mode's control hook), follows the router
 * interfaces' MACs and the own-address rules, and frees what the events retired once every
 * worker has left the burst it was in (a per-worker sequence, odd inside a burst's lookups).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <umem/csum.h>

#include "ctx.h"
#include "icmp.h"
#include "mode.h"
#include "nlmirror.h"
#include "offload.h"
#include "path.h"
#include "privs.h"
#include "reload.h"

/* Reasons a frame is not routed: the mirror's (enum fwd_nh_reason, same index) and these. */
enum l3_reason {
	L3_NOT_OURS = FWD_NH_REASONS, /* the route's interface is not one of xdp-fwd's */
	L3_TOO_BIG,    /* over the output interface's MTU */
	L3_TTL,        /* TTL/hop limit <= 1 (the steering program passes these; a race with it) */
	L3_OPTIONS,    /* IPv4 options (likewise) */
	L3_NOT_IP,     /* not IPv4/IPv6 (ARP and ND go to the kernel before the socket) */
	L3_OTHER_MAC,  /* not addressed to the input interface's MAC */
	L3_MALFORMED,  /* a header cut short, a length that does not fit */
	L3_NR
};
_Static_assert(L3_NR <= FWD_L3_REASONS, "reasons fit the sample");

static const char *const l3_extra_names[] = {
	[L3_NOT_OURS - FWD_NH_REASONS] = "not_ours", [L3_TOO_BIG - FWD_NH_REASONS] = "too_big",
	[L3_TTL - FWD_NH_REASONS] = "ttl",           [L3_OPTIONS - FWD_NH_REASONS] = "ip_options",
	[L3_NOT_IP - FWD_NH_REASONS] = "not_ip",     [L3_OTHER_MAC - FWD_NH_REASONS] = "other_mac",
	[L3_MALFORMED - FWD_NH_REASONS] = "malformed",
};

static const char *reason_name(uint32_t r)
{
	return r < FWD_NH_REASONS ? fwd_nh_reason_names[r] : l3_extra_names[r - FWD_NH_REASONS];
}

#define L3_RQ 64u /* resolution requests a worker queues for the main thread */

/* ICMP errors: sent (unreachable, too big), refused by the limit, not sent (no source, room). */
enum l3_icmp_count { L3_ICMP_UNREACH, L3_ICMP_TOO_BIG, L3_ICMP_LIMITED, L3_ICMP_UNSENT, L3_ICMP_NR };

struct l3_resolve {
	uint32_t nh;
	int family;
	uint8_t dst[16];
};

struct l3_worker {
	/* Odd while the worker is inside a burst's lookups (reclaim waits for it to move on). */
	_Atomic uint64_t seq;
	_Atomic uint64_t drop[L3_NR];
	_Atomic uint64_t icmp[L3_ICMP_NR];
	/* Single producer (the worker), single consumer (the main thread). */
	_Atomic uint32_t rq_head, rq_tail;
	struct l3_resolve rq[L3_RQ];
} __attribute__((aligned(64)));

struct fwd_l3 {
	struct fwd_mirror *m;
	const struct fwd_mirror_view *view;
	struct l3_worker w[FWD_MAX_WORKERS];
	uint64_t snap[FWD_MAX_WORKERS]; /* the workers' seq after the last change */
	bool reclaim_pending;
	uint64_t resyncs;
	uint64_t resolve_failed;
	/* Shared by the workers: [0] the unreachables, [1] fragmentation needed / packet too big. */
	struct fwd_icmp_limit limit[2];
	uint64_t addr_changes; /* the mirror's count when the pass rules were last rewritten */
	/* The texts of the pass rules (cfg->rule_text points here); used[k]: in cfg's list. */
	char rule_text[FWD_MAX_RULES][INET6_ADDRSTRLEN + 24];
	bool used[FWD_MAX_RULES];
};

/* --- the data path -------------------------------------------------------------------- */

/* The ports of a TCP/UDP/SCTP/UDP-Lite header at l4 (0 when absent or cut short). */
static inline uint32_t l3_ports(uint8_t proto, const uint8_t *l4, const uint8_t *end)
{
	uint32_t p;

	if ((proto != IPPROTO_TCP && proto != IPPROTO_UDP && proto != IPPROTO_SCTP && proto != IPPROTO_UDPLITE) ||
	    l4 + 4 > end)
		return 0;
	memcpy(&p, l4, 4);
	return p;
}

/* The flow hashes multipath picks by (ports: the transport header's first 4 bytes as they are
 * in the frame, 0 without them); one place, so an offloaded flow's path is the one it had. */
static inline uint32_t l3_hash4(uint32_t saddr, uint32_t daddr, uint8_t proto, uint32_t ports)
{
	return (uint32_t)umem_hash__mix64((uint64_t)saddr << 32 ^ daddr ^ (uint64_t)proto << 24 ^ (uint64_t)ports << 16);
}

static inline uint32_t l3_hash6(const uint8_t *saddr, const uint8_t *daddr, uint8_t proto, uint32_t ports)
{
	uint64_t s[2], d[2];

	memcpy(s, saddr, 16);
	memcpy(d, daddr, 16);
	return (uint32_t)umem_hash__mix64(s[0] ^ s[1] * 31 ^ d[0] * 17 ^ d[1] * 7 ^ (uint64_t)proto << 56 ^ (uint64_t)ports << 8);
}

static inline void l3_count(struct l3_worker *lw, uint32_t why)
{
	fwd_count(&lw->drop[why], 1);
}

static inline void l3_icmp_count(struct l3_worker *lw, enum l3_icmp_count c)
{
	fwd_count(&lw->icmp[c], 1);
}

static inline void l3_ask_resolve(struct l3_worker *lw, uint32_t nh, int family, const void *dst, size_t len)
{
	uint32_t tail = atomic_load_explicit(&lw->rq_tail, memory_order_relaxed);

	/* Full: the requests queued already ask the kernel; the mirror rate-limits per next hop. */
	if (tail - atomic_load_explicit(&lw->rq_head, memory_order_acquire) >= L3_RQ)
		return;
	lw->rq[tail % L3_RQ].nh = nh;
	lw->rq[tail % L3_RQ].family = family;
	memcpy(lw->rq[tail % L3_RQ].dst, dst, len);
	atomic_store_explicit(&lw->rq_tail, tail + 1, memory_order_release);
}

/* The port that sends out of ifindex for a frame received on in, or UINT32_MAX. */
static inline uint32_t l3_out_port(const struct fwd_ctx *ctx, uint32_t in, uint32_t ifindex)
{
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		if (ctx->ifaces[f].ifindex == ifindex)
			return ctx->via[in][f];
	return UINT32_MAX;
}

/* Routes one frame (first descriptor at eth, total bytes len): the output port, or
 * UINT32_MAX with *why set (L3_TOO_BIG: *mtu, the output's). */
static inline uint32_t l3_route(struct fwd_worker *w, struct l3_worker *lw, uint32_t in, uint8_t *eth,
				uint32_t len0, uint32_t *why, uint32_t *mtu)
{
	const struct fwd_ctx *ctx = w->ctx;
	const struct fwd_mirror_view *v = ctx->l3->view;
	const uint8_t *end = eth + len0;
	struct fwd_nh_rec rec;
	enum fwd_nh_reason r;
	uint16_t type = (uint16_t)(eth[12] << 8 | eth[13]);
	uint32_t out, iplen;
	uint8_t *ip = eth + FWD_ETH_HLEN;
	uint64_t dst = 0;

	memcpy(&dst, eth, 6);
	if (dst != atomic_load_explicit(&ctx->ifaces[ctx->ports[in].iface].l3.mac, memory_order_relaxed)) {
		*why = L3_OTHER_MAC;
		return UINT32_MAX;
	}
	if (type == 0x0800) {
		uint32_t saddr, daddr;

		if (ip + 20 > end) {
			*why = L3_MALFORMED;
			return UINT32_MAX;
		}
		if (ip[0] != 0x45) {
			*why = (ip[0] >> 4) != 4 || (ip[0] & 15) < 5 ? L3_MALFORMED : L3_OPTIONS;
			return UINT32_MAX;
		}
		if (ip[8] <= 1) {
			*why = L3_TTL;
			return UINT32_MAX;
		}
		iplen = (uint32_t)(ip[2] << 8 | ip[3]);
		memcpy(&saddr, ip + 12, 4);
		memcpy(&daddr, ip + 16, 4);
		/* A fragment after the first has no ports: addresses and protocol only. */
		r = fwd_mirror_lookup4(v, ntohl(daddr),
				       l3_hash4(saddr, daddr, ip[9], (ip[6] & 0x1f) | ip[7] ? 0 : l3_ports(ip[9], ip + 20, end)),
				       &rec);
		if (r == FWD_NH_UNRESOLVED)
			l3_ask_resolve(lw, rec.nh, AF_INET, ip + 16, 4);
	} else if (type == 0x86dd) {
		if (ip + 40 > end || (ip[0] >> 4) != 6) {
			*why = L3_MALFORMED;
			return UINT32_MAX;
		}
		if (ip[7] <= 1) {
			*why = L3_TTL;
			return UINT32_MAX;
		}
		iplen = 40u + (uint32_t)(ip[4] << 8 | ip[5]);
		r = fwd_mirror_lookup6(v, ip + 24, l3_hash6(ip + 8, ip + 24, ip[6], l3_ports(ip[6], ip + 40, end)), &rec);
		if (r == FWD_NH_UNRESOLVED)
			l3_ask_resolve(lw, rec.nh, AF_INET6, ip + 24, 16);
	} else {
		*why = L3_NOT_IP;
		return UINT32_MAX;
	}
	if (r != FWD_NH_FORWARD) {
		*why = r;
		return UINT32_MAX;
	}
	out = l3_out_port(ctx, in, rec.ifindex);
	if (out == UINT32_MAX) {
		*why = L3_NOT_OURS;
		return UINT32_MAX;
	}
	if (rec.mtu && iplen > rec.mtu) {
		*why = L3_TOO_BIG;
		*mtu = rec.mtu;
		return UINT32_MAX;
	}
	if (type == 0x0800) {
		uint16_t old = (uint16_t)(ip[8] << 8 | ip[9]), check = (uint16_t)(ip[10] << 8 | ip[11]);

		ip[8]--;
		check = umem_csum__update16(check, old, (uint16_t)(ip[8] << 8 | ip[9]));
		ip[10] = (uint8_t)(check >> 8);
		ip[11] = (uint8_t)check;
	} else {
		ip[7]--;
	}
	memcpy(eth, rec.dmac, 6);
	memcpy(eth + 6, rec.smac, 6);
	return out;
}

/* The ICMP error source of interface f for family (AF_INET: 4 bytes, else 16), false: none. */
static inline bool l3_src(const struct fwd_iface *f, int family, uint8_t out[16])
{
	uint64_t v[3];
	uint32_t s;

	do { /* the seqcount of fwd_nh_read (nlmirror.h), for three words written rarely */
		while ((s = atomic_load_explicit(&f->l3.src_seq, memory_order_acquire)) & 1u)
			;
		for (int k = 0; k < 3; k++)
			v[k] = atomic_load_explicit(&f->l3.src[k], memory_order_acquire);
	} while (atomic_load_explicit(&f->l3.src_seq, memory_order_relaxed) != s);
	if (family == AF_INET) {
		memcpy(out, &v[0], 4);
		return v[0] != 0;
	}
	memcpy(out, &v[1], 16);
	return v[1] || v[2];
}

/* The ICMP error for a frame (n descriptors at d, received on port in) l3_route did not route
 * for reason why: built in its first buffer and sent back out of in, the frame's drop counted
 * as before. False (nothing done, the caller drops it) when the reason has no error, the frame
 * may not have one (icmp.h), or the limit or a missing source address refuses it. */
static bool l3_icmp(struct fwd_worker *w, struct l3_worker *lw, uint32_t in, struct umem_desc *d, uint32_t n,
		    uint32_t why, uint32_t mtu, uint64_t now)
{
	struct fwd_ctx *ctx = w->ctx;
	struct fwd_port *p = &ctx->ports[in];
	uint8_t *eth = umem_area__ptr(ctx->area, d->addr), src[16];
	enum fwd_icmp_kind kind;
	struct umem_desc e;
	uint32_t len;

	switch (why) {
	case FWD_NH_NOROUTE:
		kind = FWD_ICMP_NET_UNREACH;
		break;
	case FWD_NH_UNREACHABLE:
		kind = FWD_ICMP_HOST_UNREACH;
		break;
	case FWD_NH_PROHIBIT:
		kind = FWD_ICMP_PROHIBITED;
		break;
	case L3_TOO_BIG:
		kind = FWD_ICMP_TOO_BIG;
		break;
	default:
		return false; /* blackhole (silent, as the kernel) and what the kernel would not answer */
	}
	if (!fwd_icmp_allowed(eth, d->len, kind))
		return false;
	if (!l3_src(&ctx->ifaces[p->iface], eth[12] == 0x08 ? AF_INET : AF_INET6, src)) {
		l3_icmp_count(lw, L3_ICMP_UNSENT);
		return false;
	}
	if (!fwd_icmp_limit_take(&ctx->l3->limit[kind == FWD_ICMP_TOO_BIG], now)) {
		l3_icmp_count(lw, L3_ICMP_LIMITED);
		return false;
	}
	len = p->port ? fwd_icmp_build(eth, d->len, umem_port__rx_frame_len(p->port), kind, mtu, src) : 0;
	/* Our own reference on the first buffer: the drop below returns the frame's. */
	if (!len || umem_pool__ref(w->pool, d->addr, 1)) {
		l3_icmp_count(lw, L3_ICMP_UNSENT);
		return false;
	}
	fwd_drop(w, p, FWD_DROP_L3, d, n);
	e = (struct umem_desc){ .addr = d->addr, .len = len };
	fwd_emit(w, in, in, &e, 1);
	l3_icmp_count(lw, kind == FWD_ICMP_TOO_BIG ? L3_ICMP_TOO_BIG : L3_ICMP_UNREACH);
	return true;
}

static void l3_burst(struct fwd_worker *w, uint32_t in, struct umem_desc *d, uint32_t n, uint64_t now)
{
	struct fwd_ctx *ctx = w->ctx;
	struct l3_worker *lw = &ctx->l3->w[w->idx];
	bool *skip_contd = &ctx->ports[in].skip_contd;
	uint64_t seq = atomic_load_explicit(&lw->seq, memory_order_relaxed);
	uint32_t i;

	/* Odd: inside; the fence orders it before the lookups' loads (the main thread's reclaim
	 * reads it after its changes, with a fence of its own). */
	atomic_store_explicit(&lw->seq, seq + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	i = fwd_chain_tail(d, n, skip_contd);
	if (i)
		fwd_drop(w, &ctx->ports[in], FWD_DROP_INVALID, d, i);
	while (i < n) {
		uint32_t len = 1, why = L3_MALFORMED, out = UINT32_MAX, mtu = 0;

		while (i + len <= n && !fwd_desc_last(&d[i + len - 1]))
			len++;
		if (i + len > n) {
			fwd_drop(w, &ctx->ports[in], FWD_DROP_INVALID, &d[i], n - i);
			*skip_contd = true;
			break;
		}
		if (d[i].len >= FWD_ETH_HLEN)
			out = l3_route(w, lw, in, umem_area__ptr(ctx->area, d[i].addr), d[i].len, &why, &mtu);
		if (out != UINT32_MAX) {
			fwd_emit(w, in, out, &d[i], len);
		} else {
			l3_count(lw, why);
			if (!l3_icmp(w, lw, in, &d[i], len, why, mtu, now))
				fwd_drop(w, &ctx->ports[in], FWD_DROP_L3, &d[i], len);
		}
		i += len;
	}
	atomic_store_explicit(&lw->seq, seq + 2, memory_order_release);
}

/* --offload-after: the route of flow k as l3_route finds it for the flow's frames (the same
 * lookup and hash), as the steering program's rewrite. */
static bool l3_offload_target(struct fwd_ctx *ctx, int worker, uint32_t in, const struct umem_steer_flow_key *k,
			      uint32_t *out, struct umem_steer_flow *fl)
{
	struct l3_worker *lw = worker >= 0 ? &ctx->l3->w[worker] : NULL;
	const uint8_t pb[4] = { (uint8_t)(k->sport >> 8), (uint8_t)k->sport, (uint8_t)(k->dport >> 8), (uint8_t)k->dport };
	uint64_t seq = 0, imac;
	struct fwd_nh_rec rec;
	enum fwd_nh_reason r;
	uint32_t ports;

	memcpy(&ports, pb, 4);
	if (lw) { /* a worker reads the view inside its sequence, as in a burst (l3_burst) */
		seq = atomic_load_explicit(&lw->seq, memory_order_relaxed);
		atomic_store_explicit(&lw->seq, seq + 1, memory_order_relaxed);
		atomic_thread_fence(memory_order_seq_cst);
	}
	if (k->kind == UMEM_STEER_FLOW_IPV4) {
		uint32_t saddr, daddr;

		memcpy(&saddr, k->saddr, 4);
		memcpy(&daddr, k->daddr, 4);
		r = fwd_mirror_lookup4(ctx->l3->view, ntohl(daddr), l3_hash4(saddr, daddr, k->l4proto, ports), &rec);
	} else {
		r = fwd_mirror_lookup6(ctx->l3->view, k->daddr, l3_hash6(k->saddr, k->daddr, k->l4proto, ports), &rec);
	}
	if (lw)
		atomic_store_explicit(&lw->seq, seq + 2, memory_order_release);
	if (r != FWD_NH_FORWARD || (*out = l3_out_port(ctx, in, rec.ifindex)) == UINT32_MAX)
		return false;
	fl->index = rec.ifindex;
	fl->flags |= UMEM_STEER_FLOW_F_ROUTE;
	memcpy(fl->dmac, rec.dmac, 6);
	memcpy(fl->smac, rec.smac, 6);
	fl->mtu = rec.mtu;
	imac = atomic_load_explicit(&ctx->ifaces[ctx->ports[in].iface].l3.mac, memory_order_relaxed);
	memcpy(fl->imac, &imac, 6); /* the program routes what l3_route would: frames to it */
	return true;
}

/* --- set-up: the mirror, the kernel's part ------------------------------------------- */

/* The texts of the rules that pass the namespace's own addresses, their broadcast addresses,
 * multicast and IPv6 link-local destinations to the kernel (a router's own traffic is the
 * kernel's), as the kernel lists its addresses now; -errno. */
typedef char l3_rule_text[INET6_ADDRSTRLEN + 24];
static bool pass_known(const l3_rule_text *out, uint32_t n, const char *addr)
{
	char text[sizeof(l3_rule_text)];

	snprintf(text, sizeof(text), "dst %s -> pass", addr);
	for (uint32_t k = 0; k < n; k++)
		if (!strcmp(out[k], text))
			return true;
	return false;
}

static int pass_texts(l3_rule_text *out, uint32_t max, uint32_t *n)
{
	static const char *const fixed[] = { "224.0.0.0/4", "255.255.255.255", "ff00::/8", "fe80::/10" };
	struct ifaddrs *ifa, *a;
	char buf[INET6_ADDRSTRLEN];
	int err = 0;

	*n = 0;
#define PASS(addr)                                                                                                  \
	do {                                                                                                        \
		if (pass_known(out, *n, addr)) {                                                                    \
			/* one address on two interfaces: one rule */                                       \
		} else if (*n == max) {                                                                             \
			fprintf(stderr, "xdp-fwd: --mode l3: no room for the rule that passes %s to the kernel "    \
				"(%u rules at most)\n", addr, FWD_MAX_RULES);                                     \
			err = -ENOSPC;                                                                              \
		} else {                                                                                            \
			snprintf(out[(*n)++], sizeof(out[0]), "dst %s -> pass", addr);                               \
		}                                                                                                   \
	} while (0)
	for (size_t k = 0; k < sizeof(fixed) / sizeof(fixed[0]) && !err; k++)
		PASS(fixed[k]);
	if (getifaddrs(&ifa))
		return -errno;
	for (a = ifa; a && !err; a = a->ifa_next) {
		if (!a->ifa_addr)
			continue;
		if (a->ifa_addr->sa_family == AF_INET) {
			const struct sockaddr_in *s = (const void *)a->ifa_addr;

			if ((ntohl(s->sin_addr.s_addr) >> 24) == 127)
				continue; /* never on a router port */
			PASS(inet_ntop(AF_INET, &s->sin_addr, buf, sizeof(buf)));
			if (!err && (a->ifa_flags & IFF_BROADCAST) && a->ifa_broadaddr) {
				const struct sockaddr_in *b = (const void *)a->ifa_broadaddr;

				/* No broadcast address set: the kernel reports the address again. */
				if (b->sin_addr.s_addr && b->sin_addr.s_addr != s->sin_addr.s_addr)
					PASS(inet_ntop(AF_INET, &b->sin_addr, buf, sizeof(buf)));
			}
		} else if (a->ifa_addr->sa_family == AF_INET6) {
			const struct sockaddr_in6 *s = (const void *)a->ifa_addr;

			if (IN6_IS_ADDR_LINKLOCAL(&s->sin6_addr) || IN6_IS_ADDR_LOOPBACK(&s->sin6_addr))
				continue; /* fe80::/10 above */
			PASS(inet_ntop(AF_INET6, &s->sin6_addr, buf, sizeof(buf)));
		}
	}
#undef PASS
	freeifaddrs(ifa);
	return err;
}

/* The slot of text among the mode's rule texts (UINT32_MAX: none). */
static uint32_t pass_slot(const struct fwd_l3 *l3, const char *text)
{
	for (uint32_t k = 0; k < FWD_MAX_RULES; k++)
		if (text == l3->rule_text[k])
			return k;
	return UINT32_MAX;
}

/* The pass rules become those of the addresses the namespace has now (at start: appended to
 * cfg's rules before the programs are attached; later: replaced in every program, the -r rules
 * and the pass rules that stay untouched). An address added while running reaches the kernel,
 * not the lookup's `local` drop; one removed is routed again, not left to the kernel's own
 * forwarding. */
static int pass_local(struct fwd_ctx *ctx, bool running)
{
	static l3_rule_text want[FWD_MAX_RULES]; /* static: large; main thread only */
	static struct umem_steer_rule rules[FWD_MAX_RULES];
	static const char *texts[FWD_MAX_RULES];
	struct fwd_config *cfg = ctx->cfg;
	struct fwd_l3 *l3 = ctx->l3;
	bool keep[FWD_MAX_RULES] = { false }, changed = false;
	uint32_t nw, n = 0;
	int err = pass_texts(want, FWD_MAX_RULES, &nw);

	/* Running: a list cut short by the room still applies; one that could not be read not. */
	if (err && (!running || err != -ENOSPC))
		return err;
	/* The -r rules first, as at start. */
	for (uint32_t r = 0; r < cfg->nr_rules; r++) {
		if (pass_slot(l3, cfg->rule_text[r]) != UINT32_MAX)
			continue;
		rules[n] = cfg->rules[r];
		texts[n++] = cfg->rule_text[r];
	}
	for (uint32_t k = 0; k < nw; k++) {
		uint32_t slot = UINT32_MAX;

		for (uint32_t r = 0; r < cfg->nr_rules && slot == UINT32_MAX; r++) {
			uint32_t j = pass_slot(l3, cfg->rule_text[r]);

			if (j != UINT32_MAX && !strcmp(l3->rule_text[j], want[k]) && !keep[j]) {
				slot = j;
				rules[n] = cfg->rules[r];
			}
		}
		if (slot == UINT32_MAX) {
			for (slot = 0; slot < FWD_MAX_RULES && l3->used[slot]; slot++)
				;
			if (n == FWD_MAX_RULES || slot == FWD_MAX_RULES) {
				fprintf(stderr, "xdp-fwd: --mode l3: no room for the rule '%s' (%u rules at most)\n", want[k],
					FWD_MAX_RULES);
				err = -ENOSPC;
				break;
			}
			memcpy(l3->rule_text[slot], want[k], sizeof(want[k]));
			err = umem_steer_rule__parse(l3->rule_text[slot], &rules[n]);
			if (err) {
				fprintf(stderr, "xdp-fwd: --mode l3: rule '%s': %s\n", want[k], strerror(-err));
				break;
			}
			l3->used[slot] = true;
			changed = true;
		}
		keep[slot] = true;
		texts[n++] = l3->rule_text[slot];
	}
	if (err && !running)
		return err;
	for (uint32_t k = 0; k < FWD_MAX_RULES; k++)
		if (l3->used[k] && !keep[k])
			changed = true;
	if (!running) {
		memcpy(cfg->rules, rules, sizeof(rules[0]) * n);
		memcpy(cfg->rule_text, texts, sizeof(texts[0]) * n);
		cfg->nr_rules = n;
	} else if (changed) {
		err = fwd_rules_replace(ctx, rules, texts, n, NULL);
	}
	for (uint32_t k = 0; k < FWD_MAX_RULES; k++)
		l3->used[k] = keep[k];
	return err;
}

/* A reload replaces the -r rules: the pass rules stay (appended to the new list). */
static uint32_t l3_own_rules(const struct fwd_ctx *ctx, struct umem_steer_rule *rules, const char **texts, uint32_t n,
			     uint32_t max)
{
	const struct fwd_config *cfg = ctx->cfg;

	for (uint32_t r = 0; r < cfg->nr_rules; r++) {
		if (pass_slot(ctx->l3, cfg->rule_text[r]) == UINT32_MAX)
			continue;
		if (n == max) {
			fprintf(stderr, "xdp-fwd: --mode l3: no room for the rule '%s' after the reload's (%u rules at most)\n",
				cfg->rule_text[r], max);
			break;
		}
		rules[n] = cfg->rules[r];
		texts[n++] = cfg->rule_text[r];
	}
	return n;
}

static void l3_mac_set(_Atomic uint64_t *word, const uint8_t mac[6])
{
	uint64_t v = 0;

	memcpy(&v, mac, 6);
	atomic_store_explicit(word, v, memory_order_relaxed);
}

static int iface_mac(const char *ifname, _Atomic uint64_t *mac)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr))
		err = -errno;
	else
		l3_mac_set(mac, (const uint8_t *)ifr.ifr_hwaddr.sa_data);
	close(fd);
	return err;
}

/* An integer sysctl of the namespace (a /proc/sys path), or def when it cannot be read. */
static uint32_t sysctl_u32(const char *path, uint32_t def)
{
	FILE *f = fopen(path, "re");
	int v;

	if (!f)
		return def;
	if (fscanf(f, "%d", &v) != 1 || v < 0)
		v = (int)def;
	fclose(f);
	return (uint32_t)v;
}

/* An ICMP error source for interface ifindex (0: closed): its own address of global scope,
 * else one of the namespace's, else its IPv6 link-local one (which a router beyond the
 * neighbour would not forward: the last resort). All zero: none. */
static void l3_source(struct fwd_mirror *m, uint32_t ifindex, int family, uint8_t out[16])
{
	uint8_t ll[16] = { 0 };
	int r = ifindex ? fwd_mirror_addr(m, ifindex, family, out) : -ENOENT;

	if (r == 0)
		return;
	if (r == 1)
		memcpy(ll, out, 16);
	if (fwd_mirror_addr(m, 0, family, out) != 0)
		memcpy(out, ll, 16);
}

/* The ICMP errors' sources (main thread), published to the workers under each interface's
 * seqcount. */
static void l3_sources(struct fwd_ctx *ctx)
{
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		struct fwd_iface *fi = &ctx->ifaces[f];
		uint8_t a4[16], a6[16];
		uint64_t v[3];
		uint32_t s;
		bool same = true;

		fi->l3.src_ifindex = fi->ifindex;
		l3_source(ctx->l3->m, fi->ifindex, AF_INET, a4);
		l3_source(ctx->l3->m, fi->ifindex, AF_INET6, a6);
		v[0] = 0;
		memcpy(&v[0], a4, 4);
		memcpy(&v[1], a6, 16);
		for (int k = 0; k < 3; k++)
			same = same && atomic_load_explicit(&fi->l3.src[k], memory_order_relaxed) == v[k];
		if (same)
			continue;
		/* The writer's half of l3_src's seqcount (as nlmirror.c's next-hop records). */
		s = atomic_load_explicit(&fi->l3.src_seq, memory_order_relaxed);
		atomic_store_explicit(&fi->l3.src_seq, s + 1, memory_order_relaxed);
		for (int k = 0; k < 3; k++)
			atomic_store_explicit(&fi->l3.src[k], v[k], memory_order_release);
		atomic_store_explicit(&fi->l3.src_seq, s + 2, memory_order_release);
	}
}

static bool l3_sources_moved(const struct fwd_ctx *ctx)
{
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		if (ctx->ifaces[f].ifindex != ctx->ifaces[f].l3.src_ifindex)
			return true;
	return false;
}

static void l3_teardown(struct fwd_ctx *ctx)
{
	if (!ctx->l3)
		return;
	fwd_mirror_destroy(ctx->l3->m);
	free(ctx->l3);
	ctx->l3 = NULL;
}

static int l3_setup(struct fwd_ctx *ctx)
{
	const struct fwd_config *cfg = ctx->cfg;
	UMEM_OPTS(fwd_mirror_opts, mo, .table = cfg->route_table);
	bool v4 = false, v6 = false;
	uint32_t icmp_rate, icmp_burst;
	int err = fwd_forwarding_check(&v4, &v6);

	if (err) {
		fprintf(stderr, "xdp-fwd: --mode l3: cannot read net.ipv4.ip_forward: %s\n", strerror(-err));
		return err;
	}
	if (!v4) {
		/* The kernel's part of routing (TTL expiry, frames it routes itself) would be
		 * missing, and frames handed to it dropped. */
		fprintf(stderr, "xdp-fwd: --mode l3: the kernel does not forward IPv4 in this namespace "
			"(net.ipv4.ip_forward = 0): set it to 1 (sysctl -w net.ipv4.ip_forward=1)\n");
		return -EINVAL;
	}
	if (!v6)
		fprintf(stderr, "xdp-fwd: --mode l3: warning: net.ipv6.conf.all.forwarding is 0: IPv6 is "
			"routed here, but the kernel's part of it (hop limit expiry) is not\n");
	ctx->l3 = calloc(1, sizeof(*ctx->l3));
	if (!ctx->l3)
		return -ENOMEM;
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		err = iface_mac(ctx->ifaces[f].name, &ctx->ifaces[f].l3.mac);
		if (err) {
			fprintf(stderr, "xdp-fwd: --mode l3: %s: cannot read its MAC address: %s\n", ctx->ifaces[f].name,
				strerror(-err));
			l3_teardown(ctx);
			return err;
		}
	}
	ctx->l3->m = fwd_mirror_create(&mo);
	if (!ctx->l3->m) {
		err = -errno;
		if (err != -ENOENT) /* ENOENT: the mirror said which table */
			fprintf(stderr, "xdp-fwd: --mode l3: cannot mirror the routing tables: %s\n", strerror(-err));
		l3_teardown(ctx);
		return err;
	}
	ctx->l3->view = fwd_mirror_view(ctx->l3->m);
	/* The kernel's own bound on its ICMP errors (its defaults when unreadable). */
	icmp_rate = sysctl_u32("/proc/sys/net/ipv4/icmp_msgs_per_sec", 1000);
	icmp_burst = sysctl_u32("/proc/sys/net/ipv4/icmp_msgs_burst", 50);
	for (int k = 0; k < 2; k++)
		fwd_icmp_limit_init(&ctx->l3->limit[k], icmp_rate, icmp_burst);
	l3_sources(ctx);
	ctx->l3->addr_changes = fwd_mirror_stats(ctx->l3->m)->addr_changes;
	err = pass_local(ctx, false);
	if (err)
		l3_teardown(ctx);
	return err;
}

/* --- the main thread: events, resolution, reclaim ------------------------------------ */

static int l3_control_fd(const struct fwd_ctx *ctx)
{
	return fwd_mirror_fd(ctx->l3->m);
}

static void l3_resolve_queued(struct fwd_ctx *ctx)
{
	struct fwd_l3 *l3 = ctx->l3;
	bool raised = false;

	for (uint32_t k = 0; k < ctx->nr_workers; k++) {
		struct l3_worker *lw = &l3->w[k];
		uint32_t head = atomic_load_explicit(&lw->rq_head, memory_order_relaxed);
		uint32_t tail = atomic_load_explicit(&lw->rq_tail, memory_order_acquire);

		for (; head != tail; head++) {
			const struct l3_resolve *q = &lw->rq[head % L3_RQ];
			int err;

			/* NTF_USE needs CAP_NET_ADMIN: kept in the permitted set (--no-reattach
			 * drops it, and resolution is then the kernel's own traffic's). */
			if (!raised)
				raised = !fwd_privs_raise(true);
			err = fwd_mirror_resolve(l3->m, q->nh, q->family, q->dst);
			if (err && err != -EAGAIN)
				l3->resolve_failed++;
		}
		atomic_store_explicit(&lw->rq_head, head, memory_order_release);
	}
	if (raised)
		fwd_privs_raise(false);
}

/* A router interface whose MAC changed (ip link set dev X address ...; or a device recreated
 * under its name): frames addressed to the new MAC are the ones routed. The next hops' source
 * MAC follows in the mirror (its records take the link's address). */
static void l3_follow_macs(struct fwd_ctx *ctx)
{
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		struct fwd_iface *fi = &ctx->ifaces[f];
		uint8_t mac[6];
		uint64_t v = 0;

		if (!fi->ifindex || fwd_mirror_link_mac(ctx->l3->m, fi->ifindex, mac))
			continue;
		memcpy(&v, mac, 6);
		if (v != atomic_load_explicit(&fi->l3.mac, memory_order_relaxed))
			l3_mac_set(&fi->l3.mac, mac);
	}
}

static void l3_control(struct fwd_ctx *ctx, uint64_t now_ns)
{
	struct fwd_l3 *l3 = ctx->l3;
	int applied = fwd_mirror_process(l3->m);
	const struct fwd_mirror_stats *st = fwd_mirror_stats(l3->m);
	uint64_t resyncs = st->resyncs;

	(void)now_ns;
	l3_resolve_queued(ctx);
	/* The sources follow the addresses, and an interface closed or reopened (its ifindex). */
	if (st->addr_changes != l3->addr_changes || l3_sources_moved(ctx))
		l3_sources(ctx);
	l3_follow_macs(ctx);
	if (st->addr_changes != l3->addr_changes) {
		l3->addr_changes = st->addr_changes;
		pass_local(ctx, true);
	}
	if (applied != 0 || resyncs != l3->resyncs) {
		/* Something may have been retired: it is freed once every worker has left the
		 * burst it is in now. */
		l3->resyncs = resyncs;
		if (ctx->off) /* offloaded flows the change moved come back to userspace */
			fwd_offload_routes_changed(ctx);
		atomic_thread_fence(memory_order_seq_cst);
		for (uint32_t k = 0; k < ctx->nr_workers; k++)
			l3->snap[k] = atomic_load_explicit(&l3->w[k].seq, memory_order_relaxed);
		l3->reclaim_pending = true;
		return;
	}
	if (!l3->reclaim_pending)
		return;
	for (uint32_t k = 0; k < ctx->nr_workers; k++)
		if ((l3->snap[k] & 1) && atomic_load_explicit(&l3->w[k].seq, memory_order_acquire) == l3->snap[k])
			return;
	fwd_mirror_reclaim(l3->m);
	l3->reclaim_pending = false;
}

/* --- stats --------------------------------------------------------------------------- */

static void l3_sample(struct fwd_ctx *ctx, struct fwd_samples *s)
{
	const struct fwd_mirror_stats *st = fwd_mirror_stats(ctx->l3->m);

	memset(&s->l3, 0, sizeof(s->l3));
	for (uint32_t r = 1; r < L3_NR; r++)
		s->l3.reason[r] = reason_name(r);
	s->l3.nr_reasons = L3_NR;
	for (uint32_t k = 0; k < ctx->nr_workers; k++) {
		const struct l3_worker *lw = &ctx->l3->w[k];

		for (uint32_t r = 0; r < L3_NR; r++)
			s->l3.drop[r] += atomic_load_explicit(&lw->drop[r], memory_order_relaxed);
		s->l3.icmp_unreach += atomic_load_explicit(&lw->icmp[L3_ICMP_UNREACH], memory_order_relaxed);
		s->l3.icmp_too_big += atomic_load_explicit(&lw->icmp[L3_ICMP_TOO_BIG], memory_order_relaxed);
		s->l3.icmp_limited += atomic_load_explicit(&lw->icmp[L3_ICMP_LIMITED], memory_order_relaxed);
		s->l3.icmp_unsent += atomic_load_explicit(&lw->icmp[L3_ICMP_UNSENT], memory_order_relaxed);
	}
	s->l3.resolves = st->resolves;
	s->l3.resolve_failed = ctx->l3->resolve_failed;
	s->l3.resyncs = st->resyncs;
	s->l3.events = st->events;
	s->l3.routes4 = st->routes[0];
	s->l3.routes6 = st->routes[1];
	s->l3.nexthops = st->nexthops;
	s->l3.neighbours = st->neighbours;
}

static void l3_print_head(FILE *out, const struct fwd_samples *cur)
{
	const struct fwd_l3_sample *l = &cur->l3;
	bool any = false;

	fprintf(out, "  l3 routes %u/%u nexthops %u neighbours %u resolves %llu", l->routes4, l->routes6, l->nexthops,
		l->neighbours, (unsigned long long)l->resolves);
	if (l->resolve_failed)
		fprintf(out, " (%llu refused)", (unsigned long long)l->resolve_failed);
	for (uint32_t r = 1; r < L3_NR; r++) {
		if (!l->drop[r])
			continue;
		fprintf(out, "%s %s %llu", any ? "," : "  not routed:", reason_name(r), (unsigned long long)l->drop[r]);
		any = true;
	}
	if (l->icmp_unreach || l->icmp_too_big || l->icmp_limited || l->icmp_unsent)
		fprintf(out, "  icmp sent: unreachable %llu, too_big %llu (limited %llu, unsent %llu)",
			(unsigned long long)l->icmp_unreach, (unsigned long long)l->icmp_too_big,
			(unsigned long long)l->icmp_limited, (unsigned long long)l->icmp_unsent);
}

static void l3_print_json(FILE *out, const struct fwd_samples *cur)
{
	const struct fwd_l3_sample *l = &cur->l3;

	fprintf(out, ",\"l3\":{\"routes4\":%u,\"routes6\":%u,\"nexthops\":%u,\"neighbours\":%u,\"events\":%llu,"
		"\"resyncs\":%llu,\"resolves\":%llu,\"resolve_failed\":%llu,\"not_routed\":{",
		l->routes4, l->routes6, l->nexthops, l->neighbours, (unsigned long long)l->events,
		(unsigned long long)l->resyncs, (unsigned long long)l->resolves, (unsigned long long)l->resolve_failed);
	for (uint32_t r = 1; r < L3_NR; r++)
		fprintf(out, "%s\"%s\":%llu", r > 1 ? "," : "", reason_name(r), (unsigned long long)l->drop[r]);
	fprintf(out, "},\"icmp\":{\"unreachable\":%llu,\"too_big\":%llu,\"limited\":%llu,\"unsent\":%llu}}",
		(unsigned long long)l->icmp_unreach, (unsigned long long)l->icmp_too_big,
		(unsigned long long)l->icmp_limited, (unsigned long long)l->icmp_unsent);
}

const struct fwd_mode_ops fwd_mode_l3 = {
	.burst = l3_burst,
	.setup = l3_setup,
	.teardown = l3_teardown,
	.sample = l3_sample,
	.print_head = l3_print_head,
	.print_json = l3_print_json,
	.own_rules = l3_own_rules,
	.control_fd = l3_control_fd,
	.control = l3_control,
	.offload_target = l3_offload_target,
};
