/* SPDX-License-Identifier: MIT */
/* The control socket's request parser (ctl.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

const char fwd_ctl_help[] =
	"stats                 every counter since start, as --json's totals count them\n"
	"ports [list]          the ports: interface, queue, worker, bind and XDP mode, link, counts\n"
	"ports add IF[@Q]      serves queue Q (default 0) of IF while running (--mode wire: a pair)\n"
	"ports remove IF[@Q]   stops serving it (wire: both ends of a pair); its counts stay\n"
	"workers               the workers: CPU, ports, pool, sleeps\n"
	"flows                 the flows offloaded to the kernel (--offload-after)\n"
	"mac                   the MAC table (--mode l2)\n"
	"rules [list]          the steering rules of every interface, with their hits\n"
	"rules add RULE        adds RULE to every interface's steering program (not to --config)\n"
	"rules remove ID       removes a rule added at run time\n"
	"reload                reads --config again (as SIGHUP does)\n"
	"latency LEVEL         saver, balanced or low, applied live where it can be\n"
	"restart               starts this xdp-fwd's binary again (an upgraded one) with --takeover;\n"
	"                      answers once it took over, or why not (this one then runs on)\n"
	"handover VERSION      (xdp-fwd --takeover's) hand the interfaces over and stop\n"
	"version               xdp-fwd's version\n"
	"help                  this list\n";

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

#define MAX_WORDS 64

struct words {
	const char *w[MAX_WORDS];
	size_t len[MAX_WORDS];
	uint32_t n;
};

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool word_is(const struct words *ws, uint32_t i, const char *s)
{
	return i < ws->n && ws->len[i] == strlen(s) && !memcmp(ws->w[i], s, ws->len[i]);
}

/* Commands without arguments, by name. */
static const struct {
	const char *name;
	enum fwd_ctl_cmd cmd;
} plain[] = {
	{ "help", FWD_CTL_HELP },       { "version", FWD_CTL_VERSION }, { "stats", FWD_CTL_STATS },
	{ "workers", FWD_CTL_WORKERS }, { "flows", FWD_CTL_FLOWS },
	{ "mac", FWD_CTL_MAC },         { "reload", FWD_CTL_RELOAD },
	{ "restart", FWD_CTL_RESTART },
};

/* words[from..n) joined by one space into out (it holds FWD_CTL_MAX_LINE + 1: the words come
 * from a line of at most that many bytes). */
static void join(const struct words *ws, uint32_t from, char *out)
{
	size_t o = 0;

	for (uint32_t i = from; i < ws->n; i++) {
		if (o)
			out[o++] = ' ';
		memcpy(out + o, ws->w[i], ws->len[i]);
		o += ws->len[i];
	}
	out[o] = '\0';
}

static int parse_rules(const struct words *ws, uint32_t c, struct fwd_ctl_req *req, char *err, size_t errlen)
{
	if (c + 1 == ws->n || (word_is(ws, c + 1, "list") && c + 2 == ws->n)) {
		req->cmd = FWD_CTL_RULES_LIST;
		return 0;
	}
	if (word_is(ws, c + 1, "list"))
		return fail(err, errlen, "rules list takes no argument");
	if (word_is(ws, c + 1, "add")) {
		if (c + 2 == ws->n)
			return fail(err, errlen, "rules add: give a rule, e.g. rules add udp dport 53 -> drop");
		join(ws, c + 2, req->text);
		if (umem_steer_rule__parse(req->text, &req->rule))
			return fail(err, errlen, "rules add: '%.200s' is not a steering rule (e.g. \"udp dport 53 -> drop\")",
				    req->text);
		req->cmd = FWD_CTL_RULES_ADD;
		return 0;
	}
	if (word_is(ws, c + 1, "remove")) {
		char num[16], *end;
		unsigned long v;

		if (c + 3 != ws->n)
			return fail(err, errlen, "rules remove: give one rule id (rules list shows them)");
		if (ws->len[c + 2] >= sizeof(num) || ws->w[c + 2][0] < '0' || ws->w[c + 2][0] > '9')
			return fail(err, errlen, "rules remove: '%.*s' is not a rule id", (int)(ws->len[c + 2] > 32 ? 32 : ws->len[c + 2]),
				    ws->w[c + 2]);
		memcpy(num, ws->w[c + 2], ws->len[c + 2]);
		num[ws->len[c + 2]] = '\0';
		errno = 0;
		v = strtoul(num, &end, 10);
		if (*end || errno || v > UINT32_MAX)
			return fail(err, errlen, "rules remove: '%s' is not a rule id", num);
		req->id = (uint32_t)v;
		req->cmd = FWD_CTL_RULES_REMOVE;
		return 0;
	}
	return fail(err, errlen, "rules: '%.*s' is not list, add or remove", (int)(ws->len[c + 1] > 32 ? 32 : ws->len[c + 1]),
		    ws->w[c + 1]);
}

