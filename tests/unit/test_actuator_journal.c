// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The actuator's journal: crash and reconcile, dry-run, stale journals (fixture:
 * actuator_fixture.h). */
#include <fcntl.h>
#include <sys/file.h>

#include "actuator_fixture.h"
#include "readfile.h"

/* The journal's changes as "cgroup file=original" lines. */
static void assert_journal(const char *path, const char *const *want)
{
	json_error_t jerr;
	json_t *root = json_load_file(path, 0, &jerr), *changes, *ch;
	size_t i;

	assert_non_null(root);
	changes = json_object_get(root, "changes");
	assert_true(json_is_array(changes));
	json_array_foreach(changes, i, ch)
	{
		char line[600];

		assert_non_null(want[i]);
		xsnprintf(line, sizeof(line), "%s %s=%s",
			  json_string_value(json_object_get(ch, "cgroup")),
			  json_string_value(json_object_get(ch, "file")),
			  json_string_value(json_object_get(ch, "original")));
		assert_string_equal(line, want[i]);
	}
	assert_null(want[i]);
	json_decref(root);
}

static void test_crash_reconcile(void **state)
{
	struct fx fx, *f = &fx;
	char path[PATH_MAX];

	(void)state;
	for (int v2 = 0; v2 <= 1; v2++) {
		setup_fx(f, v2);
		expect(f, ACT_CPU_QUOTA, P1, QOS_BE, 50000, NULL, OUT_APPLIED);
		expect(f, ACT_CPUSET, P1, QOS_BE, 0, "1", OUT_APPLIED);
		expect(f, ACT_CPU_IDLE, P1, QOS_BE, 1, NULL, OUT_APPLIED);
		expect(f, ACT_CPUSET, P4, QOS_BE, 0, "0-1", OUT_APPLIED);
		if (!v2) /* v1: the nested quota is journaled too, before its parent */
			assert_journal(
				f->journal,
				(const char *const[]){"kubepods/be/pod1/c1 cpu.cfs_quota_us=100000",
						      "kubepods/be/pod1 cpu.cfs_quota_us=200000",
						      "kubepods/be/pod1/c1/x cpuset.cpus=0-3",
						      "kubepods/be/pod1/c1 cpuset.cpus=0-3",
						      "kubepods/be/pod1 cpuset.cpus=0-3",
						      "kubepods/be/pod1 cpu.shares=1024",
						      "kubepods/be/pod1 cpu.idle=0",
						      "kubepods/be/pod4 cpuset.cpus=0",
						      "kubepods/be/pod4/c cpuset.cpus=0", NULL});
		/* as the kernel does: an idle group shows the idle weight */
		xsnprintf(path, sizeof(path), "%s/%s", f->c.root[CTRL_CPU], P1);
		put(path, cg_knob_file(&f->c, CG_KNOB_WEIGHT), v2 ? "0" : "3");
		actuator_close(f->a); /* a crash: nothing restored */
		/* pod4's container vanished while qoslet was down */
		for (int k = 0; k < (v2 ? 1 : CTRL_NR); k++) {
			char dir[PATH_MAX];

			xsnprintf(dir, sizeof(dir), "%s/kubepods/be/pod4/c", f->c.root[k]);
			assert_int_equal(tmpdir_remove(dir), 0);
		}
		f->n = 0;
		open_a(f);
		assert_int_equal(actuator_reconciled(f->a), v2 ? 7 : 8);
		/* widen parents first, then idle, then narrow children first */
		if (v2)
			LOG("be/pod1 cpus=0-3", "be/pod1 quota=200000 100000",
			    "be/pod1/c1 cpus=0-3", "be/pod1/c1/x cpus=0-3", "be/pod1 idle=0",
			    "be/pod1 weight=100", "be/pod4 cpus=0");
		else
			LOG("be/pod1 cpus=0-3", "be/pod1 quota=200000", "be/pod1/c1 cpus=0-3",
			    "be/pod1/c1 quota=100000", "be/pod1/c1/x cpus=0-3", "be/pod1 idle=0",
			    "be/pod1 weight=1024", "be/pod4 cpus=0");
		assert_false(exists(f->journal));
		assert_string_equal(knob_text(f, C1, CG_KNOB_QUOTA),
				    v2 ? "100000 100000" : "100000");
		actuator_close(f->a);
	}
}

