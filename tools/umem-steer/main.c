/* SPDX-License-Identifier: MIT */
/* umem-steer: show (and edit) the libumem steering program on an interface. */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <umem/steer.h>

#include "flows.h"

#include "cli.h"

struct cmd {
	const char *name;
	const char *args;
	const char *help;
	int nargs; /* words after IFACE; -1 = one or more, -2 = any */
	int (*run)(struct umem_steer *s, char **argv, int argc);
};

/* A command's result when it has printed its own error. */
#define REPORTED 1
/* The longest line `load` takes, its comment included. */
#define LOAD_LINE_MAX 4096

static int cmd_show(struct umem_steer *s, char **argv, int argc);
static int cmd_add(struct umem_steer *s, char **argv, int argc);
static int cmd_remove(struct umem_steer *s, char **argv, int argc);
static int cmd_clear(struct umem_steer *s, char **argv, int argc);
static int cmd_default(struct umem_steer *s, char **argv, int argc);
static int cmd_reset(struct umem_steer *s, char **argv, int argc);
static int cmd_load(struct umem_steer *s, char **argv, int argc);

static const struct cmd cmds[] = {
	{ "show", "IFACE", "program, owner, default action, rules and counters", 0, cmd_show },
	{ "add", "IFACE RULE...", "add a rule, e.g. 'udp dport 5000 -> sock 1'", -1, cmd_add },
	{ "load", "IFACE FILE", "add the rules of FILE, one a line ('-': stdin; # comments), e.g. a blocklist", 1, cmd_load },
	{ "remove", "IFACE ID", "remove the rule with that id", 1, cmd_remove },
	{ "clear", "IFACE", "remove every rule", 0, cmd_clear },
	{ "default", "IFACE ACTION", "set the default action (sock N, group A-B, queue, pass, drop)", -1, cmd_default },
	{ "reset", "IFACE", "zero the counters", 0, cmd_reset },
	{ "flows", "IFACE [expire SECS | clear]", "offloaded flows and their counters; remove idle ones, or all", -2, steer_cmd_flows },
};

static bool quiet;

/* attach and detach: the privileged step of an unprivileged user of the program (pins). */
static int pinned_cmd(const char *cmd, const char *ifname, char **argv, int argc)
{
	UMEM_OPTS(umem_steer_opts, so);
	const char *pin = NULL;
	char dir[4096], *end;
	struct umem_steer *s;
	int err;

	for (int i = 0; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(argv[i], "--pin") && v) {
			pin = v;
		} else if (!strcmp(argv[i], "--owner") && v && !strcmp(cmd, "attach")) {
			unsigned long uid = strtoul(v, &end, 10), gid = uid;

			if (end != v && *end == ':')
				gid = strtoul(end + 1, &end, 10);
			if (end == v || *end || uid > UINT32_MAX - 1 || gid > UINT32_MAX - 1) {
				fprintf(stderr, "umem-steer: --owner '%s': give UID[:GID] (numbers)\n", v);
				return 2;
			}
			so.pin_uid = (uint32_t)uid;
			so.pin_gid = (uint32_t)gid;
		} else if (!strcmp(argv[i], "--generic") || !strcmp(argv[i], "--native")) {
			so.mode = argv[i][2] == 'g' ? UMEM_STEER_MODE_GENERIC : UMEM_STEER_MODE_NATIVE;
			continue;
		} else {
			fprintf(stderr, "umem-steer: %s: unknown or incomplete '%s' (usage: %s IFACE --pin DIR%s)\n",
				cmd, argv[i], cmd, !strcmp(cmd, "attach") ? " [--owner UID[:GID]] [--generic|--native]" : "");
			return 2;
		}
		i++;
	}
	if (!pin) {
		fprintf(stderr, "umem-steer: %s needs --pin DIR (a folder on a bpffs)\n", cmd);
		return 2;
	}
	if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", pin, ifname) >= sizeof(dir)) {
		fprintf(stderr, "umem-steer: --pin %s: too long\n", pin);
		return 2;
	}
	if (!strcmp(cmd, "detach")) {
		err = umem_steer__unpin(dir);
		rmdir(pin); /* the folder of every interface's pins, once it is empty */
		return err ? 1 : 0;
	}
	if (mkdir(pin, 0755) && errno != EEXIST) {
		fprintf(stderr, "umem-steer: cannot make %s: %s\n", pin, strerror(errno));
		return 1;
	}
	so.pin_dir = dir;
	s = umem_steer__attach(ifname, &so);
	if (!s) {
		fprintf(stderr, "umem-steer: attach %s: %s\n", ifname, strerror(errno));
		return 1;
	}
	umem_steer__detach(s); /* the pins hold the program now */
	if (!quiet)
		printf("attached to %s, pinned in %s for %u:%u\n", ifname, dir, so.pin_uid, so.pin_gid);
	return 0;
}

