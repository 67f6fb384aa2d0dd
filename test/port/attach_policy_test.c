/* SPDX-License-Identifier: MIT */
/*
 * The one native -> generic fallback policy of lib/xdp_attach.c (label unit), on a fake attach
 * step: AUTO falls back after any native refusal except EBUSY/EEXIST and logs the native
 * error; a failure in both modes names both errors; NATIVE never falls back; GENERIC never
 * tries native. Ports and steering both attach through it.
 */
#include <linux/if_link.h>
#include "testutil.h"
#include "xdp_attach.h"

struct fake {
	int native, generic; /* results per mode */
	int calls_native, calls_generic;
};

static int attempt(void *ctx, uint32_t xdp_flags)
{
	struct fake *f = ctx;

	if (xdp_flags == XDP_FLAGS_DRV_MODE) {
		f->calls_native++;
		return f->native;
	}
	CHECK_EQ(xdp_flags, XDP_FLAGS_SKB_MODE);
	f->calls_generic++;
	return f->generic;
}

static char log_text[2048];

__attribute__((format(printf, 2, 0)))
static int capture(enum umem_print_level level, const char *fmt, va_list args)
{
	size_t used = strlen(log_text);

	(void)level;
	if (used < sizeof(log_text) - 1)
		vsnprintf(log_text + used, sizeof(log_text) - used, fmt, args);
	return 0;
}

/* Runs one attach; checks the result, the modes tried, the mode reported and the log. */
static void expect(uint32_t mode, int native, int generic, int ret, int tried_native,
		   int tried_generic, uint32_t flags, const char *log1, const char *log2)
{
	struct fake f = { .native = native, .generic = generic };
	uint32_t xdp_flags = 0;

	log_text[0] = 0;
	CHECK_EQ(umem__xdp_attach("test", mode, attempt, &f, &xdp_flags), ret);
	CHECK_EQ(f.calls_native, tried_native);
	CHECK_EQ(f.calls_generic, tried_generic);
	if (ret >= 0)
		CHECK_EQ(xdp_flags, flags);
	CHECK(!log1 || strstr(log_text, log1), "mode %u native %d generic %d: log lacks '%s': %s",
	      mode, native, generic, log1, log_text);
	CHECK(!log2 || strstr(log_text, log2), "mode %u native %d generic %d: log lacks '%s': %s",
	      mode, native, generic, log2, log_text);
}

int main(void)
{
	umem_set_print(capture);
	/* AUTO: native works. */
	expect(UMEM__ATTACH_AUTO, 7, 8, 7, 1, 0, XDP_FLAGS_DRV_MODE, NULL, NULL);
	/* AUTO: every refusal but EBUSY/EEXIST falls back, naming the native error. */
	expect(UMEM__ATTACH_AUTO, -EOPNOTSUPP, 8, 8, 1, 1, XDP_FLAGS_SKB_MODE, "native XDP refused",
	       strerror(EOPNOTSUPP));
	expect(UMEM__ATTACH_AUTO, -EINVAL, 8, 8, 1, 1, XDP_FLAGS_SKB_MODE, strerror(EINVAL), NULL);
	expect(UMEM__ATTACH_AUTO, -ENOMEM, 8, 8, 1, 1, XDP_FLAGS_SKB_MODE, strerror(ENOMEM), NULL);
	expect(UMEM__ATTACH_AUTO, -ERANGE, 8, 8, 1, 1, XDP_FLAGS_SKB_MODE, strerror(ERANGE), NULL);
	/* AUTO: a program already there is reported, never doubled in the other mode. */
	expect(UMEM__ATTACH_AUTO, -EBUSY, 8, -EBUSY, 1, 0, 0, strerror(EBUSY), "already holds");
	expect(UMEM__ATTACH_AUTO, -EEXIST, 8, -EEXIST, 1, 0, 0, strerror(EEXIST), "already holds");
	/* AUTO: both modes fail: both errors named. */
	expect(UMEM__ATTACH_AUTO, -EINVAL, -EPERM, -EPERM, 1, 1, 0, strerror(EINVAL), strerror(EPERM));
	/* NATIVE: no fallback. GENERIC: native never tried. */
	expect(UMEM__ATTACH_NATIVE, -EOPNOTSUPP, 8, -EOPNOTSUPP, 1, 0, 0, "no native XDP", NULL);
	expect(UMEM__ATTACH_GENERIC, 7, 8, 8, 0, 1, XDP_FLAGS_SKB_MODE, NULL, NULL);
	expect(UMEM__ATTACH_GENERIC, 7, -EPERM, -EPERM, 0, 1, 0, "generic XDP attach failed", NULL);
	printf("attach policy: fallback, refusals and messages as documented\n");
	return 0;
}
