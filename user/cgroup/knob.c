// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "cgroup/knob.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup/path.h"
#include "str.h"
#include "readfile.h"
#include "snapshot.h"

/* The v1 hierarchy names, as in mount options and under /sys/fs/cgroup. */
static const char *const ctrl_names[CTRL_NR] = {
	[CTRL_CPU] = "cpu",	  [CTRL_CPUACCT] = "cpuacct", [CTRL_CPUSET] = "cpuset",
	[CTRL_MEMORY] = "memory", [CTRL_FREEZER] = "freezer", [CTRL_IO] = "blkio",
};

/*
 * What a controller is called in a cgroup2 cgroup.controllers: v2 counts CPU
 * time in cpu.stat of the cpu controller, and freezes without a controller
 * (NULL: any cgroup2 mount will do).
 */
static const char *const v2_names[CTRL_NR] = {
	[CTRL_CPU] = "cpu",	  [CTRL_CPUACCT] = "cpu", [CTRL_CPUSET] = "cpuset",
	[CTRL_MEMORY] = "memory", [CTRL_FREEZER] = NULL,  [CTRL_IO] = "io",
};

/* A limit at or above this is "no limit": v1 prints PAGE_COUNTER_MAX pages in bytes (~2^63). */
#define MEM_UNLIMITED_MIN (1ULL << 62)

struct detect_state {
	struct cgroup_ctrls *c;
	char v2[PATH_MAX];
};

static int detect_mount(void *ctx, const char *mnt, bool v2, const char *superopts)
{
	struct detect_state *d = ctx;

	if (v2) {
		if (!d->v2[0])
			str_copy(d->v2, sizeof(d->v2), mnt);
		return 0;
	}
	for (int i = 0; i < CTRL_NR; i++)
		if (!d->c->root[i][0] && cgroup_has_option(superopts, ctrl_names[i]))
			str_copy(d->c->root[i], sizeof(d->c->root[i]), mnt);
	return 0;
}

int cgroup_ctrls_detect(struct cgroup_ctrls *c, const char *mountinfo_path)
{
	struct detect_state d = {.c = c};
	int err;

	memset(c, 0, sizeof(*c));
	err = cgroup_mounts_foreach(mountinfo_path, detect_mount, &d);
	if (err)
		return err;
	/* A v1 mount wins: on hybrid hosts the cgroup2 mount has no controller the kubelet uses. */
	for (int i = 0; i < CTRL_NR && d.v2[0]; i++) {
		if (c->root[i][0] || (v2_names[i] && !cgroup_v2_has_controller(d.v2, v2_names[i])))
			continue;
		str_copy(c->root[i], sizeof(c->root[i]), d.v2);
		c->v2[i] = true;
	}
	return c->root[CTRL_CPU][0] ? 0 : -ENOENT;
}

void cgroup_ctrls_fake(struct cgroup_ctrls *c, const char *root, bool v2)
{
	memset(c, 0, sizeof(*c));
	for (int i = 0; i < CTRL_NR; i++) {
		if (v2)
			snprintf(c->root[i], sizeof(c->root[i]), "%s", root);
		else
			snprintf(c->root[i], sizeof(c->root[i]), "%s/%s", root, ctrl_names[i]);
		c->v2[i] = v2;
	}
}

