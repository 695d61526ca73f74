// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cgroup/knob.h"
#include "readfile.h"
#include "snapshot.h"
#include "tmpdir.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static char tmp_root[PATH_MAX];
static int dir_seq;

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

/* mkdir -p of base/rel. */
static void mkdirs(const char *base, const char *rel)
{
	char path[PATH_MAX];

	xsnprintf(path, sizeof(path), "%s/%s", base, rel);
	for (char *p = path + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	assert_true(!mkdir(path, 0755) || errno == EEXIST);
}

static void put(const char *base, const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	xsnprintf(path, sizeof(path), "%s/%s", base, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static const char *get(const char *base, const char *rel)
{
	static char buf[4096];
	char path[PATH_MAX];

	xsnprintf(path, sizeof(path), "%s/%s", base, rel);
	assert_int_equal(read_file_at(AT_FDCWD, path, buf, sizeof(buf)), 0);
	return buf;
}

/* A fresh fake hierarchy with cgroup "pod" (and "pod/c" below it) in every controller. */
static void fake(struct cgroup_ctrls *c, char *root, bool v2)
{
	xsnprintf(root, PATH_MAX, "%s/t%d", tmp_root, dir_seq++);
	assert_int_equal(mkdir(root, 0755), 0);
	cgroup_ctrls_fake(c, root, v2);
	for (int i = 0; i < CTRL_NR; i++) {
		mkdirs(c->root[i], "pod/c");
		put(c->root[i], "pod/cgroup.procs", "");
		put(c->root[i], "pod/c/cgroup.procs", "");
	}
}

static int group_setup(void **state)
{
	(void)state;
	return tmpdir_make(tmp_root, sizeof(tmp_root), "knob");
}

static int group_teardown(void **state)
{
	(void)state;
	return tmpdir_remove(tmp_root);
}

/* Quota: the file text, how it reads, and what writing 30000 / unlimited leaves. */
static const struct quota_case {
	bool v2;
	const char *text;
	int rc;
	int64_t quota;
	uint64_t period;
	const char *after_30000, *after_unlimited;
} quota_cases[] = {
	{false, "-1\n", 0, -1, 100000, "30000", "-1"},
	{false, "50000\n", 0, 50000, 100000, "30000", "-1"},
	{true, "max 100000\n", 0, -1, 100000, "30000 100000", "max 100000"},
	{true, "50000 100000\n", 0, 50000, 100000, "30000 100000", "max 100000"},
	{true, "50000 250000\n", 0, 50000, 250000, "30000 250000", "max 250000"},
	{true, "max\n", -EINVAL, 0, 0, NULL, NULL},
	{true, "-5 100000\n", -EINVAL, 0, 0, NULL, NULL},
	{false, "lots\n", -EINVAL, 0, 0, NULL, NULL},
};

/* As the actuator sets a number knob of "pod": formatted, then written (the quota keeps its
 * period). */
static int set_knob(const struct cgroup_ctrls *c, enum cg_knob k, int64_t value)
{
	char text[64];
	uint64_t period = 0;
	int64_t quota;
	int err = k == CG_KNOB_QUOTA ? cg_read_quota(c, "pod", &quota, &period) : 0;

	if (!err)
		err = cg_knob_format(c, k, value, period, text, sizeof(text));
	return err ? err : cg_write_knob(c, k, "pod", text);
}

static void test_quota_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(quota_cases); i++) {
		const struct quota_case *t = &quota_cases[i];
		const char *file = t->v2 ? "pod/cpu.max" : "pod/cpu.cfs_quota_us";
		struct cgroup_ctrls c;
		char root[PATH_MAX];
		int64_t q = 0;
		uint64_t p = 0;

		fake(&c, root, t->v2);
		put(c.root[CTRL_CPU], file, t->text);
		if (!t->v2)
			put(c.root[CTRL_CPU], "pod/cpu.cfs_period_us", "100000\n");
		assert_int_equal(cg_read_quota(&c, "pod", &q, &p), t->rc);
		if (t->rc)
			continue;
		assert_int_equal(q, t->quota);
		assert_int_equal(p, t->period);
		assert_int_equal(set_knob(&c, CG_KNOB_QUOTA, 30000), 0);
		assert_string_equal(get(c.root[CTRL_CPU], file), t->after_30000);
		assert_int_equal(set_knob(&c, CG_KNOB_QUOTA, -1), 0);
		assert_string_equal(get(c.root[CTRL_CPU], file), t->after_unlimited);
	}
}

static void test_burst_idle_cpus(void **state)
{
	for (int v2 = 0; v2 <= 1; v2++) {
		const char *burst = v2 ? "pod/cpu.max.burst" : "pod/cpu.cfs_burst_us";
		const char *eff = v2 ? "pod/cpuset.cpus.effective" : "pod/cpuset.effective_cpus";
		struct cgroup_ctrls c;
		char root[PATH_MAX], cpus[64];
		int64_t b;
		int idle;

		(void)state;
		fake(&c, root, v2);
		put(c.root[CTRL_CPU], burst, "0\n");
		assert_int_equal(set_knob(&c, CG_KNOB_BURST, 250000), 0);
		assert_string_equal(get(c.root[CTRL_CPU], burst), "250000");
		assert_int_equal(cg_read_burst(&c, "pod", &b), 0);
		assert_int_equal(b, 250000);

		/* cpu.idle absent (kernel < 5.15) vs its cgroup gone */
		assert_int_equal(cg_read_idle(&c, "pod", &idle), -EOPNOTSUPP);
		assert_int_equal(set_knob(&c, CG_KNOB_IDLE, 1), -EOPNOTSUPP);
		assert_int_equal(cg_read_idle(&c, "gone", &idle), -ENOENT);
		put(c.root[CTRL_CPU], "pod/cpu.idle", "0\n");
		assert_int_equal(set_knob(&c, CG_KNOB_IDLE, 1), 0);
		assert_int_equal(cg_read_idle(&c, "pod", &idle), 0);
		assert_int_equal(idle, 1);

		put(c.root[CTRL_CPUSET], "pod/cpuset.cpus", "0-3\n");
		put(c.root[CTRL_CPUSET], eff, "0-1\n");
		assert_int_equal(cg_write_knob(&c, CG_KNOB_CPUS, "pod", "2-3"), 0);
		assert_int_equal(cg_read_cpus(&c, "pod", cpus, sizeof(cpus)), 0);
		assert_string_equal(cpus, "2-3");
		assert_int_equal(cg_read_effective_cpus(&c, "pod", cpus, sizeof(cpus)), 0);
		assert_string_equal(cpus, "0-1");
		/* the raw knob write may clear a cpuset (a v2 restore of ""): one newline */
		assert_int_equal(cg_write_knob(&c, CG_KNOB_CPUS, "pod", ""), 0);
		assert_string_equal(get(c.root[CTRL_CPUSET], "pod/cpuset.cpus"), "\n");
		/* never creates a file */
		assert_int_equal(cg_write_knob(&c, CG_KNOB_CPUS, "pod/c", "1"), -EOPNOTSUPP);
		assert_int_equal(cg_write_knob(&c, CG_KNOB_CPUS, "gone", "1"), -ENOENT);
		assert_int_equal(cg_read_cpus(&c, "pod/c", cpus, 4), -EOPNOTSUPP);
		put(c.root[CTRL_CPUSET], "pod/cpuset.cpus", "0-3,5,7-9\n");
		assert_int_equal(cg_read_cpus(&c, "pod", cpus, 8), -EOVERFLOW);
	}
}

/* The kubelet's shares -> weight, to check that reading the weight inverts it. */
static uint64_t kubelet_weight(uint64_t shares)
{
	return 1 + ((shares - 2) * 9999) / 262142;
}

/* The CPU request as the collector reads it: the weight knob, then its CPUs. */
static int read_request_cpus(const struct cgroup_ctrls *c, double *cpus)
{
	char text[32];
	int64_t weight;
	int err = cg_read_knob(c, CG_KNOB_WEIGHT, "pod", text, sizeof(text));

	if (!err)
		err = cg_knob_parse(c, CG_KNOB_WEIGHT, text, &weight);
	if (!err)
		*cpus = cg_weight_request_cpus(c, weight);
	return err;
}

static void test_request_cpus(void **state)
{
	static const uint64_t shares[] = {2, 3, 102, 512, 1000, 1024, 2048, 4096, 65536, 262144};
	struct cgroup_ctrls c1, c2;
	char root[PATH_MAX], text[32];
	double cpus;

	(void)state;
	fake(&c1, root, false);
	put(c1.root[CTRL_CPU], "pod/cpu.shares", "512\n");
	assert_int_equal(read_request_cpus(&c1, &cpus), 0);
	assert_float_equal(cpus, 0.5, 1e-9);

	fake(&c2, root, true);
	for (size_t i = 0; i < ARRAY_LEN(shares); i++) {
		xsnprintf(text, sizeof(text), "%llu\n",
			  (unsigned long long)kubelet_weight(shares[i]));
		put(c2.root[CTRL_CPU], "pod/cpu.weight", text);
		assert_int_equal(read_request_cpus(&c2, &cpus), 0);
		/* at most half a weight step (13.1 shares) off */
		assert_float_equal(cpus * 1024, (double)shares[i], 13.5);
	}
}

static const struct mem_case {
	bool v2;
	const char *limit;
	uint64_t want;
} mem_cases[] = {
	{false, "9223372036854771712\n", UINT64_MAX}, /* PAGE_COUNTER_MAX with 4 KiB pages */
	{false, "9223372036854710272\n", UINT64_MAX}, /* ... with 64 KiB pages */
	{false, "1073741824\n", 1073741824},
	{true, "max\n", UINT64_MAX},
	{true, "536870912\n", 536870912},
};

static void test_mem_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(mem_cases); i++) {
		const struct mem_case *t = &mem_cases[i];
		struct cgroup_ctrls c;
		char root[PATH_MAX];
		struct cg_mem m;

		fake(&c, root, t->v2);
		if (t->v2) {
			put(c.root[CTRL_MEMORY], "pod/memory.current", "4096000\n");
			put(c.root[CTRL_MEMORY], "pod/memory.max", t->limit);
			put(c.root[CTRL_MEMORY], "pod/memory.stat",
			    "anon 1000\nfile 9\nanon_thp 0\nunevictable 20\ninactive_anon 1\n"
			    "inactive_file 300\n");
		} else {
			put(c.root[CTRL_MEMORY], "pod/memory.usage_in_bytes", "4096000\n");
			put(c.root[CTRL_MEMORY], "pod/memory.limit_in_bytes", t->limit);
			/* the non-total_ keys are the cgroup alone: must not be taken */
			put(c.root[CTRL_MEMORY], "pod/memory.stat",
			    "rss 1\nunevictable 2\ninactive_file 3\ntotal_rss 1000\n"
			    "total_unevictable 20\ntotal_inactive_file 300\n");
		}
		assert_int_equal(cg_read_mem(&c, "pod", &m), 0);
		assert_int_equal(m.usage, 4096000);
		assert_true(m.limit == t->want);
		assert_int_equal(m.anon, 1000);
		assert_int_equal(m.unevictable, 20);
		assert_int_equal(m.inactive_file, 300);
	}
}

