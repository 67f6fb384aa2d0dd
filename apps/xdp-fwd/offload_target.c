/* SPDX-License-Identifier: MIT */
/* --offload-after: the health of redirect targets: the delivery probe before the first flow,
 * the delivery checks by transmit and link counters, bad targets marked and probed again. */
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "offload.h"
#include "offload_internal.h"
#include "redirect_probe.skel.h"

struct tx_read {
	struct fwd_offload *off;
	uint32_t nr_ifaces;
	uint64_t *out, found; /* found: bit f, interface f was there */
	uint64_t *dropped;
};

static void tx_read_one(void *arg, const char *name, uint32_t ifindex, const struct rtnl_link_stats *st)
{
	struct tx_read *r = arg;

	(void)name;
	for (uint32_t f = 0; f < r->nr_ifaces; f++)
		if (r->off->ifc[f].ifindex && r->off->ifc[f].ifindex == ifindex) {
			r->out[f] = fwd_wide32_read(&r->off->ifc[f].tx_wide, st->tx_packets);
			r->dropped[f] = fwd_wide32_read(&r->off->ifc[f].dropped_wide, st->tx_dropped);
			r->found |= 1ull << f;
		}
}

uint64_t fwd_off_read_tx_packets(struct fwd_offload *off, uint32_t nr_ifaces, uint64_t *out, uint64_t *dropped)
{
	struct tx_read r = { off, nr_ifaces, out, 0, dropped };

	return fwd_each_link(tx_read_one, &r) ? 0 : r.found;
}

/* Frames the steering programs redirected towards interface f: with two interfaces, all that
 * the other one redirected (every flow there targets f). */
uint64_t fwd_off_redirected_to(struct fwd_ctx *ctx, uint32_t f)
{
	struct umem_steer_counter c[UMEM_STEER_FS_NR];
	uint64_t n = 0;

	for (uint32_t g = 0; g < ctx->nr_ifaces; g++)
		if (g != f && ctx->off->ifc[g].main_flows && !umem_steer_flows__counters(ctx->off->ifc[g].main_flows, c))
			n += c[UMEM_STEER_FS_REDIRECT].packets;
	return n;
}

/* The frames interface f sent that no steering program redirected: what our sockets sent, and
 * the delivery probe's frames it took. */
uint64_t fwd_off_user_tx(struct fwd_ctx *ctx, uint32_t f)
{
	uint64_t n = atomic_load_explicit(&ctx->off->ifc[f].probe_tx, memory_order_relaxed);

	for (uint32_t i = 0; i < ctx->nr_ports; i++)
		if (ctx->ports[i].iface == f)
			n += atomic_load_explicit(&ctx->ports[i].ctr.tx_packets, memory_order_relaxed);
	return n;
}

/* Why interface name cannot send at all now (down, or no carrier: a veth whose peer is down),
 * or NULL: then a target that drops redirected frames lacks what it needs to take them. */
static const char *link_problem(const struct fwd_offload *off, const char *name)
{
	struct ifreq ifr = { 0 };

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (off->ioctl_fd < 0 || ioctl(off->ioctl_fd, SIOCGIFFLAGS, &ifr))
		return NULL;
	if (!(ifr.ifr_flags & IFF_UP))
		return "it is down";
	if (!(ifr.ifr_flags & IFF_RUNNING))
		return "it has no carrier (a veth whose peer is down)";
	return NULL;
}

/* Interface f delivered `took` of `redirected` frames redirected to it: no more offload to it,
 * its flows back to userspace at the workers' next turn; said once, with the fix (the GRO
 * advice is wrong for a link that is down: its redirects fail whatever the peer's NAPI). */
