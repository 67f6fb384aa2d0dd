/* SPDX-License-Identifier: MIT */
/*
 * The lookup structure (umem/lpm.h) against a naive reference (a linear scan of the prefixes)
 * on seeded random add/delete/lookup sequences, both families; the edge depths; replace; a
 * delete restoring the covering prefix; bad input; group exhaustion and reclaim.
 * The IPv4 bulk lookup, inline and exported, against single lookups (bulk4).
 *   test_lpm CASE [--seed N] [--ops N]   CASE: random4 random6 bulk4 edges4 edges6 errors reclaim
 */
#include <stdbool.h>
#include <umem/lpm.h>
#include "testutil.h"

/* ---- the reference: prefixes as big-endian bytes ---- */

struct ref_prefix {
	uint8_t key[16];
	uint8_t depth;
	uint32_t nh;
};

struct ref {
	struct ref_prefix *p;
	size_t n, cap;
	unsigned alen;
};

static bool covers(const uint8_t *key, unsigned depth, const uint8_t *addr)
{
	unsigned whole = depth / 8, rest = depth % 8;

	if (memcmp(key, addr, whole))
		return false;
	return !rest || !((key[whole] ^ addr[whole]) & (0xff00u >> rest));
}

static void mask(uint8_t *key, unsigned alen, unsigned depth)
{
	for (unsigned i = depth; i < alen * 8; i++)
		key[i / 8] &= (uint8_t)~(1u << (7 - i % 8));
}

static struct ref_prefix *ref_find(struct ref *r, const uint8_t *key, unsigned depth)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->p[i].depth == depth && !memcmp(r->p[i].key, key, r->alen))
			return &r->p[i];
	return NULL;
}

static void ref_add(struct ref *r, const uint8_t *addr, unsigned depth, uint32_t nh)
{
	uint8_t key[16] = { 0 };

	memcpy(key, addr, r->alen);
	mask(key, r->alen, depth);
	struct ref_prefix *p = ref_find(r, key, depth);

	if (!p) {
		if (r->n == r->cap) {
			r->cap = r->cap ? 2 * r->cap : 256;
			r->p = realloc(r->p, r->cap * sizeof(*r->p));
			CHECK(r->p, "out of memory");
		}
		p = &r->p[r->n++];
		memcpy(p->key, key, 16);
		p->depth = (uint8_t)depth;
	}
	p->nh = nh;
}

static bool ref_delete(struct ref *r, const uint8_t *addr, unsigned depth)
{
	uint8_t key[16] = { 0 };

	memcpy(key, addr, r->alen);
	mask(key, r->alen, depth);
	struct ref_prefix *p = ref_find(r, key, depth);

	if (!p)
		return false;
	*p = r->p[--r->n];
	return true;
}

static uint32_t ref_lookup(const struct ref *r, const uint8_t *addr)
{
	int best = -1;
	uint32_t nh = UMEM_LPM_MISS;

	for (size_t i = 0; i < r->n; i++)
		if ((int)r->p[i].depth > best && covers(r->p[i].key, r->p[i].depth, addr)) {
			best = r->p[i].depth;
			nh = r->p[i].nh;
		}
	return nh;
}

/* ---- one interface over both families ---- */

struct table {
	unsigned alen;
	struct umem_lpm4 *v4;
	struct umem_lpm6 *v6;
};

