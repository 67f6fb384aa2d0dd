/* SPDX-License-Identifier: MIT */
/*
 * fwd_reload's memory: 200 reloads of a --config file (a rule that changes each time, and
 * unchanged ones) leave the allocated bytes where they were after the first few. A reload used
 * to keep each file text for the run (the running rules pointed into it). No ports, workers or
 * steering programs: the configuration side of a reload only.
 */
#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include "ctx.h"
#include "portlive.h"
#include "reload.h"
#include "testutil.h"
#include "worker.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifdef SANITIZED
/* The sanitizer runtime's (libasan, libtsan); declared here: gcc ships no
 * <sanitizer/allocator_interface.h>, clang does. */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

/* Without --offload-after a reload parks no worker. */
bool fwd_workers_park(struct fwd_ctx *ctx)
{
	(void)ctx;
	return true;
}

void fwd_workers_unpark(struct fwd_ctx *ctx)
{
	(void)ctx;
}

/* The -i set never changes here: a reload that called these would fail the test. */
int fwd_ports_change(struct fwd_ctx *ctx, const struct fwd_port_name *rm, uint32_t nr_rm, const struct fwd_port_name *add,
		     uint32_t nr_add, uint32_t flags, char *err, size_t errlen)
{
	(void)ctx, (void)rm, (void)nr_rm, (void)add, (void)nr_add, (void)flags;
	snprintf(err, errlen, "not in this test");
	return -EINVAL;
}

void fwd_ports_diff(const struct fwd_ctx *ctx, const struct fwd_config *next, struct fwd_port_name *rm, uint32_t *nr_rm,
		    struct fwd_port_name *add, uint32_t *nr_add)
{
	(void)ctx, (void)next, (void)rm, (void)add;
	*nr_rm = *nr_add = 0;
}

void fwd_ports_adopt(struct fwd_ctx *ctx, const struct fwd_config *next)
{
	(void)ctx, (void)next;
}

static size_t allocated(void)
{
#ifdef SANITIZED
	return __sanitizer_get_current_allocated_bytes(); /* the sanitizer's allocator, not glibc's */
#else
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
#endif
}

static void write_conf(const char *path, unsigned port)
{
	FILE *f = fopen(path, "w");

	CHECK(f, "%s: %s", path, strerror(errno));
	fprintf(f, "# reload_test\ninterface = lo@0\ninterface = lo@1\nrule = \"udp dport %u -> drop\"\nrule = \"tcp dport 22 -> pass\"\n", port);
	CHECK(!fclose(f), "%s", path);
}

static struct fwd_ctx ctx;
static struct fwd_config cfg;

int main(void)
{
	char path[] = "/tmp/fwd_reload_test.XXXXXX", err[512], expect[64];
	char prog[] = "xdp-fwd", opt[] = "--config";
	char *argv[] = { prog, opt, path, NULL };
	int fd = mkstemp(path), quiet = open("/dev/null", O_WRONLY), saved = dup(2);
	size_t base = 0, now;

	CHECK(fd >= 0 && quiet >= 0 && saved >= 0, "%s", strerror(errno));
	close(fd);
	write_conf(path, 1000);
	CHECK(!fwd_parse_args(&cfg, 3, argv, err, sizeof(err)), "%s", err);
	ctx.cfg = &cfg;
	for (unsigned i = 1; i <= 200; i++) {
		unsigned port = i % 3 ? 1000 + i : 1000 + i - 1; /* every third reload: unchanged */

		write_conf(path, port);
		dup2(quiet, 2); /* a line per reload */
		int ret = fwd_reload(&ctx, 3, argv, err, sizeof(err));

		dup2(saved, 2);
		CHECK(ret == 0, "reload %u: %s", i, err);
		snprintf(expect, sizeof(expect), "udp dport %u -> drop", port);
		CHECK_EQ(cfg.nr_rules, 2);
		CHECK(!strcmp(cfg.rule_text[0], expect), "reload %u: rule '%s', not '%s'", i, cfg.rule_text[0], expect);
		CHECK(!strcmp(cfg.rule_text[1], "tcp dport 22 -> pass"), "reload %u: '%s'", i, cfg.rule_text[1]);
		if (i == 10)
			base = allocated();
	}
	now = allocated();
	CHECK(now <= base + 64 * 1024, "allocated %zu bytes after 10 reloads, %zu after 200: %zu per reload", base, now,
	      (now - base) / 190);
	unlink(path);
	fwd_config_free(&cfg);
	printf("fwd_reload_mem: allocated %zu bytes after 10 reloads, %zu after 200\n", base, now);
	return 0;
}
