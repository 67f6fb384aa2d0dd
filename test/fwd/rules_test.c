/* SPDX-License-Identifier: MIT */
/* xdp-fwd's rule checks (rules.c): targets no port serves, matches that cannot match. */
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
	printf("fwd_rules: ok\n");
	return 0;
}
