/* SPDX-License-Identifier: MIT */
/* xdp-fwd: --rule checked against the ports (targets served, matches possible). */
#ifndef XDP_FWD_RULES_H
#define XDP_FWD_RULES_H

#include "fwd.h"

/* Whether a port of ifname serves socket index (xdp-fwd registers every socket at the index
 * of its queue). */
bool fwd_socket_served(const struct fwd_config *cfg, const char *ifname, uint32_t index);
/* 0, or -EINVAL with a message in err when action a (of rule text) sends frames to a socket
 * index that no port of some interface serves. */
int fwd_rule_target_check(const struct fwd_config *cfg, const char *text,
			  const struct umem_steer_action *a, char *err, size_t errlen);
/* Every rule of cfg through fwd_rule_target_check; the first refusal is printed. */
int fwd_rules_check(const struct fwd_config *cfg);
/* Warns about rules that can never match, about a drop that takes every frame, and (through
 * fwd_warn_rules) about ARP handed to a kernel without an address. Returns the number of
 * warnings. */
uint32_t fwd_rules_warn(const struct fwd_config *cfg, FILE *out);

/* The rules of one interface's steering table as the stats name them, -r rules and those
 * umem-steer added at run time alike: re-read when the table's generation (or the program)
 * changes. text[r] is the -r text for a start-up rule, the formatted rule otherwise. */
struct fwd_rule_view {
	const struct umem_steer *of; /* the handle read; NULL: never read */
	uint64_t gen;
	uint32_t nr;
	uint32_t id[2 * UMEM_STEER_MAX_RULES]; /* the table's rules, then prefix rules (stats.h) */
	struct umem_steer_rule rule[2 * UMEM_STEER_MAX_RULES]; /* for umem_steer__rule_counter_of */
	const char *text[2 * UMEM_STEER_MAX_RULES];
	char buf[2 * UMEM_STEER_MAX_RULES][128];
};
/* Refreshes v from s (NULL: empty) when stale; cfg_id[r] is the id -r rule r got. */
void fwd_rule_view_refresh(struct fwd_rule_view *v, struct umem_steer *s, const struct fwd_config *cfg,
			   const uint32_t *cfg_id);

#endif
