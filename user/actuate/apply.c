// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* One policy action into checked, ordered writes (docs/agent-actuator.md). */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actuate/internal.h"
#include "cgroup/path.h"

static void set_outcome(struct act_result *r, enum decision_outcome o, int err, const char *fmt,
			...) __attribute__((format(printf, 4, 5)));

static void set_outcome(struct act_result *r, enum decision_outcome o, int err, const char *fmt,
			...)
{
	va_list ap;

	r->outcome = o;
	r->err = err;
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
}

static void fail_read(struct act_result *r, const char *rel, const char *file, int err)
{
	if (err == -ENOENT)
		set_outcome(r, OUT_FAILED, err, "cgroup %s vanished", rel);
	else if (err == -EOPNOTSUPP)
		set_outcome(r, OUT_FAILED, err, "%s/%s does not exist on this kernel", rel, file);
	else
		set_outcome(r, OUT_FAILED, err, "reading %s/%s: %s", rel, file, strerror(-err));
}

/* Writes the steps in order; the first failure stops them (what is written stays valid). */
static void run_steps(struct actuator *a, struct steps *s, struct act_result *r)
{
	if (!s->n) {
		r->outcome = OUT_UNCHANGED;
		return;
	}
	steps_sort(s);
	for (size_t i = 0; i < s->n; i++) {
		const struct step *p = &s->v[i];
		int err = act_write(a, p->knob, p->rel, p->text, true, r->why, sizeof(r->why));

		if (err) {
			r->outcome = OUT_FAILED;
			r->err = err;
			return;
		}
	}
	r->outcome = a->dry_run ? OUT_DRY_RUN : OUT_APPLIED;
}

/*
 * Burst, idle, weight and memory limit: the target only. A memory limit
 * nests (v1 with use_hierarchy, v2) but the kernel accepts any child's limit,
 * the lowest on the path applies: a pod's and its containers' batch limits
 * are written in any order.
 */
static void apply_number(struct actuator *a, enum cg_knob k, const char *rel, int64_t value,
			 struct act_result *r)
{
	struct steps s = {0};
	int64_t cur;
	int err;

	if (k == CG_KNOB_IDLE && value != 0 && value != 1) {
		set_outcome(r, OUT_REFUSED, 0, "cpu.idle takes 0 or 1, not %lld", (long long)value);
		return;
	}
	if (cg_knob_format(a->c, k, value, 0, r->after, sizeof(r->after))) {
		set_outcome(r, OUT_REFUSED, 0, "%lld is not a valid %s", (long long)value,
			    cg_knob_file(a->c, k));
		return;
	}
	err = cg_read_knob(a->c, k, rel, r->before, sizeof(r->before));
	if (err) {
		fail_read(r, rel, cg_knob_file(a->c, k), err);
		return;
	}
	if (cg_knob_parse(a->c, k, r->before, &cur) || cur != value)
		err = steps_add(&s, k, rel, r->after, PHASE_FLAT, 0, 0);
	/*
	 * cpu.idle=1 hides the owner's weight (the kernel shows the idle weight,
	 * 3 shares) and setting it back to 0 resets the weight to the default,
	 * not to what it was: journal the weight first. Restore goes in reverse
	 * order of first change, so idle comes back before the weight (the
	 * kernel refuses weight writes while idle is set).
	 */
	if (!err && s.n && k == CG_KNOB_IDLE && value && !a->dry_run) {
		err = journal_first(a, CG_KNOB_WEIGHT, rel, NULL, r->why, sizeof(r->why));
		if (err) {
			set_outcome(r, OUT_FAILED, err, "%s", r->why);
			steps_free(&s);
			return;
		}
	}
	if (err)
		set_outcome(r, OUT_FAILED, err, "%s", strerror(-err));
	else
		run_steps(a, &s, r);
	steps_free(&s);
}

/*
 * The kernel checks quota / period ratios. An unlimited child inherits its
 * parent's limit, so it never exceeds it; a limited one gets at most its
 * parent's new ratio, and never more than its own original.
 */
