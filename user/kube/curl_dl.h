/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libcurl, opened only when the Kubernetes link is on (user/dl.h). The
 * client calls curl_*() as declared in <curl/curl.h>, with libcurl's own
 * compile-time checks of curl_easy_setopt(); curl_dl.c defines those
 * functions as calls through the opened library's table.
 */
#ifndef QOSLET_KUBE_CURL_DL_H
#define QOSLET_KUBE_CURL_DL_H

#include <stddef.h>

/* Before any curl_*() call: 0, or -ELIBACC with err naming libcurl4. */
int curl_dl_open(char *err, size_t errlen);

#endif
