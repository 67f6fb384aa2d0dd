/* SPDX-License-Identifier: MIT */
/*
 * xsk-gen: UDP traffic generator and sink on libumem ports.
 *
 *   xsk-gen gen  -i eth0 [--dst-ip A] [--size N | --mix M] [--rate PPS] [--duration S | --count N]
 *   xsk-gen sink -i eth0 [--duration S] [--idle S] [--count N]
 *
 * gen builds each frame in a fragment of its pool (umem_pool__alloc_frag: many small frames per
 * page), writing every byte, and queues it on its port's TX ring; the completion returns the
 * fragment. sink receives through the steering program (only the generator's UDP port; ARP and
 * everything else still reach the kernel), checks every frame (checksums, fill pattern) and
 * accounts sequence numbers: loss, reordering, duplicates. Both report text or JSON.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <umem/umem.h>

#include "cli.h"
#include "gen.h"
#include "mtu.h"

#define BATCH_MAX 256u
#define RX_RING_DEFAULT 2048u /* the sink's, without --rx-ring */
#define CHUNK 4096u
#define SINK_CHUNK_SMALL 2048u

struct config {
	bool sink;
	const char *ifname;
	uint32_t queue, batch;
	uint32_t rx_ring; /* sink: its RX ring (the fill ring twice that); 0: RX_RING_DEFAULT */
	struct gen_mix mix;
	uint64_t rate, count;
	double duration, idle;
	struct gen_flow flow;
	bool have_src_mac, have_dst_mac, have_src_ip, have_dst_ip;
	uint32_t stream;
	uint64_t first_seq;
	bool json;
	const char *size_text, *mix_text; /* as given: one of them makes the mix */
	uint32_t xdp_mode; /* enum umem_steer_mode: the sink's steering program */
	const char *xskmap; /* sink: a pinned XSKMAP that steers instead (umem_port_opts.xskmap_pin) */
};

