/* SPDX-License-Identifier: MIT */
/*
 * xdp-fwd's view of live interface changes: an rtnetlink socket subscribed to link events
 * (RTMGRP_LINK), read without blocking by the main thread between stats ticks. Opening the
 * socket needs no capability.
 */
#ifndef XDP_FWD_LINKWATCH_H
#define XDP_FWD_LINKWATCH_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

struct fwd_link_event {
	bool deleted;            /* RTM_DELLINK; else RTM_NEWLINK (created or changed) */
	uint32_t ifindex;
	uint32_t mtu;            /* 0 when the message had none */
	char ifname[IF_NAMESIZE]; /* "" when the message had none */
};

/* The socket fd, or -errno. */
int fwd_linkwatch_open(void);
/* Reads the next pending event into ev: 1, 0 when none is pending, -errno on a socket error
 * (-ENOBUFS: events were lost; the caller re-reads the state it cares about). */
int fwd_linkwatch_next(int fd, struct fwd_link_event *ev);
void fwd_linkwatch_close(int fd);

#endif
