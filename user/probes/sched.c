// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "sched.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../log.h"
#include "bpffs.h"
#include "kernel_btf.h"
#include "sched.skel.h"

struct sched_probe {
	struct sched_bpf *skel;
	enum sched_hook loaded;	  /* the program set that is loaded */
	enum sched_hook attached; /* SCHED_HOOK_AUTO while another process owns attach */
	enum sched_wait wait;	  /* never AUTO once loaded */
	int lock_fd;
	char pin_dir[PATH_MAX];
	int ncpus;
};

static const char *const hook_names[] = {
	[SCHED_HOOK_AUTO] = "auto",
	[SCHED_HOOK_TP_BTF] = "tp_btf",
	[SCHED_HOOK_RAW_TP] = "raw_tp",
};

static const char *const wait_names[] = {
	[SCHED_WAIT_AUTO] = "auto",
	[SCHED_WAIT_SCHED_INFO] = "sched_info",
	[SCHED_WAIT_STAMP] = "stamp",
};

const char *sched_hook_name(enum sched_hook hook)
{
	return hook_names[hook];
}

const char *sched_wait_name(enum sched_wait wait)
{
	return wait_names[wait];
}

static int name_index(const char *const *names, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return (int)i;
	return -EINVAL;
}

int sched_hook_parse(const char *s, enum sched_hook *hook)
{
	int i = name_index(hook_names, sizeof(hook_names) / sizeof(hook_names[0]), s);

	if (i < 0)
		return i;
	*hook = i;
	return 0;
}

int sched_wait_parse(const char *s, enum sched_wait *wait)
{
	int i = name_index(wait_names, sizeof(wait_names) / sizeof(wait_names[0]), s);

	if (i < 0)
		return i;
	*wait = i;
	return 0;
}

static int set_pins(struct sched_bpf *skel, const char *pin_dir)
{
	struct bpf_map *maps[] = {skel->maps.rq_hist, skel->maps.rq_blame, skel->maps.sched_drops};

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		char path[PATH_MAX];
		int err;

		snprintf(path, sizeof(path), "%s/%s", pin_dir, bpf_map__name(maps[i]));
		err = bpf_map__set_pin_path(maps[i], path);
		if (err)
			return err;
	}
	return 0;
}

