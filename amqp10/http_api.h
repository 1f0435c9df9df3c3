/* The HTTP port (--http-port): GET /health in the official emulator's shape.
 * The ATOM management API and the clock endpoints join here as they land. */
#ifndef HTTP_API_H
#define HTTP_API_H

#include <stdbool.h>

struct lws_protocols;
typedef struct amqp_server amqp_server;

/* The vhost user of the HTTP vhost must be an http_api_state. */
typedef struct http_api_state {
    amqp_server *srv;
    bool amqp_listening; /* the AMQP listeners are up */
} http_api_state;

const struct lws_protocols *http_api_protocol(void);

#endif
