/* SPDX-License-Identifier: MIT */
/*
 * netns test helper: NPROC processes, released together, each opening the steering program on
 * IFACE (umem_steer__open, as umem-steer does) and, ROUNDS times, adding NPER rules of its own
 * ("udp dport 10000+1000*p+i -> pass") then removing them by the ids the adds returned. Exits 1
 * with a message when an add or remove fails, an id is handed to two live rules (a remove
 * returns a rule that is not the one added), or the table does not end as it began.
 *   steer_writers IFACE NPROC NPER ROUNDS
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <umem/steer.h>

static int writer(const char *ifname, int p, int nper, int rounds)
{
	struct umem_steer *s = umem_steer__open(ifname);
	uint32_t ids[UMEM_STEER_MAX_RULES];

	if (!s) {
		fprintf(stderr, "writer %d: open: %s\n", p, strerror(errno));
		return 1;
	}
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < nper; i++) {
			struct umem_steer_rule rule = {
				.match = { .fields = UMEM_STEER_M_L4PROTO | UMEM_STEER_M_DPORT, .l4proto = 17,
					   .dport = (uint16_t)(10000 + 1000 * p + i) },
				.action = { .type = UMEM_STEER_A_PASS },
			};
			int err = umem_steer__add_rule(s, &rule);

			if (err) {
				fprintf(stderr, "writer %d round %d: add %d: %s\n", p, r, i, strerror(-err));
				return 1;
			}
			ids[i] = rule.id;
		}
		for (int i = 0; i < nper; i++) {
			struct umem_steer_rule got;
			int err = umem_steer__remove_rule(s, ids[i], &got);

			if (err) {
				fprintf(stderr, "writer %d round %d: remove of id %u (dport %d): %s\n", p, r,
					ids[i], 10000 + 1000 * p + i, strerror(-err));
				return 1;
			}
			if (got.match.dport != 10000 + 1000 * p + i) {
				fprintf(stderr, "writer %d round %d: id %u was given to dport %u too\n", p, r,
					ids[i], got.match.dport);
				return 1;
			}
		}
	}
	umem_steer__detach(s);
	return 0;
}

int main(int argc, char **argv)
{
	int nproc, nper, rounds, go[2], failed = 0, before, after;
	struct umem_steer *s;
	char c;

	if (argc != 5 || (nproc = atoi(argv[2])) < 1 || (nper = atoi(argv[3])) < 1 ||
	    (rounds = atoi(argv[4])) < 1 || nproc * nper > UMEM_STEER_MAX_RULES || nproc > 50) {
		fprintf(stderr, "usage: steer_writers IFACE NPROC NPER ROUNDS (NPROC*NPER <= %d)\n",
			UMEM_STEER_MAX_RULES);
		return 2;
	}
	s = umem_steer__open(argv[1]);
	if (!s || pipe(go))
		return 1;
	before = umem_steer__rules(s, NULL, 0);
	for (int p = 0; p < nproc; p++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (!pid) {
			close(go[1]);
			/* Released when the parent closes the pipe: all start at once. */
			if (read(go[0], &c, 1) < 0)
				_exit(1);
			_exit(writer(argv[1], p, nper, rounds));
		}
	}
	close(go[0]);
	close(go[1]);
	for (int p = 0; p < nproc; p++) {
		int st;

		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			failed++;
	}
	after = umem_steer__rules(s, NULL, 0);
	umem_steer__detach(s);
	if (after != before) {
		fprintf(stderr, "table held %d rules before, %d after every add was removed\n", before, after);
		failed++;
	}
	printf("%d writers, %d edits each: %s\n", nproc, 2 * nper * rounds, failed ? "FAILED" : "ok");
	return failed ? 1 : 0;
}
