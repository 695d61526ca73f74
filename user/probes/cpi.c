// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "probes/cpi.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "probes/switch.h"
#include "probes/bpffs.h"
#include "probes/cg_map.h"
#include "cpi.skel.h"
#include "probes/cpi_events.h"
#include "probes/cpi_mode.h"
#include "probes/kernel_btf.h"
#include "cpulist.h"
#include "probes/percpu_map.h"
#include "probes/pin_layout.h"

#define ONLINE_CPUS "/sys/devices/system/cpu/online"

struct cpi_probe {
	struct cpi_bpf *skel;
	enum probe_hook hook; /* the program set that is loaded */
	struct cpi_spec spec;
	enum cpi_mode mode;  /* this process's choice: what it attaches with */
	enum cpi_mode shown; /* the mode `path` describes: the attaching process's */
	char reason[192];    /* why the mode is not hardware ("" when it is) */
	struct cpi_event ev[2];
	int ncpus; /* possible CPUs: the perf event arrays' size */
	int *fds;  /* [cpu * 2 + event], -1 when not open; only in the attaching process */
	const char *pin_dir;
	char path[320]; /* "tp_btf, hardware cycles/instructions": for reports */
};

/* Online CPUs into online[0..n); -errno when the list cannot be read. */
static int read_online(bool *online, int n)
{
	char buf[4096];
	FILE *f = fopen(ONLINE_CPUS, "r");
	int err;

	if (!f)
		return -errno;
	err = fgets(buf, sizeof(buf), f) ? cpu_list_parse(buf, online, n) : -EIO;
	fclose(f);
	return err;
}

static int first_online(int ncpus)
{
	bool online[ncpus];

	if (read_online(online, ncpus))
		return 0;
	for (int cpu = 0; cpu < ncpus; cpu++)
		if (online[cpu])
			return cpu;
	return 0;
}

/*
 * Chooses the mode by opening one pair on one CPU (and closing it): a
 * process that turns out not to attach must not hold PMU counters, which
 * would multiplex the attaching process's.
 */
static void choose_mode(struct cpi_probe *p)
{
	char hw_why[160] = "", sw_why[160] = "";
	int cpu = first_online(p->ncpus), hw_err = 0, sw_err = 0;
	struct cpi_event hw[2], sw[2];

	if (p->spec.kind != CPI_SPEC_SOFTWARE) {
		hw_err = cpi_events_resolve(&p->spec, false, hw, hw_why, sizeof(hw_why));
		if (!hw_err)
			hw_err = cpi_events_try(hw, cpu, hw_why, sizeof(hw_why));
	}
	if (cpi_needs_software(&p->spec, hw_err)) {
		sw_err = cpi_events_resolve(&p->spec, true, sw, sw_why, sizeof(sw_why));
		if (!sw_err)
			sw_err = cpi_events_try(sw, cpu, sw_why, sizeof(sw_why));
	}
	p->mode = choose_cpi_mode(&p->spec, hw_err, hw_why, sw_err, sw_why, p->reason,
				  sizeof(p->reason));
	if (p->mode == CPI_MODE_HARDWARE)
		memcpy(p->ev, hw, sizeof(hw));
	else if (p->mode == CPI_MODE_SOFTWARE)
		memcpy(p->ev, sw, sizeof(sw));
}

static void set_path(struct cpi_probe *p, enum cpi_mode mode, const char *reason)
{
	char what[256];

	cpi_describe(mode, &p->spec, reason, what, sizeof(what));
	snprintf(p->path, sizeof(p->path), "%s, %s", probe_hook_name(p->hook), what);
	p->shown = mode;
}

/* Only the results are shared: perf event arrays hold this process's fds. */
static int set_pins(struct cpi_bpf *skel, const char *pin_dir)
{
	struct bpf_map *maps[] = {PIN_MAPS_CPI(PIN_SKEL_MAP)};

	return bpffs_set_pins(skel->obj, maps, sizeof(maps) / sizeof(maps[0]), pin_dir);
}

