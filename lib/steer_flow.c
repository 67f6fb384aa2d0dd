/* SPDX-License-Identifier: MIT */
/* Steering flow table (offload): add, delete, look up, iterate and expire flows; the ordered
 * switch's gate; the per-program flow counters; frame parsing into flow keys. */
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <umem/steer.h>
#include "internal.h"
#include "steer_internal.h"
#include "steer.skel.h"

/* The flow maps a handle holds, in the order of flow_maps[]; the optional ones (the sources
 * map, and the IPv4 map a program from before it lacks) last. */
enum flow_map { FM_FLOWS, FM_GATE, FM_STATS, FM_CONF, FM_DEVS, FM_L2SRC, FM_FLOWS4, FM_NR };

struct umem_steer_flows {
	int fd[FM_NR];
	uint32_t max;  /* entries of the flow map */
	int nr_cpus;
};

static void close_all(int *fds, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (fds[k] >= 0) {
			close(fds[k]);
			fds[k] = -1;
		}
}

/* A copy of the pool's fd of map id, or -1 when the pool has none. */
static int pool_fd(const int *pool, uint32_t nr_pool, uint32_t id)
{
	for (uint32_t i = 0; i < nr_pool; i++) {
		struct bpf_map_info mi = {};
		uint32_t mlen = sizeof(mi);

		if (!bpf_obj_get_info_by_fd(pool[i], &mi, &mlen) && mi.id == id)
			return fcntl(pool[i], F_DUPFD_CLOEXEC, 0);
	}
	return -1;
}

int umem__prog_maps(int prog_fd, const char *const *names, const uint32_t *value_sizes, int *fds,
		    uint32_t *max_entries, size_t n, const int *pool, uint32_t nr_pool)
{
	struct bpf_prog_info pi = {};
	uint32_t ids[32], len = sizeof(pi);
	int err = 0, denied = 0;

	pi.nr_map_ids = sizeof(ids) / sizeof(ids[0]);
	pi.map_ids = (uintptr_t)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &pi, &len))
		return -errno;
	for (uint32_t i = 0; i < pi.nr_map_ids && i < sizeof(ids) / sizeof(ids[0]); i++) {
		struct bpf_map_info mi = {};
		uint32_t mlen = sizeof(mi);
		int fd = pool_fd(pool, nr_pool, ids[i]);
		size_t k;

		if (fd < 0)
			fd = bpf_map_get_fd_by_id(ids[i]);
		if (fd < 0 && (errno == EPERM || errno == EACCES) && nr_pool) {
			denied = -errno; /* a map not handed over: an error only if it is one of names */
			continue;
		}
		if (fd < 0 && (errno == EPERM || errno == EACCES)) {
			err = -errno;
			pr_warn("cannot open the maps of BPF program by id: %s (needs CAP_SYS_ADMIN)\n", strerror(errno));
			close_all(fds, n);
			return err;
		}
		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &mi, &mlen)) {
			close(fd);
			continue;
		}
		for (k = 0; k < n; k++) {
			if (strcmp(mi.name, names[k]) || fds[k] >= 0)
				continue;
			if (value_sizes && value_sizes[k] && mi.value_size != value_sizes[k]) {
				pr_warn("BPF program's map %s holds %u-byte values, this libumem %u: a program from "
					"another version; replace it\n", names[k], mi.value_size, value_sizes[k]);
				err = -EPROTO;
				k = n; /* closed below */
				break;
			}
			fds[k] = fd;
			if (max_entries)
				max_entries[k] = mi.max_entries;
			break;
		}
		if (k == n)
			close(fd);
	}
	/* A name not found may be a map that could not be opened (its name is not known then). */
	for (size_t k = 0; k < n && denied && !err; k++)
		if (fds[k] < 0) {
			err = denied;
			pr_warn("cannot open map %s of the BPF program: not handed over, and by id it needs "
				"CAP_SYS_ADMIN\n", names[k]);
		}
	if (err)
		close_all(fds, n);
	return err;
}

static const char *const flow_maps[FM_NR] = {
	[FM_FLOWS] = UMEM_STEER_MAP_FLOWS, [FM_FLOWS4] = UMEM_STEER_MAP_FLOWS4, [FM_GATE] = UMEM_STEER_MAP_FLOW_GATE,
	[FM_STATS] = UMEM_STEER_MAP_FLOW_STATS, [FM_CONF] = UMEM_STEER_MAP_FLOW_CONF,
	[FM_DEVS] = UMEM_STEER_MAP_DEVS, [FM_L2SRC] = UMEM_STEER_MAP_L2_SOURCES,
};
/* The maps that hold flows (steer_flows4 may be absent: -1). */
static const enum flow_map flow_tables[] = { FM_FLOWS, FM_FLOWS4 };
/* Another build's program (opened by id) must lay its flows out as this libumem does. */
static const uint32_t flow_sizes[FM_NR] = { [FM_FLOWS] = sizeof(struct umem_steer_flow),
					    [FM_FLOWS4] = sizeof(struct umem_steer_flow) };