/* IFNAME[@QUEUE] as the kernel takes a name (dev_valid_name: 1..IF_NAMESIZE-1 bytes, not "." or
 * "..", no '/' or ':'; blanks cannot be in a word), the queue decimal (default 0). */
static int parse_port(const char *w, size_t len, struct fwd_port_name *p, const char *cmd, char *err, size_t errlen)
{
	const char *at = memchr(w, '@', len);
	size_t nlen = at ? (size_t)(at - w) : len;
	int show = (int)(len > 32 ? 32 : len);

	if (!nlen || nlen >= IF_NAMESIZE || (nlen == 1 && w[0] == '.') || (nlen == 2 && !memcmp(w, "..", 2)) ||
	    memchr(w, '/', nlen) || memchr(w, ':', nlen))
		return fail(err, errlen, "ports %s: '%.*s' is not an interface name (at most %d bytes, no '/' or ':')", cmd,
			    show, w, IF_NAMESIZE - 1);
	memcpy(p->ifname, w, nlen);
	p->ifname[nlen] = '\0';
	p->queue = 0;
	if (at) {
		size_t qlen = len - nlen - 1;
		uint32_t q = 0;

		if (!qlen || qlen > 5)
			return fail(err, errlen, "ports %s: '%.*s': give the queue as a number, IFNAME@QUEUE", cmd, show, w);
		for (size_t i = 0; i < qlen; i++) {
			if (at[1 + i] < '0' || at[1 + i] > '9')
				return fail(err, errlen, "ports %s: '%.*s': give the queue as a number, IFNAME@QUEUE", cmd, show,
					    w);
			q = q * 10 + (uint32_t)(at[1 + i] - '0');
		}
		p->queue = q;
	}
	return 0;
}

/* ports [list] | ports add|remove IF[@Q] [IF[@Q]]: one port, or the two ends of a wire pair
 * (whether the mode wants one or two is the server's check: the parser knows no mode). */
static int parse_ports(const struct words *ws, uint32_t c, struct fwd_ctl_req *req, char *err, size_t errlen)
{
	bool add = word_is(ws, c + 1, "add");

	if (c + 1 == ws->n || (word_is(ws, c + 1, "list") && c + 2 == ws->n)) {
		req->cmd = FWD_CTL_PORTS;
		return 0;
	}
	if (word_is(ws, c + 1, "list"))
		return fail(err, errlen, "ports list takes no argument");
	if (!add && !word_is(ws, c + 1, "remove"))
		return fail(err, errlen, "ports: '%.*s' is not list, add or remove",
			    (int)(ws->len[c + 1] > 32 ? 32 : ws->len[c + 1]), ws->w[c + 1]);
	if (c + 2 == ws->n || ws->n - (c + 2) > 2)
		return fail(err, errlen, "ports %s: give one port IFNAME[@QUEUE], or the two ends of a wire pair",
			    add ? "add" : "remove");
	for (uint32_t i = c + 2; i < ws->n; i++) {
		int e = parse_port(ws->w[i], ws->len[i], &req->port[req->nr_port], add ? "add" : "remove", err, errlen);

		if (e)
			return e;
		req->nr_port++;
	}
	if (req->nr_port == 2 && !strcmp(req->port[0].ifname, req->port[1].ifname) &&
	    req->port[0].queue == req->port[1].queue)
		return fail(err, errlen, "ports %s: %s@%u is named twice", add ? "add" : "remove", req->port[0].ifname,
			    req->port[0].queue);
	req->cmd = add ? FWD_CTL_PORTS_ADD : FWD_CTL_PORTS_REMOVE;
	return 0;
}

