// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Interference detection: k-of-n run-queue windows, CPI outliers, antagonists, caps, reports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "policy/interference.h"
#include "evidence.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define NS	     1000000000ULL
#define MS	     1000000ULL

/* The units: victim V (LS), BE units B and B2, LS unit L, BE units C and D. */
enum { V = 10, B = 20, B2 = 21, L = 30, C = 40, D = 41, NOT_A_UNIT = 999 };

static const struct interference_config defaults = {
	.enabled = true,
	.rq_p99_us = 10000,
	.rq_k = 3,
	.rq_n = 5,
	.rq_min_waits = 20,
	.cpi_enabled = true,
	.cpi_sigma = 2,
	.cpi_min_cpus = 0.25,
	.cpi_min_samples = 30,
	.cpi_outliers = 3,
	.cpi_window_s = 300,
	.cpi_correlation = 0.35,
	.culprit_min_share = 0.2,
	.cap_cpus = 0.2,
	.cap_s = 300,
};

/* One unit's reading. win: V's run-queue window, 'O' over, 'U' under, '-' over but too few waits.
 */
struct unit_spec {
	uint64_t id;
	enum qos_class cls;
	char win;
	bool has_cpi;
	double cpi, cpu;
	uint64_t period_us;
};

/* A culprit of V and its wait in ms. */
struct wait_spec {
	uint64_t culprit;
	uint64_t ms;
};

static int blame_cmp(const void *a, const void *b)
{
	const struct pol_blame *x = a, *y = b;

	return x->culprit < y->culprit ? -1 : x->culprit > y->culprit;
}

static void set_window(struct pol_unit *u, char win)
{
	int slot = win == 'U' ? 5 : 14; /* p99 ~32 us, or ~16.6 ms (threshold 10 ms) */
	uint64_t n = win == '-' ? 5 : 100;

	if (!win)
		return;
	/*
	 * 'T': over, and the unit's own CFS limit throttled it in 3 of 10
	 * periods; 'Q': over, throttled in every period.
	 */
	u->nr_periods = win == 'T' || win == 'Q' ? 10 : 0;
	u->nr_throttled = win == 'T' ? 3 : win == 'Q' ? 10 : 0;
	u->has_rq = true;
	u->rq.slots[slot] = n;
	u->rq.count = n;
}

/* Fills in (units sorted by id, V's waits sorted by culprit) at time t seconds. */
static void build(struct pol_input *in, struct pol_unit *units, const struct unit_spec *us,
		  size_t nu, struct pol_blame *blame, const struct wait_spec *ws, size_t nw,
		  double t)
{
	memset(in, 0, sizeof(*in));
	in->ts_ns = (uint64_t)(t * NS) + 1000 * NS;
	in->cpus = 2;
	for (size_t i = 0; i < nu; i++) {
		struct pol_unit *u = &units[i];

		memset(u, 0, sizeof(*u));
		u->id = us[i].id;
		snprintf(u->path, sizeof(u->path), "unit%llu", (unsigned long long)us[i].id);
		u->cls = us[i].cls;
		u->quota_us = -1;
		u->period_us = us[i].period_us;
		u->has_cpi = us[i].has_cpi;
		u->cpi = us[i].cpi;
		u->cpu_used = us[i].cpu;
		set_window(u, us[i].win);
	}
	for (size_t i = 0; i < nw; i++)
		blame[i] = (struct pol_blame){V, ws[i].culprit, ws[i].ms * MS, 1};
	if (nw) /* qsort() must not see a NULL array, even empty */
		qsort(blame, nw, sizeof(*blame), blame_cmp);
	in->units = units;
	in->n_units = nu;
	in->blame = blame;
	in->n_blame = nw;
}

static const struct action *find(const struct action_list *out, enum act_kind kind)
{
	for (size_t i = 0; i < out->n; i++)
		if (out->v[i].kind == kind)
			return &out->v[i];
	return NULL;
}

