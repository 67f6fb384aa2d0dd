/* SPDX-License-Identifier: MIT */
/* xdp-fwdctl restart, SIGUSR2: this xdp-fwd starts its successor (restart.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "control.h"
#include "ctl.h"
#include "ctx.h"
#include "handover.h"
#include "privs.h"
#include "restart.h"
#include "service.h"
#include "sys.h"

/* The successor's real stderr: this descriptor in it (its fd 2 is the pipe until set up). */
#define CHILD_STDERR_FD 3

static char exe[PATH_MAX];
static int main_argc;
static char **main_argv;
static int real_stderr = -1; /* as a successor: the stderr to put back once set up */

static struct {
	pid_t pid;       /* the successor under way; 0: none */
	int fd;          /* the requester's connection; -1: none (SIGUSR2) */
	bool json;
	int out;         /* the read end of the successor's stderr; -1 once it ended */
	uint64_t deadline;
	char first[256]; /* its first line that is not a warning */
	char part[512];  /* the line being read (longer ones are cut) */
	size_t npart;
} rs = { .fd = -1, .out = -1 };

/* argv0 as an absolute path, symbolic links kept (an upgrade may move the link): as given,
 * against the working directory, or the first of PATH's that is executable. */
static void resolve(const char *argv0)
{
	struct stat self, st;
	char cwd[PATH_MAX];
	ssize_t n;

	exe[0] = '\0';
	if (argv0[0] == '/') {
		snprintf(exe, sizeof(exe), "%s", argv0);
	} else if (strchr(argv0, '/')) {
		if (getcwd(cwd, sizeof(cwd)) && snprintf(exe, sizeof(exe), "%s/%s", cwd, argv0) >= (int)sizeof(exe))
			exe[0] = '\0';
	} else if (argv0[0]) {
		const char *path = getenv("PATH");

		for (const char *p = path ? path : ""; *p && !exe[0];) {
			size_t l = strcspn(p, ":");
			char cand[PATH_MAX];

			if (l && (size_t)snprintf(cand, sizeof(cand), "%.*s/%s", (int)l, p, argv0) < sizeof(cand) &&
			    !access(cand, X_OK))
				snprintf(exe, sizeof(exe), "%s", cand);
			p += l + (p[l] == ':');
		}
	}
	/* argv[0] is what the caller chose (exec -a): taken only if it names this very file. */
	if (exe[0] && !stat("/proc/self/exe", &self) && !stat(exe, &st) && st.st_dev == self.st_dev &&
	    st.st_ino == self.st_ino)
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
}

void fwd_restart_init(int argc, char **argv)
{
	const char *s = getenv(FWD_RESTART_STDERR_ENV);

	main_argc = argc;
	main_argv = argv;
	resolve(argc ? argv[0] : "");
	if (s) {
		char *end;
		long fd = strtol(s, &end, 10);

		if (!*end && fd > 2 && fd < INT_MAX && fcntl((int)fd, F_SETFD, FD_CLOEXEC) == 0)
			real_stderr = (int)fd;
		unsetenv(FWD_RESTART_STDERR_ENV); /* not this instance's own successor's */
	}
}

void fwd_restart_set_up(void)
{
	if (real_stderr < 0)
		return;
	fflush(stderr);
	dup2(real_stderr, STDERR_FILENO);
	close(real_stderr);
	real_stderr = -1;
}

/* ---- the running instance's side ---- */

/* The outcome to the requester (if any; an error to stderr too); the request is over. */
static void answer(const char *error, const char *body)
{
	if (error)
		fprintf(stderr, "xdp-fwd: %s\n", error);
	if (rs.fd >= 0) {
		fwd_control_answer(rs.fd, error, body);
		close(rs.fd);
	}
	if (rs.out >= 0)
		close(rs.out);
	rs.fd = rs.out = -1;
	rs.pid = 0;
	rs.npart = 0;
	rs.first[0] = '\0';
}

/* A line of the successor's stderr: on to this instance's; the first that is not a warning
 * kept for the reply. */
static void line(const char *s, size_t n)
{
	fprintf(stderr, "%.*s\n", (int)n, s);
	if (!rs.first[0] && n && !memmem(s, n, "warning:", 8))
		snprintf(rs.first, sizeof(rs.first), "%.*s", (int)n, s);
}

/* Reads what the successor wrote. wait_ms > 0: until its stderr ends or that long. */
static void relay(int wait_ms)
{
	uint64_t end = fwd_clock_ns(CLOCK_MONOTONIC) + (uint64_t)wait_ms * 1000000ull;

	while (rs.out >= 0) {
		char buf[4096];
		ssize_t n = read(rs.out, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			uint64_t now = fwd_clock_ns(CLOCK_MONOTONIC);
			struct pollfd p = { .fd = rs.out, .events = POLLIN };

			if (wait_ms <= 0 || now >= end)
				return;
			poll(&p, 1, (int)((end - now) / 1000000ull) + 1);
			continue;
		}
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == '\n' || rs.npart == sizeof(rs.part)) {
				line(rs.part, rs.npart);
				rs.npart = 0;
			}
			if (buf[i] != '\n')
				rs.part[rs.npart++] = buf[i];
		}
		if (n <= 0) { /* its end: closed by the successor's exit or set-up */
			if (rs.npart)
				line(rs.part, rs.npart);
			rs.npart = 0;
			close(rs.out);
			rs.out = -1;
		}
	}
}

