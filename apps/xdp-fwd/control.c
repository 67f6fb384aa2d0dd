/* SPDX-License-Identifier: MIT */
/* --control: the control socket's server (control.h; the protocol and its parser: ctl.h). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include <umem/port.h>

#include "control.h"
#include "ctl.h"
#include "ctx.h"
#include "mode.h"
#include "portlive.h"
#include "reload.h"
#include "report.h"
#include "rules.h"
#include "sys.h"

struct ctl_conn {
	int fd; /* -1: free slot */
	uint64_t deadline;
	size_t nin;
	char in[FWD_CTL_MAX_LINE + 2]; /* the request and its newline, and one byte to tell it is too long */
	char *out;                     /* the whole reply once it is made (NULL: still reading) */
	size_t nout, sent;
};

struct fwd_control {
	int fd;
	char path[FWD_CTL_PATH_MAX];
	dev_t dev; /* the socket file as created: removed at exit only if it is still that one */
	ino_t ino;
	uid_t owner;
	gid_t group;
	bool has_group;
	struct ctl_conn conn[FWD_CONTROL_CONNS];
	/* A request the run loop answers itself (handover, restart): its connection, taken out. */
	int taken_fd;
	struct fwd_control_taken taken;
	/* The run (fwd_control_attach). */
	struct fwd_ctx *ctx;
	const struct fwd_samples *start;
	int argc;
	char **argv;
	uint64_t t0;
};

static const char *const cmd_names[FWD_CTL_CMD_COUNT] = {
	[FWD_CTL_HELP] = "help",	 [FWD_CTL_VERSION] = "version",	   [FWD_CTL_STATS] = "stats",
	[FWD_CTL_PORTS] = "ports",	 [FWD_CTL_WORKERS] = "workers",	   [FWD_CTL_FLOWS] = "flows",
	[FWD_CTL_MAC] = "mac",		 [FWD_CTL_RULES_LIST] = "rules list", [FWD_CTL_RULES_ADD] = "rules add",
	[FWD_CTL_RULES_REMOVE] = "rules remove", [FWD_CTL_RELOAD] = "reload", [FWD_CTL_LATENCY] = "latency",
	[FWD_CTL_PORTS_ADD] = "ports add", [FWD_CTL_PORTS_REMOVE] = "ports remove",
	[FWD_CTL_HANDOVER] = "handover", [FWD_CTL_RESTART] = "restart",
};

/* An existing file at path: a socket nobody answers on (a crashed run's) is removed; anything
 * else is refused. 0 or -errno (EADDRINUSE: someone answers). */
static int clear_stale(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, r;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	if (!r)
		return -EADDRINUSE;
	if (errno != ECONNREFUSED)
		return -errno;
	return unlink(path) ? -errno : 0;
}

