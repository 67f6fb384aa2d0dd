/* SPDX-License-Identifier: MIT */
/* xdp-fwd sizing: the area's and the pools' one rule (every fill ring and every TX ring full at
 * once), and the checks of the system before anything is set up. */
#ifndef XDP_FWD_SIZING_H
#define XDP_FWD_SIZING_H

#include <stdint.h>

#include "fwd.h"

struct umem_area;

/* The frames a set of ports holds with every fill ring and every TX ring full at once. */
uint64_t fwd_ring_frames(const struct fwd_config *cfg, uint32_t nr_ports);
/* The rings' frames plus the pools' caches and the cross-worker queues: with that many the
 * pools never run dry in steady state. */
uint64_t fwd_frames_needed(const struct fwd_config *cfg, uint32_t nr_workers);
uint32_t fwd_pow2_at_least(uint64_t v);
/* Checks that need the system but change nothing but cfg's derived sizes: every interface
 * exists, multi-buffer is on when an MTU needs it, the chunk size, the spare ports of
 * IFNAME@all, every rule's target served. 0 or -errno (said on stderr). */
int fwd_check_system(struct fwd_config *cfg);
/* The area for cfg (--frames, or fwd_frames_needed); NULL with errno. */
struct umem_area *fwd_area_create(const struct fwd_config *cfg, uint32_t nr_workers);

#endif
