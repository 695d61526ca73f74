// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The kubelet's CPU manager checkpoint as the agent reads it (user/collect/
 * exclusive_cpus.c): each input is a cpu_manager_state file, read through
 * exclusive_cpus_update() from a path (the collector's way, each input into
 * a fresh reader), and parsed by exclusive_cpus_parse() from its text.
 *
 * Checks: both agree (the same result, list and pods); a refused file is
 * -EINVAL (or -ENOSPC, a list too long to write) and leaves no pods and the
 * reader's last good reading (none here); an accepted one has a canonical
 * CPU list (parsing and writing it again gives it back) and pods sorted by
 * uid without duplicates, each with CPUs, none more than the list holds,
 * and each found by exclusive_cpus_of_pod() with its count.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collect/exclusive_cpus.h"
#include "cpulist.h"
#include "fuzz.h"
#include "log.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	log_max_level = LOG_ERROR; /* each refused file is a warning */
	return 0;
}

static int count(const char *list)
{
	bool on[POL_CPUS_MAX];
	int n = 0;

	FUZZ_CHECK(!cpu_list_parse(list, on, POL_CPUS_MAX), "list '%s' does not parse", list);
	for (int c = 0; c < POL_CPUS_MAX; c++)
		n += on[c];
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct exclusive_cpus x = {0};
	char policy[32], list[POL_CPULIST_MAX], again[POL_CPULIST_MAX];
	struct exclusive_pod *pods;
	size_t n_pods;
	char *text;
	int rc, rc_file, total;
	bool on[POL_CPUS_MAX];

	text = malloc(size + 1);
	FUZZ_CHECK(text, "no memory");
	memcpy(text, data, size);
	text[size] = '\0';
	rc = exclusive_cpus_parse(text, policy, sizeof(policy), list, sizeof(list), &pods, &n_pods);
	rc_file = exclusive_cpus_update(&x, fuzz_file(data, size));
	/* the text stops at a NUL byte, the file does not: compare inputs without one */
	if (!memchr(data, '\0', size))
		FUZZ_CHECK(rc == rc_file, "the text gives %d, the file %d", rc, rc_file);
	if (rc) {
		FUZZ_CHECK(rc == -EINVAL || rc == -ENOSPC, "rc %d", rc);
		FUZZ_CHECK(!pods && !n_pods, "a refused file left pods");
	} else {
		FUZZ_CHECK(strnlen(list, sizeof(list)) < sizeof(list), "unterminated list");
		FUZZ_CHECK(!cpu_list_parse(list, on, POL_CPUS_MAX) &&
				   !cpu_list_format(on, POL_CPUS_MAX, again, sizeof(again)) &&
				   !strcmp(list, again),
			   "list '%s' is not canonical ('%s')", list, again);
		total = count(list);
		for (size_t i = 0; i < n_pods; i++) {
			FUZZ_CHECK(strnlen(pods[i].uid, sizeof(pods[i].uid)) < sizeof(pods[i].uid),
				   "unterminated uid");
			FUZZ_CHECK(pods[i].cpus > 0 && (int)pods[i].cpus <= total,
				   "pod %s holds %u of %d CPUs", pods[i].uid, pods[i].cpus, total);
			FUZZ_CHECK(!i || strcmp(pods[i - 1].uid, pods[i].uid) < 0,
				   "pods out of order or twice: '%s', '%s'", pods[i - 1].uid,
				   pods[i].uid);
		}
		FUZZ_CHECK(!n_pods == !pods, "%zu pods", n_pods);
	}
	if (!rc_file) {
		FUZZ_CHECK(!x.err, "read, with error %d", x.err);
		for (size_t i = 0; i < x.n_pods; i++)
			FUZZ_CHECK(!x.pods[i].uid[0] || exclusive_cpus_of_pod(&x, x.pods[i].uid) ==
								x.pods[i].cpus,
				   "pod %s not found with its %u CPUs", x.pods[i].uid,
				   x.pods[i].cpus);
		if (!rc)
			FUZZ_CHECK(!strcmp(x.list, list) && x.n_pods == n_pods,
				   "the reader kept '%s' (%zu pods), the parser '%s' (%zu)", x.list,
				   x.n_pods, list, n_pods);
	} else {
		FUZZ_CHECK(!x.list[0] && !x.n_pods, "a refused file replaced the (empty) reading");
	}
	free(pods);
	exclusive_cpus_free(&x);
	free(text);
	return 0;
}
