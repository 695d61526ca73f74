// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kube/pod_set.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The index of uid in the sorted set, or where it would go (*found false). */
static size_t position(const struct kube_pod_list *set, const char *uid, bool *found)
{
	size_t lo = 0, hi = set->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(set->pods[mid].uid, uid);

		if (!c) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

int kube_pod_set_put(struct kube_pod_list *set, struct kube_pod *p)
{
	bool found;
	size_t i = position(set, p->uid, &found);
	struct kube_pod *v;

	if (found) {
		kube_pod_free(&set->pods[i]);
		set->pods[i] = *p;
		return 0;
	}
	/* One at a time: a node holds about a hundred pods and they come and go slowly. */
	v = realloc(set->pods, (set->n + 1) * sizeof(*v));
	if (!v) {
		kube_pod_free(p);
		return -ENOMEM;
	}
	set->pods = v;
	memmove(&v[i + 1], &v[i], (set->n - i) * sizeof(*v));
	v[i] = *p;
	set->n++;
	return 0;
}

bool kube_pod_set_remove(struct kube_pod_list *set, const char *uid)
{
	bool found;
	size_t i = position(set, uid, &found);

	if (!found)
		return false;
	kube_pod_free(&set->pods[i]);
	memmove(&set->pods[i], &set->pods[i + 1], (set->n - i - 1) * sizeof(*set->pods));
	set->n--;
	return true;
}

/* The NUL-separated labels, with the empty string that ends them. */
static size_t labels_size(const char *l)
{
	const char *p = l;

	while (*p)
		p += strlen(p) + 1;
	return (size_t)(p - l) + 1;
}

int kube_pod_set_copy(struct kube_pod_list *dst, const struct kube_pod_list *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->skipped = src->skipped;
	if (!src->n)
		return 0;
	dst->pods = calloc(src->n, sizeof(*dst->pods));
	if (!dst->pods)
		return -ENOMEM;
	for (size_t i = 0; i < src->n; i++) {
		const struct kube_pod *s = &src->pods[i];
		struct kube_pod *d = &dst->pods[i];

		*d = *s;
		d->labels = NULL;
		d->containers = NULL;
		dst->n++;
		if (s->labels && !(d->labels = malloc(labels_size(s->labels))))
			goto nomem;
		if (s->labels)
			memcpy(d->labels, s->labels, labels_size(s->labels));
		if (s->n_containers &&
		    !(d->containers = malloc(s->n_containers * sizeof(*d->containers))))
			goto nomem;
		if (s->n_containers)
			memcpy(d->containers, s->containers,
			       s->n_containers * sizeof(*d->containers));
	}
	return 0;
nomem:
	kube_pod_list_free(dst);
	return -ENOMEM;
}
