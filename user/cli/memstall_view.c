// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* qoslet memstall: reclaim stalls and OOM kills per cgroup, and the kills themselves. */
#include "cli/memstall_view.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/mem_explain.h"
#include "log.h"

/* The interval's stalls as the agent measures and explains them (one view per process). */
static struct mem_explain explain;

/* A time as a share of the interval (task time: may pass 1 with several tasks). */
static double share_of(const struct view *v, uint64_t ns)
{
	return v->interval_ns ? (double)ns / (double)v->interval_ns : 0;
}

static uint64_t reclaim_ns(const struct cg_sample *cg)
{
	return cg->mem.direct.sum_ns + cg->mem.memcg.sum_ns;
}

/* The cgroup's memory stall as the agent counts it; 0 when not measured. */
static uint64_t stall_ns(const struct mem_explain *x, const struct cg_sample *cg)
{
	const struct mem_explain_cg *e = mem_explain_find(x, cg->id);

	return e ? e->mem.stall_ns : 0;
}

/* qsort() has no context argument; ranking is single-threaded. */
static const struct mem_explain *rank_by;

static int cmp_rank(const void *a, const void *b)
{
	const struct cg_sample *x = *(const struct cg_sample *const *)a;
	const struct cg_sample *y = *(const struct cg_sample *const *)b;

	if (stall_ns(rank_by, x) != stall_ns(rank_by, y))
		return stall_ns(rank_by, x) > stall_ns(rank_by, y) ? -1 : 1;
	if (reclaim_ns(x) != reclaim_ns(y))
		return reclaim_ns(x) > reclaim_ns(y) ? -1 : 1;
	if (x->mem.iowait.sum_ns != y->mem.iowait.sum_ns)
		return x->mem.iowait.sum_ns > y->mem.iowait.sum_ns ? -1 : 1;
	if (x->mem.oom_kills != y->mem.oom_kills)
		return x->mem.oom_kills > y->mem.oom_kills ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

size_t memstall_rank(const struct snapshot *delta, const struct mem_explain *x,
		     const struct cg_sample **out)
{
	size_t n = 0;

	for (size_t i = 0; i < delta->n_cgroups; i++)
		if (mem_explain_active(&delta->cgroups[i]))
			out[n++] = &delta->cgroups[i];
	rank_by = x;
	if (n)
		qsort(out, n, sizeof(*out), cmp_rank);
	return n;
}

static const char *const drop_names[MEMSTALL_DROP_NR] = {
	[MEMSTALL_DROP_MAP_FULL] = "map_full",
	[MEMSTALL_DROP_NO_STORAGE] = "no_storage",
	[MEMSTALL_DROP_RINGBUF_FULL] = "ringbuf_full",
};

static json_t *hist_json(const struct lat_hist *h)
{
	return json_pack("{s:I, s:I, s:I, s:I}", "count", (json_int_t)h->count, "sum_ns",
			 (json_int_t)h->sum_ns, "p50_ns", (json_int_t)hist_quantile_ns(h, 0.50),
			 "p99_ns", (json_int_t)hist_quantile_ns(h, 0.99));
}

static json_t *cgroup_json(struct view *v, const struct cg_sample *cg)
{
	const struct mem_explain_cg *e = mem_explain_find(&explain, cg->id);
	json_t *o = view_cgroup_json(v, cg->id);

	json_object_update_new(
		o,
		json_pack("{s:o, s:o, s:o, s:o, s:f, s:f, s:f, s:I, s:I}", "direct",
			  hist_json(&cg->mem.direct), "memcg", hist_json(&cg->mem.memcg), "stall",
			  hist_json(&cg->mem.stall), "iowait", hist_json(&cg->mem.iowait),
			  "stall_share", share_of(v, e ? e->mem.stall_ns : 0), "refault_wait_share",
			  share_of(v, e ? e->mem.refault_wait_ns : 0), "io_share",
			  share_of(v, cg->mem.iowait.sum_ns), "io_bytes",
			  (json_int_t)cg->mem.io_bytes, "oom_kills",
			  (json_int_t)cg->mem.oom_kills));
	json_object_set_new(o, "culprit", mem_explain_culprit_json(v, cg->id, e ? &e->mem : NULL));
	json_object_set_new(o, "io_culprit",
			    mem_explain_culprit_json(v, cg->id, e ? &e->io : NULL));
	return o;
}

static json_t *oom_json(struct view *v, const struct oom_event *e)
{
	json_t *o = view_cgroup_json(v, e->cgroup_id);

	json_object_update_new(o, json_pack("{s:f, s:i, s:s}", "ts", e->ts_ns / 1e9, "pid",
					    (int)e->pid, "comm", e->comm));
	return o;
}

/* "count p50 p99 total" of one histogram, fixed width. */
static void print_hist(FILE *out, const struct lat_hist *h)
{
	char a[32], b[32], c[32];

	if (!h->count) {
		fprintf(out, " %8s %9s %9s %9s", "0", "-", "-", "-");
		return;
	}
	fprintf(out, " %8llu %9s %9s %9s", (unsigned long long)h->count,
		view_fmt_ns(hist_quantile_ns(h, 0.50), a, sizeof(a)),
		view_fmt_ns(hist_quantile_ns(h, 0.99), b, sizeof(b)),
		view_fmt_ns((double)h->sum_ns, c, sizeof(c)));
}

/* The culprit column: its share, then the end of its name. */
#define CULPRIT_WIDTH 30
#define CULPRIT_COLS  "30"

static void print_culprit(struct view *v, const struct mem_explain_cg *e, FILE *out)
{
	char name[PATH_MAX + 2], t[CULPRIT_WIDTH + 1], cell[CULPRIT_WIDTH + 8];

	if (!e || !e->mem.explained) {
		fprintf(out, " %-" CULPRIT_COLS "s", "-");
		return;
	}
	snprintf(cell, sizeof(cell), "%3.0f%% %s", 100 * e->mem.top.share,
		 view_fmt_tail(mem_explain_culprit_name(v, &e->mem, name, sizeof(name)),
			       CULPRIT_WIDTH - 5, t, sizeof(t)));
	fprintf(out, " %-" CULPRIT_COLS "s", cell);
}

static void print_header(struct view *v, const struct snapshot *delta, FILE *out)
{
	char a[32], when[32];
	time_t t = delta->ts_ns / 1000000000ULL;
	struct tm tm;

	strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&t, &tm));
	fprintf(out, "%s  memory stalls per cgroup over %s (%s%s)\n", when,
		view_fmt_ns((double)v->interval_ns, a, sizeof(a)),
		probe_set_status(v->probes, PROBE_MEMSTALL).detail,
		probe_set_owner(v->probes) ? "" : ", shared");
	fprintf(out, " %6s %6s %-" CULPRIT_COLS "s %8s %9s %9s %9s %8s %9s %9s %9s %5s  %s\n",
		"STALL%", "IO%", "CULPRIT", "DIRECT", "p50", "p99", "total", "MEMCG", "p50", "p99",
		"total", "OOM", "CGROUP");
}

