/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Decision records: every action the agent takes (or, in dry-run and
 * replay, would take), with time, target, values before and after, the rule
 * that fired, the numbers it saw and what came of it. They are written as
 * JSON lines, kept in a bounded ring for the reporting layer, and counted.
 * They sit between the policies and the sinks, so they depend on the
 * policies' actions only: the agent, replay and user/report/ all take them.
 */
#ifndef QOSLET_DECISION_DECISION_H
#define QOSLET_DECISION_DECISION_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "policy/action.h"
#include "decision/outcome.h"

struct decision {
	uint64_t seq;	/* 1, 2, ... in this run */
	uint64_t ts_ns; /* the tick's time (CLOCK_REALTIME) */
	struct action act;
	char pod_uid[40];
	enum decision_outcome outcome;
	int err; /* errno of a failed write, else 0 */
	char before[256];
	char after[256];
	char why[160]; /* why it was refused or failed, else "" */
};

/* The record as one JSON object (field list in docs/qoslet-agent.md). */
json_t *decision_to_json(const struct decision *d);

/* How many decisions of one kind, rule and outcome: the metrics' counters. */
struct decision_count {
	enum act_kind kind;
	enum rule_id rule;
	enum decision_outcome outcome;
	uint64_t n;
};

/*
 * The most recent decisions, oldest dropped first, with counters of all of
 * them. Each is kept as its JSON text, rendered once when added: /decisions
 * serves them all every interval, and rendering the whole ring anew each
 * time churned the heap by megabytes (docs/soak/README.md).
 */
struct decision_log {
	char **ring;	     /* JSON objects; NULL where rendering ran out of memory */
	size_t cap, head, n; /* ring[(head + i) % cap], i < n, oldest first */
	uint64_t seq;
	uint64_t dropped; /* pushed out of the ring (still counted and written) */
	struct decision_count *counts;
	size_t n_counts;
	FILE *out; /* JSON lines, or NULL */
};

/* cap > 0; out may be NULL. Returns 0 or -ENOMEM. */
int decision_log_init(struct decision_log *l, size_t cap, FILE *out);
void decision_log_free(struct decision_log *l);

/* Numbers d, stores it, counts it and writes it. Returns 0 or -ENOMEM (counting). */
int decision_log_add(struct decision_log *l, struct decision *d);

/* The JSON text of the i-th most recent decision still held (0 = newest), or NULL. */
const char *decision_log_recent(const struct decision_log *l, size_t i);

#endif
