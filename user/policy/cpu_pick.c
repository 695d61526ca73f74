// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "policy/cpu_pick.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include "cpulist.h"

/* The set is a bitmap over CPU numbers, so it stays meaningful when topo's order changes. */
static void bit_put(uint64_t *set, int cpu, bool on)
{
	if (on)
		set[cpu / 64] |= 1ULL << (cpu % 64);
	else
		set[cpu / 64] &= ~(1ULL << (cpu % 64));
}

size_t cpu_pool(const struct pol_input *in, bool *on)
{
	bool excl[POL_CPUS_MAX];
	size_t n = 0;

	memset(on, 0, POL_CPUS_MAX * sizeof(*on));
	if (cpu_list_parse(in->exclusive_cpus, excl, POL_CPUS_MAX))
		return 0;
	for (size_t i = 0; i < in->n_topo && i < POL_CPUS_MAX; i++) {
		int cpu = in->topo[i].cpu;

		if (cpu >= 0 && cpu < POL_CPUS_MAX && !excl[cpu] && !on[cpu]) {
			on[cpu] = true;
			n++;
		}
	}
	return n;
}

/*
 * Where each CPU of topo sits: core[i] and node[i] are the topo index of the
 * first CPU with the same (package, core) and the same NUMA node, so counts
 * of chosen CPUs per core and per node live in arrays indexed like topo.
 * A CPU is usable when it is in the shared pool (cpu_pool: the bitmap can
 * hold its number, and no pod holds it alone).
 */
struct topo {
	size_t n, usable;
	size_t held; /* CPUs in the set */
	const struct pol_cpu *cpu;
	int core[POL_CPUS_MAX], node[POL_CPUS_MAX];
	int core_size[POL_CPUS_MAX], core_held[POL_CPUS_MAX], node_held[POL_CPUS_MAX];
	bool ok[POL_CPUS_MAX];
};

static_assert(POL_CPUS_MAX % 64 == 0, "the cpuset bitmap is whole words");

static void topo_set(struct topo *t, uint64_t *set, size_t i, bool on)
{
	int d = on ? 1 : -1;

	bit_put(set, t->cpu[i].cpu, on);
	t->held = on ? t->held + 1 : t->held - 1;
	t->core_held[t->core[i]] += d;
	t->node_held[t->node[i]] += d;
}

/* Indexes topo, and starts set with the CPUs of prev that topo still has. */
static void topo_index(const struct pol_input *in, const uint64_t *prev, uint64_t *set,
		       struct topo *t)
{
	bool pool[POL_CPUS_MAX];

	memset(t, 0, sizeof(*t));
	memset(set, 0, CPU_SET_WORDS * sizeof(*set));
	t->n = in->n_topo < POL_CPUS_MAX ? in->n_topo : POL_CPUS_MAX;
	t->cpu = in->topo;
	cpu_pool(in, pool);
	for (size_t i = 0; i < t->n; i++) {
		const struct pol_cpu *c = &t->cpu[i];
		size_t j;

		t->ok[i] = c->cpu >= 0 && c->cpu < POL_CPUS_MAX && pool[c->cpu];
		if (!t->ok[i])
			continue;
		t->usable++;
		for (j = 0; j < i && !(t->ok[j] && t->cpu[j].package == c->package &&
				       t->cpu[j].core == c->core);
		     j++)
			;
		t->core[i] = (int)j;
		for (j = 0; j < i && !(t->ok[j] && t->cpu[j].node == c->node); j++)
			;
		t->node[i] = (int)j;
		t->core_size[t->core[i]]++;
		if (cpu_set_has(prev, c->cpu))
			topo_set(t, set, i, true);
	}
}

static bool core_partial(const struct topo *t, size_t i)
{
	int held = t->core_held[t->core[i]];

	return held > 0 && held < t->core_size[t->core[i]];
}

/*
 * Whether CPU i is a better pick than CPU j. Adding (sign 1): a CPU that
 * completes a partly held core (siblings stay together), else one on the node
 * holding the fewest chosen CPUs (round robin over NUMA nodes), else the
 * lowest number (a stable order). Removing (sign -1) mirrors it: break up no
 * full core, drain the node holding the most, highest number first.
 */
static bool better(const struct topo *t, size_t i, size_t j, int sign)
{
	int d;

	if (core_partial(t, i) != core_partial(t, j))
		return core_partial(t, i);
	d = t->node_held[t->node[i]] - t->node_held[t->node[j]];
	if (d)
		return d * sign < 0;
	return (t->cpu[i].cpu - t->cpu[j].cpu) * sign < 0;
}

static size_t pick(const struct topo *t, const uint64_t *set, bool add)
{
	size_t best = t->n;

	for (size_t i = 0; i < t->n; i++) {
		if (!t->ok[i] || cpu_set_has(set, t->cpu[i].cpu) == add)
			continue;
		if (best == t->n || better(t, i, best, add ? 1 : -1))
			best = i;
	}
	return best;
}

size_t cpu_pick(const struct pol_input *in, double allowed, uint64_t *set)
{
	uint64_t prev[CPU_SET_WORDS];
	struct topo t;
	size_t n;

	memcpy(prev, set, sizeof(prev));
	topo_index(in, prev, set, &t);
	/* The epsilon keeps 2.0000000001 (sums of doubles) from becoming 3 CPUs. */
	n = (size_t)fmax(ceil(allowed - 1e-9), 1); /* never an empty cpuset (ENOSPC) */
	n = n > t.usable ? t.usable : n;	   /* 0 when there is none */
	while (t.held < n)
		topo_set(&t, set, pick(&t, set, true), true);
	while (t.held > n)
		topo_set(&t, set, pick(&t, set, false), false);
	return n;
}

int cpu_pick_format(const uint64_t *set, char *buf, size_t size)
{
	bool on[POL_CPUS_MAX];

	for (int cpu = 0; cpu < POL_CPUS_MAX; cpu++)
		on[cpu] = cpu_set_has(set, cpu);
	return cpu_list_format(on, POL_CPUS_MAX, buf, size) ? -ENOSPC : 0;
}
