/* SPDX-License-Identifier: MIT */
/*
 * Fuzz harness: the steering rule and action parsers (xdp-fwd's --rule, umem-steer add). Any
 * text must either be refused with -EINVAL, or parse into a rule whose formatted text parses
 * back to the same rule (the round trip the CLI's `show` relies on).
 */
#include <string.h>
#include <umem/steer.h>
#include "testutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int quiet(enum umem_print_level level, const char *fmt, va_list args)
{
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[512], again[512];
	struct umem_steer_rule rule, back;
	struct umem_steer_action act, act_back;

	umem_set_print(quiet);
	if (size >= sizeof(text))
		size = sizeof(text) - 1;
	memcpy(text, data, size);
	text[size] = 0;

	memset(&rule, 0xa5, sizeof(rule));
	int err = umem_steer_rule__parse(text, &rule);
	CHECK(err == 0 || err == -EINVAL, "rule parse returned %d", err);
	if (!err) {
		CHECK(umem_steer_rule__format(&rule, again, sizeof(again)) >= 0, "format failed");
		memset(&back, 0x5a, sizeof(back));
		CHECK(umem_steer_rule__parse(again, &back) == 0, "formatted rule '%s' does not parse", again);
		char twice[512];
		CHECK(umem_steer_rule__format(&back, twice, sizeof(twice)) >= 0 && !strcmp(again, twice),
		      "round trip changed '%s' into '%s'", again, twice);
	}
	err = umem_steer_action__parse(text, &act);
	CHECK(err == 0 || err == -EINVAL, "action parse returned %d", err);
	if (!err) {
		CHECK(umem_steer_action__format(&act, again, sizeof(again)) >= 0, "action format failed");
		CHECK(umem_steer_action__parse(again, &act_back) == 0, "formatted action '%s' does not parse", again);
	}
	return 0;
}