static int64_t nested_quota(int64_t orig, uint64_t period, int64_t quota, uint64_t unit_period)
{
	__int128 lim;

	if (orig == -1)
		return -1;
	if (quota == -1 || !unit_period)
		return orig;
	lim = (__int128)quota * period / unit_period;
	return lim < orig ? (int64_t)lim : orig;
}

/* v1 refuses (EINVAL) a child quota above its parent's: plans the descendants' writes. */
static int plan_nested_quotas(struct actuator *a, const char *rel, int64_t quota, uint64_t period,
			      struct steps *s, struct act_result *r)
{
	const char *file = cg_knob_file(a->c, CG_KNOB_QUOTA);
	struct cg_list l;
	int err = cg_subtree(a->c, CTRL_CPU, rel, &l);

	if (err) {
		fail_read(r, rel, "", err);
		return err;
	}
	for (size_t i = 1; !err && i < l.n; i++) {
		int64_t cur, orig, want;
		uint64_t p;
		char text[ACT_TEXT_MAX];

		err = cg_read_quota(a->c, l.v[i], &cur, &p);
		if (err == -ENOENT) {
			err = 0;
			continue;
		}
		if (err) {
			fail_read(r, l.v[i], file, err);
			break;
		}
		if (!actuator_original_quota(a, l.v[i], &orig))
			orig = cur;
		want = nested_quota(orig, p, quota, period);
		if (want == cur)
			continue;
		err = cg_knob_format(a->c, CG_KNOB_QUOTA, want, p, text, sizeof(text));
		if (!err)
			err = steps_add(s, CG_KNOB_QUOTA, l.v[i], text,
					act_quota_lt(want, cur) ? PHASE_NARROW : PHASE_WIDEN, i, 0);
		if (err)
			set_outcome(r, OUT_FAILED, err, "%s: %s", l.v[i], strerror(-err));
	}
	cg_list_free(&l);
	return err;
}

static void apply_quota(struct actuator *a, const struct action *act, const char *rel,
			struct act_result *r)
{
	const char *file = cg_knob_file(a->c, CG_KNOB_QUOTA);
	int64_t cur, orig, quota = act->value;
	struct steps s = {0};
	char orig_text[ACT_TEXT_MAX];
	uint64_t period;
	int err = cg_read_quota(a->c, rel, &cur, &period);

	if (!err)
		err = cg_read_knob(a->c, CG_KNOB_QUOTA, rel, r->before, sizeof(r->before));
	if (err) {
		fail_read(r, rel, file, err);
		return;
	}
	if (cg_knob_format(a->c, CG_KNOB_QUOTA, quota, period, r->after, sizeof(r->after))) {
		set_outcome(r, OUT_REFUSED, 0, "%lld is not a CPU quota", (long long)quota);
		return;
	}
	if (qos_is_ls(act->cls)) {
		if (!actuator_original_quota(a, rel, &orig))
			orig = cur;
		if (act_quota_lt(quota, orig)) {
			cg_knob_format(a->c, CG_KNOB_QUOTA, orig, period, orig_text,
				       sizeof(orig_text));
			set_outcome(r, OUT_REFUSED, 0,
				    "never lowers an LS limit: \"%s\" is below the original \"%s\"",
				    r->after, orig_text);
			return;
		}
	}
	if (quota == cur) {
		r->outcome = OUT_UNCHANGED;
		return;
	}
	err = steps_add(&s, CG_KNOB_QUOTA, rel, r->after,
			act_quota_lt(quota, cur) ? PHASE_NARROW : PHASE_WIDEN, 0, 0);
	if (err)
		set_outcome(r, OUT_FAILED, err, "%s", strerror(-err));
	else if (!a->c->v2[CTRL_CPU])
		err = plan_nested_quotas(a, rel, quota, period, &s, r);
	if (!err)
		run_steps(a, &s, r);
	steps_free(&s);
}