static int load_with(void *probe, enum probe_hook hook, const struct cgroup_fs *fs)
{
	struct cpi_probe *p = probe;
	bool btf = hook == PROBE_HOOK_TP_BTF;
	struct cpi_bpf *skel = cpi_bpf__open_opts(kernel_btf_open_opts());
	int err;

	if (!skel)
		return -errno;
	skel->rodata->cgroup_mode = fs->mode;
	skel->rodata->cgroup_hierarchy_id = fs->hierarchy_id;
	skel->rodata->counters_on = p->mode != CPI_MODE_OFF;
	bpf_program__set_autoload(skel->progs.btf_cgroup_rmdir, btf);
	bpf_program__set_autoload(skel->progs.raw_cgroup_rmdir, !btf);
	err = cg_map_prepare(skel->maps.cpi_usage);
	if (!err)
		err = set_pins(skel, p->pin_dir);
	if (!err)
		err = cpi_bpf__load(skel);
	if (err) {
		cpi_bpf__destroy(skel);
		return err;
	}
	p->skel = skel;
	p->hook = hook;
	return 0;
}

static void close_events(struct cpi_probe *p)
{
	for (int i = 0; p->fds && i < 2 * p->ncpus; i++)
		if (p->fds[i] >= 0)
			close(p->fds[i]);
	free(p->fds);
	p->fds = NULL;
}

static void cpi_destroy(void *state)
{
	struct cpi_probe *p = state;

	/* Detach first: the programs must not read events being closed. */
	cpi_bpf__destroy(p->skel);
	close_events(p);
	free(p);
}

static int cpi_load(void **state, const struct probe_env *env, char *why, size_t whylen)
{
	struct cpi_probe *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	p->pin_dir = env->pin_dir;
	if (cpi_spec_parse(env->opts->cpi_events, &p->spec)) {
		log_err("cpi probe: invalid --cpi-events '%s' (expected auto, software or "
			"CYCLES,INSTRUCTIONS)",
			env->opts->cpi_events);
		free(p);
		return -EINVAL;
	}
	p->ncpus = libbpf_num_possible_cpus();
	if (p->ncpus <= 0) {
		err = p->ncpus ? p->ncpus : -EINVAL;
		free(p);
		return err;
	}
	choose_mode(p);
	if (p->mode != CPI_MODE_HARDWARE)
		log_warn("cpi probe: CPI unavailable: %s%s", p->reason,
			 p->mode == CPI_MODE_SOFTWARE
				 ? "; counting software stand-ins (ns per switch, not CPI)"
				 : "; reporting CPU time only");
	err = probe_load_best("cpi", env->opts->hook, load_with, p, env->fs);
	if (err) {
		free(p);
		return probe_load_refused(err, why, whylen);
	}
	set_path(p, p->mode, p->reason);
	*state = p;
	return 0;
}

/* Opens the pair on every online CPU into the arrays; offline CPUs are named once. */
static int open_all(struct cpi_probe *p)
{
	int maps[2] = {bpf_map__fd(p->skel->maps.cpi_num_events),
		       bpf_map__fd(p->skel->maps.cpi_den_events)};
	bool online[p->ncpus];
	char skipped[256] = "";
	size_t used = 0;
	int err = read_online(online, p->ncpus), opened = 0;

	if (err) {
		log_err("cpi probe: cannot read %s: %s", ONLINE_CPUS, strerror(-err));
		return err;
	}
	close_events(p); /* from an attempt to attach that failed */
	p->fds = malloc(2 * p->ncpus * sizeof(*p->fds));
	if (!p->fds)
		return -ENOMEM;
	for (int i = 0; i < 2 * p->ncpus; i++)
		p->fds[i] = -1;
	for (int cpu = 0; cpu < p->ncpus; cpu++) {
		if (!online[cpu]) {
			if (used < sizeof(skipped))
				used += snprintf(skipped + used, sizeof(skipped) - used, "%s%d",
						 used ? "," : "", cpu);
			continue;
		}
		for (int e = 0; e < 2; e++) {
			int fd = cpi_event_open(&p->ev[e], cpu);

			/* A CPU without its events counts its slices as read drops. */
			if (fd < 0) {
				log_warn("cpi probe: %s on CPU %d: %s", p->ev[e].name, cpu,
					 strerror(-fd));
				continue;
			}
			p->fds[cpu * 2 + e] = fd;
			if (bpf_map_update_elem(maps[e], &cpu, &fd, BPF_ANY)) {
				err = -errno;
				log_err("cpi probe: storing the %s event of CPU %d: %s",
					p->ev[e].name, cpu, strerror(-err));
				return err;
			}
			opened++;
		}
	}
	if (*skipped)
		log_warn("cpi probe: CPUs %s are offline: no events there (slices on a CPU "
			 "brought online later count as read drops)",
			 skipped);
	log_info("cpi probe: %d events open (%s, %s)", opened, p->ev[0].name, p->ev[1].name);
	return 0;
}