int cg_path(const struct cgroup_ctrls *c, enum cg_ctrl ctrl, const char *rel, const char *file,
	    char *out, size_t size)
{
	int n;

	if ((unsigned int)ctrl >= CTRL_NR || !c->root[ctrl][0])
		return -EOPNOTSUPP;
	n = snprintf(out, size, "%s%s%s%s%s", c->root[ctrl], *rel ? "/" : "", rel, *file ? "/" : "",
		     file);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* A file is missing: -ENOENT when its cgroup is gone, -EOPNOTSUPP when the kernel lacks it. */
static int missing(const struct cgroup_ctrls *c, enum cg_ctrl ctrl, const char *rel)
{
	char dir[PATH_MAX];
	struct stat st;

	if (cg_path(c, ctrl, rel, "", dir, sizeof(dir)))
		return -ENOENT;
	return stat(dir, &st) ? -ENOENT : -EOPNOTSUPP;
}

/* The file's text, trailing blanks dropped. A full buffer may be a cut one: -EOVERFLOW. */
int cg_read_file(const struct cgroup_ctrls *c, enum cg_ctrl ctrl, const char *rel, const char *file,
		 char *buf, size_t size)
{
	char path[PATH_MAX];
	size_t n;
	int err = cg_path(c, ctrl, rel, file, path, sizeof(path));

	if (err)
		return err;
	err = read_file_at(AT_FDCWD, path, buf, size);
	if (err == -ENOENT)
		return missing(c, ctrl, rel);
	if (err)
		return err;
	n = strlen(buf);
	if (n + 1 >= size)
		return -EOVERFLOW;
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

/*
 * One write() of the whole text. Never O_CREAT: a missing file means the
 * cgroup or the kernel feature is missing, and creating it would hide that.
 * O_TRUNC is ignored by cgroupfs (as every `echo x > file` relies on) and
 * makes a test's plain file hold what the kernel would show.
 */
int cg_write_file(const struct cgroup_ctrls *c, enum cg_ctrl ctrl, const char *rel,
		  const char *file, const char *text)
{
	char path[PATH_MAX];
	/* cgroupfs strips the newline; a zero-length write() may not reach the kernel's handler. */
	const char *out = *text ? text : "\n";
	size_t len = strlen(out);
	ssize_t n;
	int fd, err = cg_path(c, ctrl, rel, file, path, sizeof(path));

	if (err)
		return err;
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? missing(c, ctrl, rel) : -errno;
	n = write(fd, out, len);
	err = n < 0 ? -errno : (size_t)n != len ? -EIO : 0;
	close(fd);
	return err;
}

static int parse_i64(const char *s, int64_t *v)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(s, &end, 10);
	if (errno || end == s || (*end && *end != '\n' && *end != ' '))
		return -EINVAL;
	*v = x;
	return 0;
}

static int parse_u64(const char *s, uint64_t *v)
{
	int64_t x;

	if (parse_i64(s, &x) || x < 0)
		return -EINVAL;
	*v = (uint64_t)x;
	return 0;
}

/* v2 cpu.max: "max 100000" or "50000 100000". */
static int parse_cpu_max(const char *s, int64_t *quota, uint64_t *period)
{
	char q[32];
	unsigned long long p;

	if (sscanf(s, "%31s %llu", q, &p) != 2)
		return -EINVAL;
	*period = p;
	if (!strcmp(q, "max")) {
		*quota = -1;
		return 0;
	}
	return parse_i64(q, quota) || *quota < 0 ? -EINVAL : 0;
}

/*
 * The one key-value parser: the value of `key` in "key value" lines
 * (cpu.stat, memory.stat); -EOPNOTSUPP when absent.
 */
static int cg_stat_get(const char *text, const char *key, uint64_t *v)
{
	size_t n = strlen(key);

	for (const char *p = text; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, key, n) && p[n] == ' ')
			return parse_u64(p + n + 1, v);
	return -EOPNOTSUPP;
}

static int read_u64(const struct cgroup_ctrls *c, enum cg_ctrl ctrl, const char *rel,
		    const char *file, uint64_t *v)
{
	char buf[64];
	int err = cg_read_file(c, ctrl, rel, file, buf, sizeof(buf));

	return err ? err : parse_u64(buf, v);
}

