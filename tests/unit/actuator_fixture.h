/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The fake node both actuator tests run on: a managed subtree "kubepods" in
 * plain files, in the v1 or the v2 layout, and an actuator whose on_write
 * logs each write ("be/pod1/c1 quota=50000") and, on v1, asserts after each
 * one the nesting rules the kernel would enforce.
 */
#ifndef QOSLET_TEST_ACTUATOR_FIXTURE_H
#define QOSLET_TEST_ACTUATOR_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "actuate/actuator.h"
#include "actuate/internal.h"
#include "tmpdir.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define LOG_MAX	     32

static char tmp_root[PATH_MAX];
static int fx_seq;

/* The fake node: quotas over a 100 ms period everywhere. "kubepods" is the managed subtree. */
static const struct node {
	const char *rel;
	int64_t quota;
	const char *cpus;
} tree[] = {
	{"kubepods", -1, "0-3"},
	{"kubepods/be", -1, "0-3"},
	{"kubepods/be/pod1", 200000, "0-3"},
	{"kubepods/be/pod1/c1", 100000, "0-3"},
	{"kubepods/be/pod1/c1/x", -1, "0-3"},
	{"kubepods/be/pod4", -1, "0"},
	{"kubepods/be/pod4/c", -1, "0"},
	{"kubepods/be/pod5", -1, ""}, /* no cpuset of its own (v2: inherits) */
	{"kubepods/be/pod5/c", -1, ""},
	{"kubepods/ls", -1, "0-3"},
	{"kubepods/ls/pod2", 50000, "0-3"},
	{"kubepods/ls/pod3", -1, "0-3"},
	{"other", -1, "0-3"},
	{"other/pod9", -1, "0-3"},
};

struct fx {
	char root[PATH_MAX], state[PATH_MAX], journal[PATH_MAX], locks[PATH_MAX];
	bool v2;
	struct cgroup_ctrls c;
	struct actuator_opts o;
	struct actuator *a;
	char log[LOG_MAX][128]; /* "be/pod1/c1 quota=50000": path under kubepods/, knob, value */
	size_t n;
};

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

static void put(const char *dir, const char *file, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	xsnprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", text);
	assert_int_equal(fclose(f), 0);
}

static const char *knob_text(struct fx *f, const char *rel, enum cg_knob k)
{
	static char buf[ACT_TEXT_MAX];

	assert_int_equal(cg_read_knob(&f->c, k, rel, buf, sizeof(buf)), 0);
	return buf;
}

static bool exists(const char *path)
{
	return !access(path, F_OK);
}

/* A direct child of p? */
static bool is_child(const char *c, const char *p)
{
	size_t n = strlen(p);

	return !strncmp(c, p, n) && c[n] == '/' && !strchr(c + n + 1, '/');
}

static int64_t hier_quota(struct fx *f, size_t i)
{
	int64_t q;
	uint64_t p;

	assert_int_equal(cg_read_quota(&f->c, tree[i].rel, &q, &p), 0);
	for (size_t j = 0; q == -1 && j < ARRAY_LEN(tree); j++)
		if (is_child(tree[i].rel, tree[j].rel))
			return hier_quota(f, j);
	return q;
}

/* What v1 enforces after every write: child CPUs within the parent's, child quota <= parent's. */
static void check_nesting(struct fx *f)
{
	static struct act_cpus pc, cc;

	for (size_t i = 0; i < ARRAY_LEN(tree); i++)
		for (size_t j = 0; j < ARRAY_LEN(tree); j++) {
			int64_t q, hp;
			uint64_t p;

			if (!is_child(tree[j].rel, tree[i].rel) ||
			    cg_read_quota(&f->c, tree[j].rel, &q, &p) == -ENOENT)
				continue; /* not a pair, or the child vanished */
			assert_int_equal(
				act_cpus_parse(knob_text(f, tree[i].rel, CG_KNOB_CPUS), &pc), 0);
			assert_int_equal(
				act_cpus_parse(knob_text(f, tree[j].rel, CG_KNOB_CPUS), &cc), 0);
			assert_true(act_cpus_subset(&cc, &pc));
			hp = hier_quota(f, i);
			assert_true(q == -1 || hp == -1 || q <= hp);
		}
}

static void on_write(void *ctx, const char *path, const char *value, int err)
{
	static const char *const short_names[][2] = {
		{"cpu.cfs_quota_us", "quota"},
		{"cpu.max", "quota"},
		{"cpu.cfs_burst_us", "burst"},
		{"cpu.max.burst", "burst"},
		{"cpu.idle", "idle"},
		{"cpuset.cpus", "cpus"},
		{"cpu.shares", "weight"},
		{"cpu.weight", "weight"},
		{"memory.limit_in_bytes", "mem"},
		{"memory.max", "mem"},
		{"memory.min", "min"},
		{"memory.low", "low"},
		{"memory.high", "high"},
		{"memory.reclaim", "reclaim"},
		{"blkio.throttle.read_bps_device", "rbps"},
		{"blkio.throttle.write_bps_device", "wbps"},
		{"io.max", "io"},
	};
	struct fx *f = ctx;
	const char *p = path + strlen(f->root) + 1, *file = "";
	char dir[PATH_MAX];

	if (!f->v2)
		p = strchr(p, '/') + 1; /* the controller */
	p += strlen("kubepods");
	p += *p == '/';
	/* the subtree's root itself (memory protection) logs as "." */
	xsnprintf(dir, sizeof(dir), "%s%s", strchr(p, '/') ? "" : "./", p);
	if (strcmp(value, "kill")) {
		*strrchr(dir, '/') = '\0';
		for (size_t i = 0; i < ARRAY_LEN(short_names); i++)
			if (!strcmp(strrchr(path, '/') + 1, short_names[i][0]))
				file = short_names[i][1];
	}
	assert_true(f->n < LOG_MAX);
	xsnprintf(f->log[f->n++], sizeof(f->log[0]), "%s %s=%s%s", dir, file, value,
		  err ? " failed" : "");
	if (!f->v2 && !f->o.dry_run && !err)
		check_nesting(f);
}

