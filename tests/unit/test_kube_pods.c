// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The pod list parser, the eviction outcome and the eviction body (user/kube/). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kube/evict.h"
#include "kube/pods.h"
#include "kube/quantity.h"

/*
 * Two usable pods: full (controller owner second), and bare (no labels, priority, owner; a
 * static pod's mirror).
 */
static const char good_list[] =
	"{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"7\"},"
	"\"items\":["
	"{\"metadata\":{\"uid\":\"1111-aa\",\"namespace\":\"batch\",\"name\":\"job-x\","
	"\"labels\":{\"koordinator.sh/qosClass\":\"BE\",\"app\":\"x\"},"
	"\"ownerReferences\":[{\"kind\":\"ConfigMap\",\"name\":\"cm\"},"
	"{\"kind\":\"Job\",\"name\":\"job\",\"controller\":true}]},"
	"\"spec\":{\"nodeName\":\"n1\",\"priority\":-100},"
	"\"status\":{\"qosClass\":\"BestEffort\","
	"\"initContainerStatuses\":[{\"name\":\"init\",\"containerID\":\"containerd://c0\"}],"
	"\"containerStatuses\":[{\"name\":\"main\",\"containerID\":\"cri-o://c1\"},"
	"{\"name\":\"waiting\",\"containerID\":\"\"},{\"name\":\"new\"}]}},"
	"{\"metadata\":{\"uid\":\"2222-bb\",\"namespace\":\"web\",\"name\":\"api\","
	"\"annotations\":{\"kubernetes.io/config.mirror\":\"abc\"}},"
	"\"spec\":{}}"
	"]}";

static void parse_str(const char *text, struct kube_pod_list *out, int want_rc)
{
	char err[256] = "";
	json_error_t jerr;
	json_t *doc = json_loads(text, JSON_DECODE_ANY, &jerr);
	int rc;

	if (!doc)
		fail_msg("fixture is not JSON: %s", jerr.text);
	rc = kube_pods_parse(doc, out, err, sizeof(err));
	json_decref(doc);
	if (rc != want_rc)
		fail_msg("rc %d (want %d) for %s: %s", rc, want_rc, text, err);
	if (rc)
		assert_true(err[0] != '\0');
}

static void test_parse_fields(void **state)
{
	struct kube_pod_list l;
	const struct kube_pod *p;

	(void)state;
	parse_str(good_list, &l, 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.skipped, 0);
	p = &l.pods[0];
	assert_string_equal(p->uid, "1111-aa");
	assert_string_equal(p->ns, "batch");
	assert_string_equal(p->name, "job-x");
	assert_string_equal(p->koord_qos, "BE");
	assert_true(p->has_priority);
	assert_int_equal(p->priority, -100);
	assert_string_equal(p->qos_class, "BestEffort");
	assert_string_equal(p->owner_kind, "Job"); /* the controller, not the first reference */
	assert_string_equal(p->owner_name, "job");
	assert_string_equal(p->node, "n1");
	/* only started containers (they have an id, so a cgroup), runtime prefix dropped */
	assert_int_equal(p->n_containers, 2);
	assert_string_equal(p->containers[0].id, "c0");
	assert_string_equal(p->containers[0].name, "init");
	assert_string_equal(p->containers[1].id, "c1");
	assert_string_equal(kube_pod_container_name(p, "c1"), "main");
	assert_null(kube_pod_container_name(p, "c2"));
	assert_true(kube_pod_has_label(p, "app"));
	assert_true(kube_pod_has_label(p, "app=x"));
	assert_true(kube_pod_has_label(p, "koordinator.sh/qosClass=BE"));
	assert_false(kube_pod_has_label(p, "app=xy"));
	assert_false(kube_pod_has_label(p, "ap"));
	assert_false(kube_pod_has_label(p, "app=")); /* an empty value is a value */
	assert_false(p->mirror);
	p = &l.pods[1];
	assert_true(p->mirror);
	assert_null(p->labels);
	assert_false(kube_pod_has_label(p, "app"));
	assert_string_equal(p->node, "");
	assert_int_equal(p->n_containers, 0);
	assert_string_equal(p->uid, "2222-bb");
	assert_string_equal(p->koord_qos, "");
	assert_false(p->has_priority);
	assert_string_equal(p->qos_class, "");
	assert_string_equal(p->owner_kind, "");
	kube_pod_list_free(&l);
	assert_null(l.pods);
}

