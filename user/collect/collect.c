// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "collect/collect.h"

#include <errno.h>
#include <fnmatch.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "kube_path.h"
#include "log.h"
#include "probes/probes.h"
#include "str.h"
#include "collect/exclusive_cpus.h"
#include "collect/pod_trust.h"
#include "collect/containers.h"
#include "collect/fold.h"
#include "collect/mem_ancestors.h"
#include "collect/node.h"
#include "collect/tree.h"
#include "collect/unit_files.h"

/* What the collector keeps about one unit from tick to tick, beside its pol_unit (unit_in). */
struct unit_state {
	struct unit_files files;
	uint64_t settings_ns; /* CLOCK_MONOTONIC of the last settings read; 0: due */
	uint64_t psi_ns;
	/*
	 * The kernel's cumulative counters at the previous tick, those the
	 * tick's deltas need (not the whole unit_counters: 344 bytes a unit).
	 */
	struct {
		uint64_t usage_ns, nr_periods, nr_throttled;
	} prev;
	bool have_prev;
	struct psi_sample psi; /* the last pressure read */
	bool has_psi;
	uint64_t mem_ns; /* the last memory read, for batch capacity's cadence */
	bool has_mem;
	uint64_t mem_used, mem_anon_unevict, mem_usage, mem_file; /* as last read */
	struct cg_sample total; /* the record's unit_totals entry, kept running */
	/* Memory interference: the cumulative counters of the last tick that read them. */
	struct {
		bool have_mem, have_hits, have_psi, have_io;
		uint64_t refaults, charged_pages, hits, io_bytes;
		uint64_t psi_mem_us, psi_io_us; /* "some" totals */
	} ms_prev;
	uint32_t refused; /* bit (1 << enum pod_refusal): the pod's metadata not taken as asked */
};

struct collector {
	const struct collect_opts *o;
	struct cg_tree *tree;
	struct node_reader *node;
	struct exclusive_cpus exclusive; /* the kubelet's pinned pods */
	bool classify;			 /* the classes' inputs changed */
	struct unit_state *units;	 /* sorted by id */
	/*
	 * Each unit's pol_unit, in units' order: identity and settings kept
	 * from tick to tick, each tick's measurements over the last one's.
	 * They are the record's units: a copy of them (1.4 KB a unit) was
	 * 0.7 MiB at 500 pods and a memcpy of it every tick. Only a tick on
	 * which some unit could not be read copies the others into out.
	 */
	struct pol_unit *unit_in;
	size_t n_units;
	struct container_set containers; /* with their own batch settings */
	struct collect_member *members;	 /* sorted by cgid */
	const char **member_paths;	 /* the tree's strings, in members' order */
	size_t n_members, cap_members, cap_paths;
	struct snapshot before; /* the probes' last cumulative reading */
	bool have_before;
	uint64_t prev_mono_ns;
	bool write_raced;    /* collector_write_raced since the last tick */
	uint64_t mem_hot_ns; /* the last tick an LS unit stalled (COLLECT_MEM_HOT_NS) */
	struct tick_record rec;
	struct mem_ancestors ancestors; /* the units' ancestors' memory limit hits */
	struct pol_unit *out;		/* rec.in.units when some unit could not be read */
	size_t cap_out;
	/*
	 * rec.unit_totals: pointers to the units' own totals, not copies (1.5
	 * KB a unit: 0.7 MiB at 500 pods, and a copy back every tick).
	 */
	struct cg_sample **totals;
	size_t cap_totals;
};

/*
 * A unit's measured fields: cpu_used up to io_limit, which read_settings
 * fills with the other settings. A field added after io_limit would not be
 * cleared between ticks: this stops the build instead.
 */
#define MEASURED_OFF offsetof(struct pol_unit, cpu_used)
#define MEASURED_LEN (offsetof(struct pol_unit, io_limit) - MEASURED_OFF)
_Static_assert(offsetof(struct pol_unit, io_limit) + sizeof(struct pol_io_limit) ==
		       sizeof(struct pol_unit),
	       "pol_unit: io_limit is the last field, the measured ones are before it");

struct collector *collector_new(const struct collect_opts *o)
{
	struct collector *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->o = o;
	c->node = node_reader_new();
	c->tree = cg_tree_new(o->fs, o->subtree);
	c->unit_in = calloc(1, sizeof(*c->unit_in)); /* rec.in.units is never NULL */
	if (!c->node || !c->tree || !c->unit_in) {
		collector_free(c);
		return NULL;
	}
	return c;
}

void collector_free(struct collector *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_units; i++)
		unit_files_close(&c->units[i].files);
	free(c->units);
	free(c->unit_in);
	container_set_free(&c->containers);
	free(c->members);
	free(c->member_paths);
	cg_tree_free(c->tree);
	node_reader_free(c->node);
	exclusive_cpus_free(&c->exclusive);
	snapshot_free(&c->before);
	free(c->rec.in.blame);
	free(c->rec.in.outside);
	free(c->rec.in.mem_ancestors);
	free(c->rec.in.mem_outside);
	mem_ancestors_free(&c->ancestors);
	free(c->out);
	free(c->totals);
	free(c);
}

int collect_detect_kubepods(const struct cgroup_ctrls *ctrls, char *rel, size_t size)
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

