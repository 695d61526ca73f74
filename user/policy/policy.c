// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "policy.h"

#include <errno.h>
#include <string.h>

int policy_tick(const struct pol_input *in, const struct policy_config *cfg, bool dry_run,
		struct policy_state *st, struct action_list *out)
{
	int err;

	action_list_clear(&st->wishes);
	err = interference_run(in, &cfg->interference, &st->interference, &st->wishes);
	if (!err)
		err = suppress_run(in, &cfg->suppress, &st->suppress, &st->wishes);
	/* Too many CPUs to list: this tick has no cpuset wish, the rest stands. */
	if (err == -ENOSPC)
		err = 0;
	if (!err)
		err = burst_run(in, &cfg->burst, &st->burst, &st->wishes);
	if (!err)
		err = evict_memory_run(in, &cfg->evict_memory, &st->evict_memory, &st->wishes);
	if (!err)
		err = evict_cpu_run(in, &cfg->evict_cpu, &st->evict_cpu, &st->wishes);
	if (!err)
		err = plan_apply(&st->plan, in, &st->wishes, dry_run, out);
	return err;
}

void policy_state_free(struct policy_state *st)
{
	interference_state_free(&st->interference);
	suppress_state_free(&st->suppress);
	burst_state_free(&st->burst);
	evict_memory_state_free(&st->evict_memory);
	evict_cpu_state_free(&st->evict_cpu);
	plan_state_free(&st->plan);
	action_list_free(&st->wishes);
	memset(st, 0, sizeof(*st));
}