static void print_oom(FILE *out, const char *path, const struct oom_event *e)
{
	time_t t = e->ts_ns / 1000000000ULL;
	char when[32];
	struct tm tm;

	strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&t, &tm));
	fprintf(out, "  %s.%03u  pid %-8u %-16s %s\n", when, (unsigned)(e->ts_ns / 1000000 % 1000),
		e->pid, e->comm, path ? path : "(removed)");
}

/* Drops are never silent: a warning on stderr, and a field in JSON. */
static json_t *report_drops(const struct snapshot *delta)
{
	json_t *drops = json_object();

	for (int i = 0; i < MEMSTALL_DROP_NR; i++) {
		json_object_set_new(drops, drop_names[i],
				    json_integer((json_int_t)delta->memstall_drops[i]));
		if (delta->memstall_drops[i])
			log_warn("memstall probe dropped %llu events (%s)",
				 (unsigned long long)delta->memstall_drops[i], drop_names[i]);
	}
	return drops;
}

static void render(struct view *v, const struct snapshot *delta, FILE *out)
{
	const struct cg_sample **ranked = calloc(delta->n_cgroups + 1, sizeof(*ranked));
	json_t *doc = v->args.json ? view_json_header(v, delta) : NULL;
	json_t *list = json_array(), *ooms = json_array(), *drops = report_drops(delta);
	size_t n;

	if (mem_explain_update(&explain, v, delta))
		log_err("out of memory: no stall explained in this report");
	n = ranked ? memstall_rank(delta, &explain, ranked) : 0;
	char buf[PATH_MAX + 2];
	bool titled = false; /* the text output's "OOM kills:" line */

	if (!ranked)
		log_err("out of memory: cgroups left out of this report");
	if (!v->args.json)
		print_header(v, delta, out);
	for (size_t i = 0; i < n; i++) {
		const struct cg_sample *cg = ranked[i];
		const char *path;

		if (!view_selected(v, cg->id))
			continue;
		if (v->args.json) {
			json_array_append_new(list, cgroup_json(v, cg));
			continue;
		}
		path = view_cgroup_path(v, cg->id, buf, sizeof(buf));
		/* without PSI's inputs the agent measures no stall either: not 0, unknown */
		if (delta->memstall_psi)
			fprintf(out, " %6.1f %6.1f", 100 * share_of(v, stall_ns(&explain, cg)),
				100 * share_of(v, cg->mem.iowait.sum_ns));
		else
			fprintf(out, " %6s %6s", "-", "-");
		print_culprit(v, mem_explain_find(&explain, cg->id), out);
		print_hist(out, &cg->mem.direct);
		print_hist(out, &cg->mem.memcg);
		fprintf(out, " %5llu  %s\n", (unsigned long long)cg->mem.oom_kills,
			path ? path : "(removed)");
	}
	for (size_t i = 0; i < delta->n_ooms; i++) {
		const struct oom_event *e = &delta->ooms[i];
		const char *path;

		if (!view_selected(v, e->cgroup_id))
			continue;
		if (v->args.json) {
			json_array_append_new(ooms, oom_json(v, e));
			continue;
		}
		path = view_cgroup_path(v, e->cgroup_id, buf, sizeof(buf));
		if (!titled)
			fprintf(out, "OOM kills:\n");
		titled = true;
		print_oom(out, path, e);
	}
	if (v->args.json) {
		json_object_set_new(doc, "cgroups", list);
		json_object_set_new(doc, "oom_events", ooms);
		json_object_set_new(doc, "drops", drops);
		view_json_emit(doc, out);
	} else {
		json_decref(list);
		json_decref(ooms);
		json_decref(drops);
		fflush(out);
	}
	free(ranked);
}

