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

#include "fwd.h"

struct fwd_ctx;

/* 0 when the file was read (what changed, or could not, is on stderr), -1 when it could not be
 * (why: the parser's message, FILE:LINE: ...). SIGHUP and the control socket's reload. */
int fwd_reload(struct fwd_ctx *ctx, int argc, char **argv, char *why, size_t whylen);
/* The running level becomes level (given: as if --latency named it); the caller checked
 * fwd_latency_fixed. A reload and the control socket's latency. */
void fwd_latency_apply(struct fwd_ctx *ctx, enum fwd_latency level, bool given);

#endif
