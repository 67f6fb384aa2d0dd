/* SPDX-License-Identifier: MIT */
/*
 * Attaching XDP programs (see xdp_attach.h), one policy for ports and steering.
 *
 * Fallback policy (UMEM__ATTACH_AUTO): native first; generic (skb) mode after any native refusal
 * except EBUSY and EEXIST. Drivers refuse native XDP for many reasons besides lacking it
 * (EOPNOTSUPP): an MTU or a multi-buffer program they cannot take (EINVAL, ERANGE), too few
 * XDP TX queues (ENOMEM, ENOSPC); generic mode works on every device, and auto asks for a
 * working attachment in the best mode there is. EBUSY and EEXIST mean the interface already
 * holds a program (in the other mode, or behind a link): a second one beside it would hide the
 * conflict, so that is reported instead. Every fallback is logged with the native error, and a
 * failure after the fallback names both errors.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "xdp_attach.h"

/* ---- what an interface holds ---- */

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

static void note_prog(struct xdp_found *f, const char *ours, uint32_t id, uint32_t flags,
		      bool in_dispatcher)
{
	char name[BPF_OBJ_NAME_LEN] = "";

	if (prog_name(id, name))
		return;
	if (!strcmp(name, ours)) {
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

int umem__xdp_find(int ifindex, const char *ours, struct xdp_found *f)
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
				note_prog(f, ours, id, modes[m].flags, false);
				continue;
			}
			while ((p = xdp_multiprog__next_prog(p, mp)))
				note_prog(f, ours, xdp_program__id(p), modes[m].flags, true);
			xdp_multiprog__close(mp);
			continue;
		}
		note_prog(f, ours, id, modes[m].flags, false);
	}
	return 0;
}

bool umem__xdp_by_link(int ifindex, uint32_t prog_id)
{
	uint32_t id = 0;
	bool found = false;

	while (!found && !bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info li = {};
		uint32_t len = sizeof(li);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &li, &len) && li.type == BPF_LINK_TYPE_XDP &&
		    li.prog_id == prog_id && (int)li.xdp.ifindex == ifindex)
			found = true;
		close(fd);
	}
	return found;
}

uint64_t umem__proc_start_time(uint32_t pid)
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

/* ---- stale and foreign programs ---- */

int umem__xdp_remove_stale(const char *who, int ifindex, const struct xdp_found *f,
			   uint32_t owner_pid, uint64_t owner_start)
{
	int err;

	if (owner_pid && umem__proc_start_time(owner_pid) == owner_start) {
		pr_warn("%s: already attached by live process %u (program id %u)\n", who, owner_pid,
			f->prog_id);
		return -EBUSY;
	}
	pr_info("%s: replacing stale program %u (owner pid %u is gone)\n", who, f->prog_id, owner_pid);
	if (f->in_dispatcher) {
		struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
		struct xdp_program *p = NULL;

		err = libxdp_get_error(mp);
		if (err)
			return err;
		while ((p = xdp_multiprog__next_prog(p, mp)))
			if (xdp_program__id(p) == f->prog_id)
				break;
		err = p ? xdp_program__detach(p, ifindex, xdp_multiprog__attach_mode(mp), 0) : -ENOENT;
		xdp_multiprog__close(mp);
	} else {
		/* A live link refuses this (EBUSY). */
		err = bpf_xdp_detach(ifindex, f->xdp_flags, NULL) ? -errno : 0;
	}
	if (err)
		pr_warn("%s: cannot remove stale program %u: %s\n", who, f->prog_id, strerror(-err));
	return err;
}

const char *umem__xdp_off_keyword(uint32_t xdp_flags)
{
	return xdp_flags & XDP_FLAGS_SKB_MODE ? "xdpgeneric" : "xdp";
}

