/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a qoslet does with a map that an earlier run, perhaps of an older
 * qoslet, left pinned where it pins its own: the pure half of pin upgrades
 * (user/probes/pin_check.c inspects and acts).
 *
 * A pinned map is kept when it is what this qoslet would create; its
 * entries are copied into a new map when only the map's size, flags or (a
 * compatible) type changed and the entries still mean the same; anything
 * else is replaced by a new, empty map. "Mean the same" is two checks: the
 * key and value layouts read from the maps' BTF (automatic), and the map's
 * revision (by hand, pin_revision()) for changes of meaning that keep the
 * layout.
 */
#ifndef QOSLET_PROBES_PIN_LAYOUT_H
#define QOSLET_PROBES_PIN_LAYOUT_H

#include <linux/types.h>
#include <stddef.h>

struct btf;

/* A map's shape, as the kernel reports it and as libbpf would create it. */
struct pin_shape {
	__u32 type; /* enum bpf_map_type */
	__u32 key_size;
	__u32 value_size;
	__u32 max_entries;
	__u32 flags;
};

/* One side of the comparison: the map this qoslet wants, or the pinned one. */
struct pin_map {
	struct pin_shape shape;
	/*
	 * pin_btf_layout() of the key and value types; NULL when the map has
	 * no BTF type for it (a ring buffer has none; a pinned map created
	 * without BTF has none either, and then its layout is unknown).
	 */
	const char *key_layout;
	const char *value_layout;
	unsigned int revision;
};

enum pin_action {
	PIN_CREATE,  /* nothing pinned: the load pins a new map */
	PIN_REUSE,   /* the pinned map is what this qoslet wants: it carries on */
	PIN_MIGRATE, /* its entries are copied into a new map of the wanted shape */
	PIN_REPLACE, /* removed: the load pins a new, empty map */
};

/* Revisions of maps pinned before revisions were recorded. */
#define PIN_REVISION_UNRECORDED 1

/*
 * Every map a qoslet probe pins, by probe: X(map, revision). `map` is the
 * map's member in its probe's skeleton, which is also its name in bpf/ and
 * its pin's name. The probes pin their list through the skeleton
 * (PIN_SKEL_MAP), so a map renamed or dropped in bpf/ fails the build;
 * whoever opens a pin by name asks pin_map_name(PIN_MAP_<map>), so a map
 * renamed here fails the build there.
 *
 * Bump a map's revision when what its entries mean changes while the layout
 * stays the same (e.g. other bucket bounds for struct lat_hist, which
 * QOSLET_LAT_MIN_SHIFT sets): a newer qoslet then resets the map instead of
 * reading old counts as new ones. Layout changes need no bump: the BTF
 * comparison sees them.
 */
/* bpf/sched_switch.bpf.h */
#define PIN_MAPS_SCHED(X)                                                                          \
	X(rq_hist, 1)                                                                              \
	X(rq_pending, 1)                                                                           \
	X(rq_blame, 1)                                                                             \
	X(rq_blame_cache, 1)                                                                       \
	X(rq_blame_fresh, 1)                                                                       \
	X(sched_drops, 1)                                                                          \
	X(rq_alert_cfg, 1)                                                                         \
	X(rq_alert_watch, 1)                                                                       \
	X(rq_displacers, 1)                                                                        \
	X(rq_alerts, 2)
/* bpf/cpi_switch.bpf.h */
#define PIN_MAPS_CPI(X) X(cpi_usage, 1) X(cpi_drops, 1) X(cpi_info, 1)
/* bpf/throttle_switch.bpf.h, bpf/throttle.bpf.c */
#define PIN_MAPS_THROTTLE(X) X(throttle_tg, 1) X(throttle_drops, 1) X(throttle_since, 1)
/* bpf/memstall.bpf.c */
#define PIN_MAPS_MEMSTALL(X) X(memstall_cg, 1) X(memstall_oom, 1) X(memstall_drops, 1)
#define PIN_MAPS(X)	     PIN_MAPS_SCHED(X) PIN_MAPS_CPI(X) PIN_MAPS_THROTTLE(X) PIN_MAPS_MEMSTALL(X)

/* The maps of a list in the skeleton named `skel`: {PIN_MAPS_SCHED(PIN_SKEL_MAP)}. */
#define PIN_SKEL_MAP(map, revision) skel->maps.map,

#define PIN_MAP_ID(map, revision) PIN_MAP_##map,
/* Indices of pin_map_name(): PIN_MAP_rq_hist, ... (the maps' own names). */
enum pin_map_id { PIN_MAPS(PIN_MAP_ID) PIN_MAP_NR };
#undef PIN_MAP_ID

/*
 * Compares what is pinned (`found`, NULL when nothing is) with what this
 * qoslet wants, and says why in `why` (a phrase for a log line, empty for
 * CREATE and REUSE).
 */
enum pin_action pin_decide(const struct pin_map *want, const struct pin_map *found, char *why,
			   size_t len);

const char *pin_action_name(enum pin_action action);

/*
 * The revision of what the entries of the map pinned as `name` mean, or 0
 * when this qoslet pins no map of that name (PIN_MAPS lists every one).
 */
unsigned int pin_revision(const char *name);

/* The name of map i (enum pin_map_id), or NULL from PIN_MAP_NR on. */
const char *pin_map_name(size_t i);

/*
 * Writes a canonical description of BTF type `id` into buf: members by
 * name, bit offset and type; integers by size and sign; arrays by length;
 * type names, typedefs and qualifiers left out, so that the same layout
 * reads the same whether it came from vmlinux.h or linux/types.h. E.g.
 * struct blame_val is "{wait_ns:u8@0,count:u8@64}16". Returns 0, -E2BIG
 * when buf is too small, or -EINVAL for a type that cannot be described.
 */
int pin_btf_layout(const struct btf *btf, __u32 id, char *buf, size_t len);

#endif
