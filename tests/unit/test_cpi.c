// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The cpi probe's pure parts: --cpi-events parsing, the mode chosen for
 * each outcome of opening the events, the labels of each mode, the CPU
 * list, and the multiplexing maths the BPF program runs (bpf/cpi.h).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "probes/cpi_mode.h"
#include "cpulist.h"

static void test_spec_defaults(void **state)
{
	struct cpi_spec s;

	(void)state;
	assert_int_equal(cpi_spec_parse(NULL, &s), 0);
	assert_int_equal(s.kind, CPI_SPEC_AUTO);
	/* Cycles first, instructions second: the numerator of CPI is cycles. */
	assert_string_equal(s.num, "cycles");
	assert_string_equal(s.den, "instructions");
	assert_int_equal(cpi_spec_parse("auto", &s), 0);
	assert_int_equal(s.kind, CPI_SPEC_AUTO);
	assert_int_equal(cpi_spec_parse("software", &s), 0);
	assert_int_equal(s.kind, CPI_SPEC_SOFTWARE);
}

/* koordlet once swapped the two: the order given is the order kept. */
static void test_spec_named_order(void **state)
{
	struct cpi_spec s;

	(void)state;
	assert_int_equal(cpi_spec_parse("CPU_CLK_UNHALTED:THREAD_P,INST_RETIRED:ANY_P", &s), 0);
	assert_int_equal(s.kind, CPI_SPEC_NAMED);
	assert_string_equal(s.num, "CPU_CLK_UNHALTED:THREAD_P");
	assert_string_equal(s.den, "INST_RETIRED:ANY_P");
	assert_int_equal(cpi_spec_parse("instructions,cycles", &s), 0);
	assert_string_equal(s.num, "instructions");
	assert_string_equal(s.den, "cycles");
}

static void test_spec_invalid(void **state)
{
	static const char *const bad[] = {
		"",	"cycles",   "cycles,", ",instructions", "a,b,c", "cycles, instructions",
		"Auto", "soft ware"};
	char longname[CPI_EVENT_NAME_MAX + 8];
	struct cpi_spec s;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(cpi_spec_parse(bad[i], &s), -EINVAL);
	memset(longname, 'x', sizeof(longname));
	longname[CPI_EVENT_NAME_MAX] = ',';
	longname[CPI_EVENT_NAME_MAX + 1] = 'y';
	longname[CPI_EVENT_NAME_MAX + 2] = '\0';
	assert_int_equal(cpi_spec_parse(longname, &s), -EINVAL);
}

static enum cpi_mode choose(const char *spec, int hw, int sw, char *reason, size_t len)
{
	struct cpi_spec s;

	assert_int_equal(cpi_spec_parse(spec, &s), 0);
	return choose_cpi_mode(&s, hw, "cycles: hw text", sw, "cpu-clock: sw text", reason, len);
}

static void test_choose_auto(void **state)
{
	char r[256];

	(void)state;
	assert_int_equal(choose("auto", 0, 0, r, sizeof(r)), CPI_MODE_HARDWARE);
	assert_string_equal(r, "");
	assert_int_equal(choose("auto", -ENOENT, 0, r, sizeof(r)), CPI_MODE_SOFTWARE);
	assert_string_equal(r, "no hardware PMU: cycles: hw text");
	assert_int_equal(choose("auto", -EACCES, 0, r, sizeof(r)), CPI_MODE_SOFTWARE);
	assert_string_equal(r, "hardware events refused: cycles: hw text");
	assert_int_equal(choose("auto", -ENOENT, -EACCES, r, sizeof(r)), CPI_MODE_OFF);
	assert_non_null(strstr(r, "software events: cpu-clock: sw text"));
}

