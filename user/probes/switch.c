// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "probes/switch.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>

#include "log.h"
#include "probes/kernel_btf.h"

int switch_share_maps(struct bpf_map *const *sw, struct bpf_map *const *own, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int err;

		if (!own || !bpf_map__autocreate(own[i])) {
			bpf_map__set_autocreate(sw[i], false);
			continue;
		}
		err = bpf_map__reuse_fd(sw[i], bpf_map__fd(own[i]));
		if (err)
			return err;
	}
	return 0;
}

struct load_ctx {
	struct switch_bpf *skel;
	int (*join)(void *ctx, struct switch_bpf *skel, enum probe_hook *hook);
	void *join_ctx;
	bool joined;
};

static int load_with(void *probe, enum probe_hook hook, const struct cgroup_fs *fs)
{
	struct load_ctx *c = probe;
	struct switch_bpf *skel = switch_bpf__open_opts(kernel_btf_open_opts());
	bool btf = hook == PROBE_HOOK_TP_BTF, lean;
	enum probe_hook need = hook;
	int ret;

	if (!skel)
		return -errno;
	skel->rodata->cgroup_mode = fs->mode;
	skel->rodata->cgroup_hierarchy_id = fs->hierarchy_id;
	ret = c->join(c->join_ctx, skel, &need);
	/* Without the throttle step, the program its compare-and-swap is not in. */
	lean = !skel->rodata->throttle_on;
	bpf_program__set_autoload(skel->progs.btf_switch, btf && !lean);
	bpf_program__set_autoload(skel->progs.raw_switch, !btf && !lean);
	bpf_program__set_autoload(skel->progs.btf_switch_lean, btf && lean);
	bpf_program__set_autoload(skel->progs.raw_switch_lean, !btf && lean);
	if (ret == 0) { /* no probe joined: no program */
		switch_bpf__destroy(skel);
		c->skel = NULL;
		return 0;
	}
	if (ret > 0 && need != hook)
		ret = -EINVAL; /* a probe's state lives where only the other hook reaches */
	if (ret > 0)
		ret = switch_bpf__load(skel);
	if (ret < 0) {
		switch_bpf__destroy(skel);
		return ret;
	}
	c->skel = skel;
	return 0;
}

const void *switch_object(size_t *size)
{
	return switch_bpf__elf_bytes(size);
}

int switch_load(struct switch_bpf **out, const struct cgroup_fs *fs, enum probe_hook want,
		int (*join)(void *ctx, struct switch_bpf *skel, enum probe_hook *hook), void *ctx)
{
	struct load_ctx c = {.join = join, .join_ctx = ctx};
	int err = probe_load_best("switch", want, load_with, &c, fs);

	*out = c.skel;
	return err;
}
