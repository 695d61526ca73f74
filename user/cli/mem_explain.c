// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "cli/mem_explain.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/fold.h"
#include "grow.h"
#include "log.h"
#include "policy/cause.h"

bool mem_explain_active(const struct cg_sample *cg)
{
	return (cg->parts & CG_MEMSTALL) &&
	       (cg->mem.direct.count || cg->mem.memcg.count || cg->mem.oom_kills ||
		cg->mem.stall.count || cg->mem.iowait.count || cg->mem.io_bytes);
}

/* Every active cgroup is a unit of its own: no party outside the units to name. */
static int no_name(void *ctx, uint64_t cgid, struct pol_outside *o)
{
	(void)ctx;
	(void)cgid;
	(void)o;
	return -ENOENT;
}

static struct mem_explain_prev *prev_find(struct mem_explain *x, uint64_t id)
{
	size_t i = pol_lower_bound(x->prev, x->n_prev, sizeof(*x->prev),
				   offsetof(struct mem_explain_prev, id), id);

	return i < x->n_prev && x->prev[i].id == id ? &x->prev[i] : NULL;
}

/* A counter's rise since the last interval; 0 when that one did not read it. */
static uint64_t rise(bool had, uint64_t before, uint64_t now)
{
	return had && now >= before ? now - before : 0;
}

/*
 * The unit's own limit hits and refaults since the last interval, as the
 * collector reads a unit's (v1 memory.failcnt, v2 memory.events.local;
 * memory.stat's workingset refaults). The entries of cgroups not active
 * this interval are dropped: a rise is taken only over one interval.
 */
static int read_counters(struct mem_explain *x, struct pol_input *in)
{
	struct mem_explain_prev *now = calloc(in->n_units + 1, sizeof(*now));
	const char *events = cg_file_name(CG_FILE_MEM_EVENTS, x->ctrls.v2[CTRL_MEMORY]);

	if (!now)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_units; i++) {
		struct pol_unit *u = &in->units[i];
		const struct mem_explain_prev *p = prev_find(x, u->id);
		bool fresh = p && p->seq + 1 == x->seq;
		struct mem_explain_prev *n = &now[i];
		struct cg_mem mem;
		char text[512];

		n->id = u->id;
		n->seq = x->seq;
		if (x->ctrls_err || !u->path[0])
			continue;
		n->has_hits = !cg_read_file(&x->ctrls, CTRL_MEMORY, u->path, events, text,
					    sizeof(text)) &&
			      !cg_mem_events_parse(&x->ctrls, text, &n->hits);
		n->has_refaults = !cg_read_mem(&x->ctrls, u->path, &mem);
		n->refaults = n->has_refaults ? mem.refaults : 0;
		u->ms.limit_hits =
			rise(fresh && p->has_hits && n->has_hits, p ? p->hits : 0, n->hits);
		u->ms.refaults = rise(fresh && p->has_refaults && n->has_refaults,
				      p ? p->refaults : 0, n->refaults);
	}
	free(x->prev);
	x->prev = now;
	x->n_prev = in->n_units;
	return 0;
}

/* The controllers' mounts, found once; a node without them is said once. */
static void find_ctrls(struct mem_explain *x)
{
	if (x->ctrls_tried)
		return;
	x->ctrls_tried = true;
	x->ctrls_err = cgroup_ctrls_detect(&x->ctrls, "/proc/self/mountinfo");
	if (!x->ctrls_err && !x->ctrls.root[CTRL_MEMORY][0])
		x->ctrls_err = -ENOENT;
	if (x->ctrls_err)
		log_warn("no memory controller found (%s): limit hits and refaults are not "
			 "read, so no culprit is an ancestor or its own limit",
			 strerror(-x->ctrls_err));
}

/* The interval as the policy's input: one unit per active cgroup, sorted by id. */
static int build_input(struct view *v, const struct snapshot *delta, struct pol_input *in,
		       struct collect_member **members)
{
	char buf[PATH_MAX + 2];