static int cpi_attach(void *state)
{
	struct cpi_probe *p = state;
	__u32 zero = 0, mode = p->mode;
	int err = 0;

	if (p->mode != CPI_MODE_OFF)
		err = open_all(p);
	/* Published before attaching, so no reader labels new counts with an old mode. */
	if (!err && bpf_map_update_elem(bpf_map__fd(p->skel->maps.cpi_info), &zero, &mode, 0))
		err = -errno;
	if (!err)
		err = cpi_bpf__attach(p->skel);
	if (err) {
		log_err("cpi probe: attaching (%s) failed: %s", p->path, strerror(-err));
		return err;
	}
	set_path(p, p->mode, p->reason);
	log_info("cpi probe: attached (%s)", p->path);
	return 0;
}

static const char *cpi_path(const void *state)
{
	return ((const struct cpi_probe *)state)->path;
}

static int fold_usage(void *ctx, const void *key, const void *vals, int ncpus)
{
	struct cg_sample *cg = snapshot_add(ctx, *(const __u64 *)key);
	const struct cpi_val *v = vals;

	if (!cg)
		return -ENOMEM;
	cg->parts |= CG_CPU;
	for (int cpu = 0; cpu < ncpus; cpu++) {
		cg->cpu.cpu_ns += v[cpu].cpu_ns;
		cg->cpu.numerator += v[cpu].numerator;
		cg->cpu.denominator += v[cpu].denominator;
	}
	return 0;
}

static int read_drops(struct cpi_probe *p, struct snapshot *s)
{
	__u64 vals[p->ncpus];

	for (__u32 i = 0; i < CPI_DROP_NR; i++) {
		if (bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.cpi_drops), &i, vals))
			return -errno;
		s->cpi_drops[i] = 0;
		for (int cpu = 0; cpu < p->ncpus; cpu++)
			s->cpi_drops[i] += vals[cpu];
	}
	return 0;
}

/* The attaching process's mode labels the numbers, whoever reads them. */
static int read_mode(struct cpi_probe *p, struct snapshot *s)
{
	__u32 zero = 0, mode;

	if (bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.cpi_info), &zero, &mode))
		return -errno;
	if (mode != p->shown)
		set_path(p, mode, mode == p->mode ? p->reason : "as the attaching qoslet chose");
	s->cpi_mode = mode;
	s->cpi_hardware = mode == CPI_MODE_HARDWARE;
	return 0;
}

static int cpi_read(void *state, struct snapshot *s)
{
	struct cpi_probe *p = state;
	int err = percpu_map_read(bpf_map__fd(p->skel->maps.cpi_usage), sizeof(__u64),
				  sizeof(struct cpi_val),
				  cg_map_ncpus(p->skel->maps.cpi_usage, p->ncpus), fold_usage, s);

	if (!err)
		err = read_drops(p, s);
	if (!err)
		err = read_mode(p, s);
	return err;
}

static int cpi_share_switch(void *state, struct switch_bpf *sw, enum probe_hook *hook)
{
	struct cpi_probe *p = state;
	struct bpf_map *mine[] = {sw->maps.cpi_num_events, sw->maps.cpi_den_events,
				  sw->maps.cpi_last,	   sw->maps.cpi_usage,
				  sw->maps.cpi_drops,	   sw->maps.cpi_info};
	struct bpf_map *own[] = {
		p ? p->skel->maps.cpi_num_events : NULL, p ? p->skel->maps.cpi_den_events : NULL,
		p ? p->skel->maps.cpi_last : NULL,	 p ? p->skel->maps.cpi_usage : NULL,
		p ? p->skel->maps.cpi_drops : NULL,	 p ? p->skel->maps.cpi_info : NULL};
	int err = switch_share_maps(mine, p ? own : NULL, sizeof(mine) / sizeof(mine[0]));

	(void)hook;
	if (err || !p)
		return err;
	sw->rodata->cpi_on = true;
	sw->rodata->counters_on = p->mode != CPI_MODE_OFF;
	return 1;
}

static void cpi_forget(void *state, const uint64_t *ids, size_t n)
{
	struct cpi_probe *p = state;

	cgroup_map_forget(bpf_map__fd(p->skel->maps.cpi_usage), ids, n);
}

const struct probe_ops cpi_probe_ops = {
	.name = "cpi",
	.object = cpi_bpf__elf_bytes,
	.load = cpi_load,
	.attach = cpi_attach,
	.read = cpi_read,
	.forget = cpi_forget,
	.share_switch = cpi_share_switch,
	.path = cpi_path,
	.destroy = cpi_destroy,
};
