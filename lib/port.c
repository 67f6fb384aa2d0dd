/* SPDX-License-Identifier: MIT */
/*
 * AF_XDP ports over libxdp's xsk API.
 *
 * Three shared objects sit behind the ports, kept in registries guarded by one mutex (only
 * creation and destruction take it; the burst paths never do):
 *  - struct port_umem: an area registered as the UMEM. Its xsk_umem's fd is the first port's
 *    socket (libxdp's design), so that socket stays open until the area's last port is gone.
 *  - struct port_queue: one (netns, ifindex, queue) of a UMEM with its fill and completion
 *    rings, shared by every port bound there (the kernel shares them too).
 *  - struct port_prog: the default XDP program on one interface and its XSKMAP.
 *
 * Frame accounting. The kernel publishes its fill-ring consumer index lazily, so the ring
 * cannot tell which buffers the kernel still holds. Each queue keeps a bitmap instead: a bit
 * is set when a buffer goes on the fill ring and cleared when it comes back on an RX ring.
 * Once every socket of the queue is closed (unbinding waits for the driver: synchronize_net),
 * the buffers whose bits are still set are exactly those the kernel held, and go back to the
 * pool. TX is counted (queued - completed) per queue, since completions share a ring.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <linux/membarrier.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/xsk.h>
#include "internal.h"
#include <umem/port.h>
#include "xsk_redirect.skel.h"

/* Debian 12's uapi headers are 6.1: multi-buffer AF_XDP arrived in 6.6. */
#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)
#endif
#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET 70
#endif

_Static_assert(sizeof(struct umem_desc) == sizeof(struct xdp_desc), "umem_desc mirrors xdp_desc");
_Static_assert(UMEM_DESC_F_CONTD == XDP_PKT_CONTD, "UMEM_DESC_F_CONTD is XDP_PKT_CONTD");

#define PORT_REFILL_BATCH 64u      /* refill once this many fill slots are free: one bulk alloc */
#define PORT_COPY_KICKS 8u         /* copy mode sends 32 frames per sendto(): retries per burst */
#define PORT_DRAIN_TIMEOUT_MS 500  /* destroy waits this long for TX in flight to complete */
#define PORT_REBIND_TIMEOUT_MS 500 /* create retries a queue still held by a closed socket */

struct port_umem;

struct port_queue {
	struct xsk_ring_prod fill; /* libxdp keeps pointers to these two: never move them */
	struct xsk_ring_cons comp;
	struct port_queue *next;
	struct port_umem *umem;
	uint64_t netns;
	int ifindex;
	uint32_t queue;
	uint32_t sockets;        /* open sockets bound here (a destroyed UMEM owner included) */
	uint32_t bit_shift;      /* buffer address >> bit_shift indexes in_kernel */
	uint64_t *in_kernel;     /* buffers on the fill ring or held by the kernel for RX */
	/* Queued on a TX ring of this queue, not completed. Written by the driving thread only;
	 * atomic so that a stats reader elsewhere is not a data race. */
	_Atomic uint64_t tx_outstanding;
};

struct port_umem {
	struct port_umem *next;
	struct umem_area *area;
	struct xsk_umem *xsk;
	struct umem_port *owner; /* its socket is the UMEM's fd */
	struct port_queue *queues;
	uint32_t ports;          /* ports not destroyed */
	/* UMEM-wide settings, fixed by the first port. */
	uint32_t chunk_size, headroom, flags, zerocopy, fill_size, comp_size;
	bool unaligned;
};

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

/* Counters written by the driving thread only: relaxed load + store, atomic only so a stats
 * reader elsewhere is not a data race (the pool's owner-counter scheme). */
#define PORT_COUNTERS(X)                                                                      \
	X(rx_packets) X(rx_bytes) X(rx_descs) X(tx_packets) X(tx_bytes) X(tx_descs)            \
	X(tx_ring_full) X(tx_kicks) X(tx_kick_again) X(rx_kicks) X(completions) X(fill_added)  \
	X(fill_alloc_fail)
#define PORT_COUNTER_FIELD(name) _Atomic uint64_t name;
struct port_counters {
	PORT_COUNTERS(PORT_COUNTER_FIELD)
};
/* Bumped with the pools' UMEM__STAT (pool_fast.h): it compiles away with UMEM_STATS=OFF. */
#define PSTAT(p, field, n) UMEM__STAT(p, field, n)
#define PSTAT_GET(p, field) atomic_load_explicit(&(p)->st.field, memory_order_relaxed)

