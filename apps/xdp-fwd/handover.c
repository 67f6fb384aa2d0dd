/* SPDX-License-Identifier: MIT */
/*
 * --takeover (handover.h). The reply to "handover 1" is the control protocol's (ctl.h): "ok",
 * then these lines, then ".", the descriptors riding on its first byte (SCM_RIGHTS) in the order
 * the lines give them (FD: their index there, - for none):
 *   pid PID
 *   control FD                      the listening control socket
 *   metrics FD ADDR                 the listening --metrics socket and its address
 *   iface IFNAME FD                 the interface's steering program's bpf_link
 *   steer IFNAME FD FD...           the program, then its maps (the steering table's, the flow
 *                                   table's): opened from these, not by id, a successor needs
 *                                   no CAP_SYS_ADMIN (version 2)
 *   rule IFNAME ID TEXT             a rule of the old configuration (run-time ones are not
 *                                   named: they stay in the table as they are)
 *   c port NAME FIELD VALUE         the old instance's totals (since its start), by name, so
 *   c pool WORKER FIELD VALUE       that an upgrade with other structures reads them: a name
 *   c steer IFNAME FIELD VALUE      this one does not know is skipped
 *   c l3 - FIELD VALUE
 *   c capture - FIELD VALUE
 *   stopped NS                      CLOCK_MONOTONIC when its workers were told to stop: the
 *                                   gap's start, for the new instance's timing line
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <umem/area.h>
#include <umem/steer.h>

#include "control.h"
#include "ctl.h"
#include "ctx.h"
#include "handover.h"
#include "lock.h"
#include "metrics.h"
#include "offload.h"
#include "ports.h"
#include "report.h"
#include "service.h"
#include "sys.h"
#include "worker.h"

#define MAX_FDS FWD_CONTROL_MAX_FDS

struct old_rule {
	char ifname[IF_NAMESIZE];
	uint32_t id;
	char *text;
	bool kept;
};

/* Where a handover's time goes, step by step, in ms since its start: one line on stderr in
 * each instance (the gap: the old one's workers stopped to the new one's sockets in the map). */
struct fwd_timeline {
	uint64_t t0;
	size_t len;
	char text[1024];
};

__attribute__((format(printf, 2, 3)))
static void timeline_mark(struct fwd_timeline *t, const char *fmt, ...)
{
	double ms = (double)(fwd_clock_ns(CLOCK_MONOTONIC) - t->t0) / 1e6;
	size_t room = sizeof(t->text);
	va_list ap;
	int n;

	if (t->len + 1 >= room)
		return;
	if (t->len)
		t->len += (size_t)snprintf(t->text + t->len, room - t->len, ", ");
	va_start(ap, fmt);
	n = t->len < room ? vsnprintf(t->text + t->len, room - t->len, fmt, ap) : 0;
	va_end(ap);
	t->len += n > 0 ? (size_t)n : 0;
	if (t->len < room)
		t->len += (size_t)snprintf(t->text + t->len, room - t->len, " %.1f", ms);
	if (t->len >= room)
		t->len = room - 1;
}

struct fwd_handover {
	char path[FWD_CTL_PATH_MAX];
	bool taken;             /* the exchange completed */
	long pid;               /* the old instance's */
	int control_fd, metrics_fd;
	char metrics_addr[256];
	struct {
		char name[IF_NAMESIZE];
		int link_fd;
		bool adopted;
		struct umem_steer *steer; /* opened before the exchange: not in the gap */
		/* The "steer" line's: the program and its maps handed over, or -1 / 0. */
		int prog_fd, map_fds[2 * UMEM_STEER_MAP_FDS_MAX];
		uint32_t nr_map_fds;
	} ifs[FWD_MAX_PORTS];
	bool need_fds; /* a program could not be opened by id (no CAP_SYS_ADMIN): version 2 */
	uint32_t nr_ifs;
	struct old_rule rules[FWD_MAX_PORTS * FWD_MAX_RULES];
	uint32_t nr_rules;
	char *counters; /* the "c" lines, kept for fwd_handover_carry */
	struct fwd_timeline tl; /* from the request on: said once the sockets are in the map */
	uint64_t stopped_ns;    /* the old instance's workers told to stop (its clock), 0: not said */
	uint32_t busy_waits, busy_ms; /* binds of a queue still busy, waited for */
	int fd;         /* the connection, until the reply's second part is read */
	char *buf;      /* the reply as read so far */
	size_t len, cap, part2; /* part2: where the second part starts */
};

/* ---- the counters, by name ---- */

enum { K_PORT, K_POOL, K_STEER, K_L3, K_CAPTURE };