static void test_protected(void **state)
{
	struct kube_pod p = {.ns = "web", .owner_kind = "ReplicaSet"};
	const char *why = "";

	(void)state;
	assert_false(kube_pod_protected(&p, &why));
	assert_null(why);
	/* a DaemonSet's pod is trusted by the config (collect/pod_trust.c), not here */
	snprintf(p.owner_kind, sizeof(p.owner_kind), "DaemonSet");
	p.daemonset = true;
	assert_false(kube_pod_protected(&p, &why));
	p = (struct kube_pod){.ns = "kube-system"};
	assert_true(kube_pod_protected(&p, &why));
	assert_string_equal(why, "in kube-system");
	p = (struct kube_pod){.ns = "etcd", .mirror = true};
	assert_true(kube_pod_protected(&p, &why));
	assert_string_equal(why, "a static (mirror) pod");
}

static void test_parse_first_owner_without_controller(void **state)
{
	struct kube_pod_list l;

	(void)state;
	parse_str("{\"kind\":\"PodList\",\"items\":[{\"metadata\":{\"uid\":\"u\",\"namespace\":"
		  "\"n\",\"name\":\"p\",\"ownerReferences\":[{\"kind\":\"A\",\"name\":\"a\"},"
		  "{\"kind\":\"B\",\"name\":\"b\"}]}}]}",
		  &l, 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.pods[0].owner_kind, "A");
	assert_string_equal(l.pods[0].owner_name, "a");
	kube_pod_list_free(&l);
}

/* Only the controller reference of apps/v1 makes a DaemonSet's pod. */
static void test_parse_daemonset_owner(void **state)
{
	static const struct {
		const char *refs;
		bool daemonset;
	} cases[] = {
		{"{\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"name\":\"d\","
		 "\"controller\":true}",
		 true},
		/* not the controller: anyone who may edit the pod may add it */
		{"{\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"name\":\"d\"}", false},
		/* another API group's DaemonSet kind */
		{"{\"apiVersion\":\"evil.example/v1\",\"kind\":\"DaemonSet\",\"name\":\"d\","
		 "\"controller\":true}",
		 false},
		{"{\"kind\":\"DaemonSet\",\"name\":\"d\",\"controller\":true}", false},
		/* a DaemonSet reference beside another controller */
		{"{\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"name\":\"d\"},"
		 "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"j\",\"controller\":true}",
		 false},
	};
	char doc[512];
	struct kube_pod_list l;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(doc, sizeof(doc),
			 "{\"kind\":\"PodList\",\"items\":[{\"metadata\":{\"uid\":\"u\","
			 "\"namespace\":\"n\",\"name\":\"p\",\"ownerReferences\":[%s]}}]}",
			 cases[i].refs);
		parse_str(doc, &l, 0);
		assert_int_equal(l.n, 1);
		assert_int_equal(l.pods[0].daemonset, cases[i].daemonset);
		kube_pod_list_free(&l);
	}
}

/*
 * A one-pod list, which must parse, with these annotations (a JSON object's
 * members), spec (a JSON object) and status (members).
 */
static void parse_pod(const char *annotations, const char *spec, const char *status,
		      struct kube_pod_list *l)
{
	char doc[1024];

	snprintf(doc, sizeof(doc),
		 "{\"kind\":\"PodList\",\"items\":[{\"metadata\":{\"uid\":\"u\","
		 "\"namespace\":\"n\",\"name\":\"p\",\"annotations\":{%s}},\"spec\":%s,"
		 "\"status\":{%s}}]}",
		 annotations, spec, status);
	parse_str(doc, l, 0);
	assert_int_equal(l->n, 1);
}

/* With the annotations and status alone. */
static void parse_one(const char *annotations, const char *status, struct kube_pod_list *l)
{
	parse_pod(annotations, "{}", status, l);
}

/*
 * Eviction controls: qoslet's annotations, Koordinator's where ours are
 * absent (ours win), bad values read as documented; status.startTime.
 */
