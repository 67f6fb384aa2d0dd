/* SPDX-License-Identifier: MIT */
/* Memory-safety violations abort loudly, naming the address. Each case runs in a child. */
#include <signal.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <unistd.h>
#include <umem/pool.h>
#include "testutil.h"

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
	umem_put_bulk(area, addrs, 2);
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
	{ "double_put_fragment", double_put_fragment, "double put" },
	{ "put_unallocated_fragment", put_unallocated_fragment, "never allocated" },
	{ "ref_on_free_page", ref_on_free_page, "use after free" },
	{ "ref_on_freed_fragment", ref_on_freed_fragment, "use after free" },
};

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int fds[2], status;
		char out[4096] = "";
		ssize_t n, len = 0;

		CHECK(!pipe(fds), "pipe");
		pid_t pid = fork();
		CHECK(pid >= 0, "fork");
		if (pid == 0) {
			dup2(fds[1], 2);
			close(fds[0]);
			cases[i].fn();
			/* Reaching here means the violation went unnoticed; print the expected address so
			 * the parent can still name it. */
			fprintf(stderr, "no abort\n");
			_exit(0);
		}
		close(fds[1]);
		while ((n = read(fds[0], out + len, sizeof(out) - 1 - (size_t)len)) > 0)
			len += n;
		close(fds[0]);
		out[len] = 0;
		CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
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