static size_t count(const struct action_list *out, enum act_kind kind)
{
	size_t n = 0;

	for (size_t i = 0; i < out->n; i++)
		n += out->v[i].kind == kind;
	return n;
}

static bool has_evidence(const struct action *a, const char *name)
{
	for (size_t i = 0; i < a->n_ev; i++)
		if (!strcmp(a->ev[i].name, name))
			return true;
	return false;
}

static void assert_near(double got, double want, double eps)
{
	if (!(fabs(got - want) <= eps))
		fail_msg("got %.17g, want %.17g", got, want);
}

/* Outside culprits: one the input names, one it does not. */
enum { NOISY = 500, UNNAMED = 501 };

static const struct pol_outside noisy = {NOISY, "noisy.slice", QOS_UNMANAGED};

/*
 * One tick of the run-queue scenario: V's window, the other units idle, V's
 * waits. The outside culprit NOISY is named on the first tick only, as the
 * collector names it while V's window is over: later reports still name it.
 */
static void rq_tick(struct interference_state *st, const struct interference_config *cfg, double t,
		    char win, const struct wait_spec *ws, size_t nw, struct action_list *out)
{
	const struct unit_spec us[] = {{V, QOS_LS, win, 0, 0, 1, 100000},
				       {B, QOS_BE, 0, 0, 0, 1, 100000},
				       {B2, QOS_BE, 0, 0, 0, 1, 100000},
				       {L, QOS_LS, 0, 0, 0, 1, 100000}};
	struct pol_unit units[ARRAY_LEN(us)];
	struct pol_blame blame[8];
	struct pol_input in;

	build(&in, units, us, ARRAY_LEN(us), blame, ws, nw, t);
	in.outside = t == 0 ? (struct pol_outside *)&noisy : NULL;
	in.n_outside = t == 0;
	action_list_clear(out);
	assert_int_equal(interference_run(&in, cfg, st, out), 0);
}

struct rq_case {
	const char *name;
	const char *windows;   /* V's window per tick (one tick a second) */
	struct wait_spec w[4]; /* V's waits on each tick before waits_until */
	size_t waits_until;    /* later ticks: V waits 10 ms behind itself; 0 = never */
	int want_tick;	       /* of the first report; -1 none ever */
	enum interference_cause want_cause;
	uint64_t want_related; /* the report's related unit or cgroup; 0 none */
	double want_share;     /* of the party that explains it */
	uint64_t want_caps[2]; /* BE units capped at that tick */
};

