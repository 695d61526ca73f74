// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "probes/memstall_fold.h"

#include <string.h>

void memstall_fold(struct memstall_sample *out, const struct memstall_cg *percpu, int ncpus)
{
	memset(out, 0, sizeof(*out));
	for (int cpu = 0; cpu < ncpus; cpu++) {
		hist_add(&out->direct, &percpu[cpu].direct);
		hist_add(&out->memcg, &percpu[cpu].memcg);
		hist_add(&out->stall, &percpu[cpu].stall);
		hist_add(&out->iowait, &percpu[cpu].iowait);
		out->io_bytes += percpu[cpu].io_bytes;
		for (int i = 0; i < MEMSTALL_IO_DEVS; i++)
			io_dev_add(out->io_dev, SNAPSHOT_IO_DEVS, percpu[cpu].io_dev[i].dev,
				   percpu[cpu].io_dev[i].bytes);
		out->oom_kills += percpu[cpu].oom_kills;
	}
}

void memstall_oom_event(struct oom_event *out, const struct memstall_oom *in,
			int64_t mono_to_real_ns)
{
	memset(out, 0, sizeof(*out));
	out->ts_ns = (uint64_t)((int64_t)in->ts_ns + mono_to_real_ns);
	out->cgroup_id = in->cgroup_id;
	out->pid = in->pid;
	/* The kernel's comm is NUL-terminated, but a record is only bytes. */
	memcpy(out->comm, in->comm, sizeof(out->comm) - 1);
}
