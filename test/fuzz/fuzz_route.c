/* SPDX-License-Identifier: MIT */
/*
 * Fuzz harness: xdp-fwd's userspace frame parsing (apps/xdp-fwd/route.h), the code that splits
 * RX bursts into descriptor chains and reads Ethernet headers, driven by hostile input:
 * descriptors of any length (runts included), CONTD flags that never end a chain or end it
 * in the next burst, group and zero MACs, MAC moves between ports, time jumps across aging.
 *
 * Each descriptor's data is its own heap block of exactly len bytes, so ASan catches any
 * read past a descriptor (a runt's header, say). Checked per burst: every descriptor ends in
 * exactly one callback; emitted and flooded frames are whole chains (CONTD on all but the
 * last); wire sends to in ^ 1, reflect to in with the MACs swapped; l2 decisions equal a
 * reference model of learning with aging.
 *
 * Input: byte 0 mode, byte 1 ports (2..4) and interfaces (2..ports), byte 2 aging; then bursts: in port, count (1..16),
 * time step; per descriptor: 2 bytes length (low 11 bits), flags, dst and src MAC index.
 */
#include <stdlib.h>
#include <string.h>
#include "route.h"
#include "testutil.h"

#define FUZZ_TICK_NS 1000000ull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NMACS 9
#define MAX_BURST 16

static const uint8_t macs[NMACS][6] = {
	{ 2, 0, 0, 0, 0, 1 }, { 2, 0, 0, 0, 0, 2 }, { 2, 0, 0, 0, 0, 3 },
	{ 0x0a, 0xbb, 0, 0, 0, 4 },
	{ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }, /* broadcast */
	{ 0x01, 0x00, 0x5e, 0, 0, 1 },          /* IPv4 multicast */
	{ 0, 0, 0, 0, 0, 0 },                   /* zero: never learned */
	{ 2, 0, 0, 0, 0, 8 },
	{ 0x01, 0x80, 0xc2, 0, 0, 0x0e },       /* LLDP: reserved, never relayed */
};

struct ref_entry {
	bool known;
	int32_t port;
	uint64_t seen;
};

struct harness {
	uint8_t *buf[MAX_BURST];      /* descriptor i's data; addr = i */
	uint8_t orig[MAX_BURST][12];  /* its MACs as received */
	uint32_t seen[MAX_BURST];     /* callbacks that covered descriptor i */
	const struct umem_desc *base;
	uint32_t nports;
	uint32_t iface[4];            /* port -> interface (l2: ports are (interface, queue)) */
	enum fwd_mode mode;
	bool skip_at_start;           /* the burst starts with the tail of a cut chain */
	struct ref_entry ref[NMACS];
	uint64_t now, aging;
};

static bool mac_is(const uint8_t *a, int k)
{
	return !memcmp(a, macs[k], 6);
}

static int mac_index(const uint8_t *m)
{
	for (int k = 0; k < NMACS; k++)
		if (mac_is(m, k))
			return k;
	return -1;
}

static uint8_t *h_data(void *arg, uint64_t addr)
{
	struct harness *h = arg;

	CHECK(addr < MAX_BURST, "data of an unknown address %llu", (unsigned long long)addr);
	return h->buf[addr];
}

/* Marks the n descriptors at d as handled; whole frames must be chains. */
static void cover(struct harness *h, const struct umem_desc *d, uint32_t n, bool frame)
{
	CHECK(n > 0, "callback with no descriptor");
	for (uint32_t i = 0; i < n; i++) {
		uint32_t at = (uint32_t)(d + i - h->base);

		CHECK(at < MAX_BURST && d[i].addr == at, "descriptor outside the burst");
		h->seen[at]++;
		if (frame)
			CHECK(fwd_desc_last(&d[i]) == (i == n - 1), "emitted frame is not one whole chain");
	}
}

/* The drop a bridge makes before learning (l2_classify), or -1: a group or zero source, a
 * reserved destination. */