static const struct rq_case rq_cases[] = {
	{"3 of 3", "OOO", {{B, 80}, {V, 20}}, 0, 2, CAUSE_UNIT, B, 0.8, {B}},
	{"3 of 4", "OOUO", {{B, 80}, {V, 20}}, 0, 3, CAUSE_UNIT, B, 0.8, {B}},
	{"2 of 5 never", "OUOUUO", {{B, 80}, {V, 20}}, 0, -1, 0, 0, 0, {0}},
	{"history slides", "OOUUUUUO", {{B, 80}, {V, 20}}, 0, -1, 0, 0, 0, {0}},
	/* Too few waits: the tick is no window, even with an over p99; its waits join the next. */
	{"few waits not over", "O-O", {{B, 80}, {V, 20}}, 0, -1, 0, 0, 0, {0}},
	/* ... and do not push counted windows out of the last n. */
	{"few waits not counted", "OOUU---O", {{B, 80}, {V, 20}}, 0, 7, CAUSE_UNIT, B, 0.8, {B}},
	/* Short ticks (the fast path's) add up: 4 ticks of 5 waits are one window. */
	{"short ticks add up", "------------", {{B, 80}, {V, 20}}, 0, 11, CAUSE_UNIT, B, 0.8, {B}},
	/* A throttled window counts; 3 of 10 periods throttled: 30% of its waits are the limit's.
	 */
	{"throttled counts", "TTT", {{B, 80}, {V, 20}}, 0, 2, CAUSE_UNIT, B, 0.56, {B}},
	/* Throttled in every period: the limit explains it all, nobody is capped. */
	{"own quota", "QQQ", {{POL_CULPRIT_IDLE, 60}, {B, 40}}, 0, 2, CAUSE_QUOTA, V, 1, {0}},
	{"self delay", "OOO", {{V, 100}}, 0, 2, CAUSE_SELF, V, 1, {0}},
	{"idle",
	 "OOO",
	 {{POL_CULPRIT_IDLE, 60}, {POL_CULPRIT_OTHER, 40}},
	 0,
	 2,
	 CAUSE_IDLE,
	 0,
	 0.6,
	 {0}},
	{"outside, unnamed",
	 "OOO",
	 {{POL_CULPRIT_OTHER, 70}, {POL_CULPRIT_IDLE, 30}},
	 0,
	 2,
	 CAUSE_OUTSIDE,
	 0,
	 0.7,
	 {0}},
	{"outside, named", "OOO", {{NOISY, 90}, {V, 10}}, 0, 2, CAUSE_OUTSIDE, NOISY, 0.9, {0}},
	/* An outside culprit on top; a BE unit with 30% is still capped. */
	{"outside and a BE suspect",
	 "OOO",
	 {{UNNAMED, 70}, {B, 30}},
	 0,
	 2,
	 CAUSE_OUTSIDE,
	 0,
	 0.7,
	 {B}},
	{"share under threshold", "OOO", {{B, 19}, {V, 81}}, 0, 2, CAUSE_SELF, V, 0.81, {0}},
	{"share at threshold", "OOO", {{B, 20}, {V, 80}}, 0, 2, CAUSE_SELF, V, 0.8, {B}},
	{"LS culprit", "OOO", {{L, 90}, {V, 10}}, 0, 2, CAUSE_UNIT, L, 0.9, {0}},
	/* Every BE suspect is capped, the top one named. */
	{"two BE suspects",
	 "OOO",
	 {{B, 30}, {B2, 50}, {V, 20}},
	 0,
	 2,
	 CAUSE_UNIT,
	 B2,
	 0.5,
	 {B, B2}},
	/* Waits are summed over the last 5 ticks: ticks 2..6 at tick 6. */
	{"old waits leave the sum", "UUUUOOO", {{B, 10}}, 2, 6, CAUSE_SELF, V, 1, {0}},
	{"waits summed over n ticks", "UUUUOOO", {{B, 10}}, 3, 6, CAUSE_SELF, V, 0.8, {B}},
};

/* The report's shares, one per cause, add up to the whole wait. */
static void assert_shares(const struct action *r)
{
	static const char *const names[] = {"share_unit", "share_outside", "share_self",
					    "share_quota", "share_idle"};
	double sum = 0;

	for (size_t i = 0; i < ARRAY_LEN(names); i++)
		sum += evidence(r, names[i]);
	assert_near(sum, 1, 1e-9);
}

