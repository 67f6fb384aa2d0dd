/* SPDX-License-Identifier: MIT */
/* Steering rule text: one parser and one formatter, shared by the library's users and tools. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "steer_internal.h"

#define MAX_TOKENS 32

struct tokens {
	char buf[256];
	char *v[MAX_TOKENS];
	int n;
	int i;
	const char *text;
};

static int tokenize(struct tokens *t, const char *text)
{
	char *save = NULL, *tok;

	t->text = text;
	t->n = t->i = 0;
	if (!text || strlen(text) >= sizeof(t->buf)) {
		pr_warn("steer rule: %s\n", text ? "text longer than 255 characters" : "no text");
		return -EINVAL;
	}
	strcpy(t->buf, text);
	for (tok = strtok_r(t->buf, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
		if (t->n == MAX_TOKENS) {
			pr_warn("steer rule '%s': more than %d words\n", text, MAX_TOKENS);
			return -EINVAL;
		}
		t->v[t->n++] = tok;
	}
	return 0;
}

static const char *next(struct tokens *t)
{
	return t->i < t->n ? t->v[t->i++] : NULL;
}

/* The value after keyword `what`, as an unsigned number <= max. */
static int number(struct tokens *t, const char *what, unsigned long max, unsigned long *out)
{
	const char *tok = next(t);
	char *end;

	if (!tok) {
		pr_warn("steer rule '%s': '%s' needs a value\n", t->text, what);
		return -EINVAL;
	}
	errno = 0;
	*out = strtoul(tok, &end, 0);
	if (errno || end == tok || *end || tok[0] == '-' || *out > max) {
		pr_warn("steer rule '%s': bad value '%s' for '%s' (0..%lu)\n", t->text, tok, what, max);
		return -EINVAL;
	}
	return 0;
}

static const struct {
	const char *name;
	uint8_t proto;
} l4_names[] = {
	{ "tcp", 6 }, { "udp", 17 }, { "sctp", 132 }, { "udplite", 136 }, { "icmp", 1 },
	{ "icmp6", 58 }, { "icmpv6", 58 },
};

static const struct {
	const char *name;
	uint16_t type;
} eth_names[] = {
	{ "arp", 0x0806 }, { "ipv4", 0x0800 }, { "ip", 0x0800 }, { "ipv6", 0x86dd }, { "ip6", 0x86dd },
};

static int eth_by_name(const char *s)
{
	for (size_t i = 0; i < sizeof(eth_names) / sizeof(eth_names[0]); i++)
		if (!strcmp(s, eth_names[i].name))
			return eth_names[i].type;
	return -1;
}

static int l4_by_name(const char *s)
{
	for (size_t i = 0; i < sizeof(l4_names) / sizeof(l4_names[0]); i++)
		if (!strcmp(s, l4_names[i].name))
			return l4_names[i].proto;
	return -1;
}

/* The value after keyword `what`: a name by_name knows, or a number <= max. */
static int name_or_number(struct tokens *t, const char *what, int (*by_name)(const char *),
			  unsigned long max, unsigned long *out)
{
	int k = t->i < t->n ? by_name(t->v[t->i]) : -1;

	if (k < 0)
		return number(t, what, max, out);
	t->i++;
	*out = k;
	return 0;
}

static int parse_mac(struct tokens *t, uint8_t *mac)
{
	const char *tok = next(t);
	unsigned int b[6];
	char tail;

	if (!tok || sscanf(tok, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) != 6) {
		pr_warn("steer rule '%s': bad MAC '%s' for 'dmac' (want XX:XX:XX:XX:XX:XX)\n", t->text,
			tok ? tok : "");
		return -EINVAL;
	}
	for (int i = 0; i < 6; i++)
		mac[i] = b[i];
	return 0;
}

static uint32_t prefix_max(const struct umem_steer_prefix *p)
{
	return p->family == 4 ? 32 : 128;
}

