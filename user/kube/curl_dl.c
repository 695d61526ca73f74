// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The libcurl functions the client uses, each a call through the table
 * curl_dl_open() fills. Defining them under their own names keeps
 * <curl/curl.h> the reference: a definition that disagrees with its
 * declaration does not compile.
 */
#include "kube/curl_dl.h"

#include <curl/curl.h>
#include <stdarg.h>

#include "dl.h"

#define CURL_FNS(X)                                                                                \
	X(global_init)                                                                             \
	X(global_cleanup)                                                                          \
	X(easy_init)                                                                               \
	X(easy_cleanup)                                                                            \
	X(easy_reset)                                                                              \
	X(easy_setopt)                                                                             \
	X(easy_perform)                                                                            \
	X(easy_getinfo)                                                                            \
	X(easy_strerror)                                                                           \
	X(slist_append)                                                                            \
	X(slist_free_all)

#define FIELD(name) __typeof__(curl_##name) *name;
#define SYM(name)   {"curl_" #name, (void **)&api.name},

static struct {
	CURL_FNS(FIELD)
} api;

static const struct dl_sym syms[] = {CURL_FNS(SYM)};
static struct dl_lib lib = {.soname = "libcurl.so.4",
			    .package = "libcurl4",
			    .syms = syms,
			    .n_syms = sizeof(syms) / sizeof(syms[0])};

int curl_dl_open(char *err, size_t errlen)
{
	return dl_lib_open(&lib, err, errlen);
}

CURLcode curl_global_init(long flags)
{
	return api.global_init(flags);
}

void curl_global_cleanup(void)
{
	api.global_cleanup();
}

CURL *curl_easy_init(void)
{
	return api.easy_init();
}

void curl_easy_cleanup(CURL *h)
{
	api.easy_cleanup(h);
}

void curl_easy_reset(CURL *h)
{
	api.easy_reset(h);
}

/*
 * The option's number says the type of its one argument (CURLOPTTYPE_* in
 * curl.h), as libcurl itself reads it. The name is in parentheses: curl.h
 * makes it a type-checking macro.
 */
CURLcode(curl_easy_setopt)(CURL *h, CURLoption opt, ...)
{
	va_list ap;
	CURLcode rc;

	va_start(ap, opt);
	if (opt < CURLOPTTYPE_OBJECTPOINT)
		rc = api.easy_setopt(h, opt, va_arg(ap, long));
	else if (opt < CURLOPTTYPE_FUNCTIONPOINT)
		rc = api.easy_setopt(h, opt, va_arg(ap, void *));
	else if (opt < CURLOPTTYPE_OFF_T)
		rc = api.easy_setopt(h, opt, va_arg(ap, void (*)(void)));
	else if (opt < CURLOPTTYPE_BLOB)
		rc = api.easy_setopt(h, opt, va_arg(ap, curl_off_t));
	else
		rc = api.easy_setopt(h, opt, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

CURLcode curl_easy_perform(CURL *h)
{
	return api.easy_perform(h);
}

/* Every CURLINFO takes one pointer. */
CURLcode(curl_easy_getinfo)(CURL *h, CURLINFO info, ...)
{
	va_list ap;
	CURLcode rc;

	va_start(ap, info);
	rc = api.easy_getinfo(h, info, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

const char *curl_easy_strerror(CURLcode rc)
{
	return api.easy_strerror(rc);
}

struct curl_slist *curl_slist_append(struct curl_slist *l, const char *s)
{
	return api.slist_append(l, s);
}

void curl_slist_free_all(struct curl_slist *l)
{
	api.slist_free_all(l);
}
