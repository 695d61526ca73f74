// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "record/record.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "str.h"

/* uint64 values travel as JSON integers (signed 64-bit): ids above 2^63 wrap and come back. */
#define U64(v) json_integer((json_int_t)(v))

static json_t *hist_to_json(const struct lat_hist *h)
{
	json_t *slots = json_array();

	for (int i = 0; i < QOSLET_LAT_SLOTS; i++)
		json_array_append_new(slots, U64(h->slots[i]));
	return json_pack("{s:o, s:o, s:o}", "count", U64(h->count), "sum_ns", U64(h->sum_ns),
			 "slots", slots);
}

/* A pod's batch resources, each its own optional key ("batch_cpu_request", ...). */
#define BATCH_KEYS 4
static const char *const batch_keys[BATCH_KEYS] = {"batch_cpu_request", "batch_cpu_limit",
						   "batch_mem_request", "batch_mem_limit"};

/* The counters of struct pol_mem_stall, by their names in a record. */
#define MS_KEYS 8
static const char *const ms_keys[MS_KEYS] = {"reclaim_ns", "limit_hits", "ancestor_hits",
					     "ancestor",   "refaults",	 "charged_pages",
					     "io_bytes",   "io_dev"};

static uint64_t *ms_field(struct pol_mem_stall *m, size_t i)
{
	uint64_t *const f[MS_KEYS] = {&m->reclaim_ns, &m->limit_hits, &m->ancestor_hits,
				      &m->ancestor,   &m->refaults,   &m->charged_pages,
				      &m->io_bytes,   &m->io_dev};

	return f[i];
}

/* Only units with something to say: recordings without memory keep their shape. */
static bool mem_stall_recorded(const struct pol_mem_stall *m)
{
	bool any = m->has_stall || m->has_io;

	for (size_t i = 0; i < MS_KEYS; i++)
		any |= *ms_field((struct pol_mem_stall *)m, i) != 0;
	return any;
}

/* {"stall_ns": .., "io_ns": .. (each when measured), and the counters that are not 0} */
static json_t *mem_stall_to_json(const struct pol_mem_stall *m)
{
	json_t *o = json_object();

	if (m->has_stall)
		json_object_set_new(o, "stall_ns", U64(m->stall_ns));
	if (m->has_io)
		json_object_set_new(o, "io_ns", U64(m->io_ns));
	for (size_t i = 0; i < MS_KEYS; i++)
		if (*ms_field((struct pol_mem_stall *)m, i))
			json_object_set_new(o, ms_keys[i],
					    U64(*ms_field((struct pol_mem_stall *)m, i)));
	return o;
}

/* [[id, path, class, limit_hits, reclaim_ns, io_bytes], ...] */
static json_t *mem_parties_to_json(const struct pol_mem_party *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_pack("[o, s, s, o, o, o]", U64(v[i].name.id),
						   v[i].name.path, qos_class_name(v[i].name.cls),
						   U64(v[i].limit_hits), U64(v[i].reclaim_ns),
						   U64(v[i].io_bytes)));
	return a;
}

