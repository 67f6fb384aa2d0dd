/* SPDX-License-Identifier: MIT */
/* Steering discovery and attach: finding the program on an interface (umem_steer__open),
 * loading it, attaching it (bpf_link or libxdp) with the stale and foreign rules of
 * xdp_attach.c, and detaching it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "steer_internal.h"
#include "xdp_attach.h"
#include "steer.skel.h"

_Static_assert((int)UMEM_STEER_MODE_AUTO == UMEM__ATTACH_AUTO &&
	       (int)UMEM_STEER_MODE_NATIVE == UMEM__ATTACH_NATIVE &&
	       (int)UMEM_STEER_MODE_GENERIC == UMEM__ATTACH_GENERIC, "steer modes are xdp_attach's");

/* ---- finding programs on an interface ---- */

const struct umem__steer_map umem__steer_maps[SM_NR] = {
	[SM_TABLES] = { UMEM_STEER_MAP_TABLES, sizeof(struct umem_steer_table) },
	[SM_ACTIVE] = { UMEM_STEER_MAP_ACTIVE, 0 },
	[SM_XSKS] = { UMEM_STEER_MAP_XSKS, 0 },
	[SM_RSTATS] = { UMEM_STEER_MAP_RULE_STATS, 0 },
	[SM_ASTATS] = { UMEM_STEER_MAP_ACTION_STATS, 0 },
	[SM_TRACE] = { UMEM_STEER_MAP_TRACE, 0 },
	[SM_PSRC] = { UMEM_STEER_MAP_PREFIX_SRC, 0 },
	[SM_PDST] = { UMEM_STEER_MAP_PREFIX_DST, 0 },
	[SM_PSTATS] = { UMEM_STEER_MAP_PREFIX_STATS, 0 },
};

/* Map fds of an attached program of ours (s->prog_fd), by name: from the maps handed over
 * (s->given) or by id. */