static void test_parse_evict_controls(void **state)
{
	static const struct {
		const char *annotations;
		bool opt_out;
		int32_t priority;
	} cases[] = {
		{"", false, 0},
		{"\"qoslet.io/eviction-disabled\":\"true\"", true, 0},
		{"\"qoslet.io/eviction-disabled\":\"false\"", false, 0},
		/* "true" alone: the pod owner's word, taken only when plain (docs/security.md) */
		{"\"qoslet.io/eviction-disabled\":\"yes\"", false, 0},
		{"\"qoslet.io/eviction-disabled\":\"True\"", false, 0},
		{"\"scheduling.koordinator.sh/eviction-cost\":\"2147483647\"", true, 0},
		/* a lower cost is the descheduler's tie-break, not an opt-out */
		{"\"scheduling.koordinator.sh/eviction-cost\":\"100\"", false, 0},
		{"\"scheduling.koordinator.sh/eviction-cost\":\"2147483647\","
		 "\"qoslet.io/eviction-disabled\":\"false\"",
		 false, 0},
		{"\"qoslet.io/eviction-priority\":\"-7\"", false, -7},
		{"\"koordinator.sh/eviction-priority\":\"12\"", false, 12},
		{"\"koordinator.sh/eviction-priority\":\"12\",\"qoslet.io/eviction-priority\":\"3\"",
		 false, 3},
		/* ours unreadable: Koordinator's stands; both unreadable: 0 */
		{"\"koordinator.sh/eviction-priority\":\"12\",\"qoslet.io/eviction-priority\":\"x\"",
		 false, 12},
		{"\"qoslet.io/eviction-priority\":\"2147483648\"", false, 0},
		{"\"qoslet.io/eviction-priority\":\" 5\"", false, 0},
		{"\"qoslet.io/eviction-priority\":\"5x\"", false, 0},
	};
	struct kube_pod_list l;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		parse_one(cases[i].annotations, "", &l);
		if (l.pods[0].evict_opt_out != cases[i].opt_out ||
		    l.pods[0].evict_priority != cases[i].priority)
			fail_msg("{%s}: opt-out %d priority %d, want %d %d", cases[i].annotations,
				 l.pods[0].evict_opt_out, l.pods[0].evict_priority,
				 cases[i].opt_out, cases[i].priority);
		assert_int_equal(l.pods[0].start_ns, 0);
		kube_pod_list_free(&l);
	}
	parse_one("", "\"startTime\":\"2026-11-24T17:15:37Z\"", &l);
	assert_int_equal(l.pods[0].start_ns, 1795540537ULL * 1000000000ULL);
	kube_pod_list_free(&l);
	/* not the API's form: unknown, and the pod still listed */
	parse_one("", "\"startTime\":\"2026-11-24 17:15:37\"", &l);
	assert_int_equal(l.pods[0].start_ns, 0);
	kube_pod_list_free(&l);
	parse_one("", "\"startTime\":\"9999-12-31T23:59:59Z\"", &l);
	assert_int_equal(l.pods[0].start_ns, 0);
	kube_pod_list_free(&l);
	parse_one("", "\"startTime\":7", &l);
	assert_int_equal(l.pods[0].start_ns, 0);
	kube_pod_list_free(&l);
}

/* qoslet.io/runq-p99-target-us: a positive int32 of us, else none (the config's target). */
static void test_parse_rq_target(void **state)
{
	static const struct {
		const char *annotations;
		uint32_t want;
	} cases[] = {
		{"", 0},
		{"\"qoslet.io/runq-p99-target-us\":\"750\"", 750},
		{"\"qoslet.io/runq-p99-target-us\":\"0\"", 0},
		{"\"qoslet.io/runq-p99-target-us\":\"-5\"", 0},
		{"\"qoslet.io/runq-p99-target-us\":\"1ms\"", 0},
		{"\"qoslet.io/runq-p99-target-us\":\"2147483648\"", 0},
	};
	struct kube_pod_list l;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		parse_one(cases[i].annotations, "", &l);
		if (l.pods[0].rq_target_us != cases[i].want)
			fail_msg("{%s}: target %u, want %u", cases[i].annotations,
				 l.pods[0].rq_target_us, cases[i].want);
		kube_pod_list_free(&l);
	}
}

