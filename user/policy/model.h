/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the policies see: one plain description of the managed subtree per
 * tick (struct pol_input), built by user/agent/inventory.c from the probes'
 * snapshot and the cgroup files, recorded by `qoslet record` and fed back by
 * `qoslet replay`. Policies read nothing else: no files, no clock (the only
 * time is ts_ns), so a recording replays to the same decisions.
 */
#ifndef QOSLET_POLICY_MODEL_H
#define QOSLET_POLICY_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hist.h"

/* Koordinator's QoS classes; UNMANAGED cgroups are measured but never acted on. */
enum qos_class {
	QOS_UNMANAGED = 0,
	QOS_SYSTEM,
	QOS_LSE, /* latency-sensitive, exclusive CPUs */
	QOS_LSR, /* latency-sensitive, reserved CPUs (Guaranteed pods) */
	QOS_LS,	 /* latency-sensitive, shared CPUs (Burstable pods) */
	QOS_BE,	 /* best effort (batch) */
	QOS_NR,
};

/* "UNMANAGED", "SYSTEM", "LSE", "LSR", "LS", "BE". */
const char *qos_class_name(enum qos_class c);
/* Parses the names above (case as written); -EINVAL for anything else. */
int qos_class_parse(const char *s, enum qos_class *c);

static inline bool qos_is_ls(enum qos_class c)
{
	return c == QOS_LSE || c == QOS_LSR || c == QOS_LS;
}

/*
 * Why eviction passes a unit by whatever its class: facts of the pod, kept
 * in the record; the eviction policies weigh them (KUBE_SYSTEM only counts
 * without evict.kube_system). One reason per unit: the first that holds in
 * this order, the absolute ones before the configurable one.
 */
enum evict_guard {
	EVICT_GUARD_NONE = 0,
	EVICT_GUARD_OPT_OUT,	 /* annotated never to be evicted (qoslet's or Koordinator's) */
	EVICT_GUARD_DAEMONSET,	 /* owned by a DaemonSet: evicted, it comes straight back */
	EVICT_GUARD_MIRROR,	 /* a static (mirror) pod: the kubelet restarts it from a file */
	EVICT_GUARD_KUBE_SYSTEM, /* in kube-system: only with evict.kube_system */
	EVICT_GUARD_NR,
};

/* "", "opted_out", "daemonset", "mirror", "kube_system". */
const char *evict_guard_name(enum evict_guard g);
/* Parses the names above; -EINVAL for anything else. */
int evict_guard_parse(const char *s, enum evict_guard *g);

#define POL_PATH_MAX	512
#define POL_CPULIST_MAX 256 /* "0-3,8-11" lists of a node's CPUs */
#define POL_CPUS_MAX	256 /* CPUs described in pol_input.topo */

/*
 * A unit's memory and I/O over the interval, for the memory interference
 * policy (docs/agent-policies.md, "Memory and I/O interference"). Times
 * are task time, as PSI sums them. Zero when not measured.
 */
struct pol_mem_stall {
	bool has_stall; /* stall_ns was measured (the unit's PSI file, or the probe) */
	bool has_io;	/* io_ns was */
	/*
	 * Memory stall: v2 memory.pressure "some" total; v1 the memstall
	 * probe's in_memstall sleeps plus direct and memcg reclaim.
	 */
	uint64_t stall_ns;
	uint64_t io_ns;		/* v2 io.pressure "some"; v1 the probe's in_iowait sleeps */
	uint64_t reclaim_ns;	/* direct + memcg reclaim the unit's tasks did (probe) */
	uint64_t limit_hits;	/* its own limit: v1 memory.failcnt, v2 memory.events max */
	uint64_t ancestor_hits; /* its ancestors' (pol_input.mem_ancestors), the same counters */
	uint64_t ancestor;	/* the ancestor with the most hits; 0 none */
	uint64_t refaults;	/* memory.stat workingset_refault (anon + file) */
	uint64_t charged_pages; /* v1 memory.stat pgpgin: pages charged (page cache, anon) */
	uint64_t io_bytes;	/* v1 blkio io_service_bytes, v2 io.stat rbytes + wbytes */
	/*
	 * The disk most of its bios went to (the probe's block_bio_queue:
	 * MEMSTALL_DEV(major, minor) of the whole disk); 0 unknown.
	 */
	uint64_t io_dev;
};

