/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Diagnostics on stderr, one record a line, written with one write(2) so
 * that threads never interleave. Text by default ("qoslet: warning: ...");
 * a daemon adds RFC 3339 times, or switches to JSON lines
 * ({"time", "level", "msg"}) for log collectors (`--log-format json`).
 */
#ifndef QOSLET_LOG_H
#define QOSLET_LOG_H

#include <stdbool.h>

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

enum log_format {
	LOG_TEXT = 0,  /* qoslet: LEVEL: MESSAGE */
	LOG_TEXT_TIME, /* TIME LEVEL qoslet: MESSAGE (TIME: RFC 3339, UTC, microseconds) */
	LOG_JSON,      /* {"time": TIME, "level": LEVEL, "msg": MESSAGE} */
};

/* Messages above this level are dropped; -v raises it. */
extern enum log_level log_max_level;
extern enum log_format log_format;

/* "text" or "json" (what --log-format takes) into *f; -1 for anything else. */
int log_format_parse(const char *s, bool with_time, enum log_format *f);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_err(...)   log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/* Routes libbpf's own messages through log_msg (warnings and up by default). */
void log_hook_libbpf(void);

#endif