static int open_maps(struct umem_steer *s, uint32_t prog_id)
{
	const char *names[SM_NR];
	uint32_t max[SM_NR] = { 0 };
	int err;

	for (size_t k = 0; k < SM_NR; k++) {
		names[k] = umem__steer_maps[k].name;
		s->map_fd[k] = -1; /* umem__prog_maps fills only empty slots */
	}
	err = umem__prog_maps(s->prog_fd, names, NULL, s->map_fd, max, SM_NR, s->given, s->nr_given);
	if (err)
		return err;
	s->nr_sockets = max[SM_XSKS];
	for (size_t k = 0; k < SM_NR; k++) {
		if (s->map_fd[k] < 0) {
			pr_warn("steer %s: program %u lacks map %s: not a umem_steer of this version\n",
				s->ifname, prog_id, names[k]);
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
	for (size_t k = 0; k < SM_NR; k++)
		s->map_fd[k] = -1;
	s->nr_cpus = libbpf_num_possible_cpus();
	snprintf(s->ifname, sizeof(s->ifname), "%s", ifname ? ifname : "(none)");
	snprintf(s->who, sizeof(s->who), "steer %s", s->ifname);
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
	if (!s->own_fds)
		return;
	if (s->prog_fd >= 0)
		close(s->prog_fd);
	for (size_t k = 0; k < SM_NR; k++)
		if (s->map_fd[k] >= 0)
			close(s->map_fd[k]);
}

/* Why no program of ours was found: -EPERM with a message when an XDP program is attached that
 * this process may not open (without CAP_BPF/CAP_SYS_ADMIN every program looks foreign), else
 * -ENOENT with a message saying how one gets there. */
static int explain_none(const struct umem_steer *s)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	uint32_t ids[2];

	if (!bpf_xdp_query((int)s->ifindex, 0, &q)) {
		ids[0] = q.drv_prog_id;
		ids[1] = q.skb_prog_id;
		for (int i = 0; i < 2; i++) {
			int fd = ids[i] ? bpf_prog_get_fd_by_id(ids[i]) : -1;

			if (fd >= 0) {
				close(fd);
			} else if (ids[i] && (errno == EPERM || errno == EACCES)) {
				pr_warn("steer %s: cannot open XDP program %u: %s; reading or editing the "
					"steering program needs CAP_BPF and CAP_NET_ADMIN (or root)\n",
					s->ifname, ids[i], strerror(errno));
				return -EPERM;
			}
		}
	}
	pr_warn("steer %s: no umem_steer program attached (xdp-fwd attaches it only with a rule: "
		"start it with -r 'prio 65535 any -> queue' to add rules at run time)\n", s->ifname);
	return -ENOENT;
}

/* A handle for a program attached by someone else: its fds are its own to close. */
static struct umem_steer *opened_new(const char *ifname)
{
	struct umem_steer *s;
	int err = ifname ? handle_new(ifname, &s) : -EINVAL;

	if (err) {
		errno = -err;
		return NULL;
	}
	s->own_fds = 1;
	return s;
}

static struct umem_steer *steer_open(const char *ifname)
{
	struct umem_steer *s;
	struct xdp_found f;
	int err;

	if (!(s = opened_new(ifname)))
		return NULL;
	if ((err = umem__xdp_find((int)s->ifindex, UMEM_STEER_PROG_NAME, &f)))
		goto err_free;
	if (!f.prog_id) {
		err = explain_none(s);
		goto err_free;
	}
	s->mode = f.xdp_flags == XDP_FLAGS_SKB_MODE ? UMEM_STEER_MODE_GENERIC : UMEM_STEER_MODE_NATIVE;
	s->attach = umem__xdp_by_link((int)s->ifindex, f.prog_id) ? UMEM_STEER_ATTACH_LINK : UMEM_STEER_ATTACH_LIBXDP;
	s->prog_fd = bpf_prog_get_fd_by_id(f.prog_id);
	if (s->prog_fd < 0) {
		err = -errno;
		goto err_free;
	}
	if ((err = open_maps(s, f.prog_id)))
		goto err_close;
	return s;

err_close:
	close_fds(s);
err_free:
	free(s);
	errno = -err;
	return NULL;
}

/* The handle's copies of the maps handed over. */
static int take_given(struct umem_steer *s, const int *fds, uint32_t n)
{
	if (!n)
		return 0;
	if (!fds || !(s->given = calloc(n, sizeof(*s->given))))
		return fds ? -ENOMEM : -EINVAL;
	for (; s->nr_given < n; s->nr_given++)
		if ((s->given[s->nr_given] = fcntl(fds[s->nr_given], F_DUPFD_CLOEXEC, 0)) < 0)
			return -errno;
	return 0;
}

static void close_given(struct umem_steer *s)
{
	for (uint32_t i = 0; i < s->nr_given; i++)
		close(s->given[i]);
	free(s->given);
	s->given = NULL;
	s->nr_given = 0;
}

/* The steering program attached to ifname, from descriptors of it that another process
 * handed over (no lookup by id: that needs CAP_SYS_ADMIN). The program must be the one the
 * interface runs now. */
static struct umem_steer *steer_open_fds(const char *ifname, const struct umem_steer_fds *in)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct bpf_prog_info pi = {};
	uint32_t len = sizeof(pi);
	struct umem_steer *s;
	int err;

	if (!in || !OPTS_CHECK(in, umem_steer_fds, "steer open_fds") || !OPTS_HAS(in, prog_fd) || in->prog_fd < 0) {
		errno = EINVAL;
		return NULL;
	}
	if (!(s = opened_new(ifname)))
		return NULL;
	if (bpf_obj_get_info_by_fd(in->prog_fd, &pi, &len)) {
		err = -errno;
		pr_warn("%s: descriptor %d handed over is no BPF program: %s\n", s->who, in->prog_fd, strerror(errno));
		goto err_free;
	}
	if ((err = bpf_xdp_query((int)s->ifindex, 0, &q)) < 0)
		goto err_free;
	if (strcmp(pi.name, UMEM_STEER_PROG_NAME) || (pi.id != q.drv_prog_id && pi.id != q.skb_prog_id)) {
		pr_warn("%s: the program handed over (id %u, '%s') is not the umem_steer program attached to "
			"it\n", s->who, pi.id, pi.name);
		err = -ENOENT;
		goto err_free;
	}
	s->xdp_flags = pi.id == q.skb_prog_id ? XDP_FLAGS_SKB_MODE : 0;
	s->mode = pi.id == q.skb_prog_id ? UMEM_STEER_MODE_GENERIC : UMEM_STEER_MODE_NATIVE;
	s->attach = UMEM_STEER_ATTACH_LIBXDP;
	if (OPTS_GET(in, link_fd, -1) >= 0) {
		struct bpf_link_info li = {};
		uint32_t llen = sizeof(li);

		if (!bpf_obj_get_info_by_fd(in->link_fd, &li, &llen) && li.type == BPF_LINK_TYPE_XDP &&
		    li.prog_id == pi.id && li.xdp.ifindex == s->ifindex)
			s->attach = UMEM_STEER_ATTACH_LINK;
	}
	if ((s->prog_fd = fcntl(in->prog_fd, F_DUPFD_CLOEXEC, 0)) < 0) {
		err = -errno;
		goto err_free;
	}
	if ((err = take_given(s, OPTS_GET(in, map_fds, NULL), OPTS_GET(in, nr_map_fds, 0))) ||
	    (err = open_maps(s, pi.id)))
		goto err_close;
	return s;

err_close:
	close_fds(s);
err_free:
	close_given(s);
	free(s);
	errno = -err;
	return NULL;
}

