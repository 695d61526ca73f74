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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "collect/collect.h"
#include "collect/fold.h"
#include "collect/tree.h"
#include "tmpdir.h"

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

static void test_units_and_numbers(void **state)
{
	struct class_rule rules[1] = {0};
	struct collect_wants cfg = {.classes = rules, .n_classes = 1};
	struct cgroup_ctrls c;
	struct cgroup_fs fs = {.mode = QOSLET_CGROUP_V2};
	struct collect_opts o = {.ctrls = &c, .fs = &fs, .subtree = SUB, .wants = &cfg};
	const struct tick_record *rec;
	struct collector *col;
	const struct pol_unit *u;
	size_t n;
	int err;

	(void)state;
	cgroup(SUB, "max 100000\n", 0);
	cgroup(SUB "/misc", "max 100000\n", 0);
	cgroup(LS, "50000 100000\n", 1000000);
	cgroup(CTR, "50000 100000\n", 1000000);
	cgroup(BE, "max 100000\n", 2000000);
	cgroup(LSR, "100000 100000\n", 0);
	cgroup(JOB, "max 100000\n", 0);
	put(BE, "cpu.weight", "1\n"); /* kubelet: 2 shares */
	put(LS, "cpu.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n");
	put(LS, "memory.pressure",
	    "some avg10=1.50 avg60=0.50 avg300=0.10 total=900\n"
	    "full avg10=0.00 avg60=0.00 avg300=0.00 total=7\n");
	put(LS, "io.pressure",
	    "some avg10=0.00 avg60=0.00 avg300=0.00 total=80\n"
	    "full avg10=0.00 avg60=0.00 avg300=0.00 total=77\n");
	cgroup_ctrls_fake(&c, root, true);
	snprintf(fs.root, sizeof(fs.root), "%s", root);
	snprintf(rules[0].glob, sizeof(rules[0].glob), SUB "/batch.slice/*");
	rules[0].cls = QOS_BE;
	/* any node is near a threshold of 0: units' memory is read, for BE units only */
	cfg.evict_memory = true;
	/* memory suppression: BE units' usage and page cache, and (v2) their memory.high */
	cfg.mem_suppress = true;
	put(BE, "memory.stat",
	    "anon 1000000\nunevictable 24\ninactive_file 1000000\nfile 1500000\n");
	put(BE, "memory.high", "max\n");
	/* I/O suppression: BE units' block I/O throttles, on the disk that has a rule */
	cfg.io_suppress = true;
	put(BE, "io.max", "254:0 rbps=1048576 wbps=max riops=max wiops=max\n");
	col = collector_new(&o);
	assert_non_null(col);

	rec = collector_read(col, 1000, 1000000000ull, &err);
	assert_non_null(rec);
	assert_int_equal(rec->in.n_units, 4); /* misc and the tiers are not units */
	u = unit(&rec->in, LS);
	assert_int_equal(u->cls, QOS_LS);
	assert_string_equal(u->pod_uid, "1234-5678");
	assert_int_equal(u->quota_us, 50000);
	assert_int_equal(u->period_us, 100000);
	assert_true(u->limit_cpus > 0.49 && u->limit_cpus < 0.51);
	assert_int_equal(u->mem_anon_unevict, 0); /* LS: never evicted, its memory not read */
	assert_true(u->cpu_used == 0);		  /* no interval yet */
	assert_int_equal(unit(&rec->in, BE)->cls, QOS_BE);
	assert_int_equal(unit(&rec->in, BE)->mem_anon_unevict, 1000024);
	assert_int_equal(unit(&rec->in, BE)->mem_used, 2000000);
	assert_int_equal(unit(&rec->in, BE)->mem_usage, 3000000);
	assert_int_equal(unit(&rec->in, BE)->mem_file, 1500000);
	assert_true(unit(&rec->in, BE)->has_mem_qos);
	assert_int_equal(unit(&rec->in, BE)->mem_high, -1);
	assert_true(rec->in.mem_v2);
	assert_false(rec->in.has_mem_reclaim); /* no memory.reclaim in the fake tree */
	assert_false(rec->in.has_io_limit);    /* nor io.max on the subtree */
	assert_true(unit(&rec->in, BE)->io_limit.has);
	assert_int_equal(unit(&rec->in, BE)->io_limit.dev, (254u << 20) | 0);
	assert_int_equal(unit(&rec->in, BE)->io_limit.rbps, 1048576);
	assert_int_equal(unit(&rec->in, BE)->io_limit.wbps, -1);
	assert_false(unit(&rec->in, LS)->io_limit.has); /* LS: never throttled, not read */
	assert_true(unit(&rec->in, BE)->limit_cpus < 0);
	assert_true(unit(&rec->in, BE)->request_cpus < 0.03); /* weight 1: 2 to 28 shares */
	assert_int_equal(unit(&rec->in, LSR)->cls, QOS_LSR);
	assert_int_equal(unit(&rec->in, JOB)->cls, QOS_BE);
	assert_string_equal(unit(&rec->in, JOB)->pod_uid, "");
	/* v2: CFS counters from cpu.stat, pressure from the three files, in the unit's totals. */
	for (size_t i = 0; i < rec->in.n_units; i++)
		if (rec->in.units[i].id == id_of(LS)) {
			const struct cg_sample *t = rec->unit_totals[i];

			assert_int_equal(t->id, id_of(LS));
			assert_int_equal(t->parts, CG_THROTTLE | CG_PSI);
			assert_int_equal(t->throttle.nr_throttled, 4);
			assert_true(t->psi.some[PSI_MEMORY].avg10 > 1.49 &&
				    t->psi.some[PSI_MEMORY].avg10 < 1.51);
			assert_int_equal(t->psi.full[PSI_IO].total_us, 77);
		}
	/* The container is a member of the LS pod, not a unit. */
	assert_null(pol_input_find(&rec->in, id_of(CTR)));
	assert_non_null(collector_members(col, &n));
	assert_int_equal(n, 5);

	/* One second later the LS pod used half a CPU; and the kernel has memory.reclaim. */
	put(LS, "cpu.stat", "usage_usec 1500000\nnr_periods 20\nnr_throttled 9\n");
	put(SUB, "memory.reclaim", "");
	put(SUB, "io.max", "");
	rec = collector_read(col, 2000, 2000000000ull, &err);
	assert_non_null(rec);
	assert_true(rec->in.has_mem_reclaim);
	assert_true(rec->in.has_io_limit);
	u = unit(&rec->in, LS);
	assert_true(u->cpu_used > 0.499 && u->cpu_used < 0.501);
	assert_int_equal(u->nr_periods, 10);
	assert_int_equal(u->nr_throttled, 5);
	assert_false(u->has_rq); /* no probes */
	assert_false(u->has_cpi);
	assert_int_equal(rec->in.n_blame, 0);
	collector_free(col);
}

/* A cgroup the name cache no longer finds. */
#define GONE 999
/* Scopes 201.. of one slice, whose party is the slice (200), as collect_outside_depth cuts them. */
#define SLICE 200