static void mark_bad(struct fwd_ctx *ctx, uint32_t f, uint64_t took, uint64_t redirected)
{
	struct fwd_offload *off = ctx->off;
	const char *name = ctx->ifaces[f].name, *why;
	char peer[48] = "";

	if (atomic_exchange(&off->ifc[f].bad_target, true))
		return;
	atomic_fetch_add(&off->nr_bad, 1);
	atomic_fetch_add(&off->bad_gen, 1);
	if (off->ifc[f].xmit.peer)
		snprintf(peer, sizeof(peer), " (ifindex %u in its namespace)", off->ifc[f].xmit.peer);
	if ((why = link_problem(off, name)))
		fprintf(stderr, "xdp-fwd: offload: %s sent %llu of %llu frames redirected to it: %s. No more "
			"offload to %s: its flows go back to userspace\n",
			name, (unsigned long long)took, (unsigned long long)redirected, why, name);
	else
		fprintf(stderr, "xdp-fwd: offload: %s sent %llu of %llu frames redirected to it: a veth takes "
			"redirected frames only with NAPI on its peer; turn it on there: `ethtool -K <peer> gro on` "
			"or an XDP program on the peer%s. No more offload to %s: its flows go back to userspace\n",
			name, (unsigned long long)took, (unsigned long long)redirected, peer, name);
}

static int ethtool_ioctl(int fd, const char *ifname, void *cmd)
{
	struct ifreq ifr = { 0 };

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = cmd;
	return ioctl(fd, SIOCETHTOOL, &ifr) ? -errno : 0;
}

/* The ethtool reads write as many entries as the device has at that moment, whatever the
 * request says: room for a change between counting and reading (ethtool -L on a veth). */
#define XMIT_STATS_HEADROOM 256u

/* How many ethtool statistics the device has now; 0 when that cannot be read. */
static uint32_t stats_count(struct fwd_offload *off, const char *ifname)
{
	/* The header and the one count it returns (data[0]): a struct holding both would put a
	 * flexible array member mid-struct, which ISO C refuses. */
	uint64_t buf[(sizeof(struct ethtool_sset_info) + sizeof(uint32_t) + 7) / 8] = { 0 };
	struct ethtool_sset_info *ss = (struct ethtool_sset_info *)buf;

	ss->cmd = ETHTOOL_GSSET_INFO;
	ss->sset_mask = 1ull << ETH_SS_STATS;
	if (off->ioctl_fd < 0 || ethtool_ioctl(off->ioctl_fd, ifname, ss) || !ss->sset_mask)
		return 0;
	return ss->data[0];
}

