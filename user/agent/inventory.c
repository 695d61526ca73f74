// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "inventory.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../grow.h"
#include "../kube_path.h"
#include "../log.h"
#include "../readfile.h"
#include "node.h"

/* The kernel's cumulative counters of a unit at the previous tick. */
struct unit_prev {
	uint64_t id;
	uint64_t usage_ns;
	uint64_t nr_periods, nr_throttled;
	double request_cpus;
};

struct inventory {
	const struct inventory_opts *o;
	struct node_reader *node;
	struct inventory_member *members;
	size_t n_members, cap_members;
	struct unit_prev *prev, *cur;
	size_t n_prev, n_cur, cap_prev, cap_cur;
	uint64_t prev_mono_ns;
	/* scratch of the walk */
	struct pol_unit *units;
	size_t n_units, cap_units;
};

struct inventory *inventory_new(const struct inventory_opts *o)
{
	struct inventory *inv = calloc(1, sizeof(*inv));

	if (!inv)
		return NULL;
	inv->o = o;
	inv->node = node_reader_new();
	if (!inv->node) {
		free(inv);
		return NULL;
	}
	return inv;
}

void inventory_free(struct inventory *inv)
{
	if (!inv)
		return;
	node_reader_free(inv->node);
	free(inv->members);
	free(inv->prev);
	free(inv->cur);
	free(inv->units);
	free(inv);
}

const struct inventory_member *inventory_members(const struct inventory *inv, size_t *n)
{
	*n = inv->n_members;
	return inv->members;
}

int inventory_detect_kubepods(const struct cgroup_ctrls *ctrls, char *rel, size_t size)
{
	static const char *const roots[] = {"kubepods", "kubepods.slice"};

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		char path[PATH_MAX];

		if (cg_path(ctrls, CTRL_CPU, roots[i], "", path, sizeof(path)) ||
		    access(path, F_OK))
			continue;
		snprintf(rel, size, "%s", roots[i]);
		return 0;
	}
	return -ENOENT;
}

/*
 * The config's class rules first (the operator's word), then the pod's
 * koordinator.sh/qosClass label, then the kubelet's QoS tier. A pod's
 * uid and priority come with it whichever decided the class.
 */
static enum qos_class classify(const struct inventory_opts *o, const char *rel, char *pod_uid,
			       size_t uid_size, int32_t *priority)
{
	const struct kube_pod *pod = NULL;
	struct kube_ids ids;
	enum qos_class label;
	bool is_pod = kube_path_parse(rel, &ids) && ids.pod_uid[0] && !ids.container_id[0];

	pod_uid[0] = '\0';
	*priority = 0;
	if (is_pod) {
		snprintf(pod_uid, uid_size, "%s", ids.pod_uid);
		pod = o->pod ? o->pod(o->ctx, ids.pod_uid) : NULL;
		*priority = pod && pod->has_priority ? pod->priority : 0;
	}
	for (size_t i = 0; i < o->cfg->n_classes; i++)
		if (!fnmatch(o->cfg->classes[i].glob, rel, FNM_PATHNAME))
			return o->cfg->classes[i].cls;
	if (!is_pod)
		return QOS_UNMANAGED;
	if (pod && pod->koord_qos[0] && !qos_class_parse(pod->koord_qos, &label))
		return label;
	switch (ids.qos) {
	case KUBE_QOS_GUARANTEED:
		return QOS_LSR;
	case KUBE_QOS_BURSTABLE:
		return QOS_LS;
	case KUBE_QOS_BESTEFFORT:
		return QOS_BE;
	default:
		return QOS_UNMANAGED;
	}
}

static int add_member(struct inventory *inv, uint64_t cgid, const struct pol_unit *u)
{
	if (array_grow((void **)&inv->members, &inv->cap_members, inv->n_members,
		       sizeof(*inv->members)))
		return -ENOMEM;
	inv->members[inv->n_members++] = (struct inventory_member){cgid, u->id, u->cls};
	return 0;
}

