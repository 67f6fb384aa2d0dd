/* SPDX-License-Identifier: MIT */
/*
 * route-bench: longest-prefix match on BGP-like tables, libumem's umem_lpm4/umem_lpm6 beside
 * DPDK's rte_lpm/rte_lpm6 in the same run when DPDK is built in (README.md).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <umem/lpm.h>
#include "cli.h"
#include "cpuinfo.h"
#include "rte.h"

#define MAX_SIZES 8
#define BURST 32u

struct cfg {
	uint32_t sizes4[MAX_SIZES], nr4;
	uint32_t sizes6[MAX_SIZES], nr6;
	uint64_t seed;
	uint32_t rounds;
	uint32_t lookups;
	uint32_t dpdk_mem;
	bool json, no_dpdk;
};

/* ---- the command line ---- */

static int parse_sizes(const char *opt, const char *arg, uint32_t *out, uint32_t *nr, char *err,
		       size_t errlen)
{
	char buf[256], *save = NULL;

	*nr = 0;
	if (!strcmp(arg, "none") || !strcmp(arg, "0"))
		return 0;
	snprintf(buf, sizeof(buf), "%s", arg);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*nr == MAX_SIZES)
			return cli_fail(err, errlen, "--%s: at most %d sizes", opt, MAX_SIZES);
		if (cli_parse_u32(opt, tok, 1, 16000000, &out[(*nr)++], err, errlen))
			return -1;
	}
	return 0;
}

static int set_v4(void *c, const char *arg, char *err, size_t errlen)
{
	struct cfg *cfg = c;

	return parse_sizes("ipv4", arg, cfg->sizes4, &cfg->nr4, err, errlen);
}

static int set_v6(void *c, const char *arg, char *err, size_t errlen)
{
	struct cfg *cfg = c;

	return parse_sizes("ipv6", arg, cfg->sizes6, &cfg->nr6, err, errlen);
}

static const struct cli_opt opts[] = {
	{ "ipv4", '4', "LIST", "IPv4 table sizes in prefixes, comma-separated, or none (default 1000,100000,1000000)", CLI_SET(set_v4) },
	{ "ipv6", '6', "LIST", "IPv6 table sizes in prefixes, comma-separated, or none (default 250000)", CLI_SET(set_v6) },
	{ "seed", 0, "N", "seed of the tables and the addresses (default 1): the same seed, the same tables", CLI_U64_AT(struct cfg, seed, 0, UINT64_MAX) },
	{ "rounds", 0, "N", "timed rounds per measurement, alternated between the systems; medians (default 5)", CLI_U32_AT(struct cfg, rounds, 1, 1000) },
	{ "lookups", 0, "N", "addresses per round and kind, a multiple of 32 (default 1048576)", CLI_U32_AT(struct cfg, lookups, 32, 1u << 26) },
	{ "no-dpdk", 0, NULL, "measure libumem only, even when the rte_lpm side is built in", CLI_FLAG_AT(struct cfg, no_dpdk, true) },
	{ "dpdk-mem", 0, "MIB", "memory for DPDK's EAL, no hugepages (default 2048)", CLI_U32_AT(struct cfg, dpdk_mem, 64, 1u << 20) },
	{ "json", 'j', NULL, "print JSON: {\"cpu\",\"tables\":[{\"family\",\"prefixes\",\"systems\":[...]}]}", CLI_FLAG_AT(struct cfg, json, true) },
};

static void more_help(FILE *f)
{
	fprintf(f, "Measured per table: load (every prefix added to an empty table), memory, and ns\n"
		   "per lookup for random addresses and for addresses inside the table's prefixes,\n"
		   "one lookup at a time and in bulks of 32.\n"
		   "Examples:\n"
		   "  route-bench                       the default tables, text\n"
		   "  route-bench -4 1000000 -6 none -j one table, JSON\n");
#ifdef ROUTE_BENCH_DPDK
	fprintf(f, "rte_lpm/rte_lpm6: built in (EAL without hugepages; --no-dpdk skips it).\n");
#else
	fprintf(f, "rte_lpm/rte_lpm6: not built in:\n  %s.\n", ROUTE_BENCH_DPDK_NO_WHY);
#endif
}