/* Finds interface f's XDP transmit counters (struct off_xmit); none on a device without them. */
void fwd_off_xmit_probe(struct fwd_offload *off, uint32_t f, const char *ifname)
{
	struct off_xmit *x = &off->ifc[f].xmit;
	struct ethtool_gstrings *gs;
	uint32_t nr_stats;

	*x = (struct off_xmit){ 0 };
	atomic_store(&off->ifc[f].xmit_proven, false);
	atomic_store(&off->ifc[f].trial, false);
	nr_stats = stats_count(off, ifname);
	if (!nr_stats || nr_stats > 65536)
		return;
	gs = calloc(1, sizeof(*gs) + ((size_t)nr_stats + XMIT_STATS_HEADROOM) * ETH_GSTRING_LEN);
	if (!gs)
		return;
	*gs = (struct ethtool_gstrings){ .cmd = ETHTOOL_GSTRINGS, .string_set = ETH_SS_STATS, .len = nr_stats };
	x->peer_idx = nr_stats;
	if (!ethtool_ioctl(off->ioctl_fd, ifname, gs)) {
		for (uint32_t i = 0; i < gs->len && i < nr_stats; i++) {
			char name[ETH_GSTRING_LEN + 1] = { 0 };
			size_t n;

			memcpy(name, gs->data + (size_t)i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
			n = strlen(name);
			if (!strcmp(name, "peer_ifindex"))
				x->peer_idx = i;
			if (strncmp(name, "tx_queue_", 9) || x->nr >= OFF_XMIT_STATS)
				continue;
			if (n > 9 && !strcmp(name + n - 9, "_xdp_xmit")) {
				x->refused[x->nr] = false;
				x->idx[x->nr++] = i;
			} else if (n > 16 && !strcmp(name + n - 16, "_xdp_xmit_errors")) {
				x->refused[x->nr] = true;
				x->idx[x->nr++] = i;
			}
		}
		x->nr_stats = nr_stats;
	}
	if (!x->nr)
		x->nr_stats = 0;
	free(gs);
}

/* The sum of interface f's XDP transmit counters, and of its refusals alone (NULL: not wanted);
 * false when they cannot be read. */
static bool xmit_read(struct fwd_offload *off, uint32_t f, const char *ifname, uint64_t *sum, uint64_t *refused)
{
	struct off_xmit *x = &off->ifc[f].xmit;
	struct ethtool_stats *st;
	bool ok;

	/* A veth's count follows its queue count (ethtool -L): probe again when it changed. */
	if (stats_count(off, ifname) != x->nr_stats) {
		fwd_off_xmit_probe(off, f, ifname);
		return false;
	}
	st = calloc(1, sizeof(*st) + ((size_t)x->nr_stats + XMIT_STATS_HEADROOM) * sizeof(uint64_t));
	if (!st)
		return false;
	*st = (struct ethtool_stats){ .cmd = ETHTOOL_GSTATS, .n_stats = x->nr_stats };
	ok = !ethtool_ioctl(off->ioctl_fd, ifname, st) && st->n_stats == x->nr_stats;
	*sum = 0;
	if (refused)
		*refused = 0;
	for (uint32_t i = 0; ok && i < x->nr; i++) {
		*sum += st->data[x->idx[i]];
		if (refused && x->refused[i])
			*refused += st->data[x->idx[i]];
	}
	if (ok && x->peer_idx < x->nr_stats)
		x->peer = (uint32_t)st->data[x->peer_idx];
	free(st);
	return ok;
}

uint32_t fwd_fault_probe_enomem; /* offload.h: the tests' hook */

/* One frame redirected to interface f through the delivery probe. It goes out to the peer: the
 * interface's own address as source and destination (another host's, so the peer's stack drops
 * it) and the IEEE 802 local experimental EtherType, which no protocol takes. */
static int probe_run(struct fwd_offload *off, uint32_t f, const char *ifname)
{
	uint8_t frame[60] = { 0 };
	struct xdp_md md = { .data_end = sizeof(frame), .ingress_ifindex = off->ifc[f].ifindex };
	struct ifreq ifr = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame, .data_size_in = sizeof(frame), .ctx_in = &md,
		    .ctx_size_in = sizeof(md), .repeat = 1, .flags = BPF_F_TEST_XDP_LIVE_FRAMES);

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(off->ioctl_fd, SIOCGIFHWADDR, &ifr))
		return -errno;
	memcpy(frame, ifr.ifr_hwaddr.sa_data, 6);
	memcpy(frame + 6, ifr.ifr_hwaddr.sa_data, 6);
	frame[12] = 0x88;
	frame[13] = 0xb5;
	memcpy(frame + 14, "xdp-fwd delivery probe", 22);
	if (fwd_fault_probe_enomem) {
		fwd_fault_probe_enomem--;
		return -ENOMEM;
	}
	return bpf_prog_test_run_opts(bpf_program__fd(off->probe->progs.redirect_probe), &opts) ? -errno : 0;
}

/* Errors of a live-frame BPF_PROG_RUN that say nothing of the next one: memory for the frame
 * or its page pool, a signal. The probe is tried again then. */
static bool probe_error_transient(int err)
{
	return err == -ENOMEM || err == -ENOBUFS || err == -EAGAIN || err == -EBUSY || err == -EINTR;
}

/* One probe frame redirected to interface f, its XDP transmit counters read around it (under
 * lock): 1 when f counted it (it takes redirected frames), 0 when not (it drops them all: struct
 * off_xmit), -1 when nothing could be told now. A probe that fails for good (an older kernel,
 * or no privilege for it now) is not tried again: the first flow to each target is its trial
 * then. One that fails for want of memory is tried again 0.1 s later, said once.
 * A probe frame f took (not refused by a full ring) reaches f's tx_packets like a redirected
 * frame, but no steering program counted it: probe_tx keeps it out of the loss count, where it
 * would hide one lost frame. */
