/* SPDX-License-Identifier: MIT */
/* xdp-fwd option parsing: one table (cli.h) drives getopt_long and --help; the checks across
 * options and the port expansion are here. */
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <umem/area.h>
#include <umem/idle.h>
#include <umem/pool.h>
#include <umem/port.h>
#include <umem/steer_abi.h>

#include "capture.h"
#include "cli.h"
#include "ctl.h"
#include "fwd.h"
#include "l2.h"
#include "mtu.h"

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

int (*fwd_queue_count)(const char *ifname) = umem_netdev__queue_count;

#define FWD_MAX_QUEUE 1023u
#define FWD_MAX_CPU 4095 /* the largest CPU number --cpus takes */

/* -i IFNAME[@QUEUE | @FIRST-LAST | @all]: one interface spec, expanded into ports by
 * expand_ports() once every option is known (wire mode pairs specs). */
static int set_interface(void *v, const char *arg, char *err, size_t errlen)
{
	struct fwd_config *cfg = v;
	const char *at = strchr(arg, '@');
	size_t len = at ? (size_t)(at - arg) : strlen(arg);
	struct fwd_if_spec *s;

	if (cfg->cmdline && !cfg->cmd_interface) { /* the command line's -i replace the file's */
		cfg->cmd_interface = true;
		cfg->nr_specs = 0;
	}
	if (cfg->nr_specs == FWD_MAX_PORTS)
		return cli_fail(err, errlen, "-i: at most %d ports", FWD_MAX_PORTS);
	if (!len)
		return cli_fail(err, errlen, "-i '%s': missing interface name (IFNAME[@QUEUE])", arg);
	if (len >= IF_NAMESIZE)
		return cli_fail(err, errlen, "-i '%s': interface names have at most %d characters", arg,
			    IF_NAMESIZE - 1);
	s = &cfg->specs[cfg->nr_specs];
	*s = (struct fwd_if_spec){ 0 };
	memcpy(s->ifname, arg, len);
	s->queue_given = at != NULL;
	if (at && !strcmp(at + 1, "all")) {
		s->all = true;
	} else if (at) {
		const char *q = at + 1, *dash = strchr(q, '-');
		size_t flen = dash ? (size_t)(dash - q) : strlen(q);
		char first[16];
		bool ok = flen < sizeof(first);

		if (ok) {
			memcpy(first, q, flen);
			first[flen] = '\0';
			ok = !cli_parse_u32("interface", first, 0, FWD_MAX_QUEUE, &s->first, err, errlen) &&
			     (!dash || !cli_parse_u32("interface", dash + 1, 0, FWD_MAX_QUEUE, &s->last, err, errlen));
		}
		if (!ok)
			return cli_fail(err, errlen, "-i '%s': after '@' give a queue 0..%u, a range like 0-3, or 'all'",
				    arg, FWD_MAX_QUEUE);
		if (!dash)
			s->last = s->first;
		if (s->last < s->first)
			return cli_fail(err, errlen, "-i '%s': the queue range %u-%u is backwards", arg,
				    s->first, s->last);
	}
	cfg->nr_specs++;
	return 0;
}

static uint32_t spec_queues(const struct fwd_if_spec *s)
{
	return s->last - s->first + 1;
}

static int add_port(struct fwd_config *cfg, uint32_t spec, uint32_t k, uint32_t group, char *err,
		    size_t errlen)
{
	const struct fwd_if_spec *s = &cfg->specs[spec];
	struct fwd_port_spec *p;

	if (cfg->nr_ports == FWD_MAX_PORTS)
		return cli_fail(err, errlen, "-i '%s@%u-%u' and the others make more than %d ports", s->ifname,
			    s->first, s->last, FWD_MAX_PORTS);
	p = &cfg->ports[cfg->nr_ports++];
	*p = (struct fwd_port_spec){ .queue = s->first + k, .spec = spec, .group = group };
	memcpy(p->ifname, s->ifname, sizeof(p->ifname));
	return 0;
}

/* Specs into ports. Wire mode pairs spec 2j with 2j + 1 queue by queue (port order a@q, b@q,
 * a@q+1, b@q+1, ...), so both ends of each wire are neighbours; the other modes list each
 * spec's queues in turn. Groups (the unit dealt to workers) are single ports unless a spec has
 * several queues: then a wire pair of queues, or queue q of every interface. */
static int expand_ports(struct fwd_config *cfg, char *err, size_t errlen)
{
	bool multi = false;

	for (uint32_t i = 0; i < cfg->nr_specs; i++) {
		struct fwd_if_spec *s = &cfg->specs[i];

		if (s->all) {
			int n = fwd_queue_count(s->ifname);

			if (n < 1)
				return cli_fail(err, errlen, "-i '%s@all': cannot read the queue count of %s: %s",
					    s->ifname, s->ifname, strerror(n < 0 ? -n : EINVAL));
			s->first = 0;
			s->last = (uint32_t)n - 1;
			s->all = false;
			s->from_all = true;
		}
		multi |= spec_queues(s) > 1;
	}
	cfg->queue_ranges = multi;
	cfg->nr_ports = 0;
	cfg->nr_groups = 0;
	if (cfg->mode == FWD_MODE_WIRE) {
		if (cfg->nr_specs % 2)
			return cli_fail(err, errlen, "--mode wire pairs the -i options (1st<->2nd, 3rd<->4th): %u is an odd number",
				    cfg->nr_specs);
		for (uint32_t j = 0; j < cfg->nr_specs; j += 2) {
			const struct fwd_if_spec *a = &cfg->specs[j], *b = &cfg->specs[j + 1];

			if (spec_queues(a) != spec_queues(b))
				return cli_fail(err, errlen, "--mode wire pairs queue by queue: %s has %u queue%s (%u-%u), %s has %u (%u-%u)",
					    a->ifname, spec_queues(a), spec_queues(a) > 1 ? "s" : "", a->first,
					    a->last, b->ifname, spec_queues(b), b->first, b->last);
			for (uint32_t k = 0; k < spec_queues(a); k++) {
				uint32_t g = cfg->nr_groups;

				if (add_port(cfg, j, k, multi ? g : cfg->nr_ports, err, errlen) ||
				    add_port(cfg, j + 1, k, multi ? g : cfg->nr_ports, err, errlen))
					return -1;
				cfg->nr_groups = multi ? g + 1 : cfg->nr_ports;
			}
		}
		return 0;
	}
	for (uint32_t i = 0; i < cfg->nr_specs; i++)
		for (uint32_t k = 0; k < spec_queues(&cfg->specs[i]); k++) {
			uint32_t g = multi ? k : cfg->nr_ports;

			if (add_port(cfg, i, k, g, err, errlen))
				return -1;
			if (g + 1 > cfg->nr_groups)
				cfg->nr_groups = g + 1;
		}
	return 0;
}

