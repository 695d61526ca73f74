// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kube/link.h"

const char *kube_call_name(enum kube_call c)
{
	static const char *const names[KUBE_CALL_NR] = {
		"list_pods",   "evict",	   "event_create", "event_patch",
		"node_status", "get_node", "watch_pods",
	};

	return c < KUBE_CALL_NR ? names[c] : "unknown";
}