static const struct cli_prog cli = {
	.name = "route-bench",
	.synopsis = "[OPTIONS]",
	.summary = "Longest-prefix match benchmark: libumem's umem_lpm4 and umem_lpm6 on generated "
		   "BGP-like tables, with DPDK's rte_lpm and rte_lpm6 beside them in the same run "
		   "when DPDK is built in; alternated rounds, medians.",
	CLI_OPTS(opts),
	.more_help = more_help,
};

/* ---- helpers ---- */

static uint64_t rnd(uint64_t *s) /* xorshift64*, deterministic per seed */
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

static double clock_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* The load's CPU time too: on a shared machine the wall time includes other tasks' turns. */
static double cpu_s(void)
{
	return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n, sz);

	if (!p) {
		fprintf(stderr, "route-bench: out of memory\n");
		exit(1);
	}
	return p;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- tables: prefixes as 16 big-endian bytes (IPv4 in the first 4) ---- */

struct prefix {
	uint8_t key[16];
	uint8_t depth;
	uint32_t nh;
};

struct table {
	unsigned alen;
	struct prefix *p;
	uint32_t n;
	uint32_t groups; /* 256-entry groups a 24-8-8-... trie of it needs */
	uint32_t depth_count[129];
};

static void mask_key(uint8_t *k, unsigned alen, unsigned depth)
{
	for (unsigned i = 0; i < alen; i++) {
		unsigned bits = depth > 8 * i ? depth - 8 * i : 0;

		if (bits < 8)
			k[i] &= (uint8_t)(0xff00u >> bits);
	}
}

/* A set of (key, depth), linear probing over indexes into an array of struct prefix. */
struct pset {
	uint32_t *slot; /* index + 1, 0: empty */
	uint32_t mask;
};