/* ---- attach ---- */

/* Removes a program of ours whose owner is gone; refuses one whose owner lives. The owner is
 * in the old program's table. */
static int clear_stale(struct umem_steer *s, const struct xdp_found *f)
{
	struct umem_steer *old = umem_steer__open(s->ifname);
	struct umem_steer_table t;
	uint32_t bank;
	int err;

	if (!old)
		return -errno;
	err = umem__steer_table_read(old, &t, &bank);
	umem_steer__detach(old);
	if (err)
		return err;
	if (!t.owner_pid && t.owner_start == UMEM__STEER_OWNER_PINS) {
		pr_warn("%s: program %u is held by pins in a bpffs (umem-steer attach --pin): open it "
			"from there, or remove the pins first (umem-steer detach --pin)\n", s->who, f->prog_id);
		return -EBUSY;
	}
	return umem__xdp_remove_stale(s->who, (int)s->ifindex, f, t.owner_pid, t.owner_start);
}

static int set_mode(struct umem_steer *s, uint32_t xdp_flags)
{
	s->xdp_flags = xdp_flags;
	s->mode = xdp_flags == XDP_FLAGS_SKB_MODE ? UMEM_STEER_MODE_GENERIC : UMEM_STEER_MODE_NATIVE;
	return 0;
}

static int attach_link(struct umem_steer *s, uint32_t mode)
{
	uint32_t xdp_flags;
	int fd = umem__xdp_link(s->who, s->prog_fd, (int)s->ifindex, mode, &xdp_flags);

	if (fd < 0)
		return fd;
	s->link_fd = fd;
	return set_mode(s, xdp_flags);
}

static enum xdp_attach_mode libxdp_mode(uint32_t xdp_flags)
{
	return xdp_flags == XDP_FLAGS_SKB_MODE ? XDP_MODE_SKB : XDP_MODE_NATIVE;
}

static int libxdp_once(void *ctx, uint32_t xdp_flags)
{
	struct umem_steer *s = ctx;

	return xdp_program__attach(s->xdp_prog, s->ifindex, libxdp_mode(xdp_flags), 0);
}

uint32_t umem__fault_no_meta;

/* Whether an XDP program that calls helper fn loads: 1 yes, 0 no, -errno when no program can be
 * loaded here (then the real load says why). libbpf 1.1's helper probe (Debian 12's) reads the
 * verifier's older wording only ("unknown func"), and takes a refusal such as "program of this
 * type cannot use helper" for support. */
static int probe_xdp_helper(int fn)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2, .imm = 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = fn },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, NULL, "GPL", insns, sizeof(insns) / sizeof(insns[0]), NULL);

	if (fd >= 0) {
		close(fd);
		return 1;
	}
	return errno == EINVAL ? 0 : -errno;
}

