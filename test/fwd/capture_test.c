/* SPDX-License-Identifier: MIT */
/* xdp-fwd --pcap without a network: frames put in a UMEM area go through fwd_capture_frames
 * and come out of the file byte for byte, chains joined, cut at the snap length, only those the
 * filter and the dev words take; a full ring drops (counted) rather than waits, and records
 * that wrap around the ring come out whole. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "capture.h"

#define FRAME_PAGES 2048 /* 4 KiB each: one frame (or chain piece) per page */

static struct fwd_config cfg;
static struct umem_area *area;
static char path[64];

/* A UDP/IPv4 frame to dport of len bytes at page pg; byte i past the headers is (tag + i). */
static struct umem_desc frame_at(uint32_t pg, uint32_t len, uint16_t dport, uint8_t tag)
{
	uint8_t *p = umem_area__ptr(area, (uint64_t)pg * 4096);

	memset(p, 0, 42);
	memcpy(p, "\x02\0\0\0\0\x01\x02\0\0\0\0\x02\x08\x00", 14);
	p[14] = 0x45;
	p[23] = 17;
	p[36] = (uint8_t)(dport >> 8);
	p[37] = (uint8_t)dport;
	for (uint32_t i = 42; i < len; i++)
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
}

int main(void)
{
	snprintf(path, sizeof(path), "/tmp/fwd_capture_test.%d.pcap", (int)getpid());
	area = umem_area__create(FRAME_PAGES, NULL);
	CHECK(area, "area: %s", strerror(errno));
	test_records();
	test_ring();
	test_count();
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
