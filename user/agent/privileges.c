// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "agent/privileges.h"

#include <cap-ng.h>
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

struct privileges_kept privileges_needed(bool evict_kill, const char *release,
					 int unprivileged_bpf_disabled)
{
	struct privileges_kept k = {.kill = evict_kill};
	unsigned int major = 0, minor = 0;

	if (sscanf(release, "%u.%u", &major, &minor) != 2)
		major = minor = 0; /* unknown: assume the oldest rules */
	if (unprivileged_bpf_disabled && (major < 6 || (major == 6 && minor < 5)))
		k.bpf = major > 5 || (major == 5 && minor >= 8) ? PRIV_BPF_CAP_BPF
								: PRIV_BPF_SYS_ADMIN;
	return k;
}

static int add(unsigned int cap, bool bounding)
{
	capng_type_t t = CAPNG_EFFECTIVE | CAPNG_PERMITTED | (bounding ? CAPNG_BOUNDING_SET : 0);

	return capng_update(CAPNG_ADD, t, cap);
}

/* The wanted state into libcap-ng's (nothing applied yet). */
static int build(struct privileges_kept keep, bool bounding)
{
	capng_clear(bounding ? CAPNG_SELECT_BOTH : CAPNG_SELECT_CAPS);
	if (keep.kill && add(CAP_KILL, bounding))
		return -1;
	if (keep.bpf == PRIV_BPF_CAP_BPF && add(CAP_BPF, bounding))
		return -1;
	if (keep.bpf == PRIV_BPF_SYS_ADMIN && add(CAP_SYS_ADMIN, bounding))
		return -1;
	return 0;
}

int privileges_drop(struct privileges_kept keep, bool *bounding, char *err, size_t errlen)
{
	/* Cutting the bounding set needs CAP_SETPCAP, which a container may lack. */
	*bounding = capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP);
	if (build(keep, *bounding) ||
	    capng_apply(*bounding ? CAPNG_SELECT_BOTH : CAPNG_SELECT_CAPS)) {
		snprintf(err, errlen, "cannot drop capabilities (libcap-ng)");
		return -EPERM;
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL) {
		snprintf(err, errlen, "cannot clear the ambient capabilities: %s", strerror(errno));
		return -errno;
	}
	/* nothing it runs later (it runs nothing) could gain privileges back */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		snprintf(err, errlen, "cannot set no_new_privs: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

void privileges_describe(struct privileges_kept keep, char *buf, size_t size)
{
	const char *bpf = keep.bpf == PRIV_BPF_CAP_BPF	   ? "CAP_BPF"
			  : keep.bpf == PRIV_BPF_SYS_ADMIN ? "CAP_SYS_ADMIN"
							   : NULL;

	if (!bpf && !keep.kill)
		snprintf(buf, size, "none");
	else
		snprintf(buf, size, "%s%s%s", bpf ? bpf : "", bpf && keep.kill ? ", " : "",
			 keep.kill ? "CAP_KILL" : "");
}