static void test_usage(void **state)
{
	struct cgroup_ctrls c1, c2;
	char root[PATH_MAX];
	uint64_t ns;

	(void)state;
	fake(&c1, root, false);
	put(c1.root[CTRL_CPUACCT], "pod/cpuacct.usage", "123456789\n");
	assert_int_equal(cg_read_usage_ns(&c1, "pod", &ns), 0);
	assert_int_equal(ns, 123456789);

	fake(&c2, root, true);
	put(c2.root[CTRL_CPU], "pod/cpu.stat",
	    "usage_usec 5000\nuser_usec 4000\nsystem_usec 1000\nnr_periods 7\nnr_throttled 2\n"
	    "throttled_usec 3\n");
	assert_int_equal(cg_read_usage_ns(&c2, "pod", &ns), 0);
	assert_int_equal(ns, 5000000);
}

static void test_procs_subtree(void **state)
{
	struct cgroup_ctrls c;
	char root[PATH_MAX];
	struct cg_list l;
	int pids[3];
	size_t n;

	(void)state;
	fake(&c, root, false);
	mkdirs(c.root[CTRL_CPU], "pod/c/d");
	mkdirs(c.root[CTRL_CPU], "pod/e");
	put(c.root[CTRL_CPU], "pod/c/d/cgroup.procs", "");
	put(c.root[CTRL_CPU], "pod/e/cgroup.procs", "");
	put(c.root[CTRL_CPU], "pod/cgroup.procs", "11\n12\n13\n");
	put(c.root[CTRL_CPU], "pod/c/cgroup.procs", "21\n");
	assert_int_equal(cg_read_procs(&c, "pod", pids, 3, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(pids[2], 13);
	assert_int_equal(cg_read_procs(&c, "pod", pids, 2, &n), -E2BIG);
	assert_int_equal(cg_count_subtree_procs(&c, "pod"), 4);

	assert_int_equal(cg_subtree(&c, CTRL_CPU, "pod", &l), 0);
	assert_int_equal(l.n, 4);
	assert_string_equal(l.v[0], "pod");
	/* every parent before its children */
	for (size_t i = 1; i < l.n; i++) {
		const char *slash = strrchr(l.v[i], '/');
		size_t j;

		for (j = 0; j < i; j++)
			if (strlen(l.v[j]) == (size_t)(slash - l.v[i]) &&
			    !strncmp(l.v[j], l.v[i], (size_t)(slash - l.v[i])))
				break;
		assert_true(j < i);
	}
	cg_list_free(&l);
	assert_int_equal(cg_subtree(&c, CTRL_CPU, "gone", &l), -ENOENT);
}

/* A child that would be killed; SIGCHLD ignored so it leaves no zombie behind. */
static pid_t victim(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid) {
		pause();
		_exit(0);
	}
	return pid;
}

static void test_kill(void **state)
{
	struct cgroup_ctrls c;
	char root[PATH_MAX], text[32];
	pid_t pid, pid2;

	(void)state;
	signal(SIGCHLD, SIG_IGN);
	for (int v2 = 0; v2 <= 1; v2++) {
		const char *freezer = v2 ? "pod/cgroup.freeze" : "pod/freezer.state";

		fake(&c, root, v2);
		pid = victim();
		xsnprintf(text, sizeof(text), "%d\n", pid);
		put(c.root[CTRL_CPU], "pod/c/cgroup.procs", text);
		put(c.root[CTRL_FREEZER], freezer, v2 ? "0\n" : "THAWED\n");
		assert_int_equal(cg_kill_subtree(&c, "pod"), 1);
		/* SIGCHLD ignored: the killed child is reaped at once */
		for (int i = 0; i < 100 && !kill(pid, 0); i++)
			usleep(10000);
		assert_int_equal(kill(pid, 0), -1);
		assert_string_equal(get(c.root[CTRL_FREEZER], freezer), v2 ? "0" : "THAWED");
	}
	/* v2 with cgroup.kill: one write, the tasks counted, no signal of ours */
	fake(&c, root, true);
	pid = victim();
	pid2 = victim();
	xsnprintf(text, sizeof(text), "%d\n", pid);
	put(c.root[CTRL_CPU], "pod/cgroup.procs", text);
	xsnprintf(text, sizeof(text), "%d\n", pid2);
	put(c.root[CTRL_CPU], "pod/c/cgroup.procs", text);
	put(c.root[CTRL_CPU], "pod/cgroup.kill", "");
	assert_int_equal(cg_kill_subtree(&c, "pod"), 2);
	assert_string_equal(get(c.root[CTRL_CPU], "pod/cgroup.kill"), "1");
	assert_int_equal(kill(pid, 0), 0);
	assert_int_equal(kill(pid2, 0), 0);
	kill(pid, SIGKILL);
	kill(pid2, SIGKILL);
	assert_int_equal(cg_kill_subtree(&c, "gone"), -ENOENT);
	signal(SIGCHLD, SIG_DFL);
}

/* mountinfo lines; '@' is the test's directory. */
#define MI(id, mnt, type, opts)                                                                    \
	id " 23 0:" id " / @" mnt " rw,relatime - " type " " type " rw" opts "\n"
#define ROOTFS "22 1 8:1 / / rw,relatime - ext4 /dev/root rw\n"

static const struct detect_case {
	const char *name, *mountinfo;
	const char *controllers; /* of @/unified (hybrid) or @ (v2) */
	int rc;
	const char *roots[CTRL_NR];
	bool v2[CTRL_NR];
} detect_cases[] = {
	{"this hybrid host",
	 ROOTFS MI("31", "", "tmpfs", ",mode=755") MI("32", "/cpu", "cgroup", ",cpu") MI(
		 "33", "/cpuacct", "cgroup", ",cpuacct") MI("34", "/cpuset", "cgroup", ",cpuset")
		 MI("35", "/memory", "cgroup", ",memory") MI("36", "/devices", "cgroup", ",devices")
			 MI("37", "/freezer", "cgroup", ",freezer")
				 MI("38", "/blkio", "cgroup", ",blkio")
					 MI("40", "/systemd", "cgroup", ",name=systemd")
						 MI("41", "/unified", "cgroup2", ""),
	 "hugetlb\n",
	 0,
	 {"@/cpu", "@/cpuacct", "@/cpuset", "@/memory", "@/freezer", "@/blkio"},
	 {0}},
	{"pure v2",
	 ROOTFS MI("31", "", "cgroup2", ",nsdelegate,memory_recursiveprot"),
	 "cpuset cpu io memory hugetlb pids rdma misc\n",
	 0,
	 {"@", "@", "@", "@", "@", "@"},
	 {1, 1, 1, 1, 1, 1}},
	{"v2 without cpuset or memory enabled",
	 ROOTFS MI("31", "", "cgroup2", ""),
	 "cpu io pids\n",
	 0,
	 {"@", "@", "", "", "@", "@"},
	 {1, 1, 0, 0, 1, 1}},
	{"co-mounted cpu,cpuacct; no v1 freezer: cgroup2 freezes",
	 ROOTFS MI("32", "/cpu,cpuacct", "cgroup", ",cpu,cpuacct")
		 MI("34", "/cpuset", "cgroup", ",cpuset") MI("41", "/unified", "cgroup2", ""),
	 "\n",
	 0,
	 {"@/cpu,cpuacct", "@/cpu,cpuacct", "@/cpuset", "", "@/unified", ""},
	 {0, 0, 0, 0, 1, 0}},
	{"no cpu controller anywhere",
	 ROOTFS MI("34", "/cpuset", "cgroup", ",cpuset") MI("41", "/unified", "cgroup2", ""),
	 "memory\n",
	 -ENOENT,
	 {0},
	 {0}},
};

static void expand(char *buf, size_t size, const char *tmpl, const char *dir)
{
	size_t n = 0;

	for (const char *p = tmpl; *p; p++) {
		const char *s = *p == '@' ? dir : (char[]){*p, '\0'};

		assert_true(n + strlen(s) < size);
		strcpy(buf + n, s);
		n += strlen(s);
	}
	buf[n] = '\0';
}

static void test_detect_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(detect_cases); i++) {
		const struct detect_case *t = &detect_cases[i];
		char dir[PATH_MAX], text[4096], want[PATH_MAX];
		struct cgroup_ctrls c;
		bool v2 = strstr(t->mountinfo, "/unified") == NULL;

		print_message("detect: %s\n", t->name);
		xsnprintf(dir, sizeof(dir), "%s/mi%zu", tmp_root, i);
		assert_int_equal(mkdir(dir, 0755), 0);
		if (!v2)
			mkdirs(dir, "unified");
		put(dir, v2 ? "cgroup.controllers" : "unified/cgroup.controllers", t->controllers);
		expand(text, sizeof(text), t->mountinfo, dir);
		put(dir, "mountinfo", text);
		xsnprintf(text, sizeof(text), "%s/mountinfo", dir);
		assert_int_equal(cgroup_ctrls_detect(&c, text), t->rc);
		for (int k = 0; !t->rc && k < CTRL_NR; k++) {
			expand(want, sizeof(want), t->roots[k], dir);
			assert_string_equal(c.root[k], want);
			assert_int_equal(c.v2[k], t->v2[k]);
		}
	}
}