	in->units = calloc(delta->n_cgroups + 1, sizeof(*in->units));
	*members = calloc(delta->n_cgroups + 1, sizeof(**members));
	if (!in->units || !*members)
		return -ENOMEM;
	in->ts_ns = delta->ts_ns;
	in->interval_s = (double)v->interval_ns / 1e9;
	/* delta->cgroups is sorted by id, so are the units and the members */
	for (size_t i = 0; i < delta->n_cgroups; i++) {
		const struct cg_sample *cg = &delta->cgroups[i];
		struct pol_unit *u = &in->units[in->n_units];
		const char *path;

		if (!mem_explain_active(cg))
			continue;
		u->id = cg->id;
		path = view_cgroup_path(v, cg->id, buf, sizeof(buf));
		/* a removed cgroup stays a party, with no files to read */
		if (path && path[0] == '/' && path[1])
			snprintf(u->path, sizeof(u->path), "%s", path + 1);
		(*members)[in->n_units] = (struct collect_member){cg->id, cg->id, QOS_UNMANAGED};
		in->n_units++;
	}
	return 0;
}

int mem_explain_update(struct mem_explain *x, struct view *v, const struct snapshot *delta)
{
	struct pol_input in = {0};
	struct collect_member *members = NULL;
	struct mem_stall_explained *mem = NULL, *io = NULL;
	int err;

	if (x->seq && delta->ts_ns == x->ts_ns)
		return 0;
	x->n = 0;
	x->seq++;
	x->ts_ns = delta->ts_ns;
	find_ctrls(x);
	err = build_input(v, delta, &in, &members);
	/* the probe's PSI inputs, also on v2, where the agent reads memory.pressure */
	if (!err)
		err = collect_fold_mem(members, in.n_units, delta, true, no_name, NULL, &in);
	if (!err)
		err = read_counters(x, &in);
	if (!err && !x->ctrls_err)
		err = mem_ancestors_read(&x->ancestors, &x->ctrls, &v->fs, "", &in);
	if (!err) {
		mem = calloc(in.n_units + 1, sizeof(*mem));
		io = calloc(in.n_units + 1, sizeof(*io));
		if (!mem || !io ||
		    array_reserve((void **)&x->v, &x->cap, in.n_units + 1, sizeof(*x->v)))
			err = -ENOMEM;
	}
	if (!err)
		err = mem_stall_explain(&in, false, mem) ?: mem_stall_explain(&in, true, io);
	for (size_t i = 0; !err && i < in.n_units; i++)
		x->v[i] = (struct mem_explain_cg){in.units[i].id, mem[i], io[i]};
	x->n = err ? 0 : in.n_units;
	free(mem);
	free(io);
	free(members);
	free(in.units);
	free(in.mem_ancestors);
	free(in.mem_outside);
	return err;
}

const struct mem_explain_cg *mem_explain_find(const struct mem_explain *x, uint64_t id)
{
	size_t i =
		pol_lower_bound(x->v, x->n, sizeof(*x->v), offsetof(struct mem_explain_cg, id), id);

	return i < x->n && x->v[i].id == id ? &x->v[i] : NULL;
}

/* The cgroup a party stands for: itself, the victim (self, own limit), the root (node). */
static int party_cgroup(struct view *v, uint64_t victim, const struct mem_stall_explained *e,
			uint64_t *id)
{
	switch (e->top.cause) {
	case CAUSE_SELF:
	case CAUSE_LIMIT:
		*id = victim;
		return 0;
	case CAUSE_NODE:
		return cgroup_id_of(&v->fs, "", id);
	default:
		*id = e->top.id;
		return 0;
	}
}

const char *mem_explain_culprit_name(struct view *v, const struct mem_stall_explained *e, char *buf,
				     size_t size)
{
	if (!e || !e->explained)
		return "-";
	switch (e->top.cause) {
	case CAUSE_SELF:
		return "itself";
	case CAUSE_LIMIT:
		return "own limit";
	case CAUSE_NODE:
		return "node";
	default:
		break;
	}
	return view_cgroup_path(v, e->top.id, buf, size) ?: "(removed)";
}

json_t *mem_explain_culprit_json(struct view *v, uint64_t victim,
				 const struct mem_stall_explained *e)
{
	uint64_t id = 0;
	json_t *o;

	if (!e || !e->explained)
		return json_null();
	o = view_cgroup_json(v, party_cgroup(v, victim, e, &id) ? 0 : id);
	json_object_update_new(o, json_pack("{s:s, s:f}", "cause",
					    interference_cause_name(e->top.cause), "share",
					    e->top.share));
	return o;
}

void mem_explain_free(struct mem_explain *x)
{
	mem_ancestors_free(&x->ancestors);
	free(x->prev);
	free(x->v);
	memset(x, 0, sizeof(*x));
}
