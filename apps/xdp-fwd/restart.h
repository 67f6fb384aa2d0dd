/* SPDX-License-Identifier: MIT */
/*
 * `xdp-fwdctl restart` and SIGUSR2: the running xdp-fwd starts its successor itself, so that the
 * successor runs where it runs (a systemd unit's cgroup, its supervisor's children) and an
 * upgrade is not an outage.
 *
 * The successor is the binary at the path this xdp-fwd was started from (resolved at start:
 * after a package upgrade that path holds the new build, where /proc/self/exe names the deleted
 * old file), run with this command line and --takeover (handover.h does the rest). It is
 * spawned with its stderr into a pipe this instance reads: each line goes on to this
 * instance's stderr, and the first that is not a warning names a failure. The successor puts
 * its own stderr back (the descriptor named by FWD_RESTART_STDERR_ENV) once set up.
 *
 * Under systemd (NOTIFY_SOCKET): RELOADING=1 when the successor is spawned; if it takes over,
 * MAINPID=<its pid> before the handover's reply (handover.c), so that the manager follows it
 * and takes its READY=1 as the end of the reload; no STOPPING=1 from this instance then. If it
 * fails: READY=1 again, this instance runs on, nothing changed.
 *
 * The reply: "restarted: pid N took over from pid M" once the successor is set up (or the
 * handover done and FWD_HANDOVER_TIMEOUT_MS passed), or an error naming why: the successor
 * could not be run (errno), exited before taking over (its status and first error line), did
 * not take over within FWD_CTL_RESTART_TIMEOUT_MS (stopped), or took over and then failed.
 */
#ifndef XDP_FWD_RESTART_H
#define XDP_FWD_RESTART_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define FWD_RESTART_STDERR_ENV "XDP_FWD_RESTART_STDERR"

struct fwd_ctx;

/* First thing in main: the path to start again (argv[0] made absolute, if it is the running
 * binary; else /proc/self/exe's target now); as a successor, the stderr to put back. */
void fwd_restart_init(int argc, char **argv);
/* As a successor: set up, so stderr is the real one again (the pipe closes; the old instance
 * then answers and exits). Nothing when not started by a restart. */
void fwd_restart_set_up(void);

/* A restart request: fd the requester's connection (the reply goes there, then it is closed;
 * -1: SIGUSR2, the outcome goes to stderr only), json its --json. Refused at once (nothing
 * changes) when one is under way, with --pinned or --control none, after --no-reattach
 * dropped every capability, without CAP_SYS_ADMIN kept (the successor opens the steering
 * program by id: fwd_privs_kept_open_by_id), or when the binary cannot be run. */
void fwd_restart_begin(struct fwd_ctx *ctx, int fd, bool json);
/* The successor's output to wait for, into pfd[0..max); how many. */
int fwd_restart_pollfds(struct pollfd *pfd, int max);
/* Each run loop turn: its output relayed, its exit or its deadline seen to. */
void fwd_restart_poll(struct fwd_ctx *ctx, uint64_t now);
/* The successor under way (the one handover may go to), or 0. */
pid_t fwd_restart_successor(void);
/* After this instance handed over to the successor: waits for its set-up (its stderr's end,
 * FWD_HANDOVER_TIMEOUT_MS at most), answers, and leaves it running (never reaped here: its
 * exit status is its supervisor's once this instance is gone). */
void fwd_restart_handed_over(struct fwd_ctx *ctx);
/* At stop: a successor that did not take over is stopped too (the requester told). */
void fwd_restart_fini(void);

#endif
