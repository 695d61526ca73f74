// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The actuator's rules, one action at a time (the fake node: actuator_fixture.h). */
#include "actuator_fixture.h"

static void test_refusals(void **state)
{
	static const struct {
		enum act_kind kind;
		const char *unit;
		int64_t value;
		const char *cpus, *why;
	} cases[] = {
		{ACT_CPU_QUOTA, "other/pod9", 50000, NULL, "outside the managed subtree"},
		{ACT_CPU_QUOTA, "kubepods", 50000, NULL, "the managed subtree's root"},
		{ACT_CPU_QUOTA, "/kubepods/", 50000, NULL, "the managed subtree's root"},
		{ACT_CPU_QUOTA, "kubepods/../other/pod9", 50000, NULL, "not a cgroup path"},
		{ACT_CPU_QUOTA, "", 50000, NULL, "not a cgroup path"},
		{ACT_CPU_QUOTA, "kubepodsX/pod", 50000, NULL, "outside the managed subtree"},
		{ACT_EVICT, "other/pod9", 0, NULL, "outside the managed subtree"},
		{ACT_CPUSET, "kubepods/be/pod1", 0, "", "never writes an empty cpuset"},
		{ACT_CPUSET, "kubepods/be/pod1", 0, "1-x", "not a CPU list"},
		{ACT_CPUSET, "kubepods/be/pod1", 0, "2-5", "the parent kubepods/be holds only"},
		{ACT_CPU_IDLE, "kubepods/be/pod1", 2, NULL, "cpu.idle takes 0 or 1"},
		{ACT_CPU_QUOTA, "kubepods/be/pod1", -2, NULL, "not a CPU quota"},
	};
	struct fx fx, *f = &fx;
	struct act_result r;

	(void)state;
	for (int v2 = 0; v2 <= 1; v2++) {
		setup_fx(f, v2);
		for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
			assert_int_equal(act(f, cases[i].kind, cases[i].unit, QOS_BE,
					     cases[i].value, cases[i].cpus, &r),
					 OUT_REFUSED);
			assert_non_null(strstr(r.why, cases[i].why));
		}
		NO_LOG();
		assert_false(exists(f->journal));
		actuator_close(f->a);
	}
}

static void test_ls_never_lowered(void **state)
{
	static const struct {
		const char *unit;
		enum qos_class cls;
		int64_t quota;
		enum decision_outcome want;
	} steps[] = {
		{"kubepods/ls/pod2", QOS_LS, 40000, OUT_REFUSED}, /* original 50000 */
		{"kubepods/ls/pod2", QOS_LS, 60000, OUT_APPLIED},
		{"kubepods/ls/pod2", QOS_LSR, 55000,
		 OUT_APPLIED}, /* below now, not below the original */
		{"kubepods/ls/pod2", QOS_LSE, 45000, OUT_REFUSED},
		{"kubepods/ls/pod2", QOS_LS, 50000, OUT_APPLIED},
		{"kubepods/ls/pod2", QOS_LS, -1, OUT_APPLIED},
		{"kubepods/ls/pod2", QOS_LS, 49999, OUT_REFUSED},
		{"kubepods/ls/pod3", QOS_LS, 400000,
		 OUT_REFUSED}, /* unlimited: any limit lowers it */
		{"kubepods/ls/pod3", QOS_LS, -1, OUT_UNCHANGED},
		{"kubepods/ls/pod3", QOS_BE, 400000, OUT_APPLIED}, /* the rule is LS's only */
	};
	struct fx fx, *f = &fx;
	struct act_result r;

	(void)state;
	setup_fx(f, false);
	for (size_t i = 0; i < ARRAY_LEN(steps); i++)
		expect(f, ACT_CPU_QUOTA, steps[i].unit, steps[i].cls, steps[i].quota, NULL,
		       steps[i].want);
	act(f, ACT_CPU_QUOTA, "kubepods/ls/pod2", QOS_LS, 10000, NULL, &r);
	assert_string_equal(r.why,
			    "never lowers an LS limit: \"10000\" is below the original \"50000\"");
	actuator_close(f->a);
}

