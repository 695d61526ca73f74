// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "probes/kernel_btf.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probes/btf_attach.h"
#include "probes/btf_small.h"
#include "log.h"
#include "readfile.h"

/*
 * Loaded on first use and kept until kernel_btf_release(): parsing vmlinux
 * BTF takes tens of milliseconds and several megabytes.
 */
static struct btf *cached;
static bool tried;
/* The cut-down copy in use (kernel_btf_small_setup), or "". */
static char small_path[PATH_MAX];
static struct bpf_object_open_opts small_opts = {.sz = sizeof(small_opts)};

static struct btf *vmlinux_btf(void)
{
	if (!tried) {
		tried = true;
		cached = small_path[0] ? btf__parse(small_path, NULL) : btf__load_vmlinux_btf();
		if (libbpf_get_error(cached))
			cached = NULL;
	}
	return cached;
}

void kernel_btf_release(void)
{
	btf__free(cached);
	cached = NULL;
	tried = false;
}

bool kernel_struct_has_member(const char *s, const char *m)
{
	struct btf *btf = vmlinux_btf();
	const struct btf_type *t;
	const struct btf_member *mem;
	int id;

	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, s, BTF_KIND_STRUCT);
	if (id < 0)
		return false;
	t = btf__type_by_id(btf, id);
	mem = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, mem++)
		if (!strcmp(btf__name_by_offset(btf, mem->name_off), m))
			return true;
	return false;
}

bool kernel_has_struct(const char *s)
{
	struct btf *btf = vmlinux_btf();

	return btf && btf__find_by_name_kind(btf, s, BTF_KIND_STRUCT) >= 0;
}

bool kernel_task_storage_under_rq_lock(void)
{
	return kernel_struct_has_member("bpf_local_storage_map", "storage_ma");
}

/* The type behind typedefs and qualifiers. */
static const struct btf_type *skip_mods(const struct btf *btf, __u32 id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	while (t && (btf_is_mod(t) || btf_is_typedef(t)))
		t = btf__type_by_id(btf, t->type);
	return t;
}

bool kernel_tp_arg_is_struct_ptr(const char *tp, int arg, const char *s)
{
	struct btf *btf = vmlinux_btf();
	const struct btf_type *t;
	const struct btf_param *params;
	char name[128];
	int id;

	if (!btf)
		return false;
	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	id = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
	if (id < 0)
		return false;
	/* typedef -> pointer -> func proto (void *ctx, the tracepoint's args...) */
	t = skip_mods(btf, id);
	if (!t || !btf_is_ptr(t))
		return false;
	t = skip_mods(btf, t->type);
	if (!t || !btf_is_func_proto(t) || arg + 1 >= btf_vlen(t))
		return false;
	params = btf_params(t);
	t = skip_mods(btf, params[arg + 1].type);
	if (!t || !btf_is_ptr(t))
		return false;
	t = skip_mods(btf, t->type);
	return t && btf_is_struct(t) && !strcmp(btf__name_by_offset(btf, t->name_off), s);
}

const struct bpf_object_open_opts *kernel_btf_open_opts(void)
{
	return small_path[0] ? &small_opts : NULL;
}

/* FNV-1a: names the copy after this boot, qoslet and its objects, so that no other reads it. */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

/* Ours alone: owned by this user and writable by no one else (it steers relocations). */
static bool owned_privately(const char *path, mode_t type)
{
	struct stat st;

	return !lstat(path, &st) && (st.st_mode & S_IFMT) == type && st.st_uid == geteuid() &&
	       !(st.st_mode & 022);
}

/* The objects' BTF and the tracepoints their programs attach to, cut from `full`. */
static struct btf *cut(const struct btf *full, const struct kernel_btf_object *objs, size_t n)
{
	struct bpf_object *opened[8] = {0};
	const struct btf *locals[8];
	const char *tps[64], *funcs[64];
	size_t n_tps = 0, n_funcs = 0, n_locals = 0;
	struct btf *out = NULL;
	int err = 0;

