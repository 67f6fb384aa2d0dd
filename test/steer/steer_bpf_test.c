/* SPDX-License-Identifier: MIT */
/*
 * Steering program under BPF_PROG_TEST_RUN: every match field and action on crafted frames,
 * VLAN/IPv6/fragments, malformed frames, flow-hash symmetry, counters, multi-buffer frames,
 * bad input, attach errors and the replace/refuse rules. Runs in a private network namespace
 * (unshare) so the interfaces it makes vanish with it.
 */

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <umem/csum.h>
#include <umem/fault.h> /* umem__fault_no_meta */
#include <umem/steer.h>
#include "frame.h"
#include "testutil.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

static struct umem_steer *S;
static int ifindex_q; /* veth with 4 rx queues */
static int sockets[8];

/* ---- frames: the shared builder (frame.h) with this test's addresses ---- */

struct frame {
	uint8_t b[9100];
	uint32_t len;
};

static const uint8_t MAC_A[6] = { 0x02, 0, 0, 0, 0, 0xa };
static const uint8_t MAC_B[6] = { 0x02, 0, 0, 0, 0, 0xb };

static void put(struct frame *f, const void *p, size_t n)
{
	frame_put(f->b, &f->len, p, (uint32_t)n);
}

/* A new frame: Ethernet to dmac from the other of MAC_A and MAC_B. */
static void f_eth(struct frame *f, const uint8_t *dmac, uint16_t type)
{
	f->len = 0;
	frame_eth(f->b, &f->len, dmac, dmac == MAC_A ? MAC_B : MAC_A, type);
}

/* A tag: the previous type field must say 0x8100/0x88a8; next is what follows the tag. */
static void f_vlan(struct frame *f, uint16_t vid, uint16_t next)
{
	frame_vlan(f->b, &f->len, vid, next);
}

static void f_ipv4(struct frame *f, uint8_t proto, uint32_t src, uint32_t dst, uint16_t frag, size_t payload)
{
	frame_ipv4(f->b, &f->len,
		   &(struct frame_ipv4){ .src = src, .dst = dst, .frag = frag, .ttl = 64, .proto = proto },
		   (uint32_t)payload);
}

/* 2000::src -> 2000::dst. */
static void f_ipv6(struct frame *f, uint8_t nh, uint32_t src, uint32_t dst, size_t payload)
{
	struct frame_ipv6 h = { .src = { 0x20 }, .dst = { 0x20 }, .next = nh, .hop_limit = 64 };

	frame_set32(h.src + 12, src);
	frame_set32(h.dst + 12, dst);
	frame_ipv6(f->b, &f->len, &h, (uint32_t)payload);
}

static void f_ports(struct frame *f, uint16_t sport, uint16_t dport, size_t hdrlen)
{
	frame_ports(f->b, &f->len, sport, dport, (uint32_t)hdrlen);
}

static void f_pad(struct frame *f, size_t n)
{
	frame_zero(f->b, &f->len, (uint32_t)n);
}

/* IPv4 UDP frame with n payload bytes after the UDP header. */
static void udp4(struct frame *f, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport, size_t n)
{
	f_eth(f, MAC_A, 0x0800);
	f_ipv4(f, 17, src, dst, 0, 8 + n);
	f_ports(f, sport, dport, 8);
	f_pad(f, n);
}

static void udp6(struct frame *f, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport)
{
	f_eth(f, MAC_A, 0x86dd);
	f_ipv6(f, 17, src, dst, 8 + 10);
	f_ports(f, sport, dport, 8);
	f_pad(f, 10);
}

/* ---- running ---- */

static struct umem_steer_trace T; /* last decision */
/* Bytes in the first buffer (0: up to 3500); the rest of the frame becomes fragments. */
static size_t linear_len;

static int run_q(struct frame *f, uint32_t queue)
{
	struct xdp_md ctx = { .data_end = 0, .ingress_ifindex = ifindex_q, .rx_queue_index = queue };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->b, .data_size_in = f->len, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = 1);
	struct umem_steer_trace before;

	ctx.data_end = linear_len ? linear_len : f->len > 3500 ? 3500 : f->len;
	CHECK(umem_steer__trace(S, 0, &before) == 0, "trace");
	CHECK(bpf_prog_test_run_opts(umem_steer__prog_fd(S), &o) == 0, "test_run: %s", strerror(errno));
	CHECK(umem_steer__trace(S, 0, &T) == 0, "trace");
	CHECK(T.seq == before.seq + 1, "program did not trace (seq %llu)", (unsigned long long)T.seq);
	CHECK_EQ(T.verdict, o.retval);
	return o.retval;
}

static int run(struct frame *f)
{
	return run_q(f, 0);
}

static uint32_t add(const char *text)
{
	struct umem_steer_rule r;

	CHECK(umem_steer_rule__parse(text, &r) == 0, "parse '%s'", text);
	CHECK(umem_steer__add_rule(S, &r) == 0, "add '%s'", text);
	return r.id;
}

static void reset(void)
{
	CHECK(umem_steer__clear_rules(S) == 0, "clear");
	CHECK(umem_steer__reset_counters(S) == 0, "reset");
}

/* The frame was decided by rule id (or the default) with that action. */
#define EXPECT(f, id, act) expect_q(f, 0, id, act, __LINE__)
static void expect_q(struct frame *f, uint32_t queue, uint32_t id, uint32_t act, int line)
{
	run_q(f, queue);
	if (T.rule != id || T.action != act) {
		fprintf(stderr, "line %d: decided by rule %u action %u, expected rule %u action %u\n", line,
			T.rule, T.action, id, act);
		exit(1);
	}
}

/* ---- tests ---- */

static void test_fields(void)
{
	struct frame f;
	uint32_t id;
	const uint32_t D = UMEM_STEER_RULE_DEFAULT;

	reset();
	id = add("queue 2 -> drop");
	udp4(&f, 1, 2, 10, 20, 10);
	expect_q(&f, 2, id, UMEM_STEER_A_DROP, __LINE__);
	CHECK_EQ(T.verdict, XDP_DROP);
	expect_q(&f, 1, D, UMEM_STEER_A_PASS, __LINE__);
	CHECK_EQ(T.verdict, XDP_PASS);

	reset();
	id = add("ethertype 0x88b5 -> drop");
	f_eth(&f, MAC_A, 0x88b5), f_pad(&f, 46);
	EXPECT(&f, id, UMEM_STEER_A_DROP);
	f_eth(&f, MAC_A, 0x88b6), f_pad(&f, 46);
	EXPECT(&f, D, UMEM_STEER_A_PASS);

	reset();
	id = add("vlan 100 -> sock 3");
	f_eth(&f, MAC_A, 0x8100), f_vlan(&f, 100, 0x0800), f_ipv4(&f, 17, 1, 2, 0, 8), f_ports(&f, 1, 2, 8);
	EXPECT(&f, id, UMEM_STEER_A_SOCK);
	CHECK_EQ(T.index, 3);
	CHECK_EQ(T.verdict, XDP_REDIRECT);
	f_eth(&f, MAC_A, 0x8100), f_vlan(&f, 101, 0x0800), f_ipv4(&f, 17, 1, 2, 0, 8), f_ports(&f, 1, 2, 8);
	EXPECT(&f, D, UMEM_STEER_A_PASS);
	udp4(&f, 1, 2, 1, 2, 0); /* untagged */
	EXPECT(&f, D, UMEM_STEER_A_PASS);
	/* Inner fields behind a QinQ pair; the outer tag's id is the one matched. */
	reset();
	id = add("vlan 7 ipv4 udp dport 53 -> drop");
	f_eth(&f, MAC_A, 0x88a8), f_vlan(&f, 7, 0x8100), f_vlan(&f, 9, 0x0800), f_ipv4(&f, 17, 1, 2, 0, 8),
		f_ports(&f, 1, 53, 8);
	EXPECT(&f, id, UMEM_STEER_A_DROP);
	f_eth(&f, MAC_A, 0x88a8), f_vlan(&f, 9, 0x8100), f_vlan(&f, 7, 0x0800), f_ipv4(&f, 17, 1, 2, 0, 8),
		f_ports(&f, 1, 53, 8);
	EXPECT(&f, D, UMEM_STEER_A_PASS);

	reset();
	id = add("tcp -> drop");
	f_eth(&f, MAC_A, 0x0800), f_ipv4(&f, 6, 1, 2, 0, 20), f_ports(&f, 1, 2, 20);
	EXPECT(&f, id, UMEM_STEER_A_DROP);
	f_eth(&f, MAC_A, 0x86dd), f_ipv6(&f, 6, 1, 2, 20), f_ports(&f, 1, 2, 20);
	EXPECT(&f, id, UMEM_STEER_A_DROP);
	udp4(&f, 1, 2, 1, 2, 0);
	EXPECT(&f, D, UMEM_STEER_A_PASS);

	reset();
	id = add("sport 1111 -> drop");
	udp4(&f, 1, 2, 1111, 2, 0);
	EXPECT(&f, id, UMEM_STEER_A_DROP);
	udp6(&f, 1, 2, 1111, 2);
	EXPECT(&f, id, UMEM_STEER_A_DROP);
	udp4(&f, 1, 2, 2, 1111, 0);
	EXPECT(&f, D, UMEM_STEER_A_PASS);

	reset();
	id = add("udp dport 2222 -> drop");
	udp4(&f, 1, 2, 1, 2222, 0);
	EXPECT(&f, id, UMEM_STEER_A_DROP);
	udp6(&f, 1, 2, 1, 2222);
	EXPECT(&f, id, UMEM_STEER_A_DROP);
	f_eth(&f, MAC_A, 0x0800), f_ipv4(&f, 6, 1, 2, 0, 20), f_ports(&f, 1, 2222, 20); /* tcp */
	EXPECT(&f, D, UMEM_STEER_A_PASS);

	reset();
	id = add("dmac 02:00:00:00:00:0b -> drop");
	f_eth(&f, MAC_B, 0x0806), f_pad(&f, 28);
	EXPECT(&f, id, UMEM_STEER_A_DROP);
	f_eth(&f, MAC_A, 0x0806), f_pad(&f, 28);
	EXPECT(&f, D, UMEM_STEER_A_PASS);

	/* Priority order beats insertion order; equal priority keeps insertion order. */
	reset();
	add("prio 9 udp -> drop");
	id = add("prio 1 udp dport 7 -> sock 1");
	add("prio 1 udp -> sock 2");
	udp4(&f, 1, 2, 1, 7, 0);
	EXPECT(&f, id, UMEM_STEER_A_SOCK);
	udp4(&f, 1, 2, 1, 8, 0);
	CHECK_EQ(run(&f), XDP_REDIRECT);
	CHECK_EQ(T.index, 2);
}

static void test_actions(void)
{
	struct umem_steer_action a;
	struct frame f;
	uint32_t id;

	reset();
	id = add("udp dport 1 -> sock 5");
	udp4(&f, 1, 2, 1, 1, 0);
	EXPECT(&f, id, UMEM_STEER_A_SOCK);
	CHECK_EQ(T.verdict, XDP_REDIRECT);
	CHECK_EQ(T.index, 5);
	/* No socket at the index: the kernel gets it, never the void. */
	CHECK(umem_steer__set_socket(S, 5, -1) == 0, "clear socket");
	EXPECT(&f, id, UMEM_STEER_A_SOCK);
	CHECK_EQ(T.verdict, XDP_PASS);
	CHECK(umem_steer__set_socket(S, 5, sockets[5]) == 0, "set socket");

	id = add("udp dport 2 -> queue");
	udp4(&f, 1, 2, 1, 2, 0);
	expect_q(&f, 3, id, UMEM_STEER_A_QUEUE, __LINE__);
	CHECK_EQ(T.index, 3);
	CHECK_EQ(T.verdict, XDP_REDIRECT);

	id = add("udp dport 3 -> pass");
	udp4(&f, 1, 2, 1, 3, 0);
	EXPECT(&f, id, UMEM_STEER_A_PASS);
	CHECK_EQ(T.verdict, XDP_PASS);

	id = add("udp dport 4 -> group 2-5");
	udp4(&f, 1, 2, 1, 4, 0);
	EXPECT(&f, id, UMEM_STEER_A_GROUP);
	CHECK(T.index >= 2 && T.index <= 5, "group index %u", T.index);

	/* The default action, changed at run time. */
	udp4(&f, 1, 2, 1, 99, 0);
	EXPECT(&f, UMEM_STEER_RULE_DEFAULT, UMEM_STEER_A_PASS);
	CHECK(umem_steer_action__parse("drop", &a) == 0, "parse");
	CHECK(umem_steer__set_default(S, &a) == 0, "set default");
	EXPECT(&f, UMEM_STEER_RULE_DEFAULT, UMEM_STEER_A_DROP);
	CHECK_EQ(T.verdict, XDP_DROP);
	CHECK(umem_steer_action__parse("queue", &a) == 0, "parse");
	CHECK(umem_steer__set_default(S, &a) == 0, "set default");
	expect_q(&f, 1, UMEM_STEER_RULE_DEFAULT, UMEM_STEER_A_QUEUE, __LINE__);
	CHECK_EQ(T.index, 1);
	CHECK_EQ(T.verdict, XDP_REDIRECT);
	CHECK(umem_steer_action__parse("pass", &a) == 0, "parse");
	CHECK(umem_steer__set_default(S, &a) == 0, "set default");

	/* Host control: ARP and ND go to the kernel ahead of a catch-all rule. */
	reset();
	add("any -> sock 1");
	f_eth(&f, MAC_A, 0x0806), f_pad(&f, 28);
	EXPECT(&f, 0, UMEM_STEER_A_SOCK);
	CHECK(umem_steer__set_table_flags(S, UMEM_STEER_F_TRACE | UMEM_STEER_F_HOST_CONTROL) == 0, "flags");
	run(&f);
	CHECK(T.action == UMEM_STEER_A_PASS && T.rule == UMEM_STEER_RULE_HOST_CONTROL, "arp not host control");
	f_eth(&f, MAC_A, 0x86dd), f_ipv6(&f, 58, 1, 2, 24), f_pad(&f, 24);
	f.b[14 + 40] = 135; /* neighbour solicitation */
	run(&f);
	CHECK(T.action == UMEM_STEER_A_PASS && T.rule == UMEM_STEER_RULE_HOST_CONTROL, "NS not host control");
	f.b[14 + 40] = 128; /* echo request: not control */
	EXPECT(&f, 0, UMEM_STEER_A_SOCK);
	struct umem_steer_counter c[UMEM_STEER_S_NR];
	CHECK(umem_steer__action_counters(S, c) == 0, "counters");
	CHECK_EQ(c[UMEM_STEER_S_HOST_CONTROL].packets, 2);

	/* Router: TTL or hop limit <= 1 and IPv4 options go to the kernel (it sends time
	 * exceeded), ahead of the catch-all rule; TTL 2 is still the rules'. */
	CHECK(umem_steer__set_table_flags(S, UMEM_STEER_F_TRACE | UMEM_STEER_F_ROUTER) == 0, "flags");
	udp4(&f, 1, 2, 1000, 53, 18);
	f.b[14 + 8] = 2;
	EXPECT(&f, 0, UMEM_STEER_A_SOCK);
	f.b[14 + 8] = 1;
	run(&f);
	CHECK(T.action == UMEM_STEER_A_PASS && T.rule == UMEM_STEER_RULE_HOST_CONTROL, "TTL 1 not the kernel's");
	f.b[14 + 8] = 0;
	run(&f);
	CHECK(T.action == UMEM_STEER_A_PASS && T.rule == UMEM_STEER_RULE_HOST_CONTROL, "TTL 0 not the kernel's");
	udp6(&f, 1, 2, 1000, 53);
	f.b[14 + 7] = 2;
	EXPECT(&f, 0, UMEM_STEER_A_SOCK);
	f.b[14 + 7] = 1;
	run(&f);
	CHECK(T.action == UMEM_STEER_A_PASS && T.rule == UMEM_STEER_RULE_HOST_CONTROL, "hop limit 1 not the kernel's");
	/* An IPv4 header with options (IHL 6: one word of NOPs). */
	f_eth(&f, MAC_A, 0x0800);
	f_ipv4(&f, 17, 1, 2, 0, 4 + 8 + 10);
	f.b[14] = 0x46;
	f_pad(&f, 4 + 8 + 10);
	run(&f);
	CHECK(T.action == UMEM_STEER_A_PASS && T.rule == UMEM_STEER_RULE_HOST_CONTROL, "IPv4 options not the kernel's");
	CHECK(umem_steer__action_counters(S, c) == 0, "counters");
	CHECK_EQ(c[UMEM_STEER_S_HOST_CONTROL].packets, 6);
	CHECK(umem_steer__set_table_flags(S, UMEM_STEER_F_TRACE) == 0, "flags");
}