static int add_unit(struct inventory *inv, uint64_t id, const char *rel, enum qos_class cls,
		    const char *pod_uid, int32_t priority)
{
	struct pol_unit *u;

	if (array_grow((void **)&inv->units, &inv->cap_units, inv->n_units, sizeof(*inv->units)))
		return -ENOMEM;
	u = &inv->units[inv->n_units++];
	memset(u, 0, sizeof(*u));
	u->id = id;
	u->cls = cls;
	snprintf(u->path, sizeof(u->path), "%s", rel);
	snprintf(u->pod_uid, sizeof(u->pod_uid), "%s", pod_uid);
	u->priority = priority;
	return 0;
}

/*
 * Depth-first over the cpu hierarchy below `rel`. `unit` is the index of
 * the unit this directory belongs to, or -1 above every unit. Directories
 * vanish under the walk all the time: those are skipped.
 */
static int walk(struct inventory *inv, const char *rel, long unit, int depth)
{
	char path[PATH_MAX], child[POL_PATH_MAX], pod_uid[40];
	struct dirent *de;
	uint64_t id;
	DIR *d;
	int err = 0;

	if (cgroup_id_of(inv->o->fs, rel, &id))
		return 0;
	if (unit < 0 && depth > 0) {
		int32_t prio;
		enum qos_class cls = classify(inv->o, rel, pod_uid, sizeof(pod_uid), &prio);

		if (cls != QOS_UNMANAGED) {
			err = add_unit(inv, id, rel, cls, pod_uid, prio);
			unit = (long)inv->n_units - 1;
		}
	}
	if (!err && unit >= 0)
		err = add_member(inv, id, &inv->units[unit]);
	if (err)
		return err;
	if (cg_path(inv->o->ctrls, CTRL_CPU, rel, "", path, sizeof(path)))
		return 0;
	d = opendir(path);
	if (!d)
		return 0;
	while (!err && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (snprintf(child, sizeof(child), "%s%s%s", rel, rel[0] ? "/" : "", de->d_name) >=
		    (int)sizeof(child)) {
			log_warn("agent: cgroup path too long, not managed: %s/%s", rel,
				 de->d_name);
			continue;
		}
		err = walk(inv, child, unit, depth + 1);
	}
	closedir(d);
	return err;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_unit(const void *a, const void *b)
{
	return cmp_u64(((const struct pol_unit *)a)->id, ((const struct pol_unit *)b)->id);
}

static int cmp_member(const void *a, const void *b)
{
	return cmp_u64(((const struct inventory_member *)a)->cgid,
		       ((const struct inventory_member *)b)->cgid);
}

static int cmp_prev(const void *a, const void *b)
{
	return cmp_u64(((const struct unit_prev *)a)->id, ((const struct unit_prev *)b)->id);
}

const struct inventory_member *inventory_member_of(const struct inventory *inv, uint64_t cgid)
{
	struct inventory_member key = {.cgid = cgid};

	return inv->n_members ? bsearch(&key, inv->members, inv->n_members, sizeof(key), cmp_member)
			      : NULL;
}

/* A counter that went down was re-created: it counts from zero. */
static uint64_t since(uint64_t now, uint64_t before)
{
	return now >= before ? now - before : now;
}

/* Settings and kernel counters of one unit; -ENOENT when it vanished meanwhile. */
static int read_unit(struct inventory *inv, struct pol_unit *u, double interval_s)
{
	const struct cgroup_ctrls *c = inv->o->ctrls;
	struct unit_prev *cur, key = {.id = u->id}, *prev;
	struct cg_mem mem;
	int64_t original;
	int err;

	err = cg_read_quota(c, u->path, &u->quota_us, &u->period_us);
	if (err == -ENOENT)
		return err;
	if (err) {
		u->quota_us = -1;
		u->period_us = 100000;
	}
	if (cg_read_burst(c, u->path, &u->burst_us))
		u->burst_us = -1;
	if (cg_read_idle(c, u->path, &u->idle))
		u->idle = -1;
	if (cg_read_cpus(c, u->path, u->cpus, sizeof(u->cpus)))
		u->cpus[0] = '\0';
	if (cg_read_request_cpus(c, u->path, &u->request_cpus))
		u->request_cpus = 0;
	/* The limit is the owner's: a quota qoslet raised or lowered is not one. */
	original = u->quota_us;
	if (inv->o->original_quota)
		inv->o->original_quota(inv->o->ctx, u->path, &original);
	u->limit_cpus = original >= 0 && u->period_us ? (double)original / u->period_us : -1;
	if (!cg_read_mem(c, u->path, &mem)) {
		u->mem_anon_unevict = mem.anon + mem.unevictable;
		u->mem_used = since(mem.usage, mem.inactive_file);
	}

	if (array_grow((void **)&inv->cur, &inv->cap_cur, inv->n_cur, sizeof(*inv->cur)))
		return -ENOMEM;
	cur = &inv->cur[inv->n_cur++];
	*cur = (struct unit_prev){.id = u->id};
	/* A counter that cannot be read stays 0: the unit then shows no use. */
	cg_read_usage_ns(c, u->path, &cur->usage_ns);
	cg_read_throttle(c, u->path, &cur->nr_periods, &cur->nr_throttled);
	/* bsearch() must not see the NULL of a first read, even for 0 elements */
	prev = inv->n_prev ? bsearch(&key, inv->prev, inv->n_prev, sizeof(key), cmp_prev) : NULL;
	/*
	 * cpu.idle=1 makes the kernel report the idle weight (3 shares) instead
	 * of the owner's: keep the request read before qoslet set it.
	 */
	if (u->idle == 1 && prev)
		u->request_cpus = prev->request_cpus;
	cur->request_cpus = u->request_cpus;
	if (prev && interval_s > 0) {
		u->cpu_used = since(cur->usage_ns, prev->usage_ns) / 1e9 / interval_s;
		u->nr_periods = since(cur->nr_periods, prev->nr_periods);
		u->nr_throttled = since(cur->nr_throttled, prev->nr_throttled);
	}
	return 0;
}

/* Adds the probes' per-cgroup numbers of the interval to the unit each cgroup belongs to. */
static int fold_probes(struct inventory *inv, const struct snapshot *delta, struct pol_input *in)
{
	/* cycles and instructions summed over the unit's cgroups, then divided */
	double *num = calloc(in->n_units ? in->n_units : 1, 2 * sizeof(double)), *den;

	if (!num)
		return -ENOMEM;
	den = num + in->n_units;
	for (size_t i = 0; i < delta->n_cgroups; i++) {
		const struct cg_sample *cg = &delta->cgroups[i];
		const struct inventory_member *m = inventory_member_of(inv, cg->id);
		struct pol_unit *u = m ? (struct pol_unit *)pol_input_find(in, m->unit) : NULL;

		if (!u)
			continue;
		if (cg->parts & CG_RQ)
			hist_add(&u->rq, &cg->rq);
		/* Only real cycles/instructions make a CPI: the software stand-ins are not one. */
		if ((cg->parts & CG_CPU) && delta->cpi_hardware) {
			num[u - in->units] += (double)cg->cpu.numerator;
			den[u - in->units] += (double)cg->cpu.denominator;
		}
	}
	for (size_t i = 0; i < in->n_units; i++)
		if (den[i] > 0) {
			in->units[i].cpi = num[i] / den[i];
			in->units[i].has_cpi = true;
		}
	free(num);
	return 0;
}

static uint64_t blame_party(const struct inventory *inv, uint64_t cgid)
{
	const struct inventory_member *m;

	if (cgid == QOSLET_CULPRIT_IDLE)
		return POL_CULPRIT_IDLE;
	m = inventory_member_of(inv, cgid);
	return m ? m->unit : POL_CULPRIT_OTHER;
}

static int cmp_blame(const void *a, const void *b)
{
	const struct pol_blame *x = a, *y = b;

	if (x->victim != y->victim)
		return cmp_u64(x->victim, y->victim);
	return cmp_u64(x->culprit, y->culprit);
}

/* Who delayed whom, between units: waits of cgroups outside every unit are left out. */
static int fold_blame(struct inventory *inv, const struct snapshot *delta, struct pol_input *in)
{
	size_t n = 0;

	in->blame = calloc(delta->n_blame ? delta->n_blame : 1, sizeof(*in->blame));
	if (!in->blame)
		return -ENOMEM;
	for (size_t i = 0; i < delta->n_blame; i++) {
		const struct blame_sample *b = &delta->blame[i];
		const struct inventory_member *v = inventory_member_of(inv, b->victim);

		if (!v || !b->wait_ns)
			continue;
		in->blame[n++] =
			(struct pol_blame){v->unit, blame_party(inv, b->culprit), b->wait_ns};
	}
	qsort(in->blame, n, sizeof(*in->blame), cmp_blame);
	/* Several cgroups of one unit make one pair. */
	in->n_blame = 0;
	for (size_t i = 0; i < n; i++) {
		struct pol_blame *last = in->n_blame ? &in->blame[in->n_blame - 1] : NULL;

		if (last && !cmp_blame(last, &in->blame[i]))
			last->wait_ns += in->blame[i].wait_ns;
		else
			in->blame[in->n_blame++] = in->blame[i];
	}
	return 0;
}

int inventory_read(struct inventory *inv, const struct snapshot *delta, unsigned int parts,
		   uint64_t ts_ns, uint64_t mono_ns, struct pol_input *out)
{
	const char *subtree = inv->o->subtree;
	struct unit_prev *swap;
	size_t n = 0;
	int err;

	pol_input_free(out);
	memset(out, 0, sizeof(*out));
	out->ts_ns = ts_ns;
	out->interval_s = inv->prev_mono_ns ? (mono_ns - inv->prev_mono_ns) / 1e9 : 0;
	inv->n_units = inv->n_members = inv->n_cur = 0;
	err = walk(inv, subtree, -1, 0);
	if (!err && !inv->n_members && cgroup_id_of(inv->o->fs, subtree, &(uint64_t){0}))
		err = -ENOENT;
	if (!err)
		err = node_read(inv->node, inv->o->ctrls, subtree, out->interval_s, out);
	if (err)
		return err;
	/* An empty subtree leaves the arrays NULL, which the libc calls must not see. */
	if (inv->n_members)
		qsort(inv->members, inv->n_members, sizeof(*inv->members), cmp_member);
	for (size_t i = 0; i < inv->n_units; i++) {
		inv->units[i].has_rq = parts & CG_RQ;
		err = read_unit(inv, &inv->units[i], out->interval_s);
		if (err == -ENOMEM)
			return err;
		if (!err) /* a unit that vanished during the walk is left out */
			inv->units[n++] = inv->units[i];
	}
	out->units = malloc((n ? n : 1) * sizeof(*out->units));
	if (!out->units)
		return -ENOMEM;
	if (n)
		memcpy(out->units, inv->units, n * sizeof(*out->units));
	out->n_units = n;
	qsort(out->units, n, sizeof(*out->units), cmp_unit);
	if (delta)
		err = fold_probes(inv, delta, out);
	if (!err && delta)
		err = fold_blame(inv, delta, out);
	if (inv->n_cur)
		qsort(inv->cur, inv->n_cur, sizeof(*inv->cur), cmp_prev);
	swap = inv->prev;
	inv->prev = inv->cur;
	inv->cur = swap;
	n = inv->cap_prev;
	inv->cap_prev = inv->cap_cur;
	inv->cap_cur = n;
	inv->n_prev = inv->n_cur;
	inv->prev_mono_ns = mono_ns;
	return err;
}