static uint32_t rx_ring(const struct config *cfg)
{
	return cfg->rx_ring ? cfg->rx_ring : RX_RING_DEFAULT;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int set_mac(const char *opt, const char *arg, uint8_t mac[6], char *err, size_t errlen)
{
	unsigned v[6];
	char tail;

	if (sscanf(arg, "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6)
		return cli_fail(err, errlen, "--%s: '%s' is not a MAC address (XX:XX:XX:XX:XX:XX)", opt, arg);
	for (int i = 0; i < 6; i++) {
		if (v[i] > 0xff)
			return cli_fail(err, errlen, "--%s: '%s' is not a MAC address", opt, arg);
		mac[i] = (uint8_t)v[i];
	}
	return 0;
}

static int set_ip(const char *opt, const char *arg, uint32_t *ip, char *err, size_t errlen)
{
	struct in_addr a;

	if (inet_pton(AF_INET, arg, &a) != 1)
		return cli_fail(err, errlen, "--%s: '%s' is not an IPv4 address", opt, arg);
	*ip = a.s_addr;
	return 0;
}

static int set_src_mac(void *v, const char *arg, char *err, size_t errlen)
{
	struct config *cfg = v;

	cfg->have_src_mac = true;
	return set_mac("src-mac", arg, cfg->flow.src_mac, err, errlen);
}

static int set_dst_mac(void *v, const char *arg, char *err, size_t errlen)
{
	struct config *cfg = v;

	cfg->have_dst_mac = true;
	return set_mac("dst-mac", arg, cfg->flow.dst_mac, err, errlen);
}

static int set_src_ip(void *v, const char *arg, char *err, size_t errlen)
{
	struct config *cfg = v;

	cfg->have_src_ip = true;
	return set_ip("src-ip", arg, &cfg->flow.src_ip, err, errlen);
}

static int set_dst_ip(void *v, const char *arg, char *err, size_t errlen)
{
	struct config *cfg = v;

	cfg->have_dst_ip = true;
	return set_ip("dst-ip", arg, &cfg->flow.dst_ip, err, errlen);
}

static int set_xdp_mode(void *v, const char *arg, char *err, size_t errlen)
{
	return cli_parse_xdp_mode(arg, &((struct config *)v)->xdp_mode, err, errlen);
}

static int set_port(const char *opt, const char *arg, uint16_t *port, char *err, size_t errlen)
{
	uint32_t v;

	if (cli_parse_u32(opt, arg, 1, 65535, &v, err, errlen))
		return -1;
	*port = (uint16_t)v;
	return 0;
}

static int set_sport(void *v, const char *arg, char *err, size_t errlen)
{
	return set_port("sport", arg, &((struct config *)v)->flow.src_port, err, errlen);
}

static int set_dport(void *v, const char *arg, char *err, size_t errlen)
{
	return set_port("dport", arg, &((struct config *)v)->flow.dst_port, err, errlen);
}

#define CFG struct config

static const struct cli_opt opts[] = {
	{ "interface", 'i', "IFNAME", "interface to send on / receive from (required)", CLI_STRING_AT(CFG, ifname, IF_NAMESIZE - 1) },
	{ "queue", 'q', "N", "queue (default 0)", CLI_U32_AT(CFG, queue, 0, 1023) },
	{ "xskmap", 0, "PIN", "sink: attach nothing; receive through the pinned XSKMAP PIN (index: the queue), steered by whoever pinned it", CLI_STRING_AT(CFG, xskmap, 4000) },
	{ "size", 's', "BYTES", "gen: frame size without FCS, " GEN_FRAME_RANGE " (default 64)", CLI_STRING_AT(CFG, size_text, 0) },
	{ "mix", 0, "MIX", "gen: size mix SIZE:WEIGHT,... or imix (64:7,576:4,1500:1)", CLI_STRING_AT(CFG, mix_text, 0) },
	{ "rate", 0, "PPS", "gen: frames per second (default 0: full speed)", CLI_U64_AT(CFG, rate, 0, 1000000000) },
	{ "duration", 'd', "SECS", "seconds to run (gen default 5; 0: until --count or a signal)", CLI_SECONDS_AT(CFG, duration, 0, 1e6) },
	{ "count", 'n', "N", "gen: frames to send; sink: stop after N frames", CLI_U64_AT(CFG, count, 1, UINT64_MAX) },
	{ "idle", 0, "SECS", "sink: stop SECS seconds after the last frame (once one came)", CLI_SECONDS_AT(CFG, idle, 0, 1e6) },
	{ "src-mac", 0, "MAC", "gen: source MAC (default: the interface's)", CLI_SET(set_src_mac) },
	{ "dst-mac", 0, "MAC", "gen: destination MAC (default: ARP for --dst-ip)", CLI_SET(set_dst_mac) },
	{ "src-ip", 0, "IP", "gen: source IPv4 (default: the interface's)", CLI_SET(set_src_ip) },
	{ "dst-ip", 0, "IP", "gen: destination IPv4 (default: the interface's only neighbour)", CLI_SET(set_dst_ip) },
	{ "sport", 0, "PORT", "gen: UDP source port (default 9090)", CLI_SET(set_sport) },
	{ "flows", 0, "N", "gen: N flows, source ports --sport on (default 1)", CLI_U32_AT(CFG, flow.nr_flows, 1, 65535) },
	{ "flow-frames", 0, "K", "gen: with --flows, K frames of a flow in a row (default 1)", CLI_U32_AT(CFG, flow.flow_frames, 1, UINT32_MAX) },
	{ "dport", 0, "PORT", "UDP destination port the sink takes (default 9091)", CLI_SET(set_dport) },
	{ "stream", 0, "ID", "gen: stream id in every frame (default: from pid and time)", CLI_U32_AT(CFG, stream, 0, UINT32_MAX) },
	{ "seq", 0, "N", "gen: first sequence number (default 0; to continue or replay a stream)", CLI_U64_AT(CFG, first_seq, 0, UINT64_MAX / 2) },
	{ "batch", 'b', "N", "descriptors per burst, 1..256 (default 64)", CLI_U32_AT(CFG, batch, 1, BATCH_MAX) },
	{ "rx-ring", 0, "N", "sink: RX ring size, a power of two, 64..32768 (default 2048; the fill ring twice that)", CLI_U32_AT(CFG, rx_ring, 64, 32768) },
	{ "xdp-mode", 0, "MODE", "sink: " CLI_XDP_MODE_HELP, CLI_SET(set_xdp_mode) },
	{ "json", 'j', NULL, "print the report as one JSON object", CLI_FLAG_AT(CFG, json, true) },
};

static const struct cli_prog cli = {
	.name = "xsk-gen",
	.synopsis = "gen -i IFNAME [OPTIONS]\nsink -i IFNAME [OPTIONS]",
	.summary = "gen sends numbered UDP frames through an AF_XDP port; sink receives them, checks "
		   "every byte and counts loss and reordering. Needs root (see xsk-gen(8)).",
	CLI_OPTS(opts),
};

static void parse_args(struct config *cfg, int argc, char **argv)
{
	char err[160];
	int next;

	*cfg = (struct config){ .batch = 64, .duration = -1 };
	cfg->flow.src_port = 9090;
	cfg->flow.dst_port = 9091;
	cfg->stream = (uint32_t)getpid() * 2654435761u ^ (uint32_t)time(NULL);

	/* The mode comes first; without one, only --help and --version make sense. */
	if (argc < 2 || (strcmp(argv[1], "gen") && strcmp(argv[1], "sink"))) {
		cli_parse_or_exit(&cli, cfg, argc, argv, 1);
		cli_die(&cli, "the first argument is the mode: gen or sink");
	}
	cfg->sink = !strcmp(argv[1], "sink");
	next = cli_parse_or_exit(&cli, cfg, argc, argv, 2);
	if (next < argc)
		cli_die(&cli, "unexpected argument '%s'", argv[next]);
	if (!cfg->ifname)
		cli_die(&cli, "-i IFNAME is required");
	if (cfg->flow.nr_flows > 1 && cfg->flow.src_port + cfg->flow.nr_flows - 1 > 65535)
		cli_die(&cli, "--flows %u from --sport %u: source ports beyond 65535", cfg->flow.nr_flows,
			cfg->flow.src_port);
	if (cfg->size_text && cfg->mix_text)
		cli_die(&cli, "--size and --mix exclude each other");
	if (cfg->size_text) {
		uint32_t size;

		/* One size is a mix of one, but its message is about --size. */
		if (cli_parse_u32("size", cfg->size_text, GEN_FRAME_MIN, GEN_FRAME_MAX, &size, err, sizeof(err)))
			cli_die(&cli, "%s", err);
	}
	if (gen_mix_parse(&cfg->mix, cfg->mix_text ? cfg->mix_text : cfg->size_text ? cfg->size_text : "64",
			  GEN_FRAME_MAX, err, sizeof(err)))
		cli_die(&cli, "--mix: %s", err);
	if (cfg->sink && (cfg->size_text || cfg->mix_text || cfg->rate || cfg->have_src_mac || cfg->have_dst_mac ||
			  cfg->have_src_ip || cfg->have_dst_ip))
		cli_die(&cli, "sink takes no frame options (size, mix, rate, addresses)");
	if (!cfg->sink && cfg->idle > 0)
		cli_die(&cli, "--idle is a sink option");
	if (!cfg->sink && cfg->xdp_mode)
		cli_die(&cli, "--xdp-mode is a sink option (the generator attaches no XDP program)");
	if (cfg->sink && cfg->first_seq)
		cli_die(&cli, "--seq is a generator option");
	if (!cfg->sink && cfg->rx_ring)
		cli_die(&cli, "--rx-ring is a sink option");
	if (cfg->rx_ring & (cfg->rx_ring - 1))
		cli_die(&cli, "--rx-ring %u: not a power of two", cfg->rx_ring);
	if (cfg->duration < 0)
		cfg->duration = cfg->sink ? 0 : 5;
	if (!cfg->sink && !cfg->duration && !cfg->count)
		fprintf(stderr, "xsk-gen: no --duration or --count: sending until a signal\n");
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* --- addresses from the interface and the neighbour table --- */

/* One SIOCGIF* request on ifname; 0 or -errno. */
static int iface_ioctl(const char *ifname, unsigned long req, struct ifreq *ifr)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err;

	if (fd < 0)
		return -errno;
	memset(ifr, 0, sizeof(*ifr));
	snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", ifname);
	err = ioctl(fd, req, ifr) ? -errno : 0;
	close(fd);
	return err;
}

static int iface_ip(const char *ifname, uint32_t *ip)
{
	struct ifaddrs *list, *a;
	int err = -ENOENT;

	if (getifaddrs(&list))
		return -errno;
	for (a = list; a; a = a->ifa_next) {
		if (a->ifa_addr && a->ifa_addr->sa_family == AF_INET && !strcmp(a->ifa_name, ifname)) {
			struct sockaddr_in sin;

			memcpy(&sin, a->ifa_addr, sizeof(sin));
			*ip = sin.sin_addr.s_addr;
			err = 0;
			break;
		}
	}
	freeifaddrs(list);
	return err;
}

/* Complete IPv4 neighbours of ifname in /proc/net/arp. With want != 0 looks that address up;
 * with want == 0 reports the only neighbour. Returns how many entries matched. */
static int arp_lookup(const char *ifname, uint32_t want, uint32_t *ip, uint8_t mac[6])
{
	char line[256], ipstr[64], hw[64], dev[64];
	unsigned type, flags;
	int found = 0;
	FILE *f = fopen("/proc/net/arp", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		struct in_addr a;

		if (sscanf(line, "%63s 0x%x 0x%x %63s %*s %63s", ipstr, &type, &flags, hw, dev) != 5 ||
		    strcmp(dev, ifname) || !(flags & 0x2) /* ATF_COM: resolved */ ||
		    inet_pton(AF_INET, ipstr, &a) != 1 || (want && a.s_addr != want))
			continue;
		if (!found++) {
			unsigned v[6];

			*ip = a.s_addr;
			if (sscanf(hw, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) == 6)
				for (int i = 0; i < 6; i++)
					mac[i] = (uint8_t)v[i];
		}
	}
	fclose(f);
	return found;
}

/* Asks the kernel to resolve dst (one empty datagram to the discard port) and waits up to 2 s
 * for the neighbour entry. Done before the port exists: its XDP program would take the reply. */
static int resolve_mac(const char *ifname, uint32_t dst, uint8_t mac[6])
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = dst };
	uint32_t ip;
	double end = now_s() + 2;
	int fd;

	if (arp_lookup(ifname, dst, &ip, mac))
		return 0;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)strlen(ifname) + 1);
	do {
		sendto(fd, "", 0, 0, (struct sockaddr *)&sin, sizeof(sin));
		struct timespec ts = { 0, 20 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		if (arp_lookup(ifname, dst, &ip, mac)) {
			close(fd);
			return 0;
		}
	} while (now_s() < end && !stop);
	close(fd);
	return -EHOSTUNREACH;
}

