/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Reading a per-CPU hash map from user space: every entry with its values
 * of all possible CPUs, handed to a fold callback. Shared by the probes.
 */
#ifndef QOSLET_PROBES_PERCPU_MAP_H
#define QOSLET_PROBES_PERCPU_MAP_H

#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>

/* Called once per entry; percpu_vals holds ncpus values of val_size bytes. */
typedef int (*percpu_fold_fn)(void *ctx, const void *key, const void *percpu_vals, int ncpus);

/*
 * Folds every entry of the per-CPU hash `fd` (keys of at most 16 bytes).
 * Returns 0, fold's first non-zero value, or -errno.
 */
int percpu_map_read(int fd, size_t key_size, size_t val_size, int ncpus, percpu_fold_fn fold,
		    void *ctx);

/*
 * percpu_map_read(), deleting the entries it hands over: a writer's update
 * after an entry was copied and before it was deleted is lost, so only
 * maps whose writers can afford that are drained (bpf/sched_switch.bpf.h).
 */
int percpu_map_drain(int fd, size_t key_size, size_t val_size, int ncpus, percpu_fold_fn fold,
		     void *ctx);

/*
 * Deletes the entries keyed by these cgroup ids from a map keyed by u64
 * cgroup id; ids it does not hold are skipped. Returns how many it deleted.
 */
size_t cgroup_map_forget(int fd, const uint64_t *ids, size_t n);

/* out[i] = entry i of a per-CPU array of u64 (n entries), summed over CPUs. */
int percpu_counters_read(int fd, __u32 n, int ncpus, uint64_t *out);

#endif
