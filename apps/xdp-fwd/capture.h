/* SPDX-License-Identifier: MIT */
/*
 * xdp-fwd --pcap: the frames xdp-fwd transmits, written to a pcap file.
 *
 * XDP runs before the kernel's packet taps, so tcpdump on a port's interface no longer sees
 * what xdp-fwd forwards. Here each worker copies the frames it has just queued for TX (those
 * the filter takes) into a ring of its own, and one writer thread moves the rings to the file.
 * A worker never waits for the writer: a frame that does not fit in its ring is counted as
 * dropped from the capture (still forwarded). With --pcap off the worker's cost is one
 * predictable branch per TX burst (the context's capture pointer is NULL).
 *
 * The file is the classic pcap format (pcap-savefile(5); draft-ietf-opsawg-pcap) with
 * nanosecond timestamps (magic 0xa1b23c4d) and link type Ethernet; tcpdump -r, Wireshark and
 * scapy read it.
 */
#ifndef XDP_FWD_CAPTURE_H
#define XDP_FWD_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <umem/area.h>
#include <umem/port.h>
#include <umem/steer.h>

#include "fwd.h"
#include "stats.h"

#define FWD_PCAP_MAGIC_NS 0xa1b23c4du
#define FWD_PCAP_LINKTYPE_ETHERNET 1u
#define FWD_PCAP_SNAPLEN_DEFAULT 262144u /* tcpdump's: whole frames */
#define FWD_PCAP_BUFFER_DEFAULT 4096u    /* KiB of ring per worker */

/* The 24-byte file header and 16-byte record header (host byte order; the magic tells). */
struct fwd_pcap_file_header {
	uint32_t magic;
	uint16_t version_major, version_minor;
	int32_t thiszone;
	uint32_t sigfigs;
	uint32_t snaplen;
	uint32_t linktype;
};

struct fwd_pcap_record {
	uint32_t ts_sec, ts_nsec;
	uint32_t caplen, len;
};

struct fwd_capture;

/* Opens cfg->pcap_path (created or truncated) and writes the file header; the rings for
 * nr_workers workers. Before anything is attached: NULL and a message on stderr when the file
 * cannot be written. */
struct fwd_capture *fwd_capture_open(const struct fwd_config *cfg, uint32_t nr_workers);
/* Port i of cfg (set up, or added while the workers are parked: a queue that appeared). */
void fwd_capture_port(struct fwd_capture *cap, const struct fwd_config *cfg, uint32_t i);
/* The area the descriptors point into, and the output ports' queues (set-up). */
void fwd_capture_bind(struct fwd_capture *cap, struct umem_area *area);
/* Starts the writer thread. */
int fwd_capture_start(struct fwd_capture *cap);
/* Workers have stopped: writes what the rings hold, stops the writer, closes the file. */
void fwd_capture_stop(struct fwd_capture *cap);
void fwd_capture_free(struct fwd_capture *cap);
void fwd_capture_sample(const struct fwd_capture *cap, struct fwd_capture_sample *s);
const char *fwd_capture_path(const struct fwd_capture *cap);

/* Worker worker has queued d[0..n) (whole frames) for TX on port port: copies the frames the
 * filter takes. Call before the buffers can complete (they are the worker's until then). */
void fwd_capture_frames(struct fwd_capture *cap, uint32_t worker, uint32_t port, const struct umem_desc *d,
			uint32_t n);

#endif