static void fill_addresses(struct config *cfg)
{
	struct gen_flow *fl = &cfg->flow;
	char a[INET_ADDRSTRLEN];
	struct ifreq ifr;
	uint8_t mac[6];
	int err;

	err = iface_ioctl(cfg->ifname, SIOCGIFMTU, &ifr);
	if (err)
		cli_die(&cli, "no interface '%s' here: %s", cfg->ifname, strerror(-err));
	/* The veth would drop larger frames silently. */
	for (uint32_t i = 0; i < cfg->mix.nr; i++)
		if (cfg->mix.size[i] > (uint32_t)ifr.ifr_mtu + GEN_ETH_LEN)
			cli_die(&cli, "frame size %u exceeds %s's MTU %d + %u bytes of Ethernet header",
				cfg->mix.size[i], cfg->ifname, ifr.ifr_mtu, GEN_ETH_LEN);
	if (!cfg->have_src_mac) {
		err = iface_ioctl(cfg->ifname, SIOCGIFHWADDR, &ifr);
		if (err)
			cli_die(&cli, "cannot read %s's MAC address: %s; give --src-mac", cfg->ifname,
				strerror(-err));
		memcpy(fl->src_mac, ifr.ifr_hwaddr.sa_data, 6);
	}
	if (!cfg->have_src_ip && iface_ip(cfg->ifname, &fl->src_ip))
		cli_die(&cli, "%s has no IPv4 address; give --src-ip", cfg->ifname);
	if (!cfg->have_dst_ip) {
		int n = arp_lookup(cfg->ifname, 0, &fl->dst_ip, mac);

		if (n != 1)
			cli_die(&cli, "%s has %d resolved neighbours, not exactly one; give --dst-ip", cfg->ifname, n);
	}
	if (!cfg->have_dst_mac && resolve_mac(cfg->ifname, fl->dst_ip, fl->dst_mac))
		cli_die(&cli, "no ARP answer for %s on %s; give --dst-mac",
			inet_ntop(AF_INET, &fl->dst_ip, a, sizeof(a)), cfg->ifname);
}

