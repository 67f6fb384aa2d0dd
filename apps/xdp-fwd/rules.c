/* SPDX-License-Identifier: MIT */
/*
 * xdp-fwd's checks of --rule against the ports it opens. The steering program sends a frame to
 * the socket registered at an index, and an empty index passes the frame to the kernel: a rule
 * whose target no port serves accepts traffic and forwards none of it (xdp-fwd's RX stays 0,
 * its drops too). So such a target is refused, and rules that can never match, that drop
 * everything, or that hand ARP to a kernel without an address are named at start.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "rules.h"
#include "stats.h"
#include "sys.h"

#define ETH_P_IPV4 0x0800
#define ETH_P_IPV6 0x86dd

bool fwd_socket_served(const struct fwd_config *cfg, const char *ifname, uint32_t index)
{
	for (uint32_t i = 0; i < cfg->nr_ports; i++)
		if (!strcmp(cfg->ports[i].ifname, ifname) && cfg->ports[i].queue == index)
			return true;
	return false;
}

static void served_list(const struct fwd_config *cfg, const char *ifname, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (uint32_t i = 0; i < cfg->nr_ports && o < len; i++)
		if (!strcmp(cfg->ports[i].ifname, ifname))
			o += (size_t)snprintf(buf + o, len - o, "%s%u", o ? "," : "", cfg->ports[i].queue);
}

int fwd_rule_target_check(const struct fwd_config *cfg, const char *text,
			  const struct umem_steer_action *a, char *err, size_t errlen)
{
	uint32_t first, count;

	if (a->type == UMEM_STEER_A_SOCK) {
		first = a->index;
		count = 1;
	} else if (a->type == UMEM_STEER_A_GROUP) {
		first = a->index;
		count = a->count;
	} else {
		return 0;
	}
	for (uint32_t i = 0; i < cfg->nr_ports; i++) {
		const char *ifname = cfg->ports[i].ifname;

		for (uint64_t s = first; s < (uint64_t)first + count; s++) {
			char list[128];

			if (fwd_socket_served(cfg, ifname, (uint32_t)s))
				continue;
			served_list(cfg, ifname, list, sizeof(list));
			snprintf(err, errlen, "rule '%s': no port serves socket %llu on %s (sockets are "
				 "the queues of the ports: %s), so its frames would reach no one; open "
				 "that queue with -i %s@%llu or target a served socket",
				 text, (unsigned long long)s, ifname, list, ifname, (unsigned long long)s);
			return -EINVAL;
		}
	}
	return 0;
}

int fwd_rules_check(const struct fwd_config *cfg)
{
	char err[512];

	for (uint32_t r = 0; r < cfg->nr_rules; r++) {
		int e = fwd_rule_target_check(cfg, cfg->rule_text[r], &cfg->rules[r].action, err, sizeof(err));

		if (e) {
			fprintf(stderr, "xdp-fwd: %s\n", err);
			return e;
		}
	}
	return 0;
}

static bool is_port_proto(uint8_t p)
{
	return p == 6 || p == 17 || p == 132 || p == 136;
}

/* Why a rule's match can match no frame, or NULL. */
static const char *contradiction(const struct umem_steer_match *m)
{
	bool eth = m->fields & UMEM_STEER_M_ETHERTYPE, l4 = m->fields & UMEM_STEER_M_L4PROTO;
	bool ports = m->fields & (UMEM_STEER_M_SPORT | UMEM_STEER_M_DPORT);

	if (eth && (l4 || ports) && m->ethertype != ETH_P_IPV4 && m->ethertype != ETH_P_IPV6)
		return "it matches an L4 field in frames that are neither IPv4 nor IPv6";
	if (eth && l4 && m->ethertype == ETH_P_IPV4 && m->l4proto == 58)
		return "ICMPv6 is never carried in IPv4";
	if (eth && l4 && m->ethertype == ETH_P_IPV6 && m->l4proto == 1)
		return "ICMP (v4) is never carried in IPv6";
	if (l4 && ports && !is_port_proto(m->l4proto))
		return "that protocol has no ports (only tcp, udp, sctp and udplite do)";
	return NULL;
}

