/* SPDX-License-Identifier: MIT */
/* Steering control: the rule table, the socket map, counters and info of a steering handle.
 * Finding, loading and attaching the program is steer_attach.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include "steer_internal.h"
#include "xdp_attach.h"


int umem__steer_owner_alive(const struct umem_steer_table *t)
{
	if (!t->owner_pid)
		return t->owner_start == UMEM__STEER_OWNER_PINS;
	return umem__proc_start_time(t->owner_pid) == t->owner_start;
}

/* ---- table access ---- */

int umem__steer_table_read(struct umem_steer *s, struct umem_steer_table *t, uint32_t *bank)
{
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(s->map_fd[SM_ACTIVE], &zero, bank) || *bank > 1 ||
	    bpf_map_lookup_elem(s->map_fd[SM_TABLES], bank, t)) {
		pr_warn("steer %s: cannot read the rule table: %s\n", s->ifname, strerror(errno));
		return -errno ? -errno : -EIO;
	}
	return 0;
}

/* ---- writers' lock ----
 *
 * Every table edit reads the active bank, changes a copy and publishes it into the idle bank:
 * two writers at once would both build on the same table and one change (and its id) would be
 * lost. Writers, in any process, hold an exclusive flock(2) on a file named after the program's
 * id (global, unlike an ifindex, across network namespaces) for the whole read-modify-publish.
 * The kernel drops the lock when its holder dies, so a writer killed mid-edit blocks no one, and
 * it leaves the table as it was (the active bank switches in one map write, last; a prefix edit,
 * which writes a trie too, is ordered so that nothing of it shows: see prefix_add_locked). A lock or
 * generation word kept in a BPF map would stay taken by a killed writer, and userspace has no
 * compare-and-swap on map values to make a retry loop of it. */

int umem__steer_lock_path(struct umem_steer *s, char *buf, size_t len)
{
	struct bpf_prog_info pi = {};
	uint32_t n = sizeof(pi);

	if (bpf_obj_get_info_by_fd(s->prog_fd, &pi, &n))
		return -errno;
	snprintf(buf, len, UMEM_STEER_LOCK_DIR "/steer-prog%u.lock", pi.id);
	return 0;
}

static int lock_fd(int fd)
{
	int err;

	while ((err = flock(fd, LOCK_EX)) && errno == EINTR)
		;
	return err;
}

/* The locked fd (>= 0) or negative errno. Without /run, the program's fd itself is locked:
 * BPF fds share one anonymous inode, so that serializes every such writer on the machine
 * (coarse, but just as safe for a killed writer). */
static int table_lock(struct umem_steer *s)
{
	char path[64];
	int fd, err;

	if ((err = umem__steer_lock_path(s, path, sizeof(path))))
		return err;
	for (int tries = 0; tries < 8; tries++) {
		struct stat held, named;

		if (mkdir(UMEM_STEER_LOCK_DIR, 0755) && errno != EEXIST) {
			if (errno == ENOENT) /* no /run (a minimal VM guest) */
				return lock_fd(s->prog_fd) ? -errno : s->prog_fd;
			break;
		}
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			break;
		if (lock_fd(fd)) {
			err = errno;
			close(fd);
			errno = err;
			break;
		}
		/* The owner unlinks the file at detach: a lock won on an unlinked file guards nothing. */
		if (!fstat(fd, &held) && !stat(path, &named) && held.st_ino == named.st_ino)
			return fd;
		close(fd);
	}
	err = -errno;
	pr_warn("steer %s: cannot lock %s for a table edit: %s\n", s->ifname, path, strerror(errno));
	return err ? err : -EIO;
}

static void table_unlock(struct umem_steer *s, int fd)
{
	if (fd == s->prog_fd)
		flock(fd, LOCK_UN);
	else
		close(fd); /* releases the flock */
}

