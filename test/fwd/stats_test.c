/* SPDX-License-Identifier: MIT */
/* xdp-fwd stats formatting: SI values, rates, drops by reason, recycle hit rate, JSON. */
#include "testutil.h"
#include "stats.h"

static char *capture(void (*fn)(FILE *, void *), void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fn(f, arg);
	fclose(f);
	return buf;
}

static void test_si(void)
{
	char b[16];

	CHECK(!strcmp(fwd_fmt_si(b, sizeof(b), 0), "0"), "%s", b);
	CHECK(!strcmp(fwd_fmt_si(b, sizeof(b), 999), "999"), "%s", b);
	CHECK(!strcmp(fwd_fmt_si(b, sizeof(b), 1000), "1.00 k"), "%s", b);
	CHECK(!strcmp(fwd_fmt_si(b, sizeof(b), 1234567), "1.23 M"), "%s", b);
	CHECK(!strcmp(fwd_fmt_si(b, sizeof(b), 45.6e6), "45.6 M"), "%s", b);
	CHECK(!strcmp(fwd_fmt_si(b, sizeof(b), 999.7e6), "1.00 G"), "%s", b);
	CHECK(!strcmp(fwd_fmt_si(b, sizeof(b), 9.41e9), "9.41 G"), "%s", b);
}

static struct fwd_port_sample a, b;

static void port_line(FILE *f, void *arg)
{
	fwd_fmt_port_line(f, "m0@0", &a, &b, *(double *)arg);
}

static void test_port_line(void)
{
	double dt = 2.0;
	char *s;

	a = (struct fwd_port_sample){ .rx_packets = 100, .rx_bytes = 1000, .drop[FWD_DROP_TX_FULL] = 5 };
	b = a;
	b.rx_packets += 2000000; /* 1 Mpps over 2 s */
	b.rx_bytes += 250000000; /* 1 Gbit/s */
	b.tx_packets = 3000;
	b.tx_bytes = 3000 * 64;
	b.drop[FWD_DROP_XSK_FILL] = 7;
	s = capture(port_line, &dt);
	CHECK(strstr(s, "m0@0"), "%s", s);
	CHECK(strstr(s, "rx   1.00 Mpps   1.00 Gbit/s"), "%s", s);
	CHECK(strstr(s, "tx   1.50 kpps    768 kbit/s"), "%s", s);
	/* Only reasons that moved, with the interval's count. */
	CHECK(strstr(s, "drops: xsk_fill_empty 7"), "%s", s);
	CHECK(!strstr(s, "tx_full"), "%s", s);
	free(s);
	b.drop[FWD_DROP_TX_FULL] = 6;
	s = capture(port_line, &dt);
	CHECK(strstr(s, "drops: tx_full 1, xsk_fill_empty 7"), "%s", s);
	free(s);
	/* The output interface's kernel TX drops (main.c reads them), named as the books sum them. */
	b.drop[FWD_DROP_TX_KERNEL] = 4;
	s = capture(port_line, &dt);
	CHECK(strstr(s, "drops: tx_full 1, xsk_fill_empty 7, tx_dropped_kernel 4"), "%s", s);
	free(s);
	b = a;
	s = capture(port_line, &dt);
	CHECK(!strstr(s, "drops"), "%s", s);
	free(s);
}

static void test_hit_rate(void)
{
	struct fwd_pool_sample p = { .allocs = 1000, .fresh = 512 }, c = p;

	CHECK(fwd_recycle_hit_rate(&p, &c) < 0, "no allocations: no rate");
	c.allocs += 1000; /* all recycled */
	CHECK(fwd_recycle_hit_rate(&p, &c) == 100.0, "%f", fwd_recycle_hit_rate(&p, &c));
	c.fresh += 250;
	CHECK(fwd_recycle_hit_rate(&p, &c) == 75.0, "%f", fwd_recycle_hit_rate(&p, &c));
	c.fresh = p.fresh + 5000; /* a bulk refill larger than the interval's allocations */
	CHECK(fwd_recycle_hit_rate(&p, &c) == 0.0, "%f", fwd_recycle_hit_rate(&p, &c));
}

static struct fwd_pool_sample pa, pb;

static void pool_line(FILE *f, void *arg)
{
	fwd_fmt_pool_line(f, "pool w0", &pa, &pb);
}

static void json(FILE *f, void *arg)
{
	fwd_json_begin(f, 1.5, "interval", false);
	fwd_json_port(f, true, "m0@0", &a, &a, &b, 1.0);
	fwd_json_port(f, false, "m1@0", &a, &a, &a, 1.0);
	fwd_json_pools(f);
	fwd_json_pool(f, true, "pool w0", &pa, &pa, &pb);
	fwd_json_end(f);
}

/* --json-totals: counts from the start sample z, rates over the interval a..b. */
static struct fwd_port_sample z;
static void json_totals(FILE *f, void *arg)
{
	fwd_json_begin(f, 2.5, "interval", true);
	fwd_json_port(f, true, "m0@0", &z, &a, &b, 1.0);
	fwd_json_end(f);
}

