// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The threads behind user/kube/sync.h: one for the calls the loop
 * asks for (evictions, Events, the node's status), one for the pod informer
 * (user/kube/informer.h), whose watch holds its connection for minutes.
 * Everything shared with the loop sits under one lock; API calls are made
 * without it, on copies, so the loop never waits for the network. After a
 * call that got no answer (or a 5xx) the calls thread backs off, doubling
 * from 1 s up to 30 s, so an API server in trouble sees a trickle, not a
 * storm; the informer backs off on its own the same way.
 */
#include "kube/sync.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "clock.h"
#include "grow.h"
#include "kube/event_correlate.h"
#include "kube/events.h"
#include "kube/informer.h"
#include "kube/pod_set.h"
#include "kube/node_status.h"
#include "kube/node_writer.h"
#include "log.h"
#include "str.h"

#define SEC 1000000000ull
/* The calls thread's backoff after a failed call doubles up to this. */
#define BACKOFF_MAX_NS (30 * SEC)
/* A watch's own bound beyond its server timeout: the server ends it, not us. */
#define WATCH_SLACK_MS 30000
/* An eviction is tried for this long (429 and failures back off 1, 2, 4, ... s). */
#define EVICT_LIFETIME_NS (60 * SEC)
/*
 * A status change waits this long for the rest of its tick (the loop puts
 * the batch resources, then the condition): both go in one patch.
 */
#define STATUS_SETTLE_NS (50 * 1000000ull)
/* The Node's read at start waits at most this long (the API thread reads it again later). */
#define START_READ_MS 2000
/* An Event's series ends after this many event intervals without an occurrence. */
#define SERIES_IDLE_INTERVALS 10
/* Events sent at the stop at most: one a hold the restore ended, on a full node */
#define STOP_EVENTS 32
#define CONTROLLER  "qoslet.io/agent"

struct evict_job {
	struct kube_evict_req req;
	unsigned int attempts;
	uint64_t deadline, not_before; /* CLOCK_MONOTONIC */
};

struct kube_sync {
	struct kubernetes_config cfg;
	struct kube_client client;	 /* the calls thread's alone */
	struct kube_client watch_client; /* the informer thread's alone */
	struct informer inf;		 /* the informer thread's */
	unsigned int seed;		 /* the informer's jitter */
	char node[254], instance[300];
	pthread_t thread, informer_thread;
	bool running, informer_running; /* the threads were started */
	pthread_mutex_t lock;
	pthread_cond_t wake, informer_wake;
	int stopping; /* also the calls client's cancel flag */
	/* the watch client's cancel flag: the stop, or new label keys (a list must follow) */
	int watch_cancel;
	int pods_fd; /* eventfd: the pod set changed (kube_sync_fd()) */
	bool kicked; /* under lock: the loop queued work for the calls thread */

	/* under lock */
	struct kube_link_stats stats;
	struct kube_pod_list fresh;
	bool fresh_ready;
	struct evict_job *jobs;
	size_t n_jobs, cap_jobs;
	struct kube_evict_result *results;
	size_t n_results, cap_results;
	struct event_correlator events;
	bool want_condition;
	bool condition_said;	    /* the loop said what it wants at least once */
	uint64_t status_changed_at; /* CLOCK_MONOTONIC of the last change the loop put */
	char condition_msg[512];
	bool batch_put; /* the loop put a batch value */
	uint64_t batch_want[2], batch_put_at, batch_valid_ns;

	bool api_down;	   /* under lock: logged once per outage, by either thread */
	bool node_wanted;  /* under lock: the loop asked for the Node's labels again */
	json_t *labels;	   /* under lock: the labels last read, for the loop */
	bool labels_ready; /* ... not taken yet */
	/* under lock: label keys for the informer, taken at its next step */
	char *label_keys;
	bool label_keys_new;

	/* the calls thread's own */
	uint64_t backoff_until, backoff_ns;
	struct node_writer status;
	bool batch_expired_logged;
};

/* Under the lock: wakes the calls thread, or keeps it from sleeping when it is not waiting. */
static void kick(struct kube_sync *ks)
{
	ks->kicked = true;
	pthread_cond_signal(&ks->wake);
}

/* The API server's or the network's trouble, not a refusal of the request itself. */
static bool transient(int rc)
{
	switch (rc) {
	case -EIO:
	case -ETIMEDOUT:
	case -ECONNREFUSED:
	case -EAGAIN:
	case -EPERM: /* TLS verification: a CA rotation may be under way */
		return true;
	default:
		return false;
	}
}

/* Counts a call of either thread, and logs an outage once and its end. */
static void note_call(struct kube_sync *ks, enum kube_call call, int rc, const char *err)
{
	bool outage = transient(rc);

	pthread_mutex_lock(&ks->lock);
	ks->stats.requests[call]++;
	ks->stats.errors[call] += rc != 0;
	if (outage && !ks->api_down)
		log_warn("kube: %s: %s; backing off (the agent keeps protecting the node)",
			 kube_call_name(call), err);
	else if (!outage && rc)
		log_warn("kube: %s: %s", kube_call_name(call), err);
	else if (!rc && ks->api_down)
		log_info("kube: the API server answers again");
	ks->api_down = outage || (ks->api_down && rc);
	pthread_mutex_unlock(&ks->lock);
}

/* Counts a call of the calls thread; a transient failure backs that thread off. */
static void account(struct kube_sync *ks, enum kube_call call, int rc, const char *err)
{
	note_call(ks, call, rc, err);
	if (!transient(rc)) {
		ks->backoff_ns = 0;
		return;
	}
	ks->backoff_ns = ks->backoff_ns ? 2 * ks->backoff_ns : SEC;
	if (ks->backoff_ns > BACKOFF_MAX_NS)
		ks->backoff_ns = BACKOFF_MAX_NS;
	ks->backoff_until = clock_ns(CLOCK_MONOTONIC) + ks->backoff_ns;
}

static bool backing_off(const struct kube_sync *ks, uint64_t now)
{
	return now < ks->backoff_until;
}

/* Under the lock: hands one attempt's result to the loop. */
static void put_result(struct kube_sync *ks, const struct evict_job *j,
		       enum decision_outcome outcome, long status, const char *why)
{
	struct kube_evict_result *r;

	if (array_grow((void **)&ks->results, &ks->cap_results, ks->n_results, sizeof(*r))) {
		log_err("kube: out of memory for an eviction result of %s/%s", j->req.ns,
			j->req.name);
		return;
	}
	r = &ks->results[ks->n_results++];
	r->req = j->req;
	r->outcome = outcome;
	r->attempt = j->attempts;
	r->status = status;
	r->ts_ns = clock_ns(CLOCK_REALTIME);
	snprintf(r->why, sizeof(r->why), "%s", why);
}

/* One attempt at the first due eviction; false when none was due. */
static bool evict_one(struct kube_sync *ks, uint64_t now)
{
	enum kube_evict_outcome o;
	struct evict_job j;
	enum decision_outcome outcome;
	char err[256] = "";
	uint64_t wait;
	long status;
	bool again;
	size_t i;
	int rc;

	pthread_mutex_lock(&ks->lock);
	for (i = 0; i < ks->n_jobs && ks->jobs[i].not_before > now; i++)
		;
	if (i < ks->n_jobs)
		j = ks->jobs[i];
	pthread_mutex_unlock(&ks->lock);
	if (i == ks->n_jobs || backing_off(ks, now))
		return false;
	j.attempts++;
	rc = kube_evict(&ks->client, j.req.ns, j.req.name, j.req.uid, &o, &status, err,
			sizeof(err));
	rc = rc ?: o == KUBE_EVICT_FAILED ? kube_status_errno(status) : 0;
	account(ks, KUBE_CALL_EVICT, rc, err);
	/* A budget (429), no answer, or a server error may pass: try again until the deadline. */
	again = o == KUBE_EVICT_RETRY || transient(rc);
	wait = SEC << (j.attempts < 6 ? j.attempts - 1 : 5);

	if (again && now + wait < j.deadline)
		outcome = OUT_RETRY;
	else
		outcome = o == KUBE_EVICT_EVICTED ? OUT_EVICTED
			  : o == KUBE_EVICT_GONE  ? OUT_GONE
						  : OUT_FAILED;
	if (outcome == OUT_FAILED && again)
		snprintf(err + strlen(err), sizeof(err) - strlen(err),
			 " (gave up after %u attempts)", j.attempts);
	pthread_mutex_lock(&ks->lock);
	for (i = 0; i < ks->n_jobs && strcmp(ks->jobs[i].req.uid, j.req.uid); i++)
		;
	if (i < ks->n_jobs) {
		put_result(ks, &j, outcome, status, o == KUBE_EVICT_EVICTED ? "" : err);
		if (outcome == OUT_RETRY) {
			ks->jobs[i].attempts = j.attempts;
			ks->jobs[i].not_before = now + wait;
		} else {
			/* in order: the first asked is the first tried */
			memmove(&ks->jobs[i], &ks->jobs[i + 1],
				(--ks->n_jobs - i) * sizeof(*ks->jobs));
		}
	}
	pthread_mutex_unlock(&ks->lock);
	return true;
}

/* One API call for the Event or series count due first (event_correlate.h); false when none. */
static bool event_one(struct kube_sync *ks, uint64_t now)
{
	struct event_call call;
	char err[256];
	bool due;
	int rc;

	if (backing_off(ks, now))
		return false;
	pthread_mutex_lock(&ks->lock);
	due = event_correlate_next(&ks->events, now, &call);
	ks->stats.events_dropped = ks->events.dropped;
	pthread_mutex_unlock(&ks->lock);
	if (!due)
		return false;
	if (call.create) {
		struct kube_event ev = {.ns = call.s.first.ns,
					.pod = call.s.first.pod,
					.uid = call.s.first.uid,
					.type = call.s.first.type,
					.reason = call.s.first.reason,
					.action = call.s.first.action,
					.note = call.s.first.note,
					.controller = CONTROLLER,
					.instance = ks->instance,
					.time_ns = call.s.first.ts_ns};

		kube_event_name(&ev, call.s.name);
		rc = kube_event_create(&ks->client, &ev, call.s.name, err, sizeof(err));
		/*
		 * The name is this occurrence's own (pod and nanosecond): taken means
		 * an earlier try that timed out on our side did create it.
		 */
		if (rc == -EEXIST)
			rc = 0;
		account(ks, KUBE_CALL_EVENT_CREATE, rc, err);
	} else {
		rc = kube_event_update_series(&ks->client, call.s.first.ns, call.s.name,
					      call.s.seen, call.s.last_ns, err, sizeof(err));
		account(ks, KUBE_CALL_EVENT_PATCH, rc, err);
	}
	pthread_mutex_lock(&ks->lock);
	/*
	 * A call the stop abandoned (-ECANCELED) was not refused: it stays,
	 * for flush_events() to send. The end Events kube_report_stop() queues
	 * wake this thread, whose call the stop then cancels: dropped, the
	 * SuppressionEnded of a stop went unsent when that race was lost.
	 */
	event_correlate_done(&ks->events, &call, rc, transient(rc) || rc == -ECANCELED, now);
	ks->stats.events_dropped = ks->events.dropped;
	pthread_mutex_unlock(&ks->lock);
	return true;
}

/* Drops the series that have been quiet long enough and have nothing left to send. */
static void expire_series(struct kube_sync *ks, uint64_t now)
{
	uint64_t idle = (uint64_t)(ks->cfg.event_interval_s * SEC) * SERIES_IDLE_INTERVALS;

	pthread_mutex_lock(&ks->lock);
	event_correlate_expire(&ks->events, now, idle);
	pthread_mutex_unlock(&ks->lock);
}

/*
 * One patch of the Node's status when something changed (node_writer.h).
 * Returns how long to wait for a change to settle, else 0.
 */
static uint64_t write_status(struct kube_sync *ks, uint64_t now)
{
	struct node_want want = {0};
	struct kube_node_status st;
	char msg[512], err[256];
	uint64_t settled;
	int rc;

	pthread_mutex_lock(&ks->lock);
	settled = ks->status_changed_at + STATUS_SETTLE_NS;
	if (now < settled) {
		pthread_mutex_unlock(&ks->lock);
		return settled - now;
	}
	/* before the loop said anything, False would be a guess: the status waits */
	want.cond_said = ks->condition_said;
	want.cond = ks->want_condition;
	memcpy(msg, ks->condition_msg, sizeof(msg));
	want.message = msg;
	want.batch = ks->batch_put;
	memcpy(want.batch_value, ks->batch_want, sizeof(want.batch_value));
	/*
	 * The loop stopped ticking: what it said last is no longer the node.
	 * (put_at may be later than now: the loop put while this round ran.)
	 */
	if (want.batch && now > ks->batch_put_at && now - ks->batch_put_at > ks->batch_valid_ns) {
		if (!ks->batch_expired_logged && (want.batch_value[0] || want.batch_value[1]))
			log_warn("kube: no batch capacity from the loop for %.0f s: writing 0",
				 (double)(now - ks->batch_put_at) / SEC);
		ks->batch_expired_logged = true;
		want.batch_value[0] = want.batch_value[1] = 0;
	} else {
		ks->batch_expired_logged = false;
	}
	pthread_mutex_unlock(&ks->lock);
	if (backing_off(ks, now) ||
	    !node_writer_due(&ks->status, &want, now, clock_ns(CLOCK_REALTIME), &st))
		return 0;
	rc = kube_node_patch_status(&ks->client, ks->node, &st, err, sizeof(err));
	account(ks, KUBE_CALL_NODE_STATUS, rc, err);
	node_writer_done(&ks->status, &st, rc, transient(rc), now);
	if (rc)
		return 0;
	pthread_mutex_lock(&ks->lock);
	ks->stats.condition_known |= st.cond != NULL;
	ks->stats.condition = ks->status.cond;
	ks->stats.batch_known |= st.batch;
	ks->stats.batch_cpu_milli = ks->status.batch_done[0];
	ks->stats.batch_mem_bytes = ks->status.batch_done[1];
	pthread_mutex_unlock(&ks->lock);
	return 0;
}

/* The Node again, when the loop asked (a reload): its labels go to the loop. */
static void read_node(struct kube_sync *ks, uint64_t now)
{
	struct kube_node_info info;
	char err[256];
	bool wanted;
	uint64_t one = 1;
	int rc;

	pthread_mutex_lock(&ks->lock);
	wanted = ks->node_wanted;
	pthread_mutex_unlock(&ks->lock);
	if (!wanted || backing_off(ks, now))
		return;
	rc = kube_node_get(&ks->client, ks->node, &info, err, sizeof(err));
	account(ks, KUBE_CALL_GET_NODE, rc, err);
	if (rc && transient(rc))
		return; /* after the backoff */
	pthread_mutex_lock(&ks->lock);
	ks->node_wanted = false;
	if (!rc) {
		json_decref(ks->labels);
		ks->labels = json_incref(info.labels);
		ks->labels_ready = true;
	}
	pthread_mutex_unlock(&ks->lock);
	kube_node_info_free(&info);
	if (!rc && write(ks->pods_fd, &one, sizeof(one)) < 0)
		log_debug("kube: cannot wake the loop: %s", strerror(errno));
}

static void *run(void *arg)
{
	struct kube_sync *ks = arg;

	while (!__atomic_load_n(&ks->stopping, __ATOMIC_RELAXED)) {
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		struct timespec until;
		uint64_t next, settle;
		bool busy;

		busy = evict_one(ks, now);
		busy |= event_one(ks, now);
		expire_series(ks, now);
		settle = write_status(ks, now);
		read_node(ks, now);
		if (busy)
			continue;
		/* Work queued by the loop wakes the thread; time-based work is checked each second.
		 */
		next = clock_ns(CLOCK_MONOTONIC) + (settle ? settle : SEC);
		until = (struct timespec){(time_t)(next / SEC), (long)(next % SEC)};
		pthread_mutex_lock(&ks->lock);
		/* work queued while this round ran is not slept over */
		if (!__atomic_load_n(&ks->stopping, __ATOMIC_RELAXED) && !ks->kicked)
			pthread_cond_timedwait(&ks->wake, &ks->lock, &until);
		ks->kicked = false;
		pthread_mutex_unlock(&ks->lock);
	}
	return NULL;
}

/* ---- the pod informer's transport and its thread ---- */

static int inf_list(void *ctx, const char *path, struct kube_response *resp, char *err,
		    size_t errlen)
{
	struct kube_sync *ks = ctx;

	return kube_request(&ks->watch_client, "GET", path, NULL, resp, err, errlen);
}

struct feed {
	struct watch_stream *s;
	char err[512];
};

static int inf_feed(const char *data, size_t n, void *user)
{
	struct feed *f = user;

	return watch_stream_feed(f->s, data, n, f->err, sizeof(f->err));
}

static int inf_watch(void *ctx, const char *path, long timeout_s, struct watch_stream *s,
		     long *status, char *err, size_t errlen)
{
	struct kube_sync *ks = ctx;
	struct feed f = {.s = s};
	int rc = kube_stream(&ks->watch_client, path, timeout_s * 1000 + WATCH_SLACK_MS, inf_feed,
			     &f, status, err, errlen);

	if (rc && f.err[0])
		snprintf(err, errlen, "%s", f.err); /* the stream's own error */
	return rc;
}

/* A copy of the set for the loop, which takes it at its next tick; the loop is woken. */
static void inf_changed(void *ctx, const struct kube_pod_list *pods)
{
	struct kube_sync *ks = ctx;
	struct kube_pod_list copy;
	uint64_t one = 1;

	if (kube_pod_set_copy(&copy, pods)) {
		log_err("kube: out of memory copying %zu pods for the loop", pods->n);
		return;
	}
	pthread_mutex_lock(&ks->lock);
	kube_pod_list_free(&ks->fresh);
	ks->fresh = copy;
	ks->fresh_ready = true;
	ks->stats.pods = copy.n;
	pthread_mutex_unlock(&ks->lock);
	if (write(ks->pods_fd, &one, sizeof(one)) < 0)
		log_debug("kube: cannot wake the loop: %s", strerror(errno));
}

static void inf_current(void *ctx)
{
	struct kube_sync *ks = ctx;
	const struct informer_stats *st = &ks->inf.st;

	pthread_mutex_lock(&ks->lock);
	ks->stats.last_list_ns = clock_ns(CLOCK_REALTIME);
	ks->stats.pod_lists = st->lists;
	ks->stats.pod_expired = st->expired;
	ks->stats.pod_watch_broken = st->broken;
	ks->stats.pod_oversize = st->oversize;
	ks->stats.pod_events = st->events;
	ks->stats.pod_etcd_lists = st->etcd_lists;
	ks->stats.pods_skipped_size = st->pods_oversize;
	ks->stats.pods_terminated = st->terminated;
	pthread_mutex_unlock(&ks->lock);
}

static void inf_result(void *ctx, enum kube_call call, int rc, const char *err)
{
	struct kube_sync *ks = ctx;
	const struct informer_stats *st = &ks->inf.st;

	if (__atomic_load_n(&ks->watch_cancel, __ATOMIC_RELAXED) && rc == -ECANCELED)
		return; /* abandoned for the stop or new label keys: no failure */
	note_call(ctx, call, rc, err);
	pthread_mutex_lock(&ks->lock);
	ks->stats.pod_expired = st->expired;
	ks->stats.pod_watch_broken = st->broken;
	ks->stats.pod_oversize = st->oversize;
	pthread_mutex_unlock(&ks->lock);
}

static void inf_degraded(void *ctx, const char *why)
{
	struct kube_sync *ks = ctx;

	pthread_mutex_lock(&ks->lock);
	snprintf(ks->stats.pods_degraded, sizeof(ks->stats.pods_degraded), "%s", why ? why : "");
	ks->stats.pod_oversize = ks->inf.st.oversize;
	pthread_mutex_unlock(&ks->lock);
	if (!why)
		log_info("kube: the pod list fits the size cap again");
}

static double inf_random(void *ctx)
{
	struct kube_sync *ks = ctx;

	return (double)rand_r(&ks->seed) / ((double)RAND_MAX + 1);
}

static uint64_t inf_now(void *ctx)
{
	(void)ctx;
	return clock_ns(CLOCK_MONOTONIC);
}

static const struct informer_ops inf_ops = {
	.list = inf_list,
	.watch = inf_watch,
	.changed = inf_changed,
	.current = inf_current,
	.result = inf_result,
	.degraded = inf_degraded,
	.random = inf_random,
	.now = inf_now,
};

static void *inform(void *arg)
{
	struct kube_sync *ks = arg;

	while (!__atomic_load_n(&ks->stopping, __ATOMIC_RELAXED)) {
		uint64_t wait, until;
		struct timespec ts;

		pthread_mutex_lock(&ks->lock);
		if (ks->label_keys_new && informer_set_label_keys(&ks->inf, ks->label_keys))
			log_err("kube: out of memory for the label keys: the old ones stay");
		ks->label_keys_new = false;
		if (!__atomic_load_n(&ks->stopping, __ATOMIC_RELAXED))
			__atomic_store_n(&ks->watch_cancel, 0, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&ks->lock);
		wait = informer_step(&ks->inf);

		if (!wait)
			continue;
		until = clock_ns(CLOCK_MONOTONIC) + wait;
		ts = (struct timespec){(time_t)(until / SEC), (long)(until % SEC)};
		pthread_mutex_lock(&ks->lock);
		while (!__atomic_load_n(&ks->stopping, __ATOMIC_RELAXED) &&
		       pthread_cond_timedwait(&ks->informer_wake, &ks->lock, &ts) != ETIMEDOUT)
			;
		pthread_mutex_unlock(&ks->lock);
	}
	return NULL;
}

/*
 * One client on its own config: a client takes its config's allocations
 * over (the exec plugin's cached credential among them), so the calls and
 * the watch each read the kubeconfig.
 */
static int client_open(struct kube_client *client, const struct kubernetes_config *cfg, char *err,
		       size_t errlen)
{
	struct kube_config api;
	int rc = cfg->kubeconfig[0]
			 ? kube_config_from_kubeconfig(&api, cfg->kubeconfig, err, errlen)
			 : kube_config_in_cluster(&api, NULL, NULL, err, errlen);

	if (rc)
		return rc;
	return kube_client_init(client, &api, err, errlen); /* it takes api over, even on failure */
}

static int resolve(struct kube_sync *ks, const struct kubernetes_config *cfg, char *err,
		   size_t errlen)
{
	const char *node = cfg->node_name[0] ? cfg->node_name : getenv("NODE_NAME");
	int rc;

	if (!node || !node[0]) {
		snprintf(err, errlen,
			 "kubernetes.node_name is empty and NODE_NAME is not set: which node is "
			 "this? (the DaemonSet sets NODE_NAME from spec.nodeName)");
		return -EINVAL;
	}
	if (!kube_name_valid(node)) {
		snprintf(err, errlen, "node name \"%s\" (NODE_NAME) is not a valid Kubernetes name",
			 node);
		return -EINVAL;
	}
	snprintf(ks->node, sizeof(ks->node), "%s", node);
	/* The API takes a reportingInstance of at most 128 characters; node names go to 253. */
	snprintf(ks->instance, sizeof(ks->instance), "qoslet-%.121s", node);
	rc = client_open(&ks->client, cfg, err, errlen);
	if (!rc) {
		rc = client_open(&ks->watch_client, cfg, err, errlen);
		if (rc)
			kube_client_free(&ks->client);
	}
	return rc;
}

int kube_sync_open(struct kube_sync **out, const struct kubernetes_config *cfg, char *err,
		   size_t errlen)
{
	struct kube_sync *ks = calloc(1, sizeof(*ks));
	pthread_condattr_t ca;
	int rc;

	*out = NULL;
	if (!ks) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ks->cfg = *cfg;
	rc = resolve(ks, cfg, err, errlen);
	if (rc) {
		free(ks);
		return rc;
	}
	ks->pods_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ks->pods_fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot make an eventfd: %s", strerror(-rc));
		kube_client_free(&ks->client);
		kube_client_free(&ks->watch_client);
		free(ks);
		return rc;
	}
	for (struct kube_client *c = &ks->client; c;
	     c = c == &ks->client ? &ks->watch_client : NULL) {
		c->timeout_ms = (long)(cfg->timeout_s * 1000);
		if (c->connect_timeout_ms > c->timeout_ms)
			c->connect_timeout_ms = c->timeout_ms;
		c->cancel = c == &ks->client ? &ks->stopping : &ks->watch_cancel;
	}
	ks->seed = (unsigned int)(clock_ns(CLOCK_MONOTONIC) ^ (uint64_t)getpid());
	/* a watch event is one pod in an envelope of a few dozen bytes */
	informer_init(&ks->inf, &inf_ops, ks, ks->node, cfg->resync_s, KUBE_POD_MAX_BYTES + 256);
	node_writer_init(&ks->status, cfg);
	event_correlate_init(&ks->events, cfg->event_interval_s, cfg->events_per_minute,
			     clock_ns(CLOCK_MONOTONIC));
	snprintf(ks->condition_msg, sizeof(ks->condition_msg), "no interference seen");
	pthread_mutex_init(&ks->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ks->wake, &ca);
	pthread_cond_init(&ks->informer_wake, &ca);
	pthread_condattr_destroy(&ca);
	*out = ks;
	return 0;
}