#define F(kind, type, field) { kind, #field, offsetof(struct type, field) }
static const struct field {
	int kind;
	const char *name;
	size_t off;
} fields[] = {
	F(K_PORT, fwd_port_sample, rx_packets), F(K_PORT, fwd_port_sample, rx_bytes),
	F(K_PORT, fwd_port_sample, tx_packets), F(K_PORT, fwd_port_sample, tx_bytes),
	F(K_PORT, fwd_port_sample, csum_partial), F(K_PORT, fwd_port_sample, csum_completed),
	F(K_PORT, fwd_port_sample, csum_uncompleted), F(K_PORT, fwd_port_sample, offload.packets),
	F(K_PORT, fwd_port_sample, offload.bytes), F(K_PORT, fwd_port_sample, offload.gated),
	F(K_PORT, fwd_port_sample, offload.lost), F(K_PORT, fwd_port_sample, offload.installed),
	F(K_PORT, fwd_port_sample, offload.expired), F(K_PORT, fwd_port_sample, offload.invalidated),
	F(K_PORT, fwd_port_sample, offload.full), F(K_PORT, fwd_port_sample, offload.refused),
	F(K_PORT, fwd_port_sample, offload.forced), F(K_PORT, fwd_port_sample, offload.no_target),
	F(K_PORT, fwd_port_sample, offload.untracked), F(K_PORT, fwd_port_sample, offload.csum_kept),
	F(K_PORT, fwd_port_sample, offload.csum_passed), F(K_PORT, fwd_port_sample, offload.route_kept),
	F(K_PORT, fwd_port_sample, offload.drained),
	F(K_POOL, fwd_pool_sample, allocs), F(K_POOL, fwd_pool_sample, slow),
	F(K_POOL, fwd_pool_sample, fresh), F(K_POOL, fwd_pool_sample, recycled),
	F(K_POOL, fwd_pool_sample, sleeps), F(K_POOL, fwd_pool_sample, late_handoffs),
	F(K_POOL, fwd_pool_sample, cpu_ns),
	F(K_STEER, fwd_steer_sample, drop), F(K_STEER, fwd_steer_sample, pass),
	F(K_STEER, fwd_steer_sample, no_socket),
	F(K_L3, fwd_l3_sample, resolves), F(K_L3, fwd_l3_sample, resolve_failed),
	F(K_L3, fwd_l3_sample, resyncs), F(K_L3, fwd_l3_sample, events),
	F(K_L3, fwd_l3_sample, icmp_unreach), F(K_L3, fwd_l3_sample, icmp_too_big),
	F(K_L3, fwd_l3_sample, icmp_limited), F(K_L3, fwd_l3_sample, icmp_unsent),
	F(K_CAPTURE, fwd_capture_sample, captured), F(K_CAPTURE, fwd_capture_sample, bytes),
	F(K_CAPTURE, fwd_capture_sample, dropped),
};
#undef F

static const char *const kinds[] = { "port", "pool", "steer", "l3", "capture" };

static uint64_t *at(void *base, size_t off)
{
	return (uint64_t *)(void *)((char *)base + off);
}

/* The counters of one item (base: its sample) as "c KIND KEY FIELD VALUE" lines, cur - start. */
static void put_item(FILE *o, int kind, const char *key, const void *start, const void *cur)
{
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (fields[i].kind == kind)
			fprintf(o, "c %s %s %s %llu\n", kinds[kind], key, fields[i].name,
				(unsigned long long)(*at((void *)cur, fields[i].off) - *at((void *)start, fields[i].off)));
}

static void put_counters(FILE *o, const struct fwd_ctx *ctx, const struct fwd_samples *start,
			 const struct fwd_samples *cur)
{
	char key[32];

	for (uint32_t i = 0; i < ctx->nr_ports; i++) {
		const struct fwd_port_sample *a = &start->port[i], *b = &cur->port[i];

		put_item(o, K_PORT, ctx->ports[i].name, a, b);
		for (int d = 0; d < FWD_DROP_MAX; d++)
			fprintf(o, "c port %s drop.%s %llu\n", ctx->ports[i].name, fwd_drop_names[d],
				(unsigned long long)(b->drop[d] - a->drop[d]));
	}
	for (uint32_t k = 0; k < ctx->nr_workers; k++) {
		snprintf(key, sizeof(key), "%u", k);
		put_item(o, K_POOL, key, &start->pool[k], &cur->pool[k]);
	}
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		put_item(o, K_STEER, ctx->ifaces[f].name, &start->steer[f], &cur->steer[f]);
		for (uint32_t h = 0; h < FWD_HIT_SLOTS; h++) {
			uint32_t id = h < UMEM_STEER_MAX_RULES ? h : UMEM_STEER_PREFIX_ID_BASE + h - UMEM_STEER_MAX_RULES;
			unsigned long long n = fwd_rule_hits_since(&start->steer[f], &cur->steer[f], id);

			if (n)
				fprintf(o, "c steer %s hit.%u %llu\n", ctx->ifaces[f].name, id, n);
		}
	}
	put_item(o, K_L3, "-", &start->l3, &cur->l3);
	for (uint32_t r = 1; r < cur->l3.nr_reasons && r < FWD_L3_REASONS; r++)
		if (cur->l3.reason[r])
			fprintf(o, "c l3 - drop.%s %llu\n", cur->l3.reason[r],
				(unsigned long long)(cur->l3.drop[r] - start->l3.drop[r]));
	put_item(o, K_CAPTURE, "-", &start->capture, &cur->capture);
}

