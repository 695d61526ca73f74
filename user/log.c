// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "log.h"

#include <bpf/libbpf.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum log_level log_max_level = LOG_WARN;
enum log_format log_format = LOG_TEXT;

/* A record longer than this is cut (and says so): one write must hold it. */
#define LOG_LINE_MAX 4096

static const char *const level_names[] = {"error", "warning", "info", "debug"};

int log_format_parse(const char *s, bool with_time, enum log_format *f)
{
	if (!strcmp(s, "text"))
		*f = with_time ? LOG_TEXT_TIME : LOG_TEXT;
	else if (!strcmp(s, "json"))
		*f = LOG_JSON;
	else
		return -1;
	return 0;
}

/* "2026-11-22T07:30:40.123456Z" */
static void now_rfc3339(char buf[40])
{
	struct timespec ts;
	struct tm tm;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(buf, 40, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, 40 - n, ".%06ldZ", ts.tv_nsec / 1000);
}

static void emit(enum log_level level, const char *msg)
{
	char line[LOG_LINE_MAX + 128], when[40];
	const char *name = level < LOG_DEBUG + 1 ? level_names[level] : "debug";
	char *json = NULL;
	int n;

	if (log_format != LOG_TEXT)
		now_rfc3339(when);
	switch (log_format) {
	case LOG_JSON: {
		json_t *o = json_pack("{s:s, s:s, s:s}", "time", when, "level", name, "msg", msg);

		/* a message that is not UTF-8 still gets out, as text */
		json = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
		json_decref(o);
		n = json ? snprintf(line, sizeof(line), "%s\n", json)
			 : snprintf(line, sizeof(line), "%s %s qoslet: %s\n", when, name, msg);
		free(json);
		break;
	}
	case LOG_TEXT_TIME:
		n = snprintf(line, sizeof(line), "%s %s qoslet: %s\n", when, name, msg);
		break;
	default:
		n = snprintf(line, sizeof(line), "qoslet: %s: %s\n", name, msg);
		break;
	}
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		n = sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	/* stderr may be a pipe the collector left: nothing else to do with a failure */
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}

/* fmt's message in msg, marked where it was cut to fit. */
static void format_msg(char msg[LOG_LINE_MAX], const char *fmt, va_list ap)
{
	if (vsnprintf(msg, LOG_LINE_MAX, fmt, ap) >= LOG_LINE_MAX)
		memcpy(msg + LOG_LINE_MAX - 16, " ... (cut)", 11);
}

static void log_vmsg(enum log_level level, const char *fmt, va_list ap)
{
	char msg[LOG_LINE_MAX];

	if (level > log_max_level)
		return;
	format_msg(msg, fmt, ap);
	emit(level, msg);
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
	char msg[LOG_LINE_MAX], *save, *line;

	if (ours > log_max_level)
		return 0;
	/*
	 * A message ends with a newline, and some hold many lines (a verifier
	 * log between its BEGIN and END lines): one record a line, or a log
	 * collector reading records by line gets lines with no time or level.
	 */
	format_msg(msg, fmt, ap);
	for (line = strtok_r(msg, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		emit(ours, line);
	return 0;
}

void log_hook_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
