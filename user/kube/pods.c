// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kube/pods.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/quantity.h"
#include "str.h"

#define KOORD_QOS_LABEL	  "koordinator.sh/qosClass"
#define MIRROR_ANNOTATION "kubernetes.io/config.mirror"
/* Eviction controls: ours win over Koordinator's when both are set. */
#define OPT_OUT_ANNOTATION	  "qoslet.io/eviction-disabled"
#define PRIORITY_ANNOTATION	  "qoslet.io/eviction-priority"
#define KOORD_PRIORITY_ANNOTATION "koordinator.sh/eviction-priority"
#define RQ_TARGET_ANNOTATION	  "qoslet.io/runq-p99-target-us"
#define KOORD_COST_ANNOTATION	  "scheduling.koordinator.sh/eviction-cost"
#define KOORD_COST_NEVER	  "2147483647" /* math.MaxInt32: the descheduler never evicts it */

bool kube_name_valid(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= 253 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-.") == n;
}

/* Copies an optional string member; false when present but not a string or too long. */
static bool copy_opt(char *dst, size_t size, const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	dst[0] = '\0';
	if (!v)
		return true;
	return json_is_string(v) && str_copy(dst, size, json_string_value(v)) == 0;
}

/* The same for a required member: it must be a non-empty string. */
static bool copy_req(char *dst, size_t size, const json_t *obj, const char *key)
{
	return json_is_string(json_object_get(obj, key)) && copy_opt(dst, size, obj, key) && dst[0];
}

/* The controller's reference (the one kubectl shows as "Controlled By"), else the first. */
static bool parse_owner(struct kube_pod *p, const json_t *meta)
{
	const json_t *refs = json_object_get(meta, "ownerReferences"), *ref, *pick = NULL;
	size_t i;

	if (!refs)
		return true;
	if (!json_is_array(refs))
		return false;
	json_array_foreach(refs, i, ref)
	{
		if (!pick || json_is_true(json_object_get(ref, "controller")))
			pick = ref;
		if (json_is_true(json_object_get(ref, "controller")))
			break;
	}
	if (!pick)
		return true;
	if (!copy_req(p->owner_kind, sizeof(p->owner_kind), pick, "kind") ||
	    !copy_req(p->owner_name, sizeof(p->owner_name), pick, "name"))
		return false;
	p->daemonset =
		json_is_true(json_object_get(pick, "controller")) &&
		!strcmp(p->owner_kind, "DaemonSet") &&
		!strcmp(json_string_value(json_object_get(pick, "apiVersion")) ?: "", "apps/v1");
	return true;
}

/* The labels object as "k=v\0k=v\0\0" in p->labels; false when one is not a string. */
static bool parse_labels(struct kube_pod *p, const json_t *labels)
{
	const char *key;
	const json_t *v;
	size_t n = 1, at = 0;

	json_object_foreach((json_t *)labels, key, v)
	{
		if (!json_is_string(v))
			return false;
		n += strlen(key) + 1 + json_string_length(v) + 1;
	}
	if (n == 1)
		return true;
	p->labels = malloc(n);
	if (!p->labels)
		return false;
	json_object_foreach((json_t *)labels, key, v) at +=
		(size_t)sprintf(p->labels + at, "%s=%s", key, json_string_value(v)) + 1;
	p->labels[at] = '\0';
	return true;
}

#define BATCH_CPU    "kubernetes.io/batch-cpu"
#define BATCH_MEMORY "kubernetes.io/batch-memory"

/* A resource list's quantity of `name`; absent is 0 (*set false), a bad quantity a broken pod. */
static bool quantity_of(const json_t *list, const char *name, uint64_t *out, bool *set)
{
	const json_t *v = json_object_get(list, name);

	*out = 0;
	*set = v != NULL;
	if (!v)
		return true;
	/* cpu in milli-CPUs, as the API counts it ("500m"); the rest in whole units */
	return json_is_string(v) &&
	       !(strcmp(name, "cpu") ? kube_quantity_parse
				     : kube_quantity_parse_milli)(json_string_value(v), out);
}

/*
 * One container's request (section "requests": absent, it defaults to the
 * limit, as the API server defaults it) or limit ("limits") of `name`.
 */