/* --- the port --- */

struct world {
	struct umem_area *area;
	struct umem_pool *pool;
	struct umem_port *port;
	struct umem_steer *steer;
};

/* The sink's chunk: 2 KiB when a frame of its interface's MTU fits one (mtu_fits_chunk, the
 * rule xdp-fwd's chunks follow; the sink asks for no UMEM headroom of its own), else 4 KiB.
 * The kernel copies each frame into the UMEM on the CPU that sent it (a forwarder's, on a
 * veth), through its own mapping of the UMEM's 4 KiB pages: across a deep ring two frames to
 * a page about halved that copy's time (docs/BENCHMARKS.md). The MTU is read once, at start.
 * An interface that cannot be read gets 4 KiB, and the port's creation names the problem. */
static uint32_t sink_chunk(const char *ifname)
{
	struct ifreq ifr;

	if (iface_ioctl(ifname, SIOCGIFMTU, &ifr) || ifr.ifr_mtu < 0 ||
	    !mtu_fits_chunk((uint32_t)ifr.ifr_mtu, SINK_CHUNK_SMALL))
		return CHUNK;
	return SINK_CHUNK_SMALL;
}

static int world_open(struct world *w, const struct config *cfg)
{
	/* The sink's chunks are unaligned: the kernel then takes each RX buffer's head from those
	 * it freed last, where aligned chunks have a head each, cold across a deep fill ring. */
	UMEM_OPTS(umem_area_opts, ao, .chunk_size = cfg->sink ? 0 : CHUNK);
	/* The generator barely receives and the sink barely sends: small rings on the idle side. */
	UMEM_OPTS(umem_port_opts, po, .rx_size = cfg->sink ? rx_ring(cfg) : 64, .tx_size = cfg->sink ? 64 : 2048,
		  .chunk_size = cfg->sink ? sink_chunk(cfg->ifname) : 0,
		  .xdp_prog = UMEM_PORT_PROG_NONE, .xskmap_pin = cfg->sink ? cfg->xskmap : NULL);
	struct umem_steer_action pass = { .type = UMEM_STEER_A_PASS };
	UMEM_OPTS(umem_steer_opts, so, .default_action = &pass, .mode = cfg->xdp_mode);
	struct umem_steer_rule rule;
	char text[64];
	int err;
	int64_t pages = umem_port__pages_needed(1, 0, &ao, &po);

	*w = (struct world){ 0 };
	if (pages < 0)
		return (int)pages;
	w->area = umem_area__create((uint32_t)pages, &ao);
	if (!w->area || !(w->pool = umem_pool__create(w->area, NULL)))
		return -errno;
	/* No default program: the generator's host keeps its replies and ARP; the sink steers. */
	w->port = umem_port__create(w->area, w->pool, cfg->ifname, cfg->queue, &po);
	if (!w->port)
		return -errno;
	if (!cfg->sink || cfg->xskmap)
		return 0;
	/* The sink takes only the generator's UDP port, so its host still answers ARP. */
	w->steer = umem_steer__attach(cfg->ifname, &so);
	if (!w->steer)
		return -errno;
	snprintf(text, sizeof(text), "udp dport %u -> sock 0", cfg->flow.dst_port);
	err = umem_steer_rule__parse(text, &rule);
	if (!err)
		err = umem_steer__add_rule(w->steer, &rule);
	if (!err)
		err = umem_steer__set_socket(w->steer, 0, umem_port__fd(w->port));
	return err;
}