static int make_socket(struct fwd_control *c, const struct fwd_config *cfg, char *why, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t mode = c->has_group ? 0660 : 0600, old;
	struct stat st;
	int r;

	r = clear_stale(c->path);
	if (r) {
		snprintf(why, len, "%s", r == -EADDRINUSE ? "another process answers on it" :
				       r == -EEXIST ? "it exists and is not a socket" : strerror(-r));
		return r;
	}
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return snprintf(why, len, "socket: %s", strerror(errno)), -errno;
	memcpy(sa.sun_path, c->path, strlen(c->path) + 1);
	/* Created with no access for others at all: no window in which the file is wider open. */
	old = umask(0177);
	r = bind(c->fd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
	umask(old);
	if (r)
		return snprintf(why, len, "bind: %s", strerror(-r)), r;
	if ((c->has_group && chown(c->path, (uid_t)-1, c->group)) || chmod(c->path, mode) || stat(c->path, &st) ||
	    listen(c->fd, 16)) {
		r = -errno;
		snprintf(why, len, "%s", strerror(-r));
		unlink(c->path);
		return r;
	}
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	(void)cfg;
	return 0;
}

/* The initial network namespace's inode number (the kernel's PROC_NET_INIT_INO, fixed). */
#define FWD_INIT_NETNS_INO 0xeffffff9ull

/* The inode of xdp-fwd's network namespace, 0 when it is pid 1's (a container's own counts as
 * initial), or, where pid 1's cannot be read, the kernel's initial one. */
static unsigned long long netns_outside_init(void)
{
	struct stat self, init;

	if (stat("/proc/self/ns/net", &self))
		return 0;
	if (!stat("/proc/1/ns/net", &init))
		return self.st_ino == init.st_ino && self.st_dev == init.st_dev ? 0 : (unsigned long long)self.st_ino;
	return self.st_ino == FWD_INIT_NETNS_INO ? 0 : (unsigned long long)self.st_ino;
}

int fwd_control_path_of(const struct fwd_config *cfg, char *buf, size_t len)
{
	if (cfg->control_path && !strcmp(cfg->control_path, "none"))
		return -1;
	if (cfg->control_path)
		return snprintf(buf, len, "%s", cfg->control_path) < (int)len ? 0 : -1;
	return fwd_ctl_default_path(cfg, netns_outside_init(), buf, len);
}

struct fwd_control *fwd_control_open(const struct fwd_config *cfg)
{
	return fwd_control_open_fd(cfg, -1);
}

struct fwd_control *fwd_control_open_fd(const struct fwd_config *cfg, int fd)
{
	bool given = cfg->control_path != NULL;
	struct fwd_control *c;
	char why[160] = "";
	int r;

	errno = 0;
	if (given && !strcmp(cfg->control_path, "none"))
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->fd = c->taken_fd = -1;
	for (int i = 0; i < FWD_CONTROL_CONNS; i++)
		c->conn[i].fd = -1;
	c->owner = geteuid();
	if (cfg->control_group) {
		struct group *g = getgrnam(cfg->control_group);

		if (!g) {
			fprintf(stderr, "xdp-fwd: --control-group '%s': no such group\n", cfg->control_group);
			free(c);
			errno = ENOENT;
			return NULL;
		}
		c->group = g->gr_gid;
		c->has_group = true;
	}
	if (fwd_control_path_of(cfg, c->path, sizeof(c->path)))
		snprintf(why, sizeof(why), "the default path would be longer than %d bytes", FWD_CTL_PATH_MAX - 1);
	/* The default folder is the interface locks' (lock.c): made here too, never removed. */
	if (!why[0] && !given && mkdir(FWD_CTL_DIR, 0755) && errno != EEXIST)
		snprintf(why, sizeof(why), "%s: %s", FWD_CTL_DIR, strerror(errno));
	if (!why[0] && fd >= 0) { /* the listening socket the previous instance handed over */
		struct stat st;

		c->fd = fd;
		if (!stat(c->path, &st)) {
			c->dev = st.st_dev;
			c->ino = st.st_ino;
		}
		return c;
	}
	if (fd >= 0)
		close(fd);
	if (!why[0] && !(r = make_socket(c, cfg, why, sizeof(why))))
		return c;
	if (c->fd >= 0)
		close(c->fd);
	if (given) {
		fprintf(stderr, "xdp-fwd: --control %s: cannot serve the control socket: %s\n", c->path, why);
		free(c);
		errno = EINVAL;
		return NULL;
	}
	/* The default is a convenience: without it xdp-fwd forwards all the same. */
	fprintf(stderr, "xdp-fwd: warning: no control socket at %s: %s (--control PATH names another, "
		"--control none silences this)\n", c->path, why);
	free(c);
	errno = 0;
	return NULL;
}

void fwd_control_attach(struct fwd_control *c, struct fwd_ctx *ctx, const struct fwd_samples *start, int argc,
			char **argv)
{
	if (!c)
		return;
	c->ctx = ctx;
	c->start = start;
	c->argc = argc;
	c->argv = argv;
	c->t0 = fwd_now_ns();
}

const char *fwd_control_path(const struct fwd_control *c)
{
	return c ? c->path : "";
}

static void conn_close(struct ctl_conn *k)
{
	if (k->fd >= 0)
		close(k->fd);
	free(k->out);
	*k = (struct ctl_conn){ .fd = -1 };
}

int fwd_control_pollfds(const struct fwd_control *c, struct pollfd *pfd, int max)
{
	int n = 0;

	if (!c || c->fd < 0 || max < 1)
		return 0;
	pfd[n++] = (struct pollfd){ .fd = c->fd, .events = POLLIN };
	for (int i = 0; i < FWD_CONTROL_CONNS && n < max; i++)
		if (c->conn[i].fd >= 0)
			pfd[n++] = (struct pollfd){ .fd = c->conn[i].fd, .events = c->conn[i].out ? POLLOUT : POLLIN };
	return n;
}

/* Why the peer may not use the socket, or NULL when it may. */
static const char *refused(const struct fwd_control *c, int fd, char *buf, size_t len)
{
	struct ucred cr;
	socklen_t l = sizeof(cr);
	gid_t groups[256];

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l))
		return snprintf(buf, len, "cannot read the peer's credentials: %s", strerror(errno)), buf;
	if (cr.uid == 0 || cr.uid == c->owner)
		return NULL;
	if (c->has_group) {
		if (cr.gid == c->group)
			return NULL;
		l = sizeof(groups);
		if (!getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &l))
			for (size_t i = 0; i < l / sizeof(groups[0]); i++)
				if (groups[i] == c->group)
					return NULL;
	}
	snprintf(buf, len, "permission denied: uid %u is not root, xdp-fwd's uid %u%s", (unsigned)cr.uid,
		 (unsigned)c->owner, c->has_group ? " or in the control group" : "");
	return buf;
}