static bool container_quantity(const json_t *c, const char *section, const char *name,
			       uint64_t *out, bool *set)
{
	const json_t *res = json_object_get(c, "resources");

	if (!quantity_of(json_object_get(res, section), name, out, set))
		return false;
	if (*set || strcmp(section, "requests"))
		return true;
	return quantity_of(json_object_get(res, "limits"), name, out, set);
}

/* The spec entry named `name` in spec[key] ("containers", ...), or NULL. */
static const json_t *spec_container(const json_t *spec, const char *key, const char *name)
{
	const json_t *arr = json_object_get(spec, key), *c;
	size_t i;

	json_array_foreach(arr, i, c)
	{
		const char *n = json_string_value(json_object_get(c, "name"));

		if (n && !strcmp(n, name))
			return c;
	}
	return NULL;
}

/*
 * Appends the started containers of one status array ("containerStatuses",
 * ...), with their batch request and limits from the spec array of the same
 * containers (spec_key; NULL for ephemeral containers, which take none).
 */
static bool parse_containers(struct kube_pod *p, const json_t *status, const char *key,
			     const json_t *spec, const char *spec_key)
{
	const json_t *arr = json_object_get(status, key), *c;
	struct kube_container *v;
	size_t i;

	if (!arr)
		return true;
	if (!json_is_array(arr))
		return false;
	json_array_foreach(arr, i, c)
	{
		const char *id = json_string_value(json_object_get(c, "containerID"));
		const char *sep = id ? strstr(id, "://") : NULL;
		const json_t *sc;
		bool set;

		if (!id || !id[0])
			continue; /* not started yet: it has no cgroup either */
		v = realloc(p->containers, (p->n_containers + 1) * sizeof(*v));
		if (!v)
			return false;
		p->containers = v;
		v += p->n_containers;
		memset(v, 0, sizeof(*v));
		if (str_copy(v->id, sizeof(v->id), sep ? sep + 3 : id) ||
		    !copy_req(v->name, sizeof(v->name), c, "name"))
			return false;
		sc = spec_key ? spec_container(spec, spec_key, v->name) : NULL;
		if (sc &&
		    (!container_quantity(sc, "requests", BATCH_CPU, &v->batch_cpu_request, &set) ||
		     !container_quantity(sc, "limits", BATCH_CPU, &v->batch_cpu_limit, &set) ||
		     !container_quantity(sc, "limits", BATCH_MEMORY, &v->batch_mem_limit, &set)))
			return false;
		p->n_containers++;
	}
	return true;
}

/*
 * The pod's total of `name` in `section` the scheduler's way: the larger
 * of the regular containers' sum and the largest init container (they run
 * one at a time, before the others). With `every`, 0 when some container
 * sets none: for a limit, the pod is then unlimited.
 */
static bool pod_total(const json_t *spec, const char *section, const char *name, bool every,
		      uint64_t *out)
{
	static const char *const keys[] = {"containers", "initContainers"};
	uint64_t part[2] = {0, 0}, v;
	bool set;

	*out = 0;
	for (int k = 0; k < 2; k++) {
		const json_t *arr = json_object_get(spec, keys[k]), *c;
		size_t i;

		if (!arr)
			continue;
		if (!json_is_array(arr))
			return false;
		json_array_foreach(arr, i, c)
		{
			if (!container_quantity(c, section, name, &v, &set))
				return false;
			if (every && !set)
				return true;
			part[k] = k == 0 ? part[k] + v : v > part[k] ? v : part[k];
		}
	}
	*out = part[0] > part[1] ? part[0] : part[1];
	return true;
}

static bool parse_request(struct kube_pod *p, const json_t *spec)
{
	uint64_t overhead;
	bool set;

	if (!pod_total(spec, "requests", "memory", false, &p->request_mem) ||
	    !quantity_of(json_object_get(spec, "overhead"), "memory", &overhead, &set))
		return false;
	p->request_mem += overhead;
	return pod_total(spec, "requests", "cpu", false, &p->request_cpu) &&
	       pod_total(spec, "requests", BATCH_CPU, false, &p->batch_cpu_request) &&
	       pod_total(spec, "limits", BATCH_CPU, true, &p->batch_cpu_limit) &&
	       pod_total(spec, "requests", BATCH_MEMORY, false, &p->batch_mem_request) &&
	       pod_total(spec, "limits", BATCH_MEMORY, true, &p->batch_mem_limit);
}

