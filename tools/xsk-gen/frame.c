/* SPDX-License-Identifier: MIT */
/* xsk-gen frames: build and check Ethernet/IPv4/UDP frames carrying the generator header. */
#include <arpa/inet.h>
#include <string.h>

#include "gen.h"

uint32_t gen_csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t acc = sum;

	/* Big-endian 16-bit words; an odd tail byte is the high half of a last word. */
	for (; len >= 2; p += 2, len -= 2)
		acc += (uint32_t)(p[0] << 8 | p[1]);
	if (len)
		acc += (uint32_t)p[0] << 8;
	while (acc >> 32)
		acc = (acc & 0xffffffffu) + (acc >> 32);
	return (uint32_t)acc;
}

uint16_t gen_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

/* The fill after the generator header: depends on the stream, the number and the position, so
 * a byte left from another frame (or another run) does not match. */
static uint8_t fill_byte(uint32_t stream, uint64_t seq, uint32_t i)
{
	return (uint8_t)((uint32_t)seq * 31u + stream + i);
}

void gen_frame_build(uint8_t *buf, uint32_t len, const struct gen_flow *flow, uint32_t stream,
		     uint64_t seq)
{
	uint8_t *ip = buf + GEN_ETH_LEN, *udp = ip + GEN_IP_LEN, *pl = udp + GEN_UDP_LEN;
	uint32_t pl_len = len - GEN_L2_TO_PAYLOAD, sum;
	uint16_t udp_csum;

	memcpy(buf, flow->dst_mac, 6);
	memcpy(buf + 6, flow->src_mac, 6);
	put16(buf + 12, 0x0800);

	ip[0] = 0x45; /* IPv4, 20-byte header */
	ip[1] = 0;
	put16(ip + 2, (uint16_t)(len - GEN_ETH_LEN));
	put16(ip + 4, (uint16_t)seq); /* identification */
	put16(ip + 6, 0x4000);        /* don't fragment */
	ip[8] = 64;
	ip[9] = 17; /* UDP */
	put16(ip + 10, 0);
	memcpy(ip + 12, &flow->src_ip, 4);
	memcpy(ip + 16, &flow->dst_ip, 4);
	put16(ip + 10, gen_csum_fold(gen_csum_add(0, ip, GEN_IP_LEN)));

	put16(udp, flow->nr_flows > 1 ? (uint16_t)(flow->src_port + seq / (flow->flow_frames ? flow->flow_frames : 1) %
							     flow->nr_flows) :
				       flow->src_port);
	put16(udp + 2, flow->dst_port);
	put16(udp + 4, (uint16_t)(pl_len + GEN_UDP_LEN));
	put16(udp + 6, 0);

	put16(pl, GEN_MAGIC);
	put16(pl + 2, 0);
	put32(pl + 4, stream);
	put32(pl + 8, (uint32_t)(seq >> 32));
	put32(pl + 12, (uint32_t)seq);
	for (uint32_t i = GEN_HDR_LEN; i < pl_len; i++)
		pl[i] = fill_byte(stream, seq, i);
	sum = gen_csum_add(0, pl, pl_len);
	put16(pl + 2, gen_csum_fold(sum));

	/* UDP checksum: pseudo header, UDP header, payload (whose sum now includes its csum). */
	sum = gen_csum_add(0, ip + 12, 8);
	sum = gen_csum_add(sum, udp, GEN_UDP_LEN);
	sum += 17u + pl_len + GEN_UDP_LEN;
	sum = gen_csum_add(sum, pl, pl_len);
	udp_csum = gen_csum_fold(sum);
	put16(udp + 6, udp_csum ? udp_csum : 0xffff); /* 0 means "no checksum" in UDP over IPv4 */
}

enum gen_parse gen_frame_parse(const uint8_t *buf, uint32_t len, uint16_t dst_port,
			       uint32_t *stream, uint64_t *seq)
{
	const uint8_t *ip = buf + GEN_ETH_LEN, *udp = ip + GEN_IP_LEN, *pl = udp + GEN_UDP_LEN;
	uint32_t pl_len, st;
	uint64_t n;

	if (len < GEN_L2_TO_PAYLOAD + GEN_HDR_LEN || get16(buf + 12) != 0x0800 || ip[0] != 0x45 ||
	    ip[9] != 17 || (dst_port && get16(udp + 2) != dst_port) || get16(pl) != GEN_MAGIC)
		return GEN_PARSE_FOREIGN;
	/* Ours from here on: anything inconsistent is damage. */
	if (get16(ip + 2) + GEN_ETH_LEN > len || get16(ip + 2) < GEN_IP_LEN + GEN_UDP_LEN + GEN_HDR_LEN)
		return GEN_PARSE_BAD;
	pl_len = get16(ip + 2) - GEN_IP_LEN - GEN_UDP_LEN;
	if (get16(udp + 4) != pl_len + GEN_UDP_LEN ||
	    gen_csum_fold(gen_csum_add(0, ip, GEN_IP_LEN)) != 0 ||
	    gen_csum_fold(gen_csum_add(0, pl, pl_len)) != 0)
		return GEN_PARSE_BAD;
	st = get32(pl + 4);
	n = (uint64_t)get32(pl + 8) << 32 | get32(pl + 12);
	for (uint32_t i = GEN_HDR_LEN; i < pl_len; i++)
		if (pl[i] != fill_byte(st, n, i))
			return GEN_PARSE_BAD;
	*stream = st;
	*seq = n;
	return GEN_PARSE_OK;
}
