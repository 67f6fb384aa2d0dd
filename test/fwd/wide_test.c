/* SPDX-License-Identifier: MIT */
/* xdp-fwd: the interfaces' 32-bit link counts widened (sys.h, fwd_wide32), as offload's loss
 * count reads tx_packets: a wrap between two reads, and epochs that see several wraps. */
#include "testutil.h"
#include "sys.h"

int main(void)
{
	struct fwd_wide32 w = { 0 };
	uint64_t start, now;

	/* An interface that has sent 2^32 - 256 frames when the epoch starts, 512 more by the
	 * next read: its 32-bit tx_packets reads 256. Taken as 64-bit values, 256 - (2^32 - 256)
	 * is about 2^64: the loss count then saw every redirect delivered, and lost none again. */
	start = fwd_wide32_read(&w, 0xffffff00u);
	CHECK_EQ(start, 0xffffff00u);
	now = fwd_wide32_read(&w, 0x100u);
	CHECK(now - start == 512, "sent across a wrap: %llu, expected 512", (unsigned long long)(now - start));
	/* Reads a quarter of the range apart, 12 wraps on: the sum stays exact. */
	for (uint32_t i = 1; i <= 48; i++)
		now = fwd_wide32_read(&w, 0x100u + i * 0x40000000u);
	CHECK(now - start == 512 + 48ull * 0x40000000u, "after 12 wraps: %llu", (unsigned long long)(now - start));
	/* The same count read twice adds nothing; a fresh state (a new epoch) starts at the count. */
	CHECK_EQ(fwd_wide32_read(&w, 0x100u + 48 * 0x40000000u), now);
	w = (struct fwd_wide32){ 0 };
	CHECK_EQ(fwd_wide32_read(&w, 7), 7);
	printf("ok\n");
	return 0;
}
