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
	CHECK(umem_steer_rule__parse("prio 7 queue 3 vlan 100 ipv4 udp sport 1 dport 0x1388 dmac 02:AA:00:00:00:01 src 10.1.0.0/16 dst 192.0.2.7 -> group 2-5", &r) == 0,
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
	CHECK(r.match.src.family == 4 && r.match.src.len == 16 && r.match.src.addr[0] == 10 &&
	      r.match.src.addr[1] == 1 && !r.match.src.addr[2], "src");
	CHECK(r.match.dst.family == 4 && r.match.dst.len == 32 && r.match.dst.addr[3] == 7, "dst: a host is a /32");
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
	/* Prefixes: hosts print bare, IPv6 in its shortest form, any order in, one order out. */
	roundtrip("src 10.0.0.0/8 -> drop", "src 10.0.0.0/8 -> drop");
	roundtrip("dst 2001:DB8:0:0::/32 udp -> sock 2", "udp dst 2001:db8::/32 -> sock 2");
	roundtrip("src 10.0.0.1/32 -> pass", "src 10.0.0.1 -> pass");
	roundtrip("src 2001:db8::1 -> pass", "src 2001:db8::1 -> pass");
	roundtrip("src 0.0.0.0/0 -> drop", "src 0.0.0.0/0 -> drop");
	roundtrip("dst ::/0 src ::/0 -> drop", "src ::/0 dst ::/0 -> drop");
	roundtrip("prio 3 ipv6 tcp dport 22 src fe80::/10 -> pass", "prio 3 ipv6 tcp dport 22 src fe80::/10 -> pass");
	roundtrip("ip src 192.168.0.0/16 dst 10.0.0.0/8 -> queue", "ipv4 src 192.168.0.0/16 dst 10.0.0.0/8 -> queue");

	CHECK(umem_steer_action__parse("sock 4", &a) == 0 && a.type == UMEM_STEER_A_SOCK && a.index == 4, "action");
	CHECK(umem_steer_action__format(&a, buf, sizeof(buf)) > 0 && !strcmp(buf, "sock 4"), "%s", buf);
	CHECK(umem_steer_action__parse("sock 4 5", &a) == -EINVAL, "trailing word");

	bad("udp dprot 5 -> sock 1", "'dprot'");
	bad("udp port 7 -> sock 0", "fields: queue, vlan, ethertype"); /* the valid ones listed */
	bad("udp port 7 -> sock 0", "sport, dport");
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
	bad("src 10.0.0.0/33 -> drop", "'33'");
	bad("src 10.0.0.0/33 -> drop", "0..32 for IPv4");
	bad("dst 2001:db8::/129 -> drop", "0..128 for IPv6");
	bad("src 10.1.2.3/16 -> drop", "host bits set (the prefix is 10.1.0.0/16)");
	bad("dst 2001:db8::1/32 -> drop", "the prefix is 2001:db8::/32");
	bad("src 10.0.0.256 -> drop", "bad address '10.0.0.256'");
	bad("src 10.0.0.0/ -> drop", "bad prefix length ''");
	bad("src 10.0.0.0/+8 -> drop", "'+8'");
	bad("src 010.0.0.0/8 -> drop", "bad address '010.0.0.0'"); /* leading zeros: octal to some */
	bad("src 10.0.0.0/8x -> drop", "bad prefix length '8x'");
	bad("src 10.0.0.0x/8 -> drop", "bad address '10.0.0.0x'");
	bad("src 10.0.0.0/8/8 -> drop", "bad prefix length '8/8'");
	bad("src fe80::1%eth0 -> drop", "bad address 'fe80::1%eth0'");
	bad("src 10.0.0.0/4294967304 -> drop", "bad prefix length '4294967304'");
	bad("src -> drop", "bad address '->'");
	bad("src", "'src' needs an address");
	bad("src 10.0.0.0/8 src 11.0.0.0/8 -> drop", "repeats");
	bad("src 10.0.0.0/8 dst 2001:db8::/32 -> drop", "src is IPv4 and dst IPv6");
	bad("ipv6 src 10.0.0.0/8 -> drop", "an IPv4 prefix with ethertype 0x86dd");
	bad("arp dst 10.0.0.0/8 -> drop", "ethertype 0x0806");
	CHECK(umem_steer_rule__parse(NULL, &r) == -EINVAL, "NULL text");
	/* A truncating buffer still reports the full length, as snprintf does. */
	CHECK(umem_steer_rule__parse("udp dport 5000 -> sock 1", &r) == 0, "parse");
	CHECK_EQ(umem_steer_rule__format(&r, buf, 4), (int)strlen("udp dport 5000 -> sock 1"));
	CHECK(!strcmp(buf, "udp"), "truncated to '%s'", buf);
	CHECK(!strcmp(umem_steer_stat__name(UMEM_STEER_S_NO_SOCKET), "no_socket") && !umem_steer_stat__name(UMEM_STEER_S_NR),
	      "stat names");
	/* A gate mark in front of a frame's data is told from a frame's own first bytes: the
	 * magic falls on the source address's group bit, which no frame's source carries. */
	{
		uint8_t fr[64] = { 0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00 };
		struct umem_steer_gate_mark m = { .seq = 3, .magic = UMEM_STEER_GATE_MAGIC, .tag = 9 };

		CHECK_EQ(umem_steer_gate__unwrap(fr, sizeof(fr)), 0);
		memcpy(fr, &m, sizeof(m));
		CHECK(fr[6] & 1, "the mark's magic sets the group bit of the source address");
		CHECK_EQ(umem_steer_gate__unwrap(fr, sizeof(fr)), sizeof(m));
		CHECK_EQ(umem_steer_gate__unwrap(fr, sizeof(m) + 13), 0); /* no Ethernet header behind it */
	}
	printf("steer_rule: ok\n");
	return 0;
}
