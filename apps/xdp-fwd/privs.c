/* SPDX-License-Identifier: MIT */
/*
 * xdp-fwd privileges. Set-up needs capabilities; the data path and the teardown do not:
 * measured on kernel 6.18 (test/rel/privs.sh), every step after the sockets are bound and the
 * programs attached works on file descriptors the process already holds (AF_XDP sendto/recvfrom
 * and getsockopt, BPF map updates and deletes on our own map fds, closing bpf_links). So once
 * set up, xdp-fwd drops every capability, and a compromised data path holds nothing.
 * Re-attaching an interface that was deleted and came back, or reopening the ports with
 * multi-buffer after an MTU change, is set-up again: for that (on by default, --no-reattach
 * turns it off) the set-up capabilities stay in the permitted set, effective only while a
 * port is opened.
 *
 * Needed to start (each checked here first, so a missing one gets a message that names it):
 *   CAP_NET_RAW   create AF_XDP sockets
 *   CAP_NET_ADMIN attach XDP programs (bpf_link on the interface)
 *   CAP_BPF       load the XDP program and create its maps
 *   CAP_PERFMON   --rule, --offload-after: the steering program's verifier checks need it
 *   CAP_IPC_LOCK  register the UMEM: without it the area counts against RLIMIT_MEMLOCK (8 MiB by
 *                 default, less than the area), so it is needed unless that limit is unlimited
 * CAP_SYS_ADMIN stands in for CAP_BPF and CAP_PERFMON (kernels before 5.8 have only it).
 * With --pinned, a privileged step attached the program and pinned its maps: only CAP_NET_RAW
 * and CAP_IPC_LOCK (or the memlock limit) remain, the pins' file permissions doing the rest
 * (test/fwd/pinned.sh).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "privs.h"

struct need {
	cap_value_t cap;
	const char *name;
	const char *why;
};

static bool has(cap_t caps, cap_value_t cap)
{
	cap_flag_value_t v = CAP_CLEAR;

	return !cap_get_flag(caps, cap, CAP_EFFECTIVE, &v) && v == CAP_SET;
}

static bool memlock_unlimited(void)
{
	struct rlimit rl;

	return !getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur == RLIM_INFINITY;
}

int fwd_privs_check(const struct fwd_config *cfg)
{
	const struct need needs[] = {
		{ CAP_NET_RAW, "cap_net_raw", "AF_XDP sockets" },
		{ CAP_NET_ADMIN, "cap_net_admin", "attaching XDP programs" },
		{ CAP_BPF, "cap_bpf", "loading BPF programs and maps" },
		{ CAP_PERFMON, "cap_perfmon", "loading the steering program (--rule, --offload-after)" },
		{ CAP_IPC_LOCK, "cap_ipc_lock", "registering the UMEM beyond RLIMIT_MEMLOCK" },
	};
	cap_t caps = cap_get_proc();
	char missing[256] = "", list[128] = "";
	size_t m = 0, l = 0;

	if (!caps) {
		fprintf(stderr, "xdp-fwd: cannot read this process's capabilities: %s\n", strerror(errno));
		return -errno;
	}
	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
		const struct need *n = &needs[i];
		bool ok = has(caps, n->cap);

		if (n->cap == CAP_PERFMON && !fwd_wants_steering(cfg))
			continue;
		/* --pinned loads and attaches nothing: its maps open through their pins. */
		if (cfg->pinned && (n->cap == CAP_NET_ADMIN || n->cap == CAP_BPF || n->cap == CAP_PERFMON))
			continue;
		if ((n->cap == CAP_BPF || n->cap == CAP_PERFMON) && has(caps, CAP_SYS_ADMIN))
			ok = true;
		if (n->cap == CAP_IPC_LOCK && memlock_unlimited())
			ok = true;
		l += (size_t)snprintf(list + l, sizeof(list) - l, "%s%s", l ? "," : "", n->name);
		if (!ok)
			m += (size_t)snprintf(missing + m, sizeof(missing) - m, "\n  %s (%s)", n->name, n->why);
	}
	cap_free(caps);
	if (!m)
		return 0;
	fprintf(stderr, "xdp-fwd: missing capabilities:%s\n"
		"Run it as root, or grant them to the binary: setcap %s+ep xdp-fwd\n"
		"(cap_ipc_lock can be replaced by ulimit -l unlimited.) After set-up xdp-fwd drops them all.\n",
		missing, list);
	return -EPERM;
}

/* What opening a port needs (fwd_privs_check's list; CAP_SYS_ADMIN where it stands in). */
static const cap_value_t reopen_caps[] = { CAP_NET_RAW, CAP_NET_ADMIN, CAP_BPF, CAP_PERFMON,
					   CAP_IPC_LOCK, CAP_SYS_ADMIN };
#define NR_REOPEN_CAPS (sizeof(reopen_caps) / sizeof(reopen_caps[0]))
static cap_value_t kept[NR_REOPEN_CAPS];
static int nr_kept;
static char kept_names[160];

int fwd_privs_drop(bool keep_reopen)
{
	cap_t cur = cap_get_proc(), next = cap_init(); /* every set empty */
	int err = 0;

	if (!cur || !next) {
		err = -errno;
		goto out;
	}
	nr_kept = 0;
	kept_names[0] = '\0';
	for (size_t i = 0; keep_reopen && i < NR_REOPEN_CAPS; i++) {
		cap_value_t c = reopen_caps[i];
		char *name;

		/* CAP_SYS_ADMIN only where it stands in for a CAP_BPF the process lacks. */
		if (!has(cur, c) || (c == CAP_SYS_ADMIN && has(cur, CAP_BPF)))
			continue;
		kept[nr_kept++] = c;
		name = cap_to_name(c);
		snprintf(kept_names + strlen(kept_names), sizeof(kept_names) - strlen(kept_names), "%s%s",
			 kept_names[0] ? "," : "", name ? name : "?");
		cap_free(name);
	}
	if (nr_kept && cap_set_flag(next, CAP_PERMITTED, nr_kept, kept, CAP_SET)) {
		err = -errno;
		goto out;
	}
	/* The bounding set first (needs CAP_SETPCAP, which this still has when started as root),
	 * so that nothing executed later could regain a capability from file capabilities. */
	for (cap_value_t c = 0; c <= CAP_LAST_CAP; c++) {
		bool keep = false;

		for (int i = 0; i < nr_kept; i++)
			keep |= kept[i] == c;
		if (CAP_IS_SUPPORTED(c) && !keep)
			cap_drop_bound(c);
	}
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (cap_set_proc(next))
		err = -errno;
	if (!err)
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
out:
	cap_free(cur);
	cap_free(next);
	return err;
}

int fwd_privs_raise(bool on)
{
	cap_t caps;
	int err = 0;

	if (!nr_kept)
		return on ? -EPERM : 0;
	caps = cap_get_proc();
	if (!caps)
		return -errno;
	if (cap_set_flag(caps, CAP_EFFECTIVE, nr_kept, kept, on ? CAP_SET : CAP_CLEAR) || cap_set_proc(caps))
		err = -errno;
	cap_free(caps);
	return err;
}

const char *fwd_privs_kept(void)
{
	return kept_names;
}

bool fwd_privs_none(void)
{
	cap_t caps = cap_get_proc();
	cap_t none = cap_init();
	bool empty = caps && none && !cap_compare(caps, none);

	cap_free(caps);
	cap_free(none);
	return empty;
}
