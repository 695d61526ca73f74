// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `qoslet replay`: the agent's policies on a recording, offline. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/plan.h"
#include "policy/policy.h"
#include "config/agent_args.h"
#include "record/replay.h"
#include "config/agent_config.h"
#include "decision/decision.h"
#include "record/record.h"

static void print_text(const struct decision *d)
{
	const struct action *a = &d->act;
	char value[32];
	const char *after = value;

	if (a->kind == ACT_CPUSET)
		after = a->cpus;
	else if (a->kind == ACT_EVICT || a->kind == ACT_REPORT)
		after = a->related_id ? a->related : "-";
	else if (a->restore)
		after = "(owner's value)";
	else
		snprintf(value, sizeof(value), "%" PRId64, a->value);
	printf("%-6" PRIu64 " %.3f  %-10s %-24s %-4s %s%s  %s -> %s%s\n", d->seq, d->ts_ns / 1e9,
	       act_kind_name(a->kind), rule_name(a->rule),
	       a->kind == ACT_CAPACITY ? "-" : qos_class_name(a->cls),
	       a->kind == ACT_CAPACITY ? "" : "/", a->kind == ACT_CAPACITY ? a->resource : a->path,
	       d->before, a->kind == ACT_REPORT && a->related_id ? "culprit /" : "", after);
}

static int load_config(const char *path, json_t *recorded, struct agent_config *cfg)
{
	char err[512], *text;
	int ret;

	if (path)
		ret = config_load(cfg, path, err, sizeof(err));
	else {
		text = json_dumps(recorded, JSON_COMPACT);
		ret = text ? config_parse(cfg, text, err, sizeof(err)) : -ENOMEM;
		free(text);
	}
	if (ret)
		fprintf(stderr, "qoslet replay: %s config: %s\n", path ? path : "recorded", err);
	return ret;
}

static int replay(const struct agent_args *args, struct record_reader *r, struct agent_config *cfg)
{
	struct decision_log log;
	struct policy_state st = {0};
	struct action_list actions = {0};
	struct pol_input in = {0};
	char err[512];
	int ret;

	if (decision_log_init(&log, 1, args->json ? stdout : NULL))
		return -ENOMEM;
	if (!args->json)
		printf("%-6s %-14s %-10s %-24s %-4s %s\n", "SEQ", "TIME", "KIND", "RULE", "CLASS",
		       "TARGET  BEFORE -> AFTER");
	while ((ret = record_next(r, &in, err, sizeof(err))) > 0) {
		action_list_clear(&actions);
		/* The recording does not say which readings were unwhole: all count as whole. */
		ret = policy_tick(&in, &cfg->policy, cfg->dry_run, &st, &actions);
		if (ret)
			break;
		for (size_t i = 0; i < actions.n; i++) {
			struct decision d = {
				.ts_ns = in.ts_ns, .act = actions.v[i], .outcome = OUT_REPLAY};
			const struct pol_unit *u = pol_input_owner(&in, d.act.id);

			plan_target_text(&in, d.act.id, d.act.kind, d.before, sizeof(d.before));
			if (u)
				snprintf(d.pod_uid, sizeof(d.pod_uid), "%s", u->pod_uid);
			decision_log_add(&log, &d);
			if (!args->json)
				print_text(&d);
		}
	}
	if (ret < 0 && ret != -ENOMEM)
		fprintf(stderr, "qoslet replay: %s: %s\n", args->replay, err);
	pol_input_free(&in);
	action_list_free(&actions);
	policy_state_free(&st);
	decision_log_free(&log);
	return ret;
}

int replay_main(int argc, char **argv)
{
	struct agent_args args;
	struct agent_config cfg;
	struct record_reader r;
	json_t *recorded = NULL;
	char err[512];
	int ret;

	if (agent_args_parse(&args, AGENT_REPLAY, argc, argv, err, sizeof(err))) {
		fprintf(stderr, "qoslet replay: %s (see 'qoslet replay --help')\n", err);
		return 2;
	}
	if (args.help) {
		fputs(replay_usage, stdout);
		return 0;
	}
	if (record_open(&r, args.replay, &recorded, err, sizeof(err))) {
		fprintf(stderr, "qoslet replay: %s\n", err);
		return 2;
	}
	ret = load_config(args.config, recorded, &cfg) ? 2 : 0;
	if (!ret)
		ret = replay(&args, &r, &cfg) ? 1 : 0;
	json_decref(recorded);
	record_close(&r);
	return ret;
}