/* Memory requests: sum of containers, else the largest init container, plus overhead. */
static void test_parse_memory_request(void **state)
{
	static const struct {
		const char *spec;
		uint64_t want;
	} rows[] = {
		{"{}", 0},
		{"{\"containers\":[{\"resources\":{\"requests\":{\"memory\":\"1Gi\"}}},"
		 "{\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"512Mi\"}}},{}]}",
		 1610612736},
		{"{\"containers\":[{\"resources\":{\"requests\":{\"memory\":\"100M\"}}}],"
		 "\"initContainers\":[{\"resources\":{\"requests\":{\"memory\":\"2G\"}}},"
		 "{\"resources\":{\"requests\":{\"memory\":\"1G\"}}}],"
		 "\"overhead\":{\"memory\":\"1k\"}}",
		 2000001000},
	};
	struct kube_pod_list l;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		parse_pod("", rows[i].spec, "", &l);
		assert_int_equal(l.pods[0].request_mem, rows[i].want);
		kube_pod_list_free(&l);
	}
	/* a request that is no quantity makes the pod unusable, like any broken field */
	parse_str("{\"kind\":\"PodList\",\"items\":[{\"metadata\":{\"uid\":\"u\",\"namespace\":"
		  "\"n\",\"name\":\"p\"},\"spec\":{\"containers\":[{\"resources\":"
		  "{\"requests\":{\"memory\":\"lots\"}}}]}}]}",
		  &l, 0);
	assert_int_equal(l.n, 0);
	assert_int_equal(l.skipped, 1);
	kube_pod_list_free(&l);
}

/* CPU requests in milli-CPUs, the scheduler's way: what tells a whole number of CPUs. */
static void test_parse_cpu_request(void **state)
{
	static const struct {
		const char *spec;
		uint64_t want;
	} rows[] = {
		{"{}", 0},
		{"{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"500m\"}}},"
		 "{\"resources\":{\"requests\":{\"cpu\":\"1.5\"}}}]}",
		 2000},
		{"{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}],"
		 "\"initContainers\":[{\"resources\":{\"requests\":{\"cpu\":\"3\"}}}]}",
		 3000},
		/* a limit alone is the request, as the API server defaults it */
		{"{\"containers\":[{\"resources\":{\"limits\":{\"cpu\":\"250m\"}}}]}", 250},
	};
	struct kube_pod_list l;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		parse_pod("", rows[i].spec, "", &l);
		assert_int_equal(l.pods[0].request_cpu, rows[i].want);
		kube_pod_list_free(&l);
	}
}

/*
 * Batch resources: requests summed (init containers the scheduler's way),
 * a request absent defaults to the limit, a limit is 0 (unlimited) when any
 * container sets none.
 */
static void test_parse_batch_resources(void **state)
{
#define C(req, lim) "{\"resources\":{\"requests\":{" req "},\"limits\":{" lim "}}}"
#define CPU(v)	    "\"kubernetes.io/batch-cpu\":\"" v "\""
#define MEM(v)	    "\"kubernetes.io/batch-memory\":\"" v "\""
	static const struct {
		const char *spec;
		uint64_t cpu_req, cpu_lim, mem_req, mem_lim;
	} rows[] = {
		{"{}", 0, 0, 0, 0},
		{"{\"containers\":[" C(CPU("500") "," MEM("256Mi"),
				       CPU("1k") "," MEM("512Mi")) "]}",
		 500, 1000, 268435456, 536870912},
		/* two containers: sums; the second's request defaults to its limit */
		{"{\"containers\":[" C(CPU("500"), CPU("1000")) "," C("", CPU("250")) "]}", 750,
		 1250, 0, 0},
		/* one container without a limit: the pod is unlimited, its request still counts */
		{"{\"containers\":[" C(CPU("500"), CPU("1000")) ",{}]}", 500, 0, 0, 0},
		/* an init container larger than the regular sum sets both */
		{"{\"containers\":[" C(CPU("500"), CPU("500")) "],\"initContainers\":[" C(
			 CPU("2000"), CPU("2000")) "]}",
		 2000, 2000, 0, 0},
		/* an init container without a limit: unlimited */
		{"{\"containers\":[" C(CPU("500"), CPU("500")) "],\"initContainers\":[{}]}", 500, 0,
		 0, 0},
	};
#undef C
#undef CPU
#undef MEM
	struct kube_pod_list l;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		parse_pod("", rows[i].spec, "", &l);
		print_message("row %zu\n", i);
		assert_int_equal(l.pods[0].batch_cpu_request, rows[i].cpu_req);
		assert_int_equal(l.pods[0].batch_cpu_limit, rows[i].cpu_lim);
		assert_int_equal(l.pods[0].batch_mem_request, rows[i].mem_req);
		assert_int_equal(l.pods[0].batch_mem_limit, rows[i].mem_lim);
		kube_pod_list_free(&l);
	}
}