/* "a/b/c" -> "a/b"; "a" -> "" (the root). */
static void parent_of(const char *rel, char *parent, size_t size)
{
	const char *slash = strrchr(rel, '/');
	size_t n = slash ? (size_t)(slash - rel) : 0;

	if (n >= size)
		n = size - 1;
	memcpy(parent, rel, n);
	parent[n] = '\0';
}

int act_parent_cpus(const struct actuator *a, const char *rel, char *parent, size_t psize,
		    char *buf, size_t size)
{
	parent_of(rel, parent, psize);
	return a->c->v2[CTRL_CPUSET] ? cg_read_effective_cpus(a->c, parent, buf, size)
				     : cg_read_cpus(a->c, parent, buf, size);
}

struct cpus_work {
	struct act_cpus want, cur, uni;
	char text[ACT_TEXT_MAX];
};

/*
 * v1 refuses a child cpuset that is not within its parent's, and a parent
 * that no longer holds a child's CPUs: the unit's parent must hold them all.
 * v2 has no such rule, but CPUs the parent lacks would not be used.
 */
static int check_parent(struct actuator *a, const char *rel, struct cpus_work *w,
			struct act_result *r)
{
	char parent[POL_PATH_MAX];
	const char *file = a->c->v2[CTRL_CPUSET] ? cg_file_name(CG_FILE_EFFECTIVE_CPUS, true)
						 : cg_knob_file(a->c, CG_KNOB_CPUS);
	int err;

	err = act_parent_cpus(a, rel, parent, sizeof(parent), w->text, sizeof(w->text));
	if (!err && act_cpus_parse(w->text, &w->cur))
		err = -EINVAL;
	if (err) {
		fail_read(r, parent, file, err);
		return err;
	}
	if (!act_cpus_subset(&w->want, &w->cur)) {
		set_outcome(r, OUT_REFUSED, 0, "the parent %s holds only CPUs \"%s\", not \"%s\"",
			    parent, w->text, r->after);
		return -EPERM;
	}
	return 0;
}

/*
 * Each cgroup of the subtree first widens to (its CPUs + the new ones),
 * then narrows to the new ones: a grow is only the first, a shrink only the
 * second, a move both. Descendants with no CPUs of their own ("": on v2 they
 * inherit, on v1 they cannot hold tasks) are left alone.
 */
static int plan_cpusets(struct actuator *a, const char *rel, struct cpus_work *w, struct steps *s,
			struct act_result *r)
{
	struct cg_list l;
	int err = cg_subtree(a->c, CTRL_CPUSET, rel, &l);

	if (err) {
		fail_read(r, rel, "", err);
		return err;
	}
	for (size_t i = 0; !err && i < l.n; i++) {
		if (i) {
			err = cg_read_cpus(a->c, l.v[i], w->text, sizeof(w->text));
			if (err == -ENOENT || (!err && !w->text[0])) {
				err = 0;
				continue;
			}
		} else {
			snprintf(w->text, sizeof(w->text), "%s", r->before);
		}
		if (!err && act_cpus_parse(w->text, &w->cur))
			err = -EINVAL;
		if (err) {
			fail_read(r, l.v[i], cg_knob_file(a->c, CG_KNOB_CPUS), err);
			break;
		}
		act_cpus_union(&w->uni, &w->cur, &w->want);
		if (!act_cpus_subset(&w->uni, &w->cur)) {
			err = act_cpus_format(&w->uni, w->text, sizeof(w->text));
			if (!err)
				err = steps_add(s, CG_KNOB_CPUS, l.v[i], w->text, PHASE_WIDEN, i,
						0);
		}
		if (!err && !act_cpus_subset(&w->uni, &w->want))
			err = steps_add(s, CG_KNOB_CPUS, l.v[i], r->after, PHASE_NARROW, i, 0);
		if (err)
			set_outcome(r, OUT_FAILED, err, "%s: %s", l.v[i], strerror(-err));
	}
	cg_list_free(&l);
	return err;
}

static void apply_cpuset(struct actuator *a, const struct action *act, const char *rel,
			 struct act_result *r)
{
	struct cpus_work *w = malloc(sizeof(*w));
	struct steps s = {0};
	int err;

