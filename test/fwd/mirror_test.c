/* SPDX-License-Identifier: MIT */
/*
 * The router's netlink mirror (apps/xdp-fwd/nlmirror.c) against the kernel, in a network
 * namespace of its own (unshare: it dies with the process, nothing is left behind). After
 * each change made with ip(8), the mirror is polled until it answers as the kernel does for a
 * set of addresses (the kernel's own route lookup, RTM_GETROUTE with RTM_F_FIB_MATCH, is the
 * reference), with a bounded wait.
 *   mirror_test events | table | resync | links   the ctest cases (exit 77 without root)
 *   mirror_test bench [--changes N] [--flap]  tools/route-bench/mirror-load.sh's probe: in the
 *                                           current namespace, times the initial dump, then the
 *                                           apply latency of N route events, then (--flap,
 *                                           after printing "flap") a link going down
 */
#include "netns.h" /* first: it defines _GNU_SOURCE */
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>

#include "nlmirror.h"
#include "testutil.h"

static struct fwd_mirror *M;
static struct mnl_socket *K; /* the kernel's route lookups */
static int self;             /* this test's namespace, where netns_run runs ip(8) */

#define sh(...) netns_run(self, __VA_ARGS__)
#define RUN(...) NETNS_MUST(self, __VA_ARGS__)

/* A route as both sides describe it: what happens, and through which (ifindex, gateway)s. */
struct answer {
	enum fwd_nh_reason kind; /* FORWARD: through paths (resolved or not) */
	uint32_t n;
	struct {
		uint32_t ifindex;
		uint8_t gw[16];
	} p[FWD_MIRROR_PATHS_MAX];
};

static void add_path(struct answer *a, uint32_t ifindex, const uint8_t *gw)
{
	for (uint32_t i = 0; i < a->n; i++)
		if (a->p[i].ifindex == ifindex && !memcmp(a->p[i].gw, gw, 16))
			return;
	if (a->n < FWD_MIRROR_PATHS_MAX) {
		a->p[a->n].ifindex = ifindex;
		memcpy(a->p[a->n].gw, gw, 16);
		a->n++;
	}
}

static void gw_of(const struct nlattr *gw, const struct nlattr *via, uint8_t *out)
{
	memset(out, 0, 16);
	if (gw)
		memcpy(out, mnl_attr_get_payload(gw), mnl_attr_get_payload_len(gw) > 16 ? 16 : mnl_attr_get_payload_len(gw));
	else if (via) {
		const struct rtvia *v = mnl_attr_get_payload(via);

		memcpy(out, v->rtvia_addr, mnl_attr_get_payload_len(via) - sizeof(*v) > 16 ? 16 : mnl_attr_get_payload_len(via) - sizeof(*v));
	}
}

