// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "cli/args.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "opt_error.h"
#include "kube/pods.h"
#include "probes/cpi_mode.h"

enum {
	OPT_PIN_DIR = 1000,
	OPT_HOOK,
	OPT_WAIT_SOURCE,
	OPT_CPI_EVENTS,
	OPT_THROTTLE_SOURCE,
	OPT_TOP,
	OPT_POD,
	OPT_NAMESPACE,
};

/* One option's --help lines, and the view_opt bit a view needs for it (0: every view). */
static const struct {
	unsigned int opt;
	const char *help;
} help_lines[] = {
	{0, "  -c, --cgroup CGROUP   only this cgroup and its descendants; a path relative to\n"
	    "                        the cgroup root (a leading / is allowed) or absolute;\n"
	    "                        repeat for several\n"},
	{0, "      --pod POD         only this pod's cgroups: its UID, or its name (which needs\n"
	    "                        the Kubernetes API: $KUBECONFIG, ~/.kube/config or\n"
	    "                        in-cluster); pods are resolved once, at start\n"
	    "      --namespace NS    only the pods of this namespace (needs the API)\n"},
	{VIEW_OPT_TOP,
	 "      --top N           only the N cgroups ranked first in each interval\n"},
	{0, "  -j, --json            one JSON object per interval, one per line\n"
	    "                        (keys: docs/json-output.md)\n"},
	{0, "      --pin-dir DIR     where the maps are pinned (default " QOSLET_DEFAULT_PIN_DIR
	    ")\n"},
	{0, "      --hook HOOK       how to attach: auto (default: tp_btf, the cheapest\n"
	    "                        per event: it reads the kernel without helper calls;\n"
	    "                        raw_tp where the kernel refuses it; -v names the one\n"
	    "                        taken), tp_btf or raw_tp\n"},
	{VIEW_OPT_WAIT_SOURCE,
	 "      --wait-source SRC where waits come from: auto (default: sched_info,\n"
	 "                        else stamp), sched_info (the kernel's own queue\n"
	 "                        timestamps) or stamp (qoslet's, set on wake-up)\n"},
	{VIEW_OPT_CPI_EVENTS,
	 "      --cpi-events EVENTS  auto (cycles,instructions where the CPU has a\n"
	 "                        PMU, else software stand-ins; the default but in\n"
	 "                        top), hardware (cycles,instructions or none: CPU\n"
	 "                        time only; top's default), software, or\n"
	 "                        CYCLES,INSTRUCTIONS as libpfm4 event names\n"},
	{VIEW_OPT_THROTTLE_SOURCE,
	 "      --throttle-source SRC  auto (default), fentry, tp_btf or cpustat\n"},
	{0, "  -v, --verbose         more diagnostics on stderr (repeat for libbpf's)\n"
	    "  -h, --help            this text\n"
	    "  INTERVAL              seconds between reports, fractions allowed (default 1)\n"
	    "  COUNT                 number of reports, then exit (default: until interrupted)\n"},
};

void view_args_usage(unsigned int options, FILE *out)
{
	for (size_t i = 0; i < sizeof(help_lines) / sizeof(help_lines[0]); i++)
		if (!help_lines[i].opt || (help_lines[i].opt & options))
			fputs(help_lines[i].help, out);
}

/* The view_opt bit an option needs; 0 for the shared ones. */
static unsigned int opt_bit(int opt)
{
	switch (opt) {
	case OPT_WAIT_SOURCE:
		return VIEW_OPT_WAIT_SOURCE;
	case OPT_CPI_EVENTS:
		return VIEW_OPT_CPI_EVENTS;
	case OPT_THROTTLE_SOURCE:
		return VIEW_OPT_THROTTLE_SOURCE;
	case OPT_TOP:
		return VIEW_OPT_TOP;
	default:
		return 0;
	}
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int parse_interval(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v <= 0 || v > 86400)
		return -1;
	*out = v;
	return 0;
}

static int parse_count(const char *s, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0)
		return -1;
	*out = v;
	return 0;
}