/* v1 counts times in ns; v2 has usage lines first and times in microseconds. */
static const struct cpu_stat_case {
	const char *text;
	struct throttle_sample want;
} cpu_stat_cases[] = {
	{"nr_periods 102\nnr_throttled 99\nthrottled_time 9098001501\nnr_bursts 3\n"
	 "burst_time 12345\n",
	 {.nr_periods = 102,
	  .nr_throttled = 99,
	  .throttled_ns = 9098001501ULL,
	  .nr_bursts = 3,
	  .burst_ns = 12345}},
	{"usage_usec 5000000\nuser_usec 4000000\nsystem_usec 1000000\n"
	 "core_sched.force_idle_usec 0\nnr_periods 50\nnr_throttled 48\n"
	 "throttled_usec 4321000\nnr_bursts 2\nburst_usec 1500\n",
	 {.nr_periods = 50,
	  .nr_throttled = 48,
	  .throttled_ns = 4321000000ULL,
	  .nr_bursts = 2,
	  .burst_ns = 1500000}},
};

static void test_cpu_stat_formats(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cpu_stat_cases); i++) {
		const struct throttle_sample *w = &cpu_stat_cases[i].want;
		struct throttle_sample s = {.events = 7};

		assert_int_equal(cg_cpu_stat_throttle(cpu_stat_cases[i].text, &s), 0);
		assert_int_equal(s.nr_periods, w->nr_periods);
		assert_int_equal(s.nr_throttled, w->nr_throttled);
		assert_int_equal(s.throttled_ns, w->throttled_ns);
		assert_int_equal(s.nr_bursts, w->nr_bursts);
		assert_int_equal(s.burst_ns, w->burst_ns);
		assert_int_equal(s.events, 7); /* not cpu.stat's: left alone */
	}
}

