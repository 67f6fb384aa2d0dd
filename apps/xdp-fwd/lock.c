/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lock.h"

#define FWD_LOCK_DIR "/run/xdp-fwd"

static struct {
	int fd;
	char path[96];
} locks[FWD_MAX_PORTS];
static uint32_t nr_locks;

/* Running without the lock is allowed (the library still refuses a busy queue, later and less
 * clearly), but never silently. Returns 0. */
static int lock_skipped(const char *ifname, int err)
{
	fprintf(stderr, "xdp-fwd: warning: %s: cannot take the one-instance lock in " FWD_LOCK_DIR
		" (%s): a second xdp-fwd on it is refused only when its port opens\n", ifname, strerror(err));
	return 0;
}

/* quiet: no word of a busy one (fwd_lock_interfaces_within's tries before its last). */
static int lock_one(const char *ifname, unsigned long long netns, bool quiet)
{
	char path[96], buf[32] = "";
	bool busy;
	int fd, n;

	unsigned int ifindex = if_nametoindex(ifname);

	/* By ifindex: an altname (ip link property add altname) names the same device, and the
	 * same queues, under another name. */
	if (!ifindex)
		return 0; /* gone: the library says so */
	snprintf(path, sizeof(path), FWD_LOCK_DIR "/net%llu-if%u.lock", netns, ifindex);
	for (uint32_t i = 0; i < nr_locks; i++)
		if (!strcmp(locks[i].path, path))
			return 0; /* several queues of one interface */
	for (int tries = 0;; tries++) {
		struct stat held, named;

		/* Created once, never removed (see fwd_unlock_interfaces); created again only if
		 * someone else removed it, which the retry tolerates. */
		if (mkdir(FWD_LOCK_DIR, 0755) && errno != EEXIST)
			return lock_skipped(ifname, errno); /* no writable /run */
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0) {
			if (errno == ENOENT && tries < 8)
				continue;
			return lock_skipped(ifname, errno);
		}
		busy = flock(fd, LOCK_EX | LOCK_NB) != 0;
		if (busy)
			break;
		/* A leaving instance unlinks its file while it still holds it: a lock won on that
		 * file, after it was unlinked, guards nothing. Only the file the path names counts. */
		if (!fstat(fd, &held) && !stat(path, &named) && held.st_ino == named.st_ino)
			break;
		close(fd);
		if (tries >= 8)
			return lock_skipped(ifname, EAGAIN);
	}
	if (busy) {
		n = (int)pread(fd, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		close(fd);
		if (quiet)
			return -EBUSY;
		fprintf(stderr, "xdp-fwd: %s is in use by another xdp-fwd (pid %ld): one xdp-fwd serves "
			"every queue of an interface (its XDP program takes them all); give that one the "
			"queues (-i %s@all), or stop it first\n", ifname, strtol(buf, NULL, 10), ifname);
		return -EBUSY;
	}
	n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, buf, (size_t)n, 0) != n) {
		int err = errno;

		/* Unlinked first: an empty file under the path would name no pid. */
		unlink(path);
		close(fd);
		return lock_skipped(ifname, err);
	}
	locks[nr_locks].fd = fd;
	snprintf(locks[nr_locks].path, sizeof(locks[nr_locks].path), "%s", path);
	nr_locks++;
	return 0;
}

static int lock_all(const struct fwd_config *cfg, bool quiet)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st))
		return 0;
	for (uint32_t i = 0; i < cfg->nr_ports; i++) {
		int err = lock_one(cfg->ports[i].ifname, (unsigned long long)st.st_ino, quiet);

		if (err) {
			fwd_unlock_interfaces();
			return err;
		}
	}
	return 0;
}

int fwd_lock_interfaces(const struct fwd_config *cfg)
{
	return lock_all(cfg, false);
}

int fwd_lock_interfaces_within(const struct fwd_config *cfg, int ms)
{
	int err;

	for (int waited = 0; (err = lock_all(cfg, true)) == -EBUSY && waited < ms; waited += 20)
		usleep(20000);
	return err == -EBUSY ? lock_all(cfg, false) : err;
}

void fwd_unlock_interfaces(void)
{
	for (uint32_t i = 0; i < nr_locks; i++) {
		/* Removed while still locked: a newcomer never locks a file about to vanish. */
		unlink(locks[i].path);
		close(locks[i].fd);
	}
	/* The folder stays (an empty folder in /run, gone at reboot): removing it raced with an
	 * instance starting elsewhere, between its mkdir and its open, which then ran unlocked. */
	nr_locks = 0;
}