/* Distinct interfaces among the ports (l2 bridges interfaces, whatever their queues). */
static uint32_t count_interfaces(const struct fwd_config *cfg)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < cfg->nr_ports; i++) {
		uint32_t j = 0;

		while (j < i && strcmp(cfg->ports[j].ifname, cfg->ports[i].ifname))
			j++;
		n += j == i;
	}
	return n;
}

/* What check_config needs of each mode (FWD_MODES). */
static const struct {
	const char *name;
	uint32_t min_ifaces;
	const char *no_offload;
	uint32_t steer_flags;
} mode_facts[FWD_MODE_COUNT] = {
#define FWD_MODE_FACTS(id, name_, min, why, flags) [FWD_MODE_##id] = { #name_, min, why, flags },
	FWD_MODES(FWD_MODE_FACTS)
#undef FWD_MODE_FACTS
};

const char *fwd_mode_name(enum fwd_mode mode)
{
	return (size_t)mode < FWD_MODE_COUNT ? mode_facts[mode].name : "?";
}

uint32_t fwd_mode_steer_flags(enum fwd_mode mode)
{
	return (size_t)mode < FWD_MODE_COUNT ? mode_facts[mode].steer_flags : 0;
}

uint32_t fwd_mode_min_ifaces(enum fwd_mode mode)
{
	return (size_t)mode < FWD_MODE_COUNT ? mode_facts[mode].min_ifaces : 1;
}

static int set_mode(void *v, const char *arg, char *err, size_t errlen)
{
	struct fwd_config *cfg = v;
	for (enum fwd_mode m = 0; m < FWD_MODE_COUNT; m++) {
		if (!strcmp(arg, fwd_mode_name(m))) {
			cfg->mode = m;
			return 0;
		}
	}
	char names[64] = "";

	for (enum fwd_mode m = 0; m < FWD_MODE_COUNT; m++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", m ? ", " : "", fwd_mode_name(m));
	return cli_fail(err, errlen, "--mode: unknown mode '%s' (%s)", arg, names);
}

static int set_xdp_mode(void *v, const char *a, char *e, size_t l)
{
	return cli_parse_xdp_mode(a, &((struct fwd_config *)v)->xdp_attach, e, l);
}

static int set_zerocopy(void *v, const char *a, char *e, size_t l)
{
	struct fwd_config *c = v;

	c->bind = FWD_BIND_ZEROCOPY;
	return 0;
}

const char *const fwd_latency_names[FWD_LATENCY_MAX] = {
	[FWD_LATENCY_SAVER] = "saver", [FWD_LATENCY_BALANCED] = "balanced", [FWD_LATENCY_LOW] = "low",
};

/* The levels (umem/idle.h for the fields). saturated input spins up to spin_max at every level;
 * below saturation the spin follows the measured gaps between frames, from spin_min up to
 * spin_max and within 1/share of the working time. cpu_latency: the CPU latency request held
 * while running (-1: none); 0 keeps idle CPUs polling, so a sleeping worker wakes without the
 * wakeup of a halted vCPU. docs/XDP-FWD.md has the measured cost of each. */
static const struct {
	uint32_t spin_min_us, spin_max_us, share;
	int cpu_latency_us;
} levels[FWD_LATENCY_MAX] = {
	[FWD_LATENCY_SAVER] = { 0, 50, 16, -1 },
	[FWD_LATENCY_BALANCED] = { 10, 200, 8, -1 },
	[FWD_LATENCY_LOW] = { 100, 2000, 0, 0 },
};

static int set_latency(void *v, const char *arg, char *err, size_t errlen)
{
	struct fwd_config *cfg = v;

	for (int l = 0; l < FWD_LATENCY_MAX; l++) {
		if (!strcmp(arg, fwd_latency_names[l])) {
			cfg->latency = (enum fwd_latency)l;
			cfg->latency_given = true;
			return 0;
		}
	}
	return cli_fail(err, errlen, "--latency '%s': not a level (saver, balanced, low)", arg);
}

/* Deprecated: auto is the default level, USECS a fixed spin window. */
static int set_idle_spin(void *v, const char *arg, char *err, size_t errlen)
{
	struct fwd_config *cfg = v;

	cfg->idle_spin_given = true;
	cfg->idle_spin_auto = !strcmp(arg, "auto");
	if (cfg->idle_spin_auto)
		return 0;
	return cli_parse_u32("idle-spin", arg, 0, 10000000, &cfg->idle_spin_usecs, err, errlen);
}

/* Deprecated: instead of the level's request. */
static int set_cpu_latency(void *v, const char *arg, char *err, size_t errlen)
{
	struct fwd_config *cfg = v;

	cfg->cpu_latency = true;
	cfg->cpu_latency_given = true;
	/* The kernel takes an s32; its own default (no request) is 2000 s. */
	return cli_parse_u32("cpu-latency", arg, 0, 2000000000, &cfg->cpu_latency_usecs, err, errlen);
}

static uint32_t us_to_ns(uint32_t us)
{
	return us >= UINT32_MAX / 1000 ? UINT32_MAX : us * 1000; /* the policy's longest: 4.29 s */
}

void fwd_latency_idle_opts(const struct fwd_config *cfg, struct umem_idle_opts *o)
{
	*o = (struct umem_idle_opts){ .sz = sizeof(*o), .batch = cfg->batch };
	if (cfg->idle_spin_given && !cfg->idle_spin_auto) {
		o->spin_min_ns = o->spin_max_ns = us_to_ns(cfg->idle_spin_usecs);
		return;
	}
	o->spin_min_ns = us_to_ns(levels[cfg->latency].spin_min_us);
	o->spin_max_ns = us_to_ns(levels[cfg->latency].spin_max_us);
	o->spin_share = levels[cfg->latency].share;
}

const char *fwd_latency_fixed(const struct fwd_config *cfg, enum fwd_latency level)
{
	bool hold = cfg->cpu_latency_given ? cfg->cpu_latency : levels[level].cpu_latency_us >= 0;
	uint32_t usecs = cfg->cpu_latency_given ? cfg->cpu_latency_usecs :
			 hold ? (uint32_t)levels[level].cpu_latency_us : cfg->cpu_latency_usecs;

	if (cfg->idle_spin_given && !cfg->idle_spin_auto)
		return "--idle-spin fixes the spin window, which no level replaces while running";
	if (hold != cfg->cpu_latency || usecs != cfg->cpu_latency_usecs)
		return "its CPU latency request (/dev/cpu_dma_latency) is taken at start; a restart applies it";
	return NULL;
}

void fwd_warn_deprecated(const struct fwd_config *cfg, FILE *out)
{
	if (cfg->idle_spin_given)
		fprintf(out, "xdp-fwd: warning: --idle-spin is deprecated: --latency saver|balanced|low "
			"replaces it (%s)\n", cfg->idle_spin_auto ? "auto: the default, balanced" :
			"a fixed spin window kept for now");
	if (cfg->cpu_latency_given)
		fprintf(out, "xdp-fwd: warning: --cpu-latency is deprecated: --latency low holds 0 µs "
			"(idle CPUs poll); kept for now, instead of the level's request\n");
}

/* Decimal or 0x hex, as the bridge's group_fwd_mask is written either way. */
static int set_group_fwd_mask(void *v, const char *arg, char *err, size_t errlen)
{
	struct fwd_config *cfg = v;
	unsigned long m;
	char *end;

	errno = 0;
	m = strtoul(arg, &end, 0);
	if (errno || end == arg || *end || *arg == '-' || m > 0xffff)
		return cli_fail(err, errlen, "--group-fwd-mask: '%s' is not a 16-bit mask (e.g. 0x4000 for LLDP, 01:80:c2:00:00:0e)", arg);
	if (m & L2_GROUPFWD_RESTRICTED)
		return cli_fail(err, errlen,
				"--group-fwd-mask %s: bits 0-2 (0x0007) are restricted, as on a Linux bridge: :00 (STP) is always forwarded, :01 (pause) and :02 (LACP) never",
				arg);
	cfg->group_fwd_mask = (uint16_t)m;
	return 0;
}

static int set_csum_complete(void *v, const char *arg, char *err, size_t errlen)
{
	struct fwd_config *cfg = v;

	if (strcmp(arg, "on") && strcmp(arg, "off"))
		return cli_fail(err, errlen, "--csum-complete: '%s' is neither on nor off", arg);
	cfg->csum_complete = !strcmp(arg, "on");
	return 0;
}

static int set_copy(void *v, const char *a, char *e, size_t l)
{
	struct fwd_config *c = v;

	c->bind = FWD_BIND_COPY;
	return 0;
}

int fwd_parse_cpu_list(const char *s, int *cpus, uint32_t max)
{
	uint32_t n = 0;
	const char *p = s;

	if (!*p)
		return -1;
	while (*p) {
		char *end;
		long lo, hi;

		if (*p < '0' || *p > '9')
			return -1;
		lo = strtol(p, &end, 10);
		hi = lo;
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				return -1;
			hi = strtol(end + 1, &end, 10);
		}
		if (lo > hi || hi > FWD_MAX_CPU)
			return -1;
		for (long c = lo; c <= hi; c++) {
			if (n == max)
				return -1;
			cpus[n++] = (int)c;
		}
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			return -1;
		p = end;
	}
	return (int)n;
}

