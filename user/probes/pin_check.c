// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "probes/pin_check.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "probes/bpffs.h"
#include "probes/pin_layout.h"

#define LAYOUT_LEN	 1024 /* pin_btf_layout() of the largest value is ~300 */
#define META_MAX_ENTRIES 64   /* this qoslet's maps and those of versions around it */
#define PIN_MODE	 0600

/* What stands at a pin path. */
enum pin_kind { PIN_ABSENT, PIN_IS_MAP, PIN_NOT_MAP };

/* One map of the probe: what is pinned for it and what is done about it. */
struct item {
	const struct bpf_map *map;
	char path[PATH_MAX];
	int fd; /* the pinned map, when there is one */
	struct bpf_map_info info;
	bool recorded; /* the metadata map holds its revision */
	enum pin_action action;
	char why[2 * LAYOUT_LEN + 128]; /* pin_decide()'s reason: may quote two layouts */
	size_t copied, lost;		/* PIN_MIGRATE: entries copied, entries that did not fit */
};

/* The metadata map. */
struct meta {
	char path[PATH_MAX];
	int fd;		 /* -1: none */
	bool replace;	 /* something else stands at its path */
	bool left_alone; /* ... and stays there: no revision is recorded */
	char what[128];
};

/*
 * Opens what stands at `path`: a map's fd goes to *fd; anything else is
 * described in `what` ("a directory"). Pins of programs and links open
 * like maps, and the fd's /proc link names the kind. Without /proc the pin
 * is taken for a map, and the kernel's answers about it decide.
 */
static enum pin_kind open_pin(const char *path, int *fd, char *what, size_t len)
{
	char proc[32], target[64];
	struct stat st;
	ssize_t n;

	*fd = -1;
	if (lstat(path, &st)) {
		if (errno == ENOENT)
			return PIN_ABSENT;
		snprintf(what, len, "unreadable (%s)", strerror(errno));
		return PIN_NOT_MAP;
	}
	if (S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode)) {
		snprintf(what, len, "%s", S_ISDIR(st.st_mode) ? "a directory" : "a symbolic link");
		return PIN_NOT_MAP;
	}
	*fd = bpf_obj_get(path);
	if (*fd < 0) {
		snprintf(what, len, "a file that is not a BPF object (%s)", strerror(errno));
		*fd = -1;
		return PIN_NOT_MAP;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", *fd);
	n = readlink(proc, target, sizeof(target) - 1);
	if (n < 0)
		return PIN_IS_MAP;
	target[n] = '\0';
	if (!strcmp(target, "anon_inode:bpf-map"))
		return PIN_IS_MAP;
	snprintf(what, len, "%s",
		 !strcmp(target, "anon_inode:bpf-prog")	  ? "a BPF program"
		 : !strcmp(target, "anon_inode:bpf_link") ? "a BPF link"
							  : "a BPF object that is not a map");
	close(*fd);
	*fd = -1;
	return PIN_NOT_MAP;
}

static void meta_open(struct meta *m)
{
	struct bpf_map_info info = {0};
	__u32 len = sizeof(info);

	m->replace = false;
	switch (open_pin(m->path, &m->fd, m->what, sizeof(m->what))) {
	case PIN_ABSENT:
		return;
	case PIN_NOT_MAP:
		m->replace = true;
		return;
	case PIN_IS_MAP:
		break;
	}
	if (!bpf_obj_get_info_by_fd(m->fd, &info, &len) && info.type == BPF_MAP_TYPE_HASH &&
	    info.key_size == PIN_META_KEY_LEN && info.value_size == sizeof(struct pin_meta))
		return;
	snprintf(m->what, sizeof(m->what), "a map of another shape (%s, key %u, value %u bytes)",
		 libbpf_bpf_map_type_str(info.type) ? libbpf_bpf_map_type_str(info.type) : "?",
		 info.key_size, info.value_size);
	close(m->fd);
	m->fd = -1;
	m->replace = true;
}

/* BTF of the metadata map, loaded, so that bpftool prints it by name; NULL if it cannot be. */
static struct btf *meta_btf(__u32 *key_id, __u32 *value_id)
{
	struct btf *btf = btf__new_empty();
	int u32, chr, writer, key, value;

