// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The watch stream parser and the pod informer's state machine
 * (user/kube/watch_stream.h, user/kube/informer.h), driven by a scripted
 * transport: each list or watch request takes the next scripted answer.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kube/informer.h"
#include "kube/watch_stream.h"

/* ---- the stream parser ---- */

struct seen {
	int n;
	enum watch_type type[8];
	char rv[8][16];
};

static int record_event(void *user, enum watch_type type, json_t *object, char *err, size_t errlen)
{
	struct seen *s = user;
	const char *rv = json_string_value(
		json_object_get(json_object_get(object, "metadata"), "resourceVersion"));

	(void)err, (void)errlen;
	assert_true(s->n < 8);
	s->type[s->n] = type;
	snprintf(s->rv[s->n], sizeof(s->rv[0]), "%s", rv ? rv : "");
	s->n++;
	return 0;
}

static const char ev_added[] =
	"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"resourceVersion\":\"5\"}}}\n";
static const char ev_bookmark[] =
	"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"9\"}}}\n";

static void test_stream_split(void **state)
{
	char all[256], err[128] = "";
	struct watch_stream s;
	struct seen seen = {0};

	(void)state;
	snprintf(all, sizeof(all), "%s\n%s", ev_added, ev_bookmark);
	watch_stream_init(&s, 1024, record_event, &seen);
	/* one byte at a time: every event spans many writes */
	for (size_t i = 0; i < strlen(all); i++)
		assert_int_equal(watch_stream_feed(&s, all + i, 1, err, sizeof(err)), 0);
	assert_int_equal(seen.n, 2);
	assert_int_equal(seen.type[0], WATCH_ADDED);
	assert_string_equal(seen.rv[0], "5");
	assert_int_equal(seen.type[1], WATCH_BOOKMARK);
	assert_string_equal(seen.rv[1], "9");
	assert_int_equal(watch_stream_pending(&s), 0);
	/* and both in one write, the second cut short: held until its end comes */
	assert_int_equal(watch_stream_feed(&s, all, strlen(all) - 3, err, sizeof(err)), 0);
	assert_int_equal(seen.n, 3);
	assert_true(watch_stream_pending(&s) > 0);
	assert_int_equal(watch_stream_feed(&s, all + strlen(all) - 3, 3, err, sizeof(err)), 0);
	assert_int_equal(seen.n, 4);
	assert_int_equal(seen.type[3], WATCH_BOOKMARK);
	watch_stream_free(&s);
}

static void test_stream_oversize(void **state)
{
	char err[128] = "", big[200];
	struct watch_stream s;
	struct seen seen = {0};

	(void)state;
	memset(big, 'x', sizeof(big));
	watch_stream_init(&s, 100, record_event, &seen);
	/* a whole line over the cap in one write, and one over it piece by piece */
	assert_int_equal(watch_stream_feed(&s, ev_added, strlen(ev_added), err, sizeof(err)), 0);
	assert_int_equal(watch_stream_feed(&s, big, sizeof(big), err, sizeof(err)), -EFBIG);
	assert_non_null(strstr(err, "larger than 100 bytes"));
	watch_stream_reset(&s);
	assert_int_equal(watch_stream_feed(&s, big, 60, err, sizeof(err)), 0);
	assert_int_equal(watch_stream_feed(&s, big, 60, err, sizeof(err)), -EFBIG);
	watch_stream_reset(&s);
	big[150] = '\n';
	assert_int_equal(watch_stream_feed(&s, big, 151, err, sizeof(err)), -EFBIG);
	assert_int_equal(seen.n, 1);
	watch_stream_free(&s);
}

static int record_oversize(void *user, const char *head, size_t n, size_t total, char *err,
			   size_t errlen)
{
	struct seen *s = user;

	(void)err, (void)errlen, (void)head;
	assert_true(s->n < 8);
	s->type[s->n] = (enum watch_type)99;
	snprintf(s->rv[s->n], sizeof(s->rv[0]), "%zu/%zu", n, total);
	s->n++;
	return 0;
}

