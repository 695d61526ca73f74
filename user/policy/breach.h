/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the interference policies share (CPU: interference.c, memory and
 * I/O: mem_interference.c): the k-of-n window history of a victim, the
 * victim-culprit pairs of the last n ticks, the party that explains a
 * victim's breach (the largest share of its pairs), the naming of that
 * party, and the report of a breach, made at most once per victim and
 * party within cap_s. Each policy makes its own pairs (CPU: waits behind
 * whoever ran; memory: stall time shared out by the evidence of who
 * reclaimed) and adds its own evidence to the report.
 */
#ifndef QOSLET_POLICY_BREACH_H
#define QOSLET_POLICY_BREACH_H

#include <stdbool.h>
#include <stdint.h>

#include "policy/action.h"
#include "policy/cause.h"
#include "policy/model.h"

/* Windows kept per victim: the history is one 64-bit word. */
#define BREACH_N_MAX 64

/* A victim's last counted windows, newest in bit 0 (1 = over its threshold). */
struct breach_window {
	uint64_t over;
	unsigned int n; /* counted so far, up to BREACH_N_MAX */
};

/*
 * A policy's per-unit entries (size bytes each, sorted by the uint64_t id
 * they start with) carried over to the input's units: an entry whose unit
 * is gone is dropped, a new unit gets a zeroed entry with its id. 0 or
 * -ENOMEM (then *v is as it was).
 */
int breach_units_sync(void **v, size_t *n, size_t size, const struct pol_input *in);

void breach_window_push(struct breach_window *w, bool over);
/* Windows counted among the last n, and how many of them were over. */
unsigned int breach_windows(const struct breach_window *w, unsigned int n);
unsigned int breach_windows_over(const struct breach_window *w, unsigned int n);

/* One tick's pairs (sorted by victim, then culprit) and the outside parties they name. */
struct breach_tick {
	uint64_t tick; /* 0 = empty */
	struct pol_blame *v;
	size_t n, cap;
	struct pol_outside *out;
	size_t n_out, cap_out;
};

/* A victim's breach reported at reported_ns, explained by culprit (a pair's culprit id). */
struct breach_pair {
	uint64_t victim, culprit;
	enum interference_cause cause;
	uint64_t reported_ns;
};

/* All zero is the initial state. */
struct breach_state {
	uint64_t tick;				/* the tick being judged (the first is 1) */
	struct breach_tick ticks[BREACH_N_MAX]; /* slot tick % n */
	struct breach_pair *pairs;
	size_t n_pairs, cap_pairs;
	/* Outside culprits in pol_input.mem_ancestors are CAUSE_ANCESTOR (memory). */
	bool ancestors;
};

/*
 * The slot of tick st->tick, emptied, with room for n pairs and n_out
 * outside parties: the caller appends its pairs (sorted) and parties
 * (sorted by id). NULL when out of memory.
 */
struct breach_tick *breach_tick_open(struct breach_state *st, unsigned int window_n, size_t n,
				     size_t n_out);

/* One victim's pairs over the last window_n ticks, per culprit (sorted by culprit). */
struct breach_waits {
	struct pol_blame *v;
	size_t n;
	uint64_t total; /* every culprit's */
};

int breach_waits_collect(const struct breach_state *st, unsigned int window_n, uint64_t victim,
			 struct breach_waits *w);
uint64_t breach_waits_of(const struct breach_waits *w, uint64_t culprit);

/* One party to a victim's pairs and its share of them. */
struct breach_party {
	uint64_t id;
	enum interference_cause cause;
	uint64_t wait_ns;
	double share; /* of the victim's total */
	double corr;  /* NAN: not computed or undefined */
};

/*
 * The party with the largest share, and each cause's share
 * (share[CAUSE_NR]). Ties go to the cause listed first in enum
 * interference_cause, then to the lower id. False when the total is 0.
 */
bool breach_explain(const struct pol_input *in, const struct breach_state *st, uint64_t victim,
		    const struct breach_waits *w, struct breach_party *top, double share[CAUSE_NR]);

struct breach_pair *breach_pair_find(struct breach_state *st, uint64_t victim, uint64_t culprit);

/*
 * Forgets the pairs reported cap_s ago or more, those of vanished victims,
 * and those naming a unit that vanished.
 */
void breach_pairs_expire(struct breach_state *st, const struct pol_input *in, double cap_s);

/* What a report adds beyond the shared evidence, called before it. */
typedef void (*breach_evidence_fn)(struct action *a, const void *ctx);

/*
 * Reports the victim's breach explained by p under `rule`, unless that
 * pair was reported within cap_s (breach_pairs_expire): the policy's own
 * evidence (fn), then the culprit's share and wait, its correlation when
 * known, its class, and the share of each cause in `causes` (bits 1 <<
 * enum interference_cause: the ones the policy can find). 0 or -ENOMEM.
 */
int breach_report(const struct pol_input *in, struct breach_state *st, unsigned int window_n,
		  const struct pol_unit *v, const struct breach_party *p,
		  const double share[CAUSE_NR], unsigned int causes, enum rule_id rule,
		  breach_evidence_fn fn, const void *ctx, struct action_list *out);

void breach_state_free(struct breach_state *st);

#endif
