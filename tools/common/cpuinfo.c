/* SPDX-License-Identifier: MIT */
/* The CPU a benchmark ran on (cpuinfo.h). */
#include <stdio.h>
#include <string.h>
#include "cpuinfo.h"

static void cpu_field(const char *line, const char *key, char *out, size_t n)
{
	size_t k = strlen(key);
	const char *v;

	if (out[0] != '?' || strncmp(line, key, k) || !(v = strchr(line + k, ':')))
		return;
	for (v++; *v == ' ' || *v == '\t'; v++)
		;
	snprintf(out, n, "%.*s", (int)strcspn(v, "\n"), v);
	/* Kept JSON-safe: quotes and backslashes never appear in these fields, but the name is
	 * free text. */
	for (char *c = out; *c; c++)
		if (*c == '"' || *c == '\\')
			*c = '\'';
}

void cpu_identify(struct cpu_ident *c)
{
	char line[256];
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(c->vendor, sizeof(c->vendor), "?");
	snprintf(c->family, sizeof(c->family), "?");
	snprintf(c->model, sizeof(c->model), "?");
	snprintf(c->name, sizeof(c->name), "?");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && line[0] != '\n') { /* the first CPU's block */
		cpu_field(line, "vendor_id", c->vendor, sizeof(c->vendor));
		cpu_field(line, "CPU implementer", c->vendor, sizeof(c->vendor));
		cpu_field(line, "cpu family", c->family, sizeof(c->family));
		cpu_field(line, "CPU architecture", c->family, sizeof(c->family));
		cpu_field(line, "model\t", c->model, sizeof(c->model));
		cpu_field(line, "CPU part", c->model, sizeof(c->model));
		cpu_field(line, "model name", c->name, sizeof(c->name));
	}
	fclose(f);
}

