/* SPDX-License-Identifier: MIT */
/*
 * SIGHUP with --config: the file read again (with the same command line over it) and the
 * difference applied where it can change live: the rules (removed and added by their text, the
 * others untouched) and the latency level. Every other option that changed is named and left as
 * it was; a file with an error changes nothing. Main thread.
 */
#ifndef XDP_FWD_RELOAD_H
#define XDP_FWD_RELOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fwd.h"

struct fwd_ctx;
struct umem_steer_rule;

/* 0 when the file was read (what changed, or could not, is on stderr), -1 when it could not be
 * (why: the parser's message, FILE:LINE: ...; nothing changed), 1 when it was read and applied
 * but its ports could not be changed (why: the port and the error; the ports it added are closed
 * again, and the next reload tries them again). SIGHUP and the control socket's reload. */
int fwd_reload(struct fwd_ctx *ctx, int argc, char **argv, char *why, size_t whylen);
/* The running level becomes level (given: as if --latency named it); the caller checked
 * fwd_latency_fixed. A reload and the control socket's latency. */
void fwd_latency_apply(struct fwd_ctx *ctx, enum fwd_latency level, bool given);

/* The steering rules of every interface become rules[0..n) (texts[r] names rule r and must
 * outlive it): those whose text is gone are removed, the new ones added, the others keep their
 * id and counters. Also used by --mode l3 for its own-address rules. 0, or the last -errno of
 * a rule the kernel refused (said on stderr). May alias cfg's own arrays. *applied (may be NULL):
 * whether cfg's list is now rules (false when --offload-after's workers could not be parked:
 * the programs changed, cfg's list and texts not). */
int fwd_rules_replace(struct fwd_ctx *ctx, const struct umem_steer_rule *rules, const char *const *texts, uint32_t n,
		      bool *applied);

#endif
