// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "decision/outcome.h"

static const char *const names[OUT_NR] = {
	[OUT_ADOPTED] = "adopted",	 [OUT_CONTESTED] = "contested",
	[OUT_REASSERTED] = "reasserted", [OUT_APPLIED] = "applied",
	[OUT_DRY_RUN] = "dry_run",	 [OUT_EVICTED] = "evicted",
	[OUT_FAILED] = "failed",	 [OUT_GONE] = "gone",
	[OUT_PENDING] = "pending",	 [OUT_REFUSED] = "refused",
	[OUT_REPLAY] = "replay",	 [OUT_REPORTED] = "reported",
	[OUT_REQUESTED] = "requested",	 [OUT_RETRY] = "retry",
	[OUT_UNCHANGED] = "unchanged",
};

const char *decision_outcome_name(enum decision_outcome o)
{
	return (unsigned int)o < OUT_NR ? names[o] : "?";
}
