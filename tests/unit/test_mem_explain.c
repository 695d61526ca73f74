// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The CLI's reading of a stall's culprit (cli/mem_explain.c) on a stand-in
 * v1 tree: a parent p with a limit, a reader p/ls and a streamer p/be. The
 * limit hits and refaults count between two intervals; the parent's hits
 * make the streamer's reclaim the reader's culprit; the reader's own hits
 * make it its own limit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "cli/mem_explain.h"
#include "tmpdir.h"

#define MS 1000000ULL

struct fixture {
	char dir[256]; /* /tmp/qoslet-test-mem-explain-XXXXXX */
	struct view v;
	struct mem_explain x;
	uint64_t ls, be;
	struct snapshot s;
};

static void put(const struct fixture *f, const char *rel, const char *text)
{
	char path[PATH_MAX * 2];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", f->dir, rel);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void mkdirs(const struct fixture *f, const char *rel)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s/%s", f->dir, rel);
	assert_int_equal(mkdir(path, 0755), 0);
}

/* A v1 memory cgroup's files: its limit hits and its refaults. */
static void memcg(const struct fixture *f, const char *rel, int hits, int refaults)
{
	char file[PATH_MAX], text[256];

	snprintf(file, sizeof(file), "memory/%s/memory.failcnt", rel);
	snprintf(text, sizeof(text), "%d\n", hits);
	put(f, file, text);
	snprintf(file, sizeof(file), "memory/%s/memory.usage_in_bytes", rel);
	put(f, file, "1048576\n");
	snprintf(file, sizeof(file), "memory/%s/memory.limit_in_bytes", rel);
	put(f, file, "268435456\n");
	snprintf(file, sizeof(file), "memory/%s/memory.stat", rel);
	snprintf(text, sizeof(text),
		 "total_rss 0\ntotal_unevictable 0\ntotal_inactive_file 0\n"
		 "total_workingset_refault %d\n",
		 refaults);
	put(f, file, text);
}

static int setup(void **state)
{
	static const char *const dirs[] = {"cpu",    "cpu/p",	 "cpu/p/ls",	"cpu/p/be",
					   "memory", "memory/p", "memory/p/ls", "memory/p/be"};
	struct fixture *f = calloc(1, sizeof(*f));
	struct stat st;
	char path[PATH_MAX * 2];

	assert_non_null(f);
	assert_int_equal(tmpdir_make(f->dir, sizeof(f->dir), "mem-explain"), 0);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		mkdirs(f, dirs[i]);
	memcg(f, "p", 0, 0);
	memcg(f, "p/ls", 0, 0);
	memcg(f, "p/be", 0, 0);
	snprintf(f->v.fs.root, sizeof(f->v.fs.root), "%s/cpu", f->dir);
	f->v.names = cgroup_names_new(&f->v.fs);
	assert_non_null(f->v.names);
	f->v.interval_ns = 1000 * MS;
	/* the controllers of the stand-in tree, not the host's mounts */
	cgroup_ctrls_fake(&f->x.ctrls, f->dir, false);
	f->x.ctrls_tried = true;
	snprintf(path, sizeof(path), "%s/cpu/p/ls", f->dir);
	assert_int_equal(stat(path, &st), 0);
	f->ls = st.st_ino;
	snprintf(path, sizeof(path), "%s/cpu/p/be", f->dir);
	assert_int_equal(stat(path, &st), 0);
	f->be = st.st_ino;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	mem_explain_free(&f->x);
	cgroup_names_free(f->v.names);
	snapshot_free(&f->s);
	tmpdir_remove(f->dir);
	free(f);
	return 0;
}

/*
 * One second at t (the reader only when `reader`): the reader waits 800 ms for I/O, all of it on 4
 * KiB refaults (700 of them, the bytes it read), and stalls 2 ms as PSI counts it; the streamer
 * reclaims 150 ms and streams 1.5 GB.
 */
