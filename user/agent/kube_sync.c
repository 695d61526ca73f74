// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kube_sync.h"

#include <pthread.h>
#include <string.h>

struct kube_sync {
	pthread_mutex_t lock;
	struct kube_sync_stats stats;
};

const char *kube_call_name(enum kube_call c)
{
	static const char *const names[KUBE_CALL_NR] = {
		"list_pods", "evict", "event_create", "event_patch", "node_status",
	};

	return c < KUBE_CALL_NR ? names[c] : "unknown";
}

void kube_sync_stats(struct kube_sync *ks, struct kube_sync_stats *out)
{
	pthread_mutex_lock(&ks->lock);
	*out = ks->stats;
	pthread_mutex_unlock(&ks->lock);
}