static void test_malformed(void)
{
	struct umem_steer_counter c[UMEM_STEER_S_NR];
	const uint32_t D = UMEM_STEER_RULE_DEFAULT;
	struct frame f;
	int n_malformed = 0;

	reset();
	add("udp -> drop");
	add("sport 1 -> drop");
	add("dport 2 -> drop");
	add("proto 0 -> drop"); /* a zeroed protocol must not match a frame without one */

	/* A runt: test runs refuse frames under 14 bytes, but a first buffer of 10 bytes (the rest
	 * in a fragment) gives the program the same view. */
	uint32_t id_dmac = add("dmac 02:00:00:00:00:0a -> drop");
	udp4(&f, 1, 2, 1, 2, 20);
	linear_len = 10;
	EXPECT(&f, D, UMEM_STEER_A_PASS), n_malformed++;
	CHECK(T.malformed && T.present == UMEM_STEER_M_QUEUE, "runt: present 0x%x", T.present);
	/* Headers split across buffers are not parsed: UDP header beyond the first buffer. */
	linear_len = 14 + 20 + 2;
	EXPECT(&f, 0, UMEM_STEER_A_DROP), n_malformed++; /* "udp" needs only the IP header */
	CHECK(!(T.present & UMEM_STEER_M_DPORT), "ports past the first buffer");
	linear_len = 0;
	CHECK(umem_steer__remove_rule(S, id_dmac, NULL) == 0, "remove");
	/* Ethernet header alone, claiming IPv4. */
	f_eth(&f, MAC_A, 0x0800);
	EXPECT(&f, D, UMEM_STEER_A_PASS), n_malformed++;
	CHECK(T.malformed && !(T.present & UMEM_STEER_M_L4PROTO), "runt IPv4");
	/* IHL < 5. */
	udp4(&f, 1, 2, 1, 2, 20);
	f.b[14] = 0x44;
	EXPECT(&f, D, UMEM_STEER_A_PASS), n_malformed++;
	/* Version 6 in an IPv4 ethertype. */
	udp4(&f, 1, 2, 1, 2, 20);
	f.b[14] = 0x65;
	EXPECT(&f, D, UMEM_STEER_A_PASS), n_malformed++;
	/* IHL says options the frame lacks. */
	f_eth(&f, MAC_A, 0x0800), f_ipv4(&f, 17, 1, 2, 0, 0);
	f.b[14] = 0x4f;
	EXPECT(&f, D, UMEM_STEER_A_PASS), n_malformed++;
	/* Total length beyond the frame. */
	udp4(&f, 1, 2, 1, 2, 20);
	f.b[16] = 0x10;
	EXPECT(&f, D, UMEM_STEER_A_PASS), n_malformed++;
	/* Total length shorter than the header. */
	udp4(&f, 1, 2, 1, 2, 20);
	f.b[16] = 0, f.b[17] = 10;
	EXPECT(&f, D, UMEM_STEER_A_PASS), n_malformed++;
	/* UDP header cut short by the frame, then by the IP total length (frame padded). */
	f_eth(&f, MAC_A, 0x0800), f_ipv4(&f, 17, 1, 2, 0, 4), f_ports(&f, 1, 2, 4);
	run(&f), n_malformed++;
	CHECK(T.rule == 0 && !(T.present & UMEM_STEER_M_DPORT), "short UDP: rule %u", T.rule); /* "udp" still matches */
	f_eth(&f, MAC_A, 0x0800), f_ipv4(&f, 17, 1, 2, 0, 4), f_ports(&f, 1, 2, 8), f_pad(&f, 30);
	run(&f), n_malformed++;
	CHECK(T.rule == 0 && !(T.present & UMEM_STEER_M_DPORT), "UDP past IP length");
	/* IPv6: payload length beyond the frame; truncated header; extension header cut short. */
	udp6(&f, 1, 2, 1, 2);
	f.b[14 + 4] = 0x10;
	EXPECT(&f, D, UMEM_STEER_A_PASS), n_malformed++;
	f_eth(&f, MAC_A, 0x86dd), f_pad(&f, 30);
	f.b[14] = 0x60;
	EXPECT(&f, D, UMEM_STEER_A_PASS), n_malformed++;
	f_eth(&f, MAC_A, 0x86dd), f_ipv6(&f, 0, 1, 2, 4), f_pad(&f, 4); /* hop-by-hop needs 8 */
	EXPECT(&f, D, UMEM_STEER_A_PASS), n_malformed++;
	/* Truncated VLAN tag. */
	f_eth(&f, MAC_A, 0x8100), f_pad(&f, 2);
	EXPECT(&f, D, UMEM_STEER_A_PASS), n_malformed++;
	CHECK(!(T.present & UMEM_STEER_M_ETHERTYPE), "ethertype behind a cut tag");
	/* Three tags: more than the parser walks, so the payload type is unknown (not malformed). */
	f_eth(&f, MAC_A, 0x8100), f_vlan(&f, 1, 0x8100), f_vlan(&f, 2, 0x8100), f_vlan(&f, 3, 0x0800);
	f_ipv4(&f, 17, 1, 2, 0, 8), f_ports(&f, 1, 2, 8);
	EXPECT(&f, D, UMEM_STEER_A_PASS);
	CHECK(!T.malformed && !(T.present & UMEM_STEER_M_ETHERTYPE), "3 tags");
	/* Unknown ethertype carrying what would parse as UDP. */
	f_eth(&f, MAC_A, 0x1234), f_ipv4(&f, 17, 1, 2, 0, 8), f_ports(&f, 1, 2, 8);
	EXPECT(&f, D, UMEM_STEER_A_PASS);
	CHECK(!T.malformed, "unknown ethertype is not malformed");

	CHECK(umem_steer__action_counters(S, c) == 0, "counters");
	CHECK_EQ(c[UMEM_STEER_S_MALFORMED].packets, n_malformed);
}

static void test_fragments(void)
{
	const uint32_t D = UMEM_STEER_RULE_DEFAULT;
	struct frame f;
	uint32_t id_port, id_udp, first, other;

	reset();
	id_port = add("udp dport 53 -> drop");
	id_udp = add("udp -> group 0-7");
	/* IPv4: the first fragment has ports, a later one has none; both hash to one socket. */
	f_eth(&f, MAC_A, 0x0800), f_ipv4(&f, 17, 10, 20, 0x2000, 8 + 100), f_ports(&f, 999, 1000, 8), f_pad(&f, 100);
	EXPECT(&f, id_udp, UMEM_STEER_A_GROUP);
	first = T.index;
	f_eth(&f, MAC_A, 0x0800), f_ipv4(&f, 17, 10, 20, 0x000e, 100), f_pad(&f, 100);
	EXPECT(&f, id_udp, UMEM_STEER_A_GROUP);
	other = T.index;
	CHECK_EQ(first, other);
	CHECK(!(T.present & UMEM_STEER_M_DPORT), "later fragment has no ports");
	f_eth(&f, MAC_A, 0x0800), f_ipv4(&f, 17, 10, 20, 0x2000, 8 + 100), f_ports(&f, 999, 53, 8), f_pad(&f, 100);
	EXPECT(&f, id_port, UMEM_STEER_A_DROP);
	/* A later fragment whose payload looks like port 53 is not taken for one. */
	f_eth(&f, MAC_A, 0x0800), f_ipv4(&f, 17, 10, 20, 0x0010, 8), f_ports(&f, 999, 53, 8);
	EXPECT(&f, id_udp, UMEM_STEER_A_GROUP);

	/* IPv6 behind hop-by-hop + fragment headers. */
	f_eth(&f, MAC_A, 0x86dd), f_ipv6(&f, 0, 10, 20, 8 + 8 + 8);
	put(&f, (uint8_t[8]){ 44, 0 }, 8);                  /* hop-by-hop → fragment */
	put(&f, (uint8_t[8]){ 17, 0, 0x00, 0x01 }, 8);      /* offset 0, M */
	f_ports(&f, 999, 53, 8);
	EXPECT(&f, id_port, UMEM_STEER_A_DROP);
	f_eth(&f, MAC_A, 0x86dd), f_ipv6(&f, 44, 10, 20, 8 + 8);
	put(&f, (uint8_t[8]){ 17, 0, 0x00, 0x10 }, 8);      /* offset 2 (x8) */
	f_ports(&f, 999, 53, 8);
	EXPECT(&f, id_udp, UMEM_STEER_A_GROUP);
	CHECK(!(T.present & UMEM_STEER_M_DPORT), "v6 later fragment has no ports");
	/* ICMP is not UDP. */
	f_eth(&f, MAC_A, 0x0800), f_ipv4(&f, 1, 10, 20, 0, 8), f_pad(&f, 8);
	EXPECT(&f, D, UMEM_STEER_A_PASS);
}

static void test_hash(void)
{
	enum { FLOWS = 2000, GROUP = 4 };
	uint32_t hits[GROUP] = {}, id, fwd, rev;
	uint64_t seed = 42;
	struct frame f;

	reset();
	id = add("any -> group 4-7");
	for (int i = 0; i < FLOWS; i++) {
		uint32_t a = test_rand(&seed), b = test_rand(&seed);
		uint16_t pa = test_rand(&seed), pb = test_rand(&seed);
		int v6 = i & 1;

		if (v6)
			udp6(&f, a, b, pa, pb);
		else
			udp4(&f, a, b, pa, pb, 0);
		EXPECT(&f, id, UMEM_STEER_A_GROUP);
		fwd = T.index;
		if (v6)
			udp6(&f, b, a, pb, pa);
		else
			udp4(&f, b, a, pb, pa, 0);
		run(&f);
		rev = T.index;
		CHECK(fwd == rev, "flow %d: %u one way, %u the other", i, fwd, rev);
		CHECK(fwd >= 4 && fwd <= 7, "index %u outside the group", fwd);
		/* Deterministic: the same frame again, the same socket. */
		run(&f);
		CHECK_EQ(T.index, rev);
		hits[fwd - 4]++;
	}
	for (int g = 0; g < GROUP; g++)
		CHECK(hits[g] > FLOWS / GROUP * 8 / 10, "socket %d got %u of %d flows", g + 4, hits[g], FLOWS);
	/* The same address pair with ports swapped only one way is another flow... */
	udp4(&f, 1, 2, 10, 20, 0);
	run(&f);
	fwd = T.hash;
	udp4(&f, 2, 1, 20, 10, 0);
	run(&f);
	CHECK_EQ(T.hash, fwd);
	/* ...and non-IP frames spread by MAC pair, symmetric too. */
	f_eth(&f, MAC_A, 0x0806), f_pad(&f, 28);
	run(&f);
	fwd = T.hash;
	f_eth(&f, MAC_B, 0x0806), f_pad(&f, 28);
	run(&f);
	CHECK_EQ(T.hash, fwd);
}

static void test_counters(void)
{
	struct umem_steer_counter c[UMEM_STEER_S_NR], r;
	struct frame f;
	uint32_t a, b;
	uint64_t bytes_a = 0;

	reset();
	a = add("udp dport 1 -> sock 0");
	b = add("udp dport 2 -> drop");
	for (int i = 0; i < 5; i++) {
		udp4(&f, 1, 2, 1, 1, i * 10);
		run(&f);
		bytes_a += f.len;
	}
	udp4(&f, 1, 2, 1, 2, 0);
	run(&f), run(&f);
	udp4(&f, 1, 2, 1, 3, 0);
	run(&f);
	CHECK(umem_steer__rule_counter(S, a, &r) == 0, "rule counter");
	CHECK_EQ(r.packets, 5);
	CHECK_EQ(r.bytes, bytes_a);
	CHECK(umem_steer__rule_counter(S, b, &r) == 0, "rule counter");
	CHECK_EQ(r.packets, 2);
	CHECK(umem_steer__rule_counter(S, UMEM_STEER_RULE_DEFAULT, &r) == 0, "default counter");
	CHECK_EQ(r.packets, 1);
	CHECK(umem_steer__action_counters(S, c) == 0, "action counters");
	CHECK_EQ(c[UMEM_STEER_S_SOCK].packets, 5);
	CHECK_EQ(c[UMEM_STEER_S_DROP].packets, 2);
	CHECK_EQ(c[UMEM_STEER_S_PASS].packets, 1);
	CHECK_EQ(c[UMEM_STEER_S_NO_SOCKET].packets, 0);
	/* A removed rule's id, reused, starts from zero. */
	CHECK(umem_steer__remove_rule(S, a, NULL) == 0, "remove");
	CHECK_EQ(add("udp dport 9 -> drop"), a);
	CHECK(umem_steer__rule_counter(S, a, &r) == 0, "rule counter");
	CHECK_EQ(r.packets, 0);
}

static void test_jumbo(void)
{
	struct umem_steer_counter r;
	struct frame f;
	uint32_t id;

	reset();
	id = add("udp dport 4789 -> sock 2");
	udp4(&f, 1, 2, 5, 4789, 8000);
	CHECK(f.len > 8000, "jumbo");
	EXPECT(&f, id, UMEM_STEER_A_SOCK); /* run_q makes the tail beyond 3500 bytes fragments */
	CHECK_EQ(T.verdict, XDP_REDIRECT);
	CHECK(umem_steer__rule_counter(S, id, &r) == 0, "counter");
	CHECK_EQ(r.bytes, f.len);
	/* A total length beyond even the whole multi-buffer frame is still caught. */
	f.b[16] = 0xff;
	EXPECT(&f, UMEM_STEER_RULE_DEFAULT, UMEM_STEER_A_PASS);
}

/* Every bad rule: a clear error and the table exactly as it was. */
static void test_bad_input(void)
{
	struct umem_steer_info before = { .sz = sizeof(before) }, after = { .sz = sizeof(after) };
	struct umem_steer_rule r;
	const char *bad_text[] = {
		"udp dprot 5 -> sock 1", "udp dport 70000 -> sock 1", "udp -> sock", "udp -> sock x",
		"udp", "udp ->", "udp -> fly", "udp -> group 3-1", "udp -> drop extra", "vlan 4096 -> drop",
		"dmac 02:00:00:00:00 -> drop", "tcp udp -> drop", "dport -1 -> drop", "prio x udp -> drop",
	};
	const char *bad_rules[] = { "udp -> sock 8", "udp -> group 6-9", "queue 4 -> drop" };

	reset();
	add("udp dport 1 -> sock 1");
	CHECK(umem_steer__info(S, &before) == 0, "info");
	for (size_t i = 0; i < sizeof(bad_text) / sizeof(bad_text[0]); i++) {
		memset(&r, 0x5a, sizeof(r));
		CHECK(umem_steer_rule__parse(bad_text[i], &r) == -EINVAL, "'%s' parsed", bad_text[i]);
		CHECK(r.id == 0x5a5a5a5a, "'%s' wrote the output", bad_text[i]);
	}
	for (size_t i = 0; i < sizeof(bad_rules) / sizeof(bad_rules[0]); i++) {
		CHECK(umem_steer_rule__parse(bad_rules[i], &r) == 0, "parse");
		CHECK(umem_steer__add_rule(S, &r) == -EINVAL, "'%s' accepted", bad_rules[i]);
	}
	r = (struct umem_steer_rule){ .match.fields = 1u << 20, .action.type = UMEM_STEER_A_DROP };
	CHECK(umem_steer__add_rule(S, &r) == -EINVAL, "unknown field accepted");
	r = (struct umem_steer_rule){ .action.type = 0 };
	CHECK(umem_steer__add_rule(S, &r) == -EINVAL, "no action accepted");
	r = (struct umem_steer_rule){ .action.type = 77 };
	CHECK(umem_steer__add_rule(S, &r) == -EINVAL, "unknown action accepted");
	CHECK(umem_steer__set_default(S, &(struct umem_steer_action){ .type = UMEM_STEER_A_SOCK, .index = 8 }) == -EINVAL,
	      "bad default accepted");
	CHECK(umem_steer__set_socket(S, 8, sockets[0]) == -EINVAL, "socket index 8 accepted");
	CHECK(umem_steer__set_socket(S, 0, 0) < 0, "stdin accepted as a socket");
	CHECK(umem_steer__remove_rule(S, 63, NULL) == -ENOENT, "removed a missing rule");
	CHECK(umem_steer__set_table_flags(S, 1u << 9) == -EINVAL, "bad flags accepted");
	CHECK(umem_steer__info(S, &after) == 0, "info");
	CHECK_EQ(after.generation, before.generation);
	CHECK_EQ(umem_steer__rules(S, NULL, 0), 1);

	/* Full table. */
	for (int i = 1; i < UMEM_STEER_MAX_RULES; i++)
		add("tcp -> drop");
	CHECK(umem_steer_rule__parse("udp -> drop", &r) == 0, "parse");
	CHECK(umem_steer__add_rule(S, &r) == -ENOSPC, "65th rule accepted");
	CHECK_EQ(umem_steer__rules(S, NULL, 0), UMEM_STEER_MAX_RULES);
}

