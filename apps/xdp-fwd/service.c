/* SPDX-License-Identifier: MIT */
/* systemd's notify protocol (service.h), through libsystemd's sd_notify. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <systemd/sd-daemon.h>

#include "ctx.h"
#include "service.h"

static uint64_t watchdog_ns, last_ping;
/* MAINPID= sent: the successor is the unit's main process; this one says nothing more. */
static bool moved;

void fwd_service_ready(const struct fwd_ctx *ctx)
{
	char status[128];
	uint64_t usec = 0;

	snprintf(status, sizeof(status), "READY=1\nSTATUS=forwarding, %u port%s, %u worker%s", ctx->nr_ports,
		 ctx->nr_ports == 1 ? "" : "s", ctx->nr_workers, ctx->nr_workers == 1 ? "" : "s");
	sd_notify(0, status);
	/* > 0 only when the unit's watchdog is meant for this process (WATCHDOG_PID). */
	if (sd_watchdog_enabled(0, &usec) > 0 && usec)
		watchdog_ns = usec * 1000 / 2;
}

void fwd_service_tick(uint64_t now)
{
	if (moved || !watchdog_ns || now - last_ping < watchdog_ns)
		return;
	last_ping = now;
	sd_notify(0, "WATCHDOG=1");
}

void fwd_service_stopping(void)
{
	/* Not for a unit whose main process is the successor now: it would stop the unit. */
	if (!moved)
		sd_notify(0, "STOPPING=1");
}

void fwd_service_restarting(pid_t successor)
{
	sd_notifyf(0, "RELOADING=1\nSTATUS=restarting: pid %d takes over", (int)successor);
}

void fwd_service_main_pid(pid_t successor)
{
	sd_notifyf(0, "MAINPID=%d\nSTATUS=handing over to pid %d", (int)successor, (int)successor);
	moved = true;
}

void fwd_service_status(const char *fmt, ...)
{
	char msg[256];
	int n = snprintf(msg, sizeof(msg), "STATUS=");
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	sd_notify(0, msg);
}
