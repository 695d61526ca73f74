// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "log.h"

#include <bpf/libbpf.h>
#include <stdarg.h>
#include <stdio.h>

enum log_level log_max_level = LOG_WARN;

static const char *const level_names[] = {"error", "warning", "info", "debug"};

static void log_vmsg(enum log_level level, const char *fmt, va_list ap)
{
	if (level > log_max_level)
		return;
	fprintf(stderr, "qoslet: %s: ", level_names[level]);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/*
	 * libbpf warns in detail (whole verifier logs) about failures that
	 * qoslet handles and reports in one line, e.g. a hook that falls back:
	 * show them with -v, and libbpf's debug chatter with -vv.
	 */
	enum log_level ours = level == LIBBPF_WARN   ? LOG_INFO
			      : level == LIBBPF_INFO ? LOG_DEBUG
						     : LOG_DEBUG + 1;

	if (ours > log_max_level)
		return 0;
	/* libbpf's lines start with "libbpf: " and end with a newline. */
	fprintf(stderr, "qoslet: ");
	return vfprintf(stderr, fmt, ap);
}

void log_hook_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