/* An int32 annotation as strconv.ParseInt(v, 10, 32) reads it; false when absent or not one. */
static bool annotation_int32(const json_t *annotations, const char *key, int32_t *out)
{
	const char *v = json_string_value(json_object_get(annotations, key));
	char *end;
	long long n;

	/* strtoll() skips leading blanks and ParseInt() does not */
	if (!v || !v[0] || isspace((unsigned char)v[0]))
		return false;
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || *end || n < INT32_MIN || n > INT32_MAX)
		return false;
	*out = (int32_t)n;
	return true;
}

static void parse_evict_controls(struct kube_pod *p, const json_t *annotations)
{
	const char *opt_out = json_string_value(json_object_get(annotations, OPT_OUT_ANNOTATION));
	const char *cost = json_string_value(json_object_get(annotations, KOORD_COST_ANNOTATION));

	p->evict_opt_out =
		opt_out ? !strcmp(opt_out, "true") : cost && !strcmp(cost, KOORD_COST_NEVER);
	if (!annotation_int32(annotations, PRIORITY_ANNOTATION, &p->evict_priority) &&
	    !annotation_int32(annotations, KOORD_PRIORITY_ANNOTATION, &p->evict_priority))
		p->evict_priority = 0;
}

/* A target of 0 or below, or not a number, is none: the config's target applies. */
static void parse_rq_target(struct kube_pod *p, const json_t *annotations)
{
	int32_t v;

	p->rq_target_us =
		annotation_int32(annotations, RQ_TARGET_ANNOTATION, &v) && v > 0 ? (uint32_t)v : 0;
}

/* status.startTime ("2026-11-24T17:15:37Z", RFC 3339 in UTC as the API writes it); 0 unknown. */
static uint64_t parse_start(const json_t *status)
{
	const char *v = json_string_value(json_object_get(status, "startTime"));
	struct tm tm = {0};
	const char *end = v ? strptime(v, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
	time_t t;

	if (!end || strcmp(end, "Z"))
		return 0;
	t = timegm(&tm);
	/* before 1970 or past what ns in 64 bits hold (year 2554): not a start we can order by */
	return t > 0 && (uint64_t)t < UINT64_MAX / 1000000000ULL ? (uint64_t)t * 1000000000ULL : 0;
}

bool kube_pod_parse(const json_t *item, struct kube_pod *p)
{
	const json_t *meta = json_object_get(item, "metadata");
	const json_t *labels = json_object_get(meta, "labels");
	const json_t *annotations = json_object_get(meta, "annotations");
	const json_t *spec = json_object_get(item, "spec");
	const json_t *prio = json_object_get(spec, "priority");
	const json_t *status = json_object_get(item, "status");
	json_int_t v;

	memset(p, 0, sizeof(*p));
	if (!json_is_object(meta) || (labels && !json_is_object(labels)) ||
	    (annotations && !json_is_object(annotations)))
		return false;
	/* only compared (an unchanged relist wakes nothing): one too long is no version */
	if (!copy_opt(p->rv, sizeof(p->rv), meta, "resourceVersion"))
		p->rv[0] = '\0';
	p->mirror = json_object_get(annotations, MIRROR_ANNOTATION) != NULL;
	parse_evict_controls(p, annotations);
	parse_rq_target(p, annotations);
	p->start_ns = parse_start(status);
	if (!copy_req(p->uid, sizeof(p->uid), meta, "uid") ||
	    !copy_req(p->ns, sizeof(p->ns), meta, "namespace") ||
	    !copy_req(p->name, sizeof(p->name), meta, "name") ||
	    !copy_opt(p->koord_qos, sizeof(p->koord_qos), labels, KOORD_QOS_LABEL) ||
	    !copy_opt(p->qos_class, sizeof(p->qos_class), status, "qosClass") ||
	    !copy_opt(p->node, sizeof(p->node), spec, "nodeName") || !parse_owner(p, meta) ||
	    (labels && !parse_labels(p, labels)) ||
	    !parse_containers(p, status, "initContainerStatuses", spec, "initContainers") ||
	    !parse_containers(p, status, "containerStatuses", spec, "containers") ||
	    !parse_containers(p, status, "ephemeralContainerStatuses", NULL, NULL) ||
	    !parse_request(p, spec))
		return false;
	if (prio) {
		v = json_integer_value(prio);
		/* spec.priority is an int32 in the API: anything else is a broken document. */
		if (!json_is_integer(prio) || v < INT32_MIN || v > INT32_MAX)
			return false;
		p->has_priority = true;
		p->priority = (int32_t)v;
	}
	return true;
}

int kube_pods_parse(const json_t *doc, struct kube_pod_list *out, char *err, size_t errlen)
{
	const json_t *items = json_object_get(doc, "items"), *item;
	const char *kind = json_string_value(json_object_get(doc, "kind"));
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(doc) || (kind && strcmp(kind, "PodList")) || !json_is_array(items)) {
		snprintf(err, errlen, "not a PodList (%s)",
			 !json_is_object(doc)		   ? "not an object"
			 : kind && strcmp(kind, "PodList") ? "another kind"
							   : "no items array");
		return -EBADMSG;
	}
	if (json_array_size(items)) {
		out->pods = calloc(json_array_size(items), sizeof(*out->pods));
		if (!out->pods) {
			snprintf(err, errlen, "out of memory for %zu pods", json_array_size(items));
			return -ENOMEM;
		}
	}
	json_array_foreach(items, i, item)
	{
		struct kube_pod *p = &out->pods[out->n];

		if (kube_pod_parse(item, p)) {
			out->n++;
		} else {
			kube_pod_free(p);
			out->skipped++;
		}
	}
	return 0;
}

