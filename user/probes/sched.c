// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "probes/sched.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "probes/blame_cache.h"
#include "probes/blame_totals.h"
#include "probes/bpffs.h"
#include "probes/cg_map.h"
#include "probes/kernel_btf.h"
#include "probes/percpu_map.h"
#include "probes/pin_layout.h"
#include "sched.skel.h"
#include "probes/switch.h"

struct sched_probe {
	struct sched_bpf *skel;
	enum probe_hook hook; /* the program set that is loaded */
	enum sched_wait wait; /* never AUTO once loaded */
	const char *pin_dir;
	int ncpus;
	char path[40];	 /* "tp_btf, sched_info": for reports */
	bool rmdir_hook; /* the kernel runs the cgroup-removal hook's helpers */
	bool rq_storage; /* the kernel creates task storage safely under a run-queue lock (6.4) */
	/* probe_opts.blame_fresh: pairs from rq_blame_fresh into totals (blame_totals.h) */
	bool fresh, seeded;
	struct blame_totals totals;
	/* add_pending's buffers, sized by ncpus once: every read needs them */
	struct rq_pending_cache *pend_cache; /* rq_pending's value: every CPU's slots */
	struct rq_pending *pend;	     /* the filled slots, sorted by cgid */
};

static int set_pins(struct sched_bpf *skel, const char *pin_dir)
{
	struct bpf_map *maps[] = {PIN_MAPS_SCHED(PIN_SKEL_MAP)};

	return bpffs_set_pins(skel->obj, maps, sizeof(maps) / sizeof(maps[0]), pin_dir);
}

/* Opens and loads the skeleton with only `hook`'s programs enabled. */
static int load_with(void *probe, enum probe_hook hook, const struct cgroup_fs *fs)
{
	struct sched_probe *p = probe;
	bool btf = hook == PROBE_HOOK_TP_BTF, stamp = p->wait == SCHED_WAIT_STAMP;
	bool storage = btf && p->rq_storage;
	struct sched_bpf *skel = sched_bpf__open_opts(kernel_btf_open_opts());
	int err;

	if (!skel)
		return -errno;
	skel->rodata->cgroup_mode = fs->mode;
	skel->rodata->cgroup_hierarchy_id = fs->hierarchy_id;
	skel->rodata->nr_cpus = p->ncpus;
	skel->rodata->wait_source = stamp ? QOSLET_WAIT_STAMP : QOSLET_WAIT_SCHED_INFO;
	/* Wake-up hooks and stamp maps cost only in stamp mode: load them only then. */
	bpf_program__set_autoload(skel->progs.btf_wakeup, btf && stamp);
	bpf_program__set_autoload(skel->progs.btf_wakeup_new, btf && stamp);
	bpf_program__set_autoload(skel->progs.raw_wakeup, !btf && stamp);
	bpf_program__set_autoload(skel->progs.raw_wakeup_new, !btf && stamp);
	bpf_program__set_autoload(skel->progs.btf_cgroup_rmdir, btf && p->rmdir_hook);
	bpf_program__set_autoload(skel->progs.raw_cgroup_rmdir, !btf && p->rmdir_hook);
	bpf_map__set_autocreate(skel->maps.rq_stamp, storage && stamp);
	bpf_map__set_autocreate(skel->maps.rq_stamp_tid, !storage && stamp);
	err = cg_map_prepare(skel->maps.rq_hist);
	if (!err)
		err = set_pins(skel, p->pin_dir);
	if (!err)
		err = sched_bpf__load(skel);
	if (err) {
		sched_bpf__destroy(skel);
		return err;
	}
	p->skel = skel;
	p->hook = hook;
	return 0;
}

/*
 * The feature probe is the load itself: the verifier is the only authority
 * on whether tp_btf programs (BTF, task storage from tracing programs) are
 * allowed here, so try the cheapest path and fall back on refusal.
 */
