/* The AMQP side of sbemu, as the emulator sees it: create it with the store
 * and settings, hand its lws protocols to the loop, stop it at shutdown. */
#ifndef AMQP_SERVER_H
#define AMQP_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "ent_settle.h"
#include "store.h"

struct lws_context;
struct lws_protocols;

typedef struct amqp_settings {
    const char *sas_key_name;   /* the one SharedAccessKeyName accepted */
    const char *sas_key;        /* its key: HMAC key bytes as written */
    uint32_t max_message_size;  /* max-message-size on attach, and the send limit */
    int handshake_timeout_s;    /* a connection must have sent its AMQP open by then; 0: never */
} amqp_settings;

typedef struct amqp_server amqp_server;

/* The user pointer of every listening vhost (AMQP, AMQP over TLS, HTTP): each
 * port serves several protocols (raw AMQP, HTTP, WebSocket), and all of them
 * find the server here. Owned by the loop, which outlives the vhosts. */
typedef struct amqp_listener {
    amqp_server *srv;
    bool all_listening; /* every listener is up: /health may answer 200 */
} amqp_listener;

amqp_server *amqp_server_new(store *st, const amqp_settings *settings);
void amqp_server_free(amqp_server *srv);
/* Starts the timers once the lws context exists. */
void amqp_server_attach_loop(amqp_server *srv, struct lws_context *ctx);
/* Entities changed (sbemu_entities): every attached entity link looks its
 * entity up again (amqp_entities.c). */
void amqp_server_refresh_entities(amqp_server *srv);
/* Cancels the server's timers; call before the loop's context is destroyed. */
void amqp_server_detach_loop(amqp_server *srv);
/* The listening ports (amqp_listen.c). TLS is offered on the AMQP port too
 * when a certificate is given; amqps_port 0: no TLS-only port. */
typedef struct amqp_listen_config {
    const char *bind; /* address or interface; NULL: all */
    int amqp_port, amqps_port, http_port;
    const char *tls_cert, *tls_key; /* PEM files; NULL: no TLS anywhere */
    int handshake_timeout_s;        /* also bounds a TLS handshake or an HTTP request line; 0: lws's default */
} amqp_listen_config;
/* Creates a vhost per port, each with ls as its user. Returns 0, or -1 with
 * err naming the port and flag. */
int amqp_listen_start(struct lws_context *ctx, amqp_listener *ls, const amqp_listen_config *cfg, char *err,
                      size_t errlen);
/* Closes every connection (amqp:connection:forced) as the process stops. */
void amqp_server_close_all(amqp_server *srv);
int amqp_server_connection_count(const amqp_server *srv);
/* Runs the background sweep now (after the clock moved) and wakes every waiting receiver. */
void amqp_sweep_now(amqp_server *srv);
void amqp_server_wake_all(amqp_server *srv);
/* Messages arrived on a queue: its waiting receivers claim again. */
void amqp_server_wake(amqp_server *srv, int64_t entity_id);
/* Messages of the entity were unlocked (abandon, release, lapse): its
 * receiving links look from its first sequence number again. */
void amqp_server_rewind(amqp_server *srv, int64_t entity_id);
/* A settlement of kind in entity_id committed: carries out what
 * ent_settle_after_commit says must follow (the one rule every settlement path
 * uses). dead_letter_target: where the entity's dead letters go (0: its own
 * dead-letter subqueue). */
void amqp_server_after_settle(amqp_server *srv, int64_t entity_id, int64_t dead_letter_target, ent_settle_kind kind);

#endif
