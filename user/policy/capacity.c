// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "policy/capacity.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

#define SEC 1e9

static const char *const resource_names[CAP_NR] = {
	[CAP_CPU] = "kubernetes.io/batch-cpu",
	[CAP_MEM] = "kubernetes.io/batch-memory",
};

static const enum rule_id rules[CAP_NR] = {
	[CAP_CPU] = RULE_CAPACITY_CPU,
	[CAP_MEM] = RULE_CAPACITY_MEMORY,
};

const char *capacity_resource_name(enum capacity_resource r)
{
	return (unsigned int)r < CAP_NR ? resource_names[r] : "?";
}

uint64_t capacity_api_value(enum capacity_resource r, double batch)
{
	/* Rounded down, never more than the formula allows, past float noise (1.9 x 1000). */
	double v = r == CAP_CPU ? floor(batch * 1000 + 1e-6) : floor(batch);

	/* A replayed record's figures are input: none, or past 2^64, has no conversion. */
	if (!(v > 0))
		return 0;
	return v >= 0x1p64 ? UINT64_MAX : (uint64_t)v;
}

static double unit_used(const struct pol_unit *u, enum capacity_resource r)
{
	return r == CAP_CPU ? u->cpu_used : (double)u->mem_used;
}

/* LSE and LSR own their request whether they use it or not. */
static double unit_ls(const struct pol_unit *u, enum capacity_resource r)
{
	double used = unit_used(u, r);
	double request = r == CAP_CPU ? u->request_cpus : (double)u->request_mem;

	if ((u->cls == QOS_LSE || u->cls == QOS_LSR) && request > used)
		return request;
	return used;
}

/* This tick's terms before the window: capacity, threshold, LS, system, reserve. */
static void terms_now(const struct pol_input *in, const struct capacity_config *cfg,
		      struct capacity_result *out)
{
	double all[CAP_NR] = {0};

	out->r[CAP_CPU].capacity = in->cpus;
	out->r[CAP_CPU].threshold = cfg->cpu_threshold;
	out->r[CAP_CPU].reserve = cfg->cpu_reserve;
	out->r[CAP_MEM].capacity = (double)in->mem_capacity;
	out->r[CAP_MEM].threshold = cfg->mem_threshold;
	out->r[CAP_MEM].reserve = cfg->mem_reserve;
	for (size_t i = 0; i < in->n_units; i++) {
		const struct pol_unit *u = &in->units[i];

		for (int r = 0; r < CAP_NR; r++) {
			all[r] += unit_used(u, r);
			if (u->cls != QOS_BE)
				out->r[r].ls += unit_ls(u, r);
		}
	}
	out->r[CAP_CPU].system = fmax(0, in->node_cpu_used - all[CAP_CPU]);
	out->r[CAP_MEM].system = fmax(0, (double)in->mem_used - all[CAP_MEM]);
}

static struct capacity_sample *sample_at(const struct capacity_state *st, size_t i)
{
	return &st->v[(st->head + i) % st->cap];
}

