/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The collector: the one reader of the node per tick. It keeps the managed
 * subtree's cgroups from the kernel's mkdir/rmdir notifications (tree.h),
 * finds the units among them (pods, or cgroups a class rule names), keeps
 * each unit's counter files open (unit_files.h), reads the probes' maps
 * once, and hands out one read-only record per tick (struct tick_record)
 * that the policies, the metrics, `qoslet record` and the loop all read:
 * every consumer sees the same numbers, and nothing else opens a cgroup
 * file or reads a probe map.
 *
 * Settings (quota, burst, cpu.idle, cpuset, shares/weight) change only
 * when the actuator or the owner writes them: they are read when a unit
 * appears, after the actuator wrote to it (collector_settings_changed), and
 * every COLLECT_SETTINGS_NS to notice the owner's changes: 30 s, because
 * owners (the kubelet on a resize, an operator by hand) seldom write them,
 * and each read opens five or six files by path (1.3 to 2.2 us each); at
 * 10 s that was a tenth of the agent's CPU on a 500-pod node. (Another
 * writer's change of a file the actuator wrote arrives at once, through
 * file_watch.h, and is answered before the tick reads.) PSI averages move
 * every 2 s in the kernel and are read that often. Counters are read only
 * where a consumer uses them: CFS counters of units with a quota (v1), and
 * the memory of BE units while the node nears the memory-eviction threshold
 * (of every unit when batch capacity is on).
 */
#ifndef QOSLET_COLLECT_COLLECT_H
#define QOSLET_COLLECT_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup/path.h"
#include "cgroup/knob.h"
#include "collect/pod_trust.h"
#include "collect/wants.h"
#include "kube/pods.h"
#include "policy/model.h"
#include "snapshot.h"

#define COLLECT_SETTINGS_NS (30 * 1000000000ull)
/* Units' memory is read from this far below the memory-eviction threshold (share of capacity). */
#define COLLECT_MEM_MARGIN 0.05
#define COLLECT_PSI_NS	   (2 * 1000000000ull)
/*
 * Batch capacity reads every unit's memory this often, and the values carry
 * between reads: its window is minutes long, and memory.stat (about 2 us a
 * unit, on top of the usage) every tick for 500 pods was a tenth of the
 * agent's CPU. Memory eviction near its threshold still reads BE units every
 * tick.
 */
#define COLLECT_CAPACITY_MEM_NS (10 * 1000000000ull)
/*
 * Memory suppression cuts a guilty BE unit from its memory of that tick,
 * and keeps a v1 limit above its anon: it reads every tick the BE units
 * whose memory qoslet holds, and all BE units while an LS unit stalled on
 * memory or I/O (at least COLLECT_MEM_HOT_SHARE of an interval) in the last
 * COLLECT_MEM_HOT_NS; the rest every COLLECT_CAPACITY_MEM_NS, carried
 * between reads. A breach takes k of n windows, so its culprits' figures are
 * fresh by the time it is found; on a node with no LS stall 500 BE units'
 * memory.stat every tick was half the agent's CPU.
 */
#define COLLECT_MEM_HOT_NS    (60 * 1000000000ull)
#define COLLECT_MEM_HOT_SHARE 0.01

struct probe_set;

struct collect_opts {
	const struct cgroup_ctrls *ctrls;
	const struct cgroup_fs *fs;	   /* the cpu hierarchy: cgroup ids */
	const char *subtree;		   /* managed subtree, relative to the roots */
	const struct collect_wants *wants; /* read at each use: a reload changes it in place */
	/* The probes to read each tick (NULL: none) and the enum cg_part bits they provide. */
	struct probe_set *probes;
	unsigned int parts;
	/* The owner's quota before qoslet changed it (the actuator knows); may be NULL. */
	bool (*original_quota)(void *ctx, const char *rel, int64_t *quota_us);
	/* qoslet holds the unit's memory limit or memory.high (the actuator knows); may be NULL. */
	bool (*memory_held)(void *ctx, const char *rel);
	/*
	 * What the Kubernetes API says about the pod with this uid, or NULL
	 * (unknown, or no API); may be NULL. Its koordinator.sh/qosClass label
	 * classes the pod ahead of the kubelet's tier, and it gives the priority.
	 */
	const struct kube_pod *(*pod)(void *ctx, const char *uid);
	void *ctx;
	/*
	 * Names cgroups outside every unit that delayed an LS unit
	 * (shared with the metrics' labels); NULL: such culprits stay unnamed.
	 */
	struct cgroup_names *names;
	/*
	 * Off Kubernetes, with the whole hierarchy as the subtree: cgroups no
	 * rule classes become SYSTEM units (measured, never acted on) at the
	 * top level, and one level down inside a top-level systemd slice
	 * (system.slice/cron.service, user.slice/user-1000.slice).
	 */
	bool system_units;
};

