// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The libmicrohttpd functions the endpoint uses, each a call through the
 * table mhd_dl_open() fills. Defining them under their own names keeps
 * <microhttpd.h> the reference: a definition that disagrees with its
 * declaration does not compile.
 */
#include "report/mhd_dl.h"

#include <stdarg.h>
#include <stdint.h>
#include <sys/socket.h>
#include <microhttpd.h>

#include "dl.h"

#define MHD_FNS(X)                                                                                 \
	X(start_daemon_va)                                                                         \
	X(stop_daemon)                                                                             \
	X(add_connection)                                                                          \
	X(lookup_connection_value)                                                                 \
	X(get_connection_info)                                                                     \
	X(create_response_from_buffer)                                                             \
	X(create_response_from_buffer_with_free_callback_cls)                                      \
	X(add_response_header)                                                                     \
	X(queue_response)                                                                          \
	X(destroy_response)

#define FIELD(name) __typeof__(MHD_##name) *name;
#define SYM(name)   {"MHD_" #name, (void **)&api.name},

static struct {
	MHD_FNS(FIELD)
} api;

static const struct dl_sym syms[] = {MHD_FNS(SYM)};
static struct dl_lib lib = {.soname = "libmicrohttpd.so.12",
			    .package = "libmicrohttpd12",
			    .syms = syms,
			    .n_syms = sizeof(syms) / sizeof(syms[0])};

int mhd_dl_open(char *err, size_t errlen)
{
	return dl_lib_open(&lib, err, errlen);
}

/* The option list goes on as a va_list: the library's own entry point for that. */
struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
				    void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
	struct MHD_Daemon *d;
	va_list ap;

	va_start(ap, dh_cls);
	d = api.start_daemon_va(flags, port, apc, apc_cls, dh, dh_cls, ap);
	va_end(ap);
	return d;
}

void MHD_stop_daemon(struct MHD_Daemon *d)
{
	api.stop_daemon(d);
}

enum MHD_Result MHD_add_connection(struct MHD_Daemon *d, MHD_socket fd, const struct sockaddr *addr,
				   socklen_t addrlen)
{
	return api.add_connection(d, fd, addr, addrlen);
}

const char *MHD_lookup_connection_value(struct MHD_Connection *c, enum MHD_ValueKind kind,
					const char *key)
{
	return api.lookup_connection_value(c, kind, key);
}

/*
 * Variadic in the library, with no va_list twin: the kinds http_conns.c asks
 * for (the socket, the socket context) take no further argument.
 */
const union MHD_ConnectionInfo *MHD_get_connection_info(struct MHD_Connection *c,
							enum MHD_ConnectionInfoType type, ...)
{
	return api.get_connection_info(c, type);
}

struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer,
						     enum MHD_ResponseMemoryMode mode)
{
	return api.create_response_from_buffer(size, buffer, mode);
}

struct MHD_Response *MHD_create_response_from_buffer_with_free_callback_cls(
	size_t size, void *buffer, MHD_ContentReaderFreeCallback crfc, void *crfc_cls)
{
	return api.create_response_from_buffer_with_free_callback_cls(size, buffer, crfc, crfc_cls);
}

enum MHD_Result MHD_add_response_header(struct MHD_Response *r, const char *header,
					const char *content)
{
	return api.add_response_header(r, header, content);
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *c, unsigned int status,
				   struct MHD_Response *r)
{
	return api.queue_response(c, status, r);
}

void MHD_destroy_response(struct MHD_Response *r)
{
	api.destroy_response(r);
}