static int set_cpus(void *v, const char *a, char *e, size_t l)
{
	struct fwd_config *c = v;

	int n = fwd_parse_cpu_list(a, c->cpus, FWD_MAX_WORKERS);

	if (n < 0)
		return cli_fail(e, l, "--cpus: '%s' is not a CPU list like 0,2-3 (at most %d CPUs)", a,
			    FWD_MAX_WORKERS);
	/* A CPU outside the allowed set (offline, absent, or excluded by taskset or a cpuset)
	 * would only fail at pinning, after the ports are set up: refuse it here. */
	size_t setsz = CPU_ALLOC_SIZE(FWD_MAX_CPU + 1);
	cpu_set_t *allowed = CPU_ALLOC(FWD_MAX_CPU + 1);

	if (allowed && !sched_getaffinity(0, setsz, allowed)) {
		for (int i = 0; i < n; i++) {
			if (CPU_ISSET_S((size_t)c->cpus[i], setsz, allowed))
				continue;
			char list[64] = "";
			size_t len = 0;

			/* The allowed set as a CPU list (0-1,4), as taskset -c would take it. */
			for (int lo = 0; lo <= FWD_MAX_CPU && len < sizeof(list) - 1; lo++) {
				int hi = lo;

				if (!CPU_ISSET_S((size_t)lo, setsz, allowed))
					continue;
				while (hi < FWD_MAX_CPU && CPU_ISSET_S((size_t)hi + 1, setsz, allowed))
					hi++;
				len += (size_t)snprintf(list + len, sizeof(list) - len, hi > lo ? "%s%d-%d" : "%s%d",
							len ? "," : "", lo, hi);
				lo = hi;
			}
			CPU_FREE(allowed);
			return cli_fail(e, l, "--cpus: CPU %d is not one this process may run on (allowed: %s)",
					c->cpus[i], list);
		}
	}
	CPU_FREE(allowed);
	c->nr_cpus = (uint32_t)n;
	return 0;
}
static int set_control(void *v, const char *a, char *e, size_t l)
{
	struct fwd_config *c = v;

	if (!*a)
		return cli_fail(e, l, "--control: give a socket path, or none");
	if (strlen(a) >= FWD_CTL_PATH_MAX)
		return cli_fail(e, l, "--control '%s': a unix socket path has at most %d bytes", a, FWD_CTL_PATH_MAX - 1);
	c->control_path = a;
	return 0;
}

