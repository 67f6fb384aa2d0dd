/* SPDX-License-Identifier: MIT */
/*
 * Attaching XDP programs, for both the port's default program and the steering program: what
 * an interface already holds, the native -> generic fallback, the bpf_link, and removing a
 * stale or (when asked) a foreign program. Never installed.
 */
#ifndef UMEM_XDP_ATTACH_H
#define UMEM_XDP_ATTACH_H

#include <stdbool.h>
#include <stdint.h>
#include <bpf/bpf.h>
#include "internal.h"

/* The attach-mode request: UMEM_PORT_ATTACH_* and UMEM_STEER_MODE_* have these values. */
enum umem__attach_mode {
	UMEM__ATTACH_AUTO = 0, /* native, generic (skb) when native is refused (logged) */
	UMEM__ATTACH_NATIVE,
	UMEM__ATTACH_GENERIC,
};

/* XDP programs on an interface, in native and generic mode, looking into libxdp's dispatcher. */
struct xdp_found {
	uint32_t prog_id;    /* ours (named like ours), 0 if none */
	uint32_t xdp_flags;  /* XDP_FLAGS_DRV_MODE or _SKB_MODE: where it is attached */
	bool in_dispatcher;  /* a component of libxdp's dispatcher */
	uint32_t foreign_id; /* a program that is not ours (the first found), 0 if none */
	uint32_t foreign_flags;
	bool foreign_in_dispatcher;
	char foreign_name[BPF_OBJ_NAME_LEN];
};

/* Fills f for ifindex; ours is the BPF program name of our program. 0 or negative errno. */
UMEM_PRIVATE int umem__xdp_find(int ifindex, const char *ours, struct xdp_found *f);
/* The ip-link keyword that detaches a program attached with xdp_flags: "xdpgeneric" for
 * generic (skb) mode, where "xdp off" leaves it attached, else "xdp". */
UMEM_PRIVATE const char *umem__xdp_off_keyword(uint32_t xdp_flags);
/* BPF name of the ports' default program (bpf/xsk_redirect.bpf.c). */
#define UMEM__PORT_PROG_NAME "xsk_redirect"
/* Whether prog_id is attached to ifindex through a bpf_link (else through netlink). */
UMEM_PRIVATE bool umem__xdp_by_link(int ifindex, uint32_t prog_id);

/* Start time of a process (field 22 of /proc/pid/stat), so a reused pid is not taken for an
 * owner. 0 when the process does not exist. */
UMEM_PRIVATE uint64_t umem__proc_start_time(uint32_t pid);

/* Stale-program rules. A program of ours (f->prog_id) whose owner (pid, start time) is gone is
 * detached; a live owner's is refused (-EBUSY). Only a netlink or dispatcher attachment can
 * outlive its owner: a bpf_link dies with the process that holds it. */
UMEM_PRIVATE int umem__xdp_remove_stale(const char *who, int ifindex, const struct xdp_found *f,
					uint32_t owner_pid, uint64_t owner_start);
/* A program that is not ours is removed only when replace says so (else -EBUSY); in libxdp's
 * dispatcher the whole dispatcher goes. */
UMEM_PRIVATE int umem__xdp_remove_foreign(const char *who, int ifindex, const struct xdp_found *f,
					  bool replace);

/* One attach attempt in one mode (XDP_FLAGS_DRV_MODE or _SKB_MODE): >= 0 (a link fd, or 0) or
 * negative errno. */
typedef int (*xdp_attach_fn)(void *ctx, uint32_t xdp_flags);
/* Attaches through fn in the mode asked, with the one fallback policy (see xdp_attach.c).
 * Returns fn's result; *xdp_flags says the mode used. who prefixes the messages. */
UMEM_PRIVATE int umem__xdp_attach(const char *who, uint32_t mode, xdp_attach_fn fn, void *ctx,
				  uint32_t *xdp_flags);
/* umem__xdp_attach through a bpf_link owned by this process: the link fd or negative errno. */
UMEM_PRIVATE int umem__xdp_link(const char *who, int prog_fd, int ifindex, uint32_t mode,
				uint32_t *xdp_flags);

#endif
