// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The config file watch (user/config/config_watch.c) on a real directory:
 * what counts as a change (bytes, mode; a ConfigMap's ..data swap, an
 * editor's rename, a write in place) and what does not (another file, the
 * same bytes written again).
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "config/config_watch.h"
#include "tmpdir.h"

static char dir[64];

static void write_file(const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void in_dir(char *out, const char *rel)
{
	snprintf(out, PATH_MAX, "%s/%s", dir, rel);
}

/* The kubelet's update of a ConfigMap volume: a new directory, ..data renamed onto it. */
static void configmap_swap(const char *gen, const char *text)
{
	char sub[PATH_MAX], file[PATH_MAX], tmp[PATH_MAX], data[PATH_MAX];

	snprintf(sub, sizeof(sub), "%s/..%s", dir, gen);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(file, sizeof(file), "..%s/config.json", gen);
	write_file(file, text);
	snprintf(sub, sizeof(sub), "..%s", gen);
	in_dir(tmp, "..data_tmp");
	in_dir(data, "..data");
	assert_int_equal(symlink(sub, tmp), 0);
	assert_int_equal(rename(tmp, data), 0);
}

static void test_configmap_swap(void **state)
{
	char path[PATH_MAX], err[256];
	struct config_watch *w;

	(void)state;
	configmap_swap("1", "{}");
	in_dir(path, "config.json");
	assert_int_equal(symlink("..data/config.json", path), 0);
	assert_int_equal(config_watch_open(&w, path, err, sizeof(err)), 0);
	assert_false(config_watch_changed(w)); /* nothing happened */

	write_file("unrelated", "x");
	assert_false(config_watch_changed(w)); /* another file */

	configmap_swap("2", "{\"dry_run\": true}");
	assert_true(config_watch_changed(w));
	assert_false(config_watch_changed(w)); /* seen */

	configmap_swap("3", "{\"dry_run\": true}");
	assert_false(config_watch_changed(w)); /* the same bytes */
	config_watch_close(w);
}

static void test_plain_file(void **state)
{
	char path[PATH_MAX], tmp[PATH_MAX], err[256];
	struct config_watch *w;

	(void)state;
	write_file("plain.json", "{}");
	in_dir(path, "plain.json");
	assert_int_equal(config_watch_open(&w, path, err, sizeof(err)), 0);

	write_file("plain.json", "{\"interval_s\": 2}"); /* in place */
	assert_true(config_watch_changed(w));

	write_file("plain.json.new", "{\"interval_s\": 3}"); /* an editor's rename */
	in_dir(tmp, "plain.json.new");
	assert_int_equal(rename(tmp, path), 0);
	assert_true(config_watch_changed(w));

	assert_int_equal(chmod(path, 0666), 0); /* a mode others may write: the reload refuses */
	assert_true(config_watch_changed(w));

	assert_int_equal(unlink(path), 0); /* gone: the reload says it cannot read it */
	assert_true(config_watch_changed(w));
	config_watch_close(w);
}

static void test_unwatchable(void **state)
{
	struct config_watch *w;
	char err[256];

	(void)state;
	assert_int_equal(config_watch_open(&w, "/nonexistent-qoslet/config.json", err, sizeof(err)),
			 -ENOENT);
	assert_null(w);
	assert_non_null(strstr(err, "cannot watch /nonexistent-qoslet: "));
}

static int setup(void **state)
{
	(void)state;
	return tmpdir_make(dir, sizeof(dir), "config-watch");
}

static int teardown(void **state)
{
	(void)state;
	return tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_configmap_swap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plain_file, setup, teardown),
		cmocka_unit_test(test_unwatchable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