	if (!btf)
		return NULL;
	u32 = btf__add_int(btf, "unsigned int", 4, 0);
	chr = btf__add_int(btf, "char", 1, BTF_INT_SIGNED);
	key = btf__add_array(btf, u32, chr, PIN_META_KEY_LEN);
	writer = btf__add_array(btf, u32, chr, sizeof(((struct pin_meta *)0)->writer));
	value = btf__add_struct(btf, "qoslet_pin_meta", sizeof(struct pin_meta));
	/* A failed step makes every later one fail too: one check covers all. */
	if (u32 < 0 || chr < 0 || key < 0 || writer < 0 || value < 0 ||
	    btf__add_field(btf, "revision", u32, offsetof(struct pin_meta, revision) * 8, 0) ||
	    btf__add_field(btf, "writer", writer, offsetof(struct pin_meta, writer) * 8, 0) ||
	    btf__load_into_kernel(btf)) {
		btf__free(btf);
		return NULL;
	}
	*key_id = key;
	*value_id = value;
	return btf;
}

static int meta_create(struct meta *m)
{
	LIBBPF_OPTS(bpf_map_create_opts, o);
	struct btf *btf = meta_btf(&o.btf_key_type_id, &o.btf_value_type_id);
	int fd, err;

	if (btf)
		o.btf_fd = btf__fd(btf);
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, PIN_META_NAME, PIN_META_KEY_LEN,
			    sizeof(struct pin_meta), META_MAX_ENTRIES, &o);
	btf__free(btf); /* the map holds its own reference */
	if (fd < 0)
		return -errno;
	if (!bpf_obj_pin(fd, m->path)) {
		m->fd = fd;
		return 0;
	}
	err = -errno;
	close(fd);
	if (err != -EEXIST)
		return err;
	/* Another qoslet starting at the same time pinned one first: use it. */
	meta_open(m);
	return m->fd >= 0 ? 0 : -EEXIST;
}

static void meta_key(char key[PIN_META_KEY_LEN], const char *name)
{
	memset(key, 0, PIN_META_KEY_LEN);
	snprintf(key, PIN_META_KEY_LEN, "%s", name);
}

static unsigned int meta_revision(const struct meta *m, const char *name, bool *recorded)
{
	char key[PIN_META_KEY_LEN];
	struct pin_meta v;

	meta_key(key, name);
	*recorded = m->fd >= 0 && !bpf_map_lookup_elem(m->fd, key, &v);
	return *recorded ? v.revision : PIN_REVISION_UNRECORDED;
}

static void meta_record(const struct meta *m, const char *name)
{
	struct pin_meta v = {.revision = pin_revision(name)};
	char key[PIN_META_KEY_LEN];

	if (m->fd < 0)
		return;
	meta_key(key, name);
	snprintf(v.writer, sizeof(v.writer), "%s", QOSLET_VERSION);
	if (bpf_map_update_elem(m->fd, key, &v, BPF_ANY))
		log_warn("pin %s: cannot record the revision of %s: %s", m->path, name,
			 strerror(errno));
}

/* *out: the layout of type `id` written into buf; NULL when id is 0 (no type). */
static int layout(const struct btf *btf, __u32 id, char *buf, const char **out)
{
	int err;

	*out = NULL;
	if (!id || !btf)
		return 0;
	err = pin_btf_layout(btf, id, buf, LAYOUT_LEN);
	if (!err)
		*out = buf;
	return err;
}

/*
 * BTF object `id` from the kernel, read into zeroed memory: btf__load_from_
 * kernel_by_id() mallocs the buffer, and memcheck does not see the kernel
 * fill it, so every later read of it would be reported.
 */
static struct btf *kernel_btf(__u32 id)
{
	struct bpf_btf_info info = {0};
	__u32 len = sizeof(info), size;
	struct btf *btf = NULL;
	int fd = bpf_btf_get_fd_by_id(id);
	void *data = NULL;

	if (fd < 0)
		return NULL;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len) && (size = info.btf_size) &&
	    (data = calloc(1, size))) {
		memset(&info, 0, sizeof(info));
		info.btf = (__u64)(uintptr_t)data;
		info.btf_size = size;
		len = sizeof(info);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len))
			btf = btf__new(data, size); /* copies the data */
	}
	free(data);
	close(fd);
	return btf;
}

