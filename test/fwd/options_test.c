/* SPDX-License-Identifier: MIT */
/* xdp-fwd option parsing: defaults, every option's effect, and the bad-argument messages. */
#include <sched.h>
#include <unistd.h>

#include "testutil.h"
#include "fwd.h"
#include <umem/port.h>

static struct fwd_config cfg;
static char err[256];

/* getopt wants char *argv[]; string literals are const here (-Wwrite-strings): parse a copy.
 * The copy lives until the next parse, since cfg.rules points into it. */
static int parse(const char *const *args)
{
	static char *argv[64];
	int argc = 0;

	for (int i = 0; argv[i]; i++) {
		free(argv[i]);
		argv[i] = NULL;
	}
	argv[argc++] = strdup("xdp-fwd");
	for (; *args; args++)
		argv[argc++] = strdup(*args);
	return fwd_parse_args(&cfg, argc, argv, err, sizeof(err));
}
#define PARSE(cfg_, err_, ...) parse((const char *const[]){ __VA_ARGS__, NULL })

/* Parsing fails and the message names what is wrong. */
#define BAD(needle, ...)                                                                     \
	do {                                                                                \
		err[0] = '\0';                                                              \
		CHECK_EQ(PARSE(&cfg, err, __VA_ARGS__), -1);                                \
		CHECK(strstr(err, needle), "message '%s' lacks '%s'", err, needle);         \
	} while (0)

static void test_defaults(void)
{
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b", "--mode", "wire"), 0);
	CHECK_EQ(cfg.nr_ports, 2);
	CHECK(!strcmp(cfg.ports[0].ifname, "a") && !strcmp(cfg.ports[1].ifname, "b"), "order");
	CHECK_EQ(cfg.ports[0].queue, 0);
	CHECK_EQ(cfg.mode, FWD_MODE_WIRE);
	CHECK_EQ(cfg.batch, 64);
	CHECK_EQ(cfg.workers, 1);
	CHECK(cfg.need_wakeup && !cfg.unaligned && !cfg.hugepages && !cfg.json, "flags");
	CHECK_EQ(cfg.bind, FWD_BIND_AUTO);
	CHECK_EQ(cfg.latency, FWD_LATENCY_BALANCED);
	CHECK(!cfg.idle_spin_given && !cfg.cpu_latency_given, "no deprecated option by default");
	CHECK(!cfg.cpu_latency, "no CPU latency request by default");
	CHECK_EQ(cfg.xdp_attach, UMEM_PORT_ATTACH_AUTO);
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b", "--xdp-mode", "skb"), 0);
	CHECK_EQ(cfg.xdp_attach, UMEM_PORT_ATTACH_GENERIC);
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b", "--xdp-mode=native"), 0);
	CHECK_EQ(cfg.xdp_attach, UMEM_PORT_ATTACH_NATIVE);
	/* --latency low also holds the CPU latency request 0; --cpu-latency (deprecated) instead. */
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b", "--latency", "low"), 0);
	CHECK(cfg.latency == FWD_LATENCY_LOW && cfg.cpu_latency && cfg.cpu_latency_usecs == 0, "low");
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b", "--latency", "low", "--cpu-latency", "5"), 0);
	CHECK(cfg.cpu_latency && cfg.cpu_latency_usecs == 5, "--cpu-latency instead of the level's");
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b", "--latency", "saver"), 0);
	CHECK(cfg.latency == FWD_LATENCY_SAVER && !cfg.cpu_latency, "saver");
	/* wire is the default mode */
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b"), 0);
	CHECK_EQ(cfg.mode, FWD_MODE_WIRE);
}

