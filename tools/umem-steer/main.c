/* SPDX-License-Identifier: MIT */
/* umem-steer: show (and edit) the libumem steering program on an interface. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <umem/steer.h>

struct cmd {
	const char *name;
	const char *args;
	const char *help;
	int nargs; /* words after IFACE; -1 = one or more */
	int (*run)(struct umem_steer *s, char **argv, int argc);
};

static int cmd_show(struct umem_steer *s, char **argv, int argc);
static int cmd_add(struct umem_steer *s, char **argv, int argc);
static int cmd_remove(struct umem_steer *s, char **argv, int argc);
static int cmd_clear(struct umem_steer *s, char **argv, int argc);
static int cmd_default(struct umem_steer *s, char **argv, int argc);
static int cmd_reset(struct umem_steer *s, char **argv, int argc);

static const struct cmd cmds[] = {
	{ "show", "IFACE", "program, owner, default action, rules and counters", 0, cmd_show },
	{ "add", "IFACE RULE...", "add a rule, e.g. 'udp dport 5000 -> sock 1'", -1, cmd_add },
	{ "remove", "IFACE ID", "remove the rule with that id", 1, cmd_remove },
	{ "clear", "IFACE", "remove every rule", 0, cmd_clear },
	{ "default", "IFACE ACTION", "set the default action (sock N, group A-B, queue, pass, drop)", -1, cmd_default },
	{ "reset", "IFACE", "zero the counters", 0, cmd_reset },
};