static void check_report(const struct rq_case *c, const struct action_list *out)
{
	const struct action *r = find(out, ACT_REPORT);
	size_t caps = 0;

	assert_int_equal(r->id, V);
	assert_int_equal(r->rule, RULE_INTERFERENCE_RUNQ_SLO);
	assert_int_equal(r->cause.kind, ACT_CAUSE_INTERFERENCE);
	assert_int_equal(r->cause.interference, c->want_cause);
	if (r->related_id != c->want_related)
		fail_msg("%s: related %llu", c->name, (unsigned long long)r->related_id);
	if (c->want_related == NOISY)
		assert_string_equal(r->related, "noisy.slice");
	else if (c->want_related) {
		char path[32];

		snprintf(path, sizeof(path), "unit%llu", (unsigned long long)c->want_related);
		assert_string_equal(r->related, path);
	}
	assert_near(evidence(r, "culprit_wait_share"), c->want_share, 1e-9);
	assert_near(evidence(r, "culprit_class"),
		    c->want_related == B || c->want_related == B2  ? QOS_BE
		    : c->want_related == V || c->want_related == L ? QOS_LS
								   : QOS_UNMANAGED,
		    0);
	assert_shares(r);
	assert_near(evidence(r, "threshold_us"), 10000, 0);
	assert_true(evidence(r, "p99_us") > 10000);
	assert_true(evidence(r, "windows_over") >= 3);
	assert_false(has_evidence(r, "correlation"));
	/* Only BE suspects are capped, from the same tick. */
	for (size_t i = 0; i < ARRAY_LEN(c->want_caps) && c->want_caps[i]; i++, caps++) {
		bool found = false;

		for (size_t k = 0; k < out->n; k++)
			found |= out->v[k].kind == ACT_CPU_QUOTA && out->v[k].id == c->want_caps[i];
		if (!found)
			fail_msg("%s: unit %llu not capped", c->name,
				 (unsigned long long)c->want_caps[i]);
	}
	if (count(out, ACT_CPU_QUOTA) != caps || out->n != 1 + caps)
		fail_msg("%s: %zu actions, %zu caps", c->name, out->n, count(out, ACT_CPU_QUOTA));
}

static void test_rq_cases(void **state)
{
	static const struct wait_spec self = {V, 10};

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(rq_cases); i++) {
		const struct rq_case *c = &rq_cases[i];
		struct interference_state st = {0};
		struct action_list out = {0};
		size_t nw = 0;
		int first = -1;

		while (nw < ARRAY_LEN(c->w) && c->w[nw].ms)
			nw++;
		for (int k = 0; c->windows[k]; k++) {
			bool own = c->waits_until && (size_t)k >= c->waits_until;

			rq_tick(&st, &defaults, k, c->windows[k], own ? &self : c->w, own ? 1 : nw,
				&out);
			if (first < 0 && out.n)
				first = k;
			if (k == c->want_tick && find(&out, ACT_REPORT))
				check_report(c, &out);
		}
		if (first != c->want_tick)
			fail_msg("%s: first action at tick %d, want %d", c->name, first,
				 c->want_tick);
		action_list_free(&out);
		interference_state_free(&st);
	}
}

/*
 * Settled: after the tick that reported V and capped B, nothing new comes
 * of V's breach (the fast path may stop listening); a second BE suspect
 * unsettles it for the tick that caps it, and a victim no more is never
 * settled.
 */
static void test_settled(void **state)
{
	static const struct wait_spec one[] = {{B, 80}, {V, 20}};
	static const struct wait_spec two[] = {{B, 20}, {B2, 60}, {V, 20}};
	struct interference_state st = {0};
	struct action_list out = {0};

	(void)state;
	for (int t = 0; t < 12; t++) {
		bool second = t >= 5 && t < 8, want;

		rq_tick(&st, &defaults, t, t < 8 ? 'O' : 'U', second ? two : one, second ? 3 : 2,
			&out);
		/* a victim from t = 2 to 9 (3 of the last 5 over); B2 reaches 20% at t = 6 */
		want = (t >= 3 && t <= 9) && t != 6;
		if (interference_settled(&st, V) != want)
			fail_msg("t=%d: settled %d", t, !want);
		assert_false(interference_settled(&st, B));
	}
	action_list_free(&out);
	interference_state_free(&st);
}

/*
 * Over on ticks 0-2, under after: V is a victim (3 of the last 5) on ticks
 * 2-4, so B is last found guilty at t = 4 and capped until t = 4 + cap_s.
 * The (V, B) pair is reported once.
 */