#define IP4(a, b, c, d) ((uint32_t)(a) << 24 | (b) << 16 | (c) << 8 | (d))

/* f becomes an IPv4 UDP frame src -> dst (ports 1 -> 2), decided by rule id with that action. */
#define EXPECT4(f, src, dst, id, act) expect4_at(f, src, dst, id, act, __LINE__)
static void expect4_at(struct frame *f, uint32_t src, uint32_t dst, uint32_t id, uint32_t act, int line)
{
	udp4(f, src, dst, 1, 2, 0);
	expect_q(f, 0, id, act, line);
}

static int count_prefix(const struct umem_steer_rule *r, const struct umem_steer_counter *c, void *arg)
{
	(void)r, (void)c, (void)arg;
	return 0;
}

/* Prefix rules: longest prefix per direction, the walk to shorter prefixes, priority against
 * the table and between src and dst, IPv6, counters, removal, bad input, a full prefix. */
static void test_prefixes(void)
{
	struct umem_steer_info before = { .sz = sizeof(before) }, after = { .sz = sizeof(after) };
	const uint32_t D = UMEM_STEER_RULE_DEFAULT;
	struct umem_steer_counter c;
	struct umem_steer_rule r;
	uint32_t a, b, e, t;
	struct frame f;
	char buf[128];

	reset();
	a = add("src 10.0.0.0/8 -> drop");
	b = add("src 10.1.0.0/16 -> sock 1");
	CHECK(a >= UMEM_STEER_PREFIX_ID_BASE && b > a, "prefix ids %u %u", a, b);
	CHECK_EQ(umem_steer__rules(S, NULL, 0), 0); /* not in the table */
	CHECK_EQ(umem_steer__prefix_rules(S, count_prefix, NULL), 2);
	EXPECT4(&f, IP4(10, 1, 2, 3), IP4(10, 0, 0, 9), b, UMEM_STEER_A_SOCK); /* the longer prefix, though added later */
	CHECK_EQ(T.verdict, XDP_REDIRECT);
	EXPECT4(&f, IP4(10, 2, 0, 1), IP4(10, 0, 0, 9), a, UMEM_STEER_A_DROP);
	EXPECT4(&f, IP4(11, 0, 0, 1), IP4(10, 0, 0, 9), D, UMEM_STEER_A_PASS);
	/* A non-first fragment has no ports, but its addresses. */
	f_eth(&f, MAC_A, 0x0800);
	f_ipv4(&f, 17, IP4(10, 2, 0, 1), 2, 0x0010, 16);
	f_pad(&f, 16);
	EXPECT(&f, a, UMEM_STEER_A_DROP);
	/* Counters live with the rule; removal hands its frames to the shorter prefix. */
	udp4(&f, IP4(10, 1, 2, 3), 2, 1, 2, 0);
	CHECK(umem_steer__rule_counter(S, b, &c) == 0, "prefix counter");
	CHECK_EQ(c.packets, 1);
	run(&f);
	CHECK(umem_steer__rule_counter(S, b, &c) == 0, "prefix counter");
	CHECK_EQ(c.packets, 2);
	CHECK_EQ(c.bytes, 2 * f.len);
	CHECK(umem_steer__rule_counter(S, a, &c) == 0 && c.packets == 2, "src /8: %llu", (unsigned long long)c.packets);
	/* By the rule as listed: one lookup of its prefix, the same count. */
	CHECK(umem_steer_rule__parse("src 10.1.0.0/16 -> sock 1", &r) == 0, "parse");
	r.id = b;
	CHECK(umem_steer__rule_counter_of(S, &r, &c) == 0 && c.packets == 2 && c.bytes == 2 * f.len, "counter_of");
	r.id = a;
	CHECK(umem_steer__rule_counter_of(S, &r, &c) == -ENOENT, "counter_of: another rule's id at this prefix");
	CHECK(umem_steer__remove_rule(S, b, &r) == 0, "remove prefix rule");
	CHECK(umem_steer__rule_counter_of(S, &r, &c) == -ENOENT, "counter_of a removed rule");
	CHECK(umem_steer_rule__format(&r, buf, sizeof(buf)) > 0 && !strcmp(buf, "src 10.1.0.0/16 -> sock 1"), "%s", buf);
	CHECK(umem_steer__remove_rule(S, b, NULL) == -ENOENT, "removed twice");
	CHECK(umem_steer__rule_counter(S, b, &c) == -ENOENT, "counter of a removed rule");
	/* The same rule again: a new id, its count from zero (not the removed one's 2). */
	e = add("src 10.1.0.0/16 -> sock 1");
	CHECK(e > b && umem_steer__rule_counter(S, e, &c) == 0 && c.packets == 0 && c.bytes == 0,
	      "re-added rule %u counts %llu", e, (unsigned long long)c.packets);
	CHECK(umem_steer__remove_rule(S, e, NULL) == 0, "remove");
	EXPECT(&f, a, UMEM_STEER_A_DROP);
	CHECK(umem_steer__reset_counters(S) == 0, "reset");
	CHECK(umem_steer__rule_counter(S, a, &c) == 0 && c.packets == 0, "reset prefix counter");

	/* The longest prefix whose rules match the other fields: else the next shorter one. */
	b = add("src 10.1.0.0/16 udp dport 53 -> sock 1");
	udp4(&f, IP4(10, 1, 2, 3), 2, 1, 53, 0);
	EXPECT(&f, b, UMEM_STEER_A_SOCK);
	udp4(&f, IP4(10, 1, 2, 3), 2, 1, 54, 0);
	EXPECT(&f, a, UMEM_STEER_A_DROP);
	/* Rules of one prefix run by priority, then insertion order. */
	e = add("prio 0 src 10.1.0.0/16 udp -> sock 2");
	udp4(&f, IP4(10, 1, 2, 3), 2, 1, 53, 0);
	EXPECT(&f, b, UMEM_STEER_A_SOCK); /* equal priority: b came first */
	t = add("prio 0 src 10.1.0.0/16 -> sock 3");
	CHECK(umem_steer__remove_rule(S, b, NULL) == 0 && umem_steer__remove_rule(S, e, NULL) == 0, "remove");
	udp4(&f, IP4(10, 1, 2, 3), 2, 1, 53, 0);
	EXPECT(&f, t, UMEM_STEER_A_SOCK);
	e = add("prio 0 src 10.1.0.0/16 udp -> sock 2");
	b = add("prio 0 src 10.1.0.0/16 tcp -> sock 4");
	add("prio 9 src 10.1.0.0/16 icmp -> drop");
	CHECK(umem_steer_rule__parse("src 10.1.0.0/16 -> drop", &r) == 0, "parse");
	CHECK(umem_steer__info(S, &before) == 0, "info");
	CHECK(umem_steer__add_rule(S, &r) == -ENOSPC, "a 5th rule on one prefix accepted");
	CHECK(umem_steer__info(S, &after) == 0 && after.generation == before.generation, "changed on error");

	/* Against the table: priority first; at equal priority the prefix rule. */
	reset();
	t = add("udp -> sock 0");
	a = add("src 10.0.0.0/8 -> drop");
	EXPECT4(&f, IP4(10, 1, 2, 3), 2, a, UMEM_STEER_A_DROP);
	CHECK(umem_steer__remove_rule(S, a, NULL) == 0, "remove");
	a = add("prio 1 src 10.0.0.0/8 -> drop");
	EXPECT(&f, t, UMEM_STEER_A_SOCK);
	CHECK(umem_steer__rule_counter(S, t, &c) == 0 && c.packets == 1, "table rule counter");
	/* src against dst: the longer prefix; at equal length src. */
	reset();
	a = add("src 10.0.0.0/8 -> drop");
	b = add("dst 10.0.0.2 -> sock 4");
	EXPECT4(&f, IP4(10, 0, 0, 1), IP4(10, 0, 0, 2), b, UMEM_STEER_A_SOCK);
	EXPECT4(&f, IP4(10, 0, 0, 1), IP4(10, 0, 0, 3), a, UMEM_STEER_A_DROP);
	e = add("dst 10.0.0.0/8 -> sock 5");
	EXPECT(&f, a, UMEM_STEER_A_DROP);
	EXPECT4(&f, IP4(11, 0, 0, 1), IP4(10, 0, 0, 3), e, UMEM_STEER_A_SOCK);
	/* Both prefixes in one rule. */
	reset();
	a = add("src 10.0.0.0/8 dst 192.168.0.0/16 -> sock 5");
	EXPECT4(&f, IP4(10, 1, 1, 1), IP4(192, 168, 1, 1), a, UMEM_STEER_A_SOCK);
	EXPECT4(&f, IP4(10, 1, 1, 1), IP4(172, 16, 0, 1), D, UMEM_STEER_A_PASS);
	/* A host. */
	b = add("src 10.9.9.9 -> sock 7");
	EXPECT4(&f, IP4(10, 9, 9, 9), 2, b, UMEM_STEER_A_SOCK);
	EXPECT4(&f, IP4(10, 9, 9, 8), 2, D, UMEM_STEER_A_PASS);

	/* IPv6 (the builder's addresses are 2000::X); ::/0 holds no IPv4 address. */
	reset();
	a = add("src 2000::/16 -> sock 6");
	b = add("src 2000::1:0/112 udp -> drop");
	e = add("dst ::/0 -> sock 3");
	udp6(&f, 0x00010005, 9, 1, 2);
	EXPECT(&f, b, UMEM_STEER_A_DROP);
	udp6(&f, 0x00020005, 9, 1, 2);
	EXPECT(&f, a, UMEM_STEER_A_SOCK);
	EXPECT4(&f, IP4(10, 0, 0, 1), 2, D, UMEM_STEER_A_PASS);
	/* Not IP: no address, no prefix rule. */
	add("src 0.0.0.0/0 -> drop");
	f_eth(&f, MAC_A, 0x0806);
	f_pad(&f, 28);
	EXPECT(&f, D, UMEM_STEER_A_PASS);
	udp4(&f, IP4(10, 0, 0, 1), 2, 1, 2, 0);
	CHECK_EQ(run(&f), XDP_DROP);

	/* Behind VLAN tags (802.1ad + 802.1Q), IPv4 options and IPv6 extension headers: the
	 * addresses all the same. */
	reset();
	a = add("src 10.0.0.0/8 -> sock 1");
	b = add("dst 2000::9 -> sock 2");
	f_eth(&f, MAC_A, 0x88a8), f_vlan(&f, 5, 0x8100), f_vlan(&f, 6, 0x0800);
	f_ipv4(&f, 17, IP4(10, 1, 1, 1), 2, 0, 8);
	f_ports(&f, 1, 2, 8);
	EXPECT(&f, a, UMEM_STEER_A_SOCK);
	f_eth(&f, MAC_A, 0x0800);
	f_ipv4(&f, 17, IP4(10, 1, 1, 1), 2, 0, 12);
	f.b[14] = 0x46; /* IHL 6: one word of options (NOPs) before UDP */
	f.b[16] = 0, f.b[17] = 32;
	put(&f, (uint8_t[4]){ 1, 1, 1, 1 }, 4);
	f_ports(&f, 1, 2, 8);
	EXPECT(&f, a, UMEM_STEER_A_SOCK);
	f_eth(&f, MAC_A, 0x86dd);
	f_ipv6(&f, 0, 5, 9, 16); /* hop-by-hop, then UDP */
	put(&f, (uint8_t[8]){ 17, 0, 1, 4, 0, 0, 0, 0 }, 8);
	f_ports(&f, 1, 2, 8);
	EXPECT(&f, b, UMEM_STEER_A_SOCK);
	CHECK(T.present & UMEM_STEER_M_SPORT, "no ports behind the hop-by-hop header");
	/* A deep walk: /8 to /32 all hold a rule the frame misses but the /8's. */
	reset();
	a = add("src 10.0.0.0/8 -> drop");
	for (int len = 9; len <= 32; len++) {
		uint32_t net = IP4(10, 255, 255, 255) & (0xffffffffu << (32 - len));

		snprintf(buf, sizeof(buf), "src %u.%u.%u.%u/%d tcp -> sock 1", net >> 24, net >> 16 & 0xff,
			 net >> 8 & 0xff, net & 0xff, len);
		add(buf);
	}
	EXPECT4(&f, IP4(10, 255, 255, 255), 2, a, UMEM_STEER_A_DROP);
	CHECK_EQ(umem_steer__prefix_rules(S, NULL, NULL), 25);

	/* Bad prefixes built by hand: refused, nothing changed. */
	CHECK(umem_steer__info(S, &before) == 0, "info");
	r = (struct umem_steer_rule){ .match = { .fields = UMEM_STEER_M_SRC, .src = { .family = 4, .len = 16,
			.addr = { 10, 1, 2, 3 } } }, .action.type = UMEM_STEER_A_DROP };
	CHECK(umem_steer__add_rule(S, &r) == -EINVAL, "host bits accepted");
	r.match.src = (struct umem_steer_prefix){ .family = 4, .len = 33, .addr = { 10 } };
	CHECK(umem_steer__add_rule(S, &r) == -EINVAL, "/33 accepted");
	r.match.src = (struct umem_steer_prefix){ .family = 5, .len = 8, .addr = { 10 } };
	CHECK(umem_steer__add_rule(S, &r) == -EINVAL, "family 5 accepted");
	CHECK(umem_steer__info(S, &after) == 0 && after.generation == before.generation, "changed on error");
	CHECK_EQ(umem_steer__prefix_rules(S, NULL, NULL), 25);
	reset();
	CHECK_EQ(umem_steer__prefix_rules(S, NULL, NULL), 0);
	EXPECT4(&f, IP4(10, 255, 255, 255), 2, D, UMEM_STEER_A_PASS);
}

static char attach_msg[1024];

__attribute__((format(printf, 2, 0)))
static int record_msg(enum umem_print_level level, const char *fmt, va_list args)
{
	size_t used = strlen(attach_msg);

	(void)level;
	vsnprintf(attach_msg + used, sizeof(attach_msg) - used, fmt, args);
	return 0;
}

/* A foreign program: refused, left in place; replaced when asked. A missing interface, and
 * native mode where there is none: an error and nothing attached. */
/* The effective set with CAP_SYS_ADMIN (on) or without it (it stays permitted). */
static void sys_admin(bool on)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	CHECK(!syscall(SYS_capget, &h, d), "capget: %s", strerror(errno));
	if (on)
		d[CAP_SYS_ADMIN / 32].effective |= 1u << (CAP_SYS_ADMIN % 32);
	else
		d[CAP_SYS_ADMIN / 32].effective &= ~(1u << (CAP_SYS_ADMIN % 32));
	CHECK(!syscall(SYS_capset, &h, d), "capset: %s", strerror(errno));
}

/* umem_steer__open_fds: what a process without CAP_SYS_ADMIN opens from the descriptors that
 * the holder of program s hands over (a restart's successor), where open by id is refused. */