/* Whether every matcher the rule has matches the cgroup at rel (a pod's, when pod). */
static bool rule_matches(const struct class_rule *r, const char *rel, const struct kube_pod *pod)
{
	if (r->glob[0] && fnmatch(r->glob, rel, FNM_PATHNAME))
		return false;
	if ((r->ns[0] || r->label[0]) && !pod)
		return false;
	return (!r->ns[0] || !fnmatch(r->ns, pod->ns, 0)) &&
	       (!r->label[0] || kube_pod_has_label(pod, r->label));
}

/* The class of the config's first rule matching the unit; QOS_NR when none does. */
static enum qos_class rule_class(const struct collect_wants *w, const char *rel,
				 const struct kube_pod *pod)
{
	for (size_t i = 0; i < w->n_classes; i++)
		if (rule_matches(&w->classes[i], rel, pod))
			return w->classes[i].cls;
	return QOS_NR;
}

/*
 * The config's class rules first (the operator's word), then the pod's
 * koordinator.sh/qosClass label as far as the pod may claim it (pod_trust.h;
 * *refused says when it may not), then the kubelet's QoS tier. Pods that keep
 * the node running (kube_pod_protected()) are never BE but by a rule: what
 * the label or the tier would make BE is SYSTEM, left alone like the node's
 * own daemons; and with the API link on, a pod the list does not hold yet is
 * unmanaged until it does. A pod's uid, priority, memory request and batch
 * resources come with it whichever decided.
 */
static enum qos_class classify(const struct collect_opts *o, const char *rel, char *pod_uid,
			       size_t uid_size, int32_t *priority, uint64_t *request_mem,
			       struct pol_batch *batch, enum pod_refusal *refused)
{
	const struct kube_pod *pod = NULL;
	struct kube_ids ids;
	enum qos_class cls;
	bool is_pod = kube_path_parse(rel, &ids) && ids.part == KUBE_PART_POD;
	const char *why;
	enum pod_refusal ds_refused; /* evict_facts() reports it */

	pod_uid[0] = '\0';
	*refused = POD_REFUSE_NONE;
	*priority = 0;
	*request_mem = 0;
	memset(batch, 0, sizeof(*batch));
	if (is_pod) {
		snprintf(pod_uid, uid_size, "%s", ids.pod_uid);
		pod = o->pod ? o->pod(o->ctx, ids.pod_uid) : NULL;
		*priority = pod && pod->has_priority ? pod->priority : 0;
		*request_mem = pod ? pod->request_mem : 0;
		if (pod)
			*batch = (struct pol_batch){pod->batch_cpu_request, pod->batch_cpu_limit,
						    pod->batch_mem_request, pod->batch_mem_limit};
	}
	cls = rule_class(o->wants, rel, pod);
	if (cls != QOS_NR)
		return cls;
	if (!is_pod)
		return QOS_UNMANAGED;
	cls = pod_trust_class(pod, ids.qos, &o->wants->trust, refused);
	/* With the API link on, a pod not listed yet may be one of those: not BE until it is. */
	if (cls == QOS_BE && o->pod && !pod)
		return QOS_UNMANAGED;
	if (cls == QOS_BE && pod && pod_trust_daemonset(pod, &o->wants->trust, &ds_refused))
		why = "owned by a DaemonSet";
	else if (cls != QOS_BE || !pod || !kube_pod_protected(pod, &why))
		return cls;
	log_debug("agent: pod %s/%s is %s: SYSTEM, not BE", pod->ns, pod->name, why);
	return QOS_SYSTEM;
}

/*
 * What eviction must know of a pod beyond its class (model.h, enum
 * evict_guard): kept even when a class rule makes the pod BE, which is
 * where the guard matters. Zero for a cgroup that is not a listed pod.
 * The SLO controller's run-queue target rides along: a pod fact too (as
 * annotated: the policy applies the floor, so a replay can try another).
 * What the config does not let the pod's metadata decide sets a bit of
 * *refused.
 */
static void evict_facts(const struct collect_wants *w, const struct kube_pod *pod,
			struct pol_unit *u, uint32_t *refused)
{
	enum pod_refusal why, ds_why;
	bool opt_out = pod_trust_opt_out(pod, &w->trust, &why);
	bool daemonset = pod_trust_daemonset(pod, &w->trust, &ds_why);

	*refused |= why ? 1u << why : 0;
	*refused |= ds_why ? 1u << ds_why : 0;
	u->evict_guard = EVICT_GUARD_NONE;
	u->evict_priority = pod ? pod->evict_priority : 0;
	u->start_ns = pod ? pod->start_ns : 0;
	u->rq_target_us = pod ? pod->rq_target_us : 0;
	/* only LS units have a target to clamp; the SLO policy clamps it, this reports it */
	if (u->rq_target_us && qos_is_ls(u->cls) && u->rq_target_us < w->rq_target_floor_us)
		*refused |= 1u << POD_REFUSE_TARGET_FLOOR;
	if (!pod)
		return;
	u->evict_guard = opt_out			   ? EVICT_GUARD_OPT_OUT
			 : daemonset			   ? EVICT_GUARD_DAEMONSET
			 : pod->mirror			   ? EVICT_GUARD_MIRROR
			 : !strcmp(pod->ns, "kube-system") ? EVICT_GUARD_KUBE_SYSTEM
							   : EVICT_GUARD_NONE;
}

static bool is_slice(const char *name, size_t len)
{
	return len > 6 && !strncmp(name + len - 6, ".slice", 6);
}

