/* SPDX-License-Identifier: MIT */
/* xdp-fwd --pcap: per-worker rings of pcap records, one writer thread (capture.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "mtu.h"
#include "route.h"
#include "stats.h"

/* The writer sleeps until a worker's ring is a quarter full (the worker wakes it), or this
 * long: what a live reader (a FIFO) waits at most for a quiet capture's records. A periodic
 * nap instead would wake it hundreds of times a second, on CPUs the traffic needs. */
#define CAP_WRITER_SLEEP_MS 100
/* Once stopping, a reader (a FIFO's) that takes no byte for this long is given up on: a
 * suspended tcpdump or a pager must not keep xdp-fwd from exiting and detaching. */
#define CAP_STALL_MS 2000

/* One worker's ring of pcap records, as the file's bytes (a record may wrap). The worker
 * publishes whole records with a release store of tail (pairs with the writer's acquire);
 * the writer frees bytes with a release store of head (pairs with the worker's acquire). */
struct cap_ring {
	_Atomic uint64_t tail __attribute__((aligned(64)));
	/* The worker's single-writer counters (fwd_count), on its line. */
	_Atomic uint64_t captured, bytes, dropped;
	_Atomic uint64_t head __attribute__((aligned(64)));
	uint8_t *buf;
	uint64_t mask;
};

struct fwd_capture {
	struct cap_ring ring[FWD_MAX_WORKERS];
	uint32_t nr_rings;
	int fd;
	int wake_fd; /* eventfd: a ring a quarter full, or stop */
	const char *path;
	struct umem_area *area;
	struct umem_steer_match match;
	bool port_on[FWD_MAX_PORTS];      /* the filter's dev takes this output port */
	uint32_t port_queue[FWD_MAX_PORTS];
	uint32_t snaplen;
	uint64_t limit;                   /* --pcap-count; 0: none */
	_Atomic uint64_t taken;           /* frames counted against the limit */
	_Atomic bool over;                /* limit reached or write failed: workers capture nothing */
	_Atomic int error;
	_Atomic bool stop;
	/* The writer's own: the file's length up to its last whole record (the length it is cut
	 * back to after a write error), whether it can be cut (a regular file), and the frames
	 * captured that never reached the file. */
	uint64_t good;
	bool regular;
	uint64_t unwritten;
	/* Set while the writer sleeps (or is about to): a worker whose ring is a quarter full then
	 * wakes it. The seq_cst fences on both sides pair: either the writer sees the records
	 * before it sleeps, or the worker sees it asleep. On a line of its own: workers read it. */
	_Atomic bool sleeping __attribute__((aligned(64)));
	pthread_t writer;
	bool started;
};

/* 0, or -1 with errno (a short write's cause: the next write's error). */
static int write_all(int fd, const void *buf, size_t len)
{
	for (size_t done = 0; done < len;) {
		ssize_t w = write(fd, (const uint8_t *)buf + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (!w)
				errno = EIO;
			return -1;
		}
		done += (size_t)w;
	}
	return 0;
}

struct fwd_capture *fwd_capture_open(const struct fwd_config *cfg, uint32_t nr_workers)
{
	uint64_t size = 1;
	struct stat st;
	int fl;
	struct fwd_capture *cap = aligned_alloc(64, sizeof(*cap));
	struct fwd_pcap_file_header h = {
		.magic = FWD_PCAP_MAGIC_NS, .version_major = 2, .version_minor = 4,
		.snaplen = cfg->pcap_snaplen, .linktype = FWD_PCAP_LINKTYPE_ETHERNET,
	};