/* A cgroup of a unit (the unit's own directory included). */
struct collect_member {
	uint64_t cgid;
	uint64_t unit; /* the unit's id */
	enum qos_class cls;
};

/*
 * One tick's reading. Valid until the next collector_read; the collector
 * owns every pointer in it.
 */
struct tick_record {
	struct pol_input in; /* what the policies see */
	/*
	 * Per unit, in in.units order, cumulative since the unit was first
	 * seen: the probes' parts (run-queue waits, CPU, reclaim stalls) summed
	 * over the unit's cgroups, CFS bandwidth from its cpu.stat and PSI from
	 * its pressure files, with `parts` saying which hold data. Pointers
	 * into the collector's units, valid until its next read.
	 */
	const struct cg_sample *const *unit_totals;
	const struct snapshot *probes; /* the probes' cumulative reading; NULL when none */
	uint64_t cgroup_read_errors;   /* unit files that failed for a reason other than absence */
	bool probe_read_failed;	       /* the probes could not be read this tick */
};

struct collector;

/* NULL when out of memory. The options are borrowed and must outlive it. */
struct collector *collector_new(const struct collect_opts *o);
void collector_free(struct collector *c);

/*
 * One tick: brings the tree up to date, reads the probes and every unit,
 * and fills the record. ts_ns is CLOCK_REALTIME, mono_ns CLOCK_MONOTONIC
 * (for the interval). Returns the record, or NULL with *err set (-ENOENT:
 * the subtree itself vanished; -ENOMEM).
 */
const struct tick_record *collector_read(struct collector *c, uint64_t ts_ns, uint64_t mono_ns,
					 int *err);

/* The last record (empty before the first read). */
const struct tick_record *collector_record(const struct collector *c);

/*
 * The actuator wrote to this unit (or to a container of pol_input.containers,
 * by its id): its settings are read again at the next tick.
 */
void collector_settings_changed(struct collector *c, uint64_t unit_id);

/*
 * A write raced its cgroup's creator (the agent retries it a tick later):
 * the next record says so (pol_input.after_race), for the plan to judge the
 * retry's look as a retry and any other tick's as a look.
 */
void collector_write_raced(struct collector *c);

/*
 * How many units' pods asked through their own metadata for what the config
 * does not let them decide, by refusal (user/collect/pod_trust.h); [0] is 0.
 */
void collector_refusals(const struct collector *c, uint32_t counts[POD_REFUSE_NR]);

/* The classes' inputs changed (a new pod list, a reloaded config): classify again. */
void collector_reclassify(struct collector *c);

/*
 * Between ticks: readable when a cgroup appeared or went in the managed
 * subtree (poll it); -1 when the kernel gives no notifications.
 */
int collector_tree_fd(const struct collector *c);

/*
 * Between ticks: applies what collector_tree_fd() announced, for the next
 * read to classify. Returns 1 when the tree changed, else 0 (a failure is
 * left for the next read to meet and report).
 */
int collector_tree_poll(struct collector *c, uint64_t mono_ns);

/* The members found by the last read, sorted by cgid. */
const struct collect_member *collector_members(const struct collector *c, size_t *n);

/* The member with cgroup id cgid in the last read, or NULL. */
const struct collect_member *collector_member_of(const struct collector *c, uint64_t cgid);

/*
 * The path of a cgroup of the managed subtree, relative to the root, or
 * NULL when the last read did not see it there.
 */
const char *collector_path_of(const struct collector *c, uint64_t cgid);

/*
 * Finds the kubelet's pod root under the cpu hierarchy: "kubepods" (cgroupfs
 * driver) or "kubepods.slice" (systemd driver). -ENOENT when neither exists.
 */
int collect_detect_kubepods(const struct cgroup_ctrls *ctrls, char *rel, size_t size);

#endif
