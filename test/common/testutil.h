/* SPDX-License-Identifier: MIT */
/* Minimal test helpers: CHECK aborts the test with file:line and a message; exit codes follow
 * ctest's convention (0 pass, 1 fail, 77 skip). */
#ifndef UMEM_TESTUTIL_H
#define UMEM_TESTUTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <time.h>

#define TEST_SKIP 77

#define CHECK(cond, ...)                                                              \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                 \
			fputc('\n', stderr);                                          \
			exit(1);                                                      \
		}                                                                     \
	} while (0)

#define CHECK_EQ(a, b)                                                                \
	do {                                                                          \
		long long _a = (long long)(a), _b = (long long)(b);                   \
		CHECK(_a == _b, "%s = %lld, expected %s = %lld", #a, _a, #b, _b);       \
	} while (0)

/* The cases of a test program that ctest runs one by one (umem_test_case): the program's
 * argument names the case. */
struct test_case {
	const char *name;
	int (*run)(void);
};

/* Runs the case argv[1] names (the only argument); otherwise prints the usage and returns 2. */
static inline int test_case_run(const struct test_case *cases, size_t n, int argc, char **argv)
{
	for (size_t i = 0; argc == 2 && i < n; i++)
		if (!strcmp(argv[1], cases[i].name))
			return cases[i].run();
	fprintf(stderr, "usage: %s", argv[0]);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s%s", i ? " | " : " ", cases[i].name);
	fputc('\n', stderr);
	return 2;
}

/* Monotonic milliseconds, for waits that end. */
static inline long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ll + ts.tv_nsec / 1000000;
}

/* Deterministic PRNG (xorshift64*) so failures reproduce from the seed. */
static inline uint64_t test_rand(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* Reference Internet checksum (RFC 1071) over 16-bit big-endian words, kept apart from the
 * code under test (which sums 32 bits at a time): s plus the bytes, folded to 16 bits, not
 * complemented. */
static inline uint32_t test_csum_fold(uint32_t s, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

#endif