/* The counter a "c" line names in s, or NULL (an item or a field this run does not have). */
static uint64_t *counter_of(const struct fwd_ctx *ctx, struct fwd_samples *s, const char *kind, const char *key,
			    const char *name)
{
	void *base = NULL;
	int k = -1;
	char *end;

	for (int i = 0; i < (int)(sizeof(kinds) / sizeof(kinds[0])); i++)
		if (!strcmp(kind, kinds[i]))
			k = i;
	if (k == K_PORT) {
		for (uint32_t i = 0; i < ctx->nr_ports && !base; i++)
			if (!strcmp(ctx->ports[i].name, key))
				base = &s->port[i];
		for (int d = 0; base && d < FWD_DROP_MAX; d++)
			if (!strncmp(name, "drop.", 5) && !strcmp(name + 5, fwd_drop_names[d]))
				return &((struct fwd_port_sample *)base)->drop[d];
	} else if (k == K_POOL) {
		unsigned long w = strtoul(key, &end, 10);

		if (!*end && w < ctx->nr_workers)
			base = &s->pool[w];
	} else if (k == K_STEER) {
		for (uint32_t f = 0; f < ctx->nr_ifaces && !base; f++)
			if (!strcmp(ctx->ifaces[f].name, key))
				base = &s->steer[f];
		if (base && !strncmp(name, "hit.", 4)) {
			int slot = fwd_hit_slot((uint32_t)strtoul(name + 4, &end, 10));

			return !*end && slot >= 0 ? &((struct fwd_steer_sample *)base)->hits[slot] : NULL;
		}
	} else if (k == K_L3) {
		base = &s->l3;
		for (uint32_t r = 1; r < s->l3.nr_reasons && r < FWD_L3_REASONS; r++)
			if (!strncmp(name, "drop.", 5) && s->l3.reason[r] && !strcmp(name + 5, s->l3.reason[r]))
				return &s->l3.drop[r];
	} else if (k == K_CAPTURE) {
		base = &s->capture;
	}
	for (size_t i = 0; base && i < sizeof(fields) / sizeof(fields[0]); i++)
		if (fields[i].kind == k && !strcmp(fields[i].name, name))
			return at(base, fields[i].off);
	return NULL;
}

void fwd_handover_carry(struct fwd_ctx *ctx, struct fwd_samples *start)
{
	struct fwd_handover *h = ctx->handover;
	char *save = NULL;
	uint32_t n = 0;

	if (!h || !h->counters)
		return;
	for (char *line = strtok_r(h->counters, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char kind[16], key[64], name[64];
		unsigned long long v;
		uint64_t *c;

		if (sscanf(line, "c %15s %63s %63s %llu", kind, key, name, &v) != 4)
			continue;
		/* Unsigned: cur - start is then the old total plus this run's count. */
		if ((c = counter_of(ctx, start, kind, key, name))) {
			*c -= v;
			n++;
		}
	}
	free(h->counters);
	h->counters = NULL;
	fprintf(stderr, "xdp-fwd: --takeover: %u counters continue from pid %ld's totals\n", n, h->pid);
}

/* ---- the new instance's side ---- */

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

int fwd_handover_probe(const struct fwd_config *cfg, struct fwd_handover **out)
{
	struct fwd_handover *h;
	int fd;

	*out = NULL;
	if (!cfg->takeover)
		return 0;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	if (fwd_control_path_of(cfg, h->path, sizeof(h->path))) {
		fprintf(stderr, "xdp-fwd: --takeover: no control socket to find the running xdp-fwd on "
			"(--control none, or no default path): give --control PATH\n");
		free(h);
		return -EINVAL;
	}
	fd = connect_to(h->path);
	if (fd < 0) {
		fprintf(stderr, "xdp-fwd: --takeover: no xdp-fwd answers on %s (%s): a normal start\n", h->path,
			strerror(-fd));
		free(h);
		return 0;
	}
	close(fd); /* a probe: the server drops a connection that sends nothing */
	h->control_fd = h->metrics_fd = h->fd = -1;
	*out = h;
	return 0;
}

/* Reads the reply into h->buf until it holds mark at a line's start (or an error reply whole),
 * the descriptors into fds. 1 there, 0 the connection ended first, -ETIMEDOUT it stalled,
 * -errno. */
static int receive(struct fwd_handover *h, const char *mark, int *fds, int *nfds)
{
	for (;;) {
		union {
			char b[CMSG_SPACE(MAX_FDS * sizeof(int))];
			struct cmsghdr align;
		} u;
		struct iovec iov;
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof(u.b) };
		ssize_t n;

		if (h->len && (strstr(h->buf, mark) || (!strncmp(h->buf, "error: ", 7) && strstr(h->buf, "\n.\n"))))
			return 1;
		if (h->cap - h->len < 4096) {
			char *b = realloc(h->buf, h->cap = h->cap ? 2 * h->cap : 65536);

			if (!b)
				return -ENOMEM;
			h->buf = b;
		}
		iov = (struct iovec){ h->buf + h->len, h->cap - h->len - 1 };
		n = recvmsg(h->fd, &msg, MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		for (struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&msg) : NULL; c; c = CMSG_NXTHDR(&msg, c)) {
			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
				int d;

				memcpy(&d, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				if (*nfds < MAX_FDS)
					fds[(*nfds)++] = d;
				else
					close(d);
			}
		}
		if (n <= 0) /* SO_RCVTIMEO ends a wait with EAGAIN: a stalled peer */
			return n == 0 ? 0 : errno == EAGAIN ? -ETIMEDOUT : -errno;
		h->len += (size_t)n;
		h->buf[h->len] = '\0';
	}
}

