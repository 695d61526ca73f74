// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "probes/percpu_map.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/*
 * Entries per batch: a walk starts with BATCH_MIN and doubles while the
 * batches come back full (or the kernel needs room for a whole hash
 * bucket: ENOSPC), up to as many as fit in BATCH_BYTES of values, within
 * [BATCH_MIN, BATCH_MAX]. A map of a few entries (memstall_cg on most
 * nodes) then costs a few KiB a tick, not BATCH_BYTES allocated and zeroed
 * (an mmap and its page faults each time, and a heap that kept it resident
 * afterwards); a map of thousands still takes few syscalls.
 */
#define BATCH_BYTES (256 * 1024)
#define BATCH_MIN   16
#define BATCH_MAX   1024

static __u32 batch_limit(size_t val_size, int ncpus)
{
	size_t n = BATCH_BYTES / (val_size * (size_t)ncpus);

	return n < BATCH_MIN ? BATCH_MIN : n > BATCH_MAX ? BATCH_MAX : (__u32)n;
}

/* keys and vals for batch entries; zeroed: valgrind cannot see the kernel fill them (no batch-op
 * support) */
static int batch_buffers(void **keys, void **vals, __u32 batch, size_t key_size, size_t val_size,
			 int ncpus)
{
	free(*keys);
	free(*vals);
	*keys = calloc(batch, key_size);
	*vals = calloc((size_t)batch * ncpus, val_size);
	return *keys && *vals ? 0 : -ENOMEM;
}

/* Every entry in batches; with `drain`, each batch is deleted as it is read. */
static int walk(int fd, size_t key_size, size_t val_size, int ncpus, percpu_fold_fn fold, void *ctx,
		bool drain)
{
	DECLARE_LIBBPF_OPTS(bpf_map_batch_opts, opts);
	char in_batch[16], out_batch[16]; /* one key of the map */
	__u32 batch = BATCH_MIN, limit = batch_limit(val_size, ncpus);
	void *keys = NULL, *vals = NULL;
	bool first = true;
	int err = key_size > sizeof(in_batch)
			  ? -EINVAL
			  : batch_buffers(&keys, &vals, batch, key_size, val_size, ncpus);

	while (!err) {
		__u32 n = batch;
		void *in = first ? NULL : in_batch;
		int ret = drain ? bpf_map_lookup_and_delete_batch(fd, in, out_batch, keys, vals, &n,
								  &opts)
				: bpf_map_lookup_batch(fd, in, out_batch, keys, vals, &n, &opts);

		if (ret && errno == ENOSPC && batch < limit) {
			batch = batch * 2 < limit ? batch * 2
						  : limit; /* nothing was read: again, larger */
			err = batch_buffers(&keys, &vals, batch, key_size, val_size, ncpus);
			continue;
		}
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
		if (!err && n == batch && batch < limit) {
			batch = batch * 2 < limit ? batch * 2 : limit;
			err = batch_buffers(&keys, &vals, batch, key_size, val_size, ncpus);
		}
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
