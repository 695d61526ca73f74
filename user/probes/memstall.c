// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "probes/memstall.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "probes/bpffs.h"
#include "probes/cg_map.h"
#include "probes/kernel_btf.h"
#include "memstall.skel.h"
#include "probes/memstall_fold.h"
#include "probes/percpu_map.h"
#include "probes/switch.h"
#include "probes/pin_layout.h"

struct memstall_probe {
	struct memstall_bpf *skel;
	struct ring_buffer *rb; /* NULL when OOM kills are not traced */
	struct snapshot *cur;	/* the snapshot being read, for the ring-buffer callback */
	int64_t mono_to_real_ns;
	int err; /* the callback's first error during one read */
	enum probe_hook hook;
	bool oom;
	bool psi;	 /* PSI's inputs traced (fentry): the stall and iowait parts */
	bool storage;	 /* the kernel has task storage (5.11) */
	bool rq_storage; /* ... and creates it safely under a run-queue lock (6.4) */
	bool bio_first;	 /* block_bio_queue passes the bio first (5.11), not its queue */
	const char *pin_dir;
	int ncpus;
	char path[96]; /* "tp_btf, PSI inputs" or "raw_tp, no OOM kills ...": for reports */
};

static int set_pins(struct memstall_bpf *skel, const char *pin_dir)
{
	struct bpf_map *maps[] = {PIN_MAPS_MEMSTALL(PIN_SKEL_MAP)};

	return bpffs_set_pins(skel->obj, maps, sizeof(maps) / sizeof(maps[0]), pin_dir);
}

/* Opens and loads the skeleton with only `hook`'s programs enabled. */
static int load_with(void *probe, enum probe_hook hook, const struct cgroup_fs *fs)
{
	struct memstall_probe *p = probe;
	bool btf = hook == PROBE_HOOK_TP_BTF;
	struct memstall_bpf *skel = memstall_bpf__open_opts(kernel_btf_open_opts());
	int err;

	if (!skel)
		return -errno;
	skel->rodata->cgroup_mode = fs->mode;
	skel->rodata->cgroup_hierarchy_id = fs->hierarchy_id;
	bpf_program__set_autoload(skel->progs.btf_direct_begin, btf);
	bpf_program__set_autoload(skel->progs.btf_direct_end, btf);
	bpf_program__set_autoload(skel->progs.btf_memcg_begin, btf);
	bpf_program__set_autoload(skel->progs.btf_memcg_end, btf);
	bpf_program__set_autoload(skel->progs.btf_mark_victim, btf && p->oom);
	bpf_program__set_autoload(skel->progs.btf_cgroup_rmdir, btf);
	bpf_program__set_autoload(skel->progs.psi_bio, p->psi && p->bio_first);
	bpf_program__set_autoload(skel->progs.psi_bio_q, p->psi && !p->bio_first);
	bpf_program__set_autoload(skel->progs.raw_direct_begin, !btf);
	bpf_program__set_autoload(skel->progs.raw_direct_end, !btf);
	bpf_program__set_autoload(skel->progs.raw_memcg_begin, !btf);
	bpf_program__set_autoload(skel->progs.raw_memcg_end, !btf);
	bpf_program__set_autoload(skel->progs.raw_mark_victim, !btf && p->oom);
	bpf_program__set_autoload(skel->progs.raw_cgroup_rmdir, !btf);
	/*
	 * The stamps: this object's tp_btf programs keep them in task storage.
	 * The shared sched_switch program's step may run as either hook
	 * (--hook's choice, or a fallback), so with PSI's inputs on it has the
	 * thread-id hash, and task storage where the kernel creates it safely
	 * under the run-queue lock (bpf/task_storage.bpf.h).
	 */
	bpf_map__set_autocreate(skel->maps.stall_stamp,
				(btf && p->storage) || (p->psi && p->rq_storage));
	bpf_map__set_autocreate(skel->maps.stall_stamp_tid, !btf || p->psi);
	err = cg_map_prepare(skel->maps.memstall_cg);
	if (!err)
		err = set_pins(skel, p->pin_dir);
	if (!err)
		err = memstall_bpf__load(skel);
	if (err) {
		memstall_bpf__destroy(skel);
		return err;
	}
	p->skel = skel;
	p->hook = hook;
	return 0;
}

static int on_oom_record(void *ctx, void *data, size_t size)
{
	struct memstall_probe *p = ctx;
	struct oom_event e;
	int err;

	if (size < sizeof(struct memstall_oom))
		return 0; /* cannot happen: the kernel side reserves exactly that */
	memstall_oom_event(&e, data, p->mono_to_real_ns);
	err = snapshot_add_oom(p->cur, &e);
	if (err && !p->err)
		p->err = err;
	return err; /* stops the drain: the rest stays for the next read */
}