static int fd_at(const int *fds, int nfds, const char *word)
{
	char *end;
	long i = strtol(word, &end, 10);

	return *end || i < 0 || i >= nfds ? -1 : fds[i];
}

/* The reply's slot for interface name (a new one if need be), FWD_MAX_PORTS when full. */
static uint32_t iface_slot(struct fwd_handover *h, const char *name)
{
	uint32_t f = 0;

	while (f < h->nr_ifs && strcmp(h->ifs[f].name, name))
		f++;
	if (f < FWD_MAX_PORTS && f == h->nr_ifs) {
		size_t l = strnlen(name, IF_NAMESIZE - 1);

		memcpy(h->ifs[f].name, name, l);
		h->ifs[f].name[l] = '\0';
		h->ifs[f].link_fd = h->ifs[f].prog_fd = -1;
		h->nr_ifs++;
	}
	return f;
}

static void parse_reply(struct fwd_handover *h, char *text, const int *fds, int nfds)
{
	char *save = NULL;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char a[256], b[256];
		unsigned long long ns;
		unsigned int id;
		int off = 0;

		if (!strncmp(line, "c ", 2)) {
			size_t l = h->counters ? strlen(h->counters) : 0, ll = strlen(line);
			char *c = realloc(h->counters, l + ll + 2);

			if (!c)
				continue;
			memcpy(c + l, line, ll);
			c[l + ll] = '\n';
			c[l + ll + 1] = '\0';
			h->counters = c;
		} else if (sscanf(line, "stopped %llu", &ns) == 1) {
			h->stopped_ns = (uint64_t)ns;
		} else if (sscanf(line, "pid %ld", &h->pid) == 1) {
		} else if (sscanf(line, "control %255s", a) == 1) {
			h->control_fd = fd_at(fds, nfds, a);
		} else if (sscanf(line, "metrics %255s %255s", a, h->metrics_addr) == 2) {
			h->metrics_fd = fd_at(fds, nfds, a);
		} else if (sscanf(line, "iface %15s %255s", b, a) == 2) {
			uint32_t f = iface_slot(h, b);

			if (f < FWD_MAX_PORTS)
				h->ifs[f].link_fd = fd_at(fds, nfds, a);
		} else if (sscanf(line, "steer %15s %255s %n", b, a, &off) == 2 && off) {
			uint32_t f = iface_slot(h, b);
			char *w, *wsave = NULL;

			if (f == FWD_MAX_PORTS)
				continue;
			h->ifs[f].prog_fd = fd_at(fds, nfds, a);
			for (w = strtok_r(line + off, " ", &wsave); w && h->ifs[f].nr_map_fds < 2 * UMEM_STEER_MAP_FDS_MAX;
			     w = strtok_r(NULL, " ", &wsave)) {
				int fd = fd_at(fds, nfds, w);

				if (fd >= 0)
					h->ifs[f].map_fds[h->ifs[f].nr_map_fds++] = fd;
			}
		} else if (sscanf(line, "rule %15s %u %n", b, &id, &off) == 2 && off &&
			   h->nr_rules < sizeof(h->rules) / sizeof(h->rules[0])) {
			struct old_rule *r = &h->rules[h->nr_rules];

			if (!(r->text = strdup(line + off)))
				continue;
			memcpy(r->ifname, b, IF_NAMESIZE);
			r->id = id;
			h->nr_rules++;
		}
	}
}

/* Closes the connection and the descriptors fds (not kept), and frees the reply's text. */
static void drop_state(struct fwd_handover *h, const int *fds, int nfds)
{
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	if (h->fd >= 0)
		close(h->fd);
	h->fd = -1;
	free(h->buf);
	h->buf = NULL;
	h->len = h->cap = 0;
}

static bool in_config(const struct fwd_ctx *ctx, const char *ifname)
{
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		if (!strcmp(ctx->ifaces[f].name, ifname))
			return true;
	return false;
}

/* The area's pages faulted in now, not by the first bind's UMEM registration (which pins
 * them): tens of ms of a 25 MiB area that would otherwise fall in the gap. */
static void prefault(struct fwd_ctx *ctx)
{
	if (madvise(umem_area__base(ctx->area), umem_area__size(ctx->area), MADV_POPULATE_WRITE))
		fprintf(stderr, "xdp-fwd: --takeover: cannot fault the UMEM in ahead (%s): the first bind "
			"does it, in the gap\n", strerror(errno));
}

