/* SPDX-License-Identifier: MIT */
/* Steering program: load, attach (bpf_link or libxdp), rule table, sockets, counters. */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include <umem/steer.h>
#include "internal.h"
#include "steer.skel.h"

#define NR_SOCKETS_DEFAULT 64u
#define NR_SOCKETS_MAX 65536u

struct umem_steer {
	struct steer *skel;          /* set when this handle loaded the program */
	struct xdp_program *xdp_prog; /* UMEM_STEER_ATTACH_LIBXDP */
	int link_fd;                 /* UMEM_STEER_ATTACH_LINK */
	int prog_fd;
	int tables_fd, active_fd, xsks_fd, rstats_fd, astats_fd, trace_fd;
	int own_fds;                 /* the map/prog fds were opened by id (umem_steer__open) */
	uint32_t ifindex;
	char ifname[IF_NAMESIZE];
	uint32_t mode;
	uint32_t attach;
	uint32_t nr_sockets;
	uint32_t nr_queues;
	uint32_t xdp_flags;          /* XDP_FLAGS_* mode used for the attachment */
	int nr_cpus;
};

/* ---- interface facts ---- */

/* Start time of a process (field 22 of /proc/pid/stat), so a reused pid is not taken for the
 * owner. 0 when the process does not exist. */
static uint64_t proc_start_time(uint32_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	/* The command name may hold spaces and parentheses: fields restart after the last ')'. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
			 &start) != 1)
		return 0;
	return start;
}

static int owner_alive(const struct umem_steer_table *t)
{
	return t->owner_pid && proc_start_time(t->owner_pid) == t->owner_start;
}

/* ---- table access ---- */

static int table_read(struct umem_steer *s, struct umem_steer_table *t, uint32_t *bank)
{
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(s->active_fd, &zero, bank) || *bank > 1 ||
	    bpf_map_lookup_elem(s->tables_fd, bank, t)) {
		pr_warn("steer %s: cannot read the rule table: %s\n", s->ifname, strerror(errno));
		return -errno ? -errno : -EIO;
	}
	return 0;
}

/* Writes t into the idle bank, then makes it active: the program sees the old or the new table,
 * never a mix. */
static int table_publish(struct umem_steer *s, struct umem_steer_table *t, uint32_t bank)
{
	uint32_t idle = !bank, zero = 0;

	t->generation++;
	if (bpf_map_update_elem(s->tables_fd, &idle, t, BPF_ANY) ||
	    bpf_map_update_elem(s->active_fd, &zero, &idle, BPF_ANY)) {
		int err = -errno;

		pr_warn("steer %s: cannot update the rule table: %s\n", s->ifname, strerror(errno));
		return err;
	}
	return 0;
}

static int check_action(struct umem_steer *s, const struct umem_steer_action *a)
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
	return check_action(s, &r->action);
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

int umem_steer__add_rule(struct umem_steer *s, struct umem_steer_rule *rule)
{
	struct umem_steer_table t;
	uint64_t used = 0;
	uint32_t bank, pos, id;
	int err;

	if (!s || !rule)
		return -EINVAL;
	if ((err = check_rule(s, rule)) || (err = table_read(s, &t, &bank)))
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
	if ((err = zero_counter(s, s->rstats_fd, id)) || (err = table_publish(s, &t, bank)))
		return err;
	rule->id = id;
	return 0;
}

int umem_steer__remove_rule(struct umem_steer *s, uint32_t id)
{
	struct umem_steer_table t;
	uint32_t bank, pos;
	int err;

	if (!s)
		return -EINVAL;
	if ((err = table_read(s, &t, &bank)))
		return err;
	for (pos = 0; pos < t.nr_rules && t.rules[pos].id != id; pos++)
		;
	if (pos == t.nr_rules) {
		pr_warn("steer %s: no rule with id %u\n", s->ifname, id);
		return -ENOENT;
	}
	memmove(&t.rules[pos], &t.rules[pos + 1], (t.nr_rules - pos - 1) * sizeof(t.rules[0]));
	t.nr_rules--;
	return table_publish(s, &t, bank);
}

