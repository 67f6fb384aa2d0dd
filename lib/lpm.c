/* SPDX-License-Identifier: MIT */
/*
 * Longest-prefix match (umem/lpm.h): one multibit trie for both families, a 24-bit first level
 * and 8-bit groups below it, addresses handled as big-endian bytes (an IPv4 address is 4 of
 * them, so IPv4 is DIR-24-8 and IPv6 the same walk, longer).
 *
 * Entries (32 bits, changed by one store each): VALID | rel << 24 | next hop, EXT | group, or
 * 0 (no prefix). rel is the prefix's depth minus the first bit of the level the entry is in
 * (a root entry holds the depth itself). A group covers one fixed prefix of s bits; a prefix
 * no longer than s covers all of it, so among the group's entries every such prefix is the
 * same one, the group's "inherited" prefix, kept in its writer-side record (rel 0 entries
 * hold it, and it is also the shadow of the parent entry that links the group). That keeps
 * depths within 6 bits for IPv6 too, where rte_lpm6 trades next-hop bits for them.
 *
 * The writer's invariants, per group: every non-EXT entry holds the longest prefix of the table
 * covering it with depth <= s + 8; used counts the entries that are not inherited (a prefix
 * ending in this group, or EXT); a group with used == 0 is folded back into its parent's entry
 * and quarantined until reclaim. The prefixes themselves live in a hash beside (prefix ->
 * next hop): a delete finds the covering prefix there.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
/* umem_lpm4__lookup_bulk's body in umem/lpm.h compiled here as the exported copy. */
#define UMEM__LPM_INLINE
#include <umem/lpm.h>
#include "internal.h"

#define ROOT_BITS 24u
#define ROOT_SIZE (1u << ROOT_BITS)
#define GROUP_SIZE 256u
#define NO_GROUP UINT32_MAX  /* the root's index in parent links and list ends */
#define HUGE_ALIGN (2u << 20) /* transparent huge pages: the first level in 2 MiB pages */
#define REL_SHIFT 24
#define REL(e) (((e) >> REL_SHIFT) & 0x3fu)
#define ENTRY(nh, rel) (UMEM__LPM_VALID | ((uint32_t)(rel) << REL_SHIFT) | (nh))

/* Writer-side record of a group (the root has one too: its inherited prefix is the default
 * route). A free or quarantined group's parent field links its list. */
struct lpm_group {
	uint32_t parent;     /* parent group, or NO_GROUP for a child of the root */
	uint32_t slot;       /* the parent entry that links this group */
	uint32_t inherit_nh; /* the inherited prefix's next hop ... */
	uint8_t inherit_depth;
	uint8_t inherit_valid; /* ... and whether there is one */
	uint8_t level;         /* 1: bits 24..31, 2: bits 32..39, ... */
	uint8_t pad;
	uint32_t used;
};

/* A prefix in the writer's hash: slot = {nh, depth, busy, key[alen]} (12 or 24 bytes). */
struct lpm_rule {
	uint32_t nh;
	uint8_t depth;
	uint8_t busy;
	uint8_t key[];
};

struct lpm {
	uint32_t *root;
	uint32_t *groups; /* cap * GROUP_SIZE entries */
	struct lpm_group *meta;
	struct lpm_group root_meta;
	uint32_t cap, fresh;    /* groups mapped; never used so far: fresh..cap-1 */
	uint32_t free_head, nr_free;
	uint32_t quar_head, nr_quar;
	uint32_t in_use;        /* groups linked into the trie */
	uint8_t alen, max_depth;
	/* the prefixes */
	uint8_t *rules;
	size_t rule_size;
	uint32_t rule_mask; /* slots - 1 */
	uint32_t count, max_prefixes;
	uint32_t depth_count[129];
	size_t groups_map, meta_map;
	const char *what; /* "lpm4" or "lpm6", for messages */
};

struct umem_lpm4 {
	struct umem_lpm4_fast f; /* first: the inline lookup casts to it */
	struct lpm t;
};

struct umem_lpm6 {
	struct lpm t;
};

/* Anonymous, lazily backed, 2 MiB aligned so transparent huge pages can back it. */
static void *lpm_map(size_t len)
{
	size_t span = len + HUGE_ALIGN;
	uint8_t *p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			  -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	uint8_t *a = (uint8_t *)(((uintptr_t)p + HUGE_ALIGN - 1) & ~(uintptr_t)(HUGE_ALIGN - 1));

	if (a > p)
		munmap(p, (size_t)(a - p));
	if (a + len < p + span)
		munmap(a + len, (size_t)(p + span - (a + len)));
	/* Best effort: without THP the table is 4 KiB pages, slower by the TLB misses only. */
	(void)madvise(a, len, MADV_HUGEPAGE);
	return a;
}

