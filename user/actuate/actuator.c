// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "actuate/actuator.h"

#include <errno.h>
#include <limits.h>
#include <unistd.h>
#include <sys/file.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "actuate/internal.h"
#include "cgroup/path.h"
#include "log.h"
#include "private_dir.h"

/* Entries a previous run journaled outside today's subtree are not ours to write. */
static void drop_foreign(struct actuator *a)
{
	for (size_t i = a->j.n; i-- > 0;) {
		const struct journal_entry *e = &a->j.v[i];

		if (act_in_subtree(a, e->knob, e->rel))
			continue;
		log_warn("%s: %s/%s is outside the managed subtree \"%s\": not restoring it to "
			 "\"%s\"",
			 a->j.path, e->rel, cg_knob_file(a->c, e->knob), a->subtree, e->orig);
		journal_remove_at(&a->j, i);
	}
}

static int reconcile(struct actuator *a, char *err, size_t errlen)
{
	int ret;

	drop_foreign(a);
	if (a->dry_run)
		log_info("dry run: %s holds %zu originals a previous run left; restoring none",
			 a->j.path, a->j.n);
	ret = act_restore_all(a, &a->reconciled);
	/*
	 * The writes were made; only the journal could not shrink (a full
	 * disk): the file on disk still lists what was restored, and restoring
	 * an original twice is harmless. Not a reason to stop the start.
	 */
	if (ret == -ENOMEM) {
		snprintf(err, errlen, "%s: %s", a->j.path, strerror(-ret));
		return ret;
	}
	if (ret < 0)
		log_err("reconciled %s: %zu settings restored, but the journal still lists them (%s)",
			a->j.path, a->reconciled, strerror(-ret));
	else if (!a->dry_run)
		log_info("reconciled %s: %zu settings restored, %d failed (kept in the journal)",
			 a->j.path, a->reconciled, ret);
	return 0;
}

/*
 * A damaged journal never stops the start (unless it cannot even be moved
 * aside): it is kept for a person under another name, said loudly, and what
 * it provably holds is written to a fresh journal before the reconcile
 * restores it, so that a crash in between loses nothing. A stale one is
 * removed. Dry-run leaves the file where it is.
 */
static int settle_journal(struct actuator *a, bool stale, char *err, size_t errlen)
{
	struct journal *j = &a->j;
	int ret;

	if (j->damage[0] && a->dry_run) {
		log_err("%s is damaged (%s); dry run: leaving it in place; %zu settings it provably "
			"holds",
			j->path, j->damage, j->n);
		return 0;
	}
	if (j->damage[0]) {
		ret = journal_set_aside(j, err, errlen);
		if (ret)
			return ret;
		log_err("%s is damaged (%s): moved aside to %s for a person to read; restoring the "
			"%zu settings it provably holds%s",
			j->path, j->damage, j->set_aside, j->n,
			j->n ? "" : " (any others it names must be restored by hand)");
	}
	if (!a->dry_run && (stale || j->set_aside[0]))
		journal_sync(j, a->c, a->subtree); /* a failure is logged and counted there */
	return 0;
}

/*
 * Two agents on one state directory would overwrite each other's journal,
 * and restore each other's changes as their own: the second one refuses to
 * start. Dry-run writes no journal and takes no lock.
 */