static void test_open_fds(struct umem_steer *s)
{
	struct umem_steer_flows *fl = umem_steer_flows__open(s), *fl2;
	int m[2 * UMEM_STEER_MAP_FDS_MAX], n, k, pipefd[2];
	struct umem_steer_rule r, got[4];
	struct umem_steer *o;

	CHECK(fl, "flows: %s", strerror(errno));
	n = umem_steer__map_fds(s, m, UMEM_STEER_MAP_FDS_MAX);
	CHECK(n >= 9, "map fds: %d", n);
	CHECK(umem_steer__map_fds(s, m, 2) == -ENOSPC, "map fds into 2");
	k = umem_steer_flows__map_fds(fl, m + n, UMEM_STEER_MAP_FDS_MAX);
	CHECK(k >= 5, "flow map fds: %d", k);

	UMEM_OPTS(umem_steer_fds, in, .prog_fd = umem_steer__prog_fd(s), .link_fd = umem_steer__link_fd(s),
		  .map_fds = m, .nr_map_fds = (uint32_t)(n + k));
	sys_admin(false);
	CHECK(!umem_steer__open("lo") && errno == EPERM, "opened by id without CAP_SYS_ADMIN: %d", errno);
	o = umem_steer__open_fds("lo", &in);
	CHECK(o, "open_fds: %s", strerror(errno));
	/* An edit through one handle shows through the other: one program, one table. */
	CHECK(!umem_steer_rule__parse("udp dport 4242 -> drop", &r) && !umem_steer__add_rule(o, &r), "add: %s",
	      strerror(errno));
	CHECK(umem_steer__rules(s, got, 4) == 1 && got[0].id == r.id, "the rule added through the fds' handle");
	CHECK(!umem_steer__remove_rule(o, r.id, NULL), "remove");
	/* The flow maps come from the descriptors too. */
	fl2 = umem_steer_flows__open(o);
	CHECK(fl2, "flows of the fds' handle: %s", strerror(errno));
	umem_steer_flows__close(fl2);
	/* Without the flow maps' descriptors, the flow table cannot be opened (not by id either). */
	in.nr_map_fds = (uint32_t)n;
	umem_steer__detach(o);
	o = umem_steer__open_fds("lo", &in);
	CHECK(o, "open_fds without the flow maps: %s", strerror(errno));
	CHECK(!umem_steer_flows__open(o) && errno == EPERM, "flows opened by id without CAP_SYS_ADMIN: %d", errno);
	umem_steer__detach(o);
	/* Without the steering table's: refused. */
	in.nr_map_fds = 0;
	CHECK(!umem_steer__open_fds("lo", &in) && errno == EPERM, "open_fds without maps: %d", errno);
	sys_admin(true);

	/* Bad input: nothing opened, errno says why. */
	in.nr_map_fds = (uint32_t)(n + k);
	CHECK(!umem_steer__open_fds("lo", NULL) && errno == EINVAL, "NULL fds: %d", errno);
	CHECK(!umem_steer__open_fds("st-nonexistent", &in) && errno == ENODEV, "no interface: %d", errno);
	in.prog_fd = m[0]; /* a map */
	CHECK(!umem_steer__open_fds("lo", &in), "a map as the program");
	CHECK(!pipe(pipefd), "pipe");
	in.prog_fd = pipefd[0];
	CHECK(!umem_steer__open_fds("lo", &in), "a pipe as the program");
	close(pipefd[0]);
	close(pipefd[1]);
	in.prog_fd = umem_steer__prog_fd(s);
	CHECK(!umem_steer__open_fds("stq1", &in) && errno == ENOENT, "another interface's program: %d", errno);
	in.sz = 4; /* short of its own field */
	CHECK(!umem_steer__open_fds("lo", &in) && errno == EINVAL, "a bad sz: %d", errno);
	umem_steer_flows__close(fl);
}

static void test_attach(void)
{
	const struct bpf_insn ret_pass[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = XDP_PASS }, /* r0 = XDP_PASS */
		{ .code = 0x95 },                               /* exit */
	};
	UMEM_OPTS(umem_steer_opts, o, .mode = UMEM_STEER_MODE_NATIVE);
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct umem_steer_info info = { .sz = sizeof(info) };
	struct umem_steer *s, *seen;
	int lo = if_nametoindex("lo"), peer = if_nametoindex("stq1"), foreign;

	errno = 0;
	CHECK(!umem_steer__attach("st-nonexistent", NULL) && errno == ENODEV, "missing interface: %d", errno);
	CHECK(!umem_steer__attach("lo", &o) && errno == EOPNOTSUPP, "native on lo: %d", errno);
	CHECK(bpf_xdp_query(lo, 0, &q) == 0 && q.prog_id == 0 && q.skb_prog_id == 0, "left on lo");

	/* Generic fallback, and the link goes with the handle. */
	o.mode = UMEM_STEER_MODE_AUTO;
	s = umem_steer__attach("lo", &o);
	CHECK(s, "auto on lo: %s", strerror(errno));
	CHECK(umem_steer__info(s, &info) == 0 && info.mode == UMEM_STEER_MODE_GENERIC, "mode");
	CHECK(bpf_xdp_query(lo, 0, &q) == 0 && q.skb_prog_id == info.prog_id, "not attached");
	seen = umem_steer__open("lo");
	CHECK(seen, "open: %s", strerror(errno));
	CHECK(umem_steer__info(seen, &info) == 0 && !info.owned && info.owner_pid == (uint32_t)getpid() && info.owner_alive,
	      "open info");
	/* A second steerer while the first lives: refused. */
	CHECK(!umem_steer__attach("lo", &o) && errno == EBUSY, "second attach: %d", errno);
	umem_steer__detach(seen);
	test_open_fds(s);
	umem_steer__detach(s);
	CHECK(bpf_xdp_query(lo, 0, &q) == 0 && q.skb_prog_id == 0, "still attached");

	/* Native on veth. */
	s = umem_steer__attach("stq1", &o);
	CHECK(s, "veth: %s", strerror(errno));
	CHECK(umem_steer__info(s, &info) == 0 && info.mode == UMEM_STEER_MODE_NATIVE, "mode");
	umem_steer__detach(s);

	LIBBPF_OPTS(bpf_prog_load_opts, po);
	foreign = bpf_prog_load(BPF_PROG_TYPE_XDP, "st_foreign", "GPL", ret_pass, 2, &po);
	CHECK(foreign >= 0, "load foreign: %s", strerror(errno));
	CHECK(bpf_xdp_attach(peer, foreign, XDP_FLAGS_DRV_MODE, NULL) == 0, "attach foreign");
	umem_print_fn_t prev = umem_set_print(record_msg);
	CHECK(!umem_steer__attach("stq1", &o) && errno == EBUSY, "foreign replaced: %d", errno);
	umem_set_print(prev);
	/* The refusal names the way to override it, and only one that exists (no CLI option). */
	CHECK(strstr(attach_msg, "UMEM_STEER_F_REPLACE") && !strstr(attach_msg, "--replace"),
	      "refusal message: %s", attach_msg);
	CHECK(bpf_xdp_query(peer, 0, &q) == 0 && q.drv_prog_id != 0, "foreign removed");
	CHECK(!umem_steer__open("stq1") && errno == ENOENT, "opened a foreign program");
	o.flags = UMEM_STEER_F_REPLACE;
	s = umem_steer__attach("stq1", &o);
	CHECK(s, "replace: %s", strerror(errno));
	umem_steer__detach(s);
	CHECK(bpf_xdp_query(peer, 0, &q) == 0 && q.prog_id == 0, "left on veth");
	close(foreign);
}

/* ---- flow table ---- */

static struct umem_steer_flow_key fkey(struct frame *f, uint32_t kind)
{
	struct umem_steer_flow_key k;

	CHECK(umem_steer_flow_key__parse(f->b, (uint32_t)f->len, (uint32_t)ifindex_q, kind, &k) == 0, "key");
	return k;
}

/* Sets the IPv4 header checksum of a frame whose IPv4 header follows an untagged Ethernet one. */
static void ip4_csum_set(struct frame *f)
{
	CHECK(umem_csum__ipv4(f->b + 14, (uint32_t)f->len - 14) == 0, "IPv4 checksum");
}

/* A routed flow's frame: verdict, and out of the program either rewritten (dmac and smac
 * given: those MACs, TTL or hop limit ttl, a valid IPv4 checksum, the rest as it came) or
 * unchanged (NULL; ttl: what the frame carries). */
static void route_run_q(struct frame *f, uint32_t queue, int verdict, const uint8_t *dmac, const uint8_t *smac,
			uint8_t ttl)
{
	struct xdp_md ctx = { .ingress_ifindex = ifindex_q, .rx_queue_index = queue, .data_end = (uint32_t)f->len };
	uint8_t out[4096];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->b, .data_size_in = f->len, .data_out = out,
		    .data_size_out = sizeof(out), .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = 1);
	size_t ip = f->b[12] == 0x81 ? 18 : 14;
	bool v4 = f->b[ip] >> 4 == 4;

	CHECK(bpf_prog_test_run_opts(umem_steer__prog_fd(S), &o) == 0, "test_run: %s", strerror(errno));
	CHECK(o.retval == (uint32_t)verdict && o.data_size_out == f->len, "routed frame: verdict %u, %u bytes",
	      o.retval, o.data_size_out);
	CHECK_EQ(out[ip + (v4 ? 8 : 7)], ttl);
	if (!dmac) {
		CHECK(!memcmp(out, f->b, f->len), "a frame the flow did not route was changed");
		return;
	}
	CHECK(!memcmp(out, dmac, 6) && !memcmp(out + 6, smac, 6), "routed frame's MACs");
	CHECK(!memcmp(out + 12, f->b + 12, ip + (v4 ? 8 : 7) - 12) &&
		      !memcmp(out + ip + (v4 ? 12 : 8), f->b + ip + (v4 ? 12 : 8), f->len - ip - (v4 ? 12 : 8)),
	      "a routed frame's other bytes changed");
	if (v4)
		CHECK(umem_csum__fold(umem_csum__add(0, out + ip, 20)) == 0xffff, "IPv4 checksum after the TTL: %02x%02x",
		      out[ip + 10], out[ip + 11]);
}

static void route_run(struct frame *f, int verdict, const uint8_t *dmac, const uint8_t *smac, uint8_t ttl)
{
	route_run_q(f, 0, verdict, dmac, smac, ttl);
}

/* The frame was decided by a flow with that action and verdict. */
static void expect_flow(struct frame *f, uint16_t action, int verdict, int line)
{
	run(f);
	if (T.rule != UMEM_STEER_RULE_FLOW || T.flow != action || (int)T.verdict != verdict) {
		fprintf(stderr, "line %d: rule %u flow %u verdict %u, expected a flow (%u, verdict %d)\n", line,
			T.rule, T.flow, T.verdict, action, verdict);
		exit(1);
	}
}

struct l2_sources {
	struct umem_steer_l2_source_key key;
	struct umem_steer_l2_source src;
};

static int record_source(const struct umem_steer_l2_source_key *key, const struct umem_steer_l2_source *src, void *arg)
{
	struct l2_sources *got = arg;

	got->key = *key;
	got->src = *src;
	return 0;
}

/* Rewrites a UDP/IPv4 frame (headers at 14 and 34, payload from 42) so that its checksum is
 * valid and equal to the folded pseudo-header sum, as a real checksum is once in 65,536 frames:
 * the field takes that sum, and the payload's first word makes the segment sum to it. */
static void valid_as_pseudo(struct frame *f)
{
	uint32_t l4_len = (uint32_t)f->len - 34;
	uint16_t pseudo = umem_csum__fold(umem_csum__pseudo4(f->b + 26, f->b + 30, 17, l4_len)), miss, w;

	f->b[40] = (uint8_t)(pseudo >> 8), f->b[41] = (uint8_t)pseudo;
	miss = (uint16_t)~umem_csum__fold(pseudo + umem_csum__add(0, f->b + 34, l4_len));
	w = umem_csum__fold((uint64_t)(f->b[42] << 8 | f->b[43]) + miss);
	f->b[42] = (uint8_t)(w >> 8), f->b[43] = (uint8_t)w;
	CHECK(umem_csum__fold(pseudo + umem_csum__add(0, f->b + 34, l4_len)) == 0xffff, "the crafted checksum");
}

/* The keys a walk gives, against those added (IPv4 ones come from their own map, by a short key,
 * and must come back whole); stop_after: the visit that stops the walk (0: none). */
struct flow_keys {
	const struct umem_steer_flow_key *want[3];
	int seen[3], visits, stop_after;
};

static int record_flow(const struct umem_steer_flow_key *key, const struct umem_steer_flow *flow, void *arg)
{
	struct flow_keys *fk = arg;

	(void)flow;
	for (int i = 0; i < 3; i++)
		if (!memcmp(key, fk->want[i], sizeof(*key)))
			fk->seen[i]++;
	return ++fk->visits == fk->stop_after;
}