static void lpm_unmap(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

/* Release: a reader that sees a next hop sees what the writer stored before it (the caller's
 * next-hop record, a filled group). A plain store on x86. */
static inline void put_entry(uint32_t *e, uint32_t v)
{
	__atomic_store_n(e, v, __ATOMIC_RELEASE);
}

static inline uint32_t get_entry(const uint32_t *e)
{
	return __atomic_load_n(e, __ATOMIC_RELAXED);
}

/* The entries of group g (NO_GROUP: the root). */
static uint32_t *group_entries(struct lpm *t, uint32_t g)
{
	return g == NO_GROUP ? t->root : t->groups + (size_t)g * GROUP_SIZE;
}

static struct lpm_group *group_meta(struct lpm *t, uint32_t g)
{
	return g == NO_GROUP ? &t->root_meta : &t->meta[g];
}

/* First address bit a level covers, and its width. */
static inline unsigned level_start(unsigned level)
{
	return level ? ROOT_BITS + 8 * (level - 1) : 0;
}

static inline unsigned level_bits(unsigned level)
{
	return level ? 8 : ROOT_BITS;
}

/* The level a prefix of depth d ends in. */
static inline unsigned depth_level(unsigned d)
{
	return d <= ROOT_BITS ? 0 : 1 + (d - ROOT_BITS - 1) / 8;
}

/* The entry index for key at level. */
static inline uint32_t level_index(const uint8_t *key, unsigned level)
{
	if (!level)
		return (uint32_t)key[0] << 16 | (uint32_t)key[1] << 8 | key[2];
	return key[2 + level];
}

static void mask_key(uint8_t *out, const uint8_t *in, unsigned alen, unsigned depth)
{
	for (unsigned i = 0; i < alen; i++) {
		unsigned bits = depth > 8 * i ? depth - 8 * i : 0;

		out[i] = bits >= 8 ? in[i] : (uint8_t)(in[i] & (0xff00u >> bits));
	}
}

/* The inherited value of group g, as an entry with rel 0. */
static uint32_t inherited(const struct lpm_group *m)
{
	return m->inherit_valid ? ENTRY(m->inherit_nh, 0) : 0;
}

/* ---- the prefix hash (writer only) ---- */

/* The words of the key, then MurmurHash3's 64-bit finaliser, so every key bit reaches the low
 * bits the table is indexed by (a /24's last byte is always zero). */
static uint32_t rule_hash(const uint8_t *key, unsigned alen, unsigned depth)
{
	uint64_t h = depth;

	for (unsigned i = 0; i < alen; i += 4) {
		uint32_t w;

		memcpy(&w, key + i, 4);
		h = (h << 32 | h >> 32) ^ w;
		h *= 0x9e3779b97f4a7c15ull;
	}
	return (uint32_t)umem_hash__mix64(h);
}

static struct lpm_rule *rule_at(const struct lpm *t, uint32_t i)
{
	return (struct lpm_rule *)(void *)(t->rules + (size_t)i * t->rule_size);
}

/* The slot holding key/depth, or the empty slot where it would go. */
static struct lpm_rule *rule_slot(const struct lpm *t, const uint8_t *key, unsigned depth)
{
	for (uint32_t i = rule_hash(key, t->alen, depth) & t->rule_mask;; i = (i + 1) & t->rule_mask) {
		struct lpm_rule *r = rule_at(t, i);

		if (!r->busy || (r->depth == depth && !memcmp(r->key, key, t->alen)))
			return r;
	}
}

static int rules_resize(struct lpm *t, uint32_t slots)
{
	uint8_t *old = t->rules;
	uint32_t old_slots = old ? t->rule_mask + 1 : 0;
	uint8_t *n = calloc(slots, t->rule_size);

	if (!n)
		return -ENOMEM;
	t->rules = n;
	t->rule_mask = slots - 1;
	for (uint32_t i = 0; i < old_slots; i++) {
		struct lpm_rule *r = (struct lpm_rule *)(void *)(old + (size_t)i * t->rule_size);

		if (r->busy)
			memcpy(rule_slot(t, r->key, r->depth), r, t->rule_size);
	}
	free(old);
	return 0;
}

/* Backward-shift deletion (no tombstones): later entries of the run move into the hole. */
static void rule_remove(struct lpm *t, struct lpm_rule *r)
{
	uint32_t hole = (uint32_t)(((uint8_t *)r - t->rules) / t->rule_size);

	for (uint32_t i = (hole + 1) & t->rule_mask;; i = (i + 1) & t->rule_mask) {
		struct lpm_rule *c = rule_at(t, i);

		if (!c->busy)
			break;
		uint32_t home = rule_hash(c->key, t->alen, c->depth) & t->rule_mask;
		/* c may move to the hole if its home is not within (hole, i]. */
		if (((i - home) & t->rule_mask) >= ((i - hole) & t->rule_mask)) {
			memcpy(rule_at(t, hole), c, t->rule_size);
			hole = i;
		}
	}
	memset(rule_at(t, hole), 0, t->rule_size);
}

/* The longest prefix shorter than depth that covers key (NULL: none). */
static const struct lpm_rule *rule_cover(const struct lpm *t, const uint8_t *key, unsigned depth)
{
	uint8_t k[16];

	for (unsigned d = depth; d-- > 0;) {
		if (!t->depth_count[d])
			continue;
		mask_key(k, key, t->alen, d);
		const struct lpm_rule *r = rule_slot(t, k, d);

		if (r->busy)
			return r;
	}
	return NULL;
}

/* ---- groups ---- */

static uint32_t groups_available(const struct lpm *t)
{
	return t->nr_free + (t->cap - t->fresh);
}

static uint32_t group_take(struct lpm *t)
{
	uint32_t g;

	if (t->free_head != NO_GROUP) {
		g = t->free_head;
		t->free_head = t->meta[g].parent;
		t->nr_free--;
	} else {
		g = t->fresh++;
	}
	t->in_use++;
	return g;
}

static void group_quarantine(struct lpm *t, uint32_t g)
{
	t->meta[g].parent = t->quar_head;
	t->quar_head = g;
	t->nr_quar++;
	t->in_use--;
}

/* A new group below entry slot of group parent, holding what that entry held; linked by a
 * release store after it is filled, so a reader that sees the link sees the contents. */
static uint32_t group_push(struct lpm *t, uint32_t parent, uint32_t slot, unsigned level)
{
	struct lpm_group *pm = group_meta(t, parent);
	uint32_t *pe = &group_entries(t, parent)[slot];
	uint32_t e = *pe, g = group_take(t);
	struct lpm_group *m = &t->meta[g];
	uint32_t *ge = group_entries(t, g);

	*m = (struct lpm_group){ .parent = parent, .slot = slot, .level = (uint8_t)level };
	if (e & UMEM__LPM_VALID) {
		m->inherit_valid = 1;
		m->inherit_nh = e & UMEM__LPM_LOW;
		m->inherit_depth = REL(e) ? (uint8_t)(level_start(level - 1) + REL(e)) : pm->inherit_depth;
	}
	uint32_t v = inherited(m);

	for (unsigned i = 0; i < GROUP_SIZE; i++)
		put_entry(&ge[i], v);
	__atomic_store_n(pe, UMEM__LPM_EXT | g, __ATOMIC_RELEASE);
	if (!REL(e))
		pm->used++; /* an inherited entry became a link */
	return g;
}

/* Prefix (depth, nh) covers all of group g: its entries inherit it unless they inherit a
 * longer one already. */
static void group_cover(struct lpm *t, uint32_t g, unsigned depth, uint32_t nh)
{
	struct lpm_group *m = group_meta(t, g);
	uint32_t *ge = group_entries(t, g);
	uint32_t n = g == NO_GROUP ? ROOT_SIZE : GROUP_SIZE;

	if (m->inherit_valid && m->inherit_depth > depth)
		return;
	m->inherit_valid = 1;
	m->inherit_depth = (uint8_t)depth;
	m->inherit_nh = nh;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t e = get_entry(&ge[i]);

		if (e & UMEM__LPM_EXT)
			group_cover(t, e & UMEM__LPM_LOW, depth, nh);
		else if (!REL(e))
			put_entry(&ge[i], ENTRY(nh, 0));
	}
}