/* With an oversize callback, a long event is handed over as its head and the stream goes on. */
static void test_stream_skip(void **state)
{
	char err[128] = "", big[9000];
	struct watch_stream s;
	struct seen seen = {0};

	(void)state;
	memset(big, 'x', sizeof(big));
	big[sizeof(big) - 1] = '\n';
	watch_stream_init(&s, 100, record_event, &seen);
	watch_stream_on_oversize(&s, record_oversize);
	/* in pieces, the newline in the last one, an event after it in the same write */
	assert_int_equal(watch_stream_feed(&s, big, 50, err, sizeof(err)), 0);
	assert_int_equal(watch_stream_feed(&s, big + 50, 5000, err, sizeof(err)), 0);
	assert_true(watch_stream_pending(&s) > 0);
	assert_int_equal(watch_stream_feed(&s, big + 5050, 3950, err, sizeof(err)), 0);
	assert_int_equal(watch_stream_feed(&s, ev_added, strlen(ev_added), err, sizeof(err)), 0);
	assert_int_equal(seen.n, 2);
	assert_string_equal(seen.rv[0], "4096/8999");
	assert_int_equal(seen.type[1], WATCH_ADDED);
	/* a whole one in one write */
	assert_int_equal(watch_stream_feed(&s, big, sizeof(big), err, sizeof(err)), 0);
	assert_string_equal(seen.rv[2], "4096/8999");
	assert_int_equal(watch_stream_pending(&s), 0);
	watch_stream_free(&s);
}

static void test_stream_bad(void **state)
{
	static const char *const bad[] = {
		"not json\n",
		"{\"type\":\"ADDED\"}\n",
		"{\"type\":\"RENAMED\",\"object\":{}}\n",
		"{\"object\":{}}\n",
	};
	char err[128];
	struct watch_stream s;
	struct seen seen = {0};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		watch_stream_init(&s, 1024, record_event, &seen);
		err[0] = '\0';
		assert_int_equal(watch_stream_feed(&s, bad[i], strlen(bad[i]), err, sizeof(err)),
				 -EBADMSG);
		assert_true(err[0] != '\0');
		watch_stream_free(&s);
	}
	/* blank keep-alive lines and CRLF are fine */
	watch_stream_init(&s, 1024, record_event, &seen);
	assert_int_equal(watch_stream_feed(&s, "\n\r\n", 3, err, sizeof(err)), 0);
	assert_int_equal(seen.n, 0);
	watch_stream_free(&s);
}

/* ---- the informer, on a scripted transport ---- */

/* One scripted answer: a list page or a watch. */
struct answer {
	long status;
	int rc; /* the transport's result (no answer, a cut, ...) */
	/* a list page (with -EFBIG: the first bytes of one over the cap); or the watch's stream,
	 * fed in one write */
	const char *body;
};

struct fake {
	const struct answer *script;
	size_t n, at;
	char paths[16][512];
	size_t n_paths;
	size_t changes, pods_at_change;
	char degraded[256];
	int degraded_calls;
	uint64_t now;
};

static void take_path(struct fake *f, const char *path)
{
	assert_true(f->n_paths < 16);
	snprintf(f->paths[f->n_paths++], sizeof(f->paths[0]), "%s", path);
}

static const struct answer *next(struct fake *f)
{
	if (f->at >= f->n)
		fail_msg("the informer asked more than the script holds (%zu)", f->n);
	return &f->script[f->at++];
}

static int fake_list(void *ctx, const char *path, struct kube_response *resp, char *err,
		     size_t errlen)
{
	struct fake *f = ctx;
	const struct answer *a = next(f);

	take_path(f, path);
	resp->status = a->status;
	if (a->rc == -EFBIG && a->body) {
		resp->head_len = strlen(a->body);
		memcpy(resp->head, a->body, resp->head_len);
	} else {
		resp->body = a->body ? json_loads(a->body, 0, NULL) : NULL;
	}
	if (a->rc)
		snprintf(err, errlen, "scripted failure");
	return a->rc;
}