static int ref_filtered(struct harness *h, const struct umem_desc *d)
{
	int dst = mac_index(h->orig[d->addr]), src = mac_index(h->orig[d->addr] + 6);

	if (h->mode != FWD_MODE_L2 || d->len < FWD_ETH_HLEN)
		return -1;
	if (src >= 0 && (macs[src][0] & 1))
		return FWD_DROP_L2_SRC_GROUP;
	if (src == 6)
		return FWD_DROP_L2_SRC_ZERO;
	return dst == 8 ? FWD_DROP_L2_RESERVED : -1;
}

/* The reference bridge's decision for the frame at d (in this order: learn, then look up). */
static int32_t ref_decide(struct harness *h, uint32_t in, const struct umem_desc *d)
{
	int dst = mac_index(h->orig[d->addr]), src = mac_index(h->orig[d->addr] + 6);
	struct ref_entry *e;

	if (src >= 0 && !(macs[src][0] & 1) && src != 6)
		h->ref[src] = (struct ref_entry){ .known = true, .port = (int32_t)in, .seen = h->now };
	if (dst < 0 || (macs[dst][0] & 1))
		return L2_NO_PORT;
	e = &h->ref[dst];
	return e->known && h->now - e->seen <= h->aging ? e->port : L2_NO_PORT;
}

static uint32_t h_iface(void *arg, uint32_t port)
{
	struct harness *h = arg;

	CHECK(port < h->nports, "interface of port %u of %u", port, h->nports);
	return h->iface[port];
}

/* The first port on the interface (any port there is a valid choice for xdp-fwd). */
static uint32_t h_via(void *arg, uint32_t in, uint32_t iface)
{
	struct harness *h = arg;

	CHECK(in < h->nports, "via from port %u", in);
	for (uint32_t p = 0; p < h->nports; p++)
		if (h->iface[p] == iface)
			return p;
	CHECK(false, "via to interface %u, which has no port", iface);
	return 0;
}

static void h_emit(void *arg, uint32_t in, uint32_t out, const struct umem_desc *d, uint32_t n)
{
	struct harness *h = arg;
	const uint8_t *o = h->orig[d->addr], *now = h->buf[d->addr];

	cover(h, d, n, true);
	CHECK(out < h->nports, "output port %u of %u", out, h->nports);
	CHECK(d->len >= FWD_ETH_HLEN, "a runt of %u bytes forwarded", d->len);
	if (h->mode == FWD_MODE_WIRE)
		CHECK(out == (in ^ 1), "wire: %u -> %u", in, out);
	if (h->mode == FWD_MODE_REFLECT)
		CHECK(out == in && !memcmp(now, o + 6, 6) && !memcmp(now + 6, o, 6),
		      "reflect: not sent back with the MACs swapped");
	if (h->mode == FWD_MODE_L2) {
		int32_t want;

		CHECK(ref_filtered(h, d) < 0, "l2: forwarded a frame a bridge drops");
		want = ref_decide(h, in, d);

		CHECK(want != L2_NO_PORT && h->iface[want] != h->iface[in] &&
		      out == h_via(h, in, h->iface[want]), "l2: sent to %u, the reference says %d", out, want);
	}
}

static void h_flood(void *arg, uint32_t in, const struct umem_desc *d, uint32_t n)
{
	struct harness *h = arg;

	cover(h, d, n, true);
	CHECK(h->mode == FWD_MODE_L2, "flood outside l2 mode");
	CHECK(ref_filtered(h, d) < 0, "l2: flooded a frame a bridge drops");
	CHECK(ref_decide(h, in, d) == L2_NO_PORT, "l2: flooded a frame to a known destination");
}