/* The program's and maps' descriptors of the reply: the handle opened from them has copies. */
static void close_handed(struct fwd_handover *h, uint32_t i)
{
	if (h->ifs[i].prog_fd >= 0)
		close(h->ifs[i].prog_fd);
	for (uint32_t m = 0; m < h->ifs[i].nr_map_fds; m++)
		close(h->ifs[i].map_fds[m]);
	h->ifs[i].prog_fd = -1;
	h->ifs[i].nr_map_fds = 0;
}

/* A program not opened ahead (by id: a successor without CAP_SYS_ADMIN cannot): from the
 * descriptors that came with the reply, else by id. */
static struct umem_steer *open_handed(struct fwd_handover *h, uint32_t i)
{
	UMEM_OPTS(umem_steer_fds, in, .prog_fd = h->ifs[i].prog_fd, .link_fd = h->ifs[i].link_fd,
		  .map_fds = h->ifs[i].map_fds, .nr_map_fds = h->ifs[i].nr_map_fds);

	return in.prog_fd >= 0 ? umem_steer__open_fds(h->ifs[i].name, &in) : umem_steer__open(h->ifs[i].name);
}

/* The program handed over for interface f (its link came with the reply): given to ports.c as
 * f->adopt, with the configuration's rules reconciled by text: a rule the old configuration had
 * too keeps its id (and counter), the old configuration's others are removed; run-time rules
 * are not touched. */
static void adopt(struct fwd_ctx *ctx, struct fwd_handover *h, struct fwd_iface *fi)
{
	const struct fwd_config *cfg = ctx->cfg;

	for (uint32_t i = 0; i < h->nr_ifs; i++) {
		if (strcmp(h->ifs[i].name, fi->name) || h->ifs[i].link_fd < 0)
			continue;
		fi->adopt = h->ifs[i].steer ? h->ifs[i].steer : open_handed(h, i);
		int err = errno;

		h->ifs[i].steer = NULL;
		close_handed(h, i);
		if (!fi->adopt) {
			fprintf(stderr, "xdp-fwd: --takeover: %s: cannot open the program handed over: %s\n", fi->name,
				strerror(err));
			return;
		}
		h->ifs[i].adopted = true;
		break;
	}
	for (uint32_t k = 0; fi->adopt && k < h->nr_rules; k++) {
		struct old_rule *o = &h->rules[k];

		if (strcmp(o->ifname, fi->name))
			continue;
		for (uint32_t r = 0; r < cfg->nr_rules && !o->kept; r++) {
			if (!(fi->rule_kept >> r & 1) && !strcmp(o->text, cfg->rule_text[r])) {
				o->kept = true;
				fi->rule_kept |= 1ull << r;
				fi->rule_id[r] = o->id;
			}
		}
		if (!o->kept && !umem_steer__remove_rule(fi->adopt, o->id, NULL))
			fprintf(stderr, "xdp-fwd: --takeover: %s: rule %u ('%s') is not in this configuration: "
				"removed\n", fi->name, o->id, o->text);
	}
}

/* A bind of a queue the old instance's socket still holds (the kernel releases it from a work
 * item, a little after the close): counted, and waited for 1 ms at a time at first (the
 * release usually comes within a few ms, and each ms waited past it is the gap's), then as the
 * library would (its 5 s bound counts the waits, so it stays over 4.8 s). */
#define FWD_HANDOVER_FINE_WAITS 40u

static int rebind_wait(void *arg, uint32_t ms)
{
	struct fwd_handover *h = arg;
	uint32_t wait = h->busy_waits < FWD_HANDOVER_FINE_WAITS && ms > 1 ? 1 : ms;

	if (!h->busy_waits++ && h->taken)
		timeline_mark(&h->tl, "first busy bind");
	h->busy_ms += wait;
	poll(NULL, 0, (int)wait);
	return 0;
}

void fwd_handover_mark(struct fwd_ctx *ctx, const char *fmt, ...)
{
	struct fwd_handover *h = ctx->handover;
	char what[128];
	va_list ap;

	if (!h || !h->taken)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	timeline_mark(&h->tl, "%s", what);
}

void fwd_handover_timing(struct fwd_ctx *ctx)
{
	struct fwd_handover *h = ctx->handover;
	uint64_t now = fwd_clock_ns(CLOCK_MONOTONIC);
	char gap[160] = "";

	if (!h)
		return;
	ctx->open_wait = NULL; /* later opens (live changes) wait as the library does */
	if (!h->taken)
		return;
	timeline_mark(&h->tl, "sockets in the map");
	/* The same clock in both (not across time namespaces: a gap out of range is not said). */
	if (h->stopped_ns && now > h->stopped_ns && now - h->stopped_ns < 60000000000ull)
		snprintf(gap, sizeof(gap), "; gap (pid %ld's workers stopped to these sockets in the map) %.1f ms",
			 h->pid, (double)(now - h->stopped_ns) / 1e6);
	fprintf(stderr, "xdp-fwd: --takeover timing, ms since it began: %s; %u binds of a busy queue "
		"waited %u ms%s\n", h->tl.text, h->busy_waits, h->busy_ms, gap);
}