static uint32_t be32(const uint8_t *a)
{
	return (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
}

static int t_add(struct table *t, const uint8_t *a, unsigned depth, uint32_t nh)
{
	return t->v4 ? umem_lpm4__add(t->v4, be32(a), (uint8_t)depth, nh)
		     : umem_lpm6__add(t->v6, a, (uint8_t)depth, nh);
}

static int t_delete(struct table *t, const uint8_t *a, unsigned depth)
{
	return t->v4 ? umem_lpm4__delete(t->v4, be32(a), (uint8_t)depth)
		     : umem_lpm6__delete(t->v6, a, (uint8_t)depth);
}

static uint32_t t_lookup(struct table *t, const uint8_t *a)
{
	uint32_t nh = 0xdeadbeef;
	int err = t->v4 ? umem_lpm4__lookup(t->v4, be32(a), &nh) : umem_lpm6__lookup(t->v6, a, &nh);

	CHECK(err == 0 || err == -ENOENT, "lookup returned %d", err);
	if (err)
		return UMEM_LPM_MISS;
	CHECK(nh <= UMEM_LPM_NH_MAX, "next hop %u out of range", nh);
	return nh;
}

static uint32_t t_count(struct table *t)
{
	return t->v4 ? umem_lpm4__count(t->v4) : umem_lpm6__count(t->v6);
}

static void t_reclaim(struct table *t)
{
	if (t->v4)
		umem_lpm4__reclaim(t->v4);
	else
		umem_lpm6__reclaim(t->v6);
}

static struct table t_create(unsigned alen, uint32_t groups, uint32_t max_prefixes)
{
	struct table t = { .alen = alen };

	if (alen == 4) {
		struct umem_lpm4_opts o = { .sz = sizeof(o), .tbl8_groups = groups, .max_prefixes = max_prefixes };

		t.v4 = umem_lpm4__create(&o);
		CHECK(t.v4, "umem_lpm4__create: %s", strerror(errno));
	} else {
		struct umem_lpm6_opts o = { .sz = sizeof(o), .groups = groups, .max_prefixes = max_prefixes };

		t.v6 = umem_lpm6__create(&o);
		CHECK(t.v6, "umem_lpm6__create: %s", strerror(errno));
	}
	return t;
}

static void t_destroy(struct table *t)
{
	umem_lpm4__destroy(t->v4);
	umem_lpm6__destroy(t->v6);
}

static void fmt(char *buf, size_t len, const uint8_t *a, unsigned alen)
{
	size_t o = 0;

	for (unsigned i = 0; i < alen && o + 4 < len; i++)
		o += (size_t)snprintf(buf + o, len - o, i ? ".%u" : "%u", a[i]);
}

/* The table and the reference agree at a, single and in a bulk of n copies of nearby ones. */
static void agree(struct table *t, const struct ref *r, const uint8_t *a)
{
	uint32_t want = ref_lookup(r, a), got = t_lookup(t, a);
	char buf[80];

	fmt(buf, sizeof(buf), a, t->alen);
	CHECK(got == want, "lookup %s: %u, the reference says %u", buf, got, want);
}

static void agree_bulk(struct table *t, const struct ref *r, uint8_t (*addrs)[16], uint32_t n)
{
	uint32_t got[64], v4[64];

	CHECK(n <= 64, "bulk too large");
	if (t->v4) {
		for (uint32_t i = 0; i < n; i++)
			v4[i] = be32(addrs[i]);
		umem_lpm4__lookup_bulk(t->v4, v4, got, n);
	} else {
		umem_lpm6__lookup_bulk(t->v6, (const uint8_t (*)[16])addrs, got, n);
	}
	for (uint32_t i = 0; i < n; i++)
		CHECK(got[i] == ref_lookup(r, addrs[i]), "bulk lookup %u: %u, the reference says %u", i,
		      got[i], ref_lookup(r, addrs[i]));
}

/* ---- the IPv4 bulk lookup against single lookups ---- */

/* Single lookups, as a bulk reports them. */
static void single4(const struct umem_lpm4 *l, const uint32_t *a, uint32_t *nh, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (umem_lpm4__lookup(l, a[i], &nh[i]))
			nh[i] = UMEM_LPM_MISS;
}

/* Every way the bulk is reached agrees with single lookups over addrs: the inline one for the
 * constant 32 (as the router calls it), for n unknown at compile time, and the library's
 * exported copy through its address. Writes exactly n results. */
static void bulk_agrees4(const struct umem_lpm4 *l, const uint32_t *addrs, uint32_t nr, uint64_t *seed)
{
	void (*exported)(const struct umem_lpm4 *, const uint32_t *, uint32_t *, uint32_t) =
		umem_lpm4__lookup_bulk;
	uint32_t want[128], got[128 + 1];

	for (uint32_t base = 0; base + 32 <= nr; base += 32) {
		single4(l, addrs + base, want, 32);
		umem_lpm4__lookup_bulk(l, addrs + base, got, 32);
		for (uint32_t i = 0; i < 32; i++)
			CHECK(got[i] == want[i], "bulk of 32, %08x: %u, single says %u", addrs[base + i],
			      got[i], want[i]);
	}
	for (uint32_t base = 0; base < nr;) {
		uint32_t n = 1 + (uint32_t)(test_rand(seed) % 128);

		n = n < nr - base ? n : nr - base;
		single4(l, addrs + base, want, n);
		for (unsigned way = 0; way < 2; way++) {
			got[n] = 0xdeadbeef;
			if (way)
				exported(l, addrs + base, got, n);
			else
				umem_lpm4__lookup_bulk(l, addrs + base, got, n);
			for (uint32_t i = 0; i < n; i++)
				CHECK(got[i] == want[i], "%s bulk of %u, %08x: %u, single says %u",
				      way ? "exported" : "inline", n, addrs[base + i], got[i], want[i]);
			CHECK(got[n] == 0xdeadbeef, "a bulk of %u wrote past its end", n);
		}
		base += n;
	}
}

/* A random table with every depth from /8 to /32, a quarter of them /25../32 (in groups, clustered
 * so groups fill and several prefixes share one), in a few /8s only, so random addresses miss;
 * checked at random addresses, inside the prefixes and just past them, full and after half the
 * prefixes are deleted (groups folded). The next hop carries the depth, so the test checks
 * that both the group path and misses were exercised. */
static void run_bulk4(uint64_t seed, unsigned ops)
{
	static const uint8_t regions[] = { 10, 100, 172, 203 };
	struct umem_lpm4 *l = umem_lpm4__create(NULL);
	uint32_t nr = ops < 32 ? 32 : ops / 32 * 32, np = nr / 8;
	uint32_t *pa = calloc(np, 4), *addrs = calloc(nr, 4), *nh = calloc(nr, 4);
	uint8_t *pd = calloc(np, 1);
	unsigned misses = 0, groups = 0, firsts = 0;

	CHECK(l && pa && addrs && nh && pd, "out of memory");
	for (uint32_t i = 0; i < np; i++) {
		unsigned r = (unsigned)(test_rand(&seed) % 8);

		pd[i] = (uint8_t)(r < 2 ? 25 + test_rand(&seed) % 8 : r < 5 ? 24 : 9 + test_rand(&seed) % 16);
		/* Long prefixes near each other: the first 20 bits from a small set. */
		pa[i] = (uint32_t)regions[test_rand(&seed) % 4] << 24 |
			(uint32_t)(test_rand(&seed) % 64) << 12 | (uint32_t)(test_rand(&seed) & 0xfff);
		CHECK_EQ(umem_lpm4__add(l, pa[i], pd[i], (uint32_t)pd[i] << 16 | (i & 0xffff)), 0);
	}
	for (unsigned pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < nr; i++) {
			uint32_t p = (uint32_t)(test_rand(&seed) % np), host = pd[p] < 32 ? ~0u >> pd[p] : 0;

			switch (test_rand(&seed) % 4) {
			case 0: /* anywhere */
				addrs[i] = (uint32_t)test_rand(&seed);
				break;
			case 1: /* past a prefix's last address */
				addrs[i] = (pa[p] | host) + 1;
				break;
			default: /* inside a prefix */
				addrs[i] = (pa[p] & ~host) | ((uint32_t)test_rand(&seed) & host);
			}
		}
		bulk_agrees4(l, addrs, nr, &seed);
		single4(l, addrs, nh, nr);
		for (uint32_t i = 0; i < nr; i++) {
			misses += nh[i] == UMEM_LPM_MISS;
			groups += nh[i] != UMEM_LPM_MISS && nh[i] >> 16 > 24;
			firsts += nh[i] != UMEM_LPM_MISS && nh[i] >> 16 <= 24;
		}
		for (uint32_t i = 0; i < np && !pass; i += 2) /* a prefix drawn twice: -ENOENT */
			CHECK(umem_lpm4__delete(l, pa[i], pd[i]) != -EINVAL, "delete /%u", pd[i]);
	}
	CHECK(misses > nr / 8 && groups > nr / 16 && firsts > nr / 8,
	      "the addresses exercise too little: %u misses, %u group hits, %u first-level hits of %u",
	      misses, groups, firsts, 2 * nr);
	printf("bulk4: %u addresses: %u misses, %u matches in groups (/25../32), %u in the first level\n",
	       2 * nr, misses, groups, firsts);
	free(pa);
	free(pd);
	free(addrs);
	free(nh);
	umem_lpm4__destroy(l);
}

