/* SPDX-License-Identifier: MIT */
/*
 * SIGHUP with --config: the file read again (with the same command line over it) and the
 * difference applied where it can change live: the rules (removed and added by their text, the
 * others untouched) and the latency level. Every other option that changed is named and left as
 * it was; a file with an error changes nothing. Main thread.
 */
#ifndef XDP_FWD_RELOAD_H
#define XDP_FWD_RELOAD_H

struct fwd_ctx;

/* 0 when the file was read (what changed, or could not, is on stderr), -1 when it could not be. */
int fwd_reload(struct fwd_ctx *ctx, int argc, char **argv);

#endif
