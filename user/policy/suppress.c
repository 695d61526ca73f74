// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * BE suppression, after koordlet's model: BE may use what is left of
 * capacity x threshold once non-BE units and the system have taken theirs.
 * The allowance shrinks at once (LS needs the CPU now) and grows by at most
 * max_growth x capacity per tick (so BE does not rush back into a load that
 * may return); small changes are skipped to avoid churning cgroup writes.
 */
#include "policy/suppress.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cpulist.h"
#include "policy/cpu_pick.h"
#include "policy/pool_use.h"
#include "policy/rate.h"
#include "policy/slo.h"

/* The kernel refuses a CFS quota under 1 ms (cpu.cfs_quota_us and cpu.max alike). */
#define SUPPRESS_MIN_QUOTA_US 1000

/* The pool's sums (also the evidence every suppression action carries), and the allowance. */
struct sup_meas {
	struct pool_use use;
	double raw;	/* the model's allowance, before floor and rate limit */
	double allowed; /* what BE gets this tick */
};

/*
 * The floor of BE's allowance: min_cpus, at most the capacity. Where BE is
 * not made idle too (no cpu.idle before Linux 5.15, or suppress.cpu_idle
 * off), the allowance is BE's only brake, and a floor of the whole node
 * releases it: the default 2 CPUs on a 2-CPU node left LS no protection at
 * all on 5.10 (docs/bench/colobench.md, "5.10 (emulated)"). There the floor
 * is at most half the capacity: BE still progresses, and is held.
 */
static double allowance_floor(const struct pol_input *in, const struct suppress_config *cfg,
			      double cap)
{
	double floor = fmin(cfg->min_cpus, cap);

	return cfg->cpu_idle && in->has_cpu_idle ? floor : fmin(floor, cap / 2);
}

/* The raw allowance after the floor, the growth cap and the min-change skip. */
static double limit_allowance(const struct pol_input *in, const struct sup_meas *m,
			      const struct suppress_config *cfg, const struct suppress_state *st,
			      double raw)
{
	double cap = m->use.capacity;
	const struct rate_limit r = {allowance_floor(in, cfg, cap), cap, cfg->max_growth * cap,
				     cfg->min_change * cap};

	return rate_step(st->have_allowed, st->allowed_cpus, raw, &r);
}

static struct action *add(struct action_list *out, enum act_kind kind, const struct pol_unit *u,
			  enum rule_id rule, const struct suppress_config *cfg,
			  const struct sup_meas *m)
{
	struct action *a = action_add(out, kind, u, rule);

	if (!a)
		return NULL;
	action_evidence(a, "capacity_cpus", m->use.capacity);
	if (m->use.exclusive)
		action_evidence(a, "exclusive_cpus", (double)m->use.exclusive);
	action_evidence(a, "threshold", cfg->threshold);
	action_evidence(a, "non_be_used_cpus", m->use.non_be);
	action_evidence(a, "system_used_cpus", m->use.system);
	action_evidence(a, "be_used_cpus", m->use.be);
	action_evidence(a, "be_allowed_raw_cpus", m->raw);
	action_evidence(a, "be_allowed_cpus", m->allowed);
	return a;
}

/* cfsQuota: the allowance split among BE units by request (equally when none has one). */
static int emit_quotas(const struct pol_input *in, const struct suppress_config *cfg,
		       const struct sup_meas *m, struct action_list *out)
{
	for (size_t i = 0; i < in->n_units; i++) {
		const struct pol_unit *u = &in->units[i];
		double share;
		int64_t quota;
		struct action *a;

		if (!pool_use_is_be(u))
			continue;
		share = m->use.be_request > 0
				? m->allowed * fmax(u->request_cpus, 0) / m->use.be_request
				: m->allowed / (double)m->use.n_be;
		quota = llround(share * (double)pol_unit_period_us(u));
		a = add(out, ACT_CPU_QUOTA, u, RULE_SUPPRESS_CFS_QUOTA, cfg, m);
		if (!a)
			return -ENOMEM;
		/* A unit with no request still runs, at the kernel's minimum. */
		a->value = quota < SUPPRESS_MIN_QUOTA_US ? SUPPRESS_MIN_QUOTA_US : quota;
		action_evidence(a, "unit_request_cpus", u->request_cpus);
		action_evidence(a, "unit_share_cpus", share);
	}
	return 0;
}

