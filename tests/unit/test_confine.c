// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The Landlock confinement of a thread (confine.h): a confined thread and
 * the threads it starts open no file, list no directory, make none, and
 * (ABI 4 and later) bind and connect no TCP socket; what it had open stays
 * usable; the other threads of the process keep their access. Skipped
 * where the kernel has no Landlock.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "confine.h"

struct tried {
	int abi;
	int open_errno, opendir_errno, mkdir_errno, bind_errno, connect_errno;
	int child_open_errno;
	ssize_t wrote; /* to an fd opened before */
};

static int open_errno(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno;
}

static void *child(void *arg)
{
	((struct tried *)arg)->child_open_errno = open_errno("/proc/self/status");
	return NULL;
}

struct confined {
	struct tried t;
	int fd;		   /* open before the confinement */
	uint16_t tcp_port; /* a listening socket of the main thread */
	char dir[64];	   /* a directory to make something in */
};

static void *confined_thread(void *arg)
{
	struct confined *c = arg;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	char path[128];
	DIR *d;
	pthread_t t;
	int s;

	c->t.abi = confine_thread_no_files();
	if (c->t.abi <= 0)
		return NULL;
	c->t.open_errno = open_errno("/proc/self/status");
	d = opendir("/");
	c->t.opendir_errno = d ? 0 : errno;
	if (d)
		closedir(d);
	snprintf(path, sizeof(path), "%s/made", c->dir);
	c->t.mkdir_errno = mkdir(path, 0700) ? errno : 0;
	c->t.wrote = write(c->fd, "x", 1);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	c->t.bind_errno = bind(s, (struct sockaddr *)&sa, sizeof(sa)) ? errno : 0;
	close(s);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sa.sin_port = htons(c->tcp_port);
	c->t.connect_errno = connect(s, (struct sockaddr *)&sa, sizeof(sa)) ? errno : 0;
	close(s);
	pthread_create(&t, NULL, child, &c->t);
	pthread_join(t, NULL);
	return NULL;
}

static void test_thread_confined(void **state)
{
	struct confined c = {0};
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	char dir[] = "/tmp/qoslet-confine.XXXXXX", made[128];
	pthread_t t;
	int l;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(c.dir, sizeof(c.dir), "%s", dir);
	c.fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	assert_true(c.fd >= 0);
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(l, 4), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&sa, &len), 0);
	c.tcp_port = ntohs(sa.sin_port);

	assert_int_equal(pthread_create(&t, NULL, confined_thread, &c), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	snprintf(made, sizeof(made), "%s/made", dir);
	rmdir(made);
	rmdir(dir);
	close(l);
	close(c.fd);
	if (c.t.abi == -ENOSYS || c.t.abi == -EOPNOTSUPP) {
		print_message("SKIP: no Landlock in this kernel (%s)\n", strerror(-c.t.abi));
		skip();
	}
	assert_true(c.t.abi > 0);
	assert_int_equal(c.t.open_errno, EACCES);
	assert_int_equal(c.t.opendir_errno, EACCES);
	assert_int_equal(c.t.mkdir_errno, EACCES);
	assert_int_equal(c.t.child_open_errno, EACCES); /* a thread it starts: the same */
	assert_int_equal(c.t.wrote, 1);			/* an fd opened before still works */
	if (c.t.abi >= 4) {
		assert_int_equal(c.t.bind_errno, EACCES);
		assert_int_equal(c.t.connect_errno, EACCES);
	}
	/* this thread was not confined */
	assert_int_equal(open_errno("/proc/self/status"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thread_confined),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