struct umem_steer_flows *umem_steer_flows__open(struct umem_steer *s)
{
	int prog_fd = umem_steer__prog_fd(s), *fds, err;
	uint32_t max[FM_NR] = { 0 };
	struct umem_steer_flows *f;

	if (prog_fd < 0) {
		errno = EINVAL;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	fds = f->fd;
	for (size_t k = 0; k < FM_NR; k++)
		fds[k] = -1;
	f->nr_cpus = libbpf_num_possible_cpus();
	if (f->nr_cpus <= 0) {
		err = -EIO;
	} else if (s->skel) {
		/* Our own object: its fds, duplicated (no lookup by id, which needs CAP_SYS_ADMIN;
		 * xdp-fwd holds only the capabilities the program needs). */
		err = 0;
		for (size_t k = 0; k < FM_NR; k++) {
			struct bpf_map *m = bpf_object__find_map_by_name(s->skel->obj, flow_maps[k]);

			if (m && bpf_map__fd(m) >= 0) {
				fds[k] = fcntl(bpf_map__fd(m), F_DUPFD_CLOEXEC, 0);
				max[k] = bpf_map__max_entries(m);
				if (fds[k] < 0)
					err = -errno;
			}
		}
	} else if (s->pin_dir) {
		/* Opened from pins: the maps' pins, as the handle's (no lookup by id either). */
		err = 0;
		for (size_t k = 0; k < FM_NR && !err; k++) {
			fds[k] = umem__steer_pin_get(s->pin_dir, flow_maps[k], flow_sizes[k], &max[k]);
			err = fds[k] == -ENOENT ? 0 : fds[k] < 0 ? fds[k] : 0;
			fds[k] = fds[k] < 0 ? -1 : fds[k];
		}
	} else {
		err = umem__prog_maps(prog_fd, flow_maps, flow_sizes, fds, max, FM_NR, s->given, s->nr_given);
	}
	f->max = max[FM_FLOWS];
	/* The sources map is optional (-EOPNOTSUPP from umem_steer_flows__l2_sources), and so is
	 * the IPv4 map (a program from before it looks IPv4 flows up in steer_flows, by the whole
	 * key): a program from a build before them still has a flow table, which a successor that
	 * took it over (xdp-fwd --takeover) drives as that program reads it. */
	for (size_t k = 0; k < FM_L2SRC && !err; k++) {
		if (fds[k] < 0) {
			pr_warn("steer flows: the program lacks map %s: not a umem_steer with a flow table\n",
				flow_maps[k]);
			err = -ENOENT;
		}
	}
	if (!err)
		return f;
	close_all(f->fd, FM_NR);
	free(f);
	errno = -err;
	return NULL;
}

int umem_steer_flows__map_fds(const struct umem_steer_flows *f, int *out, uint32_t max)
{
	return umem__fds_out(f->fd, FM_NR, out, max);
}

void umem_steer_flows__close(struct umem_steer_flows *f)
{
	if (!f)
		return;
	close_all(f->fd, FM_NR);
	free(f);
}

static int conf_read(struct umem_steer_flows *f, struct umem_steer_flow_conf *c)
{
	uint32_t zero = 0;

	return bpf_map_lookup_elem(f->fd[FM_CONF], &zero, c) ? -errno : 0;
}

static int conf_write(struct umem_steer_flows *f, const struct umem_steer_flow_conf *c)
{
	uint32_t zero = 0;

	return bpf_map_update_elem(f->fd[FM_CONF], &zero, c, BPF_ANY) ? -errno : 0;
}

static uint32_t conf_limit(const struct umem_steer_flows *f, const struct umem_steer_flow_conf *c)
{
	return c->limit && c->limit < f->max ? c->limit : f->max;
}

static int check_key(const struct umem_steer_flow_key *k)
{
	static const uint8_t zero[16];

	if (!k->ifindex) {
		pr_warn("steer flows: a flow key needs the ingress ifindex\n");
		return -EINVAL;
	}
	switch (k->kind) {
	case UMEM_STEER_FLOW_IPV4:
		if (memcmp(k->saddr + 4, zero, 12) || memcmp(k->daddr + 4, zero, 12))
			goto bad_bytes;
		/* fall through */
	case UMEM_STEER_FLOW_IPV6:
		if (k->l4proto != IPPROTO_TCP && k->l4proto != IPPROTO_UDP) {
			pr_warn("steer flows: 5-tuple flows are TCP or UDP (protocol %u)\n", k->l4proto);
			return -EINVAL;
		}
		if (k->vlan || memcmp(k->dmac, zero, 6))
			goto bad_bytes;
		return 0;
	case UMEM_STEER_FLOW_L2:
		if (k->dmac[0] & 1) {
			pr_warn("steer flows: an L2 flow's destination must be unicast\n");
			return -EINVAL;
		}
		if (k->vlan > 4095) {
			pr_warn("steer flows: VLAN id %u out of range (0..4095)\n", k->vlan);
			return -EINVAL;
		}
		if (k->l4proto || k->sport || k->dport || memcmp(k->saddr, zero, 16) || memcmp(k->daddr, zero, 16))
			goto bad_bytes;
		return 0;
	default:
		pr_warn("steer flows: unknown flow kind %u\n", k->kind);
		return -EINVAL;
	}
bad_bytes:
	/* The program builds keys with every unused byte zero: such a key would never match. */
	pr_warn("steer flows: key bytes unused by kind %u must be zero\n", k->kind);
	return -EINVAL;
}

/* Where a flow lives: an IPv4 5-tuple in steer_flows4 by its short key (built in *k4), the
 * other kinds (and all, in a program without steer_flows4) in steer_flows by the whole one.
 * Returns that map's fd; *mkey: the key it takes. */
static int flow_map_of(const struct umem_steer_flows *f, const struct umem_steer_flow_key *k,
		       struct umem_steer_flow_key4 *k4, const void **mkey)
{
	if (k->kind != UMEM_STEER_FLOW_IPV4 || f->fd[FM_FLOWS4] < 0) {
		*mkey = k;
		return f->fd[FM_FLOWS];
	}
	memset(k4, 0, sizeof(*k4)); /* the kernel hashes every byte */
	k4->ifindex = k->ifindex;
	k4->l4proto = k->l4proto;
	k4->sport = k->sport;
	k4->dport = k->dport;
	memcpy(k4->saddr, k->saddr, 4);
	memcpy(k4->daddr, k->daddr, 4);
	*mkey = k4;
	return f->fd[FM_FLOWS4];
}

/* The whole key of steer_flows4's k4, as the API gives it. */
static void key_of4(const struct umem_steer_flow_key4 *k4, struct umem_steer_flow_key *k)
{
	memset(k, 0, sizeof(*k));
	k->ifindex = k4->ifindex;
	k->kind = UMEM_STEER_FLOW_IPV4;
	k->l4proto = k4->l4proto;
	k->sport = k4->sport;
	k->dport = k4->dport;
	memcpy(k->saddr, k4->saddr, 4);
	memcpy(k->daddr, k4->daddr, 4);
}

_Static_assert(sizeof(struct umem_steer_flow) == 96 && offsetof(struct umem_steer_flow, imac) == 88,
	       "struct umem_steer_flow grows at its end only (its size is the map's version, see flow_sizes)");

static int check_flow(const struct umem_steer_flow_key *k, const struct umem_steer_flow *fl)
{
	if (fl->flags & ~(uint32_t)(UMEM_STEER_FLOW_F_ORDERED | UMEM_STEER_FLOW_F_ROUTE | UMEM_STEER_FLOW_F_MARK_DATA)) {
		pr_warn("steer flows: unknown flow flags 0x%x\n", fl->flags);
		return -EINVAL;
	}
	if (fl->tag && !(fl->flags & UMEM_STEER_FLOW_F_ORDERED)) {
		pr_warn("steer flows: a gate tag (%u) needs UMEM_STEER_FLOW_F_ORDERED\n", fl->tag);
		return -EINVAL;
	}
	if ((fl->flags & UMEM_STEER_FLOW_F_MARK_DATA) && !fl->tag) {
		pr_warn("steer flows: UMEM_STEER_FLOW_F_MARK_DATA needs a gate tag\n");
		return -EINVAL;
	}
	if (fl->flags & UMEM_STEER_FLOW_F_ROUTE) {
		static const uint8_t zero[6];

		if (fl->action != UMEM_STEER_FLOW_A_REDIRECT ||
		    (k->kind != UMEM_STEER_FLOW_IPV4 && k->kind != UMEM_STEER_FLOW_IPV6)) {
			pr_warn("steer flows: a routed flow (UMEM_STEER_FLOW_F_ROUTE) is a redirect of an IPv4 or IPv6 5-tuple\n");
			return -EINVAL;
		}
		if ((fl->dmac[0] & 1) || !memcmp(fl->dmac, zero, 6) || (fl->smac[0] & 1) || !memcmp(fl->smac, zero, 6) ||
		    (fl->imac[0] & 1) || !memcmp(fl->imac, zero, 6)) {
			pr_warn("steer flows: a routed flow's destination, source and ingress MACs must be unicast, not zero\n");
			return -EINVAL;
		}
		if (fl->mtu && fl->mtu < (k->kind == UMEM_STEER_FLOW_IPV4 ? 68u : 1280u)) {
			pr_warn("steer flows: MTU %u is below the protocol's minimum (IPv4 68, IPv6 1280)\n", fl->mtu);
			return -EINVAL;
		}
	}
	switch (fl->action) {
	case UMEM_STEER_FLOW_A_REDIRECT:
		if (!fl->index) {
			pr_warn("steer flows: redirect needs an egress ifindex\n");
			return -EINVAL;
		}
		return 0;
	case UMEM_STEER_FLOW_A_DROP:
	case UMEM_STEER_FLOW_A_PASS:
	case UMEM_STEER_FLOW_A_SOCK:
		return 0;
	default:
		pr_warn("steer flows: unknown flow action %u\n", fl->action);
		return -EINVAL;
	}
}

int umem_steer_flows__add(struct umem_steer_flows *f, const struct umem_steer_flow_key *key,
			  const struct umem_steer_flow *flow)
{
	struct umem_steer_flow_conf c;
	struct umem_steer_flow_key4 k4;
	struct umem_steer_flow v;
	char ifname[IF_NAMESIZE];
	const void *mkey;
	int err, fd;

	if (!f || !key || !flow)
		return -EINVAL;
	if ((err = check_key(key)) || (err = check_flow(key, flow)) || (err = conf_read(f, &c)))
		return err;
	fd = flow_map_of(f, key, &k4, &mkey);
	if (!bpf_map_lookup_elem(fd, mkey, &v))
		return -EEXIST;
	if (c.nr >= conf_limit(f, &c)) {
		pr_debug("steer flows: table full (%u flows)\n", c.nr);
		return -ENOSPC;
	}
	if (flow->action == UMEM_STEER_FLOW_A_REDIRECT) {
		uint32_t ifindex = flow->index;

		if (!if_indextoname(ifindex, ifname)) {
			pr_warn("steer flows: no interface with index %u to redirect to\n", ifindex);
			return -ENODEV;
		}
		if (bpf_map_update_elem(f->fd[FM_DEVS], &ifindex, &ifindex, BPF_ANY)) {
			err = -errno;
			pr_warn("steer flows: %s cannot be a redirect target: %s\n", ifname, strerror(errno));
			return err;
		}
	}
	v = (struct umem_steer_flow){ .action = flow->action, .flags = flow->flags, .index = flow->index,
				      .tag = flow->tag, .last_ns = umem_steer_flows__now_ns(), .mtu = flow->mtu };
	memcpy(v.dmac, flow->dmac, 6);
	memcpy(v.smac, flow->smac, 6);
	memcpy(v.imac, flow->imac, 6);
	/* No gate until the first release: frames queued before the add are not counted in
	 * gated, so only the caller can say when it holds none of them. */
	bpf_map_delete_elem(f->fd[FM_GATE], key);
	if (bpf_map_update_elem(fd, mkey, &v, BPF_NOEXIST))
		return -errno;
	c.nr++;
	c.kinds |= 1u << key->kind;
	return conf_write(f, &c);
}

int umem_steer_flows__delete(struct umem_steer_flows *f, const struct umem_steer_flow_key *key)
{
	struct umem_steer_flow_conf c;
	struct umem_steer_flow_key4 k4;
	const void *mkey;
	int err, fd;

	if (!f || !key)
		return -EINVAL;
	fd = flow_map_of(f, key, &k4, &mkey);
	if (bpf_map_delete_elem(fd, mkey))
		return -errno;
	bpf_map_delete_elem(f->fd[FM_GATE], key);
	if ((err = conf_read(f, &c)))
		return err;
	if (c.nr)
		c.nr--;
	return conf_write(f, &c);
}

int umem_steer_flows__lookup(struct umem_steer_flows *f, const struct umem_steer_flow_key *key,
			     struct umem_steer_flow *out)
{
	struct umem_steer_flow_key4 k4;
	const void *mkey;
	int fd;