static void test_unchanged(void **state)
{
	struct fx fx, *f = &fx;

	(void)state;
	for (int v2 = 0; v2 <= 1; v2++) {
		setup_fx(f, v2);
		expect(f, ACT_CPU_QUOTA, P1, QOS_BE, 200000, NULL, OUT_UNCHANGED);
		expect(f, ACT_CPU_BURST, P1, QOS_BE, 0, NULL, OUT_UNCHANGED);
		expect(f, ACT_CPU_IDLE, P1, QOS_BE, 0, NULL, OUT_UNCHANGED);
		expect(f, ACT_CPUSET, P1, QOS_BE, 0, "3,0,1-2", OUT_UNCHANGED);
		NO_LOG();
		assert_false(exists(f->journal));
		actuator_close(f->a);
	}
}

static void test_cpuset_order(void **state)
{
	struct fx fx, *f = &fx;

	(void)state;
	for (int v2 = 0; v2 <= 1; v2++) {
		setup_fx(f, v2);
		/* shrink: deepest first */
		expect(f, ACT_CPUSET, P1, QOS_BE, 0, "2-3", OUT_APPLIED);
		LOG("be/pod1/c1/x cpus=2-3", "be/pod1/c1 cpus=2-3", "be/pod1 cpus=2-3");
		/* grow: the unit first */
		expect(f, ACT_CPUSET, P1, QOS_BE, 0, "1-3", OUT_APPLIED);
		LOG("be/pod1 cpus=1-3", "be/pod1/c1 cpus=1-3", "be/pod1/c1/x cpus=1-3");
		/* neither: grow to the union, then shrink */
		expect(f, ACT_CPUSET, P4, QOS_BE, 0, "1", OUT_APPLIED);
		LOG("be/pod4 cpus=0-1", "be/pod4/c cpus=0-1", "be/pod4/c cpus=1", "be/pod4 cpus=1");
		assert_string_equal(knob_text(f, "kubepods/be/pod4/c", CG_KNOB_CPUS), "1");
		/*
		 * Restore: pod4 goes back from "1" to "0" the same way; in plain
		 * reverse order of first change, c would get "0" under a parent of "1".
		 */
		assert_int_equal(actuator_restore(f->a), 0);
		LOG("be/pod4 cpus=0-1", "be/pod1 cpus=0-3", "be/pod4/c cpus=0-1",
		    "be/pod1/c1 cpus=0-3", "be/pod1/c1/x cpus=0-3", "be/pod4/c cpus=0",
		    "be/pod4 cpus=0");
		assert_false(exists(f->journal));
		for (size_t i = 0; i < ARRAY_LEN(tree); i++)
			assert_string_equal(knob_text(f, tree[i].rel, CG_KNOB_CPUS), tree[i].cpus);
		/* a unit without CPUs gets some, its child without any is left alone ... */
		expect(f, ACT_CPUSET, "kubepods/be/pod5", QOS_BE, 0, "2", OUT_APPLIED);
		LOG("be/pod5 cpus=2");
		/* ... and goes back to none (the knob layer writes "" as a newline) */
		assert_int_equal(actuator_restore(f->a), 0);
		LOG("be/pod5 cpus=");
		assert_string_equal(knob_text(f, "kubepods/be/pod5", CG_KNOB_CPUS), "");
		actuator_close(f->a);
	}
}