static uint64_t phash(const uint8_t *k, unsigned depth)
{
	uint64_t h = 0xcbf29ce484222325ull ^ depth;

	for (unsigned i = 0; i < 16; i++)
		h = (h ^ k[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static void pset_init(struct pset *s, uint32_t n)
{
	uint32_t cap = 1024;

	while (cap < 2 * n)
		cap *= 2;
	s->slot = xcalloc(cap, sizeof(*s->slot));
	s->mask = cap - 1;
}

/* Adds p[i] unless an equal one is in; true when added. */
static bool pset_add(struct pset *s, const struct prefix *p, uint32_t i)
{
	for (uint64_t h = phash(p[i].key, p[i].depth) & s->mask;; h = (h + 1) & s->mask) {
		uint32_t j = s->slot[h];

		if (!j) {
			s->slot[h] = i + 1;
			return true;
		}
		if (p[j - 1].depth == p[i].depth && !memcmp(p[j - 1].key, p[i].key, 16))
			return false;
	}
}

/* Weights by depth, in the shape of the public Internet table (CIDR Report and RIPE RIS
 * prefix-length distributions): IPv4 about 60 % /24, the rest mostly /16../23, a few
 * longer ones (a router's own and customer routes); IPv6 mostly /48, then /32, /44, /40, /36,
 * /29. */
static const uint32_t w4[33] = {
	[8] = 2, [9] = 2, [10] = 5, [11] = 10, [12] = 25, [13] = 45, [14] = 90, [15] = 160,
	[16] = 1300, [17] = 750, [18] = 1250, [19] = 2400, [20] = 3800, [21] = 4300,
	[22] = 11000, [23] = 9500, [24] = 60000, [25] = 120, [26] = 110, [27] = 90, [28] = 80,
	[29] = 80, [30] = 70, [31] = 20, [32] = 60,
};
static const uint32_t w6[65] = {
	[28] = 10, [29] = 250, [30] = 80, [31] = 60, [32] = 1200, [33] = 150, [34] = 120,
	[35] = 80, [36] = 400, [37] = 80, [38] = 100, [39] = 80, [40] = 600, [41] = 60,
	[42] = 100, [43] = 50, [44] = 700, [45] = 120, [46] = 180, [47] = 200, [48] = 4300,
	[49] = 20, [50] = 20, [52] = 40, [56] = 70, [60] = 30, [64] = 70,
};

static unsigned pick_depth(uint64_t *s, const uint32_t *w, unsigned max)
{
	uint64_t total = 0, r;

	for (unsigned d = 0; d <= max; d++)
		total += w[d];
	r = rnd(s) % total;
	for (unsigned d = 0; d <= max; d++) {
		if (r < w[d])
			return d;
		r -= w[d];
	}
	return max;
}

static int cmp_u8(const void *a, const void *b)
{
	return (int)*(const uint8_t *)a - (int)*(const uint8_t *)b;
}

/*
 * n distinct prefixes. Shorter ones first, so a longer one can be a more-specific of one
 * already made (a third of them are, as deaggregated announcements are); IPv6 ones longer
 * than /32 mostly (85 %) sit under a /28../32 allocation, near its start, as end sites' /48s
 * do. Loaded in a shuffled
 * order. IPv4 addresses come from 1.0.0.0-223.255.255.255; IPv6 from 2001::/16-2c0f::/16.
 */
static void table_make(struct table *t, unsigned alen, uint32_t n, uint64_t seed)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ull + alen;
	uint32_t nh_mask = alen == 4 ? UMEM_LPM_NH_MAX : (1u << 20) - 1; /* rte_lpm6: 21 bits */
	uint8_t *depths = xcalloc(n, 1);
	struct pset set;
	uint32_t made = 0, alloc_end = 0; /* IPv6: [0, alloc_end) are /28../32 */

	memset(t, 0, sizeof(*t));
	t->alen = alen;
	t->p = xcalloc(n, sizeof(*t->p));
	pset_init(&set, n);
	for (uint32_t i = 0; i < n; i++)
		depths[i] = (uint8_t)pick_depth(&s, alen == 4 ? w4 : w6, alen == 4 ? 32 : 64);
	qsort(depths, n, 1, cmp_u8);
	while (made < n) {
		struct prefix *p = &t->p[made];
		unsigned d = depths[made];
		uint64_t r = rnd(&s);

		for (unsigned i = 0; i < 16; i++)
			p->key[i] = i < alen ? (uint8_t)rnd(&s) : 0;
		if (alen == 4) {
			p->key[0] = (uint8_t)(1 + r % 223);
		} else {
			uint32_t top = 0x2001 + (uint32_t)(r % 0xc0f);

			p->key[0] = (uint8_t)(top >> 8);
			p->key[1] = (uint8_t)top;
		}
		/* A more-specific of an earlier, shorter prefix. */
		bool under = alen == 4 ? (r >> 32) % 3 == 0 : d > 32 && (r >> 32) % 20 < 17;
		const struct prefix *parent = NULL;

		if (under && made) {
			uint32_t lim = alen == 16 && alloc_end ? alloc_end : made;

			parent = &t->p[(rnd(&s) >> 8) % lim];
			if (parent->depth >= d)
				parent = NULL;
		}
		if (parent) {
			for (unsigned b = 0; b < parent->depth; b++) {
				uint8_t m = (uint8_t)(0x80u >> (b % 8));

				p->key[b / 8] = (uint8_t)((p->key[b / 8] & ~m) | (parent->key[b / 8] & m));
			}
			/* IPv6: an allocation's assignments are made in order from its start, so
			 * its /48s share /40s: of the bits above /40, only the last 4 vary. */
			for (unsigned b = parent->depth; alen == 16 && b + 4 < 40; b++)
				p->key[b / 8] &= (uint8_t)~(0x80u >> (b % 8));
		}
		mask_key(p->key, alen, d);
		p->depth = (uint8_t)d;
		p->nh = (uint32_t)(rnd(&s) >> 16) & nh_mask;
		if (!pset_add(&set, t->p, made))
			continue; /* a duplicate: draw again */
		made++;
		if (alen == 16 && d <= 32)
			alloc_end = made;
	}
	free(set.slot);
	free(depths);
	for (uint32_t i = n; i > 1; i--) { /* Fisher-Yates */
		uint32_t j = (uint32_t)(rnd(&s) % i);
		struct prefix tmp = t->p[i - 1];

		t->p[i - 1] = t->p[j];
		t->p[j] = tmp;
	}
	t->n = n;
	for (uint32_t i = 0; i < n; i++)
		t->depth_count[t->p[i].depth]++;
	/* The groups: distinct (level, first 24 + 8 (level - 1) bits) over the prefixes, for
	 * sizing rte_lpm's and rte_lpm6's second-level tables (allocated whole at creation). */
	struct prefix *tmp = xcalloc(n, sizeof(*tmp));
	uint64_t groups = 0;

	for (unsigned level = 1; 24 + 8 * (level - 1) < alen * 8; level++) {
		unsigned s_bits = 24 + 8 * (level - 1);
		uint32_t m = 0;

		pset_init(&set, n);
		for (uint32_t i = 0; i < n; i++) {
			if (t->p[i].depth <= s_bits)
				continue;
			tmp[m] = t->p[i];
			mask_key(tmp[m].key, alen, s_bits);
			tmp[m].depth = (uint8_t)level;
			m += pset_add(&set, tmp, m);
		}
		free(set.slot);
		groups += m;
	}
	free(tmp);
	t->groups = (uint32_t)groups;
}


/* ---- the systems ---- */

enum kind { RANDOM, RANDOM_BULK, TABLE, TABLE_BULK, NR_KINDS };
static const char *const kind_name[NR_KINDS] = { "random", "random_bulk32", "table", "table_bulk32" };

struct sys {
	const char *name;
	void *t;
	double load_s, load_cpu_s;
	size_t bytes;
	uint64_t (*single)(const void *t, const void *addrs, size_t n);
	uint64_t (*bulk)(const void *t, const void *addrs, size_t n);
	void (*results)(const void *t, const void *addrs, uint32_t *nh, size_t n);
	void (*destroy)(void *t);
	double ns[NR_KINDS];
};

static volatile uint64_t sink; /* the lookups' results go somewhere */

static uint64_t u4_single(const void *t, const void *addrs, size_t n)
{
	const uint32_t *a = addrs;
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++) {
		uint32_t nh;

		if (!umem_lpm4__lookup(t, a[i], &nh))
			sum += nh;
	}
	return sum;
}

static uint64_t u4_bulk(const void *t, const void *addrs, size_t n)
{
	const uint32_t *a = addrs;
	uint32_t nh[BURST];
	uint64_t sum = 0;

	for (size_t i = 0; i + BURST <= n; i += BURST) {
		umem_lpm4__lookup_bulk(t, a + i, nh, BURST);
		for (unsigned k = 0; k < BURST; k++)
			sum += nh[k] & UMEM_LPM_NH_MAX; /* as rte.c sums: the same work after the call */
	}
	return sum;
}

static void u4_results(const void *t, const void *addrs, uint32_t *nh, size_t n)
{
	umem_lpm4__lookup_bulk(t, addrs, nh, (uint32_t)n);
}

static void u4_destroy(void *t)
{
	umem_lpm4__destroy(t);
}

static uint64_t u6_single(const void *t, const void *addrs, size_t n)
{
	const uint8_t(*a)[16] = addrs;
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++) {
		uint32_t nh;

		if (!umem_lpm6__lookup(t, a[i], &nh))
			sum += nh;
	}
	return sum;
}

