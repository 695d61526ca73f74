/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What memory and I/O suppression share (mem_suppress.h, io_suppress.h): a
 * table of the BE units a detection found guilty, and the step of each
 * one's limit (a memory limit, a block I/O throttle):
 *   - cut towards its floor by cut_share of the gap per guilty tick (at
 *     least min_change, so the steps reach the floor);
 *   - once the unit has not been guilty for its wait (well_s, doubled by
 *     each relapse up to BE_LIMIT_HOLD_MAX x well_s), grown back by
 *     grow_share of its ceiling a second, and at the ceiling handed back
 *     (released: no wish, the plan restores the owner's);
 *   - a released unit is kept, without a wish, for its relapse wait.
 */
#ifndef QOSLET_POLICY_BE_LIMIT_H
#define QOSLET_POLICY_BE_LIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/action.h"
#include "policy/mem_guilty.h"
#include "policy/model.h"
#include "policy/policy_config.h"
#include "policy/rule.h"

/* A relapsing unit's wait before growing back is at most this many times well_s. */
#define BE_LIMIT_HOLD_MAX 32

/* One BE unit under suppression. */
struct be_limit_unit {
	uint64_t id;
	int64_t limit;	    /* the limit this policy wants now */
	int64_t owner;	    /* the unit's limit when first suppressed; -1 none */
	int64_t ceiling;    /* without an owner's limit: where growth ends (its usage, its rate) */
	uint64_t guilty_ns; /* ts_ns it was last guilty */
	uint64_t floor_ns;  /* ts_ns its limit reached the floor while guilty; 0 not there */
	uint64_t victim;    /* the last victim it was found guilty of */
	double share;	    /* and its share of that victim's evidence */
	bool wished;	    /* limit was wished at an earlier tick (else this is the first cut) */
	/*
	 * It grew back since its last cut, and the wait before it may grow
	 * (well_s at first, doubled by each relapse: found guilty again after
	 * growing, it grew back too far).
	 */
	bool grown;
	double hold_s;
	/*
	 * It grew back to its ceiling and was handed back (no wish); kept for
	 * its relapse wait until well for BE_LIMIT_HOLD_MAX x well_s past it.
	 */
	bool released;
	uint64_t grow_ns;  /* ts_ns its growth began (with grown) */
	int64_t grow_base; /* its limit then */
	/* What one suppression keeps beside: memory's last reclaim (ts_ns), I/O's disk. */
	uint64_t reclaim_ns;
	uint64_t dev;
};

struct be_limit_table {
	struct be_limit_unit *v; /* sorted by id */
	size_t n, cap;
};

/* What a suppression's steps are made of besides its config's suppress_steps. */
struct be_limit_params {
	int64_t align; /* limits are wished in multiples of it (memory: a page); 1 none */
	/* the rules of a cut, of a raise (the floor moved above the limit), of growth */
	enum rule_id cut, raise, grow;
};

/*
 * (Re)starts a suppression of unit u: sets e->owner, e->limit and
 * e->ceiling from what it holds; false when there is nothing to size a cut
 * by (then the unit is passed by this tick).
 */
typedef bool (*be_limit_start_fn)(struct be_limit_unit *e, const struct pol_input *in,
				  const struct pol_unit *u);

/*
 * The victim an action answers for: a->related is e's last victim, and
 * evidence `share_name` its share of that victim's evidence.
 */
void be_limit_victim(struct action *a, const struct pol_input *in, const struct be_limit_unit *e,
		     const char *share_name);

/* What one suppression does with its entries each tick (be_limit_tick). */
struct be_limit_ops {
	const struct suppress_steps *steps;
	be_limit_start_fn start;
	/* the unit's floor, in the limit's unit */
	double (*floor)(const struct be_limit_ops *o, const struct pol_input *in,
			const struct pol_unit *u);
	/* a guilty unit, before its step (memory: a reclaim); NULL none. 0 or -ENOMEM */
	int (*guilty)(const struct be_limit_ops *o, const struct pol_input *in,
		      const struct pol_unit *u, struct be_limit_unit *e, double floor);
	/* appends the actions that wish e->limit, set by `rule`. 0 or -ENOMEM */
	int (*wish)(const struct be_limit_ops *o, const struct pol_input *in,
		    const struct pol_unit *u, const struct be_limit_unit *e, double floor,
		    enum rule_id rule);
	const void *cfg;	 /* the suppression's config, for the functions above */
	struct action_list *out; /* where they append */
};

/*
 * One tick. This tick's culprits among the n verdicts g (a culprit that is
 * not a BE unit of in is passed by) are marked, those not yet suppressed
 * added and released ones restarted (ops->start). Then each entry whose
 * unit is still BE is stepped and wished; a released one is kept, without
 * a wish, for its relapse wait; the rest are dropped (the plan hands their
 * limits back). 0 or -ENOMEM (then the entries not reached are dropped too).
 */
int be_limit_tick(struct be_limit_table *t, const struct pol_input *in, const struct mem_guilty *g,
		  size_t n, const struct be_limit_params *p, const struct be_limit_ops *ops);

void be_limit_table_free(struct be_limit_table *t);

#endif
