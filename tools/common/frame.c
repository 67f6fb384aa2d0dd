/* SPDX-License-Identifier: MIT */
/* Frame building for the tools and the tests (frame.h). */
#include <string.h>

#include "frame.h"

void frame_set16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

void frame_set32(uint8_t *p, uint32_t v)
{
	frame_set16(p, (uint16_t)(v >> 16));
	frame_set16(p + 2, (uint16_t)v);
}

void frame_put(uint8_t *buf, uint32_t *len, const void *bytes, uint32_t n)
{
	memcpy(buf + *len, bytes, n);
	*len += n;
}

void frame_put16(uint8_t *buf, uint32_t *len, uint16_t v)
{
	frame_set16(buf + *len, v);
	*len += 2;
}

void frame_put32(uint8_t *buf, uint32_t *len, uint32_t v)
{
	frame_set32(buf + *len, v);
	*len += 4;
}

void frame_zero(uint8_t *buf, uint32_t *len, uint32_t n)
{
	memset(buf + *len, 0, n);
	*len += n;
}

void frame_eth(uint8_t *buf, uint32_t *len, const uint8_t dst[6], const uint8_t src[6], uint16_t type)
{
	frame_put(buf, len, dst, 6);
	frame_put(buf, len, src, 6);
	frame_put16(buf, len, type);
}

void frame_vlan(uint8_t *buf, uint32_t *len, uint16_t tci, uint16_t next)
{
	frame_put16(buf, len, tci);
	frame_put16(buf, len, next);
}

void frame_ipv4(uint8_t *buf, uint32_t *len, const struct frame_ipv4 *h, uint32_t payload)
{
	uint8_t *ip = buf + *len;

	ip[0] = 0x45; /* version 4, 20-byte header */
	ip[1] = 0;
	frame_set16(ip + 2, (uint16_t)(20 + payload));
	frame_set16(ip + 4, h->id);
	frame_set16(ip + 6, h->frag);
	ip[8] = h->ttl;
	ip[9] = h->proto;
	frame_set16(ip + 10, 0);
	frame_set32(ip + 12, h->src);
	frame_set32(ip + 16, h->dst);
	*len += 20;
}

void frame_ipv6(uint8_t *buf, uint32_t *len, const struct frame_ipv6 *h, uint32_t payload)
{
	uint8_t *ip = buf + *len;

	frame_set32(ip, 0x60000000u); /* version 6, no traffic class, no flow label */
	frame_set16(ip + 4, (uint16_t)payload);
	ip[6] = h->next;
	ip[7] = h->hop_limit;
	memcpy(ip + 8, h->src, 16);
	memcpy(ip + 24, h->dst, 16);
	*len += 40;
}

void frame_udp(uint8_t *buf, uint32_t *len, uint16_t sport, uint16_t dport, uint32_t payload)
{
	frame_put16(buf, len, sport);
	frame_put16(buf, len, dport);
	frame_put16(buf, len, (uint16_t)(8 + payload));
	frame_put16(buf, len, 0);
}

void frame_ports(uint8_t *buf, uint32_t *len, uint16_t sport, uint16_t dport, uint32_t hdrlen)
{
	frame_set16(buf + *len, sport);
	frame_set16(buf + *len + 2, dport);
	memset(buf + *len + 4, 0, hdrlen - 4);
	*len += hdrlen;
}