	if (!w) {
		set_outcome(r, OUT_FAILED, -ENOMEM, "out of memory");
		return;
	}
	if (act_cpus_parse(act->cpus, &w->want) ||
	    act_cpus_format(&w->want, r->after, sizeof(r->after)))
		set_outcome(r, OUT_REFUSED, 0, "\"%s\" is not a CPU list", act->cpus);
	else if (act_cpus_empty(&w->want))
		set_outcome(r, OUT_REFUSED, 0, "never writes an empty cpuset");
	else if ((err = cg_read_cpus(a->c, rel, r->before, sizeof(r->before))))
		fail_read(r, rel, cg_knob_file(a->c, CG_KNOB_CPUS), err);
	else if (!check_parent(a, rel, w, r) && !plan_cpusets(a, rel, w, &s, r))
		run_steps(a, &s, r);
	steps_free(&s);
	free(w);
}

/*
 * The one cpuset an LS unit takes: the split's, moving it off the CPUs BE
 * gets alone, and only out of the shared pool: its original cpuset (the
 * journal's, else the file's) is "" (v2: it inherits) or all of its
 * parent's CPUs. An LS unit its owner placed elsewhere keeps its CPUs,
 * whatever a policy asks.
 */
static bool ls_split_allowed(struct actuator *a, const struct action *act, const char *rel)
{
	const struct journal_entry *e = journal_find(&a->j, CG_KNOB_CPUS, rel);
	char parent[POL_PATH_MAX], text[ACT_TEXT_MAX];
	struct act_cpus orig, pool;
	int err;

	if (act->kind != ACT_CPUSET || !act->ls_split || act->cls != QOS_LS)
		return false;
	if (e)
		snprintf(text, sizeof(text), "%s", e->orig);
	else if (cg_read_cpus(a->c, rel, text, sizeof(text)))
		return false;
	if (!text[0])
		return true;
	if (act_cpus_parse(text, &orig))
		return false;
	err = act_parent_cpus(a, rel, parent, sizeof(parent), text, sizeof(text));
	return !err && !act_cpus_parse(text, &pool) && act_cpus_subset(&pool, &orig);
}

/* Memory protection: -1 is "max", above every number. */
static bool prot_lt(int64_t a, int64_t b)
{
	return a >= 0 && (b < 0 || a < b);
}

static int64_t prot_add(int64_t a, int64_t b)
{
	return a < 0 || b < 0 || a > INT64_MAX - b ? -1 : a + b;
}

static int read_number_knob(struct actuator *a, enum cg_knob k, const char *rel, int64_t *v)
{
	char text[ACT_TEXT_MAX];
	int err = cg_read_knob(a->c, k, rel, text, sizeof(text));

	return err ? err : cg_knob_parse(a->c, k, text, v);
}

/*
 * The sum of knob k over the direct children of parent, the child `self`
 * counted as self_value (what it is about to hold). Children without the
 * file (vanished meanwhile) count 0.
 */
static int children_sum(struct actuator *a, enum cg_knob k, const char *parent, const char *self,
			int64_t self_value, int64_t *sum)
{
	char dir[PATH_MAX], child[POL_PATH_MAX];
	struct dirent *de;
	DIR *d;
	int err = cg_path(a->c, cg_knob_ctrl(k), parent, "", dir, sizeof(dir));

	if (err)
		return err;
	d = opendir(dir);
	if (!d)
		return -errno;
	*sum = 0;
	while ((de = readdir(d))) {
		int64_t v = 0;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (snprintf(child, sizeof(child), "%s%s%s", parent, *parent ? "/" : "",
			     de->d_name) >= (int)sizeof(child))
			continue; /* no unit lives that deep */
		if (!strcmp(child, self))
			v = self_value;
		else if (read_number_knob(a, k, child, &v))
			v = 0;
		*sum = prot_add(*sum, v);
	}
	closedir(d);
	return 0;
}

