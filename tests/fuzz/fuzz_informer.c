// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The pod informer's handling of what the API server sends (user/kube/
 * informer.c, watch_stream.c): each input is a script of answers, separated
 * by form feeds ('\f'), that a transport hands out in order, to list
 * requests (a page's JSON body) and to watches (the stream's bytes, fed in
 * writes of 1, 7, 64, 3 and 512 bytes in turn, so that events span writes
 * and writes hold many events). An answer may start with "!NNN " (the HTTP
 * status; 200 otherwise) or be "!cut" (the connection broke). Once the
 * script is used up every request fails, as with an API server gone. The
 * informer runs 12 steps, with an event cap of 2048 bytes.
 *
 * Checks: every pod set handed to changed() is sorted by uid without
 * duplicates, each pod has uid, namespace and name (terminated) and is
 * found by kube_pod_find(); the resourceVersion kept is terminated; every
 * wait is at most INFORMER_BACKOFF_MAX; the counters never exceed what was
 * asked (events and bookmarks at most the stream's lines).
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "kube/informer.h"
#include "log.h"

#define STEPS	  12
#define MAX_EVENT 2048

struct script {
	const char *p, *end; /* the answers not yet handed out */
	unsigned long lines; /* newlines fed to watches so far */
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	log_max_level = LOG_ERROR; /* a skipped pod is a warning: one per input would flood */
	return 0;
}

/* The next answer: its body and status (0: the connection broke); false when none is left. */
static bool next_answer(struct script *s, const char **body, size_t *len, long *status)
{
	const char *ff;

	if (s->p >= s->end)
		return false;
	ff = memchr(s->p, '\f', (size_t)(s->end - s->p));
	*body = s->p;
	*len = (size_t)((ff ? ff : s->end) - s->p);
	s->p = ff ? ff + 1 : s->end;
	*status = 200;
	if (*len >= 4 && !memcmp(*body, "!cut", 4)) {
		*status = 0;
	} else if (*len >= 5 && (*body)[0] == '!') {
		*status = ((*body)[1] - '0') * 100 + ((*body)[2] - '0') * 10 + ((*body)[3] - '0');
		*body += 5;
		*len -= 5;
	}
	return true;
}

static int list(void *ctx, const char *path, struct kube_response *resp, char *err, size_t errlen)
{
	struct script *s = ctx;
	const char *body;
	size_t len;
	long status;

	(void)path;
	/* as kube_request(): the response is set before anything can fail */
	resp->status = 0;
	resp->body = NULL;
	if (!next_answer(s, &body, &len, &status) || !status) {
		snprintf(err, errlen, "no answer");
		return -EIO;
	}
	resp->status = status;
	resp->body = len ? json_loadb(body, len, 0, NULL) : NULL;
	return 0;
}

static int watch(void *ctx, const char *path, long timeout_s, struct watch_stream *ws, long *status,
		 char *err, size_t errlen)
{
	static const size_t writes[] = {1, 7, 64, 3, 512};
	struct script *s = ctx;
	const char *body;
	size_t len, at = 0;

	(void)path;
	FUZZ_CHECK(timeout_s >= INFORMER_WATCH_MIN_S && timeout_s < 2 * INFORMER_WATCH_MIN_S,
		   "watch timeout %ld s", timeout_s);
	if (!next_answer(s, &body, &len, status) || !*status) {
		snprintf(err, errlen, "the watch broke");
		return -ECONNRESET;
	}
	if (*status != 200) {
		snprintf(err, errlen, "status %ld", *status);
		return 0;
	}
	for (size_t i = 0; at < len; i++) {
		size_t n = writes[i % (sizeof(writes) / sizeof(writes[0]))];
		int rc;

		if (n > len - at)
			n = len - at;
		for (size_t k = 0; k < n; k++)
			s->lines += body[at + k] == '\n';
		rc = watch_stream_feed(ws, body + at, n, err, errlen);
		if (rc)
			return rc;
		at += n;
	}
	return 0;
}

#define TERMINATED(s) (strnlen((s), sizeof(s)) < sizeof(s))

static void changed(void *ctx, const struct kube_pod_list *pods)
{
	(void)ctx;
	for (size_t i = 0; i < pods->n; i++) {
		const struct kube_pod *p = &pods->pods[i];

		FUZZ_CHECK(TERMINATED(p->uid) && TERMINATED(p->ns) && TERMINATED(p->name),
			   "an unterminated field");
		FUZZ_CHECK(p->uid[0] && p->ns[0] && p->name[0],
			   "a pod without uid, namespace or name");
		FUZZ_CHECK(!i || strcmp(pods->pods[i - 1].uid, p->uid) < 0,
			   "pods %zu and %zu out of order or twice (%s)", i - 1, i, p->uid);
		FUZZ_CHECK(kube_pod_find(pods, p->uid) == p, "uid %s not found", p->uid);
	}
}

static void current(void *ctx)
{
	(void)ctx;
}

static void result(void *ctx, enum kube_call call, int rc, const char *err)
{
	(void)ctx;
	FUZZ_CHECK(call == KUBE_CALL_LIST_PODS || call == KUBE_CALL_WATCH_PODS, "call %d", call);
	FUZZ_CHECK(!rc || (rc < 0 && err && err[0]), "rc %d without a reason", rc);
}

static void degraded(void *ctx, const char *why)
{
	(void)ctx;
	FUZZ_CHECK(!why || why[0], "degraded without a reason");
}

static double random01(void *ctx)
{
	(void)ctx;
	return 0.5;
}

static uint64_t now(void *ctx)
{
	(void)ctx;
	return 1000000000000ull;
}

static const struct informer_ops ops = {list,	watch,	  changed,  current,
					result, degraded, random01, now};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct script s = {(const char *)data, (const char *)data + size, 0};
	struct informer inf;

	informer_init(&inf, &ops, &s, "node-1", 0, MAX_EVENT);
	for (int i = 0; i < STEPS; i++) {
		uint64_t wait = informer_step(&inf);

		FUZZ_CHECK(wait <= INFORMER_BACKOFF_MAX, "a wait of %llu ns",
			   (unsigned long long)wait);
		FUZZ_CHECK(TERMINATED(inf.rv), "an unterminated resourceVersion");
	}
	FUZZ_CHECK(inf.st.events + inf.st.bookmarks <= s.lines, "%llu events from %lu lines",
		   (unsigned long long)(inf.st.events + inf.st.bookmarks), s.lines);
	informer_free(&inf);
	return 0;
}