void umem__steer_lock_remove(struct umem_steer *s)
{
	char path[64];
	int fd;

	if (umem__steer_lock_path(s, path, sizeof(path)) || (fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
		return;
	/* Under the lock, so no writer is between its read and its publish. */
	if (!flock(fd, LOCK_EX))
		unlink(path);
	close(fd);
}

void umem__steer_lock_sweep(void)
{
	DIR *d = opendir(UMEM_STEER_LOCK_DIR);
	struct dirent *e;
	unsigned int id;
	char tail;

	if (!d)
		return;
	while ((e = readdir(d))) {
		int fd;

		if (sscanf(e->d_name, "steer-prog%u.lock%c", &id, &tail) != 1)
			continue;
		/* A program no fd references any more has no writer either (a handle holds one). */
		fd = bpf_prog_get_fd_by_id(id);
		if (fd >= 0)
			close(fd);
		else if (errno == ENOENT)
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

static int prefix_walk(struct umem_steer *s, uint32_t dir,
		       int (*fn)(struct umem_steer *s, uint32_t dir, const struct umem_steer_prefix_key *k,
				 struct umem_steer_prefix_rules *v, void *arg),
		       void *arg);

/* A rule's fields that a flow's key does not fix, as the prefix rules' marks. */
static uint16_t unkeyed_marks(uint32_t fields)
{
	return (fields & UMEM_STEER_M_QUEUE ? UMEM_STEER_FIRST_PREFIX_QUEUE : 0) |
	       (fields & UMEM_STEER_M_DMAC ? UMEM_STEER_FIRST_PREFIX_DMAC : 0);
}

static int prefix_marks_one(struct umem_steer *s, uint32_t dir, const struct umem_steer_prefix_key *k,
			    struct umem_steer_prefix_rules *v, void *arg)
{
	uint16_t *marks = arg;

	(void)s, (void)dir, (void)k;
	for (uint32_t i = 0; i < v->nr && i < UMEM_STEER_PREFIX_SLOTS; i++)
		*marks |= unkeyed_marks(v->slots[i].rule.match.fields);
	return 0;
}

/* Which flows may decide before the rules (enum umem_steer_flows_first) under t, about to be
 * published. The prefix rules' marks stay until the tries are empty; a table another writer
 * published last (flows_first_gen behind) has its tries read again for them, on top of the
 * marks it carries (the caller's, of a prefix rule it is adding). */
static void flows_first_set(struct umem_steer *s, struct umem_steer_table *t)
{
	uint16_t marks = t->flows_first & (UMEM_STEER_FIRST_PREFIX_QUEUE | UMEM_STEER_FIRST_PREFIX_DMAC);

	if (!t->nr_prefix_rules[0] && !t->nr_prefix_rules[1])
		marks = 0;
	else if (t->flows_first_gen != (uint16_t)t->generation)
		for (uint32_t dir = 0; dir < 2; dir++)
			if (prefix_walk(s, dir, prefix_marks_one, &marks))
				marks |= UMEM_STEER_FIRST_PREFIX_QUEUE; /* unread: none may */
	t->flows_first = marks;
	for (uint32_t i = 0; i < t->nr_rules && i < UMEM_STEER_MAX_RULES; i++)
		marks |= unkeyed_marks(t->rules[i].match.fields);
	if (!(marks & UMEM_STEER_FIRST_PREFIX_QUEUE))
		t->flows_first |= UMEM_STEER_FIRST_ROUTED;
	if (!(marks & (UMEM_STEER_FIRST_PREFIX_QUEUE | UMEM_STEER_FIRST_PREFIX_DMAC)))
		t->flows_first |= UMEM_STEER_FIRST_ALL;
}

/* Writes t into the idle bank, then makes it active: the program sees the old or the new table,
 * never a mix. */
static int table_publish(struct umem_steer *s, struct umem_steer_table *t, uint32_t bank)
{
	uint32_t idle = !bank, zero = 0;

	flows_first_set(s, t);
	t->generation++;
	t->flows_first_gen = (uint16_t)t->generation;
	if (bpf_map_update_elem(s->map_fd[SM_TABLES], &idle, t, BPF_ANY) ||
	    bpf_map_update_elem(s->map_fd[SM_ACTIVE], &zero, &idle, BPF_ANY)) {
		int err = -errno;

		pr_warn("steer %s: cannot update the rule table: %s\n", s->ifname, strerror(errno));
		return err;
	}
	return 0;
}

int umem__steer_check_action(struct umem_steer *s, const struct umem_steer_action *a)
{
	switch (a->type) {
	case UMEM_STEER_A_SOCK:
		if (a->index >= s->nr_sockets) {
			pr_warn("steer %s: socket index %u out of range (0..%u)\n", s->ifname, a->index,
				s->nr_sockets - 1);
			return -EINVAL;
		}
		return 0;
	case UMEM_STEER_A_GROUP:
		if (!a->count || a->index >= s->nr_sockets || a->count > s->nr_sockets - a->index) {
			pr_warn("steer %s: socket group %u-%u out of range (0..%u)\n", s->ifname, a->index,
				a->index + a->count - 1, s->nr_sockets - 1);
			return -EINVAL;
		}
		return 0;
	case UMEM_STEER_A_QUEUE:
	case UMEM_STEER_A_PASS:
	case UMEM_STEER_A_DROP:
		return 0;
	default:
		pr_warn("steer %s: unknown action type %u\n", s->ifname, a->type);
		return -EINVAL;
	}
}

static int check_rule(struct umem_steer *s, const struct umem_steer_rule *r)
{
	const struct umem_steer_match *m = &r->match;
	char why[160];

	if (m->fields & ~(uint32_t)UMEM_STEER_M_ALL) {
		pr_warn("steer %s: unknown match field bits 0x%x\n", s->ifname, m->fields & ~(uint32_t)UMEM_STEER_M_ALL);
		return -EINVAL;
	}
	if ((m->fields & UMEM_STEER_M_VLAN) && m->vlan > 4095) {
		pr_warn("steer %s: VLAN id %u out of range (0..4095)\n", s->ifname, m->vlan);
		return -EINVAL;
	}
	if ((m->fields & UMEM_STEER_M_QUEUE) && s->nr_queues && m->queue >= s->nr_queues) {
		pr_warn("steer %s: queue %u does not exist (%u rx queues)\n", s->ifname, m->queue, s->nr_queues);
		return -EINVAL;
	}
	if (umem__steer_match_problem(m, why, sizeof(why))) {
		pr_warn("steer %s: %s\n", s->ifname, why);
		return -EINVAL;
	}
	return umem__steer_check_action(s, &r->action);
}

/* ---- prefix rules (LPM tries, see steer_abi.h) ---- */

/* The trie a prefix rule lives in: src when it has a src prefix (dst is then checked inline). */
static uint32_t prefix_dir(const struct umem_steer_match *m)
{
	return (m->fields & UMEM_STEER_M_SRC) ? UMEM_STEER_DIR_SRC : UMEM_STEER_DIR_DST;
}

static struct umem_steer_prefix_key prefix_key(const struct umem_steer_prefix *p)
{
	struct umem_steer_prefix_key k = { .prefixlen = 32 + p->len, .family = { p->family } };

	memcpy(k.addr, p->addr, sizeof(k.addr));
	return k;
}

static int prefix_clear_one(struct umem_steer *s, uint32_t dir, const struct umem_steer_prefix_key *k,
			    struct umem_steer_prefix_rules *v, void *arg);
static void listed_build(struct umem_steer *s, uint32_t dir, const struct umem_steer_prefix_key *extra, uint32_t nr,
			 struct umem_steer_listed *out);

/* A prefix rule's counter (steer_pstats: one value, not per CPU). */
static int pstats_read(struct umem_steer *s, uint32_t id, struct umem_steer_counter *out)
{
	return bpf_map_lookup_elem(s->map_fd[SM_PSTATS], &id, out) ? -errno : 0;
}

/* Deletes every prefix rule's counter, or with zero set, zeroes each. */
static int pstats_walk(struct umem_steer *s, bool zero)
{
	const struct umem_steer_counter z[1] = {};
	uint32_t k, nk;
	int err = 0, more;

	/* The next key is taken before this one goes: after a deleted key, a hash map's walk
	 * starts over from its first bucket (quadratic over a full map). */
	for (more = !bpf_map_get_next_key(s->map_fd[SM_PSTATS], NULL, &k); more && !err; k = nk) {
		more = !bpf_map_get_next_key(s->map_fd[SM_PSTATS], &k, &nk);
		/* Zeroed in place (BPF_EXIST): one removed meanwhile is not brought back. */
		if (zero ? bpf_map_update_elem(s->map_fd[SM_PSTATS], &k, z, BPF_EXIST) : bpf_map_delete_elem(s->map_fd[SM_PSTATS], &k))
			err = errno == ENOENT ? 0 : -errno;
	}
	if (!err && errno != ENOENT)
		err = -errno;
	return err;
}

/* Remembers a prefix rule this handle added (struct umem_steer's added). */
static void added_push(struct umem_steer *s, uint32_t id, uint32_t dir, const struct umem_steer_prefix_key *k)
{
	if (s->nr_added == s->cap_added) {
		size_t cap = s->cap_added ? 2 * s->cap_added : 256;
		struct steer_added *a = realloc(s->added, cap * sizeof(*a));

		if (!a)
			return; /* a remove of this one walks the tries */
		s->added = a;
		s->cap_added = cap;
	}
	s->added[s->nr_added++] = (struct steer_added){ .id = id, .dir = dir, .key = *k };
}

/*
 * A prefix edit touches two maps, so a writer killed between them (a Ctrl-C in `umem-steer
 * load`) must leave nothing that shows. The table holds the next id and each trie's rule count:
 * an add publishes them before it writes the trie, so a writer killed in between leaves an id
 * unused and a count one high (an idle lookup per frame), never a rule whose id the next add
 * hands out again. A trie whose count is 0 holds no rule anyone looks at (the program skips it,
 * listings too): what is there was left by a clear killed midway, and the next add there
 * clears it first, so none of it comes back with the new rule.
 *
 * The rule's counter (steer_pstats, by id) is created zeroed before the rule shows in its trie
 * and deleted after it left (prefix_remove_locked): edits of the trie never touch a count. Ids
 * are monotonic, so no rule is handed a removed one's counter. (The kernel may reuse a deleted
 * entry's memory at once: a frame whose program stalled between its lookup and its add for a
 * whole remove and add would count for the new rule.) One left by a killed writer is zeroed
 * when its id is handed out, and all go when the tables hold no prefix rule.
 */
static int prefix_add_locked(struct umem_steer *s, struct umem_steer_rule *rule)
{
	const struct umem_steer_match *m = &rule->match;
	uint32_t dir = prefix_dir(m), bank, pos;
	const struct umem_steer_prefix *pf = dir ? &m->dst : &m->src;
	struct umem_steer_prefix_key k = prefix_key(pf);
	struct umem_steer_prefix_rules v = { .prefixlen = k.prefixlen }, was;
	struct umem_steer_table t, nt;
	char text[64];
	int err;

	if ((err = umem__steer_table_read(s, &t, &bank)))
		return err;
	if (!t.nr_prefix_rules[dir] && (err = prefix_walk(s, dir, prefix_clear_one, NULL)))
		return err;
	if (!t.nr_prefix_rules[0] && !t.nr_prefix_rules[1] && (err = pstats_walk(s, false)))
		return err;
	umem__steer_prefix_format(pf, text, sizeof(text));
	/* An exact-length lookup finds this prefix only if it is there: a shorter one has another key. */
	if (!bpf_map_lookup_elem(s->map_fd[SM_PSRC + dir], &k, &v) && v.prefixlen != k.prefixlen)
		v = (struct umem_steer_prefix_rules){ .prefixlen = k.prefixlen };
	if (v.nr >= UMEM_STEER_PREFIX_SLOTS) {
		pr_warn("steer %s: %s %s holds %u rules already (the most one prefix takes)\n", s->ifname,
			dir ? "dst" : "src", text, UMEM_STEER_PREFIX_SLOTS);
		return -ENOSPC;
	}
	was = v;
	/* By priority, equal ones in insertion order, like the table. */
	for (pos = 0; pos < v.nr && v.slots[pos].rule.prio <= rule->prio; pos++)
		;
	memmove(&v.slots[pos + 1], &v.slots[pos], (v.nr - pos) * sizeof(v.slots[0]));
	v.slots[pos] = (struct umem_steer_prefix_slot){ .rule = *rule };
	/* Monotonic: 2^32 additions before an id comes round again. */
	v.slots[pos].rule.id = UMEM_STEER_PREFIX_ID_BASE + t.next_prefix_id;
	v.nr++;
	nt = t;
	nt.next_prefix_id++;
	if (nt.next_prefix_id + UMEM_STEER_PREFIX_ID_BASE == 0)
		nt.next_prefix_id = 0;
	nt.nr_prefix_rules[dir]++;
	nt.flows_first |= unkeyed_marks(m->fields);
	listed_build(s, dir, &k, nt.nr_prefix_rules[dir], &nt.listed[dir]);
	/* Before the table: a refusal here changes nothing. */
	if (bpf_map_update_elem(s->map_fd[SM_PSTATS], &v.slots[pos].rule.id, &(struct umem_steer_counter){}, BPF_ANY)) {
		err = -errno;
		if (err == -E2BIG) /* the hash map is full */
			pr_warn("steer %s: cannot add a rule for %s %s: the tries hold %u prefix rules already "
				"(UMEM_STEER_MAX_PREFIX_RULES)\n", s->ifname, dir ? "dst" : "src", text,
				UMEM_STEER_MAX_PREFIX_RULES);
		else
			pr_warn("steer %s: cannot add the counter of a rule for %s %s: %s\n", s->ifname,
				dir ? "dst" : "src", text, strerror(-err));
		return err == -E2BIG ? -ENOSPC : err;
	}
	if ((err = table_publish(s, &nt, bank))) {
		bpf_map_delete_elem(s->map_fd[SM_PSTATS], &v.slots[pos].rule.id);
		return err;
	}
	err = bpf_map_update_elem(s->map_fd[SM_PSRC + dir], &k, &v, BPF_ANY) ? -errno : 0;
	if (err)
		pr_warn("steer %s: cannot add a rule for %s %s: %s%s\n", s->ifname, dir ? "dst" : "src", text,
			strerror(-err), err == -ENOSPC || err == -E2BIG ? " (the trie holds its most prefixes)" : "");
	/* Published again once the trie holds the rule: a frame between the two publishes found
	 * no rule and may have let its flow skip the rules under the first one's generation
	 * (struct umem_steer_flow's rules_gen). */
	else if ((err = table_publish(s, &nt, !bank))) {
		if (was.nr ? bpf_map_update_elem(s->map_fd[SM_PSRC + dir], &k, &was, BPF_ANY)
			   : bpf_map_delete_elem(s->map_fd[SM_PSRC + dir], &k))
			pr_warn("steer %s: cannot take back the rule for %s %s: %s\n", s->ifname, dir ? "dst" : "src",
				text, strerror(errno));
	}
	if (err) {
		/* Back to the rules as they were, under a new generation: one never seen twice
		 * keeps a reader's cache (xdp-fwd's stats) from missing the next edit. */
		t.generation = nt.generation;
		table_publish(s, &t, !bank);
		bpf_map_delete_elem(s->map_fd[SM_PSTATS], &v.slots[pos].rule.id);
		return err;
	}
	rule->id = v.slots[pos].rule.id;
	added_push(s, rule->id, dir, &k);
	return 0;
}

/* Calls fn for the prefix rules of one trie after key k (all of them when !*started), with each
 * key and value, until fn returns non-zero (returned) or *budget prefixes were visited (k is then
 * the last one, *started set: the place to go on from). The key is copied before fn runs, so fn
 * may update or delete its own entry. */
static int prefix_walk_from(struct umem_steer *s, uint32_t dir, struct umem_steer_prefix_key *k, uint32_t *started,
			    uint32_t *budget,
			    int (*fn)(struct umem_steer *s, uint32_t dir, const struct umem_steer_prefix_key *k,
				      struct umem_steer_prefix_rules *v, void *arg),
			    void *arg)
{
	struct umem_steer_prefix_key nk;
	struct umem_steer_prefix_rules v;
	int err;

	while (*budget && !bpf_map_get_next_key(s->map_fd[SM_PSRC + dir], *started ? k : NULL, &nk)) {
		*k = nk;
		*started = 1;
		--*budget;
		if (bpf_map_lookup_elem(s->map_fd[SM_PSRC + dir], k, &v) || v.prefixlen != k->prefixlen)
			continue; /* gone meanwhile */
		if ((err = fn(s, dir, k, &v, arg)))
			return err;
	}
	return !*budget || errno == ENOENT ? 0 : -errno;
}

/* prefix_walk_from over a whole trie. */
static int prefix_walk(struct umem_steer *s, uint32_t dir,
		       int (*fn)(struct umem_steer *s, uint32_t dir, const struct umem_steer_prefix_key *k,
				 struct umem_steer_prefix_rules *v, void *arg),
		       void *arg)
{
	struct umem_steer_prefix_key k;
	uint32_t started = 0, budget = UINT32_MAX;

	return prefix_walk_from(s, dir, &k, &started, &budget, fn, arg);
}

/* The prefixes a trie's walk collected for its list (struct umem_steer_listed). */
struct listed_keys {
	uint32_t n;
	struct umem_steer_prefix_key k[UMEM_STEER_MAX_LISTED + 1];
};

static int listed_one(struct umem_steer *s, uint32_t dir, const struct umem_steer_prefix_key *k,
		      struct umem_steer_prefix_rules *v, void *arg)
{
	struct listed_keys *l = arg;

	(void)s;
	(void)dir;
	if (v->nr && l->n <= UMEM_STEER_MAX_LISTED)
		l->k[l->n++] = *k;
	return 0;
}

/* Appends k's prefix to its family's list in out. */
static void listed_put(struct umem_steer_listed *out, const struct umem_steer_prefix_key *k)
{
	uint32_t len = k->prefixlen - 32, addr[4], mask[4];

	memcpy(addr, k->addr, sizeof(addr));
	for (uint32_t w = 0; w < 4; w++) {
		uint32_t bits = len > 32 * w ? len - 32 * w : 0;

		mask[w] = bits ? htonl(bits >= 32 ? UINT32_MAX : ~(UINT32_MAX >> bits)) : 0;
		addr[w] &= mask[w];
	}
	if (k->family[0] == 4) {
		out->v4[out->nr4] = (struct umem_steer_listed_v4){ .addr = addr[0], .mask = mask[0] };
		out->len4[out->nr4++] = (uint8_t)len;
	} else {
		uint32_t i = out->nr - out->nr4;

		memcpy(out->v6[i].addr, addr, sizeof(addr));
		memcpy(out->v6[i].mask, mask, sizeof(mask));
		out->len6[i] = (uint8_t)len;
	}
	out->nr++;
}

/* The list of trie dir's prefixes, and extra's (about to be added) when not NULL, longest first,
 * for a trie that will hold nr rules; UMEM_STEER_LISTED_NONE when they are too many or the trie
 * cannot be read (the program then walks the trie: slower, never wrong). A trie of more rules
 * than the list's room is not walked: walked at every edit, it made steer-bench's loads of
 * 100,000 prefix rules take three times as long. */
static void listed_build(struct umem_steer *s, uint32_t dir, const struct umem_steer_prefix_key *extra, uint32_t nr,
			 struct umem_steer_listed *out)
{
	struct listed_keys l; /* 480 bytes; not static: handles of two programs have two locks */
	struct umem_steer_prefix_key k;
	uint32_t started = 0, budget = UMEM_STEER_MAX_LISTED + 1, i, j;

	l.n = 0;
	out->nr = UMEM_STEER_LISTED_NONE;
	if (nr > UMEM_STEER_MAX_LISTED || prefix_walk_from(s, dir, &k, &started, &budget, listed_one, &l) || !budget)
		return;
	for (i = 0; extra && i < l.n && memcmp(&l.k[i], extra, sizeof(*extra)); i++)
		;
	if (extra && i == l.n && l.n <= UMEM_STEER_MAX_LISTED)
		l.k[l.n++] = *extra;
	if (l.n > UMEM_STEER_MAX_LISTED)
		return;
	/* Longest first: the order the program's walk goes in. */
	for (i = 1; i < l.n; i++)
		for (j = i; j > 0 && l.k[j - 1].prefixlen < l.k[j].prefixlen; j--) {
			k = l.k[j];
			l.k[j] = l.k[j - 1];
			l.k[j - 1] = k;
		}
	memset(out, 0, sizeof(*out));
	for (i = 0; i < l.n; i++)
		listed_put(out, &l.k[i]);
}

struct prefix_find {
	uint32_t id;
	int remove;
	struct umem_steer_prefix_slot found;
};

static int prefix_find_one(struct umem_steer *s, uint32_t dir, const struct umem_steer_prefix_key *k,
			   struct umem_steer_prefix_rules *v, void *arg)
{
	struct prefix_find *f = arg;
	uint32_t i;

	for (i = 0; i < v->nr && i < UMEM_STEER_PREFIX_SLOTS && v->slots[i].rule.id != f->id; i++)
		;
	if (i == v->nr || i == UMEM_STEER_PREFIX_SLOTS)
		return 0;
	f->found = v->slots[i];
	if (!f->remove)
		return 1;
	memmove(&v->slots[i], &v->slots[i + 1], (v->nr - i - 1) * sizeof(v->slots[0]));
	v->nr--;
	if (v->nr ? bpf_map_update_elem(s->map_fd[SM_PSRC + dir], k, v, BPF_EXIST) : bpf_map_delete_elem(s->map_fd[SM_PSRC + dir], k))
		return -errno;
	return 1;
}

/* 1 and f->found when a prefix rule of table t has id f->id (removed if f->remove), 0 if none
 * does. A trie t counts no rule in holds only what a killed clear left: not looked at. */
static int prefix_find(struct umem_steer *s, const struct umem_steer_table *t, struct prefix_find *f,
		       uint32_t *dir)
{
	int err = 0;

	for (*dir = 0; *dir < 2 && !err; (*dir)++)
		if (t->nr_prefix_rules[*dir] && (err = prefix_walk(s, *dir, prefix_find_one, f)))
			break;
	return err;
}

/* 1 when the prefix rule id is one this handle added and still sits under the key it was added
 * with (removed there if f->remove, its direction in *dir); 0 to look for it by walking. The
 * newest first: an undo removes the last added first. */
static int added_find(struct umem_steer *s, struct prefix_find *f, uint32_t *dir)
{
	struct umem_steer_prefix_rules v;
	size_t i = s->nr_added;
	int ret;

	while (i > 0 && s->added[i - 1].id != f->id)
		i--;
	if (!i)
		return 0;
	*dir = s->added[i - 1].dir;
	if (bpf_map_lookup_elem(s->map_fd[SM_PSRC + *dir], &s->added[i - 1].key, &v) ||
	    v.prefixlen != s->added[i - 1].key.prefixlen)
		ret = 0;
	else
		ret = prefix_find_one(s, *dir, &s->added[i - 1].key, &v, f);
	if (ret >= 0) /* found, or not there any more: forgotten either way */
		memmove(&s->added[i - 1], &s->added[i], (s->nr_added - i) * sizeof(s->added[0]));
	if (ret >= 0)
		s->nr_added--;
	return ret;
}

static int prefix_remove_locked(struct umem_steer *s, uint32_t id, struct umem_steer_rule *out)
{
	struct prefix_find f = { .id = id, .remove = 1 };
	struct umem_steer_table t;
	uint32_t bank, dir;
	int err;

	if ((err = umem__steer_table_read(s, &t, &bank)))
		return err;
	if (!(err = added_find(s, &f, &dir)) && (err = prefix_find(s, &t, &f, &dir)) < 0)
		return err;
	if (err < 0)
		return err;
	if (!err) {
		pr_warn("steer %s: no rule with id %u\n", s->ifname, id);
		return -ENOENT;
	}
	if (out)
		*out = f.found.rule;
	/* After the trie no longer holds the rule: no new frame looks for its counter. */
	if (bpf_map_delete_elem(s->map_fd[SM_PSTATS], &id) && errno != ENOENT)
		pr_warn("steer %s: cannot delete the counter of rule %u: %s\n", s->ifname, id, strerror(errno));
	if (t.nr_prefix_rules[dir])
		t.nr_prefix_rules[dir]--;
	listed_build(s, dir, NULL, t.nr_prefix_rules[dir], &t.listed[dir]); /* after the trie lost the rule */
	return table_publish(s, &t, bank);
}

static int prefix_clear_one(struct umem_steer *s, uint32_t dir, const struct umem_steer_prefix_key *k,
			    struct umem_steer_prefix_rules *v, void *arg)
{
	(void)v;
	(void)arg;
	return bpf_map_delete_elem(s->map_fd[SM_PSRC + dir], k) && errno != ENOENT ? -errno : 0;
}

struct prefix_list {
	umem_steer_rule_fn fn;
	void *arg;
	int n;
};

static int prefix_list_one(struct umem_steer *s, uint32_t dir, const struct umem_steer_prefix_key *k,
			   struct umem_steer_prefix_rules *v, void *arg)
{
	struct prefix_list *l = arg;
	int err;

	(void)dir;
	(void)k;
	for (uint32_t i = 0; i < v->nr && i < UMEM_STEER_PREFIX_SLOTS; i++) {
		struct umem_steer_counter c = {};

		if (l->fn && (err = pstats_read(s, v->slots[i].rule.id, &c))) {
			if (err == -ENOENT)
				continue; /* removed since the trie was read */
			return err;
		}
		l->n++;
		if (l->fn && (err = l->fn(&v->slots[i].rule, &c, l->arg)))
			return err;
	}
	return 0;
}

int umem_steer__prefix_rules_step(struct umem_steer *s, struct umem_steer_prefix_cursor *cur, uint32_t max,
				  umem_steer_rule_fn fn, void *arg)
{
	struct prefix_list l = { fn, arg, 0 };
	struct umem_steer_table t;
	uint32_t bank;
	int err;

	if (!s || !cur)
		return -EINVAL;
	if ((err = umem__steer_table_read(s, &t, &bank)))
		return err;
	while (cur->dir < 2 && max && !err) {
		/* A trie the table counts no rule in: only what a killed clear left (see
		 * prefix_add_locked). */
		if (t.nr_prefix_rules[cur->dir])
			err = prefix_walk_from(s, cur->dir, &cur->key, &cur->started, &max, prefix_list_one, &l);
		if (max && !err) { /* the trie is done */
			cur->dir++;
			cur->started = 0;
		}
	}
	return err < 0 ? err : l.n;
}

int umem_steer__prefix_rules(struct umem_steer *s, umem_steer_rule_fn fn, void *arg)
{
	struct umem_steer_prefix_cursor cur = {};

	return umem_steer__prefix_rules_step(s, &cur, UINT32_MAX, fn, arg);
}

static int zero_counter(struct umem_steer *s, int fd, uint32_t key)
{
	struct umem_steer_counter *z = calloc(s->nr_cpus, sizeof(*z));
	int err;

	if (!z)
		return -ENOMEM;
	err = bpf_map_update_elem(fd, &key, z, BPF_ANY) ? -errno : 0;
	free(z);
	return err;
}

static int add_rule_locked(struct umem_steer *s, struct umem_steer_rule *rule)
{
	struct umem_steer_table t;
	uint64_t used = 0;
	uint32_t bank, pos, id;
	int err;

	if ((err = umem__steer_table_read(s, &t, &bank)))
		return err;
	if (t.nr_rules >= UMEM_STEER_MAX_RULES) {
		pr_warn("steer %s: rule table full (%u rules)\n", s->ifname, UMEM_STEER_MAX_RULES);
		return -ENOSPC;
	}
	for (uint32_t i = 0; i < t.nr_rules; i++)
		used |= 1ull << t.rules[i].id;
	for (id = 0; used & (1ull << id); id++)
		;
	/* After every rule of the same or a higher-precedence priority: equal priorities keep
	 * insertion order. */
	for (pos = 0; pos < t.nr_rules && t.rules[pos].prio <= rule->prio; pos++)
		;
	memmove(&t.rules[pos + 1], &t.rules[pos], (t.nr_rules - pos) * sizeof(t.rules[0]));
	t.rules[pos] = *rule;
	t.rules[pos].id = id;
	t.nr_rules++;
	/* A fresh id starts from zero, not from a removed rule's counts. */
	if ((err = zero_counter(s, s->map_fd[SM_RSTATS], id)) || (err = table_publish(s, &t, bank)))
		return err;
	rule->id = id;
	return 0;
}

int umem_steer__add_rule(struct umem_steer *s, struct umem_steer_rule *rule)
{
	int err, fd;

	if (!s || !rule)
		return -EINVAL;
	if ((err = check_rule(s, rule)) || (fd = err = table_lock(s)) < 0)
		return err;
	if (rule->match.fields & (UMEM_STEER_M_SRC | UMEM_STEER_M_DST))
		err = prefix_add_locked(s, rule);
	else
		err = add_rule_locked(s, rule);
	table_unlock(s, fd);
	return err;
}

static int remove_rule_locked(struct umem_steer *s, uint32_t id, struct umem_steer_rule *out)
{
	struct umem_steer_table t;
	uint32_t bank, pos;
	int err;

	if ((err = umem__steer_table_read(s, &t, &bank)))
		return err;
	for (pos = 0; pos < t.nr_rules && t.rules[pos].id != id; pos++)
		;
	if (pos == t.nr_rules) {
		pr_warn("steer %s: no rule with id %u\n", s->ifname, id);
		return -ENOENT;
	}
	if (out)
		*out = t.rules[pos];
	memmove(&t.rules[pos], &t.rules[pos + 1], (t.nr_rules - pos - 1) * sizeof(t.rules[0]));
	t.nr_rules--;
	return table_publish(s, &t, bank);
}

int umem_steer__remove_rule(struct umem_steer *s, uint32_t id, struct umem_steer_rule *removed)
{
	int err, fd;

	if (!s)
		return -EINVAL;
	if ((fd = table_lock(s)) < 0)
		return fd;
	if (id >= UMEM_STEER_PREFIX_ID_BASE)
		err = prefix_remove_locked(s, id, removed);
	else
		err = remove_rule_locked(s, id, removed);
	table_unlock(s, fd);
	return err;
}

int umem_steer__remove_rule_get(struct umem_steer *s, uint32_t id, struct umem_steer_rule *removed)
{
	return umem_steer__remove_rule(s, id, removed);
}

int umem_steer__rules(struct umem_steer *s, struct umem_steer_rule *out, uint32_t max)
{
	struct umem_steer_table t;
	uint32_t bank;
	int err;

	if (!s || (max && !out))
		return -EINVAL;
	if ((err = umem__steer_table_read(s, &t, &bank)))
		return err;
	if (max)
		memcpy(out, t.rules, (max < t.nr_rules ? max : t.nr_rules) * sizeof(t.rules[0]));
	return t.nr_rules;
}

/* Table-wide edits: each non-NULL argument replaces its part of the table. */
static int table_set(struct umem_steer *s, const struct umem_steer_action *dflt, const uint32_t *flags,
		     bool clear_rules)
{
	struct umem_steer_table t;
	uint32_t bank;
	int err, fd;

	if (!s)
		return -EINVAL;
	if (dflt && (err = umem__steer_check_action(s, dflt)))
		return err;
	if (flags && (*flags & ~TABLE_FLAGS_ALL)) {
		pr_warn("steer %s: unknown table flags 0x%x\n", s->ifname, *flags & ~TABLE_FLAGS_ALL);
		return -EINVAL;
	}
	if ((fd = table_lock(s)) < 0)
		return fd;
	if (!(err = umem__steer_table_read(s, &t, &bank))) {
		if (dflt)
			t.default_action = *dflt;
		if (flags)
			t.flags = *flags;
		if (clear_rules) {
			t.nr_rules = 0;
			t.nr_prefix_rules[0] = t.nr_prefix_rules[1] = 0;
			memset(t.listed, 0, sizeof(t.listed));
		}
		err = table_publish(s, &t, bank);
		/* After the program stopped looking (counts 0), so no frame sees a half-emptied trie. */
		for (uint32_t dir = 0; dir < 2 && clear_rules && !err; dir++)
			err = prefix_walk(s, dir, prefix_clear_one, NULL);
		if (clear_rules && !err)
			err = pstats_walk(s, false);
	}
	table_unlock(s, fd);
	return err;
}

int umem_steer__clear_rules(struct umem_steer *s)
{
	return table_set(s, NULL, NULL, true);
}

int umem_steer__set_default(struct umem_steer *s, const struct umem_steer_action *action)
{
	return action ? table_set(s, action, NULL, false) : -EINVAL;
}

int umem_steer__set_table_flags(struct umem_steer *s, uint32_t table_flags)
{
	return table_set(s, NULL, &table_flags, false);
}

int umem_steer__default(struct umem_steer *s, struct umem_steer_action *out)
{
	struct umem_steer_table t;
	uint32_t bank;
	int err = s && out ? umem__steer_table_read(s, &t, &bank) : -EINVAL;

	if (!err)
		*out = t.default_action;
	return err;
}

int umem_steer__table_flags(struct umem_steer *s, uint32_t *out)
{
	struct umem_steer_table t;
	uint32_t bank;
	int err = s && out ? umem__steer_table_read(s, &t, &bank) : -EINVAL;

	if (!err)
		*out = t.flags;
	return err;
}

int umem_steer__set_socket(struct umem_steer *s, uint32_t index, int xsk_fd)
{
	if (!s)
		return -EINVAL;
	if (index >= s->nr_sockets) {
		pr_warn("steer %s: socket index %u out of range (0..%u)\n", s->ifname, index, s->nr_sockets - 1);
		return -EINVAL;
	}
	if (xsk_fd < 0) {
		if (bpf_map_delete_elem(s->map_fd[SM_XSKS], &index) && errno != ENOENT)
			return -errno;
		return 0;
	}
	if (bpf_map_update_elem(s->map_fd[SM_XSKS], &index, &xsk_fd, BPF_ANY)) {
		int err = -errno;

		pr_warn("steer %s: cannot register socket fd %d at index %u: %s\n", s->ifname, xsk_fd, index,
			strerror(errno));
		return err;
	}
	return 0;
}

/* ---- counters ---- */

static int counter_sum(struct umem_steer *s, int fd, uint32_t key, struct umem_steer_counter *out)
{
	struct umem_steer_counter *v = calloc(s->nr_cpus, sizeof(*v));
	int err = 0;

	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, &key, v)) {
		err = -errno;
	} else {
		*out = (struct umem_steer_counter){};
		for (int c = 0; c < s->nr_cpus; c++) {
			out->packets += v[c].packets;
			out->bytes += v[c].bytes;
		}
	}
	free(v);
	return err;
}

int umem_steer__rule_counter_of(struct umem_steer *s, const struct umem_steer_rule *rule,
				struct umem_steer_counter *out)
{
	struct umem_steer_prefix_rules v;
	struct umem_steer_prefix_key k;
	uint32_t dir;

	if (!s || !rule || !out)
		return -EINVAL;
	if (rule->id < UMEM_STEER_PREFIX_ID_BASE || !(rule->match.fields & (UMEM_STEER_M_SRC | UMEM_STEER_M_DST)))
		return umem_steer__rule_counter(s, rule->id, out);
	/* One lookup of its own prefix, not a walk of the trie. */
	dir = prefix_dir(&rule->match);
	k = prefix_key(dir ? &rule->match.dst : &rule->match.src);
	if (bpf_map_lookup_elem(s->map_fd[SM_PSRC + dir], &k, &v) || v.prefixlen != k.prefixlen)
		return -ENOENT;
	for (uint32_t i = 0; i < v.nr && i < UMEM_STEER_PREFIX_SLOTS; i++)
		if (v.slots[i].rule.id == rule->id)
			return pstats_read(s, rule->id, out);
	return -ENOENT;
}

int umem_steer__rule_counter(struct umem_steer *s, uint32_t rule_id, struct umem_steer_counter *out)
{
	if (s && out && rule_id >= UMEM_STEER_PREFIX_ID_BASE) {
		struct prefix_find f = { .id = rule_id };
		struct umem_steer_table t;
		uint32_t dir, bank;
		int err = umem__steer_table_read(s, &t, &bank);

		if (!err)
			err = prefix_find(s, &t, &f, &dir);
		/* -ENOENT too when it was removed since it was found. */
		return err < 0 ? err : err ? pstats_read(s, rule_id, out) : -ENOENT;
	}
	if (!s || !out || rule_id > UMEM_STEER_RULE_DEFAULT)
		return -EINVAL;
	return counter_sum(s, s->map_fd[SM_RSTATS], rule_id, out);
}

int umem_steer__action_counters(struct umem_steer *s, struct umem_steer_counter *out)
{
	int err;

	if (!s || !out)
		return -EINVAL;
	for (uint32_t i = 0; i < UMEM_STEER_S_NR; i++)
		if ((err = counter_sum(s, s->map_fd[SM_ASTATS], i, &out[i])))
			return err;
	return 0;
}

int umem_steer__reset_counters(struct umem_steer *s)
{
	int err;

	if (!s)
		return -EINVAL;
	for (uint32_t i = 0; i < UMEM_STEER_NR_RULE_STATS; i++)
		if ((err = zero_counter(s, s->map_fd[SM_RSTATS], i)))
			return err;
	for (uint32_t i = 0; i < UMEM_STEER_S_NR; i++)
		if ((err = zero_counter(s, s->map_fd[SM_ASTATS], i)))
			return err;
	/* Prefix rules' counters are apart from the tries: no table edit, no lock. */
	return pstats_walk(s, true);
}

int umem_steer__trace(struct umem_steer *s, int cpu, struct umem_steer_trace *out)
{
	struct umem_steer_trace *v;
	uint32_t zero = 0;
	int err = 0;

	if (!s || !out || cpu < 0 || cpu >= s->nr_cpus)
		return -EINVAL;
	v = calloc(s->nr_cpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(s->map_fd[SM_TRACE], &zero, v))
		err = -errno;
	else
		*out = v[cpu];
	free(v);
	return err;
}

int umem_steer__info(struct umem_steer *s, struct umem_steer_info *out)
{
	struct bpf_prog_info pi = {};
	struct umem_steer_table t;
	uint32_t bank, len = sizeof(pi);
	int err;

	if (!s) {
		pr_warn("steer info: NULL steer\n");
		return -EINVAL;
	}
	if (!umem__out_check(out, offsetof(struct umem_steer_info, generation) + sizeof(uint64_t),
			     "umem_steer_info", "steer info"))
		return -EINVAL;
	if ((err = umem__steer_table_read(s, &t, &bank)))
		return err;
	if (bpf_obj_get_info_by_fd(s->prog_fd, &pi, &len))
		return -errno;
	out->ifindex = s->ifindex;
	out->prog_id = pi.id;
	out->mode = s->mode;
	out->attach = s->attach;
	out->nr_sockets = s->nr_sockets;
	out->nr_queues = s->nr_queues;
	out->owner_pid = t.owner_pid;
	out->owned = s->skel != NULL;
	out->generation = t.generation;
	if (OPTS_HAS(out, owner_alive))
		out->owner_alive = umem__steer_owner_alive(&t);
	if (OPTS_HAS(out, prefix_ids))
		out->prefix_ids = t.next_prefix_id;
	return 0;
}

int umem_steer__prog_fd(const struct umem_steer *s)
{
	return s ? s->prog_fd : -EINVAL;
}

int umem_steer__link_fd(const struct umem_steer *s)
{
	if (!s)
		return -EINVAL;
	return s->link_fd >= 0 ? s->link_fd : -ENOENT;
}

int umem_steer__xsks_fd(const struct umem_steer *s)
{
	return s ? s->map_fd[SM_XSKS] : -EINVAL;
}

int umem__fds_out(const int *fds, size_t n, int *out, uint32_t max)
{
	uint32_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (fds[i] < 0)
			continue;
		if (k == max)
			return -ENOSPC;
		out[k++] = fds[i];
	}
	return (int)k;
}

int umem_steer__map_fds(const struct umem_steer *s, int *out, uint32_t max)
{
	if (!s || (!out && max))
		return -EINVAL;
	return umem__fds_out(s->map_fd, SM_NR, out, max);
}