int umem_steer__rules(struct umem_steer *s, struct umem_steer_rule *out, uint32_t max)
{
	struct umem_steer_table t;
	uint32_t bank;
	int err;

	if (!s || (max && !out))
		return -EINVAL;
	if ((err = table_read(s, &t, &bank)))
		return err;
	if (max)
		memcpy(out, t.rules, (max < t.nr_rules ? max : t.nr_rules) * sizeof(t.rules[0]));
	return t.nr_rules;
}

#define TABLE_FLAGS_ALL (UMEM_STEER_F_HOST_CONTROL | UMEM_STEER_F_TRACE)

/* Table-wide edits: each non-NULL argument replaces its part of the table. */
static int table_set(struct umem_steer *s, const struct umem_steer_action *dflt, const uint32_t *flags,
		     bool clear_rules)
{
	struct umem_steer_table t;
	uint32_t bank;
	int err;

	if (!s)
		return -EINVAL;
	if (dflt && (err = check_action(s, dflt)))
		return err;
	if (flags && (*flags & ~TABLE_FLAGS_ALL)) {
		pr_warn("steer %s: unknown table flags 0x%x\n", s->ifname, *flags & ~TABLE_FLAGS_ALL);
		return -EINVAL;
	}
	if ((err = table_read(s, &t, &bank)))
		return err;
	if (dflt)
		t.default_action = *dflt;
	if (flags)
		t.flags = *flags;
	if (clear_rules)
		t.nr_rules = 0;
	return table_publish(s, &t, bank);
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
	int err = s && out ? table_read(s, &t, &bank) : -EINVAL;

	if (!err)
		*out = t.default_action;
	return err;
}

int umem_steer__table_flags(struct umem_steer *s, uint32_t *out)
{
	struct umem_steer_table t;
	uint32_t bank;
	int err = s && out ? table_read(s, &t, &bank) : -EINVAL;

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
		if (bpf_map_delete_elem(s->xsks_fd, &index) && errno != ENOENT)
			return -errno;
		return 0;
	}
	if (bpf_map_update_elem(s->xsks_fd, &index, &xsk_fd, BPF_ANY)) {
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

int umem_steer__rule_counter(struct umem_steer *s, uint32_t rule_id, struct umem_steer_counter *out)
{
	if (!s || !out || rule_id > UMEM_STEER_RULE_DEFAULT)
		return -EINVAL;
	return counter_sum(s, s->rstats_fd, rule_id, out);
}

int umem_steer__action_counters(struct umem_steer *s, struct umem_steer_counter *out)
{
	int err;

	if (!s || !out)
		return -EINVAL;
	for (uint32_t i = 0; i < UMEM_STEER_S_NR; i++)
		if ((err = counter_sum(s, s->astats_fd, i, &out[i])))
			return err;
	return 0;
}

int umem_steer__reset_counters(struct umem_steer *s)
{
	int err;

	if (!s)
		return -EINVAL;
	for (uint32_t i = 0; i < UMEM_STEER_NR_RULE_STATS; i++)
		if ((err = zero_counter(s, s->rstats_fd, i)))
			return err;
	for (uint32_t i = 0; i < UMEM_STEER_S_NR; i++)
		if ((err = zero_counter(s, s->astats_fd, i)))
			return err;
	return 0;
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
	if (bpf_map_lookup_elem(s->trace_fd, &zero, v))
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

	if (!s || !out || out->sz < offsetof(struct umem_steer_info, generation) + sizeof(uint64_t))
		return -EINVAL;
	if ((err = table_read(s, &t, &bank)))
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
		out->owner_alive = owner_alive(&t);
	return 0;
}

int umem_steer__prog_fd(const struct umem_steer *s)
{
	return s ? s->prog_fd : -EINVAL;
}

int umem_steer__xsks_fd(const struct umem_steer *s)
{
	return s ? s->xsks_fd : -EINVAL;
}

/* ---- finding programs on an interface ---- */

struct found {
	uint32_t prog_id;    /* our program, 0 if none */
	uint32_t xdp_flags;  /* mode it is attached in */
	int in_dispatcher;   /* a component of libxdp's dispatcher */
	uint32_t foreign_id; /* a program that is not ours (first found), 0 if none */
	uint32_t foreign_flags;
	int foreign_in_dispatcher;
	char foreign_name[BPF_OBJ_NAME_LEN];
};

static int prog_name(uint32_t id, char *name)
{
	struct bpf_prog_info pi = {};
	uint32_t len = sizeof(pi);
	int fd = bpf_prog_get_fd_by_id(id);

	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, &pi, &len)) {
		close(fd);
		return -errno;
	}
	close(fd);
	memcpy(name, pi.name, BPF_OBJ_NAME_LEN);
	return 0;
}

