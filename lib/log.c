/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "internal.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

/* A process started with fd 2 closed gets its first socket there: an AF_XDP socket of ours,
 * say. Text written into it fails (EOPNOTSUPP) at best, so the default printer checks first;
 * a message is rare enough for one getsockopt. */
static bool stderr_is_xsk(void)
{
	int domain = 0;
	socklen_t len = sizeof(domain);

	return !getsockopt(STDERR_FILENO, SOL_SOCKET, SO_DOMAIN, &domain, &len) && domain == AF_XDP;
}

__attribute__((format(printf, 2, 0)))
static int default_print(enum umem_print_level level, const char *fmt, va_list args)
{
	if (level == UMEM_DEBUG && !getenv("LIBUMEM_VERBOSE"))
		return 0;
	if (stderr_is_xsk())
		return 0;
	return vfprintf(stderr, fmt, args);
}

static umem_print_fn_t print_fn = default_print;

umem_print_fn_t umem_set_print(umem_print_fn_t fn)
{
	umem_print_fn_t old = print_fn;

	print_fn = fn;
	return old;
}

void umem__pr(enum umem_print_level level, const char *fmt, ...)
{
	char buf[512];
	va_list args;
	umem_print_fn_t fn = print_fn;
	int saved = errno;

	if (!fn)
		return;
	/* One prefix for every message, added here so callers never repeat it. */
	snprintf(buf, sizeof(buf), "libumem: %s", fmt);
	va_start(args, fmt);
	fn(level, buf, args);
	va_end(args);
	/* The printer (getsockopt, stdio, the application's) may change errno; callers read it
	 * after logging, as around any other library call that does not fail. */
	errno = saved;
}

void umem__die(const char *fmt, ...)
{
	va_list args;

	if (stderr_is_xsk())
		abort();
	fputs("libumem: FATAL: ", stderr);
	va_start(args, fmt);
	vfprintf(stderr, fmt, args);
	va_end(args);
	fputc('\n', stderr);
	fflush(stderr);
	abort();
}

/* The capability in the effective set (true when the set cannot be read: no false hint). */
static bool cap_effective(int cap)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { { 0 } };

	if (syscall(SYS_capget, &h, d))
		return true;
	return d[cap / 32].effective & (1u << (cap % 32));
}

const char *umem__cap_hint_load(int err, bool perfmon)
{
	bool admin;

	if (err != -EPERM && err != -EACCES)
		return "";
	admin = cap_effective(CAP_SYS_ADMIN);
	if (!admin && !cap_effective(CAP_BPF))
		return " (loading a BPF program needs CAP_BPF, which this process lacks)";
	if (!admin && !cap_effective(CAP_NET_ADMIN)) /* the kernel's is_net_admin_prog_type() */
		return " (loading an XDP program needs CAP_NET_ADMIN, which this process lacks)";
	if (perfmon && !admin && !cap_effective(CAP_PERFMON))
		return " (the verifier needs CAP_PERFMON for this program, which this process lacks)";
	return "";
}

const char *umem__cap_hint_attach(int err)
{
	if ((err != -EPERM && err != -EACCES) || cap_effective(CAP_SYS_ADMIN) || cap_effective(CAP_NET_ADMIN))
		return "";
	return " (attaching XDP needs CAP_NET_ADMIN, which this process lacks)";
}

/* Their messages start with "libbpf: " / "libxdp: " already. */
__attribute__((format(printf, 2, 0)))
static int lib_print_bpf(enum libbpf_print_level level, const char *fmt, va_list args)
{
	umem_print_fn_t fn = print_fn;

	(void)level;
	return fn ? fn(UMEM_DEBUG, fmt, args) : 0;
}

__attribute__((format(printf, 2, 0)))
static int lib_print_xdp(enum libxdp_print_level level, const char *fmt, va_list args)
{
	umem_print_fn_t fn = print_fn;

	(void)level;
	return fn ? fn(UMEM_DEBUG, fmt, args) : 0;
}

/* Their callback types carry no format attribute; ours do (they forward to a printf-like one). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsuggest-attribute=format"
#endif
void umem__lib_print_begin(struct umem__lib_print *saved)
{
	saved->bpf = (void *)libbpf_set_print(lib_print_bpf);
	saved->xdp = (void *)libxdp_set_print(lib_print_xdp);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

void umem__lib_print_end(const struct umem__lib_print *saved)
{
	libbpf_set_print((libbpf_print_fn_t)saved->bpf);
	libxdp_set_print((libxdp_print_fn_t)saved->xdp);
}
