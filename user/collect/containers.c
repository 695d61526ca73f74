// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "collect/containers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup/knob.h"
#include "kube_path.h"
#include "str.h"
#include "collect/collect.h"

bool container_target(const char *rel, uint64_t id, const struct pol_unit *u,
		      const struct kube_pod *pod, struct container_state *t)
{
	struct kube_ids ids;

	/*
	 * The container's own cgroup only: never a runtime's monitor (CRI-O's
	 * conmon carries the container's id) nor a cgroup below the container
	 * (crun's "container" child), which would get the settings twice.
	 */
	if (u->cls != QOS_BE || !pod || !kube_path_parse(rel, &ids) ||
	    ids.part != KUBE_PART_CONTAINER || ids.nested)
		return false;
	for (size_t i = 0; i < pod->n_containers; i++) {
		const struct kube_container *k = &pod->containers[i];

		if (strcmp(k->id, ids.container_id))
			continue;
		if (!k->batch_cpu_request && !k->batch_cpu_limit && !k->batch_mem_limit)
			return false;
		memset(t, 0, sizeof(*t));
		if (str_copy(t->c.path, sizeof(t->c.path), rel))
			return false;
		t->c.id = id;
		t->c.unit = u->id;
		t->c.batch_cpu_request = k->batch_cpu_request;
		t->c.batch_cpu_limit = k->batch_cpu_limit;
		t->c.batch_mem_limit = k->batch_mem_limit;
		t->c.weight = -1;
		t->c.mem_max = -1;
		t->c.quota_us = -1;
		return true;
	}
	return false;
}

static int cmp_state(const void *a, const void *b)
{
	uint64_t x = ((const struct container_state *)a)->c.id;
	uint64_t y = ((const struct container_state *)b)->c.id;

	return x < y ? -1 : x > y;
}

static struct container_state *find(struct container_set *s, uint64_t id)
{
	struct container_state key = {.c.id = id};

	return s->n ? bsearch(&key, s->v, s->n, sizeof(key), cmp_state) : NULL;
}

void container_set_replace(struct container_set *s, struct container_state *v, size_t n, size_t cap)
{
	if (n)
		qsort(v, n, sizeof(*v), cmp_state);
	for (size_t i = 0; i < n; i++) {
		const struct container_state *old = find(s, v[i].c.id);

		/* v1 can rename a cgroup: same id, new path, read anew */
		if (old && !strcmp(old->c.path, v[i].c.path)) {
			v[i].c.weight = old->c.weight;
			v[i].c.mem_max = old->c.mem_max;
			v[i].c.quota_us = old->c.quota_us;
			v[i].c.period_us = old->c.period_us;
			v[i].settings_ns = old->settings_ns;
		}
	}
	free(s->v);
	s->v = v;
	s->n = n;
	s->cap = cap;
}

/* The weight, memory limit and quota as the files hold them; -ENOENT when the cgroup vanished. */
static int read_settings(const struct cgroup_ctrls *ctrls, struct pol_container *c)
{
	char text[64];
	int err = cg_read_knob(ctrls, CG_KNOB_WEIGHT, c->path, text, sizeof(text));

	if (err == -ENOENT)
		return err;
	if (err || cg_knob_parse(ctrls, CG_KNOB_WEIGHT, text, &c->weight))
		c->weight = -1;
	/* Like a unit's, read only when a batch limit will be compared with it. */
	if (!c->batch_mem_limit ||
	    cg_read_knob(ctrls, CG_KNOB_MEM_MAX, c->path, text, sizeof(text)) ||
	    cg_knob_parse(ctrls, CG_KNOB_MEM_MAX, text, &c->mem_max))
		c->mem_max = -1;
	/* A container's quota is written on v2 only (docs/batch-resources.md): read there. */
	if (!c->batch_cpu_limit || !ctrls->v2[CTRL_CPU] ||
	    cg_read_quota(ctrls, c->path, &c->quota_us, &c->period_us)) {
		c->quota_us = -1;
		c->period_us = 0;
	}
	return 0;
}

int container_set_read(struct container_set *s, const struct cgroup_ctrls *ctrls, uint64_t mono_ns,
		       struct pol_container **out, size_t *n)
{
	*n = 0;
	if (s->n > s->cap_out) {
		struct pol_container *o = realloc(s->out, s->n * sizeof(*o));

		if (!o)
			return -ENOMEM;
		s->out = o;
		s->cap_out = s->n;
	}
	for (size_t i = 0; i < s->n; i++) {
		struct container_state *t = &s->v[i];

		if (!t->settings_ns || mono_ns - t->settings_ns >= COLLECT_SETTINGS_NS) {
			if (read_settings(ctrls, &t->c))
				continue; /* vanished since the last event */
			t->settings_ns = mono_ns ? mono_ns : 1;
		}
		s->out[(*n)++] = t->c;
	}
	*out = s->out;
	return 0;
}

bool container_set_changed(struct container_set *s, uint64_t id)
{
	struct container_state *t = find(s, id);

	if (t)
		t->settings_ns = 0;
	return t != NULL;
}

void container_set_free(struct container_set *s)
{
	free(s->v);
	free(s->out);
	memset(s, 0, sizeof(*s));
}