static void note_prog(struct found *f, uint32_t id, uint32_t flags, int in_dispatcher)
{
	char name[BPF_OBJ_NAME_LEN] = "";

	if (prog_name(id, name))
		return;
	if (!strcmp(name, UMEM_STEER_PROG_NAME)) {
		f->prog_id = id;
		f->xdp_flags = flags;
		f->in_dispatcher = in_dispatcher;
	} else if (!f->foreign_id) {
		f->foreign_id = id;
		f->foreign_flags = flags;
		f->foreign_in_dispatcher = in_dispatcher;
		memcpy(f->foreign_name, name, sizeof(name));
	}
}

static int find_progs(uint32_t ifindex, struct found *f)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	const struct { uint32_t *id; uint32_t flags; } modes[] = {
		{ &q.drv_prog_id, XDP_FLAGS_DRV_MODE }, { &q.skb_prog_id, XDP_FLAGS_SKB_MODE },
	};

	memset(f, 0, sizeof(*f));
	if (bpf_xdp_query(ifindex, 0, &q))
		return -errno;
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		char name[BPF_OBJ_NAME_LEN] = "";
		uint32_t id = *modes[m].id;

		if (!id)
			continue;
		if (!prog_name(id, name) && !strncmp(name, "xdp_dispatcher", 14)) {
			struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
			struct xdp_program *p = NULL;

			if (libxdp_get_error(mp)) { /* unreadable: the dispatcher counts as foreign */
				note_prog(f, id, modes[m].flags, 0);
				continue;
			}
			while ((p = xdp_multiprog__next_prog(p, mp)))
				note_prog(f, xdp_program__id(p), modes[m].flags, 1);
			xdp_multiprog__close(mp);
			continue;
		}
		note_prog(f, id, modes[m].flags, 0);
	}
	return 0;
}

/* Whether prog_id is attached to ifindex through a bpf_link (else through netlink). */
static int attached_by_link(uint32_t ifindex, uint32_t prog_id)
{
	uint32_t id = 0;
	int found = 0;

	while (!found && !bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info li = {};
		uint32_t len = sizeof(li);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &li, &len) && li.type == BPF_LINK_TYPE_XDP &&
		    li.prog_id == prog_id && li.xdp.ifindex == ifindex)
			found = 1;
		close(fd);
	}
	return found;
}