/* What sched_info mode reads (see sched_info_wait in bpf/sched.bpf.c). */
static bool kernel_has_sched_info(void)
{
	return kernel_struct_has_member("task_struct", "sched_info") &&
	       kernel_struct_has_member("sched_entity", "cfs_rq") &&
	       kernel_struct_has_member("cfs_rq", "rq");
}

/*
 * The cgroup-removal hook walks every CPU's pending slot and the pair map:
 * bpf_loop (5.17), per-CPU lookups by CPU (5.19), bpf_for_each_map_elem
 * (5.13). Without them removed cgroups are still swept from user space
 * (probes.c: forget_gone), only later.
 */
static bool kernel_has_rmdir_helpers(void)
{
	static const enum bpf_func_id needed[] = {BPF_FUNC_loop, BPF_FUNC_map_lookup_percpu_elem,
						  BPF_FUNC_for_each_map_elem};

	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++)
		if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT, needed[i], NULL) != 1)
			return false;
	return true;
}

static int load_best(struct sched_probe *p, enum probe_hook want, const struct cgroup_fs *fs,
		     char *why, size_t whylen)
{
	int err;

	p->rmdir_hook = kernel_has_rmdir_helpers();
	p->rq_storage = kernel_task_storage_under_rq_lock();
	if (!p->rmdir_hook)
		log_info("sched probe: the kernel lacks bpf_loop or per-CPU lookups by CPU: "
			 "removed cgroups are swept from user space (within a minute)");
	if (p->wait == SCHED_WAIT_AUTO) {
		p->wait = kernel_has_sched_info() ? SCHED_WAIT_SCHED_INFO : SCHED_WAIT_STAMP;
		if (p->wait == SCHED_WAIT_STAMP)
			log_info("sched probe: kernel lacks CONFIG_SCHED_INFO or "
				 "CONFIG_FAIR_GROUP_SCHED; stamping tasks on wake-up instead");
	} else if (p->wait == SCHED_WAIT_SCHED_INFO && !kernel_has_sched_info()) {
		snprintf(why, whylen,
			 "--wait-source sched_info needs CONFIG_SCHED_INFO and "
			 "CONFIG_FAIR_GROUP_SCHED, which this kernel lacks");
		return -EOPNOTSUPP;
	}
	err = probe_load_best("sched", want, load_with, p, fs);
	return err ? probe_load_refused(err, why, whylen) : 0;
}

static int sched_load(void **state, const struct probe_env *env, char *why, size_t whylen)
{
	struct sched_probe *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	p->pin_dir = env->pin_dir;
	p->wait = env->opts->wait;
	p->fresh = env->opts->blame_fresh;
	p->ncpus = libbpf_num_possible_cpus();
	if (p->ncpus <= 0) {
		err = p->ncpus ? p->ncpus : -EINVAL;
		free(p);
		return err;
	}
	/* calloc: valgrind does not see the kernel fill per-CPU values */
	p->pend_cache = calloc((size_t)p->ncpus, sizeof(*p->pend_cache));
	p->pend = calloc((size_t)p->ncpus * QOSLET_PENDING_SLOTS, sizeof(*p->pend));
	err = p->pend_cache && p->pend ? load_best(p, env->opts->hook, env->fs, why, whylen)
				       : -ENOMEM;
	if (err) {
		free(p->pend_cache);
		free(p->pend);
		free(p);
		return err;
	}
	snprintf(p->path, sizeof(p->path), "%s, %s", probe_hook_name(p->hook),
		 sched_wait_name(p->wait));
	*state = p;
	return 0;
}

static int sched_attach(void *state)
{
	struct sched_probe *p = state;
	int err = sched_bpf__attach(p->skel);

	if (err)
		log_err("sched probe: attaching %s programs failed: %s", p->path, strerror(-err));
	else
		log_info("sched probe: attached (%s)", p->path);
	return err;
}

static void sched_destroy(void *state)
{
	struct sched_probe *p = state;

	sched_bpf__destroy(p->skel);
	blame_totals_free(&p->totals);
	free(p->pend_cache);
	free(p->pend);
	free(p);
}

static const char *sched_path(const void *state)
{
	return ((const struct sched_probe *)state)->path;
}