	if (!cap) {
		fprintf(stderr, "xdp-fwd: --pcap: %s\n", strerror(ENOMEM));
		return NULL;
	}
	memset(cap, 0, sizeof(*cap));
	cap->fd = -1;
	cap->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (cap->wake_fd < 0) {
		fprintf(stderr, "xdp-fwd: --pcap: eventfd: %s\n", strerror(errno));
		free(cap);
		return NULL;
	}
	cap->path = cfg->pcap_path;
	cap->match = cfg->pcap_match;
	cap->snaplen = cfg->pcap_snaplen;
	cap->limit = cfg->pcap_count;
	cap->nr_rings = nr_workers;
	for (uint32_t i = 0; i < cfg->nr_ports; i++)
		fwd_capture_port(cap, cfg, i);
	/* A ring holds at least the largest record: a frame of the largest MTU (65535) and its
	 * headers, or the snap length when that is less. */
	uint64_t largest = sizeof(struct fwd_pcap_record) + (cap->snaplen < 65535u + MTU_ETH_OVERHEAD ?
							      cap->snaplen : 65535u + MTU_ETH_OVERHEAD);

	while (size < (uint64_t)cfg->pcap_buffer_kib << 10 || size < largest)
		size <<= 1;
	for (uint32_t k = 0; k < nr_workers; k++) {
		cap->ring[k].buf = malloc(size);
		cap->ring[k].mask = size - 1;
		if (!cap->ring[k].buf) {
			fprintf(stderr, "xdp-fwd: --pcap: %u rings of %llu KiB: %s (a smaller --pcap-buffer?)\n",
				nr_workers, (unsigned long long)(size >> 10), strerror(ENOMEM));
			fwd_capture_free(cap);
			return NULL;
		}
	}
	/* Blocking: a FIFO's open waits for its reader (documented). */
	cap->fd = open(cfg->pcap_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (cap->fd < 0 && errno == EINTR) {
		/* A stop signal while waiting for the reader: the caller says so. */
		fwd_capture_free(cap);
		errno = EINTR;
		return NULL;
	}
	if (cap->fd < 0 || write_all(cap->fd, &h, sizeof(h))) {
		fprintf(stderr, "xdp-fwd: --pcap %s: cannot %s it: %s\n", cfg->pcap_path,
			cap->fd < 0 ? "open" : "write to", strerror(errno));
		fwd_capture_free(cap);
		return NULL;
	}
	cap->good = sizeof(h);
	cap->regular = !fstat(cap->fd, &st) && S_ISREG(st.st_mode);
	/* Non-blocking from here: a writer stuck in write() on a reader that does not read could
	 * not be stopped (wait_writable waits instead, and gives up once stopping). */
	fl = fcntl(cap->fd, F_GETFL);
	if (fl >= 0)
		fcntl(cap->fd, F_SETFL, fl | O_NONBLOCK);
	return cap;
}

void fwd_capture_port(struct fwd_capture *cap, const struct fwd_config *cfg, uint32_t i)
{
	bool on = !cfg->nr_pcap_devs;

	for (uint32_t d = 0; d < cfg->nr_pcap_devs; d++)
		on |= !strcmp(cfg->pcap_dev[d], cfg->ports[i].ifname);
	cap->port_on[i] = on;
	cap->port_queue[i] = cfg->ports[i].queue;
}

void fwd_capture_bind(struct fwd_capture *cap, struct umem_area *area)
{
	cap->area = area;
}

/* A ring a quarter full: what wakes the writer (the workers test the same). */
static bool ring_quarter_full(const struct cap_ring *r)
{
	return atomic_load_explicit(&r->tail, memory_order_relaxed) -
	       atomic_load_explicit(&r->head, memory_order_relaxed) >= (r->mask + 1) / 4;
}

static void wake_writer(const struct fwd_capture *cap)
{
	uint64_t one = 1;

	if (write(cap->wake_fd, &one, sizeof(one)) < 0)
		return; /* EAGAIN: the counter is full, so a wake is pending anyway */
}

static void ring_put(struct cap_ring *r, uint64_t at, const void *src, uint32_t len)
{
	uint64_t off = at & r->mask, first = r->mask + 1 - off;

	if (first >= len) {
		memcpy(r->buf + off, src, len);
	} else {
		memcpy(r->buf + off, src, first);
		memcpy(r->buf, (const uint8_t *)src + first, len - first);
	}
}

void fwd_capture_frames(struct fwd_capture *cap, uint32_t worker, uint32_t port, const struct umem_desc *d,
			uint32_t n)
{
	struct cap_ring *r = &cap->ring[worker];
	uint64_t tail, room, captured = 0, bytes = 0, dropped = 0;
	struct timespec ts = { 0 };
	bool last = false;

	if (!cap->port_on[port] || atomic_load_explicit(&cap->over, memory_order_relaxed))
		return;
	tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	/* Acquire: pairs with the writer's release of head; it is done with those bytes. */
	room = r->mask + 1 - (tail - atomic_load_explicit(&r->head, memory_order_acquire));
	for (uint32_t i = 0, j; i < n; i = j + 1) {
		const uint8_t *p = umem_area__ptr(cap->area, d[i].addr);
		uint32_t len = 0, caplen;

		for (j = i;; j++) { /* whole frames only: the last descriptor ends the chain */
			len += d[j].len;
			if (fwd_desc_last(&d[j]) || j + 1 == n)
				break;
		}
		if (cap->match.fields && !umem_steer__match_frame(&cap->match, p, d[i].len, len, cap->port_queue[port]))
			continue;
		caplen = len < cap->snaplen ? len : cap->snaplen;
		if (room < sizeof(struct fwd_pcap_record) + caplen) {
			dropped++;
			continue;
		}
		if (cap->limit) {
			uint64_t t = atomic_fetch_add_explicit(&cap->taken, 1, memory_order_relaxed);

			if (t >= cap->limit) { /* another worker's frame was the last */
				atomic_store_explicit(&cap->over, true, memory_order_relaxed);
				break;
			}
			last = t + 1 == cap->limit;
		}
		if (!ts.tv_sec) /* one clock read per burst: its frames left together */
			clock_gettime(CLOCK_REALTIME, &ts);
		struct fwd_pcap_record rec = { .ts_sec = (uint32_t)ts.tv_sec, .ts_nsec = (uint32_t)ts.tv_nsec,
					       .caplen = caplen, .len = len };

		ring_put(r, tail, &rec, sizeof(rec));
		tail += sizeof(rec);
		for (uint32_t k = i, left = caplen; left; k++) {
			uint32_t m = d[k].len < left ? d[k].len : left;

			ring_put(r, tail, umem_area__ptr(cap->area, d[k].addr), m);
			tail += m;
			left -= m;
		}
		room -= sizeof(rec) + caplen;
		captured++;
		bytes += caplen;
		if (last) { /* over now: no frame after it counts as dropped from the capture */
			atomic_store_explicit(&cap->over, true, memory_order_relaxed);
			break;
		}
	}
	/* Release: pairs with the writer's acquire of tail; the records are complete. */
	atomic_store_explicit(&r->tail, tail, memory_order_release);
	/* A ring a quarter full wakes a sleeping writer: the rest is its slack for waking up. */
	if (ring_quarter_full(r)) {
		atomic_thread_fence(memory_order_seq_cst); /* pairs with the writer's */
		if (atomic_load_explicit(&cap->sleeping, memory_order_relaxed))
			wake_writer(cap);
	}
	if (captured) {
		fwd_count(&r->captured, captured);
		fwd_count(&r->bytes, bytes);
	}
	if (dropped)
		fwd_count(&r->dropped, dropped);
}

/* The length of the record at ring position at (its bytes the writer's: not yet released). */
static uint64_t ring_record_len(const struct cap_ring *r, uint64_t at)
{
	struct fwd_pcap_record rec;
	uint64_t off = at & r->mask, first = r->mask + 1 - off;

	if (first >= sizeof(rec)) {
		memcpy(&rec, r->buf + off, sizeof(rec));
	} else {
		memcpy(&rec, r->buf + off, first);
		memcpy((uint8_t *)&rec + first, r->buf, sizeof(rec) - first);
	}
	return sizeof(rec) + rec.caplen;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The file takes no more now (a FIFO whose reader is behind): waits until it does, or, once
 * stopping, until CAP_STALL_MS pass without it (returns false then). */
static bool wait_writable(struct fwd_capture *cap)
{
	struct pollfd pfd[2] = { { .fd = cap->fd, .events = POLLOUT }, { .fd = cap->wake_fd, .events = POLLIN } };
	uint64_t deadline = 0, v;

	for (;;) {
		bool stopping = atomic_load(&cap->stop);
		int timeout = -1, n;

		if (stopping) {
			uint64_t now = now_ms();

			if (!deadline)
				deadline = now + CAP_STALL_MS;
			if (now >= deadline)
				return false;
			timeout = (int)(deadline - now);
		}
		/* Also woken by the stop (fwd_capture_stop), so that its time limit starts. */
		n = poll(pfd, stopping ? 1 : 2, timeout);
		if (n < 0 && errno != EINTR)
			return true; /* the write names the problem */
		if (n > 0 && pfd[0].revents)
			return true; /* room, or an error (POLLERR: the reader is gone) the write names */
		if (n > 0 && (pfd[1].revents & POLLIN) && read(cap->wake_fd, &v, sizeof(v)) < 0)
			v = 0; /* EAGAIN: another wake took it */
	}
}

/* The capture is over (err): the file is cut back to its last whole record, so that it reads
 * to the end; a FIFO's reader is gone or stalled, and gets what it got. */
static void capture_failed(struct fwd_capture *cap, int err)
{
	if (err == ETIMEDOUT)
		fprintf(stderr, "xdp-fwd: --pcap %s: the reader has taken nothing for %d s since the stop; "
			"capture stopped\n", cap->path, CAP_STALL_MS / 1000);
	else
		fprintf(stderr, "xdp-fwd: --pcap %s: cannot write: %s; capture stopped (forwarding goes on)\n",
			cap->path, strerror(err));
	if (cap->regular && ftruncate(cap->fd, (off_t)cap->good))
		fprintf(stderr, "xdp-fwd: --pcap %s: cannot cut a record written in part: %s\n", cap->path,
			strerror(errno));
	atomic_store_explicit(&cap->error, err, memory_order_relaxed);
	atomic_store_explicit(&cap->over, true, memory_order_relaxed);
}

/* Writes what ring r holds to the file; returns the bytes moved. Frees the ring's bytes a
 * whole record at a time, so that the records not in the file after an error are in the ring
 * still, to be counted; after the error they are discarded (the capture is over). */
static uint64_t drain_ring(struct fwd_capture *cap, struct cap_ring *r)
{
	uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed), done = head, rec_end;
	/* Acquire: pairs with the worker's release of tail. */
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire), moved = tail - head;

