/* SPDX-License-Identifier: MIT */
/* xdp-fwd option parsing: one table drives getopt_long and --help. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <umem/port.h>

#include "fwd.h"

/* How an option stores its value: most are a number in a range or a boolean, written at an
 * offset of struct fwd_config; the others have a function. */
enum fwd_option_kind {
	OPT_FN,   /* set() */
	OPT_U32,  /* uint32_t in [min, max] */
	OPT_POW2, /* the same, and a power of two */
	OPT_BOOL, /* bool := value, no argument */
};

struct fwd_option {
	const char *name;
	int short_name; /* 0: long only */
	const char *arg; /* NULL: no argument */
	const char *help;
	enum fwd_option_kind kind;
	size_t off;         /* OPT_U32, OPT_POW2, OPT_BOOL: the field */
	uint32_t min, max;  /* OPT_U32, OPT_POW2 */
	bool value;         /* OPT_BOOL */
	/* OPT_FN: returns 0, or -1 after writing a message into err. */
	int (*set)(struct fwd_config *cfg, const char *arg, char *err, size_t errlen);
};

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Unsigned decimal in [min, max]; the option name goes into the message. */
static int parse_u64(const char *opt, const char *arg, uint64_t min, uint64_t max, uint64_t *out,
		     char *err, size_t errlen)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (!arg || !*arg || *arg == '-')
		return fail(err, errlen, "--%s: '%s' is not a number", opt, arg ? arg : "");
	v = strtoull(arg, &end, 10);
	if (errno || *end)
		return fail(err, errlen, "--%s: '%s' is not a number", opt, arg);
	if (v < min || v > max)
		return fail(err, errlen, "--%s: %llu is out of range %llu..%llu", opt, v,
			    (unsigned long long)min, (unsigned long long)max);
	*out = v;
	return 0;
}

static int parse_u32(const char *opt, const char *arg, uint32_t min, uint32_t max, uint32_t *out,
		     char *err, size_t errlen)
{
	uint64_t v;

	if (parse_u64(opt, arg, min, max, &v, err, errlen))
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int parse_seconds(const char *opt, const char *arg, double min, double *out, char *err,
			 size_t errlen)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v >= min) || v > 1e9)
		return fail(err, errlen, "--%s: '%s' is not a number of seconds >= %g", opt, arg, min);
	*out = v;
	return 0;
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

int (*fwd_queue_count)(const char *ifname) = umem_port__queue_count;

#define FWD_MAX_QUEUE 1023u

/* -i IFNAME[@QUEUE | @FIRST-LAST | @all]: one interface spec, expanded into ports by
 * expand_ports() once every option is known (wire mode pairs specs). */