static int fold_hist(void *ctx, const void *key, const void *vals, int ncpus)
{
	struct cg_sample *cg = snapshot_add(ctx, *(const __u64 *)key);

	if (!cg)
		return -ENOMEM;
	cg->parts |= CG_RQ;
	for (int cpu = 0; cpu < ncpus; cpu++)
		hist_add(&cg->rq, (const struct lat_hist *)vals + cpu);
	return 0;
}

struct blame_read {
	struct snapshot *s;
	struct cached_pair *cached; /* sorted: blame_cache_pairs() */
	size_t n_cached;
};

static int fold_blame(void *ctx, const void *key, const void *vals, int ncpus)
{
	struct blame_read *r = ctx;
	struct blame_sample b;

	blame_cache_merge(&b, key, vals, ncpus, r->cached, r->n_cached);
	return snapshot_add_blame(r->s, &b);
}

/* Two copies of every CPU's blame cache, taken one right after the other. */
static int read_blame_cache(struct sched_probe *p, struct blame_read *r)
{
	struct rq_blame_cache *copy = calloc(2 * (size_t)p->ncpus, sizeof(*copy));
	int fd = bpf_map__fd(p->skel->maps.rq_blame_cache), err = 0;
	__u32 zero = 0;

	r->cached = calloc((size_t)p->ncpus * QOSLET_BLAME_CACHE_SLOTS, sizeof(*r->cached));
	if (!copy || !r->cached)
		err = -ENOMEM;
	else if (bpf_map_lookup_elem(fd, &zero, copy) ||
		 bpf_map_lookup_elem(fd, &zero, copy + p->ncpus))
		err = -errno;
	else
		r->n_cached = blame_cache_pairs(copy, copy + p->ncpus, p->ncpus, r->cached);
	free(copy);
	return err;
}

static int add_inc(void *ctx, const void *key, const void *vals, int ncpus)
{
	return blame_incs_add(ctx, key, vals, ncpus);
}

static int skip_entry(void *ctx, const void *key, const void *vals, int ncpus)
{
	(void)ctx;
	(void)key;
	(void)vals;
	(void)ncpus;
	return 0;
}

/*
 * The totals start from rq_blame as it is, slots left out (what they
 * counted since taking a pair is added on top at every reading). What
 * rq_blame_fresh holds is in rq_blame already, so it is emptied unread; a
 * slot given back between the two reads is lost, one never counted twice.
 */
static int seed_totals(struct sched_probe *p, struct blame_incs *l)
{
	int err = percpu_map_read(bpf_map__fd(p->skel->maps.rq_blame), sizeof(struct blame_key),
				  sizeof(struct blame_val), p->ncpus, add_inc, l);

	if (!err)
		err = blame_totals_add(&p->totals, l);
	if (!err)
		err = percpu_map_drain(bpf_map__fd(p->skel->maps.rq_blame_fresh),
				       sizeof(struct blame_key), sizeof(struct blame_val), p->ncpus,
				       skip_entry, NULL);
	return err;
}

/* The agent's reading (blame_totals.h): drain rq_blame_fresh, then copy the caches. */
static int read_blame_fresh(struct sched_probe *p, struct snapshot *s)
{
	struct blame_read r = {.s = s};
	struct blame_incs l = {0};
	int err = 0;

	if (!p->seeded) {
		err = seed_totals(p, &l);
		p->seeded = !err;
		if (err) /* seeded again at the next reading: not on top of a part */
			blame_totals_free(&p->totals);
	}
	if (!err)
		err = percpu_map_drain(bpf_map__fd(p->skel->maps.rq_blame_fresh),
				       sizeof(struct blame_key), sizeof(struct blame_val), p->ncpus,
				       add_inc, &l);
	if (!err)
		err = blame_totals_add(&p->totals, &l);
	if (!err)
		err = read_blame_cache(p, &r);
	if (!err)
		err = blame_totals_emit(&p->totals, r.cached, r.n_cached, s);
	blame_incs_free(&l);
	free(r.cached);
	return err;
}

