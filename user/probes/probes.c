// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "probes/probes.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "probes/bpffs.h"
#include "probes/btf_attach.h"
#include "probes/pin_layout.h"
#include "probes/pin_check.h"
#include "probes/switch.h"
#include "probes/kernel_btf.h"
#include "probes/cpi.h"
#include "probes/memstall.h"
#include "probes/psi.h"
#include "probes/sched.h"
#include "probes/throttle.h"

static const struct probe_ops *const registry[PROBE_NR] = {
	[PROBE_SCHED] = &sched_probe_ops,	[PROBE_CPI] = &cpi_probe_ops,
	[PROBE_MEMSTALL] = &memstall_probe_ops, [PROBE_PSI] = &psi_probe_ops,
	[PROBE_THROTTLE] = &throttle_probe_ops,
};

struct probe_slot {
	void *state;
	bool on;
	char why[256]; /* reason when off */
};

struct probe_set {
	struct probe_slot slots[PROBE_NR];
	char pin_dir[PATH_MAX];
	struct cgroup_names *names;
	struct switch_bpf *sw; /* the shared sched_switch program, NULL if no probe needs it */
	uint64_t forgot_ns;    /* CLOCK_MONOTONIC of the last sweep for removed cgroups */
	int lock_fd;
	bool owner;
};

static const char *const hook_names[] = {
	[PROBE_HOOK_AUTO] = "auto",
	[PROBE_HOOK_TP_BTF] = "tp_btf",
	[PROBE_HOOK_RAW_TP] = "raw_tp",
};

static const char *const wait_names[] = {
	[SCHED_WAIT_AUTO] = "auto",
	[SCHED_WAIT_SCHED_INFO] = "sched_info",
	[SCHED_WAIT_STAMP] = "stamp",
};