static uint64_t u6_bulk(const void *t, const void *addrs, size_t n)
{
	const uint8_t(*a)[16] = addrs;
	uint32_t nh[BURST];
	uint64_t sum = 0;

	for (size_t i = 0; i + BURST <= n; i += BURST) {
		umem_lpm6__lookup_bulk(t, a + i, nh, BURST);
		for (unsigned k = 0; k < BURST; k++)
			sum += nh[k] & UMEM_LPM_NH_MAX;
	}
	return sum;
}

static void u6_results(const void *t, const void *addrs, uint32_t *nh, size_t n)
{
	umem_lpm6__lookup_bulk(t, addrs, nh, (uint32_t)n);
}

static void u6_destroy(void *t)
{
	umem_lpm6__destroy(t);
}

static uint32_t be32(const uint8_t *k)
{
	return (uint32_t)k[0] << 24 | (uint32_t)k[1] << 16 | (uint32_t)k[2] << 8 | k[3];
}

/* Every prefix into an empty umem table; false (said) on an error. */
static bool load_umem(struct sys *s, const struct table *t)
{
	double t0 = now_s(), c0 = cpu_s();
	int err = 0;

	if (t->alen == 4) {
		struct umem_lpm4_opts o = { .sz = sizeof(o) };
		struct umem_lpm4 *l;

		/* Groups are mapped lazily: room for the table, whatever it needs. */
		o.tbl8_groups = t->groups + t->groups / 4 > UMEM_LPM4_GROUPS_DEFAULT ? t->groups + t->groups / 4 : 0;
		l = umem_lpm4__create(&o);
		if (!l) {
			fprintf(stderr, "route-bench: umem_lpm4__create: %s\n", strerror(errno));
			return false;
		}
		for (uint32_t i = 0; i < t->n && !err; i++)
			err = umem_lpm4__add(l, be32(t->p[i].key), t->p[i].depth, t->p[i].nh);
		*s = (struct sys){ .name = "umem_lpm4", .t = l, .bytes = umem_lpm4__memory(l),
				   .single = u4_single, .bulk = u4_bulk, .results = u4_results,
				   .destroy = u4_destroy };
	} else {
		struct umem_lpm6_opts o = { .sz = sizeof(o) };
		struct umem_lpm6 *l;

		o.groups = t->groups + t->groups / 4 > UMEM_LPM6_GROUPS_DEFAULT ? t->groups + t->groups / 4 : 0;
		l = umem_lpm6__create(&o);
		if (!l) {
			fprintf(stderr, "route-bench: umem_lpm6__create: %s\n", strerror(errno));
			return false;
		}
		for (uint32_t i = 0; i < t->n && !err; i++)
			err = umem_lpm6__add(l, t->p[i].key, t->p[i].depth, t->p[i].nh);
		*s = (struct sys){ .name = "umem_lpm6", .t = l, .bytes = umem_lpm6__memory(l),
				   .single = u6_single, .bulk = u6_bulk, .results = u6_results,
				   .destroy = u6_destroy };
	}
	s->load_s = now_s() - t0;
	s->load_cpu_s = cpu_s() - c0;
	if (err) {
		fprintf(stderr, "route-bench: %s: add: %s\n", s->name, strerror(-err));
		s->destroy(s->t);
		return false;
	}
	return true;
}

