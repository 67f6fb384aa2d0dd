/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <umem/area.h>
#include <umem/pool.h>
#include <umem/port.h>

#include "ctx.h"
#include "netif.h"
#include "rules.h"
#include "sizing.h"

#define FWD_MVPP2_XDP_MTU 1500u /* mvpp2_xdp_setup() refuses a program above ETH_DATA_LEN */

uint32_t fwd_pow2_at_least(uint64_t v)
{
	uint32_t p = 1;

	while (p < v && p < (1u << 31))
		p <<= 1;
	return p;
}

/* -i IFNAME@all follows `ethtool -L` (live.c): the area keeps room for the ports of the queues
 * the device can still add, up to its channel maximum (FWD_MAX_PORTS ports in all). */
static uint32_t spare_ports(const struct fwd_config *cfg)
{
	uint32_t spare = 0;

	for (uint32_t i = 0; i < cfg->nr_specs; i++) {
		const struct fwd_if_spec *s = &cfg->specs[i];
		uint32_t max = s->from_all ? fwd_ifname_queue_max(s->ifname) : 0;

		if (max > s->last + 1)
			spare += max - (s->last + 1);
	}
	return spare < FWD_MAX_PORTS - cfg->nr_ports ? spare : FWD_MAX_PORTS - cfg->nr_ports;
}

/* The area's and the pools' one sizing rule: the frames a set of ports holds with every fill
 * ring and every TX ring full at once, and the pages they take. */
uint64_t fwd_ring_frames(const struct fwd_config *cfg, uint32_t nr_ports)
{
	uint32_t rx = cfg->rx_ring ? cfg->rx_ring : UMEM_PORT_RX_SIZE_DEFAULT;
	uint32_t fill = cfg->fill_ring ? cfg->fill_ring : 2 * rx;
	uint32_t tx = cfg->tx_ring ? cfg->tx_ring : UMEM_PORT_TX_SIZE_DEFAULT;

	return (uint64_t)nr_ports * (fill + tx);
}

/* Frames that every fill ring and every TX ring full at once take, plus the pools' caches and
 * the cross-worker queues: with that many the pools never run dry in steady state. */
uint64_t fwd_frames_needed(const struct fwd_config *cfg, uint32_t nr_workers)
{
	uint64_t frames = fwd_ring_frames(cfg, cfg->nr_ports + cfg->spare_ports) + nr_workers * 2ull * UMEM_POOL_CACHE_SIZE;

	if (nr_workers > 1)
		frames += nr_workers * (nr_workers - 1ull) * FWD_XQ_SIZE;
	return frames;
}

/* Checks that need the system but change nothing: every interface exists, multi-buffer is on
 * when an MTU needs it, every rule's target is served. */
int fwd_check_system(struct fwd_config *cfg)
{
	uint32_t chunk, max_mtu = 0;
	bool unknown = false;

	for (uint32_t i = 0; i < cfg->nr_ports; i++) {
		uint32_t mtu = fwd_ifname_mtu(cfg->ports[i].ifname);

		unknown |= !mtu;
		max_mtu = mtu > max_mtu ? mtu : max_mtu;
	}
	if (!cfg->chunk_size && !cfg->unaligned) /* an unknown MTU takes the 4 KiB chunk */
		cfg->chunk_size = fwd_default_chunk(cfg, unknown ? 0 : max_mtu);
	chunk = cfg->chunk_size ? cfg->chunk_size : FWD_CHUNK_DEFAULT;
	for (uint32_t i = 0; i < cfg->nr_ports; i++) {
		const char *ifname = cfg->ports[i].ifname;
		uint32_t mtu;

		if (!if_nametoindex(ifname)) {
			fprintf(stderr, "xdp-fwd: interface '%s' does not exist (in this network namespace)\n",
				ifname);
			return -ENODEV;
		}
		mtu = fwd_ifname_mtu(ifname);
		if (cfg->profile == FWD_PROFILE_MVPP2 && mtu > FWD_MVPP2_XDP_MTU) {
			fprintf(stderr, "xdp-fwd: %s has MTU %u: mvpp2 attaches XDP only up to MTU %u (XDP needs its per-CPU buffer pools, which have no jumbo class); lower it with ip link set dev %s mtu %u\n",
				ifname, mtu, FWD_MVPP2_XDP_MTU, ifname, FWD_MVPP2_XDP_MTU);
			return -EINVAL;
		}
		if (!cfg->multi_buffer && fwd_mtu_needs_multi_buffer(cfg, mtu)) {
			fprintf(stderr, "xdp-fwd: %s has MTU %u, more than one %u-byte chunk holds: multi-buffer on\n",
				ifname, mtu, chunk);
			cfg->multi_buffer = true;
		}
	}
	cfg->spare_ports = spare_ports(cfg);
	return fwd_rules_check(cfg);
}

struct umem_area *fwd_area_create(const struct fwd_config *cfg, uint32_t nr_workers)
{
	uint32_t chunk = cfg->chunk_size ? cfg->chunk_size : FWD_CHUNK_DEFAULT;
	uint64_t frames = cfg->frames ? cfg->frames : fwd_frames_needed(cfg, nr_workers);
	UMEM_OPTS(umem_area_opts, opts, .chunk_size = cfg->unaligned ? 0 : chunk,
		  .flags = cfg->hugepages ? UMEM_AREA_F_HUGEPAGES : 0);
	uint64_t pages;

	pages = fwd_frame_pages(cfg, frames);
	if (cfg->hugepages) /* whole 2 MiB pages */
		pages = (pages + 511) / 512 * 512;
	return umem_area__create((uint32_t)pages, &opts);
}