	rec_end = head == tail ? tail : head + ring_record_len(r, head);
	while (head != tail && !atomic_load_explicit(&cap->error, memory_order_relaxed)) {
		uint64_t off = head & r->mask, len = tail - head;
		ssize_t w;

		if (len > r->mask + 1 - off)
			len = r->mask + 1 - off;
		w = write(cap->fd, r->buf + off, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			if (!wait_writable(cap))
				capture_failed(cap, ETIMEDOUT);
			continue;
		}
		if (w <= 0) {
			capture_failed(cap, w < 0 ? errno : EIO);
			break;
		}
		head += (uint64_t)w;
		/* The records now whole in the file (their headers not yet released: readable). */
		while (rec_end <= head) {
			cap->good += rec_end - done;
			done = rec_end;
			if (rec_end == tail)
				break;
			rec_end += ring_record_len(r, rec_end);
		}
		/* Release: pairs with the worker's acquire of head before it reuses the bytes. */
		atomic_store_explicit(&r->head, done, memory_order_release);
	}
	for (uint64_t at = done; at != tail; at += ring_record_len(r, at))
		cap->unwritten++; /* after an error: captured, not in the file */
	atomic_store_explicit(&r->head, tail, memory_order_release);
	return moved;
}

static bool any_quarter_full(const struct fwd_capture *cap)
{
	for (uint32_t k = 0; k < cap->nr_rings; k++)
		if (ring_quarter_full(&cap->ring[k]))
			return true;
	return false;
}

