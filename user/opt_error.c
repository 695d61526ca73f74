// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "opt_error.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

/*
 * The option getopt just returned, as the user typed it. A long option is
 * always a whole argv element, already passed ("--config", "--hook=x": cut
 * at '='); a short one may sit in a group ("-jc"), so optopt names it.
 */
static const char *word(char *const argv[], char *buf, size_t size)
{
	const char *w = argv[optind - 1];

	if (strncmp(w, "--", 2) != 0)
		snprintf(buf, size, "-%c", optopt);
	else
		snprintf(buf, size, "%.*s", (int)strcspn(w, "="), w);
	return buf;
}

int opt_error(int c, const char *shortopts, char *const argv[], char *err, size_t errlen)
{
	char buf[64];

	if (c == ':')
		snprintf(err, errlen, "option '%s' needs a value", word(argv, buf, sizeof(buf)));
	/* A known option returned as '?' is a long flag given a value: "--json=1". */
	else if (optopt >= 256 || (optopt && strchr(shortopts, optopt)))
		snprintf(err, errlen, "option '%s' takes no value", word(argv, buf, sizeof(buf)));
	/* An unknown short option inside a group leaves optind on the group. */
	else if (optopt)
		snprintf(err, errlen, "unknown option '-%c'", optopt);
	else
		snprintf(err, errlen, "unknown option '%s'", word(argv, buf, sizeof(buf)));
	return -1;
}

int opt_not_taken(const char *command, const struct option *longopts, int longindex, int c,
		  char *err, size_t errlen)
{
	if (longindex >= 0)
		snprintf(err, errlen, "option '--%s' is not for 'qoslet %s'",
			 longopts[longindex].name, command);
	else
		snprintf(err, errlen, "option '-%c' is not for 'qoslet %s'", c, command);
	return -1;
}