/* Map fds of an attached program of ours, by name. */
static int open_maps_by_prog(struct umem_steer *s, uint32_t prog_id)
{
	struct bpf_prog_info pi = {};
	uint32_t ids[16], len = sizeof(pi);
	const struct { const char *name; int *fd; } maps[] = {
		{ UMEM_STEER_MAP_TABLES, &s->tables_fd }, { UMEM_STEER_MAP_ACTIVE, &s->active_fd },
		{ UMEM_STEER_MAP_XSKS, &s->xsks_fd }, { UMEM_STEER_MAP_RULE_STATS, &s->rstats_fd },
		{ UMEM_STEER_MAP_ACTION_STATS, &s->astats_fd }, { UMEM_STEER_MAP_TRACE, &s->trace_fd },
	};

	s->prog_fd = bpf_prog_get_fd_by_id(prog_id);
	if (s->prog_fd < 0)
		return -errno;
	pi.nr_map_ids = sizeof(ids) / sizeof(ids[0]);
	pi.map_ids = (uintptr_t)ids;
	if (bpf_obj_get_info_by_fd(s->prog_fd, &pi, &len))
		return -errno;
	for (uint32_t i = 0; i < pi.nr_map_ids && i < sizeof(ids) / sizeof(ids[0]); i++) {
		struct bpf_map_info mi = {};
		uint32_t mlen = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);
		size_t k;

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &mi, &mlen)) {
			close(fd);
			continue;
		}
		for (k = 0; k < sizeof(maps) / sizeof(maps[0]); k++) {
			if (!strcmp(mi.name, maps[k].name) && *maps[k].fd < 0) {
				*maps[k].fd = fd;
				if (maps[k].fd == &s->xsks_fd)
					s->nr_sockets = mi.max_entries;
				break;
			}
		}
		if (k == sizeof(maps) / sizeof(maps[0]))
			close(fd);
	}
	for (size_t k = 0; k < sizeof(maps) / sizeof(maps[0]); k++) {
		if (*maps[k].fd < 0) {
			pr_warn("steer %s: program %u lacks map %s: not a umem_steer of this version\n",
				s->ifname, prog_id, maps[k].name);
			return -ENOENT;
		}
	}
	return 0;
}

/* A handle with no fds yet; with an interface name, its index and queue count. */
static int handle_new(const char *ifname, struct umem_steer **out)
{
	struct umem_steer *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->link_fd = s->prog_fd = -1;
	s->tables_fd = s->active_fd = s->xsks_fd = s->rstats_fd = s->astats_fd = s->trace_fd = -1;
	s->nr_cpus = libbpf_num_possible_cpus();
	snprintf(s->ifname, sizeof(s->ifname), "%s", ifname ? ifname : "(none)");
	if (s->nr_cpus <= 0) {
		free(s);
		return -EIO;
	}
	if (ifname) {
		s->ifindex = if_nametoindex(ifname);
		if (!s->ifindex) {
			pr_warn("steer: no interface '%s'\n", ifname);
			free(s);
			return -ENODEV;
		}
		uint32_t max;

		umem__netdev_rx_queues(ifname, (int)s->ifindex, &s->nr_queues, &max);
	}
	*out = s;
	return 0;
}

static void close_fds(struct umem_steer *s)
{
	int *fds[] = { &s->prog_fd, &s->tables_fd, &s->active_fd, &s->xsks_fd, &s->rstats_fd,
		       &s->astats_fd, &s->trace_fd };

	if (!s->own_fds)
		return;
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0)
			close(*fds[i]);
}

struct umem_steer *umem_steer__open(const char *ifname)
{
	struct umem_steer *s;
	struct found f;
	int err;

	if (!ifname) {
		errno = EINVAL;
		return NULL;
	}
	if ((err = handle_new(ifname, &s))) {
		errno = -err;
		return NULL;
	}
	s->own_fds = 1;
	if ((err = find_progs(s->ifindex, &f)))
		goto err_free;
	if (!f.prog_id) {
		pr_warn("steer %s: no umem_steer program attached\n", ifname);
		err = -ENOENT;
		goto err_free;
	}
	s->mode = f.xdp_flags == XDP_FLAGS_SKB_MODE ? UMEM_STEER_MODE_GENERIC : UMEM_STEER_MODE_NATIVE;
	s->attach = attached_by_link(s->ifindex, f.prog_id) ? UMEM_STEER_ATTACH_LINK : UMEM_STEER_ATTACH_LIBXDP;
	if ((err = open_maps_by_prog(s, f.prog_id)))
		goto err_close;
	return s;

err_close:
	close_fds(s);
err_free:
	free(s);
	errno = -err;
	return NULL;
}

/* ---- attach ---- */

