/* SPDX-License-Identifier: MIT */
/* xdp-fwd: configuration shared by the option parser, the workers and the stats printer. */
#ifndef XDP_FWD_H
#define XDP_FWD_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <umem/steer.h>

#define FWD_MAX_PORTS 64 /* e.g. 2 interfaces x 32 queues */
#define FWD_MAX_WORKERS 16
#define FWD_MAX_RULES 64
#define FWD_MAX_OPTIONS 64 /* options.c's table (a configuration file records by its index) */
#define FWD_CHUNK_DEFAULT 4096u /* above FWD_CHUNK_SMALL's MTU, and in unaligned mode */
/* The default where every port's MTU fits: two fragments of a 4 KiB page, half the UMEM. */
#define FWD_CHUNK_SMALL 2048u
#define FWD_MAX_BATCH 256u /* --batch's bound */

/* The modes: FWD_MODE_ID, its name as --mode takes it, the fewest interfaces it works with
 * (checked at start; wire's pairing has a rule of its own), why it cannot offload flows (NULL:
 * it can), the flags of its steering programs' tables (what they leave to the kernel), and its
 * room (mode_name.c defines the struct fwd_mode_ops fwd_mode_name, mode.h). A new mode is one
 * line here and its file. */
#define FWD_MODES(X)                                                                                     \
	X(WIRE, wire, 1, NULL, 0)    /* ports in pairs, 0<->1, 2<->3: a cable */                         \
	X(L2, l2, 2, NULL, 0)        /* learning bridge */                                                \
	X(REFLECT, reflect, 1, "it rewrites every frame", 0) /* swap MACs, back out of the input port */ \
	X(L3, l3, 2, NULL, UMEM_STEER_F_HOST_CONTROL | UMEM_STEER_F_ROUTER) /* IP router (mode_l3.c) */

#define FWD_MODE_ENUM(id, name, ...) FWD_MODE_##id,
enum fwd_mode {
	FWD_MODES(FWD_MODE_ENUM)
	FWD_MODE_COUNT
};
#undef FWD_MODE_ENUM

enum fwd_bind_mode {
	FWD_BIND_AUTO, /* zero-copy where the driver has it, else copy */
	FWD_BIND_ZEROCOPY,
	FWD_BIND_COPY,
};

enum fwd_profile {
	FWD_PROFILE_NONE,
	/* mvpp2 (Marvell Armada 7K/8K): copy mode (no AF_XDP zero-copy), 2 KiB chunks (the buffer
	 * manager's 1664-byte "long" class plus the XDP headroom), every RX queue of an interface
	 * (one per CPU) with a worker per queue, MTU at most 1500 (XDP needs its per-CPU pools,
	 * which have no jumbo class). docs/MVPP2.md. */
	FWD_PROFILE_MVPP2,
};

/* One -i as given: IFNAME, IFNAME@Q, IFNAME@A-B or IFNAME@all (all = true until resolved). */
struct fwd_if_spec {
	char ifname[IF_NAMESIZE];
	uint32_t first, last; /* queue range */
	bool all;
	bool from_all;    /* resolved from @all (live.c follows the queue count) */
	bool queue_given; /* '@' present (--profile mvpp2 turns a bare IFNAME into IFNAME@all) */
};

/* One port: a queue of an interface, after expanding the -i ranges. */
struct fwd_port_spec {
	char ifname[IF_NAMESIZE];
	uint32_t queue;
	uint32_t spec;  /* the -i it came from (0-based) */
	/* Ports of one group go to one worker: with queue ranges, queue q of both ports of a wire
	 * pair (or, in the other modes, queue q of every interface); else every port alone. */
	uint32_t group;
};

/* A port as an operator names it, IFNAME[@QUEUE] (xdp-fwdctl ports add/remove, a reload). */
struct fwd_port_name {
	char ifname[IF_NAMESIZE];
	uint32_t queue;
};

/* --latency: one choice between CPU time and the latency of a frame that finds the worker
 * idle (docs/XDP-FWD.md has what each costs). Saturated input never sleeps at any level. */
enum fwd_latency {
	FWD_LATENCY_SAVER,    /* short spins, within 1/16 of the working time */
	FWD_LATENCY_BALANCED, /* the default: spins sized from the gaps between frames */
	FWD_LATENCY_LOW,      /* long spins, and idle CPUs poll instead of halting */
	FWD_LATENCY_MAX
};