static void test_quota_nesting(void **state)
{
	struct fx fx, *f = &fx;

	(void)state;
	setup_fx(f, false);
	expect(f, ACT_CPU_QUOTA, P1, QOS_BE, 300000, NULL, OUT_APPLIED);
	LOG("be/pod1 quota=300000"); /* c1's 100000 fits; x is unlimited */
	expect(f, ACT_CPU_QUOTA, P1, QOS_BE, 50000, NULL, OUT_APPLIED);
	LOG("be/pod1/c1 quota=50000", "be/pod1 quota=50000");
	expect(f, ACT_CPU_QUOTA, P1, QOS_BE, 80000, NULL, OUT_APPLIED);
	LOG("be/pod1 quota=80000", "be/pod1/c1 quota=80000");
	/* c1 never goes above its own original */
	expect(f, ACT_CPU_QUOTA, P1, QOS_BE, 900000, NULL, OUT_APPLIED);
	LOG("be/pod1 quota=900000", "be/pod1/c1 quota=100000");
	expect(f, ACT_CPU_QUOTA, P1, QOS_BE, 20000, NULL, OUT_APPLIED);
	LOG("be/pod1/c1 quota=20000", "be/pod1 quota=20000");
	/* in reverse order of first change c1 (100000) would go back before pod1 (20000) */
	assert_int_equal(actuator_restore(f->a), 0);
	LOG("be/pod1 quota=200000", "be/pod1/c1 quota=100000");
	actuator_close(f->a);

	/* v2: the unit only */
	setup_fx(f, true);
	expect(f, ACT_CPU_QUOTA, P1, QOS_BE, 50000, NULL, OUT_APPLIED);
	LOG("be/pod1 quota=50000 100000");
	assert_string_equal(knob_text(f, C1, CG_KNOB_QUOTA), "100000 100000");
	actuator_close(f->a);
}

static void test_burst_idle_unit_only(void **state)
{
	struct fx fx, *f = &fx;
	struct act_result r;

	(void)state;
	for (int v2 = 0; v2 <= 1; v2++) {
		setup_fx(f, v2);
		assert_int_equal(act(f, ACT_CPU_BURST, P1, QOS_LS, 400000, NULL, &r), OUT_APPLIED);
		assert_string_equal(r.before, "0");
		assert_string_equal(r.after, "400000");
		assert_int_equal(act(f, ACT_CPU_IDLE, P1, QOS_BE, 1, NULL, &r), OUT_APPLIED);
		assert_string_equal(r.before, "0");
		assert_string_equal(r.after, "1");
		LOG("be/pod1 burst=400000", "be/pod1 idle=1");
		assert_int_equal(act(f, ACT_CPU_QUOTA, P1, QOS_BE, 50000, NULL, &r), OUT_APPLIED);
		assert_string_equal(r.before, v2 ? "200000 100000" : "200000");
		assert_string_equal(r.after, v2 ? "50000 100000" : "50000");
		actuator_close(f->a);
	}
}

/*
 * Batch resources: the weight and the memory limit of a BE unit, never of an
 * LS one; a weight release waits while cpu.idle is 1; a clean stop restores
 * both.
 */
static void test_batch_weight_and_memory(void **state)
{
	struct fx fx, *f = &fx;
	struct action rel = {.kind = ACT_CPU_WEIGHT, .cls = QOS_BE, .restore = true};
	struct act_result r;
	const char *unlimited;

	(void)state;
	xsnprintf(rel.path, sizeof(rel.path), "%s", P1);
	for (int v2 = 0; v2 <= 1; v2++) {
		setup_fx(f, v2);
		unlimited = v2 ? "max" : "9223372036854771712";
		assert_int_equal(act(f, ACT_MEM_LIMIT, P1, QOS_BE, 512 << 20, NULL, &r),
				 OUT_APPLIED);
		assert_string_equal(r.before, unlimited);
		assert_string_equal(r.after, "536870912");
		assert_int_equal(act(f, ACT_CPU_WEIGHT, P1, QOS_BE, v2 ? 20 : 512, NULL, &r),
				 OUT_APPLIED);
		assert_string_equal(r.before, v2 ? "100" : "1024");
		LOG("be/pod1 mem=536870912", v2 ? "be/pod1 weight=20" : "be/pod1 weight=512");
		expect(f, ACT_MEM_LIMIT, "kubepods/ls/pod3", QOS_LS, 1 << 20, NULL, OUT_REFUSED);
		expect(f, ACT_CPU_WEIGHT, "kubepods/ls/pod3", QOS_LS, 2, NULL, OUT_REFUSED);
		expect(f, ACT_MEM_LIMIT, P1, QOS_BE, -2, NULL, OUT_REFUSED);
		expect(f, ACT_CPU_IDLE, P1, QOS_BE, 1, NULL, OUT_APPLIED);
		actuator_apply(f->a, &rel, &r);
		assert_string_equal(decision_outcome_name(r.outcome), "unchanged");
		assert_non_null(strstr(r.why, "cpu.idle is 1"));
		f->n = 0;
		assert_int_equal(actuator_restore(f->a), 0);
		assert_string_equal(knob_text(f, P1, CG_KNOB_MEM_MAX), unlimited);
		assert_string_equal(knob_text(f, P1, CG_KNOB_IDLE), "0");
		assert_string_equal(knob_text(f, P1, CG_KNOB_WEIGHT), v2 ? "100" : "1024");
		actuator_close(f->a);
	}
}