static json_t *unit_to_json(const struct pol_unit *u)
{
	const uint64_t batch[BATCH_KEYS] = {u->batch.cpu_request, u->batch.cpu_limit,
					    u->batch.mem_request, u->batch.mem_limit};
	json_t *o = json_pack("{s:o, s:s, s:s, s:s, s:i, s:o, s:o, s:o, s:i, s:s, s:f, s:f, s:f, "
			      "s:o, s:o, s:o, s:o}",
			      "id", U64(u->id), "path", u->path, "pod_uid", u->pod_uid, "class",
			      qos_class_name(u->cls), "priority", u->priority, "quota_us",
			      json_integer(u->quota_us), "period_us", U64(u->period_us), "burst_us",
			      json_integer(u->burst_us), "idle", u->idle, "cpus", u->cpus,
			      "request_cpus", u->request_cpus, "limit_cpus", u->limit_cpus,
			      "cpu_used", u->cpu_used, "nr_periods", U64(u->nr_periods),
			      "nr_throttled", U64(u->nr_throttled), "mem_anon_unevict",
			      U64(u->mem_anon_unevict), "mem_used", U64(u->mem_used));

	/* only when known: recordings without it replay as before */
	if (u->request_mem)
		json_object_set_new(o, "request_mem", U64(u->request_mem));
	if (u->evict_guard)
		json_object_set_new(o, "evict_guard",
				    json_string(evict_guard_name(u->evict_guard)));
	if (u->evict_priority)
		json_object_set_new(o, "evict_priority", json_integer(u->evict_priority));
	if (u->start_ns)
		json_object_set_new(o, "start_ns", U64(u->start_ns));
	if (u->rq_target_us)
		json_object_set_new(o, "rq_target_us", U64(u->rq_target_us));
	if (u->pinned_cpus)
		json_object_set_new(o, "pinned_cpus", U64(u->pinned_cpus));
	/* only what a policy reads (batch resources' weight): a few bytes per unit and tick */
	if (u->weight >= 0 && u->batch.cpu_request)
		json_object_set_new(o, "weight", json_integer(u->weight));
	if (u->mem_max >= 0)
		json_object_set_new(o, "mem_max", json_integer(u->mem_max));
	/* read for BE units under memory suppression only */
	if (u->mem_usage)
		json_object_set_new(o, "mem_usage", U64(u->mem_usage));
	if (u->mem_file)
		json_object_set_new(o, "mem_file", U64(u->mem_file));
	for (size_t i = 0; i < BATCH_KEYS; i++)
		if (batch[i])
			json_object_set_new(o, batch_keys[i], U64(batch[i]));
	if (u->has_mem_qos)
		json_object_set_new(o, "mem_qos",
				    json_pack("{s:I, s:I, s:I}", "min", (json_int_t)u->mem_min,
					      "low", (json_int_t)u->mem_low, "high",
					      (json_int_t)u->mem_high));
	if (u->has_rq)
		json_object_set_new(o, "rq", hist_to_json(&u->rq));
	if (u->has_cpi)
		json_object_set_new(o, "cpi", json_real(u->cpi));
	if (mem_stall_recorded(&u->ms))
		json_object_set_new(o, "ms", mem_stall_to_json(&u->ms));
	/* read for BE units under I/O suppression only: [disk, rbps, wbps] */
	if (u->io_limit.has)
		json_object_set_new(o, "io_limit",
				    json_pack("[o, I, I]", U64(u->io_limit.dev),
					      (json_int_t)u->io_limit.rbps,
					      (json_int_t)u->io_limit.wbps));
	return o;
}

/* A container with batch settings of its own: all its keys, always (few containers). */
static json_t *container_to_json(const struct pol_container *c)
{
	return json_pack("{s:o, s:o, s:s, s:o, s:o, s:o, s:I, s:I, s:I, s:o}", "id", U64(c->id),
			 "unit", U64(c->unit), "path", c->path, "batch_cpu_request",
			 U64(c->batch_cpu_request), "batch_cpu_limit", U64(c->batch_cpu_limit),
			 "batch_mem_limit", U64(c->batch_mem_limit), "weight",
			 (json_int_t)c->weight, "mem_max", (json_int_t)c->mem_max, "quota_us",
			 (json_int_t)c->quota_us, "period_us", U64(c->period_us));
}