/* ---- random sequences ---- */

#define BASES 6

/* An address near one of the bases: equal in the first `keep` bits, random after. Few bases
 * and mostly long shared heads, so prefixes nest and groups fill, empty and fold. */
static void near(uint64_t *seed, uint8_t (*bases)[16], unsigned alen, uint8_t *out)
{
	const uint8_t *b = bases[test_rand(seed) % BASES];
	unsigned bits = alen * 8;
	unsigned keep = (unsigned)(test_rand(seed) % (bits + 1));

	if (test_rand(seed) % 4)
		keep = bits - (unsigned)(test_rand(seed) % 12 % (bits + 1)); /* mostly close */
	for (unsigned i = 0; i < alen; i++)
		out[i] = (uint8_t)test_rand(seed);
	for (unsigned i = 0; i < keep; i++) {
		unsigned byte = i / 8, bit = 7 - i % 8;

		out[byte] = (uint8_t)((out[byte] & ~(1u << bit)) | (b[byte] & (1u << bit)));
	}
}

/* Depths weighted to the level edges. Short prefixes rewrite up to 2^24 first-level entries
 * each (as in any DIR-24-8), so depths under 8 are rare here; the edge cases cover them. */
static unsigned random_depth(uint64_t *seed, unsigned alen)
{
	static const unsigned v4[] = { 8, 16, 20, 23, 24, 24, 24, 24, 25, 26, 28, 30, 31, 32, 32, 32 };
	static const unsigned v6[] = { 8, 24, 25, 29, 32, 32, 40, 44, 48, 48, 48, 56, 64, 120, 127, 128 };
	unsigned d;

	if (test_rand(seed) % 256 == 0)
		return (unsigned)(test_rand(seed) % 8);
	if (test_rand(seed) % 3)
		return alen == 4 ? v4[test_rand(seed) % 16] : v6[test_rand(seed) % 16];
	d = (unsigned)(test_rand(seed) % (alen * 8 + 1));
	return d < 8 ? d + 8 : d;
}