/* Returns the pages still out (0 when every frame came back). */
static int world_close(struct world *w)
{
	int out = 0;

	umem_steer__detach(w->steer);
	umem_port__destroy(w->port);
	if (w->pool)
		out = umem_pool__destroy(w->pool);
	if (w->area)
		umem_area__destroy(w->area);
	return out;
}

/* --- reports --- */

struct report {
	const char *mode;
	double seconds;        /* measured window */
	uint64_t frames, bytes;
	uint64_t lost, reordered, duplicates, bad, foreign, other_stream, expected;
	uint32_t stream;
	uint32_t chunk;        /* the port's chunk size */
	int frames_out;
	const char *port_mode; /* copy / zero-copy */
	struct umem_port_stats ps;
};

static void print_report(const struct config *cfg, const struct report *r)
{
	double pps = r->seconds > 0 ? (double)r->frames / r->seconds : 0;
	double bps = r->seconds > 0 ? (double)r->bytes * 8 / r->seconds : 0;
	double loss = r->expected ? 100.0 * (double)r->lost / (double)r->expected : 0;

	if (cfg->json) {
		printf("{\"tool\":\"xsk-gen\",\"mode\":\"%s\",\"interface\":\"%s\",\"queue\":%u,"
		       "\"stream\":%u,\"seconds\":%.6f,\"frames\":%llu,\"bytes\":%llu,\"pps\":%.1f,"
		       "\"bps\":%.1f,\"mean_frame\":%.1f,", r->mode, cfg->ifname, cfg->queue, r->stream,
		       r->seconds, (unsigned long long)r->frames, (unsigned long long)r->bytes, pps, bps,
		       r->frames ? (double)r->bytes / (double)r->frames : 0.0);
		if (cfg->sink)
			printf("\"expected\":%llu,\"lost\":%llu,\"loss_pct\":%.4f,\"reordered\":%llu,"
			       "\"duplicates\":%llu,\"bad\":%llu,\"foreign\":%llu,\"other_stream\":%llu,"
			       "\"rx_ring\":%u,\"chunk\":%u,",
			       (unsigned long long)r->expected, (unsigned long long)r->lost, loss,
			       (unsigned long long)r->reordered, (unsigned long long)r->duplicates,
			       (unsigned long long)r->bad, (unsigned long long)r->foreign,
			       (unsigned long long)r->other_stream, rx_ring(cfg), r->chunk);
		printf("\"port\":{\"mode\":\"%s\",\"rx_packets\":%llu,\"tx_packets\":%llu,"
		       "\"tx_ring_full\":%llu,\"completions\":%llu,\"rx_dropped\":%llu,"
		       "\"rx_ring_full\":%llu,\"rx_fill_ring_empty\":%llu},\"frames_out\":%d}\n",
		       r->port_mode,
		       (unsigned long long)r->ps.rx_packets, (unsigned long long)r->ps.tx_packets,
		       (unsigned long long)r->ps.tx_ring_full, (unsigned long long)r->ps.completions,
		       (unsigned long long)r->ps.rx_dropped, (unsigned long long)r->ps.rx_ring_full,
		       (unsigned long long)r->ps.rx_fill_ring_empty, r->frames_out);
		return;
	}
	printf("%s %s: %llu frames in %.3f s: %.3f Mpps, %.3f Gbit/s (mean frame %.0f B)\n", r->mode,
	       cfg->ifname, (unsigned long long)r->frames, r->seconds, pps / 1e6, bps / 1e9,
	       r->frames ? (double)r->bytes / (double)r->frames : 0.0);
	if (cfg->sink)
		printf("  stream %u: expected %llu, lost %llu (%.4f %%), reordered %llu, duplicates %llu, "
		       "bad %llu, foreign %llu, other streams %llu; socket drops %llu\n", r->stream,
		       (unsigned long long)r->expected, (unsigned long long)r->lost, loss,
		       (unsigned long long)r->reordered, (unsigned long long)r->duplicates,
		       (unsigned long long)r->bad, (unsigned long long)r->foreign,
		       (unsigned long long)r->other_stream,
		       (unsigned long long)(r->ps.rx_dropped + r->ps.rx_ring_full));
	printf("frames still out: %d\n", r->frames_out);
}

