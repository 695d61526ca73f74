// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "policy/mem_suppress.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy/evict_memory.h"

/* A reclaim request smaller than a page asks for nothing. */
#define RECLAIM_MIN_BYTES 4096
/*
 * Limits are wished in whole pages: the kernel rounds a memory limit down to
 * one, and a wish it rounded would read as someone else's change, asked
 * again at every tick.
 */
#define LIMIT_ALIGN 4096

/*
 * The unit's limit as read: memory.high on v2 (read with memory QoS's
 * settings, has_mem_qos), memory.limit_in_bytes on v1; -1 none or unread.
 */
static int64_t limit_read(const struct pol_input *in, const struct pol_unit *u)
{
	if (in->mem_v2)
		return u->has_mem_qos && u->mem_high >= 0 ? u->mem_high : -1;
	return u->mem_max;
}

/*
 * A suppression starts from what the unit holds: its usage, or its owner's
 * limit when lower; it grows back to its owner's limit, else node memory.
 * Not when its memory was not read (nothing to size a cut by).
 */
static bool start(struct be_limit_unit *e, const struct pol_input *in, const struct pol_unit *u)
{
	if (!u->mem_usage)
		return false;
	e->owner = limit_read(in, u);
	e->limit = e->owner >= 0 && (uint64_t)e->owner < u->mem_usage ? e->owner
								      : (int64_t)u->mem_usage;
	e->ceiling = (int64_t)in->mem_capacity;
	return true;
}

/* The evidence every action of the policy carries. */
static void evidence(struct action *a, const struct pol_input *in, const struct pol_unit *u,
		     const struct be_limit_unit *e, double floor)
{
	be_limit_victim(a, in, e, "victim_stall_share");
	action_evidence(a, "usage_bytes", (double)u->mem_usage);
	action_evidence(a, "file_bytes", (double)u->mem_file);
	action_evidence(a, "working_set_bytes", (double)u->mem_used);
	action_evidence(a, "anon_unevict_bytes", (double)u->mem_anon_unevict);
	action_evidence(a, "floor_bytes", floor);
	action_evidence(a, "owner_limit_bytes", (double)e->owner);
}

/* Asks back a share of the guilty unit's page cache, where the kernel takes such a request. */
static int reclaim(const struct pol_input *in, const struct mem_suppress_config *cfg,
		   const struct pol_unit *u, struct be_limit_unit *e, double floor,
		   struct action_list *out)
{
	double bytes = cfg->reclaim_share * (double)u->mem_file;
	struct action *a;

	if (!in->has_mem_reclaim || bytes < RECLAIM_MIN_BYTES ||
	    (e->reclaim_ns && pol_since_s(in->ts_ns, &e->reclaim_ns) < cfg->reclaim_interval_s))
		return 0;
	a = action_add(out, ACT_MEM_RECLAIM, u, RULE_MEM_SUPPRESS_RECLAIM);
	if (!a)
		return -ENOMEM;
	a->value = llround(bytes);
	evidence(a, in, u, e, floor);
	action_evidence(a, "reclaim_share", cfg->reclaim_share);
	e->reclaim_ns = in->ts_ns;
	return 0;
}

/* The units at their floor and still guilty evict_after_s on: an eviction round for them. */
static int evict(const struct pol_input *in, const struct mem_suppress_config *cfg,
		 const struct evict_order_config *order, struct mem_suppress_state *st,
		 struct action_list *out)
{
	struct evict_victims v;
	double need = 0;
	int err;

	for (size_t i = 0; i < st->t.n; i++) {
		struct be_limit_unit *e = &st->t.v[i];

		if (e->guilty_ns == in->ts_ns && e->floor_ns &&
		    pol_since_s(in->ts_ns, &e->floor_ns) >= cfg->evict_after_s)
			need += (double)pol_input_find(in, e->id)->mem_used;
	}
	if (!cfg->evict || need <= 0)
		return 0;
	err = evict_round_select(&st->round, in, order, cfg->evict_cooldown_s, need,
				 &evict_memory_measure, &v);
	for (size_t i = 0; !err && i < v.n; i++) {
		struct action *a = action_add(out, ACT_EVICT, v.v[i], RULE_MEM_SUPPRESS_EVICT);

		if (!a) {
			err = -ENOMEM;
			break;
		}
		action_evidence(a, "need_bytes", need);
		action_evidence(a, "pending_bytes", v.pending);
		action_evidence(a, "victim_mem_bytes", (double)v.v[i]->mem_used);
		action_evidence(a, "victim_anon_unevict_bytes", (double)v.v[i]->mem_anon_unevict);
		action_evidence(a, "evict_after_s", cfg->evict_after_s);
		evict_order_evidence(a, v.v[i], in);
	}
	if (!err)
		err = evict_round_report_skipped(&v, in, &evict_memory_measure,
						 RULE_MEM_SUPPRESS_EVICT, out);
	if (!err)
		err = evict_round_commit(&st->round, &v, in->ts_ns);
	evict_victims_free(&v);
	return err;
}

/* be_limit_ops: memory's floor, reclaim and limit. */
static double mem_floor(const struct be_limit_ops *o, const struct pol_input *in,
			const struct pol_unit *u)
{
	const struct mem_suppress_config *cfg = o->cfg;

	(void)in;
	return (double)u->mem_anon_unevict + cfg->margin_bytes;
}

static int mem_guilty(const struct be_limit_ops *o, const struct pol_input *in,
		      const struct pol_unit *u, struct be_limit_unit *e, double floor)
{
	return reclaim(in, o->cfg, u, e, floor, o->out);
}

static int mem_wish(const struct be_limit_ops *o, const struct pol_input *in,
		    const struct pol_unit *u, const struct be_limit_unit *e, double floor,
		    enum rule_id rule)
{
	const struct mem_suppress_config *cfg = o->cfg;
	struct action *a = action_add(o->out, in->mem_v2 ? ACT_MEM_HIGH : ACT_MEM_LIMIT, u, rule);

	if (!a)
		return -ENOMEM;
	a->value = e->limit;
	evidence(a, in, u, e, floor);
	action_evidence(a, "cut_share", cfg->steps.cut_share);
	return 0;
}

int mem_suppress_run(const struct pol_input *in, const struct mem_suppress_config *cfg,
		     const struct evict_order_config *order, const struct mem_guilty *g, size_t n,
		     struct mem_suppress_state *st, struct action_list *out)
{
	static const struct be_limit_params p = {LIMIT_ALIGN, RULE_MEM_SUPPRESS_LIMIT,
						 RULE_MEM_SUPPRESS_RAISE, RULE_MEM_SUPPRESS_GROW};
	const struct be_limit_ops ops = {&cfg->steps, start, mem_floor, mem_guilty,
					 mem_wish,    cfg,   out};

	int err;

	if (!cfg->enabled) {
		/* a reload turned it off: every limit is handed back */
		mem_suppress_state_free(st);
		return 0;
	}
	err = be_limit_tick(&st->t, in, g, n, &p, &ops);
	return err ? err : evict(in, cfg, order, st, out);
}

void mem_suppress_state_free(struct mem_suppress_state *st)
{
	be_limit_table_free(&st->t);
	evict_round_free(&st->round);
	memset(st, 0, sizeof(*st));
}
