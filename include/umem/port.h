/* SPDX-License-Identifier: MIT */
/*
 * libumem ports: AF_XDP sockets whose buffers come from umem pools.
 *
 * A port is one AF_XDP socket bound to (interface, queue). The area is the UMEM: the first port
 * created on an area registers it with the kernel (its socket owns the UMEM) and every further
 * port on that area shares it (XDP_SHARED_UMEM), so a frame received on one port can be
 * transmitted on any other without a copy. Each distinct (interface, queue) gets its own fill
 * and completion ring; several ports on one (interface, queue) share that pair.
 *
 * Buffers:
 *  - RX buffers are chunk-sized fragments of the port's pool (aligned mode: chunk_size of the
 *    area, 2 KiB or 4 KiB; unaligned mode: opts.chunk_size). The fill ring is kept topped up
 *    from the pool in bulk by rx_burst/refill/service.
 *  - A descriptor returned by rx_burst hands its buffer to the caller, who must either put it
 *    (umem_pool__put/put_bulk) or pass it to tx_burst of any port on the same area.
 *  - tx_burst takes ownership of the descriptors it queues. Their completions are returned with
 *    umem_pool__put_bulk on the port's pool, which is reference-aware: to send one frame on k
 *    ports, take k - 1 extra references (umem_pool__ref) and queue it on all k; the page is
 *    recycled after its last completion.
 *  - Addresses are plain UMEM offsets everywhere, also in unaligned mode (the kernel's
 *    offset-in-high-bits encoding is resolved by rx_burst).
 *
 * Threading: a port is driven by one thread, which must be the owner of the port's pool (the
 * completion drain puts straight into that pool's cache). Ports sharing one (interface, queue)
 * share its fill and completion rings, so they must be driven by the same thread. Different
 * ports may be driven by different threads. Creation and destruction are serialized internally
 * and may happen on any thread.
 *
 * UMEM-wide settings (headroom, unaligned chunk size, need_wakeup, multi-buffer, zero-copy
 * policy, fill and completion ring sizes) are fixed by the first port on an area; later ports
 * must pass the same values (or 0 for the ring sizes: inherited) or get -EINVAL naming the
 * field (the kernel applies the owner's bind flags to shared sockets).
 *
 * Errors: constructors return NULL and set errno, other functions return negative errno.
 * A failed creation leaves nothing behind (no socket, no attached program, no map entry).
 */
#ifndef UMEM_PORT_H
#define UMEM_PORT_H

#include <stdbool.h>
#include <umem/pool.h>

