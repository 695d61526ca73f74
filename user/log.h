/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Diagnostics on stderr, one line each, prefixed with the program name. */
#ifndef QOSLET_LOG_H
#define QOSLET_LOG_H

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* Messages above this level are dropped; -v raises it. */
extern enum log_level log_max_level;

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_err(...)   log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/* Routes libbpf's own messages through log_msg (warnings and up by default). */
void log_hook_libbpf(void);

#endif