static void run_random(unsigned alen, uint64_t seed, unsigned ops)
{
	struct table t = t_create(alen, 0, 0);
	struct ref r = { .alen = alen };
	uint8_t bases[BASES][16], a[16], bulk[64][16];
	unsigned adds = 0, dels = 0, misses = 0, lookups = 0;

	for (unsigned i = 0; i < BASES; i++)
		for (unsigned j = 0; j < 16; j++)
			bases[i][j] = (uint8_t)test_rand(&seed);
	bases[1][0] = bases[0][0]; /* two bases share their first level */
	bases[1][1] = bases[0][1];
	bases[1][2] = bases[0][2];

	for (unsigned op = 0; op < ops; op++) {
		unsigned what = (unsigned)(test_rand(&seed) % 100);

		near(&seed, bases, alen, a);
		if (r.n > 1500 && what < 40)
			what += 30; /* a bounded table: the reference is a linear scan */
		if (what < 40) {
			unsigned depth = random_depth(&seed, alen);
			uint32_t nh = test_rand(&seed) % 8 ? (uint32_t)(test_rand(&seed) & UMEM_LPM_NH_MAX)
							    : UMEM_LPM_NH_MAX;

			CHECK_EQ(t_add(&t, a, depth, nh), 0);
			ref_add(&r, a, depth, nh);
			adds++;
		} else if (what < 70) {
			unsigned depth;

			if (r.n && test_rand(&seed) % 2) { /* an existing prefix, given with host bits set */
				struct ref_prefix *p = &r.p[test_rand(&seed) % r.n];

				depth = p->depth;
				for (unsigned i = 0; i < alen; i++)
					a[i] = (uint8_t)(p->key[i] | (depth < 8 * (i + 1) ? test_rand(&seed) & (0xffu >> (depth > 8 * i ? depth - 8 * i : 0)) : 0));
			} else {
				depth = random_depth(&seed, alen);
			}
			bool had = ref_delete(&r, a, depth);

			CHECK_EQ(t_delete(&t, a, depth), had ? 0 : -ENOENT);
			dels += had;
			misses += !had;
		} else {
			for (unsigned i = 0; i < 8; i++) {
				near(&seed, bases, alen, a);
				agree(&t, &r, a);
			}
			/* Bursts of 32 and partial ones on either side of the bulk's burst size. */
			uint32_t nb = test_rand(&seed) % 2 ? 32 : 1 + (uint32_t)(test_rand(&seed) % 64);

			for (unsigned i = 0; i < nb; i++)
				near(&seed, bases, alen, bulk[i]);
			agree_bulk(&t, &r, bulk, nb);
			lookups += 8 + nb;
		}
		CHECK_EQ(t_count(&t), r.n);
		if (op % 500 == 0)
			t_reclaim(&t);
	}
	/* Every prefix's own first and last address and the address past it. */
	for (size_t i = 0; i < r.n; i++) {
		memcpy(a, r.p[i].key, 16);
		agree(&t, &r, a);
		for (unsigned b = r.p[i].depth; b < alen * 8; b++)
			a[b / 8] |= (uint8_t)(1u << (7 - b % 8));
		agree(&t, &r, a);
		for (int j = (int)alen - 1; j >= 0 && ++a[j] == 0; j--)
			;
		agree(&t, &r, a);
	}
	/* Empty it in random order: every group folds back (checked by refilling them all). */
	while (r.n) {
		struct ref_prefix p = r.p[test_rand(&seed) % r.n];

		CHECK_EQ(t_delete(&t, p.key, p.depth), 0);
		CHECK(ref_delete(&r, p.key, p.depth), "reference lost a prefix");
		if (r.n % 64 == 0) {
			near(&seed, bases, alen, a);
			agree(&t, &r, a);
		}
	}
	for (unsigned i = 0; i < 1000; i++) {
		near(&seed, bases, alen, a);
		CHECK_EQ(t_lookup(&t, a), UMEM_LPM_MISS);
	}
	printf("random%s: %u adds, %u deletes, %u deletes of absent prefixes, %u lookups agree\n",
	       alen == 4 ? "4" : "6", adds, dels, misses, lookups);
	t_destroy(&t);
	free(r.p);
}

