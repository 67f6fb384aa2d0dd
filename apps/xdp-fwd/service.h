/* SPDX-License-Identifier: MIT */
/*
 * systemd's notify protocol (sd_notify(3)): READY=1 once every port forwards, WATCHDOG=1 from
 * the main thread's run loop while the unit asks for it (WatchdogSec=), STOPPING=1 at shutdown.
 * A restart (restart.h): RELOADING=1 while the successor starts, then MAINPID= of the successor
 * that takes over (the unit's NotifyAccess=main then takes its messages, and this instance
 * sends none: no STOPPING=1), or READY=1 again when it failed. Accepted by systemd 252 in the
 * running and reloading states, for a pid of the unit's cgroup (a child is). Without
 * NOTIFY_SOCKET every call does nothing.
 */
#ifndef XDP_FWD_SERVICE_H
#define XDP_FWD_SERVICE_H

#include <stdint.h>
#include <sys/types.h>

struct fwd_ctx;

/* The workers run on every port: READY=1, with a STATUS= line naming the ports. */
void fwd_service_ready(const struct fwd_ctx *ctx);
/* From the run loop (now: fwd_now_ns()): WATCHDOG=1 at half the unit's watchdog period. */
void fwd_service_tick(uint64_t now);
/* STOPPING=1, unless the successor is the main process now. */
void fwd_service_stopping(void);
/* RELOADING=1: a restart's successor was started. */
void fwd_service_restarting(pid_t successor);
/* MAINPID=successor, which takes over now (before it can send READY=1). */
void fwd_service_main_pid(pid_t successor);
/* Free-form status (a reload's outcome). */
void fwd_service_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