/* Sends what is left of the reply; closes the connection when it is all out or the peer is gone
 * (MSG_NOSIGNAL: a closed peer is an EPIPE here, not a signal). */
static void conn_send(struct ctl_conn *k)
{
	while (k->sent < k->nout) {
		ssize_t n = send(k->fd, k->out + k->sent, k->nout - k->sent, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return; /* the loop polls for POLLOUT */
		if (n <= 0) {
			conn_close(k);
			return;
		}
		k->sent += (size_t)n;
	}
	conn_close(k);
}

/* The reply framed (ctl.h) into *out: status line, body with '.'-stuffed lines, terminator.
 * 0, or -1 (no memory; *out freed). */
static int frame(char **out, size_t *nout, const char *error, const char *body, size_t blen)
{
	FILE *f = open_memstream(out, nout);
	bool bol = true;

	if (!f)
		return -1;
	if (error)
		fprintf(f, "error: %s\n", error);
	else
		fputs("ok\n", f);
	for (size_t i = 0; !error && i < blen; i++) {
		if (bol && body[i] == '.')
			fputc('.', f);
		fputc(body[i], f);
		bol = body[i] == '\n';
	}
	if (!error && blen && !bol)
		fputc('\n', f);
	fputs(".\n", f);
	if (fclose(f)) {
		free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

static void conn_reply(struct ctl_conn *k, const char *error, const char *body, size_t blen)
{
	if (frame(&k->out, &k->nout, error, body, blen)) {
		conn_close(k);
		return;
	}
	k->sent = 0;
	conn_send(k);
}

int fwd_control_send(int fd, const char *text, size_t len, const int *fds, int nfds)
{
	union {
		char b[CMSG_SPACE(FWD_CONTROL_FDS_PER_MSG * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct timeval tv = { .tv_sec = FWD_CONTROL_TIMEOUT_MS / 1000 };
	size_t sent = 0, chunks = ((size_t)nfds + FWD_CONTROL_FDS_PER_MSG - 1) / FWD_CONTROL_FDS_PER_MSG;
	int given = 0; /* descriptors sent so far */

	/* A chunk of descriptors rides on one byte of the text at least. */
	if (nfds < 0 || nfds > FWD_CONTROL_MAX_FDS || chunks > len)
		return -EINVAL;
	memset(&u, 0, sizeof(u));
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) || setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
		return -errno;
	while (sent < len) {
		/* Until every descriptor went: one message per chunk, the last with the rest of the
		 * text (the receiver reads a chunk per message, in order). */
		int k = nfds - given < FWD_CONTROL_FDS_PER_MSG ? nfds - given : FWD_CONTROL_FDS_PER_MSG;
		struct iovec iov = { (char *)text + sent, k && given + k < nfds ? 1 : len - sent };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n;

		if (k) {
			struct cmsghdr *c;

			msg.msg_control = u.b;
			msg.msg_controllen = CMSG_SPACE((size_t)k * sizeof(int));
			c = CMSG_FIRSTHDR(&msg);
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN((size_t)k * sizeof(int));
			memcpy(CMSG_DATA(c), fds + given, (size_t)k * sizeof(int));
		}
		n = sendmsg(fd, &msg, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		given += k; /* they went with the message's first byte */
		sent += (size_t)n;
	}
	return 0;
}

int fwd_control_answer(int fd, const char *error, const char *body)
{
	char *text = NULL;
	size_t len = 0;
	int r;

	if (frame(&text, &len, error, body, body ? strlen(body) : 0))
		return -ENOMEM;
	r = fwd_control_send(fd, text, len, NULL, 0);
	free(text);
	return r;
}

/* ---- the commands: each writes its body to out, or returns an error message. ---- */

struct run {
	struct fwd_control *c;
	struct fwd_ctx *ctx;
	const struct fwd_ctl_req *req;
	FILE *out;
	char err[512];
	uint64_t now;
};

/* The printers of the stats and the MAC table follow cfg->json; the main thread alone prints,
 * so the request's format is set around the call and put back. */
static bool json_swap(struct fwd_ctx *ctx, bool json)
{
	bool was = ctx->cfg->json;

	ctx->cfg->json = json;
	return was;
}

/* Every counter now (the stats sample), for the commands that show counts since start. */
static const struct fwd_samples *sample_now(struct run *r)
{
	static struct fwd_samples cur; /* large: static, one request at a time */

	fwd_report_sample(r->ctx, &cur);
	return &cur;
}

static const char *cmd_stats(struct run *r)
{
	double t = (double)(r->now - r->c->t0) / 1e9;
	bool was_json = json_swap(r->ctx, r->req->json);

	/* prev == start: counts since start, as the exit totals count them. */
	fwd_print_stats(r->out, r->ctx, r->c->start, r->c->start, sample_now(r), t, t, "stats");
	json_swap(r->ctx, was_json);
	return NULL;
}

static const char *cmd_ports(struct run *r)
{
	const struct fwd_samples *cur = sample_now(r);
	struct fwd_ctx *ctx = r->ctx;

	if (!r->req->json)
		fprintf(r->out, "%-4s %-18s %-16s %5s %6s %-9s %-24s %-5s %14s %14s %10s\n", "port", "name", "interface",
			"queue", "worker", "bind", "xdp", "link", "rx_packets", "tx_packets", "drops");
	else
		fputs("{\"ports\":[", r->out);
	for (uint32_t i = 0; i < ctx->nr_ports; i++) {
		const struct fwd_port *p = &ctx->ports[i];
		const struct fwd_port_sample *s = &cur->port[i], *b = &r->c->start->port[i];
		const char *bind = p->port ? umem_port__mode_str(umem_port__mode(p->port)) : p->removed ? "removed" : "closed";
		const char *xdp = !p->port ? "-" :
				  umem_port__xdp_mode(p->port) == UMEM_PORT_XDP_EXTERNAL ? "steering program" :
				  umem_port__xdp_mode_str(umem_port__xdp_mode(p->port));
		uint64_t drops = 0;

		for (int d = 0; d < FWD_DROP_MAX; d++)
			drops += s->drop[d] - b->drop[d];
		if (!r->req->json) {
			fprintf(r->out, "%-4u %-18s %-16s %5u %6u %-9s %-24s %-5s %14llu %14llu %10llu\n", i, p->name,
				ctx->ifaces[p->iface].name, ctx->cfg->ports[i].queue, p->worker, bind, xdp,
				s->link_down ? "down" : "up", (unsigned long long)(s->rx_packets - b->rx_packets),
				(unsigned long long)(s->tx_packets - b->tx_packets), (unsigned long long)drops);
			continue;
		}
		fprintf(r->out, "%s{\"port\":%u,\"name\":", i ? "," : "", i);
		fwd_json_string(r->out, p->name);
		fputs(",\"interface\":", r->out);
		fwd_json_string(r->out, ctx->ifaces[p->iface].name);
		fprintf(r->out, ",\"queue\":%u,\"worker\":%u,\"bind\":\"%s\",\"xdp\":\"%s\",\"link\":\"%s\","
			"\"rx_packets\":%llu,\"tx_packets\":%llu,\"drops\":%llu}", ctx->cfg->ports[i].queue, p->worker, bind, xdp,
			s->link_down ? "down" : "up", (unsigned long long)(s->rx_packets - b->rx_packets),
			(unsigned long long)(s->tx_packets - b->tx_packets), (unsigned long long)drops);
	}
	if (r->req->json)
		fputs("]}\n", r->out);
	return NULL;
}

static const char *cmd_workers(struct run *r)
{
	const struct fwd_samples *cur = sample_now(r);
	struct fwd_ctx *ctx = r->ctx;

	if (!r->req->json)
		fprintf(r->out, "%-6s %4s %-30s %10s %12s %12s %14s\n", "worker", "cpu", "ports", "inflight", "sleeps",
			"late_handoff", "pool_allocs");
	else
		fputs("{\"workers\":[", r->out);
	for (uint32_t k = 0; k < ctx->nr_workers; k++) {
		const struct fwd_worker *w = &ctx->workers[k];
		const struct fwd_pool_sample *s = &cur->pool[k], *b = &r->c->start->pool[k];
		char ports[256] = "";
		size_t o = 0;

		for (uint32_t j = 0; j < w->nr_ports && o < sizeof(ports); j++)
			o += (size_t)snprintf(ports + o, sizeof(ports) - o, "%s%s", j ? "," : "", ctx->ports[w->ports[j]].name);
		if (!r->req->json) {
			char cpu[12] = "-";

			if (w->cpu >= 0)
				snprintf(cpu, sizeof(cpu), "%d", w->cpu);
			fprintf(r->out, "%-6u %4s %-30s %10lld %12llu %12llu %14llu\n", k, cpu, ports, (long long)s->inflight,
				(unsigned long long)(s->sleeps - b->sleeps),
				(unsigned long long)(s->late_handoffs - b->late_handoffs),
				(unsigned long long)(s->allocs - b->allocs));
			continue;
		}
		fprintf(r->out, "%s{\"worker\":%u,\"cpu\":%d,\"ports\":", k ? "," : "", k, w->cpu);
		fwd_json_string(r->out, ports);
		fprintf(r->out, ",\"inflight\":%lld,\"sleeps\":%llu,\"late_handoffs\":%llu,\"pool_allocs\":%llu}",
			(long long)s->inflight, (unsigned long long)(s->sleeps - b->sleeps),
			(unsigned long long)(s->late_handoffs - b->late_handoffs), (unsigned long long)(s->allocs - b->allocs));
	}
	if (r->req->json)
		fputs("]}\n", r->out);
	return NULL;
}

struct flow_print {
	FILE *out;
	bool json, first;
	uint32_t n;
};

static int flow_line(const struct umem_steer_flow_key *key, const struct umem_steer_flow *flow, void *arg)
{
	struct flow_print *p = arg;
	char buf[256];

	if (umem_steer_flow__format(key, flow, buf, sizeof(buf)) < 0)
		snprintf(buf, sizeof(buf), "(a flow that does not format)");
	if (p->json) {
		fputs(p->first ? "" : ",", p->out);
		fwd_json_string(p->out, buf);
	} else {
		fprintf(p->out, "%s\n", buf);
	}
	p->first = false;
	p->n++;
	return 0;
}

static const char *cmd_flows(struct run *r)
{
	struct fwd_ctx *ctx = r->ctx;
	struct flow_print p = { .out = r->out, .json = r->req->json, .first = true };

	if (!ctx->off)
		return "flows: no flow is offloaded without --offload-after N";
	if (p.json)
		fputs("{\"flows\":[", r->out);
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		struct umem_steer_flows *fl = ctx->ifaces[f].steer ? umem_steer_flows__open(ctx->ifaces[f].steer) : NULL;
		int n;

		if (!fl)
			continue;
		n = umem_steer_flows__foreach(fl, flow_line, &p);
		umem_steer_flows__close(fl);
		if (n < 0) {
			snprintf(r->err, sizeof(r->err), "flows: %s: cannot read the flow table: %s", ctx->ifaces[f].name,
				 strerror(-n));
			return r->err;
		}
	}
	if (p.json)
		fprintf(r->out, "],\"count\":%u}\n", p.n);
	else
		fprintf(r->out, "%u flows offloaded\n", p.n);
	return NULL;
}

static const char *cmd_mac(struct run *r)
{
	bool was;

	if (!r->ctx->mode->print_table) {
		snprintf(r->err, sizeof(r->err), "mac: the MAC table is --mode l2's; this xdp-fwd runs %s mode",
			 fwd_mode_name(r->ctx->cfg->mode));
		return r->err;
	}
	was = json_swap(r->ctx, r->req->json);
	r->ctx->mode->print_table(r->out, r->ctx, r->now, (double)(r->now - r->c->t0) / 1e9);
	json_swap(r->ctx, was);
	return NULL;
}

static bool any_steering(const struct fwd_ctx *ctx)
{
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		if (ctx->ifaces[f].steer)
			return true;
	return false;
}

static const char *no_steering(struct run *r)
{
	snprintf(r->err, sizeof(r->err), "%s: no interface has a steering program (xdp-fwd attaches one when started "
		 "with a --rule, --offload-after or --mode l3)", cmd_names[r->req->cmd]);
	return r->err;
}

/* The -r rule (of --config or the command line) that has id on interface f, or -1. */
static int config_rule(const struct fwd_ctx *ctx, uint32_t f, uint32_t id)
{
	for (uint32_t k = 0; k < ctx->cfg->nr_rules; k++)
		if (ctx->ifaces[f].rule_id[k] == id)
			return (int)k;
	return -1;
}

static const char *cmd_rules_list(struct run *r)
{
	struct fwd_ctx *ctx = r->ctx;
	bool first = true;

	if (!any_steering(ctx))
		return no_steering(r);
	if (r->req->json)
		fputs("{\"rules\":[", r->out);
	else
		fprintf(r->out, "%-16s %10s %-8s %14s  %s\n", "interface", "id", "origin", "hits", "rule");
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		struct fwd_iface *fi = &ctx->ifaces[f];
		struct fwd_rule_view *v = &fi->steer_view;

		if (!fi->steer)
			continue;
		fwd_rule_view_refresh(v, fi->steer, ctx->cfg, fi->rule_id);
		for (uint32_t k = 0; k < v->nr; k++) {
			struct umem_steer_counter cnt = { 0 };
			const char *origin = config_rule(ctx, f, v->id[k]) >= 0 ? "config" : "runtime";

			umem_steer__rule_counter_of(fi->steer, &v->rule[k], &cnt);
			if (!r->req->json) {
				fprintf(r->out, "%-16s %10u %-8s %14llu  %s\n", fi->name, v->id[k], origin,
					(unsigned long long)cnt.packets, v->text[k]);
				continue;
			}
			fputs(first ? "{\"interface\":" : ",{\"interface\":", r->out);
			fwd_json_string(r->out, fi->name);
			fprintf(r->out, ",\"id\":%u,\"origin\":\"%s\",\"hits\":%llu,\"rule\":", v->id[k], origin,
				(unsigned long long)cnt.packets);
			fwd_json_string(r->out, v->text[k]);
			fputc('}', r->out);
			first = false;
		}
	}
	if (r->req->json)
		fputs("]}\n", r->out);
	return NULL;
}

/* Added to every interface's program or to none: a failure takes back what it added. */
static const char *cmd_rules_add(struct run *r)
{
	struct fwd_ctx *ctx = r->ctx;
	uint32_t ids[FWD_MAX_PORTS];
	bool added[FWD_MAX_PORTS] = { false };
	bool first = true;

	if (!any_steering(ctx))
		return no_steering(r);
	if (fwd_rule_target_check(ctx->cfg, r->req->text, &r->req->rule.action, r->err, sizeof(r->err)))
		return r->err;
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		struct umem_steer_rule rule = r->req->rule;
		int e;

		if (!ctx->ifaces[f].steer)
			continue;
		e = umem_steer__add_rule(ctx->ifaces[f].steer, &rule);
		if (e) {
			snprintf(r->err, sizeof(r->err), "rules add: %s: '%.200s': %s%s", ctx->ifaces[f].name, r->req->text,
				 strerror(-e), f ? " (taken back from the interfaces before it)" : "");
			while (f-- > 0)
				if (added[f])
					umem_steer__remove_rule(ctx->ifaces[f].steer, ids[f], NULL);
			return r->err;
		}
		added[f] = true;
		ids[f] = rule.id;
	}
	if (r->req->json)
		fputs("{\"added\":[", r->out);
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		if (!added[f])
			continue;
		if (r->req->json) {
			fputs(first ? "{\"interface\":" : ",{\"interface\":", r->out);
			fwd_json_string(r->out, ctx->ifaces[f].name);
			fprintf(r->out, ",\"id\":%u}", ids[f]);
		} else {
			fprintf(r->out, "%s: rule %u: %s\n", ctx->ifaces[f].name, ids[f], r->req->text);
		}
		first = false;
	}
	if (r->req->json)
		fputs("]}\n", r->out);
	fprintf(stderr, "xdp-fwd: control: rule added: %s\n", r->req->text);
	return NULL;
}

static const char *cmd_rules_remove(struct run *r)
{
	struct fwd_ctx *ctx = r->ctx;
	uint32_t removed = 0;

	if (!any_steering(ctx))
		return no_steering(r);
	/* The configuration's rules belong to the file: a reload would add a removed one back. */
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		int k = ctx->ifaces[f].steer ? config_rule(ctx, f, r->req->id) : -1;

		if (k >= 0) {
			snprintf(r->err, sizeof(r->err), "rules remove: rule %u is the configuration's ('%s'): edit "
				 "--config and reload instead", r->req->id, ctx->cfg->rule_text[k]);
			return r->err;
		}
	}
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		int e;

		if (!ctx->ifaces[f].steer)
			continue;
		e = umem_steer__remove_rule(ctx->ifaces[f].steer, r->req->id, NULL);
		if (!e) {
			removed++;
			if (!r->req->json)
				fprintf(r->out, "%s: rule %u removed\n", ctx->ifaces[f].name, r->req->id);
		} else if (e != -ENOENT) {
			snprintf(r->err, sizeof(r->err), "rules remove: %s: rule %u: %s", ctx->ifaces[f].name, r->req->id,
				 strerror(-e));
			return r->err;
		}
	}
	if (!removed) {
		snprintf(r->err, sizeof(r->err), "rules remove: no rule %u (rules list shows them)", r->req->id);
		return r->err;
	}
	if (r->req->json)
		fprintf(r->out, "{\"removed\":%u,\"interfaces\":%u}\n", r->req->id, removed);
	fprintf(stderr, "xdp-fwd: control: rule %u removed\n", r->req->id);
	return NULL;
}

