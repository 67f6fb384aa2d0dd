/* SPDX-License-Identifier: MIT */
/* One option table -> getopt_long, messages and --help (cli.h). */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <umem/port.h>
#include <umem/steer.h>

#include "cli.h"

#define HELP_WIDTH 79  /* the last column --help writes: fits an 80-column terminal */
#define HELP_INDENT 28 /* where option help starts */

/* Every program has these two; they are not in the tables. */
static const struct cli_opt builtin[] = {
	{ "help", 'h', NULL, "print this help and exit", .kind = CLI_FN },
	{ "version", 'V', NULL, "print the version and exit", .kind = CLI_FN },
};
#define NR_BUILTIN (sizeof(builtin) / sizeof(builtin[0]))

int cli_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

void cli_die(const struct cli_prog *p, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", p->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see --help)\n", stderr);
	exit(2);
}

int cli_parse_u64(const char *opt, const char *arg, uint64_t min, uint64_t max, uint64_t *out,
		  char *err, size_t errlen)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (!arg || *arg < '0' || *arg > '9')
		return cli_fail(err, errlen, "--%s: '%s' is not a number", opt, arg ? arg : "");
	v = strtoull(arg, &end, 10);
	if (errno || *end)
		return cli_fail(err, errlen, "--%s: '%s' is not a number", opt, arg);
	if (v < min || v > max)
		return cli_fail(err, errlen, "--%s: '%s' is out of range %llu..%llu", opt, arg,
				(unsigned long long)min, (unsigned long long)max);
	*out = v;
	return 0;
}

int cli_parse_u32(const char *opt, const char *arg, uint32_t min, uint32_t max, uint32_t *out,
		  char *err, size_t errlen)
{
	uint64_t v = 0; /* gcc -O3 cannot see that cli_parse_u64 sets it whenever it returns 0 */

	if (cli_parse_u64(opt, arg, min, max, &v, err, errlen))
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int cli_parse_seconds(const char *opt, const char *arg, double min, double max, double *out,
		      char *err, size_t errlen)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v >= min) || !(v <= max))
		return cli_fail(err, errlen, "--%s: '%s' is not a number of seconds in %g..%g", opt,
				arg, min, max);
	*out = v;
	return 0;
}

void cli_help_item(FILE *out, const char *left, const char *text)
{
	int col = fprintf(out, "  %s", left);

	if (col >= HELP_INDENT) {
		fputc('\n', out);
		col = 0;
	}
	col += fprintf(out, "%*s", HELP_INDENT - col - 1, "");
	while (*text) {
		int len = (int)strcspn(text, " ");

		if (col + 1 + len > HELP_WIDTH && col > HELP_INDENT - 1) {
			fprintf(out, "\n%*s", HELP_INDENT - 1, "");
			col = HELP_INDENT - 1;
		}
		if (col + 1 + len > HELP_WIDTH) /* a word longer than a line: cut it */
			len = HELP_WIDTH - col - 1;
		col += fprintf(out, " %.*s", len, text);
		text += len;
		text += strspn(text, " ");
	}
	fputc('\n', out);
}

/* A paragraph wrapped at HELP_WIDTH; '\n' in text starts a new line. */
static void wrap(FILE *out, const char *text)
{
	int col = 0;

	while (*text) {
		int len = (int)strcspn(text, " \n");

		if (col && col + 1 + len > HELP_WIDTH) {
			fputc('\n', out);
			col = 0;
		}
		col += fprintf(out, "%s%.*s", col ? " " : "", len, text);
		text += len;
		if (*text == '\n') {
			fputc('\n', out);
			col = 0;
			text++;
		}
		text += strspn(text, " ");
	}
	if (col)
		fputc('\n', out);
}

static void option_item(FILE *out, const struct cli_opt *o)
{
	char left[64];

	snprintf(left, sizeof(left), "%c%c%c --%s%s%s", o->short_name ? '-' : ' ',
		 o->short_name ? o->short_name : ' ', o->short_name ? ',' : ' ', o->name,
		 o->arg ? " " : "", o->arg ? o->arg : "");
	cli_help_item(out, left, o->help);
}

void cli_usage(const struct cli_prog *p, FILE *out)
{
	const char *s = p->synopsis;

	for (int first = 1; first || *s; first = 0) {
		int len = (int)strcspn(s, "\n");

		fprintf(out, "%s %s %.*s\n", first ? "Usage:" : "      ", p->name, len, s);
		s += len;
		s += *s == '\n';
	}
	if (p->summary) {
		fputc('\n', out);
		wrap(out, p->summary);
	}
	fprintf(out, "\nOptions:\n");
	for (size_t i = 0; i < p->nr_opts; i++)
		option_item(out, &p->opts[i]);
	for (size_t i = 0; i < NR_BUILTIN; i++)
		option_item(out, &builtin[i]);
	if (p->more_help) {
		fputc('\n', out);
		p->more_help(out);
	}
}

void cli_version(const struct cli_prog *p, FILE *out)
{
	fprintf(out, "%s (libumem) %d.%d\n", p->name, UMEM_VERSION_MAJOR, UMEM_VERSION_MINOR);
}

