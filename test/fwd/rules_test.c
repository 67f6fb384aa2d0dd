/* SPDX-License-Identifier: MIT */
/* xdp-fwd's rule checks (rules.c): targets no port serves, matches that cannot match. */
#include "frame.h"
#include "testutil.h"
#include "fwd.h"
#include "rules.h"

static struct fwd_config cfg;

/* Ports: queues of "a" as given, queue 0 of "b". */
static void ports(const uint32_t *queues, uint32_t n)
{
	fwd_config_defaults(&cfg);
	for (uint32_t i = 0; i < n; i++) {
		snprintf(cfg.ports[i].ifname, sizeof(cfg.ports[i].ifname), "a");
		cfg.ports[i].queue = queues[i];
	}
	snprintf(cfg.ports[n].ifname, sizeof(cfg.ports[n].ifname), "b");
	cfg.nr_ports = n + 1;
}

static void rules(const char *const *text)
{
	cfg.nr_rules = 0;
	for (; *text; text++) {
		CHECK_EQ(umem_steer_rule__parse(*text, &cfg.rules[cfg.nr_rules]), 0);
		cfg.rule_text[cfg.nr_rules++] = *text;
	}
}
#define RULES(...) rules((const char *const[]){ __VA_ARGS__, NULL })

static void test_targets(void)
{
	char err[512];
	const uint32_t q01[] = { 0, 1 };

	ports(q01, 2);
	RULES("any -> sock 0", "udp -> queue", "tcp -> pass");
	for (uint32_t r = 0; r < cfg.nr_rules; r++)
		CHECK_EQ(fwd_rule_target_check(&cfg, cfg.rule_text[r], &cfg.rules[r].action, err, sizeof(err)), 0);
	/* "a" serves sockets 0 and 1, "b" only 0: the rules apply to both. */
	RULES("any -> sock 1");
	CHECK_EQ(fwd_rule_target_check(&cfg, cfg.rule_text[0], &cfg.rules[0].action, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "no port serves socket 1 on b"), "message: %s", err);
	RULES("any -> group 0-1");
	CHECK_EQ(fwd_rule_target_check(&cfg, cfg.rule_text[0], &cfg.rules[0].action, err, sizeof(err)), -EINVAL);
	RULES("any -> group 0-0");
	CHECK_EQ(fwd_rule_target_check(&cfg, cfg.rule_text[0], &cfg.rules[0].action, err, sizeof(err)), 0);
}

static uint32_t warnings(void)
{
	FILE *devnull = fopen("/dev/null", "w");
	uint32_t n;

	CHECK(devnull, "/dev/null");
	n = fwd_rules_warn(&cfg, devnull);
	fclose(devnull);
	return n;
}

static void test_warnings(void)
{
	const uint32_t q0[] = { 0 };

	ports(q0, 1);
	RULES("udp dport 53 -> drop", "tcp -> pass", "arp -> pass");
	CHECK_EQ(warnings(), 0);
	RULES("icmp6 ipv4 -> drop");
	CHECK_EQ(warnings(), 1);
	RULES("icmp ipv6 -> drop");
	CHECK_EQ(warnings(), 1);
	RULES("arp dport 5 -> drop");
	CHECK_EQ(warnings(), 1);
	RULES("icmp dport 5 -> drop");
	CHECK_EQ(warnings(), 1);
	/* A catch-all drop, and the rule after it never runs. */
	RULES("any -> drop", "udp -> pass");
	CHECK_EQ(warnings(), 2);
	/* Prefixes: a rule is shadowed only by a prefix holding its own, and the program tries the
	 * longer prefix of one direction first, and a prefix rule before a table rule at equal
	 * priority, whatever the order given. */
	RULES("src 10.0.0.0/8 -> drop", "src 11.0.0.0/8 -> drop", "src 2001:db8::/32 -> drop");
	CHECK_EQ(warnings(), 0);
	RULES("src 10.0.0.0/8 -> drop", "src 10.1.0.0/16 -> pass", "dst 10.0.0.0/8 -> pass");
	CHECK_EQ(warnings(), 0);
	RULES("src 10.0.0.0/8 -> drop", "src 10.1.0.0/16 udp -> pass", "src 10.0.0.0/8 udp -> pass");
	CHECK_EQ(warnings(), 1); /* the second /8 rule: the first takes every frame it matches */
	RULES("udp -> pass", "src 10.0.0.0/8 udp -> drop");
	CHECK_EQ(warnings(), 0);
	RULES("udp -> pass", "prio 1 src 10.0.0.0/8 udp -> drop");
	CHECK_EQ(warnings(), 1);
	RULES("src 10.0.0.0/8 -> drop", "src 10.0.0.0/8 dst 10.2.0.0/16 -> pass");
	CHECK_EQ(warnings(), 1);
	/* Shadowing needs the same values and the earlier position (or priority). */
	RULES("udp -> pass", "udp dport 53 -> drop");
	CHECK_EQ(warnings(), 1);
	RULES("udp dport 53 -> drop", "udp -> pass");
	CHECK_EQ(warnings(), 0);
	RULES("udp -> pass", "prio 0 udp dport 53 -> drop");
	CHECK_EQ(warnings(), cfg.rules[0].prio > 0 ? 0u : 1u);
	RULES("tcp -> pass", "udp dport 53 -> drop");
	CHECK_EQ(warnings(), 0);
}