static int set_quiet(void *v, const char *arg, char *err, size_t errlen)
{
	quiet = true;
	return 0;
}

static const struct cli_opt options[] = {
	{ "quiet", 0, NULL, "no library notices", CLI_SET(set_quiet) },
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void more_help(FILE *out)
{
	fprintf(out, "Commands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++) {
		char left[48];

		snprintf(left, sizeof(left), "%s %s", cmds[i].name, cmds[i].args);
		cli_help_item(out, left, cmds[i].help);
	}
	cli_help_item(out, "attach IFACE --pin DIR", "attach the program and pin it in DIR/IFACE (a bpffs), for a user "
		      "without CAP_BPF: --owner UID[:GID] may open the pins; --generic, --native");
	cli_help_item(out, "detach IFACE --pin DIR", "remove those pins: the program goes once no process holds it");
	fprintf(out, "\nRule syntax: [prio N] MATCH... -> ACTION, quoted (the shell reads > as a\n"
		     "redirection), e.g.\n"
		     "  umem-steer add eth0 'udp dport 5000 -> sock 1'\n"
		     "See umem-steer(8) for the matches and actions.\n");
}

static const struct cli_prog cli = {
	.name = "umem-steer",
	.synopsis = "[OPTIONS] COMMAND IFACE [ARGS]",
	.summary = "Show and edit the libumem steering program attached to an interface.",
	CLI_OPTS(options),
	.more_help = more_help,
	.stop_at_operand = true, /* a rule's "->" or "-1" is no option */
};

static const char *mode_name(uint32_t m)
{
	return m == UMEM_STEER_MODE_GENERIC ? "generic" : "native";
}

static int print_rule(const struct umem_steer_rule *r, const struct umem_steer_counter *c, void *arg)
{
	char text[256];

	(void)arg;
	umem_steer_rule__format(r, text, sizeof(text));
	printf("%4u %-48s %14llu %16llu\n", r->id, text, (unsigned long long)c->packets,
	       (unsigned long long)c->bytes);
	return 0;
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
	       /* Not a link: libxdp, or netlink as ip(8) and libxdp's single-program fallback attach */
	       info.attach == UMEM_STEER_ATTACH_LIBXDP ? "libxdp or netlink (outlives its owner)" :
	       !info.owner_pid && info.owner_alive ? "a pinned bpf_link (stays until its pins go: detach --pin)" :
						     "bpf_link (dies with its owner)",
	       info.owner_pid,
	       info.owner_alive ? "" : " (gone)");
	printf("sockets %u, rx queues %u, table generation %llu, flags:%s%s%s%s\n", info.nr_sockets,
	       info.nr_queues, (unsigned long long)info.generation,
	       flags & UMEM_STEER_F_HOST_CONTROL ? " host-control" : "", flags & UMEM_STEER_F_TRACE ? " trace" : "",
	       flags & UMEM_STEER_F_ROUTER ? " router" : "",
	       flags ? "" : " none");
	printf("\n%4s %-48s %14s %16s\n", "id", "rule", "packets", "bytes");
	for (int i = 0; i < n; i++) {
		if ((err = umem_steer__rule_counter(s, rules[i].id, &rc)))
			return err;
		print_rule(&rules[i], &rc, NULL);
	}
	if ((err = umem_steer__prefix_rules(s, print_rule, NULL)) < 0)
		return err;
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

/* A live edit must not point at a socket the device cannot have: sockets are bound to RX
 * queues, and the program passes frames for an empty slot to the kernel, so such a rule would
 * take traffic from the forwarder without a trace in its stats. */
static int check_target(struct umem_steer *s, const char *text, const struct umem_steer_action *a)
{
	struct umem_steer_info info = { .sz = sizeof(info) };
	uint64_t last;

	if ((a->type != UMEM_STEER_A_SOCK && a->type != UMEM_STEER_A_GROUP) || umem_steer__info(s, &info) ||
	    !info.nr_queues)
		return 0;
	last = (uint64_t)a->index + (a->type == UMEM_STEER_A_GROUP ? a->count : 1) - 1;
	if (last < info.nr_queues)
		return 0;
	fprintf(stderr, "umem-steer: '%s': the device has no queue %llu (%u RX queue%s): no socket "
		"can serve it; refused\n", text, (unsigned long long)(a->index >= info.nr_queues ? a->index : info.nr_queues),
		info.nr_queues, info.nr_queues > 1 ? "s" : "");
	return -EINVAL;
}

static int cmd_add(struct umem_steer *s, char **argv, int argc)
{
	struct umem_steer_rule r;
	char text[256];
	int err;

	if ((err = join(argv, argc, text, sizeof(text))) || (err = umem_steer_rule__parse(text, &r)) ||
	    (err = check_target(s, text, &r.action)) || (err = umem_steer__add_rule(s, &r)))
		return err;
	printf("rule %u added\n", r.id);
	return 0;
}

/* The signals that stop a load (Ctrl-C, kill, a closed terminal), what they did before, and
 * the one that came. */
static const int stop_sigs[] = { SIGINT, SIGTERM, SIGHUP };
static struct sigaction stop_was[3];
static volatile sig_atomic_t load_stop;

static void on_stop(int sig)
{
	load_stop = sig;
}

/* catch: on_stop for each signal not ignored (nohup, a background job's SIGINT: they stay
 * ignored); else back to what they did. set: the signals. */
static void stop_signals(bool catch, sigset_t *set)
{
	struct sigaction sa = { .sa_handler = on_stop };

	sigemptyset(set);
	for (size_t k = 0; k < sizeof(stop_sigs) / sizeof(stop_sigs[0]); k++) {
		if (catch) {
			sigaction(stop_sigs[k], NULL, &stop_was[k]);
			if (stop_was[k].sa_handler != SIG_IGN)
				sigaction(stop_sigs[k], &sa, NULL);
		} else {
			sigaction(stop_sigs[k], &stop_was[k], NULL);
		}
		sigaddset(set, stop_sigs[k]);
	}
}

/* Takes rules[0..n) out again, the last added first (each remove is one lookup of its prefix:
 * linear, about 32 us of CPU a rule). A rule removed meanwhile by another writer is not live
 * either. Returns how many stay. */
static size_t undo_load(struct umem_steer *s, const char *path, const struct umem_steer_rule *rules, size_t n)
{
	int err;

	if (n > 1000)
		fprintf(stderr, "umem-steer: load: %s: taking the %zu rules added out again\n", path, n);
	for (; n > 0; n--) {
		if ((err = umem_steer__remove_rule(s, rules[n - 1].id, NULL)) && err != -ENOENT)
			break;
	}
	if (n)
		fprintf(stderr, "umem-steer: load: %s: the first %zu rules added stay (rule %u could not "
			"be removed)\n", path, n, rules[n - 1].id);
	else
		fprintf(stderr, "umem-steer: load: %s: nothing added\n", path);
	return n;
}

/* Every line is checked before the first is added, so a typo on line 90000 adds nothing; and a
 * rule the table refuses only when it comes to it (a fifth rule on one prefix, a full table)
 * takes the ones added before it out again, so a refused file adds nothing either. So does an
 * interruption (SIGINT, SIGTERM, SIGHUP) while rules go in; while they go out again, those
 * signals wait: the command returns only once the undo is complete. */
static int cmd_load(struct umem_steer *s, char **argv, int argc)
{
	FILE *f = strcmp(argv[0], "-") ? fopen(argv[0], "r") : stdin;
	struct umem_steer_rule *rules = NULL, *grown;
	size_t n = 0, cap = 0, line_no = 0, i, *lines = NULL, *glines, line_cap = 0;
	char *line = NULL;
	ssize_t len;
	int err = 0;

	if (!f) {
		fprintf(stderr, "umem-steer: load: cannot open %s: %s\n", argv[0], strerror(errno));
		return REPORTED;
	}
	/* Whole lines, however long: a fixed buffer split a long one in two, and the text of a
	 * comment past its end became a rule. A line longer than any rule with its comment is
	 * refused, named. */
	while ((len = getline(&line, &line_cap, f)) >= 0) {
		char *p = line + strspn(line, " \t");

		line_no++;
		if (len > LOAD_LINE_MAX) {
			fprintf(stderr, "umem-steer: load: %s line %zu: longer than %d bytes; nothing added\n",
				argv[0], line_no, LOAD_LINE_MAX);
			err = REPORTED;
			break;
		}
		p[strcspn(p, "#\r\n")] = 0;
		if (!p[strspn(p, " \t")])
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			grown = realloc(rules, cap * sizeof(*rules));
			if (grown)
				rules = grown;
			glines = realloc(lines, cap * sizeof(*lines));
			if (glines)
				lines = glines;
			if (!grown || !glines) {
				err = -ENOMEM;
				break;
			}
		}
		if (umem_steer_rule__parse(p, &rules[n]) || check_target(s, p, &rules[n].action)) {
			fprintf(stderr, "umem-steer: load: %s line %zu: nothing added\n", argv[0], line_no);
			err = REPORTED;
			break;
		}
		lines[n++] = line_no;
	}
	if (!err && ferror(f)) {
		fprintf(stderr, "umem-steer: load: cannot read %s: %s\n", argv[0], strerror(errno));
		err = REPORTED;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	if (!err) {
		sigset_t stops;

		stop_signals(true, &stops);
		for (i = 0; i < n && !err; i++) {
			if (!load_stop && !(err = umem_steer__add_rule(s, &rules[i])))
				continue;
			if (load_stop)
				fprintf(stderr, "umem-steer: load: %s: %s at line %zu\n", argv[0], strsignal(load_stop),
					lines[i]);
			else
				fprintf(stderr, "umem-steer: load: %s line %zu refused: %s\n", argv[0], lines[i],
					strerror(-err));
			err = REPORTED;
			sigprocmask(SIG_BLOCK, &stops, NULL);
			undo_load(s, argv[0], rules, i);
		}
		/* A signal that came during the undo ends the command now that nothing of the file is
		 * live (with its earlier disposition); one after the last add came too late to stop it. */
		stop_signals(false, &stops);
		sigprocmask(SIG_UNBLOCK, &stops, NULL);
	}
	free(rules);
	free(lines);
	if (load_stop && err) {
		signal(load_stop, SIG_DFL);
		raise(load_stop); /* the load undone: its status */
	}
	if (!err)
		printf("%zu rules added\n", n);
	return err;
}

static int cmd_remove(struct umem_steer *s, char **argv, int argc)
{
	struct umem_steer_rule r;
	char *end, text[256];
	unsigned long id = strtoul(argv[0], &end, 0);
	int err;

	/* Only what is not an id at all is refused here: a number no rule has (between the table's
	 * ids and the prefix rules' too) is the library's "no rule with id N", as the man page says. */
	if (*end || end == argv[0] || !isdigit((unsigned char)argv[0][0]) || id > UINT32_MAX) {
		fprintf(stderr, "umem-steer: remove: '%s' is not a rule id (a number, as show lists them)\n", argv[0]);
		return REPORTED;
	}
	err = umem_steer__remove_rule(s, id, &r);
	if (err == -ENOENT)
		return REPORTED; /* the library said "no rule with id N" */
	if (err)
		return err;
	umem_steer_rule__format(&r, text, sizeof(text));
	printf("rule %u removed: %s\n", r.id, text);
	return 0;
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

	if ((err = join(argv, argc, text, sizeof(text))) || (err = umem_steer_action__parse(text, &a)) ||
	    (err = check_target(s, text, &a)))
		return err;
	return umem_steer__set_default(s, &a);
}

static int cmd_reset(struct umem_steer *s, char **argv, int argc)
{
	return umem_steer__reset_counters(s);
}

int main(int argc, char **argv)
{
	const struct cmd *cmd = NULL;
	struct umem_steer *s;
	int err, nargs, op = cli_parse_or_exit(&cli, NULL, argc, argv, 1);

	if (quiet)
		umem_set_print(NULL);
	if (argc - op < 2)
		cli_die(&cli, "give a COMMAND and an IFACE");
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		if (!strcmp(argv[op], cmds[i].name))
			cmd = &cmds[i];
	nargs = argc - op - 2;
	if (!strcmp(argv[op], "attach") || !strcmp(argv[op], "detach"))
		return pinned_cmd(argv[op], argv[op + 1], argv + op + 2, nargs);
	if (!cmd)
		cli_die(&cli, "unknown command '%s'", argv[op]);
	if ((cmd->nargs >= 0 && nargs != cmd->nargs) || (cmd->nargs == -1 && nargs < 1)) {
		fprintf(stderr, "umem-steer: usage: %s %s\n", cmd->name, cmd->args);
		return 2;
	}
	s = umem_steer__open(argv[op + 1]);
	if (!s)
		return 1;
	err = cmd->run(s, argv + op + 2, nargs);
	umem_steer__detach(s); /* opened, not owned: this only closes */
	if (err < 0)
		fprintf(stderr, "umem-steer: %s %s: %s\n", cmd->name, argv[op + 1], strerror(-err));
	if (err) {
		return 1;
	}
	return 0;
}
