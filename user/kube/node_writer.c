// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kube/node_writer.h"

#include <stdio.h>
#include <string.h>

#define SEC 1000000000ull
/* A refused condition (RBAC, a webhook) is tried again this long after, not every second. */
#define COND_REFUSED_RETRY_NS (300 * SEC)

void node_writer_init(struct node_writer *w, const struct kubernetes_config *cfg)
{
	memset(w, 0, sizeof(*w));
	w->condition = cfg->node_condition;
	w->batch = cfg->batch_status;
	w->min_ns = (uint64_t)(cfg->batch_min_interval_s * SEC);
}

void node_writer_seed(struct node_writer *w, const struct kube_node_info *info, uint64_t now)
{
	w->batch_at = info->has_batch ? now : 0;
	w->cond_known = info->has_condition;
	w->cond = info->condition;
	w->transition_ns = info->transition_ns;
	w->batch_known = info->has_batch;
	w->batch_done[0] = info->cpu_milli;
	w->batch_done[1] = info->mem_bytes;
}

/* Called when the wanted values differ from the API's. */
static bool batch_due(const struct node_writer *w, const uint64_t want[2], uint64_t now)
{
	bool drop = want[0] < w->batch_done[0] || want[1] < w->batch_done[1];

	/* a drop is the safe direction: no rate limit holds it back (but a refusal's) */
	return !w->batch_known || (drop && !w->batch_refused) || now - w->batch_at >= w->min_ns;
}

static void set_condition(struct node_writer *w, bool on, const char *status, const char *reason,
			  const char *message, uint64_t real_ns)
{
	if (!w->cond_known || on != w->cond)
		w->transition_ns = real_ns;
	snprintf(w->message, sizeof(w->message), "%s", message);
	w->c = (struct kube_condition){.type = KUBE_CONDITION_TYPE,
				       .status = status,
				       .reason = reason,
				       .message = w->message,
				       .heartbeat_ns = real_ns,
				       .transition_ns =
					       w->transition_ns ? w->transition_ns : real_ns};
}

bool node_writer_due(struct node_writer *w, const struct node_want *want, uint64_t now,
		     uint64_t real_ns, struct kube_node_status *st)
{
	bool cond_differs =
		w->condition && want->cond_said && (!w->cond_known || want->cond != w->cond);
	bool batch_differs = w->batch && want->batch &&
			     (!w->batch_known || want->batch_value[0] != w->batch_done[0] ||
			      want->batch_value[1] != w->batch_done[1]);
	bool cond_due =
		cond_differs && (!w->cond_refused || now - w->cond_at >= COND_REFUSED_RETRY_NS);

	memset(st, 0, sizeof(*st));
	/* the first patch waits for the condition (a tick at most): one write, not two */
	if (w->condition && !want->cond_said)
		return false;
	if (!cond_due && !(batch_differs && batch_due(w, want->batch_value, now)))
		return false;
	if (cond_differs) {
		set_condition(w, want->cond, want->cond ? "True" : "False",
			      want->cond ? "InterferenceDetected" : "NoInterference", want->message,
			      real_ns);
		st->cond = &w->c;
	}
	if (batch_differs) {
		st->batch = true;
		st->cpu_milli = want->batch_value[0];
		st->mem_bytes = want->batch_value[1];
	}
	return true;
}

void node_writer_done(struct node_writer *w, const struct kube_node_status *st, int rc,
		      bool transient, uint64_t now)
{
	if (rc && transient)
		return; /* the caller backs off; the same patch then */
	if (st->cond) {
		w->cond_at = now;
		w->cond_refused = rc != 0;
		if (!rc) {
			w->cond_known = true;
			w->cond = !strcmp(st->cond->status, "True");
		}
	}
	if (st->batch) {
		w->batch_at = now;
		w->batch_refused = rc != 0;
		if (!rc) {
			w->batch_known = true;
			w->batch_done[0] = st->cpu_milli;
			w->batch_done[1] = st->mem_bytes;
		}
	}
}

bool node_writer_stop(struct node_writer *w, uint64_t real_ns, struct kube_node_status *st)
{
	memset(st, 0, sizeof(*st));
	/* Zero is safer than stale: a scheduler would keep placing BE pods on a node nobody
	 * watches */
	if (w->batch && w->batch_known && (w->batch_done[0] || w->batch_done[1]))
		st->batch = true;
	/* With no heartbeat a True left behind would stand for good */
	if (w->condition && w->cond_known && w->cond) {
		set_condition(w, false, "Unknown", "AgentStopped",
			      "qoslet stopped: interference on this node is not watched", real_ns);
		w->transition_ns = real_ns;
		w->c.transition_ns = real_ns;
		st->cond = &w->c;
	}
	return st->batch || st->cond;
}
