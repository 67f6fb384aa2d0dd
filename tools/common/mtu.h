/* SPDX-License-Identifier: MIT */
/*
 * Whether a frame of an interface's MTU fits one AF_XDP chunk without multi-buffer: the kernel
 * puts at most chunk - XDP_PACKET_HEADROOM bytes into one RX buffer (with no UMEM headroom),
 * and a frame is the MTU with its Ethernet header and one VLAN tag. One rule for xdp-fwd's
 * chunk and multi-buffer choices and xsk-gen's sink.
 * Not part of libumem: a header the apps and tools share (tools/common).
 */
#ifndef UMEM_TOOLS_MTU_H
#define UMEM_TOOLS_MTU_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/bpf.h> /* XDP_PACKET_HEADROOM */

#define MTU_ETH_OVERHEAD 18u /* Ethernet header + one VLAN tag beyond the MTU */

static inline bool mtu_fits_chunk(uint32_t mtu, uint32_t chunk)
{
	return (uint64_t)mtu + MTU_ETH_OVERHEAD + XDP_PACKET_HEADROOM <= chunk;
}

#endif
