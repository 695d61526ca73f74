// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "policy/memory_qos.h"

#include <errno.h>
#include <math.h>

static int64_t page_down(double bytes)
{
	if (bytes <= 0)
		return 0;
	return (int64_t)(bytes / MEMORY_QOS_PAGE) * MEMORY_QOS_PAGE;
}

static const struct memory_qos_class *class_config(const struct memory_qos_config *cfg,
						   enum qos_class c)
{
	return c == QOS_LSE ? &cfg->lse : c == QOS_LSR ? &cfg->lsr : &cfg->ls;
}

/* One protection wish (memory.min or .low) of an LS unit, when it protects anything. */
static int protect(const struct pol_unit *u, const struct memory_qos_config *cfg,
		   enum act_kind kind, double share, struct action_list *out)
{
	double want = (double)u->request_mem * share, cap = -1;
	bool capped = false;
	int64_t value;
	struct action *a;

	if (u->mem_max > 0) {
		cap = (double)u->mem_max * cfg->limit_cap;
		capped = want > cap;
		if (capped)
			want = cap;
	}
	value = page_down(want);
	/* limit_cap < 1 keeps it below the limit; a limit of a few pages could still round to it */
	if (!value || (u->mem_max > 0 && value >= u->mem_max))
		return 0;
	a = action_add(out, kind, u,
		       kind == ACT_MEM_MIN ? RULE_MEMORY_QOS_MIN : RULE_MEMORY_QOS_LOW);
	if (!a)
		return -ENOMEM;
	a->value = value;
	action_evidence(a, "request_bytes", (double)u->request_mem);
	action_evidence(a, "limit_bytes", (double)u->mem_max);
	action_evidence(a, "share", share);
	action_evidence(a, "limit_cap_bytes", cap);
	action_evidence(a, "capped", capped);
	action_evidence(a, "value_bytes", (double)value);
	return 0;
}

/* memory.high of a BE unit with a limit: a throttle below it, as the kubelet and koordlet do. */
static int high_from_limit(const struct pol_unit *u, const struct memory_qos_config *cfg,
			   struct action_list *out)
{
	double request = fmin((double)u->request_mem, (double)u->mem_max);
	int64_t value = page_down(request + cfg->throttling * ((double)u->mem_max - request));
	struct action *a;

	/* At or above the limit it would never act: memory.max reclaims first. */
	if (value >= u->mem_max || !value)
		return 0;
	a = action_add(out, ACT_MEM_HIGH, u, RULE_MEMORY_QOS_HIGH_LIMIT);
	if (!a)
		return -ENOMEM;
	a->value = value;
	action_evidence(a, "request_bytes", (double)u->request_mem);
	action_evidence(a, "limit_bytes", (double)u->mem_max);
	action_evidence(a, "throttling", cfg->throttling);
	action_evidence(a, "value_bytes", (double)value);
	return 0;
}

/*
 * memory.high of a BE unit without a limit: what it uses plus its part of
 * free_share of the node's free memory, so BE slows (reclaims its own
 * pages) as the node fills instead of running into memory eviction.
 */
static int high_from_free(const struct pol_input *in, const struct pol_unit *u,
			  const struct memory_qos_config *cfg, size_t n_unlimited,
			  struct action_list *out)
{
	double free =
		in->mem_capacity > in->mem_used ? (double)(in->mem_capacity - in->mem_used) : 0;
	double want = (double)u->mem_used + cfg->free_share * free / (double)n_unlimited;
	int64_t value = page_down(fmax(want, (double)u->request_mem));
	bool kept = false;
	struct action *a;

	/* Free memory moves every tick: small moves keep the value in place (no write). */
	if (u->mem_high >= 0 && fabs((double)value - (double)u->mem_high) <
					cfg->min_change * (double)in->mem_capacity) {
		value = u->mem_high;
		kept = true;
	}
	if (!value)
		return 0;
	a = action_add(out, ACT_MEM_HIGH, u, RULE_MEMORY_QOS_HIGH_FREE);
	if (!a)
		return -ENOMEM;
	a->value = value;
	action_evidence(a, "request_bytes", (double)u->request_mem);
	action_evidence(a, "used_bytes", (double)u->mem_used);
	action_evidence(a, "node_free_bytes", free);
	action_evidence(a, "free_share", cfg->free_share);
	action_evidence(a, "unlimited_be_units", (double)n_unlimited);
	action_evidence(a, "kept", kept);
	action_evidence(a, "value_bytes", (double)value);
	return 0;
}

int memory_qos_run(const struct pol_input *in, const struct memory_qos_config *cfg,
		   struct action_list *out)
{
	size_t n_unlimited = 0;
	int err = 0;

	if (!cfg->enabled)
		return 0;
	for (size_t i = 0; i < in->n_units; i++)
		n_unlimited += in->units[i].has_mem_qos && in->units[i].cls == QOS_BE &&
			       in->units[i].mem_max <= 0;
	for (size_t i = 0; !err && i < in->n_units; i++) {
		const struct pol_unit *u = &in->units[i];

		if (!u->has_mem_qos)
			continue;
		if (qos_is_ls(u->cls)) {
			const struct memory_qos_class *k = class_config(cfg, u->cls);

			err = protect(u, cfg, ACT_MEM_MIN, k->min_share, out);
			if (!err)
				err = protect(u, cfg, ACT_MEM_LOW, k->low_share, out);
		} else if (u->cls == QOS_BE) {
			if (u->mem_max > 0)
				err = high_from_limit(u, cfg, out);
			else if (in->mem_capacity)
				err = high_from_free(in, u, cfg, n_unlimited, out);
		}
	}
	return err;
}