/* Memory interference's counters: refaults, charges, limit hits and block I/O, v1 and v2. */
static void test_mem_stall_counters(void **state)
{
	static const char v1_stat[] =
		"cache 4096\nrss 0\ntotal_rss 8192\ntotal_unevictable 0\n"
		"total_inactive_file 4096\ntotal_pgpgin 300\ntotal_workingset_refault_anon 2\n"
		"total_workingset_refault_file 40\n";
	static const char v2_stat[] = "anon 8192\nfile 4096\nunevictable 0\ninactive_file 4096\n"
				      "workingset_refault_anon 1\nworkingset_refault_file 9\n";
	struct cgroup_ctrls v1, v2;
	struct cg_mem m = {0};
	uint64_t n;

	(void)state;
	cgroup_ctrls_fake(&v1, "/nonexistent", false);
	cgroup_ctrls_fake(&v2, "/nonexistent", true);
	assert_int_equal(cg_mem_stat_parse(&v1, v1_stat, &m), 0);
	assert_int_equal(m.refaults, 42);
	assert_int_equal(m.charged_pages, 300);
	assert_int_equal(cg_mem_stat_parse(&v2, v2_stat, &m), 0);
	assert_int_equal(m.refaults, 10);
	assert_int_equal(m.charged_pages, 0); /* v2 has no such counter */
	assert_int_equal(cg_mem_events_parse(&v1, "17\n", &n), 0);
	assert_int_equal(n, 17);
	assert_int_equal(cg_mem_events_parse(&v2, "low 0\nhigh 3\nmax 5\noom 0\noom_kill 0\n", &n),
			 0);
	assert_int_equal(n, 8);
	assert_int_equal(cg_mem_events_parse(&v2, "low 0\n", &n), -EINVAL);
	assert_int_equal(cg_io_bytes_parse(&v1, "8:0 Read 4096\n8:0 Write 0\nTotal 4096\n", &n), 0);
	assert_int_equal(n, 4096);
	assert_int_equal(
		cg_io_bytes_parse(&v2,
				  "8:0 rbytes=100 wbytes=20 rios=1 wios=1 dbytes=0 dios=0\n"
				  "253:0 rbytes=3 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n",
				  &n),
		0);
	assert_int_equal(n, 123);
	assert_int_equal(cg_io_bytes_parse(&v2, "", &n), 0); /* no I/O yet */
	assert_int_equal(n, 0);
}

