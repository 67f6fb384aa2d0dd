/* SPDX-License-Identifier: MIT */
/* xdp-fwd --pcap without a network: frames put in a UMEM area go through fwd_capture_frames
 * and come out of the file byte for byte, chains joined, cut at the snap length, only those the
 * filter and the dev words take; a full ring drops (counted) rather than waits, and records
 * that wrap around the ring come out whole. A write error leaves a file of whole records, and
 * a FIFO reader that does not read cannot keep the capture from stopping. */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"
#include "testutil.h"
#include "capture.h"

#define FRAME_PAGES 2048 /* 4 KiB each: one frame (or chain piece) per page */

static struct fwd_config cfg;
static struct umem_area *area;
static char path[64];

/* A UDP/IPv4 frame to dport of len bytes at page pg; byte i past the headers is (tag + i). */
static struct umem_desc frame_at(uint32_t pg, uint32_t len, uint16_t dport, uint8_t tag)
{
	static const uint8_t dst[6] = { 2, 0, 0, 0, 0, 1 }, src[6] = { 2, 0, 0, 0, 0, 2 };
	uint8_t *p = umem_area__ptr(area, (uint64_t)pg * 4096);
	uint32_t n = 0;

	frame_eth(p, &n, dst, src, 0x0800);
	/* The total length is the frame's: the steering program's matcher checks it. */
	frame_ipv4(p, &n, &(struct frame_ipv4){ .proto = 17 }, len - 34);
	frame_ports(p, &n, 0, dport, 8);
	for (uint32_t i = n; i < len; i++)
		p[i] = (uint8_t)(tag + i);
	return (struct umem_desc){ .addr = (uint64_t)pg * 4096, .len = len };
}