/* Every BE unit onto CPU list list (n CPUs), by rule. */
static int emit_be_list(const struct pol_input *in, const struct suppress_config *cfg,
			const struct sup_meas *m, const char *list, size_t n, enum rule_id rule,
			struct action_list *out)
{
	for (size_t i = 0; i < in->n_units; i++) {
		const struct pol_unit *u = &in->units[i];
		struct action *a;

		if (!pool_use_is_be(u))
			continue;
		a = add(out, ACT_CPUSET, u, rule, cfg, m);
		if (!a)
			return -ENOMEM;
		snprintf(a->cpus, sizeof(a->cpus), "%s", list);
		action_evidence(a, "be_cpuset_cpus", (double)n);
	}
	return 0;
}

/* cpuset: ceil(allowance) CPUs shared by every BE unit. */
static int emit_cpusets(const struct pol_input *in, const struct suppress_config *cfg,
			const struct sup_meas *m, struct suppress_state *st,
			struct action_list *out)
{
	char list[POL_CPULIST_MAX];
	size_t n;
	int err;

	/*
	 * Without the topology qoslet does not know which CPUs the subtree may
	 * use: a guessed list could name CPUs its parent lacks (EINVAL) or none.
	 */
	n = cpu_pick(in, m->allowed, st->cpuset);
	if (!n)
		return 0;
	err = cpu_pick_format(st->cpuset, list, sizeof(list));
	return err ? err : emit_be_list(in, cfg, m, list, n, RULE_SUPPRESS_CPUSET, out);
}

/* Whether two kernel CPU lists name the same CPUs (false when either is malformed). */
static bool same_cpus(const char *x, const char *y)
{
	bool a[POL_CPUS_MAX], b[POL_CPUS_MAX];

	return !cpu_list_parse(x, a, POL_CPUS_MAX) && !cpu_list_parse(y, b, POL_CPUS_MAX) &&
	       !memcmp(a, b, sizeof(a));
}

/*
 * An LS unit the split may move: one in the shared pool (its cpuset is the
 * subtree's CPUs, or "" where it inherits them), or where the split put it
 * last tick. An LS unit on other CPUs was placed there by its owner, and
 * stays; LSE and LSR units hold CPUs of their own and are never moved, nor
 * is a pod the kubelet pinned whatever its class (a label may call it LS).
 */
static bool split_movable(const struct pol_input *in, const struct suppress_state *st,
			  const struct pol_unit *u)
{
	return u->cls == QOS_LS && !u->pinned_cpus &&
	       (!u->cpus[0] || same_cpus(u->cpus, in->cpu_list) ||
		(st->ls_cpus[0] && same_cpus(u->cpus, st->ls_cpus)));
}

/* CPUs in a bitmap. */
static size_t bits(const uint64_t *set)
{
	size_t n = 0;

	for (size_t w = 0; w < CPU_SET_WORDS; w++)
		n += (size_t)__builtin_popcountll(set[w]);
	return n;
}

/* What SLO control tells the split: the confined LS unit furthest over its target, if any. */
struct split_slo {
	const struct pol_unit *short_unit;
	double p99_us, target_us;
	double dwell_s; /* slo.dwell_s: how long BE then waits before the split grows */
};

/*
 * With SLO control on (docs/slo-control.md): an LS unit that the split
 * confines (its cpuset is the split's LS list) and whose run-queue p99 over
 * the tick is over its target waits for CPUs its set lacks, whatever its
 * CPU time says (a vCPU that loses time to its host measures less than it
 * holds). Its waits cannot be BE's: BE runs elsewhere.
 */
