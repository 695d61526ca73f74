/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One wording for getopt_long's errors across every command: a missing
 * value ("option '--config' needs a value"), a value given to a flag, and an
 * unknown option. Callers put ':' first in the option string (so a missing
 * value returns ':', not '?') and set opterr = 0.
 */
#ifndef QOSLET_OPT_ERROR_H
#define QOSLET_OPT_ERROR_H

#include <stddef.h>

/*
 * Writes the one-line reason for getopt_long's return `c` (':' or '?') into
 * err and returns -1. `shortopts` is the option string given to getopt_long.
 * Reads getopt's optind and optopt, so call it at once.
 */
int opt_error(int c, const char *shortopts, char *const argv[], char *err, size_t errlen);

struct option;

/*
 * For an option getopt_long accepted that this command does not take:
 * "option '--dry-run' is not for 'qoslet record'". `longindex` is what
 * getopt_long stored (-1 when it returned the short option `c`). Returns -1.
 */
int opt_not_taken(const char *command, const struct option *longopts, int longindex, int c,
		  char *err, size_t errlen);

#endif
