/* SPDX-License-Identifier: MIT */
/*
 * AF_XDP ports over libxdp's xsk API: creation, the registries, option checks, destruction and
 * accessors. The data path is port_data.c; the shared objects are described in port_internal.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <linux/membarrier.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "port_internal.h"
#include "xdp_attach.h"
#include "xsk_redirect.skel.h"

/* Debian 12's uapi headers are 6.1: multi-buffer AF_XDP arrived in 6.6. */
#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)
#endif
#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET 70
#endif

_Static_assert(sizeof(struct umem_desc) == sizeof(struct xdp_desc), "umem_desc mirrors xdp_desc");
_Static_assert(UMEM_DESC_F_CONTD == XDP_PKT_CONTD, "UMEM_DESC_F_CONTD is XDP_PKT_CONTD");
_Static_assert((int)UMEM_PORT_ATTACH_AUTO == UMEM__ATTACH_AUTO &&
	       (int)UMEM_PORT_ATTACH_NATIVE == UMEM__ATTACH_NATIVE &&
	       (int)UMEM_PORT_ATTACH_GENERIC == UMEM__ATTACH_GENERIC, "port attach modes are xdp_attach's");

#define PORT_DRAIN_TIMEOUT_MS 500  /* destroy waits this long for TX in flight to complete */
#define PORT_REBIND_TIMEOUT_MS 5000 /* create waits this long for a queue a closed socket holds */
#define PORT_REBIND_QUIET_MS 500    /* ... and says so after this long */
#define PORT_REBIND_STEP_MS 5       /* ... binding again this often */

struct port_prog {
	struct port_prog *next;
	struct xsk_redirect *skel;
	uint64_t netns;
	int ifindex;
	int link_fd;
	int map_fd;
	uint32_t users;
	enum umem_port_xdp_mode mode;
};

static pthread_mutex_t ports_lock = PTHREAD_MUTEX_INITIALIZER;
static struct port_umem *umems;
static struct port_prog *progs;

static bool is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/* Interfaces are named per network namespace: registries key on it as well as the ifindex. */
static uint64_t current_netns(void)
{
	struct stat st;

	return stat("/proc/thread-self/ns/net", &st) ? 0 : (uint64_t)st.st_ino;
}

int umem_netdev__queue_count(const char *ifname)
{
	uint32_t cur, max;
	int ifindex, err;

	if (!ifname || !*ifname || strlen(ifname) >= IF_NAMESIZE) {
		pr_warn("queue count: '%s' is not an interface name\n", ifname ? ifname : "(null)");
		return -EINVAL;
	}
	ifindex = (int)if_nametoindex(ifname);
	if (!ifindex) {
		pr_warn("queue count of %s: no such interface\n", ifname);
		return -ENODEV;
	}
	err = umem__netdev_rx_queues(ifname, ifindex, &cur, &max);
	if (err)
		pr_warn("queue count of %s: neither a channel count (ETHTOOL_GCHANNELS) nor the "
			"device's queue count (rtnetlink): %s\n", ifname, strerror(-err));
	return err ? err : (int)cur;
}

int umem_port__queue_count(const char *ifname)
{
	return umem_netdev__queue_count(ifname);
}

/* ---- registries (ports_lock held) ---- */

static struct port_umem *umem_find(struct umem_area *area)
{
	for (struct port_umem *u = umems; u; u = u->next)
		if (u->area == area)
			return u;
	return NULL;
}

static void umem_unlink(struct port_umem *u)
{
	for (struct port_umem **pp = &umems; *pp; pp = &(*pp)->next)
		if (*pp == u) {
			*pp = u->next;
			return;
		}
}

static struct port_queue *queue_get(struct port_umem *u, uint64_t netns, int ifindex, uint32_t queue)
{
	struct port_queue *q;

	for (q = u->queues; q; q = q->next)
		if (q->netns == netns && q->ifindex == ifindex && q->queue == queue)
			return q;
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->umem = u;
	if (umem__queue_bitmap_init(q)) {
		free(q);
		return NULL;
	}
	q->netns = netns;
	q->ifindex = ifindex;
	q->queue = queue;
	q->next = u->queues;
	u->queues = q;
	return q;
}

/* The last socket of the queue is closed: whatever the kernel held for RX comes back. */
static void queue_release(struct port_queue *q)
{
	uint32_t total = umem__queue_return_held(q);

	pr_debug("queue %d:%u: %u RX buffers returned from the kernel\n", q->ifindex, q->queue, total);
	for (struct port_queue **pp = &q->umem->queues; *pp; pp = &(*pp)->next)
		if (*pp == q) {
			*pp = q->next;
			break;
		}
	free(q);
}

static void prog_put(struct port_prog *g)
{
	if (!g || --g->users)
		return;
	/* Closing the link detaches the program. */
	close(g->link_fd);
	xsk_redirect__destroy(g->skel);
	for (struct port_prog **pp = &progs; *pp; pp = &(*pp)->next)
		if (*pp == g) {
			*pp = g->next;
			break;
		}
	free(g);
}

