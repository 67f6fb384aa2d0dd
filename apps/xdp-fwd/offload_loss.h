/* SPDX-License-Identifier: MIT */
/* xdp-fwd: offload's loss count of one interface, the frames the steering programs redirected
 * towards it that it neither sent nor counted dropped. The arithmetic alone (offload_target.c
 * reads the counters), so that a unit test can play the kernel's timing. */
#ifndef FWD_OFFLOAD_LOSS_H
#define FWD_OFFLOAD_LOSS_H

#include <stdbool.h>
#include <stdint.h>

/*
 * A program counts a frame redirected before the kernel hands it to the target (at the end of
 * the NAPI poll that ran the program, microseconds later), and our sockets count a frame sent
 * when it goes on the TX ring, before the kernel sends it. Counts read at one time therefore
 * see frames in flight, which a comparison of them takes for lost, and the count never goes
 * back. So a reading's redirects are judged by a later reading: against what the interface had
 * sent (less what our sockets had sent by the earlier reading) and counted dropped by then.
 * Frames redirected or sent between the two readings can hide a loss until a later reading,
 * never make one up.
 */
struct fwd_loss {
	uint64_t redirected, user_tx; /* the last reading's, since the epoch */
	bool read;                    /* a reading this epoch */
	uint64_t lost;                /* the most found lost and not counted dropped: never goes back */
	uint64_t judged, not_sent;    /* the last reading's judged redirects and those not sent */
};

/* A reading of counts since the epoch: redirected towards the interface, sent by our sockets on
 * it, sent by it (tx_packets) and counted dropped by it (tx_dropped). Judges the previous
 * reading's redirects (none at the epoch's first reading) and raises l->lost to those not sent
 * and not counted dropped, which it returns. *judged_new, *lost_new: the redirects judged since
 * the reading before, and how many more were found not sent (dropped ones included). */
static inline uint64_t fwd_loss_read(struct fwd_loss *l, uint64_t redirected, uint64_t user_tx, uint64_t sent,
				     uint64_t dropped, uint64_t *judged_new, uint64_t *lost_new)
{
	uint64_t delivered, judged = l->read ? l->redirected : 0, not_sent = 0;

	if (l->read) {
		delivered = sent > l->user_tx ? sent - l->user_tx : 0;
		not_sent = l->redirected > delivered ? l->redirected - delivered : 0;
	}
	*judged_new = judged - l->judged;
	*lost_new = not_sent > l->not_sent ? not_sent - l->not_sent : 0;
	l->judged = judged;
	l->not_sent = not_sent;
	l->redirected = redirected;
	l->user_tx = user_tx;
	l->read = true;
	if (not_sent <= dropped)
		return 0;
	if (not_sent - dropped > l->lost)
		l->lost = not_sent - dropped;
	return not_sent - dropped;
}

#endif