#ifdef ROUTE_BENCH_DPDK
static uint64_t r4_single(const void *t, const void *a, size_t n) { return rte4_lookup(t, a, n); }
static uint64_t r4_bulk(const void *t, const void *a, size_t n) { return rte4_lookup_bulk(t, a, n); }
static void r4_results(const void *t, const void *a, uint32_t *nh, size_t n) { rte4_results(t, a, nh, n); }
static uint64_t r6_single(const void *t, const void *a, size_t n) { return rte6_lookup(t, a, n); }
static uint64_t r6_bulk(const void *t, const void *a, size_t n) { return rte6_lookup_bulk(t, a, n); }
static void r6_results(const void *t, const void *a, uint32_t *nh, size_t n) { rte6_results(t, a, nh, n); }

static bool load_rte(struct sys *s, const struct table *t)
{
	/* Second-level groups are allocated whole at creation: what the table needs, and a
	 * quarter more, as umem's are sized above. */
	uint32_t tbl8s = t->groups + t->groups / 4 + 256;
	double t0 = now_s(), c0 = cpu_s();
	int err = 0;

	if (t->alen == 4) {
		*s = (struct sys){ .name = "rte_lpm", .single = r4_single, .bulk = r4_bulk,
				   .results = r4_results, .destroy = rte4_free };
		s->t = rte4_create(t->n, tbl8s, &s->bytes);
		for (uint32_t i = 0; s->t && i < t->n && !err; i++)
			err = rte4_add(s->t, be32(t->p[i].key), t->p[i].depth, t->p[i].nh);
	} else {
		*s = (struct sys){ .name = "rte_lpm6", .single = r6_single, .bulk = r6_bulk,
				   .results = r6_results, .destroy = rte6_free };
		s->t = rte6_create(t->n, tbl8s, &s->bytes);
		for (uint32_t i = 0; s->t && i < t->n && !err; i++)
			err = rte6_add(s->t, t->p[i].key, t->p[i].depth, t->p[i].nh);
	}
	s->load_s = now_s() - t0;
	s->load_cpu_s = cpu_s() - c0;
	if (!s->t)
		return false;
	if (err) {
		fprintf(stderr, "route-bench: %s: add: %s\n", s->name, strerror(-err));
		s->destroy(s->t);
		return false;
	}
	return true;
}
#endif