#ifdef __cplusplus
extern "C" {
#endif

struct umem_port;

/* One buffer of a frame: exactly the layout of the kernel's struct xdp_desc, so descriptors
 * are copied between rings and callers without conversion. */
struct umem_desc {
	uint64_t addr;    /* UMEM offset of the first byte of data */
	uint32_t len;     /* bytes of data at addr */
	uint32_t options; /* UMEM_DESC_F_* */
};

/* More buffers of the same frame follow (multi-buffer chain; the kernel's XDP_PKT_CONTD).
 * The last descriptor of a frame has it clear. */
#define UMEM_DESC_F_CONTD (1u << 0)

/* Ring defaults: the fill ring is twice the RX ring so the kernel never starves while the
 * application holds a full RX ring's worth of frames (a lesson AF_XDP users learn the hard way). */
#define UMEM_PORT_RX_SIZE_DEFAULT 2048u
#define UMEM_PORT_TX_SIZE_DEFAULT 2048u
#define UMEM_PORT_BUSY_POLL_BUDGET_DEFAULT 64u

enum umem_port_flags {
	/* Disable need_wakeup (on by default: the kernel tells us when a kick is needed, which
	 * saves a syscall per burst). UMEM-wide. */
	UMEM_PORT_F_NO_NEED_WAKEUP = 1u << 0,
	/* Multi-buffer (XDP_USE_SG): frames larger than a chunk arrive and leave as descriptor
	 * chains linked by UMEM_DESC_F_CONTD. Needs a frags-aware XDP program (the default
	 * program is). UMEM-wide. Without it, frames larger than a chunk are dropped. */
	UMEM_PORT_F_MULTI_BUFFER = 1u << 1,
	/* Transmit only (a port that only sends, e.g. a mirror's outputs): no RX ring, no buffers
	 * put on the fill ring for it, no XDP program (xdp_prog is not used); rx_burst answers
	 * -EOPNOTSUPP. The kernel still wants a fill ring when a UMEM is first bound to an
	 * (interface, queue): that ring is created (a few KiB of ring memory, no UMEM pages) and
	 * left empty. Per port. */
	UMEM_PORT_F_TX_ONLY = 1u << 2,
	/* Receive only: no TX ring (tx_burst answers -EOPNOTSUPP); the completion ring the kernel
	 * wants at bind stays empty. Per port. */
	UMEM_PORT_F_RX_ONLY = 1u << 3,
	/* Created unbound: create registers the area as UMEM (it pins every page of the area:
	 * milliseconds for tens of MiB) and binds nothing; umem_port__bind() does the rest. For a
	 * restart that takes over queues another process is about to release: the registration
	 * done before, only the bind after. An area's first port only (EINVAL otherwise); until it
	 * is bound, its area takes no other port (EBUSY). Per port. */
	UMEM_PORT_F_UNBOUND = 1u << 4,
};

/* Zero-copy policy (UMEM-wide). */
enum umem_port_zerocopy {
	UMEM_PORT_ZC_AUTO = 0, /* zero-copy when the driver supports it, else copy mode (notice) */
	UMEM_PORT_ZC_REQUIRE,  /* zero-copy or fail with -EOPNOTSUPP */
	UMEM_PORT_ZC_OFF,      /* copy mode */
};

/* Which XDP program steers the queue's traffic into the socket. */
enum umem_port_xdp_prog {
	/* libumem's minimal program (bpf/xsk_redirect.bpf.c): redirects each frame to the socket
	 * of its RX queue, XDP_PASS when that queue has none. One program per interface, shared
	 * by all ports on it, attached through a bpf_link (detached when the last port on the
	 * interface is destroyed, or when the process dies). Only the first port bound with RX on
	 * a queue receives through it. */
	UMEM_PORT_PROG_DEFAULT = 0,
	/* Attach nothing: the caller steers frames itself, e.g. with the steering program
	 * (umem_steer__set_socket(steer, index, umem_port__fd(port))). The kernel drops a closed
	 * socket from every XSKMAP and destroy recovers every buffer either way; removing the
	 * socket from the map first just stops traffic to it before the teardown. */
	UMEM_PORT_PROG_NONE,
};

/* How the default program is attached (the same choice as umem_steer_opts.mode). AUTO falls
 * back to generic mode after any native refusal except EBUSY/EEXIST (another program holds
 * the interface), with a notice naming the native error; a failure in both modes names both. */
enum umem_port_xdp_attach {
	UMEM_PORT_ATTACH_AUTO = 0, /* native (driver) mode, generic (skb) mode with a notice */
	UMEM_PORT_ATTACH_NATIVE,   /* native or fail */
	UMEM_PORT_ATTACH_GENERIC,  /* generic (skb) mode */
};

/* The wait between two binds of a busy queue (umem_port_opts.rebind_wait): arg is
 * rebind_wait_arg, ms how long to wait before the next bind. Called on the creating thread with
 * the library's port lock held: it must not create or destroy ports. Returns 0 to bind again, or
 * a negative errno that ends the wait (create fails with it). */
typedef int (*umem_port_wait_fn)(void *arg, uint32_t ms);

struct umem_port_opts {
	size_t sz;           /* sizeof(struct umem_port_opts) */
	uint32_t rx_size;    /* RX ring: power of two; 0 = UMEM_PORT_RX_SIZE_DEFAULT */
	uint32_t tx_size;    /* TX ring: power of two; 0 = UMEM_PORT_TX_SIZE_DEFAULT */
	/* Fill ring of each (interface, queue): power of two >= 2 * rx_size; 0 = 2 * rx_size
	 * for the area's first port, the first port's value for later ones. Smaller than
	 * 2 * rx_size is refused (-EINVAL). UMEM-wide (libxdp sizes every queue's rings alike). */
	uint32_t fill_size;
	/* Completion ring: power of two; 0 = tx_size (first port) or inherited. UMEM-wide. */
	uint32_t comp_size;
	/* Bytes reserved in front of each RX frame, in addition to the kernel's fixed
	 * XDP_PACKET_HEADROOM (256). UMEM-wide. */
	uint32_t headroom;
	/* Unaligned mode only (area created with chunk_size 0): the AF_XDP chunk, any size from
	 * 2048 to the kernel's page size (4096 on x86), e.g. 3000, and at most the area's page;
	 * 0 = the smaller of the two pages. Must be 0 or the area's chunk size in aligned mode.
	 * UMEM-wide. */
	uint32_t chunk_size;
	uint32_t flags;      /* enum umem_port_flags */
	uint32_t zerocopy;   /* enum umem_port_zerocopy */
	uint32_t xdp_prog;   /* enum umem_port_xdp_prog */
	uint32_t xdp_attach; /* enum umem_port_xdp_attach */
	/* Busy polling: when busy_poll_usecs > 0, sets SO_PREFER_BUSY_POLL, SO_BUSY_POLL =
	 * busy_poll_usecs and SO_BUSY_POLL_BUDGET = busy_poll_budget (0 = 64), and rx_burst
	 * drives the driver with a recvfrom() when the RX ring is empty. Pair with the
	 * interface's napi_defer_hard_irqs / gro_flush_timeout for the full effect. */
	uint32_t busy_poll_usecs;
	uint32_t busy_poll_budget;
	/* A queue whose socket was just closed answers EBUSY until the kernel's deferred release
	 * (xp_release_deferred) has run, over a second on a loaded host: create binds again every
	 * 5 ms for up to 5 s, says after 500 ms that it waits, and then fails with EBUSY. Set, this
	 * does each 5 ms wait instead of a sleep, for a caller that holds other work up while it
	 * creates (xdp-fwd lets its parked workers run meanwhile); NULL: a sleep. */
	umem_port_wait_fn rebind_wait;
	void *rebind_wait_arg;
	/* Path of an XSKMAP pinned on a bpffs by a program someone else attached (the steering
	 * program's DIR/IFNAME/steer_xsks from `umem-steer attach --pin`, a device plugin's map):
	 * the port attaches no program (as UMEM_PORT_PROG_NONE) and puts its socket in that map at
	 * the index of its queue, and takes it out at destroy. Opening the pin needs its file
	 * permissions, no capability (from kernel 6.5). Create fails with ENOENT (no such pin),
	 * EACCES, or EINVAL (not an XSKMAP, or the queue beyond its entries). NULL: not used. */
	const char *xskmap_pin;
};

/* Creates a port on (ifname, queue) taking RX buffers from pool (which must belong to area).
 * opts may be NULL. Fails (NULL, errno) with:
 *   ENODEV     no interface of that name (in the caller's network namespace)
 *   EINVAL     queue beyond the device's queues, bad ring sizes, UMEM-wide setting differs from
 *              the first port's, chunk size not accepted by the kernel
 *   EOPNOTSUPP zero-copy required but not supported by the device
 *   EBUSY      another XDP program is already attached to the interface (default program),
 *              or the queue is already bound by a socket outside this UMEM
 *   ENOMEM     out of memory, or the pool cannot supply the fill ring's first buffers (size
 *              the area with umem_port__pages_needed)
 *   ENOBUFS    the UMEM cannot be registered: it is larger than RLIMIT_MEMLOCK allows and
 *              the process lacks CAP_IPC_LOCK (raise ulimit -l, or grant CAP_IPC_LOCK)
 *   EPERM      not enough privilege (CAP_NET_RAW / CAP_BPF / CAP_NET_ADMIN)
 * or the error with which opts->rebind_wait ended a wait for a busy queue.
 * Each failure is also described in a message naming the interface, queue and cause. */
UMEM_API struct umem_port *umem_port__create(struct umem_area *area, struct umem_pool *pool,
					     const char *ifname, uint32_t queue,
					     const struct umem_port_opts *opts);

/* Binds a port created with UMEM_PORT_F_UNBOUND: the socket, its rings, the bind (a busy queue
 * waited for as create does, with create's rebind_wait), the fill ring, the program or map;
 * errors as create's. Before it the port has no socket (fd -1): destroy is all it takes. On
 * failure before the kernel's bind the port stays unbound (bind again, or destroy it); after
 * it, destroy it. -EINVAL: NULL, or a port bound already. */
UMEM_API int umem_port__bind(struct umem_port *port);

/* RX queues of interface ifname in the caller's network namespace: the queue ids a port can
 * bind to are 0 .. count - 1. Read with the ETHTOOL_GCHANNELS ioctl (combined + RX-only
 * channels; veth reports its real RX queues), else, when the driver has no channel query, the
 * RX queues the device was created with (rtnetlink IFLA_NUM_RX_QUEUES, asked by ifindex, so
 * it is the caller's namespace's answer). Returns the count (>= 1) or a negative errno, with a
 * message naming the interface:
 *   -EINVAL     not an interface name (NULL, empty, too long)
 *   -ENODEV     no such interface
 *   -EOPNOTSUPP neither source answers
 * The count can change (ethtool -L): read it when opening ports, not once per program. */
UMEM_API int umem_netdev__queue_count(const char *ifname);
/* umem_netdev__queue_count's name until 0.1 (it asks the device, not a port), kept for one
 * release. */
UMEM_API int umem_port__queue_count(const char *ifname) UMEM_DEPRECATED("use umem_netdev__queue_count");

/* Pages an area needs so that nr_ports ports created with port_opts (on an area created with
 * area_opts; either may be NULL for the defaults) never run short: every port's fill ring and
 * RX ring full, its TX and completion rings full, its pool's cache full, plus extra_frames
 * buffers the application holds itself (frames queued between ports, for instance). Each port
 * is assumed on its own (interface, queue), so with its own fill ring. Only rings the port
 * uses count: a UMEM_PORT_F_TX_ONLY port needs no fill or RX buffers, a UMEM_PORT_F_RX_ONLY
 * port no TX or completion buffers. Ports of different kinds: add one call per kind. Pass the
 * result to umem_area__create() with the same area_opts:
 *
 *   UMEM_OPTS(umem_area_opts, ao, .chunk_size = 2048);
 *   int64_t pages = umem_port__pages_needed(2, 0, &ao, NULL);
 *   struct umem_area *area = pages > 0 ? umem_area__create((uint32_t)pages, &ao) : NULL;
 *
 * With the defaults (4 KiB pages and chunks, fill 4096, RX 2048, TX 2048) that is 8448 pages
 * (33 MiB) per port, 2304 for a transmit-only one. Returns the page count, or -EINVAL (bad opts sz, nr_ports 0, ring sizes
 * umem_port__create would refuse, a chunk that does not fit a page) or -EOVERFLOW (more pages
 * than an area holds), with a message. */
UMEM_API int64_t umem_port__pages_needed(uint32_t nr_ports, uint32_t extra_frames,
					 const struct umem_area_opts *area_opts,
					 const struct umem_port_opts *port_opts);

/* Removes the socket from the default program's map (detaching the program with the last port
 * on the interface), waits (bounded) for TX in flight to complete, returns every buffer the
 * port's rings still hold (unread RX, fill ring, TX not sent, completions) to the pools, and
 * closes the socket. Returns the number of buffers it had to abandon (0 normally; the kernel
 * never completed them; logged). The first port of an area owns the UMEM: its socket stays
 * open, unbound from traffic, until the area's last port is destroyed. NULL is a no-op.
 * Destroy ports before their pools (and every port of an area before the area). */
UMEM_API int umem_port__destroy(struct umem_port *port);
/* Destroys n ports as destroy does each (NULL entries are skipped; each port once), in less
 * time: all leave their maps first, one RCU grace period covers them all, and their sockets are
 * closed at once (each close waits for a grace period in the kernel: one after the other, n
 * ports would wait 2n). For a restart or a shutdown that stops every port together. Returns the
 * buffers abandoned in all, or -EINVAL (ports NULL with n > 0: nothing destroyed). */
UMEM_API int umem_port__destroy_bulk(struct umem_port *const *ports, uint32_t n);
/* Before destroy, for an application that counts what it loses: kicks and completes TX for up
 * to timeout_ms, then takes back the descriptors the kernel never read (a socket whose device
 * was deleted or left the namespace never reads them) and puts their buffers back. Returns the
 * frames so taken back (logged; not sent, though counted in tx_packets when queued), or
 * -EINVAL. Once per port, as the last call before destroy (no TX burst after it). */
UMEM_API int umem_port__tx_drain(struct umem_port *port, uint32_t timeout_ms);

/* Receives up to n descriptors. Whole frames only, unless one frame has more than n buffers
 * (then the rest of its chain comes with the next call). The buffers now belong to the caller.
 * Tops the fill ring up afterwards. Returns the number of descriptors (0..n). */
UMEM_API int umem_port__rx_burst(struct umem_port *port, struct umem_desc *descs, uint32_t n);
/* -EOPNOTSUPP on a UMEM_PORT_F_TX_ONLY port, as tx_burst on a UMEM_PORT_F_RX_ONLY one. */

/* Queues up to n descriptors for transmission and kicks the kernel when needed (every
 * non-empty burst that needs a wakeup, so a partial burst at a low rate never stalls). Drains
 * completions first to make room. Never splits a chain: returns how many descriptors were
 * queued (0..n, always at a frame boundary); the others still belong to the caller.
 * -EINVAL, queueing nothing, when a descriptor that fits is invalid (the kernel would drop it
 * without a completion): empty, outside the UMEM, crossing a chunk boundary (aligned mode),
 * options other than UMEM_DESC_F_CONTD, or a chain on a port without multi-buffer. */
UMEM_API int umem_port__tx_burst(struct umem_port *port, const struct umem_desc *descs,
				 uint32_t n);

/* Drains the completion ring into the pools (reference-aware put_bulk). Returns the number of
 * completions. */
UMEM_API int umem_port__complete(struct umem_port *port);
/* Tops the fill ring up from the port's pool (bulk allocation). Returns the number of buffers
 * added; -ENOMEM when the ring needed buffers and the pool had none (counted in stats). A pool
 * found empty is logged at most once per 5 s per port, with the number of such episodes since
 * the last report, and the fill ring being full again after a reported one. */
UMEM_API int umem_port__refill(struct umem_port *port);
/* Housekeeping for a polling loop: drains completions, tops the fill ring up, and retries a
 * TX kick the kernel deferred (EAGAIN/EBUSY). Call it once per loop iteration for each port,
 * also for ports that only transmit. Returns completions drained. */
UMEM_API int umem_port__service(struct umem_port *port);

/* The socket fd: poll/epoll it (POLLIN: RX ring not empty; POLLOUT: TX ring has room), or put
 * it into an XSKMAP of your own program (UMEM_PORT_PROG_NONE). Owned by the port. */
UMEM_API int umem_port__fd(const struct umem_port *port);

enum umem_port_mode {
	UMEM_PORT_MODE_COPY = 1,     /* the kernel copies frames into/out of the UMEM */
	UMEM_PORT_MODE_ZEROCOPY = 2, /* the driver DMAs straight into the UMEM */
};

enum umem_port_xdp_mode {
	/* UMEM_PORT_PROG_NONE: the port attached nothing; the program in front of it is the
	 * caller's, e.g. the steering program, whose mode umem_steer__info() reports (.mode). */
	UMEM_PORT_XDP_EXTERNAL = 0,
	UMEM_PORT_XDP_NATIVE = 1,
	UMEM_PORT_XDP_GENERIC = 2,
	UMEM_PORT_XDP_NONE = 3,     /* UMEM_PORT_F_TX_ONLY: no program, nothing received */
};

/* Mode in use (queried from the kernel with XDP_OPTIONS at creation). */
UMEM_API enum umem_port_mode umem_port__mode(const struct umem_port *port);
UMEM_API enum umem_port_xdp_mode umem_port__xdp_mode(const struct umem_port *port);
/* "copy" / "zero-copy", "native" / "generic" / "external" / "none": for logs. "external" is
 * what a port behind the steering program says: the steering handle knows native or generic. */
UMEM_API const char *umem_port__mode_str(enum umem_port_mode mode);
UMEM_API const char *umem_port__xdp_mode_str(enum umem_port_xdp_mode mode);

UMEM_API const char *umem_port__ifname(const struct umem_port *port);
UMEM_API int umem_port__ifindex(const struct umem_port *port);
UMEM_API uint32_t umem_port__queue(const struct umem_port *port);
UMEM_API struct umem_pool *umem_port__pool(const struct umem_port *port);
UMEM_API struct umem_area *umem_port__area(const struct umem_port *port);

/* TX buffers queued and not completed yet (umem_port_stats.tx_inflight without the kernel's
 * counters: no system call, for a loop that asks often). 0 for NULL. */
UMEM_API uint64_t umem_port__tx_inflight(const struct umem_port *port);
/* AF_XDP chunk size of the UMEM (largest TX buffer that fits one descriptor). */
UMEM_API uint32_t umem_port__chunk_size(const struct umem_port *port);
/* Largest frame one RX descriptor holds: chunk_size - headroom - XDP_PACKET_HEADROOM. */
UMEM_API uint32_t umem_port__rx_frame_len(const struct umem_port *port);
/* Multi-buffer (XDP_USE_SG) on. */
UMEM_API bool umem_port__multi_buffer(const struct umem_port *port);

struct umem_port_stats {
	size_t sz; /* sizeof(struct umem_port_stats) */
	/* Counted by the port. */
	uint64_t rx_packets;     /* frames (a chain counts once) */
	uint64_t rx_bytes;
	uint64_t rx_descs;       /* descriptors (> rx_packets with multi-buffer chains) */
	uint64_t tx_packets;     /* frames queued on the TX ring */
	uint64_t tx_bytes;
	uint64_t tx_descs;
	uint64_t tx_ring_full;   /* tx_burst calls that could not queue every descriptor */
	uint64_t tx_kicks;       /* sendto() wakeups */
	uint64_t tx_kick_again;  /* kicks the kernel deferred (EAGAIN/EBUSY/ENOBUFS), retried */
	uint64_t rx_kicks;       /* recvfrom() wakeups (need_wakeup on the fill ring, busy poll) */
	uint64_t completions;    /* TX buffers completed and put back */
	uint64_t fill_added;     /* buffers placed on the fill ring */
	uint64_t fill_alloc_fail; /* refills cut short because the pool was empty */
	uint64_t tx_inflight;    /* buffers queued and not completed yet (now) */
	/* From the kernel (XDP_STATISTICS), this socket. */
	uint64_t rx_dropped;          /* dropped for reasons other than invalid descriptors */
	uint64_t rx_invalid_descs;
	uint64_t tx_invalid_descs;
	uint64_t rx_ring_full;        /* dropped because the RX ring was full */
	uint64_t rx_fill_ring_empty;  /* frames that found the fill ring empty */
	uint64_t tx_ring_empty;       /* the kernel found the TX ring empty */
};

UMEM_API int umem_port__stats(const struct umem_port *port, struct umem_port_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
