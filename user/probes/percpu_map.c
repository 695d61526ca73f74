// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "probes/percpu_map.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/*
 * Entries per batch: as many as fit in BATCH_BYTES of values, within
 * [BATCH_MIN, BATCH_MAX]. Few large batches for small values (each call
 * costs a syscall and kernel buffers); a bounded buffer for large per-CPU
 * values on machines with many CPUs.
 */
#define BATCH_BYTES (256 * 1024)
#define BATCH_MIN   16
#define BATCH_MAX   1024

static __u32 batch_entries(size_t val_size, int ncpus)
{
	size_t n = BATCH_BYTES / (val_size * (size_t)ncpus);

	return n < BATCH_MIN ? BATCH_MIN : n > BATCH_MAX ? BATCH_MAX : (__u32)n;
}

/* Every entry in batches; with `drain`, each batch is deleted as it is read. */
static int walk(int fd, size_t key_size, size_t val_size, int ncpus, percpu_fold_fn fold, void *ctx,
		bool drain)
{
	DECLARE_LIBBPF_OPTS(bpf_map_batch_opts, opts);
	char in_batch[16], out_batch[16]; /* one key of the map */
	__u32 batch = batch_entries(val_size, ncpus);
	/* Zeroed: valgrind cannot see the kernel fill them (no batch-op support). */
	void *keys = calloc(batch, key_size), *vals = calloc((size_t)batch * ncpus, val_size);
	bool first = true;
	int err = 0;

	if (key_size > sizeof(in_batch))
		err = -EINVAL;
	else if (!keys || !vals)
		err = -ENOMEM;
	while (!err) {
		__u32 n = batch;
		void *in = first ? NULL : in_batch;
		int ret = drain ? bpf_map_lookup_and_delete_batch(fd, in, out_batch, keys, vals, &n,
								  &opts)
				: bpf_map_lookup_batch(fd, in, out_batch, keys, vals, &n, &opts);

		if (ret && errno != ENOENT) {
			err = -errno;
			break;
		}
		for (__u32 i = 0; i < n && !err; i++)
			err = fold(ctx, (char *)keys + i * key_size,
				   (char *)vals + (size_t)i * val_size * ncpus, ncpus);
		if (ret) /* ENOENT: that was the last batch */
			break;
		memcpy(in_batch, out_batch, sizeof(in_batch));
		first = false;
	}
	free(keys);
	free(vals);
	return err;
}

int percpu_map_read(int fd, size_t key_size, size_t val_size, int ncpus, percpu_fold_fn fold,
		    void *ctx)
{
	return walk(fd, key_size, val_size, ncpus, fold, ctx, false);
}

int percpu_map_drain(int fd, size_t key_size, size_t val_size, int ncpus, percpu_fold_fn fold,
		     void *ctx)
{
	return walk(fd, key_size, val_size, ncpus, fold, ctx, true);
}

int percpu_counters_read(int fd, __u32 n, int ncpus, uint64_t *out)
{
	__u64 vals[ncpus];

	memset(vals, 0, sizeof(vals)); /* see the calloc above */
	for (__u32 i = 0; i < n; i++) {
		if (bpf_map_lookup_elem(fd, &i, vals))
			return -errno;
		out[i] = 0;
		for (int cpu = 0; cpu < ncpus; cpu++)
			out[i] += vals[cpu];
	}
	return 0;
}

size_t cgroup_map_forget(int fd, const uint64_t *ids, size_t n)
{
	size_t deleted = 0;

	for (size_t i = 0; i < n; i++) {
		__u64 key = ids[i];

		deleted += !bpf_map_delete_elem(fd, &key);
	}
	return deleted;
}