int cli_parse_xdp_mode(const char *arg, uint32_t *mode, char *err, size_t errlen)
{
	_Static_assert((int)UMEM_PORT_ATTACH_NATIVE == (int)UMEM_STEER_MODE_NATIVE &&
			       (int)UMEM_PORT_ATTACH_GENERIC == (int)UMEM_STEER_MODE_GENERIC &&
			       (int)UMEM_PORT_ATTACH_AUTO == (int)UMEM_STEER_MODE_AUTO,
		       "one value for both attach-mode enums");
	static const struct {
		const char *name;
		uint32_t mode;
	} modes[] = {
		{ "native", UMEM_PORT_ATTACH_NATIVE },
		{ "skb", UMEM_PORT_ATTACH_GENERIC },
		{ "auto", UMEM_PORT_ATTACH_AUTO },
	};

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(arg, modes[i].name)) {
			*mode = modes[i].mode;
			return 0;
		}
	return cli_fail(err, errlen, "--xdp-mode: unknown mode '%s' (native, skb, auto)", arg);
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

int cli_apply(const struct cli_opt *o, void *cfg, const char *arg, char *err, size_t errlen)
{
	char *field = (char *)cfg + o->off;
	uint64_t v;

	switch (o->kind) {
	case CLI_FN:
		return o->set(cfg, arg, err, errlen);
	case CLI_FLAG:
		*(bool *)(void *)field = o->value;
		return 0;
	case CLI_U32:
	case CLI_POW2:
		if (cli_parse_u64(o->name, arg, o->min, o->max, &v, err, errlen))
			return -1;
		if (o->kind == CLI_POW2 && !is_pow2(v))
			return cli_fail(err, errlen, "--%s: %s is not a power of two", o->name, arg);
		/* Table offsets come from offsetof() of a field of this type: aligned. */
		*(uint32_t *)(void *)field = (uint32_t)v;
		return 0;
	case CLI_U64:
		return cli_parse_u64(o->name, arg, o->min, o->max, (uint64_t *)(void *)field, err, errlen);
	case CLI_SECONDS:
		return cli_parse_seconds(o->name, arg, o->fmin, o->fmax, (double *)(void *)field, err,
					 errlen);
	case CLI_STRING:
		if (o->max && strlen(arg) > o->max)
			return cli_fail(err, errlen, "--%s: '%s' is longer than %llu characters", o->name,
					arg, (unsigned long long)o->max);
		*(const char **)(void *)field = arg;
		return 0;
	}
	return cli_fail(err, errlen, "--%s: bad option table", o->name);
}

/* Long-only options return 256 + their index; the built-ins follow the table. */
static const struct cli_opt *opt_at(const struct cli_prog *p, size_t i)
{
	return i < p->nr_opts ? &p->opts[i] : &builtin[i - p->nr_opts];
}

int cli_parse(const struct cli_prog *p, void *cfg, int argc, char **argv, int first, int *next,
	      char *err, size_t errlen)
{
	size_t n = p->nr_opts + NR_BUILTIN;
	struct option *longopts = calloc(n + 1, sizeof(*longopts));
	char *shortopts = malloc(2 * n + 3);
	size_t ns = 0;
	int c, ret = 0;

	if (!longopts || !shortopts) {
		free(longopts);
		free(shortopts);
		return cli_fail(err, errlen, "out of memory");
	}
	if (p->stop_at_operand)
		shortopts[ns++] = '+';
	shortopts[ns++] = ':'; /* a missing argument is ':', an unknown option '?' */
	for (size_t i = 0; i < n; i++) {
		const struct cli_opt *o = opt_at(p, i);

		longopts[i] = (struct option){ o->name, o->arg ? required_argument : no_argument, NULL,
					       o->short_name ? o->short_name : 256 + (int)i };
		if (o->short_name) {
			shortopts[ns++] = (char)o->short_name;
			if (o->arg)
				shortopts[ns++] = ':';
		}
	}
	shortopts[ns] = '\0';

	/* optind = 0 re-initialises GNU getopt fully, so a program (or a test) can parse twice;
	 * argv[0] is skipped either way, so parsing from `first` shifts the vector. */
	optind = 0;
	opterr = 0;
	argv += first - 1;
	argc -= first - 1;
	while (!ret && (c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const struct cli_opt *o = NULL;

		if (c == '?') {
			if (optopt && optopt < 256)
				ret = cli_fail(err, errlen, "unknown option '-%c'", optopt);
			else
				ret = cli_fail(err, errlen, "unknown option '%s'", argv[optind - 1]);
			break;
		}
		if (c == ':') {
			ret = cli_fail(err, errlen, "option '%s' needs an argument", argv[optind - 1]);
			break;
		}
		for (size_t i = 0; i < n && !o; i++)
			if (c == opt_at(p, i)->short_name || c == 256 + (int)i)
				o = opt_at(p, i);
		if (o == &builtin[0]) {
			cli_usage(p, stdout);
			ret = 1;
		} else if (o == &builtin[1]) {
			cli_version(p, stdout);
			ret = 1;
		} else {
			ret = cli_apply(o, cfg, optarg, err, errlen);
			if (!ret && p->on_option)
				p->on_option(cfg, o);
		}
	}
	if (next)
		*next = optind + first - 1;
	free(longopts);
	free(shortopts);
	return ret;
}

int cli_parse_or_exit(const struct cli_prog *p, void *cfg, int argc, char **argv, int first)
{
	char err[256];
	int next, ret = cli_parse(p, cfg, argc, argv, first, &next, err, sizeof(err));

	if (ret > 0)
		exit(0);
	if (ret < 0)
		cli_die(p, "%s", err);
	return next;
}
