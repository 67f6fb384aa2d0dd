/* SPDX-License-Identifier: MIT */
/*
 * Fuzz harness: the control socket's request parser (fwd_ctl_parse), fed any bytes as a request
 * line. Every input is either refused with a terminated message, or parsed into a command in
 * range whose fields hold what the server relies on (a rule text terminated and within the
 * line's length, a level in range, one or two port names the kernel could hold, each
 * terminated, without '/' or ':', two distinct); the canonical form of a parsed request parses
 * the same.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "ctl.h"
#include "testutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fwd_ctl_req req, again;
	static char line[2 * FWD_CTL_MAX_LINE];
	char err[256];
	int r;

	umem_set_print(NULL);
	if (size > sizeof(line))
		size = sizeof(line);
	memcpy(line, data, size);
	memset(err, 'x', sizeof(err));
	r = fwd_ctl_parse(line, size, &req, err, sizeof(err));
	CHECK(r == 0 || r == -EINVAL, "returned %d", r);
	if (r) {
		CHECK(memchr(err, 0, sizeof(err)) && err[0], "refused without a terminated message");
		return 0;
	}
	CHECK(size <= FWD_CTL_MAX_LINE, "%zu bytes accepted", size);
	CHECK(req.cmd < FWD_CTL_CMD_COUNT, "command %d", req.cmd);
	if (req.cmd == FWD_CTL_LATENCY)
		CHECK(req.latency < FWD_LATENCY_MAX, "level %d", req.latency);
	if (req.cmd == FWD_CTL_RULES_ADD) {
		char canon[FWD_CTL_MAX_LINE + 32];

		CHECK(memchr(req.text, 0, sizeof(req.text)) && strlen(req.text) <= size, "rule text");
		snprintf(canon, sizeof(canon), "rules add %s", req.text);
		CHECK(fwd_ctl_parse(canon, strlen(canon), &again, err, sizeof(err)) == 0, "canonical '%s': %s", canon, err);
		CHECK(again.cmd == FWD_CTL_RULES_ADD && !strcmp(again.text, req.text) &&
		      !memcmp(&again.rule, &req.rule, sizeof(req.rule)), "canonical '%s' parses otherwise", canon);
	}
	if (req.cmd == FWD_CTL_PORTS_ADD || req.cmd == FWD_CTL_PORTS_REMOVE) {
		char canon[128];
		int o;

		CHECK(req.nr_port == 1 || req.nr_port == 2, "%u ports", req.nr_port);
		o = snprintf(canon, sizeof(canon), "ports %s", req.cmd == FWD_CTL_PORTS_ADD ? "add" : "remove");
		for (uint32_t k = 0; k < req.nr_port; k++) {
			const char *n = req.port[k].ifname;
			size_t len = strnlen(n, sizeof(req.port[k].ifname));

			CHECK(len && len < sizeof(req.port[k].ifname), "port name of %zu bytes", len);
			CHECK(!strpbrk(n, "/: \t@") && strcmp(n, ".") && strcmp(n, ".."), "port name '%s'", n);
			o += snprintf(canon + o, sizeof(canon) - (size_t)o, " %s@%u", n, req.port[k].queue);
		}
		CHECK(req.nr_port == 1 || strcmp(req.port[0].ifname, req.port[1].ifname) ||
		      req.port[0].queue != req.port[1].queue, "one port named twice");
		CHECK(fwd_ctl_parse(canon, strlen(canon), &again, err, sizeof(err)) == 0, "canonical '%s': %s", canon, err);
		CHECK(again.cmd == req.cmd && again.nr_port == req.nr_port &&
		      !memcmp(again.port, req.port, sizeof(req.port[0]) * req.nr_port), "canonical '%s' parses otherwise", canon);
	}
	return 0;
}