/* ---- one table ---- */

struct result {
	unsigned family;
	uint32_t prefixes, groups;
	double share24, longer; /* IPv4: share of /24s and of longer prefixes; IPv6: /48, /32 */
	struct sys sys[2];
	unsigned nr_sys;
	uint64_t checked, mismatches;
};

/* Random addresses: IPv4 uniform over the whole space; IPv6 over 2001::/16-2c0f::/16 (where
 * the table is: uniform IPv6 addresses would all miss in the first load). Table addresses: a
 * random prefix's, host bits random. */
static void *make_addrs(const struct table *t, uint32_t n, bool in_table, uint64_t seed)
{
	uint64_t s = seed * 0xd1b54a32d192ed03ull + (in_table ? 2 : 1) + t->alen;
	uint8_t(*a6)[16] = t->alen == 16 ? xcalloc(n, 16) : NULL;
	uint32_t *a4 = t->alen == 4 ? xcalloc(n, 4) : NULL;

	for (uint32_t i = 0; i < n; i++) {
		uint8_t k[16];

		for (unsigned b = 0; b < 16; b++)
			k[b] = (uint8_t)(rnd(&s) >> 24);
		if (in_table) {
			const struct prefix *p = &t->p[(rnd(&s) >> 16) % t->n];

			for (unsigned b = 0; b < p->depth; b++) {
				uint8_t m = (uint8_t)(0x80u >> (b % 8));

				k[b / 8] = (uint8_t)((k[b / 8] & ~m) | (p->key[b / 8] & m));
			}
		} else if (t->alen == 16) {
			uint32_t top = 0x2001 + (uint32_t)((rnd(&s) >> 20) % 0xc0f);

			k[0] = (uint8_t)(top >> 8);
			k[1] = (uint8_t)top;
		}
		if (a4)
			a4[i] = be32(k);
		else
			memcpy(a6[i], k, 16);
	}
	return a4 ? (void *)a4 : (void *)a6;
}