int view_args_parse(struct view_args *a, unsigned int options, int argc, char **argv, char *err,
		    size_t errlen)
{
	static const struct option longopts[] = {
		{"cgroup", required_argument, NULL, 'c'},
		{"json", no_argument, NULL, 'j'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{"pin-dir", required_argument, NULL, OPT_PIN_DIR},
		{"hook", required_argument, NULL, OPT_HOOK},
		{"wait-source", required_argument, NULL, OPT_WAIT_SOURCE},
		{"cpi-events", required_argument, NULL, OPT_CPI_EVENTS},
		{"throttle-source", required_argument, NULL, OPT_THROTTLE_SOURCE},
		{"top", required_argument, NULL, OPT_TOP},
		{"pod", required_argument, NULL, OPT_POD},
		{"namespace", required_argument, NULL, OPT_NAMESPACE},
		{NULL, 0, NULL, 0},
	};
	/* The leading ':' makes a missing value ':' rather than "unknown option". */
	static const char shortopts[] = ":c:jvh";
	struct cpi_spec spec;
	int opt, npos, longindex = -1;

	memset(a, 0, sizeof(*a));
	a->interval_s = 1;
	/* A view's peak memory is mostly libbpf parsing the full kernel BTF: skip it where it can.
	 */
	a->probe.small_btf = true;
	optind = 0; /* glibc: full re-initialisation, so tests can parse twice */
	opterr = 0; /* our own one-line messages instead of getopt's */
	while ((opt = getopt_long(argc, argv, shortopts, longopts, &longindex)) != -1) {
		if (opt_bit(opt) && !(opt_bit(opt) & options))
			return opt_not_taken(argv[0], longopts, longindex, opt, err, errlen);
		longindex = -1;
		switch (opt) {
		case 'c':
			if (a->n_cgroups == VIEW_MAX_CGROUPS)
				return fail(err, errlen, "too many -c options (at most %d)",
					    VIEW_MAX_CGROUPS);
			a->cgroups[a->n_cgroups++] = optarg;
			break;
		case 'j':
			a->json = true;
			break;
		case 'v':
			log_max_level =
				log_max_level < LOG_DEBUG ? log_max_level + 1 : LOG_DEBUG + 1;
			break;
		case 'h':
			a->help = true;
			return 0;
		case OPT_PIN_DIR:
			if (optarg[0] != '/')
				return fail(err, errlen,
					    "--pin-dir needs an absolute path, got '%s'", optarg);
			a->probe.pin_dir = optarg;
			break;
		case OPT_HOOK:
			if (probe_hook_parse(optarg, &a->probe.hook))
				return fail(err, errlen,
					    "invalid --hook '%s' (expected auto, tp_btf or raw_tp)",
					    optarg);
			break;
		case OPT_WAIT_SOURCE:
			if (sched_wait_parse(optarg, &a->probe.wait))
				return fail(
					err, errlen,
					"invalid --wait-source '%s' (expected auto, sched_info or "
					"stamp)",
					optarg);
			break;
		case OPT_CPI_EVENTS:
			/* The form only: whether the events exist is the probe's to find. */
			if (cpi_spec_parse(optarg, &spec))
				return fail(err, errlen,
					    "invalid --cpi-events '%s' (expected auto, hardware, "
					    "software or CYCLES,INSTRUCTIONS)",
					    optarg);
			a->probe.cpi_events = optarg;
			break;
		case OPT_THROTTLE_SOURCE:
			if (throttle_source_parse(optarg, &a->probe.throttle))
				return fail(
					err, errlen,
					"invalid --throttle-source '%s' (expected auto, fentry, "
					"tp_btf or cpustat)",
					optarg);
			break;
		/* Names go into an API path: only what Kubernetes allows in one. */
		case OPT_POD:
		case OPT_NAMESPACE:
			if (!kube_name_valid(optarg))
				return fail(err, errlen,
					    "invalid --%s '%s' (a Kubernetes name: lowercase "
					    "letters, digits, '-' and '.')",
					    opt == OPT_POD ? "pod" : "namespace", optarg);
			*(opt == OPT_POD ? &a->pod : &a->ns) = optarg;
			break;
		case OPT_TOP:
			if (parse_count(optarg, &a->top))
				return fail(err, errlen, "invalid --top '%s' (a whole number > 0)",
					    optarg);
			break;
		default:
			return opt_error(opt, shortopts, argv, err, errlen);
		}
	}
	npos = argc - optind;
	if (npos > 2)
		return fail(err, errlen, "unexpected argument '%s'", argv[optind + 2]);
	if (npos >= 1 && parse_interval(argv[optind], &a->interval_s))
		return fail(err, errlen, "invalid INTERVAL '%s' (seconds, > 0, at most 86400)",
			    argv[optind]);
	if (npos == 2 && parse_count(argv[optind + 1], &a->count))
		return fail(err, errlen, "invalid COUNT '%s' (a whole number > 0)",
			    argv[optind + 1]);
	return 0;
}