static int set_rule(void *v, const char *a, char *e, size_t l)
{
	struct fwd_config *c = v;

	if (c->cmdline && !c->cmd_rule) { /* the command line's rules replace the file's */
		c->cmd_rule = true;
		c->nr_rules = 0;
	}
	if (c->nr_rules == FWD_MAX_RULES)
		return cli_fail(e, l, "--rule: at most %d rules", FWD_MAX_RULES);
	/* The library logs which token is wrong; the message here names the rule. */
	if (umem_steer_rule__parse(a, &c->rules[c->nr_rules]))
		return cli_fail(e, l, "--rule '%s': not a steering rule (e.g. \"udp dport 53 -> pass\")", a);
	c->rule_text[c->nr_rules++] = a;
	return 0;
}
int fwd_pcap_filter_parse(struct fwd_config *cfg, const char *text, char *err, size_t errlen)
{
	char rest[256] = "", buf[256];
	struct umem_steer_rule rule;
	size_t used = 0;
	uint32_t devs = 0;
	char *save = NULL;

	if (strlen(text) >= sizeof(buf))
		return cli_fail(err, errlen, "--pcap-filter: longer than %zu characters", sizeof(buf) - 1);
	memcpy(buf, text, strlen(text) + 1);
	/* "dev IFNAME" is the capture's own word; the rest goes to the rule parser. */
	for (char *tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (!strcmp(tok, "->") || !strcmp(tok, "prio"))
			return cli_fail(err, errlen, "--pcap-filter '%s': a match only, without '%s' (e.g. \"udp dport 53\")",
					text, tok);
		if (!strcmp(tok, "dev")) {
			const char *name = strtok_r(NULL, " \t", &save);

			if (!name)
				return cli_fail(err, errlen, "--pcap-filter '%s': 'dev' needs an interface name", text);
			if (strlen(name) >= IF_NAMESIZE)
				return cli_fail(err, errlen, "--pcap-filter '%s': interface names have at most %d characters",
						text, IF_NAMESIZE - 1);
			if (devs == FWD_MAX_PORTS)
				return cli_fail(err, errlen, "--pcap-filter: at most %d dev words", FWD_MAX_PORTS);
			memcpy(cfg->pcap_dev[devs++], name, strlen(name) + 1);
			continue;
		}
		used += (size_t)snprintf(rest + used, sizeof(rest) - used, "%s%s", used ? " " : "", tok);
	}
	memset(&rule, 0, sizeof(rule));
	if (used) {
		char full[sizeof(rest) + 16];

		/* The rule parser wants an action; it logs which word is wrong. */
		snprintf(full, sizeof(full), "%s -> pass", rest);
		if (umem_steer_rule__parse(full, &rule))
			return cli_fail(err, errlen, "--pcap-filter '%s': not a match of the rule language "
					"(e.g. \"udp dport 53\", \"vlan 10 ipv6\", \"dev eth1 tcp\")", text);
	}
	cfg->pcap_filter = text;
	cfg->pcap_match = rule.match;
	cfg->nr_pcap_devs = devs;
	return 0;
}

static int set_pcap_filter(void *v, const char *a, char *e, size_t l)
{
	return fwd_pcap_filter_parse(v, a, e, l);
}
static int set_profile(void *v, const char *a, char *e, size_t l)
{
	struct fwd_config *c = v;

	if (!strcmp(a, "mvpp2")) {
		c->profile = FWD_PROFILE_MVPP2;
		return 0;
	}
	if (!strcmp(a, "none")) {
		c->profile = FWD_PROFILE_NONE;
		return 0;
	}
	return cli_fail(e, l, "--profile: unknown profile '%s' (mvpp2, none)", a);
}

/* [ADDR:]PORT (ADDR an IPv4 address, or an IPv6 one in brackets; default every IPv4 address). */
int fwd_parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *len)
{
	const char *colon = strrchr(spec, ':');
	char host[64] = "0.0.0.0", *end;
	unsigned long port;

	if (colon) {
		size_t n = (size_t)(colon - spec);

		if (n >= sizeof(host))
			return -1;
		memcpy(host, spec, n);
		host[n] = '\0';
	}
	errno = 0;
	port = strtoul(colon ? colon + 1 : spec, &end, 10);
	if (errno || *end || end == (colon ? colon + 1 : spec) || port > 65535)
		return -1;
	memset(ss, 0, sizeof(*ss));
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		host[strlen(host) - 1] = '\0';
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		*len = sizeof(*a);
		return inet_pton(AF_INET6, host + 1, &a->sin6_addr) == 1 ? 0 : -1;
	}
	struct sockaddr_in *a = (struct sockaddr_in *)ss;

	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)port);
	*len = sizeof(*a);
	return inet_pton(AF_INET, host, &a->sin_addr) == 1 ? 0 : -1;
}

static int set_metrics(void *v, const char *a, char *e, size_t l)
{
	struct fwd_config *c = v;
	struct sockaddr_storage ss;
	socklen_t len;

	if (fwd_parse_listen(a, &ss, &len))
		return cli_fail(e, l, "--metrics '%s': not [ADDR:]PORT (e.g. 9477, 127.0.0.1:9477, [::1]:9477)", a);
	c->metrics_addr = a;
	return 0;
}

#define CFG struct fwd_config