int fwd_handover_take(struct fwd_ctx *ctx)
{
	struct fwd_handover *h = ctx->handover;
	char req[32];
	struct timeval tv = { .tv_sec = FWD_HANDOVER_TIMEOUT_MS / 1000 };
	int fds[MAX_FDS], nfds = 0, r = 0, err;
	uint64_t t0 = fwd_clock_ns(CLOCK_MONOTONIC);
	char *bind, *part1;

	h->tl.t0 = t0;
	ctx->open_wait = rebind_wait;
	ctx->open_wait_arg = h;
	prefault(ctx);
	timeline_mark(&h->tl, "area faulted in");
	/* The area registered as UMEM now, by the first port created unbound: pinning it takes
	 * milliseconds that would otherwise be the gap's. */
	if ((err = fwd_port_prepare(ctx, 0)))
		fprintf(stderr, "xdp-fwd: --takeover: cannot register the UMEM ahead (%s): the first "
			"bind does it, in the gap\n", strerror(-err));
	else
		timeline_mark(&h->tl, "UMEM registered");
	/* The programs there now, opened ahead (a few ms each, kept out of the gap); they are
	 * the ones handed over if a link for them comes with the reply. */
	for (uint32_t f = 0; f < ctx->nr_ifaces && f < FWD_MAX_PORTS; f++) {
		snprintf(h->ifs[f].name, IF_NAMESIZE, "%s", ctx->ifaces[f].name);
		h->ifs[f].link_fd = h->ifs[f].prog_fd = -1;
		h->ifs[f].steer = ctx->cfg->pinned ? NULL : umem_steer__open(ctx->ifaces[f].name);
		/* The kernel opens a program by id for CAP_SYS_ADMIN only: then it comes with the
		 * reply (version 2), which an older instance refuses (nothing changes). */
		h->need_fds |= !h->ifs[f].steer && errno == EPERM && !ctx->cfg->pinned;
	}
	h->nr_ifs = ctx->nr_ifaces;
	timeline_mark(&h->tl, "programs opened");
	/* Version 1 where it suffices: an instance from before version 2 hands over to it. */
	snprintf(req, sizeof(req), "handover %d\n", h->need_fds ? FWD_HANDOVER_VERSION : FWD_HANDOVER_VERSION_MIN);
	h->fd = connect_to(h->path);
	if (h->fd >= 0 && (setsockopt(h->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
			   send(h->fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req)))
		r = -errno;
	if (h->fd >= 0 && !r) {
		timeline_mark(&h->tl, "request sent");
		r = receive(h, "\nbind\n", fds, &nfds);
	}
	if (r == 1 && !strncmp(h->buf, "error: ", 7)) {
		h->buf[strcspn(h->buf, "\n")] = '\0';
		fprintf(stderr, "xdp-fwd: --takeover: the xdp-fwd on %s refused: %s; it runs on, nothing "
			"changed%s\n", h->path, h->buf + 7, h->need_fds ? " (this xdp-fwd needs its steering "
			"programs handed over: it cannot open them by id without CAP_SYS_ADMIN)" : "");
		drop_state(h, fds, nfds);
		return -EBUSY;
	}
	if (r == -ETIMEDOUT) {
		/* Stopped (SIGSTOP) or stuck: it still holds its queues, locks and programs, and
		 * takes the request up if it runs again, when it sees this end closed (it runs on). */
		fprintf(stderr, "xdp-fwd: --takeover: the xdp-fwd on %s did not answer within %d s (stopped or "
			"stalled): it keeps its interfaces; this one stops, nothing attached\n", h->path,
			FWD_HANDOVER_TIMEOUT_MS / 1000);
		drop_state(h, fds, nfds);
		return -ETIMEDOUT;
	}
	if (h->fd < 0 || r != 1 || strncmp(h->buf, "ok\n", 3)) {
		/* Gone (its link with it): this instance attaches its own program. */
		bool was_there = h->fd >= 0;

		fprintf(stderr, "xdp-fwd: --takeover: the xdp-fwd on %s did not hand over (%s): a normal "
			"start\n", h->path, h->fd < 0 ? strerror(-h->fd) : r < 0 ? strerror(-r) : "it closed the connection");
		drop_state(h, fds, nfds);
		/* One that took the connection and closed it is going (killed): its interface
		 * locks go a moment later. */
		return fwd_lock_interfaces_within(ctx->cfg, was_there ? FWD_HANDOVER_TIMEOUT_MS : 0) ? -EBUSY : 0;
	}
	bind = strstr(h->buf, "\nbind\n");
	h->part2 = (size_t)(bind - h->buf) + 6;
	part1 = strndup(h->buf + 3, (size_t)(bind - h->buf) - 2);
	if (part1)
		parse_reply(h, part1, fds, nfds);
	free(part1);
	/* The descriptors no line named (an older or newer peer's): not kept. */
	for (int i = 0; i < nfds; i++) {
		bool named = fds[i] == h->control_fd || fds[i] == h->metrics_fd;

		for (uint32_t f = 0; f < h->nr_ifs; f++) {
			named |= fds[i] == h->ifs[f].link_fd || fds[i] == h->ifs[f].prog_fd;
			for (uint32_t m = 0; m < h->ifs[f].nr_map_fds; m++)
				named |= fds[i] == h->ifs[f].map_fds[m];
		}
		if (!named)
			close(fds[i]);
	}
	h->taken = true;
	timeline_mark(&h->tl, "reply read");
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		adopt(ctx, h, &ctx->ifaces[f]);
	fprintf(stderr, "xdp-fwd: --takeover: pid %ld stopped and handed over in %.1f ms\n", h->pid,
		(double)(fwd_clock_ns(CLOCK_MONOTONIC) - t0) / 1e6);
	for (uint32_t f = 0; f < h->nr_ifs; f++)
		if (!in_config(ctx, h->ifs[f].name))
			fprintf(stderr, "xdp-fwd: --takeover: %s is not in this configuration: its program goes "
				"with pid %ld\n", h->ifs[f].name, h->pid);
	/* Released by the old instance before it answered. */
	if (fwd_lock_interfaces(ctx->cfg))
		return -EBUSY;
	timeline_mark(&h->tl, "interfaces locked");
	return 0;
}

void fwd_handover_listeners(struct fwd_ctx *ctx)
{
	struct fwd_handover *h = ctx->handover;
	const struct fwd_config *cfg = ctx->cfg;
	int mfd = h->metrics_fd, fds[MAX_FDS], nfds = 0;

	/* The reply's second part (the old instance's totals), sent once its ports were closed. */
	if (h->fd >= 0 && h->taken) {
		if (receive(h, "\n.\n", fds, &nfds) == 1)
			parse_reply(h, h->buf + h->part2, NULL, 0);
		else
			fprintf(stderr, "xdp-fwd: --takeover: pid %ld sent no totals: counters start from zero\n",
				h->pid);
		drop_state(h, fds, nfds); /* keeps what was parsed: closes the rest */
	}
	/* Another address: the old socket goes, a new one is bound. */
	if (mfd >= 0 && (!cfg->metrics_addr || strcmp(cfg->metrics_addr, h->metrics_addr))) {
		close(mfd);
		mfd = -1;
	}
	ctx->metrics = fwd_metrics_open_fd(cfg, mfd);
	ctx->control = fwd_control_open_fd(cfg, h->control_fd);
	h->metrics_fd = h->control_fd = -1; /* theirs now */
}

void fwd_handover_free(struct fwd_ctx *ctx)
{
	struct fwd_handover *h = ctx->handover;

	if (!h)
		return;
	ctx->handover = NULL;
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) { /* a set-up that stopped before taking it */
		umem_steer__detach(ctx->ifaces[f].adopt);
		ctx->ifaces[f].adopt = NULL;
	}
	for (uint32_t f = 0; f < h->nr_ifs; f++) {
		umem_steer__detach(h->ifs[f].steer); /* opened ahead, not handed over: only closed */
		if (h->ifs[f].link_fd >= 0)
			close(h->ifs[f].link_fd);
		close_handed(h, f);
	}
	if (h->control_fd >= 0)
		close(h->control_fd);
	if (h->metrics_fd >= 0)
		close(h->metrics_fd);
	for (uint32_t r = 0; r < h->nr_rules; r++)
		free(h->rules[r].text);
	free(h->counters);
	free(h->buf);
	if (h->fd >= 0)
		close(h->fd);
	free(h);
}