const struct view_ops memstall_view = {
	.name = "memstall",
	.summary = "memory and I/O stalls, reclaim and OOM kills per cgroup",
	.usage = "Usage: qoslet memstall [-c CGROUP]... [-j] [INTERVAL [COUNT]]\n"
		 "\n"
		 "Per cgroup and interval: STALL%, the time its tasks lost to memory as the\n"
		 "qoslet agent's memory interference policy counts it: what the kernel's\n"
		 "pressure accounting (PSI) counts (sleeps the kernel flags as memory stalls,\n"
		 "such as waits for refaulted pages of its working set, plus direct and memcg\n"
		 "reclaim, traced by the memstall probe: on cgroup v1 there is no\n"
		 "memory.pressure), plus the waits for its refaults that PSI leaves out (a\n"
		 "page someone else's page cache pushed out is read back from the disk all\n"
		 "the same: its I/O wait beyond the memory stall, times the share of its\n"
		 "block I/O that memory.stat's workingset refaults read back). So STALL% is\n"
		 "at least PSI's memory stall, and more for a reader whose pages are evicted.\n"
		 "IO%, the time its tasks waited for I/O. Both are shares of the interval\n"
		 "(task time: several stalled tasks can pass 100%).\n"
		 "CULPRIT, with its share of the stall: the party that explains it, found by\n"
		 "the agent's own code. The stall is shared out among the parties by their\n"
		 "evidence: 'own limit' for the hits on the cgroup's own memory limit\n"
		 "(memory.failcnt; v2 memory.events.local), then, when a shared ancestor\n"
		 "(kubepods, a QoS tier, any parent) hit its limit, the cgroups by the\n"
		 "reclaim their tasks did (the reclaimer is the charger that found the limit\n"
		 "short: a page-cache streamer evicting its siblings' pages), else the\n"
		 "ancestor itself; when no limit was hit, the same among every cgroup (a\n"
		 "system slice as well as a pod), else 'node'. 'itself' is the cgroup's own\n"
		 "reclaim. Every cgroup with memstall activity is a party of its own here\n"
		 "(the agent folds a pod's containers into the pod), and the first interval\n"
		 "has no limit hits or refaults to go by (they are counted between two\n"
		 "intervals).\n"
		 "Then how often and how long its tasks were stuck reclaiming memory: direct\n"
		 "reclaim (the node was short of free memory) and memcg reclaim (the cgroup\n"
		 "or an ancestor hit its memory limit or memory.high), as count, p50, p99\n"
		 "and total time; and how many of its tasks the OOM killer chose. Then every\n"
		 "OOM kill of the interval: time, pid, command and cgroup. A stall is charged\n"
		 "to the cgroup of the task that stalled, a kill to the victim's.\n"
		 "Only cgroups with a stall, an I/O wait, reclaim or a kill in the interval\n"
		 "are shown, most stalled first. -j adds the I/O wait's culprit (by the\n"
		 "bytes of block I/O on the node's disks: io_culprit).\n"
		 "\n"
		 "OOM kill events are delivered once: when several qoslet processes read the\n"
		 "same pinned maps, each event goes to one of them. The per-cgroup OOM count\n"
		 "is shared and seen by all.\n",
	.examples = "  qoslet memstall 10\n"
		    "      every 10 s, the cgroups that stalled in reclaim, and the OOM kills\n"
		    "  qoslet memstall -c kubepods/besteffort -j 60 1\n"
		    "      one minute of BestEffort pods' reclaim stalls, as one JSON line\n",
	.probes = PROBE_BIT(PROBE_MEMSTALL),
	.render = render,
};