/* Older kernels have no burst lines; a file without bandwidth lines is refused. */
static void test_cpu_stat_partial(void **state)
{
	struct throttle_sample s = {.nr_bursts = 9, .burst_ns = 9};

	(void)state;
	assert_int_equal(
		cg_cpu_stat_throttle("nr_periods 1\nnr_throttled 0\nthrottled_time 0\n", &s), 0);
	assert_int_equal(s.nr_periods, 1);
	assert_int_equal(s.nr_bursts, 0);
	assert_int_equal(s.burst_ns, 0);
	assert_int_equal(cg_cpu_stat_throttle("usage_usec 5\nuser_usec 4\nsystem_usec 1\n", &s),
			 -EINVAL);
	assert_int_equal(cg_cpu_stat_throttle("", &s), -EINVAL);
	/* A key that only starts like one of ours is not it. */
	assert_int_equal(cg_cpu_stat_throttle("nr_periods_x 5\n", &s), -EINVAL);
	/* No trailing newline. */
	assert_int_equal(cg_cpu_stat_throttle("nr_throttled 4\nnr_periods 8", &s), 0);
	assert_int_equal(s.nr_periods, 8);
	assert_int_equal(s.nr_throttled, 4);
}

/* The one quota parser: v1 and v2 text, "max", no text, not a quota. */
static void test_quota_parse(void **state)
{
	uint64_t period;
	int64_t quota;
	struct cgroup_ctrls c;

	(void)state;
	assert_int_equal(cg_quota_parse(false, "-1\n", &quota, &period), 0);
	assert_int_equal(quota, -1);
	assert_int_equal(cg_quota_parse(false, "10000\n", &quota, &period), 0);
	assert_int_equal(quota, 10000);
	assert_int_equal(period, 0); /* v1 keeps it in cpu.cfs_period_us */
	assert_int_equal(cg_quota_parse(true, "max 100000\n", &quota, &period), 0);
	assert_int_equal(quota, -1);
	assert_int_equal(period, 100000);
	assert_int_equal(cg_quota_parse(true, "10000 50000\n", &quota, &period), 0);
	assert_int_equal(quota, 10000);
	assert_int_equal(period, 50000);
	assert_int_equal(cg_quota_parse(true, "", &quota, &period), -EINVAL);
	assert_int_equal(cg_quota_parse(false, "", &quota, &period), -EINVAL);
	assert_int_equal(cg_quota_parse(true, "max", &quota, &period), -EINVAL); /* no period */
	assert_int_equal(cg_quota_parse(false, "max", &quota, &period), -EINVAL);
	assert_int_equal(cg_quota_parse(true, "-5 100000", &quota, &period), -EINVAL);
	/* cg_knob_parse of the quota knob is the same parser, by the host's version */
	memset(&c, 0, sizeof(c));
	c.v2[CTRL_CPU] = true;
	assert_int_equal(cg_knob_parse(&c, CG_KNOB_QUOTA, "max 100000", &quota), 0);
	assert_int_equal(quota, -1);
	c.v2[CTRL_CPU] = false;
	assert_int_equal(cg_knob_parse(&c, CG_KNOB_QUOTA, "25000", &quota), 0);
	assert_int_equal(quota, 25000);
}