/*
 * A child's memory.min/low protects it only as far as each ancestor's does
 * (the kernel caps a child's effective protection by its parent's): each
 * ancestor up to the subtree's root gets the sum of its children's, or its
 * owner's value if larger. Raising goes parents first and lowering children
 * first (the kernel accepts either order; this keeps the protection whole
 * at every step). Plans the ancestors' writes above rel holding value.
 */
static int plan_ancestors(struct actuator *a, enum cg_knob k, const char *rel, int64_t value,
			  struct steps *s, struct act_result *r)
{
	char child[POL_PATH_MAX], parent[POL_PATH_MAX], text[ACT_TEXT_MAX];
	int err = 0;

	snprintf(child, sizeof(child), "%s", rel);
	for (size_t depth = 1; strcmp(child, a->subtree); depth++) {
		const struct journal_entry *e;
		int64_t sum = 0, cur, orig, want;

		parent_of(child, parent, sizeof(parent));
		if (!act_in_subtree(a, k, parent))
			break; /* the cgroup root: no protection files */
		err = read_number_knob(a, k, parent, &cur);
		if (!err)
			err = children_sum(a, k, parent, child, value, &sum);
		if (err) {
			fail_read(r, parent, cg_knob_file(a->c, k), err);
			return err;
		}
		e = journal_find(&a->j, k, parent);
		if (!e || cg_knob_parse(a->c, k, e->orig, &orig))
			orig = cur;
		want = prot_lt(sum, orig) ? orig : sum;
		if (want != cur) {
			err = cg_knob_format(a->c, k, want, 0, text, sizeof(text));
			if (!err)
				err = steps_add(s, k, parent, text,
						prot_lt(want, cur) ? PHASE_NARROW : PHASE_WIDEN,
						depth, 0);
			if (err) {
				set_outcome(r, OUT_FAILED, err, "%s: %s", parent, strerror(-err));
				return err;
			}
		}
		snprintf(child, sizeof(child), "%s", parent);
		value = want;
	}
	return 0;
}

/* memory.min / memory.low of a unit, and the sum of its siblings' on each of its ancestors. */
static void apply_protection(struct actuator *a, enum cg_knob k, const char *rel, int64_t value,
			     struct act_result *r)
{
	struct steps s = {0};
	int64_t cur;
	int err;

	if (value < 0 || cg_knob_format(a->c, k, value, 0, r->after, sizeof(r->after))) {
		set_outcome(r, OUT_REFUSED, 0, "%lld is not a valid %s", (long long)value,
			    cg_knob_file(a->c, k));
		return;
	}
	err = cg_read_knob(a->c, k, rel, r->before, sizeof(r->before));
	if (!err && cg_knob_parse(a->c, k, r->before, &cur))
		err = -EINVAL;
	if (err) {
		fail_read(r, rel, cg_knob_file(a->c, k), err);
		return;
	}
	if (cur != value)
		err = steps_add(&s, k, rel, r->after,
				prot_lt(value, cur) ? PHASE_NARROW : PHASE_WIDEN, 0, 0);
	if (err)
		set_outcome(r, OUT_FAILED, err, "%s", strerror(-err));
	else if (!plan_ancestors(a, k, rel, value, &s, r))
		run_steps(a, &s, r);
	steps_free(&s);
}

/*
 * A one-shot reclaim (v2 memory.reclaim): nothing to journal or restore.
 * before/after: the unit's usage around the write. The kernel answers
 * EAGAIN when it got back less than asked: a partial success, applied.
 */