/*
 * A unit's block I/O throttle (I/O suppression, docs/agent-policies.md), read
 * for BE units while it is on: v1 blkio.throttle.{read,write}_bps_device,
 * v2 io.max rbps / wbps, on one disk: the one that has a rule, else the
 * unit's ms.io_dev. Bytes a second, -1 none.
 */
struct pol_io_limit {
	bool has; /* read (else all 0) */
	uint64_t dev;
	int64_t rbps, wbps;
};

/*
 * One managed unit: a pod (kubelet layouts) or, standalone, a cgroup that a
 * class glob of the config matched. Its numbers cover the unit's whole
 * subtree (containers included). A limit "absent" is -1.
 */
struct pol_unit {
	uint64_t id;		 /* cgroup id of the unit's directory */
	char path[POL_PATH_MAX]; /* relative to the cgroup root, no leading '/' */
	char pod_uid[40];	 /* "" outside Kubernetes */
	enum qos_class cls;
	int32_t priority; /* pod priority; 0 when unknown (lower is evicted first) */
	/* Eviction's per-pod facts (user/kube/pods.h): all zero outside Kubernetes. */
	enum evict_guard evict_guard;
	int32_t evict_priority; /* the pod's eviction-priority annotation; 0 none (lower first) */
	uint64_t start_ns;	/* CLOCK_REALTIME the pod started (status.startTime); 0 unknown */
	/*
	 * The pod's run-queue p99 target, us (qoslet.io/runq-p99-target-us,
	 * docs/slo-control.md); 0 none: the config's glob or class target applies.
	 */
	uint32_t rq_target_us;
	/*
	 * CPUs the kubelet's static CPU manager gave the pod alone (its
	 * containers' entries in cpu_manager_state, pol_input.exclusive_cpus);
	 * 0: the pod runs in the shared pool. A pinned pod is never moved, and
	 * its use is not the shared pool's.
	 */
	uint32_t pinned_cpus;

	/* Settings read at this tick. */
	int64_t quota_us;	    /* CFS quota; -1 unlimited */
	uint64_t period_us;	    /* CFS period */
	int64_t burst_us;	    /* cpu.cfs_burst_us / cpu.max.burst; -1 absent */
	int idle;		    /* cpu.idle 0/1; -1 absent */
	char cpus[POL_CPULIST_MAX]; /* cpuset.cpus; "" unreadable or unset */
	double request_cpus;	    /* from cpu.shares / cpu.weight (1024 shares = 1 CPU) */
	double limit_cpus;	    /* the owner's limit (before qoslet changed it); -1 none */
	uint64_t request_mem;	    /* the pod's memory request (the API's pod list); 0 unknown */
	int64_t weight;		    /* cpu.shares (v1) / cpu.weight (v2) as read; -1 unreadable */
	/*
	 * memory limit as read, bytes; -1 unlimited or not read (read for BE
	 * pods with a batch-memory limit, and for every unit under memory QoS)
	 */
	int64_t mem_max;
	/*
	 * The pod's batch resources (kubernetes.io/batch-cpu, batch-memory in
	 * the pod list; docs/batch-resources.md): 0 when none. A limit is 0
	 * also when some container sets none: the pod is then unlimited.
	 */
	struct pol_batch {
		uint64_t cpu_request; /* milli-CPUs */
		uint64_t cpu_limit;   /* milli-CPUs */
		uint64_t mem_request; /* bytes */
		uint64_t mem_limit;   /* bytes */
	} batch;
	/*
	 * Memory QoS settings (docs/memory-qos.md), read only while memory QoS
	 * is on and the memory controller is v2 (has_mem_qos): bytes, -1 for
	 * "max" (memory.high: none). The memory limit is mem_max above.
	 */
	bool has_mem_qos;
	int64_t mem_min, mem_low, mem_high;

	/* Measured over the interval. */
	double cpu_used;     /* CPUs: the kernel's CPU-time counter / interval */
	uint64_t nr_periods; /* cpu.stat deltas */
	uint64_t nr_throttled;
	bool has_rq;		   /* the sched probe is on */
	struct lat_hist rq;	   /* run-queue waits of the unit's tasks */
	bool has_cpi;		   /* hardware cycles/instructions counted it */
	double cpi;		   /* cycles per instruction in the interval */
	uint64_t mem_anon_unevict; /* anon + unevictable bytes: eviction order */
	uint64_t mem_used;	   /* working set bytes (usage - inactive file) */
	/*
	 * Read with mem_used for BE units while memory suppression is on: the
	 * usage and the page cache (v1 total_cache, v2 file), bytes.
	 */
	uint64_t mem_usage, mem_file;
	struct pol_mem_stall ms; /* memory and I/O stalls, and the evidence of who caused them */
	struct pol_io_limit io_limit;
};

