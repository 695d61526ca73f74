/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The scheduler probe: loads bpf/sched.bpf.c, pins its maps, attaches its
 * programs through the best hook the kernel allows, and reads the maps into
 * a snapshot.
 *
 * Several qoslet processes may run at once (the agent and an SRE's CLI):
 * they share the pinned maps, and only the one holding a lock on the pin
 * directory attaches programs, so no event is counted twice. The others
 * read the same maps and take over attaching if the holder goes away.
 */
#ifndef QOSLET_PROBES_SCHED_H
#define QOSLET_PROBES_SCHED_H

#include <stdbool.h>

#include "../cgroup.h"
#include "../snapshot.h"

#define QOSLET_DEFAULT_PIN_DIR "/sys/fs/bpf/qoslet"

enum sched_hook {
	SCHED_HOOK_AUTO = 0, /* tp_btf, else raw_tp */
	SCHED_HOOK_TP_BTF,
	SCHED_HOOK_RAW_TP,
};

enum sched_wait {
	SCHED_WAIT_AUTO = 0, /* sched_info where the kernel has it, else stamp */
	SCHED_WAIT_SCHED_INFO,
	SCHED_WAIT_STAMP,
};

struct sched_probe_opts {
	const char *pin_dir; /* NULL: QOSLET_DEFAULT_PIN_DIR */
	enum sched_hook hook;
	enum sched_wait wait;
};

struct sched_probe;

/* "tp_btf", "raw_tp", or "auto". */
const char *sched_hook_name(enum sched_hook hook);
/* Parses a --hook value; -EINVAL when unknown. */
int sched_hook_parse(const char *s, enum sched_hook *hook);

/* "sched_info", "stamp", or "auto"; and the --wait-source parser. */
const char *sched_wait_name(enum sched_wait wait);
int sched_wait_parse(const char *s, enum sched_wait *wait);

/*
 * Mounts bpffs/tracefs if needed, loads, pins and (if no other qoslet
 * process has) attaches. Logs the reason and returns -errno on failure.
 */
int sched_probe_open(struct sched_probe **out, const struct sched_probe_opts *opts,
		     const struct cgroup_fs *fs);
void sched_probe_close(struct sched_probe *p);

/* Re-checks attach ownership: attaches if the previous owner went away. */
int sched_probe_poll(struct sched_probe *p);

/* The hook this process attached, or SCHED_HOOK_AUTO when another owns it. */
enum sched_hook sched_probe_attached(const struct sched_probe *p);

/* Where the waits come from in the loaded programs. */
enum sched_wait sched_probe_wait_source(const struct sched_probe *p);

/* Reads every pinned map into s (cumulative values). */
int sched_probe_read(struct sched_probe *p, struct snapshot *s);

#endif
