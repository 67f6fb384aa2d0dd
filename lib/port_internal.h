/* SPDX-License-Identifier: MIT */
/*
 * Private to the port: the objects port.c (lifecycle, registries, option checks) and
 * port_data.c (the data path, the only hot port code) share. Never installed.
 *
 * Three shared objects sit behind the ports, kept in registries guarded by one mutex (only
 * creation and destruction take it; the burst paths never do):
 *  - struct port_umem: an area registered as the UMEM. Its xsk_umem's fd is the first port's
 *    socket (libxdp's design), so that socket stays open until the area's last port is gone.
 *  - struct port_queue: one (netns, ifindex, queue) of a UMEM with its fill and completion
 *    rings, shared by every port bound there (the kernel shares them too).
 *  - struct port_prog: the default XDP program on one interface and its XSKMAP (port.c).
 *
 * Frame accounting. The kernel publishes its fill-ring consumer index lazily, so the ring
 * cannot tell which buffers the kernel still holds. Each queue keeps a bitmap instead: a bit
 * is set when a buffer goes on the fill ring and cleared when it comes back on an RX ring.
 * Once every socket of the queue is closed (unbinding waits for the driver: synchronize_net),
 * the buffers whose bits are still set are exactly those the kernel held, and go back to the
 * pool. TX is counted (queued - completed) per queue, since completions share a ring.
 */
#ifndef UMEM_PORT_INTERNAL_H
#define UMEM_PORT_INTERNAL_H

#include <net/if.h>
#include <stdatomic.h>
#include <xdp/xsk.h>
#include <umem/port.h>
#include "internal.h"

/* Debian 12's uapi headers are 6.1: multi-buffer AF_XDP arrived in 6.6. */
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)
#endif

#define PORT_REFILL_BATCH 64u      /* refill once this many fill slots are free: one bulk alloc */
#define PORT_COPY_KICKS 8u         /* copy mode sends 32 frames per sendto(): retries per burst */
#define PORT_XDP_MAX_TX_SKB_BUDGET 9 /* SOL_XDP option, Linux 6.17+: frames per copy-mode sendto() */
#define PORT_TX_SKB_BUDGET 256u    /* what ports ask for (capped by the TX ring) */
/* Flags the kernel applies to the whole UMEM (the first port's bind) and flags of one port. */
#define PORT_UMEM_FLAGS (UMEM_PORT_F_NO_NEED_WAKEUP | UMEM_PORT_F_MULTI_BUFFER)
#define PORT_OWN_FLAGS (UMEM_PORT_F_TX_ONLY | UMEM_PORT_F_RX_ONLY)

struct port_umem;
struct port_prog;
struct port_cfg;

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
	struct port_cfg *pending; /* UMEM_PORT_F_UNBOUND: the options umem_port__bind uses; NULL: bound */
	char *pending_pin;        /* pending's xskmap_pin, copied */
	int xskmap_fd;          /* umem_port_opts.xskmap_pin's map, holding our socket; -1: none */
	int fd;
	int ifindex;
	uint32_t queue;
	uint32_t chunk_size;
	uint32_t rx_frame_len;
	uint64_t umem_size;
	bool unaligned, need_wakeup, busy_poll, multi_buffer;
	bool rx_on, tx_on;    /* it has an RX ring (and fills), a TX ring (UMEM_PORT_F_*_ONLY) */
	bool in_map;          /* our socket is the default program's entry for its queue */
	bool kick_pending;    /* the kernel deferred a TX kick: service() retries */
	int kick_errno;       /* last TX kick failure reported; 0 once kicks work again */
	bool tx_invalid_reported; /* an invalid TX burst was reported; cleared by a valid one */
	bool tx_taken;        /* umem_port__tx_drain took the unread TX entries back (once) */
	bool fill_short;      /* the last refill found the pool empty (an episode) */
	bool fill_reported;   /* this episode was reported (so its end is too) */
	uint32_t fill_episodes; /* episodes since the last report */
	uint64_t fill_logged_ns; /* CLOCK_MONOTONIC_COARSE of the last report, 0 none yet */
	enum umem_port_mode mode;
	enum umem_port_xdp_mode xdp_mode;
	char ifname[IF_NAMESIZE];
	struct port_counters st;
};

/* Asks the kernel to send up to want frames per copy-mode sendto() on the XDP socket fd
 * (XDP_MAX_TX_SKB_BUDGET, Linux 6.17+; 32..TX ring size): want, or -errno when refused
 * (ENOPROTOOPT before 6.17). */
UMEM_PRIVATE int umem__port_tx_budget(int fd, uint32_t want);

/* ---- port_data.c ---- */

static inline void tx_outstanding_add(struct port_queue *q, uint64_t n)
{
	atomic_store_explicit(&q->tx_outstanding,
			      atomic_load_explicit(&q->tx_outstanding, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

static inline bool tx_ring_empty(const struct umem_port *p)
{
	return !p->tx_on || __atomic_load_n(p->tx.consumer, __ATOMIC_ACQUIRE) == *p->tx.producer;
}

/* Sizes and allocates the queue's in-kernel bitmap for its UMEM (q->umem set): 0 or -ENOMEM. */
UMEM_PRIVATE int umem__queue_bitmap_init(struct port_queue *q);
/* The queue's last socket is closed: every buffer the kernel held for RX goes back to the area
 * (through the owners' return rings: the pool that filled them may already be destroyed), and
 * the bitmap is freed. Returns how many. */
UMEM_PRIVATE uint32_t umem__queue_return_held(struct port_queue *q);
/* Tops the fill ring up once at least min_free slots are free: buffers added, or -ENOMEM when
 * the pool had none. */
UMEM_PRIVATE int umem__port_refill(struct umem_port *p, uint32_t min_free);
/* Takes up to n descriptors off the RX ring, whole frames only unless one frame alone is
 * longer than n. */
UMEM_PRIVATE uint32_t umem__port_rx_take(struct umem_port *p, struct umem_desc *descs, uint32_t n);
UMEM_PRIVATE void umem__port_tx_kick(struct umem_port *p);

#endif