static void split_latency(const struct pol_input *in, const struct slo_config *slo,
			  const struct suppress_state *st, struct split_slo *lat)
{
	double worst = 1;

	memset(lat, 0, sizeof(*lat));
	if (!slo || !slo->enabled)
		return;
	lat->dwell_s = slo->dwell_s; /* also while the split is off after a miss */
	if (!st->ls_cpus[0])
		return;
	for (size_t i = 0; i < in->n_units; i++) {
		const struct pol_unit *u = &in->units[i];
		double p99_us, target_us;

		if (u->cls != QOS_LS || !same_cpus(u->cpus, st->ls_cpus) ||
		    !slo_unit_p99(u, slo, &p99_us, &target_us))
			continue;
		if (target_us > 0 && p99_us / target_us > worst) {
			worst = p99_us / target_us;
			lat->short_unit = u;
			lat->p99_us = p99_us;
			lat->target_us = target_us;
		}
	}
}

/*
 * While the split is on, its size is judged on the use of LS and the system
 * averaged over at least this long. Fast-path ticks come 50-100 ms apart, and
 * over such a window a burst (LS draining a queue after a stall, BE's first
 * moments before its tasks are in its cgroup) reads as need; ending the split
 * for it moves the LS units onto BE's CPUs and back, which costs LS more than
 * the burst. Turning the split on is judged on the tick alone, so that it
 * lands on BE's first fast-path tick: one too large is undone by the first
 * whole window.
 */
#define SPLIT_WINDOW_S 0.5

/*
 * LS spread over every CPU uses more CPU than confined to fewer: its
 * wake-ups land on other CPUs (an idle exit, or a preemption of BE and cold
 * caches). slobench's web server used 1.02 CPUs spread and 0.61 confined on
 * one machine (docs/slo-control.md). So when LS's need measured spread
 * leaves no whole CPU, but that need divided by this would, the split is
 * tried: its first whole window judges it on LS's confined use, and keeps
 * or ends it. After any split that ends (LS did not fit), none is tried for
 * SPLIT_TRIAL_BACKOFF_S, then twice that after the next, up to
 * SPLIT_TRIAL_BACKOFF_MAX_S: a failed trial confines a saturated LS for one
 * window.
 */
#define SPLIT_SPREAD		  1.5
#define SPLIT_TRIAL_BACKOFF_S	  10.0
#define SPLIT_TRIAL_BACKOFF_MAX_S 300.0

/* How many CPUs a trial gives BE (SPLIT_SPREAD); 0 when even that leaves none whole. */
static size_t split_trial_size(const struct sup_meas *m, const struct suppress_config *cfg,
			       struct suppress_state *st)
{
	double raw = m->use.capacity * cfg->threshold - st->judged_used_cpus / SPLIT_SPREAD + 1e-9;

	st->trial = raw >= 1;
	return st->trial ? (size_t)floor(raw) : 0;
}

/*
 * A judgement of the split on (n: BE's CPUs from now on). One that ends did
 * not fit LS: no trial for a while, and the wait doubles after each ending
 * until a split holds again.
 */
static void split_judged(const struct pol_input *in, struct suppress_state *st, size_t n)
{
	st->trial = false;
	if (n) {
		st->trial_backoff_s = 0;
		return;
	}
	st->trial_backoff_s = st->trial_backoff_s
				      ? fmin(2 * st->trial_backoff_s, SPLIT_TRIAL_BACKOFF_MAX_S)
				      : SPLIT_TRIAL_BACKOFF_S;
	st->trial_after_ns = in->ts_ns + (uint64_t)(st->trial_backoff_s * 1e9);
}

/*
 * How many whole CPUs the split gives BE: floor(allowance), the allowance
 * taken before its min_cpus floor (the split hands BE only CPUs that LS, the
 * system and the threshold leave whole, so LS keeps its use plus the
 * threshold's headroom), at most all usable CPUs but one (LS keeps at least
 * one). Once on, it is judged every SPLIT_WINDOW_S: it shrinks at once then;
 * it grows only when the allowance clears the next whole CPU by max_growth of
 * the capacity, so that an allowance hovering around a whole number does not
 * move the LS units back and forth.
 */
static size_t split_size(const struct pol_input *in, const struct suppress_config *cfg,
			 const struct sup_meas *m, const struct split_slo *lat,
			 struct suppress_state *st, size_t usable)
{
	size_t prev = bits(st->cpuset), n;
	double raw, grown, dt = fmax(in->interval_s, 0);

