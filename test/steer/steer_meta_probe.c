/* SPDX-License-Identifier: MIT */
/*
 * Helper of the offload tests (not a test by itself): prints 1 when the steering program this
 * kernel loads puts gate marks (XDP programs may call bpf_xdp_adjust_meta), 0 when not.
 */
#include <stdio.h>
#include <umem/fault.h> /* umem__steer_meta_ok */

int main(void)
{
	printf("%u\n", umem__steer_meta_ok());
	return 0;
}