json_t *record_input_to_json(const struct pol_input *in)
{
	json_t *units = json_array(), *blame = json_array(), *topo = json_array();
	json_t *outside = json_array();

	for (size_t i = 0; i < in->n_topo; i++)
		json_array_append_new(topo,
				      json_pack("[i, i, i, i]", in->topo[i].cpu, in->topo[i].core,
						in->topo[i].package, in->topo[i].node));
	for (size_t i = 0; i < in->n_units; i++)
		json_array_append_new(units, unit_to_json(&in->units[i]));
	for (size_t i = 0; i < in->n_blame; i++)
		json_array_append_new(blame, json_pack("[o, o, o, o]", U64(in->blame[i].victim),
						       U64(in->blame[i].culprit),
						       U64(in->blame[i].wait_ns),
						       U64(in->blame[i].count)));
	for (size_t i = 0; i < in->n_outside; i++)
		json_array_append_new(outside, json_pack("[o, s, s]", U64(in->outside[i].id),
							 in->outside[i].path,
							 qos_class_name(in->outside[i].cls)));
	json_t *o =
		json_pack("{s:o, s:f, s:b, s:b, s:f, s:s, s:o, s:o, s:o, s:f, s:o, s:o, s:o}",
			  "ts_ns", U64(in->ts_ns), "interval_s", in->interval_s, "cgroup_v2",
			  in->cgroup_v2, "has_cpu_idle", in->has_cpu_idle, "cpus", in->cpus,
			  "cpu_list", in->cpu_list, "topo", topo, "mem_capacity",
			  U64(in->mem_capacity), "mem_used", U64(in->mem_used), "node_cpu_used",
			  in->node_cpu_used, "units", units, "blame", blame, "outside", outside);

	/* only when true: recordings of v1 nodes keep their shape */
	if (o && in->mem_v2)
		json_object_set_new(o, "mem_v2", json_true());
	if (o && in->has_mem_reclaim)
		json_object_set_new(o, "has_mem_reclaim", json_true());
	if (o && in->has_io_limit)
		json_object_set_new(o, "has_io_limit", json_true());
	if (o && in->after_race)
		json_object_set_new(o, "after_race", json_true());
	/* only when some: recordings from nodes without pinned pods keep their shape */
	if (o && in->exclusive_cpus[0])
		json_object_set_new(o, "exclusive_cpus", json_string(in->exclusive_cpus));
	/* only when some: recordings without batch containers keep their shape */
	if (o && in->n_containers) {
		json_t *containers = json_array();

		for (size_t i = 0; i < in->n_containers; i++)
			json_array_append_new(containers, container_to_json(&in->containers[i]));
		json_object_set_new(o, "containers", containers);
	}
	/* only when some: recordings without memory interference keep their shape */
	if (o && in->n_mem_ancestors)
		json_object_set_new(o, "mem_ancestors",
				    mem_parties_to_json(in->mem_ancestors, in->n_mem_ancestors));
	if (o && in->n_mem_outside)
		json_object_set_new(o, "mem_outside",
				    mem_parties_to_json(in->mem_outside, in->n_mem_outside));
	return o;
}

/* Copies a string field, refusing one that does not fit (never truncated). */
static int copy_str(char *dst, size_t size, const char *src, const char *name, char *err,
		    size_t errlen)
{
	if (str_copy(dst, size, src)) {
		snprintf(err, errlen, "%s: longer than %zu bytes", name, size - 1);
		return -EINVAL;
	}
	return 0;
}

/*
 * jansson's unpack errors do not say which key failed: find it by trying
 * the keys of `fmt` ("{s:I, s:F, s?o}") one by one, and name it.
 */
static void name_bad_key(const json_t *o, const char *fmt, const char *const *keys,
			 const char *what, const json_error_t *e, char *err, size_t errlen)
{
	char one[8];
	size_t k = 0;

	/* each key's type follows its ':' (required) or '?' (optional) */
	for (const char *p = strpbrk(fmt, ":?"); p; p = strpbrk(p + 1, ":?"), k++) {
		json_error_t e1;
		bool optional = *p == '?';

		snprintf(one, sizeof(one), "{s%c%c}", optional ? '?' : ':',
			 p[1] == 'o' ? 'o' : p[1]);
		if (json_unpack_ex((json_t *)o, &e1, JSON_VALIDATE_ONLY, one, keys[k])) {
			snprintf(err, errlen, "%s%s: %s", what, keys[k], e1.text);
			return;
		}
	}
	snprintf(err, errlen, "%s%s", what, e->text); /* an unknown key (strict) */
}

static int hist_from_json(const json_t *o, struct lat_hist *h, char *err, size_t errlen)
{
	json_int_t count, sum;
	json_t *slots, *v;
	json_error_t e;
	size_t i;

	if (json_unpack_ex((json_t *)o, &e, JSON_STRICT, "{s:I, s:I, s:o}", "count", &count,
			   "sum_ns", &sum, "slots", &slots) ||
	    !json_is_array(slots) || json_array_size(slots) != QOSLET_LAT_SLOTS) {
		snprintf(err, errlen, "rq: expected {count, sum_ns, slots[%d]}", QOSLET_LAT_SLOTS);
		return -EINVAL;
	}
	h->count = count;
	h->sum_ns = sum;
	json_array_foreach(slots, i, v)
	{
		if (!json_is_integer(v)) {
			snprintf(err, errlen, "rq.slots[%zu]: expected an integer", i);
			return -EINVAL;
		}
		h->slots[i] = json_integer_value(v);
	}
	return 0;
}

/* A unit's memory QoS settings: {"min", "low", "high"}, bytes, -1 for "max". */
static int mem_qos_from_json(json_t *o, struct pol_unit *u, char *err, size_t errlen)
{
	json_int_t min, low, high;
	json_error_t e;

	if (json_unpack_ex(o, &e, JSON_STRICT, "{s:I, s:I, s:I}", "min", &min, "low", &low, "high",
			   &high)) {
		snprintf(err, errlen, "unit %s: mem_qos: %s", u->path, e.text);
		return -EINVAL;
	}
	u->has_mem_qos = true;
	u->mem_min = min;
	u->mem_low = low;
	u->mem_high = high;
	return 0;
}

