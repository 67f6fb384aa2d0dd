/* SPDX-License-Identifier: MIT */
/*
 * One xdp-fwd per interface: its XDP program (or steering program) serves every queue of the
 * interface, so a second instance on another queue cannot attach. Each instance holds an
 * flock on /run/xdp-fwd/net<netns inode>-if<ifindex>.lock holding its pid (by ifindex, so
 * that an altname of the device is the same lock); the kernel drops the
 * lock when the process dies (kill -9 included), so a stale file never blocks a restart. A
 * second instance finds the lock taken and names the pid that holds it. The folder is never
 * removed: an instance starting while another left would otherwise lose it under its feet.
 */
#ifndef XDP_FWD_LOCK_H
#define XDP_FWD_LOCK_H

#include "fwd.h"

/* Locks every interface of cfg. 0; -EBUSY with a message when another xdp-fwd holds one (the
 * locks taken are released). Without a writable /run the check is skipped with a warning (0). */
int fwd_lock_interfaces(const struct fwd_config *cfg);
/* The same, retried for up to ms while another xdp-fwd holds one, which is said only if it
 * still does then: an instance that is exiting releases its locks a moment after its sockets
 * (the kernel frees its memory first, milliseconds for a large UMEM). */
int fwd_lock_interfaces_within(const struct fwd_config *cfg, int ms);
/* Releases and removes the lock files. */
void fwd_unlock_interfaces(void);

#endif