static int probe_delivery(struct fwd_offload *off, uint32_t f, const char *name)
{
	uint64_t before, after, refused0, refused1;
	int err;

	if (!off->probe || fwd_now_ns() < off->ifc[f].probe_retry_at || !xmit_read(off, f, name, &before, &refused0))
		return -1;
	err = probe_run(off, f, name);
	if (err && probe_error_transient(err)) {
		off->ifc[f].probe_retry_at = fwd_now_ns() + OFF_PROBE_RETRY_NS;
		if (!off->probe_retry_said)
			fprintf(stderr, "xdp-fwd: offload: the delivery probe towards %s failed (%s): tried "
				"again in 0.1 s; its flows stay in userspace until it answers\n", name, strerror(-err));
		off->probe_retry_said = true;
		return -1;
	}
	if (err) {
		fprintf(stderr, "xdp-fwd: offload: the delivery probe towards %s failed (%s): the first "
			"flow to each target is its trial\n", name, strerror(-err));
		redirect_probe__destroy(off->probe);
		off->probe = NULL;
		return -1;
	}
	if (!xmit_read(off, f, name, &after, &refused1)) {
		/* Unknown whether f took it: the loss count may then miss one frame. */
		return -1;
	}
	/* Taken: the transmits moved beyond the refusals. No flow goes to f while it is probed,
	 * so the counters moved for the probe alone. */
	if (after - before > refused1 - refused0)
		atomic_fetch_add(&off->ifc[f].probe_tx, 1);
	return after != before;
}

/* Before the first flow goes to interface f: the delivery probe, so that no flow finds a target
 * that drops redirects at its own cost (a TCP flow that loses its first offloaded frames waits
 * out retransmit timeouts). True when f may take flows. */
static bool probe_target(struct fwd_ctx *ctx, uint32_t f)
{
	struct fwd_offload *off = ctx->off;
	bool ok = false;

	pthread_mutex_lock(&off->lock);
	if (atomic_load(&off->ifc[f].xmit_proven)) {
		ok = true;
	} else if (!atomic_load(&off->ifc[f].bad_target)) {
		int r = probe_delivery(off, f, ctx->ifaces[f].name);

		if (r > 0) {
			atomic_store(&off->ifc[f].xmit_proven, true);
			ok = true;
		} else if (r == 0) {
			mark_bad(ctx, f, 0, 1);
		} else if (!off->probe) {
			pthread_mutex_unlock(&off->lock);
			return fwd_off_may_try(ctx, f); /* the probe is gone: a trial */
		}
	}
	pthread_mutex_unlock(&off->lock);
	return ok;
}

/* A bad target probed again once a second (under lock): a peer given NAPI since (the fix the
 * log named) takes flows again, without a restart. */
void fwd_off_reprobe_bad(struct fwd_ctx *ctx, uint64_t now)
{
	struct fwd_offload *off = ctx->off;

	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		const char *name = ctx->ifaces[f].name;

		if (!atomic_load(&off->ifc[f].bad_target) || !off->ifc[f].ifindex || now - off->ifc[f].reprobe_at < OFF_REPROBE_NS)
			continue;
		off->ifc[f].reprobe_at = now;
		if (probe_delivery(off, f, name) <= 0)
			continue;
		off->ifc[f].xmit.samples = 0; /* fresh baselines for the delivery check */
		off->ifc[f].xmit.lost = 0;
		atomic_store(&off->ifc[f].xmit_proven, true);
		atomic_store(&off->ifc[f].bad_target, false);
		atomic_fetch_sub(&off->nr_bad, 1);
		fprintf(stderr, "xdp-fwd: offload: %s takes redirected frames now: offloading to it again\n", name);
	}
}