/* The kernel's answer for addr: RTM_GETROUTE with RTM_F_FIB_MATCH (the matched route). */
static int kernel_route(int family, const void *addr, struct answer *a)
{
	char buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	unsigned alen = family == AF_INET ? 4 : 16;
	const struct nlattr *at;
	struct rtmsg *rtm;
	const struct nlattr *gw = NULL, *via = NULL, *mp = NULL;
	uint32_t oif = 0;
	ssize_t n;

	memset(a, 0, sizeof(*a));
	nlh->nlmsg_type = RTM_GETROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = (uint32_t)now_ms();
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = (uint8_t)family;
	rtm->rtm_dst_len = (uint8_t)(alen * 8);
	rtm->rtm_flags = RTM_F_FIB_MATCH;
	mnl_attr_put(nlh, RTA_DST, alen, addr);
	if (mnl_socket_sendto(K, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	n = mnl_socket_recvfrom(K, buf, sizeof(buf));
	if (n < 0)
		return -errno;
	nlh = (struct nlmsghdr *)buf;
	if (nlh->nlmsg_type == NLMSG_ERROR) {
		int err = ((struct nlmsgerr *)mnl_nlmsg_get_payload(nlh))->error;

		/* The kernel's route types answer with errors (net/ipv4/fib_semantics.c fib_props). */
		a->kind = err == -EINVAL ? FWD_NH_BLACKHOLE : err == -EHOSTUNREACH ? FWD_NH_UNREACHABLE
			: err == -EACCES ? FWD_NH_PROHIBIT : FWD_NH_NOROUTE;
		return err == -ENETUNREACH || err == -EINVAL || err == -EHOSTUNREACH || err == -EACCES ? 0 : err;
	}
	rtm = mnl_nlmsg_get_payload(nlh);
	if (rtm->rtm_type == RTN_LOCAL) {
		a->kind = FWD_NH_LOCAL;
		return 0;
	}
	if (rtm->rtm_type == RTN_BLACKHOLE || rtm->rtm_type == RTN_UNREACHABLE || rtm->rtm_type == RTN_PROHIBIT) {
		a->kind = rtm->rtm_type == RTN_BLACKHOLE ? FWD_NH_BLACKHOLE
			: rtm->rtm_type == RTN_UNREACHABLE ? FWD_NH_UNREACHABLE : FWD_NH_PROHIBIT;
		return 0;
	}
	a->kind = FWD_NH_FORWARD;
	mnl_attr_for_each(at, nlh, sizeof(*rtm)) {
		switch (mnl_attr_get_type(at)) {
		case RTA_OIF:
			oif = mnl_attr_get_u32(at);
			break;
		case RTA_GATEWAY:
			gw = at;
			break;
		case RTA_VIA:
			via = at;
			break;
		case RTA_MULTIPATH:
			mp = at;
			break;
		}
	}
	if (mp) {
		const struct rtnexthop *rtnh = mnl_attr_get_payload(mp);
		int len = (int)mnl_attr_get_payload_len(mp);

		while (len >= (int)sizeof(*rtnh) && rtnh->rtnh_len >= sizeof(*rtnh) && rtnh->rtnh_len <= len) {
			const struct nlattr *g = NULL, *v = NULL, *x = (const void *)((const char *)rtnh + RTNH_ALIGN(sizeof(*rtnh)));
			int xl = rtnh->rtnh_len - (int)RTNH_ALIGN(sizeof(*rtnh));
			uint8_t gwa[16];

			while (mnl_attr_ok(x, xl)) {
				if (mnl_attr_get_type(x) == RTA_GATEWAY)
					g = x;
				if (mnl_attr_get_type(x) == RTA_VIA)
					v = x;
				xl -= MNL_ALIGN(x->nla_len);
				x = mnl_attr_next(x);
			}
			gw_of(g, v, gwa);
			if (!(rtnh->rtnh_flags & RTNH_F_DEAD))
				add_path(a, (uint32_t)rtnh->rtnh_ifindex, gwa);
			len -= RTNH_ALIGN(rtnh->rtnh_len);
			rtnh = (const struct rtnexthop *)(const void *)((const char *)rtnh + RTNH_ALIGN(rtnh->rtnh_len)); /* RTNH_NEXT without its cast-align */
		}
	} else {
		uint8_t gwa[16];

		gw_of(gw, via, gwa);
		add_path(a, oif, gwa);
	}
	return 0;
}

static void mirror_route(int family, const void *addr, struct answer *a)
{
	struct fwd_mirror_route r;

	memset(a, 0, sizeof(*a));
	fwd_mirror_explain(M, family, addr, &r);
	a->kind = r.reason == FWD_NH_UNRESOLVED || r.reason == FWD_NH_LINKDOWN ? FWD_NH_FORWARD : r.reason;
	for (uint32_t i = 0; i < r.npaths; i++) {
		uint8_t gw[16] = { 0 };

		/* A neighbour's host entry: connected, as the kernel's route says. */
		if (memcmp(r.path[i].gw, addr, family == AF_INET ? 4 : 16))
			memcpy(gw, r.path[i].gw, 16);
		add_path(a, r.path[i].ifindex, gw);
	}
}

static bool same(const struct answer *x, const struct answer *y)
{
	if (x->kind != y->kind || x->n != y->n)
		return false;
	for (uint32_t i = 0; i < x->n; i++) {
		uint32_t j;

		for (j = 0; j < y->n; j++)
			if (x->p[i].ifindex == y->p[j].ifindex && !memcmp(x->p[i].gw, y->p[j].gw, 16))
				break;
		if (j == y->n)
			return false;
	}
	return true;
}

static void describe(const char *who, int family, const struct answer *a)
{
	fprintf(stderr, "    %s: %s", who, fwd_nh_reason_names[a->kind]);
	for (uint32_t i = 0; i < a->n; i++) {
		char s[INET6_ADDRSTRLEN], ifn[IF_NAMESIZE] = "?";

		if_indextoname(a->p[i].ifindex, ifn);
		fprintf(stderr, " [dev %s via %s]", ifn, inet_ntop(family, a->p[i].gw, s, sizeof(s)));
	}
	fputc('\n', stderr);
}

static const char *const probes[] = {
	"10.0.1.1", "10.0.1.2", "10.0.1.9", "10.0.2.2", "10.0.2.7", "10.0.5.2", "10.10.3.4", "10.20.1.1",
	"10.30.0.1", "10.31.0.1", "10.32.0.1", "10.40.9.9", "10.50.0.1", "10.60.0.1", "10.70.0.1", "10.80.0.1",
	"10.99.0.1", "172.16.0.1", "2001:db8:1::1", "2001:db8:1::2", "2001:db8:1::77", "2001:db8:10::1",
	"2001:db8:20::1", "2001:db8:30::1", "2001:db8:40::1", "2001:db8:50::1", "2001:db8:99::1", "2001:db8:2::2",
};

/* A worker's stand-in: looks the probes up without pause while the mirror changes, and
 * reports a quiescent point after each pass, as the router's workers do after each burst. */
static _Atomic uint64_t reader_passes;
static atomic_bool reader_on, reader_stop;
static pthread_t reader;

static void *reader_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&reader_stop)) {
		for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
			int family = strchr(probes[i], ':') ? AF_INET6 : AF_INET;
			uint8_t a[16] = { 0 };
			struct fwd_nh_rec rec;
			enum fwd_nh_reason r;

			inet_pton(family, probes[i], a);
			if (family == AF_INET) {
				uint32_t v;

				memcpy(&v, a, 4);
				r = fwd_mirror_lookup4(fwd_mirror_view(M), ntohl(v), (uint32_t)i * 2654435761u, &rec);
			} else {
				r = fwd_mirror_lookup6(fwd_mirror_view(M), a, (uint32_t)i * 2654435761u, &rec);
			}
			/* Never a torn or recycled record: a forwardable one is whole. */
			CHECK(r < FWD_NH_REASONS, "reason %d", r);
			CHECK(r != FWD_NH_FORWARD || (rec.ifindex && rec.mtu && (rec.dmac[0] | rec.dmac[5])),
			      "%s: a forwarding record without ifindex, MTU or MAC", probes[i]);
		}
		atomic_fetch_add_explicit(&reader_passes, 1, memory_order_release);
	}
	return NULL;
}

