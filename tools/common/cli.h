/* SPDX-License-Identifier: MIT */
/*
 * The command line of every libumem program: one option table per program drives
 * getopt_long, the error messages and --help, so the tools share one vocabulary
 * (docs/CLI.md) and one look. -h/--help and -V/--version are added to every table.
 * Not part of libumem: a static library the apps and tools link (tools/common).
 */
#ifndef UMEM_CLI_H
#define UMEM_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* How an option stores its value in the program's configuration struct. */
enum cli_kind {
	CLI_FN,      /* set(cfg, arg) */
	CLI_FLAG,    /* bool at off := value; no argument */
	CLI_U32,     /* uint32_t at off, decimal in [min, max] */
	CLI_POW2,    /* the same, and a power of two */
	CLI_U64,     /* uint64_t at off, decimal in [min, max] */
	CLI_SECONDS, /* double at off, seconds in [fmin, fmax] */
	CLI_STRING,  /* const char * at off := the argument (at most max bytes when max != 0) */
};

struct cli_opt {
	const char *name;  /* long name, without "--" */
	int short_name;    /* 0: long only */
	const char *arg;   /* the argument's name in --help; NULL: takes none */
	const char *help;  /* one sentence, wrapped by --help */
	enum cli_kind kind;
	size_t off;
	uint64_t min, max;
	double fmin, fmax;
	bool value;
	/* CLI_FN: 0, or -1 after writing a message into err (cli_fail). */
	int (*set)(void *cfg, const char *arg, char *err, size_t errlen);
};

/* Table helpers: { "batch", 'b', "N", "descriptors per burst", CLI_U32_AT(struct cfg, batch, 1, 256) } */
#define CLI_SET(fn) .kind = CLI_FN, .set = (fn)
#define CLI_FLAG_AT(type, field, v) .kind = CLI_FLAG, .off = offsetof(type, field), .value = (v)
#define CLI_U32_AT(type, field, lo, hi) .kind = CLI_U32, .off = offsetof(type, field), .min = (lo), .max = (hi)
#define CLI_POW2_AT(type, field, lo, hi) .kind = CLI_POW2, .off = offsetof(type, field), .min = (lo), .max = (hi)
#define CLI_U64_AT(type, field, lo, hi) .kind = CLI_U64, .off = offsetof(type, field), .min = (lo), .max = (hi)
#define CLI_SECONDS_AT(type, field, lo, hi) .kind = CLI_SECONDS, .off = offsetof(type, field), .fmin = (lo), .fmax = (hi)
#define CLI_STRING_AT(type, field, maxlen) .kind = CLI_STRING, .off = offsetof(type, field), .max = (maxlen)

/* A program's option table, for struct cli_prog: .opts and its length, taken from the array. */
#define CLI_OPTS(table) .opts = (table), .nr_opts = sizeof(table) / sizeof((table)[0])

struct cli_prog {
	const char *name;     /* in Usage:, in messages and in --version (never argv[0]'s path) */
	const char *synopsis; /* what follows "Usage: NAME "; '\n' separates alternative forms */
	const char *summary;  /* a paragraph under the usage line, wrapped */
	const struct cli_opt *opts;
	size_t nr_opts;
	/* After the options: more help (examples, a list of names); lines under 80 columns. */
	void (*more_help)(FILE *out);
	bool stop_at_operand; /* options end at the first operand (a command, a rule) */
	/* Called after each option of the table cli_parse applied (may be NULL): a program that
	 * also reads a configuration file learns what the command line set. */
	void (*on_option)(void *cfg, const struct cli_opt *o);
};

/*
 * Parses argv[first..argc) into cfg. Returns 0 with *next at the first operand, 1 when
 * --help or --version was printed on stdout (exit 0), -1 with a message in err (exit 2).
 */
int cli_parse(const struct cli_prog *p, void *cfg, int argc, char **argv, int first, int *next,
	      char *err, size_t errlen);
/* cli_parse for a main(): returns the first operand's index, or exits (0 after --help or
 * --version, 2 after "NAME: message (see --help)" on stderr). */
int cli_parse_or_exit(const struct cli_prog *p, void *cfg, int argc, char **argv, int first);

/* Applies one option of a table with its argument (NULL for a flag), as cli_parse does: a
 * configuration file's "name = value" goes through the same checks. 0, or -1 with err set. */
int cli_apply(const struct cli_opt *o, void *cfg, const char *arg, char *err, size_t errlen);

void cli_usage(const struct cli_prog *p, FILE *out);
void cli_version(const struct cli_prog *p, FILE *out);
/* "  LEFT   TEXT" with TEXT wrapped to 79 columns under itself: option and name lists. */
void cli_help_item(FILE *out, const char *left, const char *text);
/* "NAME: message (see --help)" on stderr, exit 2: for checks after cli_parse. */
void cli_die(const struct cli_prog *p, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

/* --xdp-mode MODE, as xdp-tools spell it: "native", "skb" or "auto" into an
 * enum umem_port_xdp_attach (whose values enum umem_steer_mode shares). 0, or -1 with err set. */
int cli_parse_xdp_mode(const char *arg, uint32_t *mode, char *err, size_t errlen);
/* Its option-table row, for a CLI_SET setter that stores the result. */
#define CLI_XDP_MODE_HELP "XDP attach mode: native, skb (generic) or auto (native, else skb with a notice; default)"

/* Writes the message into err and returns -1 (for CLI_FN setters). */
int cli_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Decimal in [min, max]; opt (a long name) goes into the message. 0, or -1 with err set. */
int cli_parse_u64(const char *opt, const char *arg, uint64_t min, uint64_t max, uint64_t *out,
		  char *err, size_t errlen);
int cli_parse_u32(const char *opt, const char *arg, uint32_t min, uint32_t max, uint32_t *out,
		  char *err, size_t errlen);
int cli_parse_seconds(const char *opt, const char *arg, double min, double max, double *out,
		      char *err, size_t errlen);

#endif