/* plan.release: one knob of one unit (and its descendants) back to the owner's value. */
static void test_release(void **state)
{
	struct fx fx, *f = &fx;
	struct action a = {.kind = ACT_CPU_QUOTA, .cls = QOS_BE, .restore = true};
	struct action idle = {.kind = ACT_CPU_IDLE, .cls = QOS_BE};
	struct act_result r;
	char dir[PATH_MAX];

	(void)state;
	xsnprintf(a.path, sizeof(a.path), "%s", P1);
	xsnprintf(idle.path, sizeof(idle.path), "%s", P1);
	for (int v2 = 0; v2 <= 1; v2++) {
		setup_fx(f, v2);
		expect(f, ACT_CPU_QUOTA, P1, QOS_BE, 50000, NULL, OUT_APPLIED);
		expect(f, ACT_CPU_IDLE, P1, QOS_BE, 1, NULL, OUT_APPLIED);
		actuator_apply(f->a, &a, &r);
		assert_string_equal(decision_outcome_name(r.outcome), "applied");
		assert_string_equal(knob_text(f, P1, CG_KNOB_QUOTA),
				    v2 ? "200000 100000" : "200000");
		assert_string_equal(knob_text(f, C1, CG_KNOB_QUOTA),
				    v2 ? "100000 100000" : "100000");
		assert_string_equal(knob_text(f, P1, CG_KNOB_IDLE), "1"); /* not asked */
		actuator_apply(f->a, &a, &r);
		assert_string_equal(decision_outcome_name(r.outcome), "unchanged");
		/* Releasing cpu.idle brings back the weight the kernel hid (and reset). */
		xsnprintf(dir, sizeof(dir), "%s/%s", f->c.root[CTRL_CPU], P1);
		put(dir, cg_knob_file(&f->c, CG_KNOB_WEIGHT), v2 ? "0" : "3");
		idle.restore = true;
		actuator_apply(f->a, &idle, &r);
		assert_string_equal(decision_outcome_name(r.outcome), "applied");
		assert_string_equal(knob_text(f, P1, CG_KNOB_IDLE), "0");
		assert_string_equal(knob_text(f, P1, CG_KNOB_WEIGHT), v2 ? "100" : "1024");
		actuator_close(f->a);
	}
}

/* Whatever a policy asks, an LS unit keeps its CPUs and its weight and is not evicted. */
static void test_ls_never_squeezed(void **state)
{
	static const char *const ls = "kubepods/ls/pod3";
	struct fx fx, *f = &fx;

	(void)state;
	setup_fx(f, false);
	expect(f, ACT_CPUSET, ls, QOS_LS, 0, "0", OUT_REFUSED);
	expect(f, ACT_CPU_IDLE, ls, QOS_LSR, 1, NULL, OUT_REFUSED);
	expect(f, ACT_EVICT, ls, QOS_LSE, 0, NULL, OUT_REFUSED);
	expect(f, ACT_CPU_IDLE, ls, QOS_LS, 0, NULL, OUT_UNCHANGED);
	assert_int_equal(f->n, 0);
	actuator_close(f->a);
}

