/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef QOSLET_CLI_MEMSTALL_VIEW_H
#define QOSLET_CLI_MEMSTALL_VIEW_H

#include "cli/mem_explain.h"
#include "cli/view.h"

extern const struct view_ops memstall_view;

/*
 * The cgroups of `delta` with memstall activity (mem_explain_active), most
 * stalled first: the stall as the agent counts it (x, this interval's),
 * then reclaim (direct + memcg) time, I/O wait, OOM kills, id. `out` has
 * room for delta->n_cgroups; returns how many were stored.
 */
size_t memstall_rank(const struct snapshot *delta, const struct mem_explain *x,
		     const struct cg_sample **out);

#endif