static void test_flows(void)
{
	struct umem_steer_flows *F = umem_steer_flows__open(S);
	struct umem_steer_counter fs[UMEM_STEER_FS_NR];
	struct umem_steer_flow_key k, k6, kl2, bad;
	struct umem_steer_flow fl, redirect = { .action = UMEM_STEER_FLOW_A_REDIRECT };
	struct frame f, f6, fo, fl2, farp, fbig;
	uint32_t nr, limit, id;
	int n;

	CHECK(F, "flows open: %s", strerror(errno));
	reset();
	redirect.index = if_nametoindex("stq1");
	udp4(&f, 10, 20, 1000, 2000, 64);
	udp4(&fo, 10, 20, 1000, 2001, 64);
	udp6(&f6, 10, 20, 3000, 4000);
	k = fkey(&f, UMEM_STEER_FLOW_IPV4);
	CHECK_EQ(k.kind, UMEM_STEER_FLOW_IPV4);
	k6 = fkey(&f6, UMEM_STEER_FLOW_IPV4);
	CHECK_EQ(k6.kind, UMEM_STEER_FLOW_IPV6);

	/* Nothing installed: the default decides. */
	EXPECT(&f, UMEM_STEER_RULE_DEFAULT, UMEM_STEER_A_PASS);
	CHECK(umem_steer_flows__add(F, &k, &redirect) == 0, "add");
	CHECK(umem_steer_flows__add(F, &k, &redirect) == -EEXIST, "added twice");
	CHECK(umem_steer_flows__add(F, &k6, &redirect) == 0, "add v6");
	expect_flow(&f, UMEM_STEER_FLOW_A_REDIRECT, XDP_REDIRECT, __LINE__);
	CHECK_EQ(T.index, redirect.index);
	expect_flow(&f6, UMEM_STEER_FLOW_A_REDIRECT, XDP_REDIRECT, __LINE__);
	/* Behind a destination options header: the same key in userspace as in the program (the
	 * parser stopped at the header: the program gated such frames of an ordered flow, userspace
	 * never saw them as the flow's, and the gate was forced open after 1 s). */
	{
		static const uint8_t dstopts[8] = { 17, 0, 1, 4 }; /* UDP next; PadN of 4 */
		struct umem_steer_flow_key kx;
		struct frame fx;

		f_eth(&fx, MAC_A, 0x86dd), f_ipv6(&fx, 60, 10, 20, 8 + 8 + 10), put(&fx, dstopts, 8);
		f_ports(&fx, 3000, 4000, 8), f_pad(&fx, 10);
		kx = fkey(&fx, UMEM_STEER_FLOW_IPV4);
		CHECK(!memcmp(&kx, &k6, sizeof(kx)), "the key behind a destination options header differs");
		expect_flow(&fx, UMEM_STEER_FLOW_A_REDIRECT, XDP_REDIRECT, __LINE__);
		fx.b[14 + 6] = 44; /* a fragment header instead: no flow */
		CHECK(umem_steer_flow_key__parse(fx.b, (uint32_t)fx.len, (uint32_t)ifindex_q, UMEM_STEER_FLOW_IPV4, &kx) ==
			      -ENOENT, "a fragment keyed");
	}
	EXPECT(&fo, UMEM_STEER_RULE_DEFAULT, UMEM_STEER_A_PASS); /* another port: not the flow */
	CHECK(umem_steer_flows__lookup(F, &k, &fl) == 0, "lookup");
	CHECK_EQ(fl.packets, 1);
	CHECK_EQ(fl.bytes, f.len);
	CHECK(fl.last_ns > 0 && fl.last_ns <= umem_steer_flows__now_ns(), "last seen");
	CHECK_EQ(umem_steer_flows__l2_sources(F, record_source, &(struct l2_sources){ 0 }), 0); /* 5-tuples: none */

	/* Rules keep priority: a matching -> sock or -> pass rule wins over the flow. */
	id = add("udp dport 2000 -> sock 1");
	EXPECT(&f, id, UMEM_STEER_A_SOCK);
	reset();
	id = add("ipv4 udp -> pass");
	EXPECT(&f, id, UMEM_STEER_A_PASS);
	expect_flow(&f6, UMEM_STEER_FLOW_A_REDIRECT, XDP_REDIRECT, __LINE__);
	reset();
	CHECK(umem_steer_flows__lookup(F, &k, &fl) == 0 && fl.packets == 1, "a rule-decided frame counted on the flow");

	/* Jumbo frames (multi-buffer) take the flow like any other. */
	udp4(&fbig, 10, 20, 1000, 2000, 8000);
	expect_flow(&fbig, UMEM_STEER_FLOW_A_REDIRECT, XDP_REDIRECT, __LINE__);
	CHECK(umem_steer_flows__lookup(F, &k, &fl) == 0 && fl.bytes == f.len + fbig.len, "jumbo bytes");

	/* L2: by destination MAC, unicast, never ARP. */
	f_eth(&fl2, MAC_B, 0x88b5), f_pad(&fl2, 46);
	kl2 = fkey(&fl2, UMEM_STEER_FLOW_L2);
	CHECK(umem_steer_flows__add(F, &kl2, &(struct umem_steer_flow){ .action = UMEM_STEER_FLOW_A_DROP }) == 0,
	      "add l2");
	expect_flow(&fl2, UMEM_STEER_FLOW_A_DROP, XDP_DROP, __LINE__);
	/* Its source is recorded for userspace's learning, once per UMEM_STEER_L2_SOURCE_NS. */
	{
		struct l2_sources got = { 0 };
		uint64_t first;

		CHECK_EQ(umem_steer_flows__l2_sources(F, record_source, &got), 1);
		CHECK(!memcmp(got.key.mac, MAC_A, 6) && got.key.ifindex == (uint32_t)ifindex_q && got.key.vlan == 0 &&
			      got.src.queue == 0 && got.src.last_ns > 0 && got.src.last_ns <= umem_steer_flows__now_ns(),
		      "l2 source");
		first = got.src.last_ns;
		/* The same source on another queue within 100 ms: not rewritten (one source spread
		 * over queues would otherwise store on every frame). */
		CHECK_EQ(run_q(&fl2, 1), XDP_DROP);
		CHECK_EQ(umem_steer_flows__l2_sources(F, record_source, &got), 1);
		CHECK(got.src.queue == 0 || got.src.last_ns - first >= UMEM_STEER_L2_SOURCE_NS,
		      "l2 source rewritten after %llu ns (queue %u)", (unsigned long long)(got.src.last_ns - first),
		      got.src.queue);
		CHECK_EQ(umem_steer_flows__l2_sources(NULL, record_source, &got), -EINVAL);
	}
	f_eth(&farp, MAC_B, 0x0806), f_pad(&farp, 28);
	EXPECT(&farp, UMEM_STEER_RULE_DEFAULT, UMEM_STEER_A_PASS);
	CHECK(umem_steer_flow_key__parse(farp.b, (uint32_t)farp.len, (uint32_t)ifindex_q, UMEM_STEER_FLOW_L2, &bad) ==
		      -ENOENT, "ARP keyed");
	/* The 5-tuple is more specific than the MAC: f goes to MAC_A, fo's MAC made an L2 flow. */
	{
		struct frame fb;

		f_eth(&fb, MAC_B, 0x0800), f_ipv4(&fb, 17, 10, 20, 0, 8 + 64), f_ports(&fb, 1000, 2000, 8), f_pad(&fb, 64);
		expect_flow(&fb, UMEM_STEER_FLOW_A_REDIRECT, XDP_REDIRECT, __LINE__);
	}

	/* Other actions. */
	CHECK(umem_steer_flows__delete(F, &k) == 0, "delete");
	CHECK(umem_steer_flows__delete(F, &k) == -ENOENT, "deleted twice");
	EXPECT(&f, UMEM_STEER_RULE_DEFAULT, UMEM_STEER_A_PASS);
	CHECK(umem_steer_flows__add(F, &k, &(struct umem_steer_flow){ .action = UMEM_STEER_FLOW_A_SOCK, .index = 2 }) == 0,
	      "add sock");
	expect_flow(&f, UMEM_STEER_FLOW_A_SOCK, XDP_REDIRECT, __LINE__);
	CHECK_EQ(T.index, 2);
	CHECK(umem_steer_flows__delete(F, &k) == 0, "delete");
	CHECK(umem_steer_flows__add(F, &k, &(struct umem_steer_flow){ .action = UMEM_STEER_FLOW_A_PASS }) == 0, "add pass");
	expect_flow(&f, UMEM_STEER_FLOW_A_PASS, XDP_PASS, __LINE__);
	CHECK(umem_steer_flows__delete(F, &k) == 0, "delete");

	/* Ordered switch: the default path until userspace has sent all it was given. */
	redirect.flags = UMEM_STEER_FLOW_F_ORDERED;
	CHECK(umem_steer_flows__add(F, &k, &redirect) == 0, "add ordered");
	EXPECT(&f, UMEM_STEER_RULE_DEFAULT, UMEM_STEER_A_PASS);
	EXPECT(&f, UMEM_STEER_RULE_DEFAULT, UMEM_STEER_A_PASS);
	CHECK(umem_steer_flows__release(F, &k, 1) == 0, "release");
	EXPECT(&f, UMEM_STEER_RULE_DEFAULT, UMEM_STEER_A_PASS); /* 1 of 2 sent: still shut */
	CHECK(umem_steer_flows__release(F, &k, 3) == 0, "release");
	expect_flow(&f, UMEM_STEER_FLOW_A_REDIRECT, XDP_REDIRECT, __LINE__);
	CHECK(umem_steer_flows__lookup(F, &k, &fl) == 0, "lookup");
	CHECK(fl.open == 1 && fl.gated == 3 && fl.packets == 1, "gate: open %u gated %llu packets %llu", fl.open,
	      (unsigned long long)fl.gated, (unsigned long long)fl.packets);
	redirect.flags = 0;

	/* Program counters add up across deletes. */
	CHECK(umem_steer_flows__counters(F, fs) == 0, "counters");
	CHECK_EQ(fs[UMEM_STEER_FS_REDIRECT].packets, 7);
	CHECK_EQ(fs[UMEM_STEER_FS_DROP].packets, 2); /* the L2 flow's two frames */
	CHECK_EQ(fs[UMEM_STEER_FS_SOCK].packets, 1);
	CHECK_EQ(fs[UMEM_STEER_FS_PASS].packets, 1);
	CHECK_EQ(fs[UMEM_STEER_FS_GATED].packets, 3);
	CHECK(!strcmp(umem_steer_flow_stat__name(UMEM_STEER_FS_GATED), "gated") && !umem_steer_flow_stat__name(99), "names");

	/* With a tag, each gated frame is marked (XDP metadata) for the socket; one that goes to the
	 * stack (no socket here) leaves without the mark, and none counts as unmarked. A program
	 * loaded without marks (a kernel with no bpf_xdp_adjust_meta, or the fault) loads all the
	 * same and counts the frame unmarked, as a driver without metadata does. */
	{
		struct umem_steer_flow tagged = redirect;
		struct xdp_md ctx = { .ingress_ifindex = ifindex_q, .data_end = (uint32_t)f.len };
		uint8_t out[4096];
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f.b, .data_size_in = f.len, .data_out = out,
			    .data_size_out = sizeof(out), .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = 1);

		tagged.flags = 0, tagged.tag = 7;
		CHECK(umem_steer_flows__add(F, &k, &tagged) == -EINVAL, "a tag without the ordered flag");
		tagged.flags = UMEM_STEER_FLOW_F_ORDERED;
		CHECK(umem_steer_flows__delete(F, &k) == 0, "delete");
		CHECK(umem_steer_flows__add(F, &k, &tagged) == 0, "add tagged");
		CHECK(bpf_prog_test_run_opts(umem_steer__prog_fd(S), &o) == 0, "test_run: %s", strerror(errno));
		CHECK_EQ(o.retval, XDP_PASS);
		CHECK(o.data_size_out == f.len && !memcmp(out, f.b, f.len), "passed frame: %u bytes out of %u",
		      o.data_size_out, f.len);
		CHECK(umem_steer_flows__lookup(F, &k, &fl) == 0, "lookup");
		CHECK(fl.tag == 7 && fl.gated == 1 && fl.unmarked == !umem__steer_meta_ok() && !fl.open,
		      "tagged: tag %u gated %llu unmarked %llu (marks: %u)", fl.tag, (unsigned long long)fl.gated,
		      (unsigned long long)fl.unmarked, umem__steer_meta_ok());
		CHECK(umem_steer_flows__delete(F, &k) == 0, "delete");
		/* UMEM_STEER_FLOW_F_MARK_DATA: where there is no metadata the mark goes in front of
		 * the data, so no gated frame goes unmarked; off again for the stack. */
		tagged.flags = UMEM_STEER_FLOW_F_ORDERED | UMEM_STEER_FLOW_F_MARK_DATA, tagged.tag = 0;
		CHECK(umem_steer_flows__add(F, &k, &tagged) == -EINVAL, "data marks without a tag");
		tagged.tag = 8;
		CHECK(umem_steer_flows__add(F, &k, &tagged) == 0, "add tagged, data marks");
		o.data_size_out = sizeof(out);
		CHECK(bpf_prog_test_run_opts(umem_steer__prog_fd(S), &o) == 0, "test_run: %s", strerror(errno));
		CHECK_EQ(o.retval, XDP_PASS);
		CHECK(o.data_size_out == f.len && !memcmp(out, f.b, f.len), "passed frame (data marks): %u bytes out of %u",
		      o.data_size_out, f.len);
		CHECK(umem_steer_flows__lookup(F, &k, &fl) == 0, "lookup");
		CHECK(fl.gated == 1 && fl.unmarked == 0, "data marks: gated %llu unmarked %llu (metadata marks: %u)",
		      (unsigned long long)fl.gated, (unsigned long long)fl.unmarked, umem__steer_meta_ok());
		CHECK(umem_steer_flows__delete(F, &k) == 0, "delete");
		CHECK(umem_steer_flows__add(F, &k, &redirect) == 0, "add back");
		CHECK(umem_steer_flows__counters(F, fs) == 0, "counters");
		CHECK_EQ(fs[UMEM_STEER_FS_GATED].packets, 5);
	}

	/* A partial checksum (the field holds the folded pseudo-header sum: the sender's TX
	 * checksum offload) is not redirected, which would not complete it: the default way, and an
	 * ordered flow's gate shut behind it for good, whatever userspace releases. */
	{
		struct frame fp = f;
		struct umem_steer_counter before[UMEM_STEER_FS_NR];

		/* 0.0.0.10 + 0.0.0.20 + UDP + length 72 */
		fp.b[14 + 20 + 6] = 0, fp.b[14 + 20 + 7] = 10 + 20 + 17 + 72;
		CHECK(umem_steer_flows__counters(F, before) == 0, "counters");
		redirect.flags = UMEM_STEER_FLOW_F_ORDERED;
		CHECK(umem_steer_flows__delete(F, &k) == 0 && umem_steer_flows__add(F, &k, &redirect) == 0, "re-add");
		CHECK(umem_steer_flows__release(F, &k, 0) == 0, "release");
		expect_flow(&f, UMEM_STEER_FLOW_A_REDIRECT, XDP_REDIRECT, __LINE__);
		EXPECT(&fp, UMEM_STEER_RULE_DEFAULT, UMEM_STEER_A_PASS);
		EXPECT(&f, UMEM_STEER_RULE_DEFAULT, UMEM_STEER_A_PASS);
		CHECK(umem_steer_flows__release(F, &k, UINT64_MAX) == 0, "release");
		EXPECT(&f, UMEM_STEER_RULE_DEFAULT, UMEM_STEER_A_PASS);
		CHECK(umem_steer_flows__lookup(F, &k, &fl) == 0, "lookup");
		CHECK(fl.csum_partial == 1 && !fl.open && fl.packets == 1, "partial: csum_partial %llu open %u packets %llu",
		      (unsigned long long)fl.csum_partial, fl.open, (unsigned long long)fl.packets);
		CHECK(umem_steer_flows__counters(F, fs) == 0, "counters");
		CHECK_EQ(fs[UMEM_STEER_FS_CSUM_PARTIAL].packets - before[UMEM_STEER_FS_CSUM_PARTIAL].packets, 1);
		CHECK_EQ(fs[UMEM_STEER_FS_GATED].packets - before[UMEM_STEER_FS_GATED].packets, 2);
		redirect.flags = 0;
		CHECK(umem_steer_flows__delete(F, &k) == 0 && umem_steer_flows__add(F, &k, &redirect) == 0, "add back");
	}

	/* A real checksum equal to the pseudo-header sum is verified, not taken for partial: its flow
	 * keeps the frame, plain or multi-buffer (the segment read across the fragments). One
	 * payload bit off, the same field is partial again. Before the verification every such
	 * frame took its flow out of the kernel, several times a second at line rate. */
	{
		struct frame fv = f, fvb;
		struct umem_steer_flow was;

		valid_as_pseudo(&fv);
		CHECK(umem_steer_flows__lookup(F, &k, &was) == 0, "lookup");
		expect_flow(&fv, UMEM_STEER_FLOW_A_REDIRECT, XDP_REDIRECT, __LINE__);
		udp4(&fvb, 10, 20, 1000, 2000, 8000);
		valid_as_pseudo(&fvb);
		expect_flow(&fvb, UMEM_STEER_FLOW_A_REDIRECT, XDP_REDIRECT, __LINE__);
		CHECK(umem_steer_flows__lookup(F, &k, &fl) == 0, "lookup");
		CHECK(fl.csum_partial == was.csum_partial && fl.packets == was.packets + 2,
		      "valid: csum_partial %llu (was %llu), packets %llu (was %llu)", (unsigned long long)fl.csum_partial,
		      (unsigned long long)was.csum_partial, (unsigned long long)fl.packets, (unsigned long long)was.packets);
		fvb.b[fvb.len - 1] ^= 1;
		EXPECT(&fvb, UMEM_STEER_RULE_DEFAULT, UMEM_STEER_A_PASS);
		CHECK(umem_steer_flows__lookup(F, &k, &fl) == 0 && fl.csum_partial == was.csum_partial + 1,
		      "partial: csum_partial %llu", (unsigned long long)fl.csum_partial);
		CHECK(umem_steer_flows__delete(F, &k) == 0 && umem_steer_flows__add(F, &k, &redirect) == 0, "add back");
	}

	/* A router's flow (UMEM_STEER_FLOW_F_ROUTE): both MACs set, the TTL down with the IPv4
	 * checksum as a full recomputation gives it, the IPv6 hop limit down; a frame with TTL 1,
	 * over the MTU, tagged or addressed to another MAC than the router's (imac) takes the
	 * default way as it came (route_kept). */
	{
		static const uint8_t NH[6] = { 0x02, 0, 0, 0, 0, 0x11 }, ME[6] = { 0x02, 0, 0, 0, 0, 0x22 };
		struct umem_steer_flow rt = { .action = UMEM_STEER_FLOW_A_REDIRECT, .flags = UMEM_STEER_FLOW_F_ROUTE,
					      .index = redirect.index, .mtu = 1500 };
		struct umem_steer_counter before[UMEM_STEER_FS_NR];
		struct umem_steer_flow_key kr, kr6;
		struct umem_steer_flow rf;
		struct frame fr, fr6, fbig4, fv, fttl, fother;
		char line[320];

		memcpy(rt.dmac, NH, 6), memcpy(rt.smac, ME, 6), memcpy(rt.imac, MAC_A, 6);
		udp4(&fr, 10, 30, 5000, 6000, 64);
		fr.b[14 + 8] = 200; /* a TTL whose decrement carries in the checksum's sum */
		ip4_csum_set(&fr);
		udp6(&fr6, 10, 30, 5000, 6000);
		kr = fkey(&fr, UMEM_STEER_FLOW_IPV4), kr6 = fkey(&fr6, UMEM_STEER_FLOW_IPV4);
		CHECK(umem_steer_flows__counters(F, before) == 0, "counters");
		CHECK(umem_steer_flows__add(F, &kr, &rt) == 0 && umem_steer_flows__add(F, &kr6, &rt) == 0, "add routed");
		route_run(&fr, XDP_REDIRECT, NH, ME, 199);
		route_run(&fr6, XDP_REDIRECT, NH, ME, 63);
		fttl = fr, fttl.b[14 + 8] = 1, ip4_csum_set(&fttl);
		route_run(&fttl, XDP_PASS, NULL, NULL, 1);
		udp4(&fbig4, 10, 30, 5000, 6000, 1500 - 20 - 8 + 1), ip4_csum_set(&fbig4);
		route_run(&fbig4, XDP_PASS, NULL, NULL, 64);
		f_eth(&fv, MAC_A, 0x8100), f_vlan(&fv, 5, 0x0800), f_ipv4(&fv, 17, 10, 30, 0, 8 + 64);
		f_ports(&fv, 5000, 6000, 8), f_pad(&fv, 64);
		route_run(&fv, XDP_PASS, NULL, NULL, 64);
		fother = fr, memcpy(fother.b, MAC_B, 6); /* another host's frame of the same 5-tuple */
		route_run(&fother, XDP_PASS, NULL, NULL, 200);
		CHECK(umem_steer_flows__lookup(F, &kr, &rf) == 0, "lookup");
		CHECK(rf.packets == 1 && rf.route_kept == 4 && !memcmp(rf.dmac, NH, 6) && rf.mtu == 1500,
		      "routed: packets %llu route_kept %llu", (unsigned long long)rf.packets,
		      (unsigned long long)rf.route_kept);
		CHECK(umem_steer_flows__counters(F, fs) == 0, "counters");
		CHECK_EQ(fs[UMEM_STEER_FS_ROUTE_KEPT].packets - before[UMEM_STEER_FS_ROUTE_KEPT].packets, 4);
		CHECK_EQ(fs[UMEM_STEER_FS_REDIRECT].packets - before[UMEM_STEER_FS_REDIRECT].packets, 2);
		CHECK(umem_steer_flow__format(&kr, &rf, line, sizeof(line)) > 0 &&
			      strstr(line, "-> route stq1 dmac 02:00:00:00:00:11 smac 02:00:00:00:00:22 mtu 1500") &&
			      strstr(line, "route_kept 4"),
		      "format: %s", line);
		CHECK(!strcmp(umem_steer_flow_stat__name(UMEM_STEER_FS_ROUTE_KEPT), "route_kept"), "name");
		CHECK(umem_steer_flows__delete(F, &kr) == 0 && umem_steer_flows__delete(F, &kr6) == 0, "delete routed");
		/* Bad input: refused, nothing added. */
		CHECK(umem_steer_flows__add(F, &kl2, &rt) == -EINVAL, "routed l2 flow");
		rt.action = UMEM_STEER_FLOW_A_DROP;
		CHECK(umem_steer_flows__add(F, &kr, &rt) == -EINVAL, "routed drop");
		rt.action = UMEM_STEER_FLOW_A_REDIRECT, rt.dmac[0] = 1;
		CHECK(umem_steer_flows__add(F, &kr, &rt) == -EINVAL, "group next hop");
		memset(rt.dmac, 0, 6);
		CHECK(umem_steer_flows__add(F, &kr, &rt) == -EINVAL, "zero next hop");
		memcpy(rt.dmac, NH, 6), memset(rt.imac, 0, 6);
		CHECK(umem_steer_flows__add(F, &kr, &rt) == -EINVAL, "no ingress MAC");
		rt.imac[0] = 1;
		CHECK(umem_steer_flows__add(F, &kr, &rt) == -EINVAL, "group ingress MAC");
		memcpy(rt.imac, MAC_A, 6), rt.mtu = 67;
		CHECK(umem_steer_flows__add(F, &kr, &rt) == -EINVAL, "MTU 67");
		rt.mtu = 1279;
		CHECK(umem_steer_flows__add(F, &kr6, &rt) == -EINVAL, "IPv6 MTU 1279");
		CHECK(umem_steer_flows__lookup(F, &kr, &rf) == -ENOENT && umem_steer_flows__lookup(F, &kr6, &rf) == -ENOENT,
		      "a refused flow was added");
	}

	/* Iterate; expire (idle 1 h keeps all, idle 0 removes each once the coarse clock ticks). */
	n = umem_steer_flows__foreach(F, NULL, NULL);
	CHECK_EQ(n, 3);
	{
		struct flow_keys fk = { .want = { &k, &k6, &kl2 } }, stop = fk;

		CHECK_EQ(umem_steer_flows__foreach(F, record_flow, &fk), 3);
		CHECK(fk.seen[0] == 1 && fk.seen[1] == 1 && fk.seen[2] == 1, "walk: keys seen %d %d %d (IPv4, IPv6, L2)",
		      fk.seen[0], fk.seen[1], fk.seen[2]);
		/* A stop ends the walk over both maps. */
		for (stop.stop_after = 1; stop.stop_after <= 3; stop.stop_after++) {
			stop.visits = 0;
			CHECK_EQ(umem_steer_flows__foreach(F, record_flow, &stop), stop.stop_after);
		}
	}
	CHECK(umem_steer_flows__count(F, &nr, &limit) == 0 && nr == 3 && limit == UMEM_STEER_MAX_FLOWS, "count %u", nr);
	{
		char line[256];

		CHECK(umem_steer_flow__format(&k, &fl, line, sizeof(line)) > 0, "format");
		CHECK(strstr(line, "udp 0.0.0.10:1000 > 0.0.0.20:2000 -> redirect stq1"), "format: %s", line);
	}
	CHECK_EQ(umem_steer_flows__expire(F, 3600ull * 1000000000ull, NULL, NULL), 0);
	for (n = 0; n < 3;) {
		int r = umem_steer_flows__expire(F, 0, NULL, NULL);

		CHECK(r >= 0, "expire");
		n += r;
	}
	EXPECT(&f, UMEM_STEER_RULE_DEFAULT, UMEM_STEER_A_PASS);
	CHECK(umem_steer_flows__count(F, &nr, NULL) == 0 && nr == 0, "count after expiry %u", nr);

	/* Bad input: a clear error, nothing added. */
	bad = k, bad.kind = 9;
	CHECK(umem_steer_flows__add(F, &bad, &redirect) == -EINVAL, "kind 9");
	bad = k, bad.l4proto = 1;
	CHECK(umem_steer_flows__add(F, &bad, &redirect) == -EINVAL, "icmp 5-tuple");
	bad = k, bad.saddr[7] = 1;
	CHECK(umem_steer_flows__add(F, &bad, &redirect) == -EINVAL, "stray bytes");
	bad = k, bad.ifindex = 0;
	CHECK(umem_steer_flows__add(F, &bad, &redirect) == -EINVAL, "no ifindex");
	bad = kl2, bad.dmac[0] = 1;
	CHECK(umem_steer_flows__add(F, &bad, &redirect) == -EINVAL, "group l2");
	CHECK(umem_steer_flows__add(F, &k, &(struct umem_steer_flow){ .action = 9 }) == -EINVAL, "action 9");
	CHECK(umem_steer_flows__add(F, &k, &(struct umem_steer_flow){ .action = UMEM_STEER_FLOW_A_DROP, .flags = 8 }) ==
		      -EINVAL, "flags 8");
	CHECK(umem_steer_flows__add(F, &k, &(struct umem_steer_flow){ .action = UMEM_STEER_FLOW_A_REDIRECT, .index = 99999 }) ==
		      -ENODEV, "redirect nowhere");
	CHECK(umem_steer_flows__set_limit(F, UMEM_STEER_MAX_FLOWS + 1) == -EINVAL, "limit beyond the table");
	CHECK_EQ(umem_steer_flows__foreach(F, NULL, NULL), 0);

	/* Full: refused with -ENOSPC, the table as it was. */
	CHECK(umem_steer_flows__set_limit(F, 2) == 0, "limit");
	CHECK(umem_steer_flows__add(F, &k, &redirect) == 0, "1");
	CHECK(umem_steer_flows__add(F, &k6, &redirect) == 0, "2");
	CHECK(umem_steer_flows__add(F, &kl2, &redirect) == -ENOSPC, "3rd of 2");
	CHECK_EQ(umem_steer_flows__foreach(F, NULL, NULL), 2);
	CHECK(umem_steer_flows__clear(F) == 0, "clear");
	CHECK(umem_steer_flows__set_limit(F, 0) == 0, "limit");
	CHECK_EQ(umem_steer_flows__foreach(F, NULL, NULL), 0);
	CHECK_EQ(umem_steer_flows__l2_sources(F, record_source, &(struct l2_sources){ 0 }), 0);
	EXPECT(&f, UMEM_STEER_RULE_DEFAULT, UMEM_STEER_A_PASS);
	umem_steer_flows__close(F);
}