static void interval_with(struct fixture *f, uint64_t t, bool reader)
{
	struct cg_sample *cg;

	snapshot_free(&f->s);
	memset(&f->s, 0, sizeof(f->s));
	f->s.ts_ns = t * 1000 * MS;
	f->s.memstall_psi = true;
	if (reader) {
		cg = snapshot_add(&f->s, f->ls);
		assert_non_null(cg);
		cg->parts = CG_MEMSTALL;
		cg->mem.stall = (struct lat_hist){.count = 1, .sum_ns = 2 * MS};
		cg->mem.iowait = (struct lat_hist){.count = 700, .sum_ns = 802 * MS};
		cg->mem.io_bytes = 700 * 4096;
	}
	cg = snapshot_add(&f->s, f->be);
	assert_non_null(cg);
	cg->parts = CG_MEMSTALL;
	cg->mem.memcg = (struct lat_hist){.count = 900, .sum_ns = 150 * MS};
	cg->mem.io_bytes = 1500ULL << 20;
	snapshot_finish(&f->s);
	assert_int_equal(mem_explain_update(&f->x, &f->v, &f->s), 0);
}

static void interval(struct fixture *f, uint64_t t)
{
	interval_with(f, t, true);
}

static void test_streamer_is_the_culprit(void **state)
{
	struct fixture *f = *state;
	const struct mem_explain_cg *e;
	char buf[PATH_MAX + 2];

	/* the first interval has no rise to go by: no refault waits yet */
	interval(f, 1);
	e = mem_explain_find(&f->x, f->ls);
	assert_non_null(e);
	assert_int_equal(e->mem.refault_wait_ns, 0);
	assert_int_equal(e->mem.stall_ns, 2 * MS);
	/* the parent's limit hit 600 times, the reader refaulted 700 pages */
	memcg(f, "p", 600, 0);
	memcg(f, "p/ls", 0, 700);
	interval(f, 2);
	e = mem_explain_find(&f->x, f->ls);
	assert_non_null(e);
	assert_int_equal(e->mem.refault_wait_ns, 800 * MS);
	assert_int_equal(e->mem.stall_ns, 802 * MS);
	assert_true(e->mem.explained);
	assert_int_equal(e->mem.top.cause, CAUSE_UNIT);
	assert_int_equal(e->mem.top.id, f->be);
	assert_string_equal(mem_explain_culprit_name(&f->v, &e->mem, buf, sizeof(buf)), "/p/be");
	/* I/O: by the bytes on the disk, the streamer too */
	assert_int_equal(e->io.top.id, f->be);
	/* the streamer's own stall is its reclaim: itself */
	e = mem_explain_find(&f->x, f->be);
	assert_non_null(e);
	assert_int_equal(e->mem.stall_ns, 150 * MS);
	assert_int_equal(e->mem.top.cause, CAUSE_SELF);
	assert_string_equal(mem_explain_culprit_name(&f->v, &e->mem, buf, sizeof(buf)), "itself");
	/* the same interval drawn again reads nothing */
	memcg(f, "p/ls", 0, 5000);
	assert_int_equal(mem_explain_update(&f->x, &f->v, &f->s), 0);
	assert_int_equal(mem_explain_find(&f->x, f->ls)->mem.refault_wait_ns, 800 * MS);
}

static void test_own_limit(void **state)
{
	struct fixture *f = *state;
	const struct mem_explain_cg *e;
	char buf[PATH_MAX + 2];
	json_t *j;

	interval(f, 1);
	/* only the reader's own limit was hit */
	memcg(f, "p/ls", 40, 0);
	interval(f, 2);
	e = mem_explain_find(&f->x, f->ls);
	assert_non_null(e);
	assert_int_equal(e->mem.top.cause, CAUSE_LIMIT);
	assert_string_equal(mem_explain_culprit_name(&f->v, &e->mem, buf, sizeof(buf)),
			    "own limit");
	j = mem_explain_culprit_json(&f->v, f->ls, &e->mem);
	assert_string_equal(json_string_value(json_object_get(j, "cause")), "own_limit");
	assert_string_equal(json_string_value(json_object_get(j, "path")), "/p/ls");
	json_decref(j);
	/* a rise is taken over one interval only: a gap forgets the last reading */
	interval(f, 3);
	memcg(f, "p/ls", 90, 0);
	interval_with(f, 4, false); /* an interval the reader had no activity in */
	interval(f, 5);
	e = mem_explain_find(&f->x, f->ls);
	assert_int_not_equal(e->mem.top.cause, CAUSE_LIMIT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_streamer_is_the_culprit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_own_limit, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