/* --- gen --- */

static bool time_up(const struct config *cfg, double start, double t)
{
	return stop || (cfg->duration > 0 && t - start >= cfg->duration);
}

static void run_gen(const struct config *cfg, struct world *w, struct report *r)
{
	struct umem_desc d[BATCH_MAX];
	uint32_t pending = 0, slot = 0;
	uint64_t seq = 0; /* frames numbered so far */
	double start = now_s(), t = start;

	while (!time_up(cfg, start, t) && (!cfg->count || seq < cfg->count || pending)) {
		uint64_t want = cfg->batch;
		int sent;

		if (cfg->rate) {
			/* Frames due by now, minus those already numbered. */
			uint64_t due = (uint64_t)((t - start) * (double)cfg->rate) + 1;

			want = due > seq ? due - seq : 0;
			if (want > cfg->batch)
				want = cfg->batch;
			if (!want && !pending) {
				double wait = ((double)(seq + 1) / (double)cfg->rate) - (t - start);
				/* Sleep when the next frame is far; spinning would take a CPU from the
				 * forwarder being measured. */
				if (wait > 50e-6) {
					struct timespec ts = { 0, (long)((wait - 20e-6) * 1e9) };

					nanosleep(&ts, NULL);
				}
			}
		}
		if (cfg->count && want > cfg->count - seq)
			want = cfg->count - seq;
		/* Frames kept from a full TX ring go first: their numbers are already taken. */
		for (; pending < want; pending++) {
			uint32_t len = cfg->mix.size[cfg->mix.schedule[slot]];

			if (umem_pool__alloc_frag(w->pool, len, &d[pending].addr, NULL))
				break; /* everything in flight: completions will return pages */
			gen_frame_build(umem_pool__ptr(w->pool, d[pending].addr), len, &cfg->flow,
					cfg->stream, cfg->first_seq + seq++);
			d[pending].len = len;
			d[pending].options = 0;
			slot = slot + 1 == cfg->mix.period ? 0 : slot + 1;
		}
		sent = pending ? umem_port__tx_burst(w->port, d, pending) : 0;
		if (sent < 0) {
			fprintf(stderr, "xsk-gen: tx_burst: %s\n", strerror(-sent));
			stop = 1;
			break;
		}
		for (int i = 0; i < sent; i++)
			r->bytes += d[i].len;
		r->frames += (uint64_t)sent;
		memmove(d, d + sent, (pending - (uint32_t)sent) * sizeof(d[0]));
		pending -= (uint32_t)sent;
		umem_port__service(w->port);
		t = now_s();
	}
	r->seconds = t - start;
	for (uint32_t i = 0; i < pending; i++)
		umem_pool__put(w->pool, d[i].addr);
	/* Let the kernel finish what is queued so every fragment comes home before teardown. */
	for (double end = now_s() + 1; now_s() < end;) {
		umem_port__stats(w->port, &r->ps);
		if (!r->ps.tx_inflight)
			break;
		umem_port__service(w->port);
	}
}