/* Removes a program of ours whose owner is gone; refuses one whose owner lives. */
static int clear_stale(struct umem_steer *s, const struct found *f)
{
	struct umem_steer *old = umem_steer__open(s->ifname);
	struct umem_steer_table t;
	uint32_t bank;
	int err;

	if (!old)
		return -errno;
	err = table_read(old, &t, &bank);
	umem_steer__detach(old);
	if (err)
		return err;
	if (owner_alive(&t)) {
		pr_warn("steer %s: already steered by live process %u (program id %u)\n", s->ifname,
			t.owner_pid, f->prog_id);
		return -EBUSY;
	}
	pr_info("steer %s: replacing stale steering program %u (owner pid %u is gone)\n", s->ifname,
		f->prog_id, t.owner_pid);
	if (f->in_dispatcher) {
		struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(s->ifindex);
		struct xdp_program *p = NULL;

		err = libxdp_get_error(mp);
		if (err)
			return err;
		while ((p = xdp_multiprog__next_prog(p, mp)))
			if (xdp_program__id(p) == f->prog_id)
				break;
		err = p ? xdp_program__detach(p, s->ifindex, xdp_multiprog__attach_mode(mp), 0) : -ENOENT;
		xdp_multiprog__close(mp);
	} else {
		/* Only a netlink attachment can outlive its owner; a live link refuses this (EBUSY). */
		err = bpf_xdp_detach(s->ifindex, f->xdp_flags, NULL) ? -errno : 0;
	}
	if (err)
		pr_warn("steer %s: cannot remove stale program %u: %s\n", s->ifname, f->prog_id, strerror(-err));
	return err;
}

static int replace_foreign(struct umem_steer *s, const struct found *f, uint32_t flags)
{
	if (!(flags & UMEM_STEER_F_REPLACE)) {
		pr_warn("steer %s: XDP program '%s' (id %u) is attached and is not ours: refusing to "
			"replace it (UMEM_STEER_F_REPLACE / --replace to override)\n",
			s->ifname, f->foreign_name, f->foreign_id);
		return -EBUSY;
	}
	pr_info("steer %s: replacing XDP program '%s' (id %u) as asked\n", s->ifname, f->foreign_name,
		f->foreign_id);
	if (f->foreign_in_dispatcher) { /* the dispatcher goes, with every program in it */
		struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(s->ifindex);
		int err = libxdp_get_error(mp);

		if (!err) {
			err = xdp_multiprog__detach(mp);
			xdp_multiprog__close(mp);
		}
		return err;
	}
	if (bpf_xdp_detach(s->ifindex, f->foreign_flags, NULL)) {
		int err = -errno;

		pr_warn("steer %s: cannot remove program %u: %s (a bpf_link held by another process "
			"cannot be replaced)\n", s->ifname, f->foreign_id, strerror(errno));
		return err;
	}
	return 0;
}

static int attach_link(struct umem_steer *s, uint32_t mode)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo);
	int fd;

	if (mode != UMEM_STEER_MODE_GENERIC) {
		lo.flags = XDP_FLAGS_DRV_MODE;
		fd = bpf_link_create(s->prog_fd, s->ifindex, BPF_XDP, &lo);
		if (fd >= 0) {
			s->link_fd = fd;
			s->mode = UMEM_STEER_MODE_NATIVE;
			s->xdp_flags = XDP_FLAGS_DRV_MODE;
			return 0;
		}
		if (mode == UMEM_STEER_MODE_NATIVE || (errno != EOPNOTSUPP && errno != EINVAL)) {
			int err = -errno;

			pr_warn("steer %s: native XDP attach failed: %s%s\n", s->ifname, strerror(errno),
				errno == EOPNOTSUPP ? " (the driver has no native XDP; use generic mode)" : "");
			return err;
		}
		pr_info("steer %s: no native XDP (%s): falling back to generic (skb) mode, which is slower\n",
			s->ifname, strerror(errno));
	}
	lo.flags = XDP_FLAGS_SKB_MODE;
	fd = bpf_link_create(s->prog_fd, s->ifindex, BPF_XDP, &lo);
	if (fd < 0) {
		int err = -errno;

		pr_warn("steer %s: generic XDP attach failed: %s\n", s->ifname, strerror(errno));
		return err;
	}
	s->link_fd = fd;
	s->mode = UMEM_STEER_MODE_GENERIC;
	s->xdp_flags = XDP_FLAGS_SKB_MODE;
	return 0;
}