static const char *cmd_reload(struct run *r)
{
	const char *path = r->ctx->cfg->config_path;
	char why[512] = "";
	int ret;

	if (!path)
		return "reload: nothing to reload: xdp-fwd was started without --config";
	ret = fwd_reload(r->ctx, r->c->argc, r->c->argv, why, sizeof(why));
	if (ret) {
		snprintf(r->err, sizeof(r->err), "reload: %.470s%s", why, ret < 0 ? "; nothing changed" : "");
		return r->err;
	}
	if (r->req->json) {
		fputs("{\"reloaded\":", r->out);
		fwd_json_string(r->out, path);
		fputs("}\n", r->out);
	} else {
		fprintf(r->out, "reloaded %s (what changed, and what needs a restart, is in xdp-fwd's log)\n", path);
	}
	return NULL;
}

static const char *cmd_latency(struct run *r)
{
	const char *fixed = fwd_latency_fixed(r->ctx->cfg, r->req->latency);

	if (fixed) {
		snprintf(r->err, sizeof(r->err), "latency %s: cannot change live: %s", fwd_latency_names[r->req->latency],
			 fixed);
		return r->err;
	}
	fwd_latency_apply(r->ctx, r->req->latency, true);
	fprintf(stderr, "xdp-fwd: control: latency %s\n", fwd_latency_names[r->req->latency]);
	if (r->req->json)
		fprintf(r->out, "{\"latency\":\"%s\"}\n", fwd_latency_names[r->req->latency]);
	else
		fprintf(r->out, "latency %s\n", fwd_latency_names[r->req->latency]);
	return NULL;
}