static const struct cli_opt options[] = {
	{ "interface", 'i', "IFNAME[@Q]", "a port (queue 0 by default); IFNAME@A-B or IFNAME@all: one port per queue; repeat, in order", CLI_SET(set_interface) },
	{ "mode", 'm', "MODE", "wire (-i options in pairs 1st<->2nd, 3rd<->4th; queue q <-> queue q), l2 (learning bridge), reflect (swap MACs, send back), l3 (IP router on the kernel's routing tables); default wire", CLI_SET(set_mode) },
	{ "workers", 'w', "N", "worker threads (default: one per --cpus CPU, else 1); ports are dealt out in order, a queue's ports to one worker", CLI_U32_AT(CFG, workers, 1, FWD_MAX_WORKERS) },
	{ "cpus", 'c', "LIST", "pin worker k to the k-th CPU of LIST, e.g. 0,2-3", CLI_SET(set_cpus) },
	{ "batch", 'b', "N", "descriptors per burst, 1..256 (default 64)", CLI_U32_AT(CFG, batch, 1, FWD_MAX_BATCH) },
	{ "rx-ring", 0, "N", "RX ring entries (power of two)", CLI_POW2_AT(CFG, rx_ring, 64, 65536) },
	{ "tx-ring", 0, "N", "TX ring entries (power of two)", CLI_POW2_AT(CFG, tx_ring, 64, 65536) },
	{ "fill-ring", 0, "N", "fill ring entries (power of two)", CLI_POW2_AT(CFG, fill_ring, 64, 65536) },
	{ "comp-ring", 0, "N", "completion ring entries (power of two)", CLI_POW2_AT(CFG, comp_ring, 64, 65536) },
	{ "chunk-size", 0, "BYTES", "UMEM chunk size, 2048..4096 (power of two unless --unaligned; default 2048 when every MTU is <= 1774, 1762 with --offload-after, else 4096)", CLI_U32_AT(CFG, chunk_size, 2048, 4096) },
	{ "frames", 0, "N", "UMEM frames (chunks) in the shared area (default: enough for every ring)", CLI_U32_AT(CFG, frames, 256, 1u << 22) },
	{ "unaligned", 0, NULL, "unaligned chunk mode", CLI_FLAG_AT(CFG, unaligned, true) },
	{ "hugepages", 0, NULL, "back the UMEM with 2 MiB hugepages (needs vm.nr_hugepages)", CLI_FLAG_AT(CFG, hugepages, true) },
	{ "xdp-mode", 0, "MODE", CLI_XDP_MODE_HELP, CLI_SET(set_xdp_mode) },
	{ "zero-copy", 'z', NULL, "require zero-copy (fail where the driver has none)", CLI_SET(set_zerocopy) },
	{ "copy", 0, NULL, "force copy mode", CLI_SET(set_copy) },
	{ "no-need-wakeup", 0, NULL, "do not use the need_wakeup flag (the kernel is kicked every burst)", CLI_FLAG_AT(CFG, need_wakeup, false) },
	{ "busy-poll", 0, "USECS", "busy polling (SO_PREFER_BUSY_POLL, SO_BUSY_POLL=USECS)", CLI_U32_AT(CFG, busy_poll_usecs, 0, 1000000) },
	{ "busy-budget", 0, "N", "SO_BUSY_POLL_BUDGET (default: the batch size)", CLI_U32_AT(CFG, busy_poll_budget, 1, 65535) },
	{ "latency", 0, "LEVEL", "CPU time against the latency of a frame that finds a worker idle: saver (short spins after the last frame, within 1/16 of the working time), balanced (default: spins sized from the measured gaps between frames, up to 200 µs), low (spins up to 2 ms, and idle CPUs poll instead of halting: /dev/cpu_dma_latency 0, the host's CPU time on a VM). Saturated input never sleeps at any level", CLI_SET(set_latency) },
	{ "idle-spin", 0, "USECS|auto", "deprecated (--latency): a fixed spin window after the last frame; auto: --latency balanced", CLI_SET(set_idle_spin) },
	{ "cpu-latency", 0, "USECS", "deprecated (--latency low holds 0): hold this CPU latency request (/dev/cpu_dma_latency) while running, instead of the level's", CLI_SET(set_cpu_latency) },
	{ "csum-complete", 0, "on|off", "complete TCP/UDP checksums a sender left partial (its TX checksum offload: they hold the pseudo-header sum only); default on", CLI_SET(set_csum_complete) },
	{ "multi-buffer", 0, NULL, "frames larger than a chunk as descriptor chains (XDP_USE_SG); on by default when an MTU needs it", CLI_FLAG_AT(CFG, multi_buffer, true) },
	{ "profile", 0, "NAME", "mvpp2 (Armada 7K/8K): copy mode, 2 KiB chunks, IFNAME = all its queues, a worker per queue, MTU <= 1500", CLI_SET(set_profile) },
	{ "rule", 'r', "RULE", "steering rule, e.g. \"udp dport 53 -> drop\"; repeat (sock N: the port on queue N)", CLI_SET(set_rule) },
	{ "offload-after", 0, "N", "after a flow's first N frames, install it in the XDP program, which forwards the rest (wire: TCP/UDP 5-tuples; l2: unicast destination MACs; l3: routed TCP/UDP 5-tuples, rewritten as routed); default 0, off", CLI_U32_AT(CFG, offload_after, 0, 1000000000) },
	{ "offload-idle", 0, "SECS", "remove an offloaded flow after SECS without a frame; it comes back to userspace (default 10)", CLI_U32_AT(CFG, offload_idle, 1, 86400) },
	{ "offload-max", 0, "N", "at most N offloaded flows per interface (default: the table's 16384)", CLI_U32_AT(CFG, offload_max, 1, UMEM_STEER_MAX_FLOWS) },
	{ "pcap", 0, "FILE", "write the frames xdp-fwd transmits to FILE (pcap, created or truncated; a FIFO works: tcpdump -r FIFO reads it live)", CLI_STRING_AT(CFG, pcap_path, 4095) },
	{ "pcap-filter", 0, "EXPR", "capture only these frames: a rule's match words (\"udp dport 53\", \"vlan 10 ipv6\") and dev IFNAME (sent on IFNAME; repeat)", CLI_SET(set_pcap_filter) },
	{ "pcap-snaplen", 0, "BYTES", "keep at most BYTES of each frame, 64..262144 (default 262144: whole frames)", CLI_U32_AT(CFG, pcap_snaplen, 64, FWD_PCAP_SNAPLEN_DEFAULT) },
	{ "pcap-count", 0, "N", "stop capturing after N frames (forwarding goes on)", CLI_U64_AT(CFG, pcap_count, 1, UINT64_MAX) },
	{ "pcap-buffer", 0, "KIB", "capture ring per worker in KiB, 64..1048576 (default 4096); a frame that finds it full is counted as capture dropped", CLI_U32_AT(CFG, pcap_buffer_kib, 64, 1u << 20) },
	{ "duration", 'd', "SECS", "stop after SECS seconds", CLI_SECONDS_AT(CFG, duration, 0, 1e9) },
	{ "count", 'n', "N", "stop after N forwarded frames (with --offload-after, the kernel's count too)", CLI_U64_AT(CFG, count, 1, UINT64_MAX) },
	{ "interval", 0, "SECS", "seconds between stats lines (default 1)", CLI_SECONDS_AT(CFG, interval, 0.1, 1e9) },
	{ "table", 0, "N", "l3: the kernel routing table to mirror (default 254, main)", CLI_U32_AT(CFG, route_table, 1, 0xfffffffeu) },
	{ "l2-aging", 0, "SECS", "l2: seconds a learned MAC address stays valid (default 300)", CLI_U32_AT(CFG, l2_aging, 1, 86400) },
	{ "l2-size", 0, "N", "l2: MAC table slots, power of two (default 4096)", CLI_POW2_AT(CFG, l2_size, 16, 1u << 20) },
	{ "group-fwd-mask", 0, "MASK", "l2: bit X forwards 01:80:c2:00:00:0X, which a bridge drops by default (e.g. 0x4000: LLDP); :00 (STP) is always forwarded, :01 and :02 never (default 0)", CLI_SET(set_group_fwd_mask) },
	{ "no-reattach", 0, NULL, "do not reopen ports when an interface is deleted and back or its MTU outgrows a chunk (such ports stop); every capability is dropped after set-up", CLI_FLAG_AT(CFG, reattach, false) },
	{ "pinned", 0, "DIR", "attach nothing: use the steering program that `umem-steer attach IF --pin DIR` pinned for each interface (DIR/IF), so xdp-fwd needs no CAP_BPF or CAP_NET_ADMIN (OPERATING.md)", CLI_STRING_AT(CFG, pinned, 4000) },
	{ "metrics", 0, "[ADDR:]PORT", "serve every counter in the Prometheus text format at http://ADDR:PORT/metrics (ADDR: an IPv4 address or [IPv6]; default all IPv4 addresses), updated every --interval", CLI_SET(set_metrics) },
	{ "metrics-file", 0, "PATH", "write the same text to PATH every --interval, atomically (node_exporter's textfile collector)", CLI_STRING_AT(CFG, metrics_file, 4000) },
	{ "control", 0, "PATH|none", "the control socket xdp-fwdctl(8) talks to (default /run/xdp-fwd/NAME.sock, NAME the --config file's name without .conf, else the first interface); none: no socket", CLI_SET(set_control) },
	{ "takeover", 0, NULL, "take over from the xdp-fwd that serves the control socket (--control, or the default path): it hands over its steering program, run-time rules and counters and stops; frames keep flowing but for the socket close and bind (OPERATING.md); no xdp-fwd there: a normal start", CLI_FLAG_AT(CFG, takeover, true) },
	{ "control-group", 0, "NAME", "the control socket is 0660 and belongs to group NAME, whose members may use it (default 0600: root and the owner only)", CLI_STRING_AT(CFG, control_group, 255) },
	{ "config", 0, "FILE", "read options from FILE first (name = value, one a line, every long option; xdp-fwd.conf(5)); the command line overrides it; SIGHUP re-reads it", CLI_STRING_AT(CFG, config_path, 4000) },
	{ "json", 'j', NULL, "one JSON object per interval instead of the live lines", CLI_FLAG_AT(CFG, json, true) },
	{ "json-totals", 0, NULL, "--json interval objects count from the start (as the total does) instead of over the interval; rates stay per interval", CLI_FLAG_AT(CFG, json_totals, true) },
	{ "quiet", 0, NULL, "no live stats; totals on exit only", CLI_FLAG_AT(CFG, quiet, true) },
};