	if (usable < 2) /* no topology, or nothing to split */
		return 0;
	if (!m->use.n_be) {
		st->have_need = true;
		st->need_cpus = m->use.non_be + m->use.system;
		/* Nothing to split, and no verdict on a split that BE's leaving ended. */
		st->trial = false;
		st->win_used_cpu_s = st->win_s = 0;
		return 0;
	}
	if (prev && lat->short_unit) {
		/* LS waits over its target: a CPU back to it at once, whatever its use says. */
		n = (prev >= usable ? usable - 1 : prev) - 1;
		split_judged(in, st, n);
		st->have_short = true;
		st->short_ns = in->ts_ns;
		st->have_need = false; /* what LS used said too little */
		st->win_used_cpu_s = st->win_s = 0;
		return n;
	}
	st->win_used_cpu_s += (m->use.non_be + m->use.system) * dt;
	st->win_s += dt;
	if (prev && st->win_s < SPLIT_WINDOW_S)
		return prev >= usable ? usable - 1 : prev;
	if (prev) {
		st->judged_used_cpus = st->win_used_cpu_s / st->win_s;
		raw = m->use.capacity * cfg->threshold - st->judged_used_cpus;
		st->need_cpus = fmax(st->need_cpus, st->judged_used_cpus);
	} else if (st->have_need && st->need_cpus < m->use.non_be + m->use.system) {
		/*
		 * Next to BE on the same CPUs, LS's use is no measure of its need: it
		 * spends up to 2.4x the CPU there (slobench, docs/slo-control.md), and
		 * BE's tasks count as the system's until they are in its cgroup. What
		 * LS used without BE (or confined, since) decides whether a split fits.
		 */
		st->judged_used_cpus = st->need_cpus;
		raw = m->use.capacity * cfg->threshold - st->need_cpus;
	} else {
		st->judged_used_cpus = m->use.non_be + m->use.system;
		raw = fmin(m->raw, m->allowed);
	}
	st->judged_window_s = st->win_s;
	st->win_used_cpu_s = st->win_s = 0;
	raw += 1e-9; /* 1.9999999 is 2 */
	grown = floor(raw - cfg->max_growth * m->use.capacity);
	n = raw >= 1 ? (size_t)floor(raw) : 0;
	if (n >= prev)
		n = grown > (double)prev ? (size_t)grown : prev;
	if (prev)
		split_judged(in, st, n);
	else if (!n && m->use.n_be && (!st->trial_after_ns || in->ts_ns >= st->trial_after_ns))
		n = split_trial_size(m, cfg, st);
	/* After LS missed its target, BE waits a dwell before it takes a CPU back. */
	if (n > prev && st->have_short && pol_since_s(in->ts_ns, &st->short_ns) < lat->dwell_s)
		n = prev;
	st->trial = st->trial && n;
	return n >= usable ? usable - 1 : n;
}

/*
 * split: whole CPUs for BE alone, and the LS units moved off them, so that
 * an LS task never wakes behind a BE task, nor on a CPU whose caches BE
 * keeps (split_size: how many). With no whole CPU to spare the split is off
 * and BE gets the cfsQuota allowance (with its floor); the LS units'
 * cpusets are then no one's wish, and the plan gives them back to their
 * owners.
 */
static int emit_split(const struct pol_input *in, const struct suppress_config *cfg,
		      const struct slo_config *slo, const struct sup_meas *m,
		      struct suppress_state *st, struct action_list *out)
{
	char be[POL_CPULIST_MAX], ls[POL_CPULIST_MAX];
	bool on[POL_CPUS_MAX];
	size_t usable = cpu_pool(in, on), n, first, prev = bits(st->cpuset);
	struct split_slo lat;
	int err;