static void test_cap_released(void **state)
{
	static const struct wait_spec w[] = {{B, 80}, {V, 20}};
	struct interference_config cfg = defaults;
	struct interference_state st = {0};
	struct action_list out = {0};

	(void)state;
	cfg.cap_s = 10;
	for (int t = 0; t <= 20; t++) {
		const struct action *q;

		rq_tick(&st, &cfg, t, t <= 2 ? 'O' : 'U', w, 2, &out);
		q = find(&out, ACT_CPU_QUOTA);
		assert_int_equal(count(&out, ACT_REPORT), t == 2);
		if (t < 2 || t >= 14) {
			if (q)
				fail_msg("t=%d: capped", t);
			continue;
		}
		if (!q)
			fail_msg("t=%d: not capped", t);
		assert_int_equal(q->id, B);
		assert_int_equal(q->value, 20000);
		assert_int_equal(q->rule, RULE_INTERFERENCE_CAP);
		assert_int_equal(q->related_id, V);
		assert_near(evidence(q, "since_guilty_s"), t <= 4 ? 0 : t - 4, 1e-9);
	}
	action_list_free(&out);
	interference_state_free(&st);
}

/* The cap's quota: cap_cpus x the unit's period (0: 100 ms), at least 1 ms. */
static void test_cap_value(void **state)
{
	static const struct {
		double cap_cpus;
		uint64_t period_us;
		int64_t want;
	} cases[] = {
		{0.2, 100000, 20000}, {0.2, 0, 20000}, {0.5, 50000, 25000}, {0.001, 100000, 1000}};
	static const struct wait_spec w[] = {{B, 80}, {V, 20}};

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		const struct unit_spec us[] = {{V, QOS_LS, 'O', 0, 0, 1, 100000},
					       {B, QOS_BE, 0, 0, 0, 1, cases[i].period_us}};
		struct interference_config cfg = defaults;
		struct interference_state st = {0};
		struct action_list out = {0};
		struct pol_unit units[2];
		struct pol_blame blame[2];
		struct pol_input in;

		cfg.cap_cpus = cases[i].cap_cpus;
		cfg.rq_k = 1;
		build(&in, units, us, 2, blame, w, 2, 0);
		assert_int_equal(interference_run(&in, &cfg, &st, &out), 0);
		assert_non_null(find(&out, ACT_CPU_QUOTA));
		assert_int_equal(find(&out, ACT_CPU_QUOTA)->value, cases[i].want);
		action_list_free(&out);
		interference_state_free(&st);
	}
}

/* V over on every tick: the (V, B) pair is reported every cap_s, the cap never lapses. */
static void test_rereport_interval(void **state)
{
	static const struct wait_spec w[] = {{B, 80}, {V, 20}};
	struct interference_config cfg = defaults;
	struct interference_state st = {0};
	struct action_list out = {0};

	(void)state;
	cfg.cap_s = 10;
	for (int t = 0; t < 25; t++) {
		rq_tick(&st, &cfg, t, 'O', w, 2, &out);
		assert_int_equal(count(&out, ACT_REPORT), t == 2 || t == 12 || t == 22);
		assert_int_equal(count(&out, ACT_CPU_QUOTA), t >= 2);
	}
	action_list_free(&out);
	interference_state_free(&st);
}

/*
 * With culprit_min_share 0 a BE unit still needs waits behind it to be a
 * suspect: a victim delayed by itself is reported (cause self) and
 * nobody is capped.
 */
static void test_zero_min_share(void **state)
{
	static const struct wait_spec w[] = {{V, 100}};
	struct interference_config cfg = defaults;
	struct interference_state st = {0};
	struct action_list out = {0};

	(void)state;
	cfg.culprit_min_share = 0;
	for (int t = 0; t < 5; t++) {
		rq_tick(&st, &cfg, t, 'O', w, 1, &out);
		assert_int_equal(out.n, t == 2);
		assert_int_equal(count(&out, ACT_CPU_QUOTA), 0);
	}
	action_list_free(&out);
	interference_state_free(&st);
}

