/* SPDX-License-Identifier: MIT */
/* The shared option parser (tools/common/cli.c): every kind of option stores what it should,
 * bad values and unknown options are refused with a message naming them, operands and a later
 * start index work, --help/--version return 1, and the help stays within 80 columns. */
#include "testutil.h"
#include "cli.h"

struct cfg {
	bool flag;
	uint32_t u32, pow2;
	uint64_t u64;
	double secs;
	const char *str;
	int calls;
};

static int set_fn(void *v, const char *arg, char *err, size_t errlen)
{
	struct cfg *c = v;

	if (!strcmp(arg, "bad"))
		return cli_fail(err, errlen, "--fn: '%s' is refused", arg);
	c->calls++;
	return 0;
}

static const struct cli_opt opts[] = {
	{ "flag", 'f', NULL, "a flag", CLI_FLAG_AT(struct cfg, flag, true) },
	{ "u32", 'u', "N", "a number", CLI_U32_AT(struct cfg, u32, 1, 100) },
	{ "pow2", 0, "N", "a power of two", CLI_POW2_AT(struct cfg, pow2, 2, 4096) },
	{ "u64", 'n', "N", "a big number", CLI_U64_AT(struct cfg, u64, 0, UINT64_MAX) },
	{ "secs", 'd', "SECS", "seconds", CLI_SECONDS_AT(struct cfg, secs, 0.5, 10) },
	{ "str", 's', "TEXT", "at most 4 characters", CLI_STRING_AT(struct cfg, str, 4) },
	{ "fn", 0, "X", "a function, with a help text long enough to be wrapped over several lines "
			"of the help output, and averyveryveryveryveryveryveryveryveryveryverylongword",
	  CLI_SET(set_fn) },
};

static const struct cli_prog prog = {
	.name = "cli-test",
	.synopsis = "[OPTIONS] CMD\nother",
	.summary = "A summary.",
	CLI_OPTS(opts),
};

static struct cfg cfg;
static char err[256];
static int next;

static int parse_from(const struct cli_prog *p, int first, const char *const *args)
{
	static char *argv[32];
	int argc = 0;

	for (int i = 0; argv[i]; i++) {
		free(argv[i]);
		argv[i] = NULL;
	}
	argv[argc++] = strdup("/some/path/cli-test");
	for (; *args; args++)
		argv[argc++] = strdup(*args);
	memset(&cfg, 0, sizeof(cfg));
	err[0] = '\0';
	return cli_parse(p, &cfg, argc, argv, first, &next, err, sizeof(err));
}
#define PARSE(...) parse_from(&prog, 1, (const char *const[]){ __VA_ARGS__, NULL })
#define BAD(needle, ...)                                                              \
	do {                                                                          \
		CHECK_EQ(PARSE(__VA_ARGS__), -1);                                     \
		CHECK(strstr(err, needle), "message '%s' lacks '%s'", err, needle);   \
	} while (0)

static void test_kinds(void)
{
	CHECK_EQ(PARSE("-f", "-u", "7", "--pow2", "64", "-n", "18446744073709551615", "-d", "2.5",
		       "--str=abcd", "--fn", "x", "--fn", "y", "op1", "op2"), 0);
	CHECK(cfg.flag, "flag");
	CHECK_EQ(cfg.u32, 7);
	CHECK_EQ(cfg.pow2, 64);
	CHECK(cfg.u64 == UINT64_MAX, "u64 %llu", (unsigned long long)cfg.u64);
	CHECK(cfg.secs == 2.5, "secs %g", cfg.secs);
	CHECK(!strcmp(cfg.str, "abcd"), "str");
	CHECK_EQ(cfg.calls, 2);
	CHECK_EQ(next, 15); /* GNU getopt moves the operands to the end */
	/* A second parse starts afresh (getopt re-initialised). */
	CHECK_EQ(PARSE("-u", "3"), 0);
	CHECK_EQ(cfg.u32, 3);
	CHECK(!cfg.flag, "flag left over");
}

static void test_errors(void)
{
	BAD("--u32: '0' is out of range 1..100", "-u", "0");
	BAD("--u32: '12x' is not a number", "--u32", "12x");
	BAD("--u32: '-3' is not a number", "-u", "-3");
	BAD("--pow2: 48 is not a power of two", "--pow2", "48");
	BAD("--u64: '18446744073709551616' is not a number", "-n", "18446744073709551616");
	BAD("--secs: 'soon' is not a number of seconds in 0.5..10", "-d", "soon");
	BAD("--secs: '0.1' is not a number of seconds", "-d", "0.1");
	BAD("--str: 'abcde' is longer than 4 characters", "-s", "abcde");
	BAD("--fn: 'bad' is refused", "--fn", "bad");
	BAD("unknown option '-x'", "-x");
	BAD("unknown option '--nope'", "--nope");
	BAD("option '--u32' needs an argument", "--u32");
	BAD("option '-u' needs an argument", "-u");
}

static void test_operands(void)
{
	const struct cli_prog stop = { .name = "stop", .synopsis = "", .opts = opts, .nr_opts = 2,
				       .stop_at_operand = true };

	/* Options after the first operand belong to it (a rule such as "-> drop"). */
	CHECK_EQ(parse_from(&stop, 1, (const char *const[]){ "-f", "add", "-u", "x", NULL }), 0);
	CHECK(cfg.flag && !cfg.u32, "stop at the operand");
	CHECK_EQ(next, 2);
	/* Parsing from a later index skips a leading mode word. */
	CHECK_EQ(parse_from(&prog, 2, (const char *const[]){ "gen", "-u", "9", NULL }), 0);
	CHECK_EQ(cfg.u32, 9);
	CHECK_EQ(next, 4);
}

static char *capture(const char *opt, int *ret)
{
	static char *buf;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len), *saved = stdout;

	stdout = f;
	*ret = PARSE(opt);
	stdout = saved;
	fclose(f);
	return buf;
}

static void test_help_version(void)
{
	int ret;
	char *out = capture("--help", &ret), *line;

	CHECK_EQ(ret, 1);
	const char *head = "Usage: cli-test [OPTIONS] CMD\n       cli-test other\n\nA summary.\n\nOptions:\n";

	CHECK(!strncmp(out, head, strlen(head)), "usage: %s", out);
	CHECK(!strstr(out, "/some/path"), "the help names argv[0]'s path");
	for (const char *o = "-f, --flag\0    --pow2 N\0-h, --help\0-V, --version\0"; *o; o += strlen(o) + 1)
		CHECK(strstr(out, o), "--help lacks '%s'", o);
	for (line = out; *line; ) {
		size_t n = strcspn(line, "\n");

		CHECK(n <= 80, "a help line of %zu columns: %.*s", n, (int)n, line);
		line += n + (line[n] == '\n');
	}
	free(out);
	out = capture("-V", &ret);
	CHECK_EQ(ret, 1);
	CHECK(!strncmp(out, "cli-test (libumem) ", 19), "version: %s", out);
	free(out);
	out = capture("-h", &ret);
	CHECK_EQ(ret, 1);
	CHECK(!strncmp(out, "Usage: cli-test", 15), "-h: %s", out);
	free(out);
}

int main(void)
{
	test_kinds();
	test_errors();
	test_operands();
	test_help_version();
	printf("cli_parse: ok\n");
	return 0;
}