static void apply_reclaim(struct actuator *a, const char *rel, int64_t bytes, struct act_result *r)
{
	const char *file = cg_file_name(CG_FILE_MEM_RECLAIM, a->c->v2[CTRL_MEMORY]);
	char path[PATH_MAX], text[32];
	int err;

	if (bytes <= 0) {
		set_outcome(r, OUT_REFUSED, 0, "memory.reclaim takes a positive size, not %lld",
			    (long long)bytes);
		return;
	}
	if (!file || !cg_has_file(a->c, CG_FILE_MEM_RECLAIM, rel)) {
		set_outcome(r, OUT_FAILED, -EOPNOTSUPP,
			    "%s/memory.reclaim does not exist on this kernel (v2, 5.19+)", rel);
		return;
	}
	cg_read_file(a->c, CTRL_MEMORY, rel, cg_file_name(CG_FILE_MEM_USAGE, true), r->before,
		     sizeof(r->before));
	snprintf(text, sizeof(text), "%lld", (long long)bytes);
	if (cg_path(a->c, CTRL_MEMORY, rel, file, path, sizeof(path)))
		path[0] = '\0';
	if (a->dry_run) {
		act_notify(a, path, text, 0);
		snprintf(r->after, sizeof(r->after), "would reclaim %s bytes", text);
		r->outcome = OUT_DRY_RUN;
		return;
	}
	err = cg_mem_reclaim(a->c, rel, (uint64_t)bytes);
	act_notify(a, path, text, err == -EAGAIN ? 0 : err);
	cg_read_file(a->c, CTRL_MEMORY, rel, cg_file_name(CG_FILE_MEM_USAGE, true), r->after,
		     sizeof(r->after));
	if (err == -EAGAIN)
		snprintf(r->why, sizeof(r->why), "the kernel reclaimed less than %s bytes", text);
	else if (err) {
		set_outcome(r, OUT_FAILED, err, "writing %s to %s/%s: %s", text, rel, file,
			    strerror(-err));
		return;
	}
	r->outcome = OUT_APPLIED;
}

/*
 * A block I/O throttle on one disk: the rule of that disk alone (other
 * disks' rules stay as they are); before is every disk's rule.
 */
static void apply_io(struct actuator *a, enum cg_knob k, const char *rel, const struct action *act,
		     struct act_result *r)
{
	struct steps s = {0};
	uint64_t dev = act->dev;
	int64_t cur;
	int err;

	if (cg_io_knob_format(a->c, k, act->dev, act->value, r->after, sizeof(r->after))) {
		set_outcome(r, OUT_REFUSED, 0, "%lld on disk %llu is not a valid %s",
			    (long long)act->value, (unsigned long long)act->dev,
			    cg_knob_file(a->c, k));
		return;
	}
	err = cg_read_knob(a->c, k, rel, r->before, sizeof(r->before));
	if (!err)
		err = cg_io_knob_value(a->c, k, r->before, &dev, &cur);
	if (err) {
		fail_read(r, rel, cg_knob_file(a->c, k), err);
		return;
	}
	if (cur != act->value)
		err = steps_add(&s, k, rel, r->after, PHASE_FLAT, 0, 0);
	if (err)
		set_outcome(r, OUT_FAILED, err, "%s", strerror(-err));
	else
		run_steps(a, &s, r);
	steps_free(&s);
}

static void apply_evict(struct actuator *a, const char *rel, struct act_result *r)
{
	char dir[PATH_MAX];
	int n;

	if (a->evict == EVICT_REPORT) {
		set_outcome(r, OUT_REPORTED, 0,
			    "evictions are reported only here (evict.action, evict.nodes)");
		return;
	}
	if (a->evict == EVICT_KUBERNETES) {
		/* The API server does it (and honours disruption budgets): the checks above are
		 * ours. */
		snprintf(r->after, sizeof(r->after), "%s through the Eviction API",
			 a->dry_run ? "would evict" : "evict");
		r->outcome = a->dry_run ? OUT_DRY_RUN : OUT_REQUESTED;
		return;
	}
	n = cg_path(a->c, CTRL_CPU, rel, "", dir, sizeof(dir));
	if (!n)
		n = cg_count_subtree_procs(a->c, rel);
	if (n < 0) {
		fail_read(r, rel, "cgroup.procs", n);
		return;
	}
	snprintf(r->before, sizeof(r->before), "%d tasks", n);
	if (a->dry_run) {
		snprintf(r->after, sizeof(r->after), "would kill %d tasks", n);
		act_notify(a, dir, "kill", 0);
		r->outcome = OUT_DRY_RUN;
		return;
	}
	n = cg_kill_subtree(a->c, rel);
	act_notify(a, dir, "kill", n < 0 ? n : 0);
	if (n < 0) {
		set_outcome(r, OUT_FAILED, n, "killing the tasks of %s: %s", rel, strerror(-n));
		return;
	}
	snprintf(r->after, sizeof(r->after), "killed %d tasks", n);
	r->outcome = OUT_APPLIED;
}

