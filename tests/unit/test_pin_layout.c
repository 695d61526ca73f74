// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* What a qoslet does with pins an earlier (older) qoslet left: user/probes/pin_layout.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>

#include "probes/pin_layout.h"

/* ---- pin_btf_layout --------------------------------------------------------------- */

/*
 * struct lat_hist {count, sum_ns, slots[27]} of u64, built the way vmlinux.h
 * spells it (typedef __u64 -> unsigned long long, behind a const) or the way
 * a uapi header does (unsigned long directly); `swap` swaps the first two
 * members' names. Returns the struct's id.
 */
static int lat_hist_btf(struct btf *btf, bool vmlinux_style, bool swap)
{
	int u64, u32, slots, id;

	if (vmlinux_style) {
		int ull = btf__add_int(btf, "long long unsigned int", 8, 0);

		u64 = btf__add_typedef(btf, "__u64", ull);
		u64 = btf__add_const(btf, u64);
	} else {
		u64 = btf__add_int(btf, "long unsigned int", 8, 0);
	}
	u32 = btf__add_int(btf, "unsigned int", 4, 0);
	slots = btf__add_array(btf, u32, u64, 27);
	id = btf__add_struct(btf, vmlinux_style ? "lat_hist" : "other_name", 232);
	assert_int_equal(btf__add_field(btf, swap ? "sum_ns" : "count", u64, 0, 0), 0);
	assert_int_equal(btf__add_field(btf, swap ? "count" : "sum_ns", u64, 64, 0), 0);
	assert_int_equal(btf__add_field(btf, "slots", slots, 128, 0), 0);
	assert_true(id > 0);
	return id;
}

static void test_layout_ignores_names_of_types(void **state)
{
	struct btf *a = btf__new_empty(), *b = btf__new_empty();
	char la[256], lb[256];

	(void)state;
	assert_int_equal(pin_btf_layout(a, lat_hist_btf(a, true, false), la, sizeof(la)), 0);
	assert_int_equal(pin_btf_layout(b, lat_hist_btf(b, false, false), lb, sizeof(lb)), 0);
	assert_string_equal(la, "{count:u8@0,sum_ns:u8@64,slots:[27]u8@128}232");
	assert_string_equal(la, lb);
	btf__free(a);
	btf__free(b);
}

static void test_layout_sees_member_order(void **state)
{
	struct btf *a = btf__new_empty(), *b = btf__new_empty();
	char la[256], lb[256];

	(void)state;
	assert_int_equal(pin_btf_layout(a, lat_hist_btf(a, true, false), la, sizeof(la)), 0);
	assert_int_equal(pin_btf_layout(b, lat_hist_btf(b, true, true), lb, sizeof(lb)), 0);
	assert_string_not_equal(la, lb);
	btf__free(a);
	btf__free(b);
}

