// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cgroup/path.h"
#include "tmpdir.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define SEC	     1000000000ULL

static char tmp_root[PATH_MAX];

static void xsnprintf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void xsnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < size);
}

/* A fresh directory under the group's temp dir for one test. */
static void new_dir(char *path, size_t size, const char *name)
{
	xsnprintf(path, size, "%s/%s", tmp_root, name);
	assert_int_equal(mkdir(path, 0755), 0);
}

static void mkdir_in(const char *base, const char *rel)
{
	char path[PATH_MAX];

	xsnprintf(path, sizeof(path), "%s/%s", base, rel);
	assert_int_equal(mkdir(path, 0755), 0);
}

static void write_file(const char *base, const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	xsnprintf(path, sizeof(path), "%s/%s", base, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static uint64_t ino_of(const char *base, const char *rel)
{
	char path[PATH_MAX];
	struct stat st;

	xsnprintf(path, sizeof(path), "%s/%s", base, rel);
	assert_int_equal(stat(path, &st), 0);
	return st.st_ino;
}

/*
 * mkdir_in for a cgroup made after every one numbered up to ABOVE; returns
 * its id. The kernel numbers cgroups in creation order, but ext4 reuses
 * freed inode numbers: a lower one is renamed aside (and kept, so that it is
 * not handed out again) until the directory has a number a newer cgroup has.
 */
static uint64_t mkdir_newer(const char *base, const char *rel, uint64_t above)
{
	char path[PATH_MAX], aside[PATH_MAX];
	uint64_t id;

	for (int i = 0;; i++) {
		mkdir_in(base, rel);
		id = ino_of(base, rel);
		if (id > above)
			return id;
		assert_true(i < 1000);
		xsnprintf(path, sizeof(path), "%s/%s", base, rel);
		xsnprintf(aside, sizeof(aside), "%s.aside%d", path, i);
		assert_int_equal(rename(path, aside), 0);
	}
}

static int group_setup(void **state)
{
	(void)state;
	return tmpdir_make(tmp_root, sizeof(tmp_root), "cgroup");
}

static int group_teardown(void **state)
{
	(void)state;
	return tmpdir_remove(tmp_root);
}

/* cgroup_path_normalize */

static const struct normalize_case {
	const char *arg;
	int rc;
	const char *want;
	size_t size;
} normalize_cases[] = {
	{"/sys/fs/cgroup/a/b", 0, "a/b", PATH_MAX},
	{"/sys/fs/cgroup", 0, "", PATH_MAX},
	{"/sys/fs/cgroup/", 0, "", PATH_MAX},
	{"/sys/fs/cgroup//a///b//", 0, "a/b", PATH_MAX},
	{"/sys/fs/cgroup/./a/.", 0, "a", PATH_MAX},
	{"a/b", 0, "a/b", PATH_MAX},
	{"a", 0, "a", PATH_MAX},
	{"/a/b", 0, "a/b", PATH_MAX}, /* as in /proc/PID/cgroup */
	{"/system.slice/cron.service", 0, "system.slice/cron.service", PATH_MAX},
	{"/", 0, "", PATH_MAX},
	{"//", 0, "", PATH_MAX},
	{".", 0, "", PATH_MAX},
	{"./", 0, "", PATH_MAX},
	{"a//b/", 0, "a/b", PATH_MAX},
	{"./a/./b/.", 0, "a/b", PATH_MAX},
	{"a.b/.c", 0, "a.b/.c", PATH_MAX},
	/* only whole components match the root */
	{"/sys/fs/cgroupX/a", 0, "sys/fs/cgroupX/a", PATH_MAX},
	{"/sys/fs", 0, "sys/fs", PATH_MAX},
	{"", -EINVAL, NULL, PATH_MAX},
	{"..", -EINVAL, NULL, PATH_MAX},
	{"../a", -EINVAL, NULL, PATH_MAX},
	{"a/..", -EINVAL, NULL, PATH_MAX},
	{"a/../b", -EINVAL, NULL, PATH_MAX},
	{"/sys/fs/cgroup/..", -EINVAL, NULL, PATH_MAX},
	{"/sys/fs/cgroup/a/../../etc", -EINVAL, NULL, PATH_MAX},
	/* "a/b/c" needs 6 bytes with its NUL */
	{"a/b/c", 0, "a/b/c", 6},
	{"a/b/c", -ENAMETOOLONG, NULL, 5},
	{"/sys/fs/cgroup/a//b/c/", 0, "a/b/c", 6},
	{"/sys/fs/cgroup/a//b/c/", -ENAMETOOLONG, NULL, 5},
	{"/sys/fs/cgroup", 0, "", 1},
	{"x", -ENAMETOOLONG, NULL, 1},
};

static void test_normalize_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(normalize_cases); i++) {
		const struct normalize_case *c = &normalize_cases[i];
		char rel[PATH_MAX + 1];
		int rc;

		memset(rel, 'Z', sizeof(rel));
		rc = cgroup_path_normalize("/sys/fs/cgroup", c->arg, rel, c->size);
		if (rc != c->rc)
			fail_msg("\"%s\" (size %zu): rc %d, want %d", c->arg, c->size, rc, c->rc);
		if (c->want && strcmp(rel, c->want) != 0)
			fail_msg("\"%s\": \"%.*s\", want \"%s\"", c->arg,
				 (int)strnlen(rel, c->size), rel, c->want);
		if (rel[c->size] != 'Z')
			fail_msg("\"%s\": wrote past size %zu", c->arg, c->size);
	}
}