/* Prefix depth, which group g inherited if any, is gone: c (or nothing) takes its place. */
static void group_uncover(struct lpm *t, uint32_t g, unsigned depth, const struct lpm_rule *c)
{
	struct lpm_group *m = group_meta(t, g);
	uint32_t *ge = group_entries(t, g);
	uint32_t n = g == NO_GROUP ? ROOT_SIZE : GROUP_SIZE;

	if (!m->inherit_valid || m->inherit_depth != depth)
		return;
	m->inherit_valid = c != NULL;
	m->inherit_depth = c ? c->depth : 0;
	m->inherit_nh = c ? c->nh : 0;
	uint32_t v = inherited(m);

	for (uint32_t i = 0; i < n; i++) {
		uint32_t e = get_entry(&ge[i]);

		if (e & UMEM__LPM_EXT)
			group_uncover(t, e & UMEM__LPM_LOW, depth, c);
		else if (!REL(e))
			put_entry(&ge[i], v);
	}
}

/* Folds groups left with only inherited entries into their parents' entries, upwards. */
static void group_collapse(struct lpm *t, uint32_t g)
{
	while (g != NO_GROUP && !t->meta[g].used) {
		struct lpm_group *m = &t->meta[g];
		uint32_t parent = m->parent;
		struct lpm_group *pm = group_meta(t, parent);
		unsigned ps = level_start(m->level - 1);
		uint32_t v = 0;

		if (m->inherit_valid)
			v = ENTRY(m->inherit_nh, m->inherit_depth > ps ? m->inherit_depth - ps : 0);
		put_entry(&group_entries(t, parent)[m->slot], v);
		if (!REL(v))
			pm->used--; /* the link became an inherited entry */
		group_quarantine(t, g);
		g = parent;
	}
}