static void test_choose_software_and_named(void **state)
{
	char r[256];

	(void)state;
	/* Forced software even where the hardware would open. */
	assert_int_equal(choose("software", 0, 0, r, sizeof(r)), CPI_MODE_SOFTWARE);
	assert_string_equal(r, "forced by --cpi-events software");
	assert_int_equal(choose("software", 0, -ENOENT, r, sizeof(r)), CPI_MODE_OFF);
	/* Named events: exactly those, never the stand-ins. */
	assert_int_equal(choose("cycles,instructions", 0, 0, r, sizeof(r)), CPI_MODE_HARDWARE);
	assert_int_equal(choose("cycles,instructions", -ENOENT, 0, r, sizeof(r)), CPI_MODE_OFF);
	assert_string_equal(r, "cycles: hw text");
	/* hardware: the generic pair or nothing (the agent's outlier detection). */
	assert_int_equal(choose("hardware", 0, 0, r, sizeof(r)), CPI_MODE_HARDWARE);
	assert_int_equal(choose("hardware", -ENOENT, 0, r, sizeof(r)), CPI_MODE_OFF);
	assert_string_equal(r, "no hardware PMU: cycles: hw text");
}

static void test_needs_software(void **state)
{
	struct cpi_spec s;

	(void)state;
	cpi_spec_parse("auto", &s);
	assert_false(cpi_needs_software(&s, 0));
	assert_true(cpi_needs_software(&s, -ENOENT));
	cpi_spec_parse("software", &s);
	assert_true(cpi_needs_software(&s, 0));
	cpi_spec_parse("a,b", &s);
	assert_false(cpi_needs_software(&s, -ENOENT));
	assert_int_equal(cpi_spec_parse("hardware", &s), 0);
	assert_int_equal(s.kind, CPI_SPEC_HARDWARE);
	assert_string_equal(s.num, "cycles");
	assert_false(cpi_needs_software(&s, -ENOENT));
}

static void test_describe_and_labels(void **state)
{
	struct cpi_spec s;
	struct cpi_labels l;
	char buf[256];

	(void)state;
	cpi_spec_parse(NULL, &s);
	cpi_describe(CPI_MODE_HARDWARE, &s, "", buf, sizeof(buf));
	assert_string_equal(buf, "hardware cycles/instructions");
	cpi_describe(CPI_MODE_SOFTWARE, &s, "no hardware PMU: cycles: No such file or directory",
		     buf, sizeof(buf));
	assert_string_equal(buf, "software task-clock/cpu-clock, not CPI (no hardware PMU: "
				 "cycles: No such file or directory)");
	cpi_describe(CPI_MODE_OFF, &s, "x", buf, sizeof(buf));
	assert_string_equal(buf, "CPU time only, CPI unavailable (x)");

	l = cpi_mode_labels(CPI_MODE_HARDWARE);
	assert_string_equal(l.numerator, "cycles");
	assert_string_equal(l.denominator, "instructions");
	assert_string_equal(l.ratio, "cpi");
	/* Software numbers are never called CPI. */
	l = cpi_mode_labels(CPI_MODE_SOFTWARE);
	assert_string_equal(l.ratio, "clock_ratio");
	assert_string_equal(l.numerator, "task_clock_ns");
	assert_string_equal(l.denominator, "cpu_clock_ns");
	l = cpi_mode_labels(CPI_MODE_OFF);
	assert_null(l.ratio);
	assert_string_equal(cpi_mode_name(CPI_MODE_SOFTWARE), "software");
	assert_string_equal(cpi_mode_name(CPI_MODE_HARDWARE), "hardware");
	assert_string_equal(cpi_mode_name(CPI_MODE_OFF), "off");
}

static void test_ratio(void **state)
{
	double r = -1;

	(void)state;
	/* CPI = cycles / instructions: 3e9 cycles for 1.5e9 instructions is 2. */
	assert_true(cpi_ratio(3000000000ULL, 1500000000ULL, &r));
	assert_true(r == 2.0);
	assert_false(cpi_ratio(5, 0, &r));
}

