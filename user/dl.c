// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "dl.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

int dl_lib_open(struct dl_lib *lib, char *err, size_t errlen)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	void *h;
	int rc = 0;

	pthread_mutex_lock(&mu);
	if (lib->handle)
		goto out;
	/* LOCAL: its symbols must not bind ahead of anything else's. */
	h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, errlen, "%s cannot be loaded (%s): install %s", lib->soname,
			 dlerror(), lib->package);
		rc = -ELIBACC;
		goto out;
	}
	for (size_t i = 0; i < lib->n_syms; i++) {
		*lib->syms[i].addr = dlsym(h, lib->syms[i].name);
		if (!*lib->syms[i].addr) {
			snprintf(err, errlen, "%s lacks %s: install %s", lib->soname,
				 lib->syms[i].name, lib->package);
			dlclose(h);
			rc = -ELIBACC;
			goto out;
		}
	}
	lib->handle = h;
out:
	pthread_mutex_unlock(&mu);
	return rc;
}
