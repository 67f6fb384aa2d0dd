/* SPDX-License-Identifier: MIT */
/* Memory-safety violations abort loudly, naming the address. Each case runs in a child. */
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <unistd.h>
#include <umem/pool.h>
#include "childrun.h"

static struct umem_area *area;
static struct umem_pool *pool;

static void setup(bool debug)
{
	UMEM_OPTS(umem_area_opts, ao, .flags = debug ? UMEM_AREA_F_DEBUG : 0);
	area = umem_area__create(64, &ao);
	pool = umem_pool__create(area, NULL);
	CHECK(area && pool, "setup: %s", strerror(errno));
}

/* Runs in the child: tells the parent which address the abort message must name. */
static void expect(uint64_t addr)
{
	fprintf(stderr, "expect 0x%llx\n", (unsigned long long)addr);
	fflush(stderr);
}

/* Whole page put twice: caught at page level, even without debug tracking. */
static void double_put_page(void)
{
	uint64_t a;

	setup(false);
	umem_pool__alloc(pool, &a);
	expect(a);
	umem_pool__put(pool, a);
	umem_pool__put(pool, a);
}

static void foreign_address(void)
{
	setup(false);
	expect(umem_area__size(area) + 4096);
	umem_pool__put(pool, umem_area__size(area) + 4096);
}

static void foreign_address_bulk(void)
{
	uint64_t addrs[2];

	setup(false);
	umem_pool__alloc(pool, &addrs[0]);
	addrs[1] = 1ull << 40;
	expect(addrs[1]);
	umem_area__put_bulk(area, addrs, 2);
}

/* A fragment page still being carved: more puts than fragments drive its count below zero,
 * caught when the page is closed. */
static void underflow_on_drain(void)
{
	uint64_t a, b;

	setup(false);
	umem_pool__alloc_frag(pool, 2048, &a, NULL);
	expect(a & ~4095ull);
	for (int i = 0; i < 3; i++)
		umem_pool__put(pool, a);
	umem_pool__alloc_frag(pool, 2048, &b, NULL);
	umem_pool__alloc_frag(pool, 2048, &b, NULL);
}

/* More puts than references on a shared page. */
static void underflow_shared(void)
{
	uint64_t a;

	setup(false);
	umem_pool__alloc(pool, &a);
	umem_pool__ref(pool, a, 1);
	expect(a + 100);
	umem_pool__put(pool, a);
	umem_pool__put(pool, a);
	umem_pool__put(pool, a + 100);
}

/* A bulk put with no reference behind it on the current fragment page (its one fragment was
 * put already, by another thread): the page must not be cached while it is being carved. */
static void bulk_put_fragment_page(void)
{
	uint64_t a;

	setup(false);
	umem_pool__alloc_frag(pool, 2048, &a, NULL); /* 2 per page: the page stays open */
	umem_area__put(area, a);
	expect(a);
	umem_pool__put_bulk(pool, &a, 1);
}

/* A bulk put with no reference behind it on the page in the owner's put slot (the slot holds
 * the owner's reference, another thread dropped the other one). */
static void bulk_put_slot_page(void)
{
	uint64_t a;

	setup(false);
	umem_pool__alloc(pool, &a);
	umem_pool__ref(pool, a, 1);
	umem_pool__put(pool, a); /* into the put slot: another holds the page */
	umem_area__put(area, a);
	expect(a);
	umem_pool__put_bulk(pool, &a, 1);
}

/* Debug tracking: a fragment put twice while its page lives on. */
static void double_put_fragment(void)
{
	uint64_t a, b;

	setup(true);
	umem_pool__alloc_frag(pool, 256, &a, NULL);
	umem_pool__alloc_frag(pool, 256, &b, NULL);
	expect(a);
	umem_pool__put(pool, a);
	umem_pool__put(pool, a);
}

/* Debug tracking: put of an address inside a page but never allocated. */
static void put_unallocated_fragment(void)
{
	uint64_t a;

	setup(true);
	umem_pool__alloc_frag(pool, 256, &a, NULL);
	expect(a + 1024);
	umem_pool__put(pool, a + 1024);
}

/* A reference on a page that was allocated and freed (use after free). */
static void ref_on_free_page(void)
{
	uint64_t a;

	setup(false);
	umem_pool__alloc(pool, &a);
	umem_pool__put(pool, a);
	expect(a);
	umem_pool__ref(pool, a, 1);
}