static void h_drop(void *arg, uint32_t in, enum fwd_drop why, const struct umem_desc *d, uint32_t n)
{
	struct harness *h = arg;

	cover(h, d, n, false);
	if (why == FWD_DROP_L2_RESERVED || why == FWD_DROP_L2_SRC_GROUP || why == FWD_DROP_L2_SRC_ZERO) {
		CHECK(ref_filtered(h, d) == (int)why, "l2: dropped as %s, the reference says %d",
		      fwd_drop_names[why], ref_filtered(h, d));
		return;
	}
	CHECK(why == FWD_DROP_INVALID || why == FWD_DROP_NO_PORT, "drop reason %d", why);
	if (why == FWD_DROP_NO_PORT) {
		int32_t want = h->mode == FWD_MODE_L2 ? ref_decide(h, in, d) : L2_NO_PORT;

		CHECK(want != L2_NO_PORT && h->iface[want] == h->iface[in],
		      "dropped as 'no port' but the reference forwards it");
	} else if (n == 1 && fwd_desc_last(d) && d->len >= FWD_ETH_HLEN &&
		   !(d == h->base && h->skip_at_start)) {
		CHECK(false, "a whole single-buffer frame of %u bytes dropped as invalid", d->len);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct harness h;
	const struct fwd_route_io io = { .arg = &h, .data = h_data, .emit = h_emit,
					 .flood = h_flood, .drop = h_drop, .iface = h_iface,
					 .via = h_via };
	struct umem_desc d[MAX_BURST];
	struct l2_table l2;
	bool skip[4] = { false };
	size_t at = 3;

	if (size < 3)
		return 0;
	memset(&h, 0, sizeof(h));
	h.mode = (enum fwd_mode)(data[0] % 3);
	h.nports = 2 + data[1] % 3;
	if (h.mode == FWD_MODE_WIRE)
		h.nports &= ~1u; /* wire mode takes ports in pairs */
	/* l2 over 2..nports interfaces; ports beyond the count are further queues of them. */
	for (uint32_t p = 0, nifaces = 2 + (data[1] >> 2) % (h.nports - 1); p < h.nports; p++)
		h.iface[p] = p % nifaces;
	/* Time in whole milliseconds: the table refreshes a known MAC's time at most once per
	 * millisecond (so workers don't bounce its line), which aging in seconds never notices and
	 * this reference model, refreshed on every frame, agrees with at that grain. */
	h.aging = (1 + data[2] % 64) * FUZZ_TICK_NS;
	CHECK(!l2_table_init(&l2, 64, h.aging), "l2 table");
	while (at + 3 <= size) {
		uint32_t in = data[at] % h.nports, n = 1 + data[at + 1] % MAX_BURST;

		h.now += (data[at + 2] % 32) * FUZZ_TICK_NS;
		at += 3;
		for (uint32_t i = 0; i < n; i++, at += 5) {
			uint32_t len = 0, flags = 0, dst = 0, src = 0;

			if (at + 5 <= size) {
				len = (uint32_t)(data[at] | data[at + 1] << 8) & 0x7ff;
				flags = data[at + 2];
				dst = data[at + 3] % NMACS;
				src = data[at + 4] % NMACS;
			}
			d[i] = (struct umem_desc){ .addr = i, .len = len,
						   .options = flags & 1 ? UMEM_DESC_F_CONTD : 0 };
			h.buf[i] = malloc(len ? len : 1);
			CHECK(h.buf[i], "malloc");
			memset(h.buf[i], 0x5a, len);
			memcpy(h.orig[i], macs[dst], 6);
			memcpy(h.orig[i] + 6, macs[src], 6);
			memcpy(h.buf[i], h.orig[i], len < 12 ? len : 12);
		}
		h.base = d;
		h.skip_at_start = skip[in];
		memset(h.seen, 0, sizeof(h.seen));
		fwd_route_burst(&io, h.mode, &l2, &skip[in], in, d, n, h.now);
		for (uint32_t i = 0; i < n; i++) {
			CHECK(h.seen[i] == 1, "descriptor %u of %u handled %u times", i, n, h.seen[i]);
			free(h.buf[i]);
		}
		/* A cut chain's tail is dropped by the next burst on that port: only then. */
		CHECK(skip[in] == !fwd_desc_last(&d[n - 1]), "cut chain state wrong");
		if (at >= size)
			break;
	}
	CHECK_EQ(l2.stats.evicted, 0); /* 9 MACs never fill a probe window: the model holds */
	l2_table_fini(&l2);
	return 0;
}
