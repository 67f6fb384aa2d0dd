/* SPDX-License-Identifier: MIT */
/* Private to steering: the handle that steer.c (control) and steer_attach.c (discovery,
 * load, attach) share. Never installed. */
#ifndef UMEM_STEER_INTERNAL_H
#define UMEM_STEER_INTERNAL_H

#include <net/if.h>
#include <umem/steer.h>
#include "internal.h"

/* The IPv6 extension headers the program walks (hop-by-hop, routing, fragment, destination
 * options), as userspace must to agree with it on a flow's key. */
static inline bool umem__ipv6_exthdr(uint8_t nh)
{
	return nh == 0 || nh == 43 || nh == 44 || nh == 60;
}

#define NR_SOCKETS_DEFAULT 64u
#define NR_SOCKETS_MAX 65536u
#define TABLE_FLAGS_ALL (UMEM_STEER_F_HOST_CONTROL | UMEM_STEER_F_TRACE | UMEM_STEER_F_ROUTER)

struct steer;

/* The program's maps a handle holds, in the order of umem__steer_maps[]. The prefix tries
 * follow enum umem_steer_prefix_dir (SM_PSRC + dir); SM_PSTATS counts prefix rules by id. */
enum steer_map { SM_TABLES, SM_ACTIVE, SM_XSKS, SM_RSTATS, SM_ASTATS, SM_TRACE, SM_PSRC, SM_PDST, SM_PSTATS, SM_NR };
struct umem__steer_map {
	const char *name;
	uint32_t value_size; /* checked when opened from another build (pins); 0: not checked */
};
UMEM_PRIVATE extern const struct umem__steer_map umem__steer_maps[SM_NR];

struct umem_steer {
	struct steer *skel;          /* set when this handle loaded the program */
	struct xdp_program *xdp_prog; /* UMEM_STEER_ATTACH_LIBXDP */
	int link_fd;                 /* UMEM_STEER_ATTACH_LINK */
	int prog_fd;
	int map_fd[SM_NR];           /* by enum steer_map */
	int own_fds;                 /* the map/prog fds were opened by id or pin (umem_steer__open*) */
	int *given;                  /* umem_steer__open_fds: copies of the maps handed over, from */
	uint32_t nr_given;           /* which umem_steer_flows__open takes its own too */
	char *pin_dir;               /* umem_steer__open_pinned: where the maps are (flows too) */
	bool pinned;                 /* this handle pinned what it attached: the pins keep the lock file */
	uint32_t ifindex;
	char ifname[IF_NAMESIZE];
	char who[IF_NAMESIZE + 8]; /* "steer <ifname>": prefixes messages */
	uint32_t mode;
	uint32_t attach;
	uint32_t nr_sockets;
	uint32_t nr_queues;
	uint32_t xdp_flags;          /* XDP_FLAGS_* mode used for the attachment */
	int nr_cpus;
	/* The prefix rules this handle added, in order: a remove of one finds its trie entry by
	 * key, not by walking the tries for its id (one walk per rule made `umem-steer load`'s
	 * undo of a refused file quadratic: 137 s for 8000 rules). Best effort: a rule missing
	 * here, or moved meanwhile, is found by the walk. */
	struct steer_added {
		uint32_t id, dir;
		struct umem_steer_prefix_key key;
	} *added;
	size_t nr_added, cap_added;
};

/* Folder of the writers' lock files (one per program id, see steer.c). */
#define UMEM_STEER_LOCK_DIR "/run/umem"

/* steer.c */
/* The writers' lock file of the handle's program. */
UMEM_PRIVATE int umem__steer_lock_path(struct umem_steer *s, char *buf, size_t len);
/* By the handle that loaded the program, as it goes: removes the lock file. */
UMEM_PRIVATE void umem__steer_lock_remove(struct umem_steer *s);
/* Removes the lock files of programs that no longer exist (owners killed before detach). */
UMEM_PRIVATE void umem__steer_lock_sweep(void);
UMEM_PRIVATE int umem__steer_table_read(struct umem_steer *s, struct umem_steer_table *t, uint32_t *bank);
UMEM_PRIVATE int umem__steer_check_action(struct umem_steer *s, const struct umem_steer_action *a);
/* steer_rule.c */
/* What is wrong with a match's prefixes (a bad family or length, host bits set, src and dst
 * or the ethertype of different families), written into why; 0 when nothing is. */
UMEM_PRIVATE int umem__steer_match_problem(const struct umem_steer_match *m, char *why, size_t len);
/* "10.0.0.0/8", "2001:db8::/32", "10.0.0.1" (a full-length prefix prints as its address). */
UMEM_PRIVATE void umem__steer_prefix_format(const struct umem_steer_prefix *p, char *buf, size_t len);

/* umem_steer_table.owner_start of a program that pins hold (owner_pid 0): alive while pinned. */
#define UMEM__STEER_OWNER_PINS UINT64_MAX

/* steer_attach.c */
/* Opens the map pinned as dir/name: its fd (-errno with a message naming the pin and what to
 * do) and, when max is not NULL, its max_entries. value_size, when not 0, must match (else
 * -EPROTO: another libumem version's map). */
UMEM_PRIVATE int umem__steer_pin_get(const char *dir, const char *name, uint32_t value_size, uint32_t *max);

/* Whether the process that attached the table's program still runs (pid and start time), or
 * pins hold it. */
UMEM_PRIVATE int umem__steer_owner_alive(const struct umem_steer_table *t);

#endif