int act_sync_ancestors(struct actuator *a, enum cg_knob k, const char *rel, int64_t value)
{
	struct act_result tmp = {0};
	struct steps s = {0};
	int failed = 1;

	if (!plan_ancestors(a, k, rel, value, &s, &tmp)) {
		run_steps(a, &s, &tmp);
		failed = tmp.outcome == OUT_FAILED;
	} else if (tmp.err == -ENOENT) {
		failed = 0; /* the ancestors went too */
	}
	steps_free(&s);
	return failed;
}

/* No policy wants the setting any more: the owner's values come back. */
static void apply_restore(struct actuator *a, const struct action *act, const char *rel,
			  struct act_result *r)
{
	static const enum cg_knob knob_of[ACT_NR] = {
		[ACT_CPU_QUOTA] = CG_KNOB_QUOTA,   [ACT_CPU_BURST] = CG_KNOB_BURST,
		[ACT_CPU_IDLE] = CG_KNOB_IDLE,	   [ACT_CPUSET] = CG_KNOB_CPUS,
		[ACT_CPU_WEIGHT] = CG_KNOB_WEIGHT, [ACT_MEM_LIMIT] = CG_KNOB_MEM_MAX,
		[ACT_MEM_MIN] = CG_KNOB_MEM_MIN,   [ACT_MEM_LOW] = CG_KNOB_MEM_LOW,
		[ACT_MEM_HIGH] = CG_KNOB_MEM_HIGH, [ACT_IO_RBPS] = CG_KNOB_IO_RBPS,
		[ACT_IO_WBPS] = CG_KNOB_IO_WBPS,
	};
	enum cg_knob k = knob_of[act->kind];
	size_t restored = 0;
	int idle = 0, ret;

	if ((unsigned int)act->kind >= ACT_NR ||
	    (!knob_of[act->kind] && act->kind != ACT_CPU_QUOTA)) {
		set_outcome(r, OUT_REFUSED, 0, "%s has no owner's value", act_kind_name(act->kind));
		return;
	}
	cg_read_knob(a->c, k, rel, r->before, sizeof(r->before));
	/*
	 * The kernel refuses weight writes while cpu.idle is 1; the journal keeps
	 * the owner's weight, and clearing cpu.idle brings it back (below).
	 */
	if (k == CG_KNOB_WEIGHT && !cg_read_idle(a->c, rel, &idle) && idle == 1) {
		set_outcome(r, OUT_UNCHANGED, 0,
			    "cpu.idle is 1: the owner's weight comes back with cpu.idle");
		return;
	}
	ret = act_restore_knob(a, k, rel, &restored);
	/* Clearing cpu.idle reset the weight to the default: the owner's comes back too. */
	if (ret == 0 && k == CG_KNOB_IDLE) {
		size_t weights = 0;

		ret = act_restore_knob(a, CG_KNOB_WEIGHT, rel, &weights);
		restored += weights;
	}
	/* The unit's protection went back: its ancestors' sums follow it down. */
	if (ret == 0 && act_is_protection(k)) {
		int64_t v;

		ret = read_number_knob(a, k, rel, &v) || act_sync_ancestors(a, k, rel, v);
	}
	cg_read_knob(a->c, k, rel, r->after, sizeof(r->after));
	if (ret < 0)
		set_outcome(r, OUT_FAILED, ret, "journal: %s", strerror(-ret));
	else if (ret > 0)
		set_outcome(r, OUT_FAILED, -EIO, "%d settings could not be restored", ret);
	else
		r->outcome = a->dry_run ? OUT_DRY_RUN : restored ? OUT_APPLIED : OUT_UNCHANGED;
}

