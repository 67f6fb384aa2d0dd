/* SPDX-License-Identifier: MIT */
/*
 * Edge cases of the allocator, one per argument:
 *  classes_share  a class that runs dry takes the idle pages its siblings keep cached
 *  prefill_dry    prefill on a dry area takes free pages only, never another ring's (or its own)
 *  null_inline    the inline alloc and ref reject NULL as the out-of-line calls do (-EINVAL)
 *  print_unlocked the print callback runs without the area lock: it may call into the area
 *  frag_flush     an empty current fragment page goes back on flush and on a dry refill
 *  slot_dry       a dry refill recycles the put slot's page once its other holders are gone
 *  empty_stat     alloc.empty counts empty rings, not a busy one
 *  debug_env      LIBUMEM_DEBUG=1 / yes / ... turns exact tracking on (a double fragment put
 *                 aborts), =0 / no / false / off / empty leave it off
 *  opts_padding   an options struct's reserved padding must be zero (a later field goes there)
 */
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <unistd.h>
#include <umem/classes.h>
#include <umem/pool.h>
#include "childrun.h"

static void classes_share(void)
{
	UMEM_OPTS(umem_classes_opts, co, .nr = 2, .bounds = { 128, 1664 });
	struct umem_area *a = umem_area__create(64, NULL);
	struct umem_classes *c = umem_classes__create(a, &co);
	static uint64_t addrs[64 * 32];
	uint32_t n = 0;
	uint64_t x;

	CHECK(a && c, "setup: %s", strerror(errno));
	/* Short frames take the whole area, then all come back: every page idles in the short
	 * class's cache. */
	while (n < 64 * 32 && !umem_classes__alloc(c, 100, &addrs[n], NULL))
		n++;
	CHECK_EQ(n, 64 * 32);
	CHECK_EQ(umem_classes__alloc(c, 100, &x, NULL), -ENOMEM);
	for (uint32_t i = 0; i < n; i++)
		umem_classes__put(c, addrs[i]);
	/* The long class gets the whole area: 2 frames a page. */
	for (n = 0; n < 128; n++)
		CHECK_EQ(umem_classes__alloc(c, 1500, &addrs[n], NULL), 0);
	CHECK_EQ(umem_classes__alloc(c, 1500, &x, NULL), -ENOMEM);
	for (uint32_t i = 0; i < n; i++)
		umem_classes__put(c, addrs[i]);
	/* And back the other way. */
	CHECK_EQ(umem_classes__alloc(c, 64, &x, NULL), 0);
	umem_classes__put(c, x);
	CHECK_EQ(umem_classes__destroy(c), 0);
	CHECK_EQ(umem_area__destroy(a), 0);
}

static void prefill_dry(void)
{
	struct umem_area *a = umem_area__create(128, NULL);
	struct umem_pool *p = umem_pool__create(a, NULL), *q = umem_pool__create(a, NULL);
	struct umem_pool *r = umem_pool__create(a, NULL);
	uint64_t addrs[64];
	UMEM_OPTS(umem_pool_stats, st);

	CHECK(a && p && q && r, "setup: %s", strerror(errno));
	CHECK_EQ(umem_pool__prefill(p, 64), 64);
	CHECK_EQ(umem_pool__alloc_bulk(q, addrs, 64), 64); /* the area is dry now */
	CHECK_EQ(umem_area__free_pages(a), 0);
	CHECK_EQ(umem_pool__prefill(p, 64), 0); /* nothing free: nothing taken */
	CHECK_EQ(umem_pool__prefill(r, 64), 0); /* nor from p's prefilled ring */
	CHECK_EQ(umem_pool__stats(r, &st), 0);
	CHECK_EQ(st.pages_held, 0);
	/* p's working set is intact: its 64 pages come from its own ring. */
	uint64_t mine[64];
	CHECK_EQ(umem_pool__alloc_bulk(p, mine, 64), 64);
	CHECK_EQ(umem_pool__stats(p, &st), 0);
	CHECK_EQ(st.pages_held, 64);
	CHECK_EQ(st.alloc.empty, 0);
	umem_pool__put_bulk(p, mine, 64);
	umem_pool__put_bulk(q, addrs, 64);
	CHECK_EQ(umem_pool__destroy(r), 0);
	CHECK_EQ(umem_pool__destroy(q), 0);
	CHECK_EQ(umem_pool__destroy(p), 0);
	CHECK_EQ(umem_area__destroy(a), 0);
}