/*
 * Each started container's own batch-cpu request and batch-memory limit,
 * matched by name to its spec entry (init containers to initContainers), a
 * request absent defaulting to the limit; ephemeral containers take none.
 */
static void test_parse_container_batch(void **state)
{
	static const char spec[] =
		"{\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{"
		"\"kubernetes.io/batch-cpu\":\"1000\",\"kubernetes.io/batch-memory\":\"1Gi\"}}},"
		"{\"name\":\"b\",\"resources\":{\"requests\":{"
		"\"kubernetes.io/batch-cpu\":\"250\"}}}],"
		"\"initContainers\":[{\"name\":\"a\",\"resources\":{\"limits\":{"
		"\"kubernetes.io/batch-memory\":\"64Mi\"}}}]}";
	static const char status[] =
		"\"initContainerStatuses\":[{\"name\":\"a\",\"containerID\":\"x://i\"}],"
		"\"containerStatuses\":[{\"name\":\"b\",\"containerID\":\"x://cb\"},"
		"{\"name\":\"a\",\"containerID\":\"x://ca\"}],"
		"\"ephemeralContainerStatuses\":[{\"name\":\"a\",\"containerID\":\"x://e\"}]";
	static const struct {
		const char *id;
		uint64_t cpu, cpu_limit, mem;
	} want[] = {
		{"i", 0, 0, 64ull << 20}, /* the init container named a, not the regular one */
		{"cb", 250, 0, 0},	  /* a request, no limit */
		{"ca", 1000, 1000, 1ull << 30}, /* the request defaults to the limit */
		{"e", 0, 0, 0},			/* ephemeral: no resources of its own */
	};
	struct kube_pod_list l;

	(void)state;
	parse_pod("", spec, status, &l);
	assert_int_equal(l.pods[0].n_containers, 4);
	for (size_t i = 0; i < 4; i++) {
		const struct kube_container *c = &l.pods[0].containers[i];

		assert_string_equal(c->id, want[i].id);
		assert_int_equal(c->batch_cpu_request, want[i].cpu);
		assert_int_equal(c->batch_cpu_limit, want[i].cpu_limit);
		assert_int_equal(c->batch_mem_limit, want[i].mem);
	}
	kube_pod_list_free(&l);
}

static void test_quantity(void **state)
{
	static const struct {
		const char *s;
		int rc;
		uint64_t want;
	} rows[] = {
		{"128974848", 0, 128974848},
		{"129e6", 0, 129000000},
		{"129M", 0, 129000000},
		{"123Mi", 0, 128974848},
		{"1.5Gi", 0, 1610612736},
		{"0.5", 0, 1}, /* rounded up */
		{"500m", 0, 1},
		{"1E", 0, 1000000000000000000ull},
		{"+2Ki", 0, 2048},
		{"", -EINVAL, 0},
		{"Mi", -EINVAL, 0},
		{"1 Gi", -EINVAL, 0},
		{"1GB", -EINVAL, 0},
		{"0x10", -EINVAL, 0},
		{"inf", -EINVAL, 0},
		{"-1", -ERANGE, 0},
		{"16Ei", -ERANGE, 0},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t v = 0;
		int rc = kube_quantity_parse(rows[i].s, &v);

		if (rc != rows[i].rc || (!rc && v != rows[i].want))
			fail_msg("\"%s\": rc %d value %llu, want rc %d value %llu", rows[i].s, rc,
				 (unsigned long long)v, rows[i].rc,
				 (unsigned long long)rows[i].want);
	}
}

static void test_parse_empty_list(void **state)
{
	struct kube_pod_list l;

	(void)state;
	/* kind may be absent (some proxies strip it); an empty node is not an error. */
	parse_str("{\"items\":[]}", &l, 0);
	assert_int_equal(l.n, 0);
	assert_int_equal(l.skipped, 0);
	kube_pod_list_free(&l);
}