static void test_all_options(void)
{
	CHECK_EQ(PARSE(&cfg, err, "-i", "eth1@3", "--interface=eth2@0", "-i", "eth3", "-m", "l2", "-b", "32",
		       "--rx-ring", "512", "--tx-ring", "1024", "--fill-ring", "2048", "--comp-ring", "256",
		       "--chunk-size", "3000", "--unaligned", "--hugepages", "--copy", "--no-need-wakeup",
		       "--busy-poll", "20", "--busy-budget", "16", "--idle-spin", "0", "--cpu-latency", "0", "-c", "0,1", "--rule", "udp dport 53 -> queue",
		       "-r", "any -> drop", "-d", "2.5", "-n", "1000", "--interval", "0.5", "--l2-aging", "7",
		       "--l2-size", "256", "-j", "--multi-buffer"), 0);
	CHECK_EQ(cfg.nr_ports, 3);
	CHECK(!strcmp(cfg.ports[0].ifname, "eth1"), "ifname");
	CHECK_EQ(cfg.ports[0].queue, 3);
	CHECK_EQ(cfg.ports[1].queue, 0);
	CHECK_EQ(cfg.mode, FWD_MODE_L2);
	CHECK_EQ(cfg.batch, 32);
	CHECK_EQ(cfg.rx_ring, 512);
	CHECK_EQ(cfg.tx_ring, 1024);
	CHECK_EQ(cfg.fill_ring, 2048);
	CHECK_EQ(cfg.comp_ring, 256);
	CHECK_EQ(cfg.chunk_size, 3000);
	CHECK(cfg.unaligned && cfg.hugepages && !cfg.need_wakeup && cfg.json && cfg.multi_buffer, "flags");
	CHECK_EQ(cfg.bind, FWD_BIND_COPY);
	CHECK_EQ(cfg.busy_poll_usecs, 20);
	CHECK_EQ(cfg.busy_poll_budget, 16);
	CHECK_EQ(cfg.idle_spin_usecs, 0);
	CHECK(cfg.idle_spin_given && !cfg.idle_spin_auto, "a number is a fixed window");
	CHECK(cfg.cpu_latency && cfg.cpu_latency_usecs == 0, "--cpu-latency 0");
	CHECK_EQ(cfg.nr_cpus, 2);
	CHECK_EQ(cfg.workers, 2); /* one worker per listed CPU */
	CHECK_EQ(cfg.nr_rules, 2);
	CHECK(!strcmp(cfg.rule_text[0], "udp dport 53 -> queue"), "rule");
	CHECK_EQ(cfg.rules[0].action.type, UMEM_STEER_A_QUEUE);
	CHECK_EQ(cfg.rules[1].action.type, UMEM_STEER_A_DROP);
	CHECK(cfg.duration == 2.5, "duration");
	CHECK_EQ(cfg.count, 1000);
	CHECK(cfg.interval == 0.5, "interval");
	CHECK_EQ(cfg.l2_aging, 7);
	CHECK_EQ(cfg.l2_size, 256);
	CHECK_EQ(cfg.group_fwd_mask, 0); /* default: every reserved address but :00 dropped */

	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b", "-m", "l2", "--group-fwd-mask", "0x4008"), 0);
	CHECK_EQ(cfg.group_fwd_mask, 0x4008); /* LLDP and 802.1X */
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b", "-m", "l2", "--group-fwd-mask", "16384"), 0);
	CHECK_EQ(cfg.group_fwd_mask, 0x4000);

	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "--mode", "reflect", "-z"), 0);
	CHECK_EQ(cfg.mode, FWD_MODE_REFLECT);
	CHECK_EQ(cfg.bind, FWD_BIND_ZEROCOPY);

	/* More workers than ports: capped (a worker without ports would only spin). */
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b", "-w", "4"), 0);
	CHECK_EQ(cfg.workers, 2);
}