static int attach_libxdp(struct umem_steer *s, uint32_t mode)
{
	enum xdp_attach_mode xm = mode == UMEM_STEER_MODE_GENERIC ? XDP_MODE_SKB : XDP_MODE_NATIVE;
	int err;

	s->xdp_prog = xdp_program__from_bpf_obj(s->skel->obj, "xdp.frags");
	err = libxdp_get_error(s->xdp_prog);
	if (err) {
		s->xdp_prog = NULL;
		pr_warn("steer %s: libxdp cannot take the program: %s\n", s->ifname, strerror(-err));
		return err;
	}
	err = xdp_program__attach(s->xdp_prog, s->ifindex, xm, 0);
	if (err && mode == UMEM_STEER_MODE_AUTO && (err == -EOPNOTSUPP || err == -EINVAL)) {
		pr_info("steer %s: no native XDP (%s): falling back to generic (skb) mode, which is slower\n",
			s->ifname, strerror(-err));
		xm = XDP_MODE_SKB;
		err = xdp_program__attach(s->xdp_prog, s->ifindex, xm, 0);
	}
	if (err) {
		pr_warn("steer %s: libxdp attach failed: %s\n", s->ifname, strerror(-err));
		xdp_program__close(s->xdp_prog);
		s->xdp_prog = NULL;
		return err;
	}
	s->mode = xm == XDP_MODE_SKB ? UMEM_STEER_MODE_GENERIC : UMEM_STEER_MODE_NATIVE;
	s->xdp_flags = xm == XDP_MODE_SKB ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
	s->prog_fd = xdp_program__fd(s->xdp_prog);
	return 0;
}

static void take_map_fds(struct umem_steer *s)
{
	s->tables_fd = bpf_map__fd(s->skel->maps.steer_tables);
	s->active_fd = bpf_map__fd(s->skel->maps.steer_active);
	s->xsks_fd = bpf_map__fd(s->skel->maps.steer_xsks);
	s->rstats_fd = bpf_map__fd(s->skel->maps.steer_rstats);
	s->astats_fd = bpf_map__fd(s->skel->maps.steer_astats);
	s->trace_fd = bpf_map__fd(s->skel->maps.steer_trace);
}

static int init_table(struct umem_steer *s, const struct umem_steer_opts *opts)
{
	const struct umem_steer_action queue = { .type = UMEM_STEER_A_QUEUE };
	const struct umem_steer_action *dflt = OPTS_GET(opts, default_action, NULL);
	struct umem_steer_table t = {};
	uint32_t zero = 0, one = 1;

	t.default_action = dflt ? *dflt : queue;
	t.flags = OPTS_GET(opts, table_flags, 0);
	t.owner_pid = getpid();
	t.owner_start = proc_start_time(t.owner_pid);
	t.nr_sockets = s->nr_sockets;
	/* Bank 1 then the index 0 → 1: the same path as every later change. */
	if (bpf_map_update_elem(s->tables_fd, &zero, &t, BPF_ANY) ||
	    bpf_map_update_elem(s->tables_fd, &one, &t, BPF_ANY) ||
	    bpf_map_update_elem(s->active_fd, &zero, &one, BPF_ANY))
		return -errno;
	return 0;
}

struct umem_steer *umem_steer__attach(const char *ifname, const struct umem_steer_opts *opts)
{
	uint32_t flags = OPTS_GET(opts, flags, 0), mode = OPTS_GET(opts, mode, 0);
	uint32_t attach = OPTS_GET(opts, attach, 0), tflags = OPTS_GET(opts, table_flags, 0);
	const struct umem_steer_action *dflt = OPTS_GET(opts, default_action, NULL);
	struct umem_steer *s;
	struct found f;
	int err;