static void more_help(FILE *out)
{
	fprintf(out, "Examples:\n"
		     "  xdp-fwd -i veth0 -i veth1 --mode wire\n"
		     "  xdp-fwd -i eth1@0 -i eth2@0 --mode l2 --cpus 2\n"
		     "  xdp-fwd -i eth1@all -i eth2@all -w 4   (queue q of eth1 <-> queue q of eth2)\n"
		     "  xdp-fwd -i eth1 -i eth2 -r \"udp dport 53 -> drop\"\n"
		     "See xdp-fwd(8).\n");
}

_Static_assert(sizeof(options) / sizeof(options[0]) <= FWD_MAX_OPTIONS, "FWD_MAX_OPTIONS");

static void on_option(void *v, const struct cli_opt *o)
{
	((struct fwd_config *)v)->on_cmdline[o - options] = true;
}

static const struct cli_prog cli = {
	.name = "xdp-fwd",
	.synopsis = "-i IFNAME[@Q|@A-B|@all] -i ... [OPTIONS]",
	.summary = "Forward frames between AF_XDP ports that share one UMEM (no copies).",
	CLI_OPTS(options),
	.more_help = more_help,
	.on_option = on_option,
};

size_t fwd_option_count(void)
{
	return sizeof(options) / sizeof(options[0]);
}

const char *fwd_option_name(size_t i)
{
	return options[i].name;
}

struct fwd_text {
	struct fwd_text *next;
	char text[];
};

#define FWD_CONFIG_MAX (1u << 20) /* bytes of a configuration file */