struct fwd_config {
	struct fwd_if_spec specs[FWD_MAX_PORTS];
	uint32_t nr_specs;
	struct fwd_port_spec ports[FWD_MAX_PORTS];
	uint32_t nr_ports;
	uint32_t nr_groups;
	uint32_t spare_ports; /* room in the area for ports -i IFNAME@all may add (check_system) */
	bool queue_ranges;    /* some -i has several queues: groups are queues, not ports */
	enum fwd_mode mode;
	enum fwd_bind_mode bind;
	uint32_t xdp_attach;  /* enum umem_port_xdp_attach (= enum umem_steer_mode): --xdp-mode */
	enum fwd_profile profile;
	uint32_t batch;       /* descriptors per burst */
	uint32_t rx_ring, tx_ring, fill_ring, comp_ring; /* 0: the port library's default */
	uint32_t chunk_size;  /* 0: FWD_CHUNK_SMALL or FWD_CHUNK_DEFAULT, by MTU (check_system) */
	uint32_t frames;      /* UMEM frames (chunks) in the shared area; 0: sized from the rings */
	bool unaligned;
	bool hugepages;
	bool need_wakeup;
	bool multi_buffer;    /* XDP_USE_SG: frames larger than a chunk */
	bool csum_complete;   /* complete partial TCP/UDP checksums (csum.h) */
	uint32_t busy_poll_usecs;  /* 0: no busy polling */
	uint32_t busy_poll_budget; /* 0: the batch size */
	enum fwd_latency latency;  /* --latency: the idle policy and the CPU latency request */
	bool latency_given;
	/* Deprecated --idle-spin USECS: a fixed spin window instead of the level's policy. */
	bool idle_spin_given;
	bool idle_spin_auto;       /* --idle-spin auto: the default level */
	uint32_t idle_spin_usecs;
	bool cpu_latency;          /* hold a CPU latency request while running (sys.h) */
	bool cpu_latency_given;    /* deprecated --cpu-latency: instead of the level's */
	uint32_t cpu_latency_usecs;
	uint32_t workers;
	int cpus[FWD_MAX_WORKERS]; /* pin worker k to cpus[k] when nr_cpus > k */
	uint32_t nr_cpus;
	/* Steering rules (text as given, and parsed): with any, the steering program replaces the
	 * ports' default program; "sock N" names the port on queue N of each interface. */
	const char *rule_text[FWD_MAX_RULES];
	struct umem_steer_rule rules[FWD_MAX_RULES];
	uint32_t nr_rules;
	double duration;      /* seconds; 0: until a signal */
	uint64_t count;       /* stop after this many forwarded frames; 0: no limit */
	double interval;      /* seconds between stats lines */
	uint32_t l2_aging;    /* seconds a learned MAC stays valid */
	uint32_t l2_size;     /* MAC table slots (power of two) */
	uint16_t group_fwd_mask; /* l2: reserved group addresses forwarded (l2_classify) */
	uint32_t route_table;    /* l3: the kernel routing table mirrored (--table; 254 main) */
	uint32_t offload_after; /* frames of a flow through userspace before it is offloaded; 0 off */
	uint32_t offload_idle;  /* seconds without a frame before an offloaded flow is removed */
	uint32_t offload_max;   /* flows per interface; 0: the table's size */
	/* --pcap: the frames xdp-fwd transmits to a pcap file (capture.h); NULL: off. The filter's
	 * match (fields 0: any frame) and its "dev" interfaces (none: every port). */
	const char *pcap_path;
	const char *pcap_filter;
	struct umem_steer_match pcap_match;
	char pcap_dev[FWD_MAX_PORTS][IF_NAMESIZE];
	uint32_t nr_pcap_devs;
	uint32_t pcap_snaplen;    /* bytes kept of each frame */
	uint64_t pcap_count;      /* stop capturing after this many frames; 0: no limit */
	uint32_t pcap_buffer_kib; /* ring per worker */
	bool json;
	bool json_totals; /* --json interval objects count from the start */
	bool quiet;
	const char *metrics_addr; /* --metrics [ADDR:]PORT (metrics.h); NULL: off */
	const char *metrics_file; /* --metrics-file PATH; NULL: off */
	/* --control PATH (control.h): NULL, the default path (ctl.h); "none": off. */
	const char *control_path;
	const char *control_group; /* --control-group NAME: the socket is 0660, that group's */
	/* Interfaces deleted and back, MTU raised beyond a chunk: ports reopened (keeps the set-up
	 * capabilities in the permitted set). */
	bool reattach;
	/* --pinned DIR: the steering program a privileged step pinned in DIR/IFNAME, opened
	 * through its pins (no program loaded or attached); NULL: xdp-fwd attaches its own. */
	const char *pinned;
	/* --takeover: the xdp-fwd on the control socket hands its interfaces over (handover.h). */
	bool takeover;
	/* --config FILE (options.c). Its values point into its text, which stays for the run; a
	 * reload copies what it applies (reload.c: rule_text then points into rule_store, which the
	 * next one replaces) and frees the text it read, so memory stays flat. given[i]:
	 * the file's values of option i, one per line (NULL: none); on_cmdline[i]: the command line
	 * set it (and overrides the file). */
	const char *config_path;
	struct fwd_text *texts;
	char *rule_store;
	char *given[FWD_MAX_OPTIONS];
	bool on_cmdline[FWD_MAX_OPTIONS];
	bool cmdline;                    /* parsing argv: its first -i (--rule) replaces the file's */
	bool cmd_interface, cmd_rule;
};