static void mirror_poll(int ms)
{
	struct pollfd p = { .fd = fwd_mirror_fd(M), .events = POLLIN };
	uint64_t seen;

	poll(&p, 1, ms);
	CHECK(fwd_mirror_process(M) >= 0, "process: %s", strerror(errno));
	/* Reclaim only once the reader has passed a quiescent point since the changes. */
	seen = atomic_load_explicit(&reader_passes, memory_order_acquire);
	while (atomic_load(&reader_on) && atomic_load_explicit(&reader_passes, memory_order_acquire) < seen + 2)
		sched_yield();
	fwd_mirror_reclaim(M);
}

/* Polls the mirror until it answers as the kernel does for every address of list (10 s at
 * most: the machine may be loaded; a pass takes milliseconds). */
static void await_match_list(const char *what, const char *const *list, size_t n)
{
	long long end = now_ms() + 10000;

	for (;;) {
		bool ok = true;
		size_t i;

		for (i = 0; i < n && ok; i++) {
			int family = strchr(list[i], ':') ? AF_INET6 : AF_INET;
			uint8_t addr[16];
			struct answer k, mm;

			inet_pton(family, list[i], addr);
			CHECK(kernel_route(family, addr, &k) == 0, "the kernel's lookup of %s", list[i]);
			mirror_route(family, addr, &mm);
			ok = same(&k, &mm);
			if (!ok && now_ms() >= end) {
				fprintf(stderr, "FAIL after %s: %s differs\n", what, list[i]);
				describe("kernel", family, &k);
				describe("mirror", family, &mm);
				exit(1);
			}
		}
		if (ok)
			return;
		mirror_poll(10);
	}
}

static void await_match(const char *what)
{
	await_match_list(what, probes, sizeof(probes) / sizeof(probes[0]));
}

typedef bool (*cond_fn)(void *arg);

static void await(cond_fn f, void *arg, const char *what)
{
	long long end = now_ms() + 10000;

	while (!f(arg)) {
		CHECK(now_ms() < end, "timed out waiting for %s", what);
		mirror_poll(10);
	}
}

struct want4 {
	const char *dst;
	enum fwd_nh_reason reason;
	const char *mac; /* NULL: any */
};

static bool lookup_is(void *arg)
{
	const struct want4 *w = arg;
	struct fwd_nh_rec rec;
	struct in_addr a;
	char mac[18];

	inet_pton(AF_INET, w->dst, &a);
	if (fwd_mirror_lookup4(fwd_mirror_view(M), ntohl(a.s_addr), 0, &rec) != w->reason)
		return false;
	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", rec.dmac[0], rec.dmac[1], rec.dmac[2], rec.dmac[3],
		 rec.dmac[4], rec.dmac[5]);
	return !w->mac || !strcmp(mac, w->mac);
}

static uint32_t ifidx(const char *name)
{
	return if_nametoindex(name);
}

static int enter_namespace(void)
{
	if (geteuid() != 0 || unshare(CLONE_NEWNET) || (self = netns_open_self()) < 0) {
		printf("SKIP: needs root and network namespaces\n");
		return TEST_SKIP;
	}
	if (sh("ip link set lo up") || sh("ip link add a0 type veth peer name a1 2>/dev/null")) {
		printf("SKIP: no ip(8) or no veth\n");
		return TEST_SKIP;
	}
	K = mnl_socket_open(NETLINK_ROUTE);
	if (!K || mnl_socket_bind(K, 0, MNL_SOCKET_AUTOPID) < 0) {
		perror("netlink");
		return 1;
	}
	return 0;
}

static struct fwd_mirror *open_mirror(uint32_t table, int rcvbuf)
{
	struct fwd_mirror_opts o = { .sz = sizeof(o), .table = table, .rcvbuf = rcvbuf, .quiet = false };

	return fwd_mirror_create(&o);
}