void umem__steer_prefix_format(const struct umem_steer_prefix *p, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	inet_ntop(p->family == 4 ? AF_INET : AF_INET6, p->addr, a, sizeof(a));
	if (p->family != 4 && p->family != 6)
		snprintf(buf, len, "family%u/%u", p->family, p->len);
	else if (p->len == prefix_max(p))
		snprintf(buf, len, "%s", a);
	else
		snprintf(buf, len, "%s/%u", a, p->len);
}

/* The prefix with its bits past len cleared. */
static struct umem_steer_prefix prefix_network(const struct umem_steer_prefix *p)
{
	struct umem_steer_prefix n = *p;

	for (uint32_t i = 0; i < sizeof(n.addr); i++) {
		uint32_t keep = p->len > i * 8 ? p->len - i * 8 : 0;

		n.addr[i] &= keep >= 8 ? 0xff : (uint8_t)(0xff00 >> keep);
	}
	return n;
}

static int prefix_problem(const char *what, const struct umem_steer_prefix *p, char *why, size_t len)
{
	struct umem_steer_prefix net;
	char a[64], b[64];

	if (p->family != 4 && p->family != 6)
		return snprintf(why, len, "%s: address family %u is not 4 or 6", what, p->family), 1;
	if (p->len > prefix_max(p))
		return snprintf(why, len, "%s: prefix length %u is beyond %u for IPv%u", what, p->len,
				prefix_max(p), p->family), 1;
	if (p->family == 4 && memcmp(p->addr + 4, (uint8_t[12]){ 0 }, 12))
		return snprintf(why, len, "%s: IPv4 address with bytes set past the first 4", what), 1;
	net = prefix_network(p);
	if (memcmp(net.addr, p->addr, sizeof(net.addr))) {
		umem__steer_prefix_format(p, a, sizeof(a));
		umem__steer_prefix_format(&net, b, sizeof(b));
		return snprintf(why, len, "%s %s has host bits set (the prefix is %s)", what, a, b), 1;
	}
	return 0;
}

int umem__steer_match_problem(const struct umem_steer_match *m, char *why, size_t len)
{
	const struct umem_steer_prefix *fam = NULL;

	if ((m->fields & UMEM_STEER_M_SRC) && prefix_problem("src", &m->src, why, len))
		return 1;
	if ((m->fields & UMEM_STEER_M_DST) && prefix_problem("dst", &m->dst, why, len))
		return 1;
	if (m->fields & UMEM_STEER_M_SRC)
		fam = &m->src;
	if (m->fields & UMEM_STEER_M_DST) {
		if (fam && fam->family != m->dst.family)
			return snprintf(why, len, "src is IPv%u and dst IPv%u: no frame has both", fam->family,
					m->dst.family), 1;
		fam = &m->dst;
	}
	if (fam && (m->fields & UMEM_STEER_M_ETHERTYPE) &&
	    m->ethertype != (fam->family == 4 ? 0x0800 : 0x86dd))
		return snprintf(why, len, "an IPv%u prefix with ethertype 0x%04x: no frame has both", fam->family,
				m->ethertype), 1;
	return 0;
}

/* "A.B.C.D[/N]" or "X:X::X[/N]"; without /N the full length (one host). */
static int parse_prefix(struct tokens *t, const char *what, struct umem_steer_prefix *p)
{
	const char *tok = next(t), *slash;
	char addr[INET6_ADDRSTRLEN + 1];
	unsigned long len;
	char *end;

	if (!tok) {
		pr_warn("steer rule '%s': '%s' needs an address or prefix (10.0.0.0/8, 2001:db8::/32)\n",
			t->text, what);
		return -EINVAL;
	}
	slash = strchr(tok, '/');
	snprintf(addr, sizeof(addr), "%.*s", slash ? (int)(slash - tok) : (int)strlen(tok), tok);
	memset(p, 0, sizeof(*p));
	if (inet_pton(AF_INET, addr, p->addr) == 1) {
		p->family = 4;
	} else if (inet_pton(AF_INET6, addr, p->addr) == 1) {
		p->family = 6;
	} else {
		pr_warn("steer rule '%s': bad address '%s' for '%s' (want IPv4 or IPv6, as 10.0.0.0/8 or "
			"2001:db8::/32)\n", t->text, addr, what);
		return -EINVAL;
	}
	p->len = prefix_max(p);
	if (slash) {
		errno = 0;
		len = strtoul(slash + 1, &end, 10);
		if (errno || end == slash + 1 || *end || !isdigit((unsigned char)slash[1]) || len > prefix_max(p)) {
			pr_warn("steer rule '%s': bad prefix length '%s' for '%s' (0..%u for IPv%u)\n", t->text,
				slash + 1, what, prefix_max(p), p->family);
			return -EINVAL;
		}
		p->len = len;
	}
	return 0;
}

