/* SPDX-License-Identifier: MIT */
/* libumem private definitions: never installed. */
#ifndef UMEM_INTERNAL_H
#define UMEM_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <umem/fault.h>
#include <umem/pool.h>

#define UMEM_PRIVATE __attribute__((visibility("hidden")))
#define UMEM_CACHELINE 64
#define UMEM_NO_PAGE UINT64_MAX

/* Options structs grow at the end: read a field only if the caller's struct has it. */
#define OPTS_HAS(opts, field) \
	((opts) && (opts)->sz >= offsetof(__typeof__(*(opts)), field) + sizeof((opts)->field))
#define OPTS_GET(opts, field, dflt) (OPTS_HAS(opts, field) ? (opts)->field : (dflt))
/* libbpf's OPTS_VALID: NULL is fine; sz must cover at least the size field, and bytes past the
 * struct this library knows must be zero. Logs "<what>: ..." naming the struct and fails. */
UMEM_PRIVATE bool umem__opts_check(const void *opts, size_t known, const char *type, const char *what);
#define OPTS_CHECK(opts, type, what) umem__opts_check((opts), sizeof(struct type), #type, what)
/* The reserved padding of an options struct, from the end of field after up to offset to,
 * must be zero (as far as the caller's sz reaches): a later field may be placed there. */
UMEM_PRIVATE bool umem__opts_pad(const void *opts, size_t from, size_t to, const char *type,
				 const char *what);