int kube_sync_start(struct kube_sync *ks, char *err, size_t errlen)
{
	int rc = -pthread_create(&ks->thread, NULL, run, ks);

	if (rc) {
		snprintf(err, errlen, "cannot start the API thread: %s", strerror(-rc));
		return rc;
	}
	ks->running = true;
	rc = -pthread_create(&ks->informer_thread, NULL, inform, ks);
	if (rc)
		snprintf(err, errlen, "cannot start the pod informer's thread: %s", strerror(-rc));
	ks->informer_running = !rc;
	return rc;
}

/*
 * The Events due at the stop (the end of each hold the restore handed back:
 * kube_report_stop()), sent here, the thread being gone: at most
 * STOP_EVENTS, and none after one that failed for a reason that passes (an
 * API away or overloaded), so such an API holds the stop up by one call's
 * timeout at most. What the spam filter holds back
 * stays unsent, as it would in the loop.
 */
static void flush_events(struct kube_sync *ks)
{
	__atomic_store_n(&ks->stopping, 0, __ATOMIC_RELAXED);
	/* a transient failure starts a backoff, and event_one() then sends nothing */
	for (int i = 0; i < STOP_EVENTS; i++)
		if (!event_one(ks, clock_ns(CLOCK_MONOTONIC)))
			break;
	__atomic_store_n(&ks->stopping, 1, __ATOMIC_RELAXED);
}