static int case_events(void)
{
	const struct fwd_mirror_stats *st;
	struct fwd_nh_rec rec;
	struct in_addr a;
	uint32_t counts[2] = { 0 };

	RUN("ip link add b0 type veth peer name b1 && ip link add c0 type veth peer name c1");
	RUN("for d in a0 a1 b0 b1 c0 c1; do ip link set $d up; done");
	RUN("ip link set a0 address 02:00:00:00:0a:01 && ip link set b0 address 02:00:00:00:0b:01");
	RUN("ip addr add 10.0.1.1/24 dev a0 && ip addr add 10.0.2.1/24 dev b0");
	RUN("ip -6 addr add 2001:db8:1::1/64 dev a0 nodad && ip -6 addr add 2001:db8:2::1/64 dev b0 nodad");
	RUN("ip neigh replace 10.0.1.2 lladdr 02:00:00:00:01:02 dev a0 nud permanent");
	RUN("ip neigh replace 10.0.2.2 lladdr 02:00:00:00:02:02 dev b0 nud permanent");
	RUN("ip -6 neigh replace 2001:db8:1::2 lladdr 02:00:00:00:01:62 dev a0 nud permanent");
	RUN("ip -6 neigh replace fe80::2 lladdr 02:00:00:00:01:fe dev a0 nud permanent");
	RUN("ip route add 10.10.0.0/16 via 10.0.1.2 && ip route add 10.20.0.0/16 via 10.0.2.2");
	RUN("ip route add blackhole 10.30.0.0/16 && ip route add unreachable 10.31.0.0/16 && ip route add prohibit 10.32.0.0/16");
	RUN("ip -6 route add 2001:db8:10::/48 via 2001:db8:1::2 && ip -6 route add 2001:db8:20::/48 via fe80::2 dev a0");
	/* Two metrics for one prefix (not the default route: a /0 rewrites every first-level
	 * entry of the LPM, which the TSan build takes minutes over). */
	RUN("ip route add 10.99.0.0/16 via 10.0.2.2 metric 100 && ip route add 10.99.0.0/16 via 10.0.1.2 metric 50");

	M = open_mirror(0, 0);
	CHECK(M, "create: %s", strerror(errno));
	if (!M)
		return 1;
	CHECK(!pthread_create(&reader, NULL, reader_main, NULL), "reader thread");
	atomic_store(&reader_on, true);
	st = fwd_mirror_stats(M);
	/* lo and six veth ends; four own addresses (v4, v6) plus lo's and the link-locals. */
	CHECK(st->links == 7, "links %u, want 7", st->links);
	CHECK(st->addrs >= 6, "addrs %u, want at least 6", st->addrs);
	CHECK(st->neighbours >= 4, "neighbours %u, want at least 4", st->neighbours);
	CHECK(st->routes[0] >= 8, "IPv4 prefixes %u, want at least 8", st->routes[0]);
	await_match("the initial dump");

	/* The data path's record: MACs, MTU, ifindex. */
	inet_pton(AF_INET, "10.10.3.4", &a);
	CHECK(fwd_mirror_lookup4(fwd_mirror_view(M), ntohl(a.s_addr), 0, &rec) == FWD_NH_FORWARD, "10.10.3.4 forwards");
	CHECK(rec.ifindex == ifidx("a0") && rec.mtu == 1500, "10.10.3.4 out of a0 at MTU 1500 (%u, %u)", rec.ifindex, rec.mtu);
	CHECK(!memcmp(rec.dmac, "\x02\0\0\0\x01\x02", 6) && !memcmp(rec.smac, "\x02\0\0\0\x0a\x01", 6), "10.10.3.4's MACs");
	{
		uint8_t a6[16];
		struct fwd_nh_rec r6;

		inet_pton(AF_INET6, "2001:db8:20::1", a6);
		CHECK(fwd_mirror_lookup6(fwd_mirror_view(M), a6, 0, &r6) == FWD_NH_FORWARD &&
			      !memcmp(r6.dmac, "\x02\0\0\0\x01\xfe", 6),
		      "2001:db8:20::1 via the link-local gateway, resolved");
		inet_pton(AF_INET6, "2001:db8:1::1", a6);
		CHECK(fwd_mirror_lookup6(fwd_mirror_view(M), a6, 0, &r6) == FWD_NH_LOCAL, "own IPv6 address is local");
	}
	inet_pton(AF_INET, "10.0.1.1", &a);
	CHECK(fwd_mirror_lookup4(fwd_mirror_view(M), ntohl(a.s_addr), 0, &rec) == FWD_NH_LOCAL, "own address is local");
	inet_pton(AF_INET, "10.31.0.1", &a);
	CHECK(fwd_mirror_lookup4(fwd_mirror_view(M), ntohl(a.s_addr), 0, &rec) == FWD_NH_UNREACHABLE, "unreachable type");

	/* Connected, no neighbour: unresolved; resolution asked of the kernel, rate-limited. */
	inet_pton(AF_INET, "10.0.1.9", &a);
	CHECK(fwd_mirror_lookup4(fwd_mirror_view(M), ntohl(a.s_addr), 0, &rec) == FWD_NH_UNRESOLVED &&
		      (rec.flags & FWD_NH_F_CONNECTED) && rec.ifindex == ifidx("a0"),
	      "10.0.1.9 connected, unresolved");
	CHECK(fwd_mirror_resolve(M, rec.nh, AF_INET, &a) == 0, "resolve sent");
	CHECK(fwd_mirror_resolve(M, rec.nh, AF_INET, &a) == -EAGAIN, "resolve rate-limited");
	CHECK(sh("ip neigh show 10.0.1.9 dev a0 | grep -q .") == 0, "the kernel resolves 10.0.1.9 after NTF_USE");
	/* The kernel's answer arrives as an event: the neighbour's host entry, still unresolved. */
	RUN("ip neigh replace 10.0.1.9 lladdr 02:00:00:00:01:09 dev a0 nud reachable");
	await(lookup_is, &(struct want4){ "10.0.1.9", FWD_NH_FORWARD, "02:00:00:00:01:09" }, "10.0.1.9 resolved");

	RUN("ip route add 10.40.0.0/16 via 10.0.2.2");
	await_match("ip route add");
	RUN("ip route replace 10.10.0.0/16 via 10.0.2.2");
	await_match("ip route replace");
	RUN("ip route del 10.20.0.0/16");
	await_match("ip route del");
	RUN("ip route del 10.99.0.0/16 via 10.0.1.2 metric 50");
	await_match("the lower metric removed");

	/* A neighbour's MAC changes in place; deleted, the next hop is unresolved. */
	RUN("ip neigh replace 10.0.2.2 lladdr 02:00:00:00:02:99 dev b0 nud permanent");
	await(lookup_is, &(struct want4){ "10.40.9.9", FWD_NH_FORWARD, "02:00:00:00:02:99" }, "the new MAC");
	RUN("ip neigh del 10.0.2.2 dev b0");
	await(lookup_is, &(struct want4){ "10.40.9.9", FWD_NH_UNRESOLVED, NULL }, "neighbour deleted: unresolved");
	RUN("ip neigh replace 10.0.2.2 lladdr 02:00:00:00:02:02 dev b0 nud permanent");
	await(lookup_is, &(struct want4){ "10.40.9.9", FWD_NH_FORWARD, "02:00:00:00:02:02" }, "neighbour back");

	/* Multipath with weights: a flow hash picks a member in proportion, the same one each time. */
	RUN("ip route add 10.50.0.0/16 nexthop via 10.0.1.2 weight 1 nexthop via 10.0.2.2 weight 3");
	await_match("a multipath route");
	inet_pton(AF_INET, "10.50.0.1", &a);
	for (uint32_t h = 0; h < 4000; h++) {
		uint32_t hash = h * 2654435761u;
		struct fwd_nh_rec r2;

		fwd_mirror_lookup4(fwd_mirror_view(M), ntohl(a.s_addr), hash, &rec);
		fwd_mirror_lookup4(fwd_mirror_view(M), ntohl(a.s_addr), hash, &r2);
		CHECK(rec.ifindex == r2.ifindex, "one flow, one member");
		counts[rec.ifindex == ifidx("b0")]++;
	}
	CHECK(counts[1] > 2700 && counts[1] < 3300 && counts[0] + counts[1] == 4000,
	      "weights 1:3 spread %u:%u", counts[0], counts[1]);

	/* Nexthop objects (as FRR installs them): a group, a member replaced, deleted. */
	RUN("ip nexthop add id 1 via 10.0.1.2 dev a0 && ip nexthop add id 2 via 10.0.2.2 dev b0");
	RUN("ip nexthop add id 10 group 1/2 && ip route add 10.60.0.0/16 nhid 10");
	await_match("a route through a nexthop group");
	RUN("ip neigh replace 10.0.1.3 lladdr 02:00:00:00:01:03 dev a0 nud permanent");
	RUN("ip nexthop replace id 1 via 10.0.1.3 dev a0");
	await_match("a group member replaced");
	RUN("ip nexthop del id 2");
	await_match("a group member deleted");
	RUN("ip nexthop del id 10");
	await_match("the group deleted (its IPv4 routes go without a message)");
	RUN("ip route add 10.60.0.0/16 nhid 1");
	await_match("a route through a single nexthop object");

	/* IPv6: multipath, a link-local gateway, a delete. */
	RUN("ip -6 route add 2001:db8:30::/48 nexthop via 2001:db8:1::2 dev a0 nexthop via fe80::2 dev a0");
	await_match("an IPv6 multipath route");
	RUN("ip -6 route del 2001:db8:10::/48");
	await_match("ip -6 route del");
	RUN("ip -6 route add 2001:db8:40::/48 via fe80::2 dev a0");
	await_match("an IPv6 route via a link-local gateway");
	/* IPv6 multipath built and taken apart sibling by sibling (told differently from IPv4). */
	RUN("ip -6 route add 2001:db8:50::/48 via 2001:db8:1::2 dev a0");
	RUN("ip -6 route append 2001:db8:50::/48 via 2001:db8:2::2 dev b0");
	await_match("an IPv6 sibling appended");
	RUN("ip -6 route del 2001:db8:50::/48 via 2001:db8:1::2 dev a0");
	await_match("an IPv6 sibling deleted");
	RUN("ip -6 route del 2001:db8:50::/48");
	await_match("the last IPv6 sibling deleted");

	/* A link down: its routes go (IPv4's without a message: applied by the mirror, no dump). */
	RUN("ip link set b0 down");
	await_match("ip link set b0 down");
	CHECK(fwd_mirror_stats(M)->resyncs == 0, "a link down applied without a resync (%llu)",
	      (unsigned long long)fwd_mirror_stats(M)->resyncs);
	RUN("ip link set b0 up && ip addr add 10.0.2.1/24 dev b0 2>/dev/null; ip route replace 10.40.0.0/16 via 10.0.2.2");
	await_match("b0 up again");

	/* A route through an interface that did not exist when the mirror started. */
	RUN("ip link add e0 type veth peer name e1 && ip link set e0 up && ip link set e1 up");
	RUN("ip addr add 10.0.5.1/24 dev e0 && ip route add 10.70.0.0/16 via 10.0.5.2 dev e0");
	await_match("a route via a new interface");
	RUN("ip neigh replace 10.0.5.2 lladdr 02:00:00:00:05:02 dev e0 nud permanent");
	await(lookup_is, &(struct want4){ "10.70.0.1", FWD_NH_FORWARD, "02:00:00:00:05:02" }, "new interface's neighbour");
	inet_pton(AF_INET, "10.70.0.1", &a);
	fwd_mirror_lookup4(fwd_mirror_view(M), ntohl(a.s_addr), 0, &rec);
	CHECK(rec.ifindex == ifidx("e0"), "10.70.0.1 out of e0");
	RUN("ip link del e0");
	await_match("the interface deleted");

	/* Bad input: the kernel refuses a route via a nonexistent interface; nothing changes. */
	CHECK(sh("ip route add 10.80.0.0/16 dev nosuch0 2>/dev/null") != 0, "route via nosuch0 refused");
	await_match("a refused route");
	CHECK(fwd_mirror_resolve(M, 0, AF_INET, &a) == -EINVAL, "resolve of a route type: -EINVAL");

	st = fwd_mirror_stats(M);
	printf("events %llu resyncs %llu nexthops %u neighbours %u links %u; reader passes %llu\n",
	       (unsigned long long)st->events, (unsigned long long)st->resyncs, st->nexthops, st->neighbours, st->links,
	       (unsigned long long)atomic_load(&reader_passes));
	/* The reader stops before the mirror goes. */
	atomic_store(&reader_stop, true);
	pthread_join(reader, NULL);
	atomic_store(&reader_on, false);
	fwd_mirror_destroy(M);
	return 0;
}

