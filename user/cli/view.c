// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "cli/view.h"

#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "kube_path.h"

#include "clock.h"
#include "log.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

const char *view_cgroup_path(struct view *v, uint64_t id, char *buf, size_t size)
{
	const char *rel;

	if (id == QOSLET_CULPRIT_IDLE)
		return "(idle)";
	rel = cgroup_names_lookup(v->names, id, clock_ns(CLOCK_MONOTONIC));
	if (!rel)
		return NULL;
	snprintf(buf, size, "/%s", rel);
	return buf;
}

int view_selected(struct view *v, uint64_t id)
{
	const char *rel;
	size_t i;

	if (!v->args.n_cgroups && !v->pods.active)
		return 1;
	rel = cgroup_names_lookup(v->names, id, clock_ns(CLOCK_MONOTONIC));
	if (!rel || !pod_filter_match(&v->pods, rel))
		return 0;
	for (i = 0; i < v->args.n_cgroups; i++)
		if (cgroup_path_within(rel, v->filters[i]))
			break;
	return !v->args.n_cgroups || i < v->args.n_cgroups;
}

const char *view_node_name(void)
{
	static struct utsname uts;
	const char *env = getenv("NODE_NAME");

	if (env && *env)
		return env;
	if (!uts.nodename[0] && uname(&uts))
		return "";
	return uts.nodename;
}

json_t *view_cgroup_json(struct view *v, uint64_t id)
{
	char buf[PATH_MAX + 2];
	const char *path = view_cgroup_path(v, id, buf, sizeof(buf));
	struct kube_ids k;
	bool kube = path && kube_path_parse(path, &k);

	return json_pack("{s:s?, s:I, s:s?, s:s?, s:s?}", "path", path, "id", (json_int_t)id, "qos",
			 kube ? kube_qos_name(k.qos) : NULL, "pod", kube ? k.pod_uid : NULL,
			 "container", kube && k.container_id[0] ? k.container_id : NULL);
}

json_t *view_json_header(struct view *v, const struct snapshot *delta)
{
	json_t *probes = json_object();

	for (int id = 0; id < PROBE_NR; id++) {
		struct probe_status st;

		if (!(v->ops->probes & PROBE_BIT(id)))
			continue;
		st = probe_set_status(v->probes, id);
		json_object_set_new(probes, st.name,
				    json_pack("{s:b, s:s}", "on", st.on, "detail", st.detail));
	}
	/*
	 * "shared": another qoslet process attached the programs we read;
	 * "partial": SIGINT/SIGTERM cut this interval short (interval_s is its length).
	 */
	return json_pack("{s:i, s:s, s:s, s:f, s:f, s:b, s:b, s:o}", "schema", VIEW_JSON_SCHEMA,
			 "node", view_node_name(), "view", v->ops->name, "ts", delta->ts_ns / 1e9,
			 "interval_s", v->interval_ns / 1e9, "partial", v->partial, "shared",
			 !probe_set_owner(v->probes), "probes", probes);
}

void view_json_emit(json_t *obj, FILE *out)
{
	/*
	 * Rendered in memory, then written at once: json_dumpf() calls
	 * fwrite() once per token, and at 500 cgroups those 20,000 locked
	 * calls a second were a fifth of `top -j`'s CPU. JSON_REAL_PRECISION
	 * keeps "ts" to milliseconds, not 17 digits.
	 */
	char *text = json_dumps(obj, JSON_COMPACT | JSON_REAL_PRECISION(13));

	if (text) {
		fputs(text, out);
		fputc('\n', out);
		fflush(out);
	} else {
		log_warn("out of memory: an interval's JSON line was not printed");
	}
	free(text);
	json_decref(obj);
}

const char *view_fmt_tail(const char *s, size_t width, char *buf, size_t size)
{
	size_t len = strlen(s);

	if (len <= width)
		return s;
	snprintf(buf, size, "...%s", s + len - (width - 3));
	return buf;
}

const char *view_fmt_ns(double ns, char *buf, size_t size)
{
	if (ns < 1e3)
		snprintf(buf, size, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, size, "%.1f us", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, size, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, size, "%.2f s", ns / 1e9);
	return buf;
}

static void usage(const struct view_ops *ops, FILE *out)
{
	fprintf(out, "%s\nOptions:\n", ops->usage);
	view_args_usage(ops->options, out);
	fprintf(out, "\nExamples:\n%s", ops->examples);
}

/* Validates every -c before anything is loaded, so bad input changes nothing. */
static int resolve_filters(struct view *v)
{
	for (size_t i = 0; i < v->args.n_cgroups; i++) {
		const char *arg = v->args.cgroups[i];
		char rel[PATH_MAX];
		uint64_t id;
		int err = cgroup_path_normalize(v->fs.root, arg, rel, sizeof(rel));

		if (!err)
			err = cgroup_id_of(&v->fs, rel, &id);
		if (err) {
			fprintf(stderr, "qoslet: cgroup '%s' %s under %s\n", arg,
				err == -EINVAL ? "is not a valid cgroup path" : "does not exist",
				v->fs.root);
			return -1;
		}
		v->filters[i] = strdup(rel);
		if (!v->filters[i])
			return -1;
	}
	return 0;
}