static const struct option_help {
	struct option opt;
	const char *help;
} options[] = {
	{ { "help", no_argument, NULL, 'h' }, "print this help" },
	{ { "quiet", no_argument, NULL, 'q' }, "no library notices" },
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void usage(FILE *out)
{
	fprintf(out, "Usage: umem-steer [OPTIONS] COMMAND IFACE [ARGS]\n\nCommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		fprintf(out, "  %-8s %-16s %s\n", cmds[i].name, cmds[i].args, cmds[i].help);
	fprintf(out, "\nOptions:\n");
	for (size_t i = 0; i < ARRAY_SIZE(options); i++)
		fprintf(out, "  -%c, --%-10s %s\n", options[i].opt.val, options[i].opt.name, options[i].help);
	fprintf(out, "\nRule syntax: [prio N] MATCH... -> ACTION  (see docs/STEERING.md)\n");
}

static const char *mode_name(uint32_t m)
{
	return m == UMEM_STEER_MODE_GENERIC ? "generic" : "native";
}

static int cmd_show(struct umem_steer *s, char **argv, int argc)
{
	struct umem_steer_info info = { .sz = sizeof(info) };
	struct umem_steer_rule rules[UMEM_STEER_MAX_RULES];
	struct umem_steer_counter c[UMEM_STEER_S_NR], rc;
	struct umem_steer_action dflt;
	char text[256];
	uint32_t flags;
	int n, err;

	if ((err = umem_steer__info(s, &info)) || (err = umem_steer__default(s, &dflt)) ||
	    (err = umem_steer__table_flags(s, &flags)) || (err = umem_steer__action_counters(s, c)))
		return err;
	n = umem_steer__rules(s, rules, UMEM_STEER_MAX_RULES);
	if (n < 0)
		return n;
	printf("program %u, %s XDP via %s, owner pid %u%s\n", info.prog_id, mode_name(info.mode),
	       info.attach == UMEM_STEER_ATTACH_LIBXDP ? "libxdp (outlives its owner)" : "bpf_link (dies with its owner)", info.owner_pid,
	       info.owner_alive ? "" : " (gone)");
	printf("sockets %u, rx queues %u, table generation %llu, flags:%s%s%s\n", info.nr_sockets,
	       info.nr_queues, (unsigned long long)info.generation,
	       flags & UMEM_STEER_F_HOST_CONTROL ? " host-control" : "", flags & UMEM_STEER_F_TRACE ? " trace" : "",
	       flags ? "" : " none");
	printf("\n%4s %-48s %14s %16s\n", "id", "rule", "packets", "bytes");
	for (int i = 0; i < n; i++) {
		if ((err = umem_steer__rule_counter(s, rules[i].id, &rc)))
			return err;
		umem_steer_rule__format(&rules[i], text, sizeof(text));
		printf("%4u %-48s %14llu %16llu\n", rules[i].id, text, (unsigned long long)rc.packets,
		       (unsigned long long)rc.bytes);
	}
	if ((err = umem_steer__rule_counter(s, UMEM_STEER_RULE_DEFAULT, &rc)))
		return err;
	umem_steer_action__format(&dflt, text, sizeof(text));
	printf("%4s default -> %-37s %14llu %16llu\n", "-", text, (unsigned long long)rc.packets,
	       (unsigned long long)rc.bytes);
	printf("\n%-14s %14s %16s\n", "action", "packets", "bytes");
	for (uint32_t i = 0; i < UMEM_STEER_S_NR; i++)
		if (umem_steer_stat__name(i))
			printf("%-14s %14llu %16llu\n", umem_steer_stat__name(i), (unsigned long long)c[i].packets,
			       (unsigned long long)c[i].bytes);
	return 0;
}

/* The remaining words, joined: rule text may come as one argument or as many. */
static int join(char **argv, int argc, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; i < argc; i++) {
		int w = snprintf(buf + n, len - n, "%s%s", i ? " " : "", argv[i]);

		if (w < 0 || (size_t)w >= len - n)
			return -E2BIG;
		n += w;
	}
	return 0;
}

static int cmd_add(struct umem_steer *s, char **argv, int argc)
{
	struct umem_steer_rule r;
	char text[256];
	int err;

	if ((err = join(argv, argc, text, sizeof(text))) || (err = umem_steer_rule__parse(text, &r)) ||
	    (err = umem_steer__add_rule(s, &r)))
		return err;
	printf("rule %u added\n", r.id);
	return 0;
}

static int cmd_remove(struct umem_steer *s, char **argv, int argc)
{
	char *end;
	unsigned long id = strtoul(argv[0], &end, 0);

	if (*end || end == argv[0]) {
		fprintf(stderr, "umem-steer: bad rule id '%s'\n", argv[0]);
		return -EINVAL;
	}
	return umem_steer__remove_rule(s, id);
}

static int cmd_clear(struct umem_steer *s, char **argv, int argc)
{
	return umem_steer__clear_rules(s);
}

static int cmd_default(struct umem_steer *s, char **argv, int argc)
{
	struct umem_steer_action a;
	char text[256];
	int err;

	if ((err = join(argv, argc, text, sizeof(text))) || (err = umem_steer_action__parse(text, &a)))
		return err;
	return umem_steer__set_default(s, &a);
}

static int cmd_reset(struct umem_steer *s, char **argv, int argc)
{
	return umem_steer__reset_counters(s);
}

int main(int argc, char **argv)
{
	struct option longopts[ARRAY_SIZE(options) + 1] = {};
	char shortopts[2 * ARRAY_SIZE(options) + 2] = "+"; /* stop at the command: "->" is no option */
	const struct cmd *cmd = NULL;
	struct umem_steer *s;
	int opt, err, nargs;

	for (size_t i = 0; i < ARRAY_SIZE(options); i++) {
		longopts[i] = options[i].opt;
		shortopts[strlen(shortopts)] = options[i].opt.val;
		if (options[i].opt.has_arg)
			strcat(shortopts, ":");
	}
	while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			usage(stdout);
			return 0;
		case 'q':
			umem_set_print(NULL);
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind < 2) {
		usage(stderr);
		return 2;
	}
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		if (!strcmp(argv[optind], cmds[i].name))
			cmd = &cmds[i];
	nargs = argc - optind - 2;
	if (!cmd) {
		fprintf(stderr, "umem-steer: unknown command '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if ((cmd->nargs >= 0 && nargs != cmd->nargs) || (cmd->nargs < 0 && nargs < 1)) {
		fprintf(stderr, "umem-steer: usage: %s %s\n", cmd->name, cmd->args);
		return 2;
	}
	s = umem_steer__open(argv[optind + 1]);
	if (!s)
		return 1;
	err = cmd->run(s, argv + optind + 2, nargs);
	umem_steer__detach(s); /* opened, not owned: this only closes */
	if (err) {
		fprintf(stderr, "umem-steer: %s %s: %s\n", cmd->name, argv[optind + 1], strerror(-err));
		return 1;
	}
	return 0;
}