void kube_sync_stop(struct kube_sync *ks)
{
	struct kube_node_status st;

	if (!ks)
		return;
	__atomic_store_n(&ks->stopping, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&ks->watch_cancel, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&ks->lock);
	kick(ks);
	pthread_cond_signal(&ks->informer_wake);
	pthread_mutex_unlock(&ks->lock);
	if (ks->running)
		pthread_join(ks->thread, NULL);
	if (ks->informer_running)
		pthread_join(ks->informer_thread, NULL);
	flush_events(ks);
	/*
	 * One patch, when the API holds something a stopped agent must not
	 * leave (node_writer_stop()). The thread is gone, so the call is made
	 * here, no longer cancelled.
	 */
	if (node_writer_stop(&ks->status, clock_ns(CLOCK_REALTIME), &st)) {
		char err[256];
		int rc;

		__atomic_store_n(&ks->stopping, 0, __ATOMIC_RELAXED);
		rc = kube_node_patch_status(&ks->client, ks->node, &st, err, sizeof(err));
		if (rc)
			log_warn("kube: cannot reset the node's status at stop: %s", err);
		if (!rc && st.batch)
			log_info("kube: the node's batch resources set to 0 at stop");
		if (!rc && st.cond)
			log_info("kube: the node condition set to Unknown at stop");
	}
	kube_client_free(&ks->client);
	kube_client_free(&ks->watch_client);
	informer_free(&ks->inf);
	close(ks->pods_fd);
	kube_pod_list_free(&ks->fresh);
	free(ks->label_keys);
	free(ks->jobs);
	free(ks->results);
	event_correlate_free(&ks->events);
	json_decref(ks->labels);
	pthread_cond_destroy(&ks->wake);
	pthread_cond_destroy(&ks->informer_wake);
	pthread_mutex_destroy(&ks->lock);
	free(ks);
}