/* Prefix a holds every address prefix b holds. */
static bool prefix_covers(const struct umem_steer_prefix *a, const struct umem_steer_prefix *b)
{
	if (a->family != b->family || a->len > b->len)
		return false;
	for (uint32_t i = 0; i < sizeof(a->addr) && i * 8 < a->len; i++) {
		uint32_t bits = a->len - i * 8;
		uint8_t mask = bits >= 8 ? 0xff : (uint8_t)(0xff00 >> bits);

		if ((a->addr[i] ^ b->addr[i]) & mask)
			return false;
	}
	return true;
}

/* a matches every frame b matches (each field a tests, b tests for the same value, or a
 * prefix holding b's). */
static bool covers(const struct umem_steer_match *a, const struct umem_steer_match *b)
{
	uint32_t f = a->fields;

	if ((f & b->fields) != f)
		return false;
	return (!(f & UMEM_STEER_M_QUEUE) || a->queue == b->queue) &&
	       (!(f & UMEM_STEER_M_ETHERTYPE) || a->ethertype == b->ethertype) &&
	       (!(f & UMEM_STEER_M_VLAN) || a->vlan == b->vlan) &&
	       (!(f & UMEM_STEER_M_L4PROTO) || a->l4proto == b->l4proto) &&
	       (!(f & UMEM_STEER_M_SPORT) || a->sport == b->sport) &&
	       (!(f & UMEM_STEER_M_DPORT) || a->dport == b->dport) &&
	       (!(f & UMEM_STEER_M_DMAC) || !memcmp(a->dmac, b->dmac, sizeof(a->dmac))) &&
	       (!(f & UMEM_STEER_M_SRC) || prefix_covers(&a->src, &b->src)) &&
	       (!(f & UMEM_STEER_M_DST) || prefix_covers(&a->dst, &b->dst));
}

/* The trie a rule lives in (0 src, 1 dst), or -1 for the table; and the length it is keyed by. */
static int rule_trie(const struct umem_steer_match *m, int *len)
{
	if (m->fields & UMEM_STEER_M_SRC)
		return *len = m->src.len, 0;
	if (m->fields & UMEM_STEER_M_DST)
		return *len = m->dst.len, 1;
	return *len = -1, -1;
}

/* Rule q is tried before rule r, in the program's order (STEERING.md): in one trie the longer
 * prefix first; else by priority, at equal priority a prefix rule first, the longer prefix, src
 * before dst; then the order given. */
static bool runs_before(const struct fwd_config *cfg, uint32_t q, uint32_t r)
{
	const struct umem_steer_rule *a = &cfg->rules[q], *b = &cfg->rules[r];
	int la, lb, ta = rule_trie(&a->match, &la), tb = rule_trie(&b->match, &lb);

	if (ta >= 0 && ta == tb && la != lb)
		return la > lb;
	if (a->prio != b->prio)
		return a->prio < b->prio;
	if (la != lb)
		return la > lb;
	if (ta != tb)
		return ta < tb;
	return q < r;
}

uint32_t fwd_rules_warn(const struct fwd_config *cfg, FILE *out)
{
	uint32_t warned = 0;

	for (uint32_t r = 0; r < cfg->nr_rules; r++) {
		const struct umem_steer_rule *rule = &cfg->rules[r];
		const char *why = contradiction(&rule->match);

		for (uint32_t q = 0; !why && q < cfg->nr_rules; q++)
			if (q != r && runs_before(cfg, q, r) && covers(&cfg->rules[q].match, &rule->match))
				why = "an earlier rule takes every frame it matches";
		if (why) {
			fprintf(out, "xdp-fwd: warning: rule '%s' can never match: %s\n", cfg->rule_text[r], why);
			warned++;
		}
		if (!rule->match.fields && rule->action.type == UMEM_STEER_A_DROP) {
			fprintf(out, "xdp-fwd: warning: rule '%s' drops every frame that reaches it (ARP "
				"included); the rules after it never run\n", cfg->rule_text[r]);
			warned++;
		}
	}
	return warned + (uint32_t)fwd_warn_rules(cfg, out);
}

