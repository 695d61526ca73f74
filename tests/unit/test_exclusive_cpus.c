// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The kubelet's cpu_manager_state: its formats read, bad ones refused, and
 * the reader keeping its last good reading when the file goes bad.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "collect/exclusive_cpus.h"

struct parsed {
	char policy[32], list[POL_CPULIST_MAX];
	struct exclusive_pod *pods;
	size_t n;
};

static int parse(const char *text, struct parsed *p)
{
	free(p->pods);
	memset(p, 0, sizeof(*p));
	return exclusive_cpus_parse(text, p->policy, sizeof(p->policy), p->list, sizeof(p->list),
				    &p->pods, &p->n);
}

static void test_formats(void **state)
{
	struct parsed p = {0};

	(void)state;
	/* Since 1.18: pod UID -> container -> CPUs; an app container reuses its init's. */
	assert_int_equal(parse("{\"policyName\":\"static\",\"defaultCpuSet\":\"0,3,5-7\","
			       "\"entries\":{\"b-uid\":{\"init\":\"4\",\"app\":\"4\"},"
			       "\"a-uid\":{\"app\":\"1-2\"}},\"checksum\":1234}",
			       &p),
			 0);
	assert_string_equal(p.policy, "static");
	assert_string_equal(p.list, "1-2,4");
	assert_int_equal(p.n, 2);
	assert_string_equal(p.pods[0].uid, "a-uid");
	assert_int_equal(p.pods[0].cpus, 2);
	assert_string_equal(p.pods[1].uid, "b-uid");
	assert_int_equal(p.pods[1].cpus, 1);
	/* The none policy: nothing exclusive. */
	assert_int_equal(
		parse("{\"policyName\":\"none\",\"defaultCpuSet\":\"\",\"checksum\":1}", &p), 0);
	assert_string_equal(p.policy, "none");
	assert_string_equal(p.list, "");
	assert_int_equal(p.n, 0);
	/* The first format: container id -> CPUs, no pod named; the CPUs still count. */
	assert_int_equal(parse("{\"policyName\":\"static\",\"defaultCpuSet\":\"0-4\","
			       "\"entries\":{\"3f2a\":\"5-6\"},\"checksum\":1}",
			       &p),
			 0);
	assert_string_equal(p.list, "5-6");
	assert_int_equal(p.n, 0);
	free(p.pods);
}

static void test_refused(void **state)
{
	static const char *const bad[] = {
		"",
		"not json",
		"[]",
		"{\"defaultCpuSet\":\"0-3\"}",		      /* no policyName */
		"{\"policyName\":\"static\",\"entries\":[]}", /* entries not a map */
		"{\"policyName\":\"static\",\"entries\":{\"u\":{\"c\":\"1-x\"}}}", /* not a list */
		"{\"policyName\":\"static\",\"entries\":{\"u\":{\"c\":3}}}",
	};
	struct parsed p = {0};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		print_message("%s\n", bad[i]);
		assert_int_equal(parse(bad[i], &p), -EINVAL);
		assert_null(p.pods);
		assert_int_equal(p.n, 0);
	}
}

static void put(const char *path, const char *text)
{
	char tmp[PATH_MAX];
	FILE *f;

	/* as the kubelet writes it: a new file renamed over the old one */
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(rename(tmp, path), 0);
}

static void test_update(void **state)
{
	char dir[] = "/tmp/qoslet-excl-XXXXXX", path[PATH_MAX];
	struct exclusive_cpus x = {0};

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/cpu_manager_state", dir);
	/* Absent: nothing exclusive, no error. */
	assert_int_equal(exclusive_cpus_update(&x, path), 0);
	assert_string_equal(x.list, "");
	put(path, "{\"policyName\":\"static\",\"defaultCpuSet\":\"0,3\","
		  "\"entries\":{\"pod-a\":{\"app\":\"1-2\"}},\"checksum\":1}");
	assert_int_equal(exclusive_cpus_update(&x, path), 0);
	assert_string_equal(x.list, "1-2");
	assert_int_equal(exclusive_cpus_of_pod(&x, "pod-a"), 2);
	assert_int_equal(exclusive_cpus_of_pod(&x, "pod-b"), 0);
	assert_int_equal(exclusive_cpus_of_pod(&x, ""), 0);
	/* A bad version keeps the last good reading: the CPUs stay protected. */
	put(path, "{\"policyName\":");
	assert_int_equal(exclusive_cpus_update(&x, path), -EINVAL);
	assert_string_equal(x.list, "1-2");
	assert_int_equal(exclusive_cpus_of_pod(&x, "pod-a"), 2);
	/* The pod gone, another pinned. */
	put(path, "{\"policyName\":\"static\",\"defaultCpuSet\":\"0-2\","
		  "\"entries\":{\"pod-b\":{\"app\":\"3\"}},\"checksum\":2}");
	assert_int_equal(exclusive_cpus_update(&x, path), 0);
	assert_string_equal(x.list, "3");
	assert_int_equal(exclusive_cpus_of_pod(&x, "pod-a"), 0);
	assert_int_equal(exclusive_cpus_of_pod(&x, "pod-b"), 1);
	/* The file removed (the kubelet's state reset): nothing exclusive. */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(exclusive_cpus_update(&x, path), 0);
	assert_string_equal(x.list, "");
	assert_int_equal(exclusive_cpus_of_pod(&x, "pod-b"), 0);
	exclusive_cpus_free(&x);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_formats),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_update),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
