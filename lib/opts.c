/* SPDX-License-Identifier: MIT */
/* Size checks of the options and output structs, one rule for every struct of the API. */
#include "internal.h"

/* A struct larger than this is a garbage sz, not a newer caller. */
#define OPTS_SZ_MAX 4096u

bool umem__opts_check(const void *opts, size_t known, const char *type, const char *what)
{
	size_t sz;

	if (!opts)
		return true;
	sz = *(const size_t *)opts;
	if (sz < sizeof(size_t)) {
		pr_warn("%s: %s.sz = %zu (use UMEM_OPTS(%s, ...))\n", what, type, sz, type);
		return false;
	}
	if (sz > OPTS_SZ_MAX) {
		pr_warn("%s: %s.sz = %zu is not the size of an options struct (use UMEM_OPTS)\n", what,
			type, sz);
		return false;
	}
	/* libbpf's OPTS_VALID: a newer caller's fields we do not know must be unset. */
	for (size_t i = known; i < sz; i++) {
		if (((const unsigned char *)opts)[i]) {
			pr_warn("%s: %s has non-zero byte %zu beyond the %zu this libumem knows (built "
				"against a newer libumem?)\n", what, type, i, known);
			return false;
		}
	}
	return true;
}

bool umem__opts_pad(const void *opts, size_t from, size_t to, const char *type, const char *what)
{
	size_t sz;

	if (!opts)
		return true;
	sz = *(const size_t *)opts;
	for (size_t i = from; i < to && i < sz; i++) {
		if (((const unsigned char *)opts)[i]) {
			pr_warn("%s: %s has non-zero byte %zu in its reserved padding (zero the struct: "
				"UMEM_OPTS does)\n", what, type, i);
			return false;
		}
	}
	return true;
}

bool umem__out_check(const void *out, size_t min, const char *type, const char *what)
{
	size_t sz;

	if (!out) {
		pr_warn("%s: NULL %s\n", what, type);
		return false;
	}
	sz = *(const size_t *)out;
	if (sz < min || sz > OPTS_SZ_MAX) {
		pr_warn("%s: %s.sz = %zu (set it first: UMEM_OPTS(%s, st))\n", what, type, sz, type);
		return false;
	}
	return true;
}