/* Through a volatile pointer, so the compiler cannot see the NULL (and warn) at build time. */
static struct umem_pool *volatile null_pool;
static uint64_t *volatile null_addr;

static void null_inline(void)
{
	struct umem_area *a = umem_area__create(4, NULL);
	struct umem_pool *p = umem_pool__create(a, NULL);
	uint64_t x;

	CHECK(a && p, "setup: %s", strerror(errno));
	CHECK_EQ(umem_pool__alloc(null_pool, &x), -EINVAL);
	CHECK_EQ(umem_pool__alloc(p, null_addr), -EINVAL);
	CHECK_EQ(umem_pool__ref(null_pool, 0, 1), -EINVAL);
	CHECK_EQ(umem_pool__alloc_frag(null_pool, 100, &x, NULL), -EINVAL);
	CHECK_EQ(umem_pool__alloc_bulk(null_pool, &x, 1), -EINVAL);
	/* Nothing changed: the pool still works. */
	CHECK_EQ(umem_pool__alloc(p, &x), 0);
	CHECK_EQ(umem_pool__ref(p, x, 1), 0);
	umem_pool__put(p, x);
	umem_pool__put(p, x);
	CHECK_EQ(umem_pool__destroy(p), 0);
	CHECK_EQ(umem_area__destroy(a), 0);
}

static struct umem_area *cb_area;
static unsigned cb_calls;

__attribute__((format(printf, 2, 0)))
static int area_print(enum umem_print_level level, const char *fmt, va_list args)
{
	(void)level;
	(void)fmt;
	(void)args;
	/* Takes the area lock: a deadlock if the caller holds it (alarm() fails the test). */
	if (cb_area)
		(void)umem_area__free_pages(cb_area);
	cb_calls++;
	return 0;
}

static void print_unlocked(void)
{
	struct umem_area *a = umem_area__create(64, NULL);
	struct umem_pool *idle = umem_pool__create(a, NULL), *busy = umem_pool__create(a, NULL);
	uint64_t addrs[64];

	CHECK(a && idle && busy, "setup: %s", strerror(errno));
	CHECK_EQ(umem_pool__alloc_bulk(idle, addrs, 64), 64);
	umem_area__put_bulk(a, addrs, 64); /* every page into idle's ring */
	cb_area = a;
	umem_set_print(area_print);
	alarm(20);
	/* The area is dry: this reclaims idle's ring, and says so. */
	CHECK_EQ(umem_pool__alloc_bulk(busy, addrs, 64), 64);
	alarm(0);
	umem_set_print(NULL);
	CHECK(cb_calls > 0, "the reclaim logged nothing");
	umem_pool__put_bulk(busy, addrs, 64);
	CHECK_EQ(umem_pool__destroy(busy), 0);
	CHECK_EQ(umem_pool__destroy(idle), 0);
	CHECK_EQ(umem_area__destroy(a), 0);
}