	if (!f || !key || !out)
		return -EINVAL;
	fd = flow_map_of(f, key, &k4, &mkey);
	return bpf_map_lookup_elem(fd, mkey, out) ? -errno : 0;
}

int umem_steer_flows__release(struct umem_steer_flows *f, const struct umem_steer_flow_key *key, uint64_t sent)
{
	struct umem_steer_flow_key4 k4;
	struct umem_steer_flow v;
	const void *mkey;
	int fd;

	if (!f || !key)
		return -EINVAL;
	fd = flow_map_of(f, key, &k4, &mkey);
	if (bpf_map_lookup_elem(fd, mkey, &v))
		return -errno; /* a deleted flow gets no gate */
	return bpf_map_update_elem(f->fd[FM_GATE], key, &sent, BPF_ANY) ? -errno : 0;
}

/* The keys of the maps map_walk goes over. */
union map_key {
	struct umem_steer_flow_key flow;
	struct umem_steer_flow_key4 flow4;
	struct umem_steer_l2_source_key l2;
};

/* Calls visit(key, value, ctx) for each entry of hash map fd still there when it is looked up
 * (value: a buffer of the map's value size); a non-zero return stops. The next key is taken
 * before the visit, so the visit may delete the current one. At most bound keys: under LRU
 * churn, a key evicted meanwhile restarts get_next_key from the first one. Returns the
 * entries visited. */
static int map_walk(int fd, void *value, uint32_t bound, int (*visit)(const void *key, void *value, void *ctx),
		    void *ctx)
{
	union map_key k, next;
	int n = 0;
	bool more = !bpf_map_get_next_key(fd, NULL, &next);

	for (uint32_t i = 0; more && i < bound; i++) {
		k = next;
		more = !bpf_map_get_next_key(fd, &k, &next);
		if (bpf_map_lookup_elem(fd, &k, value))
			continue; /* gone meanwhile (deleted or evicted) */
		n++;
		if (visit(&k, value, ctx))
			break;
	}
	return n;
}

struct flow_walk {
	struct umem_steer_flows *f;
	umem_steer_flow_fn fn;
	void *arg;
	uint64_t now, idle_ns;
	bool expire, stopped;
	int expired;
	enum flow_map map; /* the map walked: FM_FLOWS or FM_FLOWS4 */
	struct umem_steer_flow v;
};

static int flow_visit(const void *mkey, void *value, void *ctx)
{
	struct flow_walk *fw = ctx;
	const struct umem_steer_flow *v = value;
	const struct umem_steer_flow_key *key = mkey;
	struct umem_steer_flow_key whole;

	if (fw->map == FM_FLOWS4) {
		key_of4(mkey, &whole);
		key = &whole;
	}
	if (!fw->expire)
		return (fw->stopped = fw->fn && fw->fn(key, v, fw->arg));
	if (fw->now > v->last_ns && fw->now - v->last_ns > fw->idle_ns && !bpf_map_delete_elem(fw->f->fd[fw->map], mkey)) {
		bpf_map_delete_elem(fw->f->fd[FM_GATE], key);
		fw->expired++;
		if (fw->fn)
			fw->fn(key, v, fw->arg);
	}
	return 0;
}

/* Calls fn for every flow (expire: for every flow idle longer than idle_ns, deleted first);
 * fn's non-zero return stops a plain walk. */
static int walk(struct umem_steer_flows *f, umem_steer_flow_fn fn, void *arg, uint64_t idle_ns, bool expire)
{
	struct flow_walk fw = { .f = f, .fn = fn, .arg = arg, .now = umem_steer_flows__now_ns(),
				.idle_ns = idle_ns, .expire = expire };
	int n = 0;

	for (size_t i = 0; i < sizeof(flow_tables) / sizeof(flow_tables[0]) && !fw.stopped; i++) {
		fw.map = flow_tables[i];
		if (f->fd[fw.map] >= 0)
			n += map_walk(f->fd[fw.map], &fw.v, f->max ? f->max : UINT32_MAX, flow_visit, &fw);
	}

	if (expire) {
		/* Recount: corrects what flows lost behind the API's back (LRU eviction). */
		struct umem_steer_flow_conf c;
		int err = conf_read(f, &c);

		if (!err) {
			c.nr = (uint32_t)(n - fw.expired);
			err = conf_write(f, &c);
		}
		if (err)
			return err;
		return fw.expired;
	}
	return n;
}

int umem_steer_flows__foreach(struct umem_steer_flows *f, umem_steer_flow_fn fn, void *arg)
{
	return f ? walk(f, fn, arg, 0, false) : -EINVAL;
}

int umem_steer_flows__expire(struct umem_steer_flows *f, uint64_t idle_ns, umem_steer_flow_fn fn, void *arg)
{
	return f ? walk(f, fn, arg, idle_ns, true) : -EINVAL;
}

struct source_walk {
	umem_steer_l2_source_fn fn;
	void *arg;
	struct umem_steer_l2_source v;
};

static int source_visit(const void *key, void *value, void *ctx)
{
	const struct source_walk *sw = ctx;

	return sw->fn(key, value, sw->arg);
}

int umem_steer_flows__l2_sources(struct umem_steer_flows *f, umem_steer_l2_source_fn fn, void *arg)
{
	struct source_walk sw = { .fn = fn, .arg = arg };

	if (!f || !fn)
		return -EINVAL;
	if (f->fd[FM_L2SRC] < 0)
		return -EOPNOTSUPP; /* a program from before the map */
	return map_walk(f->fd[FM_L2SRC], &sw.v, UMEM_STEER_MAX_L2_SOURCES, source_visit, &sw);
}

int umem_steer_flows__clear(struct umem_steer_flows *f)
{
	struct umem_steer_flow_conf c;
	int err;

	if (!f)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(flow_tables) / sizeof(flow_tables[0]); i++) {
		int fd = f->fd[flow_tables[i]];

		for (union map_key k; fd >= 0 && !bpf_map_get_next_key(fd, NULL, &k);)
			bpf_map_delete_elem(fd, &k);
	}
	for (struct umem_steer_flow_key k; !bpf_map_get_next_key(f->fd[FM_GATE], NULL, &k);)
		bpf_map_delete_elem(f->fd[FM_GATE], &k);
	for (struct umem_steer_l2_source_key k; f->fd[FM_L2SRC] >= 0 && !bpf_map_get_next_key(f->fd[FM_L2SRC], NULL, &k);)
		bpf_map_delete_elem(f->fd[FM_L2SRC], &k);
	if ((err = conf_read(f, &c)))
		return err;
	c.nr = 0;
	c.kinds = 0;
	return conf_write(f, &c);
}