/* A map of the program, found by name among its maps (the API gives no trie fd). */
static int map_fd_by_name(const char *name)
{
	uint32_t ids[64], n;
	struct bpf_prog_info pi = { .nr_map_ids = 64, .map_ids = (uintptr_t)ids };

	n = sizeof(pi);
	CHECK(bpf_obj_get_info_by_fd(umem_steer__prog_fd(S), &pi, &n) == 0, "prog info: %s", strerror(errno));
	for (uint32_t i = 0; i < pi.nr_map_ids && i < 64; i++) {
		struct bpf_map_info mi = {};
		uint32_t ml = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &mi, &ml) && !strcmp(mi.name, name))
			return fd;
		if (fd >= 0)
			close(fd);
	}
	return -1;
}

/* A full trie (UMEM_STEER_MAX_PREFIXES): a rule on a new prefix is refused naming it, with the
 * rules as they were; one prefix freed, the same add works and decides its frames. */
/* An add of r (src 12.0.0.0/8) refused with ENOSPC, its message naming the prefix and why; the
 * table's info before and after it. */
static void refused_add(struct umem_steer_rule *r, const char *why, struct umem_steer_info *before,
			struct umem_steer_info *after)
{
	umem_print_fn_t prev;
	int err;

	CHECK(umem_steer__info(S, before) == 0, "info");
	attach_msg[0] = 0;
	prev = umem_set_print(record_msg);
	err = umem_steer__add_rule(S, r);
	umem_set_print(prev);
	CHECK_EQ(err, -ENOSPC);
	CHECK(strstr(attach_msg, "src 12.0.0.0/8") && strstr(attach_msg, why), "message: %s", attach_msg);
	CHECK(umem_steer__info(S, after) == 0, "info");
}

static void test_prefix_full(void)
{
	struct umem_steer_info before = { .sz = sizeof(before) }, after = { .sz = sizeof(after) };
	struct umem_steer_prefix_rules v = { .prefixlen = 64 };
	struct umem_steer_prefix_key k = { .prefixlen = 64, .family = { 4 } };
	struct umem_steer_rule r;
	struct frame f;
	uint32_t a, b, n = 0;
	int fd = map_fd_by_name(UMEM_STEER_MAP_PREFIX_SRC);

	CHECK(fd >= 0, "no %s map", UMEM_STEER_MAP_PREFIX_SRC);
	reset();
	a = add("src 10.0.0.0/8 -> drop");
	/* The rest: hosts of 11.0.0.0/8 holding no rule (the program walks past them). */
	for (;; n++) {
		k.addr[0] = 11, k.addr[1] = n >> 16, k.addr[2] = n >> 8, k.addr[3] = n;
		if (bpf_map_update_elem(fd, &k, &v, BPF_NOEXIST))
			break;
	}
	CHECK(errno == ENOSPC, "filling the trie: %s", strerror(errno));
	CHECK_EQ(n + 1, UMEM_STEER_MAX_PREFIXES);
	CHECK(umem_steer_rule__parse("src 12.0.0.0/8 -> sock 1", &r) == 0, "parse");
	refused_add(&r, "the trie holds its most prefixes", &before, &after);
	CHECK(after.generation > before.generation, "generation went back");
	CHECK_EQ(umem_steer__prefix_rules(S, NULL, NULL), 1);
	EXPECT4(&f, IP4(12, 1, 1, 1), 2, UMEM_STEER_RULE_DEFAULT, UMEM_STEER_A_PASS);
	EXPECT4(&f, IP4(10, 1, 1, 1), 2, a, UMEM_STEER_A_DROP);
	/* Room for one: the refused add left nothing in the way (id, count). */
	k.addr[1] = 0, k.addr[2] = 0, k.addr[3] = 0;
	CHECK(bpf_map_delete_elem(fd, &k) == 0, "delete: %s", strerror(errno));
	b = add("src 12.0.0.0/8 -> sock 1");
	CHECK(b > a, "ids %u %u", a, b);
	EXPECT4(&f, IP4(12, 1, 1, 1), 2, b, UMEM_STEER_A_SOCK);
	CHECK_EQ(umem_steer__prefix_rules(S, NULL, NULL), 2);
	reset();
	CHECK_EQ(umem_steer__prefix_rules(S, NULL, NULL), 0);
	CHECK(bpf_map_get_next_key(fd, NULL, &k) && errno == ENOENT, "clear left prefixes in the trie");
	close(fd);

	/* Full counters (UMEM_STEER_MAX_PREFIX_RULES, filled behind the API's back): refused,
	 * naming the limit, with nothing changed; a clear empties them. */
	fd = map_fd_by_name(UMEM_STEER_MAP_PREFIX_STATS);
	CHECK(fd >= 0, "no %s map", UMEM_STEER_MAP_PREFIX_STATS);
	a = add("src 10.0.0.0/8 -> drop");
	for (n = 0;; n++) {
		struct umem_steer_counter zero = {};
		uint32_t id = 0x80000000u + n;

		if (bpf_map_update_elem(fd, &id, &zero, BPF_NOEXIST))
			break;
	}
	CHECK(errno == E2BIG, "filling the counters: %s", strerror(errno));
	CHECK_EQ(n + 1, UMEM_STEER_MAX_PREFIX_RULES);
	refused_add(&r, "UMEM_STEER_MAX_PREFIX_RULES", &before, &after);
	CHECK(after.generation == before.generation, "table changed");
	CHECK_EQ(umem_steer__prefix_rules(S, NULL, NULL), 1);
	EXPECT4(&f, IP4(12, 1, 1, 1), 2, UMEM_STEER_RULE_DEFAULT, UMEM_STEER_A_PASS);
	EXPECT4(&f, IP4(10, 1, 1, 1), 2, a, UMEM_STEER_A_DROP);
	reset();
	CHECK(bpf_map_get_next_key(fd, NULL, &n) && errno == ENOENT, "clear left counters");
	close(fd);
}

/* The active table as the program reads it, its bank in *bank. */
static void table_get(struct umem_steer_table *t, uint32_t *bank)
{
	int tfd = map_fd_by_name(UMEM_STEER_MAP_TABLES), afd = map_fd_by_name(UMEM_STEER_MAP_ACTIVE);
	uint32_t zero = 0;

	CHECK(tfd >= 0 && afd >= 0, "no table maps");
	CHECK(bpf_map_lookup_elem(afd, &zero, bank) == 0 && bpf_map_lookup_elem(tfd, bank, t) == 0, "read table: %s",
	      strerror(errno));
	close(tfd);
	close(afd);
}

static void table_put(const struct umem_steer_table *t, uint32_t bank)
{
	int tfd = map_fd_by_name(UMEM_STEER_MAP_TABLES);

	CHECK(tfd >= 0 && bpf_map_update_elem(tfd, &bank, t, BPF_EXIST) == 0, "write table: %s", strerror(errno));
	close(tfd);
}

/* An older library's edit of the table: the generation bumped, flows_first left as it was
 * (less the marks in clear, as if that library had added their rule). */
static void older_edit(uint16_t clear)
{
	struct umem_steer_table t;
	uint32_t bank;

	table_get(&t, &bank);
	t.flows_first &= (uint16_t)~clear;
	t.generation++;
	table_put(&t, bank);
}

/* A prefix rule "queue 1 -> drop" for fr is in: no flow decides first, and queue 1's frame drops
 * while queue 0's is routed. */
