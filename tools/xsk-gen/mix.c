/* SPDX-License-Identifier: MIT */
/* xsk-gen size mix: parse "SIZE[:WEIGHT],..." and spread the sizes over a period. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

static int mix_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int mix_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int parse_num(const char *s, const char *end, unsigned long *out)
{
	char *stop;

	if (s == end || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	*out = strtoul(s, &stop, 10);
	return errno || stop != end ? -1 : 0;
}

int gen_mix_parse(struct gen_mix *mix, const char *text, uint32_t max_len, char *err, size_t errlen)
{
	/* The classic simple IMIX (7:4:1), in frame bytes without FCS. */
	static const char imix[] = "64:7,576:4,1500:1";
	int64_t credit[GEN_MIX_MAX_SIZES] = { 0 };
	const char *p;

	if (!strcmp(text, "imix"))
		text = imix;
	memset(mix, 0, sizeof(*mix));
	for (p = text;;) {
		const char *comma = strchr(p, ','), *end = comma ? comma : p + strlen(p);
		const char *colon = memchr(p, ':', (size_t)(end - p));
		unsigned long size, weight = 1;

		if (mix->nr == GEN_MIX_MAX_SIZES)
			return mix_fail(err, errlen, "size mix '%s': at most %d sizes", text, GEN_MIX_MAX_SIZES);
		if (parse_num(p, colon ? colon : end, &size))
			return mix_fail(err, errlen, "size mix '%s': '%.*s' is not a size", text,
					(int)((colon ? colon : end) - p), p);
		if (size < GEN_FRAME_MIN || size > max_len)
			return mix_fail(err, errlen, "size mix '%s': size %lu is out of range %u..%u", text,
					size, GEN_FRAME_MIN, max_len);
		if (colon && (parse_num(colon + 1, end, &weight) || !weight))
			return mix_fail(err, errlen, "size mix '%s': weight '%.*s' is not a number >= 1",
					text, (int)(end - colon - 1), colon + 1);
		if (mix->period + weight > GEN_MIX_MAX_PERIOD)
			return mix_fail(err, errlen, "size mix '%s': weights add up to more than %d", text,
					GEN_MIX_MAX_PERIOD);
		mix->size[mix->nr] = (uint32_t)size;
		mix->weight[mix->nr++] = (uint32_t)weight;
		mix->period += (uint32_t)weight;
		if (!comma)
			break;
		p = comma + 1;
	}
	/* Smooth weighted round-robin: each slot goes to the size with the most credit, which then
	 * pays the period; 7:4:1 gives a a b a b a c a b a b a rather than 7 a's in a row. */
	for (uint32_t slot = 0; slot < mix->period; slot++) {
		uint32_t best = 0;

		for (uint32_t i = 0; i < mix->nr; i++) {
			credit[i] += mix->weight[i];
			if (credit[i] > credit[best])
				best = i;
		}
		credit[best] -= mix->period;
		mix->schedule[slot] = (uint16_t)best;
	}
	return 0;
}

double gen_mix_mean(const struct gen_mix *mix)
{
	double bytes = 0;

	for (uint32_t i = 0; i < mix->nr; i++)
		bytes += (double)mix->size[i] * mix->weight[i];
	return bytes / mix->period;
}