static void frag_flush(void)
{
	struct umem_area *a = umem_area__create(1, NULL);
	struct umem_pool *p = umem_pool__create(a, NULL), *q = umem_pool__create(a, NULL);
	uint64_t x;

	CHECK(a && p && q, "setup: %s", strerror(errno));
	CHECK_EQ(umem_pool__alloc_frag(p, 100, &x, NULL), 0);
	umem_pool__put(p, x); /* the page is empty, still p's current fragment page */
	CHECK_EQ(umem_pool__flush(p), 1);
	CHECK_EQ(umem_area__free_pages(a), 1);
	CHECK_EQ(umem_pool__alloc(q, &x), 0);
	umem_pool__put(q, x);
	CHECK_EQ(umem_pool__flush(q), 1);
	/* A dry refill: the empty fragment page serves a whole-page alloc of its own pool. */
	CHECK_EQ(umem_pool__alloc_frag(p, 100, &x, NULL), 0);
	umem_pool__put(p, x);
	CHECK_EQ(umem_pool__alloc(p, &x), 0);
	umem_pool__put(p, x);
	CHECK_EQ(umem_pool__destroy(q), 0);
	CHECK_EQ(umem_pool__destroy(p), 0);
	CHECK_EQ(umem_area__destroy(a), 0);
}

/* The other half of a dry refill: the put slot is subtracted, so its page, whose other holder
 * is gone, serves the allocation (counted fast, from the cache it was recycled into). */
static void slot_dry(void)
{
	struct umem_area *a = umem_area__create(1, NULL);
	struct umem_pool *p = umem_pool__create(a, NULL);
	UMEM_OPTS(umem_pool_stats, st);
	uint64_t x, y;

	CHECK(a && p, "setup: %s", strerror(errno));
	CHECK_EQ(umem_pool__alloc(p, &x), 0);
	CHECK_EQ(umem_pool__ref(p, x, 1), 0);
	umem_pool__put(p, x); /* another holds the page: into p's put slot */
	umem_area__put(a, x);       /* that one goes: the slot holds the page's only reference */
	CHECK_EQ(umem_area__free_pages(a), 0);
	CHECK_EQ(umem_pool__stats(p, &st), 0);
	CHECK_EQ(st.alloc.fast, 0);
	CHECK_EQ(st.alloc.slow, 1);
	CHECK_EQ(umem_pool__alloc(p, &y), 0);
	CHECK_EQ(y, x);
	CHECK_EQ(umem_pool__stats(p, &st), 0);
	CHECK_EQ(st.alloc.fast, 1);
	CHECK_EQ(st.alloc.slow, 1);
	CHECK_EQ(st.recycle.cached, 1);
	umem_pool__put(p, y);
	CHECK_EQ(umem_pool__destroy(p), 0);
	CHECK_EQ(umem_area__destroy(a), 0);
}

/* A busy ring: another thread (here, a stand-in) holds the consumer lock while the owner runs
 * dry. umem__ring_trylock is wrapped (--wrap) to report it busy once. */
bool __real_umem__ring_trylock(void *r);
static volatile int ring_busy;
bool __wrap_umem__ring_trylock(void *r);
bool __wrap_umem__ring_trylock(void *r)
{
	if (ring_busy) {
		ring_busy = 0;
		return 0;
	}
	return __real_umem__ring_trylock(r);
}

static void empty_stat(void)
{
	struct umem_area *a = umem_area__create(4, NULL);
	struct umem_pool *p = umem_pool__create(a, NULL);
	UMEM_OPTS(umem_pool_stats, st);
	uint64_t x;

	CHECK(a && p, "setup: %s", strerror(errno));
	ring_busy = 1;
	CHECK_EQ(umem_pool__alloc(p, &x), 0);
	CHECK_EQ(umem_pool__stats(p, &st), 0);
	CHECK_EQ(st.alloc.empty, 0); /* the ring was busy, not empty */
	CHECK_EQ(st.alloc.slow, 1);
	umem_pool__put(p, x);
	CHECK_EQ(umem_pool__destroy(p), 0);
	CHECK_EQ(umem_area__destroy(a), 0);
}

/* In a child: a fragment put twice while its page lives on. Only debug mode's exact tracking
 * tells the second put from a put of the other fragment, and aborts. */