static int fake_name(void *ctx, uint64_t cgid, struct pol_outside *o)
{
	(void)ctx;
	if (cgid == GONE)
		return -ENOENT;
	o->id = cgid > SLICE && cgid < SLICE + 10 ? SLICE : cgid;
	if (o->id == SLICE)
		snprintf(o->path, sizeof(o->path), "noisy.slice");
	else
		snprintf(o->path, sizeof(o->path), "system.slice/%llu.service",
			 (unsigned long long)cgid);
	o->cls = QOS_SYSTEM;
	return 0;
}

/*
 * The probes' numbers reach the unit their cgroup belongs to; blame pairs
 * become unit pairs, those of BE victims left out, and their hand-overs
 * add up with their waits (those without a wait too).
 */
static void test_fold(void **state)
{
	/* sorted by cgid: the container (5) and the pod (2) belong to unit 2; 7 is unit 7 */
	const struct collect_member m[] = {{2, 2, QOS_LS}, {5, 2, QOS_LS}, {7, 7, QOS_BE}};
	struct pol_unit units[2] = {{.id = 2, .cls = QOS_LS}, {.id = 7, .cls = QOS_BE}};
	struct pol_input in = {.units = units, .n_units = 2};
	struct cg_sample totals[2] = {{.id = 2}, {.id = 7}};
	struct cg_sample *const total_of[2] = {&totals[0], &totals[1]};
	struct snapshot delta = {0};
	struct cg_sample *cg;

	(void)state;
	cg = snapshot_add(&delta, 5);
	cg->parts = CG_RQ;
	cg->rq.count = 2;
	cg->rq.slots[3] = 2;
	cg = snapshot_add(&delta, 9); /* outside every unit */
	cg->parts = CG_RQ;
	cg->rq.count = 7;
	cg = snapshot_add(&delta, 2);
	cg->parts = CG_MEMSTALL;
	cg->mem.oom_kills = 1;
	snapshot_add_blame(&delta, &(struct blame_sample){5, 7, 500, 1});
	snapshot_add_blame(&delta, &(struct blame_sample){2, 7, 300, 1});
	/* hand-overs without a wait: wake-ups of the pod's tasks that took BE's CPU at once */
	snapshot_add_blame(&delta, &(struct blame_sample){5, 7, 0, 40});
	snapshot_add_blame(&delta, &(struct blame_sample){5, 9, 100, 1});
	snapshot_add_blame(&delta, &(struct blame_sample){5, QOSLET_CULPRIT_IDLE, 50, 1});
	snapshot_add_blame(&delta, &(struct blame_sample){9, 7, 70, 1}); /* victim outside */
	snapshot_add_blame(&delta, &(struct blame_sample){7, 5, 90, 1}); /* a BE victim */
	snapshot_finish(&delta);

	assert_int_equal(collect_fold_probes(m, 3, &delta, &in, total_of), 0);
	assert_int_equal(units[0].rq.count, 2);
	assert_int_equal(units[0].rq.slots[3], 2);
	assert_int_equal(units[1].rq.count, 0);
	assert_false(units[0].has_cpi);
	/* the running totals take every probe part, and stay per unit */
	assert_int_equal(totals[0].parts, CG_RQ | CG_MEMSTALL);
	assert_int_equal(totals[0].rq.count, 2);
	assert_int_equal(totals[0].mem.oom_kills, 1);
	assert_int_equal(totals[1].parts, 0);

	/* unit 2's window is short (2 waits): its outside culprit is named all the same */
	assert_int_equal(collect_fold_blame(m, 3, &delta, fake_name, NULL, &in), 0);
	assert_int_equal(in.n_outside, 1);
	assert_int_equal(in.outside[0].id, 9);
	assert_int_equal(in.n_blame, 3);
	assert_int_equal(in.blame[0].victim, 2);
	assert_int_equal(in.blame[0].culprit, POL_CULPRIT_IDLE);
	assert_int_equal(in.blame[1].culprit, 7);
	assert_int_equal(in.blame[1].wait_ns, 800); /* pod + container, one pair */
	assert_int_equal(in.blame[1].count, 42);
	assert_int_equal(in.blame[2].culprit, 9);
	assert_int_equal(in.blame[2].wait_ns, 100);
	free(in.blame);
	free(in.outside);
	snapshot_free(&delta);
}

/*
 * The memstall probe's interval into the units' memory stall (v1: from the
 * probe's PSI inputs): the pod and its container add up, every unit is
 * measured even without a record, the scopes of one outside slice that
 * reclaimed or read add up to the slice, a service that only read is a
 * party too, one that cannot be named is left out.
 */
static void test_fold_mem(void **state)
{
	const struct collect_member m[] = {{2, 2, QOS_LS}, {5, 2, QOS_LS}, {7, 7, QOS_BE}};
	struct pol_unit units[2] = {{.id = 2, .cls = QOS_LS}, {.id = 7, .cls = QOS_BE}};
	struct pol_input in = {.units = units, .n_units = 2};
	struct snapshot delta = {.memstall_psi = true};
	struct cg_sample *cg;

	(void)state;
	cg = snapshot_add(&delta, 2);
	cg->parts = CG_MEMSTALL;
	cg->mem.stall.sum_ns = 100;
	cg->mem.memcg.sum_ns = 10;
	cg->mem.iowait.sum_ns = 1000;
	cg = snapshot_add(&delta, 5);
	cg->parts = CG_MEMSTALL;
	cg->mem.stall.sum_ns = 200;
	cg->mem.io_bytes = 4096;
	for (uint64_t id = SLICE + 1; id <= SLICE + 2; id++) {
		cg = snapshot_add(&delta, id);
		cg->parts = CG_MEMSTALL;
		cg->mem.direct.sum_ns = 50;
		cg->mem.io_bytes = 4096;
	}
	/* a service that only read from the disk: a party of the I/O breach */
	cg = snapshot_add(&delta, 40);
	cg->parts = CG_MEMSTALL;
	cg->mem.io_bytes = 1 << 20;
	cg = snapshot_add(&delta, GONE);
	cg->parts = CG_MEMSTALL;
	cg->mem.memcg.sum_ns = 999;
	snapshot_finish(&delta);

	assert_int_equal(collect_fold_mem(m, 3, &delta, true, fake_name, NULL, &in), 0);
	assert_true(units[0].ms.has_stall && units[0].ms.has_io);
	assert_int_equal(units[0].ms.stall_ns, 310); /* sleeps + reclaim */
	assert_int_equal(units[0].ms.reclaim_ns, 10);
	assert_int_equal(units[0].ms.io_ns, 1000);
	assert_int_equal(units[0].ms.io_bytes, 4096);
	assert_true(units[1].ms.has_stall); /* measured: nothing stalled */
	assert_int_equal(units[1].ms.stall_ns, 0);
	assert_int_equal(in.n_mem_outside, 2);
	assert_int_equal(in.mem_outside[0].name.id, 40);
	assert_int_equal(in.mem_outside[0].reclaim_ns, 0);
	assert_int_equal(in.mem_outside[0].io_bytes, 1 << 20);
	assert_int_equal(in.mem_outside[1].name.id, SLICE);
	assert_string_equal(in.mem_outside[1].name.path, "noisy.slice");
	assert_int_equal(in.mem_outside[1].reclaim_ns, 100);
	assert_int_equal(in.mem_outside[1].io_bytes, 8192);
	free(in.mem_outside);

	/* v2 (the pressure files measure the stall): only the reclaim evidence */
	memset(units, 0, sizeof(units));
	units[0] = (struct pol_unit){.id = 2, .cls = QOS_LS};
	units[1] = (struct pol_unit){.id = 7, .cls = QOS_BE};
	assert_int_equal(collect_fold_mem(m, 3, &delta, false, fake_name, NULL, &in), 0);
	assert_false(units[0].ms.has_stall);
	assert_int_equal(units[0].ms.stall_ns, 0);
	assert_int_equal(units[0].ms.reclaim_ns, 10);
	free(in.mem_outside);
	snapshot_free(&delta);
}

