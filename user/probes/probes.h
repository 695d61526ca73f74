/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The set of probes a command uses: opens each one that is wanted, keeps
 * going without those the kernel cannot support (saying why), and reads
 * them all into one snapshot.
 *
 * Several qoslet processes may run at once (the agent and an SRE's CLI):
 * they share the pinned maps, and only the one holding a lock on the pin
 * directory attaches programs, so no event is counted twice. The others
 * read the same maps and take over attaching if the holder goes away.
 */
#ifndef QOSLET_PROBES_PROBES_H
#define QOSLET_PROBES_PROBES_H

#include <stdbool.h>
#include <stddef.h>

#include "cgroup/path.h"
#include "snapshot.h"

#define QOSLET_DEFAULT_PIN_DIR "/sys/fs/bpf/qoslet"

enum probe_id {
	PROBE_SCHED = 0, /* run-queue latency and blame: user/probes/sched.c */
	PROBE_CPI,	 /* CPU time and CPI per cgroup: user/probes/cpi.c */
	PROBE_THROTTLE,	 /* CFS bandwidth throttling: user/probes/throttle.c */
	PROBE_MEMSTALL,	 /* reclaim stalls and OOM kills: user/probes/memstall.c */
	PROBE_PSI,	 /* pressure stall information: user/probes/psi.c */
	PROBE_NR,
};

#define PROBE_BIT(id) (1u << (id))

/* How BPF programs attach, for every probe that has the choice. */
enum probe_hook {
	PROBE_HOOK_AUTO = 0, /* the cheapest the kernel accepts */
	PROBE_HOOK_TP_BTF,
	PROBE_HOOK_RAW_TP,
};

/* Where the sched probe takes a wait's start from. */
enum sched_wait {
	SCHED_WAIT_AUTO = 0, /* sched_info where the kernel has it, else stamp */
	SCHED_WAIT_SCHED_INFO,
	SCHED_WAIT_STAMP,
};

/* Where the throttle probe takes its numbers from. */
enum throttle_source {
	THROTTLE_AUTO = 0, /* the best the kernel allows, in this order: */
	THROTTLE_FENTRY,   /* fentry on throttle_cfs_rq/unthrottle_cfs_rq */
	THROTTLE_TP_BTF,   /* sched_switch, reading cfs_rq throttle state */
	THROTTLE_CPUSTAT,  /* polling cpu.stat */
};

/* Everything a user can choose about the probes (command-line options). */
struct probe_opts {
	const char *pin_dir; /* NULL: QOSLET_DEFAULT_PIN_DIR */
	enum probe_hook hook;
	enum sched_wait wait;
	/*
	 * CPI events: NULL or "auto" (cycles,instructions where the PMU has
	 * them, else the software stand-ins), "software" (force the
	 * stand-ins), or "CYCLES_EVENT,INSTRUCTIONS_EVENT" in libpfm4 names.
	 */
	const char *cpi_events;
	enum throttle_source throttle;
	/*
	 * Load through the cut-down kernel BTF (kernel_btf.h), as the CLI views
	 * do: raw_tp hooks where the hook is auto, and no fentry, since either
	 * would have libbpf parse the whole BTF anyway. Cleared by
	 * probe_set_open() when no cut-down copy can be had.
	 */
	bool small_btf;
	/*
	 * The sched probe reads the blame pairs that changed since its last
	 * reading (it drains rq_blame_fresh) and keeps the totals itself,
	 * instead of reading every pair of rq_blame: for the agent, the one
	 * long-lived reader of a pin directory. Two drainers would split the
	 * changes between them.
	 */
	bool blame_fresh;
};

/* What a probe gets when it loads. */
struct probe_env {
	const struct cgroup_fs *fs;
	const struct probe_opts *opts;
	const char *pin_dir; /* resolved */
	/* id <-> path, shared by every probe and the view: one walk serves all */
	struct cgroup_names *names;
};

struct switch_bpf;

/* One probe. Its functions log their own errors. */
struct probe_ops {
	const char *name;
	const void *(*object)(size_t *size); /* its BPF object's ELF (the skeleton's), or NULL */
	/*
	 * Loads (and pins) without attaching. -EOPNOTSUPP means the kernel
	 * lacks or refused what the probe needs: `why` says what, and the rest
	 * runs on. Other errors (bad options, no memory) are fatal.
	 */
	int (*load)(void **state, const struct probe_env *env, char *why, size_t whylen);
	int (*attach)(void *state); /* only in the process holding the lock */
	int (*read)(void *state, struct snapshot *s);
	/*
	 * Optional: deletes whatever the probe's maps hold about these removed
	 * cgroups (the rmdir programs miss removals while no qoslet runs).
	 */
	void (*forget)(void *state, const uint64_t *ids, size_t n);
	/*
	 * Optional: true when this kernel runs none of the probe's rmdir
	 * programs, so that its maps keep every removed cgroup until forget.
	 */
	bool (*keeps_removed)(const void *state);
	/*
	 * Optional: joins the shared sched_switch program (user/probes/switch.h)
	 * by handing it this probe's maps and settings; state is NULL when the
	 * probe is off, and then it only keeps its maps out of the program.
	 * May require a hook in *hook. Returns 1 when joined, 0 when not, or
	 * -errno.
	 */
	int (*share_switch)(void *state, struct switch_bpf *skel, enum probe_hook *hook);
	/* The path in use, for reports: e.g. "tp_btf, sched_info". */
	const char *(*path)(const void *state);
	void (*destroy)(void *state);
	/* Optional: the descriptor of the loaded map called name, or -ENOENT. */
	int (*map_fd)(const void *state, const char *name);
};

struct probe_status {
	const char *name;
	bool on;
	const char *detail; /* path when on, reason when off */
};

struct probe_set;

/*
 * Mounts bpffs if needed and loads each probe in `want` (PROBE_BIT mask).
 * A probe the kernel cannot support, refuses to load or to attach is left
 * off with a warning that names it and says why, and the rest run; having
 * no probe at all is an error (-errno), as are a pin directory that cannot
 * be made and running out of memory.
 */
int probe_set_open(struct probe_set **out, unsigned int want, const struct probe_opts *opts,
		   const struct cgroup_fs *fs);
void probe_set_close(struct probe_set *ps);

/*
 * Attaches every loaded probe if no other qoslet process has (retried each
 * call). A probe that fails to attach is turned off (warning, status says
 * why) and the others attach.
 */
int probe_set_poll(struct probe_set *ps);

/* The id <-> path map every probe uses; views name cgroups with it too. */
struct cgroup_names *probe_set_names(const struct probe_set *ps);

/* True when this process attached the programs; false when another did. */
bool probe_set_owner(const struct probe_set *ps);

/* Reads every probe that is on into s (cumulative), finished and sorted. */
int probe_set_read(struct probe_set *ps, struct snapshot *s);

/* Status of probe `id`, whether wanted or not (not wanted: off, "not requested"). */
struct probe_status probe_set_status(const struct probe_set *ps, enum probe_id id);

/*
 * The descriptor of probe id's map (enum pin_map_id), for the readers and
 * writers beside the probes (the fast path): the probe set's own, valid
 * until probe_set_close(). -ENOENT when the probe is off or has no such map.
 */
int probe_set_map_fd(const struct probe_set *ps, enum probe_id id, size_t map);

/* Names for the option values; the parsers return -EINVAL for unknown words. */
const char *probe_hook_name(enum probe_hook hook);
int probe_hook_parse(const char *s, enum probe_hook *hook);
const char *sched_wait_name(enum sched_wait wait);
int sched_wait_parse(const char *s, enum sched_wait *wait);
const char *throttle_source_name(enum throttle_source src);
int throttle_source_parse(const char *s, enum throttle_source *src);

/* Loads one program set of a probe (opens, configures and loads its skeleton). */
typedef int (*probe_load_fn)(void *probe, enum probe_hook hook, const struct cgroup_fs *fs);

/*
 * Loads a probe's tp_btf set, or its raw_tp set when the verifier refuses
 * tp_btf (the load is the feature probe: the verifier is the authority) or
 * when `want` asks for raw_tp. A forced tp_btf does not fall back.
 */
int probe_load_best(const char *name, enum probe_hook want, probe_load_fn load, void *probe,
		    const struct cgroup_fs *fs);

/*
 * A probe whose programs did not load is off, not fatal: fills `why` with
 * the error (and the capabilities, for EPERM) and returns -EOPNOTSUPP,
 * what probe_ops.load returns for "off, say why".
 */
int probe_load_refused(int err, char *why, size_t whylen);

/* Index of `s` in `names`, or -EINVAL: the option parsers' common step. */
int probe_name_index(const char *const *names, size_t n, const char *s);

#endif