static void test_normalize_too_long(void **state)
{
	static char arg[PATH_MAX + 16];
	char rel[PATH_MAX];

	(void)state;
	/* PATH_MAX characters never fit with the NUL */
	memset(arg, 'a', PATH_MAX);
	for (size_t i = 100; i < PATH_MAX; i += 100)
		arg[i] = '/';
	arg[PATH_MAX] = '\0';
	assert_int_equal(cgroup_path_normalize("/sys/fs/cgroup", arg, rel, sizeof(rel)),
			 -ENAMETOOLONG);
}

/* cgroup_path_within */

static const struct within_case {
	const char *rel, *parent;
	int want;
} within_cases[] = {
	{"a", "a", 1},
	{"a/b", "a", 1},
	{"a/b/c", "a", 1},
	{"a/b/c", "a/b", 1},
	{"a", "", 1},
	{"", "", 1},
	{"a/b", "", 1},
	{"ab", "a", 0},
	{"a", "ab", 0},
	{"a", "a/b", 0},
	{"", "a", 0},
	{"a/bc", "a/b", 0},
	{"b/a", "a", 0},
	{"a.slice", "a", 0},
	{"x/a", "a", 0},
	/* a path from a file is never within unless normalized: not a text prefix */
	{"kubepods/../../x", "kubepods", 0},
	{"kubepods/..", "kubepods", 0},
	{"kubepods/./x", "kubepods", 0},
	{"kubepods//x", "kubepods", 0},
	{"kubepods/x/", "kubepods", 0},
	{"/kubepods/x", "", 0},
	{"..", "", 0},
};

static void test_within_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(within_cases); i++) {
		const struct within_case *c = &within_cases[i];
		int got = cgroup_path_within(c->rel, c->parent);

		if (!!got != c->want)
			fail_msg("within(\"%s\", \"%s\") = %d, want %d", c->rel, c->parent, got,
				 c->want);
	}
}

/* cgroup_fs_detect on fake mountinfo files; '@' stands for the case's dir. */

#define ROOTFS "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
#define PROC   "23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
#define TMPFS  "25 22 0:23 / @ ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755\n"
#define V2(dir)                                                                                    \
	"26 25 0:24 / @/" dir " rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 "      \
	"rw,nsdelegate\n"
#define V1(id, dir, opts)                                                                          \
	id " 25 0:" id " / @/" dir " rw,nosuid,nodev,noexec,relatime shared:" id " - cgroup "      \
	   "cgroup rw," opts "\n"

