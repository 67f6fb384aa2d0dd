/* SPDX-License-Identifier: MIT */
/*
 * The CPU a benchmark ran on, so that figures from different machines are never compared by
 * mistake: x86's vendor, family and model, or arm64's implementer and part, from the first
 * CPU in /proc/cpuinfo ("?" where a field is absent). Shared by the benchmarks (tools/common).
 */
#ifndef UMEM_TOOLS_CPUINFO_H
#define UMEM_TOOLS_CPUINFO_H

struct cpu_ident {
	char vendor[32], family[16], model[16], name[96];
};

void cpu_identify(struct cpu_ident *c);

#endif