static void describe(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "was ended by %s", strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "ended (wait status 0x%x)", (unsigned)status);
}

/* A successor that did not take over: stopped as a start-up is (SIGTERM undoes it), killed
 * after 5 s, reaped. Its wait status. */
static int stop_successor(void)
{
	int status = 0;

	kill(rs.pid, SIGTERM);
	for (int i = 0; i < 100; i++) {
		if (rs.out >= 0)
			relay(50);
		else
			poll(NULL, 0, 50);
		if (waitpid(rs.pid, &status, WNOHANG) == rs.pid)
			return status;
	}
	kill(rs.pid, SIGKILL);
	while (waitpid(rs.pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

/* A failure: the successor is gone; this instance runs on, and says so to the manager. */
static void failed(struct fwd_ctx *ctx, const char *what, int status)
{
	char why[512], how[64];

	relay(0);
	describe(status, how, sizeof(how));
	snprintf(why, sizeof(why), "restart: the new xdp-fwd (pid %d) %s %s%s%.256s; this one runs on, nothing changed",
		 (int)rs.pid, how, what, rs.first[0] ? ": " : "", rs.first);
	answer(why, NULL);
	fwd_service_ready(ctx); /* the end of RELOADING=1 */
}

/* Why this instance cannot start a successor, or NULL. */
static const char *cannot(const struct fwd_ctx *ctx)
{
	if (rs.pid)
		return "restart: one is under way";
	if (!ctx->control)
		return "restart: no control socket (--control none): a successor would not find this xdp-fwd to take over from";
	if (ctx->cfg->pinned)
		return "restart: not with --pinned (a handover is refused: stop this xdp-fwd, then start the next)";
	if (!fwd_privs_kept()[0])
		return "restart: every capability was dropped after set-up (--no-reattach): a successor could not set "
		       "up; stop this xdp-fwd, then start the next";
	if (!exe[0])
		return "restart: the path this xdp-fwd was started from is not known";
	return NULL;
}

/* A descriptor above CHILD_STDERR_FD, so that the successor's dup2 to it does not take it. */
static int above_child_fds(int fd)
{
	int n;

	if (fd > CHILD_STDERR_FD)
		return fd;
	n = fcntl(fd, F_DUPFD_CLOEXEC, CHILD_STDERR_FD + 1);
	close(fd);
	return n;
}

/* posix_spawn (glibc's vfork-like clone: safe with the workers running; an exec failure is
 * its return value): signals as at any start, this stderr at CHILD_STDERR_FD, the pipe as
 * stderr, nothing else inherited (a descriptor without CLOEXEC would keep a socket or a lock
 * of this instance alive in the successor). 0 or an errno. */
static int spawn(char *const *argv, char *const *envp, int err_w)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	int e;

	sigemptyset(&none);
	sigfillset(&all);
	if ((e = posix_spawn_file_actions_init(&fa)))
		return e;
	if ((e = posix_spawnattr_init(&at))) {
		posix_spawn_file_actions_destroy(&fa);
		return e;
	}
	if (!(e = posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, CHILD_STDERR_FD)) &&
	    !(e = posix_spawn_file_actions_adddup2(&fa, err_w, STDERR_FILENO)) &&
	    !(e = posix_spawn_file_actions_addclosefrom_np(&fa, CHILD_STDERR_FD + 1)) &&
	    !(e = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) &&
	    !(e = posix_spawnattr_setsigmask(&at, &none)) && !(e = posix_spawnattr_setsigdefault(&at, &all)))
		e = posix_spawn(&rs.pid, exe, &fa, &at, argv, envp);
	if (e)
		rs.pid = 0;
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return e;
}

/* The successor's command line: this one's with --takeover after argv[0] (not after a "--"),
 * unless it takes over already (a successor's own successor). */
static char **successor_argv(const struct fwd_ctx *ctx)
{
	char **v = calloc((size_t)main_argc + 2, sizeof(*v));
	int n = 0;

	if (!v)
		return NULL;
	v[n++] = main_argv[0];
	if (!ctx->cfg->takeover)
		v[n++] = (char *)"--takeover";
	for (int i = 1; i < main_argc; i++)
		v[n++] = main_argv[i];
	return v;
}

/* This environment for the successor, but for WATCHDOG_PID (this pid's: with it, sd_watchdog_enabled
 * would tell the successor that the unit's watchdog is not its own) and FWD_RESTART_STDERR_ENV,
 * set to CHILD_STDERR_FD. */
static char **successor_env(void)
{
	static char mark[] = FWD_RESTART_STDERR_ENV "=3";
	size_t n = 0, k = 0;
	char **v;

	_Static_assert(CHILD_STDERR_FD == 3, "mark");
	while (environ[n])
		n++;
	if (!(v = calloc(n + 2, sizeof(*v))))
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "WATCHDOG_PID=", 13) && strncmp(environ[i], FWD_RESTART_STDERR_ENV "=",
									 sizeof(FWD_RESTART_STDERR_ENV)))
			v[k++] = environ[i];
	v[k] = mark;
	return v;
}