static const struct detect_case {
	const char *name;
	const char *mountinfo;
	const char *v2_dir; /* gets cgroup.controllers; NULL: none */
	const char *controllers;
	int rc;
	enum qoslet_cgroup_mode mode;
	const char *root;
} detect_cases[] = {
	{
		"pure v2 with cpu",
		ROOTFS PROC V2("v2"),
		"v2",
		"cpuset cpu io memory hugetlb pids rdma misc\n",
		0,
		QOSLET_CGROUP_V2,
		"@/v2",
	},
	{
		"pure v2 without cpu",
		ROOTFS V2("v2") PROC,
		"v2",
		"cpuset io memory pids\n",
		0,
		QOSLET_CGROUP_V2,
		"@/v2",
	},
	{
		"v2 with only cpu, no newline, no optional fields, source none",
		ROOTFS "26 22 0:24 / @/v2 rw,relatime - cgroup2 none rw\n",
		"v2",
		"cpu",
		0,
		QOSLET_CGROUP_V2,
		"@/v2",
	},
	{
		"hybrid: v1 cpu,cpuacct",
		ROOTFS TMPFS V1("31", "systemd", "xattr,name=systemd") V1("32", "cpuset", "cpuset")
			V1("33", "cpu,cpuacct", "cpu,cpuacct") V1("34", "memory", "memory")
				V2("unified"),
		"unified",
		"",
		0,
		QOSLET_CGROUP_V1_CPU,
		"@/cpu,cpuacct",
	},
	{
		"hybrid: v1 cpu alone after cpuacct, v2 first",
		ROOTFS TMPFS V2("unified") V1("31", "cpuacct", "cpuacct")
			V1("32", "cpuset", "cpuset") V1("33", "cpu", "cpu"),
		"unified",
		"\n",
		0,
		QOSLET_CGROUP_V1_CPU,
		"@/cpu",
	},
	{
		"v1 cpu with two optional fields",
		ROOTFS
		"35 22 0:35 / @/cpu rw,relatime shared:16 master:3 - cgroup cgroup rw,cpuacct,cpu\n",
		NULL,
		NULL,
		0,
		QOSLET_CGROUP_V1_CPU,
		"@/cpu",
	},
	{
		"pure v1 with cpu",
		ROOTFS TMPFS V1("31", "memory", "memory") V1("32", "cpu,cpuacct", "cpu,cpuacct"),
		NULL,
		NULL,
		0,
		QOSLET_CGROUP_V1_CPU,
		"@/cpu,cpuacct",
	},
	{
		"v2 offering cpu beats v1 cpu",
		ROOTFS TMPFS V1("31", "cpu", "cpu") V2("unified"),
		"unified",
		"cpu memory\n",
		0,
		QOSLET_CGROUP_V2,
		"@/unified",
	},
	{
		"v1 cpuset and cpuacct only: the v2 mount",
		ROOTFS TMPFS V1("31", "cpuset", "cpuset") V1("32", "cpuacct", "cpuacct")
			V2("unified"),
		"unified",
		"cpuset\n",
		0,
		QOSLET_CGROUP_V2,
		"@/unified",
	},
	{
		"cpu in the mount point only",
		ROOTFS TMPFS V1("31", "cpu,cpuacct", "cpuacct") V2("unified"),
		"unified",
		"",
		0,
		QOSLET_CGROUP_V2,
		"@/unified",
	},
	{
		"v1 without cpu and no v2",
		ROOTFS TMPFS V1("31", "cpuset", "cpuset") V1("32", "cpuacct", "cpuacct")
			V1("33", "systemd", "xattr,name=systemd"),
		NULL,
		NULL,
		-ENOENT,
		0,
		NULL,
	},
	{"no cgroup mounts", ROOTFS PROC TMPFS, NULL, NULL, -ENOENT, 0, NULL},
	{"empty mountinfo", "", NULL, NULL, -ENOENT, 0, NULL},
};

/* Copies tmpl into buf with every '@' replaced by dir. */
static void expand(char *buf, size_t size, const char *tmpl, const char *dir)
{
	size_t n = 0, dlen = strlen(dir);

	for (const char *p = tmpl; *p; p++) {
		if (*p == '@') {
			assert_true(n + dlen < size);
			memcpy(buf + n, dir, dlen);
			n += dlen;
		} else {
			assert_true(n + 1 < size);
			buf[n++] = *p;
		}
	}
	buf[n] = '\0';
}

