// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * oldpins DIR CGROUP_ID
 *
 * Leaves in DIR (an existing directory on bpffs) the sched probe's pins as
 * an older qoslet, one from before pins carried layout metadata, could
 * have left them, for tests/integration/test_pin_upgrade.sh:
 *
 *   rq_hist         the value layout of today, but preallocated and 1024
 *                   entries: to be migrated. One entry, CGROUP_ID, has on
 *                   CPU 0 count 7, sum_ns 7000 and 7 in slot 3.
 *   sched_drops     exactly today's map, mode 0644: to be kept (and made
 *                   0600). Counter 0 is 5 on CPU 0.
 *   rq_blame        a value of one u64 (no count yet): to be replaced.
 *   rq_alert_watch  today's key and value in a per-CPU hash: another kind
 *                   of map, to be replaced.
 *   rq_pending      an empty directory, rq_alert_cfg a symbolic link:
 *                   junk where maps belong, to be replaced.
 *   rq_alerts       nothing: to be created.
 *
 * Every map carries BTF built here, as libbpf would have loaded it from
 * that qoslet's object. Exits 0, or 1 after saying what failed.
 */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf/sched_maps.h"

/* The old rq_hist must have today's value: the test expects its entries to survive. */
_Static_assert(sizeof(struct lat_hist) == 16 + 8 * QOSLET_LAT_SLOTS, "struct lat_hist changed");
/* The old rq_alert_watch differs in its type only: its fields are today's (add_types). */
_Static_assert(sizeof(struct rq_alert_watch) == 40, "struct rq_alert_watch changed");

static const char *dir;

static void die(const char *what)
{
	fprintf(stderr, "oldpins: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The BTF types the old maps use, with their ids. */
struct types {
	struct btf *btf;
	int u32, u64, lat_hist, blame_key, old_blame_val, alert_watch;
};

static int add_struct(struct btf *btf, const char *name, const char *const *fields, int n,
		      const int *types, const int *sizes)
{
	int id, off = 0, size = 0;

	for (int i = 0; i < n; i++)
		size += sizes[i];
	id = btf__add_struct(btf, name, size);
	for (int i = 0; i < n; i++) {
		if (btf__add_field(btf, fields[i], types[i], off * 8, 0))
			die("btf__add_field");
		off += sizes[i];
	}
	return id;
}

static void make_types(struct types *t)
{
	int ull, slots;

	t->btf = btf__new_empty();
	if (!t->btf)
		die("btf__new_empty");
	t->u32 = btf__add_int(t->btf, "unsigned int", 4, 0);
	ull = btf__add_int(t->btf, "long long unsigned int", 8, 0);
	t->u64 = btf__add_typedef(t->btf, "__u64", ull);
	slots = btf__add_array(t->btf, t->u32, t->u64, QOSLET_LAT_SLOTS);
	t->lat_hist =
		add_struct(t->btf, "lat_hist", (const char *[]){"count", "sum_ns", "slots"}, 3,
			   (int[]){t->u64, t->u64, slots}, (int[]){8, 8, 8 * QOSLET_LAT_SLOTS});
	t->blame_key = add_struct(t->btf, "blame_key", (const char *[]){"victim", "culprit"}, 2,
				  (int[]){t->u64, t->u64}, (int[]){8, 8});
	t->old_blame_val = add_struct(t->btf, "blame_val", (const char *[]){"wait_ns"}, 1,
				      (int[]){t->u64}, (int[]){8});
	t->alert_watch =
		add_struct(t->btf, "rq_alert_watch",
			   (const char *[]){"threshold_ns", "last_ns", "displaced_start_ns",
					    "displaced_last_ns", "displaced", "pad"},
			   6, (int[]){t->u64, t->u64, t->u64, t->u64, t->u32, t->u32},
			   (int[]){8, 8, 8, 8, 4, 4});
	if (btf__load_into_kernel(t->btf))
		die("loading BTF");
}

static int pin_map(const struct types *t, const char *name, enum bpf_map_type type, int key,
		   int key_size, int value, int value_size, int max_entries, int flags)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .btf_fd = btf__fd(t->btf), .btf_key_type_id = key,
		    .btf_value_type_id = value, .map_flags = flags);
	char path[PATH_MAX];
	int fd = bpf_map_create(type, name, key_size, value_size, max_entries, &o);

	if (fd < 0)
		die(name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (bpf_obj_pin(fd, path))
		die(path);
	return fd;
}

/* Sets one per-CPU entry: `first` on CPU 0, zeros on the others. */
static void put_percpu(int fd, const void *key, const void *first, size_t size)
{
	int ncpus = libbpf_num_possible_cpus();
	size_t slot = (size + 7) & ~7ul;
	char *vals = calloc(ncpus > 0 ? ncpus : 1, slot);

	if (ncpus <= 0 || !vals)
		die("per-CPU value");
	memcpy(vals, first, size);
	if (bpf_map_update_elem(fd, key, vals, BPF_ANY))
		die("bpf_map_update_elem");
	free(vals);
}

int main(int argc, char **argv)
{
	struct lat_hist hist = {.count = 7, .sum_ns = 7000, .slots[3] = 7};
	__u64 cgid, drops = 5;
	__u32 zero = 0;
	struct types t;
	char path[PATH_MAX];
	int fd;

	if (argc != 3 || !(cgid = strtoull(argv[2], NULL, 10))) {
		fprintf(stderr, "usage: oldpins DIR CGROUP_ID\n");
		return 2;
	}
	dir = argv[1];
	make_types(&t);

	fd = pin_map(&t, "rq_hist", BPF_MAP_TYPE_PERCPU_HASH, t.u64, 8, t.lat_hist, sizeof(hist),
		     1024, 0);
	put_percpu(fd, &cgid, &hist, sizeof(hist));
	fd = pin_map(&t, "sched_drops", BPF_MAP_TYPE_PERCPU_ARRAY, t.u32, 4, t.u64, 8,
		     SCHED_DROP_NR, 0);
	put_percpu(fd, &zero, &drops, sizeof(drops));
	snprintf(path, sizeof(path), "%s/sched_drops", dir);
	if (chmod(path, 0644))
		die(path);
	pin_map(&t, "rq_blame", BPF_MAP_TYPE_LRU_PERCPU_HASH, t.blame_key, 16, t.old_blame_val, 8,
		8192, 0);
	pin_map(&t, "rq_alert_watch", BPF_MAP_TYPE_PERCPU_HASH, t.u64, 8, t.alert_watch,
		sizeof(struct rq_alert_watch), 4096, 0);
	snprintf(path, sizeof(path), "%s/rq_pending", dir);
	if (mkdir(path, 0700))
		die(path);
	snprintf(path, sizeof(path), "%s/rq_alert_cfg", dir);
	if (symlink("rq_hist", path))
		die(path);
	return 0;
}