static char *trim(char *s)
{
	char *e = s + strlen(s);

	while (*s == ' ' || *s == '\t')
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* Records value as one of option i's values in the file (a reload compares them). */
static int record(struct fwd_config *cfg, size_t i, const char *value)
{
	size_t old = cfg->given[i] ? strlen(cfg->given[i]) : 0;
	char *s = realloc(cfg->given[i], old + strlen(value) + 2);

	if (!s)
		return -1;
	memcpy(s + old, value, strlen(value));
	s[old + strlen(value)] = '\n';
	s[old + strlen(value) + 1] = '\0';
	cfg->given[i] = s;
	return 0;
}

/* One "name = value" line; 0, or -1 with the message (without FILE:LINE) in err. */
static int config_line(struct fwd_config *cfg, char *line, char *err, size_t errlen)
{
	char *eq = strchr(line, '='), *name, *value;
	const struct cli_opt *o = NULL;

	if (!eq)
		return cli_fail(err, errlen, "'%s': not 'name = value'", line);
	*eq = '\0';
	name = trim(line);
	value = trim(eq + 1);
	if (*value == '"') { /* quoted: taken as it is, '#' and all */
		char *end = strrchr(value + 1, '"');

		if (!end || trim(end + 1)[0])
			return cli_fail(err, errlen, "%s: unterminated quote", name);
		*end = '\0';
		value++;
	} else {
		for (char *h = value; (h = strchr(h, '#')); h++) /* a comment after the value */
			if (h[-1] == ' ' || h[-1] == '\t') {
				*h = '\0';
				value = trim(value);
				break;
			}
	}
	for (size_t i = 0; i < fwd_option_count() && !o; i++)
		if (!strcmp(options[i].name, name))
			o = &options[i];
	if (!o)
		return cli_fail(err, errlen, "unknown option '%s' (the long names of --help)", name);
	if (!strcmp(name, "config"))
		return cli_fail(err, errlen, "config: a file cannot include another");
	if (record(cfg, (size_t)(o - options), value))
		return cli_fail(err, errlen, "out of memory");
	if (!o->arg) { /* a flag: yes or no */
		if (!strcmp(value, "yes") || !strcmp(value, "true") || !strcmp(value, "on") || !strcmp(value, "1"))
			return cli_apply(o, cfg, NULL, err, errlen);
		if (!strcmp(value, "no") || !strcmp(value, "false") || !strcmp(value, "off") || !strcmp(value, "0"))
			return 0;
		return cli_fail(err, errlen, "%s: '%s' is neither yes nor no", name, value);
	}
	if (!*value)
		return cli_fail(err, errlen, "%s: no value", name);
	return cli_apply(o, cfg, value, err, errlen);
}

/* The file's options into cfg; the text stays (cfg->texts): string options point into it. */
static int read_config(struct fwd_config *cfg, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	struct fwd_text *t;
	size_t len, lineno = 1;
	char msg[512];

	if (!f)
		return cli_fail(err, errlen, "--config %s: %s", path, strerror(errno));
	t = malloc(sizeof(*t) + FWD_CONFIG_MAX + 1);
	if (!t) {
		fclose(f);
		return cli_fail(err, errlen, "--config %s: out of memory", path);
	}
	len = fread(t->text, 1, FWD_CONFIG_MAX + 1, f);
	if (ferror(f)) { /* a directory opens, and fails only here (EISDIR) */
		int e = errno;

		fclose(f);
		free(t);
		return cli_fail(err, errlen, "--config %s: %s", path, strerror(e));
	}
	fclose(f);
	if (len > FWD_CONFIG_MAX) {
		free(t);
		return cli_fail(err, errlen, "--config %s: larger than %u bytes", path, FWD_CONFIG_MAX);
	}
	t->text[len] = '\0';
	t->next = cfg->texts;
	cfg->texts = t;
	if (memchr(t->text, '\0', len))
		return cli_fail(err, errlen, "%s: not a text file (a NUL byte)", path);
	for (char *line = t->text, *nl; line; line = nl, lineno++) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		line = trim(line);
		if (!*line || *line == '#')
			continue;
		if (config_line(cfg, line, msg, sizeof(msg)))
			return cli_fail(err, errlen, "%s:%zu: %s", path, lineno, msg);
	}
	return 0;
}

/* --config FILE or --config=FILE on the command line: read before the rest of it. */
static const char *config_arg(int argc, char **argv)
{
	const char *path = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--config") && i + 1 < argc)
			path = argv[++i];
		else if (!strncmp(argv[i], "--config=", 9))
			path = argv[i] + 9;
	}
	return path;
}

void fwd_config_free(struct fwd_config *cfg)
{
	while (cfg->texts) {
		struct fwd_text *t = cfg->texts;

		cfg->texts = t->next;
		free(t);
	}
	for (size_t i = 0; i < FWD_MAX_OPTIONS; i++) {
		free(cfg->given[i]);
		cfg->given[i] = NULL;
	}
	free(cfg->rule_store);
	cfg->rule_store = NULL;
}

void fwd_config_defaults(struct fwd_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = FWD_MODE_WIRE;
	cfg->bind = FWD_BIND_AUTO;
	cfg->batch = 64;
	cfg->latency = FWD_LATENCY_BALANCED;
	cfg->need_wakeup = true;
	cfg->csum_complete = true;
	cfg->reattach = true;
	cfg->workers = 0; /* decided after parsing: from --cpus, else 1 */
	cfg->interval = 1.0;
	cfg->l2_aging = 300;
	cfg->route_table = 254; /* RT_TABLE_MAIN */
	cfg->offload_idle = 10;
	cfg->l2_size = 4096;
	cfg->pcap_snaplen = FWD_PCAP_SNAPLEN_DEFAULT;
	cfg->pcap_buffer_kib = FWD_PCAP_BUFFER_DEFAULT;
}

void fwd_usage(FILE *out)
{
	cli_usage(&cli, out);
}

bool fwd_mtu_needs_multi_buffer(const struct fwd_config *cfg, uint32_t mtu)
{
	uint32_t chunk = cfg->chunk_size ? cfg->chunk_size : FWD_CHUNK_DEFAULT;
	/* Offload's gate mark goes in front of a gated frame's data where it has no XDP metadata:
	 * the kernel copies it with the frame. */
	uint32_t mark = cfg->offload_after ? (uint32_t)sizeof(struct umem_steer_gate_mark) : 0;

	return !mtu_fits_chunk(mtu + mark, chunk);
}

/* The default chunk: 2 KiB (fragments of 4 KiB pages, half the UMEM per in-flight frame, as
 * fast as whole pages in docs/BENCHMARKS.md) when every port's MTU fits one, else 4 KiB. An
 * MTU raised later beyond it reopens the ports with multi-buffer, as beyond 4 KiB. */
uint32_t fwd_default_chunk(const struct fwd_config *cfg, uint32_t max_mtu)
{
	struct fwd_config small = *cfg;

	small.chunk_size = FWD_CHUNK_SMALL;
	return !cfg->unaligned && max_mtu && !fwd_mtu_needs_multi_buffer(&small, max_mtu) ?
		FWD_CHUNK_SMALL : FWD_CHUNK_DEFAULT;
}

/* RX buffers are whole chunks, 4096 / chunk to a 4 KiB page (aligned). Unaligned, a buffer of
 * more than half a page takes a page, smaller ones are the pool's fragments at
 * UMEM_FRAG_ALIGN offsets (the port's rule, as umem_port__pages_needed counts them). */
