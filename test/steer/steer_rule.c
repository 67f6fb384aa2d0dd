/* SPDX-License-Identifier: MIT */
/* Rule text: every field and action parses to the struct it names, and formats back to text
 * that parses to the same struct; bad text fails naming the token. No privileges needed. */
#include <stdarg.h>
#include <umem/steer.h>
#include "testutil.h"

static char last_msg[512];

__attribute__((format(printf, 2, 0)))
static int capture(enum umem_print_level level, const char *fmt, va_list args)
{
	vsnprintf(last_msg, sizeof(last_msg), fmt, args);
	return 0;
}

static void roundtrip(const char *text, const char *canonical)
{
	struct umem_steer_rule a, b;
	char buf[256];

	CHECK(umem_steer_rule__parse(text, &a) == 0, "'%s': %s", text, last_msg);
	CHECK(umem_steer_rule__format(&a, buf, sizeof(buf)) > 0, "format");
	CHECK(!strcmp(buf, canonical), "'%s' formats as '%s', expected '%s'", text, buf, canonical);
	CHECK(umem_steer_rule__parse(buf, &b) == 0, "reparse '%s'", buf);
	CHECK(!memcmp(&a, &b, sizeof(a)), "'%s' does not survive format+parse", text);
}

static void bad(const char *text, const char *token)
{
	struct umem_steer_rule r;

	last_msg[0] = 0;
	CHECK(umem_steer_rule__parse(text, &r) == -EINVAL, "'%s' accepted", text);
	CHECK(strstr(last_msg, token), "'%s': message '%s' does not name '%s'", text, last_msg, token);
}

int main(void)
{
	struct umem_steer_rule r;
	struct umem_steer_action a;
	char buf[256];

	umem_set_print(capture);
	CHECK(umem_steer_rule__parse("prio 7 queue 3 vlan 100 ipv4 udp sport 1 dport 0x1388 dmac 02:AA:00:00:00:01 -> group 2-5", &r) == 0,
	      "%s", last_msg);
	CHECK_EQ(r.prio, 7);
	CHECK_EQ(r.match.fields, UMEM_STEER_M_ALL);
	CHECK_EQ(r.match.queue, 3);
	CHECK_EQ(r.match.vlan, 100);
	CHECK_EQ(r.match.ethertype, 0x0800);
	CHECK_EQ(r.match.l4proto, 17);
	CHECK_EQ(r.match.sport, 1);
	CHECK_EQ(r.match.dport, 5000);
	CHECK(r.match.dmac[0] == 2 && r.match.dmac[1] == 0xaa && r.match.dmac[5] == 1, "dmac");
	CHECK_EQ(r.action.type, UMEM_STEER_A_GROUP);
	CHECK_EQ(r.action.index, 2);
	CHECK_EQ(r.action.count, 4);

	roundtrip("udp dport 5000 -> sock 1", "udp dport 5000 -> sock 1");
	roundtrip("arp -> pass", "arp -> pass");
	roundtrip("  ->   drop ", "any -> drop");
	roundtrip("any -> queue", "any -> queue");
	roundtrip("ethertype ipv6 proto icmp6 -> pass", "ipv6 icmp6 -> pass");
	roundtrip("ethertype 0x88cc -> pass", "ethertype 0x88cc -> pass");
	roundtrip("proto 47 -> drop", "proto 47 -> drop");
	roundtrip("prio 65535 tcp sport 22 -> sock 0", "prio 65535 tcp sport 22 -> sock 0");
	roundtrip("dmac ff:ff:ff:ff:ff:ff -> group 0-0", "dmac ff:ff:ff:ff:ff:ff -> group 0-0");

	CHECK(umem_steer_action__parse("sock 4", &a) == 0 && a.type == UMEM_STEER_A_SOCK && a.index == 4, "action");
	CHECK(umem_steer_action__format(&a, buf, sizeof(buf)) > 0 && !strcmp(buf, "sock 4"), "%s", buf);
	CHECK(umem_steer_action__parse("sock 4 5", &a) == -EINVAL, "trailing word");

	bad("udp dprot 5 -> sock 1", "'dprot'");
	bad("udp -> fly", "'fly'");
	bad("udp -> sock", "'sock' needs a value");
	bad("udp dport 65536 -> drop", "'65536'");
	bad("vlan 4096 -> drop", "'4096'");
	bad("udp -> group 5-2", "'5-2'");
	bad("udp -> group 5", "'5'");
	bad("udp -> drop now", "'now'");
	bad("udp dport 1", "no '-> action'");
	bad("udp udp -> drop", "repeats");
	bad("dmac 1:2:3 -> drop", "'1:2:3'");
	bad("queue -3 -> drop", "'-3'");
	bad("", "no '-> action'");
	CHECK(umem_steer_rule__parse(NULL, &r) == -EINVAL, "NULL text");
	/* A truncating buffer still reports the full length, as snprintf does. */
	CHECK(umem_steer_rule__parse("udp dport 5000 -> sock 1", &r) == 0, "parse");
	CHECK_EQ(umem_steer_rule__format(&r, buf, 4), (int)strlen("udp dport 5000 -> sock 1"));
	CHECK(!strcmp(buf, "udp"), "truncated to '%s'", buf);
	CHECK(!strcmp(umem_steer_stat__name(UMEM_STEER_S_NO_SOCKET), "no_socket") && !umem_steer_stat__name(UMEM_STEER_S_NR),
	      "stat names");
	printf("steer_rule: ok\n");
	return 0;
}