/* The kernel's default CFS period, for a unit whose period is unknown (0). */
#define POL_PERIOD_DEFAULT_US 100000

static inline uint64_t pol_unit_period_us(const struct pol_unit *u)
{
	return u->period_us ? u->period_us : POL_PERIOD_DEFAULT_US;
}

/*
 * Culprits that are not units: the CPU was idle, or a task outside every
 * unit ran that the record does not name (pol_input.outside names the
 * others by their own cgroup id). POL_CULPRIT_QUOTA never appears in a
 * record: the interference policy charges the victim's own CPU limit with it.
 */
#define POL_CULPRIT_IDLE  0
#define POL_CULPRIT_OTHER UINT64_MAX
#define POL_CULPRIT_QUOTA (UINT64_MAX - 1)
/*
 * Memory's placeholders, never in a record either: the victim's own memory
 * limit, and the node short of memory with nobody's reclaim to show for it.
 */
#define POL_CULPRIT_LIMIT (UINT64_MAX - 2)
#define POL_CULPRIT_NODE  (UINT64_MAX - 3)

/*
 * Who delayed whom. The victim is a unit; the culprit is a unit, the
 * victim itself, one of the values above, or a cgroup outside every unit
 * that pol_input.outside names.
 */
struct pol_blame {
	uint64_t victim;
	uint64_t culprit;
	uint64_t wait_ns;
	/*
	 * Hand-overs: the victim's waits charged to the culprit, and its
	 * wake-ups that took the CPU from a runnable task of the culprit at
	 * once (no wait: how an LS task preempts SCHED_IDLE BE).
	 */
	uint64_t count;
};

/*
 * A cgroup outside every unit (outside the managed subtree, or in it above
 * the units) that delayed a unit: the collector names only the few
 * culprits of LS units whose window was over the run-queue threshold.
 */
struct pol_outside {
	uint64_t id;
	char path[POL_PATH_MAX]; /* relative to the cgroup root, no leading '/' */
	enum qos_class cls;	 /* a class rule's, else QOS_UNMANAGED */
};

/* A cgroup outside every unit, as memory sees it. */
struct pol_mem_party {
	struct pol_outside name;
	uint64_t limit_hits; /* its memory limit's hits (ancestors) */
	uint64_t reclaim_ns; /* reclaim its tasks did (outside parties) */
	uint64_t io_bytes;   /* bytes of the bios its tasks submitted (outside parties) */
};

/*
 * A container cgroup that takes its own batch settings
 * (docs/batch-resources.md): a container of a BE pod whose spec asks for
 * kubernetes.io/batch-cpu or sets a batch-memory limit. Only those are
 * listed, so the list stays small. Policies target it by its own id.
 */
struct pol_container {
	uint64_t id;		    /* cgroup id of the container's directory */
	uint64_t unit;		    /* the pod's unit */
	char path[POL_PATH_MAX];    /* relative to the cgroup root, no leading '/' */
	uint64_t batch_cpu_request; /* milli-CPUs; 0 none */
	uint64_t batch_cpu_limit;   /* milli-CPUs; 0 none (unlimited) */
	uint64_t batch_mem_limit;   /* bytes; 0 none (unlimited) */
	/* Settings read (at the settings' cadence, and after each write). */
	int64_t weight;	    /* cpu.shares (v1) / cpu.weight (v2); -1 unreadable */
	int64_t mem_max;    /* memory limit, bytes; -1 unlimited or not read */
	int64_t quota_us;   /* CFS quota (read on v2 only, with a batch-cpu limit); -1 unlimited */
	uint64_t period_us; /* its period; 0 not read */
};

/* Placement facts about one CPU, for cpuset choices. */
struct pol_cpu {
	int cpu;
	int core;    /* core id: hyperthread siblings share it */
	int package; /* socket */
	int node;    /* NUMA node */
};