#define OPTS_PAD(opts, type, after, to, what)                                                   \
	umem__opts_pad((opts), offsetof(struct type, after) + sizeof(((struct type *)0)->after), \
		       (to), #type, what)
/* Output structs (stats): sz must be at least min (the first release's struct). */
UMEM_PRIVATE bool umem__out_check(const void *out, size_t min, const char *type, const char *what);

UMEM_PRIVATE void umem__pr(enum umem_print_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define pr_warn(...) umem__pr(UMEM_WARN, __VA_ARGS__)
#define pr_info(...) umem__pr(UMEM_INFO, __VA_ARGS__)
#define pr_debug(...) umem__pr(UMEM_DEBUG, __VA_ARGS__)
/* Memory-safety violation: always printed to stderr, whatever the print callback, then abort. */
/* " (... needs CAP_X, which this process lacks)" when err is EPERM/EACCES and the process
 * lacks a capability the step needs, else "": the step is an XDP program load (CAP_BPF and
 * CAP_NET_ADMIN; perfmon: one whose verification needs CAP_PERFMON, as the steering program's
 * pointer arithmetic does) or an XDP attach (CAP_NET_ADMIN). CAP_SYS_ADMIN stands in for each,
 * as in the kernel. */
UMEM_PRIVATE const char *umem__cap_hint_load(int err, bool perfmon);
UMEM_PRIVATE const char *umem__cap_hint_attach(int err);
/* libbpf's and libxdp's messages during a libumem call go through libumem's print callback
 * at UMEM_DEBUG (libumem's own warning says what failed; LIBUMEM_VERBOSE=1 shows theirs):
 * begin installs the routing and saves what the application had, end restores it. */
struct umem__lib_print {
	void *bpf, *xdp;
};
UMEM_PRIVATE void umem__lib_print_begin(struct umem__lib_print *saved);
UMEM_PRIVATE void umem__lib_print_end(const struct umem__lib_print *saved);
UMEM_PRIVATE void umem__die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* umem_page.state */
#define UMEM_PG_STORE 1u /* in the area's store */
#define UMEM_PG_USED 2u  /* has left the store at least once */

struct umem_area {
	struct umem_area_fast f; /* first: the inline paths cast to it */
	uint32_t nr_pages;
	uint32_t flags;
	size_t map_len;
	pthread_mutex_t lock; /* guards the page store and the pool list */
	uint32_t *store;      /* free page indexes, LIFO */
	uint32_t store_count;
	_Atomic uint32_t pools_alive;    /* created, not destroyed */
	_Atomic uint32_t pools_draining; /* destroyed, pages still out */
	struct umem_pool *pools;         /* every pool not yet freed, alive or draining */
	/* Set by the first pool: gives back what idle pools strand when the store runs dry. The
	 * area sits below the pools and calls them only through this, so pool.c -> area.c stays
	 * one-way (as the kernel's shrinkers let the page allocator call up into caches). */
	uint32_t (*reclaim)(struct umem_area *a);
	_Atomic uint64_t *track;         /* debug: one entry per UMEM_FRAG_ALIGN granule */
};

/* Multi-producer, single-consumer ring of addresses. Lock-free for producers: a slot is
 * reserved by CAS on prod_head, then published by storing the address into it; the consumer
 * takes it and stores UMEM_RING_EMPTY back (no address is ever UINT64_MAX), so a slot is one
 * word and a cache line moves 8 pages between the threads. A producer preempted between the
 * two only delays the consumer at that slot; it blocks no other producer.
 * The top bit of prod_head marks a ring closed by its pool's destruction.
 * The indexes sit on lines of their own, so that a batch moves only the slots between the
 * threads: producers cache the consumer's position they last read (cons_seen) and read the
 * consumer's line only when the ring looks full by it. */
#define UMEM_RING_DEAD (1ull << 63)
#define UMEM_RING_EMPTY UINT64_MAX
struct umem_ring {
	/* The producers' line: every reserve writes it; the owner's refill never reads it.
	 * cons_seen is a cons_pub some producer read: it trails cons_pub, so it can only
	 * underestimate the room. */
	_Atomic uint64_t prod_head __attribute__((aligned(UMEM_CACHELINE)));
	_Atomic uint64_t cons_seen;
	/* Read-only once created: shared by both sides' caches, never moved between them. */
	uint32_t size __attribute__((aligned(UMEM_CACHELINE)));
	uint32_t mask;
	_Atomic uint64_t *slots; /* an address, or UMEM_RING_EMPTY */
	/* The consumer's line: the refill writes it; producers read it only to refresh
	 * cons_seen. */
	_Atomic uint64_t cons_pub __attribute__((aligned(UMEM_CACHELINE))); /* consumer position, published */
	uint64_t cons;  /* consumer position, consumer only */
	/* The consumer side: the owner's refill, destroy, or the area reclaiming a stranded ring.
	 * Taken with a try-lock, so the owner never waits for a reclaimer. */
	_Atomic uint32_t cons_lock;
};

struct umem_pool {
	struct umem_pool_fast f; /* first: the inline paths cast to it */
	struct umem_area *area;
	struct umem_ring ring;
	/* Counters bumped by threads other than the owner. */
	_Atomic uint64_t recycle_ring __attribute__((aligned(UMEM_CACHELINE)));
	_Atomic uint64_t recycle_ring_full;
	_Atomic uint64_t pages_released;
	/* Pages held (taken from the area, not yet released) + 1 while the owner has not destroyed
	 * the pool: whoever drops it to 0 frees the pool, so late returns never touch freed memory.
	 * A producer bumps nothing of the pool after it published a page into the ring. */
	_Atomic int64_t life;
	struct umem_pool *next, **pprev; /* the area's pool list, under the area lock */
	bool dead;                       /* destroyed, under the area lock */
	/* Debug mode's single-owner rule: the thread inside an owner-only call, or 0. */
	_Atomic unsigned long owner_thread;
};

/* ring.c */
/* Opens the maps of BPF program prog_fd named names[0..n) into fds[] (left untouched, so -1,
 * for a name the program lacks); max_entries[k] gets each one's size when not NULL. With
 * value_sizes (NULL: none), a map whose value_size differs from a non-zero value_sizes[k] is
 * another version's layout: -EPROTO with a message naming it, no fd left open. 0 or negative
 * errno (the program could not be read). A map whose fd is in pool[0..nr_pool) (handed over by
 * the process that holds the program: umem_steer__open_fds) is taken from there, copied;
 * the others are opened by id, which the kernel allows CAP_SYS_ADMIN only (with a pool, a
 * map refused so is an error, -EPERM, only if one of names is then not found). */
UMEM_PRIVATE int umem__prog_maps(int prog_fd, const char *const *names, const uint32_t *value_sizes, int *fds,
				 uint32_t *max_entries, size_t n, const int *pool, uint32_t nr_pool);
/* The fds of fds[0..n) that are open (>= 0) into out: their count, or -ENOSPC when more than
 * max (out then holds the first max). */
UMEM_PRIVATE int umem__fds_out(const int *fds, size_t n, int *out, uint32_t max);

UMEM_PRIVATE int umem__ring_init(struct umem_ring *r, uint32_t size);
UMEM_PRIVATE void umem__ring_fini(struct umem_ring *r);
UMEM_PRIVATE int umem__ring_reserve(struct umem_ring *r, uint32_t n, uint64_t *pos);
UMEM_PRIVATE void umem__ring_publish(struct umem_ring *r, uint64_t pos, const uint64_t *addrs, uint32_t k);
UMEM_PRIVATE bool umem__ring_trylock(struct umem_ring *r);
UMEM_PRIVATE void umem__ring_unlock(struct umem_ring *r);
UMEM_PRIVATE uint32_t umem__ring_pop(struct umem_ring *r, uint64_t *addrs, uint32_t max);
UMEM_PRIVATE uint64_t umem__ring_left(const struct umem_ring *r, uint64_t end);
UMEM_PRIVATE uint64_t umem__ring_close(struct umem_ring *r);
UMEM_PRIVATE uint32_t umem__ring_pop_until(struct umem_ring *r, uint64_t end, uint64_t *addrs, uint32_t max);

/* area.c */
/* Up to n pages from the store; when it is dry and reclaim is set, idle return rings first. */
UMEM_PRIVATE int umem__area_get(struct umem_area *a, uint64_t *addrs, uint32_t n, bool reclaim);
UMEM_PRIVATE void umem__area_outside(struct umem_area *a, uint64_t addr, const char *what)
	__attribute__((noreturn, cold));
/* The page of addr; aborts naming what for an address outside the area. Inline: put_bulk
 * looks up every address. */
static inline struct umem_page *umem__area_page(struct umem_area *a, uint64_t addr, const char *what)
{
	if (umem_unlikely(addr >= a->f.size))
		umem__area_outside(a, addr, what);
	return &a->f.pages[addr >> a->f.page_shift];
}
/* Store access with the area lock held. */
UMEM_PRIVATE uint32_t umem__store_get(struct umem_area *a, uint64_t *addrs, uint32_t n);
UMEM_PRIVATE void umem__store_put(struct umem_area *a, const uint64_t *addrs, uint32_t n);

/* netdev.c: RX queues of ifname (ifindex in the caller's namespace): the active count and a
 * bound on queue ids (0 when unknown); 0, or negative errno when neither is known. */
UMEM_PRIVATE int umem__netdev_rx_queues(const char *ifname, int ifindex, uint32_t *cur, uint32_t *max);
/* netdev.c: who holds (ifindex, queue) with a bound AF_XDP socket of this namespace (sock_diag,
 * then /proc). 1: bound, by who ("pid N (comm)"); 0: no socket is bound there (a closed one
 * the kernel has not released yet); -errno: sock_diag cannot tell (no CONFIG_XDP_SOCKETS_DIAG),
 * and who lists the other processes of this namespace with AF_XDP sockets ("" none). */
/* netdev.c: whether the fd at path (/proc/PID/fd/N) is an AF_XDP socket; only socket fds are
 * asked for their protocol. */
UMEM_PRIVATE bool umem__netdev_fd_is_xsk(const char *path);
UMEM_PRIVATE int umem__netdev_xsk_holder(int ifindex, uint32_t queue, char *who, size_t len);
/* port.c, tests only: umem__fault_bind_busy, umem__fault_umem_regs; steer_attach.c:
 * umem__fault_no_meta, umem__steer_meta_ok (umem/fault.h). */

/* pool.c: with the area lock held, moves the pages waiting in the pools' return rings to the
 * store (the area ran dry, or is being destroyed); frees destroyed pools that become empty. */
UMEM_PRIVATE uint32_t umem__pools_reclaim(struct umem_area *a);
/* The pool owning the page of addr (NULL: in the area's store); aborts outside the area. */
UMEM_PRIVATE struct umem_pool *umem__page_owner(struct umem_area *a, uint64_t addr);

/* debug.c: exact per-fragment tracking (UMEM_AREA_F_DEBUG) */
UMEM_PRIVATE int umem__track_init(struct umem_area *a);
UMEM_PRIVATE void umem__track_alloc(struct umem_area *a, uint64_t addr, uint32_t len);
UMEM_PRIVATE void umem__track_put(struct umem_area *a, uint64_t addr, uint32_t n);
UMEM_PRIVATE int umem__track_ref(struct umem_area *a, uint64_t addr, uint32_t n);

#endif