/* ---- edges ---- */

static void addr4(uint8_t *a, uint32_t v)
{
	a[0] = (uint8_t)(v >> 24);
	a[1] = (uint8_t)(v >> 16);
	a[2] = (uint8_t)(v >> 8);
	a[3] = (uint8_t)v;
}

/* Nested prefixes of the given depths on one address: every lookup agrees after each add and
 * after each delete (in three orders), and a replace changes only its prefix. */
static void run_edges(unsigned alen, const unsigned *depths, unsigned nd, const uint8_t *base)
{
	for (unsigned o = 0; o < 3; o++) {
		struct table t = t_create(alen, 0, 0);
		struct ref r = { .alen = alen };
		uint8_t probes[64][16];
		unsigned np = 0;

		/* Probes: the base, and the base with each depth's first following bit flipped,
		 * and with every bit after it set; and the all-zero and all-ones addresses. */
		memset(probes[np++], 0, 16);
		memset(probes[np++], 0xff, 16);
		memcpy(probes[np++], base, 16);
		for (unsigned i = 0; i < nd; i++) {
			unsigned d = depths[i];

			if (d < alen * 8) {
				memcpy(probes[np], base, 16);
				probes[np][d / 8] ^= (uint8_t)(1u << (7 - d % 8));
				np++;
				memcpy(probes[np], base, 16);
				for (unsigned b = d; b < alen * 8; b++)
					probes[np][b / 8] |= (uint8_t)(1u << (7 - b % 8));
				np++;
			}
			if (d > 0) {
				memcpy(probes[np], base, 16);
				probes[np][(d - 1) / 8] ^= (uint8_t)(1u << (7 - (d - 1) % 8));
				np++;
			}
		}
		CHECK(np <= 64, "too many probes");
		/* Order 0: shortest first; 1: longest first; 2: from the middle out. */
		for (unsigned k = 0; k < nd; k++) {
			unsigned i = o == 0 ? k : o == 1 ? nd - 1 - k : (nd / 2 + k) % nd;

			CHECK_EQ(t_add(&t, base, depths[i], 100 + depths[i]), 0);
			ref_add(&r, base, depths[i], 100 + depths[i]);
			for (unsigned p = 0; p < np; p++)
				agree(&t, &r, probes[p]);
		}
		/* Replace: the same prefix (host bits set differently) gets a new next hop. */
		for (unsigned i = 0; i < nd; i++) {
			uint8_t b[16];

			memcpy(b, base, 16);
			if (depths[i] < alen * 8)
				b[alen - 1] ^= 1;
			CHECK_EQ(t_add(&t, depths[i] < alen * 8 ? b : base, depths[i], 200 + depths[i]), 0);
			ref_add(&r, base, depths[i], 200 + depths[i]);
			for (unsigned p = 0; p < np; p++)
				agree(&t, &r, probes[p]);
		}
		CHECK_EQ(t_count(&t), nd);
		/* Deletes: each restores the covering prefix (the reference says which). */
		for (unsigned k = 0; k < nd; k++) {
			unsigned i = o == 0 ? nd - 1 - k : o == 1 ? k : (nd / 2 + k) % nd;

			CHECK_EQ(t_delete(&t, base, depths[i]), 0);
			CHECK_EQ(t_delete(&t, base, depths[i]), -ENOENT);
			ref_delete(&r, base, depths[i]);
			for (unsigned p = 0; p < np; p++)
				agree(&t, &r, probes[p]);
		}
		CHECK_EQ(t_count(&t), 0);
		t_destroy(&t);
		free(r.p);
	}
	printf("edges%s: %u depths nested, three orders\n", alen == 4 ? "4" : "6", nd);
}