/* The default program on the interface, loaded and attached by the first port there. */
static struct port_prog *prog_get(const char *ifname, int ifindex, uint64_t netns, uint32_t queue,
				  uint32_t attach, int *errp)
{
	struct port_prog *g;
	struct xdp_found f;
	char who[IF_NAMESIZE + 24];
	uint32_t cur, max, entries, id, xdp_flags;
	int err, fd;

	for (g = progs; g; g = g->next)
		if (g->netns == netns && g->ifindex == ifindex) {
			g->users++;
			return g;
		}
	snprintf(who, sizeof(who), "port %s:%u", ifname, queue);
	/* Any program there is refused, ours too: a default program of another process's port
	 * is attached through its bpf_link and lives while that process does. */
	err = umem__xdp_find(ifindex, UMEM__PORT_PROG_NAME, &f);
	id = err ? 0 : f.prog_id ? f.prog_id : f.foreign_id;
	if (!err && f.prog_id) {
		pr_warn("%s: the interface is in use by libumem ports of another process (their XDP "
			"program, id %u, lives while that process does): stop it, or open this queue "
			"from that process\n", who, id);
		*errp = -EBUSY;
		return NULL;
	}
	if (!err && id) {
		pr_warn("%s: the interface already has XDP program '%s' (id %u) attached: detach it "
			"(ip link set dev %s %s off) or steer with it (UMEM_PORT_PROG_NONE)\n",
			who, f.foreign_name, id, ifname, umem__xdp_off_keyword(f.foreign_flags));
		*errp = -EBUSY;
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (!g) {
		*errp = -ENOMEM;
		return NULL;
	}
	g->skel = xsk_redirect__open();
	if (!g->skel) {
		err = -errno;
		pr_warn("port %s:%u: cannot open the XDP program: %s\n", ifname, queue, strerror(-err));
		goto free_prog;
	}
	umem__netdev_rx_queues(ifname, ifindex, &cur, &max);
	entries = max;
	if (entries <= queue)
		entries = queue + 1;
	bpf_map__set_max_entries(g->skel->maps.xsks_map, entries);
	err = xsk_redirect__load(g->skel);
	if (err) {
		pr_warn("port %s:%u: cannot load the XDP program: %s%s\n", ifname, queue, strerror(-err),
			umem__cap_hint_load(err, false));
		goto destroy_skel;
	}
	g->ifindex = ifindex;
	g->netns = netns;
	g->map_fd = bpf_map__fd(g->skel->maps.xsks_map);
	fd = umem__xdp_link(who, bpf_program__fd(g->skel->progs.xsk_redirect), ifindex, attach,
			    &xdp_flags);
	if (fd < 0) {
		err = fd;
		goto destroy_skel;
	}
	g->mode = xdp_flags == XDP_FLAGS_SKB_MODE ? UMEM_PORT_XDP_GENERIC : UMEM_PORT_XDP_NATIVE;
	g->link_fd = fd;
	g->users = 1;
	g->next = progs;
	progs = g;
	return g;

destroy_skel:
	xsk_redirect__destroy(g->skel);
free_prog:
	free(g);
	*errp = err;
	return NULL;
}

/* ---- creation ---- */

/* umem_port_opts.xskmap_pin: our socket at the index of our queue in someone else's map (DPDK's
 * af_xdp use_pinned_map does the same for the Kubernetes AF_XDP device plugin). */
static int pinned_map_insert(struct umem_port *p, const char *pin)
{
	struct bpf_map_info mi = {};
	uint32_t len = sizeof(mi);
	int fd = bpf_obj_get(pin), err;

	if (fd < 0) {
		err = -errno;
		pr_warn("port %s:%u: cannot open the pinned XSKMAP %s: %s%s\n", p->ifname, p->queue, pin,
			strerror(errno), errno == EACCES ? " (the pin's owner and mode say who may)" : "");
		return err;
	}
	if (bpf_obj_get_info_by_fd(fd, &mi, &len) || mi.type != BPF_MAP_TYPE_XSKMAP || p->queue >= mi.max_entries) {
		pr_warn("port %s:%u: %s is not an XSKMAP with an entry for queue %u\n", p->ifname, p->queue,
			pin, p->queue);
		close(fd);
		return -EINVAL;
	}
	if (bpf_map_update_elem(fd, &p->queue, &p->fd, BPF_ANY)) {
		err = -errno;
		pr_warn("port %s:%u: cannot insert the socket into %s: %s\n", p->ifname, p->queue, pin,
			strerror(errno));
		close(fd);
		return err;
	}
	p->xskmap_fd = fd;
	return 0;
}

struct port_cfg {
	uint32_t rx_size, tx_size, fill_size, comp_size, headroom, chunk_size, flags, zerocopy;
	uint32_t xdp_prog, xdp_attach, busy_poll_usecs, busy_poll_budget;
	bool unaligned;
	bool fill_given, comp_given; /* else inherited from the UMEM's first port */
	umem_port_wait_fn rebind_wait; /* NULL: sleep */
	void *rebind_wait_arg;
	const char *xskmap_pin;
};

static int read_opts(struct umem_port *p, const struct umem_port_opts *opts, struct port_cfg *c)
{
	uint32_t area_chunk = umem_area__chunk_size(p->area), area_page = umem_area__page_size(p->area);
	/* AF_XDP chunks are at most one kernel page (8 KiB is refused even on hugepages). */
	uint32_t kernel_page = (uint32_t)sysconf(_SC_PAGESIZE);

	if (!OPTS_CHECK(opts, umem_port_opts, "port"))
		return -EINVAL;
	c->rx_size = OPTS_GET(opts, rx_size, 0) ?: UMEM_PORT_RX_SIZE_DEFAULT;
	c->tx_size = OPTS_GET(opts, tx_size, 0) ?: UMEM_PORT_TX_SIZE_DEFAULT;
	c->fill_size = OPTS_GET(opts, fill_size, 0);
	c->comp_size = OPTS_GET(opts, comp_size, 0);
	c->fill_given = c->fill_size;
	c->comp_given = c->comp_size;
	c->fill_size = c->fill_size ?: 2 * c->rx_size;
	c->comp_size = c->comp_size ?: c->tx_size;
	c->headroom = OPTS_GET(opts, headroom, 0);
	c->chunk_size = OPTS_GET(opts, chunk_size, 0);
	c->flags = OPTS_GET(opts, flags, 0);
	c->zerocopy = OPTS_GET(opts, zerocopy, UMEM_PORT_ZC_AUTO);
	c->xdp_prog = OPTS_GET(opts, xdp_prog, UMEM_PORT_PROG_DEFAULT);
	c->xdp_attach = OPTS_GET(opts, xdp_attach, UMEM_PORT_ATTACH_AUTO);
	c->busy_poll_usecs = OPTS_GET(opts, busy_poll_usecs, 0);
	c->busy_poll_budget = OPTS_GET(opts, busy_poll_budget, 0) ?: UMEM_PORT_BUSY_POLL_BUDGET_DEFAULT;
	c->rebind_wait = OPTS_GET(opts, rebind_wait, NULL);
	c->rebind_wait_arg = OPTS_GET(opts, rebind_wait_arg, NULL);
	c->xskmap_pin = OPTS_GET(opts, xskmap_pin, NULL);
	if (c->xskmap_pin)
		c->xdp_prog = UMEM_PORT_PROG_NONE; /* the pinned map's program steers */
	c->unaligned = !area_chunk;
	if (!is_pow2(c->rx_size) || !is_pow2(c->tx_size) || !is_pow2(c->fill_size) ||
	    !is_pow2(c->comp_size)) {
		pr_warn("port %s:%u: ring sizes must be powers of two (rx %u tx %u fill %u comp %u)\n",
			p->ifname, p->queue, c->rx_size, c->tx_size, c->fill_size, c->comp_size);
		return -EINVAL;
	}
	if (c->flags & ~(uint32_t)(PORT_UMEM_FLAGS | PORT_OWN_FLAGS | UMEM_PORT_F_UNBOUND) ||
	    c->zerocopy > UMEM_PORT_ZC_OFF || c->xdp_prog > UMEM_PORT_PROG_NONE ||
	    c->xdp_attach > UMEM_PORT_ATTACH_GENERIC) {
		pr_warn("port %s:%u: unknown flags or modes in opts\n", p->ifname, p->queue);
		return -EINVAL;
	}
	if ((c->flags & PORT_OWN_FLAGS) == PORT_OWN_FLAGS) {
		pr_warn("port %s:%u: UMEM_PORT_F_TX_ONLY and UMEM_PORT_F_RX_ONLY together leave the "
			"port no ring\n", p->ifname, p->queue);
		return -EINVAL;
	}
	if (c->unaligned) {
		c->chunk_size = c->chunk_size ?: (kernel_page < area_page ? kernel_page : area_page);
		if (c->chunk_size < 2048 || c->chunk_size > kernel_page || c->chunk_size > area_page) {
			pr_warn("port %s:%u: unaligned chunk size %u must be 2048..%u (the kernel's page) "
				"and fit an area page (%u)\n", p->ifname, p->queue, c->chunk_size,
				kernel_page, area_page);
			return -EINVAL;
		}
	} else if (c->chunk_size && c->chunk_size != area_chunk) {
		pr_warn("port %s:%u: chunk size %u differs from the area's aligned chunk size %u\n",
			p->ifname, p->queue, c->chunk_size, area_chunk);
		return -EINVAL;
	} else {
		c->chunk_size = area_chunk;
		if (c->chunk_size > kernel_page) {
			pr_warn("port %s:%u: the kernel refuses chunks above its page size %u (area chunk "
				"%u): use multi-buffer for larger frames\n", p->ifname, p->queue,
				kernel_page, c->chunk_size);
			return -EINVAL;
		}
	}
	if (c->headroom + XDP_PACKET_HEADROOM + 64 > c->chunk_size) {
		pr_warn("port %s:%u: headroom %u leaves no room for data in a %u-byte chunk\n",
			p->ifname, p->queue, c->headroom, c->chunk_size);
		return -EINVAL;
	}
	return 0;
}

/* Later ports inherit the UMEM-wide settings: the kernel takes no bind flags from a socket
 * that shares a UMEM, so a different request could only be silently ignored. */
static int check_umem_settings(const struct umem_port *p, const struct port_umem *u,
			       struct port_cfg *c)
{
	const char *field = NULL;

	/* libxdp sizes every queue's fill and completion rings like the first one's. */
	if (!c->fill_given)
		c->fill_size = u->fill_size;
	if (!c->comp_given)
		c->comp_size = u->comp_size;

	if (c->headroom != u->headroom)
		field = "headroom";
	else if (c->chunk_size != u->chunk_size)
		field = "chunk_size";
	else if ((c->flags & PORT_UMEM_FLAGS) != u->flags)
		field = "flags (need_wakeup, multi-buffer)";
	else if (c->zerocopy != u->zerocopy)
		field = "zerocopy";
	else if (c->fill_size != u->fill_size)
		field = "fill_size";
	else if (c->comp_size != u->comp_size)
		field = "comp_size";
	if (!field)
		return 0;
	pr_warn("port %s:%u: %s differs from the first port on this area (UMEM-wide setting)\n",
		p->ifname, p->queue, field);
	return -EINVAL;
}

static int set_busy_poll(struct umem_port *p, const struct port_cfg *c)
{
	int one = 1, usecs = (int)c->busy_poll_usecs, budget = (int)c->busy_poll_budget;

	if (!usecs)
		return 0;
	if (setsockopt(p->fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &one, sizeof(one)) ||
	    setsockopt(p->fd, SOL_SOCKET, SO_BUSY_POLL, &usecs, sizeof(usecs)) ||
	    setsockopt(p->fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, &budget, sizeof(budget))) {
		int err = -errno;

		pr_warn("port %s:%u: busy poll options refused: %s\n", p->ifname, p->queue,
			strerror(-err));
		return err;
	}
	p->busy_poll = true;
	return 0;
}

int umem__port_tx_budget(int fd, uint32_t want)
{
	int v = (int)want;

	/* Kernels before 6.17 do not know the option (ENOPROTOOPT); then 32 per sendto() stays. */
	if (setsockopt(fd, SOL_XDP, PORT_XDP_MAX_TX_SKB_BUDGET, &v, sizeof(v)))
		return -errno;
	return v;
}

/* Copy mode: more frames per sendto() (fewer kicks, bigger bursts into the next hop). */
static void set_tx_budget(struct umem_port *p, const struct port_cfg *c)
{
	uint32_t want = c->tx_size < PORT_TX_SKB_BUDGET ? c->tx_size : PORT_TX_SKB_BUDGET;
	int r;

	if (p->mode != UMEM_PORT_MODE_COPY || want <= 32 || !p->tx_on)
		return;
	r = umem__port_tx_budget(p->fd, want);
	if (r < 0)
		pr_debug("port %s:%u: XDP_MAX_TX_SKB_BUDGET refused (%s): 32 frames per kick\n",
			 p->ifname, p->queue, strerror(-r));
}

static void explain_bind_error(const struct umem_port *p, int err, const struct port_cfg *c)
{
	const char *why;

	switch (err) {
	case -EOPNOTSUPP:
		/* A driver may do zero-copy but not zero-copy chains (xdp_zc_max_segs 1, e.g.
		 * virtio-net in 6.18): the kernel answers both with EOPNOTSUPP, and "no zero-copy"
		 * alone would send the user the wrong way. */
		if (c->zerocopy == UMEM_PORT_ZC_REQUIRE && (c->flags & UMEM_PORT_F_MULTI_BUFFER))
			why = "zero-copy with multi-buffer required, but the driver has no zero-copy "
			      "multi-buffer (chains) or no zero-copy at all (without "
			      "UMEM_PORT_F_MULTI_BUFFER it may bind zero-copy; copy mode works)";
		else if (c->zerocopy == UMEM_PORT_ZC_REQUIRE)
			why = "zero-copy required but the driver does not support it (copy mode works)";
		else
			why = "the device does not support AF_XDP in the requested mode";
		break;
	case -EBUSY: {
		char who[160];
		int h = umem__netdev_xsk_holder(p->ifindex, p->queue, who, sizeof(who));

		/* Who holds it is what the user needs to know. */
		if (h == 1 || (h < 0 && who[0])) {
			pr_warn("port %s:%u: cannot create the AF_XDP socket: the queue is already "
				"bound by an AF_XDP socket outside this UMEM, %s %s (%s)\n",
				p->ifname, p->queue, h == 1 ? "held by" :
				"and these processes of this namespace hold AF_XDP sockets:", who,
				strerror(-err));
			return;
		}
		why = "the queue is already bound by an AF_XDP socket outside this UMEM";
		break;
	}
	case -EINVAL:
		why = "the kernel refused the socket (queue, ring sizes, chunk size or flags)";
		break;
	case -EPERM:
		why = "not permitted (needs CAP_NET_RAW and CAP_NET_ADMIN)";
		break;
	default:
		why = strerror(-err);
	}
	pr_warn("port %s:%u: cannot create the AF_XDP socket: %s (%s)\n", p->ifname, p->queue,
		why, strerror(-err));
}

/* The area's registration as UMEM, made by p's failed creation: undone. */
static void umem_unregister(struct umem_port *p)
{
	struct port_umem *u = p->u;

	if (u->owner != p)
		return;
	xsk_umem__delete(u->xsk);
	u->xsk = NULL;
	u->owner = NULL;
}

/* The area registered as UMEM by p, its first port (done once: a bind retried keeps it). */
static int umem_register(struct umem_port *p, const struct port_cfg *c)
{
	struct port_umem *u = p->u;
	struct port_queue *q = p->q;
	struct xsk_umem_config uc = {
		.fill_size = c->fill_size,
		.comp_size = c->comp_size,
		.frame_size = c->chunk_size,
		.frame_headroom = c->headroom,
		.flags = c->unaligned ? XDP_UMEM_UNALIGNED_CHUNK_FLAG : 0,
	};
	int err;

	if (u->xsk)
		return 0;
	umem__fault_umem_regs++;
	err = xsk_umem__create(&u->xsk, umem_area__base(p->area), umem_area__size(p->area),
			       &q->fill, &q->comp, &uc);
	if (err) {
		pr_warn("port %s:%u: cannot register the area as UMEM (%llu bytes, chunk %u, "
			"headroom %u, %s): %s%s\n", p->ifname, p->queue,
			(unsigned long long)umem_area__size(p->area), c->chunk_size, c->headroom,
			c->unaligned ? "unaligned" : "aligned", strerror(-err),
			err == -ENOBUFS ? " (without CAP_IPC_LOCK the UMEM counts against "
			"RLIMIT_MEMLOCK: grant it or raise ulimit -l)" : err == -EPERM ?
			" (AF_XDP sockets need CAP_NET_RAW)" : "");
		u->xsk = NULL;
		return err;
	}
	u->owner = p;
	return 0;
}

static int open_socket_once(struct umem_port *p, const struct port_cfg *c, bool last_try)
{
	struct port_umem *u = p->u;
	struct port_queue *q = p->q;
	struct xsk_socket_config sc = {
		.rx_size = c->rx_size,
		.tx_size = c->tx_size,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD, /* we attach our own */
	};
	int err;

	err = umem_register(p, c);
	if (err)
		return err;
	if (!(c->flags & UMEM_PORT_F_NO_NEED_WAKEUP))
		sc.bind_flags |= XDP_USE_NEED_WAKEUP;
	if (c->flags & UMEM_PORT_F_MULTI_BUFFER)
		sc.bind_flags |= XDP_USE_SG;
	if (c->zerocopy == UMEM_PORT_ZC_REQUIRE)
		sc.bind_flags |= XDP_ZEROCOPY;
	else if (c->zerocopy == UMEM_PORT_ZC_OFF)
		sc.bind_flags |= XDP_COPY;
	if (umem__fault_bind_busy) { /* tests: a queue the kernel has not released yet */
		umem__fault_bind_busy--;
		err = -EBUSY;
	} else {
		err = xsk_socket__create_shared(&p->xsk, p->ifname, p->queue, u->xsk,
						(c->flags & UMEM_PORT_F_TX_ONLY) ? NULL : &p->rx,
						(c->flags & UMEM_PORT_F_RX_ONLY) ? NULL : &p->tx,
						&q->fill, &q->comp, &sc);
	}
	if (err) {
		p->xsk = NULL;
		/* A busy queue keeps the registration for the next bind: a failed bind leaves the
		 * socket as it was before it (the kernel's "xsk: Fix memory leak for failed bind"
		 * keeps its fill and completion rings; libxdp keeps its RX/TX rings), and registering
		 * again would pin the whole area again, milliseconds per try. */
		if (last_try || err != -EBUSY) {
			explain_bind_error(p, err, c);
			umem_unregister(p);
		}
		return err;
	}
	p->fd = xsk_socket__fd(p->xsk);
	/* libxdp opens sockets without close-on-exec: a program started by the application would
	 * otherwise keep the socket, and so its (device, queue), alive after destroy. */
	fcntl(p->fd, F_SETFD, FD_CLOEXEC);
	q->sockets++;
	return 0;
}

uint32_t umem__fault_bind_busy;
uint32_t umem__fault_umem_regs;

/* A closed socket releases its (device, queue) from a kernel work item (xp_release_deferred),
 * so a queue just freed (a destroyed port, a process that just exited) can stay busy for a
 * while, over a second on a loaded host: wait for it, bounded. A socket that is still bound
 * (sock_diag lists it) will not go away by waiting: refused at once, naming its process.
 * The caller's rebind_wait, if any, does the waiting (the bound counts the steps asked of it). */
static int open_socket(struct umem_port *p, const struct port_cfg *c)
{
	char who[160];
	int err, h = 0;

	for (int ms = 0;; ms += PORT_REBIND_STEP_MS) {
		bool last = ms >= PORT_REBIND_TIMEOUT_MS;

		err = open_socket_once(p, c, last);
		if (err != -EBUSY || last)
			return err;
		if (!ms && (h = umem__netdev_xsk_holder(p->ifindex, p->queue, who, sizeof(who))) == 1)
			return open_socket_once(p, c, true);
		if (ms == PORT_REBIND_QUIET_MS)
			pr_warn("port %s:%u: the queue is busy%s%s%s: waiting up to %d s for it\n",
				p->ifname, p->queue, h < 0 && who[0] ? " (no socket diagnostics to tell; "
				"processes of this namespace with AF_XDP sockets: " : ", held by a closed "
				"AF_XDP socket the kernel has not released yet", h < 0 && who[0] ? who : "",
				h < 0 && who[0] ? ")" : "", PORT_REBIND_TIMEOUT_MS / 1000);
		if (!c->rebind_wait) {
			poll(NULL, 0, PORT_REBIND_STEP_MS);
			continue;
		}
		err = c->rebind_wait(c->rebind_wait_arg, PORT_REBIND_STEP_MS);
		if (err) {
			umem_unregister(p);
			err = err < 0 ? err : -ECANCELED;
			pr_warn("port %s:%u: cannot create the AF_XDP socket: the queue is busy and the "
				"caller ended the wait for it after %d ms (%s)\n", p->ifname, p->queue, ms,
				strerror(-err));
			return err;
		}
	}
}

static void query_mode(struct umem_port *p, const struct port_cfg *c)
{
	struct xdp_options xo = { 0 };
	socklen_t len = sizeof(xo);

	p->mode = !getsockopt(p->fd, SOL_XDP, XDP_OPTIONS, &xo, &len) &&
			  (xo.flags & XDP_OPTIONS_ZEROCOPY) ? UMEM_PORT_MODE_ZEROCOPY : UMEM_PORT_MODE_COPY;
	if (p->mode == UMEM_PORT_MODE_COPY && c->zerocopy == UMEM_PORT_ZC_AUTO && p->u->owner == p)
		pr_info("port %s:%u: copy mode (the driver has no AF_XDP zero-copy%s)\n", p->ifname,
			p->queue, (c->flags & UMEM_PORT_F_MULTI_BUFFER) ?
			" multi-buffer, or no zero-copy at all" : " support");
}

/* Sockets closed together. Closing an AF_XDP socket unbinds it in the kernel, which waits for
 * the driver (xsk_unbind_dev: synchronize_net(), an RCU grace period): closed one after the
 * other, n sockets wait n grace periods; closed at once from threads of their own, about one. */
#define PORT_CLOSE_BATCH 32u /* ports destroyed per batch: at most twice as many sockets */

struct port_closing {
	uint32_t n;
	int fd[2 * PORT_CLOSE_BATCH];             /* a duplicate: the socket's last reference */
	struct port_queue *q[2 * PORT_CLOSE_BATCH]; /* released once its last socket is closed */
};

/* Closes the port's socket; the UMEM owner's socket is the UMEM's fd and closes with it. With
 * cl, libxdp lets go of the socket (rings unmapped, its descriptor closed) but a duplicate
 * keeps it bound until closing_finish closes it with the others. */
static void close_socket(struct umem_port *p, struct port_closing *cl)
{
	struct port_umem *u = p->u;
	struct port_queue *q = p->q;
	int fd = cl && p->xsk ? fcntl(p->fd, F_DUPFD_CLOEXEC, 0) : -1;

	if (!p->xsk) { /* never bound (UMEM_PORT_F_UNBOUND): its registration at most */
		umem_unregister(p);
		if (!q->sockets)
			queue_release(q);
		return;
	}
	xsk_socket__delete(p->xsk);
	p->xsk = NULL;
	if (u->owner == p) {
		xsk_umem__delete(u->xsk);
		u->xsk = NULL;
		u->owner = NULL;
	}
	if (fd >= 0) {
		cl->fd[cl->n] = fd;
		cl->q[cl->n++] = q;
		return;
	}
	if (!--q->sockets)
		queue_release(q);
}

static void port_free(struct umem_port *p)
{
	free(p->pending);
	free(p->pending_pin);
	free(p);
}

/* Freed once nothing of it is left: no port, no owner's socket, no queue waiting for the close
 * of its last socket. */
static void umem_free_if_unused(struct port_umem *u)
{
	if (u->ports || u->owner || u->queues)
		return;
	umem_unlink(u);
	free(u);
}

static void umem_put_ref(struct port_umem *u, struct port_closing *cl)
{
	struct umem_port *owner = u->owner;

	if (u->ports)
		return;
	/* The owner was destroyed earlier and kept only for its socket: close it now. */
	if (owner) {
		close_socket(owner, cl);
		port_free(owner);
	}
	umem_free_if_unused(u);
}

static void *close_fd(void *arg)
{
	close((int)(intptr_t)arg);
	return NULL;
}

/* The duplicates closed at once (a thread each but the first: the caller's), then the queues
 * whose last socket that was give back what the kernel held. */
static void closing_finish(struct port_closing *cl)
{
	pthread_t t[2 * PORT_CLOSE_BATCH];
	bool started[2 * PORT_CLOSE_BATCH] = { false };
	pthread_attr_t attr;
	bool attr_ok = !pthread_attr_init(&attr);

	if (attr_ok)
		pthread_attr_setstacksize(&attr, 64 * 1024); /* a close() only */
	for (uint32_t i = 1; i < cl->n; i++) {
		started[i] = !pthread_create(&t[i], attr_ok ? &attr : NULL, close_fd, (void *)(intptr_t)cl->fd[i]);
		if (!started[i])
			close(cl->fd[i]); /* no thread: this one waits in line */
	}
	if (cl->n)
		close(cl->fd[0]);
	for (uint32_t i = 1; i < cl->n; i++)
		if (started[i])
			pthread_join(t[i], NULL);
	if (attr_ok)
		pthread_attr_destroy(&attr);
	for (uint32_t i = 0; i < cl->n; i++) {
		struct port_umem *u = cl->q[i]->umem;

		if (!--cl->q[i]->sockets)
			queue_release(cl->q[i]);
		umem_free_if_unused(u);
	}
	cl->n = 0;
}

/* UMEM_PORT_F_UNBOUND: the area registered now, the rest kept for umem_port__bind (the pin's
 * path copied: the caller's string may be gone by then). */
static int port_prepare(struct umem_port *p, const struct port_cfg *c)
{
	int err = umem_register(p, c);

	if (err)
		return err;
	p->pending = malloc(sizeof(*p->pending));
	p->pending_pin = c->xskmap_pin ? strdup(c->xskmap_pin) : NULL;
	if (!p->pending || (c->xskmap_pin && !p->pending_pin)) {
		free(p->pending);
		free(p->pending_pin);
		p->pending = NULL;
		p->pending_pin = NULL;
		umem_unregister(p);
		return -ENOMEM;
	}
	*p->pending = *c;
	p->pending->xskmap_pin = p->pending_pin;
	return 0;
}

/* The socket bound and made ready to carry traffic (ports_lock held): the fill ring, the
 * pinned map or the default program. On failure p->xsk says whether a socket is left to close
 * (and p->prog a program to put). */
static int port_bind(struct umem_port *p, const struct port_cfg *c)
{
	int err = open_socket(p, c);

	if (err)
		return err;
	query_mode(p, c);
	set_tx_budget(p, c);
	err = set_busy_poll(p, c);
	if (err)
		return err;
	/* Buffers first, then the program: nothing arrives before the kernel has somewhere to put
	 * it. The queue's first socket sees an empty fill ring. A transmit-only port puts none. */
	if (p->rx_on && umem__port_refill(p, 1) < 0 &&
	    !(p->q->fill.cached_prod - __atomic_load_n(p->q->fill.consumer, __ATOMIC_ACQUIRE))) {
		pr_warn("port %s:%u: the pool has no buffers for the fill ring (size the area with "
			"umem_port__pages_needed())\n", p->ifname, p->queue);
		return -ENOMEM;
	}
	if (c->xskmap_pin && p->rx_on && (err = pinned_map_insert(p, c->xskmap_pin)))
		return err;
	if (c->xdp_prog == UMEM_PORT_PROG_DEFAULT && p->rx_on) {
		p->prog = prog_get(p->ifname, p->ifindex, p->q->netns, p->queue, c->xdp_attach, &err);
		if (!p->prog)
			return err;
		p->xdp_mode = p->prog->mode;
		/* One socket per queue in the default program; later ones on the same queue only
		 * transmit through it (the steering program can spread a queue over several). */
		if (!bpf_map_update_elem(p->prog->map_fd, &p->queue, &p->fd, BPF_NOEXIST)) {
			p->in_map = true;
		} else if (errno == EEXIST) {
			pr_info("port %s:%u: the queue already delivers to another port: this one "
				"receives nothing through the default program\n", p->ifname, p->queue);
		} else {
			err = -errno;
			pr_warn("port %s:%u: cannot insert the socket into the XSKMAP: %s\n", p->ifname,
				p->queue, strerror(-err));
			return err;
		}
	}
	return 0;
}

static struct umem_port *port_create(struct umem_area *area, struct umem_pool *pool, const char *ifname,
				     uint32_t queue, const struct umem_port_opts *opts)
{
	struct port_cfg c;
	struct umem_port *p;
	struct port_umem *u;
	uint64_t netns;
	uint32_t nq, maxq;
	int err = -EINVAL;

	if (!area || !pool || !ifname) {
		pr_warn("port: NULL %s\n", !area ? "area" : !pool ? "pool" : "interface name");
		goto fail;
	}
	if (umem_pool__area(pool) != area) {
		pr_warn("port %s:%u: the pool belongs to another area (a port's pool must draw from "
			"the area the port registers as its UMEM)\n", ifname, queue);
		goto fail;
	}
	if (strlen(ifname) >= IF_NAMESIZE) {
		pr_warn("port: interface name '%s' is too long\n", ifname);
		goto fail;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		err = -ENOMEM;
		goto fail;
	}
	strcpy(p->ifname, ifname);
	p->queue = queue;
	p->area = area;
	p->pool = pool;
	p->fd = -1;
	p->xskmap_fd = -1;
	err = read_opts(p, opts, &c);
	if (err)
		goto free_port;
	p->ifindex = (int)if_nametoindex(ifname);
	if (!p->ifindex) {
		err = -ENODEV;
		pr_warn("port %s:%u: no such interface\n", ifname, queue);
		goto free_port;
	}
	umem__netdev_rx_queues(ifname, p->ifindex, &nq, &maxq);
	if (nq && queue >= nq) {
		pr_warn("port %s:%u: queue %u is beyond the device's %u RX queue%s\n", ifname, queue,
			queue, nq, nq == 1 ? "" : "s");
		err = -EINVAL;
		goto free_port;
	}
	p->chunk_size = c.chunk_size;
	p->unaligned = c.unaligned;
	p->need_wakeup = !(c.flags & UMEM_PORT_F_NO_NEED_WAKEUP);
	p->multi_buffer = c.flags & UMEM_PORT_F_MULTI_BUFFER;
	p->rx_frame_len = c.chunk_size - c.headroom - XDP_PACKET_HEADROOM;
	p->rx_on = !(c.flags & UMEM_PORT_F_TX_ONLY);
	p->tx_on = !(c.flags & UMEM_PORT_F_RX_ONLY);
	if (!p->rx_on)
		p->xdp_mode = UMEM_PORT_XDP_NONE;
	p->umem_size = umem_area__size(area);
	netns = current_netns();

	pthread_mutex_lock(&ports_lock);
	u = umem_find(area);
	if (u && (c.flags & UMEM_PORT_F_UNBOUND)) {
		pr_warn("port %s:%u: UMEM_PORT_F_UNBOUND is for an area's first port (what it does "
			"ahead is the area's registration): the area has ports\n", ifname, queue);
		err = -EINVAL;
		goto unlock;
	}
	if (u) {
		err = check_umem_settings(p, u, &c);
		if (err)
			goto unlock;
	}
	/* Until the area's first port is bound, the UMEM has no socket to share. */
	if (u && u->owner && !u->owner->xsk) {
		pr_warn("port %s:%u: the area's first port (%s:%u, created with UMEM_PORT_F_UNBOUND) "
			"is not bound yet: bind it first\n", ifname, queue, u->owner->ifname, u->owner->queue);
		err = -EBUSY;
		goto unlock;
	}
	if (c.fill_size < 2 * c.rx_size) {
		pr_warn("port %s:%u: fill ring %u must be at least twice the RX ring %u\n", ifname,
			queue, c.fill_size, c.rx_size);
		err = -EINVAL;
		goto unlock;
	}
	if (!u) {
		u = calloc(1, sizeof(*u));
		if (!u) {
			err = -ENOMEM;
			goto unlock;
		}
		u->area = area;
		u->chunk_size = c.chunk_size;
		u->headroom = c.headroom;
		u->flags = c.flags & PORT_UMEM_FLAGS;
		u->zerocopy = c.zerocopy;
		u->fill_size = c.fill_size;
		u->comp_size = c.comp_size;
		u->unaligned = c.unaligned;
		u->next = umems;
		umems = u;
	}
	p->u = u;
	u->ports++;
	p->q = queue_get(u, netns, p->ifindex, queue);
	if (!p->q) {
		err = -ENOMEM;
		goto put_umem;
	}
	if (c.flags & UMEM_PORT_F_UNBOUND) {
		err = port_prepare(p, &c);
		if (err)
			goto put_queue;
		pthread_mutex_unlock(&ports_lock);
		return p;
	}
	err = port_bind(p, &c);
	if (err && !p->xsk) /* no socket: open_socket undid the registration */
		goto put_queue;
	if (err) {
		/* The socket never held traffic, but the fill ring has buffers: close_socket returns
		 * them through the queue's bitmap when this was the queue's only socket. */
		prog_put(p->prog);
		u->ports--;
		close_socket(p, NULL);
		umem_put_ref(u, NULL);
		pthread_mutex_unlock(&ports_lock);
		free(p);
		errno = -err;
		return NULL;
	}
	pthread_mutex_unlock(&ports_lock);
	pr_debug("port %s:%u: %s, XDP %s, chunk %u, %s\n", ifname, queue,
		 umem_port__mode_str(p->mode), umem_port__xdp_mode_str(p->xdp_mode), p->chunk_size,
		 p->multi_buffer ? "multi-buffer" : "single-buffer");
	return p;

put_queue:
	if (!p->q->sockets)
		queue_release(p->q);
put_umem:
	u->ports--;
	umem_put_ref(u, NULL);
unlock:
	pthread_mutex_unlock(&ports_lock);
free_port:
	free(p);
fail:
	errno = -err;
	return NULL;
}

/* libbpf's and libxdp's messages (the default program, the socket) through ours meanwhile. */
struct umem_port *umem_port__create(struct umem_area *area, struct umem_pool *pool,
				    const char *ifname, uint32_t queue,
				    const struct umem_port_opts *opts)
{
	struct umem__lib_print saved;
	struct umem_port *p;
	int err;

	umem__lib_print_begin(&saved);
	p = port_create(area, pool, ifname, queue, opts);
	err = errno;
	umem__lib_print_end(&saved);
	errno = err;
	return p;
}

int umem_port__bind(struct umem_port *p)
{
	struct umem__lib_print saved;
	int err;

	if (!p || !p->pending) {
		pr_warn("port bind: %s\n", !p ? "NULL port" : "the port is bound already (bind is for "
			"a port created with UMEM_PORT_F_UNBOUND, once)");
		return -EINVAL;
	}
	umem__lib_print_begin(&saved);
	pthread_mutex_lock(&ports_lock);
	err = port_bind(p, p->pending);
	if (!err || p->xsk) { /* bound, if only in part: destroy undoes the rest */
		free(p->pending);
		free(p->pending_pin);
		p->pending = NULL;
		p->pending_pin = NULL;
	}
	pthread_mutex_unlock(&ports_lock);
	umem__lib_print_end(&saved);
	if (!err)
		pr_debug("port %s:%u: bound, %s, XDP %s\n", p->ifname, p->queue,
			 umem_port__mode_str(p->mode), umem_port__xdp_mode_str(p->xdp_mode));
	return err;
}

/* ---- destruction ---- */

/* Waits (bounded) for the queue's TX in flight to complete, kicking the kernel; then returns
 * what never left this port's TX ring. Returns buffers abandoned. */
int umem_port__tx_drain(struct umem_port *p, uint32_t timeout_ms)
{
	struct port_queue *q;
	uint32_t cons, prod;
	int unsent = 0;

	if (!p)
		return -EINVAL;
	if (!p->xsk) /* never bound: no ring */
		return 0;
	/* Once: the producer is the kernel's to read, it cannot be moved back, so after the
	 * take-back nothing may kick (the kernel could then send buffers the pool holds again)
	 * and a second call (destroy's) only collects completions, never puts these again. */
	q = p->q;
	for (uint32_t ms = 0; ms < timeout_ms; ms++) {
		if (!tx_ring_empty(p) && !p->tx_taken)
			umem__port_tx_kick(p);
		umem_port__complete(p);
		if (!atomic_load_explicit(&q->tx_outstanding, memory_order_relaxed))
			return 0;
		poll(NULL, 0, 1);
	}
	if (p->tx_taken || !p->tx_on)
		return 0;
	p->tx_taken = true;
	umem_port__complete(p);
	/* Copy mode publishes the TX consumer after each sendto(): entries past it were never
	 * read and are still ours (a socket whose device left never reads them). */
	cons = __atomic_load_n(p->tx.consumer, __ATOMIC_ACQUIRE);
	prod = *p->tx.producer;
	for (uint32_t i = cons; i != prod; i++) {
		const struct xdp_desc *d = xsk_ring_prod__tx_desc(&p->tx, i);

		unsent += !(d->options & XDP_PKT_CONTD);
		umem_pool__put(p->pool, d->addr);
	}
	tx_outstanding_add(q, -(uint64_t)(prod - cons));
	if (unsent)
		pr_warn("port %s:%u: closed with %d frames in the TX ring the kernel never read: "
			"not sent\n", p->ifname, p->queue, unsent);
	return unsent;
}

static uint32_t drain_tx(struct umem_port *p)
{
	struct port_queue *q = p->q;
	uint32_t left;

	umem_port__tx_drain(p, PORT_DRAIN_TIMEOUT_MS);
	left = (uint32_t)atomic_load_explicit(&q->tx_outstanding, memory_order_relaxed);
	if (left)
		pr_warn("port %s:%u: %u TX buffers never completed: abandoned\n", p->ifname, p->queue, left);
	return left;
}

/* Unread RX descriptors go back to the pool. */
static void drain_rx(struct umem_port *p)
{
	struct umem_desc d[64];
	uint64_t addrs[64];
	int n;

	while ((n = (int)umem__port_rx_take(p, d, 64)) > 0) {
		for (int i = 0; i < n; i++)
			addrs[i] = d[i].addr;
		umem_pool__put_bulk(p->pool, addrs, (uint32_t)n);
	}
}

/* An update of a map-in-map with an inner map makes the kernel wait for every running
 * non-sleepable BPF program before it returns (maybe_wait_bpf_programs(): synchronize_rcu()),
 * the kernel's BPF selftests use it to trigger a grace period (prog_tests/btf_map_in_map.c).
 * Needs the BPF privileges the default program needs anyway. */
static int grace_period_by_map_in_map(void)
{
	int inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "umem_rcu_inner", 4, 4, 1, NULL), outer, err;
	LIBBPF_OPTS(bpf_map_create_opts, mo, .inner_map_fd = inner);
	uint32_t key = 0;

	if (inner < 0)
		return -errno;
	outer = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "umem_rcu", 4, 4, 1, &mo);
	err = outer < 0 || bpf_map_update_elem(outer, &key, &inner, BPF_ANY) ? -errno : 0;
	if (outer >= 0)
		close(outer);
	close(inner);
	return err;
}