static int case_table(void)
{
	errno = 0;
	RUN("ip link set a0 up && ip link set a1 up && ip addr add 10.0.1.1/24 dev a0");
	M = open_mirror(100, 0);
	CHECK(!M && errno == ENOENT, "table 100 does not exist: ENOENT (%s)", strerror(errno));
	RUN("ip route add 10.10.0.0/16 via 10.0.1.2 table 100 && ip -6 route add 2001:db8:10::/48 dev a0 table 100");
	M = open_mirror(100, 0);
	CHECK(M && fwd_mirror_stats(M)->routes[0] == 1 && fwd_mirror_stats(M)->routes[1] == 1,
	      "table 100 with one route per family");
	if (M) {
		struct in_addr a;
		struct fwd_nh_rec rec;

		/* The main table's connected route is not table 100's. */
		inet_pton(AF_INET, "10.0.1.5", &a);
		CHECK(fwd_mirror_lookup4(fwd_mirror_view(M), ntohl(a.s_addr), 0, &rec) == FWD_NH_NOROUTE,
		      "only table 100's routes");
		inet_pton(AF_INET, "10.10.0.5", &a);
		CHECK(fwd_mirror_lookup4(fwd_mirror_view(M), ntohl(a.s_addr), 0, &rec) == FWD_NH_UNRESOLVED,
		      "table 100's route");
		fwd_mirror_destroy(M);
	}
	RUN("ip route del 10.10.0.0/16 table 100 && ip -6 route del 2001:db8:10::/48 table 100");
	M = open_mirror(100, 0);
	CHECK(!M && errno == ENOENT, "table 100 empty: ENOENT (%s)", strerror(errno));
	M = open_mirror(0, -1);
	CHECK(!M && errno == EINVAL, "a negative receive buffer: EINVAL");
	return 0;
}

