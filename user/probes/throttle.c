// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "probes/throttle.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpf/throttle_maps.h"
#include "log.h"
#include "probes/switch.h"
#include "probes/bpf_atomics.h"
#include "probes/bpffs.h"
#include "probes/cg_map.h"
#include "probes/btf_attach.h"
#include "probes/cpustat.h"
#include "probes/kernel_btf.h"
#include "probes/percpu_map.h"
#include "probes/pin_layout.h"
#include "throttle.skel.h"

/* The program set that counts events (none in cpustat mode). */
enum throttle_mode { MODE_FENTRY, MODE_TP_BTF, MODE_RAW_TP };

static const char *const mode_paths[] = {
	[MODE_FENTRY] = "fentry",
	[MODE_TP_BTF] = "tp_btf sched_switch",
	[MODE_RAW_TP] = "raw_tp sched_switch",
};

/* One cgroup's event count from the map, matched to cpu.stat at each read. */
struct tg_events {
	uint64_t id;
	uint64_t events;
	bool matched;
};

struct throttle_probe {
	struct throttle_bpf *skel; /* NULL when polling cpu.stat only */
	bool on_switch;		   /* its step runs in the shared sched_switch program */
	const struct cgroup_fs *fs;
	const char *pin_dir;
	enum probe_hook hook; /* --hook, for the sched_switch source */
	bool quiet;	      /* trying sources in turn: a refusal is expected */
	bool small_btf;	      /* the cut-down kernel BTF is in use (probe_opts) */
	struct cpustat_reader *cpustat;
	struct tg_events *ev;
	size_t n_ev, cap_ev;
	int ncpus;
	uint64_t drops_seen[THROTTLE_DROP_NR];
	char path[48]; /* "tp_btf sched_switch + cpu.stat": for reports */
	char why[96];  /* why the last source tried did not load */
};

static int set_pins(struct throttle_bpf *skel, const char *pin_dir)
{
	struct bpf_map *maps[] = {PIN_MAPS_THROTTLE(PIN_SKEL_MAP)};
	size_t n = 0;

	/* throttle_since exists only in fentry mode: pin only the maps the load creates. */
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		if (bpf_map__autocreate(maps[i]))
			maps[n++] = maps[i];
	return bpffs_set_pins(skel->obj, maps, n, pin_dir);
}

/* Opens and loads the skeleton with only `mode`'s programs and maps. */
static int load_mode(struct throttle_probe *p, enum throttle_mode mode)
{
	bool fentry = mode == MODE_FENTRY, raw = mode == MODE_RAW_TP;
	struct throttle_bpf *skel;
	int err;

	/* Every path reads cfs_rq bandwidth fields (CONFIG_CFS_BANDWIDTH). */
	if (!kernel_struct_has_member("cfs_rq", "throttle_count")) {
		snprintf(p->why, sizeof(p->why), "kernel lacks CONFIG_CFS_BANDWIDTH");
		return -EOPNOTSUPP;
	}
	kernel_btf_release(); /* libbpf is about to parse its own copy */
	skel = throttle_bpf__open_opts(kernel_btf_open_opts());
	if (!skel)
		return -errno;
	skel->rodata->cgroup_mode = p->fs->mode;
	skel->rodata->cgroup_hierarchy_id = p->fs->hierarchy_id;
	bpf_program__set_autoload(skel->progs.fexit_throttle, fentry);
	bpf_program__set_autoload(skel->progs.fentry_unthrottle, fentry);
	/* fentry needs BTF-typed tracing anyway: its rmdir hook is the tp_btf one. */
	bpf_program__set_autoload(skel->progs.btf_cgroup_rmdir, !raw);
	bpf_program__set_autoload(skel->progs.raw_cgroup_rmdir, raw);
	bpf_map__set_autocreate(skel->maps.throttle_since, fentry);
	err = cg_map_prepare(skel->maps.throttle_tg);
	if (!err)
		err = set_pins(skel, p->pin_dir);
	if (!err)
		err = throttle_bpf__load(skel);
	if (err) {
		snprintf(p->why, sizeof(p->why), "%s programs did not load (%s)", mode_paths[mode],
			 strerror(-err));
		throttle_bpf__destroy(skel);
		return err;
	}
	p->skel = skel;
	p->on_switch = !fentry;
	snprintf(p->path, sizeof(p->path), "%s + cpu.stat", mode_paths[mode]);
	return 0;
}

/* The sched_switch source: tp_btf, else raw_tp, as --hook allows. */
static int load_switch(struct throttle_probe *p)
{
	int err;

	if (p->hook != PROBE_HOOK_RAW_TP) {
		err = load_mode(p, MODE_TP_BTF);
		if (!err || p->hook == PROBE_HOOK_TP_BTF || err == -EOPNOTSUPP)
			return err;
		log_warn("throttle probe: %s; falling back to raw_tp", p->why);
	}
	return load_mode(p, MODE_RAW_TP);
}