/* probe_xdp_helper(fn), asked once a process (*probed, -1 at first); an unanswered probe (no
 * privilege yet) says 1, so the calls stay in, and is asked again next time. what: the debug
 * line where the kernel refuses it (a failed load's one line stays its reason). */
static uint8_t xdp_helper_ok(_Atomic int *probed, int fn, const char *what)
{
	int v = atomic_load_explicit(probed, memory_order_relaxed);

	if (v < 0) {
		v = probe_xdp_helper(fn);
		if (v < 0)
			return 1;
		if (!v)
			pr_debug("%s\n", what);
		atomic_store_explicit(probed, v, memory_order_relaxed);
	}
	return (uint8_t)v;
}

/* Some kernel builds give XDP programs no bpf_xdp_adjust_meta, and the verifier then refuses
 * the whole program: there it loads without the metadata marks (steer.bpf.c, steer_meta). */
uint8_t umem__steer_meta_ok(void)
{
	static _Atomic int probed = -1;

	if (umem__fault_no_meta) /* tests: the program without metadata marks on any kernel */
		return 0;
	return xdp_helper_ok(&probed, BPF_FUNC_xdp_adjust_meta,
			     "this kernel gives XDP programs no bpf_xdp_adjust_meta: the steering program puts "
			     "the gate marks in front of the data where flows ask so (as on a driver without XDP "
			     "metadata)");
}

/* The same for the marks in front of the data (steer_head): bpf_xdp_adjust_head is as old as
 * XDP, but a build that drops one helper may drop another. */
static uint8_t steer_head_ok(void)
{
	static _Atomic int probed = -1;

	return xdp_helper_ok(&probed, BPF_FUNC_xdp_adjust_head,
			     "this kernel gives XDP programs no bpf_xdp_adjust_head: the steering program puts "
			     "no gate marks in front of the data");
}

static int attach_libxdp(struct umem_steer *s, uint32_t mode)
{
	uint32_t xdp_flags;
	int err;

	s->xdp_prog = xdp_program__from_bpf_obj(s->skel->obj, "xdp.frags");
	err = libxdp_get_error(s->xdp_prog);
	if (err) {
		s->xdp_prog = NULL;
		pr_warn("%s: libxdp cannot take the program: %s\n", s->who, strerror(-err));
		return err;
	}
	err = umem__xdp_attach(s->who, mode, libxdp_once, s, &xdp_flags);
	if (err) {
		xdp_program__close(s->xdp_prog);
		s->xdp_prog = NULL;
		return err;
	}
	s->prog_fd = xdp_program__fd(s->xdp_prog);
	return set_mode(s, xdp_flags);
}

static void take_map_fds(struct umem_steer *s)
{
	for (size_t k = 0; k < SM_NR; k++)
		s->map_fd[k] = bpf_object__find_map_fd_by_name(s->skel->obj, umem__steer_maps[k].name);
}

static int init_table(struct umem_steer *s, const struct umem_steer_opts *opts)
{
	/* What no rule claims goes to the kernel: an application that claims one port must not
	 * take ARP, ICMP and the host's other traffic with it. */
	const struct umem_steer_action pass = { .type = UMEM_STEER_A_PASS };
	const struct umem_steer_action *dflt = OPTS_GET(opts, default_action, NULL);
	struct umem_steer_table t = {};
	uint32_t zero = 0, one = 1;

	t.default_action = dflt ? *dflt : pass;
	t.flags = OPTS_GET(opts, table_flags, 0);
	/* Pinned, the program outlives this process: the pins are its owner. */
	t.owner_pid = OPTS_GET(opts, pin_dir, NULL) ? 0 : (uint32_t)getpid();
	t.owner_start = t.owner_pid ? umem__proc_start_time(t.owner_pid) : UMEM__STEER_OWNER_PINS;
	t.nr_sockets = s->nr_sockets;
	umem__steer_lock_sweep(); /* after clear_stale: a replaced program's file goes too */
	/* Bank 1 then the index 0 → 1: the same path as every later change. */
	if (bpf_map_update_elem(s->map_fd[SM_TABLES], &zero, &t, BPF_ANY) ||
	    bpf_map_update_elem(s->map_fd[SM_TABLES], &one, &t, BPF_ANY) ||
	    bpf_map_update_elem(s->map_fd[SM_ACTIVE], &zero, &one, BPF_ANY))
		return -errno;
	return 0;
}