void fwd_restart_begin(struct fwd_ctx *ctx, int fd, bool json)
{
	const char *no = cannot(ctx);
	char **argv = NULL, **envp = NULL, why[PATH_MAX + 128];
	int p[2] = { -1, -1 }, e;

	if (no) {
		fprintf(stderr, "xdp-fwd: %s\n", no);
		if (fd >= 0) {
			fwd_control_answer(fd, no, NULL);
			close(fd);
		}
		return;
	}
	rs.fd = fd;
	rs.json = json;
	argv = successor_argv(ctx);
	envp = successor_env();
	e = !argv || !envp ? ENOMEM : pipe2(p, O_CLOEXEC) ? errno : 0;
	if (!e && ((p[0] = above_child_fds(p[0])) < 0 || (p[1] = above_child_fds(p[1])) < 0))
		e = errno;
	if (!e)
		e = spawn(argv, envp, p[1]);
	free(argv);
	free(envp);
	if (p[1] >= 0)
		close(p[1]);
	if (e) {
		if (p[0] >= 0)
			close(p[0]);
		snprintf(why, sizeof(why), "restart: cannot run %s: %s; this xdp-fwd runs on, nothing changed", exe,
			 strerror(e));
		answer(why, NULL);
		return;
	}
	rs.out = p[0];
	fcntl(rs.out, F_SETFL, O_NONBLOCK);
	rs.deadline = fwd_now_ns() + FWD_CTL_RESTART_TIMEOUT_MS * 1000000ull;
	fprintf(stderr, "xdp-fwd: restart: pid %d (%s) takes over\n", (int)rs.pid, exe);
	fwd_service_restarting(rs.pid);
}

int fwd_restart_pollfds(struct pollfd *pfd, int max)
{
	if (rs.out < 0 || max < 1)
		return 0;
	pfd[0] = (struct pollfd){ .fd = rs.out, .events = POLLIN };
	return 1;
}

void fwd_restart_poll(struct fwd_ctx *ctx, uint64_t now)
{
	int status;

	if (!rs.pid)
		return;
	relay(0);
	if (waitpid(rs.pid, &status, WNOHANG) == rs.pid) {
		failed(ctx, "before taking over", status);
	} else if (now >= rs.deadline) {
		char what[64];

		snprintf(what, sizeof(what), "after it did not take over within %d s",
			 FWD_CTL_RESTART_TIMEOUT_MS / 1000);
		failed(ctx, what, stop_successor());
	}
}

pid_t fwd_restart_successor(void)
{
	return rs.pid;
}

void fwd_restart_handed_over(struct fwd_ctx *ctx)
{
	siginfo_t si = { .si_pid = 0 };
	char msg[160], how[64];

	if (!rs.pid || !ctx->handed_over)
		return;
	relay(FWD_HANDOVER_TIMEOUT_MS);
	/* WNOWAIT: its exit status stays for its supervisor, which gets it once this one is gone. */
	if (!waitid(P_PID, (id_t)rs.pid, &si, WEXITED | WNOHANG | WNOWAIT) && si.si_pid == rs.pid) {
		int status = si.si_code == CLD_EXITED ? si.si_status << 8 : si.si_status;
		char why[512];

		describe(status, how, sizeof(how));
		snprintf(why, sizeof(why), "restart: pid %d took over, then %s%s%.256s", (int)rs.pid, how,
			 rs.first[0] ? ": " : "", rs.first);
		answer(why, NULL);
		return;
	}
	fprintf(stderr, "xdp-fwd: restart: pid %d took over%s\n", (int)rs.pid,
		rs.out >= 0 ? " (still setting up: its messages from here on may be lost)" : "");
	if (rs.json)
		snprintf(msg, sizeof(msg), "{\"restarted\":%d,\"from\":%d%s}\n", (int)rs.pid, (int)getpid(),
			 rs.out >= 0 ? ",\"setting_up\":true" : "");
	else
		snprintf(msg, sizeof(msg), "restarted: pid %d took over from pid %d%s\n", (int)rs.pid, (int)getpid(),
			 rs.out >= 0 ? " (still setting up)" : "");
	answer(NULL, msg);
}

void fwd_restart_fini(void)
{
	char why[160];

	if (!rs.pid)
		return;
	stop_successor();
	snprintf(why, sizeof(why), "restart: this xdp-fwd was stopped before pid %d took over: stopped it too",
		 (int)rs.pid);
	answer(why, NULL);
}