/* Documents that are not a PodList at all. */
static void test_parse_bad_documents(void **state)
{
	static const char *const docs[] = {
		"[]",
		"\"PodList\"",
		"null",
		"{}",
		"{\"kind\":\"PodList\"}",
		"{\"kind\":\"PodList\",\"items\":{}}",
		"{\"kind\":\"Status\",\"items\":[]}",
		"{\"kind\":\"PodList\",\"items\":null}",
	};
	struct kube_pod_list l;

	(void)state;
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		parse_str(docs[i], &l, -EBADMSG);
		assert_int_equal(l.n, 0);
		assert_null(l.pods);
	}
}

/* Items that are skipped and counted, each beside one good pod that must survive. */
static void test_parse_bad_items(void **state)
{
	static const char *const items[] = {
		"1",
		"{}",
		"{\"metadata\":[]}",
		"{\"metadata\":{\"namespace\":\"n\",\"name\":\"p\"}}",		    /* no uid */
		"{\"metadata\":{\"uid\":\"\",\"namespace\":\"n\",\"name\":\"p\"}}", /* empty uid */
		"{\"metadata\":{\"uid\":7,\"namespace\":\"n\",\"name\":\"p\"}}", /* uid not string
										  */
		"{\"metadata\":{\"uid\":\"u\",\"name\":\"p\"}}",		 /* no namespace */
		"{\"metadata\":{\"uid\":\"u\",\"namespace\":\"n\"}}",		 /* no name */
		"{\"metadata\":{\"uid\":\"u\",\"namespace\":\"n\",\"name\":\"p\",\"labels\":[]}}",
		"{\"metadata\":{\"uid\":\"u\",\"namespace\":\"n\",\"name\":\"p\",\"labels\":"
		"{\"koordinator.sh/qosClass\":5}}}",
		"{\"metadata\":{\"uid\":\"u\",\"namespace\":\"n\",\"name\":\"p\","
		"\"ownerReferences\":{}}}",
		"{\"metadata\":{\"uid\":\"u\",\"namespace\":\"n\",\"name\":\"p\","
		"\"ownerReferences\":[{\"kind\":\"Job\"}]}}", /* owner without a name */
		"{\"metadata\":{\"uid\":\"u\",\"namespace\":\"n\",\"name\":\"p\"},"
		"\"spec\":{\"priority\":\"high\"}}",
		"{\"metadata\":{\"uid\":\"u\",\"namespace\":\"n\",\"name\":\"p\"},"
		"\"spec\":{\"priority\":4294967296}}", /* beyond int32 */
		"{\"metadata\":{\"uid\":\"u\",\"namespace\":\"n\",\"name\":\"p\"},"
		"\"status\":{\"qosClass\":\"BestEffortButLongerThanAny\"}}",
		"{\"metadata\":{\"uid\":\"0123456789012345678901234567890123456789\","
		"\"namespace\":\"n\",\"name\":\"p\"}}", /* uid longer than a UUID */
		"{\"metadata\":{\"uid\":\"u\",\"namespace\":\"n\",\"name\":\"p\"},"
		"\"status\":{\"containerStatuses\":{}}}",
		"{\"metadata\":{\"uid\":\"u\",\"namespace\":\"n\",\"name\":\"p\"},"
		"\"status\":{\"containerStatuses\":[{\"name\":\"a\",\"containerID\":\"x://1\"},"
		"{\"containerID\":\"x://2\"}]}}", /* a started container without a name */
		"{\"metadata\":{\"uid\":\"u\",\"namespace\":\"n\",\"name\":\"p\"},"
		"\"spec\":{\"nodeName\":3}}",
	};
	static const char good[] =
		"{\"metadata\":{\"uid\":\"g\",\"namespace\":\"n\",\"name\":\"ok\"}}";
	struct kube_pod_list l;
	char doc[1024];

	(void)state;
	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++) {
		snprintf(doc, sizeof(doc), "{\"kind\":\"PodList\",\"items\":[%s,%s]}", items[i],
			 good);
		parse_str(doc, &l, 0);
		if (l.n != 1 || l.skipped != 1 || strcmp(l.pods[0].name, "ok"))
			fail_msg("item %s: n=%zu skipped=%zu", items[i], l.n, l.skipped);
		kube_pod_list_free(&l);
	}
}

