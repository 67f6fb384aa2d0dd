/* SPDX-License-Identifier: MIT */
/* umem-steer flows: the flow table (offload) of a steering program. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <umem/steer.h>

#include "flows.h"

static int print_flow(const struct umem_steer_flow_key *key, const struct umem_steer_flow *flow, void *arg)
{
	char line[320];

	(void)arg;
	umem_steer_flow__format(key, flow, line, sizeof(line));
	printf("  %s\n", line);
	return 0;
}

/* flows IFACE                list the flows and the program's flow counters
 * flows IFACE expire SECS    remove flows idle for more than SECS
 * flows IFACE clear          remove every flow */
int steer_cmd_flows(struct umem_steer *s, char **argv, int argc)
{
	struct umem_steer_flows *f = umem_steer_flows__open(s);
	struct umem_steer_counter c[UMEM_STEER_FS_NR];
	uint32_t nr = 0, limit = 0;
	int err = 0, n;

	if (!f)
		return -errno;
	if (argc == 2 && !strcmp(argv[0], "expire")) {
		char *end;
		double secs = strtod(argv[1], &end);

		if (*end || secs < 0) {
			fprintf(stderr, "umem-steer: flows expire: '%s' is not a number of seconds\n", argv[1]);
			err = -EINVAL;
		} else if ((n = umem_steer_flows__expire(f, (uint64_t)(secs * 1e9), print_flow, NULL)) >= 0) {
			printf("%d flow%s expired\n", n, n == 1 ? "" : "s");
		} else {
			err = n;
		}
	} else if (argc == 1 && !strcmp(argv[0], "clear")) {
		err = umem_steer_flows__clear(f);
	} else if (argc) {
		fprintf(stderr, "umem-steer: usage: flows IFACE [expire SECS | clear]\n");
		err = -EINVAL;
	} else if (!(err = umem_steer_flows__count(f, &nr, &limit)) && !(err = umem_steer_flows__counters(f, c))) {
		printf("flows: %u of %u\n", nr, limit);
		n = umem_steer_flows__foreach(f, print_flow, NULL);
		if (n < 0)
			err = n;
		printf("flow counters:");
		for (uint32_t i = 0; i < UMEM_STEER_FS_NR; i++)
			printf(" %s %llu/%llu B", umem_steer_flow_stat__name(i), (unsigned long long)c[i].packets,
			       (unsigned long long)c[i].bytes);
		printf("\n");
	}
	umem_steer_flows__close(f);
	return err;
}
