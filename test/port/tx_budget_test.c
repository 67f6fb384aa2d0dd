/* SPDX-License-Identifier: MIT */
/* XDP_MAX_TX_SKB_BUDGET (frames per copy-mode sendto(), Linux 6.17+): a socket that does not
 * know the option refuses it with a negative errno and nothing else happens (ports then keep
 * the kernel's 32); with the right privileges, an XDP socket with a TX ring takes a budget up
 * to the ring size and refuses one beyond it. Without an XDP socket (unprivileged, qemu-user)
 * only the first half runs and the test exits 77 (skip). */
#include <errno.h>
#include <linux/if_xdp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "testutil.h"
#include "port_internal.h"

int main(void)
{
	int udp = socket(AF_INET, SOCK_DGRAM, 0), xsk, ring = 512, r;

	CHECK(udp >= 0, "socket: %d", errno);
	CHECK_EQ(umem__port_tx_budget(udp, 256), -ENOPROTOOPT);
	close(udp);

	xsk = socket(AF_XDP, SOCK_RAW, 0);
	if (xsk < 0) {
		printf("skip: AF_XDP socket not available (%d): only the refusing half ran\n", errno);
		return TEST_SKIP;
	}
	/* qemu-user passes AF_XDP's socket() through but not its SOL_XDP options. */
	if (setsockopt(xsk, SOL_XDP, XDP_TX_RING, &ring, sizeof(ring))) {
		printf("skip: AF_XDP ring options not available (%d): only the refusing half ran\n", errno);
		close(xsk);
		return TEST_SKIP;
	}
	r = umem__port_tx_budget(xsk, 256);
	if (r == -ENOPROTOOPT) {
		printf("kernel before 6.17: the option is refused, as handled\n");
	} else {
		CHECK_EQ(r, 256);
		CHECK(umem__port_tx_budget(xsk, 1024) < 0, "a budget above the TX ring was taken");
		CHECK(umem__port_tx_budget(xsk, 16) < 0, "a budget below 32 was taken");
	}
	close(xsk);
	return 0;
}
