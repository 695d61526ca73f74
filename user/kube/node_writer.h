/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * When the agent writes its Node's status, and what: only when something
 * changed, in one patch (node_status.h) holding all that changed. No
 * heartbeat: the condition is not a liveness signal (the kubelet's node
 * Lease is, and the agent's own liveness is its pod's, which the kubelet
 * probes), so an unchanged status is never written again; at 5,000 nodes a
 * 5-minute heartbeat alone would be 16.7 Node writes a second, each sent to
 * every Node watcher (docs/kubernetes.md, "Node status").
 *   - The condition: when its status changes (a new message alone waits for
 *     the next change: the interference it names is in the Events).
 *   - The batch resources: when the value the loop hands over differs from
 *     the last written; a drop at once (the safe direction), a rise at most
 *     once per min_interval. The loop hands over the capacity policy's
 *     published figure, which moves only by its step and grows back only
 *     after its hold (policy/capacity.h): the writer adds no step and no
 *     periodic re-patch of its own.
 *   - Whatever else differs from the API's rides along in the same patch.
 *   - At start the Node as read seeds what the API has: a value already
 *     there is not written again. At stop one patch, only when needed: the
 *     batch resources to 0 and a True condition to Unknown.
 * A refused condition is tried again after 5 minutes, refused batch
 * resources after min_interval, not at once. Pure: the caller gives the
 * times and makes the call.
 */
#ifndef QOSLET_KUBE_NODE_WRITER_H
#define QOSLET_KUBE_NODE_WRITER_H

#include <stdbool.h>
#include <stdint.h>

#include "kube/link.h"
#include "kube/node_status.h"

struct node_writer {
	bool condition, batch; /* which parts the agent writes at all */
	uint64_t min_ns;
	/* what the API has, as far as the agent knows */
	bool cond_known, cond;
	uint64_t transition_ns; /* CLOCK_REALTIME */
	bool batch_known;
	uint64_t batch_done[2];
	/* CLOCK_MONOTONIC of the last try of each part */
	uint64_t cond_at, batch_at;
	bool cond_refused, batch_refused;
	char message[512]; /* the condition's message (the patch points at it) */
	struct kube_condition c;
};

/* What the loop wants the Node to say. */
struct node_want {
	bool cond_said; /* false: nothing is written yet (the loop has not said the condition) */
	bool cond;
	const char *message;
	bool batch; /* the loop put a batch value */
	uint64_t batch_value[2];
};

void node_writer_init(struct node_writer *w, const struct kubernetes_config *cfg);

/*
 * What the Node already says (the agent's read at start, at now): batch
 * values there count as written now, so a rise waits min_interval.
 */
void node_writer_seed(struct node_writer *w, const struct kube_node_info *info, uint64_t now);

/* The patch due at now (CLOCK_MONOTONIC; real_ns CLOCK_REALTIME), if any, in *st. */
bool node_writer_due(struct node_writer *w, const struct node_want *want, uint64_t now,
		     uint64_t real_ns, struct kube_node_status *st);

/* What the patch st came to: 0 taken, a refusal (waits), or transient (the same again). */
void node_writer_done(struct node_writer *w, const struct kube_node_status *st, int rc,
		      bool transient, uint64_t now);

/* The patch for the stop, if one is needed. */
bool node_writer_stop(struct node_writer *w, uint64_t real_ns, struct kube_node_status *st);

#endif