static int lock_state_dir(struct actuator *a, const char *dir, char *err, size_t errlen)
{
	char path[PATH_MAX];

	if (a->dry_run)
		return 0;
	snprintf(path, sizeof(path), "%s/lock", dir);
	a->lock_fd = openat(a->state_fd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (a->lock_fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	if (flock(a->lock_fd, LOCK_EX | LOCK_NB)) {
		int e = errno;

		snprintf(err, errlen,
			 e == EWOULDBLOCK
				 ? "%s is held by another qoslet agent: one agent per state_dir"
				 : "locking %s: %s",
			 path, strerror(e));
		return -e;
	}
	return 0;
}

int actuator_open(struct actuator **out, const struct actuator_opts *o, char *err, size_t errlen)
{
	struct actuator *a;
	bool stale = false;
	int ret;

	*out = NULL;
	if (!o->ctrls || !o->state_dir || !o->state_dir[0]) {
		snprintf(err, errlen, "the actuator needs cgroup mounts and a state directory");
		return -EINVAL;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->state_fd = a->lock_fd = a->tree_dir_fd = -1;
	a->c = o->ctrls;
	a->dry_run = o->dry_run;
	a->evict = o->evict;
	a->on_write = o->on_write;
	a->ctx = o->ctx;
	if (o->subtree && o->subtree[0] &&
	    cgroup_path_normalize("", o->subtree, a->subtree, sizeof(a->subtree))) {
		snprintf(err, errlen, "bad managed subtree \"%s\"", o->subtree);
		ret = -EINVAL;
		goto fail;
	}
	if (snprintf(a->j.path, sizeof(a->j.path), "%s/actuator.json", o->state_dir) >=
	    (int)sizeof(a->j.path)) {
		snprintf(err, errlen, "state directory path too long");
		ret = -ENAMETOOLONG;
		goto fail;
	}
	if (!a->dry_run && (a->state_fd = private_dir_open(o->state_dir, err, errlen)) < 0) {
		ret = a->state_fd;
		goto fail;
	}
	ret = lock_state_dir(a, o->state_dir, err, errlen);
	if (!ret)
		ret = tree_lock(a, o->tree_lock_dir ?: ACT_TREE_LOCK_DIR, err, errlen);
	if (ret)
		goto fail;
	ret = journal_load(&a->j, a->c, &stale);
	if (ret)
		snprintf(err, errlen, "%s: %s", a->j.path, strerror(-ret));
	else
		ret = settle_journal(a, stale, err, errlen);
	if (!ret && a->j.n)
		ret = reconcile(a, err, errlen);
	if (ret)
		goto fail;
	*out = a;
	return 0;
fail:
	actuator_close(a);
	return ret;
}

void actuator_set_evict(struct actuator *a, enum evict_action evict)
{
	a->evict = evict;
}

size_t actuator_reconciled(const struct actuator *a)
{
	return a->reconciled;
}

void actuator_journal_errors(const struct actuator *a, uint64_t *set_aside, uint64_t *write_errors)
{
	*set_aside = a->j.set_aside[0] != '\0';
	*write_errors = a->j.write_errors;
}

bool actuator_original_quota(const struct actuator *a, const char *rel, int64_t *quota_us)
{
	const struct journal_entry *e = journal_find(&a->j, CG_KNOB_QUOTA, rel);

	return e && !cg_knob_parse(a->c, CG_KNOB_QUOTA, e->orig, quota_us);
}

bool actuator_holds_memory(const struct actuator *a, const char *rel)
{
	return journal_find(&a->j, CG_KNOB_MEM_MAX, rel) ||
	       journal_find(&a->j, CG_KNOB_MEM_HIGH, rel);
}

bool actuator_changed(const struct actuator *a, size_t i, enum cg_knob *knob, const char **rel)
{
	if (i >= a->j.n)
		return false;
	*knob = a->j.v[i].knob;
	*rel = a->j.v[i].rel;
	return true;
}

void actuator_forget(struct actuator *a, const char *rel)
{
	bool protected[CG_KNOB_NR] = {false};
	size_t n = a->j.n;
	int err;

	for (size_t i = a->j.n; i-- > 0;) {
		if (!cgroup_path_within(a->j.v[i].rel, rel))
			continue;
		protected[a->j.v[i].knob] = true;
		journal_remove_at(&a->j, i);
	}
	/* Its protection leaves its ancestors' sums (else memory_recursiveprot hands it to others).
	 */
	for (int k = 0; k < CG_KNOB_NR; k++)
		if (protected[k] && act_is_protection(k) && act_sync_ancestors(a, k, rel, 0))
			log_warn("%s left: its ancestors' %s could not be lowered", rel,
				 cg_knob_file(a->c, k));
	if (a->dry_run || n == a->j.n)
		return;
	err = journal_sync(&a->j, a->c, a->subtree);
	if (err)
		log_warn("journal %s: %s", a->j.path, strerror(-err));
}

int actuator_restore(struct actuator *a)
{
	size_t restored;
	int ret = act_restore_all(a, &restored);

	if (ret >= 0 && !a->dry_run)
		log_info("restored %zu settings, %d failed", restored, ret);
	return ret;
}

void actuator_close(struct actuator *a)
{
	if (!a)
		return;
	journal_free(&a->j);
	tree_unlock(a);
	if (a->lock_fd >= 0)
		close(a->lock_fd);
	if (a->state_fd >= 0)
		close(a->state_fd);
	free(a);
}