int umem__xdp_remove_foreign(const char *who, int ifindex, const struct xdp_found *f, bool replace)
{
	if (!replace && !strcmp(f->foreign_name, UMEM__PORT_PROG_NAME)) {
		/* Not foreign: another libumem process's ports serve the interface. */
		pr_warn("%s: the interface is in use by libumem ports of another process (their XDP "
			"program '%s', id %u, lives while that process does): stop it, or steer from "
			"that process\n", who, f->foreign_name, f->foreign_id);
		return -EBUSY;
	}
	if (!replace) {
		char ifname[IF_NAMESIZE] = "IFACE";

		if_indextoname((unsigned int)ifindex, ifname);
		pr_warn("%s: XDP program '%s' (id %u) is attached and is not libumem's: refusing to "
			"replace it (detach it with ip link set dev %s %s off; the API can replace "
			"it with UMEM_STEER_F_REPLACE)\n", who, f->foreign_name, f->foreign_id, ifname,
			umem__xdp_off_keyword(f->foreign_flags));
		return -EBUSY;
	}
	pr_info("%s: replacing XDP program '%s' (id %u) as asked\n", who, f->foreign_name,
		f->foreign_id);
	if (f->foreign_in_dispatcher) { /* the dispatcher goes, with every program in it */
		struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
		int err = libxdp_get_error(mp);

		if (!err) {
			err = xdp_multiprog__detach(mp);
			xdp_multiprog__close(mp);
		}
		return err;
	}
	if (bpf_xdp_detach(ifindex, f->foreign_flags, NULL)) {
		int err = -errno;

		pr_warn("%s: cannot remove program %u: %s (a bpf_link held by another process "
			"cannot be replaced)\n", who, f->foreign_id, strerror(-err));
		return err;
	}
	return 0;
}

/* ---- attaching ---- */

static bool falls_back(int err)
{
	return err != -EBUSY && err != -EEXIST;
}

int umem__xdp_attach(const char *who, uint32_t mode, xdp_attach_fn fn, void *ctx,
		     uint32_t *xdp_flags)
{
	int native = 0, ret;

	if (mode != UMEM__ATTACH_GENERIC) {
		*xdp_flags = XDP_FLAGS_DRV_MODE;
		ret = fn(ctx, XDP_FLAGS_DRV_MODE);
		if (ret >= 0)
			return ret;
		if (mode == UMEM__ATTACH_NATIVE || !falls_back(ret)) {
			pr_warn("%s: native XDP attach failed: %s%s%s\n", who, strerror(-ret),
				ret == -EOPNOTSUPP ? " (the driver has no native XDP; use generic mode)" :
				ret == -EBUSY || ret == -EEXIST ? " (the interface already holds an XDP program)" : "",
				umem__cap_hint_attach(ret));
			return ret;
		}
		pr_info("%s: native XDP refused (%s): falling back to generic (skb) mode, which is "
			"slower\n", who, strerror(-ret));
		native = ret;
	}
	*xdp_flags = XDP_FLAGS_SKB_MODE;
	ret = fn(ctx, XDP_FLAGS_SKB_MODE);
	if (ret < 0 && native)
		pr_warn("%s: cannot attach XDP: native mode: %s; generic mode: %s%s\n", who,
			strerror(-native), strerror(-ret), umem__cap_hint_attach(ret));
	else if (ret < 0)
		pr_warn("%s: generic XDP attach failed: %s%s\n", who, strerror(-ret), umem__cap_hint_attach(ret));
	return ret;
}

struct link_ctx {
	int prog_fd, ifindex;
};

static int link_once(void *ctx, uint32_t xdp_flags)
{
	const struct link_ctx *c = ctx;
	LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = xdp_flags);
	int fd = bpf_link_create(c->prog_fd, c->ifindex, BPF_XDP, &lo);

	return fd < 0 ? -errno : fd;
}

int umem__xdp_link(const char *who, int prog_fd, int ifindex, uint32_t mode, uint32_t *xdp_flags)
{
	struct link_ctx c = { .prog_fd = prog_fd, .ifindex = ifindex };

	return umem__xdp_attach(who, mode, link_once, &c, xdp_flags);
}