/* ports add / ports remove (portlive.c does the work and its checks). */
static const char *cmd_ports_change(struct run *r)
{
	const struct fwd_ctl_req *q = r->req;
	bool add = q->cmd == FWD_CTL_PORTS_ADD;
	char why[448];

	if (fwd_ports_change(r->ctx, add ? NULL : q->port, add ? 0 : q->nr_port, add ? q->port : NULL, add ? q->nr_port : 0,
			     FWD_PORTS_RUNTIME, why, sizeof(why))) {
		snprintf(r->err, sizeof(r->err), "ports %s: %s", add ? "add" : "remove", why);
		return r->err;
	}
	if (r->req->json)
		fprintf(r->out, "{\"%s\":[", add ? "added" : "removed");
	for (uint32_t k = 0; k < q->nr_port; k++) {
		uint32_t i = add ? fwd_ports_find(r->ctx, &q->port[k]) : UINT32_MAX;

		if (r->req->json)
			fprintf(r->out, "%s\"%s@%u\"", k ? "," : "", q->port[k].ifname, q->port[k].queue);
		else if (add)
			fprintf(r->out, "%s@%u added: port %u, worker %u\n", q->port[k].ifname, q->port[k].queue, i,
				r->ctx->ports[i].worker);
		else
			fprintf(r->out, "%s@%u removed (its counts stay in stats)\n", q->port[k].ifname, q->port[k].queue);
	}
	if (r->req->json)
		fputs("]}\n", r->out);
	return NULL;
}