static void test_layout_kinds(void **state)
{
	struct btf *btf = btf__new_empty();
	int s32 = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	int e = btf__add_enum(btf, "mode", 4);
	char buf[256];
	int u, s;

	(void)state;
	assert_int_equal(btf__add_enum_value(btf, "A", 0), 0);
	u = btf__add_union(btf, "u", 4);
	assert_int_equal(btf__add_field(btf, "i", s32, 0, 0), 0);
	assert_int_equal(btf__add_field(btf, "m", e, 0, 0), 0);
	s = btf__add_struct(btf, "bits", 8);
	assert_int_equal(btf__add_field(btf, "lo", s32, 0, 3), 0);
	assert_int_equal(btf__add_field(btf, "hi", s32, 3, 5), 0);
	assert_int_equal(btf__add_field(btf, "", u, 32, 0), 0);
	assert_int_equal(pin_btf_layout(btf, s, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "{lo:s4@0:3,hi:s4@3:5,:union{i:s4@0,m:e4@0}4@32}8");
	btf__free(btf);
}

static void test_layout_errors(void **state)
{
	struct btf *btf = btf__new_empty();
	int id = lat_hist_btf(btf, true, false);
	int proto = btf__add_func_proto(btf, 0);
	char buf[16];

	(void)state;
	assert_int_equal(pin_btf_layout(btf, id, buf, sizeof(buf)), -E2BIG);
	assert_int_equal(pin_btf_layout(btf, proto, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(pin_btf_layout(btf, 9999, buf, sizeof(buf)), -EINVAL);
	btf__free(btf);
}

/* ---- pin_decide --------------------------------------------------------------------- */

#define HIST "{count:u8@0,sum_ns:u8@64,slots:[27]u8@128}232"

/* rq_hist as qoslet wants it. */
static struct pin_map rq_hist(void)
{
	return (struct pin_map){
		.shape = {BPF_MAP_TYPE_PERCPU_HASH, 8, 232, 4096, BPF_F_NO_PREALLOC},
		.key_layout = "u8",
		.value_layout = HIST,
		.revision = 1,
	};
}

static enum pin_action decide(const struct pin_map *found, char *why)
{
	struct pin_map want = rq_hist();

	return pin_decide(&want, found, why, 256);
}

static void test_decide_nothing_pinned(void **state)
{
	char why[256];

	(void)state;
	assert_int_equal(decide(NULL, why), PIN_CREATE);
	assert_string_equal(why, "");
}

static void test_decide_same_is_kept(void **state)
{
	struct pin_map found = rq_hist();
	char why[256];

	(void)state;
	assert_int_equal(decide(&found, why), PIN_REUSE);
	assert_string_equal(why, "");
}

static void test_decide_other_size_is_migrated(void **state)
{
	struct pin_map found = rq_hist();
	char why[256];

	(void)state;
	found.shape.max_entries = 1024;
	found.shape.flags = 0;
	assert_int_equal(decide(&found, why), PIN_MIGRATE);
	assert_string_equal(why, "max_entries 1024, now 4096; flags 0x0, now 0x1");
}

static void test_decide_compatible_type_is_migrated(void **state)
{
	struct pin_map found = rq_hist();
	char why[256];

	(void)state;
	found.shape.type = BPF_MAP_TYPE_LRU_PERCPU_HASH;
	assert_int_equal(decide(&found, why), PIN_MIGRATE);
	assert_string_equal(why, "type lru_percpu_hash, now percpu_hash");
}

static void test_decide_other_kind_is_replaced(void **state)
{
	struct pin_map found = rq_hist();
	char why[256];

	(void)state;
	found.shape.type = BPF_MAP_TYPE_HASH; /* one value, not one per CPU */
	assert_int_equal(decide(&found, why), PIN_REPLACE);
	assert_string_equal(why, "type hash, now percpu_hash: its entries cannot be copied");
}

static void test_decide_other_entries_are_replaced(void **state)
{
	struct pin_map found;
	char why[256];

	(void)state;
	found = rq_hist();
	found.shape.value_size = 224;
	assert_int_equal(decide(&found, why), PIN_REPLACE);
	assert_string_equal(why, "value size 224, now 232");

	found = rq_hist();
	found.shape.key_size = 4;
	found.shape.max_entries = 1; /* the entries decide first */
	assert_int_equal(decide(&found, why), PIN_REPLACE);
	assert_string_equal(why, "key size 4, now 8");

	found = rq_hist();
	found.value_layout = "{sum_ns:u8@0,count:u8@64,slots:[27]u8@128}232";
	assert_int_equal(decide(&found, why), PIN_REPLACE);
	assert_string_equal(why, "value layout {sum_ns:u8@0,count:u8@64,slots:[27]u8@128}232, "
				 "now " HIST);

	found = rq_hist();
	found.value_layout = NULL; /* pinned without BTF: nothing proves what it holds */
	assert_int_equal(decide(&found, why), PIN_REPLACE);
	assert_string_equal(why, "value layout without BTF, now " HIST);
}

static void test_decide_other_revision_is_replaced(void **state)
{
	struct pin_map want = rq_hist(), found = rq_hist();
	char why[256];

	(void)state;
	want.revision = 2;
	found.shape.max_entries = 1024; /* copyable, but the entries mean something else */
	assert_int_equal(pin_decide(&want, &found, why, sizeof(why)), PIN_REPLACE);
	assert_string_equal(why, "revision 1, now 2");
}

static void test_decide_ring_buffer(void **state)
{
	struct pin_map want = {.shape = {BPF_MAP_TYPE_RINGBUF, 0, 0, 65536, 0}, .revision = 1};
	struct pin_map found = want;
	char why[256];

	(void)state;
	assert_int_equal(pin_decide(&want, &found, why, sizeof(why)), PIN_REUSE);
	found.shape.max_entries = 4096;
	assert_int_equal(pin_decide(&want, &found, why, sizeof(why)), PIN_REPLACE);
	assert_string_equal(why, "max_entries 4096, now 65536: its entries cannot be copied");
}

static void test_decide_short_buffer(void **state)
{
	struct pin_map found = rq_hist();
	char why[8];

	(void)state;
	found.shape.value_size = 1;
	assert_int_equal(pin_decide(&(struct pin_map){rq_hist().shape, "u8", HIST, 1}, &found, why,
				    sizeof(why)),
			 PIN_REPLACE);
	assert_int_equal(strlen(why), 0); /* what did not fit is left out, never cut */
}

/* ---- the list of pinned maps -------------------------------------------------------- */

static void test_revisions(void **state)
{
	/* Pins on running nodes are found by these names: a rename is an upgrade to plan. */
	static const char *const pinned[] = {
		"rq_hist",	  "rq_pending",	  "rq_blame",	    "rq_blame_cache",
		"rq_blame_fresh", "sched_drops",  "rq_alert_cfg",   "rq_alert_watch",
		"rq_displacers",  "rq_alerts",	  "cpi_usage",	    "cpi_drops",
		"cpi_info",	  "throttle_tg",  "throttle_drops", "throttle_since",
		"memstall_cg",	  "memstall_oom", "memstall_drops",
	};
	const char *name;
	size_t n = 0;

	(void)state;
	for (size_t i = 0; (name = pin_map_name(i)); i++, n++) {
		/* The kernel keeps 15 characters of a map's name: the pin is named in full. */
		assert_true(strlen(name) <= 15);
		assert_true(pin_revision(name) >= 1);
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(pin_map_name(j), name);
		assert_true(i < sizeof(pinned) / sizeof(pinned[0]));
		assert_string_equal(name, pinned[i]);
	}
	assert_int_equal(n, sizeof(pinned) / sizeof(pinned[0]));
	assert_int_equal(n, PIN_MAP_NR);
	assert_string_equal(pin_map_name(PIN_MAP_rq_alerts), "rq_alerts");
	assert_int_equal(pin_revision("rq_hist"), 1);
	/* 2: alerts of two kinds, with the kind in each record */
	assert_int_equal(pin_revision("rq_alerts"), 2);
	assert_int_equal(pin_revision("no_such_map"), 0);
	assert_string_equal(pin_action_name(PIN_MIGRATE), "migrated");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_ignores_names_of_types),
		cmocka_unit_test(test_layout_sees_member_order),
		cmocka_unit_test(test_layout_kinds),
		cmocka_unit_test(test_layout_errors),
		cmocka_unit_test(test_decide_nothing_pinned),
		cmocka_unit_test(test_decide_same_is_kept),
		cmocka_unit_test(test_decide_other_size_is_migrated),
		cmocka_unit_test(test_decide_compatible_type_is_migrated),
		cmocka_unit_test(test_decide_other_kind_is_replaced),
		cmocka_unit_test(test_decide_other_entries_are_replaced),
		cmocka_unit_test(test_decide_other_revision_is_replaced),
		cmocka_unit_test(test_decide_ring_buffer),
		cmocka_unit_test(test_decide_short_buffer),
		cmocka_unit_test(test_revisions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