/* ---- the old instance's side ---- */

static void refuse(int fd, const char *why)
{
	fwd_control_answer(fd, why, NULL);
}

/* The asker closed its socket (it died, a restart stopped it, or it gave up waiting while this
 * instance was stopped or stalled, its request still queued): to hand over to it would leave
 * nobody forwarding. POLLHUP: both directions shut, which a
 * peer's close does and a half-close after the request (a client's shutdown(SHUT_WR)) does not. */
static bool asker_gone(int fd)
{
	struct pollfd p = { .fd = fd };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR));
}

/* The "steer" line of interface fi: its program's and maps' descriptors, the ones this
 * instance holds (it may not be able to open them by id either). */
static void put_steer(FILE *o, struct fwd_ctx *ctx, const struct fwd_iface *fi, int *fds, int *nfds)
{
	int m[2 * UMEM_STEER_MAP_FDS_MAX], n = umem_steer__map_fds(fi->steer, m, UMEM_STEER_MAP_FDS_MAX), k;

	/* Else the successor opens them by id, or says why it cannot. */
	if (n < 0 || (k = fwd_offload_map_fds(ctx, fi->idx, m + n, UMEM_STEER_MAP_FDS_MAX)) < 0 ||
	    *nfds + 1 + n + k > MAX_FDS)
		return;
	fprintf(o, "steer %s %d", fi->name, *nfds);
	fds[(*nfds)++] = umem_steer__prog_fd(fi->steer);
	for (int i = 0; i < n + k; i++) {
		fprintf(o, " %d", *nfds);
		fds[(*nfds)++] = m[i];
	}
	fputc('\n', o);
}