/* --- sink --- */

static void run_sink(const struct config *cfg, struct world *w, struct report *r)
{
	static struct gen_seq acc; /* 8 KiB window: not on the stack */
	struct umem_desc d[BATCH_MAX];
	struct pollfd pfd = { .fd = umem_port__fd(w->port), .events = POLLIN };
	uint64_t addrs[BATCH_MAX];
	double start = now_s(), t = start, first = 0, last = 0;
	bool locked = false;

	gen_seq_init(&acc);
	while (!time_up(cfg, start, t) && (!cfg->count || acc.received < cfg->count) &&
	       !(cfg->idle > 0 && last > 0 && t - last >= cfg->idle)) {
		int n = umem_port__rx_burst(w->port, d, cfg->batch);

		t = now_s();
		if (n <= 0) {
			poll(&pfd, 1, 10); /* idle: sleep rather than spin against the forwarder */
			t = now_s();
			continue;
		}
		if (!first)
			first = t;
		last = t;
		/* The kernel wrote these frames on another CPU: start each frame's first line on its way
		 * before the first parse waits on one. */
		for (int i = 0; i < n; i++)
			__builtin_prefetch(umem_pool__ptr(w->pool, d[i].addr));
		for (int i = 0; i < n; i++) {
			uint32_t stream;
			uint64_t seq;

			addrs[i] = d[i].addr;
			switch (gen_frame_parse(umem_pool__ptr(w->pool, d[i].addr), d[i].len,
						cfg->flow.dst_port, &stream, &seq)) {
			case GEN_PARSE_FOREIGN: r->foreign++; continue;
			case GEN_PARSE_BAD: r->bad++; continue;
			case GEN_PARSE_OK: break;
			}
			/* The first generator frame names the stream; a later run's frames are kept
			 * apart instead of looking like a restart. */
			if (!locked) {
				r->stream = stream;
				locked = true;
			}
			if (stream != r->stream) {
				r->other_stream++;
				continue;
			}
			gen_seq_account(&acc, seq);
			r->bytes += d[i].len;
		}
		umem_pool__put_bulk(w->pool, addrs, (uint32_t)n);
	}
	/* pps over first..last frame: the sink may wait long before the generator starts. */
	r->seconds = last - first;
	r->frames = acc.received;
	r->expected = acc.next;
	r->lost = acc.lost;
	r->reordered = acc.reordered;
	r->duplicates = acc.duplicates;
	umem_port__stats(w->port, &r->ps);
}

