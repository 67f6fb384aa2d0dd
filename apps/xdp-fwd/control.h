/* SPDX-License-Identifier: MIT */
/*
 * --control PATH: the unix stream socket xdp-fwdctl talks to (the protocol: ctl.h). Served by the
 * main thread's run loop, which owns what the commands change (rules, latency, reload), never by
 * a worker: every socket is non-blocking, a reply waits in memory until the peer takes it, and a
 * connection that has not finished within FWD_CONTROL_TIMEOUT_MS is closed, so a slow or gone
 * client costs the loop a few system calls and nothing else. Peers are checked with SO_PEERCRED:
 * root, the socket's owner (xdp-fwd's uid) and, with --control-group, that group's members.
 */
#ifndef XDP_FWD_CONTROL_H
#define XDP_FWD_CONTROL_H

#include <poll.h>
#include <stdint.h>
#include <umem/steer.h>

#include "ctl.h"
#include "fwd.h"
#include "stats.h"

#define FWD_CONTROL_CONNS 8          /* clients served at once; more are told so and closed */
#define FWD_CONTROL_TIMEOUT_MS 5000  /* a whole exchange, request to the reply's last byte */
/* Descriptors on one reply (a handover's: the control and metrics sockets, and per interface
 * its link, its program and its maps). */
#define FWD_CONTROL_MAX_FDS (2 + FWD_MAX_PORTS * (2 + 2 * UMEM_STEER_MAP_FDS_MAX))
/* The kernel's limit on one message (SCM_MAX_FD): more go on several. */
#define FWD_CONTROL_FDS_PER_MSG 253

struct fwd_ctx;
struct fwd_control;

/* Creates the socket (before set-up: a path in use changes nothing). NULL with errno 0 when off
 * (--control none, or the default path could not be made: a warning says why); NULL with a
 * message on stderr and errno set when an explicit --control cannot be served. */
struct fwd_control *fwd_control_open(const struct fwd_config *cfg);
/* The same with fd, a listening socket already bound at the path (handed over by the instance
 * taken over, which leaves the file); fd < 0: as fwd_control_open. */
struct fwd_control *fwd_control_open_fd(const struct fwd_config *cfg, int fd);
/* The listening socket (-1 when off), given up: the connections are served on, no new one is
 * taken, and the file stays at close (handover.c sends it to the next instance). */
int fwd_control_release(struct fwd_control *c);
/* A request the run loop answers itself: a handover (handover.c) or a restart (restart.c). */
struct fwd_control_taken {
	enum fwd_ctl_cmd cmd;
	uint32_t version; /* handover: the asker's protocol version */
	bool json;
};
/* The connection of such a request fwd_control_serve took (what it asks in *t), the caller's
 * now: it answers on it and closes it; -1 when none came. */
int fwd_control_take(struct fwd_control *c, struct fwd_control_taken *t);
/* On a connection taken out of the server: text whole, the descriptors fds[0..nfds) riding on
 * its first bytes (SCM_RIGHTS, FWD_CONTROL_FDS_PER_MSG a byte); blocking,
 * FWD_CONTROL_TIMEOUT_MS at most. 0 or -errno. */
int fwd_control_send(int fd, const char *text, size_t len, const int *fds, int nfds);
/* The same with a reply framed as the server frames it (ctl.h): error, or "ok" and body. */
int fwd_control_answer(int fd, const char *error, const char *body);
/* What the commands need of the run: the stats' start sample, the command line a reload reads
 * again (main.c's). */
void fwd_control_attach(struct fwd_control *c, struct fwd_ctx *ctx, const struct fwd_samples *start, int argc,
			char **argv);
/* The descriptors to wait for (the listening socket, each connection reading or writing) into
 * pfd[0..max); returns how many. */
int fwd_control_pollfds(const struct fwd_control *c, struct pollfd *pfd, int max);
/* Accepts, reads, answers and times out what is ready. Main thread (now: fwd_now_ns()). */
void fwd_control_serve(struct fwd_control *c, uint64_t now);
/* Closes every connection and removes the socket file (if it is still the one created). */
void fwd_control_close(struct fwd_control *c);
/* The path cfg's socket has (--control, or the default): 0, or -1 when off or too long. */
int fwd_control_path_of(const struct fwd_config *cfg, char *buf, size_t len);
/* The socket path ("" when off), for the banner. */
const char *fwd_control_path(const struct fwd_control *c);

#endif