static int fake_watch(void *ctx, const char *path, long timeout_s, struct watch_stream *s,
		      long *status, char *err, size_t errlen)
{
	struct fake *f = ctx;
	const struct answer *a = next(f);
	int rc;

	take_path(f, path);
	assert_true(timeout_s >= INFORMER_WATCH_MIN_S && timeout_s < 2 * INFORMER_WATCH_MIN_S);
	*status = a->status;
	if (a->body && a->status == 200) {
		rc = watch_stream_feed(s, a->body, strlen(a->body), err, errlen);
		if (rc)
			return rc;
	}
	if (a->rc)
		snprintf(err, errlen, "scripted cut");
	return a->rc;
}

static void fake_changed(void *ctx, const struct kube_pod_list *pods)
{
	struct fake *f = ctx;

	f->changes++;
	f->pods_at_change = pods->n;
}

static void fake_current(void *ctx)
{
	(void)ctx;
}

static void fake_result(void *ctx, enum kube_call call, int rc, const char *err)
{
	(void)ctx, (void)call, (void)rc, (void)err;
}

static void fake_degraded(void *ctx, const char *why)
{
	struct fake *f = ctx;

	f->degraded_calls++;
	snprintf(f->degraded, sizeof(f->degraded), "%s", why ? why : "");
}

static double fake_random(void *ctx)
{
	(void)ctx;
	return 0.5;
}

static uint64_t fake_now(void *ctx)
{
	return ((struct fake *)ctx)->now;
}

static const struct informer_ops fake_ops = {fake_list,	  fake_watch,	 fake_changed, fake_current,
					     fake_result, fake_degraded, fake_random,  fake_now};

#define POD(uid, name)                                                                             \
	"{\"metadata\":{\"uid\":\"" uid "\",\"namespace\":\"ns\",\"name\":\"" name "\","           \
	"\"resourceVersion\":\"1\"},\"spec\":{\"nodeName\":\"n1\"}}"
#define PAGE(rv, cont, items)                                                                      \
	"{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"" rv "\"" cont "},"             \
	"\"items\":[" items "]}"
#define EVENT(type, rv, uid, name)                                                                 \
	"{\"type\":\"" type "\",\"object\":{\"metadata\":{\"uid\":\"" uid                          \
	"\",\"namespace\":\"ns\",\"name\":\"" name "\",\"resourceVersion\":\"" rv "\"},"           \
	"\"spec\":{\"nodeName\":\"n1\"}}}\n"
#define GONE_EVENT                                                                                 \
	"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,"                        \
	"\"message\":\"too old resource version\"}}\n"

static void run(struct informer *inf, struct fake *f, size_t steps, uint64_t *waits)
{
	for (size_t i = 0; i < steps; i++) {
		uint64_t w = informer_step(inf);

		if (waits)
			waits[i] = w;
		f->now += w;
	}
}

/* Two pages (the token percent-encoded), then a watch from the list's version. */
static void test_list_pages_then_watch(void **state)
{
	static const struct answer script[] = {
		{200, 0, PAGE("10", ",\"continue\":\"a+b/c=\"", POD("u2", "two"))},
		{200, 0, PAGE("11", "", POD("u1", "one"))},
		{200, 0,
		 EVENT("ADDED", "12", "u3", "three") EVENT("MODIFIED", "13", "u1", "one-b")
			 EVENT("DELETED", "14", "u2",
			       "two") "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":"
				      "{\"resourceVersion\":\"20\"}}}\n"},
		{200, 0, ""},
	};
	struct fake f = {.script = script, .n = 4};
	struct informer inf;
	const struct kube_pod *p;

	(void)state;
	informer_init(&inf, &fake_ops, &f, "n1", 0, 4096);
	run(&inf, &f, 2, NULL);
	/* the watch cache's whole answer: no limit, which it would ignore with "0" */
	assert_string_equal(f.paths[0],
			    "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1&resourceVersion=0");
	assert_string_equal(f.paths[1],
			    "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1&continue=a%2Bb%2Fc%3D");
	assert_string_equal(f.paths[2],
			    "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1&resourceVersion=11"
			    "&allowWatchBookmarks=true&timeoutSeconds=450&watch=true");
	assert_int_equal(inf.pods.n, 2);
	assert_non_null(p = kube_pod_find(&inf.pods, "u1"));
	assert_string_equal(p->name, "one-b");
	assert_non_null(kube_pod_find(&inf.pods, "u3"));
	assert_null(kube_pod_find(&inf.pods, "u2"));
	/* the list once, then each event */
	assert_int_equal(f.changes, 4);
	/* the bookmark's version is where the next watch resumes: no list */
	assert_string_equal(inf.rv, "20");
	run(&inf, &f, 1, NULL);
	assert_non_null(strstr(f.paths[3], "&resourceVersion=20&"));
	assert_int_equal(inf.st.lists, 1);
	assert_int_equal(inf.st.bookmarks, 1);
	informer_free(&inf);
}

