// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The watch of the files the actuator wrote (collect/file_watch.h), on plain files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "collect/file_watch.h"

struct seen {
	char v[8][PATH_MAX];
	size_t n;
};

static void on_read(void *ctx, enum cg_knob knob, const char *rel, const char *text)
{
	struct seen *s = ctx;

	assert_true(s->n < 8);
	snprintf(s->v[s->n++], PATH_MAX, "%s %s=%s", rel, knob == CG_KNOB_IDLE ? "idle" : "quota",
		 text);
}

static void put(const char *root, const char *rel, const char *file, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", root, rel, file);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/*
 * Files of two knobs in two cgroups: a new watch reads its file once; a
 * write is read at the next drain, once however many writes; a file set
 * again keeps its watch; one left out is no longer read.
 */
static void test_watch(void **state)
{
	char root[] = "/tmp/qoslet-test-file-watch-XXXXXX", dir[PATH_MAX + 8];
	struct cgroup_ctrls c;
	struct file_watch *w;
	struct seen s = {0};

	(void)state;
	assert_non_null(mkdtemp(root));
	cgroup_ctrls_fake(&c, root, true);
	for (int i = 0; i < 2; i++) {
		snprintf(dir, sizeof(dir), "%s/pod%d", root, i);
		assert_int_equal(mkdir(dir, 0755), 0);
		put(root, i ? "pod1" : "pod0", "cpu.idle", "1");
		put(root, i ? "pod1" : "pod0", "cpu.max", "50000 100000");
	}
	w = file_watch_new(&c);
	assert_non_null(w);
	/* The quota first: the tree is ordered by knob, then path. */
	for (int round = 0; round < 2; round++) {
		file_watch_begin(w);
		file_watch_want(w, CG_KNOB_QUOTA, "pod1");
		file_watch_want(w, CG_KNOB_IDLE, "pod0");
		file_watch_want(w, CG_KNOB_IDLE, "pod1");
		file_watch_end(w);
		assert_int_equal(file_watch_count(w), 3);
	}
	assert_int_equal(file_watch_drain(w, on_read, &s), 3); /* new: read once */
	s.n = 0;
	assert_int_equal(file_watch_drain(w, on_read, &s), 0);
	put(root, "pod0", "cpu.idle", "0");
	put(root, "pod0", "cpu.idle", "0");
	put(root, "pod1", "cpu.max", "80000 100000");
	assert_int_equal(file_watch_drain(w, on_read, &s), 2);
	assert_string_equal(s.v[0], "pod1 quota=80000 100000");
	assert_string_equal(s.v[1], "pod0 idle=0");
	/* pod0's idle left out: no longer read */
	file_watch_begin(w);
	file_watch_want(w, CG_KNOB_QUOTA, "pod1");
	file_watch_want(w, CG_KNOB_IDLE, "pod1");
	file_watch_end(w);
	assert_int_equal(file_watch_count(w), 2);
	s.n = 0;
	put(root, "pod0", "cpu.idle", "1");
	put(root, "pod1", "cpu.idle", "0");
	assert_int_equal(file_watch_drain(w, on_read, &s), 1);
	assert_string_equal(s.v[0], "pod1 idle=0");
	file_watch_free(w);
	for (int i = 0; i < 2; i++) {
		char path[PATH_MAX + 24];

		snprintf(dir, sizeof(dir), "%s/pod%d", root, i);
		snprintf(path, sizeof(path), "%s/cpu.idle", dir);
		assert_int_equal(unlink(path), 0);
		snprintf(path, sizeof(path), "%s/cpu.max", dir);
		assert_int_equal(unlink(path), 0);
		assert_int_equal(rmdir(dir), 0);
	}
	assert_int_equal(rmdir(root), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_watch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