/* The groups an add of key/depth would create. */
static uint32_t groups_needed(struct lpm *t, const uint8_t *key, unsigned depth)
{
	unsigned last = depth_level(depth);
	uint32_t g = NO_GROUP;

	for (unsigned level = 0; level < last; level++) {
		uint32_t e = get_entry(&group_entries(t, g)[level_index(key, level)]);

		if (!(e & UMEM__LPM_EXT))
			return last - level;
		g = e & UMEM__LPM_LOW;
	}
	return 0;
}

/* The group key/depth ends in, creating the groups on the way when create is set. */
static uint32_t walk(struct lpm *t, const uint8_t *key, unsigned depth, bool create)
{
	unsigned last = depth_level(depth);
	uint32_t g = NO_GROUP;

	for (unsigned level = 0; level < last; level++) {
		uint32_t slot = level_index(key, level);
		uint32_t e = get_entry(&group_entries(t, g)[slot]);

		if (e & UMEM__LPM_EXT)
			g = e & UMEM__LPM_LOW;
		else if (create)
			g = group_push(t, g, slot, level + 1);
		else
			umem__die("lpm: prefix /%u has no group at level %u\n", depth, level + 1);
	}
	return g;
}

/* The entries of group g that key/depth spans (it ends in g's level). */
static void span(const uint8_t *key, unsigned depth, unsigned level, uint32_t *first, uint32_t *n)
{
	unsigned end = level_start(level) + level_bits(level);

	*first = level_index(key, level);
	*n = 1u << (end - depth);
}