	if (!OPTS_VALID(opts) || flags & ~(UMEM_STEER_F_REPLACE | UMEM_STEER_F_LOAD_ONLY) ||
	    mode > UMEM_STEER_MODE_GENERIC || attach > UMEM_STEER_ATTACH_LIBXDP || tflags & ~TABLE_FLAGS_ALL ||
	    OPTS_GET(opts, nr_sockets, 0) > NR_SOCKETS_MAX || (!ifname && !(flags & UMEM_STEER_F_LOAD_ONLY))) {
		pr_warn("steer %s: invalid options (flags, mode, attach, table_flags, nr_sockets <= %u)\n",
			ifname ? ifname : "(none)", NR_SOCKETS_MAX);
		errno = EINVAL;
		return NULL;
	}
	if ((err = handle_new(ifname, &s))) {
		errno = -err;
		return NULL;
	}
	s->attach = attach;
	s->nr_sockets = OPTS_GET(opts, nr_sockets, 0);
	if (!s->nr_sockets)
		s->nr_sockets = s->nr_queues > NR_SOCKETS_DEFAULT ? s->nr_queues : NR_SOCKETS_DEFAULT;
	if (dflt && (err = check_action(s, dflt)))
		goto err_free;

	if (!(flags & UMEM_STEER_F_LOAD_ONLY)) {
		if ((err = find_progs(s->ifindex, &f))) {
			pr_warn("steer %s: cannot query XDP programs: %s\n", ifname, strerror(-err));
			goto err_free;
		}
		if (f.prog_id && (err = clear_stale(s, &f)))
			goto err_free;
		/* In libxdp's dispatcher, others' programs are neighbours, not obstacles. */
		if (f.foreign_id && !(attach == UMEM_STEER_ATTACH_LIBXDP && f.foreign_in_dispatcher) &&
		    (err = replace_foreign(s, &f, flags)))
			goto err_free;
	}

	s->skel = steer__open();
	if (!s->skel) {
		err = -errno;
		pr_warn("steer %s: cannot open the BPF object: %s\n", s->ifname, strerror(errno));
		goto err_free;
	}
	if ((err = bpf_map__set_max_entries(s->skel->maps.steer_xsks, s->nr_sockets)))
		goto err_skel;
	if (attach == UMEM_STEER_ATTACH_LIBXDP && !(flags & UMEM_STEER_F_LOAD_ONLY)) {
		/* libxdp loads the object itself (as a dispatcher component where it can). */
		if ((err = attach_libxdp(s, mode)))
			goto err_skel;
		take_map_fds(s);
		if ((err = init_table(s, opts)))
			goto err_detach;
		return s;
	}
	if ((err = steer__load(s->skel))) {
		pr_warn("steer %s: cannot load the BPF program: %s\n", s->ifname, strerror(-err));
		goto err_skel;
	}
	s->prog_fd = bpf_program__fd(s->skel->progs.umem_steer);
	take_map_fds(s);
	/* Table first, then attach: the first frame already sees the configured default. */
	if ((err = init_table(s, opts)))
		goto err_skel;
	if (!(flags & UMEM_STEER_F_LOAD_ONLY) && (err = attach_link(s, mode)))
		goto err_skel;
	return s;

err_detach:
	xdp_program__detach(s->xdp_prog, s->ifindex, s->xdp_flags == XDP_FLAGS_SKB_MODE ? XDP_MODE_SKB : XDP_MODE_NATIVE, 0);
	xdp_program__close(s->xdp_prog);
err_skel:
	steer__destroy(s->skel);
err_free:
	free(s);
	errno = -err;
	return NULL;
}

void umem_steer__detach(struct umem_steer *s)
{
	if (!s)
		return;
	if (s->link_fd >= 0)
		close(s->link_fd); /* the last reference to the link: the kernel detaches */
	if (s->xdp_prog) {
		int err = xdp_program__detach(s->xdp_prog, s->ifindex,
					      s->xdp_flags == XDP_FLAGS_SKB_MODE ? XDP_MODE_SKB : XDP_MODE_NATIVE, 0);

		if (err)
			pr_warn("steer %s: libxdp detach failed: %s\n", s->ifname, strerror(-err));
		xdp_program__close(s->xdp_prog);
	}
	if (s->skel)
		steer__destroy(s->skel);
	close_fds(s);
	free(s);
}