static void queue_rule_holds(struct frame *fr, const uint8_t *nh, const uint8_t *me)
{
	struct umem_steer_table t;
	uint32_t bank;

	table_get(&t, &bank);
	CHECK_EQ(t.flows_first, UMEM_STEER_FIRST_PREFIX_QUEUE);
	route_run_q(fr, 0, XDP_REDIRECT, nh, me, 199);
	route_run_q(fr, 1, XDP_DROP, NULL, NULL, 200);
}

/* A flow whose frame found no rule (rules_gen): its next frames skip the parse and the rules
 * (flow_fast), untraced. They must be decided as the whole way decides them: the same rewrite
 * and counts, the same exceptions left to it, and a rule added later wins at once, whatever its
 * kind: table, prefix, on the RX queue (which the key does not fix), or on the destination MAC
 * for a flow that is not a router's. */
static void test_flow_fast(void)
{
	static const uint8_t NH[6] = { 0x02, 0, 0, 0, 0, 0x11 }, ME[6] = { 0x02, 0, 0, 0, 0, 0x22 };
	struct umem_steer_flows *F = umem_steer_flows__open(S);
	struct umem_steer_flow rt = { .action = UMEM_STEER_FLOW_A_REDIRECT, .flags = UMEM_STEER_FLOW_F_ROUTE,
				      .index = if_nametoindex("stq1"), .mtu = 1500 };
	struct umem_steer_flow plain = { .action = UMEM_STEER_FLOW_A_REDIRECT, .index = rt.index }, got;
	struct umem_steer_counter before[UMEM_STEER_FS_NR], after[UMEM_STEER_FS_NR];
	struct umem_steer_table t;
	struct umem_steer_flow_key k, kp;
	struct frame fr, fttl, fbig, fother, fp, fp_b;
	uint32_t bank, id;

	CHECK(F, "flows open: %s", strerror(errno));
	reset();
	CHECK(umem_steer__set_table_flags(S, 0) == 0, "untraced");
	add("dst 0.0.0.99 -> pass"); /* a router's own address: a prefix rule, listed */
	memcpy(rt.dmac, NH, 6), memcpy(rt.smac, ME, 6), memcpy(rt.imac, MAC_A, 6);
	udp4(&fr, 10, 30, 5000, 6000, 64), fr.b[14 + 8] = 200, ip4_csum_set(&fr);
	k = fkey(&fr, UMEM_STEER_FLOW_IPV4);
	CHECK(umem_steer_flows__counters(F, before) == 0 && umem_steer_flows__add(F, &k, &rt) == 0, "add routed");
	CHECK(umem_steer_flows__lookup(F, &k, &got) == 0 && got.rules_gen == 0, "a new flow's rules_gen %u", got.rules_gen);
	route_run(&fr, XDP_REDIRECT, NH, ME, 199);
	table_get(&t, &bank);
	CHECK(umem_steer_flows__lookup(F, &k, &got) == 0 && got.rules_gen == (uint16_t)t.generation && got.rules_gen,
	      "no rule took the frame: rules_gen %u, the table's generation %llu", got.rules_gen,
	      (unsigned long long)t.generation);
	CHECK_EQ(t.flows_first, UMEM_STEER_FIRST_ROUTED | UMEM_STEER_FIRST_ALL);
	CHECK_EQ(t.flows_first_gen, (uint16_t)t.generation);
	for (int i = 0; i < 3; i++)
		route_run(&fr, XDP_REDIRECT, NH, ME, 199);
	/* The exceptions, each left to the whole way: TTL 1, over the MTU, another host's MAC. */
	fttl = fr, fttl.b[14 + 8] = 1, ip4_csum_set(&fttl);
	route_run(&fttl, XDP_PASS, NULL, NULL, 1);
	udp4(&fbig, 10, 30, 5000, 6000, 1500 - 20 - 8 + 1), ip4_csum_set(&fbig);
	route_run(&fbig, XDP_PASS, NULL, NULL, 64);
	fother = fr, memcpy(fother.b, MAC_B, 6);
	route_run(&fother, XDP_PASS, NULL, NULL, 200);
	CHECK(umem_steer_flows__lookup(F, &k, &got) == 0 && got.packets == 4 && got.route_kept == 3 &&
		      got.bytes == 4 * fr.len,
	      "routed: packets %llu bytes %llu route_kept %llu", (unsigned long long)got.packets,
	      (unsigned long long)got.bytes, (unsigned long long)got.route_kept);
	CHECK(umem_steer_flows__counters(F, after) == 0, "counters");
	CHECK_EQ(after[UMEM_STEER_FS_REDIRECT].packets - before[UMEM_STEER_FS_REDIRECT].packets, 4);
	CHECK_EQ(after[UMEM_STEER_FS_REDIRECT].bytes - before[UMEM_STEER_FS_REDIRECT].bytes, 4 * fr.len);
	CHECK_EQ(after[UMEM_STEER_FS_ROUTE_KEPT].packets - before[UMEM_STEER_FS_ROUTE_KEPT].packets, 3);

	/* A partial checksum after the record: the whole way's verification decides, as before
	 * (a real checksum that equals the pseudo-header sum is routed). */
	{
		struct frame fpart = fr, fvalid = fr;
		uint16_t ps = umem_csum__fold(umem_csum__pseudo4(fr.b + 26, fr.b + 30, 17, (uint32_t)fr.len - 34));

		fpart.b[40] = (uint8_t)(ps >> 8), fpart.b[41] = (uint8_t)ps;
		route_run(&fpart, XDP_PASS, NULL, NULL, 200);
		valid_as_pseudo(&fvalid);
		route_run(&fvalid, XDP_REDIRECT, NH, ME, 199);
		CHECK(umem_steer_flows__lookup(F, &k, &got) == 0 && got.csum_partial == 1 && got.packets == 5,
		      "partial: csum_partial %llu packets %llu", (unsigned long long)got.csum_partial,
		      (unsigned long long)got.packets);
	}

	/* A rule added later wins from the next frame on; once it is gone the flow forwards again. */
	id = add("udp dport 6000 -> drop");
	route_run(&fr, XDP_DROP, NULL, NULL, 200);
	/* White box: the flow's record is what lets it decide first. Set by hand to the table's
	 * generation, as if the frame had found no rule, the flow decides over the rule. */
	{
		int fd = map_fd_by_name(UMEM_STEER_MAP_FLOWS4);
		struct umem_steer_flow_key4 k4;
		struct umem_steer_flow v;

		memset(&k4, 0, sizeof(k4));
		k4.ifindex = k.ifindex, k4.l4proto = k.l4proto, k4.sport = k.sport, k4.dport = k.dport;
		memcpy(k4.saddr, k.saddr, 4), memcpy(k4.daddr, k.daddr, 4);
		table_get(&t, &bank);
		CHECK(fd >= 0 && bpf_map_lookup_elem(fd, &k4, &v) == 0, "the flow in steer_flows4");
		CHECK(v.rules_gen != (uint16_t)t.generation, "recorded under a rule");
		v.rules_gen = (uint16_t)t.generation;
		CHECK(bpf_map_update_elem(fd, &k4, &v, BPF_EXIST) == 0, "set rules_gen");
		route_run(&fr, XDP_REDIRECT, NH, ME, 199);
		close(fd);
	}
	CHECK(umem_steer__remove_rule(S, id, NULL) == 0, "remove");
	id = add("udp dport 6000 -> drop");
	route_run(&fr, XDP_DROP, NULL, NULL, 200);
	CHECK(umem_steer__remove_rule(S, id, NULL) == 0, "remove");
	route_run(&fr, XDP_REDIRECT, NH, ME, 199);
	route_run(&fr, XDP_REDIRECT, NH, ME, 199);
	id = add("dst 0.0.0.30/32 -> pass"); /* the address became the router's */
	route_run(&fr, XDP_PASS, NULL, NULL, 200);
	CHECK(umem_steer__remove_rule(S, id, NULL) == 0, "remove");
	route_run(&fr, XDP_REDIRECT, NH, ME, 199);
	/* On the RX queue: the frame on queue 0 does not say what queue 1's get. */
	id = add("queue 1 -> drop");
	table_get(&t, &bank);
	CHECK_EQ(t.flows_first, 0);
	route_run_q(&fr, 0, XDP_REDIRECT, NH, ME, 199);
	route_run_q(&fr, 1, XDP_DROP, NULL, NULL, 200);
	CHECK(umem_steer__remove_rule(S, id, NULL) == 0, "remove");
	id = add("src 0.0.0.1/32 queue 1 -> drop"); /* a prefix rule's mark stays until the tries are empty */
	CHECK(umem_steer__remove_rule(S, id, NULL) == 0, "remove");
	table_get(&t, &bank);
	CHECK_EQ(t.flows_first, UMEM_STEER_FIRST_PREFIX_QUEUE);
	reset();
	table_get(&t, &bank);
	CHECK_EQ(t.flows_first, UMEM_STEER_FIRST_ROUTED | UMEM_STEER_FIRST_ALL);

	/* On the destination MAC: a router's flow forwards only frames to its imac, so such a rule
	 * decides all of them alike; a plain flow's frames may carry any. */
	id = add("dmac 02:00:00:00:00:0b -> drop");
	route_run(&fr, XDP_REDIRECT, NH, ME, 199);
	route_run(&fr, XDP_REDIRECT, NH, ME, 199);
	udp4(&fp, 10, 40, 5000, 6000, 64), ip4_csum_set(&fp);
	fp_b = fp, memcpy(fp_b.b, MAC_B, 6);
	kp = fkey(&fp, UMEM_STEER_FLOW_IPV4);
	CHECK(umem_steer_flows__add(F, &kp, &plain) == 0, "add plain");
	route_run(&fp, XDP_REDIRECT, NULL, NULL, 64);
	route_run(&fp, XDP_REDIRECT, NULL, NULL, 64);
	route_run(&fp_b, XDP_DROP, NULL, NULL, 64);
	CHECK(umem_steer__remove_rule(S, id, NULL) == 0, "remove");
	route_run(&fp_b, XDP_REDIRECT, NULL, NULL, 64);

	/* A writer that does not know flows_first (an older library) adds a rule on the queue:
	 * the generation moves on without it, so no flow decides first, and the next edit by
	 * this library reads the tries again for the prefix rules' marks. */
	route_run_q(&fr, 0, XDP_REDIRECT, NH, ME, 199);
	{
		struct umem_steer_rule q;

		CHECK(umem_steer_rule__parse("queue 1 -> drop", &q) == 0, "parse");
		table_get(&t, &bank);
		q.id = 40, t.rules[t.nr_rules++] = q, t.generation++;
		table_put(&t, bank);
	}
	route_run_q(&fr, 0, XDP_REDIRECT, NH, ME, 199);
	route_run_q(&fr, 1, XDP_DROP, NULL, NULL, 200);
	CHECK(umem_steer__remove_rule(S, 40, NULL) == 0, "remove");
	add("src 0.0.0.10/32 queue 1 -> drop");
	older_edit(UMEM_STEER_FIRST_PREFIX_QUEUE); /* as if the older one had added it */
	add("udp dport 1 -> drop");
	queue_rule_holds(&fr, NH, ME);
	/* This library's first edit after the older one's adds such a rule itself. */
	reset();
	add("dst 0.0.0.99 -> pass");
	older_edit(0);
	add("src 0.0.0.10/32 queue 1 -> drop");
	queue_rule_holds(&fr, NH, ME);

	CHECK(umem_steer_flows__clear(F) == 0, "clear");
	reset();
	CHECK(umem_steer__set_table_flags(S, UMEM_STEER_F_TRACE) == 0, "traced");
	umem_steer_flows__close(F);
}

/* A trie of few rules has its prefixes listed in the table (struct umem_steer_listed), longest
 * first, and a frame in none of them skips the trie: the decisions are the walk's all the same,
 * through the list's edits, its overflow into a plain walk and back, and a listed prefix the
 * trie lacks (a writer's edit under way). */
static void test_listed(void)
{
	static struct umem_steer_table t;
	const uint32_t D = UMEM_STEER_RULE_DEFAULT;
	const struct umem_steer_listed *l = &t.listed[UMEM_STEER_DIR_DST];
	uint32_t bank, own, mc, dns, tcp, six, extra[16];
	char buf[64];
	struct frame f;

	reset();
	own = add("dst 10.0.1.1 -> pass");
	mc = add("dst 224.0.0.0/4 -> drop");
	dns = add("dst 10.0.0.0/8 udp dport 53 -> sock 1");
	six = add("dst ff00::/8 -> sock 2");
	table_get(&t, &bank);
	CHECK_EQ(t.listed[UMEM_STEER_DIR_SRC].nr, 0);
	CHECK_EQ(l->nr, 4);
	/* By family, each longest first, with its masks. */
	CHECK_EQ(l->nr4, 3);
	CHECK(l->len4[0] == 32 && l->v4[0].addr == htonl(IP4(10, 0, 1, 1)) && l->v4[0].mask == UINT32_MAX,
	      "listed /32");
	CHECK(l->len4[1] == 8 && l->v4[1].addr == htonl(IP4(10, 0, 0, 0)) && l->v4[1].mask == htonl(0xff000000u),
	      "listed 10.0.0.0/8");
	CHECK(l->len4[2] == 4 && l->v4[2].addr == htonl(IP4(224, 0, 0, 0)) && l->v4[2].mask == htonl(0xf0000000u),
	      "listed /4");
	CHECK(l->len6[0] == 8 && l->v6[0].addr[0] == htonl(0xff000000u) && l->v6[0].mask[0] == htonl(0xff000000u) &&
	      !l->v6[0].mask[1] && !l->v6[0].addr[3], "listed ff00::/8");
	EXPECT4(&f, 1, IP4(10, 0, 1, 1), own, UMEM_STEER_A_PASS);
	EXPECT4(&f, 1, IP4(10, 9, 9, 9), D, UMEM_STEER_A_PASS); /* in the /8, not port 53 */
	EXPECT4(&f, 1, IP4(11, 0, 0, 1), D, UMEM_STEER_A_PASS); /* in none */
	EXPECT4(&f, 1, IP4(239, 1, 2, 3), mc, UMEM_STEER_A_DROP);
	udp4(&f, 1, IP4(10, 9, 9, 9), 1, 53, 0);
	EXPECT(&f, dns, UMEM_STEER_A_SOCK);
	/* The longest listed prefix holding it misses the frame's port: on to the /8. */
	tcp = add("dst 10.0.1.0/24 tcp -> drop");
	udp4(&f, 1, IP4(10, 0, 1, 9), 1, 53, 0);
	EXPECT(&f, dns, UMEM_STEER_A_SOCK);
	udp6(&f, 1, 2, 1, 2); /* to 2000::2: in no listed IPv6 prefix */
	EXPECT(&f, D, UMEM_STEER_A_PASS);
	f.b[14 + 24] = 0xff; /* to ff00::2 */
	EXPECT(&f, six, UMEM_STEER_A_SOCK);
	/* A listed prefix the trie lacks (an add published, its trie write not yet done): looked
	 * up, not found, and the walk goes on from the next shorter prefix in the trie. */
	table_get(&t, &bank);
	CHECK_EQ(l->nr, 5);
	CHECK_EQ(l->nr4, 4);
	memmove(&t.listed[UMEM_STEER_DIR_DST].v4[1], &l->v4[0], 4 * sizeof(l->v4[0]));
	memmove(&t.listed[UMEM_STEER_DIR_DST].len4[1], &l->len4[0], 4);
	t.listed[UMEM_STEER_DIR_DST].v4[0] = (struct umem_steer_listed_v4){ .addr = htonl(IP4(10, 0, 1, 9)),
									     .mask = UINT32_MAX };
	t.listed[UMEM_STEER_DIR_DST].len4[0] = 32;
	t.listed[UMEM_STEER_DIR_DST].nr4 = 5;
	t.listed[UMEM_STEER_DIR_DST].nr = 6;
	table_put(&t, bank);
	udp4(&f, 1, IP4(10, 0, 1, 9), 1, 53, 0);
	EXPECT(&f, dns, UMEM_STEER_A_SOCK);
	CHECK(umem_steer__remove_rule(S, tcp, NULL) == 0, "remove");
	table_get(&t, &bank);
	CHECK_EQ(l->nr, 4); /* rebuilt from the trie: the stray entry gone too */
	/* More rules than the list holds: the program walks the trie, deciding alike. */
	for (uint32_t i = 0; i < 16; i++) {
		snprintf(buf, sizeof(buf), "dst 10.0.2.%u -> sock 3", i);
		extra[i] = add(buf);
		table_get(&t, &bank);
		CHECK_EQ(l->nr, i + 5 <= UMEM_STEER_MAX_LISTED ? i + 5 : UMEM_STEER_LISTED_NONE);
	}
	EXPECT4(&f, 1, IP4(10, 0, 2, 15), extra[15], UMEM_STEER_A_SOCK);
	EXPECT4(&f, 1, IP4(10, 0, 1, 1), own, UMEM_STEER_A_PASS);
	EXPECT4(&f, 1, IP4(11, 0, 0, 1), D, UMEM_STEER_A_PASS);
	udp4(&f, 1, IP4(10, 0, 2, 99), 1, 53, 0);
	EXPECT(&f, dns, UMEM_STEER_A_SOCK);
	/* Back within the list's room: listed again, from the trie. */
	for (uint32_t i = 0; i < 5; i++)
		CHECK(umem_steer__remove_rule(S, extra[i], NULL) == 0, "remove");
	table_get(&t, &bank);
	CHECK_EQ(l->nr, 15);
	EXPECT4(&f, 1, IP4(10, 0, 2, 15), extra[15], UMEM_STEER_A_SOCK);
	EXPECT4(&f, 1, IP4(10, 0, 2, 4), D, UMEM_STEER_A_PASS); /* its rule removed */
	EXPECT4(&f, 1, IP4(239, 1, 2, 3), mc, UMEM_STEER_A_DROP);
	reset();
	table_get(&t, &bank);
	CHECK(!t.nr_prefix_rules[UMEM_STEER_DIR_DST] && !l->nr, "clear left %u listed", l->nr);
}