	if (n > sizeof(opened) / sizeof(opened[0])) {
		errno = E2BIG;
		return NULL;
	}
	for (size_t i = 0; i < n && !err; i++) {
		struct bpf_program *prog;

		opened[i] = bpf_object__open_mem(objs[i].elf, objs[i].size, NULL);
		err = libbpf_get_error(opened[i]);
		if (err) {
			opened[i] = NULL;
			break;
		}
		if (bpf_object__btf(opened[i]))
			locals[n_locals++] = bpf_object__btf(opened[i]);
		bpf_object__for_each_program(prog, opened[i]) {
			const char *sec = bpf_program__section_name(prog);
			const char *slash = strchr(sec, '/');

			if (slash && (!strncmp(sec, "tp_btf/", 7) || !strncmp(sec, "raw_tp/", 7)) &&
			    n_tps < sizeof(tps) / sizeof(tps[0]))
				tps[n_tps++] = slash + 1;
			if (slash && (!strncmp(sec, "fentry/", 7) || !strncmp(sec, "fexit/", 6)) &&
			    n_funcs < sizeof(funcs) / sizeof(funcs[0]))
				funcs[n_funcs++] = slash + 1;
		}
	}
	if (!err) {
		out = btf_small_build(full, locals, n_locals, tps, n_tps, funcs, n_funcs);
		err = out ? 0 : -errno;
	}
	for (size_t i = 0; i < n; i++)
		bpf_object__close(opened[i]);
	errno = -err;
	return out;
}

/* Writes the cut-down copy to `path` (through a temporary name) and removes older copies. */
static int write_small(const struct btf *small, const char *dir, const char *path)
{
	char tmp[PATH_MAX], pattern[PATH_MAX];
	const void *raw;
	__u32 size;
	glob_t old;
	int fd, err = 0;

	raw = btf__raw_data(small, &size);
	if (!raw)
		return -ENOMEM;
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	if (!owned_privately(dir, S_IFDIR))
		return -EPERM;
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	if (write(fd, raw, size) != (ssize_t)size)
		err = errno ? -errno : -EIO;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		return err;
	}
	snprintf(pattern, sizeof(pattern), "%s/vmlinux-*.btf", dir);
	if (!glob(pattern, 0, NULL, &old)) {
		for (size_t i = 0; i < old.gl_pathc; i++)
			if (strcmp(old.gl_pathv[i], path))
				unlink(old.gl_pathv[i]);
		globfree(&old);
	}
	return 0;
}

bool kernel_btf_small_setup(const struct kernel_btf_object *objs, size_t n, bool use)
{
	const char *dir = getenv("QOSLET_BTF_DIR");
	char boot_id[64] = "", path[PATH_MAX];
	uint64_t key = 0xcbf29ce484222325ULL;
	struct btf *full, *small;
	int err;

	if (!dir || !dir[0])
		dir = "/run/qoslet";
	if (read_file_at(AT_FDCWD, "/proc/sys/kernel/random/boot_id", boot_id, sizeof(boot_id)))
		return false; /* no way to tell this boot's copy from a stale one */
	key = fnv1a(key, boot_id, strlen(boot_id));
	/* The version too: another qoslet may cut the same objects otherwise. */
	key = fnv1a(key, QOSLET_VERSION, strlen(QOSLET_VERSION));
	for (size_t i = 0; i < n; i++)
		key = fnv1a(key, objs[i].elf, objs[i].size);
	snprintf(path, sizeof(path), "%s/vmlinux-%016llx.btf", dir, (unsigned long long)key);
	if (!owned_privately(path, S_IFREG)) {
		kernel_btf_release(); /* the questions' copy, if any, must be the full one */
		full = vmlinux_btf();
		if (!full) {
			log_warn("kernel BTF: cannot read it to cut a copy: %s", strerror(errno));
			return false;
		}
		small = cut(full, objs, n);
		err = small ? write_small(small, dir, path) : -errno;
		btf__free(small);
		if (err) {
			/* Only memory is lost: the full BTF serves as it always did. */
			log_info(
				"kernel BTF: cannot write the cut-down copy %s (%s): using the full BTF",
				path, strerror(-err));
			return false;
		}
		log_info("kernel BTF: wrote the cut-down copy %s for later CLI views", path);
	}
	if (!use)
		return false;
	kernel_btf_release();
	snprintf(small_path, sizeof(small_path), "%s", path);
	small_opts.btf_custom_path = small_path;
	btf_attach_register(vmlinux_btf()); /* the copy, parsed once: the questions use it too */
	return true;
}