/* Each knob's and file's controller and name on v1 and v2; NULL where that version has none. */
static const struct {
	enum cg_ctrl ctrl;
	const char *name[2]; /* v1, v2 */
} files[CG_FILE_NR] = {
	[CG_KNOB_QUOTA] = {CTRL_CPU, {"cpu.cfs_quota_us", "cpu.max"}},
	[CG_KNOB_BURST] = {CTRL_CPU, {"cpu.cfs_burst_us", "cpu.max.burst"}},
	[CG_KNOB_IDLE] = {CTRL_CPU, {"cpu.idle", "cpu.idle"}},
	[CG_KNOB_CPUS] = {CTRL_CPUSET, {"cpuset.cpus", "cpuset.cpus"}},
	[CG_KNOB_WEIGHT] = {CTRL_CPU, {"cpu.shares", "cpu.weight"}},
	[CG_KNOB_MEM_MAX] = {CTRL_MEMORY, {"memory.limit_in_bytes", "memory.max"}},
	/* v1 has no such files (upstream): reads and writes there fail with EOPNOTSUPP */
	[CG_KNOB_MEM_MIN] = {CTRL_MEMORY, {"memory.min", "memory.min"}},
	[CG_KNOB_MEM_LOW] = {CTRL_MEMORY, {"memory.low", "memory.low"}},
	[CG_KNOB_MEM_HIGH] = {CTRL_MEMORY, {"memory.high", "memory.high"}},
	[CG_KNOB_IO_RBPS] = {CTRL_IO, {"blkio.throttle.read_bps_device", "io.max"}},
	[CG_KNOB_IO_WBPS] = {CTRL_IO, {"blkio.throttle.write_bps_device", "io.max"}},
	[CG_FILE_CPU_STAT] = {CTRL_CPU, {"cpu.stat", "cpu.stat"}},
	[CG_FILE_CPUACCT_USAGE] = {CTRL_CPUACCT, {"cpuacct.usage", NULL}},
	[CG_FILE_CFS_PERIOD] = {CTRL_CPU, {"cpu.cfs_period_us", NULL}},
	[CG_FILE_EFFECTIVE_CPUS] = {CTRL_CPUSET,
				    {"cpuset.effective_cpus", "cpuset.cpus.effective"}},
	[CG_FILE_MEM_USAGE] = {CTRL_MEMORY, {"memory.usage_in_bytes", "memory.current"}},
	[CG_FILE_MEM_STAT] = {CTRL_MEMORY, {"memory.stat", "memory.stat"}},
	/* v2's memory.events counts the subtree's hits too: .local is the cgroup's alone */
	[CG_FILE_MEM_EVENTS] = {CTRL_MEMORY, {"memory.failcnt", "memory.events.local"}},
	/* v1's throttle files count every bio (the blkio.io_* ones only under CFQ/BFQ) */
	[CG_FILE_IO_STAT] = {CTRL_IO, {"blkio.throttle.io_service_bytes_recursive", "io.stat"}},
	/* On v1 and hybrid nodes a pod has no cgroup2 directory: no pressure files. */
	[CG_FILE_PSI_CPU] = {CTRL_CPU, {NULL, "cpu.pressure"}},
	[CG_FILE_PSI_MEMORY] = {CTRL_CPU, {NULL, "memory.pressure"}},
	[CG_FILE_PSI_IO] = {CTRL_CPU, {NULL, "io.pressure"}},
	[CG_FILE_MEM_RECLAIM] = {CTRL_MEMORY, {NULL, "memory.reclaim"}},
};

enum cg_ctrl cg_file_ctrl(int f)
{
	return (unsigned int)f < CG_FILE_NR ? files[f].ctrl : CTRL_CPU;
}

const char *cg_file_name(int f, bool v2)
{
	return (unsigned int)f < CG_FILE_NR ? files[f].name[v2] : NULL;
}

/* A file's name on this host; "?" (no such file) where its version has none. */
static const char *host_file(const struct cgroup_ctrls *c, int f)
{
	const char *name = cg_file_name(f, c->v2[cg_file_ctrl(f)]);

	return name ? name : "?";
}

bool cg_has_file(const struct cgroup_ctrls *c, int f, const char *rel)
{
	const char *name = cg_file_name(f, c->v2[cg_file_ctrl(f)]);
	char path[PATH_MAX];

	return name && !cg_path(c, cg_file_ctrl(f), rel, name, path, sizeof(path)) &&
	       !access(path, F_OK);
}

int cg_mem_reclaim(const struct cgroup_ctrls *c, const char *rel, uint64_t bytes)
{
	char text[32];

	if (!cg_file_name(CG_FILE_MEM_RECLAIM, c->v2[CTRL_MEMORY]))
		return -EOPNOTSUPP;
	snprintf(text, sizeof(text), "%llu", (unsigned long long)bytes);
	return cg_write_file(c, CTRL_MEMORY, rel, host_file(c, CG_FILE_MEM_RECLAIM), text);
}

enum cg_ctrl cg_knob_ctrl(enum cg_knob k)
{
	return cg_file_ctrl(k);
}

const char *cg_knob_file(const struct cgroup_ctrls *c, enum cg_knob k)
{
	return (unsigned int)k < CG_KNOB_NR ? host_file(c, k) : "?";
}

int cg_read_knob(const struct cgroup_ctrls *c, enum cg_knob k, const char *rel, char *text,
		 size_t size)
{
	if (cg_knob_per_device(k))
		return cg_io_knob_read(c, k, rel, text, size);
	return cg_read_file(c, cg_knob_ctrl(k), rel, cg_knob_file(c, k), text, size);
}