static int lpm_add(struct lpm *t, const uint8_t *addr, unsigned depth, uint32_t nh)
{
	uint8_t key[16];

	if (depth > t->max_depth || nh > UMEM_LPM_NH_MAX) {
		pr_warn("%s: add: %s %u out of range (depth 0..%u, next hop 0..%u)\n", t->what,
			depth > t->max_depth ? "depth" : "next hop", depth > t->max_depth ? depth : nh,
			t->max_depth, UMEM_LPM_NH_MAX);
		return -EINVAL;
	}
	mask_key(key, addr, t->alen, depth);
	struct lpm_rule *r = rule_slot(t, key, depth);

	if (!r->busy) {
		uint32_t need = groups_needed(t, key, depth);

		if (t->max_prefixes && t->count >= t->max_prefixes) {
			pr_warn("%s: add: the table holds max_prefixes (%u)\n", t->what, t->max_prefixes);
			return -ENOSPC;
		}
		if (need > groups_available(t)) {
			/* Said at debug level while reclaim may help: the caller retries then. */
			umem__pr(t->nr_quar ? UMEM_DEBUG : UMEM_WARN,
				 "%s: add: /%u needs %u groups, %u free (%u await reclaim)\n", t->what,
				 depth, need, groups_available(t), t->nr_quar);
			return -ENOSPC;
		}
		if ((uint64_t)(t->count + 1) * 4 > (uint64_t)(t->rule_mask + 1) * 3) {
			int err = rules_resize(t, (t->rule_mask + 1) * 2);

			if (err) {
				pr_warn("%s: add: no memory for the prefix hash (%u prefixes)\n", t->what,
					t->count);
				return err;
			}
			r = rule_slot(t, key, depth);
		}
		r->busy = 1;
		r->depth = (uint8_t)depth;
		memcpy(r->key, key, t->alen);
		t->count++;
		t->depth_count[depth]++;
	}
	r->nh = nh;

	unsigned level = depth_level(depth);
	uint32_t g = walk(t, key, depth, true), first, n;

	if (!depth) {
		group_cover(t, NO_GROUP, 0, nh);
		return 0;
	}
	unsigned rel = depth - level_start(level);
	uint32_t *ge = group_entries(t, g);
	struct lpm_group *m = group_meta(t, g);

	span(key, depth, level, &first, &n);
	for (uint32_t i = first; i < first + n; i++) {
		uint32_t e = get_entry(&ge[i]);

		if (e & UMEM__LPM_EXT) {
			group_cover(t, e & UMEM__LPM_LOW, depth, nh);
		} else if (REL(e) <= rel) {
			if (!REL(e))
				m->used++;
			put_entry(&ge[i], ENTRY(nh, rel));
		}
	}
	return 0;
}

static int lpm_delete(struct lpm *t, const uint8_t *addr, unsigned depth)
{
	uint8_t key[16];

	if (depth > t->max_depth) {
		pr_warn("%s: delete: depth %u out of range (0..%u)\n", t->what, depth, t->max_depth);
		return -EINVAL;
	}
	mask_key(key, addr, t->alen, depth);
	struct lpm_rule *r = rule_slot(t, key, depth);

	if (!r->busy)
		return -ENOENT;
	rule_remove(t, r);
	t->count--;
	t->depth_count[depth]--;
	const struct lpm_rule *c = rule_cover(t, key, depth);

	if (!depth) {
		group_uncover(t, NO_GROUP, 0, NULL);
		return 0;
	}
	unsigned level = depth_level(depth), s = level_start(level);
	unsigned rel = depth - s;
	uint32_t g = walk(t, key, depth, false), first, n;
	uint32_t *ge = group_entries(t, g);
	struct lpm_group *m = group_meta(t, g);
	/* What the prefix's own entries become: the cover, own to this group if it ends here. */
	uint32_t v = c && c->depth > s ? ENTRY(c->nh, c->depth - s) : inherited(m);

	span(key, depth, level, &first, &n);
	for (uint32_t i = first; i < first + n; i++) {
		uint32_t e = get_entry(&ge[i]);

		if (e & UMEM__LPM_EXT) {
			group_uncover(t, e & UMEM__LPM_LOW, depth, c);
		} else if ((e & UMEM__LPM_VALID) && REL(e) == rel) {
			put_entry(&ge[i], v);
			if (!REL(v))
				m->used--;
		}
	}
	group_collapse(t, g);
	return 0;
}

static void lpm_reclaim(struct lpm *t)
{
	while (t->quar_head != NO_GROUP) {
		uint32_t g = t->quar_head;

		t->quar_head = t->meta[g].parent;
		t->meta[g].parent = t->free_head;
		t->free_head = g;
		t->nr_free++;
	}
	t->nr_quar = 0;
}

static size_t lpm_memory(const struct lpm *t)
{
	/* Groups ever used (fresh) stay resident after they are freed. */
	return (size_t)ROOT_SIZE * 4 + (size_t)t->fresh * (GROUP_SIZE * 4 + sizeof(struct lpm_group)) +
	       (size_t)(t->rule_mask + 1) * t->rule_size;
}

static void lpm_fini(struct lpm *t)
{
	lpm_unmap(t->root, (size_t)ROOT_SIZE * 4);
	lpm_unmap(t->groups, t->groups_map);
	lpm_unmap(t->meta, t->meta_map);
	free(t->rules);
}

