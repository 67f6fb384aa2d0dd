/* SPDX-License-Identifier: MIT */
/*
 * steer-bench: cost of the steering decision per frame, measured with BPF_PROG_TEST_RUN
 * (repeat N, the kernel's own per-run average), against a baseline program that returns XDP_PASS
 * in the same run. Needs root. Prints the median of several rounds and the cost over baseline.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <umem/steer.h>

#include "cli.h"
#include "frame.h"

#define ROUNDS 7

/* The frame every round runs: 64 bytes of IPv4/UDP 10.0.0.1:5000 -> 10.0.0.2:5001. */
static uint8_t frame[64];

static void build_frame(void)
{
	static const uint8_t dst[6] = { 0x02, 0, 0, 0, 0, 0xa }, src[6] = { 0x02, 0, 0, 0, 0, 0xb };
	uint32_t n = 0;

	frame_eth(frame, &n, dst, src, 0x0800);
	frame_ipv4(frame, &n, &(struct frame_ipv4){ .src = 0x0a000001, .dst = 0x0a000002, .ttl = 64, .proto = 17 },
		   sizeof(frame) - n - 20);
	frame_udp(frame, &n, 5000, 5001, sizeof(frame) - n - 8);
}

static int cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* ifindex: the frame's ingress interface (0: none); want: the verdict every round must give
 * (-1: any), so that a case measures the path it names. */
static uint32_t median_ns(int prog_fd, uint32_t repeat, uint32_t ifindex, int want)
{
	struct xdp_md md = { .data_end = sizeof(frame), .ingress_ifindex = ifindex };
	uint32_t d[ROUNDS];

	for (int r = 0; r < ROUNDS; r++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = sizeof(frame),
			    .ctx_in = ifindex ? &md : NULL, .ctx_size_in = ifindex ? sizeof(md) : 0, .repeat = repeat);
		if (bpf_prog_test_run_opts(prog_fd, &o)) {
			fprintf(stderr, "steer-bench: test run: %s\n", strerror(errno));
			exit(1);
		}
		if (want >= 0 && o.retval != (uint32_t)want) {
			fprintf(stderr, "steer-bench: verdict %u, not %d: the case misses its path\n", o.retval, want);
			exit(1);
		}
		d[r] = o.duration;
	}
	qsort(d, ROUNDS, sizeof(d[0]), cmp);
	return d[ROUNDS / 2];
}

/* n non-matching rules, then the rule that decides (or none: the default decides). */
static void fill(struct umem_steer *s, int n, const char *last)
{
	struct umem_steer_rule r;

	umem_steer__clear_rules(s);
	for (int i = 0; i < n; i++) {
		if (umem_steer_rule__parse("tcp dport 1 -> drop", &r) || umem_steer__add_rule(s, &r))
			exit(1);
	}
	if (last && (umem_steer_rule__parse(last, &r) || umem_steer__add_rule(s, &r)))
		exit(1);
}

/* n src /24 prefix rules scattered over the IPv4 space (an odd multiplier permutes the /24s),
 * none holding the frame's 10.0.0.1, then (hit) 10.0.0.0/24 -> pass, which does. */
static void fill_prefixes(struct umem_steer *s, int n, int hit)
{
	struct umem_steer_rule r;
	char text[64];

	umem_steer__clear_rules(s);
	for (int i = 0; i < n; i++) {
		uint32_t net = ((uint32_t)i * 2654435761u) & 0xffffff;

		if (net >> 16 == 10)
			net ^= 1u << 23;
		snprintf(text, sizeof(text), "src %u.%u.%u.0/24 -> drop", net >> 16, net >> 8 & 0xff, net & 0xff);
		if (umem_steer_rule__parse(text, &r) || umem_steer__add_rule(s, &r))
			exit(1);
	}
	if (hit && (umem_steer_rule__parse("src 10.0.0.0/24 -> pass", &r) || umem_steer__add_rule(s, &r)))
		exit(1);
}

/* What xdp-fwd --mode l3 loads (mode_l3.c): ARP/ND and TTL <= 1 to the kernel, and a pass rule
 * per own address, multicast and broadcast prefix; none holds the frame, which is routed. */
