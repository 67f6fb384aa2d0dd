/* SPDX-License-Identifier: MIT */
/*
 * The port's data path: RX/TX bursts, completions, fill-ring refill, service and the
 * in-kernel bitmap (see port_internal.h). The only hot port code; port.c holds the rest.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <linux/if_xdp.h>
#include "port_internal.h"

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

static uint64_t bitmap_words(const struct port_queue *q)
{
	return ((umem_area__size(q->umem->area) >> q->bit_shift) + 1 + 63) / 64;
}
int umem__queue_bitmap_init(struct port_queue *q)
{
	const struct port_umem *u = q->umem;
	uint32_t page_size = umem_area__page_size(u->area);

	/* One bit per possible RX buffer start: a chunk (aligned mode), a page (unaligned, one
	 * buffer per page) or a UMEM_FRAG_ALIGN granule (unaligned fragments). */
	q->bit_shift = (uint32_t)__builtin_ctz(!u->unaligned ? u->chunk_size :
					       u->chunk_size * 2 > page_size ? page_size : UMEM_FRAG_ALIGN);
	q->in_kernel = calloc(bitmap_words(q), sizeof(uint64_t));
	return q->in_kernel ? 0 : -ENOMEM;
}

uint32_t umem__queue_return_held(struct port_queue *q)
{
	struct umem_area *area = q->umem->area;
	uint64_t words = bitmap_words(q), back[64];
	uint32_t nb = 0, total = 0;

	for (uint64_t w = 0; w < words; w++)
		for (uint64_t bits = q->in_kernel[w]; bits; bits &= bits - 1) {
			back[nb++] = ((w << 6) + (uint64_t)__builtin_ctzll(bits)) << q->bit_shift;
			if (nb == 64) {
				umem_area__put_bulk(area, back, nb);
				total += nb;
				nb = 0;
			}
		}
	umem_area__put_bulk(area, back, nb);
	total += nb;
	free(q->in_kernel);
	q->in_kernel = NULL;
	return total;
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

#define FILL_LOG_NS 5000000000ull

static void fill_episode(struct umem_port *p, uint32_t short_by)
{
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	p->fill_episodes++;
	if (p->fill_logged_ns && now - p->fill_logged_ns < FILL_LOG_NS)
		return;
	if (p->fill_episodes > 1)
		pr_warn("port %s:%u: pool empty: fill ring short of %u buffers, %u times in %.0f s (the "
			"kernel drops frames once it runs dry; an area of umem_port__pages_needed() "
			"pages, or fewer buffers held, fixes it)\n", p->ifname, p->queue, short_by,
			p->fill_episodes, (double)(now - p->fill_logged_ns) / 1e9);
	else
		pr_warn("port %s:%u: pool empty: fill ring short of %u buffers (the kernel drops "
			"frames once it runs dry; an area of umem_port__pages_needed() pages, or fewer "
			"buffers held, fixes it)\n", p->ifname, p->queue, short_by);
	p->fill_logged_ns = now;
	p->fill_episodes = 0;
	p->fill_reported = true;
}

int umem__port_refill(struct umem_port *p, uint32_t min_free)
{
	struct port_queue *q = p->q;
	uint32_t free, idx = 0, got;

	if (!p->rx_on) /* transmit-only: the ports of the queue that receive fill it */
		return 0;
	free = xsk_prod_nb_free(&q->fill, q->fill.size);
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
		/* An episode: the pool stays empty for many bursts while the buffers are held
		 * elsewhere (a small area, a stalled TX port), and the kernel counts the frames it
		 * drops meanwhile (rx_fill_ring_empty). A pool at its limit starts thousands of
		 * episodes a second, so they are reported at most once per FILL_LOG_NS, with the
		 * count since the last report. */
		if (!p->fill_short)
			fill_episode(p, free - got);
		p->fill_short = true;
		if (!got)
			return -ENOMEM;
	} else if (p->fill_short) {
		p->fill_short = false;
		if (p->fill_reported)
			pr_info("port %s:%u: fill ring topped up again\n", p->ifname, p->queue);
		p->fill_reported = false;
	}
	return (int)got;
}

int umem_port__refill(struct umem_port *p)
{
	return p ? umem__port_refill(p, 1) : -EINVAL;
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
void umem__port_tx_kick(struct umem_port *p)
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
		int err = errno; /* saved first: the printer may change errno */

		if (err != EAGAIN && err != EBUSY && err != ENOBUFS) {
			/* Once per cause per episode (it ends with a kick that works): a link that
			 * is down would otherwise log at packet rate. The frames stay queued;
			 * service() kicks again. */
			if (err != p->kick_errno)
				pr_warn("port %s:%u: TX kick failed: %s%s\n", p->ifname, p->queue,
					strerror(err), kick_error_hint(err));
			p->kick_errno = err;
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

uint32_t umem__port_rx_take(struct umem_port *p, struct umem_desc *descs, uint32_t n)
{
	uint32_t idx = 0, avail, keep = 0, packets = 0;
	uint64_t bytes = 0;

	if (!p->rx_on)
		return 0;
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
	if (umem_unlikely(!p->rx_on))
		return -EOPNOTSUPP;
	got = umem__port_rx_take(p, descs, n);
	/* An empty ring may mean the kernel waits for a wakeup (need_wakeup on the fill ring) or,
	 * with busy polling, that this thread is the one that drives the driver. */
	if (!got && (p->busy_poll || xsk_ring_prod__needs_wakeup(&p->q->fill)))
		rx_kick(p);
	umem__port_refill(p, PORT_REFILL_BATCH);
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
	if (umem_unlikely(!p->tx_on))
		return -EOPNOTSUPP;
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
			/* Once per episode: a caller that keeps sending it would log at packet
			 * rate; the next valid burst ends the episode. */
			if (!p->tx_invalid_reported)
				pr_warn("port %s:%u: TX descriptor %u (addr 0x%llx, len %u, options 0x%x) is "
					"invalid (%s): nothing queued (not repeated until a burst is "
					"valid again)\n", p->ifname, p->queue, i,
					(unsigned long long)descs[i].addr, descs[i].len, descs[i].options, why);
			p->tx_invalid_reported = true;
			return -EINVAL;
		}
		if (!(descs[i].options & XDP_PKT_CONTD))
			m = i + 1;
	}
	p->tx_invalid_reported = false;
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
			umem__port_tx_kick(p);
	return (int)m;
}

int umem_port__service(struct umem_port *p)
{
	int done;

	if (!p)
		return -EINVAL;
	done = umem_port__complete(p);
	umem__port_refill(p, PORT_REFILL_BATCH);
	if (p->kick_pending ||
	    (!tx_ring_empty(p) && (!p->need_wakeup || xsk_ring_prod__needs_wakeup(&p->tx))))
		umem__port_tx_kick(p);
	return done;
}
