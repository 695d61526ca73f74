/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef QOSLET_CLI_MEMSTALL_VIEW_H
#define QOSLET_CLI_MEMSTALL_VIEW_H

#include "cli/view.h"

extern const struct view_ops memstall_view;

/*
 * The cgroups of `delta` that stalled or lost a task to the OOM killer,
 * most stalled first (direct + memcg time; then OOM kills; then id). `out`
 * has room for delta->n_cgroups; returns how many were stored.
 */
size_t memstall_rank(const struct snapshot *delta, const struct cg_sample **out);

#endif