/* Rules, offload and the router (what stays with the kernel) need the steering program in
 * front of the sockets; so do pinned programs (its socket map is the one there is). */
static inline bool fwd_wants_steering(const struct fwd_config *cfg)
{
	/* --takeover: the steering program is what the next takeover keeps attached. */
	return cfg->nr_rules || cfg->offload_after || cfg->mode == FWD_MODE_L3 || cfg->pinned || cfg->takeover;
}

/* The worker's idle policy (umem_idle) and CPU latency request of cfg's --latency level, or
 * of the deprecated --idle-spin and --cpu-latency where given. */
struct umem_idle_opts;
void fwd_latency_idle_opts(const struct fwd_config *cfg, struct umem_idle_opts *o);
extern const char *const fwd_latency_names[FWD_LATENCY_MAX];
/* Why the running cfg cannot move to level live (NULL: it can: its idle policy changes only). */
const char *fwd_latency_fixed(const struct fwd_config *cfg, enum fwd_latency level);
/* Warnings for the deprecated options cfg has (what replaced them), one line each. */
void fwd_warn_deprecated(const struct fwd_config *cfg, FILE *out);

/* options.c */
void fwd_config_defaults(struct fwd_config *cfg);
/* Parses argv into cfg. Returns 0 to run, 1 when --help/--version printed (exit 0), -1 on a
 * bad argument (err holds the message, exit non-zero). Checks counts, ranges, duplicates and
 * pairing rules; the only system state it reads is the queue count of IFNAME@all. */
int fwd_parse_args(struct fwd_config *cfg, int argc, char **argv, char *err, size_t errlen);
void fwd_usage(FILE *out);
/* What fwd_parse_args allocated for --config (its texts and given values), and the rule texts
 * a reload applied. */
void fwd_config_free(struct fwd_config *cfg);
/* The option table, for a reload's difference: how many, and option i's long name. */
size_t fwd_option_count(void);
const char *fwd_option_name(size_t i);
/* True when an interface with this MTU sends frames larger than one RX chunk holds. */
bool fwd_mtu_needs_multi_buffer(const struct fwd_config *cfg, uint32_t mtu);
/* The chunk size xdp-fwd takes without --chunk-size for ports of at most max_mtu (0: unknown). */
uint32_t fwd_default_chunk(const struct fwd_config *cfg, uint32_t max_mtu);
/* The 4 KiB pages that `frames` RX buffers take (whole chunks; unaligned, a page each or
 * fragments). */
uint64_t fwd_frame_pages(const struct fwd_config *cfg, uint64_t frames);
/* How IFNAME@all learns the queue count (umem_netdev__queue_count; tests replace it). */
extern int (*fwd_queue_count)(const char *ifname);
const char *fwd_mode_name(enum fwd_mode mode);
/* The table flags of the mode's steering programs (FWD_MODES). */
uint32_t fwd_mode_steer_flags(enum fwd_mode mode);
/* The fewest interfaces the mode works with (FWD_MODES). */
uint32_t fwd_mode_min_ifaces(enum fwd_mode mode);
/* Parses a --pcap-filter (capture.h): words of the rule language's match ("udp dport 53",
 * "vlan 10 ipv6", "any") and "dev IFNAME" (frames sent on that interface; repeat for several).
 * Returns 0, or -1 with a message in err. */
int fwd_pcap_filter_parse(struct fwd_config *cfg, const char *text, char *err, size_t errlen);
/* --metrics [ADDR:]PORT: ADDR an IPv4 address or an IPv6 one in brackets, default 0.0.0.0.
 * 0, or -1 when it is not one. */
int fwd_parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *len);
/* Parses a CPU list such as "0,2-3" into cpus (at most max); returns the count or -1. */
int fwd_parse_cpu_list(const char *s, int *cpus, uint32_t max);

/* rules.c */
/* The rule that sends ARP requests to the kernel (action pass, first in the program's order to
 * match them), or -1. */
int fwd_rule_passing_arp(const struct fwd_config *cfg);
/* Warns on out, per interface without an IPv4 address, when a rule hands ARP to its kernel:
 * nothing answers, and hosts across the forwarder stop resolving each other. Returns the
 * number of warnings. */
int fwd_warn_rules(const struct fwd_config *cfg, FILE *out);
/* Whether ifname has an IPv4 address: 1, 0, or -1 (getifaddrs failed); tests replace it. */
extern int (*fwd_if_has_ipv4)(const char *ifname);

#endif