/* Writes n route commands for ip -batch. */
static int batch(const char *path, const char *verb, uint32_t n, const char *via)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		fprintf(f, "route %s 100.%u.%u.0/24 %s\n", verb, (i >> 8) & 0xff, i & 0xff, via);
	return fclose(f);
}

static int case_resync(void)
{
	char path[] = "/tmp/mirror_test_XXXXXX";
	int fd = mkstemp(path);
	const struct fwd_mirror_stats *st;
	long long end;

	if (fd < 0)
		return 1;
	close(fd);
	RUN("ip link set a0 up && ip link set a1 up && ip addr add 10.0.1.1/24 dev a0");
	/* A receive buffer far too small for a burst: events are lost, the mirror must resync. */
	M = open_mirror(0, 4096);
	CHECK(M, "create: %s", strerror(errno));
	if (!M)
		return 1;
	batch(path, "add", 10000, "via 10.0.1.2");
	RUN("ip -batch %s", path);
	end = now_ms() + 20000;
	st = fwd_mirror_stats(M);
	while (st->routes[0] != 10001 && now_ms() < end) /* and the connected 10.0.1.0/24 */
		mirror_poll(10);
	st = fwd_mirror_stats(M);
	CHECK(st->enobufs >= 1 && st->resyncs >= 1, "events lost (%llu) and a resync (%llu)",
	      (unsigned long long)st->enobufs, (unsigned long long)st->resyncs);
	CHECK(st->routes[0] >= 10001, "IPv4 prefixes after the burst: %u", st->routes[0]);
	await_match("the burst");
	{
		/* Every one of them: the mirror equals the kernel. */
		uint32_t bad = 0;

		for (uint32_t i = 0; i < 10000; i += 97) {
			char s[32];
			uint8_t a[4];
			struct answer k, mm;

			snprintf(s, sizeof(s), "100.%u.%u.1", (i >> 8) & 0xff, i & 0xff);
			inet_pton(AF_INET, s, a);
			kernel_route(AF_INET, a, &k);
			mirror_route(AF_INET, a, &mm);
			bad += !same(&k, &mm);
		}
		CHECK(!bad, "%u sampled burst prefixes differ", bad);
	}
	batch(path, "del", 10000, "");
	RUN("ip -batch %s", path);
	end = now_ms() + 20000;
	while (fwd_mirror_stats(M)->routes[0] > 1 && now_ms() < end)
		mirror_poll(10);
	CHECK(fwd_mirror_stats(M)->routes[0] == 1, "IPv4 prefixes after deleting the burst: %u", fwd_mirror_stats(M)->routes[0]);
	await_match("the burst deleted");
	unlink(path);
	fwd_mirror_destroy(M);
	return 0;
}

/* Links going down, up and away under a table of several hundred routes (single, multipath,
 * nexthop objects, IPv4 and IPv6) over three links: the kernel removes or marks dead what went
 * through the link mostly without a message, and the mirror must follow without a dump. */
#define LT4 400
#define LT6 200
static char lt_addr[LT4 + LT6][48];
static const char *lt_list[LT4 + LT6];

