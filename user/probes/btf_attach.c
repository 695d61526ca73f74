// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "probes/btf_attach.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "probes/btf_small.h"
#include "log.h"

/* The kernel's ids of the attach targets, by name (a copy of the enum: `small` may be freed). */
struct attach_id {
	char name[128];
	__u32 id;
};

static struct attach_id ids[64];
static size_t n_ids;
static bool registered;

/* The sections taken over, each with the attach type and the prefix of its target's name. */
static const struct {
	const char *sec;
	enum bpf_attach_type type;
	const char *prefix;
} kinds[] = {
	{"tp_btf+", BPF_TRACE_RAW_TP, "btf_trace_"},
	{"fentry+", BPF_TRACE_FENTRY, ""},
	{"fexit+", BPF_TRACE_FEXIT, ""},
};

static int lookup(const char *name, __u32 *id)
{
	for (size_t i = 0; i < n_ids; i++)
		if (!strcmp(ids[i].name, name)) {
			*id = ids[i].id;
			return 0;
		}
	return -ESRCH;
}

/* Called by bpf_object__load() for each program, after its relocations, before the load. */
static int prepare_load(struct bpf_program *prog, struct bpf_prog_load_opts *opts, long kind)
{
	const char *target = strchr(bpf_program__section_name(prog), '/');
	char name[sizeof(ids[0].name)];
	__u32 id;
	int err;

	if (!target)
		return -EINVAL;
	snprintf(name, sizeof(name), "%s%s", kinds[kind].prefix, target + 1);
	err = lookup(name, &id);
	if (err) {
		log_warn("%s: the cut-down kernel BTF has no attach id for %s",
			 bpf_program__name(prog), name);
		return err;
	}
	/* The object is not loaded yet: libbpf still takes the type, and the attach uses it. */
	err = bpf_program__set_type(prog, BPF_PROG_TYPE_TRACING);
	if (err)
		return err;
	opts->expected_attach_type = kinds[kind].type;
	opts->attach_btf_id = id;
	opts->attach_btf_obj_fd = 0; /* vmlinux */
	return 0;
}

static int attach(const struct bpf_program *prog, long kind, struct bpf_link **link)
{
	(void)kind;
	*link = bpf_program__attach_trace(prog);
	return *link ? 0 : -errno;
}

/* Copies the enum BTF_SMALL_ATTACH_IDS of `small`: the number of ids, or -ENOENT. */
static int copy_ids(const struct btf *small)
{
	int id = btf__find_by_name_kind(small, BTF_SMALL_ATTACH_IDS, BTF_KIND_ENUM);
	const struct btf_type *t;
	const struct btf_enum *e;

	if (id < 0)
		return -ENOENT;
	t = btf__type_by_id(small, id);
	e = btf_enum(t);
	for (n_ids = 0; n_ids < (size_t)btf_vlen(t) && n_ids < sizeof(ids) / sizeof(ids[0]);
	     n_ids++) {
		snprintf(ids[n_ids].name, sizeof(ids[n_ids].name), "%s",
			 btf__name_by_offset(small, e[n_ids].name_off));
		ids[n_ids].id = (__u32)e[n_ids].val;
	}
	return (int)n_ids;
}

bool btf_attach_register(const struct btf *small)
{
	if (registered)
		return true;
	if (!small || copy_ids(small) < 0) {
		log_info("kernel BTF: the cut-down copy has no attach ids: tracing programs "
			 "parse the full BTF");
		return false;
	}
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		/* A raw tracepoint: the one program type libbpf opens without kernel BTF. */
		LIBBPF_OPTS(libbpf_prog_handler_opts, opts, .cookie = (long)k,
			    .prog_prepare_load_fn = prepare_load, .prog_attach_fn = attach);
		int err = libbpf_register_prog_handler(kinds[k].sec, BPF_PROG_TYPE_RAW_TRACEPOINT,
						       kinds[k].type, &opts);

		if (err < 0) {
			/* Those registered stay: each handles its own sections whole. */
			log_warn("kernel BTF: cannot take over %s sections (%s): they parse the "
				 "full BTF",
				 kinds[k].sec, strerror(-err));
			return false;
		}
	}
	registered = true;
	return true;
}

bool btf_attach_registered(void)
{
	return registered;
}
