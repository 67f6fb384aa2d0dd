/* SPDX-License-Identifier: MIT */
/*
 * The metric families xdp-fwd's text can hold (fwd_metrics_families): well formed, unique,
 * counters named _total, the optional families (rules, l2, capture) listed too. With --list it
 * prints them, "NAME TYPE" a line, for test/fwd/dashboard.py.
 */
#include <ctype.h>

#include "metrics.h"
#include "testutil.h"

int main(int argc, char **argv)
{
	static const char *const expected[] = {
		"xdp_fwd_build_info gauge",	     "xdp_fwd_port_rx_packets_total counter",
		"xdp_fwd_port_drops_total counter",  "xdp_fwd_offload_flows gauge",
		"xdp_fwd_pool_pages_held gauge",     "xdp_fwd_worker_sleeps_total counter",
		"xdp_fwd_rule_hits_total counter",   "xdp_fwd_steer_frames_total counter",
		"xdp_fwd_l2_macs gauge",	     "xdp_fwd_capture_frames_total counter",
		"xdp_fwd_worker_cpu_seconds_total counter",
	};
	char *text = NULL, *line, *save = NULL, *names[256];
	size_t len = 0, n = 0;
	FILE *o;

	if (argc > 1 && !strcmp(argv[1], "--list"))
		return fwd_metrics_families(stdout) ? 1 : 0;
	o = open_memstream(&text, &len);
	CHECK(o, "open_memstream");
	CHECK_EQ(fwd_metrics_families(o), 0);
	CHECK(!fclose(o), "fclose");
	for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
		size_t l = strlen(expected[i]);
		const char *p = text;

		while ((p = strstr(p, expected[i])) && ((p != text && p[-1] != '\n') || p[l] != '\n'))
			p++;
		CHECK(p, "'%s' not listed:\n%s", expected[i], text);
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *type = strchr(line, ' ');

		CHECK(type && n < sizeof(names) / sizeof(names[0]), "'%s': not NAME TYPE", line);
		*type++ = '\0';
		CHECK(!strncmp(line, "xdp_fwd_", 8), "%s: not xdp_fwd_", line);
		for (const char *c = line; *c; c++)
			CHECK(islower((unsigned char)*c) || isdigit((unsigned char)*c) || *c == '_', "%s: '%c'", line, *c);
		if (!strcmp(type, "counter"))
			CHECK(len > 6 && strlen(line) > 6 && !strcmp(line + strlen(line) - 6, "_total"),
			      "counter %s without _total", line);
		else
			CHECK(!strcmp(type, "gauge"), "%s: type '%s'", line, type);
		for (size_t i = 0; i < n; i++)
			CHECK(strcmp(names[i], line), "%s listed twice", line);
		names[n++] = line;
	}
	free(text);
	printf("fwd_metrics_names: %zu families ok\n", n);
	return 0;
}