/*
 * A cut watch resumes from the last version without a list; an ERROR 410
 * (or an HTTP 410) relists from the last version seen, after a jittered
 * wait, from the watch cache.
 */
static void test_cut_and_gone(void **state)
{
	static const struct answer script[] = {
		{200, 0, PAGE("5", "", POD("u1", "one"))},
		{200, -EIO, EVENT("ADDED", "6", "u2", "two")},
		{200, 0, GONE_EVENT},
		{200, 0,
		 PAGE("40", "", POD("u1", "one") "," POD("u2", "two") "," POD("u4", "four"))},
		{410, 0, NULL},
		{200, 0, PAGE("50", "", POD("u1", "one"))},
	};
	struct fake f = {.script = script, .n = 6};
	struct informer inf;
	uint64_t waits[6];

	(void)state;
	informer_init(&inf, &fake_ops, &f, "n1", 0, 4096);
	run(&inf, &f, 6, waits);
	assert_non_null(strstr(f.paths[2], "&resourceVersion=6&"));
	/* jittered backoff after the cut: 1 s x (0.5 + 0.5 x 0.5) */
	assert_int_equal(waits[1], 750000000ull);
	/* the 410: the backoff (doubled: 2 s x 0.75) and half the 2 s spread */
	assert_int_equal(waits[2], 2500000000ull);
	assert_string_equal(f.paths[3],
			    "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1&resourceVersion=6");
	assert_int_equal(inf.pods.n, 1);
	/* an HTTP 410 on the watch: the same, the backoff started over by the list */
	assert_int_equal(waits[4], 1750000000ull);
	assert_string_equal(f.paths[5],
			    "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1&resourceVersion=40");
	assert_int_equal(inf.st.lists, 3);
	assert_int_equal(inf.st.expired, 2);
	assert_int_equal(inf.st.broken, 1);
	assert_int_equal(inf.st.etcd_lists, 0);
	informer_free(&inf);
}

/*
 * Only a LIST from the last version that is itself 410 (or 504
 * ResourceVersionTooLarge) reads the newest (no resourceVersion: a quorum
 * read), after a backoff; the next relist uses the last version again.
 */
static void test_relist_gone(void **state)
{
	static const struct answer script[] = {
		{200, 0, PAGE("5", "", POD("u1", "one"))},
		{200, 0, GONE_EVENT},
		{410, 0, "{\"kind\":\"Status\",\"code\":410,\"message\":\"too old\"}"},
		{200, 0, PAGE("60", "", POD("u1", "one"))},
		{200, 0, GONE_EVENT},
		{504, 0,
		 "{\"kind\":\"Status\",\"code\":504,\"details\":{\"causes\":"
		 "[{\"reason\":\"ResourceVersionTooLarge\"}]}}"},
		{200, 0, PAGE("70", "", POD("u1", "one"))},
		{200, 0, GONE_EVENT},
		{200, 0, PAGE("80", "", POD("u1", "one"))},
	};
	struct fake f = {.script = script, .n = 9};
	struct informer inf;
	uint64_t waits[9];

	(void)state;
	informer_init(&inf, &fake_ops, &f, "n1", 0, 4096);
	run(&inf, &f, 9, waits);
	assert_string_equal(f.paths[2],
			    "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1&resourceVersion=5");
	assert_true(waits[2] > 0);
	assert_string_equal(f.paths[3], "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1");
	assert_string_equal(f.paths[5],
			    "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1&resourceVersion=60");
	assert_string_equal(f.paths[6], "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1");
	assert_string_equal(f.paths[8],
			    "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1&resourceVersion=70");
	assert_int_equal(inf.st.etcd_lists, 2);
	assert_int_equal(inf.st.lists, 4);
	informer_free(&inf);
}