/* The writes since the last call, in order. */
static void assert_log(struct fx *f, const char *const *want)
{
	size_t n = 0;

	for (; want[n]; n++) {
		assert_true(n < f->n);
		assert_string_equal(f->log[n], want[n]);
	}
	assert_int_equal(f->n, n);
	f->n = 0;
}

#define LOG(...) assert_log(f, (const char *const[]){__VA_ARGS__, NULL})
#define NO_LOG() assert_log(f, (const char *const[]){NULL})

static void make_node(struct fx *f, const struct node *nd)
{
	char dir[PATH_MAX], text[64];

	for (int k = 0; k < (f->v2 ? 1 : CTRL_NR); k++) {
		xsnprintf(dir, sizeof(dir), "%s/%s", f->c.root[k], nd->rel);
		assert_int_equal(mkdir(dir, 0755), 0);
		put(dir, "cgroup.procs", "");
	}
	xsnprintf(dir, sizeof(dir), "%s/%s", f->c.root[CTRL_CPU], nd->rel);
	if (nd->quota < 0 && f->v2)
		xsnprintf(text, sizeof(text), "max 100000");
	else
		xsnprintf(text, sizeof(text), f->v2 ? "%lld 100000" : "%lld", (long long)nd->quota);
	put(dir, cg_knob_file(&f->c, CG_KNOB_QUOTA), text);
	put(dir, cg_knob_file(&f->c, CG_KNOB_BURST), "0");
	if (!f->v2)
		put(dir, "cpu.cfs_period_us", "100000");
	put(dir, "cpu.idle", "0");
	put(dir, cg_knob_file(&f->c, CG_KNOB_WEIGHT), f->v2 ? "100" : "1024");
	xsnprintf(dir, sizeof(dir), "%s/%s", f->c.root[CTRL_MEMORY], nd->rel);
	put(dir, cg_knob_file(&f->c, CG_KNOB_MEM_MAX), f->v2 ? "max" : "9223372036854771712");
	if (f->v2) { /* memory QoS: v1 has none of these files */
		put(dir, "memory.min", "0");
		put(dir, "memory.low", "0");
		put(dir, "memory.high", "max");
	}
	xsnprintf(dir, sizeof(dir), "%s/%s", f->c.root[CTRL_CPUSET], nd->rel);
	put(dir, "cpuset.cpus", nd->cpus);
	put(dir, f->v2 ? "cpuset.cpus.effective" : "cpuset.effective_cpus", nd->cpus);
}

static void open_a(struct fx *f)
{
	char err[256] = "";

	assert_int_equal(actuator_open(&f->a, &f->o, err, sizeof(err)), 0);
}

/* A restart with f->o as it is now. */
static void reopen(struct fx *f)
{
	actuator_close(f->a);
	open_a(f);
}

/* A fresh node in either layout, and an actuator on it. */
static void setup_fx(struct fx *f, bool v2)
{
	memset(f, 0, sizeof(*f));
	f->v2 = v2;
	xsnprintf(f->root, sizeof(f->root), "%s/fx%d", tmp_root, fx_seq++);
	assert_int_equal(mkdir(f->root, 0755), 0);
	cgroup_ctrls_fake(&f->c, f->root, v2);
	for (int k = 0; k < CTRL_NR && !v2; k++)
		assert_int_equal(mkdir(f->c.root[k], 0755), 0);
	for (size_t i = 0; i < ARRAY_LEN(tree); i++)
		make_node(f, &tree[i]);
	xsnprintf(f->state, sizeof(f->state), "%s/state", f->root);
	xsnprintf(f->journal, sizeof(f->journal), "%s/actuator.json", f->state);
	xsnprintf(f->locks, sizeof(f->locks), "%s/locks", f->root);
	f->o = (struct actuator_opts){.ctrls = &f->c,
				      .subtree = "kubepods",
				      .state_dir = f->state,
				      .tree_lock_dir = f->locks,
				      .evict = EVICT_KILL,
				      .on_write = on_write,
				      .ctx = f};
	open_a(f);
}

static enum decision_outcome act(struct fx *f, enum act_kind kind, const char *unit,
				 enum qos_class cls, int64_t value, const char *cpus,
				 struct act_result *r)
{
	struct action a = {.kind = kind, .cls = cls, .value = value};

	xsnprintf(a.path, sizeof(a.path), "%s", unit);
	xsnprintf(a.cpus, sizeof(a.cpus), "%s", cpus ? cpus : "");
	actuator_apply(f->a, &a, r);
	return r->outcome;
}

static void expect(struct fx *f, enum act_kind kind, const char *unit, enum qos_class cls,
		   int64_t value, const char *cpus, enum decision_outcome want)
{
	struct act_result r;

	print_message("  %s %s %lld %s\n", act_kind_name(kind), unit, (long long)value,
		      cpus ? cpus : "");
	assert_string_equal(decision_outcome_name(act(f, kind, unit, cls, value, cpus, &r)),
			    decision_outcome_name(want));
}

static const char *const P1 = "kubepods/be/pod1", *const C1 = "kubepods/be/pod1/c1",
			 *const P4 = "kubepods/be/pod4";

static int group_setup(void **state)
{
	(void)state;
	return tmpdir_make(tmp_root, sizeof(tmp_root), "actuator");
}

static int group_teardown(void **state)
{
	(void)state;
	return tmpdir_remove(tmp_root);
}

#endif