static void fill_router(struct umem_steer *s)
{
	static const char *const pass[] = { "dst 10.0.1.1 -> pass", "dst 10.0.0.254 -> pass", "dst 224.0.0.0/4 -> pass",
					    "dst 255.255.255.255 -> pass", "dst fe80::/10 -> pass", "dst ff00::/8 -> pass" };
	struct umem_steer_rule r;

	umem_steer__clear_rules(s);
	if (umem_steer__set_table_flags(s, UMEM_STEER_F_HOST_CONTROL | UMEM_STEER_F_ROUTER))
		exit(1);
	for (size_t i = 0; i < sizeof(pass) / sizeof(pass[0]); i++)
		if (umem_steer_rule__parse(pass[i], &r) || umem_steer__add_rule(s, &r))
			exit(1);
}

/* fill_router, and the frame's flow offloaded: a redirect out of the loopback (ifindex 1), which
 * is also the ingress. Without the routed rewrite (UMEM_STEER_FLOW_F_ROUTE): the rounds reuse
 * one frame, whose TTL would run down to the kernel's. */
static void fill_flow(struct umem_steer *s)
{
	struct umem_steer_flow fl = { .action = UMEM_STEER_FLOW_A_REDIRECT, .index = 1 };
	struct umem_steer_flows *f;
	struct umem_steer_flow_key k;

	fill_router(s);
	f = umem_steer_flows__open(s);
	if (!f || umem_steer_flow_key__parse(frame, sizeof(frame), 1, UMEM_STEER_FLOW_IPV4, &k) ||
	    umem_steer_flows__add(f, &k, &fl)) {
		fprintf(stderr, "steer-bench: cannot add the flow\n");
		exit(1);
	}
	umem_steer_flows__close(f);
}

struct bench_cfg {
	uint32_t repeat;
	uint32_t edits;
};

static struct bench_cfg cfg = { .repeat = 1000000 };

static const struct cli_opt opts[] = {
	{ "repeat", 'n', "N", "frames per round (BPF_PROG_TEST_RUN repeat; default 1000000)",
	  CLI_U32_AT(struct bench_cfg, repeat, 1, UINT32_MAX) },
	{ "edits", 0, "N", "instead: the time to add N src /24 prefix rules and to take them out again, "
	  "the last added first, as a refused `umem-steer load` does", CLI_U32_AT(struct bench_cfg, edits, 1,
	  UMEM_STEER_MAX_PREFIXES) },
};

