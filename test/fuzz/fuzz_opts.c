/* SPDX-License-Identifier: MIT */
/*
 * Fuzz harness: the command-line parsers of xdp-fwd (fwd_parse_args, fwd_parse_cpu_list) and
 * xsk-gen's size mix (gen_mix_parse). The input is split at NUL bytes into arguments. Any
 * argument vector is either refused with a message, or (help/version) printed, or yields a
 * configuration that keeps the invariants the data path relies on; a parsed mix keeps its
 * sizes in range and its schedule matches its weights.
 */
#include <stdio.h>
#include <string.h>
#include "fwd.h"
#include "gen.h"
#include "testutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 24

static void check_config(const struct fwd_config *cfg)
{
	CHECK(cfg->nr_ports >= 1 && cfg->nr_ports <= FWD_MAX_PORTS, "%u ports", cfg->nr_ports);
	CHECK(cfg->workers >= 1 && cfg->workers <= cfg->nr_ports && cfg->workers <= FWD_MAX_WORKERS,
	      "%u workers for %u ports", cfg->workers, cfg->nr_ports);
	CHECK(cfg->batch >= 1, "batch %u", cfg->batch);
	CHECK(cfg->mode != FWD_MODE_WIRE || cfg->nr_ports % 2 == 0, "wire mode with %u ports", cfg->nr_ports);
	CHECK(cfg->nr_rules <= FWD_MAX_RULES && cfg->nr_cpus <= FWD_MAX_WORKERS, "counts");
	for (uint32_t i = 0; i < cfg->nr_ports; i++)
		CHECK(memchr(cfg->ports[i].ifname, 0, IF_NAMESIZE), "interface name not terminated");
}

static void check_mix(const char *text)
{
	static struct gen_mix mix;
	char err[128] = "";
	uint32_t count[GEN_MIX_MAX_SIZES] = { 0 }, sum = 0;

	if (gen_mix_parse(&mix, text, GEN_FRAME_MAX, err, sizeof(err))) {
		CHECK(err[0], "mix '%s' refused without a message", text);
		return;
	}
	CHECK(mix.nr >= 1 && mix.nr <= GEN_MIX_MAX_SIZES, "mix of %u sizes", mix.nr);
	for (uint32_t i = 0; i < mix.nr; i++) {
		CHECK(mix.size[i] >= GEN_FRAME_MIN && mix.size[i] <= GEN_FRAME_MAX, "size %u", mix.size[i]);
		sum += mix.weight[i];
	}
	CHECK(sum == mix.period && mix.period >= 1 && mix.period <= GEN_MIX_MAX_PERIOD, "period %u", mix.period);
	for (uint32_t s = 0; s < mix.period; s++) {
		CHECK(mix.schedule[s] < mix.nr, "schedule slot %u", s);
		count[mix.schedule[s]]++;
	}
	for (uint32_t i = 0; i < mix.nr; i++)
		CHECK(count[i] == mix.weight[i], "size %u scheduled %u times, weight %u", mix.size[i],
		      count[i], mix.weight[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char text[4096], prog[] = "xdp-fwd";
	static struct fwd_config cfg;
	char *argv[MAX_ARGS + 2], err[256];
	int argc = 1, cpus[FWD_MAX_WORKERS];
	static bool quiet;

	if (!quiet) /* --help and --version print: keep the fuzzer's output readable */
		quiet = freopen("/dev/null", "w", stdout) != NULL;
	if (size >= sizeof(text))
		size = sizeof(text) - 1;
	memcpy(text, data, size);
	text[size] = 0;
	argv[0] = prog;
	for (char *s = text; s < text + size && argc <= MAX_ARGS; s += strlen(s) + 1)
		argv[argc++] = s;
	argv[argc] = NULL;

	err[0] = 0;
	int r = fwd_parse_args(&cfg, argc, argv, err, sizeof(err));
	CHECK(r >= -1 && r <= 1, "fwd_parse_args returned %d", r);
	if (r < 0)
		CHECK(err[0] && memchr(err, 0, sizeof(err)), "refused without a message");
	if (r == 0)
		check_config(&cfg);
	for (int i = 1; i < argc; i++) {
		int n = fwd_parse_cpu_list(argv[i], cpus, FWD_MAX_WORKERS);

		CHECK(n >= -1 && n <= FWD_MAX_WORKERS, "cpu list '%s': %d", argv[i], n);
		for (int k = 0; k < n; k++)
			CHECK(cpus[k] >= 0, "cpu list '%s': negative CPU", argv[i]);
		check_mix(argv[i]);
	}
	fwd_config_free(&cfg); /* a --config file's text and the recorded options */
	return 0;
}