static int pin_all(struct umem_steer *s, const char *dir, uint32_t uid, uint32_t gid);

static struct umem_steer *steer_attach(const char *ifname, const struct umem_steer_opts *opts)
{
	uint32_t flags = OPTS_GET(opts, flags, 0), mode = OPTS_GET(opts, mode, 0);
	uint32_t attach = OPTS_GET(opts, attach, 0), tflags = OPTS_GET(opts, table_flags, 0);
	const struct umem_steer_action *dflt = OPTS_GET(opts, default_action, NULL);
	const char *pin_dir = OPTS_GET(opts, pin_dir, NULL);
	struct umem_steer *s;
	struct xdp_found f;
	int err;

	if (!OPTS_CHECK(opts, umem_steer_opts, "steer") ||
	    !OPTS_PAD(opts, umem_steer_opts, nr_sockets, offsetof(struct umem_steer_opts, default_action), "steer")) {
		errno = EINVAL;
		return NULL;
	}
	if (flags & ~(UMEM_STEER_F_REPLACE | UMEM_STEER_F_LOAD_ONLY) ||
	    mode > UMEM_STEER_MODE_GENERIC || attach > UMEM_STEER_ATTACH_LIBXDP || tflags & ~TABLE_FLAGS_ALL ||
	    OPTS_GET(opts, nr_sockets, 0) > NR_SOCKETS_MAX || (!ifname && !(flags & UMEM_STEER_F_LOAD_ONLY))) {
		pr_warn("steer %s: invalid options (flags, mode, attach, table_flags, nr_sockets <= %u)\n",
			ifname ? ifname : "(none)", NR_SOCKETS_MAX);
		errno = EINVAL;
		return NULL;
	}
	if (pin_dir && (attach != UMEM_STEER_ATTACH_LINK || (flags & UMEM_STEER_F_LOAD_ONLY) || !*pin_dir)) {
		pr_warn("steer %s: pin_dir needs an attachment through a bpf_link (UMEM_STEER_ATTACH_LINK, "
			"not LOAD_ONLY) and a folder name\n", ifname ? ifname : "(none)");
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
	if (dflt && (err = umem__steer_check_action(s, dflt)))
		goto err_free;

	if (!(flags & UMEM_STEER_F_LOAD_ONLY)) {
		if ((err = umem__xdp_find((int)s->ifindex, UMEM_STEER_PROG_NAME, &f))) {
			pr_warn("steer %s: cannot query XDP programs: %s\n", ifname, strerror(-err));
			goto err_free;
		}
		if (f.prog_id && (err = clear_stale(s, &f)))
			goto err_free;
		/* In libxdp's dispatcher, others' programs are neighbours, not obstacles. */
		if (f.foreign_id && !(attach == UMEM_STEER_ATTACH_LIBXDP && f.foreign_in_dispatcher) &&
		    (err = umem__xdp_remove_foreign(s->who, (int)s->ifindex, &f, flags & UMEM_STEER_F_REPLACE)))
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
	s->skel->rodata->steer_meta = umem__steer_meta_ok();
	s->skel->rodata->steer_head = steer_head_ok();
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
		pr_warn("steer %s: cannot load the BPF program: %s%s\n", s->ifname, strerror(-err),
			umem__cap_hint_load(err, true));
		goto err_skel;
	}
	s->prog_fd = bpf_program__fd(s->skel->progs.umem_steer);
	take_map_fds(s);
	/* Table first, then attach: the first frame already sees the configured default. */
	if ((err = init_table(s, opts)))
		goto err_skel;
	if (!(flags & UMEM_STEER_F_LOAD_ONLY) && (err = attach_link(s, mode)))
		goto err_skel;
	if (pin_dir && (err = pin_all(s, pin_dir, OPTS_GET(opts, pin_uid, 0), OPTS_GET(opts, pin_gid, 0)))) {
		close(s->link_fd);
		goto err_skel;
	}
	return s;

err_detach:
	xdp_program__detach(s->xdp_prog, s->ifindex, libxdp_mode(s->xdp_flags), 0);
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
	if (s->skel && s->prog_fd >= 0 && !s->pinned)
		umem__steer_lock_remove(s);
	if (s->link_fd >= 0)
		close(s->link_fd); /* the last reference to the link: the kernel detaches */
	if (s->xdp_prog) {
		int err = xdp_program__detach(s->xdp_prog, s->ifindex,
					      libxdp_mode(s->xdp_flags), 0);

		if (err)
			pr_warn("steer %s: libxdp detach failed: %s\n", s->ifname, strerror(-err));
		xdp_program__close(s->xdp_prog);
	}
	if (s->skel)
		steer__destroy(s->skel);
	close_fds(s);
	close_given(s);
	free(s->pin_dir);
	free(s->added);
	free(s);
}

/* ---- pins ----
 *
 * A folder on a bpffs holds the bpf_link ("link": while it is pinned the program stays
 * attached), the program ("prog": its id names the writers' lock file) and every map under
 * its own name. Opening a pin needs no capability, only the pin's file permissions, so the
 * privileged step hands the pins (and the lock file) to the user that runs the sockets, as
 * the Kubernetes AF_XDP device plugin does for DPDK's af_xdp use_pinned_map. */

#define PIN_LINK "link"
#define PIN_PROG "prog"

static int pin_path(char *buf, size_t len, const char *dir, const char *name)
{
	if ((size_t)snprintf(buf, len, "%s/%s", dir, name) >= len) {
		pr_warn("steer: pin path %s/%s is too long\n", dir, name);
		return -ENAMETOOLONG;
	}
	return 0;
}

static int pin_one(struct umem_steer *s, const char *dir, const char *name, int fd, uint32_t uid, uint32_t gid)
{
	char path[PATH_MAX];
	int err;

	if ((err = pin_path(path, sizeof(path), dir, name)))
		return err;
	if (bpf_obj_pin(fd, path)) {
		err = -errno;
		pr_warn("%s: cannot pin %s: %s%s\n", s->who, path, strerror(errno),
			errno == EEXIST ? " (pins of an earlier attach: umem-steer detach --pin first)" :
			errno == EPERM ? " (is the folder on a bpffs? mount -t bpf bpf DIR)" : "");
		return err;
	}
	if (chown(path, uid, gid) || chmod(path, 0660)) {
		err = -errno;
		pr_warn("%s: cannot give %s to %u:%u: %s\n", s->who, path, uid, gid, strerror(errno));
		return err;
	}
	return 0;
}

/* The writers' lock file, made now and given to the pins' owner: an unprivileged editor
 * could not create it in /run/umem. Without /run the lock is the program's fd (steer.c). */
static int pin_lock_file(struct umem_steer *s, uint32_t uid, uint32_t gid)
{
	char path[64];
	int fd, err = umem__steer_lock_path(s, path, sizeof(path));

	if (err)
		return err;
	if (mkdir(UMEM_STEER_LOCK_DIR, 0755) && errno != EEXIST)
		return errno == ENOENT ? 0 : -errno;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0660);
	if (fd < 0 || fchown(fd, uid, gid) || fchmod(fd, 0660)) {
		err = -errno;
		pr_warn("%s: cannot make the lock file %s for %u:%u: %s\n", s->who, path, uid, gid, strerror(errno));
	}
	if (fd >= 0)
		close(fd);
	return err;
}

