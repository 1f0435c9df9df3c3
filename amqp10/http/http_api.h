/* The HTTP plane, as the emulator sees it: GET /health in the official
 * emulator's shape, the ATOM management API (queues, topics, subscriptions,
 * rules, the namespace) and the emulator's own resources (the clock). It
 * never touches Proton: it reads and writes through the broker and the store.
 * Its files: http_api.c (requests and answers), http_router.c (which path is
 * which resource), one file per resource, http_xml*.c and http_describe.c
 * (the ATOM documents), http_apply.c (a document into a row), http_auth.c. */
#ifndef HTTP_API_H
#define HTTP_API_H

#include <stdbool.h>

#include "broker.h"
#include "broker_peers.h"

struct lws_protocols;

/* Ownership: the emulator's (its loop); it outlives every vhost serving it. */
typedef struct http_plane {
    broker *broker;     /* borrowed */
    bool all_listening; /* every listener is up: /health may answer 200 */
    /* GET /metrics (http_metrics.c) */
    const broker_door_figures *wire; /* the AMQP wire's figures; borrowed, NULL: none */
    broker_door_figures figures;     /* the HTTP plane's own (its refusals) */
    const char *namespace_name;      /* every entity's namespace label (borrowed; NULL: the default) */
    bool metrics_token_required;     /* /metrics asks for a SAS token, as the management API does */
    /* the dashboard (http_dash*.c): / and /$sbemu/api/... */
    bool dashboard_read_only;        /* its actions are refused (403), what it reads is not */
    broker_peers_source peers;       /* the wire's connections (ctx NULL: none) */
    struct http_dash_live *live;     /* its event streams while someone watches; NULL: nobody does */
} http_plane;

/* The HTTP protocol, with hp as its user (every request finds the plane there). */
void http_api_protocol(http_plane *hp, struct lws_protocols *out);

#endif