#define ETH_P_ARP_ 0x0806

static bool broadcast_mac(const uint8_t *m)
{
	for (int i = 0; i < 6; i++)
		if (m[i] != 0xff)
			return false;
	return true;
}

/* Whether some ARP request (ethertype 0x0806, broadcast destination) can match r. */
static bool may_match_arp(const struct umem_steer_match *m)
{
	if (m->fields & (UMEM_STEER_M_L4PROTO | UMEM_STEER_M_SPORT | UMEM_STEER_M_DPORT | UMEM_STEER_M_SRC |
			 UMEM_STEER_M_DST))
		return false;
	if ((m->fields & UMEM_STEER_M_ETHERTYPE) && m->ethertype != ETH_P_ARP_)
		return false;
	return !(m->fields & UMEM_STEER_M_DMAC) || broadcast_mac(m->dmac);
}

int fwd_rule_passing_arp(const struct fwd_config *cfg)
{
	/* In the program's order: by priority, equal priorities as given. The first rule that
	 * takes every ARP request decides; narrower ones (a queue, a VLAN) take some before it. */
	bool done[FWD_MAX_RULES] = { false };

	for (uint32_t n = 0; n < cfg->nr_rules; n++) {
		uint32_t best = UINT32_MAX;

		for (uint32_t i = 0; i < cfg->nr_rules; i++)
			if (!done[i] && (best == UINT32_MAX || cfg->rules[i].prio < cfg->rules[best].prio))
				best = i;
		done[best] = true;
		const struct umem_steer_rule *r = &cfg->rules[best];

		if (!may_match_arp(&r->match))
			continue;
		if (r->action.type == UMEM_STEER_A_PASS)
			return (int)best;
		if (!(r->match.fields & (UMEM_STEER_M_QUEUE | UMEM_STEER_M_VLAN)))
			return -1;
	}
	return -1;
}

static int if_has_ipv4(const char *ifname)
{
	struct ifaddrs *list, *a;
	int found = 0;

	if (getifaddrs(&list))
		return -1;
	for (a = list; a && !found; a = a->ifa_next)
		found = a->ifa_addr && a->ifa_addr->sa_family == AF_INET && !strcmp(a->ifa_name, ifname);
	freeifaddrs(list);
	return found;
}

int (*fwd_if_has_ipv4)(const char *ifname) = if_has_ipv4;

struct view_fill {
	struct fwd_rule_view *v;
	const struct fwd_config *cfg;
	const uint32_t *cfg_id;
};

/* One rule into the view, named by its -r text when it is one; prefix rules past the ones the
 * stats follow are left out. */
static int view_add(const struct umem_steer_rule *rule, const struct umem_steer_counter *count, void *arg)
{
	struct view_fill *f = arg;
	struct fwd_rule_view *v = f->v;
	uint32_t k, c;

	(void)count;
	if (fwd_hit_slot(rule->id) < 0 || v->nr >= sizeof(v->id) / sizeof(v->id[0]))
		return 0;
	/* A walk that started its trie again (a prefix removed under it) meets rules it has. */
	for (k = 0; k < v->nr; k++)
		if (v->id[k] == rule->id)
			return 0;
	k = v->nr++;
	v->id[k] = rule->id;
	v->rule[k] = *rule;
	v->text[k] = v->buf[k];
	for (c = 0; c < f->cfg->nr_rules && f->cfg_id[c] != rule->id; c++)
		;
	if (c < f->cfg->nr_rules)
		v->text[k] = f->cfg->rule_text[c];
	else
		umem_steer_rule__format(rule, v->buf[k], sizeof(v->buf[k]));
	return 0;
}

/* How long one call of fwd_prefix_scan walks, and how many prefixes between looks at the clock. */
#define FWD_SCAN_NS 5000000ull
#define FWD_SCAN_STEP 64

struct scan_filter {
	const struct fwd_prefix_scan *sc;
	uint32_t below;
	umem_steer_rule_fn fn;
	void *arg;
};