static void test_detect_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(detect_cases); i++) {
		const struct detect_case *c = &detect_cases[i];
		char dir[PATH_MAX], text[8192], want_root[PATH_MAX], name[32];
		struct cgroup_fs fs;
		int rc;

		snprintf(name, sizeof(name), "detect%zu", i);
		new_dir(dir, sizeof(dir), name);
		if (c->v2_dir) {
			mkdir_in(dir, c->v2_dir);
			xsnprintf(text, sizeof(text), "%s/cgroup.controllers", c->v2_dir);
			write_file(dir, text, c->controllers);
		}
		expand(text, sizeof(text), c->mountinfo, dir);
		write_file(dir, "mountinfo", text);
		xsnprintf(text, sizeof(text), "%s/mountinfo", dir);

		memset(&fs, 0xa5, sizeof(fs));
		rc = cgroup_fs_detect(&fs, text);
		if (rc != c->rc)
			fail_msg("%s: rc %d, want %d", c->name, rc, c->rc);
		if (rc)
			continue;
		expand(want_root, sizeof(want_root), c->root, dir);
		if (fs.mode != c->mode || strcmp(fs.root, want_root) != 0)
			fail_msg("%s: mode %d root \"%.*s\", want mode %d root \"%s\"", c->name,
				 fs.mode, PATH_MAX, fs.root, c->mode, want_root);
	}
}

static void test_detect_missing_file(void **state)
{
	char path[PATH_MAX];
	struct cgroup_fs fs;

	(void)state;
	xsnprintf(path, sizeof(path), "%s/no-such-mountinfo", tmp_root);
	assert_true(cgroup_fs_detect(&fs, path) < 0);
}

/* cgroup_id_of and cgroup_names on a plain directory tree */

/* root, a, a/b, c.d, plus files that must not count as cgroups. */
static void make_tree(struct cgroup_fs *fs, const char *name)
{
	memset(fs, 0, sizeof(*fs));
	fs->mode = QOSLET_CGROUP_V2;
	new_dir(fs->root, sizeof(fs->root), name);
	mkdir_in(fs->root, "a");
	mkdir_in(fs->root, "a/b");
	mkdir_in(fs->root, "c.d");
	write_file(fs->root, "cgroup.procs", "");
	write_file(fs->root, "a/cpu.max", "max 100000\n");
}

static const struct id_case {
	const char *rel;
	int rc;
} id_cases[] = {
	{"", 0},
	{"a", 0},
	{"a/b", 0},
	{"c.d", 0},
	{"missing", -ENOENT},
	{"a/missing/x", -ENOENT},
	{"cgroup.procs", -ENOTDIR},
	{"a/cpu.max", -ENOTDIR},
};

static void test_id_of(void **state)
{
	struct cgroup_fs fs;

	(void)state;
	make_tree(&fs, "ids");
	for (size_t i = 0; i < ARRAY_LEN(id_cases); i++) {
		const struct id_case *c = &id_cases[i];
		uint64_t id = 0;
		int rc = cgroup_id_of(&fs, c->rel, &id);

		if (rc != c->rc)
			fail_msg("\"%s\": rc %d, want %d", c->rel, rc, c->rc);
		if (!rc && id != ino_of(fs.root, c->rel))
			fail_msg("\"%s\": id %llu, want inode %llu", c->rel, (unsigned long long)id,
				 (unsigned long long)ino_of(fs.root, c->rel));
	}
}

static void assert_lookup(struct cgroup_names *names, uint64_t id, uint64_t now_ns,
			  const char *want)
{
	const char *got = cgroup_names_lookup(names, id, now_ns);

	if (!want && got)
		fail_msg("id %llu: \"%s\", want NULL", (unsigned long long)id, got);
	if (want && (!got || strcmp(got, want) != 0))
		fail_msg("id %llu: %s%s%s, want \"%s\"", (unsigned long long)id, got ? "\"" : "",
			 got ? got : "NULL", got ? "\"" : "", want);
}

static void test_names_lookup(void **state)
{
	static const char *const rels[] = {"", "a", "a/b", "c.d"};
	struct cgroup_names *names;
	struct cgroup_fs fs;

	(void)state;
	make_tree(&fs, "names");
	names = cgroup_names_new(&fs);
	assert_non_null(names);
	for (size_t i = 0; i < ARRAY_LEN(rels); i++)
		assert_lookup(names, ino_of(fs.root, rels[i]), SEC, rels[i]);
	/* a file's inode is no cgroup */
	assert_lookup(names, ino_of(fs.root, "cgroup.procs"), 2 * SEC, NULL);
	assert_lookup(names, UINT64_MAX, 3 * SEC, NULL);
	cgroup_names_free(names);
}