/*
 * The pairs, as the views read them (the agent: read_blame_fresh): the
 * caches first, then rq_blame (the order struct rq_blame_cache in
 * bpf/sched.h needs), each CPU's value the larger of the two.
 */
static int read_blame(struct sched_probe *p, struct snapshot *s)
{
	struct blame_read r = {.s = s};
	int err;

	if (p->fresh)
		return read_blame_fresh(p, s);
	err = read_blame_cache(p, &r);

	if (!err)
		err = percpu_map_read(bpf_map__fd(p->skel->maps.rq_blame), sizeof(struct blame_key),
				      sizeof(struct blame_val), p->ncpus, fold_blame, &r);
	if (!err)
		err = blame_cache_add_rest(s, r.cached, r.n_cached);
	free(r.cached);
	return err;
}

struct forget_ctx {
	const uint64_t *ids;
	size_t n;
	int blame_fd;
};

/* Pairs are keyed by two ids: delete every pair in which a gone id takes part. */
static int forget_pair(void *ctx, const void *key, const void *vals, int ncpus)
{
	const struct forget_ctx *c = ctx;
	const struct blame_key *k = key;

	(void)vals;
	(void)ncpus;
	for (size_t i = 0; i < c->n; i++) {
		if (k->victim == c->ids[i] || k->culprit == c->ids[i]) {
			bpf_map_delete_elem(c->blame_fd, k);
			break;
		}
	}
	return 0;
}

static void sched_forget(void *state, const uint64_t *ids, size_t n)
{
	struct sched_probe *p = state;
	struct forget_ctx c = {ids, n, bpf_map__fd(p->skel->maps.rq_blame)};

	cgroup_map_forget(bpf_map__fd(p->skel->maps.rq_hist), ids, n);
	percpu_map_read(c.blame_fd, sizeof(struct blame_key), sizeof(struct blame_val), p->ncpus,
			forget_pair, &c);
	c.blame_fd = bpf_map__fd(p->skel->maps.rq_blame_fresh);
	percpu_map_read(c.blame_fd, sizeof(struct blame_key), sizeof(struct blame_val), p->ncpus,
			forget_pair, &c);
	blame_totals_forget(&p->totals, ids, n);
}

static int cmp_pending(const void *a, const void *b)
{
	uint64_t x = ((const struct rq_pending *)a)->cgid, y = ((const struct rq_pending *)b)->cgid;

	return x < y ? -1 : x > y;
}

/*
 * Adds every CPU's pending histogram (see struct rq_pending) to the records
 * [first, s->n_cgroups) just read from rq_hist, or to a new record for a
 * cgroup not flushed yet. Read after rq_hist: a flush in between then only
 * moves counts into the next reading, and no counter ever goes down.
 */
static int add_pending(struct sched_probe *p, struct snapshot *s, size_t first)
{
	struct rq_pending_cache *cache = p->pend_cache;
	struct rq_pending *pend = p->pend;
	size_t n = 0, end = s->n_cgroups;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.rq_pending), &zero, cache))
		return -errno;
	for (int cpu = 0; cpu < p->ncpus; cpu++)
		for (int k = 0; k < QOSLET_PENDING_SLOTS; k++)
			if (cache[cpu].slot[k].cgid && cache[cpu].slot[k].hist.count)
				pend[n++] = cache[cpu].slot[k];
	qsort(pend, n, sizeof(pend[0]), cmp_pending);
	for (size_t i = first; i < end; i++) {
		struct rq_pending key = {.cgid = s->cgroups[i].id}, *hit;

		hit = bsearch(&key, pend, n, sizeof(pend[0]), cmp_pending);
		/* bsearch finds one of several slots with that cgroup: walk the run. */
		while (hit && hit > pend && hit[-1].cgid == key.cgid)
			hit--;
		for (; hit && hit < pend + n && hit->cgid == key.cgid; hit++) {
			hist_add(&s->cgroups[i].rq, &hit->hist);
			hit->hist.count = 0; /* consumed */
		}
	}
	/* Cgroups not in rq_hist yet: one record per cgroup (pend is sorted by cgid). */
	for (size_t j = 0; j < n; j++) {
		struct cg_sample *cg;

		if (!pend[j].hist.count)
			continue;
		cg = snapshot_add(s, pend[j].cgid);
		if (!cg)
			return -ENOMEM;
		cg->parts |= CG_RQ;
		for (; j < n && pend[j].cgid == cg->id; j++)
			hist_add(&cg->rq, &pend[j].hist);
		j--;
	}
	return 0;
}