static void test_bad_arguments(void)
{
	BAD("no ports", "--mode", "wire");
	BAD("given twice", "-i", "a", "-i", "a@0");
	BAD("odd number", "-i", "a", "-i", "b", "-i", "c", "--mode", "wire");
	BAD("at least 2", "-i", "a", "--mode", "l2");
	BAD("--mode l3 needs at least 2 interfaces (-i names 1)", "-i", "a@0", "-i", "a@1", "--mode", "l3");
	BAD("out of range", "-i", "a", "-i", "b", "--mode", "l3", "--table", "0");
	/* The router: the main table unless --table names another. */
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b", "--mode", "l3"), 0);
	CHECK_EQ(cfg.mode, FWD_MODE_L3);
	CHECK_EQ(cfg.route_table, 254u);
	CHECK(fwd_wants_steering(&cfg), "l3 runs without the steering program");
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b", "--mode", "l3", "--table", "100"), 0);
	CHECK_EQ(cfg.route_table, 100u);
	BAD("unknown mode 'bridge'", "-i", "a", "-i", "b", "--mode", "bridge");
	BAD("unknown option '--frobnicate'", "-i", "a", "--frobnicate");
	BAD("needs an argument", "-i", "a", "-i", "b", "--batch");
	BAD("queue", "-i", "a@x", "-i", "b");
	BAD("queue", "-i", "a@", "-i", "b");
	BAD("missing interface name", "-i", "@1", "-i", "b");
	BAD("at most 15 characters", "-i", "abcdefghijklmnop", "-i", "b");
	BAD("out of range", "-i", "a", "-i", "b", "--batch", "0");
	BAD("not a number", "-i", "a", "-i", "b", "--batch", "12x");
	BAD("out of range", "-i", "a", "-i", "b", "--idle-spin", "10000001");
	BAD("not a number", "-i", "a", "-i", "b", "--idle-spin", "-1");
	BAD("not a number", "-i", "a", "-i", "b", "--idle-spin", "automatic");
	BAD("not a number", "-i", "a", "-i", "b", "--batch", "-3");
	BAD("--latency 'fast': not a level (saver, balanced, low)", "-i", "a", "-i", "b", "--latency", "fast");
	BAD("--latency replaces --idle-spin", "-i", "a", "-i", "b", "--latency", "low", "--idle-spin", "50");
	BAD("--latency replaces --idle-spin", "-i", "a", "-i", "b", "--idle-spin", "auto", "--latency", "saver");
	BAD("not a number", "-i", "a", "-i", "b", "--cpu-latency", "-1");
	BAD("out of range", "-i", "a", "-i", "b", "--cpu-latency", "2000000001");
	BAD("not a power of two", "-i", "a", "-i", "b", "--rx-ring", "1000");
	BAD("power of two", "-i", "a", "-i", "b", "--chunk-size", "3000");
	BAD("out of range", "-i", "a", "-i", "b", "--chunk-size", "8192");
	BAD("CPU list", "-i", "a", "-i", "b", "--cpus", "1-");
	BAD("CPU list", "-i", "a", "-i", "b", "--cpus", "3-1");
	BAD("2 workers", "-i", "a", "-i", "b", "--cpus", "0", "-w", "2");
	/* A CPU outside sched_getaffinity's set is refused at parsing, not at pinning. */
	cpu_set_t allowed;
	char off[16];
	int cpu = 0;

	CHECK_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
	while (cpu < CPU_SETSIZE - 1 && CPU_ISSET(cpu, &allowed))
		cpu++;
	snprintf(off, sizeof(off), "%d", cpu);
	BAD("is not one this process may run on (allowed: ", "-i", "a", "-i", "b", "--cpus", off);
	BAD("is not one this process may run on", "-i", "a", "-i", "b", "--cpus", "4095");
	BAD("seconds", "-i", "a", "-i", "b", "--duration", "soon");
	BAD("unknown profile", "-i", "a", "-i", "b", "--profile", "ixgbe");
	BAD("--xdp-mode: unknown mode 'drv' (native, skb, auto)", "-i", "a", "-i", "b", "--xdp-mode", "drv");
	BAD("no AF_XDP zero-copy", "-i", "a", "-i", "b", "--profile", "mvpp2", "--zero-copy");
	BAD("unexpected argument 'b'", "-i", "a", "b");
	BAD("--group-fwd-mask 0x4004: bits 0-2 (0x0007) are restricted", "-i", "a", "-i", "b", "--group-fwd-mask", "0x4004");
	BAD("--group-fwd-mask 1: bits 0-2", "-i", "a", "-i", "b", "--group-fwd-mask", "1");
	BAD("'0x10000' is not a 16-bit mask", "-i", "a", "-i", "b", "--group-fwd-mask", "0x10000");
	BAD("'lldp' is not a 16-bit mask", "-i", "a", "-i", "b", "--group-fwd-mask", "lldp");
	BAD("'-1' is not a 16-bit mask", "-i", "a", "-i", "b", "--group-fwd-mask", "-1");
	BAD("--rule 'udp dport -> pass': not a steering rule", "-i", "a", "-i", "b", "--rule", "udp dport -> pass");
}

