/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libmicrohttpd, opened only when the agent serves HTTP (user/dl.h): the
 * CLI and an agent with http.enabled false never map it and the GnuTLS
 * it links. http.c calls MHD_*() as declared in <microhttpd.h>; mhd_dl.c
 * defines those functions as calls through the opened library's table.
 */
#ifndef QOSLET_REPORT_MHD_DL_H
#define QOSLET_REPORT_MHD_DL_H

#include <stddef.h>

/* Before any MHD_*() call: 0, or -ELIBACC with err naming libmicrohttpd12. */
int mhd_dl_open(char *err, size_t errlen);

#endif