static double secs(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --edits: fill_prefixes, then a remove per rule by id, newest first; wall and CPU of each. */
static int bench_edits(struct umem_steer *s, uint32_t n)
{
	UMEM_OPTS(umem_steer_info, before);
	UMEM_OPTS(umem_steer_info, after);
	double w0, c0, w1, c1;
	int err;

	umem_steer__clear_rules(s);
	if ((err = umem_steer__info(s, &before)))
		return err;
	printf("%u prefix rules, one at a time\n", n);
	w0 = secs(CLOCK_MONOTONIC), c0 = secs(CLOCK_PROCESS_CPUTIME_ID);
	fill_prefixes(s, (int)n, 0);
	w1 = secs(CLOCK_MONOTONIC), c1 = secs(CLOCK_PROCESS_CPUTIME_ID);
	printf("%-28s %8.2f s wall %8.2f s CPU %6.1f us CPU a rule\n", "add (src /24 -> drop)", w1 - w0, c1 - c0,
	       (c1 - c0) * 1e6 / n);
	if ((err = umem_steer__info(s, &after)))
		return err;
	/* Ids are monotonic: this run's are the ones handed out between the two reads. */
	for (uint32_t id = after.prefix_ids; id != before.prefix_ids; id--)
		if ((err = umem_steer__remove_rule(s, UMEM_STEER_PREFIX_ID_BASE + id - 1, NULL)))
			return err;
	w0 = secs(CLOCK_MONOTONIC), c0 = secs(CLOCK_PROCESS_CPUTIME_ID);
	printf("%-28s %8.2f s wall %8.2f s CPU %6.1f us CPU a rule\n", "remove, newest first", w0 - w1, c0 - c1,
	       (c0 - c1) * 1e6 / n);
	if ((err = umem_steer__prefix_rules(s, NULL, NULL)) != 0)
		fprintf(stderr, "steer-bench: %d prefix rules left after the removes\n", err);
	return err ? -EIO : 0;
}

static const struct cli_prog cli = {
	.name = "steer-bench",
	.synopsis = "[OPTIONS] [REPEAT]",
	.summary = "Cost of the steering decision per frame (BPF_PROG_TEST_RUN), against a program "
		   "that returns XDP_PASS, in the same run. Needs root. REPEAT is the same as --repeat.",
	CLI_OPTS(opts),
};

int main(int argc, char **argv)
{
	const struct bpf_insn ret_pass[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = XDP_PASS }, /* r0 = XDP_PASS */
		{ .code = 0x95 },                               /* exit */
	};
	UMEM_OPTS(umem_steer_opts, o, .flags = UMEM_STEER_F_LOAD_ONLY,
		  .default_action = &(struct umem_steer_action){ .type = UMEM_STEER_A_PASS });
	const struct {
		const char *name;
		int before;
		const char *last;
		int prefixes; /* > 0: fill_prefixes(prefixes - 1 misses + the hit), < 0: -prefixes misses */
		enum { RULES, ROUTER, ROUTER_FLOW } table; /* fill or fill_prefixes; fill_router; fill_flow */
	} cases[] = {
		{ "no rules, default pass", 0, NULL, 0, RULES },
		{ "1 rule (udp dport) -> pass", 0, "udp dport 5001 -> pass", 0, RULES },
		{ "8 rules, the 8th decides", 7, "udp dport 5001 -> pass", 0, RULES },
		{ "64 rules, the 64th decides", 63, "udp dport 5001 -> pass", 0, RULES },
		{ "64 rules, none match", 64, NULL, 0, RULES },
		{ "1 rule -> group 0-7 (hash)", 0, "udp -> group 0-7", 0, RULES },
		{ "1 src prefix, holds the frame", 0, NULL, 1, RULES },
		{ "1k src prefixes, one holds it", 0, NULL, 1000, RULES },
		{ "100k src prefixes, one holds it", 0, NULL, 100000, RULES },
		{ "100k src prefixes, none holds it", 0, NULL, -100000, RULES },
		{ "router (--mode l3): 6 dst passes", 0, NULL, 0, ROUTER },
		{ "router, the flow offloaded", 0, NULL, 0, ROUTER_FLOW },
	};
	uint32_t base;
	struct umem_steer *s;
	char err[128];
	int base_fd, next = cli_parse_or_exit(&cli, &cfg, argc, argv, 1);

	if (next < argc && cli_parse_u32("repeat", argv[next++], 1, UINT32_MAX, &cfg.repeat, err, sizeof(err)))
		cli_die(&cli, "%s", err);
	if (next < argc)
		cli_die(&cli, "unexpected argument '%s'", argv[next]);
	base_fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "bench_pass", "GPL", ret_pass, 2, NULL);
	s = umem_steer__attach(NULL, &o);
	if (base_fd < 0 || !s) {
		fprintf(stderr, "steer-bench: cannot load (root needed): %s\n", strerror(errno));
		return 1;
	}
	if (cfg.edits) {
		int e = bench_edits(s, cfg.edits);

		umem_steer__detach(s);
		return e ? 1 : 0;
	}
	build_frame();
	base = median_ns(base_fd, cfg.repeat, 0, -1);
	printf("%-32s %8s %10s   (median of %d rounds x %u frames, 64-byte IPv4/UDP)\n", "case", "ns/frame",
	       "over base", ROUNDS, cfg.repeat);
	printf("%-32s %8u %10s\n", "baseline: return XDP_PASS", base, "-");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool flow = cases[i].table == ROUTER_FLOW;
		uint32_t ns;

		if (flow)
			fill_flow(s);
		else if (cases[i].table == ROUTER)
			fill_router(s);
		else if (cases[i].prefixes)
			fill_prefixes(s, abs(cases[i].prefixes) - (cases[i].prefixes > 0), cases[i].prefixes > 0);
		else
			fill(s, cases[i].before, cases[i].last);
		/* A flow's frame comes in on the loopback, its flow's ingress (fill_flow). */
		ns = median_ns(umem_steer__prog_fd(s), cfg.repeat, flow ? 1 : 0, flow ? XDP_REDIRECT : -1);
		printf("%-32s %8u %+10d\n", cases[i].name, ns, (int)ns - (int)base);
	}
	umem_steer__detach(s);
	return 0;
}