/* A unit's "ms": every key optional, each a non-negative integer. */
static int mem_stall_from_json(json_t *o, struct pol_mem_stall *m, const char *path, char *err,
			       size_t errlen)
{
	const char *key;
	json_t *v;

	if (!json_is_object(o)) {
		snprintf(err, errlen, "unit %s: ms: expected an object", path);
		return -EINVAL;
	}
	json_object_foreach(o, key, v)
	{
		uint64_t *f = NULL;

		if (!strcmp(key, "stall_ns")) {
			f = &m->stall_ns;
			m->has_stall = true;
		} else if (!strcmp(key, "io_ns")) {
			f = &m->io_ns;
			m->has_io = true;
		}
		for (size_t i = 0; !f && i < MS_KEYS; i++)
			if (!strcmp(key, ms_keys[i]))
				f = ms_field(m, i);
		if (!f || !json_is_integer(v) || json_integer_value(v) < 0) {
			snprintf(err, errlen, "unit %s: ms.%s: %s", path, key,
				 f ? "expected a non-negative integer" : "unknown key");
			return -EINVAL;
		}
		*f = (uint64_t)json_integer_value(v);
	}
	return 0;
}

/*
 * mem_ancestors or mem_outside: [[id, path, class, limit_hits, reclaim_ns,
 * io_bytes], ...], sorted by id; recordings made before io_bytes have 5.
 */
