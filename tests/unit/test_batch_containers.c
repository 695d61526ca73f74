// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Batch requests into BE containers' own cgroups: the wishes per container
 * (weight and memory limit; the quota on v2 only), and the plan's handling of targets
 * that are containers: asked once, left alone while the pod's quota moves,
 * asked again when someone else changed them, released when their batch
 * resources go, forgotten when they vanish.
 */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "batch_plan.h"
#include "evidence.h"

static const struct batch_resources_config on = {
	.enabled = true, .cpu_quota = true, .memory_limit = true};

static struct pol_unit units[3];
static struct pol_container containers[3];
static struct pol_input in = {
	.units = units, .n_units = 3, .containers = containers, .n_containers = 3};

#define MIB (1ull << 20)

/*
 * Units: 10 a BE pod (its cpu.idle 1, as suppress.cpu_idle leaves it), 11 a
 * BE pod, 12 an LS pod. Containers: 100 of pod 10 asks 500m, limits 1000m
 * and 256 MiB; 101 of pod 11 only a 64 MiB limit; 102 of the LS pod asks too.
 */
static void reset(void)
{
	memset(units, 0, sizeof(units));
	memset(containers, 0, sizeof(containers));
	for (int i = 0; i < 3; i++) {
		units[i].id = 10 + i;
		units[i].cls = i == 2 ? QOS_LS : QOS_BE;
		units[i].quota_us = -1;
		units[i].period_us = 100000;
		units[i].weight = 2;
		units[i].mem_max = -1;
		snprintf(units[i].path, sizeof(units[i].path), "kubepods/besteffort/pod%d", i);
		containers[i].id = 100 + i;
		containers[i].unit = 10 + i;
		containers[i].weight = 2;
		containers[i].mem_max = -1;
		containers[i].quota_us = -1;
		containers[i].period_us = 100000;
		snprintf(containers[i].path, sizeof(containers[i].path), "%s/c%d", units[i].path,
			 i);
	}
	units[0].idle = 1;
	units[0].batch = (struct pol_batch){500, 1000, 256 * MIB, 256 * MIB};
	units[1].batch = (struct pol_batch){0, 0, 64 * MIB, 64 * MIB};
	units[2].batch = units[0].batch;
	containers[0].batch_cpu_request = 500;
	containers[0].batch_cpu_limit = 1000;
	containers[0].batch_mem_limit = 256 * MIB;
	containers[1].batch_mem_limit = 64 * MIB;
	containers[2] = containers[0];
	containers[2].id = 102;
	containers[2].unit = 12;
	in.cgroup_v2 = false;
}

/* The wish of kind k on target id, or NULL. */
static const struct action *find(const struct action_list *l, uint64_t id, enum act_kind k)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].id == id && l->v[i].kind == k)
			return &l->v[i];
	return NULL;
}

static size_t count_id(const struct action_list *l, uint64_t id)
{
	size_t n = 0;

	for (size_t i = 0; i < l->n; i++)
		n += l->v[i].id == id;
	return n;
}

static void test_container_wishes(void **state)
{
	struct action_list out = {0};
	const struct action *a;

	(void)state;
	reset();
	for (int v2 = 0; v2 < 2; v2++) {
		in.cgroup_v2 = v2;
		action_list_clear(&out);
		assert_int_equal(batch_resources_run(&in, &on, &out), 0);
		/* the weight, though the pod's cpu.idle is 1: the kernel takes a child's */
		a = find(&out, 100, ACT_CPU_WEIGHT);
		assert_non_null(a);
		assert_int_equal(a->value, v2 ? 20 : 512);
		assert_int_equal(a->rule, RULE_BATCH_CONTAINER_CPU_WEIGHT);
		assert_string_equal(a->path, "kubepods/besteffort/pod0/c0");
		assert_int_equal(a->cls, QOS_BE);
		assert_int_equal(a->related_id, 10);
		assert_true(evidence(a, "batch_cpu_request_milli") == 500);
		assert_true(evidence(a, "shares") == 512);
		a = find(&out, 100, ACT_MEM_LIMIT);
		assert_non_null(a);
		assert_int_equal(a->value, 256 * MIB);
		assert_int_equal(a->rule, RULE_BATCH_CONTAINER_MEMORY_LIMIT);
		assert_true(evidence(a, "batch_memory_limit_bytes") == 256 * MIB);
		/* a quota from the container's limit on v2 only (docs/batch-resources.md) */
		a = find(&out, 100, ACT_CPU_QUOTA);
		if (v2) {
			assert_non_null(a);
			assert_int_equal(a->value, 100000);
			assert_int_equal(a->rule, RULE_BATCH_CONTAINER_CPU_QUOTA);
			assert_true(evidence(a, "batch_cpu_limit_milli") == 1000);
			assert_true(evidence(a, "period_us") == 100000);
		} else {
			assert_null(a);
		}
		/* a limit without a request: the memory limit only */
		assert_int_equal(count_id(&out, 101), 1);
		assert_non_null(find(&out, 101, ACT_MEM_LIMIT));
		/* an LS pod's container: nothing */
		assert_int_equal(count_id(&out, 102), 0);
	}
	/* the memory switch holds for containers too; disabled: nothing at all */
	{
		struct batch_resources_config no_mem = on, off = on;

		no_mem.memory_limit = false;
		off.enabled = false;
		action_list_clear(&out);
		assert_int_equal(batch_resources_run(&in, &no_mem, &out), 0);
		assert_null(find(&out, 100, ACT_MEM_LIMIT));
		assert_non_null(find(&out, 100, ACT_CPU_WEIGHT));
		assert_int_equal(count_id(&out, 101), 0);
		action_list_clear(&out);
		assert_int_equal(batch_resources_run(&in, &off, &out), 0);
		assert_int_equal(out.n, 0);
	}
	/* a container whose pod left the input: nothing */
	in.n_units = 1;
	action_list_clear(&out);
	assert_int_equal(batch_resources_run(&in, &on, &out), 0);
	assert_int_equal(count_id(&out, 101), 0);
	in.n_units = 3;
	action_list_free(&out);
}