int cg_write_knob(const struct cgroup_ctrls *c, enum cg_knob k, const char *rel, const char *text)
{
	if (cg_knob_per_device(k))
		return cg_io_knob_write(c, k, rel, text);
	return cg_write_file(c, cg_knob_ctrl(k), rel, cg_knob_file(c, k), text);
}

int cg_knob_format(const struct cgroup_ctrls *c, enum cg_knob k, int64_t value, uint64_t period_us,
		   char *text, size_t size)
{
	int n;

	switch (k) {
	case CG_KNOB_QUOTA:
		if (value < -1)
			return -EINVAL;
		if (!c->v2[CTRL_CPU])
			n = snprintf(text, size, "%lld", (long long)value);
		else if (value < 0)
			n = snprintf(text, size, "max %llu", (unsigned long long)period_us);
		else
			n = snprintf(text, size, "%lld %llu", (long long)value,
				     (unsigned long long)period_us);
		break;
	case CG_KNOB_BURST:
	case CG_KNOB_IDLE:
	case CG_KNOB_WEIGHT:
		if (value < 0)
			return -EINVAL;
		n = snprintf(text, size, "%lld", (long long)value);
		break;
	case CG_KNOB_MEM_MAX:
		if (value < -1)
			return -EINVAL;
		/* v1 takes -1 for "no limit" (and prints PAGE_COUNTER_MAX in bytes) */
		if (value < 0 && c->v2[CTRL_MEMORY])
			n = snprintf(text, size, "max");
		else
			n = snprintf(text, size, "%lld", (long long)value);
		break;
	case CG_KNOB_MEM_MIN:
	case CG_KNOB_MEM_LOW:
	case CG_KNOB_MEM_HIGH:
		if (value < -1)
			return -EINVAL;
		n = value < 0 ? snprintf(text, size, "max")
			      : snprintf(text, size, "%lld", (long long)value);
		break;
	default:
		return -EINVAL;
	}
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int cg_quota_parse(bool v2, const char *text, int64_t *quota_us, uint64_t *period_us)
{
	if (v2)
		return parse_cpu_max(text, quota_us, period_us);
	*period_us = 0;
	if (parse_i64(text, quota_us))
		return -EINVAL;
	if (*quota_us < 0) /* v1 prints -1 for "no quota" */
		*quota_us = -1;
	return 0;
}

int cg_knob_parse(const struct cgroup_ctrls *c, enum cg_knob k, const char *text, int64_t *value)
{
	uint64_t period;

	switch (k) {
	case CG_KNOB_QUOTA:
		return cg_quota_parse(c->v2[CTRL_CPU], text, value, &period);
	case CG_KNOB_BURST:
	case CG_KNOB_IDLE:
	case CG_KNOB_WEIGHT:
		return parse_i64(text, value);
	case CG_KNOB_MEM_MAX:
		if (!strcmp(text, "max")) {
			*value = -1;
			return 0;
		}
		if (parse_i64(text, value) || *value < -1)
			return -EINVAL;
		if (*value >= (int64_t)MEM_UNLIMITED_MIN)
			*value = -1;
		return 0;
	case CG_KNOB_MEM_MIN:
	case CG_KNOB_MEM_LOW:
	case CG_KNOB_MEM_HIGH:
		if (!strcmp(text, "max")) {
			*value = -1;
			return 0;
		}
		return parse_i64(text, value) || *value < 0 ? -EINVAL : 0;
	case CG_KNOB_IO_RBPS:
	case CG_KNOB_IO_WBPS: {
		uint64_t dev = 0;

		return strchr(text, '\n') ? -EINVAL : cg_io_knob_value(c, k, text, &dev, value);
	}
	default:
		return -EINVAL;
	}
}

int cg_read_quota(const struct cgroup_ctrls *c, const char *rel, int64_t *quota_us,
		  uint64_t *period_us)
{
	char buf[64];
	int err = cg_read_knob(c, CG_KNOB_QUOTA, rel, buf, sizeof(buf));

	if (err)
		return err;
	err = cg_quota_parse(c->v2[CTRL_CPU], buf, quota_us, period_us);
	if (err || c->v2[CTRL_CPU])
		return err;
	return read_u64(c, CTRL_CPU, rel, host_file(c, CG_FILE_CFS_PERIOD), period_us);
}

static int read_number(const struct cgroup_ctrls *c, enum cg_knob k, const char *rel,
		       int64_t *value)
{
	char buf[64];
	int err = cg_read_knob(c, k, rel, buf, sizeof(buf));

	return err ? err : cg_knob_parse(c, k, buf, value);
}

int cg_read_burst(const struct cgroup_ctrls *c, const char *rel, int64_t *burst_us)
{
	return read_number(c, CG_KNOB_BURST, rel, burst_us);
}

int cg_read_idle(const struct cgroup_ctrls *c, const char *rel, int *idle)
{
	int64_t v;
	int err = read_number(c, CG_KNOB_IDLE, rel, &v);

	if (!err)
		*idle = (int)v;
	return err;
}

int cg_read_cpus(const struct cgroup_ctrls *c, const char *rel, char *cpus, size_t size)
{
	return cg_read_knob(c, CG_KNOB_CPUS, rel, cpus, size);
}

int cg_read_effective_cpus(const struct cgroup_ctrls *c, const char *rel, char *cpus, size_t size)
{
	return cg_read_file(c, CTRL_CPUSET, rel, host_file(c, CG_FILE_EFFECTIVE_CPUS), cpus, size);
}

/*
 * The kubelet maps shares to weight as 1 + ((shares - 2) * 9999) / 262142,
 * rounding down, so each weight stands for a range of about 26 shares. The
 * middle of that range, 2 + (w - 0.5) * 262142 / 9999, is off by at most
 * half of it (13 shares, 0.013 CPU) for any shares the kubelet wrote.
 */
static double weight_to_shares(uint64_t weight)
{
	double shares = 2 + ((double)weight - 0.5) * 262142.0 / 9999.0;

	return shares < 2 ? 2 : shares > 262144 ? 262144 : shares;
}

double cg_weight_request_cpus(const struct cgroup_ctrls *c, int64_t weight)
{
	uint64_t v = weight > 0 ? (uint64_t)weight : 0;

	return (c->v2[CTRL_CPU] ? weight_to_shares(v) : (double)v) / 1024.0;
}

int cg_cpu_stat_usage_ns(const char *text, uint64_t *ns)
{
	uint64_t us;
	int err = cg_stat_get(text, "usage_usec", &us);

	if (!err)
		*ns = us * 1000;
	return err;
}

struct cpu_stat_key {
	const char *name;
	size_t off;	/* offset in struct throttle_sample */
	uint64_t scale; /* to the sample's unit (ns for times) */
};

static const struct cpu_stat_key cpu_stat_keys[] = {
	{"nr_periods", offsetof(struct throttle_sample, nr_periods), 1},
	{"nr_throttled", offsetof(struct throttle_sample, nr_throttled), 1},
	{"throttled_time", offsetof(struct throttle_sample, throttled_ns), 1},	  /* v1 */
	{"throttled_usec", offsetof(struct throttle_sample, throttled_ns), 1000}, /* v2 */
	{"nr_bursts", offsetof(struct throttle_sample, nr_bursts), 1},
	{"burst_time", offsetof(struct throttle_sample, burst_ns), 1},	  /* v1 */
	{"burst_usec", offsetof(struct throttle_sample, burst_ns), 1000}, /* v2 */
};

/* Each key through the one key-value parser, cg_stat_get. */
int cg_cpu_stat_throttle(const char *text, struct throttle_sample *s)
{
	bool have_periods = false;
	uint64_t v;

	s->nr_periods = s->nr_throttled = s->throttled_ns = s->nr_bursts = s->burst_ns = 0;
	for (size_t i = 0; i < sizeof(cpu_stat_keys) / sizeof(cpu_stat_keys[0]); i++) {
		if (cg_stat_get(text, cpu_stat_keys[i].name, &v))
			continue;
		*(uint64_t *)((char *)s + cpu_stat_keys[i].off) = v * cpu_stat_keys[i].scale;
		have_periods |= i == 0; /* cpu_stat_keys[0] is nr_periods */
	}
	return have_periods ? 0 : -EINVAL;
}

int cg_read_usage_ns(const struct cgroup_ctrls *c, const char *rel, uint64_t *ns)
{
	char buf[1024];
	int err;

	if (!c->v2[CTRL_CPUACCT])
		return read_u64(c, CTRL_CPUACCT, rel, host_file(c, CG_FILE_CPUACCT_USAGE), ns);
	err = cg_read_file(c, CTRL_CPUACCT, rel, host_file(c, CG_FILE_CPU_STAT), buf, sizeof(buf));
	return err ? err : cg_cpu_stat_usage_ns(buf, ns);
}

int cg_mem_stat_parse(const struct cgroup_ctrls *c, const char *text, struct cg_mem *m)
{
	static const char *const keys[2][3] = {
		{"total_rss", "total_unevictable", "total_inactive_file"},
		{"anon", "unevictable", "inactive_file"},
	};
	/* 5.9 split refaults by LRU; before, one key */
	static const char *const refault_keys[2][3] = {
		{"total_workingset_refault_anon", "total_workingset_refault_file",
		 "total_workingset_refault"},
		{"workingset_refault_anon", "workingset_refault_file", "workingset_refault"},
	};
	bool v2 = c->v2[CTRL_MEMORY];
	uint64_t n;

	/* the page cache only sizes memory suppression's reclaim: absent, it is none */
	if (cg_stat_get(text, v2 ? "file" : "total_cache", &m->file))
		m->file = 0;
	m->refaults = m->charged_pages = 0;
	for (int i = 0; i < 2; i++)
		m->refaults += cg_stat_get(text, refault_keys[v2][i], &n) ? 0 : n;
	if (!m->refaults && !cg_stat_get(text, refault_keys[v2][2], &n))
		m->refaults = n;
	if (!v2 && cg_stat_get(text, "total_pgpgin", &m->charged_pages))
		m->charged_pages = 0;
	return cg_stat_get(text, keys[v2][0], &m->anon) ?: cg_stat_get(text, keys[v2][1], &m->unevictable)
		?: cg_stat_get(text, keys[v2][2], &m->inactive_file);
}

int cg_io_bytes_parse(const struct cgroup_ctrls *c, const char *text, uint64_t *bytes)
{
	uint64_t r, w;

	if (!c->v2[CTRL_IO])
		return cg_stat_get(text, "Total", bytes) ? -EINVAL : 0;
	/* "MAJ:MIN rbytes=N wbytes=N rios=N ..." per device; none yet: 0 */
	*bytes = 0;
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		const char *rb = strstr(p, " rbytes="), *wb = strstr(p, " wbytes=");
		const char *eol = strchr(p, '\n');

		if (!rb || !wb || (eol && (rb > eol || wb > eol)) ||
		    sscanf(rb, " rbytes=%" SCNu64, &r) != 1 ||
		    sscanf(wb, " wbytes=%" SCNu64, &w) != 1)
			return -EINVAL;
		*bytes += r + w;
	}
	return 0;
}