	split_latency(in, slo, st, &lat);
	n = split_size(in, cfg, m, &lat, st, usable);
	if (lat.short_unit && prev && usable >= 2) {
		/* The step and its reason, on the LS unit: the cpusets alone would not say why. */
		struct action *a =
			add(out, ACT_REPORT, lat.short_unit, RULE_SUPPRESS_SPLIT_SHORT, cfg, m);

		if (!a)
			return -ENOMEM;
		action_evidence(a, "ls_rq_p99_us", lat.p99_us);
		action_evidence(a, "ls_target_us", lat.target_us);
		action_evidence(a, "be_cpuset_cpus", (double)(m->use.n_be ? n : 0));
	}
	first = out->n;
	if (!n || !m->use.n_be) {
		memset(st->cpuset, 0, sizeof(st->cpuset));
		st->ls_cpus[0] = '\0';
		return emit_quotas(in, cfg, m, out);
	}
	n = cpu_pick(in, (double)n, st->cpuset);
	/* LS gets the rest of the shared pool (on[]): never a pinned pod's CPUs. */
	for (int cpu = 0; cpu < POL_CPUS_MAX; cpu++)
		on[cpu] = on[cpu] && !cpu_set_has(st->cpuset, cpu);
	err = cpu_pick_format(st->cpuset, be, sizeof(be));
	if (!err && cpu_list_format(on, POL_CPUS_MAX, ls, sizeof(ls)))
		err = -ENOSPC;
	if (!err)
		err = emit_be_list(in, cfg, m, be, n, RULE_SUPPRESS_SPLIT_BE, out);
	for (size_t i = 0; !err && i < in->n_units; i++) {
		const struct pol_unit *u = &in->units[i];
		struct action *a;

		if (!split_movable(in, st, u))
			continue;
		a = add(out, ACT_CPUSET, u, RULE_SUPPRESS_SPLIT_LS, cfg, m);
		if (!a)
			return -ENOMEM;
		a->ls_split = true;
		snprintf(a->cpus, sizeof(a->cpus), "%s", ls);
		action_evidence(a, "ls_cpuset_cpus", (double)(usable - n));
		action_evidence(a, "be_cpuset_cpus", (double)n);
	}
	/* What the size was judged on: the tick's figures may be a burst within the window. */
	for (size_t k = first; !err && k < out->n; k++) {
		action_evidence(&out->v[k], "split_used_cpus", st->judged_used_cpus);
		action_evidence(&out->v[k], "split_window_s", st->judged_window_s);
		if (st->trial)
			action_evidence(&out->v[k], "split_trial", 1);
	}
	snprintf(st->ls_cpus, sizeof(st->ls_cpus), "%s", err ? "" : ls);
	return err;
}

static int emit_idle(const struct pol_input *in, struct action_list *out)
{
	for (size_t i = 0; i < in->n_units; i++) {
		const struct pol_unit *u = &in->units[i];
		struct action *a;

		if (!pool_use_is_be(u))
			continue;
		a = action_add(out, ACT_CPU_IDLE, u, RULE_SUPPRESS_CPU_IDLE);
		if (!a)
			return -ENOMEM;
		a->value = 1;
	}
	return 0;
}

int suppress_run(const struct pol_input *in, const struct suppress_config *cfg,
		 const struct slo_config *slo, struct suppress_state *st, struct action_list *out)
{
	struct sup_meas m;
	int err;

	if (!cfg->enabled) {
		/* Enabled again later, it starts afresh rather than from a stale allowance. */
		suppress_state_free(st);
		return 0;
	}
	pool_use_measure(in, &m.use);
	m.raw = m.use.capacity * cfg->threshold - m.use.non_be - m.use.system;
	m.allowed = limit_allowance(in, &m, cfg, st, m.raw);
	st->allowed_cpus = m.allowed;
	st->have_allowed = true;

	if (cfg->policy == SUPPRESS_CPUSET) {
		err = emit_cpusets(in, cfg, &m, st, out);
	} else if (cfg->policy == SUPPRESS_SPLIT) {
		err = emit_split(in, cfg, slo, &m, st, out);
	} else {
		memset(st->cpuset, 0, sizeof(st->cpuset));
		err = emit_quotas(in, cfg, &m, out);
	}
	/* cpu.idle does not depend on the list: it still goes out when that did not fit. */
	if (err != -ENOMEM && cfg->cpu_idle && in->has_cpu_idle) {
		int idle_err = emit_idle(in, out);

		err = err ? err : idle_err;
	}
	return err;
}

void suppress_state_free(struct suppress_state *st)
{
	memset(st, 0, sizeof(*st));
}
