/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's line per interval off Kubernetes, where it only observes:
 * which unit's tasks waited longest for a CPU (run-queue p99) and behind
 * whom they waited most. A pure function of the tick's record.
 */
#ifndef QOSLET_AGENT_SUMMARY_H
#define QOSLET_AGENT_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/model.h"

/*
 * Writes the line into buf, e.g. "run queue: worst p99 4.1 ms in
 * /system.slice/cron.service (230 waits), 61% of it behind
 * /user.slice/user-1000.slice". Units with fewer than min_waits waits in
 * the interval do not count: a p99 of three waits says nothing. rq_on: the
 * sched probe runs (else the line says the latency is not measured).
 */
void summary_run_queue(const struct pol_input *in, bool rq_on, uint64_t min_waits, char *buf,
		       size_t size);

#endif