uint64_t fwd_frame_pages(const struct fwd_config *cfg, uint64_t frames)
{
	uint32_t chunk = cfg->chunk_size ? cfg->chunk_size : FWD_CHUNK_DEFAULT;
	uint32_t per_page = !cfg->unaligned ? UMEM_PAGE_SIZE_DEFAULT / chunk :
			    chunk * 2 > UMEM_PAGE_SIZE_DEFAULT ? 1 :
			    UMEM_PAGE_SIZE_DEFAULT / ((chunk + UMEM_FRAG_ALIGN - 1) & ~(UMEM_FRAG_ALIGN - 1));

	return (frames + per_page - 1) / per_page;
}

/* The --pcap-* options need --pcap, and a filter's dev an -i interface. */
static int check_pcap(const struct fwd_config *cfg, char *err, size_t errlen)
{
	if (!cfg->pcap_path && (cfg->pcap_filter || cfg->pcap_count ||
				cfg->pcap_snaplen != FWD_PCAP_SNAPLEN_DEFAULT ||
				cfg->pcap_buffer_kib != FWD_PCAP_BUFFER_DEFAULT))
		return cli_fail(err, errlen, "--pcap-filter, --pcap-snaplen, --pcap-count and --pcap-buffer need --pcap FILE");
	if (cfg->pcap_path && !cfg->pcap_path[0])
		return cli_fail(err, errlen, "--pcap: empty file name");
	for (uint32_t d = 0; d < cfg->nr_pcap_devs; d++) {
		bool found = false;

		for (uint32_t i = 0; i < cfg->nr_ports; i++)
			found |= !strcmp(cfg->ports[i].ifname, cfg->pcap_dev[d]);
		if (!found)
			return cli_fail(err, errlen, "--pcap-filter: dev %s is not an interface given with -i",
					cfg->pcap_dev[d]);
	}
	return 0;
}

static int check_config(struct fwd_config *cfg, char *err, size_t errlen)
{
	if (cfg->nr_specs == 0)
		return cli_fail(err, errlen, "no ports: give at least one -i IFNAME[@QUEUE] (see --help)");
	if (cfg->bind == FWD_BIND_ZEROCOPY && cfg->profile == FWD_PROFILE_MVPP2)
		return cli_fail(err, errlen, "--zero-copy with --profile mvpp2: mvpp2 has no AF_XDP zero-copy");
	if (cfg->profile == FWD_PROFILE_MVPP2) {
		if (cfg->bind == FWD_BIND_AUTO)
			cfg->bind = FWD_BIND_COPY;
		if (!cfg->chunk_size)
			cfg->chunk_size = 2048;
		/* mvpp2 spreads RX over one queue per CPU (RSS): a bare IFNAME means all of them. */
		for (uint32_t i = 0; i < cfg->nr_specs; i++)
			cfg->specs[i].all |= !cfg->specs[i].queue_given;
	}
	if (expand_ports(cfg, err, errlen))
		return -1;
	for (uint32_t i = 0; i < cfg->nr_ports; i++)
		for (uint32_t j = 0; j < i; j++)
			if (!strcmp(cfg->ports[i].ifname, cfg->ports[j].ifname) &&
			    cfg->ports[i].queue == cfg->ports[j].queue)
				return cli_fail(err, errlen, "port %s@%u is given twice (-i number %u and %u)",
					    cfg->ports[i].ifname, cfg->ports[i].queue, cfg->ports[j].spec + 1,
					    cfg->ports[i].spec + 1);
	if (cfg->latency_given && cfg->idle_spin_given)
		return cli_fail(err, errlen, "--idle-spin and --latency: --latency replaces --idle-spin, give it alone");
	if (!cfg->cpu_latency_given && levels[cfg->latency].cpu_latency_us >= 0) {
		cfg->cpu_latency = true;
		cfg->cpu_latency_usecs = (uint32_t)levels[cfg->latency].cpu_latency_us;
	}
	if (check_pcap(cfg, err, errlen))
		return -1;
	if (cfg->offload_after && cfg->pinned)
		return cli_fail(err, errlen, "--offload-after and --pinned: the offload is not available to pinned programs yet");
	if (cfg->offload_after && mode_facts[cfg->mode].no_offload)
		return cli_fail(err, errlen, "--offload-after: %s mode has nothing to offload (%s)", fwd_mode_name(cfg->mode),
				mode_facts[cfg->mode].no_offload);
	if (count_interfaces(cfg) < mode_facts[cfg->mode].min_ifaces)
		return cli_fail(err, errlen, "--mode %s needs at least %u interfaces (-i names %u)", fwd_mode_name(cfg->mode),
				mode_facts[cfg->mode].min_ifaces, count_interfaces(cfg));
	if (cfg->chunk_size && !cfg->unaligned && !is_pow2(cfg->chunk_size))
		return cli_fail(err, errlen, "--chunk-size %u: aligned mode needs a power of two (2048 or 4096); add --unaligned",
			    cfg->chunk_size);
	if (!cfg->workers)
		cfg->workers = cfg->nr_cpus ? cfg->nr_cpus :
			       cfg->profile == FWD_PROFILE_MVPP2 && cfg->queue_ranges ? /* one per queue */
			       (cfg->nr_groups < FWD_MAX_WORKERS ? cfg->nr_groups : FWD_MAX_WORKERS) : 1;
	if (cfg->nr_cpus && cfg->nr_cpus < cfg->workers)
		return cli_fail(err, errlen, "--cpus lists %u CPUs for %u workers", cfg->nr_cpus, cfg->workers);
	if (cfg->workers > cfg->nr_groups)
		cfg->workers = cfg->nr_groups; /* a worker without a port would only spin */
	return 0;
}

int fwd_parse_args(struct fwd_config *cfg, int argc, char **argv, char *err, size_t errlen)
{
	const char *path = config_arg(argc, argv);
	int next, ret;

	fwd_config_defaults(cfg);
	if (path && read_config(cfg, path, err, errlen))
		return -1;
	cfg->cmdline = true;
	ret = cli_parse(&cli, cfg, argc, argv, 1, &next, err, errlen);
	if (ret < 0) {
		size_t n = strlen(err);

		snprintf(err + n, errlen - n, " (see --help)");
	}
	if (ret)
		return ret;
	if (next < argc)
		return cli_fail(err, errlen, "unexpected argument '%s' (ports are given with -i)", argv[next]);
	return check_config(cfg, err, errlen);
}