static void test_pool_line_and_json(void)
{
	char *s;

	pa = (struct fwd_pool_sample){ .allocs = 10, .slow = 3, .fresh = 192, .inflight = 4096 };
	pb = pa;
	pb.allocs += 100;
	pb.inflight = 4100;
	pb.sleeps += 7;
	s = capture(pool_line, NULL);
	CHECK(strstr(s, "recycle hit 100.0%  slow allocs 0  pages held 4100  sleeps 7\n"), "%s", s);
	free(s);
	/* Late handoffs are named only when there were some. */
	pb.late_handoffs += 2;
	s = capture(pool_line, NULL);
	CHECK(strstr(s, "pages held 4100  sleeps 7  late handoffs 2\n"), "%s", s);
	free(s);

	a = (struct fwd_port_sample){ 0 };
	b = (struct fwd_port_sample){ .rx_packets = 10, .rx_bytes = 640, .drop[FWD_DROP_NO_PORT] = 2 };
	s = capture(json, NULL);
	/* A wall-clock timestamp (seconds since the epoch, ms), then the time since the start. */
	long long ts = 0;
	CHECK(sscanf(s, "{\"type\":\"interval\",\"timestamp\":%lld.", &ts) == 1 && ts > 1600000000, "%s", s);
	CHECK(strstr(s, ",\"time\":1.500,\"counts\":\"interval\",\"ports\":[{\"name\":\"m0@0\",\"rx_packets\":10,"), "%s", s);
	CHECK(strstr(s, "\"rx_bps\":5120,"), "%s", s);
	CHECK(strstr(s, "\"no_port\":2,"), "%s", s);
	CHECK(strstr(s, "},{\"name\":\"m1@0\""), "%s", s);
	CHECK(strstr(s, "],\"pools\":[{\"name\":\"pool w0\",\"allocs\":100,\"slow\":0,\"recycled\":0,\"recycle_hit_pct\":100.00,\"pages_held\":4100,\"sleeps\":7,\"late_handoffs\":2}]}\n"), "%s", s);
	/* One line per object, balanced braces. */
	int depth = 0;
	for (char *c = s; *c; c++) {
		depth += (*c == '{' || *c == '[') - (*c == '}' || *c == ']');
		CHECK(depth >= 0, "unbalanced: %s", s);
		CHECK(*c != '\n' || c[1] == '\0', "more than one line: %s", s);
	}
	CHECK_EQ(depth, 0);
	free(s);

	/* Totals: 10 frames before the interval, 10 in it: the count is 20, the rate 10/s. */
	z = (struct fwd_port_sample){ 0 };
	a = (struct fwd_port_sample){ .rx_packets = 10, .rx_bytes = 640 };
	b = (struct fwd_port_sample){ .rx_packets = 20, .rx_bytes = 1280 };
	s = capture(json_totals, NULL);
	CHECK(strstr(s, "\"counts\":\"total\",\"ports\":[{\"name\":\"m0@0\",\"rx_packets\":20,\"rx_bytes\":1280,"), "%s", s);
	CHECK(strstr(s, "\"rx_pps\":10,\"rx_bps\":5120,"), "%s", s);
	free(s);

	/* An interval without allocations has no hit rate: the key is left out, not null. */
	pb = pa;
	s = capture(json, NULL);
	CHECK(strstr(s, "\"allocs\":0,\"slow\":0,\"recycled\":0,\"pages_held\":4096,\"sleeps\":0,\"late_handoffs\":0}"), "%s", s);
	CHECK(!strstr(s, "recycle_hit_pct") && !strstr(s, "null"), "%s", s);
	free(s);
}

/* An interface's line sums its queues' ports, every counter. */
static void test_sample_add(void)
{
	struct fwd_port_sample sum = { 0 }, q0 = { .rx_packets = 3, .rx_bytes = 300, .tx_packets = 2 },
			       q1 = { .rx_packets = 4, .tx_bytes = 70 };

	q0.drop[FWD_DROP_TX_FULL] = 1;
	q1.drop[FWD_DROP_TX_FULL] = 5;
	q1.drop[FWD_DROP_XSK_FILL] = 2;
	fwd_port_sample_add(&sum, &q0);
	fwd_port_sample_add(&sum, &q1);
	CHECK(sum.rx_packets == 7 && sum.rx_bytes == 300 && sum.tx_packets == 2 && sum.tx_bytes == 70,
	      "sums");
	CHECK(sum.drop[FWD_DROP_TX_FULL] == 6 && sum.drop[FWD_DROP_XSK_FILL] == 2 &&
	      sum.drop[FWD_DROP_INVALID] == 0, "drop sums");
}

static struct fwd_capture_sample ca, cb;

static void capture_line(FILE *f, void *arg)
{
	fwd_fmt_capture_line(f, "x.pcap", &ca, &cb);
}

static void capture_json(FILE *f, void *arg)
{
	fwd_json_capture(f, "a\"b.pcap", &ca, &cb);
}

/* --pcap: the interval's counts, and why the capture stopped. */
static void test_capture(void)
{
	char *s;

	ca = (struct fwd_capture_sample){ .captured = 10, .bytes = 1000, .dropped = 1 };
	cb = (struct fwd_capture_sample){ .captured = 1510, .bytes = 151000, .dropped = 4 };
	s = capture(capture_line, NULL);
	CHECK(!strcmp(s, "pcap x.pcap  captured 1.50 k frames 150 kB  capture dropped 3 (ring full)\n"), "%s", s);
	free(s);
	s = capture(capture_json, NULL);
	CHECK(!strcmp(s, ",\"capture\":{\"file\":\"a\\\"b.pcap\",\"captured\":1500,\"bytes\":150000,\"dropped\":3,\"stopped\":null}"),
	      "%s", s);
	free(s);
	cb.limit_reached = true;
	s = capture(capture_line, NULL);
	CHECK(strstr(s, "  stopped: count reached\n"), "%s", s);
	free(s);
	cb.error = ENOSPC;
	s = capture(capture_json, NULL);
	CHECK(strstr(s, "\"stopped\":\"No space left on device\"}"), "%s", s);
	free(s);
}

int main(void)
{
	test_si();
	test_sample_add();
	test_port_line();
	test_hit_rate();
	test_pool_line_and_json();
	test_capture();
	printf("fwd_stats: ok\n");
	return 0;
}