static int pin_all(struct umem_steer *s, const char *dir, uint32_t uid, uint32_t gid)
{
	struct bpf_map *m;
	int err;

	if (mkdir(dir, 0770) && errno != EEXIST) {
		err = -errno;
		pr_warn("%s: cannot make the pin folder %s: %s%s\n", s->who, dir, strerror(errno),
			errno == EPERM ? " (is its parent on a bpffs? mount -t bpf bpf DIR)" : "");
		return err;
	}
	if (chown(dir, uid, gid) || chmod(dir, 0770)) {
		err = -errno;
		pr_warn("%s: cannot give %s to %u:%u: %s\n", s->who, dir, uid, gid, strerror(errno));
		rmdir(dir);
		return err;
	}
	err = pin_one(s, dir, PIN_PROG, s->prog_fd, uid, gid);
	bpf_object__for_each_map(m, s->skel->obj) {
		if (!err && !bpf_map__is_internal(m))
			err = pin_one(s, dir, bpf_map__name(m), bpf_map__fd(m), uid, gid);
	}
	/* The link last: pinned, the program is there to stay, every map already reachable. */
	err = err ?: pin_lock_file(s, uid, gid) ?: pin_one(s, dir, PIN_LINK, s->link_fd, uid, gid);
	if (err) {
		umem_steer__unpin(dir);
		rmdir(dir); /* what unpin left: it had no program pinned yet */
		return err;
	}
	s->pinned = true;
	return 0;
}

