// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Pin directory modes (user/probes/pin_check.c, pin_fix_modes) on a stand-in
 * for a bpffs directory: a temporary directory whose files carry the pins'
 * names. chmod(2) on bpffs pins is the same call on the same mode bits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probes/pin_check.h"
#include "probes/pin_layout.h"
#include "tmpdir.h"

static char dir[64]; /* /tmp/qoslet-test-pins-XXXXXX */

static void make_file(const char *name, mode_t mode)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(path, mode), 0); /* past the umask */
}

static mode_t mode_of(const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s%s%s", dir, name ? "/" : "", name ? name : "");
	assert_int_equal(lstat(path, &st), 0);
	return st.st_mode & 07777;
}

static int setup(void **state)
{
	(void)state;
	return tmpdir_make(dir, sizeof(dir), "pins");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

/* Group and others lose the directory; qoslet's pins become 0600; nothing else is touched. */
static void test_fix_modes(void **state)
{
	const char *map = pin_map_name(0);
	char link[PATH_MAX];

	(void)state;
	assert_non_null(map);
	assert_int_equal(chmod(dir, 01755), 0);
	make_file(PIN_META_NAME, 0644);
	make_file(map, 0666);
	make_file("someone_elses_pin", 0644);
	snprintf(link, sizeof(link), "%s/%s", dir, pin_map_name(1));
	assert_int_equal(symlink("someone_elses_pin", link), 0); /* not a pin: left as it is */

	pin_fix_modes(dir);
	assert_int_equal(mode_of(NULL), 01700); /* its own bits, sticky included, stay */
	assert_int_equal(mode_of(PIN_META_NAME), 0600);
	assert_int_equal(mode_of(map), 0600);
	assert_int_equal(mode_of("someone_elses_pin"), 0644);

	/* Already right: nothing changes, and a second run is harmless. */
	pin_fix_modes(dir);
	assert_int_equal(mode_of(NULL), 01700);
	assert_int_equal(mode_of(map), 0600);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fix_modes),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