/* What must hold before the socket's RX ring is drained for the last time: no XDP program run
 * that looked the socket up in an XSKMAP before its removal is still in flight, else it could
 * still place a frame on the ring after the drain. XDP runs in NAPI (or the generic path) with
 * bottom halves off, an RCU read-side section, so one RCU grace period is that condition:
 * membarrier(MEMBARRIER_CMD_GLOBAL) is synchronize_rcu(); nohz_full kernels refuse it (EINVAL),
 * and the map-in-map update above waits for the same grace period. When neither is possible,
 * a frame delivered after the drain is not lost: its buffer keeps its in-kernel bit and comes
 * back when the queue's last socket closes. */
static void wait_for_xdp_runs(const struct umem_port *p)
{
	int err;

	if (!syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		return;
	err = grace_period_by_map_in_map();
	if (err)
		pr_debug("port %s:%u: no RCU grace period (membarrier refused, map-in-map: %s): a "
			 "frame delivered during destroy returns with the queue's last socket\n",
			 p->ifname, p->queue, strerror(-err));
	else
		pr_debug("port %s:%u: membarrier refused: RCU grace period through a map-in-map update\n",
			 p->ifname, p->queue);
}

/* Out of the default program's map (the program detached with the interface's last port) and
 * of the pinned one: no new frame is steered to the socket. */
static void port_unmap(struct umem_port *p)
{
	if (p->in_map)
		bpf_map_delete_elem(p->prog->map_fd, &p->queue);
	prog_put(p->prog);
	p->prog = NULL;
	p->in_map = false;
	if (p->xskmap_fd >= 0) {
		bpf_map_delete_elem(p->xskmap_fd, &p->queue);
		close(p->xskmap_fd);
		p->xskmap_fd = -1;
	}
}

/* Up to PORT_CLOSE_BATCH ports (NULL entries skipped): all out of their maps, one grace period
 * for all, each drained, then every socket closed at once. Returns the buffers abandoned. */
static uint32_t destroy_batch(struct umem_port *const *ports, uint32_t n)
{
	static struct port_closing cl; /* ports_lock held while it is used */
	struct port_umem *us[PORT_CLOSE_BATCH];
	bool owner[PORT_CLOSE_BATCH] = { false };
	const struct umem_port *any = NULL;
	uint32_t abandoned = 0, nu = 0;

	pthread_mutex_lock(&ports_lock);
	for (uint32_t i = 0; i < n; i++)
		if (ports[i]) {
			port_unmap(ports[i]);
			any = ports[i];
		}
	if (!any) {
		pthread_mutex_unlock(&ports_lock);
		return 0;
	}
	wait_for_xdp_runs(any);
	for (uint32_t i = 0; i < n; i++) {
		struct umem_port *p = ports[i];
		uint32_t k = 0;

		if (!p)
			continue;
		if (p->xsk) { /* a port never bound has no ring */
			drain_rx(p);
			abandoned += drain_tx(p);
		}
		p->u->ports--;
		owner[i] = p->u->owner == p;
		while (k < nu && us[k] != p->u)
			k++;
		if (k == nu)
			us[nu++] = p->u;
	}
	/* Owners last: libxdp deletes a UMEM only once the sockets sharing it are deleted. An
	 * owner whose area keeps other ports keeps its socket (the UMEM lives on its fd) and is
	 * closed with the area's last port (umem_put_ref). */
	for (uint32_t i = 0; i < n; i++) {
		if (ports[i] && !owner[i]) {
			close_socket(ports[i], &cl);
			port_free(ports[i]);
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		if (ports[i] && owner[i] && !ports[i]->u->ports) {
			close_socket(ports[i], &cl);
			port_free(ports[i]);
		}
	}
	for (uint32_t k = 0; k < nu; k++)
		umem_put_ref(us[k], &cl);
	closing_finish(&cl);
	pthread_mutex_unlock(&ports_lock);
	return abandoned;
}

int umem_port__destroy_bulk(struct umem_port *const *ports, uint32_t n)
{
	uint64_t abandoned = 0;

	if (!ports && n) {
		pr_warn("port destroy: NULL array of %u ports\n", n);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < n; i += PORT_CLOSE_BATCH)
		abandoned += destroy_batch(ports + i, n - i < PORT_CLOSE_BATCH ? n - i : PORT_CLOSE_BATCH);
	return abandoned > INT32_MAX ? INT32_MAX : (int)abandoned;
}

int umem_port__destroy(struct umem_port *p)
{
	return umem_port__destroy_bulk(&p, 1);
}

/* ---- accessors ---- */

int umem_port__fd(const struct umem_port *p)
{
	return p ? p->fd : -EINVAL;
}

uint64_t umem_port__tx_inflight(const struct umem_port *p)
{
	return p ? atomic_load_explicit(&p->q->tx_outstanding, memory_order_relaxed) : 0;
}

enum umem_port_mode umem_port__mode(const struct umem_port *p)
{
	return p->mode;
}

enum umem_port_xdp_mode umem_port__xdp_mode(const struct umem_port *p)
{
	return p->xdp_mode;
}

const char *umem_port__mode_str(enum umem_port_mode mode)
{
	return mode == UMEM_PORT_MODE_ZEROCOPY ? "zero-copy" : mode == UMEM_PORT_MODE_COPY ? "copy" : "?";
}

const char *umem_port__xdp_mode_str(enum umem_port_xdp_mode mode)
{
	switch (mode) {
	case UMEM_PORT_XDP_NATIVE:
		return "native";
	case UMEM_PORT_XDP_GENERIC:
		return "generic";
	case UMEM_PORT_XDP_EXTERNAL:
		return "external";
	case UMEM_PORT_XDP_NONE:
		return "none";
	}
	return "?";
}

const char *umem_port__ifname(const struct umem_port *p) { return p->ifname; }
int umem_port__ifindex(const struct umem_port *p) { return p->ifindex; }
uint32_t umem_port__queue(const struct umem_port *p) { return p->queue; }
struct umem_pool *umem_port__pool(const struct umem_port *p) { return p->pool; }
struct umem_area *umem_port__area(const struct umem_port *p) { return p->area; }
uint32_t umem_port__chunk_size(const struct umem_port *p) { return p->chunk_size; }
uint32_t umem_port__rx_frame_len(const struct umem_port *p) { return p->rx_frame_len; }
bool umem_port__multi_buffer(const struct umem_port *p) { return p->multi_buffer; }

int umem_port__stats(const struct umem_port *p, struct umem_port_stats *s)
{
	struct umem_port_stats out = { .sz = sizeof(out) };
	struct xdp_statistics xs = { 0 };
	socklen_t len = sizeof(xs);
	size_t sz;

	if (!p) {
		pr_warn("port stats: NULL port\n");
		return -EINVAL;
	}
	if (!umem__out_check(s, sizeof(size_t) + sizeof(uint64_t), "umem_port_stats", "port stats"))
		return -EINVAL;
#define PORT_COUNTER_COPY(name) out.name = PSTAT_GET(p, name);
	PORT_COUNTERS(PORT_COUNTER_COPY)
#undef PORT_COUNTER_COPY
	out.tx_inflight = umem_port__tx_inflight(p);
	if (!getsockopt(p->fd, SOL_XDP, XDP_STATISTICS, &xs, &len)) {
		out.rx_dropped = xs.rx_dropped;
		out.rx_invalid_descs = xs.rx_invalid_descs;
		out.tx_invalid_descs = xs.tx_invalid_descs;
		out.rx_ring_full = xs.rx_ring_full;
		out.rx_fill_ring_empty = xs.rx_fill_ring_empty_descs;
		out.tx_ring_empty = xs.tx_ring_empty_descs;
	}
	sz = s->sz < sizeof(out) ? s->sz : sizeof(out);
	memcpy((char *)s + sizeof(size_t), (char *)&out + sizeof(size_t), sz - sizeof(size_t));
	return 0;
}
