// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Block I/O throttles, the per-disk knobs (knob.h): v1 keeps one file per
 * direction with a "MAJ:MIN bytes" line per disk that has a rule (a write
 * of 0 drops the rule); v2 keeps one io.max with a line per disk and a key
 * per limit ("254:0 rbps=1048576 wbps=max riops=max wiops=max"), where a
 * write of one key leaves the others alone. Both become the same text: one
 * line per disk, in the form that sets it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/memstall_maps.h"
#include "cgroup/knob.h"

#define LINE_MAX_LEN 160

bool cg_knob_per_device(enum cg_knob k)
{
	return k == CG_KNOB_IO_RBPS || k == CG_KNOB_IO_WBPS;
}

static const char *v2_key(enum cg_knob k)
{
	return k == CG_KNOB_IO_RBPS ? "rbps" : "wbps";
}

int cg_io_knob_format(const struct cgroup_ctrls *c, enum cg_knob k, uint64_t dev, int64_t bps,
		      char *text, size_t size)
{
	unsigned int maj = MEMSTALL_DEV_MAJOR((uint32_t)dev),
		     min = MEMSTALL_DEV_MINOR((uint32_t)dev);
	int n;

	/* v1 takes 0 for "no rule": a throttle of 0 bytes a second cannot be asked */
	if (!cg_knob_per_device(k) || !dev || dev > UINT32_MAX || bps < -1 || bps == 0)
		return -EINVAL;
	if (!c->v2[CTRL_IO])
		n = snprintf(text, size, "%u:%u %lld", maj, min, (long long)(bps < 0 ? 0 : bps));
	else if (bps < 0)
		n = snprintf(text, size, "%u:%u %s=max", maj, min, v2_key(k));
	else
		n = snprintf(text, size, "%u:%u %s=%lld", maj, min, v2_key(k), (long long)bps);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/*
 * One line of a file or a knob text: its disk and this knob's throttle
 * (-1 none). v2 lines carry every key; the knob's own is looked for.
 */
static int parse_line(const struct cgroup_ctrls *c, enum cg_knob k, const char *line, uint64_t *dev,
		      int64_t *bps)
{
	unsigned int maj, min;
	int off = 0;
	const char *p;

	if (sscanf(line, "%u:%u%n", &maj, &min, &off) != 2 || maj >= 1u << 12 || min >= 1u << 20)
		return -EINVAL;
	*dev = MEMSTALL_DEV(maj, min);
	p = line + off;
	if (!c->v2[CTRL_IO]) {
		long long v;

		if (sscanf(p, " %lld", &v) != 1 || v < 0)
			return -EINVAL;
		*bps = v ? v : -1;
		return 0;
	}
	for (; (p = strstr(p, v2_key(k))); p++) {
		long long v;

		if (p[-1] != ' ' || p[4] != '=')
			continue;
		if (!strncmp(p + 5, "max", 3)) {
			*bps = -1;
			return 0;
		}
		if (sscanf(p + 5, "%lld", &v) != 1 || v < 0)
			return -EINVAL;
		*bps = v;
		return 0;
	}
	*bps = -1; /* a line without the key leaves it alone: none */
	return 0;
}

/* Calls fn for every line of text (at most LINE_MAX_LEN long); stops at its first non-zero. */
static int each_line(const char *text, int (*fn)(void *ctx, const char *line), void *ctx)
{
	char line[LINE_MAX_LEN];

	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		int err;

		if (n >= sizeof(line))
			return -EINVAL;
		memcpy(line, p, n);
		line[n] = '\0';
		p += n + (nl != NULL);
		if (!n)
			continue;
		err = fn(ctx, line);
		if (err)
			return err;
	}
	return 0;
}

struct find {
	const struct cgroup_ctrls *c;
	enum cg_knob k;
	uint64_t *dev;
	int64_t *bps;
};

static int find_line(void *ctx, const char *line)
{
	struct find *f = ctx;
	uint64_t dev;
	int64_t bps;
	int err = parse_line(f->c, f->k, line, &dev, &bps);

	if (err)
		return err;
	if (*f->dev && dev != *f->dev)
		return 0;
	*f->dev = dev;
	*f->bps = bps;
	return 1; /* found */
}

