/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Libraries only some runs need, opened with dlopen() when one does: merely
 * linking one maps it and everything it links (libcurl brings OpenSSL,
 * Kerberos, LDAP and GnuTLS; libmicrohttpd brings GnuTLS), and the dynamic
 * linker's relocations make megabytes of them resident in every process,
 * the CLI's included. Each user keeps the library's header as the API: its
 * table's pointers have the types of the declared functions.
 */
#ifndef QOSLET_DL_H
#define QOSLET_DL_H

#include <stddef.h>

struct dl_sym {
	const char *name;
	void **addr; /* where the address goes: a function pointer of the declared type */
};

struct dl_lib {
	const char *soname;  /* "libcurl.so.4": the ABI the header describes */
	const char *package; /* the Debian package that ships it: "libcurl4" */
	const struct dl_sym *syms;
	size_t n_syms;
	void *handle; /* set once every symbol resolved */
};

/*
 * Opens lib and resolves its symbols, once: later calls return 0 at once.
 * Never closed: the library may keep threads or exit handlers. Returns 0,
 * or -ELIBACC with err naming the library, why, and the package to install.
 */
int dl_lib_open(struct dl_lib *lib, char *err, size_t errlen);

#endif
