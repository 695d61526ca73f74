// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Answers to other writers of the files the actuator wrote
 * (docs/agent-actuator.md, "Settings that stay applied").
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "actuate/internal.h"
#include "str.h"

static struct journal_entry *find(struct actuator *a, enum cg_knob k, const char *rel)
{
	for (size_t i = 0; i < a->j.n; i++)
		if (a->j.v[i].knob == k && !strcmp(a->j.v[i].rel, rel))
			return &a->j.v[i];
	return NULL;
}

void act_written(struct actuator *a, enum cg_knob k, const char *rel, const char *text)
{
	struct journal_entry *e = find(a, k, rel);
	struct act_written *w;

	if (!e)
		return;
	w = &e->w;
	if (!w->last[0])
		a->watch_gen++;
	/* Read back: the kernel's form of the value (memory.high in whole pages, say). */
	if (cg_read_knob(a->c, k, rel, w->last, sizeof(w->last)) || !w->last[0])
		str_copy(w->last, sizeof(w->last), text);
	w->noted = false;
	if (a->cur) {
		w->kind = a->cur->kind;
		w->id = a->cur->id;
		w->cls = a->cur->cls;
		w->rule = a->cur->rule;
	}
}

void actuator_watch_list(const struct actuator *a,
			 void (*fn)(void *ctx, enum cg_knob knob, const char *rel), void *ctx)
{
	for (size_t i = 0; i < a->j.n; i++) {
		const struct journal_entry *e = &a->j.v[i];

		if (e->w.last[0] && !e->w.contest.hold_until_ns)
			fn(ctx, e->knob, e->rel);
	}
}

uint64_t actuator_watch_generation(const struct actuator *a)
{
	return a->watch_gen + a->j.gen;
}

bool actuator_note(struct actuator *a, enum cg_knob k, const char *rel, const char *text)
{
	struct journal_entry *e = find(a, k, rel);

	if (!e || !e->w.last[0] || !strcmp(text, e->w.last))
		return false;
	e->w.noted = true;
	return true;
}

const char *act_answer_name(enum act_answer_kind k)
{
	static const char *const names[ACT_ANSWER_NR] = {
		[ACT_ANSWER_REASSERTED] = "reasserted",
		[ACT_ANSWER_ADOPTED] = "adopted",
		[ACT_ANSWER_CONTESTED] = "contested",
	};

	return (unsigned int)k < ACT_ANSWER_NR ? names[k] : "?";
}

/*
 * The values qoslet only scales from, never holds against their owner: an
 * LS unit's CPU quota is its limit (the kubelet's, which an in-place resize
 * changes); burst raises it from there and never below it.
 */
static bool owners_value(const struct journal_entry *e)
{
	return e->knob == CG_KNOB_QUOTA && qos_is_ls(e->w.cls);
}

/*
 * Whatever the answer, the other writer's value is the owner's word: what
 * a stop restores. Most rewrites (systemd re-applying a unit) put back the
 * original itself: no journal write then.
 */
static int adopt_original(struct actuator *a, size_t i, const char *text)
{
	int err;

	if (!strcmp(a->j.v[i].orig, text))
		return 0;
	err = journal_set_original(&a->j, i, text);
	return err ? err : journal_sync(&a->j, a->c, a->subtree);
}

static void fail(struct act_answer *ans, int err, const char *what)
{
	ans->r.outcome = OUT_FAILED;
	ans->r.err = err;
	snprintf(ans->r.why, sizeof(ans->r.why), "%s: %s", what, strerror(-err));
}

/*
 * Entry i's file changed (noted), or its hold ended: false when there is
 * nothing to say (the file is back to the actuator's value, or held, or gone).
 */
static bool answer(struct actuator *a, size_t i, bool hold_over, uint64_t now_ns,
		   struct act_answer *ans)
{
	struct journal_entry *e = &a->j.v[i];
	struct act_result *r = &ans->r;
	enum contest_verdict v;
	int err;

	*ans = (struct act_answer){.knob = e->knob,
				   .rel = e->rel,
				   .act_kind = e->w.kind,
				   .id = e->w.id,
				   .cls = e->w.cls,
				   .rule = e->w.rule};
	err = cg_read_knob(a->c, e->knob, e->rel, r->before, sizeof(r->before));
	if (err == -ENOENT)
		return false; /* the cgroup went: the agent forgets it */
	if (err) {
		fail(ans, err, "reading it");
		return true;
	}
	if (!strcmp(r->before, e->w.last))
		return false;
	v = hold_over ? CONTEST_ANSWER : contest_judge(&e->w.contest, now_ns);
	if (v == CONTEST_HELD)
		return false;
	snprintf(r->after, sizeof(r->after), "%s", r->before);
	if (v == CONTEST_BACK_OFF) {
		a->watch_gen++; /* unwatched while held: its writes no longer wake the agent */
		ans->kind = ACT_ANSWER_CONTESTED;
		ans->hold_ns = contest_hold_ns(&e->w.contest);
		r->outcome = OUT_CONTESTED;
		if ((err = adopt_original(a, i, r->before))) {
			fail(ans, err, "journal");
			return true;
		}
		snprintf(r->why, sizeof(r->why),
			 "another writer undid %u write-backs in a row, each within %llu s: "
			 "\"%.60s\" is written back in %llu s",
			 e->w.contest.strikes, CONTEST_WINDOW_NS / 1000000000ull, e->w.last,
			 (unsigned long long)(ans->hold_ns / 1000000000ull));
		return true;
	}
	if (owners_value(e)) {
		if ((err = adopt_original(a, i, r->before))) {
			fail(ans, err, "journal");
			return true;
		}
		snprintf(e->w.last, sizeof(e->w.last), "%s", r->before);
		ans->kind = ACT_ANSWER_ADOPTED;
		r->outcome = OUT_ADOPTED;
		snprintf(r->why, sizeof(r->why),
			 "the owner's limit: the new original, which qoslet scales from");
		return true;
	}
	ans->kind = ACT_ANSWER_REASSERTED;
	err = act_write(a, e->knob, e->rel, e->w.last, false, r->why, sizeof(r->why));
	if (err) {
		r->outcome = OUT_FAILED;
		r->err = err;
		return true;
	}
	if (cg_read_knob(a->c, e->knob, e->rel, r->after, sizeof(r->after)))
		snprintf(r->after, sizeof(r->after), "%s", e->w.last);
	r->outcome = OUT_REASSERTED;
	/* After the write back, which is what the wait is for: a sync is two fsyncs. */
	if ((err = adopt_original(a, i, r->before)))
		snprintf(r->why, sizeof(r->why),
			 "written back, but the journal keeps the old "
			 "original: %s",
			 strerror(-err));
	if (hold_over)
		snprintf(r->why, sizeof(r->why), "the hold of a contest ended");
	return true;
}

void actuator_answer(struct actuator *a, uint64_t now_ns,
		     void (*fn)(void *ctx, const struct act_answer *ans), void *ctx)
{
	for (size_t i = 0; i < a->j.n; i++) {
		struct act_written *w = &a->j.v[i].w;
		struct act_answer ans;
		bool hold_over;

		if (!w->last[0])
			continue;
		hold_over = contest_hold_over(&w->contest, now_ns);
		if (hold_over)
			a->watch_gen++; /* watched again */
		if (!w->noted && !hold_over)
			continue;
		w->noted = false;
		if (answer(a, i, hold_over, now_ns, &ans))
			fn(ctx, &ans);
	}
}