int cg_mem_events_parse(const struct cgroup_ctrls *c, const char *text, uint64_t *hits)
{
	uint64_t max, high;

	if (!c->v2[CTRL_MEMORY])
		return parse_u64(text, hits);
	if (cg_stat_get(text, "max", &max) || cg_stat_get(text, "high", &high))
		return -EINVAL;
	*hits = max + high;
	return 0;
}

int cg_read_mem_limit(const struct cgroup_ctrls *c, const char *rel, int64_t *limit)
{
	uint64_t v;
	char buf[64];
	int err = cg_read_knob(c, CG_KNOB_MEM_MAX, rel, buf, sizeof(buf));

	if (err)
		return err;
	if (!strcmp(buf, "max")) {
		*limit = -1;
		return 0;
	}
	if (parse_u64(buf, &v))
		return -EINVAL;
	*limit = v >= MEM_UNLIMITED_MIN ? -1 : (int64_t)v;
	return 0;
}

int cg_read_mem(const struct cgroup_ctrls *c, const char *rel, struct cg_mem *m)
{
	char buf[16384];
	int64_t limit;
	int err;

	err = read_u64(c, CTRL_MEMORY, rel, host_file(c, CG_FILE_MEM_USAGE), &m->usage);
	if (err)
		return err;
	err = cg_read_mem_limit(c, rel, &limit);
	if (err)
		return err;
	m->limit = limit < 0 ? UINT64_MAX : (uint64_t)limit;
	err = cg_read_file(c, CTRL_MEMORY, rel, host_file(c, CG_FILE_MEM_STAT), buf, sizeof(buf));
	return err ? err : cg_mem_stat_parse(c, buf, m);
}
