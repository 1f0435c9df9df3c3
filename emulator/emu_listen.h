/* The listening ports (emu_listen.c): which port serves which front door. */
#ifndef EMU_LISTEN_H
#define EMU_LISTEN_H

#include <stddef.h>

#include "amqp_server.h"
#include "http_api.h"

struct lws_context;

/* TLS is offered on the AMQP port too when a certificate is given;
 * amqps_port 0: no TLS-only port. */
typedef struct emu_listen_config {
    const char *bind; /* address or interface; NULL: all */
    int amqp_port, amqps_port, http_port;
    const char *tls_cert, *tls_key; /* PEM files; NULL: no TLS anywhere */
    int handshake_timeout_s;        /* also bounds a TLS handshake or an HTTP request line; 0: lws's default */
} emu_listen_config;

/* Creates a vhost per port serving the AMQP wire (srv) and the HTTP plane
 * (hp), both of which must outlive the vhosts. Returns 0, or -1 with err
 * naming the port and flag. */
int emu_listen_start(struct lws_context *ctx, amqp_server *srv, http_plane *hp, const emu_listen_config *cfg,
                     char *err, size_t errlen);

#endif