static uint8_t *slurp(size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	uint8_t *buf;

	CHECK(fd >= 0 && !fstat(fd, &st), "open %s", path);
	buf = malloc((size_t)st.st_size + 1);
	CHECK(buf && read(fd, buf, (size_t)st.st_size) == st.st_size, "read %s", path);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

static void config(const char *filter, uint32_t snaplen)
{
	char err[256] = "";

	fwd_config_defaults(&cfg);
	cfg.nr_ports = 2;
	strcpy(cfg.ports[0].ifname, "a");
	strcpy(cfg.ports[1].ifname, "b");
	cfg.pcap_path = path;
	cfg.pcap_snaplen = snaplen;
	cfg.pcap_buffer_kib = 64;
	if (filter)
		CHECK(!fwd_pcap_filter_parse(&cfg, filter, err, sizeof(err)), "filter '%s': %s", filter, err);
}

/* Frames, a chain, the snap length and the filter, to the byte. */
static void test_records(void)
{
	struct fwd_capture *cap;
	struct fwd_capture_sample s;
	struct umem_desc d[5];
	size_t len;
	uint8_t *f, *p;

	config("udp dev b", 100);
	cap = fwd_capture_open(&cfg, 1);
	CHECK(cap, "open");
	fwd_capture_bind(cap, area);
	CHECK_EQ(fwd_capture_start(cap), 0);
	d[0] = frame_at(0, 60, 53, 1);
	d[1] = frame_at(1, 1000, 7, 2); /* a chain of 1000 + 500 bytes */
	d[1].options = UMEM_DESC_F_CONTD;
	d[2] = (struct umem_desc){ .addr = 2 * 4096, .len = 500 };
	memset(umem_area__ptr(area, 2 * 4096), 0xee, 500);
	d[3] = frame_at(3, 60, 53, 3);
	((uint8_t *)umem_area__ptr(area, 3 * 4096))[23] = 6; /* TCP: the filter says no */
	d[4] = frame_at(4, 80, 9, 4);
	fwd_capture_frames(cap, 0, 0, d, 5); /* port a: dev b takes nothing of it */
	fwd_capture_frames(cap, 0, 1, d, 5);
	fwd_capture_stop(cap);
	fwd_capture_sample(cap, &s);
	CHECK(s.captured == 3 && s.dropped == 0 && s.bytes == 60 + 100 + 80 && !s.error && !s.limit_reached,
	      "captured %llu dropped %llu bytes %llu", (unsigned long long)s.captured,
	      (unsigned long long)s.dropped, (unsigned long long)s.bytes);
	fwd_capture_free(cap);

	f = slurp(&len);
	CHECK_EQ(len, 24 + 3 * 16 + 60 + 100 + 80);
	const struct fwd_pcap_file_header *h = (const void *)f;
	CHECK(h->magic == FWD_PCAP_MAGIC_NS && h->version_major == 2 && h->version_minor == 4 &&
	      h->snaplen == 100 && h->linktype == 1, "file header");
	p = f + 24;
	const uint32_t caplen[3] = { 60, 100, 80 }, flen[3] = { 60, 1500, 80 }, page[3] = { 0, 1, 4 };
	for (int r = 0; r < 3; r++) {
		struct fwd_pcap_record rec;

		memcpy(&rec, p, sizeof(rec));
		CHECK(rec.caplen == caplen[r] && rec.len == flen[r] && rec.ts_nsec < 1000000000u && rec.ts_sec,
		      "record %d: caplen %u len %u", r, rec.caplen, rec.len);
		CHECK(!memcmp(p + 16, umem_area__ptr(area, page[r] * 4096ull), rec.caplen), "record %d bytes", r);
		p += 16 + rec.caplen;
	}
	free(f);
}

/* A 64 KiB ring and 1000-byte frames: the ring fills while the writer is away (drops counted),
 * and 1000 frames through it wrap it many times, each record whole and in order. */
static void test_ring(void)
{
	struct fwd_capture *cap;
	struct fwd_capture_sample s;
	uint64_t drops = 0;
	size_t len;
	uint8_t *f, *p;

	config(NULL, 1000); /* the ring is the 64 KiB asked for (a larger snap length grows it) */
	cap = fwd_capture_open(&cfg, 1);
	CHECK(cap, "open");
	fwd_capture_bind(cap, area);
	/* No writer yet: 100 frames of 1016 bytes of record do not fit in 64 KiB. */
	for (uint32_t i = 0; i < 100; i++) {
		struct umem_desc d = frame_at(i, 1000, 1, (uint8_t)i);

		fwd_capture_frames(cap, 0, 0, &d, 1);
	}
	fwd_capture_sample(cap, &s);
	CHECK(s.captured == 65536 / 1016 && s.dropped == 100 - s.captured, "full ring: captured %llu dropped %llu",
	      (unsigned long long)s.captured, (unsigned long long)s.dropped);
	uint64_t first = s.captured;

	CHECK_EQ(fwd_capture_start(cap), 0);
	for (uint32_t i = 0; i < 1000; i++) {
		struct umem_desc d = frame_at(100 + i % 1000, 1000, 1, (uint8_t)(100 + i));

		for (;;) { /* until the writer has made room */
			fwd_capture_frames(cap, 0, 0, &d, 1);
			fwd_capture_sample(cap, &s);
			if (s.dropped == 100 - first + drops)
				break;
			drops++;
			nanosleep(&(struct timespec){ .tv_nsec = 100000 }, NULL);
		}
	}
	fwd_capture_stop(cap);
	fwd_capture_sample(cap, &s);
	CHECK_EQ(s.captured, first + 1000);
	fwd_capture_free(cap);

	f = slurp(&len);
	CHECK_EQ(len, 24 + (first + 1000) * (16 + 1000));
	p = f + 24;
	for (uint64_t r = 0; r < first + 1000; r++) {
		uint32_t pg = r < first ? (uint32_t)r : 100 + (uint32_t)(r - first) % 1000;

		CHECK(!memcmp(p + 16, umem_area__ptr(area, pg * 4096ull), 1000), "record %llu bytes", (unsigned long long)r);
		p += 16 + 1000;
	}
	free(f);
}

/* --pcap-count: the first N frames, then nothing, and the sample says why. */
static void test_count(void)
{
	struct fwd_capture *cap;
	struct fwd_capture_sample s;
	struct umem_desc d[4];

	config(NULL, 262144);
	cfg.pcap_count = 3;
	cap = fwd_capture_open(&cfg, 1);
	CHECK(cap, "open");
	fwd_capture_bind(cap, area);
	for (int i = 0; i < 4; i++)
		d[i] = frame_at((uint32_t)i, 64, 1, 0);
	fwd_capture_frames(cap, 0, 0, d, 2);
	fwd_capture_frames(cap, 0, 0, d, 4);
	fwd_capture_sample(cap, &s);
	CHECK(s.captured == 3 && s.dropped == 0 && s.limit_reached, "captured %llu", (unsigned long long)s.captured);
	fwd_capture_free(cap);

	/* The count reached as the ring fills (no writer): the frames after it are not the
	 * capture's, so none counts as dropped from it (they did, the ring being full). */
	config(NULL, 1000);
	cfg.pcap_count = 65536 / 1016; /* what the 64 KiB ring holds */
	cap = fwd_capture_open(&cfg, 1);
	CHECK(cap, "open");
	fwd_capture_bind(cap, area);
	for (uint32_t i = 0; i < 100; i++) {
		struct umem_desc one = frame_at(i, 1000, 1, 0);

		fwd_capture_frames(cap, 0, 0, &one, 1);
	}
	fwd_capture_sample(cap, &s);
	CHECK(s.captured == cfg.pcap_count && s.dropped == 0 && s.limit_reached,
	      "count %llu reached with the ring full: captured %llu, capture dropped %llu (not 0)",
	      (unsigned long long)cfg.pcap_count, (unsigned long long)s.captured, (unsigned long long)s.dropped);
	fwd_capture_free(cap);
}

static int real_stderr = 2; /* while stderr_of has stderr: for on_alarm */

/* Runs fn with stderr into a pipe (which RLIMIT_FSIZE does not cut); returns what it printed
 * (malloc'd; a few lines: the pipe holds them). */
static char *stderr_of(void (*fn)(void))
{
	int fds[2], saved = dup(2);
	char *out = calloc(1, 4096);
	ssize_t n;
	size_t len = 0;

	CHECK(out && saved >= 0 && !pipe(fds), "pipe: %s", strerror(errno));
	fflush(stderr);
	real_stderr = saved;
	dup2(fds[1], 2);
	close(fds[1]);
	fn();
	fflush(stderr);
	dup2(saved, 2);
	real_stderr = 2;
	close(saved);
	while (len < 4095 && (n = read(fds[0], out + len, 4095 - len)) > 0)
		len += (size_t)n;
	close(fds[0]);
	return out;
}

static struct fwd_capture *opened;

static void open_capture(void)
{
	opened = fwd_capture_open(&cfg, 1);
}

static struct fwd_capture *stopping;

static void stop_capture(void)
{
	fwd_capture_stop(stopping);
}

static char *stderr_of_stop(struct fwd_capture *cap)
{
	stopping = cap;
	return stderr_of(stop_capture);
}

static void start_stop_capture(void)
{
	CHECK_EQ(fwd_capture_start(stopping), 0);
	fwd_capture_stop(stopping);
}

/* The writer's messages from its first pass on: it starts inside the redirection. */
static char *stderr_of_run(struct fwd_capture *cap)
{
	stopping = cap;
	return stderr_of(start_stop_capture);
}

/* A file past RLIMIT_FSIZE (ulimit -f; xdp-fwd ignores SIGXFSZ, as this test): writes fail with
 * EFBIG, the first of them after a short write in the middle of a record. The file keeps the
 * whole records, the rest is cut, so that it reads to its end; and a header cut short names
 * the error, not a stale errno. */
static void test_write_error(void)
{
	struct rlimit old, lim;
	struct fwd_capture_sample s;
	struct fwd_capture *cap;
	size_t len;
	uint8_t *f;
	char *err;

	signal(SIGXFSZ, SIG_IGN);
	CHECK(!getrlimit(RLIMIT_FSIZE, &old), "getrlimit");
	lim = old;
	lim.rlim_cur = 24 + 2 * (16 + 1000) + 500; /* two records and half of the third */
	CHECK(!setrlimit(RLIMIT_FSIZE, &lim), "setrlimit: %s", strerror(errno));
	config(NULL, 1000);
	cap = fwd_capture_open(&cfg, 1);
	CHECK(cap, "open");
	fwd_capture_bind(cap, area);
	for (uint32_t i = 0; i < 5; i++) {
		struct umem_desc d = frame_at(i, 1000, 1, (uint8_t)i);

		fwd_capture_frames(cap, 0, 0, &d, 1);
	}
	err = stderr_of_run(cap);
	fwd_capture_sample(cap, &s);
	CHECK(s.captured == 5 && s.error == EFBIG, "captured %llu, error %d", (unsigned long long)s.captured, s.error);
	fwd_capture_free(cap);
	f = slurp(&len);
	CHECK(len == 24 + 2 * (16 + 1000), "the file has %zu bytes, not the header and 2 whole records (%d): "
	      "a record cut in the middle", len, 24 + 2 * (16 + 1000));
	for (int r = 0; r < 2; r++)
		CHECK(!memcmp(f + 24 + r * 1016 + 16, umem_area__ptr(area, (uint64_t)r * 4096), 1000), "record %d", r);
	free(f);
	CHECK(strstr(err, "cannot write: File too large") && strstr(err, "3 frames captured are not in the file"),
	      "stderr: %s", err);
	free(err);

	lim.rlim_cur = 10; /* not even the header */
	CHECK(!setrlimit(RLIMIT_FSIZE, &lim), "setrlimit: %s", strerror(errno));
	err = stderr_of(open_capture);
	CHECK(!opened, "opened a file that cannot take its header");
	CHECK(strstr(err, "cannot write to it: File too large"), "a header cut short: %s", err);
	free(err);
	CHECK(!setrlimit(RLIMIT_FSIZE, &old), "setrlimit: %s", strerror(errno));
	signal(SIGXFSZ, SIG_DFL);
}

static void on_alarm(int sig)
{
	static const char msg[] = "fwd_capture: FAIL: fwd_capture_stop did not return: the writer is stuck "
				  "writing to a FIFO whose reader does not read\n";

	(void)sig;
	if (write(real_stderr, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

/* A FIFO whose reader holds it open and reads nothing (a suspended tcpdump, a pager): the
 * capture still stops (xdp-fwd exits, detaching), after CAP_STALL_MS, and says why. */
static void test_stalled_reader(void)
{
	struct fwd_capture_sample s;
	struct fwd_capture *cap;
	int rd;
	char *err;

	unlink(path);
	CHECK(!mkfifo(path, 0600), "mkfifo %s: %s", path, strerror(errno));
	rd = open(path, O_RDONLY | O_NONBLOCK); /* a reader: the capture's open does not wait */
	CHECK(rd >= 0, "open %s: %s", path, strerror(errno));
	config(NULL, 1000);
	cfg.pcap_buffer_kib = 1024;
	cap = fwd_capture_open(&cfg, 1);
	CHECK(cap, "open");
	fwd_capture_bind(cap, area);
	CHECK_EQ(fwd_capture_start(cap), 0);
	/* 500 KB of records: more than a pipe holds (64 KiB by default, 1 MiB at most unprivileged). */
	for (uint32_t i = 0; i < 500; i++) {
		struct umem_desc d = frame_at(i, 1000, 1, (uint8_t)i);

		fwd_capture_frames(cap, 0, 0, &d, 1);
	}
	signal(SIGALRM, on_alarm);
	alarm(20);
	err = stderr_of_stop(cap);
	alarm(0);
	fwd_capture_sample(cap, &s);
	CHECK(s.captured == 500 && s.dropped == 0 && s.error == ETIMEDOUT, "captured %llu dropped %llu error %d",
	      (unsigned long long)s.captured, (unsigned long long)s.dropped, s.error);
	CHECK(strstr(err, "the reader has taken nothing for 2 s since the stop") && strstr(err, "not in the file"),
	      "stderr: %s", err);
	free(err);
	fwd_capture_free(cap);
	close(rd);
	unlink(path);
}

int main(void)
{
	snprintf(path, sizeof(path), "/tmp/fwd_capture_test.%d.pcap", (int)getpid());
	area = umem_area__create(FRAME_PAGES, NULL);
	CHECK(area, "area: %s", strerror(errno));
	test_records();
	test_ring();
	test_count();
	test_write_error();
	test_stalled_reader();
	/* An unwritable path: NULL, named on stderr. */
	snprintf(path, sizeof(path), "/nonexistent-dir/x.pcap");
	config(NULL, 262144);
	CHECK(!fwd_capture_open(&cfg, 1), "opened %s", path);
	snprintf(path, sizeof(path), "/tmp/fwd_capture_test.%d.pcap", (int)getpid());
	unlink(path);
	umem_area__destroy(area);
	printf("fwd_capture: ok\n");
	return 0;
}