/* Sets one match field, refusing a field given twice (a rule "udp tcp" would match nothing). */
static int set_field(struct tokens *t, struct umem_steer_match *m, uint32_t field, const char *tok)
{
	if (m->fields & field) {
		pr_warn("steer rule '%s': '%s' repeats a field already set\n", t->text, tok);
		return -EINVAL;
	}
	m->fields |= field;
	return 0;
}

static int parse_match(struct tokens *t, const char *tok, struct umem_steer_match *m)
{
	unsigned long v;
	int k, err;

	if (!strcmp(tok, "any"))
		return 0;
	if ((k = eth_by_name(tok)) >= 0) {
		m->ethertype = k;
		return set_field(t, m, UMEM_STEER_M_ETHERTYPE, tok);
	}
	if ((k = l4_by_name(tok)) >= 0) {
		m->l4proto = k;
		return set_field(t, m, UMEM_STEER_M_L4PROTO, tok);
	}
	if (!strcmp(tok, "ethertype")) {
		if ((err = name_or_number(t, tok, eth_by_name, 0xffff, &v)))
			return err;
		m->ethertype = v;
		return set_field(t, m, UMEM_STEER_M_ETHERTYPE, tok);
	}
	if (!strcmp(tok, "proto")) {
		if ((err = name_or_number(t, tok, l4_by_name, 0xff, &v)))
			return err;
		m->l4proto = v;
		return set_field(t, m, UMEM_STEER_M_L4PROTO, tok);
	}
	if (!strcmp(tok, "queue")) {
		if ((err = number(t, tok, UINT32_MAX, &v)))
			return err;
		m->queue = v;
		return set_field(t, m, UMEM_STEER_M_QUEUE, tok);
	}
	if (!strcmp(tok, "vlan")) {
		if ((err = number(t, tok, 4095, &v)))
			return err;
		m->vlan = v;
		return set_field(t, m, UMEM_STEER_M_VLAN, tok);
	}
	if (!strcmp(tok, "sport") || !strcmp(tok, "dport")) {
		if ((err = number(t, tok, 0xffff, &v)))
			return err;
		if (tok[0] == 's')
			m->sport = v;
		else
			m->dport = v;
		return set_field(t, m, tok[0] == 's' ? UMEM_STEER_M_SPORT : UMEM_STEER_M_DPORT, tok);
	}
	if (!strcmp(tok, "dmac")) {
		if ((err = parse_mac(t, m->dmac)))
			return err;
		return set_field(t, m, UMEM_STEER_M_DMAC, tok);
	}
	if (!strcmp(tok, "src") || !strcmp(tok, "dst")) {
		if ((err = parse_prefix(t, tok, tok[0] == 's' ? &m->src : &m->dst)))
			return err;
		return set_field(t, m, tok[0] == 's' ? UMEM_STEER_M_SRC : UMEM_STEER_M_DST, tok);
	}
	pr_warn("steer rule '%s': unknown field '%s' (fields: queue, vlan, ethertype, arp, ipv4, ipv6, "
		"tcp, udp, sctp, udplite, icmp, icmp6, proto, sport, dport, dmac, src, dst, any; "
		"'prio N' first)\n", t->text, tok);
	return -EINVAL;
}