static void test_scale_no_multiplexing(void **state)
{
	(void)state;
	assert_int_equal(cpi_scale(12345, 1000, 1000), 12345);
	/* running > enabled cannot happen, but must not scale down. */
	assert_int_equal(cpi_scale(12345, 1000, 1001), 12345);
	assert_int_equal(cpi_scale(0, 0, 0), 0);
}

static void test_scale_multiplexed(void **state)
{
	(void)state;
	/* On the PMU half the time: the estimate doubles. */
	assert_int_equal(cpi_scale(1000, 2000, 1000), 2000);
	/* A third of the time: exact to the fixed-point resolution (1/65536). */
	uint64_t got = cpi_scale(3000000, 3000000, 1000000);
	assert_true(got >= 8999000 && got <= 9000000);
	/* Large counts of long slices do not overflow: 4e9 cycles, 4 s, 25% running. */
	got = cpi_scale(4000000000ULL, 4000000000ULL, 1000000000ULL);
	assert_true(got >= 15999000000ULL && got <= 16000000000ULL);
	/* Near the top of u64 the split keeps the product in range. */
	got = cpi_scale(1ULL << 62, 3, 2);
	assert_true(got >= (1ULL << 62) + (1ULL << 61) - (1ULL << 48) &&
		    got <= (1ULL << 62) + (1ULL << 61));
}

static void test_event_delta(void **state)
{
	struct cpi_reading a = {.counter = 100, .enabled = 1000, .running = 1000};
	struct cpi_reading b = {.counter = 600, .enabled = 2000, .running = 1500};
	__u64 d = 0;

	(void)state;
	/* 500 counted over 500 of 1000 enabled ns: estimated 1000. */
	assert_true(cpi_event_delta(&a, &b, &d));
	assert_int_equal(d, 1000);
	/* Never on the PMU during the slice: no estimate, not a zero. */
	b = (struct cpi_reading){.counter = 100, .enabled = 2000, .running = 1000};
	assert_false(cpi_event_delta(&a, &b, &d));
	/* Values going backwards (event replaced): no estimate. */
	b = (struct cpi_reading){.counter = 50, .enabled = 2000, .running = 2000};
	assert_false(cpi_event_delta(&a, &b, &d));
	/* No time passed: zero, and valid. */
	assert_true(cpi_event_delta(&a, &a, &d));
	assert_int_equal(d, 0);
}

static void test_cpu_list(void **state)
{
	bool on[8];

	(void)state;
	assert_int_equal(cpu_list_parse("0-1\n", on, 8), 0);
	assert_true(on[0] && on[1] && !on[2]);
	assert_int_equal(cpu_list_parse("0,2-3,6", on, 8), 0);
	assert_true(on[0] && !on[1] && on[2] && on[3] && !on[4] && !on[5] && on[6] && !on[7]);
	/* CPUs beyond the possible count are ignored. */
	assert_int_equal(cpu_list_parse("6-9", on, 8), 0);
	assert_true(on[6] && on[7]);
	assert_int_equal(cpu_list_parse("", on, 8), 0);
	assert_false(on[0]);
	assert_int_equal(cpu_list_parse("3-1", on, 8), -EINVAL);
	assert_int_equal(cpu_list_parse("a", on, 8), -EINVAL);
	assert_int_equal(cpu_list_parse("1;2", on, 8), -EINVAL);
	assert_int_equal(cpu_list_parse("1-", on, 8), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_defaults),
		cmocka_unit_test(test_spec_named_order),
		cmocka_unit_test(test_spec_invalid),
		cmocka_unit_test(test_choose_auto),
		cmocka_unit_test(test_choose_software_and_named),
		cmocka_unit_test(test_needs_software),
		cmocka_unit_test(test_describe_and_labels),
		cmocka_unit_test(test_ratio),
		cmocka_unit_test(test_scale_no_multiplexing),
		cmocka_unit_test(test_scale_multiplexed),
		cmocka_unit_test(test_event_delta),
		cmocka_unit_test(test_cpu_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