/*
 * Block I/O throttles, per disk: v1's files and v2's io.max read as one
 * line a disk with a rule, in the form that sets it; a line's value by disk;
 * an original covering the disks a write adds.
 */
static void test_io_knobs(void **state)
{
	struct cgroup_ctrls v1, v2;
	char root[PATH_MAX], text[256];
	uint64_t dev = 0;
	int64_t bps;

	(void)state;
	fake(&v2, root, true);
	put(v2.root[CTRL_IO], "pod/io.max",
	    "8:16 rbps=2097152 wbps=max riops=max wiops=max\n"
	    "254:0 rbps=max wbps=1048576 riops=100 wiops=max\n");
	assert_int_equal(cg_read_knob(&v2, CG_KNOB_IO_RBPS, "pod", text, sizeof(text)), 0);
	assert_string_equal(text, "8:16 rbps=2097152");
	assert_int_equal(cg_read_knob(&v2, CG_KNOB_IO_WBPS, "pod", text, sizeof(text)), 0);
	assert_string_equal(text, "254:0 wbps=1048576");
	assert_int_equal(cg_io_knob_value(&v2, CG_KNOB_IO_WBPS, text, &dev, &bps), 0);
	assert_int_equal(dev, (254u << 20) | 0);
	assert_int_equal(bps, 1048576);
	dev = (8u << 20) | 16;
	assert_int_equal(cg_io_knob_value(&v2, CG_KNOB_IO_WBPS, text, &dev, &bps), 0);
	assert_int_equal(bps, -1);
	assert_int_equal(cg_io_knob_format(&v2, CG_KNOB_IO_RBPS, dev, -1, text, sizeof(text)), 0);
	assert_string_equal(text, "8:16 rbps=max");
	assert_int_equal(cg_io_knob_format(&v2, CG_KNOB_IO_RBPS, dev, 0, text, sizeof(text)),
			 -EINVAL);
	assert_int_equal(cg_io_knob_format(&v2, CG_KNOB_IO_RBPS, 0, 1, text, sizeof(text)),
			 -EINVAL);
	/* a journal names io.max for both: the text tells which */
	assert_true(cg_io_knob_owns(&v2, CG_KNOB_IO_WBPS, "254:0 wbps=max\n8:0 wbps=1"));
	assert_false(cg_io_knob_owns(&v2, CG_KNOB_IO_RBPS, "254:0 wbps=max"));
	assert_false(cg_io_knob_owns(&v2, CG_KNOB_QUOTA, "254:0 wbps=max"));

	fake(&v1, root, false);
	put(v1.root[CTRL_IO], "pod/blkio.throttle.read_bps_device", "254:0 10485760\n");
	assert_int_equal(cg_read_knob(&v1, CG_KNOB_IO_RBPS, "pod", text, sizeof(text)), 0);
	assert_string_equal(text, "254:0 10485760");
	assert_int_equal(cg_knob_parse(&v1, CG_KNOB_IO_RBPS, text, &bps), 0);
	assert_int_equal(bps, 10485760);
	assert_int_equal(cg_knob_parse(&v1, CG_KNOB_IO_RBPS, "", &bps), 0);
	assert_int_equal(bps, -1);
	assert_int_equal(cg_knob_parse(&v1, CG_KNOB_IO_RBPS, "8:0 1\n8:16 2", &bps), -EINVAL);
	assert_int_equal(cg_knob_parse(&v1, CG_KNOB_IO_RBPS, "sda 1", &bps), -EINVAL);
	assert_true(cg_io_knob_owns(&v1, CG_KNOB_IO_WBPS, "254:0 0"));
	/* the original "" covers the disk a write adds: a stop writes 0 there (no rule) */
	text[0] = '\0';
	assert_int_equal(cg_io_knob_cover(&v1, CG_KNOB_IO_RBPS, text, sizeof(text), "8:0 4096"), 0);
	assert_string_equal(text, "8:0 0");
	assert_int_equal(cg_io_knob_cover(&v1, CG_KNOB_IO_RBPS, text, sizeof(text), "8:0 1"), 0);
	assert_string_equal(text, "8:0 0");
	/* each line one write */
	assert_int_equal(cg_write_knob(&v1, CG_KNOB_IO_RBPS, "pod", "8:0 1\n8:16 2"), 0);
	assert_string_equal(get(v1.root[CTRL_IO], "pod/blkio.throttle.read_bps_device"), "8:16 2");
}