int cg_io_knob_value(const struct cgroup_ctrls *c, enum cg_knob k, const char *text, uint64_t *dev,
		     int64_t *bps)
{
	struct find f = {c, k, dev, bps};
	int err = each_line(text, find_line, &f);

	if (err < 0)
		return err;
	if (!err)
		*bps = -1;
	return 0;
}

struct cover {
	const struct cgroup_ctrls *c;
	enum cg_knob k;
	char *orig;
	size_t size;
};

/* Whether a text has a line for dev (find_line's answer is 1 then). */
static bool has_line(const struct cgroup_ctrls *c, enum cg_knob k, const char *text, uint64_t dev)
{
	int64_t bps;
	struct find f = {c, k, &dev, &bps};

	return each_line(text, find_line, &f) == 1;
}

static int cover_line(void *ctx, const char *line)
{
	struct cover *v = ctx;
	char add[LINE_MAX_LEN];
	size_t n = strlen(v->orig);
	uint64_t dev;
	int64_t bps;
	int err = parse_line(v->c, v->k, line, &dev, &bps);

	/* orig names the disk: it restores it; else a line that clears it is added */
	if (err || has_line(v->c, v->k, v->orig, dev))
		return err;
	err = cg_io_knob_format(v->c, v->k, dev, -1, add, sizeof(add));
	if (err)
		return err;
	if (n + !!n + strlen(add) >= v->size)
		return -ENAMETOOLONG;
	snprintf(v->orig + n, v->size - n, "%s%s", n ? "\n" : "", add);
	return 0;
}

int cg_io_knob_cover(const struct cgroup_ctrls *c, enum cg_knob k, char *orig, size_t size,
		     const char *text)
{
	char *copy = strdup(orig);
	struct cover v = {c, k, orig, size};
	int err;

	if (!copy)
		return -ENOMEM;
	err = each_line(text, cover_line, &v);
	if (err)
		strcpy(orig, copy); /* fits: it is what orig held */
	free(copy);
	return err;
}

static int owns_line(void *ctx, const char *line)
{
	char key[8];

	snprintf(key, sizeof(key), " %s=", v2_key(*(const enum cg_knob *)ctx));
	return strstr(line, key) ? 0 : -ENOENT;
}

bool cg_io_knob_owns(const struct cgroup_ctrls *c, enum cg_knob k, const char *text)
{
	return cg_knob_per_device(k) && (!c->v2[CTRL_IO] || !each_line(text, owns_line, &k));
}

struct normalize {
	const struct cgroup_ctrls *c;
	enum cg_knob k;
	char *out;
	size_t size, n;
};

static int normalize_line(void *ctx, const char *line)
{
	struct normalize *w = ctx;
	char one[LINE_MAX_LEN];
	uint64_t dev;
	int64_t bps;
	int err = parse_line(w->c, w->k, line, &dev, &bps);

	if (err)
		return err;
	if (bps < 0)
		return 0; /* v2: this disk has rules, none of them this knob's */
	err = cg_io_knob_format(w->c, w->k, dev, bps, one, sizeof(one));
	if (err)
		return err;
	if (w->n + !!w->n + strlen(one) >= w->size)
		return -EOVERFLOW;
	w->n += (size_t)snprintf(w->out + w->n, w->size - w->n, "%s%s", w->n ? "\n" : "", one);
	return 0;
}

int cg_io_knob_read(const struct cgroup_ctrls *c, enum cg_knob k, const char *rel, char *text,
		    size_t size)
{
	char buf[4096];
	struct normalize w = {c, k, text, size, 0};
	int err = cg_read_file(c, cg_knob_ctrl(k), rel, cg_knob_file(c, k), buf, sizeof(buf));

	if (err)
		return err;
	if (!size)
		return -EOVERFLOW;
	text[0] = '\0';
	return each_line(buf, normalize_line, &w);
}

struct write {
	const struct cgroup_ctrls *c;
	enum cg_knob k;
	const char *rel;
};

static int write_line(void *ctx, const char *line)
{
	const struct write *w = ctx;

	return cg_write_file(w->c, cg_knob_ctrl(w->k), w->rel, cg_knob_file(w->c, w->k), line);
}

int cg_io_knob_write(const struct cgroup_ctrls *c, enum cg_knob k, const char *rel,
		     const char *text)
{
	struct write w = {c, k, rel};

	/* the kernel takes one disk per write */
	return each_line(text, write_line, &w);
}