static void apply(struct actuator *a, const struct action *act, struct act_result *r)
{
	char rel[POL_PATH_MAX];

	if (act->kind == ACT_REPORT) {
		set_outcome(r, OUT_REPORTED, 0, "a finding: nothing to write");
		return;
	}
	if (cgroup_path_normalize("", act->path, rel, sizeof(rel))) {
		set_outcome(r, OUT_REFUSED, 0, "\"%s\" is not a cgroup path", act->path);
		return;
	}
	if (!cgroup_path_within(rel, a->subtree)) {
		set_outcome(r, OUT_REFUSED, 0, "%s is outside the managed subtree \"%s\"", rel,
			    a->subtree);
		return;
	}
	if (!strcmp(rel, a->subtree)) {
		set_outcome(r, OUT_REFUSED, 0, "%s is the managed subtree's root", rel);
		return;
	}
	if (act->restore) {
		apply_restore(a, act, rel, r);
		return;
	}
	/*
	 * Beyond quotas (apply_quota): an LS unit keeps its CPUs and weight, and
	 * stays; only the split may move a shared one off BE's CPUs.
	 */
	if (qos_is_ls(act->cls) && !ls_split_allowed(a, act, rel) &&
	    (act->kind == ACT_CPUSET || act->kind == ACT_EVICT || act->kind == ACT_CPU_WEIGHT ||
	     act->kind == ACT_MEM_LIMIT || act->kind == ACT_MEM_HIGH ||
	     act->kind == ACT_MEM_RECLAIM || act->kind == ACT_IO_RBPS || act->kind == ACT_IO_WBPS ||
	     (act->kind == ACT_CPU_IDLE && act->value))) {
		set_outcome(r, OUT_REFUSED, 0, "%s is %s: qoslet never squeezes it (%s)", rel,
			    qos_class_name(act->cls), act_kind_name(act->kind));
		return;
	}
	switch (act->kind) {
	case ACT_CPU_QUOTA:
		apply_quota(a, act, rel, r);
		break;
	case ACT_CPU_BURST:
		apply_number(a, CG_KNOB_BURST, rel, act->value, r);
		break;
	case ACT_CPU_IDLE:
		apply_number(a, CG_KNOB_IDLE, rel, act->value, r);
		break;
	case ACT_CPU_WEIGHT:
		apply_number(a, CG_KNOB_WEIGHT, rel, act->value, r);
		break;
	case ACT_MEM_LIMIT:
		apply_number(a, CG_KNOB_MEM_MAX, rel, act->value, r);
		break;
	case ACT_CPUSET:
		apply_cpuset(a, act, rel, r);
		break;
	case ACT_EVICT:
		apply_evict(a, rel, r);
		break;
	case ACT_MEM_MIN:
		apply_protection(a, CG_KNOB_MEM_MIN, rel, act->value, r);
		break;
	case ACT_MEM_LOW:
		apply_protection(a, CG_KNOB_MEM_LOW, rel, act->value, r);
		break;
	case ACT_MEM_HIGH:
		apply_number(a, CG_KNOB_MEM_HIGH, rel, act->value, r);
		break;
	case ACT_MEM_RECLAIM:
		apply_reclaim(a, rel, act->value, r);
		break;
	case ACT_IO_RBPS:
		apply_io(a, CG_KNOB_IO_RBPS, rel, act, r);
		break;
	case ACT_IO_WBPS:
		apply_io(a, CG_KNOB_IO_WBPS, rel, act, r);
		break;
	default:
		set_outcome(r, OUT_REFUSED, 0, "unknown action kind %d", act->kind);
		break;
	}
}

void actuator_apply(struct actuator *a, const struct action *act, struct act_result *r)
{
	memset(r, 0, sizeof(*r));
	a->cur = act; /* who wrote each file: an answer to another writer names it */
	apply(a, act, r);
	a->cur = NULL;
}