static void test_dry_run(void **state)
{
	char lock[PATH_MAX];
	struct fx fx, *f = &fx;
	struct act_result r;
	int64_t q;

	(void)state;
	setup_fx(f, false);
	actuator_close(f->a);
	xsnprintf(lock, sizeof(lock), "%s/lock", f->state);
	assert_int_equal(unlink(lock), 0);
	assert_int_equal(rmdir(f->state), 0);
	f->o.dry_run = true;
	open_a(f);
	assert_false(exists(f->state)); /* not even the state directory */
	assert_int_equal(act(f, ACT_CPU_QUOTA, P1, QOS_BE, 50000, NULL, &r), OUT_DRY_RUN);
	assert_string_equal(r.before, "200000");
	assert_string_equal(r.after, "50000");
	LOG("be/pod1/c1 quota=50000", "be/pod1 quota=50000");
	expect(f, ACT_CPUSET, P4, QOS_BE, 0, "1", OUT_DRY_RUN);
	f->n = 0;
	expect(f, ACT_CPU_QUOTA, P1, QOS_BE, 200000, NULL, OUT_UNCHANGED);
	assert_string_equal(knob_text(f, P1, CG_KNOB_QUOTA), "200000");
	assert_string_equal(knob_text(f, C1, CG_KNOB_QUOTA), "100000");
	assert_string_equal(knob_text(f, P4, CG_KNOB_CPUS), "0");
	assert_false(exists(f->state));
	assert_int_equal(actuator_restore(f->a), 0);
	NO_LOG();
	actuator_close(f->a);

	/* a crashed real run's journal: dry-run restores nothing and keeps it */
	f->o.dry_run = false;
	open_a(f);
	expect(f, ACT_CPU_QUOTA, P1, QOS_BE, 50000, NULL, OUT_APPLIED);
	f->o.dry_run = true;
	f->n = 0;
	reopen(f);
	assert_int_equal(actuator_reconciled(f->a), 0);
	LOG("be/pod1 quota=200000", "be/pod1/c1 quota=100000"); /* would-be writes */
	assert_string_equal(knob_text(f, P1, CG_KNOB_QUOTA), "50000");
	assert_true(actuator_original_quota(f->a, P1, &q));
	assert_int_equal(q, 200000);
	assert_int_equal(actuator_restore(f->a), 0);
	f->n = 0;
	assert_true(exists(f->journal));
	f->o.dry_run = false;
	reopen(f);
	assert_int_equal(actuator_reconciled(f->a), 2);
	assert_false(exists(f->journal));
	actuator_close(f->a);
}

static void test_stale_journal(void **state)
{
	struct fx fx, *f = &fx;

	(void)state;
	setup_fx(f, false);
	actuator_close(f->a);
	put(f->state, "actuator.json",
	    "{\"version\": 1, \"boot_id\": \"another-boot\", \"changes\": [{\"cgroup\": "
	    "\"kubepods/be/pod1\", \"file\": \"cpu.cfs_quota_us\", \"original\": \"1000\"}]}");
	open_a(f);
	assert_int_equal(actuator_reconciled(f->a), 0);
	assert_false(exists(f->journal));
	assert_string_equal(knob_text(f, P1, CG_KNOB_QUOTA), "200000");
	actuator_close(f->a);

	/* a journal that is not one never stops the start: it is moved aside for a person */
	put(f->state, "actuator.json", "{\"changes\": 3");
	open_a(f);
	assert_false(exists(f->journal));
	assert_int_equal(actuator_reconciled(f->a), 0);
	actuator_close(f->a);
}