static void writer_sleep(struct fwd_capture *cap)
{
	struct pollfd pfd = { .fd = cap->wake_fd, .events = POLLIN };
	uint64_t v;

	atomic_store_explicit(&cap->sleeping, true, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst); /* pairs with the workers' */
	if (!any_quarter_full(cap) && !atomic_load(&cap->stop) &&
	    poll(&pfd, 1, CAP_WRITER_SLEEP_MS) > 0 && read(cap->wake_fd, &v, sizeof(v)) < 0)
		v = 0; /* EAGAIN: another wake took it */
	atomic_store_explicit(&cap->sleeping, false, memory_order_relaxed);
}

static void *writer_main(void *arg)
{
	struct fwd_capture *cap = arg;

	/* One pass, then a sleep until a ring is a quarter full (or 100 ms): large writes, and a
	 * writer that does not spin on a trickle of records, on CPUs the traffic needs. */
	for (;;) {
		/* Read before the pass: a stop seen here comes after the workers' last records. */
		bool stopping = atomic_load(&cap->stop);
		uint64_t moved = 0;

		for (uint32_t k = 0; k < cap->nr_rings; k++)
			moved += drain_ring(cap, &cap->ring[k]);
		if (stopping && !moved)
			break;
		if (!stopping)
			writer_sleep(cap);
	}
	if (cap->unwritten)
		fprintf(stderr, "xdp-fwd: --pcap %s: %llu frame%s captured %s not in the file (the capture "
			"stopped first)\n", cap->path, (unsigned long long)cap->unwritten,
			cap->unwritten > 1 ? "s" : "", cap->unwritten > 1 ? "are" : "is");
	return NULL;
}