static void test_find_after_sort(void **state)
{
	struct kube_pod_list l;

	(void)state;
	parse_str("{\"items\":[{\"metadata\":{\"uid\":\"c\",\"namespace\":\"n\",\"name\":"
		  "\"pc\"}},{\"metadata\":{\"uid\":\"a\",\"namespace\":\"n\",\"name\":\"pa\"}},"
		  "{\"metadata\":{\"uid\":\"b\",\"namespace\":\"n\",\"name\":\"pb\"}}]}",
		  &l, 0);
	kube_pod_list_sort(&l);
	assert_string_equal(kube_pod_find(&l, "a")->name, "pa");
	assert_string_equal(kube_pod_find(&l, "b")->name, "pb");
	assert_string_equal(kube_pod_find(&l, "c")->name, "pc");
	assert_null(kube_pod_find(&l, "d"));
	assert_null(kube_pod_find(&l, ""));
	kube_pod_list_free(&l);
	assert_null(kube_pod_find(&l, "a")); /* an empty list finds nothing */
}

static void test_name_valid(void **state)
{
	(void)state;
	assert_true(kube_name_valid("node-1.example.com"));
	assert_false(kube_name_valid(""));
	assert_false(kube_name_valid("Node1"));
	assert_false(kube_name_valid("a/b"));
	assert_false(kube_name_valid("a&b=c"));
	assert_false(kube_name_valid("a b"));
}

static void test_evict_outcome(void **state)
{
	static const struct {
		long status;
		enum kube_evict_outcome want;
	} cases[] = {
		{200, KUBE_EVICT_EVICTED}, {201, KUBE_EVICT_EVICTED}, {429, KUBE_EVICT_RETRY},
		{404, KUBE_EVICT_GONE},	   {500, KUBE_EVICT_FAILED},  {409, KUBE_EVICT_FAILED},
		{403, KUBE_EVICT_FAILED},  {401, KUBE_EVICT_FAILED},  {0, KUBE_EVICT_FAILED},
		{204, KUBE_EVICT_FAILED},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (kube_evict_outcome(cases[i].status) != cases[i].want)
			fail_msg("status %ld: got %d want %d", cases[i].status,
				 kube_evict_outcome(cases[i].status), cases[i].want);
	assert_string_equal(kube_evict_outcome_name(KUBE_EVICT_EVICTED), "evicted");
	assert_string_equal(kube_evict_outcome_name(KUBE_EVICT_RETRY), "retry");
	assert_string_equal(kube_evict_outcome_name(KUBE_EVICT_GONE), "gone");
	assert_string_equal(kube_evict_outcome_name(KUBE_EVICT_FAILED), "failed");
	assert_string_equal(kube_evict_outcome_name((enum kube_evict_outcome)99), "failed");
}

static void test_evict_body(void **state)
{
	json_t *b = kube_evict_body("batch", "job-x", "1111-aa");
	char *s;

	(void)state;
	assert_non_null(b);
	s = json_dumps(b, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(s, "{\"apiVersion\":\"policy/v1\",\"deleteOptions\":{\"preconditions\":"
			       "{\"uid\":\"1111-aa\"}},\"kind\":\"Eviction\",\"metadata\":"
			       "{\"name\":\"job-x\",\"namespace\":\"batch\"}}");
	free(s);
	json_decref(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_fields),
		cmocka_unit_test(test_protected),
		cmocka_unit_test(test_parse_first_owner_without_controller),
		cmocka_unit_test(test_parse_daemonset_owner),
		cmocka_unit_test(test_parse_evict_controls),
		cmocka_unit_test(test_parse_rq_target),
		cmocka_unit_test(test_parse_memory_request),
		cmocka_unit_test(test_parse_cpu_request),
		cmocka_unit_test(test_parse_batch_resources),
		cmocka_unit_test(test_parse_container_batch),
		cmocka_unit_test(test_quantity),
		cmocka_unit_test(test_parse_empty_list),
		cmocka_unit_test(test_parse_bad_documents),
		cmocka_unit_test(test_parse_bad_items),
		cmocka_unit_test(test_find_after_sort),
		cmocka_unit_test(test_name_valid),
		cmocka_unit_test(test_evict_outcome),
		cmocka_unit_test(test_evict_body),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