static void links_table(const char *path)
{
	static const char *const v4[8] = {
		"via 10.0.1.2", "via 10.0.2.2", "nexthop via 10.0.1.2 nexthop via 10.0.2.2",
		"nexthop via 10.0.2.2 nexthop via 10.0.3.2 weight 3", "nhid 10", "nhid 11", "nhid 2", "nhid 12",
	};
	static const char *const v6[5] = {
		"via 2001:db8:1::2 dev a0", "via 2001:db8:2::2 dev b0",
		"nexthop via 2001:db8:1::2 dev a0 nexthop via 2001:db8:2::2 dev b0", "nhid 22",
		/* Not a group object: the kernel's RTM_F_FIB_MATCH answer for an IPv6 route through
		 * one names the chosen member only (group 30 is still flushed with its members). */
		"nexthop via 2001:db8:2::2 dev b0 weight 2 nexthop via 2001:db8:1::2 dev a0",
	};
	FILE *f = fopen(path, "we");

	CHECK(f, "%s", path);
	/* Whatever the last step removed comes back: addresses, objects, then routes. */
	RUN("ip addr replace 10.0.1.1/24 dev a0 && ip addr replace 10.0.2.1/24 dev b0 && ip addr replace 10.0.3.1/24 dev c0");
	RUN("ip -6 addr replace 2001:db8:1::1/64 dev a0 nodad && ip -6 addr replace 2001:db8:2::1/64 dev b0 nodad");
	RUN("ip nexthop replace id 1 via 10.0.1.2 dev a0 && ip nexthop replace id 2 via 10.0.2.2 dev b0 && "
	    "ip nexthop replace id 3 via 10.0.3.2 dev c0 && ip nexthop replace id 10 group 1/2 && "
	    "ip nexthop replace id 11 group 2 && ip nexthop replace id 12 group 2/3");
	RUN("ip nexthop replace id 21 via 2001:db8:1::2 dev a0 && ip nexthop replace id 22 via 2001:db8:2::2 dev b0 && "
	    "ip nexthop replace id 30 group 21/22");
	for (uint32_t i = 0; i < LT4; i++)
		fprintf(f, "route replace 100.%u.%u.0/24 %s\n", i >> 8, i & 0xff, v4[i % 8]);
	for (uint32_t i = 0; i < LT6; i++)
		fprintf(f, "route replace 2001:db8:100:%x::/64 %s\n", i, v6[i % 5]);
	fclose(f);
	RUN("ip -batch %s", path);
}

static void links_step(const char *what, uint64_t resyncs)
{
	await_match_list(what, lt_list, LT4 + LT6);
	await_match(what);
	CHECK(fwd_mirror_stats(M)->resyncs == resyncs, "%s: applied without a resync (resyncs %llu, was %llu)", what,
	      (unsigned long long)fwd_mirror_stats(M)->resyncs, (unsigned long long)resyncs);
}

