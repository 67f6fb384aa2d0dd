/* SPDX-License-Identifier: MIT */
/*
 * systemd's notify protocol (sd_notify(3)): READY=1 once every port forwards, WATCHDOG=1 from
 * the main thread's run loop while the unit asks for it (WatchdogSec=), STOPPING=1 at shutdown.
 * Without NOTIFY_SOCKET every call does nothing.
 */
#ifndef XDP_FWD_SERVICE_H
#define XDP_FWD_SERVICE_H

#include <stdint.h>

struct fwd_ctx;

/* The workers run on every port: READY=1, with a STATUS= line naming the ports. */
void fwd_service_ready(const struct fwd_ctx *ctx);
/* From the run loop (now: fwd_now_ns()): WATCHDOG=1 at half the unit's watchdog period. */
void fwd_service_tick(uint64_t now);
void fwd_service_stopping(void);
/* Free-form status (a reload's outcome). */
void fwd_service_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
