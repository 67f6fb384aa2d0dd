/* SPDX-License-Identifier: MIT */
/*
 * --takeover: a new xdp-fwd takes the interfaces over from the one serving the control socket,
 * so that a restart (an upgrade, options that cannot change live) is not an outage.
 *
 * The new instance prepares what needs no interface (the UMEM area, faulted in and registered
 * as UMEM by its first port created unbound, the pools, the config), then sends "handover 1"
 * on the control socket ("handover 2" when it cannot open a steering program by id). The old one stops its workers, takes its
 * sockets out of the steering program's socket map, closes its ports, releases its interface
 * locks, and answers with what the new one continues from (handover.c: the reply's lines), the
 * descriptors going with it (SCM_RIGHTS): each interface's bpf_link, the listening control and
 * metrics sockets. Then it exits; its steering program stays attached, held by the new
 * instance's copy of the link, with its table (the run-time rules, their counters) as it was.
 * The new instance binds its sockets and registers them in that program's socket map at once.
 * Frames that arrive in between find no socket and go to the kernel: the gap is the old
 * sockets' close and the new ones' bind, not a whole start.
 *
 * Counters continue: the old instance's totals are taken off the new one's start sample, so
 * every count since start (stats, totals, /metrics) goes on from where the old one was.
 *
 * Bad cases: nobody answers on the socket: a normal start. The old instance refuses: nothing
 * changes, both stay as they were (the new one stops). It dies mid-handover: the new one starts
 * normally (attaches its own program). It stalls (no reply in FWD_HANDOVER_TIMEOUT_MS): the new
 * one stops, and the old one, once it runs again, finds the request's connection closed and
 * runs on. Interfaces the old one had and the new one
 * does not: their program goes with the old instance; new ones: attached as at any start.
 */
#ifndef XDP_FWD_HANDOVER_H
#define XDP_FWD_HANDOVER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "stats.h"

/* 2 adds the "steer" lines (the programs' and maps' descriptors), which a successor without
 * CAP_SYS_ADMIN needs; an instance speaking 2 answers 1 the same way (1's askers skip them). */
#define FWD_HANDOVER_VERSION 2
#define FWD_HANDOVER_VERSION_MIN 1
#define FWD_HANDOVER_TIMEOUT_MS 10000 /* the old instance's stop and reply */

struct fwd_config;
struct fwd_ctx;
struct fwd_control;
struct fwd_handover;

/* Whether an xdp-fwd answers on cfg's control socket: *out set (the takeover happens in
 * setup), or NULL with a message (a normal start). 0, or -errno (no memory, no socket path). */
int fwd_handover_probe(const struct fwd_config *cfg, struct fwd_handover **out);
/* The exchange, before any port binds (main.c's setup). 0: taken over (each interface's
 * program handed over is its fwd_iface.adopt, which fwd_iface_steer_open takes), or the old
 * instance was gone and this is a normal start (the interfaces locked either way); -errno: the
 * old instance refused or stalled (-ETIMEDOUT), or the locks could not be taken (a message says
 * so; nothing attached). */
int fwd_handover_take(struct fwd_ctx *ctx);
/* Where the takeover's time went (after fwd_handover_take): a step of set-up marked (printf
 * format), in ms since the takeover began; then the line on stderr, with the gap (the old
 * instance's workers stopped to this one's sockets in the map), once they are in. No-ops
 * without a takeover. */
__attribute__((format(printf, 2, 3)))
void fwd_handover_mark(struct fwd_ctx *ctx, const char *fmt, ...);
void fwd_handover_timing(struct fwd_ctx *ctx);
/* The control and metrics sockets, the handed-over ones where they came (after setup). */
void fwd_handover_listeners(struct fwd_ctx *ctx);
/* The old instance's totals taken off start (counts since start continue from them). */
void fwd_handover_carry(struct fwd_ctx *ctx, struct fwd_samples *start);
/* After teardown: the links held (the programs go now if no one else holds them). */
void fwd_handover_free(struct fwd_ctx *ctx);

/* The old instance's side: the request on connection fd of the control socket c (the run loop
 * gets it from fwd_control_take). Stops the workers, closes the ports, answers; the run loop
 * then ends (ctx->stop). A version it does not speak, or an asker gone: refused, nothing
 * changes. successor: a restart's (restart.h), the only peer (SO_PEERCRED) it hands over to,
 * and the one the service manager is told to follow (MAINPID=); 0: none under way. */
void fwd_handover_give(struct fwd_ctx *ctx, struct fwd_control *c, int fd, uint32_t version,
		       const struct fwd_samples *start, pid_t successor);

#endif