/* The pinned map's layouts from its BTF in the kernel; those it cannot tell stay NULL. */
static void found_layouts(const struct bpf_map_info *info, struct pin_map *found, char *kbuf,
			  char *vbuf)
{
	struct btf *btf = info->btf_id ? kernel_btf(info->btf_id) : NULL;

	if (!btf)
		return;
	layout(btf, info->btf_key_type_id, kbuf, &found->key_layout);
	layout(btf, info->btf_value_type_id, vbuf, &found->value_layout);
	btf__free(btf);
}

static int decide(struct item *it, const struct bpf_object *obj, const struct meta *m)
{
	const struct btf *btf = bpf_object__btf(obj);
	const char *name = bpf_map__name(it->map);
	char wk[LAYOUT_LEN], wv[LAYOUT_LEN], fk[LAYOUT_LEN], fv[LAYOUT_LEN], what[96];
	struct pin_map want = {
		.shape = {bpf_map__type(it->map), bpf_map__key_size(it->map),
			  bpf_map__value_size(it->map), bpf_map__max_entries(it->map),
			  bpf_map__map_flags(it->map)},
		.revision = pin_revision(name),
	};
	struct pin_map found = {0};
	__u32 len = sizeof(it->info);
	int err;

	if (!want.revision) {
		log_err("map %s is missing from the list of pinned maps (PIN_MAPS, user/probes/pin_layout.h)",
			name);
		return -EINVAL;
	}
	err = layout(btf, bpf_map__btf_key_type_id(it->map), wk, &want.key_layout);
	if (!err)
		err = layout(btf, bpf_map__btf_value_type_id(it->map), wv, &want.value_layout);
	if (err) {
		log_err("map %s: its BTF cannot be described: %s", name, strerror(-err));
		return err;
	}
	switch (open_pin(it->path, &it->fd, what, sizeof(what))) {
	case PIN_ABSENT:
		it->action = PIN_CREATE;
		return 0;
	case PIN_NOT_MAP:
		it->action = PIN_REPLACE;
		snprintf(it->why, sizeof(it->why), "it is %s, not a map", what);
		return 0;
	case PIN_IS_MAP:
		break;
	}
	if (bpf_obj_get_info_by_fd(it->fd, &it->info, &len)) {
		it->action = PIN_REPLACE;
		snprintf(it->why, sizeof(it->why), "its map cannot be inspected (%s)",
			 strerror(errno));
		return 0;
	}
	found.shape = (struct pin_shape){it->info.type, it->info.key_size, it->info.value_size,
					 it->info.max_entries, it->info.map_flags};
	found.revision = meta_revision(m, name, &it->recorded);
	found_layouts(&it->info, &found, fk, fv);
	it->action = pin_decide(&want, &found, it->why, sizeof(it->why));
	return 0;
}

static bool is_percpu(__u32 type)
{
	return type == BPF_MAP_TYPE_PERCPU_HASH || type == BPF_MAP_TYPE_LRU_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_PERCPU_ARRAY;
}

/* Copies every entry of map `from` (described by info) into `to`, counting them. */
static int copy_entries(int from, int to, const struct bpf_map_info *info, struct item *it)
{
	int ncpus = is_percpu(info->type) ? libbpf_num_possible_cpus() : 1;
	/* The kernel hands out per-CPU values in 8-byte slots, one per possible CPU. */
	size_t vsize = is_percpu(info->type) ? ((info->value_size + 7) & ~7u) * (size_t)ncpus
					     : info->value_size;
	char *key = ncpus > 0 ? calloc(2, info->key_size) : NULL, *next;
	void *val = key ? calloc(1, vsize) : NULL;
	int err = ncpus < 0 ? ncpus : !val ? -ENOMEM : 0;

	next = key ? key + info->key_size : NULL;
	/* Bounded: nothing writes the old map now, but a hash walk restarts on a deletion. */
	for (__u32 n = 0; !err && n <= info->max_entries; n++) {
		if (bpf_map_get_next_key(from, n ? key : NULL, next))
			break; /* ENOENT: the last one was read */
		memcpy(key, next, info->key_size);
		if (bpf_map_lookup_elem(from, key, val))
			continue;
		if (bpf_map_update_elem(to, key, val, BPF_ANY))
			it->lost++;
		else
			it->copied++;
	}
	free(key);
	free(val);
	return err;
}

/*
 * A new map of the wanted shape with the old one's entries, pinned in its
 * place: pinned under a temporary name first and renamed over the old pin,
 * so that the path never lacks a map. The new map borrows the old one's
 * BTF: pin_decide() found the layouts equal.
 */