/*
 * v2: an LS unit's memory and I/O stall are its pressure files' "some"
 * deltas, its own limit's hits memory.events.local's; a BE unit's block I/O
 * io.stat's; the ancestors from the subtree down with their own hits.
 */
static void test_memory_v2(void **state)
{
	struct class_rule rules[1] = {0};
	struct collect_wants cfg = {.classes = rules, .n_classes = 1, .mem_interference = true};
	struct cgroup_ctrls c;
	struct cgroup_fs fs = {.mode = QOSLET_CGROUP_V2};
	struct collect_opts o = {.ctrls = &c, .fs = &fs, .subtree = SUB, .wants = &cfg};
	static const char *const tiers[] = {SUB, SUB "/kubepods-burstable.slice",
					    SUB "/kubepods-besteffort.slice"};
	const struct tick_record *rec;
	struct collector *col;
	const struct pol_unit *u;
	int err;

	(void)state;
	cgroup(LS, "max 100000\n", 0);
	cgroup(BE, "max 100000\n", 0);
	for (size_t i = 0; i < 3; i++)
		put(tiers[i], "memory.events.local", "low 0\nhigh 0\nmax 10\noom 0\noom_kill 0\n");
	put(LS, "memory.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=1000\n");
	put(LS, "io.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=50\n");
	put(LS, "memory.events.local", "low 0\nhigh 0\nmax 3\noom 0\noom_kill 0\n");
	put(LS, "memory.stat",
	    "anon 1\nunevictable 0\ninactive_file 0\nworkingset_refault_file 5\n");
	put(BE, "io.stat", "8:0 rbytes=1000 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n");
	cgroup_ctrls_fake(&c, root, true);
	snprintf(fs.root, sizeof(fs.root), "%s", root);
	snprintf(rules[0].glob, sizeof(rules[0].glob), SUB "/batch.slice/*");
	rules[0].cls = QOS_BE;
	col = collector_new(&o);
	assert_non_null(col);
	rec = collector_read(col, 1000, 1000000000ull, &err);
	assert_non_null(rec);
	assert_false(unit(&rec->in, LS)->ms.has_stall); /* one reading: no delta yet */

	put(LS, "memory.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=251000\n");
	put(LS, "io.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=1050\n");
	put(LS, "memory.events.local", "low 0\nhigh 1\nmax 5\noom 0\noom_kill 0\n");
	put(LS, "memory.stat",
	    "anon 1\nunevictable 0\ninactive_file 0\nworkingset_refault_file 9\n");
	put(SUB, "memory.events.local", "low 0\nhigh 0\nmax 110\noom 0\noom_kill 0\n");
	put(BE, "io.stat", "8:0 rbytes=1000 wbytes=8192 rios=1 wios=2 dbytes=0 dios=0\n");
	rec = collector_read(col, 2000, 2000000000ull, &err);
	assert_non_null(rec);
	u = unit(&rec->in, LS);
	assert_true(u->ms.has_stall && u->ms.has_io);
	assert_int_equal(u->ms.stall_ns, 250000000ull);
	assert_int_equal(u->ms.io_ns, 1000000ull);
	assert_int_equal(u->ms.limit_hits, 3);
	assert_int_equal(u->ms.refaults, 4);
	assert_int_equal(u->ms.ancestor_hits, 100);
	assert_int_equal(u->ms.ancestor, id_of(SUB));
	assert_int_equal(unit(&rec->in, BE)->ms.io_bytes, 8192);
	assert_int_equal(unit(&rec->in, BE)->ms.ancestor_hits, 100);
	assert_int_equal(rec->in.n_mem_ancestors, 3);
	collector_free(col);
}

/*
 * An LS victim keeps its four largest outside parties by their ids, named,
 * whether its window is over or not (a breach is judged over several
 * ticks); the smaller ones add up to OTHER, and so does one that cannot be
 * named (gone). Culprits of one party (the scopes of a slice) add up before
 * the ranks are taken: three small scopes outrank a larger service. A
 * SYSTEM victim's outside culprits are OTHER.
 */
static void test_fold_outside(void **state)
{
	/* units 2 and 7 (LS, one over and one under 1 ms), 8 (SYSTEM); 100.. outside */
	const struct collect_member m[] = {{2, 2, QOS_LS}, {7, 7, QOS_LS}, {8, 8, QOS_SYSTEM}};
	struct pol_unit units[3] = {{.id = 2, .cls = QOS_LS, .has_rq = true},
				    {.id = 7, .cls = QOS_LS, .has_rq = true},
				    {.id = 8, .cls = QOS_SYSTEM, .has_rq = true}};
	struct pol_input in = {.units = units, .n_units = 3};
	static const struct {
		uint64_t culprit, wait;
	} waits[] = {{101, 600}, {102, 500},	   {103, 400},	    {104, 300},
		     {105, 200}, {106, 100},	   {GONE, 700},	    {SLICE + 1, 250},
		     {7, 50},	 {SLICE + 2, 250}, {SLICE + 3, 250}};
	struct snapshot delta = {0};

	(void)state;
	units[0].rq.count = units[0].rq.slots[12] = 100; /* about 4 ms */
	units[1].rq.count = units[1].rq.slots[1] = 100;	 /* about 3 us */
	for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++)
		for (uint64_t v = 2; v <= 8; v += v == 2 ? 5 : 1)
			snapshot_add_blame(&delta, &(struct blame_sample){v, waits[i].culprit,
									  waits[i].wait, 1});
	snapshot_finish(&delta);
	assert_int_equal(collect_fold_blame(m, 3, &delta, fake_name, NULL, &in), 0);

	/* each LS victim: unit 7 or itself, 101..102, the slice (750), 103, OTHER */
	assert_int_equal(in.n_blame, 2 * 6 + 2);
	for (size_t k = 0; k < 2; k++) {
		const struct pol_blame *b = &in.blame[k * 6];

		assert_int_equal(b[0].victim, k ? 7 : 2);
		assert_int_equal(b[0].culprit, 7);
		assert_int_equal(b[1].culprit, 101);
		assert_int_equal(b[2].culprit, 102);
		assert_int_equal(b[3].culprit, 103);
		assert_int_equal(b[4].culprit, SLICE);
		assert_int_equal(b[4].wait_ns, 750);
		assert_int_equal(b[4].count, 3);
		assert_int_equal(b[5].culprit, POL_CULPRIT_OTHER);
		assert_int_equal(b[5].wait_ns, 300 + 200 + 100 + 700);
	}
	assert_int_equal(in.n_outside, 4);
	assert_int_equal(in.outside[0].id, 101);
	assert_string_equal(in.outside[0].path, "system.slice/101.service");
	assert_int_equal(in.outside[0].cls, QOS_SYSTEM);
	assert_int_equal(in.outside[3].id, SLICE);
	assert_string_equal(in.outside[3].path, "noisy.slice");
	/* the SYSTEM victim: unit 7, and OTHER */
	assert_int_equal(in.blame[12].victim, 8);
	assert_int_equal(in.blame[12].culprit, 7);
	assert_int_equal(in.blame[13].culprit, POL_CULPRIT_OTHER);
	assert_int_equal(in.blame[13].wait_ns, 600 + 500 + 400 + 300 + 200 + 100 + 700 + 750);
	free(in.blame);
	free(in.outside);
	snapshot_free(&delta);
}

