/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/if_link.h>
#include <netpacket/packet.h>
#include <poll.h>
#include <sys/stat.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "sys.h"

static bool out_failed;
static int cpu_latency_fd = -1;

int fwd_std_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		int n;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		/* open() returns the lowest free descriptor, which is fd. */
		n = open("/dev/null", fd ? O_WRONLY : O_RDONLY);
		if (n < 0)
			return -errno;
		if (n != fd) {
			close(n);
			return -EBADF;
		}
	}
	return 0;
}

/* The stop signal that arrived before the signals were blocked (start-up), or 0. */
static volatile sig_atomic_t startup_stop;

static void on_startup_signal(int sig)
{
	if ((sig == SIGINT || sig == SIGTERM) && !startup_stop)
		startup_stop = sig;
}

void fwd_signals(sigset_t *set)
{
	struct sigaction stop = { .sa_handler = on_startup_signal }, later = stop;

	/* A write past the reader (EPIPE) or past RLIMIT_FSIZE (EFBIG: ulimit -f) fails and is
	 * reported (--pcap, the stats); the signals' default would end xdp-fwd attached. */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
	/* Inherited as ignored, it would reap a restart's failed successor before its exit status
	 * is read (restart.c). */
	signal(SIGCHLD, SIG_DFL);
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGUSR1);
	sigaddset(set, SIGUSR2);
	/* Until they are blocked, their default would end xdp-fwd with its lock files (and, later,
	 * its programs) left. A stop is recorded and interrupts what blocks (no SA_RESTART: the
	 * --pcap FIFO's open); SIGHUP, SIGUSR1 and SIGUSR2 have nothing to act on yet, and restart
	 * it. */
	sigfillset(&stop.sa_mask);
	sigfillset(&later.sa_mask);
	later.sa_flags = SA_RESTART;
	sigaction(SIGINT, &stop, NULL);
	sigaction(SIGTERM, &stop, NULL);
	sigaction(SIGHUP, &later, NULL);
	sigaction(SIGUSR1, &later, NULL);
	sigaction(SIGUSR2, &later, NULL);
}

int fwd_startup_stopped(void)
{
	sigset_t pending;

	if (startup_stop)
		return startup_stop;
	/* Once blocked, a stop waits as pending (set-up runs with them blocked). */
	if (!sigpending(&pending))
		for (int sig = SIGINT; sig; sig = sig == SIGINT ? SIGTERM : 0)
			if (sigismember(&pending, sig))
				return sig;
	return 0;
}

bool fwd_out_ok(FILE *out)
{
	int err;

	if (out_failed)
		return false;
	if (!fflush(out) && !ferror(out))
		return true;
	err = errno;
	out_failed = true;
	fprintf(stderr, "xdp-fwd: cannot write the stats to %s (%s): stats output stops, forwarding "
		"goes on; the exit totals go to stderr\n", out == stdout ? "stdout" : "their stream",
		strerror(err));
	return false;
}

/* stdout into a pipe or socket: non-blocking, behind a bounded queue of whole lines. A reader
 * that stops reading must never hold up the main thread (link changes, signals): a line that
 * does not fit is dropped, whole, and counted. */
#define OUT_QUEUE_MAX (64u << 10) /* a pipe's own buffer again */
static struct {
	bool on, dropping, said;
	size_t done, len; /* complete lines [0, done), the line being written [done, len) */
	unsigned long long dropped;
	char buf[OUT_QUEUE_MAX];
} oq;