/* The journal's text with edit applied: cut at `cut` bytes from its end, or "version" replaced. */
static void damage(struct fx *f, size_t cut, bool future)
{
	char text[65536], *v;
	FILE *fp = fopen(f->journal, "r");
	size_t n;

	assert_non_null(fp);
	n = fread(text, 1, sizeof(text) - 1, fp);
	fclose(fp);
	text[n] = '\0';
	assert_true(n > cut);
	text[n - cut] = '\0';
	v = strstr(text, "\"version\": 1");
	assert_non_null(v);
	if (future)
		v[strlen("\"version\": ")] = '2';
	fp = fopen(f->journal, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

/* How many files of the state directory are set-aside journals. */
static int set_aside_files(struct fx *f)
{
	char cmd[PATH_MAX + 64];
	int n = -1;
	FILE *p;

	xsnprintf(cmd, sizeof(cmd), "ls %s | grep -c '^actuator.json.bad-'", f->state);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_int_equal(fscanf(p, "%d", &n), 1);
	pclose(p);
	return n;
}

static void test_damaged_journal(void **state)
{
	struct fx fx, *f = &fx;

	(void)state;
	/* truncated inside its last entry: the whole entries before it are restored */
	setup_fx(f, true);
	expect(f, ACT_CPU_QUOTA, P1, QOS_BE, 50000, NULL, OUT_APPLIED);
	expect(f, ACT_CPUSET, P4, QOS_BE, 0, "1", OUT_APPLIED); /* pod4/c, then pod4 */
	actuator_close(f->a);
	damage(f, 20, false);
	open_a(f);
	assert_int_equal(actuator_reconciled(f->a), 2);
	assert_string_equal(knob_text(f, P1, CG_KNOB_QUOTA), "200000 100000");
	assert_int_equal(set_aside_files(f), 1);
	assert_false(exists(f->journal));
	actuator_close(f->a);

	/* a future version: nothing restored, kept for a person, the start goes on */
	setup_fx(f, false);
	expect(f, ACT_CPU_QUOTA, P1, QOS_BE, 50000, NULL, OUT_APPLIED);
	actuator_close(f->a);
	damage(f, 0, true);
	open_a(f);
	assert_int_equal(actuator_reconciled(f->a), 0);
	assert_string_equal(knob_text(f, C1, CG_KNOB_QUOTA), "50000");
	assert_int_equal(set_aside_files(f), 1);
	actuator_close(f->a);
}

/*
 * A journal is a file: a path in it that leaves the managed subtree must not
 * pass the subtree check as a text prefix, and a restore must write nothing
 * there (issue 37, row 5).
 */
static void test_journal_path_escape(void **state)
{
	struct fx fx, *f = &fx;
	char outside[PATH_MAX];

	(void)state;
	setup_fx(f, false);
	actuator_close(f->a);
	xsnprintf(outside, sizeof(outside), "%s/outside", f->c.root[CTRL_CPU]);
	assert_int_equal(mkdir(outside, 0755), 0);
	put(outside, "cpu.cfs_quota_us", "-1");
	put(f->state, "actuator.json",
	    "{\"version\": 1, \"changes\": [{\"cgroup\": \"kubepods/../outside\", \"file\": "
	    "\"cpu.cfs_quota_us\", \"original\": \"1000\"}]}");
	f->n = 0;
	open_a(f);
	assert_int_equal(actuator_reconciled(f->a), 0);
	assert_int_equal(f->n, 0); /* nothing written anywhere */
	assert_int_equal(set_aside_files(f), 1);
	actuator_close(f->a);
}

/* Opening with f->o changed: the error, which must name `want` (or succeed when want is NULL). */
static int open_err(struct fx *f, const char *want)
{
	char err[512] = "";
	int ret = actuator_open(&f->a, &f->o, err, sizeof(err));

	print_message("  %s\n", err);
	if (want)
		assert_non_null(strstr(err, want));
	return ret;
}

/*
 * The state and lock directories are the agent's alone: writable by others,
 * or a symlink, they are refused and nothing is written; group and other
 * read bits (a hostPath Kubernetes made 0755) are taken away. A symlink
 * planted for the journal's temp file is not followed.
 */
static void test_private_dirs(void **state)
{
	struct fx fx, *f = &fx;
	char link[PATH_MAX], target[PATH_MAX], buf[32] = "";
	struct stat st;

	(void)state;
	setup_fx(f, false);
	actuator_close(f->a);
	assert_int_equal(chmod(f->state, 0777), 0);
	assert_int_equal(open_err(f, "must be the agent's alone"), -EPERM);
	assert_int_equal(chmod(f->state, 0755), 0);
	assert_int_equal(open_err(f, NULL), 0);
	assert_int_equal(stat(f->state, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	actuator_close(f->a);
	assert_int_equal(chmod(f->locks, 0773), 0);
	assert_int_equal(open_err(f, "must be the agent's alone"), -EPERM);
	assert_int_equal(chmod(f->locks, 0700), 0);

	/* a symlink in place of the state directory */
	xsnprintf(link, sizeof(link), "%s/state-link", f->root);
	assert_int_equal(symlink(f->state, link), 0);
	f->o.state_dir = link;
	assert_int_equal(open_err(f, "a symlink is refused"), -ENOTDIR);
	f->o.state_dir = f->state;

	/* a symlink planted for the temp file points elsewhere: never written through */
	xsnprintf(target, sizeof(target), "%s/victim", f->root);
	put(f->root, "victim", "untouched");
	xsnprintf(link, sizeof(link), "%s/actuator.json.tmp", f->state);
	assert_int_equal(symlink(target, link), 0);
	open_a(f);
	expect(f, ACT_CPU_QUOTA, P1, QOS_BE, 50000, NULL, OUT_APPLIED);
	assert_true(exists(f->journal));
	assert_int_equal(read_file_at(AT_FDCWD, target, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "untouched\n");
	actuator_close(f->a);
}

/*
 * Anyone may open a cgroup directory and flock it: that must not keep the
 * agent from starting (issue 37, row 3). The lock files are root's alone.
 */
static void test_cgroup_flock_by_others(void **state)
{
	struct fx fx, *f = &fx;
	char dir[PATH_MAX];
	int fd;

	(void)state;
	setup_fx(f, false);
	actuator_close(f->a);
	xsnprintf(dir, sizeof(dir), "%s/kubepods", f->c.root[CTRL_CPU]);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	open_a(f);
	actuator_close(f->a);
	close(fd);
}

/* A second acting actuator on another state directory: refused where the trees overlap. */
static void test_second_instance(void **state)
{
	char state2[PATH_MAX], err[512] = "", pid[32];
	struct fx fx, *f = &fx;
	struct actuator_opts o;
	struct actuator *b = NULL;

	(void)state;
	setup_fx(f, false);
	xsnprintf(state2, sizeof(state2), "%s/state2", f->root);
	xsnprintf(pid, sizeof(pid), "(pid %d)", (int)getpid());
	o = f->o;
	o.state_dir = state2;
	/* the same subtree; the whole root above it; a cgroup inside it */
	const char *const overlapping[] = {"kubepods", "", "kubepods/be"};
	for (size_t i = 0; i < ARRAY_LEN(overlapping); i++) {
		o.subtree = overlapping[i];
		err[0] = '\0';
		assert_int_equal(actuator_open(&b, &o, err, sizeof(err)), -EBUSY);
		assert_null(b);
		print_message("  %s: %s\n", overlapping[i], err);
		assert_non_null(strstr(err, "locked by another acting qoslet agent"));
		assert_non_null(strstr(err, pid)); /* the holder, from /proc/locks */
	}
	/* a sibling tree shares the root; a dry run locks nothing */
	o.subtree = "other";
	assert_int_equal(actuator_open(&b, &o, err, sizeof(err)), 0);
	actuator_close(b);
	o.subtree = "kubepods";
	o.dry_run = true;
	assert_int_equal(actuator_open(&b, &o, err, sizeof(err)), 0);
	actuator_close(b);
	/* a subtree not made yet: its parent stands in, exclusively */
	o.dry_run = false;
	o.subtree = "kubepods/notyet/x";
	assert_int_equal(actuator_open(&b, &o, err, sizeof(err)), -EBUSY);
	/* the first one gone, the second acts */
	actuator_close(f->a);
	o.subtree = "kubepods";
	assert_int_equal(actuator_open(&b, &o, err, sizeof(err)), 0);
	f->a = b;
	o.state_dir = f->state;		 /* free again: only the tree collides */
	o.subtree = "kubepods/notyet/x"; /* at kubepods now: shared against exclusive */
	assert_int_equal(actuator_open(&b, &o, err, sizeof(err)), -EBUSY);
	actuator_close(f->a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crash_reconcile),
		cmocka_unit_test(test_dry_run),
		cmocka_unit_test(test_stale_journal),
		cmocka_unit_test(test_damaged_journal),
		cmocka_unit_test(test_second_instance),
		cmocka_unit_test(test_journal_path_escape),
		cmocka_unit_test(test_private_dirs),
		cmocka_unit_test(test_cgroup_flock_by_others),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