/* Opens and loads the skeleton with only `hook`'s programs enabled. */
static int load_with(struct sched_probe *p, enum sched_hook hook, const struct cgroup_fs *fs)
{
	bool btf = hook == SCHED_HOOK_TP_BTF, stamp = p->wait == SCHED_WAIT_STAMP;
	struct sched_bpf *skel = sched_bpf__open();
	int err;

	if (!skel)
		return -errno;
	skel->rodata->cgroup_mode = fs->mode;
	skel->rodata->wait_source = stamp ? QOSLET_WAIT_STAMP : QOSLET_WAIT_SCHED_INFO;
	/* Wake-up hooks and stamp maps cost only in stamp mode: load them only then. */
	bpf_program__set_autoload(skel->progs.btf_wakeup, btf && stamp);
	bpf_program__set_autoload(skel->progs.btf_wakeup_new, btf && stamp);
	bpf_program__set_autoload(skel->progs.btf_switch, btf);
	bpf_program__set_autoload(skel->progs.raw_wakeup, !btf && stamp);
	bpf_program__set_autoload(skel->progs.raw_wakeup_new, !btf && stamp);
	bpf_program__set_autoload(skel->progs.raw_switch, !btf);
	bpf_map__set_autocreate(skel->maps.rq_stamp, btf && stamp);
	bpf_map__set_autocreate(skel->maps.rq_stamp_tid, !btf && stamp);
	err = set_pins(skel, p->pin_dir);
	if (!err)
		err = sched_bpf__load(skel);
	if (err) {
		sched_bpf__destroy(skel);
		return err;
	}
	p->skel = skel;
	p->loaded = hook;
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

static int load(struct sched_probe *p, enum sched_hook want, const struct cgroup_fs *fs)
{
	int err;

	if (p->wait == SCHED_WAIT_AUTO) {
		p->wait = kernel_has_sched_info() ? SCHED_WAIT_SCHED_INFO : SCHED_WAIT_STAMP;
		if (p->wait == SCHED_WAIT_STAMP)
			log_info("sched probe: kernel lacks CONFIG_SCHED_INFO or "
				 "CONFIG_FAIR_GROUP_SCHED; stamping tasks on wake-up instead");
	} else if (p->wait == SCHED_WAIT_SCHED_INFO && !kernel_has_sched_info()) {
		log_err("sched probe: --wait-source sched_info needs CONFIG_SCHED_INFO and "
			"CONFIG_FAIR_GROUP_SCHED, which this kernel lacks");
		return -EOPNOTSUPP;
	}

	if (want != SCHED_HOOK_RAW_TP) {
		err = load_with(p, SCHED_HOOK_TP_BTF, fs);
		if (!err || want == SCHED_HOOK_TP_BTF)
			return err;
		log_warn("sched probe: tp_btf programs did not load (%s); falling back to raw_tp",
			 strerror(-err));
	}
	return load_with(p, SCHED_HOOK_RAW_TP, fs);
}

int sched_probe_poll(struct sched_probe *p)
{
	int locked, err;

	if (p->attached != SCHED_HOOK_AUTO)
		return 0;
	locked = bpffs_try_lock(p->pin_dir, &p->lock_fd);
	if (locked <= 0)
		return locked;
	err = sched_bpf__attach(p->skel);
	if (err) {
		log_err("sched probe: attaching %s programs failed: %s", hook_names[p->loaded],
			strerror(-err));
		/* Let another process try: we could not do the job. */
		close(p->lock_fd);
		p->lock_fd = -1;
		return err;
	}
	p->attached = p->loaded;
	log_info("sched probe: attached via %s, waits from %s", hook_names[p->loaded],
		 wait_names[p->wait]);
	return 0;
}

int sched_probe_open(struct sched_probe **out, const struct sched_probe_opts *opts,
		     const struct cgroup_fs *fs)
{
	struct sched_probe *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	p->lock_fd = -1;
	p->attached = SCHED_HOOK_AUTO;
	p->wait = opts->wait;
	snprintf(p->pin_dir, sizeof(p->pin_dir), "%s",
		 opts->pin_dir ? opts->pin_dir : QOSLET_DEFAULT_PIN_DIR);
	p->ncpus = libbpf_num_possible_cpus();
	if (p->ncpus <= 0) {
		err = p->ncpus ? p->ncpus : -EINVAL;
		goto fail;
	}
	err = bpffs_prepare(p->pin_dir);
	if (err)
		goto fail;
	tracefs_prepare();
	err = load(p, opts->hook, fs);
	if (err) {
		log_err("sched probe: loading failed: %s (maps pinned in %s by an incompatible "
			"qoslet can be removed with rm)",
			strerror(-err), p->pin_dir);
		goto fail;
	}
	err = sched_probe_poll(p);
	if (err)
		goto fail;
	if (p->attached == SCHED_HOOK_AUTO)
		log_info(
			"sched probe: another qoslet process attached the probes; reading its maps");
	*out = p;
	return 0;
fail:
	sched_probe_close(p);
	return err;
}

void sched_probe_close(struct sched_probe *p)
{
	if (!p)
		return;
	sched_bpf__destroy(p->skel);
	if (p->lock_fd >= 0)
		close(p->lock_fd);
	free(p);
}

enum sched_hook sched_probe_attached(const struct sched_probe *p)
{
	return p->attached;
}

enum sched_wait sched_probe_wait_source(const struct sched_probe *p)
{
	return p->wait;
}

/*
 * Reads a per-CPU hash in batches of BATCH entries, folding each entry's
 * per-CPU values with `fold`. Chunked so the buffer stays small however
 * many CPUs and entries there are.
 */
#define BATCH 128

typedef int (*fold_fn)(void *ctx, const void *key, const void *percpu_vals, int ncpus);

static int read_percpu_map(int fd, size_t key_size, size_t val_size, int ncpus, fold_fn fold,
			   void *ctx)
{
	DECLARE_LIBBPF_OPTS(bpf_map_batch_opts, opts);
	char in_batch[16], out_batch[16]; /* holds one key of the map: u64 or blame_key */
	void *keys = malloc(BATCH * key_size), *vals = malloc((size_t)BATCH * val_size * ncpus);
	bool first = true;
	int err = 0;

	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		__u32 n = BATCH;
		int ret = bpf_map_lookup_batch(fd, first ? NULL : in_batch, out_batch, keys, vals,
					       &n, &opts);

		if (ret && errno != ENOENT) {
			err = -errno;
			break;
		}
		for (__u32 i = 0; i < n && !err; i++)
			err = fold(ctx, (char *)keys + i * key_size,
				   (char *)vals + (size_t)i * val_size * ncpus, ncpus);
		if (ret || err) /* ENOENT: that was the last batch */
			break;
		memcpy(in_batch, out_batch, sizeof(in_batch));
		first = false;
	}
out:
	free(keys);
	free(vals);
	return err;
}