static void run_edges4(void)
{
	static const unsigned d[] = { 0, 1, 8, 23, 24, 25, 31, 32 };
	uint8_t base[16] = { 0 };

	addr4(base, 0xc0a80501u); /* 192.168.5.1 */
	run_edges(4, d, sizeof(d) / sizeof(d[0]), base);
	/* Spot checks in host byte order: 10.1.2.3/8 is 10.0.0.0/8. */
	struct umem_lpm4 *l = umem_lpm4__create(NULL);
	uint32_t nh = 0;

	CHECK(l, "create: %s", strerror(errno));
	CHECK_EQ(umem_lpm4__add(l, 0x0a010203u, 8, 7), 0);
	CHECK_EQ(umem_lpm4__lookup(l, 0x0affffffu, &nh), 0);
	CHECK_EQ(nh, 7);
	CHECK_EQ(umem_lpm4__lookup(l, 0x0b000000u, &nh), -ENOENT);
	CHECK_EQ(umem_lpm4__lookup(l, 0x09ffffffu, &nh), -ENOENT);
	CHECK_EQ(umem_lpm4__add(l, 0x0a000000u, 8, 9), 0); /* the same prefix: replaced */
	CHECK_EQ(umem_lpm4__count(l), 1);
	CHECK_EQ(umem_lpm4__lookup(l, 0x0a800000u, &nh), 0);
	CHECK_EQ(nh, 9);
	CHECK_EQ(umem_lpm4__add(l, 0x0a0000ffu, 32, UMEM_LPM_NH_MAX), 0);
	CHECK_EQ(umem_lpm4__lookup(l, 0x0a0000ffu, &nh), 0);
	CHECK_EQ(nh, UMEM_LPM_NH_MAX);
	CHECK_EQ(umem_lpm4__lookup(l, 0x0a0000feu, &nh), 0);
	CHECK_EQ(nh, 9);
	CHECK_EQ(umem_lpm4__delete(l, 0x0aff0000u, 8), 0); /* host bits ignored on delete too */
	CHECK_EQ(umem_lpm4__lookup(l, 0x0a0000feu, &nh), -ENOENT);
	CHECK_EQ(umem_lpm4__lookup(l, 0x0a0000ffu, &nh), 0);
	umem_lpm4__destroy(l);
}

static void run_edges6(void)
{
	static const unsigned d[] = { 0, 1, 24, 25, 32, 48, 63, 64, 65, 127, 128 };
	static const uint8_t base[16] = { 0x20, 0x01, 0x0d, 0xb8, 0x12, 0x34, 0x56, 0x78,
					  0x9a, 0xbc, 0xde, 0xf0, 0x11, 0x22, 0x33, 0x45 };

	run_edges(16, d, sizeof(d) / sizeof(d[0]), base);
}

/* ---- bad input, exhaustion, reclaim ---- */