static int lpm_init(struct lpm *t, const char *what, unsigned alen, uint32_t groups,
		    uint32_t max_prefixes)
{
	*t = (struct lpm){ .alen = (uint8_t)alen, .max_depth = (uint8_t)(alen * 8), .cap = groups,
			   .free_head = NO_GROUP, .quar_head = NO_GROUP, .max_prefixes = max_prefixes,
			   .what = what, .root_meta = { .parent = NO_GROUP } };
	t->rule_size = (sizeof(struct lpm_rule) + alen + 3) & ~(size_t)3;
	t->groups_map = (size_t)groups * GROUP_SIZE * 4;
	t->meta_map = (size_t)groups * sizeof(struct lpm_group);
	t->root = lpm_map((size_t)ROOT_SIZE * 4);
	/* Every lookup reads the first level at a random place: back it now, in huge pages where
	 * THP allows (one write per 2 MiB), rather than by faults and the shared zero page, whose
	 * 4 KiB mappings cost a TLB miss per lookup. */
	for (size_t off = 0; t->root && off < (size_t)ROOT_SIZE * 4; off += 4096)
		t->root[off / 4] = 0;
	t->groups = lpm_map(t->groups_map);
	t->meta = lpm_map(t->meta_map);
	if (!t->root || !t->groups || !t->meta || rules_resize(t, 1024)) {
		pr_warn("%s: create: cannot map %zu MiB (first level, %u groups)\n", what,
			((size_t)ROOT_SIZE * 4 + t->groups_map + t->meta_map) >> 20, groups);
		lpm_fini(t);
		return -ENOMEM;
	}
	return 0;
}

/* ---- IPv4 ---- */

static void v4_key(uint8_t key[4], uint32_t addr)
{
	key[0] = (uint8_t)(addr >> 24);
	key[1] = (uint8_t)(addr >> 16);
	key[2] = (uint8_t)(addr >> 8);
	key[3] = (uint8_t)addr;
}

/* A family's object of size bytes with its struct lpm at offset toff; NULL and errno. The
 * options are checked by the caller (they differ in name, not in meaning). */
static void *lpm_new(size_t size, size_t toff, const char *what, const char *groups_name,
		     unsigned alen, uint32_t groups, uint32_t max_prefixes)
{
	void *obj;
	int err;

	if (groups > UMEM_LPM_GROUPS_MAX) {
		pr_warn("%s: %s %u is over %u (a group index is 24 bits)\n", what, groups_name, groups,
			UMEM_LPM_GROUPS_MAX);
		errno = EINVAL;
		return NULL;
	}
	obj = calloc(1, size);
	if (!obj) {
		errno = ENOMEM;
		return NULL;
	}
	err = lpm_init((struct lpm *)(void *)((uint8_t *)obj + toff), what, alen, groups, max_prefixes);
	if (err) {
		free(obj);
		errno = -err;
		return NULL;
	}
	return obj;
}

struct umem_lpm4 *umem_lpm4__create(const struct umem_lpm4_opts *opts)
{
	struct umem_lpm4 *lpm;

	if (!OPTS_CHECK(opts, umem_lpm4_opts, "lpm4")) {
		errno = EINVAL;
		return NULL;
	}
	lpm = lpm_new(sizeof(*lpm), offsetof(struct umem_lpm4, t), "lpm4", "tbl8_groups", 4,
		      OPTS_GET(opts, tbl8_groups, 0) ?: UMEM_LPM4_GROUPS_DEFAULT,
		      OPTS_GET(opts, max_prefixes, 0));
	if (lpm) {
		lpm->f.tbl24 = lpm->t.root;
		lpm->f.tbl8 = lpm->t.groups;
	}
	return lpm;
}

void umem_lpm4__destroy(struct umem_lpm4 *lpm)
{
	if (!lpm)
		return;
	lpm_fini(&lpm->t);
	free(lpm);
}

int umem_lpm4__add(struct umem_lpm4 *lpm, uint32_t addr, uint8_t depth, uint32_t next_hop)
{
	uint8_t key[4];

	v4_key(key, addr);
	return lpm_add(&lpm->t, key, depth, next_hop);
}

int umem_lpm4__delete(struct umem_lpm4 *lpm, uint32_t addr, uint8_t depth)
{
	uint8_t key[4];

	v4_key(key, addr);
	return lpm_delete(&lpm->t, key, depth);
}

size_t umem_lpm4__memory(const struct umem_lpm4 *lpm)
{
	return sizeof(*lpm) + lpm_memory(&lpm->t);
}

void umem_lpm4__reclaim(struct umem_lpm4 *lpm)
{
	lpm_reclaim(&lpm->t);
}

