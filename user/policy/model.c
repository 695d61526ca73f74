// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "policy/model.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const char *const class_names[QOS_NR] = {
	[QOS_UNMANAGED] = "UNMANAGED",
	[QOS_SYSTEM] = "SYSTEM",
	[QOS_LSE] = "LSE",
	[QOS_LSR] = "LSR",
	[QOS_LS] = "LS",
	[QOS_BE] = "BE",
};

const char *qos_class_name(enum qos_class c)
{
	return (unsigned int)c < QOS_NR ? class_names[c] : "?";
}

/* The index of s in names[0..n), or -EINVAL. */
static int name_index(const char *const *names, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -EINVAL;
}

int qos_class_parse(const char *s, enum qos_class *c)
{
	int i = name_index(class_names, QOS_NR, s);

	if (i < 0)
		return i;
	*c = i;
	return 0;
}

static const char *const guard_names[EVICT_GUARD_NR] = {
	[EVICT_GUARD_NONE] = "",
	[EVICT_GUARD_OPT_OUT] = "opted_out",
	[EVICT_GUARD_DAEMONSET] = "daemonset",
	[EVICT_GUARD_MIRROR] = "mirror",
	[EVICT_GUARD_KUBE_SYSTEM] = "kube_system",
};

const char *evict_guard_name(enum evict_guard g)
{
	return (unsigned int)g < EVICT_GUARD_NR ? guard_names[g] : "?";
}

int evict_guard_parse(const char *s, enum evict_guard *g)
{
	int i = name_index(guard_names, EVICT_GUARD_NR, s);

	if (i < 0)
		return i;
	*g = i;
	return 0;
}

const struct pol_unit *pol_input_find(const struct pol_input *in, uint64_t id)
{
	size_t lo = 0, hi = in->n_units;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (in->units[mid].id == id)
			return &in->units[mid];
		if (in->units[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int cmp_outside(const void *key, const void *elem)
{
	uint64_t a = *(const uint64_t *)key, b = ((const struct pol_outside *)elem)->id;

	return a < b ? -1 : a > b;
}

const struct pol_outside *pol_outside_find(const struct pol_outside *v, size_t n, uint64_t id)
{
	/* bsearch() must not see the NULL of an empty table */
	return n ? bsearch(&id, v, n, sizeof(*v), cmp_outside) : NULL;
}

const struct pol_mem_party *pol_mem_party_find(const struct pol_mem_party *v, size_t n, uint64_t id)
{
	/* a party starts with its name, which starts with the id: the same comparison */
	return n ? bsearch(&id, v, n, sizeof(*v), cmp_outside) : NULL;
}

const struct pol_container *pol_container_find(const struct pol_input *in, uint64_t id)
{
	size_t lo = 0, hi = in->n_containers;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (in->containers[mid].id == id)
			return &in->containers[mid];
		if (in->containers[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct pol_unit *pol_input_owner(const struct pol_input *in, uint64_t id)
{
	const struct pol_unit *u = pol_input_find(in, id);
	const struct pol_container *c = u ? NULL : pol_container_find(in, id);

	return c ? pol_input_find(in, c->unit) : u;
}

size_t pol_lower_bound(const void *v, size_t n, size_t size, size_t offset, uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, (const char *)v + mid * size + offset, sizeof(k));
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t pol_blame_of(const struct pol_input *in, uint64_t victim, size_t *first)
{
	size_t end = pol_lower_bound(in->blame, in->n_blame, sizeof(*in->blame),
				     offsetof(struct pol_blame, victim), victim);

	*first = end;
	while (end < in->n_blame && in->blame[end].victim == victim)
		end++;
	return end;
}

void pol_input_free(struct pol_input *in)
{
	free(in->units);
	free(in->containers);
	in->containers = NULL;
	in->n_containers = 0;
	free(in->blame);
	free(in->outside);
	free(in->mem_ancestors);
	free(in->mem_outside);
	in->mem_ancestors = in->mem_outside = NULL;
	in->n_mem_ancestors = in->n_mem_outside = 0;
	in->units = NULL;
	in->blame = NULL;
	in->outside = NULL;
	in->n_units = in->n_blame = in->n_outside = 0;
}
