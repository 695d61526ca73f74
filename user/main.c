// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* qoslet: the node agent and the SRE tracing CLI, one binary. */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "agent/agent.h"
#include "record/replay.h"
#include "cli/blame.h"
#include "cli/cpi_view.h"
#include "cli/health.h"
#include "cli/memstall_view.h"
#include "cli/runqlat.h"
#include "cli/throttle_view.h"
#include "cli/top.h"

static const struct view_ops *const views[] = {&top_view, &runqlat_view,  &blame_view,
					       &cpi_view, &memstall_view, &throttle_view};
#define N_VIEWS (sizeof(views) / sizeof(views[0]))

static void usage(FILE *out)
{
	fprintf(out, "Usage: qoslet COMMAND [OPTIONS]\n"
		     "       qoslet --version | --help\n"
		     "\n"
		     "Per-cgroup scheduler interference, measured in the kernel with eBPF.\n"
		     "\n"
		     "Commands:\n");
	for (size_t i = 0; i < N_VIEWS; i++)
		fprintf(out, "  %-10s %s\n", views[i]->name, views[i]->summary);
	fprintf(out, "\n  %-10s %s\n  %-10s %s\n  %-10s %s\n  %-10s %s\n", "agent",
		"the node controller: protect latency-sensitive cgroups", "record",
		"record what the agent's policies see", "replay",
		"run the agent's policies on a recording", "health",
		"ask the agent on this node whether it is healthy (its probes)");
	fprintf(out, "\n'qoslet COMMAND --help' describes a command. Needs root (CAP_BPF,\n"
		     "CAP_PERFMON and CAP_SYS_ADMIN to mount bpffs).\n");
}

int main(int argc, char **argv)
{
	/*
	 * A fixed threshold: start-up parses kernel BTF (megabytes, freed once
	 * the probes are loaded). glibc would otherwise raise the threshold
	 * after the first large free and serve the next ones from the heap,
	 * which does not shrink: the process would keep that memory for good.
	 */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("qoslet %s\n", QOSLET_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "agent"))
		return agent_main(AGENT_RUN, argc - 1, argv + 1);
	if (!strcmp(argv[1], "record"))
		return agent_main(AGENT_RECORD, argc - 1, argv + 1);
	if (!strcmp(argv[1], "replay"))
		return replay_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "health"))
		return health_main(argc - 1, argv + 1);
	for (size_t i = 0; i < N_VIEWS; i++)
		if (!strcmp(argv[1], views[i]->name))
			return view_main(views[i], argc - 1, argv + 1);
	fprintf(stderr, "qoslet: unknown command '%s' (see 'qoslet --help')\n", argv[1]);
	return 2;
}
