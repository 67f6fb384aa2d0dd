/* SPDX-License-Identifier: MIT */
/* xdp-fwd: offload's loss count (offload_loss.h) with frames in flight when the counters are
 * read: counted redirected by the program, not yet handed to the target; counted sent by our
 * socket, still on its TX ring. Such frames are no loss. */
#include "testutil.h"
#include "offload_loss.h"

int main(void)
{
	struct fwd_loss l = { 0 };
	uint64_t judged, lost_new, lost;

	/* Reading 1: 100 redirected and 10 sent by our socket; the interface has sent 105, as 3
	 * redirected frames wait for the end of their NAPI poll and 2 of ours on the TX ring. */
	lost = fwd_loss_read(&l, 100, 10, 105, 0, &judged, &lost_new);
	CHECK(lost == 0 && judged == 0 && lost_new == 0, "the first reading judges nothing: lost %llu",
	      (unsigned long long)lost);
	/* Reading 2: all 110 sent, 50 more redirected meanwhile, 40 of them sent already. */
	lost = fwd_loss_read(&l, 150, 10, 150, 0, &judged, &lost_new);
	CHECK_EQ(judged, 100);
	CHECK_EQ(lost_new, 0);
	CHECK(lost == 0 && l.lost == 0, "frames in flight at a reading taken for lost: %llu (count %llu)",
	      (unsigned long long)lost, (unsigned long long)l.lost);

	/* A real loss: 4 of reading 2's 150 redirects never sent, 1 of them counted dropped by the
	 * interface (xdp-fwd reports that one already). */
	lost = fwd_loss_read(&l, 150, 10, 156, 1, &judged, &lost_new);
	CHECK(lost_new == 4 && lost == 3 && l.lost == 3,
	      "newly not sent %llu, uncounted %llu (count %llu): expected 4, 3 and 3", (unsigned long long)lost_new,
	      (unsigned long long)lost, (unsigned long long)l.lost);
	CHECK_EQ(judged, 50); /* since the reading before */
	/* The count never goes back, and frames sent since can hide a loss but not undo it. */
	lost = fwd_loss_read(&l, 200, 10, 206, 1, &judged, &lost_new);
	CHECK(l.lost == 3 && lost == 0 && lost_new == 0, "count went from 3 to %llu (reading %llu)",
	      (unsigned long long)l.lost, (unsigned long long)lost);
	/* Counts below the user frames (an interface replaced mid-epoch): nothing delivered, all lost. */
	l = (struct fwd_loss){ 0 };
	fwd_loss_read(&l, 5, 20, 10, 0, &judged, &lost_new);
	CHECK_EQ(fwd_loss_read(&l, 5, 20, 10, 0, &judged, &lost_new), 5);
	CHECK_EQ(lost_new, 5);
	printf("ok\n");
	return 0;
}