static int scan_one(const struct umem_steer_rule *rule, const struct umem_steer_counter *count, void *arg)
{
	const struct scan_filter *f = arg;
	uint32_t n = rule->id - UMEM_STEER_PREFIX_ID_BASE;

	return n >= f->sc->done && n < f->sc->upto && n < f->below ? f->fn(rule, count, f->arg) : 0;
}

bool fwd_prefix_scan(struct fwd_prefix_scan *sc, struct umem_steer *s, uint32_t prefix_ids, uint32_t below,
		     umem_steer_rule_fn fn, void *arg)
{
	struct scan_filter f = { sc, below, fn, arg };
	uint64_t t0 = fwd_now_ns();

	if (prefix_ids < sc->done) /* the ids came round (2^32 additions) */
		sc->done = 0;
	if (!sc->walking && sc->done < below && prefix_ids != sc->done)
		*sc = (struct fwd_prefix_scan){ .walking = true, .done = sc->done, .upto = prefix_ids };
	while (sc->walking && fwd_now_ns() - t0 < FWD_SCAN_NS) {
		if (umem_steer__prefix_rules_step(s, &sc->cur, FWD_SCAN_STEP, scan_one, &f) < 0)
			break; /* tried again at the next call */
		if (sc->cur.dir >= 2) {
			sc->walking = false;
			sc->done = sc->upto;
		}
	}
	return sc->walking;
}

void fwd_rule_view_refresh(struct fwd_rule_view *v, struct umem_steer *s, const struct fwd_config *cfg,
			   const uint32_t *cfg_id)
{
	struct umem_steer_info info = { .sz = sizeof(info) };
	struct umem_steer_rule rules[UMEM_STEER_MAX_RULES], kept[UMEM_STEER_MAX_RULES];
	struct umem_steer_counter c;
	uint32_t nr_kept = 0;
	int n;

	if (!s) {
		v->of = NULL;
		v->nr = 0;
		return;
	}
	/* The generation is in the table itself: one lookup tells whether the rules changed. */
	if (umem_steer__info(s, &info) || (v->of == s && v->gen == info.generation && !v->scan.walking))
		return;
	if (v->of != s) {
		v->nr = 0;
		v->scan = (struct fwd_prefix_scan){ 0 };
	}
	n = umem_steer__rules(s, rules, UMEM_STEER_MAX_RULES);
	if (n < 0)
		return;
	/* The prefix rules followed that are still there (a lookup of each one's prefix). */
	for (uint32_t r = 0; r < v->nr; r++)
		if (v->id[r] >= UMEM_STEER_PREFIX_ID_BASE && !umem_steer__rule_counter_of(s, &v->rule[r], &c))
			kept[nr_kept++] = v->rule[r];
	v->nr = 0;
	struct view_fill f = { v, cfg, cfg_id };

	for (int r = 0; r < n && r < UMEM_STEER_MAX_RULES; r++)
		view_add(&rules[r], NULL, &f);
	for (uint32_t r = 0; r < nr_kept; r++)
		view_add(&kept[r], NULL, &f);
	/* New ones: only among the first UMEM_STEER_MAX_RULES ids (fwd_hit_slot). */
	fwd_prefix_scan(&v->scan, s, info.prefix_ids, UMEM_STEER_MAX_RULES, view_add, &f);
	v->of = s;
	v->gen = info.generation;
}

int fwd_warn_rules(const struct fwd_config *cfg, FILE *out)
{
	int r = fwd_rule_passing_arp(cfg), warned = 0;

	if (r < 0)
		return 0;
	for (uint32_t i = 0; i < cfg->nr_ports; i++) {
		const char *ifname = cfg->ports[i].ifname;
		bool seen = false;

		for (uint32_t j = 0; j < i; j++)
			seen |= !strcmp(cfg->ports[j].ifname, ifname);
		if (seen || fwd_if_has_ipv4(ifname) != 0)
			continue;
		fprintf(out, "xdp-fwd: warning: rule '%s' hands ARP arriving on %s to the kernel, which "
			     "has no IPv4 address on %s to answer with: the hosts on either side will not "
			     "resolve each other (drop the rule to forward ARP, or give %s an address)\n",
			cfg->rule_text[r], ifname, ifname, ifname);
		warned++;
	}
	return warned;
}