uint32_t umem_lpm4__count(const struct umem_lpm4 *lpm)
{
	return lpm->t.count;
}

/* ---- IPv6 ---- */

struct umem_lpm6 *umem_lpm6__create(const struct umem_lpm6_opts *opts)
{
	if (!OPTS_CHECK(opts, umem_lpm6_opts, "lpm6")) {
		errno = EINVAL;
		return NULL;
	}
	return lpm_new(sizeof(struct umem_lpm6), offsetof(struct umem_lpm6, t), "lpm6", "groups", 16,
		       OPTS_GET(opts, groups, 0) ?: UMEM_LPM6_GROUPS_DEFAULT, OPTS_GET(opts, max_prefixes, 0));
}

void umem_lpm6__destroy(struct umem_lpm6 *lpm)
{
	if (!lpm)
		return;
	lpm_fini(&lpm->t);
	free(lpm);
}

int umem_lpm6__add(struct umem_lpm6 *lpm, const uint8_t addr[16], uint8_t depth, uint32_t next_hop)
{
	return lpm_add(&lpm->t, addr, depth, next_hop);
}

int umem_lpm6__delete(struct umem_lpm6 *lpm, const uint8_t addr[16], uint8_t depth)
{
	return lpm_delete(&lpm->t, addr, depth);
}

int umem_lpm6__lookup(const struct umem_lpm6 *lpm, const uint8_t addr[16], uint32_t *next_hop)
{
	const uint32_t *groups = lpm->t.groups;
	uint32_t e = __atomic_load_n(&lpm->t.root[(uint32_t)addr[0] << 16 | (uint32_t)addr[1] << 8 | addr[2]],
				     __ATOMIC_ACQUIRE);

	/* At most 13 groups: the writer never links one below bit 128. */
	for (unsigned i = 3; e & UMEM__LPM_EXT; i++)
		e = __atomic_load_n(&groups[((e & UMEM__LPM_LOW) << 8) | addr[i]], __ATOMIC_ACQUIRE);
	if (!(e & UMEM__LPM_VALID))
		return -ENOENT;
	*next_hop = e & UMEM__LPM_LOW;
	return 0;
}

/* Level by level over a burst: the loads of one level are independent, so a burst's walks
 * overlap their misses instead of each waiting for its own, one load after another. */
void umem_lpm6__lookup_bulk(const struct umem_lpm6 *lpm, const uint8_t (*addrs)[16], uint32_t *next_hops,
			    uint32_t n)
{
	const uint32_t *root = lpm->t.root, *groups = lpm->t.groups;

	for (uint32_t base = 0; base < n; base += UMEM__LPM_BURST) {
		uint32_t m = n - base < UMEM__LPM_BURST ? n - base : UMEM__LPM_BURST;
		const uint8_t(*a)[16] = addrs + base;
		uint32_t e[UMEM__LPM_BURST], ext = 0;

		for (uint32_t i = 0; i < m; i++)
			__builtin_prefetch(&root[(uint32_t)a[i][0] << 16 | (uint32_t)a[i][1] << 8 | a[i][2]]);
		for (uint32_t i = 0; i < m; i++) {
			e[i] = __atomic_load_n(&root[(uint32_t)a[i][0] << 16 | (uint32_t)a[i][1] << 8 | a[i][2]],
					       __ATOMIC_ACQUIRE);
			ext |= e[i];
		}
		for (unsigned byte = 3; ext & UMEM__LPM_EXT; byte++) {
			ext = 0;
			for (uint32_t i = 0; i < m; i++)
				if (e[i] & UMEM__LPM_EXT) {
					e[i] = __atomic_load_n(&groups[((e[i] & UMEM__LPM_LOW) << 8) | a[i][byte]],
							       __ATOMIC_ACQUIRE);
					ext |= e[i];
				}
		}
		for (uint32_t i = 0; i < m; i++)
			next_hops[base + i] = UMEM__LPM_RESULT(e[i]);
	}
}

size_t umem_lpm6__memory(const struct umem_lpm6 *lpm)
{
	return sizeof(*lpm) + lpm_memory(&lpm->t);
}

void umem_lpm6__reclaim(struct umem_lpm6 *lpm)
{
	lpm_reclaim(&lpm->t);
}

uint32_t umem_lpm6__count(const struct umem_lpm6 *lpm)
{
	return lpm->t.count;
}