static const char *cmd_help(struct run *r)
{
	if (r->req->json) {
		fputs("{\"commands\":", r->out);
		fwd_json_string(r->out, fwd_ctl_help);
		fputs("}\n", r->out);
	} else {
		fputs(fwd_ctl_help, r->out);
	}
	return NULL;
}

static const char *cmd_version(struct run *r)
{
	if (r->req->json)
		fprintf(r->out, "{\"version\":\"%d.%d\",\"mode\":\"%s\"}\n", UMEM_VERSION_MAJOR, UMEM_VERSION_MINOR,
			fwd_mode_name(r->ctx->cfg->mode));
	else
		fprintf(r->out, "xdp-fwd %d.%d (libumem), %s mode\n", UMEM_VERSION_MAJOR, UMEM_VERSION_MINOR,
			fwd_mode_name(r->ctx->cfg->mode));
	return NULL;
}

static const char *(*const commands[FWD_CTL_CMD_COUNT])(struct run *r) = {
	[FWD_CTL_HELP] = cmd_help,	   [FWD_CTL_VERSION] = cmd_version,
	[FWD_CTL_STATS] = cmd_stats,	   [FWD_CTL_PORTS] = cmd_ports,
	[FWD_CTL_WORKERS] = cmd_workers,   [FWD_CTL_FLOWS] = cmd_flows,
	[FWD_CTL_MAC] = cmd_mac,	   [FWD_CTL_RULES_LIST] = cmd_rules_list,
	[FWD_CTL_RULES_ADD] = cmd_rules_add, [FWD_CTL_RULES_REMOVE] = cmd_rules_remove,
	[FWD_CTL_RELOAD] = cmd_reload,	   [FWD_CTL_LATENCY] = cmd_latency,
	[FWD_CTL_PORTS_ADD] = cmd_ports_change, [FWD_CTL_PORTS_REMOVE] = cmd_ports_change,
};