/* Every OFF_TARGET_NS: with its peer's NAPI a veth counts every redirected frame handed to it,
 * taken or refused (struct off_xmit), within the NAPI poll that redirected it, microseconds
 * later. So every frame redirected towards it by one sample is counted by the next: what is not
 * was dropped unseen, and a target that drops 4 frames in a period, or half of a period's
 * redirects, takes none (a peer without NAPI; GRO turned off there mid-flow loses a part of a
 * period, then all). Two interfaces only, where the redirects towards each are known. */
void fwd_off_check_delivery(struct fwd_ctx *ctx)
{
	struct fwd_offload *off = ctx->off;
	bool watching = false;

	if (ctx->nr_ifaces != 2)
		return;
	for (uint32_t f = 0; f < 2; f++) {
		struct off_xmit *x = &off->ifc[f].xmit;
		const char *name = ctx->ifaces[f].name;
		uint64_t xs, rs;

		if (!x->nr || !off->ifc[f].ifindex || atomic_load(&off->ifc[f].bad_target))
			continue;
		/* Nothing in the kernel towards f: no ioctl (each takes rtnl, from a worker), and the
		 * next flow starts from fresh baselines (the other table may have been replaced). */
		if (!atomic_load(&off->ifc[f ^ 1].ctr.flows) && !atomic_load(&off->ifc[f].trial)) {
			x->samples = 0;
			x->lost = 0;
			continue;
		}
		/* Transmits first, redirects after: a frame counted redirected here is transmitted
		 * (or not) before the next period's read. */
		if (!xmit_read(off, f, name, &xs, NULL))
			continue;
		rs = fwd_off_redirected_to(ctx, f);
		/* A count that went back: the other interface's table was replaced (deleted and
		 * back), or the device's counters were. Start again from fresh baselines. */
		if (x->samples && (rs < x->r[1] || xs < x->x)) {
			x->samples = 0;
			x->lost = 0;
		}
		if (!x->samples) {
			x->x0 = xs;
			x->r0 = x->r[0] = x->r[1] = rs;
		}
		if (x->samples && xs != x->x)
			atomic_store(&off->ifc[f].xmit_proven, true);
		if (x->samples && x->r[1] - x->r0 > xs - x->x0 && x->r[1] - x->r0 - (xs - x->x0) > x->lost) {
			uint64_t lost = x->r[1] - x->r0 - (xs - x->x0), dl = lost - x->lost, dr = x->r[1] - x->r[0];

			x->lost = lost;
			if (dl >= 4 || dl * 2 >= dr) {
				mark_bad(ctx, f, dr > dl ? dr - dl : 0, dr > dl ? dr : dl);
				continue;
			}
		}
		x->x = xs;
		x->r[0] = x->r[1];
		x->r[1] = rs;
		x->samples++;
		if (!atomic_load(&off->ifc[f].xmit_proven)) {
			/* A trial whose flow is gone (expired, or never installed) makes room for the next;
			 * one that redirected nothing in three periods (a short flow) lets the others in
			 * (the check above goes on for them). */
			if (!atomic_load(&off->ifc[f ^ 1].ctr.flows)) {
				atomic_store(&off->ifc[f].trial, false);
			} else if (rs == x->r[0] && ++x->trial_samples >= 3) {
				atomic_store(&off->ifc[f].xmit_proven, true);
			} else {
				watching = true;
			}
		}
	}
	atomic_store(&off->watching, watching);
}

/* Redirected frames an interface did not send are lost in the kernel: a veth whose peer has
 * neither GRO nor an XDP program drops them all (and counts them nowhere). Count the loss, say
 * so, and stop offloading to it. Only with two interfaces, where the redirects towards each are
 * known. Each reading judges the one before (offload_loss.h); returns the frames it found lost
 * and not counted dropped. */