static void debug_double_put(void)
{
	struct umem_area *a = umem_area__create(2, NULL);
	struct umem_pool *p = umem_pool__create(a, NULL);
	uint64_t x, y;

	CHECK(a && p, "setup: %s", strerror(errno));
	CHECK_EQ(umem_pool__alloc_frag(p, 256, &x, NULL), 0);
	CHECK_EQ(umem_pool__alloc_frag(p, 256, &y, NULL), 0);
	umem_pool__put(p, x);
	umem_pool__put(p, x);
}

static void debug_env(void)
{
	static const char *const off[] = { "0", "no", "false", "off", "NO", "False", "" };
	static const char *const on[] = { "1", "yes", "true", "on" };

	for (unsigned i = 0; i < sizeof(off) / sizeof(off[0]) + sizeof(on) / sizeof(on[0]); i++) {
		bool want = i >= sizeof(off) / sizeof(off[0]);
		const char *v = want ? on[i - sizeof(off) / sizeof(off[0])] : off[i];
		char out[4096];

		setenv("LIBUMEM_DEBUG", v, 1);
		int status = child_run(debug_double_put, out, sizeof(out));
		if (want)
			CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT &&
				      strstr(out, "double put"),
			      "LIBUMEM_DEBUG='%s': the double fragment put did not abort:\n%s", v, out);
		else
			CHECK(WIFEXITED(status) && !WEXITSTATUS(status) && strstr(out, "no abort"),
			      "LIBUMEM_DEBUG='%s': debug mode is on (status 0x%x):\n%s", v, status, out);
	}
	unsetenv("LIBUMEM_DEBUG");
}

static void opts_padding(void)
{
	struct umem_pool_opts po;
	struct umem_area_opts ao;
	struct umem_area *a;

	/* UMEM_OPTS zeroes the padding: accepted. */
	UMEM_OPTS(umem_area_opts, good, .page_size = 4096);
	a = umem_area__create(4, &good);
	CHECK(a, "UMEM_OPTS area: %s", strerror(errno));
	UMEM_OPTS(umem_pool_opts, pgood, .ring_size = 64);
	struct umem_pool *p = umem_pool__create(a, &pgood);
	CHECK(p, "UMEM_OPTS pool: %s", strerror(errno));
	CHECK_EQ(umem_pool__destroy(p), 0);
	/* Junk in the reserved bytes (after the last field): refused, as a later field's value. */
	memset(&po, 0xa5, sizeof(po));
	po.sz = sizeof(po);
	po.ring_size = 64;
	errno = 0;
	CHECK(!umem_pool__create(a, &po) && errno == EINVAL, "pool opts with junk padding accepted");
	memset(&ao, 0xa5, sizeof(ao));
	ao.sz = sizeof(ao);
	ao.page_size = 4096;
	ao.flags = 0;
	ao.chunk_size = 0;
	errno = 0;
	CHECK(!umem_area__create(4, &ao) && errno == EINVAL, "area opts with junk padding accepted");
	/* An older caller's sz that stops before the padding is not read past. */
	po.sz = offsetof(struct umem_pool_opts, ring_size) + sizeof(po.ring_size);
	p = umem_pool__create(a, &po);
	CHECK(p, "short pool opts: %s", strerror(errno));
	CHECK_EQ(umem_pool__destroy(p), 0);
	CHECK_EQ(umem_area__destroy(a), 0);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} cases[] = {
		{ "classes_share", classes_share }, { "prefill_dry", prefill_dry },
		{ "null_inline", null_inline },     { "print_unlocked", print_unlocked },
		{ "frag_flush", frag_flush },       { "empty_stat", empty_stat },
		{ "debug_env", debug_env },         { "opts_padding", opts_padding },
		{ "slot_dry", slot_dry },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (argc > 1 && strcmp(argv[1], cases[i].name))
			continue;
		cases[i].fn();
		printf("ok %s\n", cases[i].name);
	}
	return 0;
}