static int mem_parties_from_json(const json_t *arr, const char *what, struct pol_mem_party **out,
				 size_t *n, char *err, size_t errlen)
{
	json_t *v;
	size_t i;

	if (!json_is_array(arr)) {
		snprintf(err, errlen, "%s: expected an array", what);
		return -EINVAL;
	}
	*out = calloc(json_array_size(arr) + 1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	json_array_foreach(arr, i, v)
	{
		struct pol_mem_party *p = &(*out)[i];
		json_int_t id, hits, reclaim, bytes = 0;
		const char *path, *cls;
		int bad = json_array_size(v) == 5
				  ? json_unpack(v, "[I, s, s, I, I!]", &id, &path, &cls, &hits,
						&reclaim)
				  : json_unpack(v, "[I, s, s, I, I, I!]", &id, &path, &cls, &hits,
						&reclaim, &bytes);

		if (bad || hits < 0 || reclaim < 0 || bytes < 0) {
			snprintf(err, errlen,
				 "%s[%zu]: expected [id, path, class, limit_hits, reclaim_ns, "
				 "io_bytes]",
				 what, i);
			return -EINVAL;
		}
		*p = (struct pol_mem_party){.name.id = (uint64_t)id,
					    .limit_hits = (uint64_t)hits,
					    .reclaim_ns = (uint64_t)reclaim,
					    .io_bytes = (uint64_t)bytes};
		if (copy_str(p->name.path, sizeof(p->name.path), path, what, err, errlen))
			return -EINVAL;
		if (qos_class_parse(cls, &p->name.cls)) {
			snprintf(err, errlen, "%s[%zu]: unknown class '%s'", what, i, cls);
			return -EINVAL;
		}
		if (i && p->name.id <= p[-1].name.id) {
			snprintf(err, errlen, "%s: not sorted by id at [%zu]", what, i);
			return -EINVAL;
		}
		(*n)++;
	}
	return 0;
}

static int unit_from_json(const json_t *o, struct pol_unit *u, char *err, size_t errlen)
{
	json_int_t id, quota, period, burst, periods, throttled, anon, used, request_mem = 0;
	json_int_t start_ns = 0, rq_target = 0, pinned = 0, weight = -1, mem_max = -1,
		   batch[BATCH_KEYS] = {0}, mem_usage = 0, mem_file = 0;
	const char *path, *uid, *cls, *cpus, *guard = "";
	json_t *rq = NULL, *cpi = NULL, *mem_qos = NULL, *ms = NULL, *io_limit = NULL;
	json_error_t e;
	int priority, idle, evict_priority = 0;

	static const char fmt[] =
		"{s:I, s:s, s:s, s:s, s:i, s:I, s:I, s:I, s:i, s:s, s:F, s:F, "
		"s:F, s:I, s:I, s:I, s:I, s?I, s?o, s?o, s?s, s?i, s?I, "
		"s?I, s?I, s?I, s?I, s?I, s?I, s?o, s?I, s?I, s?o, s?I, s?I, s?o}";
	static const char *const keys[] = {"id",
					   "path",
					   "pod_uid",
					   "class",
					   "priority",
					   "quota_us",
					   "period_us",
					   "burst_us",
					   "idle",
					   "cpus",
					   "request_cpus",
					   "limit_cpus",
					   "cpu_used",
					   "nr_periods",
					   "nr_throttled",
					   "mem_anon_unevict",
					   "mem_used",
					   "request_mem",
					   "rq",
					   "cpi",
					   "evict_guard",
					   "evict_priority",
					   "start_ns",
					   "weight",
					   "mem_max",
					   "batch_cpu_request",
					   "batch_cpu_limit",
					   "batch_mem_request",
					   "batch_mem_limit",
					   "mem_qos",
					   "rq_target_us",
					   "pinned_cpus",
					   "ms",
					   "mem_usage",
					   "mem_file",
					   "io_limit"};

	if (json_unpack_ex((json_t *)o, &e, JSON_STRICT, fmt, "id", &id, "path", &path, "pod_uid",
			   &uid, "class", &cls, "priority", &priority, "quota_us", &quota,
			   "period_us", &period, "burst_us", &burst, "idle", &idle, "cpus", &cpus,
			   "request_cpus", &u->request_cpus, "limit_cpus", &u->limit_cpus,
			   "cpu_used", &u->cpu_used, "nr_periods", &periods, "nr_throttled",
			   &throttled, "mem_anon_unevict", &anon, "mem_used", &used, "request_mem",
			   &request_mem, "rq", &rq, "cpi", &cpi, "evict_guard", &guard,
			   "evict_priority", &evict_priority, "start_ns", &start_ns, "weight",
			   &weight, "mem_max", &mem_max, batch_keys[0], &batch[0], batch_keys[1],
			   &batch[1], batch_keys[2], &batch[2], batch_keys[3], &batch[3], "mem_qos",
			   &mem_qos, "rq_target_us", &rq_target, "pinned_cpus", &pinned, "ms", &ms,
			   "mem_usage", &mem_usage, "mem_file", &mem_file, "io_limit", &io_limit)) {
		name_bad_key(o, fmt, keys, "unit.", &e, err, errlen);
		return -EINVAL;
	}
	if (qos_class_parse(cls, &u->cls)) {
		snprintf(err, errlen, "unit %s: unknown class '%s'", path, cls);
		return -EINVAL;
	}
	if (evict_guard_parse(guard, &u->evict_guard)) {
		snprintf(err, errlen, "unit %s: unknown evict_guard '%s'", path, guard);
		return -EINVAL;
	}
	if (copy_str(u->path, sizeof(u->path), path, "unit.path", err, errlen) ||
	    copy_str(u->pod_uid, sizeof(u->pod_uid), uid, "unit.pod_uid", err, errlen) ||
	    copy_str(u->cpus, sizeof(u->cpus), cpus, "unit.cpus", err, errlen))
		return -EINVAL;
	u->id = id;
	u->priority = priority;
	u->quota_us = quota;
	u->period_us = period;
	u->burst_us = burst;
	u->idle = idle;
	u->nr_periods = periods;
	u->nr_throttled = throttled;
	u->mem_anon_unevict = anon;
	u->mem_used = used;
	u->mem_usage = (uint64_t)mem_usage;
	u->mem_file = (uint64_t)mem_file;
	if (io_limit) {
		json_int_t dev, rbps, wbps;

		if (json_unpack(io_limit, "[I, I, I!]", &dev, &rbps, &wbps) || dev < 0 ||
		    rbps < -1 || wbps < -1) {
			snprintf(err, errlen, "unit %s: io_limit: expected [disk, rbps, wbps]",
				 path);
			return -EINVAL;
		}
		/* field by field: a compound literal would leave its padding unspecified in a
		 * record that is compared (and replayed) whole */
		u->io_limit.has = true;
		u->io_limit.dev = (uint64_t)dev;
		u->io_limit.rbps = rbps;
		u->io_limit.wbps = wbps;
	}
	u->request_mem = (uint64_t)request_mem;
	u->evict_priority = evict_priority;
	u->start_ns = (uint64_t)start_ns;
	if (rq_target < 0 || rq_target > UINT32_MAX) {
		snprintf(err, errlen, "unit %s: rq_target_us: out of range", path);
		return -EINVAL;
	}
	u->rq_target_us = (uint32_t)rq_target;
	if (pinned < 0 || pinned > POL_CPUS_MAX) {
		snprintf(err, errlen, "unit %s: pinned_cpus: out of range", path);
		return -EINVAL;
	}
	u->pinned_cpus = (uint32_t)pinned;
	u->weight = weight;
	u->mem_max = mem_max;
	u->batch = (struct pol_batch){(uint64_t)batch[0], (uint64_t)batch[1], (uint64_t)batch[2],
				      (uint64_t)batch[3]};
	if (mem_qos && mem_qos_from_json(mem_qos, u, err, errlen))
		return -EINVAL;
	u->has_rq = rq != NULL;
	if (rq && hist_from_json(rq, &u->rq, err, errlen))
		return -EINVAL;
	if (ms && mem_stall_from_json(ms, &u->ms, path, err, errlen))
		return -EINVAL;
	u->has_cpi = cpi != NULL;
	if (cpi) {
		if (!json_is_number(cpi)) {
			snprintf(err, errlen, "unit %s: cpi: expected a number", path);
			return -EINVAL;
		}
		u->cpi = json_number_value(cpi);
	}
	return 0;
}

static int topo_from_json(const json_t *topo, struct pol_input *in, char *err, size_t errlen)
{
	json_t *v;
	size_t i;

	if (json_array_size(topo) > POL_CPUS_MAX) {
		snprintf(err, errlen, "topo: more than %d CPUs", POL_CPUS_MAX);
		return -EINVAL;
	}
	json_array_foreach(topo, i, v)
	{
		struct pol_cpu *t = &in->topo[i];

		if (json_unpack(v, "[i, i, i, i]", &t->cpu, &t->core, &t->package, &t->node)) {
			snprintf(err, errlen, "topo[%zu]: expected [cpu, core, package, node]", i);
			return -EINVAL;
		}
	}
	in->n_topo = json_array_size(topo);
	return 0;
}

/* The outside culprits' names, sorted by id: [[id, path, class], ...]. */
static int outside_from_json(const json_t *outside, struct pol_input *in, char *err, size_t errlen)
{
	json_t *v;
	size_t i;

	if (!json_is_array(outside)) {
		snprintf(err, errlen, "outside: expected an array");
		return -EINVAL;
	}
	in->outside = calloc(json_array_size(outside) + 1, sizeof(*in->outside));
	if (!in->outside)
		return -ENOMEM;
	json_array_foreach(outside, i, v)
	{
		struct pol_outside *o = &in->outside[i];
		const char *path, *cls;
		json_int_t id;

		if (json_unpack(v, "[I, s, s]", &id, &path, &cls)) {
			snprintf(err, errlen, "outside[%zu]: expected [id, path, class]", i);
			return -EINVAL;
		}
		o->id = id;
		if (copy_str(o->path, sizeof(o->path), path, "outside.path", err, errlen))
			return -EINVAL;
		if (qos_class_parse(cls, &o->cls)) {
			snprintf(err, errlen, "outside[%zu]: unknown class '%s'", i, cls);
			return -EINVAL;
		}
		if (i && o->id <= o[-1].id) {
			snprintf(err, errlen, "outside: not sorted by id at [%zu]", i);
			return -EINVAL;
		}
		in->n_outside++;
	}
	return 0;
}

/* The batch containers, sorted by id (model.h, struct pol_container). */
static int containers_from_json(const json_t *arr, struct pol_input *in, char *err, size_t errlen)
{
	const json_t *v;
	size_t i;

	if (!json_is_array(arr)) {
		snprintf(err, errlen, "containers: expected an array");
		return -EINVAL;
	}
	in->containers = calloc(json_array_size(arr) + 1, sizeof(*in->containers));
	if (!in->containers)
		return -ENOMEM;
	json_array_foreach(arr, i, v)
	{
		struct pol_container *c = &in->containers[i];
		json_int_t id, unit, cpu, cpu_limit, mem, weight, mem_max, quota, period;
		const char *path;
		json_error_t e;

		if (json_unpack_ex((json_t *)v, &e, JSON_STRICT,
				   "{s:I, s:I, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "id", &id,
				   "unit", &unit, "path", &path, "batch_cpu_request", &cpu,
				   "batch_cpu_limit", &cpu_limit, "batch_mem_limit", &mem, "weight",
				   &weight, "mem_max", &mem_max, "quota_us", &quota, "period_us",
				   &period)) {
			snprintf(err, errlen, "containers[%zu]: %s", i, e.text);
			return -EINVAL;
		}
		*c = (struct pol_container){.id = (uint64_t)id,
					    .unit = (uint64_t)unit,
					    .batch_cpu_request = (uint64_t)cpu,
					    .batch_cpu_limit = (uint64_t)cpu_limit,
					    .batch_mem_limit = (uint64_t)mem,
					    .weight = weight,
					    .mem_max = mem_max,
					    .quota_us = quota,
					    .period_us = (uint64_t)period};
		if (copy_str(c->path, sizeof(c->path), path, "containers.path", err, errlen))
			return -EINVAL;
		if (i && c->id <= in->containers[i - 1].id) {
			snprintf(err, errlen, "containers: not sorted by id at [%zu]", i);
			return -EINVAL;
		}
		in->n_containers++;
	}
	return 0;
}

int record_input_from_json(const json_t *o, struct pol_input *in, char *err, size_t errlen)
{
	json_t *topo, *units, *blame, *outside = NULL, *containers = NULL, *v;
	json_t *mem_ancestors = NULL, *mem_outside = NULL;
	json_int_t ts, cap, used;
	const char *cpu_list, *exclusive = "";
	json_error_t e;
	int v2, idle, mem_v2 = 0, has_reclaim = 0, has_io_limit = 0, after_race = 0;
	size_t i;

	pol_input_free(in);
	memset(in, 0, sizeof(*in));
	static const char fmt[] =
		"{s:I, s:F, s:b, s:b, s:F, s:s, s:o, s:I, s:I, s:F, s:o, s:o, s?o, s?o, s?s, s?o, s?o, "
		"s?b, s?b, s?b, s?b}";
	static const char *const keys[] = {
		"ts_ns",	 "interval_s",	"cgroup_v2",	"has_cpu_idle",	   "cpus",
		"cpu_list",	 "topo",	"mem_capacity", "mem_used",	   "node_cpu_used",
		"units",	 "blame",	"outside",	"containers",	   "exclusive_cpus",
		"mem_ancestors", "mem_outside", "mem_v2",	"has_mem_reclaim", "has_io_limit",
		"after_race"};

	if (json_unpack_ex((json_t *)o, &e, JSON_STRICT, fmt, "ts_ns", &ts, "interval_s",
			   &in->interval_s, "cgroup_v2", &v2, "has_cpu_idle", &idle, "cpus",
			   &in->cpus, "cpu_list", &cpu_list, "topo", &topo, "mem_capacity", &cap,
			   "mem_used", &used, "node_cpu_used", &in->node_cpu_used, "units", &units,
			   "blame", &blame, "outside", &outside, "containers", &containers,
			   "exclusive_cpus", &exclusive, "mem_ancestors", &mem_ancestors,
			   "mem_outside", &mem_outside, "mem_v2", &mem_v2, "has_mem_reclaim",
			   &has_reclaim, "has_io_limit", &has_io_limit, "after_race",
			   &after_race)) {
		name_bad_key(o, fmt, keys, "", &e, err, errlen);
		return -EINVAL;
	}
	if (!json_is_array(topo) || !json_is_array(units) || !json_is_array(blame)) {
		snprintf(err, errlen, "topo, units, blame: expected arrays");
		return -EINVAL;
	}
	in->ts_ns = ts;
	in->cgroup_v2 = v2;
	in->has_cpu_idle = idle;
	in->mem_v2 = mem_v2;
	in->has_mem_reclaim = has_reclaim;
	in->has_io_limit = has_io_limit;
	in->after_race = after_race;
	in->mem_capacity = cap;
	in->mem_used = used;
	if (copy_str(in->cpu_list, sizeof(in->cpu_list), cpu_list, "cpu_list", err, errlen) ||
	    copy_str(in->exclusive_cpus, sizeof(in->exclusive_cpus), exclusive, "exclusive_cpus",
		     err, errlen) ||
	    topo_from_json(topo, in, err, errlen))
		return -EINVAL;
	in->units = calloc(json_array_size(units) + 1, sizeof(*in->units));
	in->blame = calloc(json_array_size(blame) + 1, sizeof(*in->blame));
	if (!in->units || !in->blame)
		return -ENOMEM;
	json_array_foreach(units, i, v)
	{
		if (unit_from_json(v, &in->units[i], err, errlen))
			return -EINVAL;
		if (i && in->units[i].id <= in->units[i - 1].id) {
			snprintf(err, errlen, "units: not sorted by id at [%zu]", i);
			return -EINVAL;
		}
		in->n_units++;
	}
	json_array_foreach(blame, i, v)
	{
		json_int_t victim, culprit, wait, count = 0;

		/* count came later: a record without it replays with none (no hand-overs) */
		if (json_unpack(v, "[I, I, I, !]", &victim, &culprit, &wait) &&
		    json_unpack(v, "[I, I, I, I!]", &victim, &culprit, &wait, &count)) {
			snprintf(err, errlen,
				 "blame[%zu]: expected [victim, culprit, wait_ns, count]", i);
			return -EINVAL;
		}
		in->blame[in->n_blame++] = (struct pol_blame){victim, culprit, wait, count};
	}
	if (containers) {
		int ret = containers_from_json(containers, in, err, errlen);

		if (ret)
			return ret;
	}
	if (mem_ancestors) {
		int ret = mem_parties_from_json(mem_ancestors, "mem_ancestors", &in->mem_ancestors,
						&in->n_mem_ancestors, err, errlen);

		if (ret)
			return ret;
	}
	if (mem_outside) {
		int ret = mem_parties_from_json(mem_outside, "mem_outside", &in->mem_outside,
						&in->n_mem_outside, err, errlen);

		if (ret)
			return ret;
	}
	return outside ? outside_from_json(outside, in, err, errlen) : 0;
}

static int write_line(FILE *f, json_t *o)
{
	int err = json_dumpf(o, f, JSON_COMPACT | JSON_REAL_PRECISION(17));

	json_decref(o);
	if (err || fputc('\n', f) == EOF || fflush(f))
		return -EIO;
	return 0;
}

int record_write_header(FILE *f, const json_t *config)
{
	return write_line(f, json_pack("{s:i, s:s, s:O}", "qoslet_record", RECORD_FORMAT, "version",
				       QOSLET_VERSION, "config", config));
}

int record_write_input(FILE *f, const struct pol_input *in)
{
	return write_line(f, record_input_to_json(in));
}

/* One line, whatever its length; NULL at end of file. */
static const char *next_line(struct record_reader *r)
{
	ssize_t n = getline(&r->buf, &r->cap, r->f);

	if (n < 0)
		return NULL;
	r->line++;
	return r->buf;
}

int record_open(struct record_reader *r, const char *path, json_t **config, char *err,
		size_t errlen)
{
	const char *line;
	json_error_t e;
	json_t *hdr;
	int format;

	memset(r, 0, sizeof(*r));
	r->f = fopen(path, "r");
	if (!r->f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	line = next_line(r);
	hdr = line ? json_loads(line, 0, &e) : NULL;
	if (!hdr || json_unpack(hdr, "{s:i, s:O}", "qoslet_record", &format, "config", config)) {
		snprintf(err, errlen, "%s: not a qoslet recording (no header line)", path);
		json_decref(hdr);
		record_close(r);
		return -EINVAL;
	}
	json_decref(hdr);
	if (format < RECORD_FORMAT_MIN || format > RECORD_FORMAT) {
		snprintf(err, errlen, "%s: recording format %d, this qoslet reads %d to %d", path,
			 format, RECORD_FORMAT_MIN, RECORD_FORMAT);
		json_decref(*config);
		*config = NULL; /* the caller's reference is gone: nothing dangles */
		record_close(r);
		return -EINVAL;
	}
	return 0;
}

int record_next(struct record_reader *r, struct pol_input *in, char *err, size_t errlen)
{
	const char *line = next_line(r);
	char why[160];
	json_error_t e;
	json_t *o;
	int ret;

	if (!line)
		return 0;
	o = json_loads(line, 0, &e);
	if (!o) {
		snprintf(err, errlen, "line %zu: %s", r->line, e.text);
		return -EINVAL;
	}
	ret = record_input_from_json(o, in, why, sizeof(why));
	json_decref(o);
	if (ret) {
		snprintf(err, errlen, "line %zu: %s", r->line, why);
		return ret;
	}
	return 1;
}

void record_close(struct record_reader *r)
{
	if (r->f)
		fclose(r->f);
	free(r->buf);
	memset(r, 0, sizeof(*r));
}
