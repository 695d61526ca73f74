/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Pin upgrades: before a probe loads, each of its maps' pins is brought to
 * this qoslet's layout (user/probes/pin_layout.h decides how), so that
 * libbpf reuses what can be kept and pins new maps for the rest. A small
 * pinned map, PIN_META_NAME, records the revision of every pinned map.
 * docs/pinning.md describes it for operators.
 */
#ifndef QOSLET_PROBES_PIN_CHECK_H
#define QOSLET_PROBES_PIN_CHECK_H

#include <linux/types.h>
#include <stddef.h>

/* The metadata map's name and pin file: BPF_HASH, key char[16], value struct pin_meta. */
#define PIN_META_NAME	 "qoslet_layout"
#define PIN_META_KEY_LEN 16 /* a map name, NUL-padded (BPF_OBJ_NAME_LEN) */

struct pin_meta {
	__u32 revision;	 /* pin_revision() of the qoslet that recorded it */
	char writer[28]; /* that qoslet's version, for people reading the map */
};

struct bpf_object;
struct bpf_map;

/*
 * For each of maps[0..n) of obj (opened, not loaded) that pin_dir holds a
 * pin for: keeps it, copies its entries into a new map pinned in its
 * place, or removes it, and logs what it did. Changing a pin takes the
 * pin directory's lock (bpffs_try_lock()) for the moment: pins are never
 * changed under a qoslet that attaches to them. Must not run while this
 * process holds that lock on another descriptor.
 * Returns 0, or -errno when a pin must change but cannot: -EBUSY when
 * another qoslet process holds the lock, -ENOTEMPTY when a non-empty
 * directory stands where a map belongs, -EINVAL for a map this qoslet does
 * not list in pin_revision() (a bug).
 */
int pin_check(const struct bpf_object *obj, struct bpf_map *const *maps, size_t n,
	      const char *pin_dir);

/*
 * Sets every qoslet pin in pin_dir (maps and metadata) to mode 0600, and
 * takes group and others' access to pin_dir away, saying what it changed.
 */
void pin_fix_modes(const char *pin_dir);

#endif