static int migrate(struct item *it, const char *dir)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = bpf_map__map_flags(it->map));
	const char *name = bpf_map__name(it->map);
	int btf_fd = it->info.btf_id ? bpf_btf_get_fd_by_id(it->info.btf_id) : -1;
	char tmp[PATH_MAX];
	int fd, err;

	if (btf_fd >= 0) {
		o.btf_fd = btf_fd;
		o.btf_key_type_id = it->info.btf_key_type_id;
		o.btf_value_type_id = it->info.btf_value_type_id;
	}
	fd = bpf_map_create(bpf_map__type(it->map), name, bpf_map__key_size(it->map),
			    bpf_map__value_size(it->map), bpf_map__max_entries(it->map), &o);
	err = fd < 0 ? -errno : 0;
	if (btf_fd >= 0)
		close(btf_fd);
	if (!err)
		err = copy_entries(it->fd, fd, &it->info, it);
	if (!err) {
		/* bpffs refuses dots in names; no C identifier, so no map, has a '-'. */
		snprintf(tmp, sizeof(tmp), "%s/%s-new", dir, name);
		unlink(tmp); /* left by a qoslet that died here */
		err = bpf_obj_pin(fd, tmp) ? -errno : 0;
		if (!err && rename(tmp, it->path)) {
			err = -errno;
			unlink(tmp);
		}
	}
	if (fd >= 0)
		close(fd);
	return err;
}

static int unpin(const char *path)
{
	int err;

	if (!remove(path) || errno == ENOENT)
		return 0;
	err = -errno;
	if (err == -ENOTEMPTY || err == -EEXIST)
		log_err("%s is a directory with entries where qoslet pins a map; qoslet removes "
			"no directory tree: move it away",
			path);
	else
		log_err("cannot remove %s: %s", path, strerror(-err));
	return err;
}

static bool changes(const struct item *it)
{
	return it->action == PIN_MIGRATE || it->action == PIN_REPLACE;
}

/*
 * Takes the pin directory's lock for changing pins. While another qoslet
 * attaches to them, a map's pin is not changed and its probe cannot load
 * (-EBUSY), but a damaged metadata map is only left alone.
 */
static int take_lock(const char *dir, int *fd, const struct item *items, size_t n, struct meta *m)
{
	int locked = bpffs_try_lock(dir, fd);

	if (locked > 0)
		return 0;
	if (locked < 0) {
		log_err("cannot lock %s: %s", dir, strerror(-locked));
		return locked;
	}
	for (size_t i = 0; i < n; i++) {
		if (!changes(&items[i]))
			continue;
		log_err("pin %s: %s, but another qoslet process is attached to the pins in %s: "
			"stop it first (it keeps the pins it knows while it runs), or use another "
			"--pin-dir",
			items[i].path, items[i].why, dir);
		return -EBUSY;
	}
	log_warn("pin %s: it is %s; left alone while another qoslet process is attached to the "
		 "pins in %s",
		 m->path, m->what, dir);
	m->replace = false;
	m->left_alone = true;
	return 0;
}

static int apply(struct item *items, size_t n, struct meta *m, const char *dir)
{
	int err;

	if (m->replace) {
		err = unpin(m->path);
		if (err)
			return err;
		log_warn(
			"pin %s: it is %s: replaced; the pins it described count as of revision %u",
			m->path, m->what, PIN_REVISION_UNRECORDED);
	}
	if (m->fd < 0 && !m->left_alone) {
		err = meta_create(m);
		if (err)
			log_warn("pin %s: cannot create the layout metadata (%s); the next upgrade "
				 "takes these pins as of revision %u",
				 m->path, strerror(-err), PIN_REVISION_UNRECORDED);
	}
	for (size_t i = 0; i < n; i++) {
		struct item *it = &items[i];

		if (it->action == PIN_MIGRATE) {
			err = migrate(it, dir);
			if (!err) {
				log_info("pin %s: %s: entries copied into a new map: %zu", it->path,
					 it->why, it->copied);
				if (it->lost)
					log_warn("pin %s: entries that did not fit into the new "
						 "map: %zu",
						 it->path, it->lost);
			} else {
				log_warn("pin %s: moving its entries to a new map failed (%s): "
					 "replacing it",
					 it->path, strerror(-err));
				it->action = PIN_REPLACE;
			}
		}
		if (it->action == PIN_REPLACE) {
			err = unpin(it->path);
			if (err)
				return err;
			log_warn("pin %s: %s: replaced by a new, empty map", it->path, it->why);
		}
		if (it->action != PIN_REUSE || !it->recorded)
			meta_record(m, bpf_map__name(it->map));
	}
	return 0;
}