static int memstall_load(void **state, const struct probe_env *env, char *why, size_t whylen)
{
	struct memstall_probe *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	p->pin_dir = env->pin_dir;
	p->ncpus = libbpf_num_possible_cpus();
	p->storage = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) > 0;
	p->rq_storage = kernel_task_storage_under_rq_lock();
	p->bio_first = kernel_tp_arg_is_struct_ptr("block_bio_queue", 0, "bio");
	/*
	 * Before 6.8 mark_victim passes only the victim's pid, which names no
	 * cgroup from BPF: stalls are still measured, OOM kills are not.
	 */
	p->oom = kernel_tp_arg_is_struct_ptr("mark_victim", 0, "task_struct");
	if (p->ncpus <= 0) {
		err = p->ncpus ? p->ncpus : -EINVAL;
		free(p);
		return err;
	}
	/*
	 * PSI's inputs need block_bio_queue as tp_btf: a kernel without BTF
	 * still gets the reclaim stalls, and says so once. (Without
	 * CONFIG_PSI the tasks carry no flags: the stall and iowait parts
	 * stay 0.)
	 */
	p->psi = true;
	err = probe_load_best("memstall", env->opts->hook, load_with, p, env->fs);
	if (err && err != -ENOMEM) {
		p->psi = false;
		err = probe_load_best("memstall", env->opts->hook, load_with, p, env->fs);
		if (!err)
			log_warn("memstall probe: PSI's inputs (the in_memstall and in_iowait "
				 "sleeps) cannot be traced here: the probe measures no "
				 "per-cgroup memory or I/O stall time (on cgroup v2 the "
				 "agent reads the pressure files)");
	}
	if (err) {
		free(p);
		return probe_load_refused(err, why, whylen);
	}
	if (p->oom) {
		p->rb = ring_buffer__new(bpf_map__fd(p->skel->maps.memstall_oom), on_oom_record, p,
					 NULL);
		if (!p->rb) {
			err = -errno;
			log_err("memstall probe: opening the OOM ring buffer failed: %s",
				strerror(-err));
			memstall_bpf__destroy(p->skel);
			free(p);
			return err;
		}
	}
	snprintf(p->path, sizeof(p->path), "%s%s%s", probe_hook_name(p->hook),
		 p->psi ? ", PSI inputs" : "",
		 p->oom ? "" : ", no OOM kills (mark_victim passes no task before 6.8)");
	*state = p;
	return 0;
}

static int memstall_attach(void *state)
{
	struct memstall_probe *p = state;
	int err = memstall_bpf__attach(p->skel);

	if (err)
		log_err("memstall probe: attaching %s programs failed: %s", p->path,
			strerror(-err));
	else
		log_info("memstall probe: attached (%s)", p->path);
	return err;
}

static void memstall_destroy(void *state)
{
	struct memstall_probe *p = state;

	ring_buffer__free(p->rb);
	memstall_bpf__destroy(p->skel);
	free(p);
}

static const char *memstall_path(const void *state)
{
	return ((const struct memstall_probe *)state)->path;
}

static int fold_cg(void *ctx, const void *key, const void *vals, int ncpus)
{
	struct cg_sample *cg = snapshot_add(ctx, *(const __u64 *)key);

	if (!cg)
		return -ENOMEM;
	cg->parts |= CG_MEMSTALL;
	memstall_fold(&cg->mem, vals, ncpus);
	return 0;
}

/* Joins the shared sched_switch program while PSI's inputs are on (switch.h). */
static int memstall_share_switch(void *state, struct switch_bpf *sw, enum probe_hook *hook)
{
	struct memstall_probe *p = state;
	bool joins = p && p->psi;
	struct bpf_map *mine[] = {sw->maps.memstall_cg, sw->maps.stall_stamp,
				  sw->maps.stall_stamp_tid, sw->maps.memstall_drops};
	struct bpf_map *own[] = {joins ? p->skel->maps.memstall_cg : NULL,
				 joins ? p->skel->maps.stall_stamp : NULL,
				 joins ? p->skel->maps.stall_stamp_tid : NULL,
				 joins ? p->skel->maps.memstall_drops : NULL};
	int err = switch_share_maps(mine, joins ? own : NULL, sizeof(mine) / sizeof(mine[0]));

	(void)hook; /* either hook has its stamps (load_with) */
	if (err || !joins)
		return err;
	sw->rodata->memstall_on = true;
	return 1;
}

static int64_t ns_of(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Moves the OOM events queued since the last read into s. */
static int drain_ooms(struct memstall_probe *p, struct snapshot *s)
{
	int n;

	if (!p->rb)
		return 0;
	p->cur = s;
	p->err = 0;
	p->mono_to_real_ns = ns_of(CLOCK_REALTIME) - ns_of(CLOCK_MONOTONIC);
	n = ring_buffer__consume(p->rb);
	p->cur = NULL;
	if (p->err)
		return p->err;
	return n < 0 ? n : 0;
}

static int memstall_read(void *state, struct snapshot *s)
{
	struct memstall_probe *p = state;
	int err;

	s->memstall_psi = p->psi;
	err = percpu_map_read(bpf_map__fd(p->skel->maps.memstall_cg), sizeof(__u64),
			      sizeof(struct memstall_cg),
			      cg_map_ncpus(p->skel->maps.memstall_cg, p->ncpus), fold_cg, s);
	if (!err)
		err = drain_ooms(p, s);
	if (!err)
		err = percpu_counters_read(bpf_map__fd(p->skel->maps.memstall_drops),
					   MEMSTALL_DROP_NR, p->ncpus, s->memstall_drops);
	return err;
}

static void memstall_forget(void *state, const uint64_t *ids, size_t n)
{
	struct memstall_probe *p = state;

	cgroup_map_forget(bpf_map__fd(p->skel->maps.memstall_cg), ids, n);
}

const struct probe_ops memstall_probe_ops = {
	.name = "memstall",
	.object = memstall_bpf__elf_bytes,
	.load = memstall_load,
	.attach = memstall_attach,
	.read = memstall_read,
	.forget = memstall_forget,
	.share_switch = memstall_share_switch,
	.path = memstall_path,
	.destroy = memstall_destroy,
};