static void test_cpu_list(void)
{
	int cpus[8];

	CHECK_EQ(fwd_parse_cpu_list("0,2-4,7", cpus, 8), 5);
	CHECK(cpus[0] == 0 && cpus[1] == 2 && cpus[3] == 4 && cpus[4] == 7, "cpus");
	CHECK_EQ(fwd_parse_cpu_list("0-8", cpus, 8), -1); /* more than max */
	CHECK_EQ(fwd_parse_cpu_list("", cpus, 8), -1);
	CHECK_EQ(fwd_parse_cpu_list("1,", cpus, 8), -1);
	CHECK_EQ(fwd_parse_cpu_list("a", cpus, 8), -1);
}

static void test_help(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fwd_usage(f);
	fclose(f);
	/* Generated from the option table: every option is there. */
	for (const char *o = "--interface\0--mode\0--batch\0--rx-ring\0--chunk-size\0--unaligned\0"
			     "--hugepages\0--busy-poll\0--zero-copy\0--copy\0--no-need-wakeup\0--cpus\0"
			     "--rule\0--duration\0--count\0--profile\0--json\0--help\0";
	     *o; o += strlen(o) + 1)
		CHECK(strstr(buf, o), "--help lacks %s", o);
	free(buf);
}

static int fake_queue_count(const char *ifname)
{
	return !strcmp(ifname, "q4") || !strcmp(ifname, "r4") ? 4 : !strcmp(ifname, "q2") ? 2 :
	       -19 /* ENODEV */;
}

/* Queue ranges: one port per queue; wire mode pairs queue q with queue q and keeps both ends
 * in one group; @all asks the device. */