/* The split's move of an LS unit: ls_split (cpusets of the shared pool only) or an action on unit.
 */
static enum decision_outcome split_move(struct fx *f, const char *unit, enum qos_class cls,
					const char *cpus)
{
	struct action a = {.kind = ACT_CPUSET, .cls = cls, .ls_split = true};
	struct act_result r;

	xsnprintf(a.path, sizeof(a.path), "%s", unit);
	xsnprintf(a.cpus, sizeof(a.cpus), "%s", cpus);
	actuator_apply(f->a, &a, &r);
	return r.outcome;
}

/*
 * The split may move an LS unit of the shared pool off BE's CPUs, again
 * (its original, journaled, is still the pool), and gives it back; not an
 * LS unit its owner placed on fewer CPUs, nor an LSR unit.
 */
static void test_ls_split(void **state)
{
	static const char *const ls = "kubepods/ls/pod3", *const pinned = "kubepods/ls/pod2";
	struct fx fx, *f = &fx;
	struct action back = {.kind = ACT_CPUSET, .cls = QOS_LS, .restore = true};
	struct act_result r;
	char dir[PATH_MAX];

	(void)state;
	setup_fx(f, false);
	assert_int_equal(split_move(f, ls, QOS_LS, "2-3"), OUT_APPLIED);
	assert_string_equal(knob_text(f, ls, CG_KNOB_CPUS), "2-3");
	assert_int_equal(split_move(f, ls, QOS_LS, "1-3"), OUT_APPLIED);
	assert_string_equal(knob_text(f, ls, CG_KNOB_CPUS), "1-3");
	xsnprintf(back.path, sizeof(back.path), "%s", ls);
	actuator_apply(f->a, &back, &r);
	assert_int_equal(r.outcome, OUT_APPLIED);
	assert_string_equal(knob_text(f, ls, CG_KNOB_CPUS), "0-3");

	xsnprintf(dir, sizeof(dir), "%s/%s", f->c.root[CTRL_CPUSET], pinned);
	put(dir, "cpuset.cpus", "1");
	f->n = 0;
	assert_int_equal(split_move(f, pinned, QOS_LS, "0"), OUT_REFUSED);
	assert_int_equal(split_move(f, ls, QOS_LSR, "0"), OUT_REFUSED);
	assert_int_equal(f->n, 0);
	actuator_close(f->a);
}

static pid_t victim(void)
{
	int cue[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe(cue), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		/* Not the state directory's lock: the parent reopens the actuator. */
		for (int fd = 3; fd < 1024; fd++)
			if (fd != cue[1])
				close(fd);
		close(cue[1]); /* last: the parent's EOF says the lock is let go */
		alarm(60);     /* gone by itself should a failed assertion skip its kill */
		pause();
		_exit(0);
	}
	close(cue[1]);
	assert_int_equal(read(cue[0], &c, 1), 0);
	close(cue[0]);
	return pid;
}