int main(int argc, char **argv)
{
	struct config cfg;
	struct world w;
	struct report r = { 0 };
	struct sigaction sa = { .sa_handler = on_signal };
	int err;

	parse_args(&cfg, argc, argv);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!cfg.sink)
		fill_addresses(&cfg);
	r.mode = cfg.sink ? "sink" : "gen";
	r.stream = cfg.sink ? 0 : cfg.stream; /* the sink names the stream it locks onto */
	r.ps.sz = sizeof(r.ps);
	err = world_open(&w, &cfg);
	if (err) {
		fprintf(stderr, "xsk-gen: cannot open an AF_XDP port on %s queue %u: %s\n", cfg.ifname,
			cfg.queue, strerror(-err));
		world_close(&w);
		return 1;
	}
	/* Scripts wait for this line before starting the other side. */
	fprintf(stderr, "xsk-gen: %s ready on %s queue %u\n", r.mode, cfg.ifname, cfg.queue);
	if (cfg.sink)
		run_sink(&cfg, &w, &r);
	else
		run_gen(&cfg, &w, &r);
	umem_port__stats(w.port, &r.ps);
	r.port_mode = umem_port__mode_str(umem_port__mode(w.port));
	r.chunk = umem_port__chunk_size(w.port);
	r.frames_out = world_close(&w);
	print_report(&cfg, &r);
	return r.frames_out ? 1 : 0;
}