static void run_table(const struct cfg *cfg, unsigned family, uint32_t n, struct result *res, bool dpdk)
{
	struct table t;
	void *addrs[2];
	double *samples[2][NR_KINDS];
	uint32_t L = cfg->lookups;

	memset(res, 0, sizeof(*res));
	table_make(&t, family == 4 ? 4 : 16, n, cfg->seed);
	res->family = family;
	res->prefixes = n;
	res->groups = t.groups;
	res->share24 = (double)t.depth_count[family == 4 ? 24 : 48] / n;
	if (family == 4) {
		uint32_t longer = 0;

		for (unsigned d = 25; d <= 32; d++)
			longer += t.depth_count[d];
		res->longer = (double)longer / n;
	} else {
		res->longer = (double)t.depth_count[32] / n;
	}
	if (!load_umem(&res->sys[res->nr_sys], &t))
		exit(1);
	res->nr_sys++;
#ifdef ROUTE_BENCH_DPDK
	if (dpdk && load_rte(&res->sys[res->nr_sys], &t))
		res->nr_sys++;
#else
	(void)dpdk;
#endif
	addrs[0] = make_addrs(&t, L, false, cfg->seed);
	addrs[1] = make_addrs(&t, L, true, cfg->seed);

	/* The systems agree on every address (a wrong table measures nothing). */
	if (res->nr_sys == 2) {
		uint32_t *a = xcalloc(L, 4), *b = xcalloc(L, 4);

		for (unsigned set = 0; set < 2; set++) {
			res->sys[0].results(res->sys[0].t, addrs[set], a, L);
			res->sys[1].results(res->sys[1].t, addrs[set], b, L);
			for (uint32_t i = 0; i < L; i++) {
				if (a[i] == b[i])
					continue;
				if (!res->mismatches)
					fprintf(stderr, "route-bench: IPv%u /%u: address %u of the %s set: %s %u, %s %u\n",
						family, n, i, set ? "table" : "random", res->sys[0].name, a[i],
						res->sys[1].name, b[i]);
				res->mismatches++;
			}
			res->checked += L;
		}
		free(a);
		free(b);
	}

	for (unsigned s = 0; s < res->nr_sys; s++)
		for (unsigned k = 0; k < NR_KINDS; k++)
			samples[s][k] = xcalloc(cfg->rounds, sizeof(double));
	/* One untimed pass each, then the rounds: kinds in turn, the systems alternating which
	 * goes first. */
	for (unsigned s = 0; s < res->nr_sys; s++)
		for (unsigned k = 0; k < NR_KINDS; k++)
			sink += (k % 2 ? res->sys[s].bulk : res->sys[s].single)(res->sys[s].t, addrs[k / 2], L);
	for (unsigned r = 0; r < cfg->rounds; r++)
		for (unsigned k = 0; k < NR_KINDS; k++)
			for (unsigned i = 0; i < res->nr_sys; i++) {
				unsigned s = (r + k) % 2 ? res->nr_sys - 1 - i : i;
				struct sys *y = &res->sys[s];
				double t0 = now_s();

				sink += (k % 2 ? y->bulk : y->single)(y->t, addrs[k / 2], L);
				samples[s][k][r] = (now_s() - t0) * 1e9 / L;
			}
	for (unsigned s = 0; s < res->nr_sys; s++) {
		for (unsigned k = 0; k < NR_KINDS; k++) {
			res->sys[s].ns[k] = median(samples[s][k], cfg->rounds);
			free(samples[s][k]);
		}
		res->sys[s].destroy(res->sys[s].t);
		res->sys[s].t = NULL;
	}
	free(addrs[0]);
	free(addrs[1]);
	free(t.p);
}

/* ---- output ---- */

static void print_text(const struct result *r)
{
	printf("\nIPv%u, %u prefixes (%.1f %% /%u, %.1f %% %s), %u second-level groups\n", r->family,
	       r->prefixes, 100 * r->share24, r->family == 4 ? 24 : 48, 100 * r->longer,
	       r->family == 4 ? "longer than /24" : "/32", r->groups);
	printf("%-12s %9s %9s %9s %9s %9s %9s %9s\n", "system", "load s", "load cpu", "MiB", "random",
	       "rand/32", "table", "table/32");
	for (unsigned s = 0; s < r->nr_sys; s++) {
		const struct sys *y = &r->sys[s];

		printf("%-12s %9.3f %9.3f %9.1f", y->name, y->load_s, y->load_cpu_s, (double)y->bytes / (1 << 20));
		for (unsigned k = 0; k < NR_KINDS; k++)
			printf(" %9.2f", y->ns[k]);
		printf("\n");
	}
	if (r->nr_sys == 2) {
		printf("%-12s %8.3fx %8.3fx %8.2fx", "umem/rte", r->sys[0].load_s / r->sys[1].load_s,
		       r->sys[0].load_cpu_s / r->sys[1].load_cpu_s,
		       (double)r->sys[0].bytes / (double)r->sys[1].bytes);
		for (unsigned k = 0; k < NR_KINDS; k++)
			printf(" %8.2fx", r->sys[0].ns[k] / r->sys[1].ns[k]);
		printf("\nagree: %s (%llu addresses, %llu differ)\n", r->mismatches ? "NO" : "yes",
		       (unsigned long long)r->checked, (unsigned long long)r->mismatches);
	}
}