static const char *const throttle_names[] = {
	[THROTTLE_AUTO] = "auto",
	[THROTTLE_FENTRY] = "fentry",
	[THROTTLE_TP_BTF] = "tp_btf",
	[THROTTLE_CPUSTAT] = "cpustat",
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

int probe_name_index(const char *const *names, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (names[i] && !strcmp(s, names[i]))
			return (int)i;
	return -EINVAL;
}

const char *probe_hook_name(enum probe_hook hook)
{
	return hook_names[hook];
}

int probe_hook_parse(const char *s, enum probe_hook *hook)
{
	int i = probe_name_index(hook_names, ARRAY_LEN(hook_names), s);

	if (i < 0)
		return i;
	*hook = i;
	return 0;
}

const char *sched_wait_name(enum sched_wait wait)
{
	return wait_names[wait];
}

int sched_wait_parse(const char *s, enum sched_wait *wait)
{
	int i = probe_name_index(wait_names, ARRAY_LEN(wait_names), s);

	if (i < 0)
		return i;
	*wait = i;
	return 0;
}

const char *throttle_source_name(enum throttle_source src)
{
	return throttle_names[src];
}

int throttle_source_parse(const char *s, enum throttle_source *src)
{
	int i = probe_name_index(throttle_names, ARRAY_LEN(throttle_names), s);

	if (i < 0)
		return i;
	*src = i;
	return 0;
}

int probe_load_best(const char *name, enum probe_hook want, probe_load_fn load, void *probe,
		    const struct cgroup_fs *fs)
{
	int err;

	kernel_btf_release(); /* libbpf is about to parse its own copy */
	if (want != PROBE_HOOK_RAW_TP) {
		err = load(probe, PROBE_HOOK_TP_BTF, fs);
		if (!err || want == PROBE_HOOK_TP_BTF)
			return err;
		log_warn("%s probe: tp_btf programs did not load (%s); falling back to raw_tp",
			 name, strerror(-err));
	}
	return load(probe, PROBE_HOOK_RAW_TP, fs);
}

int probe_load_refused(int err, char *why, size_t whylen)
{
	/* The details (a verifier's objection, a pin in the way) are in libbpf's own lines. */
	snprintf(why, whylen, "loading failed: %s%s", strerror(-err),
		 err == -EPERM ? " (needs CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN)" : "");
	return -EOPNOTSUPP;
}

/* switch_load()'s callback: every probe with a context-switch step joins or stays out. */
static int join_switch(void *ctx, struct switch_bpf *skel, enum probe_hook *hook)
{
	struct probe_set *ps = ctx;
	int joined = 0;

	for (int id = 0; id < PROBE_NR; id++) {
		const struct probe_slot *slot = &ps->slots[id];
		int ret;

		if (!registry[id]->share_switch)
			continue;
		ret = registry[id]->share_switch(slot->on ? slot->state : NULL, skel, hook);
		if (ret < 0)
			return ret;
		joined += ret;
	}
	return joined;
}

static int probes_on(const struct probe_set *ps)
{
	int n = 0;

	for (int id = 0; id < PROBE_NR; id++)
		n += ps->slots[id].on;
	return n;
}

/*
 * Every object's ELF, whichever probes are wanted: the cut-down BTF one
 * process writes serves every later one.
 */
static bool small_btf_setup(bool use)
{
	struct kernel_btf_object objs[PROBE_NR + 1];
	size_t n = 0;

	for (int id = 0; id < PROBE_NR; id++)
		if (registry[id]->object) {
			objs[n].elf = registry[id]->object(&objs[n].size);
			n++;
		}
	objs[n].elf = switch_object(&objs[n].size);
	return kernel_btf_small_setup(objs, n + 1, use);
}

int probe_set_open(struct probe_set **out, unsigned int want, const struct probe_opts *opts,
		   const struct cgroup_fs *fs)
{
	struct probe_set *ps = calloc(1, sizeof(*ps));
	struct probe_opts eff; /* opts as the kernel BTF at hand allows */
	struct probe_env env = {.fs = fs, .opts = &eff};
	int err = 0;

	if (!ps)
		return -ENOMEM;
	ps->lock_fd = -1;
	snprintf(ps->pin_dir, sizeof(ps->pin_dir), "%s",
		 opts->pin_dir ? opts->pin_dir : QOSLET_DEFAULT_PIN_DIR);
	env.pin_dir = ps->pin_dir;
	ps->names = env.names = cgroup_names_new(fs);
	if (!ps->names) {
		err = -ENOMEM;
		goto fail;
	}
	err = bpffs_prepare(ps->pin_dir);
	if (err)
		goto fail;
	tracefs_prepare();
	eff = *opts;
	eff.small_btf = small_btf_setup(opts->small_btf);
	/* Without the attach ids, tp_btf would have libbpf parse the full BTF (btf_attach.h). */
	if (eff.small_btf && eff.hook == PROBE_HOOK_AUTO && !btf_attach_registered())
		eff.hook = PROBE_HOOK_RAW_TP;
	for (int id = 0; id < PROBE_NR; id++) {
		struct probe_slot *slot = &ps->slots[id];

		if (!(want & PROBE_BIT(id))) {
			snprintf(slot->why, sizeof(slot->why), "not requested");
			continue;
		}
		err = registry[id]->load(&slot->state, &env, slot->why, sizeof(slot->why));
		if (err == -EOPNOTSUPP) {
			log_warn("%s probe is off: %s", registry[id]->name, slot->why);
			continue;
		}
		if (err)
			goto fail;
		slot->on = true;
	}
	pin_fix_modes(ps->pin_dir); /* those the loads pinned, and any an older qoslet left */
	if (!probes_on(ps)) {
		log_err("no probe could be loaded");
		err = -EOPNOTSUPP;
		goto fail;
	}
	err = switch_load(&ps->sw, fs, eff.hook, join_switch, ps);
	if (err) {
		log_err("the shared sched_switch program did not load: %s", strerror(-err));
		goto fail;
	}
	err = probe_set_poll(ps);
	if (err)
		goto fail;
	if (!probes_on(ps)) {
		log_err("no probe could be attached");
		err = -EOPNOTSUPP;
		goto fail;
	}
	if (!ps->owner)
		log_info("another qoslet process attached the probes; reading its maps");
	*out = ps;
	return 0;
fail:
	probe_set_close(ps);
	return err;
}

void probe_set_close(struct probe_set *ps)
{
	if (!ps)
		return;
	switch_bpf__destroy(ps->sw); /* before the probes: it uses their maps */
	for (int id = 0; id < PROBE_NR; id++)
		if (ps->slots[id].on)
			registry[id]->destroy(ps->slots[id].state);
	if (ps->lock_fd >= 0)
		close(ps->lock_fd);
	cgroup_names_free(ps->names);
	free(ps);
}

/*
 * A probe that does not attach (a tracepoint missing from this kernel, its
 * events unavailable) goes off alone. Its maps may have joined the shared
 * sched_switch program: that step keeps counting into them unread, which
 * costs little and keeps the program valid for the probes still on.
 */
static void attach_or_off(struct probe_set *ps, int id)
{
	struct probe_slot *slot = &ps->slots[id];
	int err = registry[id]->attach(slot->state);

	if (!err)
		return;
	snprintf(slot->why, sizeof(slot->why), "attaching failed: %s", strerror(-err));
	log_warn("%s probe is off: %s", registry[id]->name, slot->why);
	registry[id]->destroy(slot->state);
	slot->state = NULL;
	slot->on = false;
}

int probe_set_poll(struct probe_set *ps)
{
	int locked;

	if (ps->owner)
		return 0;
	locked = bpffs_try_lock(ps->pin_dir, &ps->lock_fd);
	if (locked <= 0)
		return locked;
	for (int id = 0; id < PROBE_NR; id++)
		if (ps->slots[id].on)
			attach_or_off(ps, id);
	if (ps->sw) {
		int err = switch_bpf__attach(ps->sw);

		if (err) {
			log_err("attaching the shared sched_switch program failed: %s",
				strerror(-err));
			close(ps->lock_fd);
			ps->lock_fd = -1;
			return err;
		}
	}
	ps->owner = true;
	return 0;
}

struct cgroup_names *probe_set_names(const struct probe_set *ps)
{
	return ps->names;
}

bool probe_set_owner(const struct probe_set *ps)
{
	return ps->owner;
}

/* The ids of the snapshot's cgroups and pair parties; *out NULL (and 0) when out of memory. */
static size_t snapshot_ids(const struct snapshot *s, uint64_t **out)
{
	uint64_t *ids = malloc((s->n_cgroups + 2 * s->n_blame + 1) * sizeof(*ids));
	size_t n = 0;

	for (size_t i = 0; ids && i < s->n_cgroups + 2 * s->n_blame; i++) {
		uint64_t id = i < s->n_cgroups ? s->cgroups[i].id
			      : (i - s->n_cgroups) % 2 == 0
				      ? s->blame[(i - s->n_cgroups) / 2].victim
				      : s->blame[(i - s->n_cgroups) / 2].culprit;

		if (id != QOSLET_CULPRIT_IDLE)
			ids[n++] = id;
	}
	*out = ids;
	return n;
}

/*
 * The owner deletes map entries of removed cgroups that the kernel-side
 * rmdir hooks missed (removed while no qoslet ran): they would otherwise
 * stay in the maps for good. That happens before start-up, so the sweep
 * runs at the first reading and then every 5 minutes: it resolves every id
 * of the reading (16000 with a full blame map), which once a minute was
 * about 3% of the agent's CPU on a 500-pod node, for leftovers that only
 * start-up finds. Where a probe's rmdir hook cannot run (5.10 has not the
 * sched hook's helpers), every removal is left to the sweep: once a minute
 * then, or a node's pod churn would fill the maps.
 */
#define FORGET_EVERY_NS		300000000000ULL
#define FORGET_NO_HOOK_EVERY_NS 60000000000ULL

/* How often the owner sweeps: FORGET_NO_HOOK_EVERY_NS when a loaded probe keeps removed cgroups. */
static uint64_t forget_every_ns(const struct probe_set *ps)
{
	for (int id = 0; id < PROBE_NR; id++)
		if (ps->slots[id].on && registry[id]->keeps_removed &&
		    registry[id]->keeps_removed(ps->slots[id].state))
			return FORGET_NO_HOOK_EVERY_NS;
	return FORGET_EVERY_NS;
}

static void forget_gone(struct probe_set *ps, const struct snapshot *s)
{
	struct timespec now;
	uint64_t *ids, now_ns;
	size_t n, k = 0;

	clock_gettime(CLOCK_MONOTONIC, &now);
	now_ns = (uint64_t)now.tv_sec * 1000000000ULL + now.tv_nsec;
	if (ps->forgot_ns && now_ns - ps->forgot_ns < forget_every_ns(ps))
		return;
	ps->forgot_ns = now_ns;
	n = snapshot_ids(s, &ids);
	/*
	 * A walk after the reading: every id it read existed before the walk
	 * began, so one the walk misses is gone, even the newest. The names
	 * alone would keep every cgroup of their last walk, which only an
	 * unknown id brings about.
	 */
	if (cgroup_names_rewalk_after(ps->names, ids, n) < 0)
		log_debug("walking the cgroups before a sweep failed: sweeping what is known");
	for (size_t i = 0; i < n; i++)
		/* Resolving is what finds a gone id out; known ones cost a tfind(). */
		if (!cgroup_names_lookup(ps->names, ids[i], now_ns) &&
		    cgroup_names_is_gone(ps->names, ids[i]))
			ids[k++] = ids[i];
	n = k;
	for (int id = 0; id < PROBE_NR && n; id++)
		if (ps->slots[id].on && registry[id]->forget)
			registry[id]->forget(ps->slots[id].state, ids, n);
	if (n)
		log_debug("forgot %zu removed cgroups' map entries", n);
	free(ids);
}

int probe_set_read(struct probe_set *ps, struct snapshot *s)
{
	struct timespec ts;

	memset(s, 0, sizeof(*s));
	clock_gettime(CLOCK_REALTIME, &ts);
	s->ts_ns = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	for (int id = 0; id < PROBE_NR; id++) {
		int err;

		if (!ps->slots[id].on)
			continue;
		err = registry[id]->read(ps->slots[id].state, s);
		if (err) {
			log_err("reading the %s probe failed: %s", registry[id]->name,
				strerror(-err));
			snapshot_free(s);
			return err;
		}
	}
	snapshot_finish(s);
	if (ps->owner)
		forget_gone(ps, s);
	return 0;
}

int probe_set_map_fd(const struct probe_set *ps, enum probe_id id, size_t map)
{
	const struct probe_slot *slot = &ps->slots[id];
	const char *name = pin_map_name(map);

	if (!slot->on || !registry[id]->map_fd || !name)
		return -ENOENT;
	return registry[id]->map_fd(slot->state, name);
}

struct probe_status probe_set_status(const struct probe_set *ps, enum probe_id id)
{
	const struct probe_slot *slot = &ps->slots[id];

	return (struct probe_status){
		.name = registry[id]->name,
		.on = slot->on,
		.detail = slot->on ? registry[id]->path(slot->state) : slot->why,
	};
}