/* An expired continue token (410 on the second page) starts the list over from the newest. */
static void test_continue_expired(void **state)
{
	static const struct answer script[] = {
		{200, 0, PAGE("10", ",\"continue\":\"tok\"", POD("u1", "one"))},
		{410, 0, "{\"kind\":\"Status\",\"code\":410,\"message\":\"continue expired\"}"},
		{200, 0, PAGE("30", "", POD("u1", "one") "," POD("u2", "two"))},
	};
	struct fake f = {.script = script, .n = 3};
	struct informer inf;

	(void)state;
	informer_init(&inf, &fake_ops, &f, "n1", 0, 4096);
	assert_int_equal(informer_step(&inf), 750000000ull);
	assert_int_equal(inf.pods.n, 0); /* nothing taken from a list cut short */
	assert_int_equal(informer_step(&inf), 0);
	assert_string_equal(f.paths[2], "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1");
	assert_int_equal(inf.pods.n, 2);
	assert_string_equal(inf.rv, "30");
	informer_free(&inf);
}

/* Failures back off, doubling to 30 s; a success starts over. */
static void test_backoff(void **state)
{
	static const struct answer script[] = {
		{0, -ECONNREFUSED, NULL}, {503, 0, NULL},
		{0, -ETIMEDOUT, NULL},	  {0, -EIO, NULL},
		{0, -EIO, NULL},	  {0, -EIO, NULL},
		{0, -EIO, NULL},	  {200, 0, PAGE("1", "", "")},
	};
	struct fake f = {.script = script, .n = 8};
	struct informer inf;
	uint64_t waits[8];
	static const uint64_t want[] = {1, 2, 4, 8, 16, 30, 30};

	(void)state;
	informer_init(&inf, &fake_ops, &f, "n1", 0, 4096);
	run(&inf, &f, 8, waits);
	for (int i = 0; i < 7; i++)
		assert_int_equal(waits[i], want[i] * 750000000ull);
	assert_int_equal(waits[7], 0);
	assert_int_equal(inf.backoff_ns, 0);
	informer_free(&inf);
}

#define PAD "\"x\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\""

/*
 * An event over the per-pod bound skips that pod (named from its first
 * bytes) and the watch goes on; one that names no pod breaks the watch and
 * relists from the last version.
 */
static void test_oversize_event(void **state)
{
	static const struct answer script[] = {
		{200, 0, PAGE("1", "", POD("u1", "one") "," POD("u2", "two"))},
		{200, 0,
		 "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"one\","
		 "\"namespace\":\"ns\",\"uid\":\"u1\",\"resourceVersion\":\"7\","
		 "\"annotations\":{" PAD "," PAD "," PAD "," PAD "," PAD
		 "}}}}\n" EVENT("ADDED", "8", "u3", "three") "{" PAD "," PAD "," PAD "," PAD "," PAD
							     "}\n"},
		{200, 0, PAGE("9", "", POD("u2", "two"))},
	};
	struct fake f = {.script = script, .n = 3};
	struct informer inf;

	(void)state;
	informer_init(&inf, &fake_ops, &f, "n1", 0, 300);
	run(&inf, &f, 2, NULL);
	assert_int_equal(inf.st.pods_oversize, 1);
	assert_int_equal(inf.st.oversize, 2);
	assert_null(kube_pod_find(&inf.pods, "u1")); /* forgotten: its state is unknown */
	assert_non_null(kube_pod_find(&inf.pods, "u3"));
	assert_string_equal(inf.rv, "8");
	assert_true(inf.must_list); /* the last one named no pod */
	run(&inf, &f, 1, NULL);
	assert_string_equal(f.paths[2],
			    "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1&resourceVersion=8");
	informer_free(&inf);
}

