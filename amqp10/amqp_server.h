/* The AMQP wire, as the emulator sees it: create it over the broker, hand
 * its lws protocols to the listening ports, stop it at shutdown. */
#ifndef AMQP_SERVER_H
#define AMQP_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "broker.h"
#include "broker_peers.h"

struct lws_context;
struct lws_protocols;

/* The wire's own settings; the SAS key and max-message-size are the
 * broker's (broker_settings), which every front door shares. */
typedef struct amqp_settings {
    int handshake_timeout_s; /* a connection must have sent its AMQP open by then; 0: never */
} amqp_settings;

typedef struct amqp_server amqp_server;

/* Sets itself as the broker's receivers (broker_set_receivers). */
amqp_server *amqp_server_new(broker *b, const amqp_settings *settings);
void amqp_server_free(amqp_server *srv);
/* Starts the poll timer once the lws context exists. */
void amqp_server_attach_loop(amqp_server *srv, struct lws_context *ctx);
/* Cancels the server's timers; call before the loop's context is destroyed. */
void amqp_server_detach_loop(amqp_server *srv);
/* The lws protocols of the AMQP stream: raw on a socket (the AMQP port's
 * fallback, named AMQP_RAW_PROTOCOL_NAME) and over WebSocket (two
 * subprotocol names). Each carries srv as its user: give it before the
 * vhosts are made. */
#define AMQP_RAW_PROTOCOL_NAME "sbemu-amqp"
void amqp_server_protocols(amqp_server *srv, struct lws_protocols *raw, struct lws_protocols *ws,
                           struct lws_protocols *ws_amqp);
/* Closes every connection (amqp:connection:forced) as the process stops. */
void amqp_server_close_all(amqp_server *srv);
int amqp_server_connection_count(const amqp_server *srv);
/* What the wire counts about itself (connections, links, $management
 * requests, $cbs tokens, refusals), for GET /metrics; lives as long as srv. */
const broker_door_figures *amqp_server_figures(const amqp_server *srv);
/* The wire's connections and links, and who holds a lock, for the
 * dashboard (amqp_peers.c); its ctx is srv. */
broker_peers_source amqp_server_peers(amqp_server *srv);
#endif
