// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "decision/decision.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* RFC 3339 with milliseconds, UTC: what log pipelines parse without help. */
static void rfc3339(uint64_t ts_ns, char *buf, size_t size)
{
	time_t s = ts_ns / 1000000000ull;
	struct tm tm;
	size_t n;

	gmtime_r(&s, &tm);
	n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, size - n, ".%03uZ", (unsigned int)(ts_ns / 1000000 % 1000));
}

static json_t *unit_json(const char *path, uint64_t id, const char *pod_uid)
{
	json_t *o = json_object();

	json_object_set_new(o, "cgroup", json_sprintf("/%s", path));
	json_object_set_new(o, "cgroup_id", json_integer((json_int_t)id));
	if (pod_uid && pod_uid[0])
		json_object_set_new(o, "pod_uid", json_string(pod_uid));
	return o;
}

json_t *decision_to_json(const struct decision *d)
{
	const struct action *a = &d->act;
	json_t *o = json_object(), *ev = json_object();
	char ts[40];

	rfc3339(d->ts_ns, ts, sizeof(ts));
	json_object_set_new(o, "seq", json_integer((json_int_t)d->seq));
	json_object_set_new(o, "ts", json_string(ts));
	json_object_set_new(o, "ts_ns", json_integer((json_int_t)d->ts_ns));
	json_object_set_new(o, "kind", json_string(act_kind_name(a->kind)));
	json_object_set_new(o, "rule", json_string(rule_name(a->rule)));
	if (a->kind == ACT_CAPACITY) {
		/* the node's, not a cgroup's */
		json_object_set_new(o, "target", json_pack("{s:s}", "resource", a->resource));
	} else {
		json_object_set_new(o, "target", unit_json(a->path, a->id, d->pod_uid));
		json_object_set_new(o, "class", json_string(qos_class_name(a->cls)));
		/* only when true: a shared pod's record reads as it always did */
		if (a->pinned)
			json_object_set_new(o, "pinned", json_true());
	}
	if (a->related_id)
		json_object_set_new(o, "related", unit_json(a->related, a->related_id, NULL));
	if (act_cause_name(&a->cause))
		json_object_set_new(o, "cause", json_string(act_cause_name(&a->cause)));
	if (a->kind == ACT_CPUSET)
		json_object_set_new(o, "value", json_string(a->cpus));
	else if (a->kind != ACT_EVICT && a->kind != ACT_REPORT)
		json_object_set_new(o, "value", json_integer(a->value));
	json_object_set_new(o, "before", json_string(d->before));
	json_object_set_new(o, "after", json_string(d->after));
	for (size_t i = 0; i < a->n_ev; i++)
		json_object_set_new(ev, a->ev[i].name, json_real(a->ev[i].value));
	json_object_set_new(o, "evidence", ev);
	json_object_set_new(o, "outcome", json_string(decision_outcome_name(d->outcome)));
	if (d->err)
		json_object_set_new(o, "errno", json_integer(d->err));
	if (d->why[0])
		json_object_set_new(o, "why", json_string(d->why));
	return o;
}

int decision_log_init(struct decision_log *l, size_t cap, FILE *out)
{
	memset(l, 0, sizeof(*l));
	l->ring = calloc(cap, sizeof(*l->ring));
	if (!l->ring)
		return -ENOMEM;
	l->cap = cap;
	l->out = out;
	return 0;
}

void decision_log_free(struct decision_log *l)
{
	for (size_t i = 0; l->ring && i < l->cap; i++)
		free(l->ring[i]);
	free(l->ring);
	free(l->counts);
	memset(l, 0, sizeof(*l));
}

static int count(struct decision_log *l, const struct decision *d)
{
	struct decision_count *c;

	for (size_t i = 0; i < l->n_counts; i++) {
		c = &l->counts[i];
		if (c->kind == d->act.kind && c->rule == d->act.rule && c->outcome == d->outcome) {
			c->n++;
			return 0;
		}
	}
	c = realloc(l->counts, (l->n_counts + 1) * sizeof(*c));
	if (!c)
		return -ENOMEM;
	l->counts = c;
	l->counts[l->n_counts++] = (struct decision_count){d->act.kind, d->act.rule, d->outcome, 1};
	return 0;
}

int decision_log_add(struct decision_log *l, struct decision *d)
{
	json_t *o;
	char **slot;

	d->seq = ++l->seq;
	if (l->n == l->cap) {
		l->head = (l->head + 1) % l->cap;
		l->n--;
		l->dropped++;
	}
	slot = &l->ring[(l->head + l->n++) % l->cap];
	free(*slot);
	o = decision_to_json(d);
	/* 12 digits: evidence is for people, 0.65 should not print as 0.65000000000000002 */
	*slot = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
	json_decref(o);
	if (l->out && *slot) {
		fprintf(l->out, "%s\n", *slot);
		fflush(l->out);
	}
	return count(l, d);
}

const char *decision_log_recent(const struct decision_log *l, size_t i)
{
	if (i >= l->n)
		return NULL;
	return l->ring[(l->head + l->n - 1 - i) % l->cap];
}