/*
 * A list over the cap is read again in pages, halving from 500 until one
 * fits, without resourceVersion "0" (the cache would ignore the limit); a
 * page of one pod over the cap skips that pod. When not even that can be
 * read, the pod data is degraded (the old set stays) until a list fits.
 */
static void test_oversize_list(void **state)
{
	static const struct answer script[] = {
		{200, 0, PAGE("1", "", POD("u1", "one"))},
		{200, 0, GONE_EVENT},
		{0, -EFBIG, NULL},					       /* whole */
		{0, -EFBIG, NULL},					       /* 500 */
		{200, 0, PAGE("3", ",\"continue\":\"c1\"", POD("u1", "one"))}, /* 250 */
		{0, -EFBIG, NULL},					       /* 250 */
		{0, -EFBIG, NULL},					       /* 125 */
		{0, -EFBIG, NULL},					       /* 62 */
		{0, -EFBIG, NULL},					       /* 31 */
		{0, -EFBIG, NULL},					       /* 15 */
		{0, -EFBIG, NULL},					       /* 7 */
		{0, -EFBIG, NULL},					       /* 3 */
		{0, -EFBIG,
		 "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"3\",\"continue\":"
		 "\"c2\"},\"items\":[{\"metadata\":{\"name\":\"huge\",\"namespace\":\"ns\","
		 "\"uid\":\"u9\",\"resourceVersion\":\"2\",\"annotations\":{\"a\":\"xxx"}, /* 1 */
		{200, 0, PAGE("3", "", POD("u2", "two"))},				   /* 1 */
	};
	struct fake f = {.script = script, .n = 14};
	struct informer inf;

	(void)state;
	informer_init(&inf, &fake_ops, &f, "n1", 0, 4096);
	run(&inf, &f, 3, NULL);
	assert_string_equal(f.paths[2],
			    "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1&resourceVersion=1");
	assert_string_equal(f.paths[3], "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1&limit=500"
					"&resourceVersion=1");
	assert_string_equal(f.paths[5], "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1&limit=250"
					"&continue=c1");
	assert_string_equal(f.paths[12], "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1&limit=1"
					 "&continue=c1");
	assert_string_equal(f.paths[13], "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1&limit=1"
					 "&continue=c2");
	assert_int_equal(inf.pods.n, 2);
	assert_null(kube_pod_find(&inf.pods, "u9"));
	assert_int_equal(inf.st.pods_oversize, 1);
	assert_int_equal(f.degraded_calls, 0);
	assert_int_equal(inf.st.etcd_lists, 11); /* every paged request */
	informer_free(&inf);
}

static void test_oversize_degraded(void **state)
{
	struct answer script[13] = {
		{200, 0, PAGE("1", "", POD("u1", "one"))},
		{200, 0, GONE_EVENT},
	};
	struct fake f = {.script = script, .n = 13};
	struct informer inf;

	(void)state;
	for (int i = 2; i < 12; i++) /* whole, then 500 .. 1: no head to skip by */
		script[i] = (struct answer){0, -EFBIG, NULL};
	script[12] = (struct answer){200, 0, PAGE("3", "", POD("u1", "one") "," POD("u2", "two"))};
	informer_init(&inf, &fake_ops, &f, "n1", 0, 4096);
	run(&inf, &f, 3, NULL);
	assert_int_equal(f.degraded_calls, 1);
	assert_non_null(strstr(f.degraded, "pod list over the size cap"));
	assert_int_equal(inf.pods.n, 1); /* kept */
	run(&inf, &f, 1, NULL);
	assert_int_equal(f.degraded_calls, 2);
	assert_string_equal(f.degraded, "");
	assert_int_equal(inf.pods.n, 2);
	informer_free(&inf);
}