/* A whole request line in k->in[0..len): parsed, run, answered. */
static void conn_request(struct fwd_control *c, struct ctl_conn *k, size_t len, uint64_t now)
{
	static struct fwd_ctl_req req; /* 4 KiB of rule text: static, one request at a time */
	struct run r = { .c = c, .ctx = c->ctx, .req = &req, .now = now };
	char *body = NULL;
	size_t blen = 0;
	const char *error;

	if (fwd_ctl_parse(k->in, len, &req, r.err, sizeof(r.err))) {
		conn_reply(k, r.err, NULL, 0);
		return;
	}
	if (!c->ctx) {
		conn_reply(k, "xdp-fwd is still setting up", NULL, 0);
		return;
	}
	/* A handover (its own exchange, with descriptors) and a restart (answered when its
	 * successor is done) are the run loop's: no reply buffer, so they are taken before one is
	 * opened (one opened for a handover leaked). */
	if (req.cmd == FWD_CTL_HANDOVER || req.cmd == FWD_CTL_RESTART) {
		if (c->taken_fd >= 0) {
			snprintf(r.err, sizeof(r.err), "%s: a %s is under way; try again", cmd_names[req.cmd],
				 cmd_names[c->taken.cmd]);
			conn_reply(k, r.err, NULL, 0);
			return;
		}
		c->taken_fd = k->fd;
		c->taken = (struct fwd_control_taken){ .cmd = req.cmd, .version = req.version, .json = req.json };
		k->fd = -1;
		conn_close(k);
		return;
	}
	r.out = open_memstream(&body, &blen);
	if (!r.out) {
		conn_reply(k, "out of memory", NULL, 0);
		return;
	}
	error = commands[req.cmd](&r);
	if (fclose(r.out) && !error)
		error = "out of memory";
	conn_reply(k, error, body, blen);
	free(body);
}