/* Edits of a prefix while its rule counts: another rule added to and removed from the same
 * prefix (before it, so its slot moves) on another CPU, frame after frame. No hit may be lost:
 * the counter equals the frames run. */
static atomic_uint edit_pairs;
static atomic_int edit_stop, edit_err;

static void *edit_loop(void *arg)
{
	struct umem_steer_rule r;
	cpu_set_t cpus;

	(void)arg;
	CPU_ZERO(&cpus);
	CPU_SET(1, &cpus);
	pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus); /* one CPU only: shares it */
	while (!atomic_load(&edit_stop)) {
		int err;

		if ((err = umem_steer_rule__parse("prio 0 src 10.1.0.0/16 udp dport 9 -> sock 2", &r)) ||
		    (err = umem_steer__add_rule(S, &r)) || (err = umem_steer__remove_rule(S, r.id, NULL))) {
			atomic_store(&edit_err, err);
			break;
		}
		atomic_fetch_add(&edit_pairs, 1);
	}
	return NULL;
}

static void test_prefix_edits(void)
{
	const unsigned int frames = 16000, pairs_per_frame_div = 16;
	struct umem_steer_counter c;
	struct frame f;
	pthread_t th;
	uint32_t a, k = 0;
	int fd;

	reset();
	a = add("src 10.1.0.0/16 -> drop");
	udp4(&f, IP4(10, 1, 2, 3), IP4(10, 0, 0, 9), 1, 2, 0);
	CHECK(pthread_create(&th, NULL, edit_loop, NULL) == 0, "thread");
	for (unsigned int i = 0; i < frames; i++) {
		struct xdp_md ctx = { .data_end = f.len, .ingress_ifindex = ifindex_q };
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f.b, .data_size_in = f.len, .ctx_in = &ctx,
			    .ctx_size_in = sizeof(ctx), .repeat = 1);

		/* Paced by the editor's progress (awaited, not slept), so edits span all frames. */
		while (atomic_load(&edit_pairs) < i / pairs_per_frame_div && !atomic_load(&edit_err))
			sched_yield();
		CHECK(!atomic_load(&edit_err), "edit: %s", strerror(-atomic_load(&edit_err)));
		CHECK(bpf_prog_test_run_opts(umem_steer__prog_fd(S), &o) == 0, "test_run: %s", strerror(errno));
		CHECK_EQ(o.retval, XDP_DROP);
	}
	atomic_store(&edit_stop, 1);
	pthread_join(th, NULL);
	CHECK(!atomic_load(&edit_err), "edit: %s", strerror(-atomic_load(&edit_err)));
	CHECK(umem_steer__rule_counter(S, a, &c) == 0, "counter");
	CHECK(c.packets == frames && c.bytes == (uint64_t)frames * f.len,
	      "rule counted %llu of %u frames (%u lost) over %u edits of its prefix",
	      (unsigned long long)c.packets, frames, frames - (unsigned int)c.packets, atomic_load(&edit_pairs));
	CHECK_EQ(umem_steer__prefix_rules(S, NULL, NULL), 1);
	/* The removed rules' counters went with them; a clear takes the last. */
	fd = map_fd_by_name(UMEM_STEER_MAP_PREFIX_STATS);
	CHECK(fd >= 0, "no %s map", UMEM_STEER_MAP_PREFIX_STATS);
	CHECK(bpf_map_get_next_key(fd, NULL, &k) == 0 && k == a, "counter keys: %u", k);
	CHECK(bpf_map_get_next_key(fd, &k, &k) && errno == ENOENT, "a removed rule's counter is left");
	reset();
	CHECK(bpf_map_get_next_key(fd, NULL, &k) && errno == ENOENT, "clear left a counter");
	close(fd);
}

/* ---- the C matcher against the program ---- */

#define CORPUS_MAX 48

/* Frames of every shape the parser walks: tags, IPv4 and IPv6 with and without ports,
 * fragments, extension headers, and headers cut short or lying about their length. */
static uint32_t corpus(struct frame *c)
{
	uint32_t n = 0;

	udp4(&c[n++], 1, 2, 10, 53, 10);
	udp4(&c[n++], 0x0a010203, 0x0a000009, 53, 10, 10);
	f_eth(&c[n], MAC_B, 0x0800), f_ipv4(&c[n], 6, 0x0a000001, 2, 0, 20), f_ports(&c[n], 80, 1000, 20), n++;
	f_eth(&c[n], MAC_A, 0x0800), f_ipv4(&c[n], 132, 1, 2, 0, 12), f_ports(&c[n], 7, 53, 12), n++;
	f_eth(&c[n], MAC_A, 0x0800), f_ipv4(&c[n], 1, 1, 2, 0, 8), f_pad(&c[n], 8), n++;
	f_eth(&c[n], MAC_A, 0x0800), f_ipv4(&c[n], 17, 1, 2, 0x2000, 16), f_ports(&c[n], 1, 53, 8), f_pad(&c[n], 8), n++;
	f_eth(&c[n], MAC_A, 0x0800), f_ipv4(&c[n], 17, 1, 2, 0x0010, 16), f_pad(&c[n], 16), n++; /* later fragment */
	udp6(&c[n++], 1, 2, 10, 53);
	udp6(&c[n++], 0x10000, 7, 53, 10);
	f_eth(&c[n], MAC_A, 0x86dd), f_ipv6(&c[n], 6, 1, 2, 20), f_ports(&c[n], 1, 443, 20), n++;
	f_eth(&c[n], MAC_A, 0x86dd), f_ipv6(&c[n], 58, 1, 2, 8), f_pad(&c[n], 8), n++;
	/* Hop-by-hop then UDP; a first fragment; a later fragment. */
	f_eth(&c[n], MAC_A, 0x86dd), f_ipv6(&c[n], 0, 1, 2, 16);
	put(&c[n], (uint8_t[8]){ 17, 0 }, 8), f_ports(&c[n], 5, 53, 8), n++;
	f_eth(&c[n], MAC_A, 0x86dd), f_ipv6(&c[n], 44, 1, 2, 16);
	put(&c[n], (uint8_t[8]){ 17, 0, 0, 1 }, 8), f_ports(&c[n], 5, 53, 8), n++;
	f_eth(&c[n], MAC_A, 0x86dd), f_ipv6(&c[n], 44, 1, 2, 16);
	put(&c[n], (uint8_t[8]){ 17, 0, 0, 0x21 }, 8), f_pad(&c[n], 8), n++;
	/* Tags: one, QinQ, three (more than the parser walks), cut short. */
	f_eth(&c[n], MAC_A, 0x8100), f_vlan(&c[n], 100, 0x0800), f_ipv4(&c[n], 17, 1, 2, 0, 8), f_ports(&c[n], 1, 53, 8), n++;
	f_eth(&c[n], MAC_A, 0x88a8), f_vlan(&c[n], 7, 0x8100), f_vlan(&c[n], 9, 0x86dd), f_ipv6(&c[n], 17, 1, 2, 8);
	f_ports(&c[n], 1, 53, 8), n++;
	f_eth(&c[n], MAC_A, 0x8100), f_vlan(&c[n], 1, 0x8100), f_vlan(&c[n], 2, 0x8100), f_vlan(&c[n], 3, 0x0800);
	f_ipv4(&c[n], 17, 1, 2, 0, 8), f_ports(&c[n], 1, 53, 8), n++;
	f_eth(&c[n], MAC_A, 0x8100), f_pad(&c[n], 2), n++;
	/* Other ethertypes: ARP, a local one. */
	f_eth(&c[n], MAC_B, 0x0806), f_pad(&c[n], 28), n++;
	f_eth(&c[n], MAC_A, 0x88b5), f_pad(&c[n], 46), n++;
	/* Cut short or lying: the IPv4 header, its IHL, its total length; the UDP header; the IPv6
	 * header; an extension header. */
	f_eth(&c[n], MAC_A, 0x0800), f_pad(&c[n], 10), n++;
	udp4(&c[n], 1, 2, 1, 53, 20), c[n].b[14] = 0x44, n++;
	udp4(&c[n], 1, 2, 1, 53, 20), c[n].b[14] = 0x65, n++;
	f_eth(&c[n], MAC_A, 0x0800), f_ipv4(&c[n], 17, 1, 2, 0, 0), c[n].b[14] = 0x4f, n++;
	udp4(&c[n], 1, 2, 1, 53, 20), c[n].b[16] = 0x10, n++;
	udp4(&c[n], 1, 2, 1, 53, 20), c[n].b[16] = 0, c[n].b[17] = 10, n++;
	f_eth(&c[n], MAC_A, 0x0800), f_ipv4(&c[n], 17, 1, 2, 0, 4), f_ports(&c[n], 1, 53, 4), n++;
	f_eth(&c[n], MAC_A, 0x0800), f_ipv4(&c[n], 17, 1, 2, 0, 4), f_ports(&c[n], 1, 53, 8), f_pad(&c[n], 30), n++;
	udp6(&c[n], 1, 2, 1, 53), c[n].b[14 + 4] = 0x10, n++;
	f_eth(&c[n], MAC_A, 0x86dd), f_pad(&c[n], 30), c[n].b[14] = 0x60, n++;
	f_eth(&c[n], MAC_A, 0x86dd), f_ipv6(&c[n], 0, 1, 2, 4), f_pad(&c[n], 4), n++;
	CHECK(n <= CORPUS_MAX, "corpus of %u", n);
	return n;
}

/* Every rule on every frame of the corpus, on two queues: the program takes the frame by that
 * rule exactly when umem_steer__match_frame() says it matches. */
static void test_matcher(void)
{
	static const char *const rules[] = {
		"any -> drop", "udp -> drop", "tcp -> drop", "sctp -> drop", "icmp -> drop", "icmp6 -> drop",
		"proto 0 -> drop", "udp dport 53 -> drop", "sport 53 -> drop", "dport 443 -> drop",
		"ipv4 -> drop", "ipv6 -> drop", "arp -> drop", "ethertype 0x88b5 -> drop",
		"ethertype 0x8100 -> drop", "vlan 100 -> drop", "vlan 7 ipv6 udp -> drop", "vlan 3 -> drop",
		"queue 2 -> drop", "queue 2 udp dport 53 -> drop", "dmac 02:00:00:00:00:0b -> drop",
		"src 10.0.0.0/8 -> drop", "dst 10.0.0.9 udp -> drop", "src 2000::1/128 -> drop",
		"dst 2000::/16 udp sport 53 -> drop",
	};
	static struct frame c[CORPUS_MAX];
	uint32_t n = corpus(c), wrong = 0, took = 0;

	for (size_t r = 0; r < sizeof(rules) / sizeof(rules[0]); r++) {
		struct umem_steer_rule rule;
		uint32_t id;

		reset();
		id = add(rules[r]);
		CHECK(umem_steer_rule__parse(rules[r], &rule) == 0, "parse '%s'", rules[r]);
		for (uint32_t i = 0; i < n; i++) {
			for (uint32_t q = 0; q < 4; q += 2) {
				bool prog, c_says = umem_steer__match_frame(&rule.match, c[i].b, (uint32_t)c[i].len,
								      (uint32_t)c[i].len, q);

				run_q(&c[i], q);
				prog = T.rule == id;
				took += prog;
				if (prog != c_says) {
					fprintf(stderr, "rule '%s', frame %u (%u bytes), queue %u: the program %s, "
						"umem_steer__match_frame says %s\n", rules[r], i, c[i].len, q,
						prog ? "takes it" : "does not", c_says ? "match" : "no match");
					wrong++;
				}
			}
		}
	}
	CHECK(took > 0, "no rule took a frame: the corpus tests nothing");
	CHECK(!wrong, "%u decisions differ between the program and the C matcher", wrong);
}

int main(int argc, char **argv)
{
	UMEM_OPTS(umem_steer_opts, o, .flags = UMEM_STEER_F_LOAD_ONLY, .table_flags = UMEM_STEER_F_TRACE,
		  .nr_sockets = 8, .default_action = &(struct umem_steer_action){ .type = UMEM_STEER_A_PASS });
	cpu_set_t cpus;

	if (geteuid() != 0) {
		fprintf(stderr, "skip: needs root\n");
		return TEST_SKIP;
	}
	if (unshare(CLONE_NEWNET)) {
		fprintf(stderr, "skip: unshare(CLONE_NEWNET): %s\n", strerror(errno));
		return TEST_SKIP;
	}
	CHECK(system("ip link set lo up && ip link add stq0 numrxqueues 4 numtxqueues 4 type veth peer "
		     "name stq1 numrxqueues 4 numtxqueues 4 && ip link set stq0 up && ip link set stq1 up") == 0,
	      "veth");
	ifindex_q = if_nametoindex("stq0");
	/* The trace is per CPU: stay on one. */
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	CHECK(sched_setaffinity(0, sizeof(cpus), &cpus) == 0, "affinity");
	if (argc > 1 && !strcmp(argv[1], "nometa")) { /* every case, the program without gate marks */
		umem__fault_no_meta = 1;
		CHECK(!umem__steer_meta_ok(), "the fault leaves the marks in");
	}

	S = umem_steer__attach("stq0", &o);
	CHECK(S, "load: %s", strerror(errno));
	/* Unbound AF_XDP sockets are enough for the map: a test run reports the redirect verdict
	 * without delivering. */
	for (int i = 0; i < 8; i++) {
		sockets[i] = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
		CHECK(sockets[i] >= 0, "AF_XDP socket: %s", strerror(errno));
		CHECK(umem_steer__set_socket(S, i, sockets[i]) == 0, "set socket %d", i);
	}
	if (argc > 1 && !strcmp(argv[1], "full")) { /* a case of its own: 262144 map writes */
		test_prefix_full();
		umem_steer__detach(S);
		printf("steer_bpf full: ok\n");
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "edits")) { /* two CPUs at work: a case of its own */
		test_prefix_edits();
		umem_steer__detach(S);
		printf("steer_bpf edits: ok\n");
		return 0;
	}
	test_fields();
	test_matcher();
	test_actions();
	test_malformed();
	test_fragments();
	test_hash();
	test_counters();
	test_jumbo();
	test_flows();
	test_flow_fast();
	test_prefixes();
	test_listed();
	test_bad_input();
	test_attach();
	umem_steer__detach(S);
	for (int i = 0; i < 8; i++)
		close(sockets[i]);
	printf("steer_bpf: ok\n");
	return 0;
}