static void test_queue_ranges(void)
{
	fwd_queue_count = fake_queue_count;
	CHECK_EQ(PARSE(&cfg, err, "-i", "q4@all", "-i", "b@4-7", "-w", "2"), 0);
	CHECK_EQ(cfg.nr_ports, 8);
	CHECK_EQ(cfg.nr_groups, 4);
	for (uint32_t q = 0; q < 4; q++) {
		const struct fwd_port_spec *a = &cfg.ports[2 * q], *b = &cfg.ports[2 * q + 1];

		CHECK(!strcmp(a->ifname, "q4") && a->queue == q, "port %u: %s@%u", 2 * q, a->ifname, a->queue);
		CHECK(!strcmp(b->ifname, "b") && b->queue == 4 + q, "port %u: %s@%u", 2 * q + 1, b->ifname, b->queue);
		CHECK(a->group == q && b->group == q, "queue %u: groups %u, %u", q, a->group, b->group);
	}
	CHECK_EQ(cfg.workers, 2);
	/* Workers never outnumber the groups. */
	CHECK_EQ(PARSE(&cfg, err, "-i", "q2@all", "-i", "b@0-1", "-w", "8"), 0);
	CHECK_EQ(cfg.workers, 2);
	/* Other modes: each interface's queues in turn, queue q of every interface in group q. */
	CHECK_EQ(PARSE(&cfg, err, "-i", "q2@all", "-i", "b@6-7", "-m", "l2"), 0);
	CHECK_EQ(cfg.nr_ports, 4);
	CHECK(cfg.ports[1].queue == 1 && cfg.ports[2].queue == 6, "l2 order");
	CHECK(cfg.ports[0].group == 0 && cfg.ports[1].group == 1 && cfg.ports[2].group == 0 &&
	      cfg.ports[3].group == 1, "l2 groups");
	/* Without ranges every port is its own group (the two-worker wire crosses workers). */
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b", "-w", "2"), 0);
	CHECK(cfg.nr_groups == 2 && cfg.ports[1].group == 1 && cfg.workers == 2, "single queues");

	/* The mvpp2 profile: copy mode, 2 KiB chunks, a bare IFNAME is every queue (one per CPU),
	 * a worker per queue pair; an explicit queue stays as given. */
	CHECK_EQ(PARSE(&cfg, err, "-i", "q4", "-i", "r4", "--profile", "mvpp2"), 0);
	CHECK_EQ(cfg.bind, FWD_BIND_COPY);
	CHECK_EQ(cfg.chunk_size, 2048);
	CHECK_EQ(cfg.nr_ports, 8);
	CHECK_EQ(cfg.workers, 4);
	CHECK(!cfg.multi_buffer, "mvpp2 runs XDP at MTU <= 1500 only: no multi-buffer");
	CHECK_EQ(PARSE(&cfg, err, "-i", "q4@2", "-i", "r4@3", "--profile", "mvpp2"), 0);
	CHECK(cfg.nr_ports == 2 && cfg.ports[0].queue == 2 && cfg.workers == 1, "mvpp2, explicit queues");

	BAD("pairs queue by queue: q4 has 4 queues (0-3), b has 2 (0-1)", "-i", "q4@all", "-i", "b@0-1");
	BAD("cannot read the queue count of nosuch", "-i", "nosuch@all", "-i", "b");
	BAD("backwards", "-i", "a@3-1", "-i", "b@0");
	BAD("a range like 0-3", "-i", "a@1-", "-i", "b");
	BAD("a range like 0-3", "-i", "a@-2", "-i", "b");
	BAD("given twice", "-i", "a@0-3", "-i", "a@3", "-m", "reflect");
	BAD("more than 64 ports", "-i", "a@0-40", "-i", "b@0-40");
	BAD("at least 2 interfaces", "-i", "q4@all", "-m", "l2");
	BAD("reflect mode has nothing to offload", "-i", "a", "-m", "reflect", "--offload-after", "8");
	BAD("--offload-max", "-i", "a", "-i", "b", "--offload-after", "8", "--offload-max", "20000");
	BAD("--offload-idle", "-i", "a", "-i", "b", "--offload-idle", "0");
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b", "--offload-after", "64", "--offload-idle", "3", "--offload-max", "9"), 0);
	CHECK(cfg.offload_after == 64 && cfg.offload_idle == 3 && cfg.offload_max == 9, "offload options");
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b"), 0);
	CHECK(cfg.offload_after == 0 && cfg.offload_idle == 10, "offload off by default, idle 10 s");
	fwd_queue_count = umem_netdev__queue_count;
}

static int no_addr(const char *ifname)
{
	return !strcmp(ifname, "addr0"); /* only addr0 has an IPv4 address */
}

