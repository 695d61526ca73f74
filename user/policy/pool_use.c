// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "policy/pool_use.h"

#include <math.h>
#include <string.h>

#include "policy/cpu_pick.h"

/*
 * With exclusive CPUs (the kubelet's static CPU manager) the pool is the
 * shared one: BE's containers run only there (the kubelet writes the pool
 * into their cpusets), and a pinned pod's use is on its own CPUs, so
 * neither counts against the pool. The system's use stays the node's less
 * every unit's: some of it may run on exclusive CPUs, which errs towards
 * less for BE.
 */
void pool_use_measure(const struct pol_input *in, struct pool_use *m)
{
	bool pool[POL_CPUS_MAX];
	size_t n_pool = cpu_pool(in, pool), n_topo = 0;
	double all = 0;

	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < in->n_topo && i < POL_CPUS_MAX; i++)
		n_topo += in->topo[i].cpu >= 0 && in->topo[i].cpu < POL_CPUS_MAX;
	m->capacity = in->cpus;
	if (in->exclusive_cpus[0] && n_topo > n_pool) {
		m->exclusive = n_topo - n_pool;
		m->capacity = fmin(in->cpus, (double)n_pool);
	}
	for (size_t i = 0; i < in->n_units; i++) {
		const struct pol_unit *u = &in->units[i];

		all += u->cpu_used;
		if (u->pinned_cpus)
			continue;
		if (u->cls != QOS_BE) {
			m->non_be += u->cpu_used;
			continue;
		}
		m->be += u->cpu_used;
		m->n_be++;
		m->be_request += fmax(u->request_cpus, 0);
	}
	m->system = fmax(in->node_cpu_used - all, 0);
}

double pool_use_busy(const struct pool_use *m)
{
	return m->capacity > 0 ? (m->non_be + m->system) / m->capacity : 1;
}