static void conn_read(struct fwd_control *c, struct ctl_conn *k, uint64_t now)
{
	for (;;) {
		ssize_t n = recv(k->fd, k->in + k->nin, sizeof(k->in) - k->nin, MSG_DONTWAIT);
		char *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0) {
			conn_close(k);
			return;
		}
		if (n == 0) { /* the peer's end of the request without a newline: taken as it is */
			if (k->nin)
				conn_request(c, k, k->nin, now);
			else
				conn_close(k);
			return;
		}
		nl = memchr(k->in + k->nin, '\n', (size_t)n);
		k->nin += (size_t)n;
		if (nl) {
			conn_request(c, k, (size_t)(nl - k->in), now);
			return;
		}
		if (k->nin > FWD_CTL_MAX_LINE) { /* no newline within the limit: the rest is not read */
			char msg[64];

			snprintf(msg, sizeof(msg), "request longer than %u bytes", FWD_CTL_MAX_LINE);
			shutdown(k->fd, SHUT_RD);
			conn_reply(k, msg, NULL, 0);
			return;
		}
	}
}

static void accept_all(struct fwd_control *c, uint64_t now)
{
	for (;;) {
		int fd = accept4(c->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), slot = -1;
		char why[160];

		if (fd < 0)
			return; /* EAGAIN, or a peer gone before it was taken */
		for (int i = 0; i < FWD_CONTROL_CONNS && slot < 0; i++)
			if (c->conn[i].fd < 0)
				slot = i;
		if (slot < 0) {
			static const char busy[] = "error: busy: every control connection is in use; try again\n.\n";

			if (send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
				(void)0; /* best effort: the peer learns it from the closed connection */
			close(fd);
			continue;
		}
		c->conn[slot] = (struct ctl_conn){ .fd = fd, .deadline = now + FWD_CONTROL_TIMEOUT_MS * 1000000ull };
		if (refused(c, fd, why, sizeof(why))) {
			fprintf(stderr, "xdp-fwd: control: refused a client: %s\n", why);
			conn_reply(&c->conn[slot], why, NULL, 0);
		}
	}
}

void fwd_control_serve(struct fwd_control *c, uint64_t now)
{
	if (!c || c->fd < 0)
		return;
	accept_all(c, now);
	for (int i = 0; i < FWD_CONTROL_CONNS; i++) {
		struct ctl_conn *k = &c->conn[i];

		if (k->fd < 0)
			continue;
		if (now >= k->deadline) { /* a client that stalls: dropped, nothing else waits for it */
			conn_close(k);
			continue;
		}
		if (k->out)
			conn_send(k);
		else
			conn_read(c, k, now);
	}
}

int fwd_control_take(struct fwd_control *c, struct fwd_control_taken *t)
{
	int fd = c ? c->taken_fd : -1;

	if (fd >= 0) {
		*t = c->taken;
		c->taken_fd = -1;
	}
	return fd;
}

int fwd_control_release(struct fwd_control *c)
{
	int fd;

	if (!c)
		return -1;
	fd = c->fd;
	c->fd = -1; /* the file is the next instance's now: not removed at close */
	return fd;
}

void fwd_control_close(struct fwd_control *c)
{
	struct stat st;

	if (!c)
		return;
	for (int i = 0; i < FWD_CONTROL_CONNS; i++)
		conn_close(&c->conn[i]);
	if (c->taken_fd >= 0)
		close(c->taken_fd);
	if (c->fd >= 0) {
		close(c->fd);
		if (!stat(c->path, &st) && st.st_dev == c->dev && st.st_ino == c->ino)
			unlink(c->path);
	}
	free(c);
}
