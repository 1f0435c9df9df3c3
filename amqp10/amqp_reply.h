/* Request/response plumbing shared by the $cbs and $management nodes:
 * decoding a request, routing the response to the right reply link
 * (wire-protocol §0 #4, #5) and sending it pre-settled. */
#ifndef AMQP_REPLY_H
#define AMQP_REPLY_H

#include <proton/message.h>

#include "amqp_internal.h"

/* Decodes a request delivery's bytes; NULL if they are not one AMQP message. */
pn_message_t *amqp_request_decode(const char *bytes, size_t len);
/* The string (or symbol) value under a string or symbol key of an AMQP map,
 * copied into buf; NULL when absent, null or of another type. */
const char *amqp_map_string(pn_data_t *map, const char *key, char *buf, size_t buflen);
/* A string application property of the request, or NULL (also for null values). */
const char *amqp_request_app_string(pn_message_t *req, const char *key, char *buf, size_t buflen);

/* Starts a response: correlation-id = request message-id (same type), to = reply-to.
 * Application properties are left open as a map for the caller to fill; finish
 * with amqp_reply_send, which closes the map, routes, encodes and sends. */
pn_message_t *amqp_reply_begin(pn_message_t *req);
/* Sends and frees the response on the reply link of request link `via`. */
void amqp_reply_send(amqp_link *via, pn_message_t *req, pn_message_t *resp);

#endif
