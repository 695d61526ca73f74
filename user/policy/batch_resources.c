// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "policy/batch_resources.h"

#include <errno.h>
#include <stdio.h>

/* The kernel's (and the kubelet's) bounds of cpu.shares, and its smallest CFS quota. */
#define SHARES_MIN   2
#define SHARES_MAX   262144
#define QUOTA_MIN_US 1000

int64_t batch_shares(uint64_t milli)
{
	uint64_t s = milli > SHARES_MAX ? SHARES_MAX : milli * 1024 / 1000;

	return s < SHARES_MIN ? SHARES_MIN : s > SHARES_MAX ? SHARES_MAX : (int64_t)s;
}

int64_t batch_shares_to_weight(int64_t shares)
{
	return 1 + (shares - SHARES_MIN) * 9999 / (SHARES_MAX - SHARES_MIN);
}

int64_t batch_quota_us(uint64_t milli, uint64_t period_us)
{
	/* 1e6 CPUs is past any machine: the product stays far below 2^63 */
	uint64_t q = (milli > 1000000000 ? 1000000000 : milli) * period_us / 1000;

	return q < QUOTA_MIN_US ? QUOTA_MIN_US : (int64_t)q;
}

static struct action *wish(struct action_list *out, enum act_kind kind, const struct pol_unit *u,
			   enum rule_id rule, int64_t value)
{
	struct action *a = action_add(out, kind, u, rule);

	if (a)
		a->value = value;
	return a;
}

static int unit_wishes(const struct pol_input *in, const struct batch_resources_config *cfg,
		       const struct pol_unit *u, struct action_list *out)
{
	const struct pol_batch *b = &u->batch;
	struct action *a;

	/*
	 * cpu.idle=1 (suppress.cpu_idle) runs the pod at the kernel's idle
	 * weight and refuses weight writes: the request's weight waits for it.
	 */
	if (b->cpu_request && u->idle != 1) {
		int64_t shares = batch_shares(b->cpu_request);

		a = wish(out, ACT_CPU_WEIGHT, u, RULE_BATCH_CPU_WEIGHT,
			 in->cgroup_v2 ? batch_shares_to_weight(shares) : shares);
		if (!a)
			return -ENOMEM;
		action_evidence(a, "batch_cpu_request_milli", (double)b->cpu_request);
		action_evidence(a, "shares", (double)shares);
	}
	if (cfg->cpu_quota && b->cpu_limit) {
		a = wish(out, ACT_CPU_QUOTA, u, RULE_BATCH_CPU_QUOTA,
			 batch_quota_us(b->cpu_limit, pol_unit_period_us(u)));
		if (!a)
			return -ENOMEM;
		action_evidence(a, "batch_cpu_limit_milli", (double)b->cpu_limit);
		action_evidence(a, "period_us", (double)pol_unit_period_us(u));
	}
	if (cfg->memory_limit && b->mem_limit) {
		a = wish(out, ACT_MEM_LIMIT, u, RULE_BATCH_MEMORY_LIMIT,
			 b->mem_limit > INT64_MAX ? INT64_MAX : (int64_t)b->mem_limit);
		if (!a)
			return -ENOMEM;
		action_evidence(a, "batch_memory_limit_bytes", (double)b->mem_limit);
		action_evidence(a, "batch_memory_request_bytes", (double)b->mem_request);
	}
	return 0;
}

/* A wish on a container's own cgroup: the target is the container, the class its pod's. */
static struct action *container_wish(struct action_list *out, enum act_kind kind,
				     const struct pol_container *c, const struct pol_unit *pod,
				     enum rule_id rule, int64_t value)
{
	struct action *a = action_add(out, kind, NULL, rule);

	if (!a)
		return NULL;
	a->id = c->id;
	a->cls = pod->cls;
	snprintf(a->path, sizeof(a->path), "%s", c->path);
	a->value = value;
	a->related_id = pod->id;
	snprintf(a->related, sizeof(a->related), "%s", pod->path);
	return a;
}

/*
 * A container's weight and memory limit, as the pod's, and on v2 its CFS
 * quota. On v1 the quota is not written (docs/batch-resources.md): v1
 * refuses a child quota above its parent's, so each move of the pod's quota
 * by suppression below the container's would drag the container's file
 * along; the pod's bounds it. v2 takes any child quota (the lowest on the
 * path applies), so the container's file stays while the pod's moves.
 * The weight only splits the pod's CPU among its containers, so it is
 * wished even while the pod's cpu.idle is 1 (the kernel refuses weight
 * writes on the idle cgroup itself, not on its children).
 */
static int container_wishes(const struct pol_input *in, const struct batch_resources_config *cfg,
			    const struct pol_container *c, struct action_list *out)
{
	const struct pol_unit *pod = pol_input_find(in, c->unit);
	struct action *a;

	if (!pod || pod->cls != QOS_BE)
		return 0;
	if (c->batch_cpu_request) {
		int64_t shares = batch_shares(c->batch_cpu_request);

		a = container_wish(out, ACT_CPU_WEIGHT, c, pod, RULE_BATCH_CONTAINER_CPU_WEIGHT,
				   in->cgroup_v2 ? batch_shares_to_weight(shares) : shares);
		if (!a)
			return -ENOMEM;
		action_evidence(a, "batch_cpu_request_milli", (double)c->batch_cpu_request);
		action_evidence(a, "shares", (double)shares);
	}
	if (cfg->cpu_quota && c->batch_cpu_limit && in->cgroup_v2 && c->period_us) {
		a = container_wish(out, ACT_CPU_QUOTA, c, pod, RULE_BATCH_CONTAINER_CPU_QUOTA,
				   batch_quota_us(c->batch_cpu_limit, c->period_us));
		if (!a)
			return -ENOMEM;
		action_evidence(a, "batch_cpu_limit_milli", (double)c->batch_cpu_limit);
		action_evidence(a, "period_us", (double)c->period_us);
	}
	if (cfg->memory_limit && c->batch_mem_limit) {
		a = container_wish(out, ACT_MEM_LIMIT, c, pod, RULE_BATCH_CONTAINER_MEMORY_LIMIT,
				   c->batch_mem_limit > INT64_MAX ? INT64_MAX
								  : (int64_t)c->batch_mem_limit);
		if (!a)
			return -ENOMEM;
		action_evidence(a, "batch_memory_limit_bytes", (double)c->batch_mem_limit);
	}
	return 0;
}

int batch_resources_run(const struct pol_input *in, const struct batch_resources_config *cfg,
			struct action_list *out)
{
	int err = 0;

	if (!cfg->enabled)
		return 0;
	/* Only BE pods take batch resources (a class rule may make one LS: then not). */
	for (size_t i = 0; !err && i < in->n_units; i++)
		if (in->units[i].cls == QOS_BE)
			err = unit_wishes(in, cfg, &in->units[i], out);
	for (size_t i = 0; !err && i < in->n_containers; i++)
		err = container_wishes(in, cfg, &in->containers[i], out);
	return err;
}