/* The object pinned as dir/name: its fd, or -errno with a message unless it is missing
 * (-ENOENT: the caller says what that means). */
static int pin_open(const char *who, const char *dir, const char *name)
{
	char path[PATH_MAX];
	int fd, err;

	if ((err = pin_path(path, sizeof(path), dir, name)))
		return err;
	fd = bpf_obj_get(path);
	if (fd >= 0)
		return fd;
	err = -errno;
	if (errno != ENOENT)
		pr_warn("%s: cannot open pin %s: %s%s\n", who, path, strerror(errno),
			errno == EACCES ? " (the pins' owner and mode say who may: umem-steer attach --owner)" : "");
	return err;
}

int umem__steer_pin_get(const char *dir, const char *name, uint32_t value_size, uint32_t *max)
{
	struct bpf_map_info mi = {};
	uint32_t len = sizeof(mi);
	int fd = pin_open("steer", dir, name), err;

	if (fd < 0)
		return fd;
	if (bpf_obj_get_info_by_fd(fd, &mi, &len)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (strcmp(mi.name, name) || (value_size && mi.value_size != value_size)) {
		pr_warn("steer: pin %s/%s is map %s of value size %u, not this libumem's %s (%u): pins "
			"of another version; attach and pin again\n", dir, name, mi.name, mi.value_size, name,
			value_size);
		close(fd);
		return -EPROTO;
	}
	if (max)
		*max = mi.max_entries;
	return fd;
}

/* The pinned link's program and interface, checked against what the handle expects. */
static int open_pinned_prog(struct umem_steer *s, const char *dir)
{
	struct bpf_link_info li = {};
	struct bpf_prog_info pi = {};
	uint32_t llen = sizeof(li), plen = sizeof(pi);
	int fd, err;

	fd = pin_open(s->who, dir, PIN_LINK);
	if (fd == -ENOENT)
		pr_warn("%s: no pinned steering program in %s (a privileged step makes it: "
			"umem-steer attach %s --pin DIR)\n", s->who, dir, s->ifname);
	if (fd < 0)
		return fd;
	err = bpf_obj_get_info_by_fd(fd, &li, &llen) ? -errno : 0;
	close(fd);
	if (err)
		return err;
	if (li.type != BPF_LINK_TYPE_XDP || li.xdp.ifindex != s->ifindex) {
		pr_warn("%s: the pins in %s are for interface index %u, not %s (%u)\n", s->who, dir,
			li.type == BPF_LINK_TYPE_XDP ? li.xdp.ifindex : 0, s->ifname, s->ifindex);
		return -EINVAL;
	}
	s->prog_fd = pin_open(s->who, dir, PIN_PROG);
	if (s->prog_fd < 0)
		return s->prog_fd;
	if (bpf_obj_get_info_by_fd(s->prog_fd, &pi, &plen))
		return -errno;
	if (pi.id != li.prog_id || strcmp(pi.name, UMEM_STEER_PROG_NAME)) {
		pr_warn("%s: the pins in %s hold program %s (%u), not the umem_steer program the link "
			"runs (%u)\n", s->who, dir, pi.name, pi.id, li.prog_id);
		return -EPROTO;
	}
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	s->mode = !bpf_xdp_query((int)s->ifindex, 0, &q) && q.skb_prog_id == pi.id ? UMEM_STEER_MODE_GENERIC :
										     UMEM_STEER_MODE_NATIVE;
	return 0;
}

static struct umem_steer *steer_open_pinned(const char *dir, const char *ifname)
{
	struct umem_steer *s;
	int err;

	if (!dir) {
		pr_warn("steer: open_pinned needs a folder\n");
		errno = EINVAL;
		return NULL;
	}
	if (!(s = opened_new(ifname)))
		return NULL;
	s->attach = UMEM_STEER_ATTACH_LINK;
	s->pin_dir = strdup(dir);
	err = s->pin_dir ? open_pinned_prog(s, dir) : -ENOMEM;
	for (size_t k = 0; !err && k < SM_NR; k++) {
		const struct umem__steer_map *m = &umem__steer_maps[k];
		uint32_t max = 0;
		int fd = umem__steer_pin_get(dir, m->name, m->value_size, &max);

		if (fd == -ENOENT)
			pr_warn("%s: %s lacks pin %s: pins of another libumem version; attach and pin "
				"again\n", s->who, dir, m->name);
		if (fd < 0)
			err = fd == -ENOENT ? -EPROTO : fd;
		else
			s->map_fd[k] = fd;
		if (k == SM_XSKS)
			s->nr_sockets = max;
	}
	if (!err)
		return s;
	umem_steer__detach(s);
	errno = -err;
	return NULL;
}

int umem_steer__unpin(const char *dir)
{
	struct umem_steer prog = { .prog_fd = -1 };
	struct bpf_prog_info pi = {};
	uint32_t len = sizeof(pi);
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int err;

	if (!dir)
		return -EINVAL;
	if ((err = pin_path(path, sizeof(path), dir, PIN_PROG)))
		return err;
	prog.prog_fd = bpf_obj_get(path);
	if (prog.prog_fd < 0) {
		err = -errno;
		pr_warn("steer: no steering program pinned in %s: %s\n", dir, strerror(errno));
		return err;
	}
	if (bpf_obj_get_info_by_fd(prog.prog_fd, &pi, &len) || strcmp(pi.name, UMEM_STEER_PROG_NAME)) {
		pr_warn("steer: %s holds no umem_steer program (%s): left as it is\n", dir, pi.name);
		close(prog.prog_fd);
		return -EPROTO;
	}
	umem__steer_lock_remove(&prog);
	close(prog.prog_fd);
	d = opendir(dir);
	if (!d)
		return -errno;
	/* Only pins live on a bpffs, and this folder holds ours. */
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && unlinkat(dirfd(d), e->d_name, 0) && !err)
			err = -errno;
	closedir(d);
	if (!err && rmdir(dir))
		err = -errno;
	if (err)
		pr_warn("steer: cannot remove the pins in %s: %s\n", dir, strerror(-err));
	return err;
}

/* The entry points: libbpf's and libxdp's messages through ours meanwhile, errno kept. */
#define WITH_LIB_PRINT(call)                          \
	({                                            \
		struct umem__lib_print saved_;        \
		struct umem_steer *s_;                \
		int err_;                             \
		umem__lib_print_begin(&saved_);       \
		s_ = (call);                          \
		err_ = errno;                         \
		umem__lib_print_end(&saved_);         \
		errno = err_;                         \
		s_;                                   \
	})

struct umem_steer *umem_steer__open_pinned(const char *dir, const char *ifname)
{
	return WITH_LIB_PRINT(steer_open_pinned(dir, ifname));
}

struct umem_steer *umem_steer__open_fds(const char *ifname, const struct umem_steer_fds *fds)
{
	return WITH_LIB_PRINT(steer_open_fds(ifname, fds));
}

struct umem_steer *umem_steer__open(const char *ifname)
{
	return WITH_LIB_PRINT(steer_open(ifname));
}

struct umem_steer *umem_steer__attach(const char *ifname, const struct umem_steer_opts *opts)
{
	return WITH_LIB_PRINT(steer_attach(ifname, opts));
}