/* Both BPF sources count a period once across CPUs by compare-and-swap (bpf_atomics.h). */
static int cmpxchg_or_why(struct throttle_probe *p)
{
	if (bpf_has_cmpxchg())
		return 0;
	snprintf(p->why, sizeof(p->why),
		 "the kernel's BPF lacks compare-and-swap (5.12), which counting needs");
	return -EOPNOTSUPP;
}

static int try_source(void *ctx, enum throttle_source src)
{
	struct throttle_probe *p = ctx;
	libbpf_print_fn_t saved = NULL;
	int err = 0;

	/*
	 * In auto mode a refused fentry load is the expected outcome on many
	 * hosts: keep libbpf's verifier dump out of the log, say it in one line.
	 */
	if (p->quiet)
		saved = libbpf_set_print(NULL);
	switch (src) {
	case THROTTLE_FENTRY:
		if (p->quiet && p->small_btf && !btf_attach_registered()) {
			/* Without the copy's attach ids, tracing programs need the full
			 * kernel BTF, which a CLI view does not parse (btf_attach.h). */
			snprintf(p->why, sizeof(p->why),
				 "fentry skipped: the cut-down kernel BTF has no attach ids");
			err = -EOPNOTSUPP;
			break;
		}
		err = cmpxchg_or_why(p) ?: load_mode(p, MODE_FENTRY);
		break;
	case THROTTLE_TP_BTF:
		err = cmpxchg_or_why(p) ?: load_switch(p);
		break;
	case THROTTLE_CPUSTAT:
		snprintf(p->path, sizeof(p->path), "cpustat");
		break;
	case THROTTLE_AUTO:
		err = -EINVAL;
		break;
	}
	if (p->quiet) {
		libbpf_set_print(saved);
		if (err)
			log_info("throttle probe: %s; trying the next source", p->why);
	}
	return err;
}

static void throttle_destroy(void *state)
{
	struct throttle_probe *p = state;

	throttle_bpf__destroy(p->skel);
	cpustat_reader_free(p->cpustat);
	free(p->ev);
	free(p);
}

static int throttle_load(void **state, const struct probe_env *env, char *why, size_t whylen)
{
	struct throttle_probe *p = calloc(1, sizeof(*p));
	enum throttle_source want = env->opts->throttle, chosen;
	int err;

	if (!p)
		return -ENOMEM;
	p->fs = env->fs;
	p->pin_dir = env->pin_dir;
	p->hook = env->opts->hook;
	p->quiet = want == THROTTLE_AUTO;
	p->small_btf = env->opts->small_btf;
	p->ncpus = libbpf_num_possible_cpus();
	p->cpustat = cpustat_reader_new(env->fs, env->names);
	if (p->ncpus <= 0 || !p->cpustat) {
		err = p->ncpus <= 0 ? (p->ncpus ? p->ncpus : -EINVAL) : -errno;
		throttle_destroy(p);
		return err;
	}
	err = throttle_select(want, try_source, p, &chosen);
	if (err) {
		/* Only a forced source can fail (cpustat always loads): say which and why. */
		snprintf(why, whylen, "--throttle-source %s: %s", throttle_source_name(want),
			 p->why);
		throttle_destroy(p);
		return -EOPNOTSUPP;
	}
	*state = p;
	return 0;
}

static int throttle_attach(void *state)
{
	struct throttle_probe *p = state;
	int err = p->skel ? throttle_bpf__attach(p->skel) : 0;

	if (err)
		log_err("throttle probe: attaching %s programs failed: %s", p->path,
			strerror(-err));
	else
		log_info("throttle probe: attached (%s)", p->path);
	return err;
}

static const char *throttle_path(const void *state)
{
	return ((const struct throttle_probe *)state)->path;
}