/* Which rule set hands ARP to the kernel, and the warning for interfaces without an address. */
static void test_rules_arp(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b", "-r", "arp -> pass"), 0);
	CHECK_EQ(fwd_rule_passing_arp(&cfg), 0);
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b", "-r", "udp dport 53 -> drop", "-r", "any -> pass"), 0);
	CHECK_EQ(fwd_rule_passing_arp(&cfg), 1);
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b", "-r", "ethertype arp -> pass"), 0);
	CHECK_EQ(fwd_rule_passing_arp(&cfg), 0);
	/* Not ARP, or taken before the pass rule, or not the broadcast of a request: no warning. */
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b", "-r", "udp dport 53 -> pass", "-r", "ipv4 -> pass",
		       "-r", "dmac 02:00:00:00:00:01 -> pass"), 0);
	CHECK_EQ(fwd_rule_passing_arp(&cfg), -1);
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b", "-r", "arp -> queue", "-r", "any -> pass"), 0);
	CHECK_EQ(fwd_rule_passing_arp(&cfg), -1);
	/* Priority decides, not the order given; a narrower rule first does not cover all ARP. */
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b", "-r", "prio 9 arp -> queue", "-r", "prio 1 any -> pass"), 0);
	CHECK_EQ(fwd_rule_passing_arp(&cfg), 1);
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b", "-r", "vlan 5 arp -> drop", "-r", "arp -> pass"), 0);
	CHECK_EQ(fwd_rule_passing_arp(&cfg), 1);

	fwd_if_has_ipv4 = no_addr;
	CHECK_EQ(PARSE(&cfg, err, "-i", "addr0", "-i", "b@0-1", "-m", "reflect", "-r", "arp -> pass"), 0);
	f = open_memstream(&buf, &len);
	CHECK_EQ(fwd_warn_rules(&cfg, f), 1); /* b once, whatever its queues; addr0 can answer */
	fclose(f);
	CHECK(strstr(buf, "rule 'arp -> pass' hands ARP arriving on b to the kernel, which has no IPv4 address"),
	      "warning: %s", buf);
	free(buf);
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b", "-r", "udp dport 53 -> drop"), 0);
	CHECK_EQ(fwd_warn_rules(&cfg, stderr), 0);
}

/* The default chunk: 2 KiB while every MTU fits one behind the XDP headroom (1500 + 18 <=
 * 2048 - 256), 4 KiB above, for an unknown MTU and in unaligned mode; the boundary exactly. */
static void test_default_chunk(void)
{
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b"), 0);
	CHECK_EQ(cfg.chunk_size, 0); /* chosen against the interfaces' MTUs at start */
	CHECK_EQ(fwd_default_chunk(&cfg, 1500), 2048);
	CHECK_EQ(fwd_default_chunk(&cfg, 2048 - 256 - 18), 2048);
	CHECK_EQ(fwd_default_chunk(&cfg, 2048 - 256 - 18 + 1), 4096);
	CHECK_EQ(fwd_default_chunk(&cfg, 9000), 4096);
	CHECK_EQ(fwd_default_chunk(&cfg, 0), 4096);
	cfg.chunk_size = 2048;
	CHECK(!fwd_mtu_needs_multi_buffer(&cfg, 1774) && fwd_mtu_needs_multi_buffer(&cfg, 1775),
	      "2 KiB chunk boundary");
	cfg.offload_after = 64; /* a gate mark may take 12 bytes in front of a frame */
	CHECK(!fwd_mtu_needs_multi_buffer(&cfg, 1762) && fwd_mtu_needs_multi_buffer(&cfg, 1763),
	      "2 KiB chunk boundary with offload");
	cfg.offload_after = 0;
	cfg.chunk_size = 4096;
	CHECK(!fwd_mtu_needs_multi_buffer(&cfg, 3822) && fwd_mtu_needs_multi_buffer(&cfg, 3823),
	      "4 KiB chunk boundary");
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b", "--unaligned"), 0);
	CHECK_EQ(fwd_default_chunk(&cfg, 1500), 4096);
}

/* The area's pages for a count of RX buffers: chunks to a page when aligned; unaligned, a
 * page each above half a page, else 64-byte-aligned fragments as the port cuts them. */
