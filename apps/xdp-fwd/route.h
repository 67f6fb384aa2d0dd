/* SPDX-License-Identifier: MIT */
/*
 * xdp-fwd routing: the userspace frame parsing of the data path. Splits a burst of RX
 * descriptors into frames (chains linked by UMEM_DESC_F_CONTD, possibly cut by the end of the
 * burst) and decides each frame's fate from its Ethernet header. Pure logic, no ports or
 * pools: the worker passes what happens to a frame as callbacks, and the fuzz harness
 * (test/fuzz/fuzz_route.c) drives the same code with hostile descriptors and headers.
 *
 * Every descriptor of the burst ends in exactly one callback. A static inline function
 * called with constant callbacks, so the compiler inlines them in the worker's loop.
 */
#ifndef XDP_FWD_ROUTE_H
#define XDP_FWD_ROUTE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <umem/port.h>

#include "fwd.h"
#include "l2.h"
#include "stats.h"

#define FWD_ETH_HLEN 14u

/* A big-endian 16-bit field of a frame, read and written (xdp-fwd's one copy; libumem keeps a
 * private one for its checksums: byte order is not part of its API). */
static inline uint16_t fwd_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void fwd_put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

struct fwd_route_io {
	void *arg;
	/* The data of a descriptor (at least its len bytes). */
	uint8_t *(*data)(void *arg, uint64_t addr);
	/* One frame (n descriptors) to output port out. */
	void (*emit)(void *arg, uint32_t in, uint32_t out, const struct umem_desc *d, uint32_t n);
	/* l2: one frame to every interface but in's. */
	void (*flood)(void *arg, uint32_t in, const struct umem_desc *d, uint32_t n);
	/* l2: the interface of a port (ports are (interface, queue)), and the port that takes
	 * frames from port in to interface iface. */
	uint32_t (*iface)(void *arg, uint32_t port);
	uint32_t (*via)(void *arg, uint32_t in, uint32_t iface);
	/* n descriptors not forwarded, counted on port in. */
	void (*drop)(void *arg, uint32_t in, enum fwd_drop why, const struct umem_desc *d, uint32_t n);
};

static inline bool fwd_desc_last(const struct umem_desc *d)
{
	return !(d->options & UMEM_DESC_F_CONTD);
}

static inline void fwd_swap_macs(uint8_t *eth)
{
	uint8_t tmp[6];

	memcpy(tmp, eth, 6);
	memcpy(eth, eth + 6, 6);
	memcpy(eth + 6, tmp, 6);
}

/* The descriptors at the start of a burst that finish a chain cut at the end of the last one
 * (its head was dropped then): how many to drop now. *skip_contd (per input port) is cleared
 * once the chain's last descriptor is among them. */
static inline uint32_t fwd_chain_tail(const struct umem_desc *d, uint32_t n, bool *skip_contd)
{
	uint32_t i = 0;

	if (!*skip_contd)
		return 0;
	while (i < n && !fwd_desc_last(&d[i]))
		i++;
	if (i < n) {
		i++;
		*skip_contd = false;
	}
	return i;
}

/* Routes the burst d[0..n) received on port in. *skip_contd (per input port) carries a chain
 * cut at the end of one burst into the next, whose first descriptors finish it. l2 mode: the
 * caller serializes access to the table. */
static inline void fwd_route_burst(const struct fwd_route_io *io, enum fwd_mode mode,
				   struct l2_table *l2, bool *skip_contd, uint32_t in,
				   struct umem_desc *d, uint32_t n, uint64_t now)
{
	uint32_t i = fwd_chain_tail(d, n, skip_contd);

	if (i)
		io->drop(io->arg, in, FWD_DROP_INVALID, d, i);
	while (i < n) {
		uint32_t len = 1;
		uint8_t *eth;

		while (i + len <= n && !fwd_desc_last(&d[i + len - 1]))
			len++;
		if (i + len > n) {
			/* A chain longer than the burst (--batch below the chain length): its
			 * rest comes with the next burst; drop the frame rather than reassemble. */
			io->drop(io->arg, in, FWD_DROP_INVALID, &d[i], n - i);
			*skip_contd = true;
			break;
		}
		if (d[i].len < FWD_ETH_HLEN) {
			io->drop(io->arg, in, FWD_DROP_INVALID, &d[i], len);
		} else if (mode == FWD_MODE_WIRE) {
			io->emit(io->arg, in, in ^ 1, &d[i], len);
		} else if (mode == FWD_MODE_REFLECT) {
			fwd_swap_macs(io->data(io->arg, d[i].addr));
			io->emit(io->arg, in, in, &d[i], len);
		} else {
			static const enum fwd_drop why[] = { [L2_RESERVED] = FWD_DROP_L2_RESERVED,
							     [L2_SRC_GROUP] = FWD_DROP_L2_SRC_GROUP,
							     [L2_SRC_ZERO] = FWD_DROP_L2_SRC_ZERO };
			enum l2_verdict v;
			int32_t out;

			eth = io->data(io->arg, d[i].addr);
			/* What a bridge neither learns from nor relays. */
			v = l2_classify(eth, l2->group_fwd_mask);
			if (v != L2_FORWARD) {
				io->drop(io->arg, in, why[v], &d[i], len);
				i += len;
				continue;
			}
			l2_learn(l2, eth + 6, (int32_t)in, now);
			out = l2_lookup(l2, eth, now);
			if (out == L2_NO_PORT) {
				io->flood(io->arg, in, &d[i], len);
			} else {
				uint32_t to = io->iface(io->arg, (uint32_t)out);

				/* Never back out of the interface it came in on. */
				if (to == io->iface(io->arg, in))
					io->drop(io->arg, in, FWD_DROP_NO_PORT, &d[i], len);
				else
					io->emit(io->arg, in, io->via(io->arg, in, to), &d[i], len);
			}
		}
		i += len;
	}
}

#endif