uint64_t fwd_off_check_targets(struct fwd_ctx *ctx)
{
	struct fwd_offload *off = ctx->off;
	uint64_t tx[FWD_MAX_PORTS], rs[FWD_MAX_PORTS], found, dropped[FWD_MAX_PORTS], missing = 0;

	if (ctx->nr_ifaces != 2)
		return 0;
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++)
		rs[f] = fwd_off_redirected_to(ctx, f);
	for (uint32_t f = 0; f < FWD_MAX_PORTS; f++) {
		tx[f] = off->ifc[f].tx0;
		dropped[f] = off->ifc[f].dropped0;
	}
	found = fwd_off_read_tx_packets(off, ctx->nr_ifaces, tx, dropped);
	for (uint32_t f = 0; f < ctx->nr_ifaces; f++) {
		struct fwd_off_iface *oi = &off->ifc[f];
		uint64_t dr, dl, counted;

		if (!(found & (1ull << f)))
			continue; /* gone (maybe not yet seen gone by the main thread): no count */
		/* What the interface counted in tx_dropped is a drop xdp-fwd reports already
		 * (tx_dropped_kernel): out of the loss count, so that each frame is counted once.
		 * The target check below still sees every frame not sent. Same dump as sent: a
		 * drop is in one or the other. */
		counted = dropped[f] - oi->dropped0;
		missing += fwd_loss_read(&oi->loss, rs[f] - oi->redirected0, fwd_off_user_tx(ctx, f) - oi->user_tx0,
					 tx[f] - oi->tx0, counted, &dr, &dl);
		if (oi->lost_before + oi->loss.lost > atomic_load(&oi->lost))
			atomic_store(&oi->lost, oi->lost_before + oi->loss.lost); /* a count never goes back */
		/* Ring overflows under load lose a share; a target that cannot take frames, all.
		 * Only where the transmit counters cannot tell (check_delivery). */
		if (!oi->xmit.nr && dr >= 32 && dl * 2 >= dr)
			mark_bad(ctx, f, dr - dl, dr);
	}
	return missing;
}

/* The loss count on the counts as they are (an epoch's end, the totals at exit): readings a
 * millisecond apart until one finds every frame the one before saw redirected sent or counted
 * dropped (frames in flight are, microseconds later), or for OFF_SETTLE_NS (a loss stays). */
void fwd_off_settle_targets(struct fwd_ctx *ctx)
{
	uint64_t until = fwd_now_ns() + OFF_SETTLE_NS;

	if (ctx->nr_ifaces != 2)
		return; /* no loss count */
	fwd_off_check_targets(ctx);
	do
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	while (fwd_off_check_targets(ctx) && fwd_now_ns() < until);
}

void fwd_off_targets_open(struct fwd_offload *off)
{
	off->ioctl_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0); /* < 0: the slower check only */
	/* Loaded while privileged; NULL (an old kernel, a BPF failure): trial flows instead. */
	off->probe = off->ioctl_fd >= 0 ? redirect_probe__open_and_load() : NULL;
}

void fwd_off_targets_close(struct fwd_offload *off)
{
	redirect_probe__destroy(off->probe);
	if (off->ioctl_fd >= 0)
		close(off->ioctl_fd);
}

/* Whether a new flow may go to interface to: yes once it delivered redirected frames, else after
 * the delivery probe proved it, or (without the probe) as the one trial flow, which then proves
 * it or shows that it drops them. */
bool fwd_off_may_try(struct fwd_ctx *ctx, uint32_t to)
{
	struct fwd_offload *off = ctx->off;

	/* No counters to check it by (the link counters' check is slower), or more than two
	 * interfaces, where check_delivery cannot tell the redirects towards each. */
	if (!off->ifc[to].xmit.nr || atomic_load_explicit(&off->ifc[to].xmit_proven, memory_order_relaxed))
		return true;
	if (off->probe) /* a target's counters move for the probe alone: no flow goes there yet */
		return probe_target(ctx, to);
	if (ctx->nr_ifaces != 2)
		return true;
	if (atomic_exchange(&off->ifc[to].trial, true))
		return false;
	atomic_store(&off->watching, true);
	return true;
}