static void test_frame_pages(void)
{
	static const struct { bool unaligned; uint32_t chunk; uint64_t pages; } cases[] = {
		{ false, 2048, 500 }, { false, 4096, 1000 }, { false, 0, 1000 },
		{ true, 2048, 500 },  { true, 2100, 1000 },  { true, 3000, 1000 }, { true, 0, 1000 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cfg.unaligned = cases[i].unaligned;
		cfg.chunk_size = cases[i].chunk;
		CHECK(fwd_frame_pages(&cfg, 1000) == cases[i].pages, "%s chunk %u: %llu pages for 1000 frames, want %llu",
		      cases[i].unaligned ? "unaligned" : "aligned", cases[i].chunk,
		      (unsigned long long)fwd_frame_pages(&cfg, 1000), (unsigned long long)cases[i].pages);
	}
	cfg.unaligned = true;
	cfg.chunk_size = 2048;
	CHECK_EQ(fwd_frame_pages(&cfg, 1001), 501); /* a page started is a page */
}

/* --pcap and its filter: the rule language's match words, dev IFNAME, and the refusals. */
static void test_pcap(void)
{
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b"), 0);
	CHECK(!cfg.pcap_path && cfg.pcap_snaplen == 262144 && cfg.pcap_buffer_kib == 4096 && !cfg.pcap_count,
	      "pcap defaults");
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b", "--pcap", "x.pcap"), 0);
	CHECK(!strcmp(cfg.pcap_path, "x.pcap") && !cfg.pcap_filter && !cfg.pcap_match.fields && !cfg.nr_pcap_devs,
	      "--pcap alone takes every frame");
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b", "--pcap", "x", "--pcap-filter", "dev b udp dport 53 dev a",
		       "--pcap-snaplen", "96", "--pcap-count", "10", "--pcap-buffer", "128"), 0);
	CHECK_EQ(cfg.nr_pcap_devs, 2);
	CHECK(!strcmp(cfg.pcap_dev[0], "b") && !strcmp(cfg.pcap_dev[1], "a"), "dev words in order");
	CHECK_EQ(cfg.pcap_match.fields, UMEM_STEER_M_L4PROTO | UMEM_STEER_M_DPORT);
	CHECK_EQ(cfg.pcap_match.l4proto, 17);
	CHECK_EQ(cfg.pcap_match.dport, 53);
	CHECK(cfg.pcap_snaplen == 96 && cfg.pcap_count == 10 && cfg.pcap_buffer_kib == 128, "pcap values");
	CHECK_EQ(PARSE(&cfg, err, "-i", "a", "-i", "b", "--pcap", "x", "--pcap-filter", "any"), 0);
	CHECK_EQ(cfg.pcap_match.fields, 0);
	BAD("not a match of the rule language", "-i", "a", "-i", "b", "--pcap", "x", "--pcap-filter", "udp dprt 5");
	BAD("a match only, without '->'", "-i", "a", "-i", "b", "--pcap", "x", "--pcap-filter", "udp -> drop");
	BAD("a match only, without 'prio'", "-i", "a", "-i", "b", "--pcap", "x", "--pcap-filter", "prio 1 udp");
	BAD("'dev' needs an interface name", "-i", "a", "-i", "b", "--pcap", "x", "--pcap-filter", "udp dev");
	BAD("dev c is not an interface given with -i", "-i", "a", "-i", "b", "--pcap", "x", "--pcap-filter", "dev c");
	BAD("need --pcap FILE", "-i", "a", "-i", "b", "--pcap-filter", "udp");
	BAD("need --pcap FILE", "-i", "a", "-i", "b", "--pcap-snaplen", "100");
	BAD("--pcap-snaplen", "-i", "a", "-i", "b", "--pcap", "x", "--pcap-snaplen", "10");
	BAD("--pcap: empty file name", "-i", "a", "-i", "b", "--pcap", "");
}

