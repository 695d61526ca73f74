// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The throttle probe's choice of event source: pure, so that it is unit-tested. */
#include "probes/throttle.h"

#include <errno.h>

int throttle_select(enum throttle_source want, throttle_try_fn try_load, void *ctx,
		    enum throttle_source *chosen)
{
	static const enum throttle_source order[] = {THROTTLE_FENTRY, THROTTLE_TP_BTF,
						     THROTTLE_CPUSTAT};
	int err = -EINVAL;

	if (want != THROTTLE_AUTO) {
		err = try_load(ctx, want);
		if (!err)
			*chosen = want;
		return err;
	}
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		err = try_load(ctx, order[i]);
		if (!err) {
			*chosen = order[i];
			return 0;
		}
	}
	return err;
}