/* ---- umem_steer__match_frame: --pcap-filter and the offload's "does a rule take it" ---- */

static uint8_t frame[256];
static uint32_t frame_len;

/* A new frame: Ethernet 02:00:00:00:00:02 -> 02:00:00:00:00:01 (optionally one VLAN tag) with
 * ethertype type. */
static void eth(int vid, uint16_t type)
{
	static const uint8_t dst[6] = { 2, 0, 0, 0, 0, 1 }, src[6] = { 2, 0, 0, 0, 0, 2 };

	frame_len = 0;
	frame_eth(frame, &frame_len, dst, src, vid >= 0 ? 0x8100 : type);
	if (vid >= 0)
		frame_vlan(frame, &frame_len, (uint16_t)vid, type);
}

/* IPv4 UDP 10.1.2.3:1000 -> 192.168.0.9:53. */
static void udp4(int vid)
{
	eth(vid, 0x0800);
	frame_ipv4(frame, &frame_len,
		   &(struct frame_ipv4){ .src = 0x0a010203, .dst = 0xc0a80009, .ttl = 64, .proto = 17 }, 8);
	frame_udp(frame, &frame_len, 1000, 53, 0);
}

/* IPv6 2001:db8::5 -> fe80::9 with a hop-by-hop header (or a fragment header at offset frag,
 * frag >= 0) before UDP 1000 -> 53. */
static void udp6_ext(int frag)
{
	struct frame_ipv6 h = { .src = { 0x20, 0x01, 0x0d, 0xb8, [15] = 5 }, .dst = { 0xfe, 0x80, [15] = 9 },
				.next = frag >= 0 ? 44 : 0, .hop_limit = 64 };

	eth(-1, 0x86dd);
	frame_ipv6(frame, &frame_len, &h, 16);
	if (frag >= 0)
		frame_put(frame, &frame_len,
			  (uint8_t[8]){ 17, 0, (uint8_t)(frag >> 8), (uint8_t)(frag & 0xf8), 0, 0, 0, 1 }, 8);
	else
		frame_put(frame, &frame_len, (uint8_t[8]){ 17, 0, 1, 4, 0, 0, 0, 0 }, 8); /* hop-by-hop: PadN */
	frame_udp(frame, &frame_len, 1000, 53, 0);
}

static bool matches(const char *match)
{
	struct umem_steer_rule r;
	char text[128];

	snprintf(text, sizeof(text), "%s -> pass", match);
	CHECK_EQ(umem_steer_rule__parse(text, &r), 0);
	return umem_steer__match_frame(&r.match, frame, frame_len, frame_len, 0);
}
#define MATCHES(m, want) CHECK(matches(m) == (want), "'%s': %s", m, (want) ? "no match" : "matched")

static void test_frame_matches(void)
{
	udp4(-1);
	MATCHES("udp dport 53", true);
	MATCHES("src 10.0.0.0/8", true);
	MATCHES("src 10.1.2.3 udp sport 1000", true);
	MATCHES("dst 192.168.0.0/16 dport 53", true);
	MATCHES("src 0.0.0.0/0 dst 192.168.0.9", true);
	MATCHES("src 10.1.2.4", false);
	MATCHES("src 11.0.0.0/8", false);
	MATCHES("dst 10.0.0.0/8", false);
	MATCHES("src ::/0", false);
	udp4(5);
	MATCHES("vlan 5 src 10.1.0.0/16 udp dport 53", true);
	MATCHES("vlan 5 dst 192.168.0.8/31", true);
	MATCHES("vlan 5 dst 192.168.0.10/31", false);
	/* IPv6: the addresses, and the protocol behind an extension header (as the program). */
	udp6_ext(-1);
	MATCHES("udp dport 53", true);
	MATCHES("src 2001:db8::/32 udp", true);
	MATCHES("src 2001:db8::5 dst fe80::/10", true);
	MATCHES("dst 2001:db8::/32", false);
	MATCHES("src 0.0.0.0/0", false);
	udp6_ext(0); /* the first fragment: ports */
	MATCHES("udp dport 53 src 2001:db8::/32", true);
	udp6_ext(8); /* a later one: the protocol, no ports */
	MATCHES("udp src 2001:db8::/32", true);
	MATCHES("udp dport 53", false);
	/* Not IP: no address. A tag cut short: only what comes before it. */
	eth(-1, 0x0806);
	frame_zero(frame, &frame_len, 28);
	MATCHES("src 0.0.0.0/0", false);
	MATCHES("arp", true);
	eth(-1, 0x8100);
	frame_zero(frame, &frame_len, 2);
	MATCHES("any", true);
	MATCHES("vlan 0", false);
}

static int has_ipv4(const char *ifname)
{
	(void)ifname;
	return 1; /* the ARP check (its own test) stays quiet here */
}

int main(void)
{
	fwd_if_has_ipv4 = has_ipv4;
	test_targets();
	test_warnings();
	test_frame_matches();
	printf("fwd_rules: ok\n");
	return 0;
}