void fwd_handover_give(struct fwd_ctx *ctx, struct fwd_control *c, int fd, uint32_t version,
		       const struct fwd_samples *start, pid_t successor)
{
	static struct fwd_samples cur; /* large: static, one request at a time */
	struct fwd_timeline tl = { .t0 = fwd_clock_ns(CLOCK_MONOTONIC) };
	uint64_t stopped;
	uint32_t nr_open = 0;
	int fds[MAX_FDS], nfds = 0, cfd;
	char *text = NULL, why[128];
	struct ucred cr = { .pid = 0 };
	socklen_t crlen = sizeof(cr);
	size_t len = 0;
	FILE *o;

	if (version < FWD_HANDOVER_VERSION_MIN || version > FWD_HANDOVER_VERSION) {
		snprintf(why, sizeof(why), "handover: protocol version %u; this xdp-fwd speaks %d to %d", version,
			 FWD_HANDOVER_VERSION_MIN, FWD_HANDOVER_VERSION);
		refuse(fd, why);
		return;
	}
	/* A restart's successor is the one to take over: the control socket admits others too. */
	if (successor > 0 && (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) || cr.pid != successor)) {
		snprintf(why, sizeof(why), "handover: a restart is under way (pid %d takes over)", (int)successor);
		refuse(fd, why);
		return;
	}
	if (asker_gone(fd)) {
		fprintf(stderr, "xdp-fwd: handover: the asker is gone before the reply (its connection is closed); nothing "
			"changed, this one runs on\n");
		return;
	}
	/* The pinned table is put back at each stop, to values the next instance would read as the
	 * privileged step's: not taken over yet. */
	if (ctx->cfg->pinned) {
		refuse(fd, "handover: not with --pinned (the pins keep the program attached: stop this "
			   "xdp-fwd, then start the next)");
		return;
	}
	if (!(o = open_memstream(&text, &len))) {
		refuse(fd, "handover: out of memory");
		return;
	}
	/* What needs no stopped worker first: the gap starts at the workers' stop. */
	fwd_unlock_interfaces();
	fprintf(o, "ok\npid %ld\n", (long)getpid());
	cfd = fwd_control_release(c);
	if (cfd >= 0) {
		fprintf(o, "control %d\n", nfds);
		fds[nfds++] = cfd;
	}
	if (ctx->cfg->metrics_addr && (fds[nfds] = fwd_metrics_release(ctx->metrics)) >= 0)
		fprintf(o, "metrics %d %s\n", nfds++, ctx->cfg->metrics_addr);
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		struct fwd_iface *fi = &ctx->ifaces[f];
		int lfd = fi->steer ? umem_steer__link_fd(fi->steer) : -1;

		/* A program this instance took over itself: the link it holds (handle opened). */
		for (uint32_t k = 0; lfd < 0 && fi->steer && ctx->handover && k < ctx->handover->nr_ifs; k++)
			if (ctx->handover->ifs[k].adopted && !strcmp(ctx->handover->ifs[k].name, fi->name))
				lfd = ctx->handover->ifs[k].link_fd;

		if (lfd < 0)
			continue;
		fprintf(o, "iface %s %d\n", fi->name, nfds);
		fds[nfds++] = lfd;
		put_steer(o, ctx, fi, fds, &nfds);
		for (uint32_t r = 0; r < ctx->cfg->nr_rules; r++)
			fprintf(o, "rule %s %u %s\n", fi->name, fi->rule_id[r], ctx->cfg->rule_text[r]);
	}
	/* From here on this instance stops, whatever the new one does with the reply. The
	 * service manager follows a restart's successor before it can say READY=1 (restart.h). */
	stopped = fwd_clock_ns(CLOCK_MONOTONIC); /* what arrives from here on is lost to forwarding */
	if (successor > 0)
		fwd_service_main_pid(successor);
	atomic_store(&ctx->stop, 1);
	fwd_workers_join(ctx);
	timeline_mark(&tl, "workers joined");
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		fwd_iface_steer_sockets(ctx, &ctx->ifaces[f], false);
	timeline_mark(&tl, "sockets out of the map");
	for (uint32_t i = 0; i < ctx->nr_ports; i++)
		nr_open += ctx->ports[i].port != NULL;
	fwd_ports_close(ctx);
	timeline_mark(&tl, "%u ports closed", nr_open);
	fwd_report_sample(ctx, &cur);
	ctx->handed_over = true;
	fprintf(o, "stopped %llu\n", (unsigned long long)stopped);
	/* The queues are free (or about to be: the kernel frees them from a work item a little
	 * after the close, and the new instance's bind waits for that on the UMEM it registered
	 * ahead): "bind", then the totals the new instance reads once its ports are up. */
	fputs("bind\n", o);
	put_counters(o, ctx, start, &cur);
	fputs(".\n", o);
	if (fclose(o) || fwd_control_send(fd, text, len, fds, nfds)) {
		fprintf(stderr, "xdp-fwd: handover: the reply did not go out (%s); stopping all the same\n",
			strerror(errno));
	} else {
		timeline_mark(&tl, "reply sent");
		fprintf(stderr, "xdp-fwd: handed over to a new xdp-fwd (%d descriptors); stopping\n", nfds);
		fprintf(stderr, "xdp-fwd: handover timing, ms since the request: %s\n", tl.text);
	}
	free(text);
	if (cfd >= 0)
		close(cfd);
}
