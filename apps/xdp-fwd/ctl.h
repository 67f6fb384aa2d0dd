/* SPDX-License-Identifier: MIT */
/*
 * The control socket's protocol (--control, xdp-fwdctl), shared by the server (control.c) and the
 * client (xdp-fwdctl.c), and its request parser: pure, no system state, fuzzed (fuzz_ctl).
 *
 * A connection carries one request: a line of at most FWD_CTL_MAX_LINE bytes (words separated by
 * spaces or tabs, printable ASCII, a final CR tolerated), an optional first word "--json", then a
 * command and its arguments. The reply is text lines: first "ok" or "error: MESSAGE", then the
 * body (tables, or one JSON document with --json), then a line holding only "." (a body line
 * that starts with '.' gets one more '.' in front, as SMTP does, so the terminator is never
 * ambiguous). The server closes the connection after the reply.
 */
#ifndef XDP_FWD_CTL_H
#define XDP_FWD_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <umem/steer.h>

#include "fwd.h"

#define FWD_CTL_MAX_LINE 4096u        /* bytes of a request, its newline excluded */
#define FWD_CTL_DIR "/run/xdp-fwd"    /* the default socket's folder (the locks' too: lock.c) */
#define FWD_CTL_SUFFIX ".sock"
#define FWD_CTL_PATH_MAX 108          /* sizeof(sockaddr_un.sun_path) */
/* restart: the successor's start, up to its handover request, before the server gives up on it
 * (restart.h); the client waits for that, the handover and its set-up (10 s each) by default. */
#define FWD_CTL_RESTART_TIMEOUT_MS 30000
#define FWD_CTL_RESTART_WAIT_S 60

enum fwd_ctl_cmd {
	FWD_CTL_HELP,
	FWD_CTL_VERSION,
	FWD_CTL_STATS,
	FWD_CTL_PORTS,
	FWD_CTL_WORKERS,
	FWD_CTL_FLOWS,
	FWD_CTL_MAC,
	FWD_CTL_RULES_LIST,
	FWD_CTL_RULES_ADD,
	FWD_CTL_RULES_REMOVE,
	FWD_CTL_RELOAD,
	FWD_CTL_LATENCY,
	FWD_CTL_PORTS_ADD,
	FWD_CTL_PORTS_REMOVE,
	FWD_CTL_HANDOVER, /* "handover 1" or 2: a new xdp-fwd --takeover asks (handover.h) */
	FWD_CTL_RESTART,  /* the successor started from here takes over (restart.h) */
	FWD_CTL_CMD_COUNT
};

struct fwd_ctl_req {
	enum fwd_ctl_cmd cmd;
	bool json;
	struct umem_steer_rule rule;       /* rules add: parsed */
	char text[FWD_CTL_MAX_LINE + 1];   /* rules add: the rule's words, one space apart */
	uint32_t id;                       /* rules remove */
	enum fwd_latency latency;          /* latency */
	struct fwd_port_name port[2];      /* ports add/remove: one, or a wire pair */
	uint32_t nr_port;
	uint32_t version;                  /* handover: the asker's protocol version */
};

/* Parses the request line[0..len) (its newline already taken off). 0, or -EINVAL with the
 * reason in err (always terminated); req means something on success only. Reads nothing but
 * its arguments. */
int fwd_ctl_parse(const char *line, size_t len, struct fwd_ctl_req *req, char *err, size_t errlen);
/* The commands, one per line ("  stats   the counters since start ..."), for help. */
extern const char fwd_ctl_help[];

/* The default socket path: FWD_CTL_DIR/NAME.sock, NAME the --config file's name without its
 * folder and a final ".conf" (the systemd instance), else the first -i's interface; netns, the
 * inode of xdp-fwd's network namespace when it is not the initial one (0: it is), makes it
 * NAME@net<netns>.sock, as interface names are unique only within a namespace. 0, or -1 when
 * it does not fit. */
int fwd_ctl_default_path(const struct fwd_config *cfg, unsigned long long netns, char *buf, size_t len);

#endif