static int cmp_events(const void *a, const void *b)
{
	const struct tg_events *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int add_events(void *ctx, const void *key, const void *val, int ncpus)
{
	struct throttle_probe *p = ctx;

	(void)ncpus;
	if (p->n_ev == p->cap_ev) {
		size_t cap = p->cap_ev ? 2 * p->cap_ev : 64;
		struct tg_events *ev = realloc(p->ev, cap * sizeof(*ev));

		if (!ev)
			return -ENOMEM;
		p->ev = ev;
		p->cap_ev = cap;
	}
	p->ev[p->n_ev++] = (struct tg_events){
		.id = *(const uint64_t *)key,
		.events = ((const struct throttle_val *)val)->events,
	};
	return 0;
}

/*
 * Copies the map into p->ev, sorted by id (the map holds only cgroups ever
 * throttled). A plain hash reads like a per-CPU one with a single CPU.
 */
static int read_events(struct throttle_probe *p)
{
	int err = percpu_map_read(bpf_map__fd(p->skel->maps.throttle_tg), sizeof(uint64_t),
				  sizeof(struct throttle_val), 1, add_events, p);

	/* p->ev stays NULL until a cgroup is throttled: libc must not see it */
	if (!err && p->n_ev)
		qsort(p->ev, p->n_ev, sizeof(*p->ev), cmp_events);
	return err;
}

/* Drops are never silent: each new one is logged once. */
static int check_drops(struct throttle_probe *p)
{
	static const char *const what[] = {
		[THROTTLE_DROP_MAP_FULL] = "throttle_tg map full",
		[THROTTLE_DROP_DEPTH] = "throttled group nested deeper than the walk",
	};
	uint64_t sums[THROTTLE_DROP_NR];
	int err = percpu_counters_read(bpf_map__fd(p->skel->maps.throttle_drops), THROTTLE_DROP_NR,
				       p->ncpus, sums);

	if (err)
		return err;
	for (int i = 0; i < THROTTLE_DROP_NR; i++) {
		if (sums[i] > p->drops_seen[i])
			log_warn("throttle probe dropped %llu observations (%s)",
				 (unsigned long long)(sums[i] - p->drops_seen[i]), what[i]);
		p->drops_seen[i] = sums[i];
	}
	return 0;
}

struct read_ctx {
	struct throttle_probe *p;
	struct snapshot *s;
};

static int add_sample(struct snapshot *s, uint64_t id, const struct throttle_sample *t)
{
	struct cg_sample *cg = snapshot_add(s, id);

	if (!cg)
		return -ENOMEM;
	cg->parts |= CG_THROTTLE;
	cg->throttle = *t;
	return 0;
}

/* One record per cgroup: its cpu.stat counters with the probe's events. */
static int add_cpustat(void *ctx, uint64_t id, const struct throttle_sample *stat)
{
	struct read_ctx *c = ctx;
	struct tg_events key = {.id = id}, *ev;
	struct throttle_sample t = *stat;

	ev = c->p->n_ev ? bsearch(&key, c->p->ev, c->p->n_ev, sizeof(key), cmp_events) : NULL;
	if (ev) {
		t.events = ev->events;
		ev->matched = true;
	}
	return add_sample(c->s, id, &t);
}

static int throttle_read(void *state, struct snapshot *s)
{
	struct throttle_probe *p = state;
	struct read_ctx c = {.p = p, .s = s};
	struct timespec ts;
	int err;

	p->n_ev = 0;
	if (p->skel) {
		err = read_events(p);
		if (!err)
			err = check_drops(p);
		if (err)
			return err;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	err = cpustat_reader_read(p->cpustat, (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec,
				  add_cpustat, &c);
	if (err)
		return err;
	/* Throttled, but no quota any more (or not listed yet): the events alone. */
	for (size_t i = 0; i < p->n_ev && !err; i++)
		if (!p->ev[i].matched)
			err = add_sample(s, p->ev[i].id,
					 &(struct throttle_sample){.events = p->ev[i].events});
	return err;
}

static int throttle_share_switch(void *state, struct switch_bpf *sw, enum probe_hook *hook)
{
	struct throttle_probe *p = state;
	bool joins = p && p->on_switch;
	struct bpf_map *mine[] = {sw->maps.throttle_tg, sw->maps.throttle_drops};
	struct bpf_map *own[] = {joins ? p->skel->maps.throttle_tg : NULL,
				 joins ? p->skel->maps.throttle_drops : NULL};
	int err = switch_share_maps(mine, joins ? own : NULL, sizeof(mine) / sizeof(mine[0]));

	(void)hook; /* it follows --hook as the probe's own choice did */
	if (err || !joins)
		return err;
	sw->rodata->throttle_on = true;
	return 1;
}

static void throttle_forget(void *state, const uint64_t *ids, size_t n)
{
	struct throttle_probe *p = state;

	if (p->skel) /* cpustat keeps no map */
		cgroup_map_forget(bpf_map__fd(p->skel->maps.throttle_tg), ids, n);
}

const struct probe_ops throttle_probe_ops = {
	.name = "throttle",
	.object = throttle_bpf__elf_bytes,
	.load = throttle_load,
	.attach = throttle_attach,
	.read = throttle_read,
	.forget = throttle_forget,
	.share_switch = throttle_share_switch,
	.path = throttle_path,
	.destroy = throttle_destroy,
};
