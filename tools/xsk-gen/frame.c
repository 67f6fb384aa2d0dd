/* SPDX-License-Identifier: MIT */
/* xsk-gen frames: build (with the shared builder, frame.h) and check Ethernet/IPv4/UDP frames
 * carrying the generator header. */
#include <arpa/inet.h>
#include <string.h>

#include "frame.h"
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
	uint32_t pl_len = len - GEN_L2_TO_PAYLOAD, sum, n = 0;
	uint16_t udp_csum, sport = flow->src_port;

	if (flow->nr_flows > 1)
		sport = (uint16_t)(flow->src_port + seq / (flow->flow_frames ? flow->flow_frames : 1) %
						   flow->nr_flows);
	frame_eth(buf, &n, flow->dst_mac, flow->src_mac, 0x0800);
	frame_ipv4(buf, &n, &(struct frame_ipv4){ .src = ntohl(flow->src_ip), .dst = ntohl(flow->dst_ip),
						  .id = (uint16_t)seq, .frag = 0x4000 /* don't fragment */,
						  .ttl = 64, .proto = 17 },
		   GEN_UDP_LEN + pl_len);
	frame_set16(ip + 10, gen_csum_fold(gen_csum_add(0, ip, GEN_IP_LEN)));
	frame_udp(buf, &n, sport, flow->dst_port, pl_len);

	frame_put16(buf, &n, GEN_MAGIC);
	frame_put16(buf, &n, 0);
	frame_put32(buf, &n, stream);
	frame_put32(buf, &n, (uint32_t)(seq >> 32));
	frame_put32(buf, &n, (uint32_t)seq);
	for (uint32_t i = GEN_HDR_LEN; i < pl_len; i++)
		pl[i] = fill_byte(stream, seq, i);
	sum = gen_csum_add(0, pl, pl_len);
	frame_set16(pl + 2, gen_csum_fold(sum));

	/* UDP checksum: pseudo header, UDP header, payload (whose sum now includes its csum). */
	sum = gen_csum_add(0, ip + 12, 8);
	sum = gen_csum_add(sum, udp, GEN_UDP_LEN);
	sum += 17u + pl_len + GEN_UDP_LEN;
	sum = gen_csum_add(sum, pl, pl_len);
	udp_csum = gen_csum_fold(sum);
	frame_set16(udp + 6, udp_csum ? udp_csum : 0xffff); /* 0 means "no checksum" in UDP over IPv4 */
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
