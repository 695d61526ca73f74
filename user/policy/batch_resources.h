/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Batch requests into BE cgroups (docs/batch-resources.md): the kubelet
 * cannot write extended resources into cgroups, so for each BE pod that
 * asks for kubernetes.io/batch-cpu or batch-memory this policy wishes
 *  - the CPU weight from the batch-cpu request (v1 cpu.shares = milli x
 *    1024 / 1000, at least 2; v2 cpu.weight by the kubelet's conversion),
 *  - the CFS quota from the batch-cpu limit (milli x period / 1000),
 *  - the memory limit from the batch-memory limit,
 * on the pod's cgroup, every tick: the plan keeps the lowest quota or
 * memory limit of all policies, so suppression or an interference cap may
 * go below the batch limit, and when they lapse the batch limit stands.
 */
#ifndef QOSLET_POLICY_BATCH_RESOURCES_H
#define QOSLET_POLICY_BATCH_RESOURCES_H

#include <stdint.h>

#include "policy/action.h"
#include "policy/policy_config.h"
#include "policy/model.h"

/* v1 cpu.shares for a request in milli-CPUs, as the kubelet computes it. */
int64_t batch_shares(uint64_t milli);
/* v2 cpu.weight for v1 shares (the kubelet's conversion; cg_weight_request_cpus inverts it). */
int64_t batch_shares_to_weight(int64_t shares);
/* CFS quota in us for a limit in milli-CPUs and a period (at least the kernel's 1 ms). */
int64_t batch_quota_us(uint64_t milli, uint64_t period_us);

/* One tick: appends the wishes to out. Pure. Returns 0 or -ENOMEM. */
int batch_resources_run(const struct pol_input *in, const struct batch_resources_config *cfg,
			struct action_list *out);

#endif