bool view_stopping(void)
{
	return stop;
}

bool view_sleep_until(const struct timespec *deadline)
{
	while (!stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, deadline, NULL) == EINTR)
		;
	return stop;
}

static int run_loop(const struct view_ops *ops, struct view *v)
{
	struct snapshot before, now, delta = {0};
	uint64_t step = (uint64_t)(v->args.interval_s * 1e9);
	struct timespec next;
	long printed = 0;
	int err = probe_set_read(v->probes, &before);

	if (err)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!stop) {
		uint64_t t = (uint64_t)next.tv_sec * 1000000000ULL + next.tv_nsec + step;

		next.tv_sec = t / 1000000000ULL;
		next.tv_nsec = t % 1000000000ULL;
		/* Absolute deadlines: intervals do not drift by the time we spend. */
		if (ops->wait ? ops->wait(v, &next, delta.ts_ns ? &delta : NULL)
			      : view_sleep_until(&next)) {
			/*
			 * Interrupted (not a quit key): report the interval so far,
			 * as bcc's tools do, so `runqlat 60` stopped at 45 s still
			 * shows those 45 s.
			 */
			if (!view_stopping())
				break;
			v->partial = true;
		}
		probe_set_poll(v->probes);
		err = probe_set_read(v->probes, &now);
		if (err)
			break;
		snapshot_free(&delta);
		err = snapshot_delta(&delta, &now, &before);
		if (err) {
			log_err("out of memory");
			snapshot_free(&now);
			break;
		}
		v->interval_ns = now.ts_ns - before.ts_ns;
		for (int i = 0; i < SCHED_DROP_NR; i++)
			if (delta.sched_drops[i])
				log_warn(
					"sched probe dropped %llu events (reason %d: map full or no "
					"memory); raise the map size",
					(unsigned long long)delta.sched_drops[i], i);
		ops->render(v, &delta, stdout);
		snapshot_free(&before);
		before = now;
		if (v->partial || (v->args.count && ++printed >= v->args.count))
			break;
	}
	snapshot_free(&delta);
	snapshot_free(&before);
	return err ? 1 : 0;
}

int view_main(const struct view_ops *ops, int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_signal};
	struct view v = {.ops = ops};
	char err[256];
	int rc = 2, ret;

	if (view_args_parse(&v.args, ops->options, argc, argv, err, sizeof(err))) {
		fprintf(stderr, "qoslet %s: %s (see 'qoslet %s --help')\n", ops->name, err,
			ops->name);
		return 2;
	}
	if (v.args.help) {
		usage(ops, stdout);
		return 0;
	}
	if (!v.args.probe.cpi_events)
		v.args.probe.cpi_events = ops->cpi_events;
	ret = cgroup_fs_detect(&v.fs, "/proc/self/mountinfo");
	if (!ret)
		ret = cgroup_fs_read_hierarchy_id(&v.fs, "/proc/self/cgroup");
	if (ret) {
		fprintf(stderr, "qoslet: no cgroup hierarchy with the cpu controller is mounted\n");
		return 1;
	}
	if (resolve_filters(&v))
		goto out;
	ret = pod_filter_resolve(&v.pods, v.args.pod, v.args.ns, view_node_name(), err,
				 sizeof(err));
	if (ret) {
		fprintf(stderr, "qoslet %s: %s\n", ops->name, err);
		rc = ret == -EINVAL ? 2 : 1;
		goto out;
	}
	rc = 1;
	log_hook_libbpf();
	log_info("cgroups: %s hierarchy at %s", v.fs.mode == QOSLET_CGROUP_V2 ? "v2" : "v1 cpu",
		 v.fs.root);
	if (probe_set_open(&v.probes, ops->probes, &v.args.probe, &v.fs))
		goto out;
	v.names = probe_set_names(v.probes);
	/*
	 * main()'s fixed mmap threshold stays: the snapshots (about 1 KB a
	 * cgroup) come and go with the cgroups, and in the heap a few
	 * intervals' worth of them would stay resident for good. Start-up's
	 * small allocations left holes in the heap: give those pages back.
	 */
	malloc_trim(0);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* As bcc's tools: a person at a terminal learns how to stop it (stderr keeps stdout clean).
	 */
	if (isatty(STDOUT_FILENO))
		fprintf(stderr, "Tracing: %s, every %g s... Hit Ctrl-C to end.\n", ops->summary,
			v.args.interval_s);
	rc = run_loop(ops, &v);
out:
	probe_set_close(v.probes);
	for (size_t i = 0; i < v.args.n_cgroups; i++)
		free(v.filters[i]);
	pod_filter_free(&v.pods);
	return rc;
}