static void test_names_rewalk(void **state)
{
	struct cgroup_names *names;
	struct cgroup_fs fs;
	uint64_t id_new, id_b;
	char path[PATH_MAX];

	(void)state;
	make_tree(&fs, "rewalk");
	names = cgroup_names_new(&fs);
	assert_non_null(names);
	assert_int_equal(cgroup_names_rewalk(names), 4);

	mkdir_in(fs.root, "a/b/new");
	id_new = ino_of(fs.root, "a/b/new");
	assert_int_equal(cgroup_names_rewalk(names), 5);
	assert_lookup(names, id_new, 0, "a/b/new");

	id_b = ino_of(fs.root, "a/b");
	xsnprintf(path, sizeof(path), "%s/a/b/new", fs.root);
	assert_int_equal(rmdir(path), 0);
	xsnprintf(path, sizeof(path), "%s/a/b", fs.root);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(cgroup_names_rewalk(names), 3);
	/* seen by the walk before, missing now: removed, the newest too */
	assert_true(cgroup_names_is_gone(names, id_new));
	assert_true(cgroup_names_is_gone(names, id_b));
	assert_false(cgroup_names_is_gone(names, ino_of(fs.root, "a")));
	assert_lookup(names, id_new, 0, NULL);
	assert_lookup(names, id_b, 0, NULL);
	assert_lookup(names, ino_of(fs.root, "a"), 0, "a");
	cgroup_names_free(names);

	/*
	 * Made and removed between walks, the newest: gone once a map has named
	 * it. A fresh instance: a plain file system reuses inode numbers.
	 */
	names = cgroup_names_new(&fs);
	assert_non_null(names);
	assert_int_equal(cgroup_names_rewalk(names), 3);
	mkdir_in(fs.root, "a/brief");
	id_new = ino_of(fs.root, "a/brief");
	xsnprintf(path, sizeof(path), "%s/a/brief", fs.root);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(cgroup_names_rewalk(names), 3);
	assert_false(cgroup_names_is_gone(names, id_new));
	assert_int_equal(cgroup_names_rewalk_after(names, &id_new, 1), 3);
	assert_true(cgroup_names_is_gone(names, id_new));
	cgroup_names_free(names);
}

/* An unknown id rewalks on lookup, but at most once per min_rewalk_ns. */
static void test_names_lookup_rewalks(void **state)
{
	static const char *const rels[] = {"", "a", "a/b", "c.d"};
	const uint64_t hour = 3600 * SEC;
	struct cgroup_names *names;
	struct cgroup_fs fs;
	uint64_t id_d, id_e, newest;

	(void)state;
	make_tree(&fs, "lazy");
	names = cgroup_names_new(&fs);
	assert_non_null(names);
	assert_lookup(names, ino_of(fs.root, "a"), hour, "a");

	mkdir_in(fs.root, "d");
	id_d = ino_of(fs.root, "d");
	assert_lookup(names, id_d, 2 * hour, "d");

	/* right after that rewalk, a newer cgroup stays unknown ... */
	newest = id_d;
	for (size_t i = 0; i < ARRAY_LEN(rels); i++)
		if (ino_of(fs.root, rels[i]) > newest)
			newest = ino_of(fs.root, rels[i]);
	id_e = mkdir_newer(fs.root, "a/e", newest);
	assert_lookup(names, id_e, 2 * hour, NULL);
	assert_lookup(names, id_e, 2 * hour + 1, NULL);
	/* ... until a lookup long after it */
	assert_lookup(names, id_e, 3 * hour, "a/e");
	assert_lookup(names, id_d, 3 * hour, "d");
	cgroup_names_free(names);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normalize_table),
		cmocka_unit_test(test_normalize_too_long),
		cmocka_unit_test(test_within_table),
		cmocka_unit_test(test_detect_table),
		cmocka_unit_test(test_detect_missing_file),
		cmocka_unit_test(test_id_of),
		cmocka_unit_test(test_names_lookup),
		cmocka_unit_test(test_names_rewalk),
		cmocka_unit_test(test_names_lookup_rewalks),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
