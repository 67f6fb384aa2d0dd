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

/* A walk of a steering table's prefix rules in slices, for the main thread: a whole walk of a
 * large table (100,000 rules during a `umem-steer load`) takes seconds, in which no stats
 * interval, link event or signal would be handled. Rule ids are monotonic, so a walk looks for
 * the rules whose ids were handed out since the last complete one. */
struct fwd_prefix_scan {
	struct umem_steer_prefix_cursor cur;
	bool walking;
	uint32_t done; /* prefix ids below this were seen by a complete walk (umem_steer_info's prefix_ids) */
	uint32_t upto; /* the ids handed out when this walk began */
};
/* Goes on with sc's walk of s for a few milliseconds at most, and starts one when ids were handed
 * out since the last (prefix_ids, umem_steer_info's) and fewer than below were seen. fn gets the
 * rules with ids in [done, min(upto, below)). Returns true while a walk is under way. */
bool fwd_prefix_scan(struct fwd_prefix_scan *sc, struct umem_steer *s, uint32_t prefix_ids, uint32_t below,
		     umem_steer_rule_fn fn, void *arg);

/* The rules of one interface's steering table as the stats name them, -r rules and those
 * umem-steer added at run time alike: re-read when the table's generation (or the program)
 * changes. text[r] is the -r text for a start-up rule, the formatted rule otherwise. */
struct fwd_rule_view {
	const struct umem_steer *of; /* the handle read; NULL: never read */
	uint64_t gen;
	struct fwd_prefix_scan scan; /* finds the prefix rules the stats follow (the first 64 ids) */
	uint32_t nr;
	uint32_t id[2 * UMEM_STEER_MAX_RULES]; /* the table's rules, then prefix rules (stats.h) */
	struct umem_steer_rule rule[2 * UMEM_STEER_MAX_RULES]; /* for umem_steer__rule_counter_of */
	const char *text[2 * UMEM_STEER_MAX_RULES];
	char buf[2 * UMEM_STEER_MAX_RULES][128];
};
/* Refreshes v from s (NULL: empty) when stale; cfg_id[r] is the id -r rule r got. Bounded work:
 * the table's 64 rules, one lookup per prefix rule followed, and a slice of a prefix walk while
 * the first 64 prefix ids are being handed out. */
void fwd_rule_view_refresh(struct fwd_rule_view *v, struct umem_steer *s, const struct fwd_config *cfg,
			   const uint32_t *cfg_id);

#endif
