/* SPDX-License-Identifier: MIT */
/*
 * The cycle counter of umem-bench, per architecture. What a "cycle" is differs:
 *  - x86_64: the TSC (rdtsc). On CPUs with constant_tsc it ticks at the nominal frequency, not
 *    the core clock, so under turbo or power saving a TSC cycle is not a core cycle. This is the
 *    unit the kernel's time_bench reports, so our numbers compare with its "cycles(tsc)".
 *  - aarch64: the generic timer's virtual count (cntvct_el0), a system counter at cntfrq_el0 Hz
 *    (typically 24..1000 MHz): one tick can be dozens of core cycles. We report its ticks as they
 *    are and print its frequency; we do not invent a core-cycle figure.
 *  - elsewhere: clock_gettime(CLOCK_MONOTONIC) in nanoseconds (a "cycle" is then 1 ns).
 */
#ifndef UMEM_BENCH_COUNTER_H
#define UMEM_BENCH_COUNTER_H

#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
#define COUNTER_NAME "tsc"
#define COUNTER_UNIT "cycles"
#define COUNTER_WHAT "x86 TSC (rdtsc): constant-rate reference cycles at the nominal frequency"
static inline uint64_t counter_read(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}
/* 0: the frequency is measured against CLOCK_MONOTONIC. */
static inline uint64_t counter_hz_declared(void) { return 0; }
#elif defined(__aarch64__)
#define COUNTER_NAME "cntvct_el0"
#define COUNTER_UNIT "ticks"
#define COUNTER_WHAT "arm64 generic timer (cntvct_el0): system-counter ticks at cntfrq_el0, not core cycles"
static inline uint64_t counter_read(void)
{
	uint64_t v;

	/* isb: the read is not hoisted above the code being timed. */
	__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v)::"memory");
	return v;
}
static inline uint64_t counter_hz_declared(void)
{
	uint64_t hz;

	__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(hz));
	return hz;
}
#else
#define COUNTER_NAME "clock_gettime"
#define COUNTER_UNIT "ns"
#define COUNTER_WHAT "no cycle counter on this architecture: CLOCK_MONOTONIC nanoseconds"
static inline uint64_t counter_read(void) { return now_ns(); }
static inline uint64_t counter_hz_declared(void) { return 1000000000ull; }
#endif

#endif