int fwd_capture_start(struct fwd_capture *cap)
{
	int err = pthread_create(&cap->writer, NULL, writer_main, cap);

	if (err) {
		fprintf(stderr, "xdp-fwd: --pcap: cannot start the writer thread: %s\n", strerror(err));
		return -err;
	}
	cap->started = true;
	pthread_setname_np(cap->writer, "xdp-fwd/pcap");
	return 0;
}

void fwd_capture_stop(struct fwd_capture *cap)
{
	if (!cap)
		return;
	if (cap->started) {
		atomic_store(&cap->stop, true);
		wake_writer(cap);
		pthread_join(cap->writer, NULL);
		cap->started = false;
	}
	if (cap->fd >= 0 && close(cap->fd) && !atomic_load(&cap->error)) {
		fprintf(stderr, "xdp-fwd: --pcap %s: %s\n", cap->path, strerror(errno));
		atomic_store(&cap->error, errno);
	}
	cap->fd = -1;
}

void fwd_capture_free(struct fwd_capture *cap)
{
	if (!cap)
		return;
	fwd_capture_stop(cap);
	for (uint32_t k = 0; k < FWD_MAX_WORKERS; k++)
		free(cap->ring[k].buf);
	close(cap->wake_fd);
	free(cap);
}

void fwd_capture_sample(const struct fwd_capture *cap, struct fwd_capture_sample *s)
{
	*s = (struct fwd_capture_sample){ 0 };
	for (uint32_t k = 0; cap && k < cap->nr_rings; k++) {
		s->captured += atomic_load_explicit(&cap->ring[k].captured, memory_order_relaxed);
		s->bytes += atomic_load_explicit(&cap->ring[k].bytes, memory_order_relaxed);
		s->dropped += atomic_load_explicit(&cap->ring[k].dropped, memory_order_relaxed);
	}
	if (!cap)
		return;
	s->limit_reached = cap->limit && atomic_load_explicit(&cap->taken, memory_order_relaxed) >= cap->limit;
	s->error = atomic_load_explicit(&cap->error, memory_order_relaxed);
}

const char *fwd_capture_path(const struct fwd_capture *cap)
{
	return cap->path;
}