static int case_links(void)
{
	char path[] = "/tmp/mirror_test_XXXXXX";
	int fd = mkstemp(path);
	uint64_t r0;

	if (fd < 0)
		return 1;
	close(fd);
	for (uint32_t i = 0; i < LT4; i++)
		snprintf(lt_addr[i], sizeof(lt_addr[i]), "100.%u.%u.1", i >> 8, i & 0xff);
	for (uint32_t i = 0; i < LT6; i++)
		snprintf(lt_addr[LT4 + i], sizeof(lt_addr[i]), "2001:db8:100:%x::1", i);
	for (uint32_t i = 0; i < LT4 + LT6; i++)
		lt_list[i] = lt_addr[i];
	RUN("ip link add b0 type veth peer name b1 && ip link add c0 type veth peer name c1");
	RUN("for d in a0 a1 b0 b1 c0 c1; do ip link set $d up; done");
	RUN("sysctl -qw net.ipv6.route.skip_notify_on_dev_down=0");
	links_table(path);
	M = open_mirror(0, 0);
	CHECK(M, "create: %s", strerror(errno));
	if (!M)
		return 1;
	r0 = fwd_mirror_stats(M)->resyncs;
	links_step("the initial dump", r0);

	/* Carrier lost (the peer set down): the kernel removes the nexthop objects on b0, takes
	 * them out of their groups, drops a group left empty and the routes through them; its
	 * IPv4 routes stay, marked linkdown. Not a message of it. */
	RUN("ip link set b1 down");
	links_step("b0's carrier lost", r0);
	RUN("ip link set b1 up");
	links_table(path);
	links_step("b0's carrier back, the table restored", r0);

	/* Set down: routes through b0 alone go, multipath members through it are marked dead. */
	RUN("ip link set b0 down");
	links_step("ip link set b0 down", r0);
	/* Set up: the dead members are alive again; removed routes stay removed. */
	RUN("ip link set b0 up");
	links_step("ip link set b0 up", r0);
	links_table(path);
	links_step("the table restored", r0);

	/* IPv6 told to keep quiet: its routes through b0 go silently too. */
	RUN("sysctl -qw net.ipv6.route.skip_notify_on_dev_down=1");
	RUN("ip link set b0 down");
	links_step("b0 down, IPv6 silent", r0);
	RUN("ip link set b0 up");
	links_step("b0 up, IPv6 silent", r0);
	RUN("sysctl -qw net.ipv6.route.skip_notify_on_dev_down=0");
	links_table(path);
	links_step("the table restored", r0);

	/* c0's last IPv4 address deleted: the kernel disables IPv4 there, its routes go. */
	RUN("ip addr del 10.0.3.1/24 dev c0");
	links_step("c0's last IPv4 address deleted", r0);
	links_table(path);
	links_step("the table restored", r0);

	/* Deleted: an IPv4 multipath route with a member through b0 goes whole; IPv6 deletes the
	 * sibling alone. */
	RUN("ip link del b0");
	links_step("ip link del b0", r0);
	unlink(path);
	fwd_mirror_destroy(M);
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* The script sets a link down after "flap": how long from its event until the mirror's IPv4
 * routes through it are gone (removed by the mirror, or by a resync), and until the IPv6
 * deletions the kernel sends have been applied (3 s without events ends it). */
static void bench_flap(void)
{
	const struct fwd_mirror_stats *st = fwd_mirror_stats(M);
	uint32_t r4 = st->routes[0], r6 = st->routes[1];
	uint64_t rs = st->resyncs, first = 0, v4 = 0, last = 0, call = 0, start = now_us();
	struct rusage r0, r1;

	printf("flap\n");
	fflush(stdout);
	getrusage(RUSAGE_SELF, &r0);
	while (now_us() - start < 600 * 1000000ull) {
		struct pollfd p = { .fd = fwd_mirror_fd(M), .events = POLLIN };
		uint64_t t0, t1;
		int applied;

		if (poll(&p, 1, 100) > 0 && !first)
			first = now_us();
		t0 = now_us();
		applied = fwd_mirror_process(M);
		fwd_mirror_reclaim(M);
		t1 = now_us();
		if (applied > 0)
			last = t1;
		if (t1 - t0 > call)
			call = t1 - t0;
		if (!v4 && fwd_mirror_stats(M)->routes[0] != r4)
			v4 = t1;
		if (first && last && t1 - last > 3000000)
			break;
	}
	getrusage(RUSAGE_SELF, &r1);
	st = fwd_mirror_stats(M);
	printf("link down: IPv4 routes through it gone %.1f ms after its event (longest process call %.1f ms), all "
	       "events applied after %.1f ms; CPU %.3f s; IPv4 prefixes %u -> %u, IPv6 %u -> %u; resyncs +%llu\n",
	       v4 ? (double)(v4 - first) / 1e3 : -1.0, (double)call / 1e3, (double)(last - first) / 1e3,
	       (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec + r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) +
		       (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec + r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) / 1e6,
	       r4, st->routes[0], r6, st->routes[1], (unsigned long long)(st->resyncs - rs));
}

/* The benchmark's probe: the current namespace's tables as they are. */
static int bench(int argc, char **argv)
{
	uint32_t changes = 1000;
	bool flap = false;
	const struct fwd_mirror_stats *st;
	struct timespec t0, t1;
	struct rusage r0, r1;
	const uint32_t *lat;
	uint32_t *s;
	size_t n;
	long long end;

	for (int i = 2; i + 1 < argc; i += 2)
		if (!strcmp(argv[i], "--changes"))
			changes = (uint32_t)strtoul(argv[i + 1], NULL, 0);
	for (int i = 2; i < argc; i++)
		flap |= !strcmp(argv[i], "--flap");
	getrusage(RUSAGE_SELF, &r0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	M = open_mirror(0, 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	getrusage(RUSAGE_SELF, &r1);
	if (!M) {
		perror("mirror");
		return 1;
	}
	st = fwd_mirror_stats(M);
	/* CPU time beside wall time: on a shared machine the wall time is mostly waiting. */
	printf("dump: %.3f s (CPU %.3f s user + %.3f s system, kernel's dump included) for %u IPv4 and %u IPv6 "
	       "prefixes, %u next hops, lpm_errors %llu; LPM memory %.1f MiB + %.1f MiB, process peak RSS %.0f MiB\n",
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
	       (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) + (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec) / 1e6,
	       (double)(r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) + (double)(r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) / 1e6,
	       st->routes[0], st->routes[1],
	       st->nexthops, (unsigned long long)st->lpm_errors, umem_lpm4__memory(fwd_mirror_view(M)->lpm4) / 1048576.0,
	       umem_lpm6__memory(fwd_mirror_view(M)->lpm6) / 1048576.0, r1.ru_maxrss / 1024.0);
	/* Ready: the script starts its changes now. */
	printf("ready\n");
	fflush(stdout);
	end = now_ms() + 120000;
	while (fwd_mirror_latencies(M, &lat) < changes && now_ms() < end)
		mirror_poll(100);
	n = fwd_mirror_latencies(M, &lat);
	s = malloc(n * sizeof(*s) + 1);
	if (!s || !n) {
		printf("no route events seen\n");
		return 1;
	}
	memcpy(s, lat, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_u32);
	printf("apply latency over %zu route events: p50 %.1f us, p99 %.1f us, max %.1f us; resyncs %llu\n", n,
	       s[n / 2] / 1e3, s[n * 99 / 100] / 1e3, s[n - 1] / 1e3, (unsigned long long)fwd_mirror_stats(M)->resyncs);
	free(s);
	if (flap)
		bench_flap();
	fwd_mirror_destroy(M);
	return 0;
}

int main(int argc, char **argv)
{
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: %s events|table|resync|bench [--changes N]\n", argv[0]);
		return 2;
	}
	if (!strcmp(argv[1], "bench"))
		return bench(argc, argv);
	rc = enter_namespace();
	if (rc)
		return rc;
	if (!strcmp(argv[1], "events"))
		rc = case_events();
	else if (!strcmp(argv[1], "table"))
		rc = case_table();
	else if (!strcmp(argv[1], "resync"))
		rc = case_resync();
	else if (!strcmp(argv[1], "links"))
		rc = case_links();
	else
		rc = 2;
	printf("%s: %s\n", argv[1], rc ? "FAIL" : "ok");
	return rc;
}
