/* SPDX-License-Identifier: MIT */
/* The area: validation of every argument, the page store, and hugepage backing. */
#include <stdio.h>
#include <unistd.h>
#include <umem/umem.h>
#include "testutil.h"

static int warnings;
static char last_warning[512];

__attribute__((format(printf, 2, 0)))
static int capture(enum umem_print_level level, const char *fmt, va_list args)
{
	if (level == UMEM_WARN) {
		warnings++;
		vsnprintf(last_warning, sizeof(last_warning), fmt, args);
	}
	return 0;
}

static void refused(uint32_t pages, uint32_t page_size, uint32_t flags, uint32_t chunk, int err,
		    const char *mentions)
{
	UMEM_OPTS(umem_area_opts, ao, .page_size = page_size, .flags = flags, .chunk_size = chunk);
	int before = warnings;

	errno = 0;
	CHECK(!umem_area__create(pages, &ao), "%u x %u flags %x chunk %u accepted", pages, page_size, flags, chunk);
	CHECK(errno == err, "%u x %u: errno %d, expected %d", pages, page_size, errno, err);
	CHECK(warnings > before && strstr(last_warning, mentions), "message '%s' lacks '%s'",
	      last_warning, mentions);
}

static long hugepages_free(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long n = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "HugePages_Free: %ld", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

/* Options and output structs: libbpf's OPTS rules, each refusal naming the struct and field. */
struct area_opts_v2 {
	struct umem_area_opts v1;
	uint64_t future;
};

static void expect_warning(const char *mentions)
{
	CHECK(strstr(last_warning, mentions), "message '%s' lacks '%s'", last_warning, mentions);
	last_warning[0] = 0;
}

static void opts_rules(struct umem_area *a)
{
	struct area_opts_v2 v2 = { .v1 = { .sz = sizeof(v2) } };
	struct umem_area *b;

	/* A newer caller's struct: fine while its new field is zero, refused once it is set. */
	b = umem_area__create(4, &v2.v1);
	CHECK(b, "zero trailing bytes refused: %s", last_warning);
	CHECK_EQ(umem_area__destroy(b), 0);
	v2.future = 1;
	CHECK(!umem_area__create(4, &v2.v1) && errno == EINVAL, "non-zero trailing bytes accepted");
	expect_warning("umem_area_opts has non-zero byte");
	struct umem_area_opts zero = { 0 };
	CHECK(!umem_area__create(4, &zero) && errno == EINVAL, "sz = 0 accepted");
	expect_warning("umem_area_opts.sz = 0 (use UMEM_OPTS");

	struct { struct umem_pool_opts v1; uint32_t future; } po2 = { { .sz = sizeof(po2) }, 7 };
	CHECK(!umem_pool__create(a, &po2.v1) && errno == EINVAL, "pool: trailing bytes accepted");
	expect_warning("umem_pool_opts has non-zero byte");
	struct { struct umem_classes_opts v1; uint32_t future; } co2 = { { .sz = sizeof(co2) }, 7 };
	CHECK(!umem_classes__create(a, &co2.v1) && errno == EINVAL, "classes: trailing bytes accepted");
	expect_warning("umem_classes_opts has non-zero byte");

	/* The port and steering options follow the same rule (checked before any privileged
	 * step, so no root is needed here). */
	struct { struct umem_port_opts v1; uint32_t future; } pt2 = { { .sz = sizeof(pt2) }, 7 };
	CHECK_EQ(umem_port__pages_needed(1, 0, NULL, &pt2.v1), -EINVAL);
	expect_warning("umem_port_opts has non-zero byte");
	struct { struct umem_steer_opts v1; uint32_t future; } so2 = { { .sz = sizeof(so2) }, 7 };
	CHECK(!umem_steer__attach("lo", &so2.v1) && errno == EINVAL, "steer: trailing bytes accepted");
	expect_warning("umem_steer_opts has non-zero byte");

	/* Output structs: a missing sz is a message, not a silent -EINVAL. */
	struct umem_pool *p = umem_pool__create(a, NULL);
	struct umem_pool_stats st = { 0 };
	CHECK(p, "pool: %s", strerror(errno));
	CHECK_EQ(umem_pool__stats(p, &st), -EINVAL);
	expect_warning("umem_pool_stats.sz = 0");
	CHECK_EQ(umem_pool__stats(NULL, &st), -EINVAL);
	expect_warning("NULL pool");
	/* A pool's own calls on bad input say what was wrong. */
	uint64_t x;
	CHECK_EQ(umem_pool__alloc_frag(p, 0, &x, NULL), -EINVAL);
	expect_warning("size 0 is not in 1..4096");
	CHECK_EQ(umem_pool__alloc_frag(p, 4097, &x, NULL), -EINVAL);
	expect_warning("size 4097");
	CHECK_EQ(umem_pool__alloc_frag(p, 64, NULL, NULL), -EINVAL);
	expect_warning("NULL addr");
	CHECK(!umem_pool__alloc_va(p, 0, NULL) && errno == EINVAL, "alloc_va(0)");
	expect_warning("size 0");
	CHECK_EQ(umem_pool__alloc_bulk(p, &x, 0), 0);
	CHECK_EQ(umem_pool__destroy(p), 0);
}

int main(void)
{
	umem_set_print(capture);
	refused(16, 3000, 0, 0, EINVAL, "power of two");
	refused(16, 2048, 0, 0, EINVAL, "power of two");
	refused(16, 131072, 0, 0, EINVAL, "power of two");
	refused(0, 4096, 0, 0, EINVAL, "not a valid size");
	refused(UINT32_MAX, 65536, 0, 0, EINVAL, "not a valid size");
	/* Beyond the machine's memory by one page, whatever the machine: a fixed size would pass
	 * the memory check on a host that has that much. Past 1 TiB the size itself is refused. */
	uint64_t phys = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t over = phys / 65536 + 1;

	if (over * 65536 <= 1ull << 40)
		refused((uint32_t)over, 65536, 0, 0, ENOMEM, "memory");
	else
		printf("area: %llu bytes of memory, more than the largest valid area: the memory check "
		       "cannot be reached\n", (unsigned long long)phys);
	refused((1u << 24) + 1, 65536, 0, 0, EINVAL, "not a valid size"); /* 1 TiB + 64 KiB */
	refused(16, 4096, 1u << 7, 0, EINVAL, "unknown flag 0x80 in umem_area_opts.flags");
	refused(16, 4096, 0, 1000, EINVAL, "umem_area_opts.chunk_size = 1000");
	refused(16, 4096, 0, 8192, EINVAL, "umem_area_opts.chunk_size = 8192");
	struct umem_area_opts bad = { .sz = 1 };
	CHECK(!umem_area__create(16, &bad) && errno == EINVAL, "tiny opts accepted");

	/* Hugepages: a clear error when none are reserved, a working area when some are. */
	if (hugepages_free() == 0)
		refused(16, 4096, UMEM_AREA_F_HUGEPAGES, 0, ENOMEM, "vm.nr_hugepages");
	else {
		UMEM_OPTS(umem_area_opts, ao, .flags = UMEM_AREA_F_HUGEPAGES);
		struct umem_area *h = umem_area__create(512, &ao);
		CHECK(h, "hugepage area: %s", strerror(errno));
		CHECK_EQ((uintptr_t)umem_area__base(h) % UMEM_HUGEPAGE_SIZE, 0);
		CHECK_EQ(umem_area__destroy(h), 0);
	}

	/* Pools: bad options refused, nothing registered on the area. */
	struct umem_area *a = umem_area__create(128, NULL);
	CHECK(a, "area: %s", strerror(errno));
	CHECK_EQ(umem_area__page_size(a), 4096);
	CHECK_EQ(umem_area__size(a), 128 * 4096);
	UMEM_OPTS(umem_pool_opts, po, .ring_size = 100);
	CHECK(!umem_pool__create(a, &po) && errno == EINVAL, "ring size 100 accepted");
	CHECK(!umem_pool__create(NULL, NULL) && errno == EINVAL, "NULL area accepted");

	/* The bulk page store. */
	uint64_t pages[200];
	CHECK_EQ(umem_area__get_pages(a, pages, 200), 128);
	CHECK_EQ(umem_area__free_pages(a), 0);
	CHECK_EQ(umem_area__get_pages(a, pages + 128, 1), 0);
	for (int i = 0; i < 128; i++)
		CHECK_EQ(pages[i] % 4096, 0);
	CHECK_EQ(umem_area__put_pages(a, pages, 128), 0);
	CHECK_EQ(umem_area__get_pages(a, pages, 0), 0);
	CHECK_EQ(umem_area__get_pages(a, NULL, 1), -EINVAL);
	CHECK_EQ(umem_area__free_pages(a), 128);
	opts_rules(a);
	CHECK_EQ(umem_area__destroy(a), 0);
	/* NULL: destroy-like calls are no-ops, getters return 0/NULL. */
	CHECK_EQ(umem_area__destroy(NULL), 0);
	CHECK_EQ(umem_pool__destroy(NULL), 0);
	CHECK(!umem_area__base(NULL) && !umem_area__size(NULL) && !umem_area__free_pages(NULL) &&
	      !umem_pool__area(NULL), "NULL getters");
	return 0;
}
