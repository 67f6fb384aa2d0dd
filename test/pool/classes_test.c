/* SPDX-License-Identifier: MIT */
/* Size classes: the mvpp2 profile by default, selection by size, custom bounds, bad input. */
#include <umem/classes.h>
#include <stdio.h>
#include "testutil.h"

static char last_warning[512];

__attribute__((format(printf, 2, 0)))
static int capture(enum umem_print_level level, const char *fmt, va_list args)
{
	if (level == UMEM_WARN)
		vsnprintf(last_warning, sizeof(last_warning), fmt, args);
	return 0;
}

/* A bound above 2^31 names the page size it would need, 2^32, computed without overflow. */
static void huge_bound(void)
{
	struct umem_area *a = umem_area__create(4, NULL);
	UMEM_OPTS(umem_classes_opts, o, .nr = 2, .bounds = { 64, 0x80000001u });
	umem_print_fn_t old = umem_set_print(capture);

	CHECK(!umem_classes__create(a, &o) && errno == EINVAL, "bound 2^31 + 1 accepted");
	umem_set_print(old);
	CHECK(strstr(last_warning, "bounds[1] = 2147483649") &&
	      strstr(last_warning, "at least 4294967296 bytes"), "message: %s", last_warning);
	CHECK_EQ(umem_area__destroy(a), 0);
}

int main(void)
{
	huge_bound();
	UMEM_OPTS(umem_area_opts, small, .page_size = 4096);
	struct umem_area *a4 = umem_area__create(64, &small);

	/* The jumbo class does not fit a 4 KiB page: refused, nothing created. */
	CHECK(!umem_classes__create(a4, NULL) && errno == EINVAL, "mvpp2 profile on 4 KiB pages");
	CHECK_EQ(umem_area__destroy(a4), 0);

	UMEM_OPTS(umem_area_opts, big, .page_size = 16384);
	struct umem_area *a = umem_area__create(256, &big);
	struct umem_classes *c = umem_classes__create(a, NULL);
	CHECK(c, "mvpp2 profile: %s", strerror(errno));
	CHECK_EQ(umem_classes__count(c), 3);
	CHECK_EQ(umem_classes__bound(c, 0), 128);
	CHECK_EQ(umem_classes__bound(c, 1), 1664);
	CHECK_EQ(umem_classes__bound(c, 2), 9856);
	CHECK_EQ(umem_classes__index(c, 1), 0);
	CHECK_EQ(umem_classes__index(c, 128), 0);
	CHECK_EQ(umem_classes__index(c, 129), 1);
	CHECK_EQ(umem_classes__index(c, 9856), 2);
	CHECK_EQ(umem_classes__index(c, 9857), -EINVAL);

	uint64_t s[100], l[9], j[2], x = 99;
	uint32_t ts;
	for (int i = 0; i < 100; i++) {
		CHECK_EQ(umem_classes__alloc(c, 60, &s[i], &ts), 0);
		CHECK_EQ(ts, 128);
	}
	/* 100 short frames share one 16 KiB page: 128 bytes each. */
	CHECK_EQ(s[99] / 16384, s[0] / 16384);
	for (int i = 0; i < 9; i++)
		CHECK_EQ(umem_classes__alloc(c, 1500, &l[i], &ts), 0);
	CHECK_EQ(l[8] / 16384, l[0] / 16384); /* 9 long buffers per page */
	for (int i = 0; i < 2; i++) {
		CHECK_EQ(umem_classes__alloc(c, 9000, &j[i], &ts), 0);
		CHECK_EQ(ts, 16384); /* more than half a page: a whole page */
	}
	CHECK_EQ(umem_classes__alloc(c, 0, &x, NULL), -EINVAL);
	CHECK_EQ(umem_classes__alloc(c, 10000, &x, NULL), -EINVAL);
	CHECK_EQ(x, 99);
	struct umem_pool_stats st = { .sz = sizeof(st) };
	CHECK_EQ(umem_pool__stats(umem_classes__pool(c, 0), &st), 0);
	CHECK_EQ(st.frag_allocs, 100);

	for (int i = 0; i < 100; i++)
		umem_classes__put(c, s[i]);
	for (int i = 0; i < 9; i++)
		umem_classes__put(c, l[i]);
	umem_classes__put(c, j[0]);
	umem_classes__put(c, j[1]);
	CHECK_EQ(umem_classes__destroy(c), 0);

	/* Custom bounds; out-of-order bounds refused. */
	UMEM_OPTS(umem_classes_opts, co, .nr = 2, .bounds = { 256, 2048 });
	c = umem_classes__create(a, &co);
	CHECK(c, "custom: %s", strerror(errno));
	CHECK_EQ(umem_classes__index(c, 300), 1);
	CHECK_EQ(umem_classes__destroy(c), 0);
	UMEM_OPTS(umem_classes_opts, bad, .nr = 2, .bounds = { 2048, 256 });
	CHECK(!umem_classes__create(a, &bad) && errno == EINVAL, "unordered bounds accepted");
	CHECK_EQ(umem_area__free_pages(a), 256);
	CHECK_EQ(umem_area__destroy(a), 0);
	return 0;
}