static void run_errors(void)
{
	uint8_t a6[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	uint32_t nh = 0;
	size_t mem;

	struct umem_lpm4_opts bad = { .sz = 3 };
	errno = 0;
	CHECK(!umem_lpm4__create(&bad), "create with sz 3 succeeded");
	CHECK_EQ(errno, EINVAL);
	struct umem_lpm4_opts big = { .sz = sizeof(big), .tbl8_groups = UMEM_LPM_GROUPS_MAX + 1 };
	errno = 0;
	CHECK(!umem_lpm4__create(&big), "create with too many groups succeeded");
	CHECK_EQ(errno, EINVAL);
	struct umem_lpm6_opts big6 = { .sz = sizeof(big6), .groups = UMEM_LPM_GROUPS_MAX + 1 };
	errno = 0;
	CHECK(!umem_lpm6__create(&big6), "create6 with too many groups succeeded");
	CHECK_EQ(errno, EINVAL);

	struct umem_lpm4_opts o4 = { .sz = sizeof(o4), .max_prefixes = 2 };
	struct umem_lpm4 *l = umem_lpm4__create(&o4);

	CHECK(l, "create: %s", strerror(errno));
	CHECK_EQ(umem_lpm4__add(l, 0x0a000000u, 8, 1), 0);
	mem = umem_lpm4__memory(l);
	CHECK_EQ(umem_lpm4__add(l, 0x0a000000u, 33, 1), -EINVAL);
	CHECK_EQ(umem_lpm4__add(l, 0x0a000000u, 255, 1), -EINVAL);
	CHECK_EQ(umem_lpm4__add(l, 0x0a000000u, 8, UMEM_LPM_NH_MAX + 1), -EINVAL);
	CHECK_EQ(umem_lpm4__add(l, 0x0a000000u, 8, UMEM_LPM_MISS), -EINVAL);
	CHECK_EQ(umem_lpm4__delete(l, 0x0a000000u, 33), -EINVAL);
	CHECK_EQ(umem_lpm4__delete(l, 0x0a000000u, 9), -ENOENT);
	CHECK_EQ(umem_lpm4__delete(l, 0x0b000000u, 8), -ENOENT);
	CHECK_EQ(umem_lpm4__add(l, 0x0b000000u, 8, 2), 0);
	CHECK_EQ(umem_lpm4__add(l, 0x0c000000u, 8, 3), -ENOSPC); /* max_prefixes */
	CHECK_EQ(umem_lpm4__add(l, 0x0b000000u, 8, 4), 0);       /* a replace is no new prefix */
	CHECK_EQ(umem_lpm4__count(l), 2);
	CHECK_EQ(umem_lpm4__lookup(l, 0x0a000001u, &nh), 0); /* nothing changed */
	CHECK_EQ(nh, 1);
	CHECK_EQ(umem_lpm4__lookup(l, 0x0c000001u, &nh), -ENOENT);
	CHECK_EQ(umem_lpm4__lookup(l, 0x0b000001u, &nh), 0);
	CHECK_EQ(nh, 4);
	CHECK_EQ(umem_lpm4__memory(l), mem);
	umem_lpm4__destroy(l);
	umem_lpm4__destroy(NULL);

	struct umem_lpm6 *l6 = umem_lpm6__create(NULL);

	CHECK(l6, "create6: %s", strerror(errno));
	CHECK_EQ(umem_lpm6__add(l6, a6, 129, 1), -EINVAL);
	CHECK_EQ(umem_lpm6__add(l6, a6, 32, UMEM_LPM_NH_MAX + 1), -EINVAL);
	CHECK_EQ(umem_lpm6__delete(l6, a6, 129), -EINVAL);
	CHECK_EQ(umem_lpm6__delete(l6, a6, 32), -ENOENT);
	CHECK_EQ(umem_lpm6__count(l6), 0);
	CHECK_EQ(umem_lpm6__lookup(l6, a6, &nh), -ENOENT);
	umem_lpm6__destroy(l6);
	umem_lpm6__destroy(NULL);
	printf("errors: EINVAL, ENOENT, ENOSPC, nothing changed\n");
}

static void run_reclaim(void)
{
	/* IPv4 with 4 groups: /32s in 4 different /24s use them all. */
	struct umem_lpm4_opts o = { .sz = sizeof(o), .tbl8_groups = 4 };
	struct umem_lpm4 *l = umem_lpm4__create(&o);
	uint32_t nh;

	CHECK(l, "create: %s", strerror(errno));
	CHECK_EQ(umem_lpm4__add(l, 0x0a000000u, 16, 50), 0);
	for (uint32_t i = 0; i < 4; i++)
		CHECK_EQ(umem_lpm4__add(l, 0x0a000001u + (i << 8), 32, i), 0);
	CHECK_EQ(umem_lpm4__add(l, 0x0a000002u, 32, 9), 0); /* same /24: no new group */
	CHECK_EQ(umem_lpm4__add(l, 0x0a000401u, 32, 4), -ENOSPC);
	CHECK_EQ(umem_lpm4__lookup(l, 0x0a000401u, &nh), 0); /* unchanged: the /16 */
	CHECK_EQ(nh, 50);
	CHECK_EQ(umem_lpm4__add(l, 0x0a000400u, 24, 4), 0); /* up to /24 needs no group */
	/* One group freed: quarantined, not reusable before reclaim. */
	CHECK_EQ(umem_lpm4__delete(l, 0x0a000101u, 32), 0);
	CHECK_EQ(umem_lpm4__lookup(l, 0x0a000101u, &nh), 0);
	CHECK_EQ(nh, 50);
	CHECK_EQ(umem_lpm4__add(l, 0x0a000501u, 32, 5), -ENOSPC);
	umem_lpm4__reclaim(l);
	CHECK_EQ(umem_lpm4__add(l, 0x0a000501u, 32, 5), 0);
	CHECK_EQ(umem_lpm4__lookup(l, 0x0a000501u, &nh), 0);
	CHECK_EQ(nh, 5);
	CHECK_EQ(umem_lpm4__lookup(l, 0x0a000502u, &nh), 0);
	CHECK_EQ(nh, 50);
	/* A group with two /32s folds only when both are gone. */
	CHECK_EQ(umem_lpm4__delete(l, 0x0a000001u, 32), 0);
	umem_lpm4__reclaim(l);
	CHECK_EQ(umem_lpm4__add(l, 0x0a000601u, 32, 6), -ENOSPC);
	CHECK_EQ(umem_lpm4__delete(l, 0x0a000002u, 32), 0);
	umem_lpm4__reclaim(l);
	CHECK_EQ(umem_lpm4__add(l, 0x0a000601u, 32, 6), 0);
	/* Deleting a /24 under which a group lives keeps the group, restores the /16. */
	CHECK_EQ(umem_lpm4__add(l, 0x0a000480u, 25, 44), -ENOSPC);
	CHECK_EQ(umem_lpm4__delete(l, 0x0a000601u, 32), 0);
	umem_lpm4__reclaim(l);
	CHECK_EQ(umem_lpm4__add(l, 0x0a000480u, 25, 44), 0);
	CHECK_EQ(umem_lpm4__delete(l, 0x0a000400u, 24), 0);
	CHECK_EQ(umem_lpm4__lookup(l, 0x0a000481u, &nh), 0);
	CHECK_EQ(nh, 44);
	CHECK_EQ(umem_lpm4__lookup(l, 0x0a000401u, &nh), 0);
	CHECK_EQ(nh, 50);
	CHECK_EQ(umem_lpm4__delete(l, 0x0a000000u, 16), 0);
	CHECK_EQ(umem_lpm4__lookup(l, 0x0a000401u, &nh), -ENOENT);
	CHECK_EQ(umem_lpm4__lookup(l, 0x0a0004ffu, &nh), 0);
	CHECK_EQ(nh, 44);
	umem_lpm4__destroy(l);

	/* IPv6 with 3 groups: one /48 takes them all; a second /48 elsewhere fails whole. */
	struct umem_lpm6_opts o6 = { .sz = sizeof(o6), .groups = 3 };
	struct umem_lpm6 *l6 = umem_lpm6__create(&o6);
	uint8_t a[16] = { 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x01 }, b[16] = { 0x20, 0x02, 0x0d, 0xb8, 0x00, 0x01 };

	CHECK(l6, "create6: %s", strerror(errno));
	CHECK_EQ(umem_lpm6__add(l6, a, 48, 1), 0);
	CHECK_EQ(umem_lpm6__add(l6, b, 48, 2), -ENOSPC);
	CHECK_EQ(umem_lpm6__add(l6, b, 24, 3), 0); /* b's /24: no group */
	CHECK_EQ(umem_lpm6__add(l6, b, 32, 4), -ENOSPC);
	CHECK_EQ(umem_lpm6__lookup(l6, b, &nh), 0);
	CHECK_EQ(nh, 3);
	CHECK_EQ(umem_lpm6__count(l6), 2);
	CHECK_EQ(umem_lpm6__delete(l6, a, 48), 0);
	CHECK_EQ(umem_lpm6__add(l6, b, 32, 4), -ENOSPC); /* quarantined */
	umem_lpm6__reclaim(l6);
	CHECK_EQ(umem_lpm6__add(l6, b, 48, 2), 0); /* all three back */
	CHECK_EQ(umem_lpm6__lookup(l6, b, &nh), 0);
	CHECK_EQ(nh, 2);
	CHECK_EQ(umem_lpm6__lookup(l6, a, &nh), -ENOENT);
	umem_lpm6__destroy(l6);
	printf("reclaim: groups quarantined until reclaim, exhaustion refused whole\n");
}

int main(int argc, char **argv)
{
	uint64_t seed = 0x5eed1a2b3c4dull;
	unsigned ops = 20000;
	const char *c = argc > 1 ? argv[1] : "";

	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--seed"))
			seed = strtoull(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--ops"))
			ops = (unsigned)strtoul(argv[i + 1], NULL, 0);
	}
	if (!strcmp(c, "random4"))
		run_random(4, seed, ops);
	else if (!strcmp(c, "random6"))
		run_random(16, seed, ops);
	else if (!strcmp(c, "bulk4"))
		run_bulk4(seed, ops);
	else if (!strcmp(c, "edges4"))
		run_edges4();
	else if (!strcmp(c, "edges6"))
		run_edges6();
	else if (!strcmp(c, "errors"))
		run_errors();
	else if (!strcmp(c, "reclaim"))
		run_reclaim();
	else {
		fprintf(stderr, "usage: %s random4|random6|bulk4|edges4|edges6|errors|reclaim [--seed N] [--ops N]\n",
			argv[0]);
		return 2;
	}
	return 0;
}
