/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The node-level part of the policies' input: capacity (the managed
 * subtree's CPU and memory limits when set, else the machine's), the CPUs'
 * topology, memory in use, and how busy the CPUs were.
 */
#ifndef QOSLET_COLLECT_NODE_H
#define QOSLET_COLLECT_NODE_H

#include "cgroup/knob.h"
#include "policy/model.h"

struct node_reader;

struct node_reader *node_reader_new(void);
void node_reader_free(struct node_reader *n);

/*
 * Fills in->cpus, cpu_list, topo, mem_capacity, mem_used, node_cpu_used
 * (0 on the first call: no interval yet), cgroup_v2 and has_cpu_idle.
 * Returns 0 or -errno.
 */
int node_read(struct node_reader *n, const struct cgroup_ctrls *c, const char *subtree,
	      double interval_s, struct pol_input *in);

#endif