/*
 * Outside culprits are named at the depth the operator knows: below the
 * node's root (the managed subtree's parent), a top-level cgroup, or a
 * systemd slice's deepest slice and its service; never a transient scope.
 */
static void test_outside_depth(void **state)
{
	static const struct {
		const char *path, *subtree, *want;
	} cases[] = {
		{"noisy.slice", "kubepods", "noisy.slice"},
		{"noisy.slice/run-u7.scope", "kubepods", "noisy.slice"},
		{"system.slice/containerd.service", "kubepods.slice",
		 "system.slice/containerd.service"},
		{"system.slice/containerd.service/sub", "kubepods",
		 "system.slice/containerd.service"},
		{"system.slice/docker-ab12.scope", "kubepods", "system.slice"},
		{"user.slice/user-1000.slice/session-3.scope", "kubepods",
		 "user.slice/user-1000.slice"},
		{"docker/ab12", "kubepods", "docker"},
		{"init.scope", "kubepods", "init.scope"},
		{"", "kubepods", ""},
		/* the managed subtree's own cgroups are themselves */
		{"kubepods/burstable", "kubepods", "kubepods/burstable"},
		/* one level down: the subtree's parent is the node's root */
		{"t/noisy.slice/run-u7.scope", "t/kubepods", "t/noisy.slice"},
		{"t/system.slice/cron.service", "t/kubepods", "t/system.slice/cron.service"},
		{"t", "t/kubepods", "t"},
		{"t/agent", "t/kubepods", "t/agent"},
		/* outside the node's root: cut below the hierarchy's */
		{"other/noisy.slice", "t/kubepods", "other"},
		{"tx/a", "t/kubepods", "tx"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = collect_outside_depth(cases[i].path, cases[i].subtree);

		if (n != strlen(cases[i].want) || strncmp(cases[i].path, cases[i].want, n))
			fail_msg("%s under %s: %.*s, want %s", cases[i].path, cases[i].subtree,
				 (int)n, cases[i].path, cases[i].want);
	}
}

static int count_dirs(void *ctx, const struct cg_tree_dir *d)
{
	(void)d;
	++*(size_t *)ctx;
	return 0;
}

static size_t tree_dirs(const struct cg_tree *t)
{
	size_t n = 0;

	cg_tree_foreach(t, count_dirs, &n);
	return n;
}

/* mkdir and rmdir reach the tree as events: no walk after the first. */
static void test_tree_events(void **state)
{
	struct cgroup_fs fs = {.mode = QOSLET_CGROUP_V2};
	struct cg_tree *t;
	char path[PATH_MAX];
	uint64_t gen;

	(void)state;
	snprintf(fs.root, sizeof(fs.root), "%s", root);
	cgroup("tree", "max 100000\n", 0);
	cgroup("tree/a", "max 100000\n", 0);
	t = cg_tree_new(&fs, "tree");
	assert_non_null(t);
	assert_int_equal(cg_tree_sync(t, 1), 1);
	assert_int_equal(tree_dirs(t), 2);
	assert_int_equal(cg_tree_sync(t, 2), 0); /* nothing happened */

	cgroup("tree/a/b/c", "max 100000\n", 0); /* b and c at once: c lands before b is watched */
	cgroup("tree/d", "max 100000\n", 0);
	gen = cg_tree_generation(t);
	assert_int_equal(cg_tree_sync(t, 3), 1);
	assert_true(cg_tree_generation(t) != gen);
	assert_int_equal(tree_dirs(t), 5);
	assert_int_equal(cg_tree_stats(t).walks, 1);

	/* removed: the event takes it out of the tree */
	snprintf(path, sizeof(path), "%s/tree/d", root);
	assert_int_equal(tmpdir_remove(path), 0);
	assert_int_equal(cg_tree_sync(t, 4), 1);
	assert_int_equal(tree_dirs(t), 4);
	assert_int_equal(cg_tree_stats(t).walks, 1);
	assert_true(cg_tree_stats(t).events >= 3);

	/* the safety net walks again after CG_TREE_REWALK_NS, finding the same tree */
	assert_int_equal(cg_tree_sync(t, 5 + CG_TREE_REWALK_NS), 0);
	assert_int_equal(cg_tree_stats(t).walks, 2);
	assert_int_equal(tree_dirs(t), 4);

	/* the subtree's root gone: said so */
	cg_tree_free(t);
	t = cg_tree_new(&fs, "nonexistent");
	assert_int_equal(cg_tree_sync(t, 1), -ENOENT);
	cg_tree_free(t);
}

/* A collector's inputs: the fake v2 tree, its subtree made, every want off. */
struct fake_node {
	struct collect_wants cfg;
	struct cgroup_ctrls c;
	struct cgroup_fs fs;
	struct collect_opts o;
};

static void fake_node(struct fake_node *n, const char *subtree)
{
	memset(n, 0, sizeof(*n));
	cgroup(subtree, "max 100000\n", 0);
	cgroup_ctrls_fake(&n->c, root, true);
	n->fs.mode = QOSLET_CGROUP_V2;
	snprintf(n->fs.root, sizeof(n->fs.root), "%s", root);
	n->o = (struct collect_opts){
		.ctrls = &n->c, .fs = &n->fs, .subtree = subtree, .wants = &n->cfg};
}

/* Settings are read when a unit appears, after a write, and every COLLECT_SETTINGS_NS; pods at
 * once. */
static void test_settings_and_new_pods(void **state)
{
	struct fake_node n;
	const char *pod =
		"s2/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod11_22.slice";
	const char *pod2 =
		"s2/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod33_44.slice";
	const uint64_t s = 1000000000ull;
	const struct tick_record *rec;
	struct collector *col;
	int err;

	(void)state;
	fake_node(&n, "s2/kubepods.slice");
	cgroup(pod, "50000 100000\n", 0);
	col = collector_new(&n.o);
	rec = collector_read(col, 1, s, &err);
	assert_int_equal(rec->in.n_units, 1);
	assert_int_equal(unit(&rec->in, pod)->quota_us, 50000);

	/* the owner changes the quota: seen at the slow re-read, not before */
	put(pod, "cpu.max", "70000 100000\n");
	rec = collector_read(col, 2, 2 * s, &err);
	assert_int_equal(unit(&rec->in, pod)->quota_us, 50000);
	rec = collector_read(col, 3, s + COLLECT_SETTINGS_NS, &err);
	assert_int_equal(unit(&rec->in, pod)->quota_us, 70000);

	/* the actuator wrote: read back at the next tick */
	put(pod, "cpu.max", "20000 100000\n");
	collector_settings_changed(col, id_of(pod));
	rec = collector_read(col, 4, 2 * s + COLLECT_SETTINGS_NS, &err);
	assert_int_equal(unit(&rec->in, pod)->quota_us, 20000);

	/* a pod made between two ticks is a unit at the next one, classed BE by its tier */
	cgroup(pod2, "max 100000\n", 0);
	rec = collector_read(col, 5, 3 * s + COLLECT_SETTINGS_NS, &err);
	assert_int_equal(rec->in.n_units, 2);
	assert_int_equal(unit(&rec->in, pod2)->cls, QOS_BE);
	assert_int_equal(unit(&rec->in, pod2)->mem_used, 0); /* memory eviction off: not read */
	collector_free(col);
}

/*
 * The record's units are the collector's own from tick to tick: a unit that
 * cannot be read is left out (the others copied), and nothing measured at
 * one tick shows at the next when it was not measured again.
 */
static void test_unit_left_out(void **state)
{
#define S3_BE "s3/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"
	const char *a = S3_BE "1_1.slice", *b = S3_BE "2_2.slice";
	char path[PATH_MAX];
	struct fake_node n;
	struct collector *col;
	const struct tick_record *rec;
	const uint64_t s = 1000000000ull;
	int err;

	(void)state;
	fake_node(&n, "s3/kubepods.slice");
	n.cfg.evict_memory = true; /* threshold 0: units' memory read */
	cgroup(a, "50000 100000\n", 0);
	cgroup(b, "max 100000\n", 0);
	col = collector_new(&n.o);
	assert_non_null(col);
	rec = collector_read(col, 1, s, &err);
	assert_non_null(rec);
	assert_int_equal(rec->in.n_units, 2);
	assert_int_equal(unit(&rec->in, b)->mem_used, 2000000);

	/*
	 * a is gone from the cpu hierarchy before the tree heard of it (here:
	 * the hierarchy is moved to a copy without it) and its settings are
	 * due: b alone, with its own numbers
	 */
	cgroup("alt/s3/kubepods.slice", "max 100000\n", 0);
	snprintf(path, sizeof(path), "alt/%s", b);
	cgroup(path, "max 100000\n", 0);
	snprintf(n.c.root[CTRL_CPU], sizeof(n.c.root[CTRL_CPU]), "%s/alt", root);
	collector_settings_changed(col, id_of(a));
	put(b, "cpu.stat", "usage_usec 500000\nnr_periods 10\nnr_throttled 4\n");
	rec = collector_read(col, 2, 2 * s, &err);
	assert_non_null(rec);
	assert_int_equal(rec->in.n_units, 1);
	assert_int_equal(rec->in.units[0].id, id_of(b));
	assert_string_equal(rec->in.units[0].path, b);
	assert_float_equal(rec->in.units[0].cpu_used, 0.5, 1e-9);
	assert_int_equal(rec->in.units[0].quota_us, -1);
	assert_int_equal(rec->in.units[0].mem_used, 2000000);

	/* back, with its settings; memory no longer wanted: none shown from the last read */
	snprintf(n.c.root[CTRL_CPU], sizeof(n.c.root[CTRL_CPU]), "%s", root);
	put(a, "cpu.max", "30000 100000\n");
	collector_settings_changed(col, id_of(a));
	n.cfg.evict_memory = false;
	rec = collector_read(col, 3, 3 * s, &err);
	assert_non_null(rec);
	assert_int_equal(rec->in.n_units, 2);
	assert_int_equal(unit(&rec->in, a)->quota_us, 30000);
	assert_int_equal(unit(&rec->in, a)->mem_used, 0);
	assert_int_equal(unit(&rec->in, b)->mem_used, 0);
	assert_float_equal(unit(&rec->in, b)->cpu_used, 0, 1e-9);
	collector_free(col);
}

/* The API's pods: a memory request reaches the unit. */
static const struct kube_pod *pod_with_request(void *ctx, const char *uid)
{
	static const struct kube_pod ls = {.uid = "55_66",
					   .request_mem = 64 << 20,
					   .batch_mem_limit = 1 << 20}, /* LS: not read */
		be = {.uid = "77_88",
		      .batch_cpu_request = 500,
		      .batch_cpu_limit = 1000,
		      .batch_mem_request = 256 << 20,
		      .batch_mem_limit = 512 << 20};

	(void)ctx;
	return !strcmp(uid, "55-66") ? &ls : !strcmp(uid, "77-88") ? &be : NULL;
}

/* Batch capacity on: every unit's memory every COLLECT_CAPACITY_MEM_NS, and pods' memory requests.
 */
static void test_capacity_inputs(void **state)
{
	struct collect_wants cfg = {0};
	struct cgroup_ctrls c;
	struct cgroup_fs fs = {.mode = QOSLET_CGROUP_V2};
	struct collect_opts o = {.ctrls = &c,
				 .fs = &fs,
				 .subtree = "s3/kubepods.slice",
				 .wants = &cfg,
				 .pod = pod_with_request};
	const char *ls =
		"s3/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod55_66.slice";
	const char *be =
		"s3/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod77_88.slice";
	const struct tick_record *rec;
	struct collector *col;
	int err;

	(void)state;
	cgroup("s3/kubepods.slice", "max 100000\n", 0);
	cgroup(ls, "max 100000\n", 0);
	cgroup(be, "max 100000\n", 0);
	put(be, "memory.max", "536870912\n");
	put(ls, "memory.max", "1048576\n");
	cgroup_ctrls_fake(&c, root, true);
	snprintf(fs.root, sizeof(fs.root), "%s", root);
	cfg.capacity = true; /* memory eviction off: only capacity wants memory */
	col = collector_new(&o);
	assert_non_null(col);
	rec = collector_read(col, 1, 1000000000ull, &err);
	assert_non_null(rec);
	assert_int_equal(unit(&rec->in, ls)->mem_used, 2000000); /* LS too */
	assert_int_equal(unit(&rec->in, ls)->request_mem, 64 << 20);
	assert_int_equal(unit(&rec->in, be)->mem_used, 2000000);
	assert_int_equal(unit(&rec->in, be)->request_mem, 0); /* listed without one */
	/* batch resources, the weight and (BE with a batch-memory limit only) the memory limit */
	assert_int_equal(unit(&rec->in, be)->batch.cpu_request, 500);
	assert_int_equal(unit(&rec->in, be)->batch.cpu_limit, 1000);
	assert_int_equal(unit(&rec->in, be)->batch.mem_request, 256 << 20);
	assert_int_equal(unit(&rec->in, be)->batch.mem_limit, 512 << 20);
	assert_int_equal(unit(&rec->in, be)->weight, 100);
	assert_int_equal(unit(&rec->in, be)->mem_max, 512 << 20);
	assert_int_equal(unit(&rec->in, ls)->mem_max, -1); /* LS: not read */
	/* within COLLECT_CAPACITY_MEM_NS the last read stands; then it is read anew */
	put(ls, "memory.current", "5000000\n");
	rec = collector_read(col, 2, 2000000000ull, &err);
	assert_int_equal(unit(&rec->in, ls)->mem_used, 2000000);
	rec = collector_read(col, 3, 1000000000ull + COLLECT_CAPACITY_MEM_NS, &err);
	assert_int_equal(unit(&rec->in, ls)->mem_used, 4000000);
	collector_free(col);
}

static bool held_be(void *ctx, const char *rel)
{
	(void)ctx;
	return strstr(rel, "pod99_00") != NULL;
}

/*
 * Memory suppression reads BE units' memory every COLLECT_CAPACITY_MEM_NS
 * (the last read standing between), every tick for a unit whose memory
 * qoslet holds, and every tick for all of them once an LS unit stalled.
 */
static void test_mem_suppress_reads(void **state)
{
	struct collect_wants cfg = {.mem_suppress = true, .mem_interference = true};
	struct cgroup_ctrls c;
	struct cgroup_fs fs = {.mode = QOSLET_CGROUP_V2};
	struct collect_opts o = {.ctrls = &c,
				 .fs = &fs,
				 .subtree = "s5/kubepods.slice",
				 .wants = &cfg,
				 .memory_held = held_be};
	const char *ls =
		"s5/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod55_66.slice";
	const char *be =
		"s5/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod77_88.slice";
	const char *held =
		"s5/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod99_00.slice";
	const uint64_t s = 1000000000ull;
	const struct tick_record *rec;
	struct collector *col;
	int err;

	(void)state;
	cgroup("s5/kubepods.slice", "max 100000\n", 0);
	cgroup(ls, "max 100000\n", 0);
	cgroup(be, "max 100000\n", 0);
	cgroup(held, "max 100000\n", 0);
	put(ls, "memory.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
	cgroup_ctrls_fake(&c, root, true);
	snprintf(fs.root, sizeof(fs.root), "%s", root);
	col = collector_new(&o);
	assert_non_null(col);
	rec = collector_read(col, 1, s, &err);
	assert_non_null(rec);
	assert_int_equal(unit(&rec->in, be)->mem_usage, 3000000); /* the first read */
	put(be, "memory.current", "5000000\n");
	put(held, "memory.current", "5000000\n");
	rec = collector_read(col, 2, 2 * s, &err);
	assert_int_equal(unit(&rec->in, be)->mem_usage, 3000000);   /* carried: no LS stall */
	assert_int_equal(unit(&rec->in, held)->mem_usage, 5000000); /* held: every tick */
	/* the LS unit stalls 20 ms in a second: from the next tick every BE unit is read */
	put(ls, "memory.pressure", "some avg10=2.00 avg60=0.00 avg300=0.00 total=20000\n");
	rec = collector_read(col, 3, 3 * s, &err);
	assert_int_equal(unit(&rec->in, be)->mem_usage, 3000000);
	rec = collector_read(col, 4, 4 * s, &err);
	assert_int_equal(unit(&rec->in, be)->mem_usage, 5000000);
	put(be, "memory.current", "6000000\n");
	rec = collector_read(col, 5, 5 * s, &err);
	assert_int_equal(unit(&rec->in, be)->mem_usage, 6000000); /* hot: every tick */
	/* a minute after the stall, a read at its cadence, then the last read stands again */
	rec = collector_read(col, 6, 3 * s + COLLECT_MEM_HOT_NS, &err);
	put(be, "memory.current", "7000000\n");
	rec = collector_read(col, 7, 4 * s + COLLECT_MEM_HOT_NS, &err);
	assert_int_equal(unit(&rec->in, be)->mem_usage, 6000000);
	assert_int_equal(unit(&rec->in, held)->mem_usage, 5000000);
	collector_free(col);
}

/* A BE pod with two started containers: one with batch settings of its own, one without. */
static const struct kube_pod *pod_with_containers(void *ctx, const char *uid)
{
	static struct kube_container cs[] = {
		{.id = "c0ffee",
		 .batch_cpu_request = 500,
		 .batch_cpu_limit = 1000,
		 .batch_mem_limit = 256 << 20},
		{.id = "beef"},
	};
	static const struct kube_pod be = {
		.uid = "77_88", .batch_cpu_request = 500, .containers = cs, .n_containers = 2};

	(void)ctx;
	return !strcmp(uid, "77-88") ? &be : NULL;
}

/*
 * Containers with batch settings of their own reach the record with their
 * weight and memory limit, read at the settings' cadence or after a write.
 */
static void test_batch_containers(void **state)
{
	struct collect_wants cfg = {0};
	struct cgroup_ctrls c;
	struct cgroup_fs fs = {.mode = QOSLET_CGROUP_V2};
	struct collect_opts o = {.ctrls = &c,
				 .fs = &fs,
				 .subtree = "s5/kubepods.slice",
				 .wants = &cfg,
				 .pod = pod_with_containers};
	const char *be =
		"s5/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod77_88.slice";
	char with[256], without[256];
	const struct tick_record *rec;
	const struct pol_container *t;
	struct collector *col;
	int err;

	(void)state;
	snprintf(with, sizeof(with), "%s/cri-containerd-c0ffee.scope", be);
	snprintf(without, sizeof(without), "%s/cri-containerd-beef.scope", be);
	cgroup("s5/kubepods.slice", "max 100000\n", 0);
	cgroup(be, "max 100000\n", 0);
	cgroup(with, "70000 100000\n", 0);
	cgroup(without, "max 100000\n", 0);
	put(with, "cpu.weight", "1\n");
	cgroup_ctrls_fake(&c, root, true);
	snprintf(fs.root, sizeof(fs.root), "%s", root);
	col = collector_new(&o);
	assert_non_null(col);
	rec = collector_read(col, 1, 1000000000ull, &err);
	assert_non_null(rec);
	assert_int_equal(rec->in.n_containers, 1);
	t = &rec->in.containers[0];
	assert_int_equal(t->id, id_of(with));
	assert_int_equal(t->unit, id_of(be));
	assert_string_equal(t->path, with);
	assert_int_equal(t->batch_cpu_request, 500);
	assert_int_equal(t->batch_mem_limit, 256 << 20);
	assert_int_equal(t->weight, 1);
	assert_int_equal(t->mem_max, -1); /* "max" */
	assert_int_equal(t->batch_cpu_limit, 1000);
	assert_int_equal(t->quota_us, 70000); /* v2: read for the container's quota */
	assert_int_equal(t->period_us, 100000);
	/* within the settings' cadence the last read stands; after a write, read at once */
	put(with, "cpu.weight", "20\n");
	rec = collector_read(col, 2, 2000000000ull, &err);
	assert_int_equal(rec->in.containers[0].weight, 1);
	collector_settings_changed(col, id_of(with));
	rec = collector_read(col, 3, 3000000000ull, &err);
	assert_int_equal(rec->in.containers[0].weight, 20);
	/* the owner's change shows after COLLECT_SETTINGS_NS */
	put(with, "memory.max", "268435456\n");
	rec = collector_read(col, 4, 3000000000ull + COLLECT_SETTINGS_NS, &err);
	assert_int_equal(rec->in.containers[0].mem_max, 256 << 20);
	collector_free(col);
}

/* The pods a fake API listed, for the class rules by namespace and label. */
static struct kube_pod fake_pods[5];

static const struct kube_pod *fake_pod(void *ctx, const char *uid)
{
	(void)ctx;
	for (size_t i = 0; i < sizeof(fake_pods) / sizeof(fake_pods[0]); i++)
		if (!strcmp(fake_pods[i].uid, uid))
			return &fake_pods[i];
	return NULL;
}

/*
 * Rules by namespace and label class pods the API knows; BestEffort pods of
 * kube-system, of a DaemonSet and static ones are SYSTEM, not BE, unless a
 * rule says BE.
 */
static void test_class_rules_by_pod(void **state)
{
	struct class_rule rules[2] = {0};
	struct collect_wants cfg = {.classes = rules, .n_classes = 2};
	struct cgroup_ctrls c;
	struct cgroup_fs fs = {.mode = QOSLET_CGROUP_V2};
	struct collect_opts o = {
		.ctrls = &c, .fs = &fs, .subtree = "s3/kubepods", .wants = &cfg, .pod = fake_pod};
	static char app_batch[] = "app=batch\0";
	const char *batch = "s3/kubepods/burstable/podaa", *sys = "s3/kubepods/besteffort/podbb",
		   *ds = "s3/kubepods/besteffort/podcc", *mirror = "s3/kubepods/besteffort/poddd",
		   *plain = "s3/kubepods/besteffort/podee",
		   *forced = "s3/kubepods/besteffort/podff";
	const struct tick_record *rec;
	struct collector *col;
	int err;

	(void)state;
	fake_pods[0] = (struct kube_pod){.uid = "aa", .ns = "batch-1", .labels = app_batch};
	fake_pods[1] = (struct kube_pod){.uid = "bb", .ns = "kube-system"};
	fake_pods[2] = (struct kube_pod){
		.uid = "cc", .ns = "logging", .owner_kind = "DaemonSet", .daemonset = true};
	fake_pods[3] = (struct kube_pod){.uid = "dd", .ns = "etcd", .mirror = true};
	/* BE by a rule, still a DaemonSet's: eviction must know (the guard) */
	fake_pods[4] = (struct kube_pod){.uid = "ff",
					 .ns = "kube-system",
					 .owner_kind = "DaemonSet",
					 .daemonset = true,
					 .evict_priority = -4,
					 .start_ns = 77};
	fake_pods[0].evict_opt_out = true;
	/* the opt-out counts where the config allows it (test_pod_metadata_refused: elsewhere) */
	snprintf(cfg.trust.opt_out_ns.ns[0], sizeof(cfg.trust.opt_out_ns.ns[0]), "batch-*");
	cfg.trust.opt_out_ns.n = 1;
	/* DaemonSets are the node's where the config trusts them (test_pod_metadata_refused) */
	snprintf(cfg.trust.daemonset_ns.ns[0], sizeof(cfg.trust.daemonset_ns.ns[0]), "logging");
	snprintf(cfg.trust.daemonset_ns.ns[1], sizeof(cfg.trust.daemonset_ns.ns[1]), "kube-system");
	cfg.trust.daemonset_ns.n = 2;
	/* a Burstable pod in a batch-* namespace with app=batch: BE by the rule */
	snprintf(rules[0].ns, sizeof(rules[0].ns), "batch-*");
	snprintf(rules[0].label, sizeof(rules[0].label), "app=batch");
	rules[0].cls = QOS_BE;
	/* a rule may still make a protected pod BE: the operator's explicit word */
	snprintf(rules[1].glob, sizeof(rules[1].glob), "%s", forced);
	rules[1].cls = QOS_BE;
	cgroup("s3/kubepods", "max 100000\n", 0);
	for (const char *const *p =
		     (const char *const[]){batch, sys, ds, mirror, plain, forced, NULL};
	     *p; p++)
		cgroup(*p, "max 100000\n", 0);
	cgroup_ctrls_fake(&c, root, true);
	snprintf(fs.root, sizeof(fs.root), "%s", root);
	col = collector_new(&o);
	rec = collector_read(col, 1, 1000000000ull, &err);
	assert_int_equal(rec->in.n_units, 5);
	assert_int_equal(unit(&rec->in, batch)->cls, QOS_BE);
	assert_int_equal(unit(&rec->in, sys)->cls, QOS_SYSTEM);
	assert_int_equal(unit(&rec->in, ds)->cls, QOS_SYSTEM);
	assert_int_equal(unit(&rec->in, mirror)->cls, QOS_SYSTEM);
	/* not listed (yet): it may be a protected pod, so not BE; unmanaged, so not a unit */
	assert_null(pol_input_find(&rec->in, id_of(plain)));
	assert_int_equal(unit(&rec->in, forced)->cls, QOS_BE);
	/* eviction's facts, the first guard that holds: opt-out, DaemonSet, mirror, kube-system */
	assert_int_equal(unit(&rec->in, batch)->evict_guard, EVICT_GUARD_OPT_OUT);
	assert_int_equal(unit(&rec->in, sys)->evict_guard, EVICT_GUARD_KUBE_SYSTEM);
	assert_int_equal(unit(&rec->in, ds)->evict_guard, EVICT_GUARD_DAEMONSET);
	assert_int_equal(unit(&rec->in, mirror)->evict_guard, EVICT_GUARD_MIRROR);
	assert_int_equal(unit(&rec->in, forced)->evict_guard, EVICT_GUARD_DAEMONSET);
	assert_int_equal(unit(&rec->in, forced)->evict_priority, -4);
	assert_int_equal(unit(&rec->in, forced)->start_ns, 77);

	/* the label gone: the rule no longer matches, the kubelet's Burstable tier is LS */
	fake_pods[0].labels = NULL;
	fake_pods[0].evict_opt_out = false;
	collector_reclassify(col);
	rec = collector_read(col, 2, 2000000000ull, &err);
	assert_int_equal(unit(&rec->in, batch)->cls, QOS_LS);
	assert_int_equal(unit(&rec->in, batch)->evict_guard, EVICT_GUARD_NONE);
	collector_free(col);
}

/*
 * A pod's own metadata through the collector: BestEffort pods labelled LSE
 * and SYSTEM stay BE, an opt-out outside the allowed namespaces guards
 * nothing, a DaemonSet owner outside daemonset_namespaces or not the apps/v1
 * controller makes no SYSTEM pod (a tenant may write either), a 1 us target rides to the policy as
 * annotated (the SLO policy applies the floor) and is counted; each refusal is counted once per
 * pod.
 */
static void test_pod_metadata_refused(void **state)
{
	struct collect_wants cfg = {.trust = {.qos_label = true, .production_priority = 9000}};
	struct cgroup_ctrls c;
	struct cgroup_fs fs = {.mode = QOSLET_CGROUP_V2};
	struct collect_opts o = {
		.ctrls = &c, .fs = &fs, .subtree = "s5/kubepods", .wants = &cfg, .pod = fake_pod};
	const char *lse = "s5/kubepods/besteffort/podaa", *sys = "s5/kubepods/besteffort/podbb",
		   *kept = "s5/kubepods/besteffort/podcc", *tight = "s5/kubepods/burstable/poddd",
		   *whole = "s5/kubepods/podee";
	uint32_t n[POD_REFUSE_NR];
	const struct tick_record *rec;
	struct collector *col;
	int err;

	(void)state;
	cfg.rq_target_floor_us = 500;
	memset(fake_pods, 0, sizeof(fake_pods));
	fake_pods[0] = (struct kube_pod){
		.uid = "aa", .ns = "batch", .koord_qos = "LSE", .owner_kind = "DaemonSet"};
	fake_pods[1] = (struct kube_pod){.uid = "bb", .ns = "batch", .koord_qos = "SYSTEM"};
	fake_pods[2] = (struct kube_pod){.uid = "cc",
					 .ns = "batch",
					 .evict_opt_out = true,
					 .owner_kind = "DaemonSet",
					 .daemonset = true};
	fake_pods[3] = (struct kube_pod){.uid = "dd", .ns = "web", .rq_target_us = 1};
	/* what the pod's resources allow is taken: Guaranteed with 2 whole CPUs */
	fake_pods[4] =
		(struct kube_pod){.uid = "ee", .ns = "db", .koord_qos = "LSE", .request_cpu = 2000};
	cgroup("s5/kubepods", "max 100000\n", 0);
	for (const char *const *p = (const char *const[]){lse, sys, kept, tight, whole, NULL}; *p;
	     p++)
		cgroup(*p, "max 100000\n", 0);
	cgroup_ctrls_fake(&c, root, true);
	snprintf(fs.root, sizeof(fs.root), "%s", root);
	col = collector_new(&o);
	rec = collector_read(col, 1, 1000000000ull, &err);
	assert_int_equal(rec->in.n_units, 5);
	assert_int_equal(unit(&rec->in, lse)->cls, QOS_BE);
	assert_int_equal(unit(&rec->in, sys)->cls, QOS_BE);
	assert_int_equal(unit(&rec->in, kept)->cls, QOS_BE);
	assert_int_equal(unit(&rec->in, kept)->evict_guard, EVICT_GUARD_NONE);
	assert_int_equal(unit(&rec->in, tight)->cls, QOS_LS);
	assert_int_equal(unit(&rec->in, tight)->rq_target_us, 1);
	assert_int_equal(unit(&rec->in, whole)->cls, QOS_LSE);
	collector_refusals(col, n);
	assert_int_equal(n[POD_REFUSE_NONE], 0);
	assert_int_equal(n[POD_REFUSE_LABEL_NEEDS_GUARANTEED], 1);
	assert_int_equal(n[POD_REFUSE_LABEL_SYSTEM], 1);
	assert_int_equal(n[POD_REFUSE_OPT_OUT_NAMESPACE], 1);
	assert_int_equal(n[POD_REFUSE_TARGET_FLOOR], 1);
	assert_int_equal(n[POD_REFUSE_LABEL_NEEDS_WHOLE_CPUS], 0);
	assert_int_equal(n[POD_REFUSE_DAEMONSET_NAMESPACE], 1);
	assert_int_equal(n[POD_REFUSE_DAEMONSET_NOT_CONTROLLER], 1);

	/* the operator allows the namespace: the opt-out guards, nothing is refused there */
	snprintf(cfg.trust.opt_out_ns.ns[0], sizeof(cfg.trust.opt_out_ns.ns[0]), "batch");
	cfg.trust.opt_out_ns.n = 1;
	collector_reclassify(col);
	rec = collector_read(col, 2, 2000000000ull, &err);
	assert_int_equal(unit(&rec->in, kept)->evict_guard, EVICT_GUARD_OPT_OUT);
	collector_refusals(col, n);
	assert_int_equal(n[POD_REFUSE_OPT_OUT_NAMESPACE], 0);
	assert_int_equal(n[POD_REFUSE_LABEL_SYSTEM], 1);
	collector_free(col);
	memset(fake_pods, 0, sizeof(fake_pods));
}

/* Off Kubernetes: top-level cgroups, and the children of top-level slices, are SYSTEM units. */
static void test_system_units(void **state)
{
	struct class_rule rules[1] = {0};
	struct collect_wants cfg = {.classes = rules, .n_classes = 1};
	struct cgroup_ctrls c;
	struct cgroup_fs fs = {.mode = QOSLET_CGROUP_V2};
	struct collect_opts o = {
		.ctrls = &c, .fs = &fs, .subtree = "s4", .wants = &cfg, .system_units = true};
	const char *cron = "s4/system.slice/cron.service", *user = "s4/user.slice/user-0.slice",
		   *init = "s4/init.scope", *batch = "s4/batch";
	const struct tick_record *rec;
	struct collector *col;
	int err;

	(void)state;
	/* a rule still comes first */
	snprintf(rules[0].glob, sizeof(rules[0].glob), "%s", batch);
	rules[0].cls = QOS_BE;
	cgroup("s4", "max 100000\n", 0);
	cgroup("s4/system.slice", "max 100000\n", 0);
	cgroup("s4/user.slice", "max 100000\n", 0);
	for (const char *const *p = (const char *const[]){cron, user, init, batch, NULL}; *p; p++)
		cgroup(*p, "max 100000\n", 0);
	cgroup("s4/user.slice/user-0.slice/session-1.scope", "max 100000\n", 0);
	cgroup_ctrls_fake(&c, root, true);
	snprintf(fs.root, sizeof(fs.root), "%s", root);
	col = collector_new(&o);
	rec = collector_read(col, 1, 1000000000ull, &err);
	assert_int_equal(rec->in.n_units, 4);
	assert_int_equal(unit(&rec->in, cron)->cls, QOS_SYSTEM);
	assert_int_equal(unit(&rec->in, user)->cls, QOS_SYSTEM); /* its session is a member */
	assert_int_equal(unit(&rec->in, init)->cls, QOS_SYSTEM);
	assert_int_equal(unit(&rec->in, batch)->cls, QOS_BE);
	collector_free(col);
}

static void test_detect_kubepods(void **state)
{
	struct cgroup_ctrls c;
	char rel[64];

	(void)state;
	cgroup_ctrls_fake(&c, root, true);
	assert_int_equal(collect_detect_kubepods(&c, rel, sizeof(rel)), 0);
	assert_string_equal(rel, "kubepods.slice");
	cgroup_ctrls_fake(&c, "/nonexistent", true);
	assert_int_equal(collect_detect_kubepods(&c, rel, sizeof(rel)), -ENOENT);
}

static int setup(void **state)
{
	(void)state;
	return tmpdir_make(root, sizeof(root), "inventory");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units_and_numbers),
		cmocka_unit_test(test_fold),
		cmocka_unit_test(test_fold_outside),
		cmocka_unit_test(test_fold_mem),
		cmocka_unit_test(test_memory_v2),
		cmocka_unit_test(test_outside_depth),
		cmocka_unit_test(test_tree_events),
		cmocka_unit_test(test_settings_and_new_pods),
		cmocka_unit_test(test_unit_left_out),
		cmocka_unit_test(test_capacity_inputs),
		cmocka_unit_test(test_mem_suppress_reads),
		cmocka_unit_test(test_batch_containers),
		cmocka_unit_test(test_class_rules_by_pod),
		cmocka_unit_test(test_pod_metadata_refused),
		cmocka_unit_test(test_system_units),
		cmocka_unit_test(test_detect_kubepods),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
