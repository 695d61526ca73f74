// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the agent's HTTP endpoint serves: the Prometheus text and the recent
 * decisions, rendered by the loop once per interval from its own state.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../clock.h"
#include "../log.h"
#include "../report/http.h"
#include "../report/metrics.h"
#include "agent_state.h"

/* The labels of a snapshot cgroup: its path, and its unit's pod and class. */
static int label_cgroup(struct agent *a, const struct cg_sample *s, struct metrics_cgroup *out,
			uint64_t now)
{
	const char *path = cgroup_names_lookup(a->names, s->id, now);
	const struct inventory_member *m;
	const struct pol_unit *u;

	if (!path)
		return -ENOENT; /* removed: its counters stop with it */
	/* copied: the next lookup may rewalk and free the name */
	out->path = strdup(path);
	if (!out->path)
		return -ENOMEM;
	out->s = s;
	m = inventory_member_of(a->inv, s->id);
	u = m ? pol_input_find(&a->in, m->unit) : NULL;
	out->pod_uid = u ? u->pod_uid : NULL;
	out->qos = u ? qos_class_name(u->cls) : NULL;
	return 0;
}

/* The recent decisions, oldest first, as one JSON array; NULL when out of memory. */
static char *decisions_json(const struct decision_log *l, size_t *len)
{
	json_t *arr = json_array();
	char *text;

	for (size_t i = l->n; arr && i-- > 0;)
		json_array_append_new(arr, decision_to_json(decision_log_recent(l, i)));
	text = arr ? json_dumps(arr, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12))
		   : NULL;
	json_decref(arr);
	*len = text ? strlen(text) : 0;
	return text;
}

/* Renders what the HTTP endpoint serves: the loop's thread is the only one reading agent state. */
void agent_publish(struct agent *a, uint64_t loop_ns)
{
	struct metrics_cgroup *cgs = calloc(a->before.n_cgroups + 1, sizeof(*cgs));
	struct metrics_probe probes[PROBE_NR] = {
		{.name = "sched"}}; /* no probe set: sched is off */
	struct metrics_input in = {.cgroups = cgs,
				   .log = &a->log,
				   .ticks = a->ticks,
				   .fast_ticks = a->fast_ticks,
				   .loop_ns = loop_ns,
				   .probes = probes,
				   .n_probes = 1};
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	char *metrics = NULL, *decisions = NULL;
	size_t metrics_len = 0, decisions_len = 0;
	int err = cgs ? 0 : -ENOMEM;

	for (size_t i = 0; !err && a->have_before && i < a->before.n_cgroups; i++) {
		const struct cg_sample *s = &a->before.cgroups[i];

		if (s->parts & CG_RQ) {
			err = label_cgroup(a, s, &cgs[in.n_cgroups], now);
			in.n_cgroups += !err;
			err = err == -ENOENT ? 0 : err;
		}
	}
	for (int id = 0; a->probes && id < PROBE_NR; id++) {
		struct probe_status st = probe_set_status(a->probes, id);

		probes[id] = (struct metrics_probe){st.name, st.on, st.on ? st.detail : NULL};
		in.n_probes = PROBE_NR;
	}
	if (!err)
		err = metrics_render(&in, &metrics, &metrics_len);
	if (!err && (!a->published || a->log.seq != a->published_seq)) {
		decisions = decisions_json(&a->log, &decisions_len);
		err = decisions ? 0 : -ENOMEM;
		a->published_seq = a->log.seq;
	}
	for (size_t i = 0; i < in.n_cgroups; i++)
		free((char *)cgs[i].path);
	free(cgs);
	if (err) {
		/* the endpoint keeps serving the last tick's texts */
		log_warn("agent: cannot render the metrics: %s", strerror(-err));
		free(metrics);
		return;
	}
	a->published = true;
	http_publish(a->http, metrics, metrics_len, decisions, decisions_len);
}