static void append(char *buf, size_t len, size_t *used, const char *a, const char *b)
{
	if (*used < len)
		*used += snprintf(buf + *used, len - *used, "%s%s", a, b);
}

/* One line for the whole probe: which maps carry on and which start over. */
static void report(const struct item *items, size_t n, const char *dir)
{
	static const enum pin_action order[] = {PIN_REUSE, PIN_MIGRATE, PIN_REPLACE, PIN_CREATE};
	char line[1024] = "";
	size_t used = 0;
	bool upgraded = false, reset = false;

	for (size_t i = 0; i < n; i++) {
		upgraded |= changes(&items[i]);
		reset |= items[i].action == PIN_REPLACE;
	}
	for (size_t a = 0; a < sizeof(order) / sizeof(order[0]); a++) {
		bool first = true;

		for (size_t i = 0; i < n; i++) {
			if (items[i].action != order[a])
				continue;
			if (first)
				append(line, sizeof(line), &used, used ? "; " : "",
				       pin_action_name(order[a]));
			append(line, sizeof(line), &used, first ? " " : ", ",
			       bpf_map__name(items[i].map));
			first = false;
		}
	}
	if (upgraded)
		log_msg(reset ? LOG_WARN : LOG_INFO,
			"pins in %s upgraded to this qoslet's layout: %s", dir, line);
	else
		log_debug("pins in %s: %s", dir, line);
}

int pin_check(const struct bpf_object *obj, struct bpf_map *const *maps, size_t n,
	      const char *pin_dir)
{
	struct item *items = calloc(n ? n : 1, sizeof(*items));
	struct meta meta = {.fd = -1};
	size_t m = 0;
	bool change = false;
	int lock_fd = -1, err = 0;

	if (!items)
		return -ENOMEM;
	snprintf(meta.path, sizeof(meta.path), "%s/%s", pin_dir, PIN_META_NAME);
	meta_open(&meta);
	for (size_t i = 0; i < n && !err; i++) {
		struct item *it = &items[m];

		if (!bpf_map__autocreate(maps[i]))
			continue; /* libbpf neither creates nor pins it */
		it->map = maps[i];
		it->fd = -1;
		m++;
		snprintf(it->path, sizeof(it->path), "%s/%s", pin_dir, bpf_map__name(maps[i]));
		err = decide(it, obj, &meta);
		change |= changes(it);
	}
	if (!err && (change || meta.replace))
		err = take_lock(pin_dir, &lock_fd, items, m, &meta);
	if (!err)
		err = apply(items, m, &meta, pin_dir);
	if (!err)
		report(items, m, pin_dir);
	for (size_t i = 0; i < m; i++)
		if (items[i].fd >= 0)
			close(items[i].fd);
	if (meta.fd >= 0)
		close(meta.fd);
	if (lock_fd >= 0)
		close(lock_fd); /* releases the lock */
	free(items);
	return err;
}

static void fix_mode(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (lstat(path, &st) || !S_ISREG(st.st_mode) || (st.st_mode & 07777) == PIN_MODE)
		return;
	if (chmod(path, PIN_MODE))
		log_warn("pin %s has mode %04o and cannot be given %04o: %s", path,
			 st.st_mode & 07777, PIN_MODE, strerror(errno));
	else
		log_info("pin %s had mode %04o: now %04o", path, st.st_mode & 07777, PIN_MODE);
}

void pin_fix_modes(const char *pin_dir)
{
	const char *name;
	struct stat st;

	/* The directory: no one else may list it (its own bits, e.g. sticky, stay). */
	if (!stat(pin_dir, &st) && (st.st_mode & 077)) {
		if (chmod(pin_dir, st.st_mode & 07700))
			log_warn("pin directory %s has mode %04o and cannot be given %04o: %s",
				 pin_dir, st.st_mode & 07777, st.st_mode & 07700, strerror(errno));
		else
			log_info("pin directory %s had mode %04o: now %04o", pin_dir,
				 st.st_mode & 07777, st.st_mode & 07700);
	}

	fix_mode(pin_dir, PIN_META_NAME);
	for (size_t i = 0; (name = pin_map_name(i)); i++)
		fix_mode(pin_dir, name);
}
