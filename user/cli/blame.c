// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* qoslet blame: for each cgroup that waited, which cgroups held the CPU. */
#include "cli/blame.h"

#include <stdlib.h>
#include <string.h>

#include "cli/view.h"

/* Text output lists this many culprits per victim and counts the rest. */
#define TEXT_CULPRITS 5

struct victim {
	uint64_t id;
	uint64_t wait_ns;
	const struct blame_sample *first; /* its pairs, contiguous in the snapshot */
	size_t n;
};

static int cmp_wait_desc(uint64_t a, uint64_t b)
{
	return a > b ? -1 : a < b;
}

static int cmp_victim(const void *a, const void *b)
{
	return cmp_wait_desc(((const struct victim *)a)->wait_ns,
			     ((const struct victim *)b)->wait_ns);
}

static int cmp_pair(const void *a, const void *b)
{
	return cmp_wait_desc(((const struct blame_sample *)a)->wait_ns,
			     ((const struct blame_sample *)b)->wait_ns);
}

/*
 * Groups the (victim, culprit) pairs, which the snapshot keeps sorted by
 * victim, into victims ranked by total wait, each with its culprits ranked.
 * Sorting reorders `pairs`, a private copy.
 */
static size_t group_victims(struct view *v, struct blame_sample *pairs, size_t n,
			    struct victim *out)
{
	size_t nv = 0;

	for (size_t i = 0; i < n;) {
		size_t j = i;
		uint64_t total = 0;

		while (j < n && pairs[j].victim == pairs[i].victim)
			total += pairs[j++].wait_ns;
		if (view_selected(v, pairs[i].victim)) {
			qsort(&pairs[i], j - i, sizeof(*pairs), cmp_pair);
			out[nv++] = (struct victim){pairs[i].victim, total, &pairs[i], j - i};
		}
		i = j;
	}
	qsort(out, nv, sizeof(*out), cmp_victim);
	return nv;
}

static json_t *victim_json(struct view *v, const struct victim *vi)
{
	json_t *culprits = json_array(), *o = view_cgroup_json(v, vi->id);

	for (size_t k = 0; k < vi->n; k++) {
		const struct blame_sample *b = &vi->first[k];
		json_t *c = view_cgroup_json(v, b->culprit);

		json_object_update_new(c, json_pack("{s:I, s:I}", "wait_ns", (json_int_t)b->wait_ns,
						    "count", (json_int_t)b->count));
		json_array_append_new(culprits, c);
	}
	json_object_update_new(o, json_pack("{s:I, s:o}", "wait_ns", (json_int_t)vi->wait_ns,
					    "culprits", culprits));
	return o;
}

static void victim_text(struct view *v, const struct victim *vi, FILE *out)
{
	char buf[PATH_MAX + 2], t[32];
	const char *path = view_cgroup_path(v, vi->id, buf, sizeof(buf));

	fprintf(out, "\n%s (id %llu) waited %s\n", path ? path : "(removed)",
		(unsigned long long)vi->id, view_fmt_ns((double)vi->wait_ns, t, sizeof(t)));
	for (size_t k = 0; k < vi->n && k < TEXT_CULPRITS; k++) {
		const struct blame_sample *b = &vi->first[k];

		path = view_cgroup_path(v, b->culprit, buf, sizeof(buf));
		fprintf(out, "  %5.1f%%  %12s  %8llu times  after %s\n",
			vi->wait_ns ? 100.0 * b->wait_ns / vi->wait_ns : 0,
			view_fmt_ns((double)b->wait_ns, t, sizeof(t)), (unsigned long long)b->count,
			path ? path : "(removed)");
	}
	if (vi->n > TEXT_CULPRITS)
		fprintf(out, "  ... and %zu more culprits (-j lists all)\n", vi->n - TEXT_CULPRITS);
}

static void render(struct view *v, const struct snapshot *delta, FILE *out)
{
	struct blame_sample *pairs = malloc((delta->n_blame + 1) * sizeof(*pairs));
	struct victim *victims = malloc((delta->n_blame + 1) * sizeof(*victims));
	json_t *doc = NULL, *list = NULL;
	size_t nv;

	if (!pairs || !victims) {
		fprintf(stderr, "qoslet blame: out of memory\n");
		goto out;
	}
	memcpy(pairs, delta->blame, delta->n_blame * sizeof(*pairs));
	nv = group_victims(v, pairs, delta->n_blame, victims);
	if (v->args.json) {
		doc = view_json_header(v, delta);
		list = json_array();
		for (size_t i = 0; i < nv; i++)
			json_array_append_new(list, victim_json(v, &victims[i]));
		json_object_set_new(doc, "victims", list);
		view_json_emit(doc, out);
	} else {
		char t[32];

		fprintf(out, "--- who delayed whom over %s\n",
			view_fmt_ns((double)v->interval_ns, t, sizeof(t)));
		for (size_t i = 0; i < nv; i++)
			victim_text(v, &victims[i], out);
		fflush(out);
	}
out:
	free(pairs);
	free(victims);
}

const struct view_ops blame_view = {
	.name = "blame",
	.summary = "which cgroups delayed which (run-queue wait by culprit)",
	.usage = "Usage: qoslet blame [-c CGROUP]... [-j] [INTERVAL [COUNT]]\n"
		 "\n"
		 "For each cgroup whose tasks waited for a CPU (the victim), the cgroups whose\n"
		 "tasks ran on that CPU just before the waiting task got it (the culprits),\n"
		 "ranked by the wait charged to them. (idle) means the CPU was idle: the wait\n"
		 "was wake-up latency, not contention. -c selects victims.\n",
	.examples = "  qoslet blame 5 1\n"
		    "      one 5 s report: for each cgroup that waited, who ran instead\n"
		    "  qoslet blame -c kubepods/pod1a2b3c4d-0000-4000-8000-000000000001 -j\n"
		    "      every second, as JSON, who delayed that pod's tasks\n",
	.probes = PROBE_BIT(PROBE_SCHED),
	.options = VIEW_OPT_WAIT_SOURCE,
	.render = render,
};