/* Debug tracking: a reference on a freed fragment of a live page. */
static void ref_on_freed_fragment(void)
{
	uint64_t a, b;

	setup(true);
	umem_pool__alloc_frag(pool, 256, &a, NULL);
	umem_pool__alloc_frag(pool, 256, &b, NULL);
	umem_pool__put(pool, a);
	expect(a);
	umem_pool__ref(pool, a, 1);
}

/* A page put twice into the area: caught at the second put, not when the store overflows. */
static void area_double_put(void)
{
	uint64_t a[2];

	setup(false);
	umem_area__get_pages(area, a, 2); /* the store has room for the second put */
	umem_area__put_pages(area, a, 1);
	expect(a[0]);
	umem_area__put_pages(area, a, 1);
}

/* A reference on a page that went back to the area (its pool was destroyed): use after free,
 * not "never allocated". */
static void ref_after_area_return(void)
{
	uint64_t a;

	setup(false);
	struct umem_pool *other = umem_pool__create(area, NULL);
	umem_pool__alloc(pool, &a);
	umem_pool__put(pool, a);
	umem_pool__destroy(pool);
	expect(a);
	umem_pool__ref(other, a, 1);
}

/* Debug tracking: a stale fragment address whose page was recycled into another pool and is
 * that pool's current fragment page. Release builds cannot tell it from a live fragment. */
static void ref_on_recycled_fragment(void)
{
	uint64_t a, b, c;

	setup(true);
	struct umem_pool *other = umem_pool__create(area, NULL);
	umem_pool__alloc_frag(pool, 256, &a, NULL);
	umem_pool__alloc_frag(pool, 256, &b, NULL);
	umem_pool__put(pool, a);
	umem_pool__put(pool, b);
	umem_pool__destroy(pool); /* the page goes back to the area */
	umem_pool__alloc_frag(other, 256, &c, NULL); /* and is other's fragment page now */
	expect(b);
	umem_pool__ref(other, b, 1);
}

static pthread_barrier_t both;
static uint64_t shared_page;

static void *put_shared(void *arg)
{
	pthread_barrier_wait(&both);
	umem_area__put(arg, shared_page);
	return NULL;
}

/* Debug: two threads put one whole page at once; exactly one of them is the second. */
static void concurrent_double_put(void)
{
	pthread_t t[2];

	setup(true);
	umem_pool__alloc(pool, &shared_page);
	expect(shared_page);
	pthread_barrier_init(&both, NULL, 2);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, put_shared, area);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

static const struct {
	const char *name;
	void (*fn)(void);
	const char *reason;
} cases[] = {
	{ "double_put_page", double_put_page, "double put" },
	{ "foreign_address", foreign_address, "outside the area" },
	{ "foreign_address_bulk", foreign_address_bulk, "outside the area" },
	{ "underflow_on_drain", underflow_on_drain, "underflow" },
	{ "underflow_shared", underflow_shared, "double put" },
	{ "bulk_put_fragment_page", bulk_put_fragment_page, "underflow" },
	{ "bulk_put_slot_page", bulk_put_slot_page, "underflow" },
	{ "double_put_fragment", double_put_fragment, "double put" },
	{ "put_unallocated_fragment", put_unallocated_fragment, "never allocated" },
	{ "ref_on_free_page", ref_on_free_page, "use after free" },
	{ "ref_on_freed_fragment", ref_on_freed_fragment, "use after free" },
	{ "area_double_put", area_double_put, "put twice" },
	{ "ref_after_area_return", ref_after_area_return, "use after free" },
	{ "ref_on_recycled_fragment", ref_on_recycled_fragment, "use after free" },
	{ "concurrent_double_put", concurrent_double_put, "double put" },
};

/* Runs every case, or the one named by argv[1]. */
int main(int argc, char **argv)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[4096] = "";

		if (argc > 1 && strcmp(argv[1], cases[i].name))
			continue;
		int status = child_run(cases[i].fn, out, sizeof(out));
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "%s: did not abort:\n%s",
		      cases[i].name, out);
		char addr[40] = "";
		const char *fatal = strstr(out, "libumem: FATAL: ");
		CHECK(sscanf(out, "expect %39s", addr) == 1, "%s: no expected address", cases[i].name);
		CHECK(fatal && strstr(fatal, cases[i].reason) && strstr(fatal, addr),
		      "%s: message lacks the reason '%s' or the address %s:\n%s", cases[i].name,
		      cases[i].reason, addr, out);
		printf("%-26s aborted: %s", cases[i].name, fatal);
	}
	return 0;
}