static int parse_action_tokens(struct tokens *t, struct umem_steer_action *a)
{
	const char *tok = next(t);
	unsigned long v;
	int err;

	memset(a, 0, sizeof(*a));
	if (!tok) {
		pr_warn("steer rule '%s': no action after '->'\n", t->text);
		return -EINVAL;
	}
	if (!strcmp(tok, "pass")) {
		a->type = UMEM_STEER_A_PASS;
	} else if (!strcmp(tok, "drop")) {
		a->type = UMEM_STEER_A_DROP;
	} else if (!strcmp(tok, "queue")) {
		a->type = UMEM_STEER_A_QUEUE;
	} else if (!strcmp(tok, "sock")) {
		if ((err = number(t, tok, UINT32_MAX, &v)))
			return err;
		a->type = UMEM_STEER_A_SOCK;
		a->index = v;
	} else if (!strcmp(tok, "group")) {
		const char *r = next(t);
		unsigned long first, last;
		char *end;

		if (!r || (first = strtoul(r, &end, 0), *end != '-') ||
		    (last = strtoul(end + 1, &end, 0), *end) || !isdigit((unsigned char)r[0]) ||
		    last < first || last - first >= 0xffff || last > UINT32_MAX) {
			pr_warn("steer rule '%s': bad range '%s' for 'group' (want FIRST-LAST, FIRST <= LAST)\n",
				t->text, r ? r : "");
			return -EINVAL;
		}
		a->type = UMEM_STEER_A_GROUP;
		a->index = first;
		a->count = last - first + 1;
	} else {
		pr_warn("steer rule '%s': unknown action '%s' (sock, group, queue, pass, drop)\n", t->text, tok);
		return -EINVAL;
	}
	if ((tok = next(t))) {
		pr_warn("steer rule '%s': unexpected '%s' after the action\n", t->text, tok);
		return -EINVAL;
	}
	return 0;
}

int umem_steer_rule__parse(const char *text, struct umem_steer_rule *out)
{
	struct umem_steer_rule r = {};
	struct tokens t;
	const char *tok;
	char why[160];
	unsigned long v;
	int err;

	if (!out)
		return -EINVAL;
	if ((err = tokenize(&t, text)))
		return err;
	if (t.n && !strcmp(t.v[0], "prio")) {
		t.i = 1;
		if ((err = number(&t, "prio", 0xffff, &v)))
			return err;
		r.prio = v;
	}
	while ((tok = next(&t)) && strcmp(tok, "->")) {
		if ((err = parse_match(&t, tok, &r.match)))
			return err;
	}
	if (!tok) {
		pr_warn("steer rule '%s': no '-> action'\n", text);
		return -EINVAL;
	}
	if (umem__steer_match_problem(&r.match, why, sizeof(why))) {
		pr_warn("steer rule '%s': %s\n", text, why);
		return -EINVAL;
	}
	if ((err = parse_action_tokens(&t, &r.action)))
		return err;
	*out = r;
	return 0;
}

int umem_steer_action__parse(const char *text, struct umem_steer_action *out)
{
	struct umem_steer_action a;
	struct tokens t;
	int err;

	if (!out)
		return -EINVAL;
	if ((err = tokenize(&t, text)) || (err = parse_action_tokens(&t, &a)))
		return err;
	*out = a;
	return 0;
}

/* snprintf that appends, keeping the would-be length like snprintf does. */
struct out {
	char *buf;
	size_t len;
	size_t n;
};

static void __attribute__((format(printf, 2, 3))) outf(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(o->n < o->len ? o->buf + o->n : NULL, o->n < o->len ? o->len - o->n : 0, fmt, ap);
	va_end(ap);
	if (w > 0)
		o->n += w;
}

