/* The HTTP port (--http-port): GET /health in the official emulator's shape.
 * The ATOM management API and the clock endpoints join here as they land. */
#ifndef HTTP_API_H
#define HTTP_API_H

#include <stdbool.h>

struct lws_protocols;

/* The vhost user of every vhost serving it must be an amqp_listener. */
const struct lws_protocols *http_api_protocol(void);

#endif