int kube_pods_list(struct kube_client *c, const char *node, struct kube_pod_list *out, char *err,
		   size_t errlen)
{
	struct kube_response r;
	char path[320];
	int rc;

	memset(out, 0, sizeof(*out));
	if (!kube_name_valid(node)) {
		snprintf(err, errlen, "node name \"%s\" is not a valid Kubernetes name", node);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/api/v1/pods?fieldSelector=spec.nodeName%%3D%s", node);
	rc = kube_request(c, "GET", path, NULL, &r, err, errlen);
	if (rc)
		return rc;
	if (r.status != 200) {
		snprintf(err, errlen, "list pods on %s: status %ld %s", node, r.status,
			 kube_status_message(r.body));
		rc = kube_status_errno(r.status);
	} else {
		rc = kube_pods_parse(r.body, out, err, errlen);
	}
	json_decref(r.body);
	return rc;
}

static int cmp_pod_uid(const void *x, const void *y)
{
	return strcmp(((const struct kube_pod *)x)->uid, ((const struct kube_pod *)y)->uid);
}

void kube_pod_list_sort(struct kube_pod_list *list)
{
	if (list->n)
		qsort(list->pods, list->n, sizeof(*list->pods), cmp_pod_uid);
}

const struct kube_pod *kube_pod_find(const struct kube_pod_list *list, const char *uid)
{
	struct kube_pod key;

	if (!list->n || str_copy(key.uid, sizeof(key.uid), uid))
		return NULL;
	return bsearch(&key, list->pods, list->n, sizeof(key), cmp_pod_uid);
}

const char *kube_pod_container_name(const struct kube_pod *p, const char *container_id)
{
	for (size_t i = 0; i < p->n_containers; i++)
		if (!strcmp(p->containers[i].id, container_id))
			return p->containers[i].name;
	return NULL;
}

bool kube_pod_has_label(const struct kube_pod *p, const char *sel)
{
	size_t key_len = strcspn(sel, "=");

	for (const char *l = p->labels; l && *l; l += strlen(l) + 1)
		if (!strncmp(l, sel, key_len) && l[key_len] == '=' &&
		    (!sel[key_len] || !strcmp(l + key_len + 1, sel + key_len + 1)))
			return true;
	return false;
}

bool kube_pod_protected(const struct kube_pod *p, const char **why)
{
	*why = !strcmp(p->ns, "kube-system") ? "in kube-system"
	       : p->mirror		     ? "a static (mirror) pod"
					     : NULL;
	return *why != NULL;
}

void kube_pod_free(struct kube_pod *p)
{
	free(p->containers);
	free(p->labels);
	p->containers = NULL;
	p->labels = NULL;
	p->n_containers = 0;
}

void kube_pod_list_free(struct kube_pod_list *list)
{
	for (size_t i = 0; i < list->n; i++)
		kube_pod_free(&list->pods[i]);
	free(list->pods);
	memset(list, 0, sizeof(*list));
}