const char *kube_sync_node(const struct kube_sync *ks)
{
	return ks->node;
}

void kube_sync_stats(struct kube_sync *ks, struct kube_link_stats *out)
{
	pthread_mutex_lock(&ks->lock);
	*out = ks->stats;
	pthread_mutex_unlock(&ks->lock);
}

int kube_sync_fd(const struct kube_sync *ks)
{
	return ks->pods_fd;
}

void kube_sync_drain(struct kube_sync *ks)
{
	uint64_t n;

	if (read(ks->pods_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_debug("kube: reading the pods eventfd: %s", strerror(errno));
}

bool kube_sync_take_pods(struct kube_sync *ks, struct kube_pod_list *pods)
{
	bool took;

	pthread_mutex_lock(&ks->lock);
	took = ks->fresh_ready;
	if (took) {
		kube_pod_list_free(pods);
		*pods = ks->fresh;
		memset(&ks->fresh, 0, sizeof(ks->fresh));
		ks->fresh_ready = false;
	}
	pthread_mutex_unlock(&ks->lock);
	return took;
}

int kube_sync_evict(struct kube_sync *ks, const struct kube_evict_req *req)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	int rc = 0;

	pthread_mutex_lock(&ks->lock);
	for (size_t i = 0; i < ks->n_jobs; i++)
		if (!strcmp(ks->jobs[i].req.uid, req->uid))
			rc = -EALREADY;
	if (!rc)
		rc = array_grow((void **)&ks->jobs, &ks->cap_jobs, ks->n_jobs, sizeof(*ks->jobs));
	if (!rc) {
		ks->jobs[ks->n_jobs++] = (struct evict_job){
			.req = *req, .deadline = now + EVICT_LIFETIME_NS, .not_before = now};
		kick(ks);
	}
	pthread_mutex_unlock(&ks->lock);
	return rc;
}

void kube_sync_label_keys(struct kube_sync *ks, const char *keys)
{
	const char *k = keys;
	char *copy = NULL;

	while (k && *k)
		k += strlen(k) + 1;
	if (keys && !(copy = malloc((size_t)(k - keys) + 1))) {
		log_err("kube: out of memory for the label keys: the old ones stay");
		return;
	}
	if (keys)
		memcpy(copy, keys, (size_t)(k - keys) + 1);
	pthread_mutex_lock(&ks->lock);
	free(ks->label_keys);
	ks->label_keys = copy;
	ks->label_keys_new = true;
	/* a watch may hold on for minutes: it ends now, and a list takes the new keys */
	if (ks->informer_running)
		__atomic_store_n(&ks->watch_cancel, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&ks->lock);
}

size_t kube_sync_take_results(struct kube_sync *ks, struct kube_evict_result *out, size_t max)
{
	size_t n;

	pthread_mutex_lock(&ks->lock);
	n = ks->n_results < max ? ks->n_results : max;
	if (n) { /* ks->results is NULL before the first result */
		memcpy(out, ks->results, n * sizeof(*out));
		memmove(ks->results, ks->results + n, (ks->n_results - n) * sizeof(*out));
		ks->n_results -= n;
	}
	pthread_mutex_unlock(&ks->lock);
	return n;
}

void kube_sync_event(struct kube_sync *ks, const struct kube_event_req *ev)
{
	if (!ks->cfg.events)
		return;
	pthread_mutex_lock(&ks->lock);
	if (event_correlate_add(&ks->events, ev, clock_ns(CLOCK_MONOTONIC)))
		kick(ks);
	ks->stats.events_aggregated = ks->events.aggregated;
	ks->stats.events_dropped = ks->events.dropped;
	pthread_mutex_unlock(&ks->lock);
}

int kube_sync_read_node(struct kube_sync *ks, json_t **labels, char *err, size_t errlen)
{
	long timeout = ks->client.timeout_ms, connect = ks->client.connect_timeout_ms;
	struct kube_node_info info;
	int rc;

	/* the node waits unprotected meanwhile: an API that is away costs little here */
	ks->client.timeout_ms = timeout < START_READ_MS ? timeout : START_READ_MS;
	ks->client.connect_timeout_ms = connect < START_READ_MS ? connect : START_READ_MS;
	rc = kube_node_get(&ks->client, ks->node, &info, err, errlen);
	ks->client.timeout_ms = timeout;
	ks->client.connect_timeout_ms = connect;

	note_call(ks, KUBE_CALL_GET_NODE, rc, err);
	if (rc)
		return rc;
	node_writer_seed(&ks->status, &info, clock_ns(CLOCK_MONOTONIC));
	ks->stats.condition_known = info.has_condition;
	ks->stats.condition = info.condition;
	ks->stats.batch_known = info.has_batch;
	ks->stats.batch_cpu_milli = info.cpu_milli;
	ks->stats.batch_mem_bytes = info.mem_bytes;
	*labels = json_incref(info.labels);
	kube_node_info_free(&info);
	return 0;
}

void kube_sync_refresh_node(struct kube_sync *ks)
{
	pthread_mutex_lock(&ks->lock);
	ks->node_wanted = true;
	kick(ks);
	pthread_mutex_unlock(&ks->lock);
}

bool kube_sync_take_labels(struct kube_sync *ks, json_t **labels)
{
	bool took;

	pthread_mutex_lock(&ks->lock);
	took = ks->labels_ready;
	if (took) {
		json_decref(*labels);
		*labels = ks->labels;
		ks->labels = NULL;
		ks->labels_ready = false;
	}
	pthread_mutex_unlock(&ks->lock);
	return took;
}

void kube_sync_condition(struct kube_sync *ks, bool interference, const char *message)
{
	pthread_mutex_lock(&ks->lock);
	if (interference != ks->want_condition || !ks->condition_said) {
		ks->status_changed_at = clock_ns(CLOCK_MONOTONIC);
		kick(ks);
	}
	ks->condition_said = true;
	ks->want_condition = interference;
	snprintf(ks->condition_msg, sizeof(ks->condition_msg), "%s", message);
	pthread_mutex_unlock(&ks->lock);
}

void kube_sync_batch(struct kube_sync *ks, uint64_t cpu_milli, uint64_t mem_bytes,
		     uint64_t valid_ns)
{
	pthread_mutex_lock(&ks->lock);
	if (!ks->batch_put || cpu_milli != ks->batch_want[0] || mem_bytes != ks->batch_want[1]) {
		ks->status_changed_at = clock_ns(CLOCK_MONOTONIC);
		kick(ks);
	}
	ks->batch_put = true;
	ks->batch_want[0] = cpu_milli;
	ks->batch_want[1] = mem_bytes;
	ks->batch_put_at = clock_ns(CLOCK_MONOTONIC);
	ks->batch_valid_ns = valid_ns;
	pthread_mutex_unlock(&ks->lock);
}
