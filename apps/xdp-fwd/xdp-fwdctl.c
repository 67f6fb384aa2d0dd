/* SPDX-License-Identifier: MIT */
/*
 * xdp-fwdctl: the client of xdp-fwd's control socket (--control; the protocol: ctl.h), as vppctl
 * is VPP's and ovs-appctl Open vSwitch's. The words after the options are the request; the reply's
 * body goes to stdout (tables, or JSON with --json), an error reply to stderr.
 * Exit codes: 0 ok, 1 an error reply, 2 usage or no answer (no socket, permission, timeout).
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"

#define EXIT_REPLY_ERROR 1
#define EXIT_NO_ANSWER 2

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: xdp-fwdctl [-s PATH | -n NAME] [--json] [-t SECS] COMMAND [ARG...]\n"
		"Talks to a running xdp-fwd over its control socket (xdp-fwd --control).\n\n"
		"  -s, --socket PATH   the socket (default: the only one in " FWD_CTL_DIR ")\n"
		"  -n, --name NAME     the socket " FWD_CTL_DIR "/NAME" FWD_CTL_SUFFIX
		" (NAME: the --config file's name, or the first interface)\n"
		"  -j, --json          the reply as JSON\n"
		"  -t, --timeout SECS  wait at most SECS for the reply (default 10; restart: %d)\n"
		"  -h, --help          this help\n\n"
		"Commands:\n%s\n"
		"Exit status: 0 ok, 1 xdp-fwd answered with an error, 2 usage or no answer.\n"
		"See xdp-fwdctl(8).\n",
		FWD_CTL_RESTART_WAIT_S, fwd_ctl_help);
}

static int die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int die(const char *fmt, ...)
{
	va_list ap;

	fputs("xdp-fwdctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_NO_ANSWER;
}

/* The only socket in FWD_CTL_DIR into path; 0, or an exit code with the message printed. */
static int find_socket(char *path, size_t len)
{
	DIR *d = opendir(FWD_CTL_DIR);
	struct dirent *e;
	char names[512] = "";
	int found = 0;

	if (!d)
		return die("no control socket: %s: %s (is xdp-fwd running? -s PATH names a socket)", FWD_CTL_DIR,
			   strerror(errno));
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name), sl = strlen(FWD_CTL_SUFFIX);

		if (l <= sl || strcmp(e->d_name + l - sl, FWD_CTL_SUFFIX))
			continue;
		if (!found++)
			snprintf(path, len, FWD_CTL_DIR "/%s", e->d_name);
		if (strlen(names) + l + 2 < sizeof(names))
			strcat(strcat(names, " "), e->d_name);
	}
	closedir(d);
	if (!found)
		return die("no control socket in %s (is xdp-fwd running, without --control none? -s PATH names "
			   "one elsewhere)", FWD_CTL_DIR);
	if (found > 1)
		return die("%d xdp-fwd control sockets in %s:%s; name one with -n NAME or -s PATH", found, FWD_CTL_DIR,
			   names);
	return 0;
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -die("%s: a unix socket path has at most %zu bytes", path, sizeof(sa.sun_path) - 1);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -die("socket: %s", strerror(errno));
	if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return fd;
	switch (errno) {
	case ENOENT:
		die("%s: no such socket (is xdp-fwd running with this --control?)", path);
		break;
	case EACCES:
	case EPERM:
		die("%s: permission denied (the socket is root's and xdp-fwd's owner's, or a --control-group's: "
		    "run as one of them)", path);
		break;
	case ECONNREFUSED:
		die("%s: nobody answers (xdp-fwd is gone; the file is a leftover)", path);
		break;
	default:
		die("%s: %s", path, strerror(errno));
	}
	close(fd);
	return -EXIT_NO_ANSWER;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The whole reply (up to the terminator or the peer's close) into a malloc'ed buffer. */
static int read_reply(int fd, double timeout, char **out, size_t *len)
{
	uint64_t end = now_ms() + (uint64_t)(timeout * 1000);
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);

	if (!buf)
		return die("out of memory");
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t t = now_ms();
		ssize_t r;

		if (n >= 3 && !memcmp(buf + n - 2, ".\n", 2) && (n == 2 || buf[n - 3] == '\n'))
			break;
		if (t >= end || poll(&p, 1, (int)(end - t)) == 0) {
			free(buf);
			return die("no reply within %.0f s", timeout);
		}
		if (n + 1 >= cap) {
			char *b = realloc(buf, cap * 2);

			if (!b) {
				free(buf);
				return die("out of memory");
			}
			buf = b;
			cap *= 2;
		}
		r = recv(fd, buf + n, cap - n - 1, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0 || (r < 0 && errno == ECONNRESET)) /* what came is judged by show() */
			break;
		if (r < 0) {
			free(buf);
			return die("reading the reply: %s", strerror(errno));
		}
		n += (size_t)r;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

/* Prints the reply: the body to stdout ('.'-stuffing undone), an error to stderr. */
static int show(const char *buf, size_t len)
{
	const char *nl = memchr(buf, '\n', len), *p;

	if (!nl)
		return die("the connection closed before a reply%s", len ? " ended" : "");
	if (!strncmp(buf, "error: ", 7)) {
		fprintf(stderr, "xdp-fwdctl: %.*s\n", (int)(nl - buf), buf);
		return EXIT_REPLY_ERROR;
	}
	if (nl - buf != 2 || strncmp(buf, "ok", 2))
		return die("not an xdp-fwd reply: '%.*s'", (int)(nl - buf > 60 ? 60 : nl - buf), buf);
	for (p = nl + 1; p < buf + len;) {
		const char *e = memchr(p, '\n', (size_t)(buf + len - p));

		if (!e)
			return die("the reply was cut short");
		if (e - p == 1 && *p == '.')
			return fflush(stdout) ? die("stdout: %s", strerror(errno)) : 0;
		if (*p == '.')
			p++;
		fwrite(p, 1, (size_t)(e - p + 1), stdout);
		p = e + 1;
	}
	return die("the reply was cut short (no terminator)");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' }, { "name", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },	    { "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },	    { NULL, 0, NULL, 0 },
	};
	char path[FWD_CTL_PATH_MAX + 64] = "", req[FWD_CTL_MAX_LINE + 2], *reply = NULL;
	double timeout = 10;
	bool json = false, timeout_given = false;
	size_t rlen = 0, o = 0;
	int c, fd, ret;

	/* '+': options end at the command (a rule's words may start with '-'). */
	while ((c = getopt_long(argc, argv, "+s:n:jt:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			snprintf(path, sizeof(path), "%s", optarg);
			break;
		case 'n':
			if (strchr(optarg, '/') || !*optarg)
				return die("-n '%s': a name, not a path (-s takes a path)", optarg);
			snprintf(path, sizeof(path), FWD_CTL_DIR "/%s" FWD_CTL_SUFFIX, optarg);
			break;
		case 'j':
			json = true;
			break;
		case 't': {
			char *end;

			timeout = strtod(optarg, &end);
			if (*end || !(timeout > 0 && timeout <= 3600))
				return die("-t '%s': seconds, more than 0 and at most 3600", optarg);
			timeout_given = true;
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_NO_ANSWER;
		}
	}
	if (optind == argc) {
		usage(stderr);
		return EXIT_NO_ANSWER;
	}
	/* A restart answers once its successor took over: a start and a handover. */
	if (!timeout_given && !strcmp(argv[optind], "restart"))
		timeout = FWD_CTL_RESTART_WAIT_S;
	if (json)
		o += (size_t)snprintf(req, sizeof(req), "--json");
	for (int i = optind; i < argc; i++) {
		size_t l = strlen(argv[i]);

		if (strchr(argv[i], '\n'))
			return die("argument %d holds a newline: a request is one line", i - optind + 1);
		if (o + 1 + l > FWD_CTL_MAX_LINE)
			return die("the request is longer than %u bytes", FWD_CTL_MAX_LINE);
		if (o)
			req[o++] = ' ';
		memcpy(req + o, argv[i], l);
		o += l;
	}
	req[o++] = '\n';
	if (!path[0] && (ret = find_socket(path, sizeof(path))))
		return ret;
	fd = connect_to(path);
	if (fd < 0)
		return -fd;
	for (size_t sent = 0; sent < o;) {
		ssize_t n = send(fd, req + sent, o - sent, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		/* A peer that refused us answered before it closed: its reply is read below. */
		if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
			break;
		if (n < 0) {
			close(fd);
			return die("%s: sending the request: %s", path, strerror(errno));
		}
		sent += (size_t)n;
	}
	ret = read_reply(fd, timeout, &reply, &rlen);
	close(fd);
	if (ret)
		return ret;
	ret = show(reply, rlen);
	free(reply);
	return ret;
}