static int grow(void **arr, size_t n, size_t *cap, size_t size)
{
	void *tmp;

	if (n < *cap)
		return 0;
	*cap = *cap ? *cap * 2 : 64;
	tmp = realloc(*arr, *cap * size);
	if (!tmp)
		return -ENOMEM;
	*arr = tmp;
	return 0;
}

struct hist_ctx {
	struct snapshot *s;
	size_t cap;
};

static int fold_hist(void *ctx, const void *key, const void *vals, int ncpus)
{
	struct hist_ctx *c = ctx;
	struct cg_sample *cg;

	if (grow((void **)&c->s->cgroups, c->s->n_cgroups, &c->cap, sizeof(*cg)))
		return -ENOMEM;
	cg = &c->s->cgroups[c->s->n_cgroups++];
	memset(cg, 0, sizeof(*cg));
	cg->id = *(const __u64 *)key;
	for (int cpu = 0; cpu < ncpus; cpu++)
		hist_add(&cg->rq, (const struct rq_hist *)vals + cpu);
	return 0;
}

static int fold_blame(void *ctx, const void *key, const void *vals, int ncpus)
{
	struct hist_ctx *c = ctx;
	const struct blame_key *k = key;
	const struct blame_val *v = vals;
	struct blame_sample *b;

	if (grow((void **)&c->s->blame, c->s->n_blame, &c->cap, sizeof(*b)))
		return -ENOMEM;
	b = &c->s->blame[c->s->n_blame++];
	*b = (struct blame_sample){.victim = k->victim, .culprit = k->culprit};
	for (int cpu = 0; cpu < ncpus; cpu++) {
		b->wait_ns += v[cpu].wait_ns;
		b->count += v[cpu].count;
	}
	return 0;
}

static int read_drops(struct sched_probe *p, struct snapshot *s)
{
	__u64 vals[p->ncpus];

	for (__u32 i = 0; i < SCHED_DROP_NR; i++) {
		if (bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.sched_drops), &i, vals))
			return -errno;
		s->drops[i] = 0;
		for (int cpu = 0; cpu < p->ncpus; cpu++)
			s->drops[i] += vals[cpu];
	}
	return 0;
}

int sched_probe_read(struct sched_probe *p, struct snapshot *s)
{
	struct hist_ctx hc = {.s = s}, bc = {.s = s};
	struct timespec ts;
	int err;

	memset(s, 0, sizeof(*s));
	clock_gettime(CLOCK_REALTIME, &ts);
	s->ts_ns = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	err = read_percpu_map(bpf_map__fd(p->skel->maps.rq_hist), sizeof(__u64),
			      sizeof(struct rq_hist), p->ncpus, fold_hist, &hc);
	if (!err)
		err = read_percpu_map(bpf_map__fd(p->skel->maps.rq_blame), sizeof(struct blame_key),
				      sizeof(struct blame_val), p->ncpus, fold_blame, &bc);
	if (!err)
		err = read_drops(p, s);
	if (err) {
		snapshot_free(s);
		return err;
	}
	snapshot_sort(s);
	return 0;
}