/* A pod that ended (Succeeded, Failed) is not kept, from a list or from the watch. */
static void test_terminated(void **state)
{
	static const struct answer script[] = {
		{200, 0,
		 PAGE("1", "",
		      POD("u1", "one") ",{\"metadata\":{\"uid\":\"u2\",\"namespace\":\"ns\","
				       "\"name\":\"done\"},\"status\":{\"phase\":\"Succeeded\"}}")},
		{200, 0,
		 "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"uid\":\"u1\",\"namespace\""
		 ":\"ns\",\"name\":\"one\",\"resourceVersion\":\"4\"},\"status\":{\"phase\":"
		 "\"Failed\"}}}\n"},
	};
	struct fake f = {.script = script, .n = 2};
	struct informer inf;

	(void)state;
	informer_init(&inf, &fake_ops, &f, "n1", 0, 4096);
	run(&inf, &f, 1, NULL);
	assert_int_equal(inf.pods.n, 1);
	assert_int_equal(inf.st.terminated, 1);
	run(&inf, &f, 1, NULL);
	assert_int_equal(inf.pods.n, 0);
	assert_int_equal(inf.st.terminated, 2);
	informer_free(&inf);
}

/* New label keys after the first list: a relist from the last version, and the loop hears of
 * it even though no pod's version moved. */
static void test_label_keys(void **state)
{
#define LABELLED                                                                                   \
	"{\"metadata\":{\"uid\":\"u1\",\"namespace\":\"ns\",\"name\":\"one\","                     \
	"\"resourceVersion\":\"1\",\"labels\":{\"a\":\"1\",\"b\":\"2\"}}}"
	static const struct answer script[] = {
		{200, 0, PAGE("5", "", LABELLED)},
		{200, 0, PAGE("6", "", LABELLED)},
	};
	struct fake f = {.script = script, .n = 2};
	struct informer inf;

	(void)state;
	informer_init(&inf, &fake_ops, &f, "n1", 0, 4096);
	assert_int_equal(informer_set_label_keys(&inf, "b\0"), 0);
	assert_true(inf.must_list); /* the first list, as before: no second one queued */
	run(&inf, &f, 1, NULL);
	assert_false(kube_pod_has_label(&inf.pods.pods[0], "a"));
	assert_true(kube_pod_has_label(&inf.pods.pods[0], "b=2"));
	assert_int_equal(informer_set_label_keys(&inf, "b\0"), 0); /* the same: nothing */
	assert_false(inf.must_list);
	assert_int_equal(informer_set_label_keys(&inf, "a\0b\0"), 0);
	assert_true(inf.must_list);
	run(&inf, &f, 1, NULL);
	assert_string_equal(f.paths[1],
			    "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1&resourceVersion=5");
	assert_true(kube_pod_has_label(&inf.pods.pods[0], "a=1"));
	assert_int_equal(f.changes, 2);
	informer_free(&inf);
#undef LABELLED
}

/* resync_s > 0: the watch ends at the resync, and a list follows; unchanged, it wakes nobody. */
static void test_resync(void **state)
{
	static const struct answer script[] = {
		{200, 0, PAGE("1", "", POD("u1", "one"))},
		{200, 0, PAGE("2", "", POD("u1", "one"))},
	};
	struct fake f = {.script = script, .n = 2};
	struct informer inf;

	(void)state;
	informer_init(&inf, &fake_ops, &f, "n1", 60, 4096);
	run(&inf, &f, 1, NULL);
	f.now += 61000000000ull;
	run(&inf, &f, 2, NULL); /* the watch sees the resync due and lists instead */
	assert_int_equal(inf.st.lists, 2);
	assert_int_equal(inf.st.watches, 0);
	assert_int_equal(f.changes, 1); /* the same pod at the same version */
	assert_non_null(strstr(f.paths[1], "&resourceVersion=1"));
	informer_free(&inf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_split),  cmocka_unit_test(test_stream_oversize),
		cmocka_unit_test(test_stream_bad),    cmocka_unit_test(test_list_pages_then_watch),
		cmocka_unit_test(test_cut_and_gone),  cmocka_unit_test(test_continue_expired),
		cmocka_unit_test(test_backoff),	      cmocka_unit_test(test_oversize_event),
		cmocka_unit_test(test_oversize_list), cmocka_unit_test(test_oversize_degraded),
		cmocka_unit_test(test_terminated),    cmocka_unit_test(test_relist_gone),
		cmocka_unit_test(test_resync),	      cmocka_unit_test(test_label_keys),
		cmocka_unit_test(test_stream_skip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
