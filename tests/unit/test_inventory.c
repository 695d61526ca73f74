// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The inventory on a fake cgroup v2 tree (plain files in a temp directory):
 * which cgroups are units and of what class (the systemd driver's layout and
 * the config's rules), the settings read, CPU use from two readings, and the
 * probes' numbers folded into the unit each cgroup belongs to.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/inventory.h"

static char root[64]; /* short: the paths below fit PATH_MAX */

#define SUB "kubepods.slice"
#define LS  SUB "/kubepods-burstable.slice/kubepods-burstable-pod1234_5678.slice"
#define CTR LS "/cri-containerd-abc.scope"
#define BE  SUB "/kubepods-besteffort.slice/kubepods-besteffort-podaaaa.slice"
#define LSR SUB "/kubepods-podgggg.slice"
#define JOB SUB "/batch.slice/job1"

static void put(const char *rel, const char *file, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", root, rel, file);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void cgroup(const char *rel, const char *cpu_max, unsigned long usage_us)
{
	char path[PATH_MAX], text[256];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	mkdir(path, 0755);
	put(rel, "cpu.max", cpu_max);
	snprintf(text, sizeof(text), "usage_usec %lu\nnr_periods 10\nnr_throttled 4\n", usage_us);
	put(rel, "cpu.stat", text);
	put(rel, "cpu.weight", "100\n");
	put(rel, "cpu.idle", "0\n");
	put(rel, "cpu.max.burst", "0\n");
	put(rel, "cpuset.cpus", "\n");
	put(rel, "cpuset.cpus.effective", "0\n");
	put(rel, "memory.current", "3000000\n");
	put(rel, "memory.max", "max\n");
	put(rel, "memory.stat", "anon 1000000\nunevictable 24\ninactive_file 1000000\n");
}

static uint64_t id_of(const char *rel)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(stat(path, &st), 0);
	return st.st_ino;
}

static const struct pol_unit *unit(const struct pol_input *in, const char *rel)
{
	const struct pol_unit *u = pol_input_find(in, id_of(rel));

	assert_non_null(u);
	assert_string_equal(u->path, rel);
	return u;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void test_units_and_numbers(void **state)
{
	struct agent_config cfg = {.n_classes = 1};
	struct cgroup_ctrls c;
	struct cgroup_fs fs = {.mode = QOSLET_CGROUP_V2};
	struct inventory_opts o = {.ctrls = &c, .fs = &fs, .subtree = SUB, .cfg = &cfg};
	struct pol_input in = {0};
	struct snapshot delta = {0};
	struct cg_sample *cg;
	struct inventory *inv;
	const struct pol_unit *u;
	size_t n;

	(void)state;
	cgroup(SUB, "max 100000\n", 0);
	cgroup(SUB "/misc", "max 100000\n", 0);
	cgroup(LS, "50000 100000\n", 1000000);
	cgroup(CTR, "50000 100000\n", 1000000);
	cgroup(BE, "max 100000\n", 2000000);
	cgroup(LSR, "100000 100000\n", 0);
	cgroup(JOB, "max 100000\n", 0);
	put(BE, "cpu.weight", "1\n"); /* kubelet: 2 shares */
	cgroup_ctrls_fake(&c, root, true);
	snprintf(fs.root, sizeof(fs.root), "%s", root);
	snprintf(cfg.classes[0].glob, sizeof(cfg.classes[0].glob), SUB "/batch.slice/*");
	cfg.classes[0].cls = QOS_BE;
	inv = inventory_new(&o);
	assert_non_null(inv);

	assert_int_equal(inventory_read(inv, NULL, 0, 1000, 1000000000ull, &in), 0);
	assert_int_equal(in.n_units, 4); /* misc and the tiers are not units */
	u = unit(&in, LS);
	assert_int_equal(u->cls, QOS_LS);
	assert_string_equal(u->pod_uid, "1234-5678");
	assert_int_equal(u->quota_us, 50000);
	assert_int_equal(u->period_us, 100000);
	assert_true(u->limit_cpus > 0.49 && u->limit_cpus < 0.51);
	assert_int_equal(u->mem_anon_unevict, 1000024);
	assert_int_equal(u->mem_used, 2000000);
	assert_true(u->cpu_used == 0); /* no interval yet */
	assert_int_equal(unit(&in, BE)->cls, QOS_BE);
	assert_true(unit(&in, BE)->limit_cpus < 0);
	assert_true(unit(&in, BE)->request_cpus < 0.03); /* weight 1: 2 to 28 shares */
	assert_int_equal(unit(&in, LSR)->cls, QOS_LSR);
	assert_int_equal(unit(&in, JOB)->cls, QOS_BE);
	assert_string_equal(unit(&in, JOB)->pod_uid, "");
	/* The container is a member of the LS pod, not a unit. */
	assert_null(pol_input_find(&in, id_of(CTR)));
	assert_non_null(inventory_members(inv, &n));
	assert_int_equal(n, 5);

	/* One second later the LS pod used half a CPU; the probes saw its container wait. */
	put(LS, "cpu.stat", "usage_usec 1500000\nnr_periods 20\nnr_throttled 9\n");
	cg = snapshot_add(&delta, id_of(CTR));
	cg->parts = CG_RQ;
	cg->rq.count = 2;
	cg->rq.slots[3] = 2;
	cg = snapshot_add(&delta, id_of(SUB "/misc"));
	cg->parts = CG_RQ;
	cg->rq.count = 7;
	snapshot_add_blame(&delta, &(struct blame_sample){id_of(CTR), id_of(BE), 500, 1});
	snapshot_add_blame(&delta, &(struct blame_sample){id_of(LS), id_of(BE), 300, 1});
	snapshot_add_blame(&delta, &(struct blame_sample){id_of(CTR), id_of(SUB "/misc"), 100, 1});
	snapshot_add_blame(&delta, &(struct blame_sample){id_of(CTR), QOSLET_CULPRIT_IDLE, 50, 1});
	snapshot_finish(&delta);
	assert_int_equal(inventory_read(inv, &delta, CG_RQ, 2000, 2000000000ull, &in), 0);
	u = unit(&in, LS);
	assert_true(u->cpu_used > 0.499 && u->cpu_used < 0.501);
	assert_int_equal(u->nr_periods, 10);
	assert_int_equal(u->nr_throttled, 5);
	assert_true(u->has_rq);
	assert_int_equal(u->rq.count, 2);
	assert_int_equal(u->rq.slots[3], 2);
	assert_false(u->has_cpi);
	assert_int_equal(in.n_blame, 3);
	for (size_t i = 0; i < in.n_blame; i++) {
		assert_int_equal(in.blame[i].victim, id_of(LS));
		if (in.blame[i].culprit == id_of(BE))
			assert_int_equal(in.blame[i].wait_ns, 800); /* pod + container, one pair */
		else if (in.blame[i].culprit == POL_CULPRIT_OTHER)
			assert_int_equal(in.blame[i].wait_ns, 100);
		else
			assert_int_equal(in.blame[i].culprit, POL_CULPRIT_IDLE);
	}
	snapshot_free(&delta);
	pol_input_free(&in);
	inventory_free(inv);
}

static void test_detect_kubepods(void **state)
{
	struct cgroup_ctrls c;
	char rel[64];

	(void)state;
	cgroup_ctrls_fake(&c, root, true);
	assert_int_equal(inventory_detect_kubepods(&c, rel, sizeof(rel)), 0);
	assert_string_equal(rel, "kubepods.slice");
	cgroup_ctrls_fake(&c, "/nonexistent", true);
	assert_int_equal(inventory_detect_kubepods(&c, rel, sizeof(rel)), -ENOENT);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/qoslet-test-inventory-XXXXXX");
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units_and_numbers),
		cmocka_unit_test(test_detect_kubepods),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