int fwd_ctl_parse(const char *line, size_t len, struct fwd_ctl_req *req, char *err, size_t errlen)
{
	struct words ws = { .n = 0 };
	uint32_t c = 0;

	if (errlen)
		err[0] = '\0';
	if (len > FWD_CTL_MAX_LINE)
		return fail(err, errlen, "request longer than %u bytes", FWD_CTL_MAX_LINE);
	if (len && line[len - 1] == '\r')
		len--;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)line[i];

		if ((ch < 0x20 && ch != '\t') || ch >= 0x7f)
			return fail(err, errlen, "byte %zu of the request is 0x%02x: requests are printable ASCII", i, ch);
	}
	for (size_t i = 0; i < len;) {
		size_t start;

		while (i < len && blank(line[i]))
			i++;
		if (i == len)
			break;
		if (ws.n == MAX_WORDS)
			return fail(err, errlen, "more than %d words", MAX_WORDS);
		start = i;
		while (i < len && !blank(line[i]))
			i++;
		ws.w[ws.n] = line + start;
		ws.len[ws.n++] = i - start;
	}
	memset(req, 0, sizeof(*req));
	if (word_is(&ws, 0, "--json")) {
		req->json = true;
		c = 1;
	}
	if (c == ws.n)
		return fail(err, errlen, "empty request (try help)");
	for (size_t k = 0; k < sizeof(plain) / sizeof(plain[0]); k++) {
		if (!word_is(&ws, c, plain[k].name))
			continue;
		if (c + 1 != ws.n)
			return fail(err, errlen, "%s takes no argument", plain[k].name);
		req->cmd = plain[k].cmd;
		return 0;
	}
	if (word_is(&ws, c, "rules"))
		return parse_rules(&ws, c, req, err, errlen);
	if (word_is(&ws, c, "ports"))
		return parse_ports(&ws, c, req, err, errlen);
	if (word_is(&ws, c, "latency")) {
		if (c + 2 != ws.n)
			return fail(err, errlen, "latency: give one level (saver, balanced, low)");
		for (int l = 0; l < FWD_LATENCY_MAX; l++) {
			if (word_is(&ws, c + 1, fwd_latency_names[l])) {
				req->latency = (enum fwd_latency)l;
				req->cmd = FWD_CTL_LATENCY;
				return 0;
			}
		}
		return fail(err, errlen, "latency: '%.*s' is not a level (saver, balanced, low)",
			    (int)(ws.len[c + 1] > 32 ? 32 : ws.len[c + 1]), ws.w[c + 1]);
	}
	if (word_is(&ws, c, "handover")) {
		if (c + 2 != ws.n || ws.len[c + 1] != 1 || ws.w[c + 1][0] < '1' || ws.w[c + 1][0] > '9')
			return fail(err, errlen, "handover: give the protocol version (xdp-fwd --takeover sends it)");
		req->version = (uint32_t)(ws.w[c + 1][0] - '0');
		req->cmd = FWD_CTL_HANDOVER;
		return 0;
	}
	return fail(err, errlen, "unknown command '%.*s' (try help)", (int)(ws.len[c] > 32 ? 32 : ws.len[c]), ws.w[c]);
}

int fwd_ctl_default_path(const struct fwd_config *cfg, unsigned long long netns, char *buf, size_t len)
{
	char name[256];
	int n;

	if (cfg->config_path) {
		const char *base = strrchr(cfg->config_path, '/');
		size_t l;

		base = base ? base + 1 : cfg->config_path;
		l = strlen(base);
		if (l >= 5 && !strcmp(base + l - 5, ".conf"))
			l -= 5;
		if (!l || l >= sizeof(name))
			return -1;
		memcpy(name, base, l);
		name[l] = '\0';
	} else if (cfg->nr_specs) {
		snprintf(name, sizeof(name), "%s", cfg->specs[0].ifname);
	} else {
		return -1;
	}
	if (netns)
		n = snprintf(buf, len, FWD_CTL_DIR "/%s@net%llu" FWD_CTL_SUFFIX, name, netns);
	else
		n = snprintf(buf, len, FWD_CTL_DIR "/%s" FWD_CTL_SUFFIX, name);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}
