/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Command lines of `qoslet agent`, `qoslet record` and `qoslet replay`
 * (docs/qoslet-agent.md, docs/qoslet-record.md, docs/qoslet-replay.md).
 */
#ifndef QOSLET_CONFIG_AGENT_ARGS_H
#define QOSLET_CONFIG_AGENT_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "probes/probes.h"

enum agent_mode {
	AGENT_RUN = 0, /* qoslet agent: observe, decide, act */
	AGENT_RECORD,  /* qoslet record: observe and record what the policies would see */
	AGENT_REPLAY,  /* qoslet replay: run the policies on a recording */
};

struct agent_args {
	enum agent_mode mode;
	const char *config; /* --config FILE, NULL: the embedded defaults */
	bool check_config;  /* --check-config */
	bool print_config;  /* --print-config */
	bool dry_run;	    /* --dry-run (over the config's dry_run) */
	const char *record; /* --record FILE (agent) / -o FILE (record) */
	const char *replay; /* replay: the recording */
	bool json;	    /* replay -j */
	double duration_s;  /* --duration: stop after this long; 0 never */
	bool help;
	bool log_format;	 /* --log-format was given (log_format holds it) */
	struct probe_opts probe; /* --pin-dir, --hook */
};

/* -1 with a one-line reason in err on a usage error; 0 on success. */
int agent_args_parse(struct agent_args *a, enum agent_mode mode, int argc, char **argv, char *err,
		     size_t errlen);

/* --help texts. */
extern const char agent_usage[], record_usage[], replay_usage[];

#endif