/* Disabled: nothing, and the state stays (or becomes) empty. */
static void test_disabled(void **state)
{
	static const struct wait_spec w[] = {{B, 80}, {V, 20}};
	struct interference_config cfg = defaults;
	struct interference_state st = {0};
	struct action_list out = {0};

	(void)state;
	for (int t = 0; t < 3; t++)
		rq_tick(&st, &cfg, t, 'O', w, 2, &out);
	assert_int_equal(count(&out, ACT_REPORT), 1);
	cfg.enabled = false;
	for (int t = 3; t < 6; t++) {
		rq_tick(&st, &cfg, t, 'O', w, 2, &out);
		assert_int_equal(out.n, 0);
		assert_null(st.units);
		assert_int_equal(st.n_caps, 0);
		assert_int_equal(st.breach.n_pairs, 0);
		assert_int_equal(st.tick, 0);
	}
	action_list_free(&out);
}

static void test_bad_config(void **state)
{
	static const struct {
		unsigned int k, n, outliers;
	} bad[] = {{0, 5, 3}, {3, 0, 3}, {6, 5, 3}, {3, 65, 3}, {3, 5, 0}, {3, 5, 17}};
	struct interference_state st = {0};
	struct action_list out = {0};
	struct pol_input in = {0};

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		struct interference_config cfg = defaults;

		cfg.rq_k = bad[i].k;
		cfg.rq_n = bad[i].n;
		cfg.cpi_outliers = bad[i].outliers;
		assert_int_equal(interference_run(&in, &cfg, &st, &out), -EINVAL);
		assert_int_equal(out.n, 0);
	}
	interference_state_free(&st);
}

/*
 * CPI scenario, one tick a second for t = 1..40 then one per outlier time:
 * V's CPI alternates 1.0 / 1.25 (mean 1.125, stddev 0.125: limit 1.375)
 * and is unknown when t % 7 == 0 (B then uses 5 CPUs: a tick that must not
 * count); B uses 0.5 / 1 / 1.5 CPUs by t % 3; C is flat, D mirrors B. At
 * each outlier time V's CPI is 2.0 and B uses 2 CPUs. No blame data: the
 * only evidence is the correlation.
 */
struct cpi_case {
	const char *name;
	double outliers[3];
	double outlier_cpu; /* V's CPU use at the outliers */
	bool want;	    /* a report (and cap) at the last outlier */
};

static const struct cpi_case cpi_cases[] = {
	{"3 outliers in 5 min", {100, 250, 399}, 1, true},
	{"3 outliers in 5 min 1 s", {100, 250, 401}, 1, false},
	{"samples under 0.25 CPU ignored", {100, 250, 399}, 0.24, false},
	/* Before 30 samples (17 at t = 20) everything is learned: no outlier yet. */
	{"learning", {20, 22, 24}, 1, false},
};

/*
 * Pearson's r of the 38 (B CPU, V CPI) pairs of "3 outliers in 5 min",
 * computed offline with exact fractions: sxy = 381/152, sxx = 1305/152,
 * syy = 201/76.
 */
#define WANT_R 0.5260253733703393

static void cpi_tick(struct interference_state *st, const struct cpi_case *c, double t,
		     struct action_list *out)
{
	bool outlier = t == c->outliers[0] || t == c->outliers[1] || t == c->outliers[2];
	bool unknown = !outlier && (int)t % 7 == 0;
	double b = outlier ? 2 : unknown ? 5 : 0.5 * ((int)t % 3 + 1);
	double cpi = outlier ? 2 : (int)t % 2 ? 1.0 : 1.25;
	const struct unit_spec us[] = {
		{V, QOS_LS, 0, !unknown, cpi, outlier ? c->outlier_cpu : 1, 100000},
		{B, QOS_BE, 0, false, 0, b, 100000},
		{C, QOS_BE, 0, false, 0, 1, 100000},
		{D, QOS_BE, 0, false, 0, 5 - b, 100000}};
	struct pol_unit units[ARRAY_LEN(us)];
	struct pol_input in;

	build(&in, units, us, ARRAY_LEN(us), NULL, NULL, 0, t);
	action_list_clear(out);
	assert_int_equal(interference_run(&in, &defaults, st, out), 0);
}