/* --config FILE: every long option as "name = value"; the command line overrides it (its -i
 * and --rule replace the file's); an error names FILE:LINE. */
static const char *conf(const char *text)
{
	static char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/fwd-options-%d.conf", (int)getpid());
	f = fopen(path, "w");
	CHECK(f != NULL, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
	return path;
}

static void test_config_file(void)
{
	const char *path = conf("# a comment\n\ninterface = a\ninterface = b   # two ports\n"
				"mode = l2\nbatch=32\n  json = yes\nquiet = no\n"
				"rule = \"udp dport 53 -> drop\"\nlatency = saver\n");

	fwd_config_free(&cfg);
	CHECK_EQ(PARSE(&cfg, err, "--config", path), 0);
	CHECK_EQ(cfg.nr_ports, 2);
	CHECK(!strcmp(cfg.ports[1].ifname, "b"), "%s", cfg.ports[1].ifname);
	CHECK_EQ(cfg.mode, FWD_MODE_L2);
	CHECK_EQ(cfg.batch, 32);
	CHECK(cfg.json && !cfg.quiet, "flags");
	CHECK_EQ(cfg.nr_rules, 1);
	CHECK(!strcmp(cfg.rule_text[0], "udp dport 53 -> drop"), "%s", cfg.rule_text[0]);
	CHECK_EQ(cfg.latency, FWD_LATENCY_SAVER);
	/* The command line wins: its -i replace the file's, its --batch the file's. */
	fwd_config_free(&cfg);
	CHECK_EQ(PARSE(&cfg, err, "--config", path, "-i", "c", "-i", "d", "-b", "8", "--mode", "wire"), 0);
	CHECK_EQ(cfg.nr_ports, 2);
	CHECK(!strcmp(cfg.ports[0].ifname, "c") && !strcmp(cfg.ports[1].ifname, "d"), "ports %s %s",
	      cfg.ports[0].ifname, cfg.ports[1].ifname);
	CHECK_EQ(cfg.batch, 8);
	CHECK_EQ(cfg.mode, FWD_MODE_WIRE);
	fwd_config_free(&cfg);

	/* Each error names the file and the line. */
	char want[128];
	static const struct {
		const char *text, *msg;
		int line;
	} bad[] = {
		{ "interface = a\nbatch = 0\n", "batch", 2 },
		{ "interface = a\n\n# c\nno-such-option = 1\n", "unknown option 'no-such-option'", 4 },
		{ "interface = a\njson\n", "not 'name = value'", 2 },
		{ "json = maybe\n", "neither yes nor no", 1 },
		{ "mode = \"wire\n", "unterminated quote", 1 },
		{ "config = other.conf\n", "cannot include", 1 },
		{ "rule = udp dport 99999 -> drop\n", "not a steering rule", 1 },
		{ "batch =\n", "no value", 1 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		path = conf(bad[i].text);
		snprintf(want, sizeof(want), "%s:%d: ", path, bad[i].line);
		BAD(want, "--config", path, "-i", "x");
		CHECK(strstr(err, bad[i].msg), "'%s' lacks '%s'", err, bad[i].msg);
		fwd_config_free(&cfg);
	}
	BAD("--config /nonexistent/x.conf: No such file", "--config", "/nonexistent/x.conf", "-i", "x");
	fwd_config_free(&cfg);
	/* A directory opens and fails at the read: refused, nothing kept (the fuzzer's leak). */
	BAD("--config /: Is a directory", "--config", "/", "-i", "x");
	CHECK(!cfg.texts, "a refused file's text kept");
	fwd_config_free(&cfg);
	unlink(path);
}

int main(void)
{
	test_defaults();
	test_all_options();
	test_bad_arguments();
	test_queue_ranges();
	test_cpu_list();
	test_help();
	test_rules_arp();
	test_default_chunk();
	test_frame_pages();
	test_pcap();
	test_config_file();
	printf("fwd_options: ok\n");
	return 0;
}