static void test_evict(void **state)
{
	struct fx fx, *f = &fx;
	struct act_result r;
	char dir[PATH_MAX], text[32];
	pid_t pid;

	(void)state;
	setup_fx(f, false);
	assert_int_equal(act(f, ACT_REPORT, P1, QOS_BE, 0, NULL, &r), OUT_REPORTED);
	pid = victim();
	xsnprintf(dir, sizeof(dir), "%s/%s", f->c.root[CTRL_CPU], C1);
	xsnprintf(text, sizeof(text), "%d", pid);
	put(dir, "cgroup.procs", text);
	put(f->c.root[CTRL_FREEZER], "kubepods/be/pod1/freezer.state", "THAWED");

	f->o.evict = EVICT_REPORT;
	reopen(f);
	assert_int_equal(act(f, ACT_EVICT, P1, QOS_BE, 0, NULL, &r), OUT_REPORTED);
	f->o.evict = EVICT_KUBERNETES;
	reopen(f);
	/* the agent hands it to the API: the actuator only checks and says so */
	assert_int_equal(act(f, ACT_EVICT, P1, QOS_BE, 0, NULL, &r), OUT_REQUESTED);
	assert_string_equal(r.after, "evict through the Eviction API");
	f->o.dry_run = true;
	reopen(f);
	assert_int_equal(act(f, ACT_EVICT, P1, QOS_BE, 0, NULL, &r), OUT_DRY_RUN);
	assert_string_equal(r.after, "would evict through the Eviction API");
	assert_int_equal(act(f, ACT_EVICT, P1, QOS_LS, 0, NULL, &r), OUT_REFUSED);
	f->o.dry_run = false;
	f->o.evict = EVICT_KILL;
	f->o.dry_run = true;
	reopen(f);
	assert_int_equal(act(f, ACT_EVICT, P1, QOS_BE, 0, NULL, &r), OUT_DRY_RUN);
	assert_string_equal(r.after, "would kill 1 tasks");
	assert_int_equal(kill(pid, 0), 0);
	f->o.dry_run = false;
	reopen(f);
	signal(SIGCHLD, SIG_IGN); /* the killed child leaves no zombie */
	assert_int_equal(act(f, ACT_EVICT, P1, QOS_BE, 0, NULL, &r), OUT_APPLIED);
	assert_string_equal(r.before, "1 tasks");
	assert_string_equal(r.after, "killed 1 tasks");
	for (int i = 0; i < 100 && !kill(pid, 0); i++)
		usleep(10000);
	assert_int_equal(kill(pid, 0), -1);
	signal(SIGCHLD, SIG_DFL);
	LOG("be/pod1 =kill", "be/pod1 =kill");
	actuator_close(f->a);
}

static void test_vanished_forget_failed(void **state)
{
	struct fx fx, *f = &fx;
	struct act_result r;
	char dir[PATH_MAX];
	int64_t q;

	(void)state;
	setup_fx(f, true);
	assert_int_equal(act(f, ACT_CPU_QUOTA, "kubepods/be/gone", QOS_BE, 5000, NULL, &r),
			 OUT_FAILED);
	assert_int_equal(r.err, -ENOENT);
	assert_string_equal(r.why, "cgroup kubepods/be/gone vanished");
	assert_false(actuator_original_quota(f->a, P1, &q));
	expect(f, ACT_CPU_QUOTA, P1, QOS_BE, 50000, NULL, OUT_APPLIED);
	assert_true(actuator_original_quota(f->a, P1, &q));
	assert_int_equal(q, 200000);
	assert_true(exists(f->journal));
	actuator_forget(f->a, P1);
	assert_false(actuator_original_quota(f->a, P1, &q));
	assert_false(exists(f->journal));

	/* a write the kernel refuses */
	xsnprintf(dir, sizeof(dir), "%s/%s/cpu.idle", f->c.root[CTRL_CPU], P1);
	assert_int_equal(remove(dir), 0);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(act(f, ACT_CPU_IDLE, P1, QOS_BE, 1, NULL, &r), OUT_FAILED);
	assert_int_equal(r.err, -EISDIR);
	actuator_close(f->a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_ls_never_lowered),
		cmocka_unit_test(test_unchanged),
		cmocka_unit_test(test_cpuset_order),
		cmocka_unit_test(test_ls_split),
		cmocka_unit_test(test_quota_nesting),
		cmocka_unit_test(test_burst_idle_unit_only),
		cmocka_unit_test(test_evict),
		cmocka_unit_test(test_vanished_forget_failed),
		cmocka_unit_test(test_release),
		cmocka_unit_test(test_ls_never_squeezed),
		cmocka_unit_test(test_batch_weight_and_memory),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
