// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "policy/io_suppress.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

/*
 * A suppression starts from the unit's rate over the interval on its disk,
 * or its owner's throttle there when lower; it grows back to that throttle,
 * else to the rate it started from. Not without a disk or a rate.
 */
static bool start(struct be_limit_unit *e, const struct pol_input *in, const struct pol_unit *u)
{
	const struct pol_io_limit *l = &u->io_limit;
	double rate = in->interval_s > 0 ? (double)u->ms.io_bytes / in->interval_s : 0;
	uint64_t dev = u->ms.io_dev;
	/* the collector reads the disk that has a rule: an owner's elsewhere is left alone */
	bool owned = l->has && l->dev == dev && l->rbps > 0;

	if (!dev || rate < 1)
		return false;
	e->dev = dev;
	e->owner = owned ? l->rbps : -1;
	e->ceiling = llround(rate);
	e->limit = owned && l->rbps < e->ceiling ? l->rbps : e->ceiling;
	return true;
}

/* The evidence every action of the policy carries. */
static void evidence(struct action *a, const struct pol_input *in, const struct pol_unit *u,
		     const struct be_limit_unit *e, double floor)
{
	be_limit_victim(a, in, e, "victim_io_share");
	action_evidence(a, "io_bytes", (double)u->ms.io_bytes);
	action_evidence(a, "rate_bps", in->interval_s > 0 ? u->ms.io_bytes / in->interval_s : 0);
	action_evidence(a, "floor_bps", floor);
	action_evidence(a, "ceiling_bps", e->owner >= 0 ? (double)e->owner : (double)e->ceiling);
	action_evidence(a, "owner_bps", (double)e->owner);
	action_evidence(a, "dev_major", (double)(e->dev >> 20));
	action_evidence(a, "dev_minor", (double)(e->dev & ((1u << 20) - 1)));
}

/* be_limit_ops: I/O's floor (the config's) and throttles. */
static double io_floor(const struct be_limit_ops *o, const struct pol_input *in,
		       const struct pol_unit *u)
{
	const struct io_suppress_config *cfg = o->cfg;

	(void)in;
	(void)u;
	return cfg->floor_bps;
}

/* Both directions get the limit: the probe's bytes are reads and writes together. */
static int io_wish(const struct be_limit_ops *o, const struct pol_input *in,
		   const struct pol_unit *u, const struct be_limit_unit *e, double floor,
		   enum rule_id rule)
{
	static const enum act_kind kinds[] = {ACT_IO_RBPS, ACT_IO_WBPS};
	const struct io_suppress_config *cfg = o->cfg;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct action *a = action_add(o->out, kinds[i], u, rule);

		if (!a)
			return -ENOMEM;
		a->value = e->limit;
		a->dev = e->dev;
		evidence(a, in, u, e, floor);
		action_evidence(a, "cut_share", cfg->steps.cut_share);
	}
	return 0;
}

/* Whether unit id was told already; else it is noted as told. 0/1, or -ENOMEM. */
static int said_before(struct io_suppress_state *st, uint64_t id)
{
	size_t i = pol_lower_bound(st->said, st->n_said, sizeof(*st->said), 0, id);

	if (i < st->n_said && st->said[i] == id)
		return 1;
	if (array_grow((void **)&st->said, &st->cap_said, st->n_said, sizeof(*st->said)))
		return -ENOMEM;
	memmove(&st->said[i + 1], &st->said[i], (st->n_said - i) * sizeof(*st->said));
	st->said[i] = id;
	st->n_said++;
	return 0;
}

/*
 * The culprits no throttle reaches, said once: the node's throttle is
 * missing (once for the node), or the unit's disk is unknown (once a unit).
 */
static int unthrottled(const struct pol_input *in, const struct mem_guilty *g, size_t n,
		       struct io_suppress_state *st, struct action_list *out)
{
	for (size_t i = 0; i < n; i++) {
		const struct pol_unit *u = pol_input_find(in, g[i].culprit);
		const struct pol_unit *v = pol_input_find(in, g[i].victim);
		struct action *a;
		int said;

		/* no bytes this tick (its bios held back, say): nothing to size, nothing to say */
		if (!u || u->cls != QOS_BE ||
		    (in->has_io_limit && (u->ms.io_dev || !u->ms.io_bytes)))
			continue;
		if (!in->has_io_limit && st->said_no_limit)
			continue;
		said = in->has_io_limit ? said_before(st, u->id) : 0;
		if (said < 0)
			return said;
		if (said)
			continue;
		st->said_no_limit |= !in->has_io_limit;
		a = action_add(out, ACT_REPORT, u, RULE_IO_SUPPRESS_UNTHROTTLED);
		if (!a)
			return -ENOMEM;
		a->cause = (struct act_cause){
			.kind = ACT_CAUSE_HELD,
			.held = in->has_io_limit
					? "the disk of its block I/O is unknown (the memstall "
					  "probe's block_bio_queue): not throttled"
					: "this node has no block I/O throttle (blkio/io "
					  "controller with CONFIG_BLK_DEV_THROTTLING): no BE "
					  "pod's block I/O is throttled"};
		a->related_id = g[i].victim;
		if (v)
			memcpy(a->related, v->path, strlen(v->path) + 1);
		action_evidence(a, "victim_io_share", g[i].share);
		action_evidence(a, "io_bytes", (double)u->ms.io_bytes);
	}
	return 0;
}

int io_suppress_run(const struct pol_input *in, const struct io_suppress_config *cfg,
		    const struct mem_guilty *g, size_t n, struct io_suppress_state *st,
		    struct action_list *out)
{
	/* a raise (the floor above the throttle) cannot be: the floor is the config's */
	static const struct be_limit_params p = {1, RULE_IO_SUPPRESS_LIMIT, RULE_IO_SUPPRESS_LIMIT,
						 RULE_IO_SUPPRESS_GROW};
	const struct be_limit_ops ops = {&cfg->steps, start, io_floor, NULL, io_wish, cfg, out};
	int err;

	if (!cfg->enabled) {
		/* a reload turned it off: every throttle is handed back */
		io_suppress_state_free(st);
		return 0;
	}
	err = unthrottled(in, g, n, st, out);
	/* without a throttle nobody is marked: the table stays empty */
	return err ? err : be_limit_tick(&st->t, in, g, in->has_io_limit ? n : 0, &p, &ops);
}

void io_suppress_state_free(struct io_suppress_state *st)
{
	be_limit_table_free(&st->t);
	free(st->said);
	memset(st, 0, sizeof(*st));
}