/* As much of the complete lines as the reader takes now. 0, or -1 with errno (EPIPE...). */
static int out_push(void)
{
	while (oq.done) {
		ssize_t n = write(STDOUT_FILENO, oq.buf, oq.done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 0 : -1;
		memmove(oq.buf, oq.buf + n, oq.len - (size_t)n);
		oq.done -= (size_t)n;
		oq.len -= (size_t)n;
	}
	return 0;
}

static ssize_t out_write(void *cookie, const char *data, size_t n)
{
	(void)cookie;
	if (out_push())
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!oq.dropping && oq.len == OUT_QUEUE_MAX) {
			oq.len = oq.done; /* the line being written goes, with the rest of it */
			oq.dropping = true;
		}
		if (!oq.dropping)
			oq.buf[oq.len++] = data[i];
		if (data[i] != '\n')
			continue;
		if (!oq.dropping) {
			oq.done = oq.len;
			continue;
		}
		oq.dropping = false;
		oq.dropped++;
		if (!oq.said)
			fprintf(stderr, "xdp-fwd: stdout is not being read: stats lines are dropped (whole, "
				"and counted) until it is; forwarding goes on\n");
		oq.said = true;
	}
	return out_push() ? -1 : (ssize_t)n;
}

void fwd_out_init(void)
{
	struct stat st;
	FILE *f;
	int fl;

	if (fstat(STDOUT_FILENO, &st) || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		return; /* a file or a terminal: writes do not wait on a reader */
	fl = fcntl(STDOUT_FILENO, F_GETFL);
	if (fl < 0 || fcntl(STDOUT_FILENO, F_SETFL, fl | O_NONBLOCK))
		return;
	f = fopencookie(NULL, "w", (cookie_io_functions_t){ .write = out_write });
	if (!f)
		return;
	setvbuf(f, NULL, _IOLBF, 0);
	fflush(stdout);
	stdout = f;
	oq.on = true;
}

void fwd_out_pump(void)
{
	if (oq.on && !out_failed)
		out_push();
}

void fwd_out_drain(void)
{
	if (!oq.on)
		return;
	fflush(stdout);
	/* The totals' last chance: a reader that takes nothing for a second is not waited for. */
	for (int i = 0; i < 10 && oq.done && !out_failed; i++) {
		struct pollfd p = { .fd = STDOUT_FILENO, .events = POLLOUT };

		if (poll(&p, 1, 100) < 0 || out_push())
			break;
	}
	for (size_t i = 0; i < oq.done; i++)
		oq.dropped += oq.buf[i] == '\n';
	oq.done = oq.len = 0;
	if (oq.dropped)
		fprintf(stderr, "xdp-fwd: %llu lines of stats were dropped: stdout was not read\n", oq.dropped);
	oq.dropped = 0;
}

FILE *fwd_totals_stream(void)
{
	return out_failed ? stderr : stdout;
}

int fwd_cpu_latency_hold(uint32_t usecs)
{
	int32_t v = (int32_t)usecs;
	int fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, &v, sizeof(v));
	if (n != sizeof(v)) {
		int err = n < 0 ? -errno : -EIO;

		close(fd);
		return err;
	}
	cpu_latency_fd = fd;
	return 0;
}

void fwd_cpu_latency_release(void)
{
	if (cpu_latency_fd >= 0)
		close(cpu_latency_fd);
	cpu_latency_fd = -1;
}

/* The first line of a sysfs file into buf ("" when it cannot be read). */
static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (f) {
		if (fgets(buf, (int)len, f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
}

const char *fwd_cpu_latency_caveat(uint32_t usecs)
{
	char drv[64], state0[64];

	read_line("/sys/devices/system/cpu/cpuidle/current_driver", drv, sizeof(drv));
	if (!drv[0] || !strcmp(drv, "none"))
		return "no cpuidle driver: the idle loop halts whatever the request says";
	read_line("/sys/devices/system/cpu/cpu0/cpuidle/state0/name", state0, sizeof(state0));
	if (!usecs && strcmp(state0, "POLL"))
		return "the idle driver has no polling state: idle CPUs still halt in its shallowest state";
	return NULL;
}

int fwd_each_link(fwd_link_fn fn, void *arg)
{
	struct ifaddrs *ifa;

	if (getifaddrs(&ifa))
		return -errno;
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
		const struct sockaddr_ll *ll = (const struct sockaddr_ll *)(void *)i->ifa_addr;

		if (ll && ll->sll_family == AF_PACKET && i->ifa_data)
			fn(arg, i->ifa_name, (uint32_t)ll->sll_ifindex, i->ifa_data);
	}
	freeifaddrs(ifa);
	return 0;
}