static void test_cpi_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cpi_cases); i++) {
		const struct cpi_case *c = &cpi_cases[i];
		struct interference_state st = {0};
		struct action_list out = {0};
		const struct action *r, *q;

		for (int t = 1; t <= 40; t++) {
			cpi_tick(&st, c, t, &out);
			if (out.n)
				fail_msg("%s: t=%d: %zu actions", c->name, t, out.n);
		}
		for (int k = 0; k < 3 && c->outliers[k] > 40; k++) {
			cpi_tick(&st, c, c->outliers[k], &out);
			if (k < 2 && out.n)
				fail_msg("%s: outlier %d: %zu actions", c->name, k, out.n);
		}
		r = find(&out, ACT_REPORT);
		q = find(&out, ACT_CPU_QUOTA);
		if (!c->want) {
			if (out.n)
				fail_msg("%s: %zu actions", c->name, out.n);
		} else {
			assert_non_null(r);
			assert_int_equal(r->rule, RULE_INTERFERENCE_CPI);
			assert_int_equal(r->id, V);
			assert_int_equal(r->related_id, B);
			assert_near(evidence(r, "correlation"), WANT_R, 1e-9);
			assert_near(evidence(r, "cpi_outliers"), 3, 0);
			assert_near(evidence(r, "cpi"), 2, 0);
			assert_near(evidence(r, "culprit_wait_share"), 0, 0);
			/* 35 samples of 1.0 / 1.25, 17 and 18 of them. */
			assert_near(evidence(r, "cpi_mean"), (17 * 1.0 + 18 * 1.25) / 35, 1e-9);
			assert_non_null(q);
			assert_int_equal(q->id, B);
			assert_int_equal(out.n, 2);
		}
		action_list_free(&out);
		interference_state_free(&st);
	}
}

/* One policy entry per unit, as breach_units_sync carries them. */
struct sync_entry {
	uint64_t id;
	int kept;
};

static void sync_to(struct sync_entry **v, size_t *n, const uint64_t *ids, size_t n_ids)
{
	struct pol_unit u[4] = {0};
	struct pol_input in = {.units = u, .n_units = n_ids};

	for (size_t i = 0; i < n_ids; i++)
		u[i].id = ids[i];
	assert_int_equal(breach_units_sync((void **)v, n, sizeof(**v), &in), 0);
}

/* Entries carry over by id; unchanged units keep their array (no copy per tick). */
static void test_units_sync(void **state)
{
	const uint64_t first[] = {V, B, L}, same[] = {V, B, L}, changed[] = {V, B2, L};
	struct sync_entry *v = NULL, *before;
	size_t n = 0;

	(void)state;
	sync_to(&v, &n, first, ARRAY_LEN(first));
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(v[i].id, first[i]);
		assert_int_equal(v[i].kept, 0);
		v[i].kept = (int)i + 1;
	}
	before = v;
	sync_to(&v, &n, same, ARRAY_LEN(same));
	assert_ptr_equal(v, before);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(v[i].kept, (int)i + 1);
	/* B gone, B2 new: V and L keep theirs, B2 starts empty */
	sync_to(&v, &n, changed, ARRAY_LEN(changed));
	assert_int_equal(n, 3);
	assert_int_equal(v[0].id, V);
	assert_int_equal(v[0].kept, 1);
	assert_int_equal(v[1].id, B2);
	assert_int_equal(v[1].kept, 0);
	assert_int_equal(v[2].id, L);
	assert_int_equal(v[2].kept, 3);
	/* fewer units with the same first ids: not the same set */
	sync_to(&v, &n, changed, 2);
	assert_int_equal(n, 2);
	assert_int_equal(v[1].id, B2);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rq_cases),	  cmocka_unit_test(test_settled),
		cmocka_unit_test(test_cap_released),	  cmocka_unit_test(test_cap_value),
		cmocka_unit_test(test_rereport_interval), cmocka_unit_test(test_zero_min_share),
		cmocka_unit_test(test_disabled),	  cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_cpi_cases),	  cmocka_unit_test(test_units_sync),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
