// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "policy/mem_suppress.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "policy/evict_memory.h"
#include "policy/rate.h"

/* A reclaim request smaller than a page asks for nothing. */
#define RECLAIM_MIN_BYTES 4096
/*
 * Limits are wished in whole pages: the kernel rounds a memory limit down to
 * one, and a wish it rounded would read as someone else's change, asked
 * again at every tick.
 */
#define LIMIT_ALIGN 4096

static struct mem_sup_unit *find(struct mem_suppress_state *st, uint64_t id)
{
	size_t i = pol_lower_bound(st->v, st->n, sizeof(*st->v), offsetof(struct mem_sup_unit, id),
				   id);

	return i < st->n && st->v[i].id == id ? &st->v[i] : NULL;
}

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

/* A suppression starts from what the unit holds: its usage, or its owner's limit when lower. */
static void start(struct mem_sup_unit *e, const struct pol_input *in, const struct pol_unit *u)
{
	e->owner = limit_read(in, u);
	e->limit = e->owner >= 0 && (uint64_t)e->owner < u->mem_usage ? e->owner
								      : (int64_t)u->mem_usage;
	e->wished = e->released = false;
}

/*
 * A new entry for a guilty unit, starting from what it holds (its usage,
 * or its owner's limit when lower); NULL with *err 0 when its memory was
 * not read (nothing to size a cut by), or -ENOMEM.
 */
static struct mem_sup_unit *add(struct mem_suppress_state *st, const struct pol_input *in,
				const struct pol_unit *u, int *err)
{
	size_t i;

	*err = 0;
	if (!u->mem_usage)
		return NULL;
	*err = array_grow((void **)&st->v, &st->cap, st->n, sizeof(*st->v));
	if (*err)
		return NULL;
	i = pol_lower_bound(st->v, st->n, sizeof(*st->v), offsetof(struct mem_sup_unit, id), u->id);
	memmove(&st->v[i + 1], &st->v[i], (st->n - i) * sizeof(*st->v));
	st->n++;
	st->v[i] = (struct mem_sup_unit){.id = u->id};
	start(&st->v[i], in, u);
	return &st->v[i];
}

/* Marks the culprits of this tick (the largest share of each), adding those not yet suppressed. */
static int mark_guilty(const struct pol_input *in, const struct mem_guilty *g, size_t n,
		       struct mem_suppress_state *st)
{
	for (size_t i = 0; i < n; i++) {
		const struct pol_unit *u = pol_input_find(in, g[i].culprit);
		struct mem_sup_unit *e;
		int err;

		if (!u || u->cls != QOS_BE)
			continue; /* never an LS unit's memory, whoever names it */
		e = find(st, u->id);
		/* handed back earlier, guilty again: a new suppression that keeps its wait */
		if (e && e->released && u->mem_usage)
			start(e, in, u);
		else if (e && e->released)
			continue;
		if (!e) {
			e = add(st, in, u, &err);
			if (!e) {
				if (err)
					return err;
				continue;
			}
		}
		if (e->guilty_ns != in->ts_ns || g[i].share > e->share) {
			e->victim = g[i].victim;
			e->share = g[i].share;
		}
		e->guilty_ns = in->ts_ns;
	}
	return 0;
}

/* The evidence every action of the policy carries. */
static void evidence(struct action *a, const struct pol_input *in, const struct pol_unit *u,
		     const struct mem_sup_unit *e, double floor)
{
	const struct pol_unit *v = pol_input_find(in, e->victim);

	a->related_id = e->victim;
	if (v)
		memcpy(a->related, v->path, strlen(v->path) + 1);
	action_evidence(a, "victim_stall_share", e->share);
	action_evidence(a, "usage_bytes", (double)u->mem_usage);
	action_evidence(a, "file_bytes", (double)u->mem_file);
	action_evidence(a, "working_set_bytes", (double)u->mem_used);
	action_evidence(a, "anon_unevict_bytes", (double)u->mem_anon_unevict);
	action_evidence(a, "floor_bytes", floor);
	action_evidence(a, "owner_limit_bytes", (double)e->owner);
}

