// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "collect/node.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpulist.h"
#include "readfile.h"

struct node_reader {
	long clk_tck;
	uint64_t prev_busy_ticks; /* /proc/stat */
	uint64_t prev_usage_ns;	  /* the subtree's, when its quota is the capacity */
	bool have_prev;
	bool prev_subtree; /* the previous reading was the subtree's usage */
	/* The topology of the last CPU list: sysfs is read again only when the list changes. */
	char topo_list[POL_CPULIST_MAX];
	struct pol_cpu topo[POL_CPUS_MAX];
	size_t n_topo;
};

struct node_reader *node_reader_new(void)
{
	struct node_reader *n = calloc(1, sizeof(*n));

	if (n)
		n->clk_tck = sysconf(_SC_CLK_TCK);
	return n;
}

void node_reader_free(struct node_reader *n)
{
	free(n);
}

/* Busy time of all CPUs in clock ticks: everything but idle and iowait. */
static int read_busy_ticks(uint64_t *busy)
{
	unsigned long long v[10] = {0};
	char buf[512];
	int err = read_file_at(AT_FDCWD, "/proc/stat", buf, sizeof(buf));

	if (err)
		return err;
	if (sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]) < 5)
		return -EINVAL;
	*busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	return 0;
}

static int read_meminfo(uint64_t *total, uint64_t *available)
{
	char buf[4096];
	const char *p;
	int err = read_file_at(AT_FDCWD, "/proc/meminfo", buf, sizeof(buf));

	if (err)
		return err;
	p = strstr(buf, "MemTotal:");
	if (!p || sscanf(p, "MemTotal: %lu kB", total) != 1)
		return -EINVAL;
	p = strstr(buf, "MemAvailable:");
	if (!p || sscanf(p, "MemAvailable: %lu kB", available) != 1)
		return -EINVAL;
	*total *= 1024;
	*available *= 1024;
	return 0;
}

static int read_int(const char *fmt, int cpu, int *v)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), fmt, cpu);
	if (read_file_at(AT_FDCWD, path, buf, sizeof(buf)))
		return -1;
	*v = atoi(buf);
	return 0;
}

/* NUMA node of a CPU: the nodeN link in its sysfs directory (0 without NUMA). */
static int cpu_node(int cpu)
{
	char pattern[96];
	glob_t g;
	int node = 0;

	snprintf(pattern, sizeof(pattern), "/sys/devices/system/cpu/cpu%d/node[0-9]*", cpu);
	if (!glob(pattern, 0, NULL, &g) && g.gl_pathc)
		node = atoi(strrchr(g.gl_pathv[0], '/') + 5);
	globfree(&g);
	return node;
}

static void read_topology(const char *list, struct pol_input *in)
{
	bool on[POL_CPUS_MAX];

	in->n_topo = 0;
	if (cpu_list_parse(list, on, POL_CPUS_MAX))
		return;
	for (int cpu = 0; cpu < POL_CPUS_MAX; cpu++) {
		struct pol_cpu *t;

		if (!on[cpu])
			continue;
		t = &in->topo[in->n_topo++];
		t->cpu = cpu;
		if (read_int("/sys/devices/system/cpu/cpu%d/topology/core_id", cpu, &t->core))
			t->core = cpu;
		if (read_int("/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu,
			     &t->package))
			t->package = 0;
		t->node = cpu_node(cpu);
	}
}

int node_read(struct node_reader *n, const struct cgroup_ctrls *c, const char *subtree,
	      double interval_s, struct pol_input *in)
{
	uint64_t total, available, busy = 0, usage = 0;
	uint64_t period;
	int64_t quota;
	struct cg_mem mem;
	char path[PATH_MAX];
	int err;

	in->cgroup_v2 = c->v2[CTRL_CPU];
	in->mem_v2 = c->v2[CTRL_MEMORY];
	in->has_mem_reclaim = cg_has_file(c, CG_FILE_MEM_RECLAIM, subtree);
	in->has_io_limit = cg_has_file(c, CG_KNOB_IO_RBPS, subtree);
	in->has_cpu_idle =
		!cg_path(c, CTRL_CPU, subtree, cg_knob_file(c, CG_KNOB_IDLE), path, sizeof(path)) &&
		!access(path, F_OK);
	if (cg_read_effective_cpus(c, subtree, in->cpu_list, sizeof(in->cpu_list)) ||
	    !in->cpu_list[0])
		err = read_file_at(AT_FDCWD, "/sys/devices/system/cpu/online", in->cpu_list,
				   sizeof(in->cpu_list));
	else
		err = 0;
	if (err)
		return err;
	in->cpu_list[strcspn(in->cpu_list, "\n")] = '\0';
	if (strcmp(n->topo_list, in->cpu_list)) {
		read_topology(in->cpu_list, in);
		memcpy(n->topo, in->topo, in->n_topo * sizeof(*in->topo));
		n->n_topo = in->n_topo;
		snprintf(n->topo_list, sizeof(n->topo_list), "%s", in->cpu_list);
	} else {
		memcpy(in->topo, n->topo, n->n_topo * sizeof(*in->topo));
		in->n_topo = n->n_topo;
	}
	in->cpus = in->n_topo;

	/* A quota on the subtree caps its CPUs; then its own usage is what is busy. */
	if (!cg_read_quota(c, subtree, &quota, &period) && quota > 0 && period &&
	    (double)quota / period < in->cpus) {
		in->cpus = (double)quota / period;
		err = cg_read_usage_ns(c, subtree, &usage);
		if (!err && n->have_prev && n->prev_subtree && interval_s > 0)
			in->node_cpu_used = (usage - n->prev_usage_ns) / 1e9 / interval_s;
		n->prev_subtree = true;
	} else {
		err = read_busy_ticks(&busy);
		if (!err && n->have_prev && !n->prev_subtree && interval_s > 0)
			in->node_cpu_used =
				(double)(busy - n->prev_busy_ticks) / n->clk_tck / interval_s;
		n->prev_subtree = false;
	}
	if (err)
		return err;
	n->prev_busy_ticks = busy;
	n->prev_usage_ns = usage;
	n->have_prev = true;

	err = read_meminfo(&total, &available);
	if (err)
		return err;
	in->mem_capacity = total;
	in->mem_used = total - available;
	/* A memory limit on the subtree is its capacity; its working set is what is used. */
	if (!cg_read_mem(c, subtree, &mem) && mem.limit < total) {
		in->mem_capacity = mem.limit;
		in->mem_used = mem.usage > mem.inactive_file ? mem.usage - mem.inactive_file : 0;
	}
	return 0;
}
