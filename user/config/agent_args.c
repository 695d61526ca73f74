// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "config/agent_args.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "opt_error.h"

enum {
	OPT_CONFIG = 1000,
	OPT_CHECK,
	OPT_PRINT,
	OPT_DRY_RUN,
	OPT_RECORD,
	OPT_DURATION,
	OPT_PIN_DIR,
	OPT_HOOK,
	OPT_LOG_FORMAT,
};

#define COMMON_HELP                                                                                \
	"      --config FILE     the agent's config (JSON, docs/agent-config.md); default:\n"      \
	"                        the embedded defaults ('qoslet agent --print-config')\n"          \
	"      --pin-dir DIR     where the maps are pinned (default " QOSLET_DEFAULT_PIN_DIR ")\n" \
	"      --hook HOOK       auto (default: tp_btf, the cheapest per event; raw_tp\n"          \
	"                        where the kernel refuses it), tp_btf or raw_tp\n"                 \
	"      --duration SECONDS  stop after this long (default: until SIGINT/SIGTERM)\n"         \
	"      --log-format FORMAT  text (default: RFC 3339 time, level, message) or json\n"       \
	"                        (one {\"time\", \"level\", \"msg\"} object a line), on stderr\n"  \
	"  -v, --verbose         more diagnostics on stderr\n"                                     \
	"  -h, --help            this text\n"

const char agent_usage[] =
	"Usage: qoslet agent [--config FILE] [--dry-run] [--record FILE] [OPTIONS]\n"
	"       qoslet agent --check-config [--config FILE]\n"
	"       qoslet agent --print-config [--config FILE]\n"
	"\n"
	"The node controller: every interval (and at once when a latency-sensitive\n"
	"cgroup's run-queue wait crosses its threshold) it reads the probes and the\n"
	"cgroup files of the managed subtree, runs the policies (BE suppression, CPU\n"
	"burst, memory and CPU-satisfaction eviction, interference detection) and\n"
	"applies their decisions, writing one JSON line per decision. A clean stop\n"
	"(SIGINT, SIGTERM) restores every cgroup value it changed; a restart after a\n"
	"crash restores what the previous run left. Manual: docs/qoslet-agent.md.\n"
	"\n"
	"Options:\n"
	"      --check-config    validate the config and exit (0 valid, 2 invalid)\n"
	"      --print-config    print the effective config and exit\n"
	"      --dry-run         decide and record, change nothing\n"
	"      --record FILE     also record what the policies see (see qoslet replay)\n" COMMON_HELP;

const char record_usage[] =
	"Usage: qoslet record -o FILE [--config FILE] [OPTIONS]\n"
	"\n"
	"Records, once per interval, what the agent's policies would see (units,\n"
	"settings, CPU use, run-queue histograms, blame, memory) without deciding or\n"
	"changing anything. 'qoslet replay FILE' runs the policies on it.\n"
	"\n"
	"Options:\n"
	"  -o, --output FILE     the recording (JSON lines; '-' for stdout)\n" COMMON_HELP;

const char replay_usage[] =
	"Usage: qoslet replay FILE [--config FILE] [-j]\n"
	"\n"
	"Runs the agent's policies on a recording (qoslet record, or qoslet agent\n"
	"--record) and prints the decisions they make: what these thresholds would\n"
	"have done then. Without --config the recorded config is used, and a\n"
	"recording of a live run replays to the decisions that run made.\n"
	"\n"
	"Options:\n"
	"      --config FILE     policies' config to try instead of the recorded one\n"
	"  -j, --json            one JSON object per decision (as the agent writes them)\n"
	"  -h, --help            this text\n";

static int fail(char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "%s", what);
	return -1;
}

int agent_args_parse(struct agent_args *a, enum agent_mode mode, int argc, char **argv, char *err,
		     size_t errlen)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, OPT_CONFIG},
		{"check-config", no_argument, NULL, OPT_CHECK},
		{"print-config", no_argument, NULL, OPT_PRINT},
		{"dry-run", no_argument, NULL, OPT_DRY_RUN},
		{"record", required_argument, NULL, OPT_RECORD},
		{"output", required_argument, NULL, 'o'},
		{"duration", required_argument, NULL, OPT_DURATION},
		{"pin-dir", required_argument, NULL, OPT_PIN_DIR},
		{"hook", required_argument, NULL, OPT_HOOK},
		{"log-format", required_argument, NULL, OPT_LOG_FORMAT},
		{"json", no_argument, NULL, 'j'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{},
	};
	static const char *const command[] = {"agent", "record", "replay"};
	/* The leading ':' makes a missing value ':' rather than "unknown option". */
	static const char shortopts[] = ":o:jvh";
	int c, longindex = -1;

	memset(a, 0, sizeof(*a));
	a->mode = mode;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, &longindex)) != -1) {
		char *end;

		/* Each command takes only its own options. */
		if ((mode != AGENT_RUN &&
		     (c == OPT_CHECK || c == OPT_PRINT || c == OPT_DRY_RUN || c == OPT_RECORD)) ||
		    (mode != AGENT_RECORD && c == 'o') || (mode != AGENT_REPLAY && c == 'j') ||
		    (mode == AGENT_REPLAY && (c == OPT_DURATION || c == OPT_PIN_DIR ||
					      c == OPT_HOOK || c == OPT_LOG_FORMAT)))
			return opt_not_taken(command[mode], longopts, longindex, c, err, errlen);
		longindex = -1;
		switch (c) {
		case OPT_CONFIG:
			a->config = optarg;
			break;
		case OPT_CHECK:
			a->check_config = true;
			break;
		case OPT_PRINT:
			a->print_config = true;
			break;
		case OPT_DRY_RUN:
			a->dry_run = true;
			break;
		case OPT_RECORD:
		case 'o':
			a->record = optarg;
			break;
		case 'j':
			a->json = true;
			break;
		case OPT_DURATION:
			errno = 0;
			a->duration_s = strtod(optarg, &end);
			if (errno || end == optarg || *end || !isfinite(a->duration_s) ||
			    a->duration_s <= 0)
				return fail(err, errlen, "--duration: expected seconds > 0");
			break;
		case OPT_PIN_DIR:
			if (optarg[0] != '/')
				return fail(err, errlen, "--pin-dir: expected an absolute path");
			a->probe.pin_dir = optarg;
			break;
		case OPT_HOOK:
			if (probe_hook_parse(optarg, &a->probe.hook))
				return fail(err, errlen, "--hook: expected auto, tp_btf or raw_tp");
			break;
		case OPT_LOG_FORMAT:
			if (log_format_parse(optarg, true, &log_format))
				return fail(err, errlen, "--log-format: expected text or json");
			a->log_format = true;
			break;
		case 'v':
			log_max_level++;
			break;
		case 'h':
			a->help = true;
			return 0;
		default:
			return opt_error(c, shortopts, argv, err, errlen);
		}
	}
	if (mode == AGENT_REPLAY) {
		if (optind != argc - 1)
			return fail(err, errlen, "expected one recording file");
		a->replay = argv[optind];
		return 0;
	}
	if (optind != argc)
		return fail(err, errlen, "unexpected argument");
	if (mode == AGENT_RECORD && !a->record)
		return fail(err, errlen, "-o FILE is required");
	if (a->check_config + a->print_config > 1)
		return fail(err, errlen, "--check-config and --print-config exclude each other");
	return 0;
}