static int push_sample(struct capacity_state *st, const struct capacity_sample *s)
{
	if (st->n == st->cap) {
		size_t cap = st->cap ? 2 * st->cap : 64;
		struct capacity_sample *v = malloc(cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		for (size_t i = 0; i < st->n; i++)
			v[i] = *sample_at(st, i);
		free(st->v);
		st->v = v;
		st->cap = cap;
		st->head = 0;
	}
	*sample_at(st, st->n++) = *s;
	return 0;
}

static void drop_older(struct capacity_state *st, uint64_t since_ns)
{
	while (st->n && sample_at(st, 0)->ts_ns < since_ns) {
		st->head = (st->head + 1) % st->cap;
		st->n--;
	}
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/* Nearest rank: the smallest sample with at least p of the samples at or below it. */
static int percentile(struct capacity_state *st, enum capacity_resource r, double p, double *out)
{
	size_t rank;
	int err =
		array_reserve((void **)&st->scratch, &st->cap_scratch, st->n, sizeof(*st->scratch));

	if (err)
		return err;
	for (size_t i = 0; i < st->n; i++)
		st->scratch[i] = sample_at(st, i)->used[r];
	qsort(st->scratch, st->n, sizeof(*st->scratch), cmp_double);
	rank = (size_t)ceil(p * (double)st->n);
	*out = st->scratch[rank ? rank - 1 : 0];
	return 0;
}

/*
 * Whether batch is held at 0, and why (static text). A tick whose reading is
 * not whole keeps the last value until stale_s passed; a gap without ticks
 * that long starts the window over.
 */
static const char *held_reason(const struct pol_input *in, const char *bad,
			       const struct capacity_config *cfg, struct capacity_state *st)
{
	uint64_t now = in->ts_ns;

	if (bad) {
		if (!st->bad_since)
			st->bad_since = now;
		st->bad_why = bad;
		if (pol_since_s(now, &st->bad_since) >= cfg->stale_s)
			return bad;
		return st->have_last ? st->last.held : "warming up: the window is not full yet";
	}
	st->bad_since = 0;
	if (st->n && pol_since_s(now, &sample_at(st, st->n - 1)->ts_ns) >= cfg->stale_s) {
		st->n = 0; /* a gap: what the window held no longer describes the node */
		st->start_ns = 0;
	}
	return NULL;
}

/*
 * The highest `used` over about hold_s (to a bucket, a 60th of it), this
 * tick's included. Buckets it cannot place, after a new hold_s (a reload)
 * or ahead of now (the wall clock stepped back), fold into this tick's: their
 * peak then holds a whole hold from now (as pol_since_s restarts a timer),
 * never leaves early.
 */
static void hold_peak(struct capacity_state *st, uint64_t now, double hold_s,
		      const double used[CAP_NR], double peak[CAP_NR])
{
	uint64_t width = (uint64_t)fmax(1, hold_s * SEC / CAPACITY_HOLD_BUCKETS), id = now / width;
	bool rewidth = st->hold_width_ns != width;
	double carry[CAP_NR];
	struct capacity_hold_bucket *b;

	memcpy(carry, used, sizeof(carry));
	for (size_t i = 0; i < CAPACITY_HOLD_BUCKETS; i++) {
		b = &st->hold[i];
		if (!b->used || (!rewidth && b->id <= id))
			continue;
		for (int r = 0; r < CAP_NR; r++)
			carry[r] = fmax(carry[r], b->max[r]);
		b->used = false;
	}
	st->hold_width_ns = width;
	b = &st->hold[id % CAPACITY_HOLD_BUCKETS];
	if (!b->used || b->id != id)
		*b = (struct capacity_hold_bucket){.id = id, .used = true};
	for (int r = 0; r < CAP_NR; r++)
		b->max[r] = fmax(b->max[r], carry[r]);
	memcpy(peak, b->max, sizeof(b->max));
	for (size_t i = 0; i < CAPACITY_HOLD_BUCKETS; i++)
		for (int r = 0; r < CAP_NR && st->hold[i].used; r++)
			if (id - st->hold[i].id < CAPACITY_HOLD_BUCKETS)
				peak[r] = fmax(peak[r], st->hold[i].max[r]);
}

/* Moved enough to be published: past step of before, or to or from 0. */
static bool moved(uint64_t now, uint64_t before, double step)
{
	if ((now == 0) != (before == 0))
		return true;
	return fabs((double)now - (double)before) > step * (double)before;
}

/*
 * The published figure after one tick (API values): a step under the floor
 * the hold allows; down at once when the floor falls below it, up only
 * when that figure is past the step above it (capacity.h).
 */
static uint64_t publish(uint64_t before, uint64_t floor_now, double step)
{
	uint64_t margin = (uint64_t)floor((1 - step) * (double)floor_now);

	if (floor_now < before || (margin > before && moved(margin, before, step)))
		return margin;
	return before;
}

/*
 * A change worth a record: past min_change of capacity, to or from 0, a
 * new reason, or a new published figure.
 */
static bool changed(const struct capacity_state *st, const struct capacity_result *res,
		    enum capacity_resource r, double min_change)
{
	uint64_t now = capacity_api_value(r, res->r[r].batch), before = st->decided[r];
	double step = min_change * res->r[r].capacity * (r == CAP_CPU ? 1000 : 1);

	if (!st->have_last || res->held != st->decided_held ||
	    st->published[r] != st->decided_published[r])
		return true;
	if ((now == 0) != (before == 0))
		return true;
	return fabs((double)now - (double)before) > step;
}

static int record(const struct capacity_result *res, enum capacity_resource r,
		  const struct capacity_config *cfg, struct action_list *acts)
{
	const struct capacity_terms *t = &res->r[r];
	struct action *a = action_add(acts, ACT_CAPACITY, NULL, rules[r]);

	if (!a)
		return -ENOMEM;
	a->resource = resource_names[r];
	a->value = (int64_t)capacity_api_value(r, t->batch);
	if (res->held)
		a->cause = (struct act_cause){.kind = ACT_CAUSE_HELD, .held = res->held};
	action_evidence(a, "batch", t->batch);
	action_evidence(a, "capacity", t->capacity);
	action_evidence(a, "threshold", t->threshold);
	action_evidence(a, "ls", t->ls);
	action_evidence(a, "system", t->system);
	action_evidence(a, "ls_system_percentile", t->pctl);
	action_evidence(a, "used", t->used);
	action_evidence(a, "reserve", t->reserve);
	action_evidence(a, "peak", t->peak);
	action_evidence(a, "published", t->published);
	action_evidence(a, "hold_s", cfg->hold_s);
	action_evidence(a, "step", cfg->step);
	action_evidence(a, "percentile", cfg->percentile);
	action_evidence(a, "window_s", cfg->window_s);
	action_evidence(a, "window_covered_s", res->window_covered_s);
	action_evidence(a, "samples", (double)res->samples);
	return 0;
}

int capacity_tick(const struct pol_input *in, const char *bad, const struct capacity_config *cfg,
		  struct capacity_state *st, struct capacity_result *out, struct action_list *acts)
{
	struct capacity_sample s = {.ts_ns = in->ts_ns};
	const char *held = held_reason(in, bad, cfg, st);
	double used[CAP_NR], peak[CAP_NR];
	int err;

	memset(out, 0, sizeof(*out));
	terms_now(in, cfg, out);
	if (bad) {
		/* Nothing new is believed: the last terms stand until it is stale. */
		if (st->have_last)
			*out = st->last;
		out->held = held;
	} else {
		for (int r = 0; r < CAP_NR; r++)
			s.used[r] = out->r[r].ls + out->r[r].system;
		err = push_sample(st, &s);
		if (err)
			return err;
		if (!st->start_ns)
			st->start_ns = in->ts_ns;
		drop_older(st, in->ts_ns - (uint64_t)fmin((double)in->ts_ns, cfg->window_s * SEC));
		for (int r = 0; r < CAP_NR; r++) {
			struct capacity_terms *t = &out->r[r];

			err = percentile(st, r, cfg->percentile, &t->pctl);
			if (err)
				return err;
			t->used = fmax(s.used[r], t->pctl);
			t->batch = fmax(0, t->capacity * t->threshold - t->used - t->reserve);
			used[r] = t->used;
		}
		hold_peak(st, in->ts_ns, cfg->hold_s, used, peak);
		for (int r = 0; r < CAP_NR; r++) {
			struct capacity_terms *t = &out->r[r];
			double floor_now =
				fmax(0, t->capacity * t->threshold - peak[r] - t->reserve);

			t->peak = peak[r];
			st->published[r] = publish(st->published[r],
						   capacity_api_value(r, floor_now), cfg->step);
		}
		out->samples = st->n;
		out->window_covered_s = fmin(pol_since_s(in->ts_ns, &st->start_ns), cfg->window_s);
		if (out->window_covered_s < cfg->window_s)
			held = "warming up: the window is not full yet";
		out->held = held;
	}
	for (int r = 0; r < CAP_NR; r++) {
		if (out->held) {
			out->r[r].batch = 0;
			st->published[r] = 0;
		}
		out->r[r].published = (double)st->published[r] / (r == CAP_CPU ? 1000 : 1);
	}
	for (int r = 0; r < CAP_NR; r++) {
		if (!changed(st, out, r, cfg->min_change))
			continue;
		err = record(out, r, cfg, acts);
		if (err)
			return err;
		st->decided[r] = capacity_api_value(r, out->r[r].batch);
		st->decided_published[r] = st->published[r];
	}
	st->decided_held = out->held;
	st->last = *out;
	st->have_last = true;
	return 0;
}

void capacity_state_free(struct capacity_state *st)
{
	free(st->v);
	free(st->scratch);
	memset(st, 0, sizeof(*st));
}
