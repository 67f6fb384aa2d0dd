/* SPDX-License-Identifier: MIT */
/*
 * libumem's fault hooks, for test builds only (the tests, xdp-fwd-faults): they make the
 * library meet, on demand, a condition the kernel gives only by chance. Not installed, not part
 * of the ABI, in the static library only (hidden in the shared one); no other header includes
 * this one.
 */
#ifndef UMEM_FAULT_H
#define UMEM_FAULT_H

#include <stdint.h>

/* port.c: the next this many binds fail with EBUSY, as a queue does that a closed socket still
 * holds until the kernel's deferred release (xp_release_deferred) runs. */
extern uint32_t umem__fault_bind_busy __attribute__((visibility("hidden")));
/* port.c: how many times an area was registered as UMEM (XDP_UMEM_REG), counted: a test sees
 * that binds of a busy queue are retried on one registration. */
extern uint32_t umem__fault_umem_regs __attribute__((visibility("hidden")));
/* steer_attach.c: nonzero: the steering programs loaded from now on put no gate marks, as
 * where the kernel gives XDP programs no bpf_xdp_adjust_meta; umem__steer_meta_ok() is what
 * the next load takes: 1, marks (the kernel has the helper, or the probe could not tell: no
 * privilege), 0 none (no helper, or the fault). */
extern uint32_t umem__fault_no_meta __attribute__((visibility("hidden")));
uint8_t umem__steer_meta_ok(void) __attribute__((visibility("hidden")));

#endif
