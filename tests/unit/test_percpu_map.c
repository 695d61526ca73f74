// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reading per-CPU hashes in batches that start small and grow
 * (probes/percpu_map.c): every entry once, whatever the map holds, on a
 * real map of the kernel. Needs CAP_BPF: skipped without it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "probes/percpu_map.h"

#define MAX_ENTRIES 5000

struct seen {
	size_t n;
	uint64_t key_sum, val_sum;
};

static int fold(void *ctx, const void *key, const void *vals, int ncpus)
{
	struct seen *s = ctx;
	uint64_t k;

	memcpy(&k, key, sizeof(k));
	s->n++;
	s->key_sum += k;
	for (int c = 0; c < ncpus; c++) {
		uint64_t v;

		memcpy(&v, (const char *)vals + c * sizeof(v), sizeof(v));
		s->val_sum += v;
	}
	return 0;
}

/* A per-CPU hash of n entries: key i, value i + 1 on every CPU. */
static int map_of(size_t n, int ncpus)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_HASH, "qoslet_test", sizeof(uint64_t),
				sizeof(uint64_t), MAX_ENTRIES, NULL);
	uint64_t *vals = calloc((size_t)ncpus, sizeof(*vals));

	assert_non_null(vals);
	if (fd < 0) {
		free(vals);
		return -errno;
	}
	for (uint64_t i = 0; i < n; i++) {
		for (int c = 0; c < ncpus; c++)
			vals[c] = i + 1;
		assert_int_equal(bpf_map_update_elem(fd, &i, vals, BPF_NOEXIST), 0);
	}
	free(vals);
	return fd;
}

static void test_every_entry_once(void **state)
{
	static const size_t sizes[] = {0, 1, 15, 16, 17, 100, 1023, 4999};
	int ncpus = libbpf_num_possible_cpus();

	(void)state;
	assert_true(ncpus > 0);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		struct seen s = {0};
		int fd = map_of(n, ncpus);
		uint64_t key;

		if (fd == -EPERM) {
			skip();
			return;
		}
		assert_true(fd >= 0);
		assert_int_equal(
			percpu_map_read(fd, sizeof(uint64_t), sizeof(uint64_t), ncpus, fold, &s),
			0);
		assert_int_equal(s.n, n);
		assert_int_equal(s.key_sum, n ? n * (n - 1) / 2 : 0);
		assert_int_equal(s.val_sum, (uint64_t)ncpus * (n * (n + 1) / 2));
		memset(&s, 0, sizeof(s));
		assert_int_equal(
			percpu_map_drain(fd, sizeof(uint64_t), sizeof(uint64_t), ncpus, fold, &s),
			0);
		assert_int_equal(s.n, n);
		assert_int_equal(bpf_map_get_next_key(fd, NULL, &key),
				 -ENOENT); /* drained: empty */
		close(fd);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_entry_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
