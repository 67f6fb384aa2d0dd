/* SPDX-License-Identifier: MIT */
/* xsk-gen sink accounting: loss, reordering and duplicates from sequence numbers. */
#include <string.h>

#include "gen.h"

static bool seen_test(const struct gen_seq *s, uint64_t n)
{
	uint64_t bit = n % GEN_SEQ_WINDOW;

	return s->seen[bit / 64] >> (bit % 64) & 1;
}

static void seen_set(struct gen_seq *s, uint64_t n, bool on)
{
	uint64_t bit = n % GEN_SEQ_WINDOW, mask = 1ull << (bit % 64);

	if (on)
		s->seen[bit / 64] |= mask;
	else
		s->seen[bit / 64] &= ~mask;
}

void gen_seq_init(struct gen_seq *s)
{
	memset(s, 0, sizeof(*s));
}

void gen_seq_account(struct gen_seq *s, uint64_t seq)
{
	if (seq >= s->next) {
		/* The numbers skipped are lost until they show up. Their bits are reused from the
		 * numbers that just left the window, so clear them. */
		s->lost += seq - s->next;
		if (seq - s->next >= GEN_SEQ_WINDOW)
			memset(s->seen, 0, sizeof(s->seen));
		else
			for (uint64_t n = s->next; n < seq; n++)
				seen_set(s, n, false);
		seen_set(s, seq, true);
		s->next = seq + 1;
		s->received++;
		return;
	}
	if (s->next - seq <= GEN_SEQ_WINDOW) {
		if (seen_test(s, seq)) {
			s->duplicates++;
			return;
		}
		seen_set(s, seq, true);
	}
	/* Late: it was counted lost when a higher number arrived. Beyond the window a duplicate
	 * cannot be told apart; it is counted as late, without letting loss wrap below 0. */
	s->reordered++;
	s->received++;
	if (s->lost)
		s->lost--;
}
