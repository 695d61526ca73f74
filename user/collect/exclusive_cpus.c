// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "collect/exclusive_cpus.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"
#include "log.h"

static int cmp_pod(const void *a, const void *b)
{
	return strcmp(((const struct exclusive_pod *)a)->uid,
		      ((const struct exclusive_pod *)b)->uid);
}

/*
 * Adds the CPUs of list to on[] and to pod[] (the pod's so far: its app
 * containers may reuse its init containers' CPUs, both listed). -EINVAL
 * when list is not a CPU list.
 */
static int add_cpus(const json_t *list, bool *on, bool *pod)
{
	bool cpus[POL_CPUS_MAX];

	if (!json_is_string(list) || cpu_list_parse(json_string_value(list), cpus, POL_CPUS_MAX))
		return -EINVAL;
	for (int c = 0; c < POL_CPUS_MAX; c++) {
		on[c] = on[c] || cpus[c];
		pod[c] = pod[c] || cpus[c];
	}
	return 0;
}

/*
 * The checkpoint's entries: pod UID -> {container name -> CPU list} (the
 * kubelet's format since 1.18), or container id -> CPU list (its first
 * format, which named no pod: the CPUs still count).
 */
static int parse_entries(const json_t *entries, bool *on, struct exclusive_pod **pods,
			 size_t *n_pods)
{
	const char *key;
	json_t *v;
	size_t n = 0;

	if (!entries || json_is_null(entries))
		return 0;
	if (!json_is_object(entries))
		return -EINVAL;
	*pods = calloc(json_object_size(entries) + 1, sizeof(**pods));
	if (!*pods)
		return -ENOMEM;
	json_object_foreach((json_t *)entries, key, v)
	{
		bool pod[POL_CPUS_MAX] = {0};
		uint32_t cpus = 0;
		const char *ctr;
		json_t *list;

		if (json_is_string(v)) {
			if (add_cpus(v, on, pod))
				return -EINVAL;
			continue;
		}
		if (!json_is_object(v) || strlen(key) >= sizeof((*pods)->uid))
			return -EINVAL;
		json_object_foreach(v, ctr, list)
		{
			if (add_cpus(list, on, pod))
				return -EINVAL;
		}
		for (int c = 0; c < POL_CPUS_MAX; c++)
			cpus += pod[c];
		if (!cpus)
			continue;
		snprintf((*pods)[n].uid, sizeof((*pods)[n].uid), "%s", key);
		(*pods)[n++].cpus = cpus;
	}
	*n_pods = n;
	if (n) {
		qsort(*pods, n, sizeof(**pods), cmp_pod);
	} else { /* entries of the first format only, or none with CPUs: no pods, as promised */
		free(*pods);
		*pods = NULL;
	}
	return 0;
}

static int parse_json(const json_t *root, char *policy, size_t policy_size, char *list,
		      size_t list_size, struct exclusive_pod **pods, size_t *n_pods)
{
	const json_t *name = json_object_get(root, "policyName");
	bool on[POL_CPUS_MAX] = {0};
	int err;

	*pods = NULL;
	*n_pods = 0;
	if (!json_is_object(root) || !json_is_string(name))
		return -EINVAL;
	snprintf(policy, policy_size, "%s", json_string_value(name));
	err = parse_entries(json_object_get(root, "entries"), on, pods, n_pods);
	if (!err && cpu_list_format(on, POL_CPUS_MAX, list, list_size))
		err = -ENOSPC;
	if (err) {
		free(*pods);
		*pods = NULL;
		*n_pods = 0;
	}
	return err;
}

int exclusive_cpus_parse(const char *text, char *policy, size_t policy_size, char *list,
			 size_t list_size, struct exclusive_pod **pods, size_t *n_pods)
{
	json_t *root = json_loads(text, 0, NULL);
	int err = root ? parse_json(root, policy, policy_size, list, list_size, pods, n_pods)
		       : -EINVAL;

	if (!root) {
		*pods = NULL;
		*n_pods = 0;
	}
	json_decref(root);
	return err;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Nothing exclusive (no file, or none configured). */
static void forget(struct exclusive_cpus *x)
{
	free(x->pods);
	x->pods = NULL;
	x->n_pods = 0;
	x->list[0] = '\0';
	x->policy[0] = '\0';
	memset(&x->seen, 0, sizeof(x->seen));
}

static int fail(struct exclusive_cpus *x, const char *path, int err, const char *what)
{
	if (err != x->err)
		log_warn("agent: %s: %s; %s", path, what,
			 x->list[0] ? "keeping the exclusive CPUs last read"
				    : "no exclusive CPUs known");
	x->err = err;
	return err;
}

int exclusive_cpus_update(struct exclusive_cpus *x, const char *path)
{
	char policy[sizeof(x->policy)], list[sizeof(x->list)];
	struct exclusive_pod *pods;
	json_error_t jerr;
	struct stat st;
	size_t n_pods;
	json_t *root;
	int err;

	if (!path[0]) {
		forget(x);
		return 0;
	}
	if (stat(path, &st)) {
		err = -errno;
		if (err != -ENOENT)
			return fail(x, path, err, strerror(-err));
		if (x->err != err)
			log_info(
				"agent: no %s: no CPUs are known to be exclusive (with the kubelet's "
				"static CPU manager policy, mount it: docs/agent-policies.md)",
				path);
		x->err = err;
		forget(x);
		return 0;
	}
	if (x->seen.st_ino && same_file(&x->seen, &st))
		return x->err;
	x->seen = st; /* read once per version, good or bad */
	root = json_load_file(path, 0, &jerr);
	if (!root)
		return fail(x, path, -EINVAL, jerr.text);
	err = parse_json(root, policy, sizeof(policy), list, sizeof(list), &pods, &n_pods);
	json_decref(root);
	if (err)
		return fail(x, path, err,
			    err == -ENOSPC ? "too many exclusive CPU ranges to list"
					   : "not the kubelet's cpu_manager_state format");
	if (x->err || strcmp(x->policy, policy) || strcmp(x->list, list))
		log_info("agent: %s: CPU manager policy %s, exclusive CPUs \"%s\" (%zu pods)", path,
			 policy, list, n_pods);
	free(x->pods);
	x->pods = pods;
	x->n_pods = n_pods;
	snprintf(x->policy, sizeof(x->policy), "%s", policy);
	snprintf(x->list, sizeof(x->list), "%s", list);
	x->err = 0;
	return 0;
}

uint32_t exclusive_cpus_of_pod(const struct exclusive_cpus *x, const char *uid)
{
	struct exclusive_pod key;
	const struct exclusive_pod *p;

	if (!uid[0] || !x->n_pods ||
	    snprintf(key.uid, sizeof(key.uid), "%s", uid) >= (int)sizeof(key.uid))
		return 0;
	p = bsearch(&key, x->pods, x->n_pods, sizeof(key), cmp_pod);
	return p ? p->cpus : 0;
}

void exclusive_cpus_free(struct exclusive_cpus *x)
{
	forget(x);
	x->err = 0;
}
