// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "policy/batch_evict.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static double cpu_request(const struct pol_unit *u)
{
	return (double)u->batch.cpu_request / 1000.0;
}

static double mem_request(const struct pol_unit *u)
{
	return (double)u->batch.mem_request;
}

/* Larger requests go first among equal priorities, and evicting one releases its request. */
static const struct evict_measure measures[CAP_NR] = {
	[CAP_CPU] = {cpu_request, cpu_request},
	[CAP_MEM] = {mem_request, mem_request},
};

static const enum rule_id rules[CAP_NR] = {
	[CAP_CPU] = RULE_BATCH_OVERCOMMIT_CPU,
	[CAP_MEM] = RULE_BATCH_OVERCOMMIT_MEMORY,
};

double batch_requested(const struct pol_input *in, enum capacity_resource r)
{
	double sum = 0;

	for (size_t i = 0; i < in->n_units; i++)
		if (in->units[i].cls == QOS_BE)
			sum += measures[r].amount(&in->units[i]);
	return sum;
}

/*
 * The input with only the BE units that request resource r: evicting one
 * that requests none would release nothing. Same order (by id), so that
 * evict_round finds pending units in it. units freed by the caller.
 */
static int requesters(const struct pol_input *in, enum capacity_resource r, struct pol_input *out)
{
	*out = *in;
	out->n_units = 0;
	out->units = malloc((in->n_units + 1) * sizeof(*out->units));
	if (!out->units)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_units; i++)
		if (in->units[i].cls == QOS_BE && measures[r].amount(&in->units[i]) > 0)
			out->units[out->n_units++] = in->units[i];
	return 0;
}

static int evict_resource(const struct pol_input *in, const struct capacity_result *cap,
			  const struct batch_resources_config *cfg,
			  const struct evict_order_config *order, struct batch_evict_state *st,
			  enum capacity_resource r, struct action_list *out)
{
	double requested = batch_requested(in, r), alloc = cap->r[r].batch, over_s;
	struct pol_input sub;
	struct evict_victims v = {0};
	int err;

	if (requested <= alloc) {
		st->over[r] = false;
		return 0;
	}
	if (!st->over[r]) {
		st->over[r] = true;
		st->since_ns[r] = in->ts_ns;
	}
	over_s = pol_since_s(in->ts_ns, &st->since_ns[r]);
	if (over_s < cfg->evict_after_s)
		return 0;
	err = requesters(in, r, &sub);
	if (!err)
		err = evict_round_select(&st->round[r], &sub, order, cfg->evict_cooldown_s,
					 requested - alloc, &measures[r], &v);
	for (size_t i = 0; !err && i < v.n; i++) {
		struct action *a = action_add(out, ACT_EVICT, v.v[i], rules[r]);

		if (!a) {
			err = -ENOMEM;
			break;
		}
		action_evidence(a, "batch_requested", requested);
		action_evidence(a, "batch_allocatable", alloc);
		action_evidence(a, "need", requested - alloc);
		action_evidence(a, "pending", v.pending);
		action_evidence(a, "over_s", over_s);
		action_evidence(a, "victim_request", measures[r].amount(v.v[i]));
		action_evidence(a, "skipped_units", (double)v.n_skipped);
		evict_order_evidence(a, v.v[i], in);
	}
	if (!err)
		err = evict_round_report_skipped(&v, in, &measures[r], rules[r], out);
	if (!err)
		err = evict_round_commit(&st->round[r], &v, in->ts_ns);
	free(sub.units);
	evict_victims_free(&v);
	return err;
}

int batch_evict_run(const struct pol_input *in, const struct capacity_result *cap,
		    const struct batch_resources_config *cfg,
		    const struct evict_order_config *order, struct batch_evict_state *st,
		    struct action_list *out)
{
	int err = 0;

	/* Off, or a capacity held at 0: the excess starts over when it counts again. */
	if (!cfg->evict || cap->held) {
		st->over[CAP_CPU] = st->over[CAP_MEM] = false;
		return 0;
	}
	for (int r = 0; !err && r < CAP_NR; r++)
		err = evict_resource(in, cap, cfg, order, st, (enum capacity_resource)r, out);
	return err;
}

void batch_evict_state_free(struct batch_evict_state *st)
{
	for (int r = 0; r < CAP_NR; r++)
		evict_round_free(&st->round[r]);
	memset(st, 0, sizeof(*st));
}
