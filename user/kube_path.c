// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "kube_path.h"

#include <stdio.h>
#include <string.h>

const char *kube_qos_name(enum kube_qos qos)
{
	static const char *const names[] = {NULL, "guaranteed", "burstable", "besteffort"};

	return names[qos];
}

/* Copies component [p, p+len) into out (size bytes); false if it does not fit. */
static bool copy_part(char *out, size_t size, const char *p, size_t len)
{
	if (len >= size)
		return false;
	memcpy(out, p, len);
	out[len] = '\0';
	return true;
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && !strncmp(s + len - n, suffix, n);
}

/* A pod component: "pod<uid>" or "kubepods[-<qos>]-pod<uid_with_underscores>.slice". */
static bool parse_pod(const char *p, size_t len, struct kube_ids *ids)
{
	const char *uid = NULL;
	size_t n = 0;

	if (ends_with(p, len, ".slice")) {
		const char *at = memmem(p, len, "-pod", 4);

		if (!at)
			return false;
		uid = at + 4;
		n = p + len - strlen(".slice") - uid;
	} else if (len > 3 && !strncmp(p, "pod", 3)) {
		uid = p + 3;
		n = len - 3;
	}
	if (!uid || !n || !copy_part(ids->pod_uid, sizeof(ids->pod_uid), uid, n))
		return false;
	/* systemd escapes the UID's dashes as underscores. */
	for (char *c = ids->pod_uid; *c; c++)
		if (*c == '_')
			*c = '-';
	return true;
}

static bool starts_with(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && !strncmp(s, prefix, n);
}

/*
 * A component inside a pod (kube_path.h lists the runtimes' names). The
 * scope's prefix is whatever precedes the id's dash (runc's systemd driver
 * names a scope "<prefix>-<id>.scope"; container ids have no dash), so a
 * runtime not listed is read too; a CRI-O scope is "crio-" like its
 * cgroupfs name, and conmon's is told apart first.
 */
static enum kube_part parse_container(const char *p, size_t len, struct kube_ids *ids)
{
	bool scope = ends_with(p, len, ".scope");

	if (scope)
		len -= strlen(".scope");
	if (starts_with(p, len, "crio-conmon-"))
		return KUBE_PART_MONITOR;
	if (scope) {
		const char *dash = memrchr(p, '-', len);

		if (dash) {
			len = p + len - (dash + 1);
			p = dash + 1;
		}
	} else if (ends_with(p, len, ".slice")) {
		return KUBE_PART_OTHER;
	} else if (starts_with(p, len, "crio-")) {
		p += strlen("crio-");
		len -= strlen("crio-");
	}
	if (!len || !copy_part(ids->container_id, sizeof(ids->container_id), p, len))
		return KUBE_PART_OTHER;
	return KUBE_PART_CONTAINER;
}

static enum kube_qos parse_tier(const char *p, size_t len)
{
	static const char *const tiers[] = {"burstable", "besteffort"};

	for (int i = 0; i < 2; i++) {
		char slice[48];

		snprintf(slice, sizeof(slice), "kubepods-%s.slice", tiers[i]);
		if ((len == strlen(tiers[i]) && !strncmp(p, tiers[i], len)) ||
		    (len == strlen(slice) && !strncmp(p, slice, len)))
			return i ? KUBE_QOS_BESTEFFORT : KUBE_QOS_BURSTABLE;
	}
	return KUBE_QOS_NONE;
}

bool kube_path_parse(const char *path, struct kube_ids *ids)
{
	const char *p = path, *kubepods = NULL;
	size_t len;

	memset(ids, 0, sizeof(*ids));
	/* Find the kubepods component wherever the kubelet's root sits. */
	while (*p) {
		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		if ((len == 8 && !strncmp(p, "kubepods", 8)) ||
		    (len == 14 && !strncmp(p, "kubepods.slice", 14))) {
			kubepods = p + len;
			break;
		}
		p += len;
	}
	if (!kubepods)
		return false;
	p = kubepods + strspn(kubepods, "/");
	len = strcspn(p, "/");
	ids->qos = parse_tier(p, len);
	if (ids->qos != KUBE_QOS_NONE) {
		p += len;
		p += strspn(p, "/");
		len = strcspn(p, "/");
	} else {
		ids->qos = KUBE_QOS_GUARANTEED;
	}
	if (!parse_pod(p, len, ids)) {
		memset(ids, 0, sizeof(*ids));
		return false;
	}
	p += len;
	p += strspn(p, "/");
	len = strcspn(p, "/");
	if (!len)
		return true;
	ids->part = parse_container(p, len, ids);
	if (ids->part != KUBE_PART_CONTAINER)
		ids->container_id[0] = '\0';
	p += len;
	ids->nested = p[strspn(p, "/")] != '\0';
	return true;
}