/* One tick of batch resources plus suppression's quota on pod 10; the writes land. */
static void tick(struct plan_state *st, int64_t suppress_quota, struct action_list *out)
{
	batch_plan_tick(st, &in, &on, &units[0], suppress_quota, out);
	for (size_t i = 0; i < out->n; i++) {
		const struct action *x = &out->v[i];
		struct pol_container *c = NULL;

		for (size_t k = 0; k < in.n_containers; k++)
			if (containers[k].id == x->id)
				c = &containers[k];
		if (x->kind == ACT_CPU_QUOTA && x->id == 10)
			units[0].quota_us = x->value;
		/* the pods' limits land too: a look finds what was asked */
		for (size_t k = 0; k < in.n_units; k++)
			if (units[k].id == x->id && x->kind == ACT_MEM_LIMIT && !x->restore)
				units[k].mem_max = x->value;
		if (!c || x->restore)
			continue;
		if (x->kind == ACT_CPU_WEIGHT)
			c->weight = x->value;
		if (x->kind == ACT_MEM_LIMIT)
			c->mem_max = x->value;
		if (x->kind == ACT_CPU_QUOTA)
			c->quota_us = x->value;
	}
}

static void plan_container_targets(bool v2)
{
	struct plan_state st = {0};
	struct action_list out = {0};
	const struct action *a;

	reset();
	in.cgroup_v2 = v2;
	tick(&st, 0, &out);
	assert_non_null(find(&out, 100, ACT_CPU_WEIGHT));
	assert_non_null(find(&out, 100, ACT_MEM_LIMIT));
	assert_non_null(find(&out, 101, ACT_MEM_LIMIT));
	assert_int_equal(find(&out, 100, ACT_CPU_QUOTA) != NULL, v2);
	/*
	 * The pod's quota moves every tick under suppression, below the
	 * container's on v2: the containers are not asked again.
	 */
	for (int64_t q = 20000; q <= 60000; q += 10000) {
		tick(&st, q, &out);
		assert_int_equal(count_id(&out, 100), 0);
		assert_int_equal(count_id(&out, 101), 0);
		assert_non_null(find(&out, 10, ACT_CPU_QUOTA));
	}
	/* steady: nothing */
	tick(&st, 60000, &out);
	assert_int_equal(out.n, 0);
	/* someone else (the kubelet, a restart of the container) set the weight back */
	containers[0].weight = 2;
	tick(&st, 60000, &out);
	a = find(&out, 100, ACT_CPU_WEIGHT);
	assert_non_null(a);
	assert_int_equal(a->value, v2 ? 20 : 512);
	assert_int_equal(out.n, 1);
	/* container 100's batch memory limit goes (a new pod list): the owner's comes back */
	containers[0].batch_mem_limit = 0;
	tick(&st, 60000, &out);
	assert_int_equal(out.n, 1);
	a = find(&out, 100, ACT_MEM_LIMIT);
	assert_non_null(a);
	assert_true(a->restore);
	assert_int_equal(a->rule, RULE_PLAN_RELEASE);
	assert_string_equal(a->path, "kubepods/besteffort/pod0/c0");
	assert_int_equal(a->cls, QOS_BE);
	/* container 101 vanishes: its entry goes without a release (nothing to write) */
	containers[1] = containers[2];
	in.n_containers = 2;
	tick(&st, 60000, &out);
	assert_int_equal(out.n, 0);
	/* back with the same id (it never left, the list did): asked anew */
	reset();
	in.cgroup_v2 = v2;
	containers[0].weight = v2 ? 20 : 512;
	containers[0].mem_max = 256 * MIB;
	containers[0].quota_us = v2 ? 100000 : -1;
	units[0].quota_us = 60000;
	in.n_containers = 3;
	tick(&st, 60000, &out);
	assert_int_equal(count_id(&out, 100), 0);
	assert_non_null(find(&out, 101, ACT_MEM_LIMIT));
	plan_state_free(&st);
	action_list_free(&out);
}

static void test_plan_container_targets_v1(void **state)
{
	(void)state;
	plan_container_targets(false);
}

static void test_plan_container_targets_v2(void **state)
{
	(void)state;
	plan_container_targets(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_container_wishes),
		cmocka_unit_test(test_plan_container_targets_v1),
		cmocka_unit_test(test_plan_container_targets_v2),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