static int set_interface(struct fwd_config *cfg, const char *arg, char *err, size_t errlen)
{
	const char *at = strchr(arg, '@');
	size_t len = at ? (size_t)(at - arg) : strlen(arg);
	struct fwd_if_spec *s;

	if (cfg->nr_specs == FWD_MAX_PORTS)
		return fail(err, errlen, "-i: at most %d ports", FWD_MAX_PORTS);
	if (!len)
		return fail(err, errlen, "-i '%s': missing interface name (IFNAME[@QUEUE])", arg);
	if (len >= IF_NAMESIZE)
		return fail(err, errlen, "-i '%s': interface names have at most %d characters", arg,
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
			ok = !parse_u32("interface", first, 0, FWD_MAX_QUEUE, &s->first, err, errlen) &&
			     (!dash || !parse_u32("interface", dash + 1, 0, FWD_MAX_QUEUE, &s->last, err, errlen));
		}
		if (!ok)
			return fail(err, errlen, "-i '%s': after '@' give a queue 0..%u, a range like 0-3, or 'all'",
				    arg, FWD_MAX_QUEUE);
		if (!dash)
			s->last = s->first;
		if (s->last < s->first)
			return fail(err, errlen, "-i '%s': the queue range %u-%u is backwards", arg,
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
		return fail(err, errlen, "-i '%s@%u-%u' and the others make more than %d ports", s->ifname,
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
				return fail(err, errlen, "-i '%s@all': cannot read the queue count of %s: %s",
					    s->ifname, s->ifname, strerror(n < 0 ? -n : EINVAL));
			s->first = 0;
			s->last = (uint32_t)n - 1;
			s->all = false;
		}
		multi |= spec_queues(s) > 1;
	}
	cfg->queue_ranges = multi;
	cfg->nr_ports = 0;
	cfg->nr_groups = 0;
	if (cfg->mode == FWD_MODE_WIRE) {
		if (cfg->nr_specs % 2)
			return fail(err, errlen, "--mode wire pairs the -i options (1st<->2nd, 3rd<->4th): %u is an odd number",
				    cfg->nr_specs);
		for (uint32_t j = 0; j < cfg->nr_specs; j += 2) {
			const struct fwd_if_spec *a = &cfg->specs[j], *b = &cfg->specs[j + 1];

			if (spec_queues(a) != spec_queues(b))
				return fail(err, errlen, "--mode wire pairs queue by queue: %s has %u queue%s (%u-%u), %s has %u (%u-%u)",
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

const char *fwd_mode_name(enum fwd_mode mode)
{
	switch (mode) {
	case FWD_MODE_WIRE: return "wire";
	case FWD_MODE_L2: return "l2";
	case FWD_MODE_REFLECT: return "reflect";
	}
	return "?";
}

static int set_mode(struct fwd_config *cfg, const char *arg, char *err, size_t errlen)
{
	for (enum fwd_mode m = FWD_MODE_WIRE; m <= FWD_MODE_REFLECT; m++) {
		if (!strcmp(arg, fwd_mode_name(m))) {
			cfg->mode = m;
			return 0;
		}
	}
	return fail(err, errlen, "--mode: unknown mode '%s' (wire, l2, reflect)", arg);
}

static int set_zerocopy(struct fwd_config *c, const char *a, char *e, size_t l)
{
	c->bind = FWD_BIND_ZEROCOPY;
	return 0;
}
static int set_copy(struct fwd_config *c, const char *a, char *e, size_t l)
{
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
		if (lo > hi || hi > 4095)
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

static int set_cpus(struct fwd_config *c, const char *a, char *e, size_t l)
{
	int n = fwd_parse_cpu_list(a, c->cpus, FWD_MAX_WORKERS);

	if (n < 0)
		return fail(e, l, "--cpus: '%s' is not a CPU list like 0,2-3 (at most %d CPUs)", a,
			    FWD_MAX_WORKERS);
	c->nr_cpus = (uint32_t)n;
	return 0;
}
static int set_rule(struct fwd_config *c, const char *a, char *e, size_t l)
{
	if (c->nr_rules == FWD_MAX_RULES)
		return fail(e, l, "--rule: at most %d rules", FWD_MAX_RULES);
	/* The library logs which token is wrong; the message here names the rule. */
	if (umem_steer_rule__parse(a, &c->rules[c->nr_rules]))
		return fail(e, l, "--rule '%s': not a steering rule (e.g. \"udp dport 53 -> pass\")", a);
	c->rule_text[c->nr_rules++] = a;
	return 0;
}
static int set_duration(struct fwd_config *c, const char *a, char *e, size_t l)
{
	return parse_seconds("duration", a, 0, &c->duration, e, l);
}
static int set_count(struct fwd_config *c, const char *a, char *e, size_t l)
{
	return parse_u64("count", a, 1, UINT64_MAX, &c->count, e, l);
}
static int set_interval(struct fwd_config *c, const char *a, char *e, size_t l)
{
	if (parse_seconds("interval", a, 0.1, &c->interval, e, l))
		return -1;
	return 0;
}
static int set_profile(struct fwd_config *c, const char *a, char *e, size_t l)
{
	if (!strcmp(a, "mvpp2")) {
		c->profile = FWD_PROFILE_MVPP2;
		return 0;
	}
	if (!strcmp(a, "none")) {
		c->profile = FWD_PROFILE_NONE;
		return 0;
	}
	return fail(e, l, "--profile: unknown profile '%s' (mvpp2, none)", a);
}

#define FN(fn) .kind = OPT_FN, .set = fn
#define U32(field, lo, hi) .kind = OPT_U32, .off = offsetof(struct fwd_config, field), .min = lo, .max = hi
#define POW2(field, lo, hi) .kind = OPT_POW2, .off = offsetof(struct fwd_config, field), .min = lo, .max = hi
#define BOOL(field, v) .kind = OPT_BOOL, .off = offsetof(struct fwd_config, field), .value = v

static const struct fwd_option options[] = {
	{ "interface", 'i', "IFNAME[@Q]", "a port (queue 0 by default); IFNAME@A-B or IFNAME@all: one port per queue; repeat, in order", FN(set_interface) },
	{ "mode", 'm', "MODE", "wire (-i options in pairs 1st<->2nd, 3rd<->4th; queue q <-> queue q), l2 (learning bridge), reflect (swap MACs, send back); default wire", FN(set_mode) },
	{ "workers", 'w', "N", "worker threads (default 1); ports are dealt out in order, a queue's ports to one worker", U32(workers, 1, FWD_MAX_WORKERS) },
	{ "cpus", 'c', "LIST", "pin worker k to the k-th CPU of LIST, e.g. 0,2-3", FN(set_cpus) },
	{ "batch", 'b', "N", "descriptors per burst, 1..256 (default 64)", U32(batch, 1, 256) },
	{ "rx-ring", 0, "N", "RX ring entries (power of two)", POW2(rx_ring, 64, 65536) },
	{ "tx-ring", 0, "N", "TX ring entries (power of two)", POW2(tx_ring, 64, 65536) },
	{ "fill-ring", 0, "N", "fill ring entries (power of two)", POW2(fill_ring, 64, 65536) },
	{ "comp-ring", 0, "N", "completion ring entries (power of two)", POW2(comp_ring, 64, 65536) },
	{ "chunk-size", 0, "BYTES", "UMEM chunk size, 2048..4096 (power of two unless --unaligned; default 4096)", U32(chunk_size, 2048, 4096) },
	{ "frames", 0, "N", "UMEM frames (chunks) in the shared area (default: enough for every ring)", U32(frames, 256, 1u << 22) },
	{ "unaligned", 0, NULL, "unaligned chunk mode", BOOL(unaligned, true) },
	{ "hugepages", 0, NULL, "back the UMEM with 2 MiB hugepages (needs vm.nr_hugepages)", BOOL(hugepages, true) },
	{ "zero-copy", 'z', NULL, "require zero-copy (fail where the driver has none)", FN(set_zerocopy) },
	{ "copy", 0, NULL, "force copy mode", FN(set_copy) },
	{ "no-need-wakeup", 0, NULL, "do not use the need_wakeup flag (the kernel is kicked every burst)", BOOL(need_wakeup, false) },
	{ "busy-poll", 0, "USECS", "busy polling (SO_PREFER_BUSY_POLL, SO_BUSY_POLL=USECS)", U32(busy_poll_usecs, 0, 1000000) },
	{ "busy-budget", 0, "N", "SO_BUSY_POLL_BUDGET (default: the batch size)", U32(busy_poll_budget, 1, 65535) },
	{ "multi-buffer", 0, NULL, "frames larger than a chunk as descriptor chains (XDP_USE_SG); on by default when an MTU needs it", BOOL(multi_buffer, true) },
	{ "profile", 0, "NAME", "mvpp2 (Armada 7K/8K): copy mode, 2 KiB chunks, IFNAME = all its queues, a worker per queue, MTU <= 1500", FN(set_profile) },
	{ "rule", 'r', "RULE", "steering rule, e.g. \"arp -> pass\" or \"udp dport 53 -> drop\"; repeat (sock N: the port on queue N)", FN(set_rule) },
	{ "duration", 'd', "SECS", "stop after SECS seconds", FN(set_duration) },
	{ "count", 'n', "N", "stop after N forwarded frames", FN(set_count) },
	{ "interval", 0, "SECS", "seconds between stats lines (default 1)", FN(set_interval) },
	{ "l2-aging", 0, "SECS", "l2: seconds a learned MAC address stays valid (default 300)", U32(l2_aging, 1, 86400) },
	{ "l2-size", 0, "N", "l2: MAC table slots, power of two (default 4096)", POW2(l2_size, 16, 1u << 20) },
	{ "json", 'j', NULL, "one JSON object per interval instead of the live lines", BOOL(json, true) },
	{ "quiet", 'q', NULL, "no live stats; totals on exit only", BOOL(quiet, true) },
	{ "help", 'h', NULL, "this text", FN(NULL) },
	{ "version", 'V', NULL, "print the version", FN(NULL) },
};
#define NR_OPTIONS (sizeof(options) / sizeof(options[0]))

static int apply(struct fwd_config *cfg, const struct fwd_option *o, const char *arg, char *err,
		 size_t errlen)
{
	/* Table offsets come from offsetof() of uint32_t fields, so the cast keeps alignment. */
	uint32_t *u32 = (uint32_t *)(void *)((char *)cfg + o->off);

	switch (o->kind) {
	case OPT_FN:
		return o->set(cfg, arg, err, errlen);
	case OPT_BOOL:
		*(bool *)((char *)cfg + o->off) = o->value;
		return 0;
	case OPT_U32:
	case OPT_POW2:
		if (parse_u32(o->name, arg, o->min, o->max, u32, err, errlen))
			return -1;
		if (o->kind == OPT_POW2 && !is_pow2(*u32))
			return fail(err, errlen, "--%s: %u is not a power of two", o->name, *u32);
		return 0;
	}
	return -1;
}

void fwd_config_defaults(struct fwd_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = FWD_MODE_WIRE;
	cfg->bind = FWD_BIND_AUTO;
	cfg->batch = 64;
	cfg->need_wakeup = true;
	cfg->workers = 0; /* decided after parsing: from --cpus, else 1 */
	cfg->interval = 1.0;
	cfg->l2_aging = 300;
	cfg->l2_size = 4096;
}

void fwd_usage(FILE *out, const char *prog)
{
	fprintf(out,
		"Usage: %s -i IFNAME[@Q|@A-B|@all] -i ...  [OPTIONS]\n"
		"Forward frames between AF_XDP ports that share one UMEM (no copies).\n\n",
		prog);
	for (size_t i = 0; i < NR_OPTIONS; i++) {
		const struct fwd_option *o = &options[i];
		char lhs[64];

		snprintf(lhs, sizeof(lhs), "%c%c%c --%s%s%s", o->short_name ? '-' : ' ',
			 o->short_name ? o->short_name : ' ', o->short_name ? ',' : ' ', o->name,
			 o->arg ? " " : "", o->arg ? o->arg : "");
		fprintf(out, "  %-28s %s\n", lhs, o->help);
	}
	fprintf(out, "\nExamples:\n"
		     "  %s -i veth0 -i veth1 --mode wire\n"
		     "  %s -i eth1@0 -i eth2@0 --mode l2 --cpus 2\n"
		     "  %s -i eth1@all -i eth2@all -w 4     (queue q of eth1 <-> queue q of eth2)\n"
		     "See xdp-fwd(8).\n", prog, prog, prog);
}

static int check_config(struct fwd_config *cfg, char *err, size_t errlen)
{
	if (cfg->nr_specs == 0)
		return fail(err, errlen, "no ports: give at least one -i IFNAME[@QUEUE] (see --help)");
	if (cfg->bind == FWD_BIND_ZEROCOPY && cfg->profile == FWD_PROFILE_MVPP2)
		return fail(err, errlen, "--zero-copy with --profile mvpp2: mvpp2 has no AF_XDP zero-copy");
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
				return fail(err, errlen, "port %s@%u is given twice (-i number %u and %u)",
					    cfg->ports[i].ifname, cfg->ports[i].queue, cfg->ports[j].spec + 1,
					    cfg->ports[i].spec + 1);
	if (cfg->mode == FWD_MODE_L2 && count_interfaces(cfg) < 2)
		return fail(err, errlen, "--mode l2 needs at least 2 interfaces");
	if (cfg->chunk_size && !cfg->unaligned && !is_pow2(cfg->chunk_size))
		return fail(err, errlen, "--chunk-size %u: aligned mode needs a power of two (2048 or 4096); add --unaligned",
			    cfg->chunk_size);
	if (!cfg->workers)
		cfg->workers = cfg->nr_cpus ? cfg->nr_cpus :
			       cfg->profile == FWD_PROFILE_MVPP2 && cfg->queue_ranges ? /* one per queue */
			       (cfg->nr_groups < FWD_MAX_WORKERS ? cfg->nr_groups : FWD_MAX_WORKERS) : 1;
	if (cfg->nr_cpus && cfg->nr_cpus < cfg->workers)
		return fail(err, errlen, "--cpus lists %u CPUs for %u workers", cfg->nr_cpus, cfg->workers);
	if (cfg->workers > cfg->nr_groups)
		cfg->workers = cfg->nr_groups; /* a worker without a port would only spin */
	return 0;
}

int fwd_parse_args(struct fwd_config *cfg, int argc, char **argv, char *err, size_t errlen)
{
	struct option longopts[NR_OPTIONS + 1];
	char shortopts[2 * NR_OPTIONS + 2];
	size_t ns = 0;
	int c, idx;

	fwd_config_defaults(cfg);
	shortopts[ns++] = ':'; /* report a missing argument as ':' */
	for (size_t i = 0; i < NR_OPTIONS; i++) {
		longopts[i] = (struct option){ options[i].name, options[i].arg ? required_argument : no_argument,
					       NULL, options[i].short_name ? options[i].short_name : 256 + (int)i };
		if (options[i].short_name) {
			shortopts[ns++] = (char)options[i].short_name;
			if (options[i].arg)
				shortopts[ns++] = ':';
		}
	}
	longopts[NR_OPTIONS] = (struct option){ 0 };
	shortopts[ns] = '\0';

	optind = 0; /* GNU: full re-initialisation, so the parser can run more than once */
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, &idx)) != -1) {
		const struct fwd_option *o = NULL;

		if (c == '?')
			return fail(err, errlen, "unknown option '%s' (see --help)", argv[optind - 1]);
		if (c == ':')
			return fail(err, errlen, "option '%s' needs an argument (see --help)", argv[optind - 1]);
		for (size_t i = 0; i < NR_OPTIONS; i++)
			if (c == options[i].short_name || c == 256 + (int)i)
				o = &options[i];
		if (!strcmp(o->name, "help")) {
			fwd_usage(stdout, argv[0]);
			return 1;
		}
		if (!strcmp(o->name, "version")) {
			printf("xdp-fwd (libumem) %d.%d\n", UMEM_VERSION_MAJOR, UMEM_VERSION_MINOR);
			return 1;
		}
		if (apply(cfg, o, optarg, err, errlen))
			return -1;
	}
	if (optind < argc)
		return fail(err, errlen, "unexpected argument '%s' (ports are given with -i)", argv[optind]);
	return check_config(cfg, err, errlen);
}