struct umem_port {
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;
	struct port_queue *q;
	struct port_umem *u;
	struct umem_pool *pool;
	struct umem_area *area;
	struct xsk_socket *xsk;
	struct port_prog *prog; /* NULL: the caller steers (UMEM_PORT_PROG_NONE) */
	int fd;
	int ifindex;
	uint32_t queue;
	uint32_t chunk_size;
	uint32_t rx_frame_len;
	uint64_t umem_size;
	bool unaligned, need_wakeup, busy_poll, multi_buffer;
	bool in_map;          /* our socket is the default program's entry for its queue */
	bool kick_pending;    /* the kernel deferred a TX kick: service() retries */
	int kick_errno;       /* last TX kick failure reported; 0 once kicks work again */
	bool fill_short;      /* the last refill found the pool empty (reported once per episode) */
	enum umem_port_mode mode;
	enum umem_port_xdp_mode xdp_mode;
	char ifname[IF_NAMESIZE];
	struct port_counters st;
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

int umem_port__queue_count(const char *ifname)
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

/* ---- frame accounting bitmap ---- */

static inline void bit_set(uint64_t *bm, uint64_t i)
{
	bm[i >> 6] |= 1ull << (i & 63);
}

/* Clears bit i; false when it was not set. */
static inline bool bit_clear(uint64_t *bm, uint64_t i)
{
	uint64_t m = 1ull << (i & 63), old = bm[i >> 6];

	bm[i >> 6] = old & ~m;
	return old & m;
}

/* RX descriptors carry the data address; the buffer the fill ring gave is its chunk (aligned)
 * or the address without the kernel's offset (unaligned: that is the fill address). */
static inline uint64_t rx_buffer(const struct umem_port *p, uint64_t raw)
{
	return p->unaligned ? xsk_umem__extract_addr(raw) : raw & ~(uint64_t)(p->chunk_size - 1);
}

/* ---- rings ---- */

/* Ring slots as uint64_t (libxdp's are __u64, unsigned long long). */
static inline uint64_t *fill_slot(struct port_queue *q, uint32_t idx)
{
	return (uint64_t *)xsk_ring_prod__fill_addr(&q->fill, idx);
}

static inline const uint64_t *comp_slot(const struct port_queue *q, uint32_t idx)
{
	return (const uint64_t *)xsk_ring_cons__comp_addr(&q->comp, idx);
}

static inline void tx_outstanding_add(struct port_queue *q, uint64_t n)
{
	atomic_store_explicit(&q->tx_outstanding,
			      atomic_load_explicit(&q->tx_outstanding, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

int umem_port__complete(struct umem_port *p)
{
	struct port_queue *q;
	uint32_t idx = 0, n, first;

	if (!p)
		return -EINVAL;
	q = p->q;
	n = xsk_ring_cons__peek(&q->comp, q->comp.size, &idx);
	if (!n)
		return 0;
	/* Put straight from the ring memory, in its (at most) two contiguous runs. */
	first = q->comp.size - (idx & q->comp.mask);
	if (first > n)
		first = n;
	umem_pool__put_bulk(p->pool, comp_slot(q, idx), first);
	if (n > first)
		umem_pool__put_bulk(p->pool, comp_slot(q, idx + first), n - first);
	xsk_ring_cons__release(&q->comp, n);
	tx_outstanding_add(q, -(uint64_t)n);
	PSTAT(p, completions, n);
	return (int)n;
}

/* Allocates up to n RX buffers into the fill ring at idx (which may wrap). */
static uint32_t fill_alloc(struct umem_port *p, uint32_t idx, uint32_t n)
{
	struct port_queue *q = p->q;
	uint32_t page_size = umem_area__page_size(p->area), got = 0;

	if (p->chunk_size * 2 > page_size) {
		/* One buffer per page: bulk-allocate into the ring itself, run by run. */
		while (got < n) {
			uint32_t at = (idx + got) & q->fill.mask;
			uint32_t run = q->fill.size - at < n - got ? q->fill.size - at : n - got;
			int k = umem_pool__alloc_bulk(p->pool, fill_slot(q, idx + got), run);

			if (k <= 0)
				break;
			got += (uint32_t)k;
			if ((uint32_t)k < run)
				break;
		}
	} else {
		for (; got < n; got++)
			if (umem_pool__alloc_frag(p->pool, p->chunk_size, fill_slot(q, idx + got), NULL))
				break;
	}
	for (uint32_t i = 0; i < got; i++)
		bit_set(q->in_kernel, *fill_slot(q, idx + i) >> q->bit_shift);
	return got;
}

static int refill(struct umem_port *p, uint32_t min_free)
{
	struct port_queue *q = p->q;
	uint32_t free = xsk_prod_nb_free(&q->fill, q->fill.size), idx = 0, got;

	if (free < min_free || !free)
		return 0;
	if (xsk_ring_prod__reserve(&q->fill, free, &idx) != free)
		return 0;
	got = fill_alloc(p, idx, free);
	/* Give back the slots the pool could not fill (libxdp has no producer cancel). */
	q->fill.cached_prod -= free - got;
	if (got)
		xsk_ring_prod__submit(&q->fill, got);
	PSTAT(p, fill_added, got);
	if (got < free) {
		PSTAT(p, fill_alloc_fail, 1);
		/* Once per episode: the pool stays empty for many bursts while the buffers are
		 * held elsewhere (a small area, a stalled TX port), and the kernel counts the
		 * frames it drops meanwhile (rx_fill_ring_empty). */
		if (!p->fill_short)
			pr_warn("port %s:%u: pool empty: fill ring short of %u buffers (the kernel drops "
				"frames once it runs dry; more pages or fewer buffers held fixes it)\n",
				p->ifname, p->queue, free - got);
		p->fill_short = true;
		if (!got)
			return -ENOMEM;
	} else if (p->fill_short) {
		p->fill_short = false;
		pr_info("port %s:%u: fill ring topped up again\n", p->ifname, p->queue);
	}
	return (int)got;
}

int umem_port__refill(struct umem_port *p)
{
	return p ? refill(p, 1) : -EINVAL;
}

static bool tx_ring_empty(const struct umem_port *p)
{
	return __atomic_load_n(p->tx.consumer, __ATOMIC_ACQUIRE) == *p->tx.producer;
}

static const char *kick_error_hint(int err)
{
	switch (err) {
	case ENETDOWN:
		return " (the interface is down: frames stay queued until it is up)";
	case ENXIO:
		return " (the socket is unbound: its interface was deleted; destroy the port)";
	default:
		return "";
	}
}

/* Wakes the kernel's TX path. Copy mode transmits synchronously, at most 32 frames per call
 * (EAGAIN: more left), so it is retried a few times, draining completions to make room; what
 * is left is retried by the next burst or service(). */
static void tx_kick(struct umem_port *p)
{
	uint32_t tries = p->mode == UMEM_PORT_MODE_ZEROCOPY ? 1 : PORT_COPY_KICKS;

	p->kick_pending = false;
	for (uint32_t i = 0; i < tries; i++) {
		PSTAT(p, tx_kicks, 1);
		if (sendto(p->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0) {
			if (umem_unlikely(p->kick_errno)) {
				pr_info("port %s:%u: TX kicks work again\n", p->ifname, p->queue);
				p->kick_errno = 0;
			}
			if (p->mode == UMEM_PORT_MODE_ZEROCOPY || tx_ring_empty(p))
				return;
			continue;
		}
		if (errno != EAGAIN && errno != EBUSY && errno != ENOBUFS) {
			/* Once per cause: a link that is down would otherwise log at packet rate.
			 * The frames stay queued; service() kicks again. */
			if (errno != p->kick_errno)
				pr_warn("port %s:%u: TX kick failed: %s%s\n", p->ifname, p->queue,
					strerror(errno), kick_error_hint(errno));
			p->kick_errno = errno;
			return;
		}
		umem_port__complete(p);
		if (tx_ring_empty(p))
			return;
	}
	p->kick_pending = true;
	PSTAT(p, tx_kick_again, 1);
}

static void rx_kick(struct umem_port *p)
{
	PSTAT(p, rx_kicks, 1);
	recvfrom(p->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
}

/* Takes up to n descriptors off the RX ring, whole frames only unless one frame alone is
 * longer than n. */
static uint32_t rx_take(struct umem_port *p, struct umem_desc *descs, uint32_t n)
{
	uint32_t idx = 0, avail, keep = 0, packets = 0;
	uint64_t bytes = 0;

	avail = xsk_ring_cons__peek(&p->rx, n, &idx);
	if (!avail)
		return 0;
	for (uint32_t i = 0; i < avail; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&p->rx, idx + i);

		descs[i].addr = p->unaligned ? xsk_umem__add_offset_to_addr(d->addr) : d->addr;
		descs[i].len = d->len;
		descs[i].options = d->options;
		if (!(d->options & XDP_PKT_CONTD))
			keep = i + 1;
	}
	if (!keep)
		keep = avail;
	xsk_ring_cons__cancel(&p->rx, avail - keep);
	for (uint32_t i = 0; i < keep; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&p->rx, idx + i);

		if (!bit_clear(p->q->in_kernel, rx_buffer(p, d->addr) >> p->q->bit_shift))
			umem__die("port %s:%u: RX descriptor 0x%llx names a buffer this queue never "
				  "gave the kernel", p->ifname, p->queue, (unsigned long long)d->addr);
		bytes += d->len;
		packets += !(d->options & XDP_PKT_CONTD);
	}
	xsk_ring_cons__release(&p->rx, keep);
	PSTAT(p, rx_descs, keep);
	PSTAT(p, rx_packets, packets);
	PSTAT(p, rx_bytes, bytes);
	return keep;
}

int umem_port__rx_burst(struct umem_port *p, struct umem_desc *descs, uint32_t n)
{
	uint32_t got;

	if (umem_unlikely(!p || (!descs && n)))
		return -EINVAL;
	got = rx_take(p, descs, n);
	/* An empty ring may mean the kernel waits for a wakeup (need_wakeup on the fill ring) or,
	 * with busy polling, that this thread is the one that drives the driver. */
	if (!got && (p->busy_poll || xsk_ring_prod__needs_wakeup(&p->q->fill)))
		rx_kick(p);
	refill(p, PORT_REFILL_BATCH);
	return (int)got;
}

/* NULL when the kernel will accept d, else why not. */
static inline const char *tx_desc_invalid(const struct umem_port *p, const struct umem_desc *d)
{
	if (umem_unlikely(!d->len))
		return "empty";
	if (umem_unlikely(d->addr >= p->umem_size || d->len > p->umem_size - d->addr))
		return "outside the UMEM";
	if (umem_unlikely(d->options & ~(uint32_t)XDP_PKT_CONTD))
		return "unknown options";
	if (umem_unlikely(d->options && !p->multi_buffer))
		return "a chain on a port without multi-buffer";
	if (umem_unlikely(!p->unaligned && (d->addr & (p->chunk_size - 1)) + d->len > p->chunk_size))
		return "crosses a chunk boundary";
	return NULL;
}

int umem_port__tx_burst(struct umem_port *p, const struct umem_desc *descs, uint32_t n)
{
	uint32_t idx = 0, room, m = 0, packets = 0;
	uint64_t bytes = 0;

	if (umem_unlikely(!p || (!descs && n)))
		return -EINVAL;
	if (!n)
		return 0;
	umem_port__complete(p);
	room = xsk_prod_nb_free(&p->tx, n);
	/* Queue whole frames only: end at the last frame boundary that fits. An invalid
	 * descriptor would be skipped by the kernel without a completion (a leak): refuse the
	 * burst instead. */
	for (uint32_t i = 0; i < n && i < room; i++) {
		const char *why = tx_desc_invalid(p, &descs[i]);

		if (umem_unlikely(why)) {
			pr_warn("port %s:%u: TX descriptor %u (addr 0x%llx, len %u, options 0x%x) is "
				"invalid (%s): nothing queued\n", p->ifname, p->queue, i,
				(unsigned long long)descs[i].addr, descs[i].len, descs[i].options, why);
			return -EINVAL;
		}
		if (!(descs[i].options & XDP_PKT_CONTD))
			m = i + 1;
	}
	if (m < n)
		PSTAT(p, tx_ring_full, room < n);
	if (m) {
		xsk_ring_prod__reserve(&p->tx, m, &idx);
		for (uint32_t i = 0; i < m; i++) {
			struct xdp_desc *d = xsk_ring_prod__tx_desc(&p->tx, idx + i);

			d->addr = descs[i].addr;
			d->len = descs[i].len;
			d->options = descs[i].options;
			bytes += descs[i].len;
			packets += !(descs[i].options & XDP_PKT_CONTD);
		}
		xsk_ring_prod__submit(&p->tx, m);
		tx_outstanding_add(p->q, m);
		PSTAT(p, tx_descs, m);
		PSTAT(p, tx_packets, packets);
		PSTAT(p, tx_bytes, bytes);
	}
	/* Kick on every burst that needs it, partial ones too: no stall at low rates. */
	if (m || p->kick_pending)
		if (!p->need_wakeup || xsk_ring_prod__needs_wakeup(&p->tx) || p->kick_pending)
			tx_kick(p);
	return (int)m;
}

int umem_port__service(struct umem_port *p)
{
	int done;

	if (!p)
		return -EINVAL;
	done = umem_port__complete(p);
	refill(p, PORT_REFILL_BATCH);
	if (p->kick_pending ||
	    (!tx_ring_empty(p) && (!p->need_wakeup || xsk_ring_prod__needs_wakeup(&p->tx))))
		tx_kick(p);
	return done;
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
	uint64_t granules;

	for (q = u->queues; q; q = q->next)
		if (q->netns == netns && q->ifindex == ifindex && q->queue == queue)
			return q;
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	/* One bit per possible RX buffer start: a chunk (aligned mode), a page (unaligned, one
	 * buffer per page) or a UMEM_FRAG_ALIGN granule (unaligned fragments). */
	uint32_t page_size = umem_area__page_size(u->area);
	q->bit_shift = (uint32_t)__builtin_ctz(!u->unaligned ? u->chunk_size :
					       u->chunk_size * 2 > page_size ? page_size : UMEM_FRAG_ALIGN);
	granules = (umem_area__size(u->area) >> q->bit_shift) + 1;
	q->in_kernel = calloc((granules + 63) / 64, sizeof(uint64_t));
	if (!q->in_kernel) {
		free(q);
		return NULL;
	}
	q->umem = u;
	q->netns = netns;
	q->ifindex = ifindex;
	q->queue = queue;
	q->next = u->queues;
	u->queues = q;
	return q;
}

/* The last socket of the queue is closed: whatever the kernel held for RX comes back. Through
 * the owners' return rings: the pool that filled them may already be destroyed. */
static void queue_release(struct port_queue *q)
{
	struct umem_area *area = q->umem->area;
	uint64_t words = ((umem_area__size(q->umem->area) >> q->bit_shift) + 1 + 63) / 64;
	uint64_t back[64];
	uint32_t nb = 0, total = 0;

	for (uint64_t w = 0; w < words; w++)
		for (uint64_t bits = q->in_kernel[w]; bits; bits &= bits - 1) {
			back[nb++] = ((w << 6) + (uint64_t)__builtin_ctzll(bits)) << q->bit_shift;
			if (nb == 64) {
				umem_put_bulk(area, back, nb);
				total += nb;
				nb = 0;
			}
		}
	umem_put_bulk(area, back, nb);
	total += nb;
	pr_debug("queue %d:%u: %u RX buffers returned from the kernel\n", q->ifindex, q->queue, total);
	for (struct port_queue **pp = &q->umem->queues; *pp; pp = &(*pp)->next)
		if (*pp == q) {
			*pp = q->next;
			break;
		}
	free(q->in_kernel);
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

static int attach_link(struct port_prog *g, uint32_t flags)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = flags);
	int fd = bpf_link_create(bpf_program__fd(g->skel->progs.xsk_redirect), g->ifindex, BPF_XDP, &lo);

	return fd < 0 ? -errno : fd;
}

/* The default program on the interface, loaded and attached by the first port there. */
static struct port_prog *prog_get(const char *ifname, int ifindex, uint64_t netns, uint32_t queue,
				  uint32_t attach, int *errp)
{
	struct port_prog *g;
	uint32_t cur, max, entries, id = 0;
	int err, fd;

	for (g = progs; g; g = g->next)
		if (g->netns == netns && g->ifindex == ifindex) {
			g->users++;
			return g;
		}
	if (!bpf_xdp_query_id(ifindex, 0, &id) && id) {
		pr_warn("port %s:%u: the interface already has XDP program id %u attached: detach it "
			"(ip link set dev %s xdp off) or steer with it (UMEM_PORT_PROG_NONE)\n",
			ifname, queue, id, ifname);
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
		pr_warn("port %s:%u: cannot load the XDP program: %s\n", ifname, queue, strerror(-err));
		goto destroy_skel;
	}
	g->ifindex = ifindex;
	g->netns = netns;
	g->map_fd = bpf_map__fd(g->skel->maps.xsks_map);
	fd = -EOPNOTSUPP;
	if (attach != UMEM_PORT_ATTACH_GENERIC) {
		fd = attach_link(g, XDP_FLAGS_DRV_MODE);
		g->mode = UMEM_PORT_XDP_NATIVE;
		if (fd < 0 && attach == UMEM_PORT_ATTACH_AUTO && fd != -EBUSY && fd != -EEXIST)
			pr_info("port %s:%u: native XDP refused (%s): using generic mode\n", ifname,
				queue, strerror(-fd));
	}
	if (fd < 0 && attach != UMEM_PORT_ATTACH_NATIVE && fd != -EBUSY && fd != -EEXIST) {
		fd = attach_link(g, XDP_FLAGS_SKB_MODE);
		g->mode = UMEM_PORT_XDP_GENERIC;
	}
	if (fd < 0) {
		err = fd;
		pr_warn("port %s:%u: cannot attach the XDP program: %s\n", ifname, queue, strerror(-err));
		goto destroy_skel;
	}
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

struct port_cfg {
	uint32_t rx_size, tx_size, fill_size, comp_size, headroom, chunk_size, flags, zerocopy;
	uint32_t xdp_prog, xdp_attach, busy_poll_usecs, busy_poll_budget;
	bool unaligned;
	bool fill_given, comp_given; /* else inherited from the UMEM's first port */
};

static int read_opts(struct umem_port *p, const struct umem_port_opts *opts, struct port_cfg *c)
{
	uint32_t area_chunk = umem_area__chunk_size(p->area), area_page = umem_area__page_size(p->area);
	/* AF_XDP chunks are at most one kernel page (8 KiB is refused even on hugepages). */
	uint32_t kernel_page = (uint32_t)sysconf(_SC_PAGESIZE);

	if (!OPTS_VALID(opts)) {
		pr_warn("port %s:%u: bad opts size\n", p->ifname, p->queue);
		return -EINVAL;
	}
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
	c->unaligned = !area_chunk;
	if (!is_pow2(c->rx_size) || !is_pow2(c->tx_size) || !is_pow2(c->fill_size) ||
	    !is_pow2(c->comp_size)) {
		pr_warn("port %s:%u: ring sizes must be powers of two (rx %u tx %u fill %u comp %u)\n",
			p->ifname, p->queue, c->rx_size, c->tx_size, c->fill_size, c->comp_size);
		return -EINVAL;
	}
	if (c->flags & ~(uint32_t)(UMEM_PORT_F_NO_NEED_WAKEUP | UMEM_PORT_F_MULTI_BUFFER) ||
	    c->zerocopy > UMEM_PORT_ZC_OFF || c->xdp_prog > UMEM_PORT_PROG_NONE ||
	    c->xdp_attach > UMEM_PORT_ATTACH_GENERIC) {
		pr_warn("port %s:%u: unknown flags or modes in opts\n", p->ifname, p->queue);
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
	else if (c->flags != u->flags)
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

static void explain_bind_error(const struct umem_port *p, int err, const struct port_cfg *c)
{
	const char *why;

	switch (err) {
	case -EOPNOTSUPP:
		why = c->zerocopy == UMEM_PORT_ZC_REQUIRE ? "zero-copy required but the driver does "
			"not support it (copy mode: zerocopy = UMEM_PORT_ZC_AUTO or _OFF)"
			: "the device does not support AF_XDP in the requested mode";
		break;
	case -EBUSY:
		why = "the queue is already bound by an AF_XDP socket outside this UMEM";
		break;
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

	if (!u->xsk) {
		struct xsk_umem_config uc = {
			.fill_size = c->fill_size,
			.comp_size = c->comp_size,
			.frame_size = c->chunk_size,
			.frame_headroom = c->headroom,
			.flags = c->unaligned ? XDP_UMEM_UNALIGNED_CHUNK_FLAG : 0,
		};

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
	}
	if (!(c->flags & UMEM_PORT_F_NO_NEED_WAKEUP))
		sc.bind_flags |= XDP_USE_NEED_WAKEUP;
	if (c->flags & UMEM_PORT_F_MULTI_BUFFER)
		sc.bind_flags |= XDP_USE_SG;
	if (c->zerocopy == UMEM_PORT_ZC_REQUIRE)
		sc.bind_flags |= XDP_ZEROCOPY;
	else if (c->zerocopy == UMEM_PORT_ZC_OFF)
		sc.bind_flags |= XDP_COPY;
	err = xsk_socket__create_shared(&p->xsk, p->ifname, p->queue, u->xsk, &p->rx, &p->tx,
					&q->fill, &q->comp, &sc);
	if (err) {
		if (last_try || err != -EBUSY)
			explain_bind_error(p, err, c);
		p->xsk = NULL;
		if (u->owner == p) {
			xsk_umem__delete(u->xsk);
			u->xsk = NULL;
			u->owner = NULL;
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

/* A closed socket releases its (device, queue) from a kernel work item (xp_release_deferred),
 * so a queue just freed by a destroyed port can still be busy for a moment: retry a while. */
static int open_socket(struct umem_port *p, const struct port_cfg *c)
{
	int err;

	for (int ms = 0;; ms += 5) {
		bool last = ms >= PORT_REBIND_TIMEOUT_MS;

		err = open_socket_once(p, c, last);
		if (err != -EBUSY || last)
			return err;
		poll(NULL, 0, 5);
	}
}

static void query_mode(struct umem_port *p, const struct port_cfg *c)
{
	struct xdp_options xo = { 0 };
	socklen_t len = sizeof(xo);

	p->mode = !getsockopt(p->fd, SOL_XDP, XDP_OPTIONS, &xo, &len) &&
			  (xo.flags & XDP_OPTIONS_ZEROCOPY) ? UMEM_PORT_MODE_ZEROCOPY : UMEM_PORT_MODE_COPY;
	if (p->mode == UMEM_PORT_MODE_COPY && c->zerocopy == UMEM_PORT_ZC_AUTO && p->u->owner == p)
		pr_info("port %s:%u: copy mode (the driver has no AF_XDP zero-copy support)\n",
			p->ifname, p->queue);
}

/* Closes the port's socket; the UMEM owner's socket is the UMEM's fd and closes with it. */
static void close_socket(struct umem_port *p)
{
	struct port_umem *u = p->u;
	struct port_queue *q = p->q;

	xsk_socket__delete(p->xsk);
	p->xsk = NULL;
	if (u->owner == p) {
		xsk_umem__delete(u->xsk);
		u->xsk = NULL;
		u->owner = NULL;
	}
	if (!--q->sockets)
		queue_release(q);
}

static void umem_put_ref(struct port_umem *u)
{
	struct umem_port *owner = u->owner;

	if (u->ports)
		return;
	/* The owner was destroyed earlier and kept only for its socket: close it now. */
	if (owner) {
		close_socket(owner);
		free(owner);
	}
	umem_unlink(u);
	free(u);
}

struct umem_port *umem_port__create(struct umem_area *area, struct umem_pool *pool,
				    const char *ifname, uint32_t queue,
				    const struct umem_port_opts *opts)
{
	struct port_cfg c;
	struct umem_port *p;
	struct port_umem *u;
	uint64_t netns;
	uint32_t nq, maxq;
	int err = -EINVAL;

	if (!area || !pool || !ifname || umem_pool__area(pool) != area) {
		pr_warn("port: area, pool (of that area) and interface name are required\n");
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
	p->umem_size = umem_area__size(area);
	netns = current_netns();

	pthread_mutex_lock(&ports_lock);
	u = umem_find(area);
	if (u) {
		err = check_umem_settings(p, u, &c);
		if (err)
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
		u->flags = c.flags;
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
	err = open_socket(p, &c);
	if (err)
		goto put_queue;
	query_mode(p, &c);
	err = set_busy_poll(p, &c);
	if (err)
		goto close_sock;
	/* Buffers first, then the program: nothing arrives before the kernel has somewhere to put
	 * it. The queue's first socket sees an empty fill ring. */
	if (refill(p, 1) < 0 && !(p->q->fill.cached_prod - __atomic_load_n(p->q->fill.consumer,
									   __ATOMIC_ACQUIRE))) {
		pr_warn("port %s:%u: the pool has no buffers for the fill ring\n", ifname, queue);
		err = -ENOMEM;
		goto close_sock;
	}
	if (c.xdp_prog == UMEM_PORT_PROG_DEFAULT) {
		p->prog = prog_get(ifname, p->ifindex, netns, queue, c.xdp_attach, &err);
		if (!p->prog)
			goto close_sock;
		p->xdp_mode = p->prog->mode;
		/* One socket per queue in the default program; later ones on the same queue only
		 * transmit through it (the steering program can spread a queue over several). */
		if (!bpf_map_update_elem(p->prog->map_fd, &queue, &p->fd, BPF_NOEXIST))
			p->in_map = true;
		else if (errno == EEXIST)
			pr_info("port %s:%u: the queue already delivers to another port: this one "
				"receives nothing through the default program\n", ifname, queue);
		else {
			err = -errno;
			pr_warn("port %s:%u: cannot insert the socket into the XSKMAP: %s\n", ifname,
				queue, strerror(-err));
			goto put_prog;
		}
	}
	pthread_mutex_unlock(&ports_lock);
	pr_debug("port %s:%u: %s, XDP %s, chunk %u, %s\n", ifname, queue,
		 umem_port__mode_str(p->mode), umem_port__xdp_mode_str(p->xdp_mode), p->chunk_size,
		 p->multi_buffer ? "multi-buffer" : "single-buffer");
	return p;

put_prog:
	prog_put(p->prog);
close_sock:
	/* The socket never held traffic, but the fill ring has buffers: close_socket returns them
	 * through the queue's bitmap when this was the queue's only socket. */
	u->ports--;
	close_socket(p);
	umem_put_ref(u);
	pthread_mutex_unlock(&ports_lock);
	free(p);
	errno = -err;
	return NULL;
put_queue:
	if (!p->q->sockets)
		queue_release(p->q);
put_umem:
	u->ports--;
	umem_put_ref(u);
unlock:
	pthread_mutex_unlock(&ports_lock);
free_port:
	free(p);
fail:
	errno = -err;
	return NULL;
}

/* ---- destruction ---- */

/* Waits (bounded) for the queue's TX in flight to complete, kicking the kernel; then returns
 * what never left this port's TX ring. Returns buffers abandoned. */
static uint32_t drain_tx(struct umem_port *p)
{
	struct port_queue *q = p->q;
	uint32_t cons, prod, left;

	for (int ms = 0; ms < PORT_DRAIN_TIMEOUT_MS; ms++) {
		if (!tx_ring_empty(p))
			tx_kick(p);
		umem_port__complete(p);
		if (!atomic_load_explicit(&q->tx_outstanding, memory_order_relaxed))
			return 0;
		poll(NULL, 0, 1);
	}
	/* Copy mode publishes the TX consumer after each sendto(): entries past it were never
	 * read and are still ours. */
	cons = __atomic_load_n(p->tx.consumer, __ATOMIC_ACQUIRE);
	prod = *p->tx.producer;
	for (uint32_t i = cons; i != prod; i++)
		umem_pool__put(p->pool, xsk_ring_prod__tx_desc(&p->tx, i)->addr);
	tx_outstanding_add(q, -(uint64_t)(prod - cons));
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

	while ((n = (int)rx_take(p, d, 64)) > 0) {
		for (int i = 0; i < n; i++)
			addrs[i] = d[i].addr;
		umem_pool__put_bulk(p->pool, addrs, (uint32_t)n);
	}
}

/* An RCU grace period: after it no XDP program run that could still see the socket in an
 * XSKMAP is in flight (NAPI runs are RCU read-side sections). */
static void wait_for_xdp_runs(void)
{
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		poll(NULL, 0, 10); /* nohz_full kernels refuse it: a generous pause instead */
}

int umem_port__destroy(struct umem_port *p)
{
	struct port_umem *u;
	uint32_t abandoned;

	if (!p)
		return 0;
	pthread_mutex_lock(&ports_lock);
	u = p->u;
	if (p->in_map)
		bpf_map_delete_elem(p->prog->map_fd, &p->queue);
	prog_put(p->prog);
	p->prog = NULL;
	p->in_map = false;
	wait_for_xdp_runs();
	drain_rx(p);
	abandoned = drain_tx(p);
	u->ports--;
	if (u->owner == p && u->ports) {
		/* The UMEM lives on this socket's fd: close it with the area's last port. Its fill
		 * ring stays with the queue (and keeps feeding other sockets bound there). */
		pthread_mutex_unlock(&ports_lock);
		return (int)abandoned;
	}
	close_socket(p);
	umem_put_ref(u);
	pthread_mutex_unlock(&ports_lock);
	free(p);
	return (int)abandoned;
}

/* ---- accessors ---- */

int umem_port__fd(const struct umem_port *p)
{
	return p ? p->fd : -EINVAL;
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

	if (!p || !s || s->sz < sizeof(size_t))
		return -EINVAL;
#define PORT_COUNTER_COPY(name) out.name = PSTAT_GET(p, name);
	PORT_COUNTERS(PORT_COUNTER_COPY)
#undef PORT_COUNTER_COPY
	out.tx_inflight = atomic_load_explicit(&p->q->tx_outstanding, memory_order_relaxed);
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