/* The one name table: each knob and read file on v1 and v2. */
static void test_file_names(void **state)
{
	(void)state;
	assert_string_equal(cg_file_name(CG_KNOB_QUOTA, false), "cpu.cfs_quota_us");
	assert_string_equal(cg_file_name(CG_KNOB_QUOTA, true), "cpu.max");
	assert_string_equal(cg_file_name(CG_FILE_CPU_STAT, false), "cpu.stat");
	assert_string_equal(cg_file_name(CG_FILE_CPU_STAT, true), "cpu.stat");
	assert_null(cg_file_name(CG_FILE_CPUACCT_USAGE, true));
	assert_null(cg_file_name(CG_FILE_PSI_CPU, false));
	assert_string_equal(cg_file_name(CG_FILE_MEM_USAGE, true), "memory.current");
	assert_int_equal(cg_file_ctrl(CG_FILE_CPUACCT_USAGE), CTRL_CPUACCT);
	assert_int_equal(cg_file_ctrl(CG_KNOB_CPUS), CTRL_CPUSET);
	for (int f = 0; f < CG_FILE_NR; f++)
		assert_true(cg_file_name(f, false) || cg_file_name(f, true));
	assert_null(cg_file_name(CG_FILE_NR, true));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quota_table),
		cmocka_unit_test(test_burst_idle_cpus),
		cmocka_unit_test(test_request_cpus),
		cmocka_unit_test(test_mem_table),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_procs_subtree),
		cmocka_unit_test(test_kill),
		cmocka_unit_test(test_detect_table),
		cmocka_unit_test(test_cpu_stat_formats),
		cmocka_unit_test(test_mem_stall_counters),
		cmocka_unit_test(test_cpu_stat_partial),
		cmocka_unit_test(test_quota_parse),
		cmocka_unit_test(test_file_names),
		cmocka_unit_test(test_io_knobs),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