/*
 * With collect_opts.system_units: whether the cgroup at rel, depth levels
 * below the subtree, is a SYSTEM unit. A slice's own tasks are few (systemd
 * keeps them in its children), so its children are the units.
 */
static bool system_unit(const char *rel, int depth)
{
	const char *name = strrchr(rel, '/'), *parent;

	name = name ? name + 1 : rel;
	if (depth == 1)
		return !is_slice(name, strlen(name));
	if (depth != 2)
		return false;
	for (parent = name - 1; parent > rel && parent[-1] != '/'; parent--)
		;
	return is_slice(parent, (size_t)(name - 1 - parent));
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_unit_id(const void *a, const void *b)
{
	return cmp_u64(((const struct pol_unit *)a)->id, ((const struct pol_unit *)b)->id);
}

/* A unit the walk found: its identity (settings not read yet), and the metadata refused. */
struct fresh_unit {
	struct pol_unit u; /* first: cmp_unit_id sorts these */
	uint32_t refused;
};

/* Sorts members and their paths together: by cgid. */
struct member_sort {
	struct collect_member m;
	const char *path;
};

static int cmp_member_sort(const void *a, const void *b)
{
	return cmp_u64(((const struct member_sort *)a)->m.cgid,
		       ((const struct member_sort *)b)->m.cgid);
}

/* The walk that finds units among the tree's directories (pre-order). */
struct rebuild {
	struct collector *c;
	struct fresh_unit *units; /* the new list, in walk order */
	size_t n_units, cap_units;
	struct member_sort *members;
	size_t n_members, cap_members;
	struct container_state *containers;
	size_t n_containers, cap_containers;
	long unit;	     /* index of the unit the walk is inside, or -1 */
	size_t unit_rel_len; /* strlen of that unit's path */
	int err;
};

static int visit(void *ctx, const struct cg_tree_dir *d)
{
	struct rebuild *r = ctx;
	struct fresh_unit *s;

	if (r->unit >= 0 && !cgroup_path_within(d->rel, r->units[r->unit].u.path))
		r->unit = -1;
	if (r->unit < 0 && d->depth > 0) {
		char uid[40];
		int32_t prio;
		uint64_t request_mem;
		struct pol_batch batch;
		enum pod_refusal label;
		enum qos_class cls = classify(r->c->o, d->rel, uid, sizeof(uid), &prio,
					      &request_mem, &batch, &label);

		if (cls == QOS_UNMANAGED && r->c->o->system_units && system_unit(d->rel, d->depth))
			cls = QOS_SYSTEM;

		if (cls != QOS_UNMANAGED) {
			if (strlen(d->rel) >= POL_PATH_MAX) {
				log_warn("agent: cgroup path too long, not managed: %s", d->rel);
				return 0;
			}
			if (array_grow((void **)&r->units, &r->cap_units, r->n_units,
				       sizeof(*r->units)))
				return -ENOMEM;
			s = &r->units[r->n_units];
			memset(s, 0, sizeof(*s));
			s->u.id = d->id;
			s->u.cls = cls;
			s->u.priority = prio;
			s->u.request_mem = request_mem;
			s->refused = label ? 1u << label : 0;
			evict_facts(r->c->o->wants,
				    uid[0] && r->c->o->pod ? r->c->o->pod(r->c->o->ctx, uid) : NULL,
				    &s->u, &s->refused);
			s->u.batch = batch;
			snprintf(s->u.path, sizeof(s->u.path), "%s", d->rel);
			snprintf(s->u.pod_uid, sizeof(s->u.pod_uid), "%s", uid);
			r->unit = (long)r->n_units++;
		}
	}
	if (r->unit < 0)
		return 0;
	if (d->depth > 0 && strcmp(d->rel, r->units[r->unit].u.path)) {
		const struct pol_unit *u = &r->units[r->unit].u;
		struct container_state t;

		if (container_target(d->rel, d->id, u,
				     r->c->o->pod && u->pod_uid[0]
					     ? r->c->o->pod(r->c->o->ctx, u->pod_uid)
					     : NULL,
				     &t)) {
			if (array_grow((void **)&r->containers, &r->cap_containers, r->n_containers,
				       sizeof(*r->containers)))
				return -ENOMEM;
			r->containers[r->n_containers++] = t;
		}
	}
	if (array_grow((void **)&r->members, &r->cap_members, r->n_members, sizeof(*r->members)))
		return -ENOMEM;
	r->members[r->n_members++] = (struct member_sort){
		{d->id, r->units[r->unit].u.id, r->units[r->unit].u.cls}, d->rel};
	return 0;
}

/*
 * Logs what of a pod's metadata the agent newly did not take as asked
 * (refusals it had before were said then): once per pod and change, not
 * every rebuild. The counts are collector_refusals().
 */
static void log_refusals(const struct collector *c, const struct pol_unit *u, uint32_t refused,
			 uint32_t before)
{
	uint32_t fresh = refused & ~before;
	const struct kube_pod *pod;
	char what[160];

	if (!fresh || !c->o->pod || !(pod = c->o->pod(c->o->ctx, u->pod_uid)))
		return;
	for (int r = 1; r < POD_REFUSE_NR; r++) {
		if (!(fresh & (1u << r)))
			continue;
		if (!strcmp(pod_refusal_input(r), "qos_label"))
			snprintf(what, sizeof(what), "label koordinator.sh/qosClass=%s",
				 pod->koord_qos);
		else if (r == POD_REFUSE_TARGET_FLOOR)
			snprintf(what, sizeof(what), "annotation qoslet.io/runq-p99-target-us=%u",
				 pod->rq_target_us);
		else
			snprintf(what, sizeof(what), "eviction opt-out");
		log_warn("agent: pod %s/%s: %s not taken as asked: %s (class %s)", pod->ns,
			 pod->name, what, pod_refusal_text(r), qos_class_name(u->cls));
	}
}

/*
 * The units and members anew from the tree. A unit seen before keeps what
 * the collector knows of it (open files, counters, totals); one gone
 * closes its files.
 */
static int rebuild(struct collector *c)
{
	struct rebuild r = {.c = c, .unit = -1};
	struct unit_state *units = NULL;
	struct pol_unit *unit_in = NULL;
	size_t i = 0;
	int err = cg_tree_foreach(c->tree, visit, &r);

	if (!err) {
		units = calloc(r.n_units + 1, sizeof(*units));
		unit_in = calloc(r.n_units + 1, sizeof(*unit_in));
		if (!units || !unit_in)
			err = -ENOMEM;
	}
	if (err) {
		free(units);
		free(unit_in);
		free(r.units);
		free(r.members);
		free(r.containers);
		return err;
	}
	container_set_replace(&c->containers, r.containers, r.n_containers, r.cap_containers);
	if (r.n_units)
		qsort(r.units, r.n_units, sizeof(*r.units), cmp_unit_id);
	for (size_t j = 0; j < r.n_units; j++) {
		const struct fresh_unit *f = &r.units[j];
		struct unit_state *now = &units[j];
		struct pol_unit *u = &unit_in[j];

		while (i < c->n_units && c->unit_in[i].id < f->u.id)
			unit_files_close(&c->units[i++].files);
		if (i < c->n_units && c->unit_in[i].id == f->u.id) {
			*now = c->units[i];
			*u = c->unit_in[i++];
			log_refusals(c, &f->u, f->refused, now->refused);
			now->refused = f->refused;
			/* the class, pod and priority may have changed; the settings have not */
			u->cls = f->u.cls;
			u->priority = f->u.priority;
			u->request_mem = f->u.request_mem;
			u->evict_guard = f->u.evict_guard;
			u->evict_priority = f->u.evict_priority;
			u->start_ns = f->u.start_ns;
			u->rq_target_us = f->u.rq_target_us;
			u->batch = f->u.batch;
			memcpy(u->pod_uid, f->u.pod_uid, sizeof(u->pod_uid));
			/* v1 can rename a cgroup: same id, new path, files to open anew */
			if (strcmp(u->path, f->u.path)) {
				memcpy(u->path, f->u.path, sizeof(u->path));
				unit_files_close(&now->files);
				now->settings_ns = 0;
			}
		} else {
			*u = f->u;
			now->refused = f->refused;
			unit_files_init(&now->files);
			log_refusals(c, u, now->refused, 0);
		}
	}
	while (i < c->n_units)
		unit_files_close(&c->units[i++].files);
	free(c->units);
	free(c->unit_in);
	free(r.units);
	c->units = units;
	c->unit_in = unit_in;
	c->n_units = r.n_units;

	if (r.n_members)
		qsort(r.members, r.n_members, sizeof(*r.members), cmp_member_sort);
	if (r.n_members > c->cap_members) {
		struct collect_member *m = realloc(c->members, r.n_members * sizeof(*m));
		const char **p = m ? realloc(c->member_paths, r.n_members * sizeof(*p)) : NULL;

		if (m)
			c->members = m;
		if (!p) {
			free(r.members);
			return -ENOMEM;
		}
		c->member_paths = p;
		c->cap_members = r.n_members;
	}
	for (size_t k = 0; k < r.n_members; k++) {
		c->members[k] = r.members[k].m;
		c->member_paths[k] = r.members[k].path;
	}
	c->n_members = r.n_members;
	free(r.members);
	return 0;
}

const struct collect_member *collector_member_of(const struct collector *c, uint64_t cgid)
{
	return collect_member_find(c->members, c->n_members, cgid);
}

const char *collector_path_of(const struct collector *c, uint64_t cgid)
{
	const struct collect_member *m = collector_member_of(c, cgid);

	return m ? c->member_paths[m - c->members] : NULL;
}

const struct collect_member *collector_members(const struct collector *c, size_t *n)
{
	*n = c->n_members;
	return c->members;
}

void collector_settings_changed(struct collector *c, uint64_t unit_id)
{
	struct pol_unit key = {.id = unit_id}, *u;

	u = c->n_units ? bsearch(&key, c->unit_in, c->n_units, sizeof(key), cmp_unit_id) : NULL;
	if (u)
		c->units[u - c->unit_in].settings_ns = 0;
	else
		container_set_changed(&c->containers, unit_id);
}

void collector_write_raced(struct collector *c)
{
	c->write_raced = true;
}

void collector_refusals(const struct collector *c, uint32_t counts[POD_REFUSE_NR])
{
	memset(counts, 0, POD_REFUSE_NR * sizeof(counts[0]));
	for (size_t i = 0; i < c->n_units; i++)
		for (int r = 1; r < POD_REFUSE_NR; r++)
			counts[r] += !!(c->units[i].refused & (1u << r));
}

void collector_reclassify(struct collector *c)
{
	c->classify = true;
}

int collector_tree_fd(const struct collector *c)
{
	return cg_tree_fd(c->tree);
}

int collector_tree_poll(struct collector *c, uint64_t mono_ns)
{
	int changed = cg_tree_sync(c->tree, mono_ns);

	/* The read's own sync finds nothing new now: it must still classify. */
	if (changed)
		c->classify = true;
	return changed > 0;
}

const struct tick_record *collector_record(const struct collector *c)
{
	return &c->rec;
}

/* A memory QoS knob's value, or `unset` when unreadable. */
static int64_t mem_knob(const struct cgroup_ctrls *ctrls, enum cg_knob k, const char *rel,
			int64_t unset)
{
	char text[64];
	int64_t v;

	if (cg_read_knob(ctrls, k, rel, text, sizeof(text)) || cg_knob_parse(ctrls, k, text, &v))
		return unset;
	return v;
}

/*
 * Memory QoS settings, only while memory QoS is on and memory is on v2: v1
 * has none of them (docs/memory-qos.md), and they are four more reads a unit.
 * No memory.high (there since 4.5): the memory controller is not enabled
 * for the unit, and memory QoS leaves it alone.
 */
static void read_mem_qos(const struct cgroup_ctrls *ctrls, struct pol_unit *u)
{
	u->mem_high = mem_knob(ctrls, CG_KNOB_MEM_HIGH, u->path, -2);
	u->has_mem_qos = ctrls->v2[CTRL_MEMORY] && u->mem_high != -2;
	if (!u->has_mem_qos)
		return;
	u->mem_min = mem_knob(ctrls, CG_KNOB_MEM_MIN, u->path, 0);
	u->mem_low = mem_knob(ctrls, CG_KNOB_MEM_LOW, u->path, 0);
}

/*
 * A BE unit's block I/O throttles (I/O suppression): on the disk its read
 * throttle names, else the write one's; -1 none. Unreadable: not read (0s).
 */
static void read_io_limit(const struct cgroup_ctrls *ctrls, struct pol_unit *u)
{
	struct pol_io_limit l = {.rbps = -1, .wbps = -1};
	char rtext[256], wtext[256];

	memset(&u->io_limit, 0, sizeof(u->io_limit));
	if (cg_read_knob(ctrls, CG_KNOB_IO_RBPS, u->path, rtext, sizeof(rtext)) ||
	    cg_read_knob(ctrls, CG_KNOB_IO_WBPS, u->path, wtext, sizeof(wtext)) ||
	    cg_io_knob_value(ctrls, CG_KNOB_IO_RBPS, rtext, &l.dev, &l.rbps) ||
	    cg_io_knob_value(ctrls, CG_KNOB_IO_WBPS, wtext, &l.dev, &l.wbps))
		return;
	/* no read rule: the write one's disk, and the read throttle there (none) */
	l.has = true;
	u->io_limit = l;
}

/*
 * The settings of a unit as its files hold them; -ENOENT when it vanished.
 * A BE unit's memory limit (v1) or memory.high (v2, with the rest of memory
 * QoS's) is read for memory suppression too.
 */
static int read_settings(const struct cgroup_ctrls *ctrls, struct unit_state *s, struct pol_unit *u,
			 const struct collect_wants *w)
{
	bool mem_sup = w->mem_suppress && u->cls == QOS_BE;
	bool mem_qos = w->memory_protection || (mem_sup && ctrls->v2[CTRL_MEMORY]);
	double request = u->request_cpus;
	char text[64];
	int err = cg_read_quota(ctrls, u->path, &u->quota_us, &u->period_us);

	if (err == -ENOENT)
		return err;
	if (err) {
		u->quota_us = -1;
		u->period_us = 100000;
	}
	if (cg_read_burst(ctrls, u->path, &u->burst_us))
		u->burst_us = -1;
	if (cg_read_idle(ctrls, u->path, &u->idle))
		u->idle = -1;
	if (cg_read_cpus(ctrls, u->path, u->cpus, sizeof(u->cpus)))
		u->cpus[0] = '\0';
	if (cg_read_knob(ctrls, CG_KNOB_WEIGHT, u->path, text, sizeof(text)) ||
	    cg_knob_parse(ctrls, CG_KNOB_WEIGHT, text, &u->weight))
		u->weight = -1;
	u->request_cpus = u->weight >= 0 ? cg_weight_request_cpus(ctrls, u->weight) : 0;
	/* Read only for a consumer: batch resources (a BE pod's limit), memory QoS and suppression.
	 */
	u->mem_max = -1;
	if ((mem_qos || mem_sup || (u->cls == QOS_BE && u->batch.mem_limit)) &&
	    cg_read_mem_limit(ctrls, u->path, &u->mem_max))
		u->mem_max = -1;
	if (mem_qos)
		read_mem_qos(ctrls, u);
	else
		u->has_mem_qos = false;
	if (w->io_suppress && u->cls == QOS_BE)
		read_io_limit(ctrls, u);
	else
		memset(&u->io_limit, 0, sizeof(u->io_limit));
	/*
	 * cpu.idle=1 makes the kernel report the idle weight (3 shares) instead
	 * of the owner's: keep the request read before qoslet set it.
	 */
	if (u->idle == 1 && s->settings_ns)
		u->request_cpus = request;
	/* A file the kernel lacked may have come with a module or a remount. */
	unit_files_retry_absent(&s->files);
	return 0;
}

/*
 * Units' memory is read while the node is within COLLECT_MEM_MARGIN of the
 * memory-eviction threshold: below that no eviction can start this tick.
 */
static bool unit_memory_wanted(const struct collect_wants *w, const struct pol_input *in)
{
	return w->evict_memory && in->mem_capacity &&
	       (double)in->mem_used / (double)in->mem_capacity >=
		       w->evict_memory_threshold - COLLECT_MEM_MARGIN;
}

/* A counter that went down was re-created: it counts from zero. */
static uint64_t since(uint64_t now, uint64_t before)
{
	return now >= before ? now - before : now;
}

/*
 * The unit's memory counters since the last tick that read them into
 * out->ms; on v2 (psi) its pressure files' "some" totals, which the
 * probe's PSI inputs stand in for on v1 (collect_fold_mem).
 */
static void mem_stall_read(struct unit_state *s, const struct unit_counters *now, bool psi,
			   struct pol_unit *out)
{
	struct pol_mem_stall *ms = &out->ms;
	uint64_t mem_us = now->psi.some[PSI_MEMORY].total_us,
		 io_us = now->psi.some[PSI_IO].total_us;

	memset(ms, 0, sizeof(*ms));
	/* deltas only between reads a tick apart: LS units are read every tick */
	if (now->has_mem && qos_is_ls(out->cls)) {
		if (s->ms_prev.have_mem) {
			ms->refaults = since(now->mem.refaults, s->ms_prev.refaults);
			ms->charged_pages = since(now->mem.charged_pages, s->ms_prev.charged_pages);
		}
		s->ms_prev.refaults = now->mem.refaults;
		s->ms_prev.charged_pages = now->mem.charged_pages;
	}
	s->ms_prev.have_mem = now->has_mem;
	if (now->has_mem_events) {
		if (s->ms_prev.have_hits)
			ms->limit_hits = since(now->mem_hits, s->ms_prev.hits);
		s->ms_prev.hits = now->mem_hits;
	}
	s->ms_prev.have_hits = now->has_mem_events;
	if (now->has_io) {
		if (s->ms_prev.have_io)
			ms->io_bytes = since(now->io_bytes, s->ms_prev.io_bytes);
		s->ms_prev.io_bytes = now->io_bytes;
	}
	s->ms_prev.have_io = now->has_io;
	if (!psi)
		return;
	if (now->has_psi && s->ms_prev.have_psi) {
		ms->has_stall = ms->has_io = true;
		ms->stall_ns = since(mem_us, s->ms_prev.psi_mem_us) * 1000;
		ms->io_ns = since(io_us, s->ms_prev.psi_io_us) * 1000;
	}
	s->ms_prev.psi_mem_us = mem_us;
	s->ms_prev.psi_io_us = io_us;
	s->ms_prev.have_psi = now->has_psi;
}

/* A BE unit's memory is wanted every tick now (COLLECT_MEM_HOT_NS says when). */
static bool mem_hot(const struct collector *c, const struct pol_unit *u, uint64_t mono_ns)
{
	return (c->mem_hot_ns && mono_ns - c->mem_hot_ns < COLLECT_MEM_HOT_NS) ||
	       (c->o->memory_held && c->o->memory_held(c->o->ctx, u->path));
}

/* Notes this tick when one of its LS units stalled on memory or I/O. */
static void note_ls_stall(struct collector *c, const struct pol_input *in, uint64_t mono_ns)
{
	double least = COLLECT_MEM_HOT_SHARE * in->interval_s * 1e9;

	for (size_t i = 0; i < in->n_units; i++) {
		const struct pol_unit *u = &in->units[i];

		if (qos_is_ls(u->cls) &&
		    ((double)u->ms.stall_ns >= least || (double)u->ms.io_ns >= least)) {
			c->mem_hot_ns = mono_ns ? mono_ns : 1;
			return;
		}
	}
}
/*
 * One unit's tick: settings when due, counters always, pressure when due.
 * Fills u (the unit's pol_unit) and its totals. -ENOENT when the unit
 * vanished meanwhile.
 */
static int read_unit(struct collector *c, struct unit_state *s, struct pol_unit *u,
		     uint64_t mono_ns, double interval_s, bool mem_near)
{
	const struct cgroup_ctrls *ctrls = c->o->ctrls;
	bool mem_int = c->o->wants->mem_interference;
	/* v2: an LS unit's memory stall is its memory.pressure, wanted every tick */
	bool psi_due = !s->psi_ns || mono_ns - s->psi_ns >= COLLECT_PSI_NS ||
		       (mem_int && ctrls->v2[CTRL_MEMORY] && qos_is_ls(u->cls));
	bool capacity = c->o->wants->capacity;
	bool mem_sup = c->o->wants->mem_suppress && u->cls == QOS_BE;
	struct unit_counters now;
	unsigned int want = 0;
	int64_t original;
	int err;

	if (!s->settings_ns || mono_ns - s->settings_ns >= COLLECT_SETTINGS_NS) {
		err = read_settings(ctrls, s, u, c->o->wants);
		if (err)
			return err;
		s->settings_ns = mono_ns ? mono_ns : 1;
	}
	/*
	 * Read only what someone uses. CFS counters move only under a quota
	 * (v2 reads cpu.stat for the CPU time anyway). A unit's memory orders
	 * memory eviction, which picks BE units once the node nears its
	 * threshold; v1's memory.stat is the dearest file to print. Batch
	 * capacity needs every unit's memory (LS usage, and the system's as
	 * the node's minus all units'), every COLLECT_CAPACITY_MEM_NS. Memory
	 * QoS sizes an unlimited BE unit's memory.high from its use; memory
	 * suppression as COLLECT_MEM_HOT_NS says.
	 */
	if (u->quota_us >= 0 || ctrls->v2[CTRL_CPU])
		want |= UW_THROTTLE;
	if (((mem_near || u->has_mem_qos || (mem_sup && mem_hot(c, u, mono_ns))) &&
	     u->cls == QOS_BE) ||
	    ((capacity || mem_sup) &&
	     (!s->mem_ns || mono_ns - s->mem_ns >= COLLECT_CAPACITY_MEM_NS)))
		want |= UW_MEM;
	if (psi_due)
		want |= UW_PSI;
	/*
	 * Memory interference: an LS unit's refaults and own limit's hits,
	 * every tick (a victim's own-limit share needs them). The culprits'
	 * evidence is the probe's reclaim time, which costs no file: the
	 * other units' memory.stat stays at its own cadence.
	 */
	if (mem_int && qos_is_ls(u->cls))
		want |= UW_MEM | UW_MEM_EVENTS;
	/* v1 blkio counts nothing without a throttle rule: the probe counts bios there */
	if (mem_int && ctrls->v2[CTRL_IO])
		want |= UW_IO;
	err = unit_files_read(&s->files, ctrls, u->path, want, &now);
	c->rec.cgroup_read_errors += now.errors;
	if (err)
		return err;
	if (psi_due) {
		s->psi_ns = mono_ns;
		s->has_psi = now.has_psi;
		s->psi = now.psi;
	}
	/* the last tick's measurements go: identity and settings stay */
	memset((char *)u + MEASURED_OFF, 0, MEASURED_LEN);
	/* The limit is the owner's: a quota qoslet raised or lowered is not one. */
	original = u->quota_us;
	if (c->o->original_quota)
		c->o->original_quota(c->o->ctx, u->path, &original);
	u->limit_cpus = original >= 0 && u->period_us ? (double)original / u->period_us : -1;
	if (now.has_mem) {
		s->mem_ns = mono_ns ? mono_ns : 1;
		s->has_mem = true;
		s->mem_anon_unevict = now.mem.anon + now.mem.unevictable;
		s->mem_used = since(now.mem.usage, now.mem.inactive_file);
		s->mem_usage = now.mem.usage;
		s->mem_file = now.mem.file;
	}
	/* Between capacity's or suppression's reads the last values stand; else only this tick's.
	 */
	if (now.has_mem || ((capacity || mem_sup) && s->has_mem)) {
		u->mem_anon_unevict = s->mem_anon_unevict;
		u->mem_used = s->mem_used;
		u->mem_usage = s->mem_usage;
		u->mem_file = s->mem_file;
	}
	/* A counter that cannot be read stays 0: the unit then shows no use. */
	if (s->have_prev && interval_s > 0) {
		u->cpu_used = since(now.usage_ns, s->prev.usage_ns) / 1e9 / interval_s;
		u->nr_periods = since(now.throttle.nr_periods, s->prev.nr_periods);
		u->nr_throttled = since(now.throttle.nr_throttled, s->prev.nr_throttled);
	}
	if (mem_int)
		mem_stall_read(s, &now, ctrls->v2[CTRL_MEMORY] && psi_due, u);
	s->prev.usage_ns = now.usage_ns;
	s->prev.nr_periods = now.throttle.nr_periods;
	s->prev.nr_throttled = now.throttle.nr_throttled;
	s->have_prev = true;
	s->total.id = u->id;
	s->total.parts &= ~(uint32_t)(CG_THROTTLE | CG_PSI);
	if (now.has_throttle) {
		s->total.throttle = now.throttle;
		s->total.parts |= CG_THROTTLE;
	}
	if (s->has_psi) {
		s->total.psi = s->psi;
		s->total.parts |= CG_PSI;
	}
	return 0;
}

/* What name_outside() needs: the collector, and the tick's clock for the name cache. */
struct namer_ctx {
	const struct collector *c;
	uint64_t mono_ns;
};

/*
 * The party behind an outside culprit: its path from the shared name cache
 * (a lookup of an unknown id walks the hierarchy, at most once a second),
 * cut to the depth that explains it (collect_outside_depth), that
 * cgroup's id (a stat of its directory when it is an ancestor: a few per
 * tick at most), and its class from the config's path rules: a rule may
 * call a system slice SYSTEM.
 */
static int name_outside(void *ctx, uint64_t cgid, struct pol_outside *o)
{
	const struct namer_ctx *n = ctx;
	const struct collect_opts *opts = n->c->o;
	const char *path = opts->names ? cgroup_names_lookup(opts->names, cgid, n->mono_ns) : NULL;
	enum qos_class cls;
	size_t len;

	if (!path)
		return -ENOENT;
	len = collect_outside_depth(path, opts->subtree);
	if (len >= sizeof(o->path))
		return -ENAMETOOLONG;
	memcpy(o->path, path, len);
	o->path[len] = '\0';
	o->id = cgid;
	if (path[len] && cgroup_id_of(opts->fs, o->path, &o->id))
		return -ENOENT;
	cls = rule_class(opts->wants, o->path, NULL); /* outside culprits are not pods we know */
	o->cls = cls == QOS_NR ? QOS_UNMANAGED : cls;
	return 0;
}

/*
 * The probes' interval: their cumulative reading now against the last one.
 * delta is left empty when there is no interval yet or the read failed.
 */
static bool read_probes(struct collector *c, struct snapshot *delta)
{
	struct snapshot now = {0};
	bool have_delta = false;
	int err;

	if (!c->o->probes)
		return false;
	probe_set_poll(c->o->probes);
	err = probe_set_read(c->o->probes, &now); /* frees what it read on failure */
	if (!err && c->have_before) {
		err = snapshot_delta(delta, &now, &c->before);
		have_delta = !err;
	}
	if (err) {
		log_warn("agent: probes unreadable this tick: %s", strerror(-err));
		c->rec.probe_read_failed = true;
		snapshot_free(&now);
		return false;
	}
	snapshot_free(&c->before);
	c->before = now;
	c->have_before = true;
	return have_delta;
}

/*
 * A unit could not be read (n of them were so far, all of them): the
 * record's units from here on are copies, without it.
 */
static int copy_out(struct collector *c, size_t n)
{
	int err = array_reserve((void **)&c->out, &c->cap_out, c->n_units, sizeof(*c->out));

	if (!err)
		memcpy(c->out, c->unit_in, n * sizeof(*c->out));
	return err;
}

/*
 * The kubelet's exclusive CPUs into the record, and each pod's share of
 * them. A failed reading keeps the last good one (exclusive_cpus.h): the
 * tick goes on.
 */
static void mark_pinned(struct collector *c, struct pol_input *in)
{
	const char *state = c->o->wants->cpu_manager_state;

	exclusive_cpus_update(&c->exclusive, state ? state : "");
	snprintf(in->exclusive_cpus, sizeof(in->exclusive_cpus), "%s", c->exclusive.list);
	for (size_t i = 0; i < in->n_units; i++)
		in->units[i].pinned_cpus =
			exclusive_cpus_of_pod(&c->exclusive, in->units[i].pod_uid);
}

const struct tick_record *collector_read(struct collector *c, uint64_t ts_ns, uint64_t mono_ns,
					 int *err)
{
	struct tick_record *rec = &c->rec;
	struct pol_input *in = &rec->in;
	struct snapshot delta = {0};
	bool have_delta, mem_near, copied = false;
	size_t n = 0;
	int changed = cg_tree_sync(c->tree, mono_ns);

	*err = changed < 0 ? changed : 0;
	if (!*err && (changed || c->classify))
		*err = rebuild(c);
	c->classify = false;
	if (*err) {
		/* The members' paths may point into directories the tree just freed. */
		c->n_members = 0;
		c->classify = *err != -ENOENT; /* build them again at the next read */
		return NULL;
	}
	free(in->blame);
	free(in->outside);
	free(in->mem_ancestors);
	free(in->mem_outside);
	memset(rec, 0, sizeof(*rec));
	in->ts_ns = ts_ns;
	in->interval_s = c->prev_mono_ns ? (mono_ns - c->prev_mono_ns) / 1e9 : 0;
	in->after_race = c->write_raced;
	c->write_raced = false;
	have_delta = read_probes(c, &delta);
	*err = node_read(c->node, c->o->ctrls, c->o->subtree, in->interval_s, in)
		       ?: array_reserve((void **)&c->totals, &c->cap_totals, c->n_units + 1,
					sizeof(*c->totals));
	mem_near = !*err && unit_memory_wanted(c->o->wants, in);
	for (size_t i = 0; !*err && i < c->n_units; i++) {
		struct unit_state *s = &c->units[i];
		struct pol_unit *u = &c->unit_in[i];

		if (read_unit(c, s, u, mono_ns, in->interval_s, mem_near)) {
			/* a unit that vanished since the last event is left out */
			if (!copied)
				*err = copy_out(c, n);
			copied = true;
			continue;
		}
		u->has_rq = have_delta && (c->o->parts & CG_RQ);
		if (copied)
			c->out[n] = *u;
		c->totals[n++] = &s->total;
	}
	if (!copied) { /* the last record's copies, if any, are not this one's */
		free(c->out);
		c->out = NULL;
		c->cap_out = 0;
	}
	in->units = copied ? c->out : c->unit_in;
	in->n_units = n;
	in->cgroup_reads_failed = rec->cgroup_read_errors > 0;
	if (!*err)
		mark_pinned(c, in);
	if (!*err)
		*err = container_set_read(&c->containers, c->o->ctrls, mono_ns, &in->containers,
					  &in->n_containers);
	if (!*err && have_delta) {
		struct namer_ctx names = {c, mono_ns};

		*err = collect_fold_probes(c->members, c->n_members, &delta, in, c->totals)
			       ?: collect_fold_blame(c->members, c->n_members, &delta, name_outside,
						     &names, in);
		if (!*err && c->o->wants->mem_interference)
			*err = collect_fold_mem(c->members, c->n_members, &delta,
						!c->o->ctrls->v2[CTRL_MEMORY], name_outside, &names,
						in);
	}
	if (!*err && c->o->wants->mem_interference)
		*err = mem_ancestors_read(&c->ancestors, c->o->ctrls, c->o->fs, c->o->subtree, in);
	if (!*err && in->interval_s > 0)
		note_ls_stall(c, in, mono_ns);
	snapshot_free(&delta);
	c->prev_mono_ns = mono_ns;
	if (*err)
		return NULL;
	rec->unit_totals = (const struct cg_sample *const *)c->totals;
	rec->probes = c->have_before ? &c->before : NULL;
	return rec;
}
