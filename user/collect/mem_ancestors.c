// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "collect/mem_ancestors.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

static struct mem_ancestor *find(struct mem_ancestors *a, const char *path, size_t len)
{
	for (size_t i = 0; i < a->n; i++)
		if (strlen(a->v[i].path) == len && !strncmp(a->v[i].path, path, len))
			return &a->v[i];
	return NULL;
}

/* Marks (adding when new) every ancestor of path from the subtree down, the unit excluded. */
static int mark(struct mem_ancestors *a, const struct cgroup_fs *fs, const char *subtree,
		const char *path)
{
	size_t from = strlen(subtree), len = strlen(path);

	if (from && (strncmp(path, subtree, from) || path[from] != '/'))
		return 0; /* not below the subtree: no ancestor of ours */
	/* each prefix that ends before a '/' at or after the subtree's end */
	for (size_t end = from ? from : 1; end < len; end++) {
		struct mem_ancestor *m;
		uint64_t id;

		if (path[end] != '/' || end >= POL_PATH_MAX)
			continue;
		m = find(a, path, end);
		if (!m) {
			if (array_grow((void **)&a->v, &a->cap, a->n, sizeof(*a->v)))
				return -ENOMEM;
			m = &a->v[a->n];
			memset(m, 0, sizeof(*m));
			memcpy(m->path, path, end);
			if (cgroup_id_of(fs, m->path, &id))
				continue; /* gone meanwhile: looked for again next tick */
			m->id = id;
			a->n++;
		}
		m->seen = true;
	}
	return 0;
}

static int cmp_party(const void *x, const void *y)
{
	const struct pol_mem_party *a = x, *b = y;

	return a->name.id < b->name.id ? -1 : a->name.id > b->name.id;
}

int mem_ancestors_read(struct mem_ancestors *a, const struct cgroup_ctrls *ctrls,
		       const struct cgroup_fs *fs, const char *subtree, struct pol_input *in)
{
	const char *file = cg_file_name(CG_FILE_MEM_EVENTS, ctrls->v2[CTRL_MEMORY]);
	size_t k = 0;
	int err = 0;

	for (size_t i = 0; i < a->n; i++)
		a->v[i].seen = false;
	for (size_t i = 0; !err && i < in->n_units; i++)
		err = mark(a, fs, subtree, in->units[i].path);
	in->mem_ancestors = calloc(a->n + 1, sizeof(*in->mem_ancestors));
	if (err || !in->mem_ancestors)
		return -ENOMEM;
	for (size_t i = 0; i < a->n; i++) {
		struct mem_ancestor *m = &a->v[i];
		struct pol_mem_party *p = &in->mem_ancestors[in->n_mem_ancestors];
		char text[512];
		uint64_t now;

		if (!m->seen)
			continue;
		a->v[k++] = *m;
		m = &a->v[k - 1];
		if (cg_read_file(ctrls, CTRL_MEMORY, m->path, file, text, sizeof(text)) ||
		    cg_mem_events_parse(ctrls, text, &now)) {
			m->have_prev = false;
			continue;
		}
		p->name.id = m->id;
		snprintf(p->name.path, sizeof(p->name.path), "%s", m->path);
		p->limit_hits = m->have_prev && now >= m->prev ? now - m->prev : 0;
		in->n_mem_ancestors++;
		m->prev = now;
		m->have_prev = true;
	}
	a->n = k;
	if (in->n_mem_ancestors)
		qsort(in->mem_ancestors, in->n_mem_ancestors, sizeof(*in->mem_ancestors),
		      cmp_party);
	/* each unit: its ancestors' hits, and the one hit most */
	for (size_t i = 0; i < in->n_units; i++) {
		struct pol_unit *u = &in->units[i];
		uint64_t most = 0;

		for (size_t j = 0; j < in->n_mem_ancestors; j++) {
			const struct pol_mem_party *p = &in->mem_ancestors[j];
			size_t len = strlen(p->name.path);

			if (strncmp(u->path, p->name.path, len) || u->path[len] != '/')
				continue;
			u->ms.ancestor_hits += p->limit_hits;
			if (p->limit_hits > most) {
				most = p->limit_hits;
				u->ms.ancestor = p->name.id;
			}
		}
	}
	return 0;
}

void mem_ancestors_free(struct mem_ancestors *a)
{
	free(a->v);
	memset(a, 0, sizeof(*a));
}