int umem_steer_flows__set_limit(struct umem_steer_flows *f, uint32_t limit)
{
	struct umem_steer_flow_conf c;
	int err;

	if (!f)
		return -EINVAL;
	if (limit > f->max) {
		pr_warn("steer flows: limit %u beyond the table's %u entries\n", limit, f->max);
		return -EINVAL;
	}
	if ((err = conf_read(f, &c)))
		return err;
	c.limit = limit;
	return conf_write(f, &c);
}

int umem_steer_flows__count(struct umem_steer_flows *f, uint32_t *nr, uint32_t *limit)
{
	struct umem_steer_flow_conf c;
	int err;

	if (!f)
		return -EINVAL;
	if ((err = conf_read(f, &c)))
		return err;
	if (nr)
		*nr = c.nr;
	if (limit)
		*limit = conf_limit(f, &c);
	return 0;
}

int umem_steer_flows__counters(struct umem_steer_flows *f, struct umem_steer_counter *out)
{
	struct umem_steer_counter *v;
	int err = 0;

	if (!f || !out)
		return -EINVAL;
	v = calloc(f->nr_cpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (uint32_t i = 0; i < UMEM_STEER_FS_NR && !err; i++) {
		if (bpf_map_lookup_elem(f->fd[FM_STATS], &i, v)) {
			err = -errno;
			break;
		}
		out[i] = (struct umem_steer_counter){ 0 };
		for (int c = 0; c < f->nr_cpus; c++) {
			out[i].packets += v[c].packets;
			out[i].bytes += v[c].bytes;
		}
	}
	free(v);
	return err;
}

/* The monotonic offset of this process's time namespace (time_namespaces(7)), in ns: the
 * program's clock has none. Fixed once a process is in the namespace; 0 without the file. */
static int64_t timens_offset_ns(void)
{
	static _Atomic int64_t offset;
	static _Atomic int read_once;
	long long sec = 0, nsec = 0;
	char name[32];
	FILE *fp;

	if (atomic_load_explicit(&read_once, memory_order_acquire))
		return atomic_load_explicit(&offset, memory_order_relaxed);
	fp = fopen("/proc/self/timens_offsets", "re");
	while (fp && fscanf(fp, "%31s %lld %lld", name, &sec, &nsec) == 3)
		if (!strcmp(name, "monotonic"))
			atomic_store_explicit(&offset, (int64_t)(sec * 1000000000ll + nsec), memory_order_relaxed);
	if (fp)
		fclose(fp);
	atomic_store_explicit(&read_once, 1, memory_order_release);
	return atomic_load_explicit(&offset, memory_order_relaxed);
}

uint64_t umem_steer_flows__now_ns(void)
{
	struct timespec ts;

	/* The program stamps flows with bpf_ktime_get_coarse_ns(), this clock as the host sees it:
	 * a time namespace's offset taken out. */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec - (uint64_t)timens_offset_ns();
}

/* ---- keys from frames (the program's parse, for the kinds a controller installs) ---- */

int umem_steer_flow_key__parse(const void *frame, uint32_t len, uint32_t ifindex, uint32_t kind,
			       struct umem_steer_flow_key *out)
{
	const uint8_t *p = frame;
	struct umem_steer_flow_key k = { .ifindex = ifindex };
	uint32_t off = 12;
	uint16_t proto, vlan = 0;
	bool tagged = false;

	if (!frame || !out || !ifindex || (kind != UMEM_STEER_FLOW_L2 && kind != UMEM_STEER_FLOW_IPV4))
		return -EINVAL;
	if (len < 14)
		return -ENOENT;
	proto = (uint16_t)(p[12] << 8 | p[13]);
	for (int i = 0; i < UMEM_STEER_MAX_VLAN && (proto == 0x8100 || proto == 0x88a8); i++) {
		if (len < off + 6)
			return -ENOENT;
		if (!tagged)
			vlan = (uint16_t)((p[off + 2] << 8 | p[off + 3]) & 0x0fff);
		tagged = true;
		proto = (uint16_t)(p[off + 4] << 8 | p[off + 5]);
		off += 4;
	}
	off += 2;
	if (kind == UMEM_STEER_FLOW_L2) {
		/* Group addresses flood; ARP (and ND, below) belong to the host's control. */
		if ((p[0] & 1) || proto == 0x0806 || proto == 0x8100 || proto == 0x88a8)
			return -ENOENT;
		if (proto == 0x86dd && len >= off + 41 && p[off + 6] == 58 && p[off + 40] >= 133 && p[off + 40] <= 137)
			return -ENOENT;
		memcpy(k.dmac, p, 6);
		k.kind = UMEM_STEER_FLOW_L2;
		k.vlan = vlan;
		*out = k;
		return 0;
	}
	/* 5-tuple: IPv4 without fragmentation; IPv6 through the hop-by-hop, routing and
	 * destination options headers the program walks (UMEM_STEER_MAX_EXTHDR), not a fragment.
	 * As the program reads it: a frame it takes for the flow and this does not would be gated
	 * unseen, and its gate forced open. */
	if (proto == 0x0800) {
		uint32_t ihl;

		if (len < off + 20 || (p[off] >> 4) != 4 || (ihl = (p[off] & 15) * 4u) < 20)
			return -ENOENT;
		if ((p[off + 6] & 0x3f) || p[off + 7])
			return -ENOENT; /* MF or an offset */
		k.kind = UMEM_STEER_FLOW_IPV4;
		k.l4proto = p[off + 9];
		memcpy(k.saddr, p + off + 12, 4);
		memcpy(k.daddr, p + off + 16, 4);
		off += ihl;
	} else if (proto == 0x86dd) {
		if (len < off + 40 || (p[off] >> 4) != 6)
			return -ENOENT;
		k.kind = UMEM_STEER_FLOW_IPV6;
		k.l4proto = p[off + 6];
		memcpy(k.saddr, p + off + 8, 16);
		memcpy(k.daddr, p + off + 24, 16);
		off += 40;
		for (int i = 0; i < UMEM_STEER_MAX_EXTHDR && umem__ipv6_exthdr(k.l4proto); i++) {
			if (k.l4proto == 44 || len < off + 8)
				return -ENOENT; /* a fragment, or cut short */
			k.l4proto = p[off];
			off += (p[off + 1] + 1u) * 8;
		}
	} else {
		return -ENOENT;
	}
	if ((k.l4proto != IPPROTO_TCP && k.l4proto != IPPROTO_UDP) || len < off + 4)
		return -ENOENT;
	k.sport = (uint16_t)(p[off] << 8 | p[off + 1]);
	k.dport = (uint16_t)(p[off + 2] << 8 | p[off + 3]);
	*out = k;
	return 0;
}

static const char *const flow_action_names[UMEM_STEER_FLOW_A_NR] = {
	[UMEM_STEER_FLOW_A_REDIRECT] = "redirect", [UMEM_STEER_FLOW_A_DROP] = "drop",
	[UMEM_STEER_FLOW_A_PASS] = "pass", [UMEM_STEER_FLOW_A_SOCK] = "sock",
};

static const char *const flow_stat_names[UMEM_STEER_FS_NR] = {
	[UMEM_STEER_FS_REDIRECT] = "redirect", [UMEM_STEER_FS_DROP] = "drop",
	[UMEM_STEER_FS_PASS] = "pass", [UMEM_STEER_FS_SOCK] = "sock",
	[UMEM_STEER_FS_GATED] = "gated", [UMEM_STEER_FS_NO_DEV] = "no_dev",
	[UMEM_STEER_FS_CSUM_PARTIAL] = "csum_partial", [UMEM_STEER_FS_ROUTE_KEPT] = "route_kept",
};

const char *umem_steer_flow_stat__name(uint32_t stat)
{
	return stat < UMEM_STEER_FS_NR ? flow_stat_names[stat] : NULL;
}

static const char *ifname_of(uint32_t ifindex, char *buf)
{
	if (!if_indextoname(ifindex, buf))
		snprintf(buf, IF_NAMESIZE, "if%u", ifindex);
	return buf;
}

int umem_steer_flow__format(const struct umem_steer_flow_key *key, const struct umem_steer_flow *flow,
			    char *buf, size_t len)
{
	char in[IF_NAMESIZE], out[IF_NAMESIZE], sa[INET6_ADDRSTRLEN] = "", da[INET6_ADDRSTRLEN] = "";
	char match[160], act[128], unmarked[64] = "", partial[48] = "", kept[48] = "";
	int af = key->kind == UMEM_STEER_FLOW_IPV6 ? AF_INET6 : AF_INET;

	if (key->kind == UMEM_STEER_FLOW_L2) {
		snprintf(match, sizeof(match), "in %s dmac %02x:%02x:%02x:%02x:%02x:%02x vlan %u",
			 ifname_of(key->ifindex, in), key->dmac[0], key->dmac[1], key->dmac[2], key->dmac[3],
			 key->dmac[4], key->dmac[5], key->vlan);
	} else {
		inet_ntop(af, key->saddr, sa, sizeof(sa));
		inet_ntop(af, key->daddr, da, sizeof(da));
		snprintf(match, sizeof(match), "in %s %s %s %s:%u > %s:%u", ifname_of(key->ifindex, in),
			 af == AF_INET6 ? "ipv6" : "ipv4", key->l4proto == IPPROTO_TCP ? "tcp" : "udp", sa,
			 key->sport, da, key->dport);
	}
	if (flow->action == UMEM_STEER_FLOW_A_REDIRECT && (flow->flags & UMEM_STEER_FLOW_F_ROUTE))
		snprintf(act, sizeof(act),
			 "route %s dmac %02x:%02x:%02x:%02x:%02x:%02x smac %02x:%02x:%02x:%02x:%02x:%02x mtu %u",
			 ifname_of(flow->index, out), flow->dmac[0], flow->dmac[1], flow->dmac[2], flow->dmac[3],
			 flow->dmac[4], flow->dmac[5], flow->smac[0], flow->smac[1], flow->smac[2], flow->smac[3],
			 flow->smac[4], flow->smac[5], flow->mtu);
	else if (flow->action == UMEM_STEER_FLOW_A_REDIRECT)
		snprintf(act, sizeof(act), "redirect %s", ifname_of(flow->index, out));
	else if (flow->action == UMEM_STEER_FLOW_A_SOCK)
		snprintf(act, sizeof(act), "sock %u", flow->index);
	else
		snprintf(act, sizeof(act), "%s",
			 flow->action < UMEM_STEER_FLOW_A_NR && flow_action_names[flow->action] ?
				 flow_action_names[flow->action] : "?");
	if (flow->unmarked)
		snprintf(unmarked, sizeof(unmarked), " (%llu unmarked: no XDP metadata here)",
			 (unsigned long long)flow->unmarked);
	if (flow->csum_partial)
		snprintf(partial, sizeof(partial), " csum_partial %llu", (unsigned long long)flow->csum_partial);
	if (flow->route_kept)
		snprintf(kept, sizeof(kept), " route_kept %llu", (unsigned long long)flow->route_kept);
	return snprintf(buf, len, "%s -> %s%s packets %llu bytes %llu gated %llu%s%s%s idle %.1fs", match, act,
			(flow->flags & UMEM_STEER_FLOW_F_ORDERED) && !flow->open ? " (gate shut)" : "",
			(unsigned long long)flow->packets, (unsigned long long)flow->bytes,
			(unsigned long long)flow->gated, unmarked, partial, kept,
			(double)(umem_steer_flows__now_ns() - flow->last_ns) / 1e9);
}