/* Asks back a share of the guilty unit's page cache, where the kernel takes such a request. */
static int reclaim(const struct pol_input *in, const struct mem_suppress_config *cfg,
		   const struct pol_unit *u, struct mem_sup_unit *e, double floor,
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

/*
 * The unit's limit this tick, and the rule that set it; false when it grew
 * back to its ceiling (released: no wish, the plan hands the owner's back).
 */
static bool step(const struct pol_input *in, const struct mem_suppress_config *cfg,
		 struct mem_sup_unit *e, double floor, bool guilty, enum rule_id *rule)
{
	double ceiling = e->owner >= 0 ? (double)e->owner : (double)in->mem_capacity;
	double prev = (double)e->limit, want = prev, next,
	       hold = e->hold_s ? e->hold_s : cfg->well_s;
	bool grow = !guilty && pol_since_s(in->ts_ns, &e->guilty_ns) >= hold;
	struct rate_limit r;

	if (guilty && e->grown) {
		e->hold_s = fmin(2 * hold, MEM_SUP_HOLD_MAX * cfg->well_s);
		e->grown = false;
	}
	/* An owner's limit under the floor: nothing to suppress, the floor is all it has. */
	ceiling = fmax(ceiling, floor);
	if (guilty && prev > floor) {
		/* A cut of at least min_change: the steps reach the floor, not creep to it. */
		want = prev - fmax(cfg->cut_share * (prev - floor), cfg->min_change_bytes);
	} else if (grow) {
		/*
		 * Growth runs on time since it began, not per tick (fast-path ticks
		 * come ten a second), and a step under min_change waits for the
		 * next tick rather than being lost.
		 */
		if (!e->grown) {
			e->grown = true;
			e->grow_ns = in->ts_ns;
			e->grow_base = e->limit;
		}
		want = (double)e->grow_base +
		       cfg->grow_share * ceiling * pol_since_s(in->ts_ns, &e->grow_ns);
		if (want >= ceiling) {
			e->released = true;
			return false;
		}
	}
	/* The cut-fast, grow-slowly step of CPU suppression; growth is paced by want itself. */
	r = (struct rate_limit){floor, ceiling, ceiling, cfg->min_change_bytes};
	next = rate_step(true, prev, want, &r);
	/* A first cut from a usage already under the floor starts at the floor: still a cut. */
	*rule = next > prev && !grow && e->wished ? RULE_MEM_SUPPRESS_RAISE
		: grow				  ? RULE_MEM_SUPPRESS_GROW
						  : RULE_MEM_SUPPRESS_LIMIT;
	/* Down to a whole page, but never under the floor. */
	e->limit = (int64_t)next / LIMIT_ALIGN * LIMIT_ALIGN;
	if ((double)e->limit < floor)
		e->limit += LIMIT_ALIGN;
	e->wished = true;
	if (!guilty || next > floor + cfg->min_change_bytes)
		e->floor_ns = 0;
	else if (!e->floor_ns)
		e->floor_ns = in->ts_ns;
	return true;
}

/* The units at their floor and still guilty evict_after_s on: an eviction round for them. */
static int evict(const struct pol_input *in, const struct mem_suppress_config *cfg,
		 const struct evict_order_config *order, struct mem_suppress_state *st,
		 struct action_list *out)
{
	struct evict_victims v;
	double need = 0;
	int err;

	for (size_t i = 0; i < st->n; i++) {
		struct mem_sup_unit *e = &st->v[i];

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

int mem_suppress_run(const struct pol_input *in, const struct mem_suppress_config *cfg,
		     const struct evict_order_config *order, const struct mem_guilty *g, size_t n,
		     struct mem_suppress_state *st, struct action_list *out)
{
	enum act_kind kind = in->mem_v2 ? ACT_MEM_HIGH : ACT_MEM_LIMIT;
	size_t k = 0;
	int err;

	if (!cfg->enabled) {
		mem_suppress_state_free(
			st); /* a reload turned it off: every limit is handed back */
		return 0;
	}
	err = mark_guilty(in, g, n, st);
	if (err)
		return err;
	/* Entries are kept (compacted to k) while their unit is BE and has not grown back. */
	for (size_t i = 0; i < st->n; i++) {
		struct mem_sup_unit *e = &st->v[i];
		const struct pol_unit *u = pol_input_find(in, e->id);
		bool guilty = e->guilty_ns == in->ts_ns;
		double floor;
		enum rule_id rule;
		struct action *a;

		if (!u || u->cls != QOS_BE)
			continue; /* gone, or no longer BE: no wish, the plan hands the limit back
				   */
		floor = (double)u->mem_anon_unevict + cfg->margin_bytes;
		if (guilty)
			err = reclaim(in, cfg, u, e, floor, out);
		if (err)
			break;
		/*
		 * A released entry is kept, without a wish, for its relapse wait;
		 * once a unit stays well that long past it, it is forgotten.
		 */
		if (e->released || !step(in, cfg, e, floor, guilty, &rule)) {
			if (pol_since_s(in->ts_ns, &e->guilty_ns) <
			    MEM_SUP_HOLD_MAX * cfg->well_s + (e->hold_s ? e->hold_s : cfg->well_s))
				st->v[k++] = *e;
			continue;
		}
		st->v[k++] = *e;
		a = action_add(out, kind, u, rule);
		if (!a) {
			err = -ENOMEM;
			break;
		}
		a->value = e->limit;
		evidence(a, in, u, e, floor);
		action_evidence(a, "cut_share", cfg->cut_share);
	}
	/* Out of memory: the entries past k are dropped, so their limits are handed back. */
	st->n = k;
	return err ? err : evict(in, cfg, order, st, out);
}

void mem_suppress_state_free(struct mem_suppress_state *st)
{
	free(st->v);
	evict_round_free(&st->round);
	memset(st, 0, sizeof(*st));
}