static int sched_read(void *state, struct snapshot *s)
{
	struct sched_probe *p = state;
	size_t first = s->n_cgroups;
	int err;

	err = percpu_map_read(bpf_map__fd(p->skel->maps.rq_hist), sizeof(__u64),
			      sizeof(struct lat_hist),
			      cg_map_ncpus(p->skel->maps.rq_hist, p->ncpus), fold_hist, s);
	if (!err)
		err = add_pending(p, s, first);
	if (!err)
		err = read_blame(p, s);
	if (!err)
		err = percpu_counters_read(bpf_map__fd(p->skel->maps.sched_drops), SCHED_DROP_NR,
					   p->ncpus, s->sched_drops);
	return err;
}

static int sched_share_switch(void *state, struct switch_bpf *sw, enum probe_hook *hook)
{
	struct sched_probe *p = state;
	struct bpf_map *mine[] = {
		sw->maps.rq_stamp,	 sw->maps.rq_stamp_tid,	 sw->maps.rq_hist,
		sw->maps.rq_pending,	 sw->maps.rq_blame,	 sw->maps.rq_blame_fresh,
		sw->maps.rq_blame_cache, sw->maps.sched_drops,	 sw->maps.rq_alert_cfg,
		sw->maps.rq_alert_watch, sw->maps.rq_displacers, sw->maps.rq_alerts};
	struct bpf_map *own[] = {
		p ? p->skel->maps.rq_stamp : NULL,	 p ? p->skel->maps.rq_stamp_tid : NULL,
		p ? p->skel->maps.rq_hist : NULL,	 p ? p->skel->maps.rq_pending : NULL,
		p ? p->skel->maps.rq_blame : NULL,	 p ? p->skel->maps.rq_blame_fresh : NULL,
		p ? p->skel->maps.rq_blame_cache : NULL, p ? p->skel->maps.sched_drops : NULL,
		p ? p->skel->maps.rq_alert_cfg : NULL,	 p ? p->skel->maps.rq_alert_watch : NULL,
		p ? p->skel->maps.rq_displacers : NULL,	 p ? p->skel->maps.rq_alerts : NULL};
	int err = switch_share_maps(mine, p ? own : NULL, sizeof(mine) / sizeof(mine[0]));

	if (err || !p)
		return err;
	sw->rodata->sched_on = true;
	sw->rodata->wait_source =
		p->wait == SCHED_WAIT_STAMP ? QOSLET_WAIT_STAMP : QOSLET_WAIT_SCHED_INFO;
	/* Stamps live where this probe's wake-up programs put them: same hook. */
	if (p->wait == SCHED_WAIT_STAMP)
		*hook = p->hook;
	return 1;
}

static bool sched_keeps_removed(const void *state)
{
	return !((const struct sched_probe *)state)->rmdir_hook;
}

static int sched_map_fd(const void *state, const char *name)
{
	const struct sched_probe *p = state;
	const struct bpf_map *m = bpf_object__find_map_by_name(p->skel->obj, name);

	return m ? bpf_map__fd(m) : -ENOENT;
}

const struct probe_ops sched_probe_ops = {
	.name = "sched",
	.object = sched_bpf__elf_bytes,
	.load = sched_load,
	.attach = sched_attach,
	.read = sched_read,
	.forget = sched_forget,
	.keeps_removed = sched_keeps_removed,
	.share_switch = sched_share_switch,
	.path = sched_path,
	.destroy = sched_destroy,
	.map_fd = sched_map_fd,
};