struct pol_input {
	uint64_t ts_ns;	   /* CLOCK_REALTIME at the reading */
	double interval_s; /* since the previous tick (shorter on a fast-path tick) */
	bool cgroup_v2;	   /* the cpu controller is on cgroup v2 */
	bool has_cpu_idle; /* cpu.idle exists */
	/*
	 * The memory controller is on cgroup v2 (memory suppression steps
	 * memory.high; on v1 memory.limit_in_bytes), and has memory.reclaim
	 * (v2, kernel 5.19+).
	 */
	bool mem_v2, has_mem_reclaim;
	/*
	 * The node can throttle a cgroup's block I/O per disk: v1
	 * blkio.throttle.*_bps_device, v2 io.max (the blkio / io controller,
	 * CONFIG_BLK_DEV_THROTTLING).
	 */
	bool has_io_limit;
	/*
	 * A write of the tick before raced its cgroup's creator (ENOENT, or a
	 * cpuset the kernel found busy): this tick is the agent's retry of it,
	 * and a miss seen now is not judged yet (plan.h).
	 */
	bool after_race;

	/* Capacity: the subtree's limits when set, else the machine's. */
	double cpus;			   /* CPUs */
	char cpu_list[POL_CPULIST_MAX];	   /* the CPUs the subtree may use */
	struct pol_cpu topo[POL_CPUS_MAX]; /* one per CPU of cpu_list */
	size_t n_topo;
	/*
	 * CPUs of cpu_list that pods hold alone (the kubelet's static CPU
	 * manager; docs/agent-policies.md, "Exclusive CPUs"): no BE cpuset and
	 * no move of an LS unit may name them. "" none. The shared pool is
	 * cpu_list without them.
	 */
	char exclusive_cpus[POL_CPULIST_MAX];
	uint64_t mem_capacity; /* bytes */
	uint64_t mem_used;     /* bytes, the way eviction counts it */
	double node_cpu_used;  /* CPUs busy in the whole capacity (all users) */

	struct pol_unit *units; /* sorted by id */
	size_t n_units;
	struct pol_container *containers; /* sorted by id */
	size_t n_containers;
	struct pol_blame *blame; /* this interval's waits, sorted by (victim, culprit) */
	size_t n_blame;
	struct pol_outside *outside; /* the outside culprits blame names, sorted by id */
	size_t n_outside;
	/*
	 * Memory: the units' ancestors under a memory limit (kubepods, its QoS
	 * tiers), with the hits on that limit in the interval, sorted by id;
	 * and the cgroups outside every unit that reclaimed or submitted block
	 * I/O (system slices, named as outside culprits are), with their
	 * reclaim time and bytes.
	 */
	struct pol_mem_party *mem_ancestors;
	size_t n_mem_ancestors;
	struct pol_mem_party *mem_outside;
	size_t n_mem_outside;
	/*
	 * Some unit's cgroup files failed to read (other than by absence): the
	 * reading is not whole, and batch capacity takes no sample of it. Not
	 * in recordings, so a replay takes every reading as whole.
	 */
	bool cgroup_reads_failed;
};

/* Binary search by id; NULL when absent. */
const struct pol_unit *pol_input_find(const struct pol_input *in, uint64_t id);
/* A container by its id; NULL when absent. */
const struct pol_container *pol_container_find(const struct pol_input *in, uint64_t id);
/* The unit an action's target belongs to: the unit of that id, or a container's pod. */
const struct pol_unit *pol_input_owner(const struct pol_input *in, uint64_t id);
/* The same in an outside table sorted by id. */
const struct pol_outside *pol_outside_find(const struct pol_outside *v, size_t n, uint64_t id);
/* The same in a memory party table sorted by id. */
const struct pol_mem_party *pol_mem_party_find(const struct pol_mem_party *v, size_t n,
					       uint64_t id);
/*
 * The first of n elements of `size` bytes, sorted by the uint64_t key at
 * `offset`, whose key is not below `key` (n when none is).
 */
size_t pol_lower_bound(const void *v, size_t n, size_t size, size_t offset, uint64_t key);
/* victim's pairs in in->blame: [*first, return value). */
size_t pol_blame_of(const struct pol_input *in, uint64_t victim, size_t *first);
void pol_input_free(struct pol_input *in);

/*
 * Seconds from the instant *then_ns (a ts_ns a policy kept) to now_ns.
 * ts_ns is CLOCK_REALTIME, which can step back: then *then_ns moves to
 * now_ns, so a running cool-down, window or cap restarts (0 s) instead of
 * stalling until the clock catches up with it.
 */
static inline double pol_since_s(uint64_t now_ns, uint64_t *then_ns)
{
	if (now_ns < *then_ns)
		*then_ns = now_ns;
	return (double)(now_ns - *then_ns) / 1e9;
}

#endif