static void print_json(const struct result *res, unsigned nr, const struct cfg *cfg,
		       const struct cpu_ident *cpu, const char *no_rte)
{
	printf("{\"cpu\":{\"vendor\":\"%s\",\"family\":\"%s\",\"model\":\"%s\",\"name\":\"%s\"},",
	       cpu->vendor, cpu->family, cpu->model, cpu->name);
	printf("\"seed\":%llu,\"rounds\":%u,\"lookups\":%u,", (unsigned long long)cfg->seed,
	       cfg->rounds, cfg->lookups);
	if (no_rte)
		printf("\"rte_absent\":\"%s\",", no_rte);
	printf("\"tables\":[");
	for (unsigned i = 0; i < nr; i++) {
		const struct result *r = &res[i];

		printf("%s{\"family\":%u,\"prefixes\":%u,\"groups\":%u,\"systems\":[", i ? "," : "",
		       r->family, r->prefixes, r->groups);
		for (unsigned s = 0; s < r->nr_sys; s++) {
			const struct sys *y = &r->sys[s];

			printf("%s{\"name\":\"%s\",\"load_s\":%.6f,\"load_cpu_s\":%.6f,\"memory_bytes\":%zu,\"ns\":{",
			       s ? "," : "", y->name, y->load_s, y->load_cpu_s, y->bytes);
			for (unsigned k = 0; k < NR_KINDS; k++)
				printf("%s\"%s\":%.3f", k ? "," : "", kind_name[k], y->ns[k]);
			printf("}}");
		}
		printf("]");
		if (r->nr_sys == 2)
			printf(",\"agree\":%s,\"checked\":%llu", r->mismatches ? "false" : "true",
			       (unsigned long long)r->checked);
		printf("}");
	}
	printf("]}\n");
}

int main(int argc, char **argv)
{
	struct cfg cfg = { .sizes4 = { 1000, 100000, 1000000 }, .nr4 = 3, .sizes6 = { 250000 },
			   .nr6 = 1, .seed = 1, .rounds = 5, .lookups = 1u << 20, .dpdk_mem = 2048 };
	struct result res[2 * MAX_SIZES];
	struct cpu_ident cpu;
	const char *no_rte = NULL;
	bool dpdk = false;
	unsigned nr = 0;

	int first = cli_parse_or_exit(&cli, &cfg, argc, argv, 1);

	if (first != argc)
		cli_die(&cli, "unexpected operand '%s'", argv[first]);
	if (cfg.lookups % BURST)
		cli_die(&cli, "--lookups: %u is not a multiple of %u", cfg.lookups, BURST);
	cpu_identify(&cpu);
#ifdef ROUTE_BENCH_DPDK
	if (cfg.no_dpdk)
		no_rte = "--no-dpdk";
	else if (rte_side_start(cfg.dpdk_mem))
		no_rte = "rte_eal_init failed";
	else
		dpdk = true;
#else
	no_rte = ROUTE_BENCH_DPDK_NO_WHY;
#endif
	if (!cfg.json) {
		printf("route-bench: seed %llu, %u rounds x %u lookups per kind, alternated, medians, ns per lookup\n",
		       (unsigned long long)cfg.seed, cfg.rounds, cfg.lookups);
		printf("cpu: %s family %s model %s (%s)\n", cpu.vendor, cpu.family, cpu.model, cpu.name);
		if (no_rte)
			printf("rte_lpm: not measured (%s)\n", no_rte);
	}
	for (unsigned f = 0; f < 2; f++) {
		const uint32_t *sizes = f ? cfg.sizes6 : cfg.sizes4;

		for (unsigned i = 0; i < (f ? cfg.nr6 : cfg.nr4); i++) {
			run_table(&cfg, f ? 6 : 4, sizes[i], &res[nr], dpdk);
			if (!cfg.json)
				print_text(&res[nr]);
			fflush(stdout);
			nr++;
		}
	}
	if (cfg.json)
		print_json(res, nr, &cfg, &cpu, no_rte);
	for (unsigned i = 0; i < nr; i++)
		if (res[i].mismatches)
			return 1;
	return 0;
}