static void format_action(struct out *o, const struct umem_steer_action *a)
{
	switch (a->type) {
	case UMEM_STEER_A_SOCK: outf(o, "sock %u", a->index); break;
	case UMEM_STEER_A_GROUP: outf(o, "group %u-%u", a->index, a->index + a->count - 1); break;
	case UMEM_STEER_A_QUEUE: outf(o, "queue"); break;
	case UMEM_STEER_A_PASS: outf(o, "pass"); break;
	case UMEM_STEER_A_DROP: outf(o, "drop"); break;
	default: outf(o, "invalid(%u)", a->type); break;
	}
}

int umem_steer_action__format(const struct umem_steer_action *a, char *buf, size_t len)
{
	struct out o = { buf, len, 0 };

	if (!a)
		return -EINVAL;
	if (len)
		buf[0] = 0;
	format_action(&o, a);
	return o.n;
}

int umem_steer_rule__format(const struct umem_steer_rule *r, char *buf, size_t len)
{
	const struct umem_steer_match *m;
	struct out o = { buf, len, 0 };
	const char *name = NULL;

	if (!r)
		return -EINVAL;
	m = &r->match;
	if (len)
		buf[0] = 0;
	if (r->prio)
		outf(&o, "prio %u ", r->prio);
	if (m->fields & UMEM_STEER_M_QUEUE)
		outf(&o, "queue %u ", m->queue);
	if (m->fields & UMEM_STEER_M_VLAN)
		outf(&o, "vlan %u ", m->vlan);
	if (m->fields & UMEM_STEER_M_ETHERTYPE) {
		for (size_t i = 0; i < sizeof(eth_names) / sizeof(eth_names[0]) && !name; i++)
			if (eth_names[i].type == m->ethertype)
				name = eth_names[i].name;
		if (name)
			outf(&o, "%s ", name);
		else
			outf(&o, "ethertype 0x%04x ", m->ethertype);
	}
	if (m->fields & UMEM_STEER_M_L4PROTO) {
		name = NULL;
		for (size_t i = 0; i < sizeof(l4_names) / sizeof(l4_names[0]) && !name; i++)
			if (l4_names[i].proto == m->l4proto)
				name = l4_names[i].name;
		if (name)
			outf(&o, "%s ", name);
		else
			outf(&o, "proto %u ", m->l4proto);
	}
	if (m->fields & UMEM_STEER_M_SPORT)
		outf(&o, "sport %u ", m->sport);
	if (m->fields & UMEM_STEER_M_DPORT)
		outf(&o, "dport %u ", m->dport);
	if (m->fields & UMEM_STEER_M_DMAC)
		outf(&o, "dmac %02x:%02x:%02x:%02x:%02x:%02x ", m->dmac[0], m->dmac[1], m->dmac[2],
		     m->dmac[3], m->dmac[4], m->dmac[5]);
	for (int d = 0; d < 2; d++) {
		char pf[64];

		if (!(m->fields & (d ? UMEM_STEER_M_DST : UMEM_STEER_M_SRC)))
			continue;
		umem__steer_prefix_format(d ? &m->dst : &m->src, pf, sizeof(pf));
		outf(&o, "%s %s ", d ? "dst" : "src", pf);
	}
	if (!(m->fields & UMEM_STEER_M_ALL))
		outf(&o, "any ");
	outf(&o, "-> ");
	format_action(&o, &r->action);
	return o.n;
}

static const char *const stat_names[UMEM_STEER_S_NR] = {
	[UMEM_STEER_S_SOCK] = "sock",
	[UMEM_STEER_S_GROUP] = "group",
	[UMEM_STEER_S_QUEUE] = "queue",
	[UMEM_STEER_S_PASS] = "pass",
	[UMEM_STEER_S_DROP] = "drop",
	[UMEM_STEER_S_NO_SOCKET] = "no_socket",
	[UMEM_STEER_S_HOST_CONTROL] = "host_control",
	[UMEM_STEER_S_MALFORMED] = "malformed",
};

const char *umem_steer_stat__name(uint32_t stat)
{
	return stat < UMEM_STEER_S_NR ? stat_names[stat] : NULL;
}
