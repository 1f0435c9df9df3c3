/* Properties to modify. Abandon, defer and dead-letter may carry properties
 * that Service Bus merges into the message's application-properties before
 * it settles it. They arrive two ways: `properties-to-modify` in
 * com.microsoft:update-disposition, and on the receive link inside the
 * outcome itself, where the Java and .NET SDKs put them:
 * modified.message-annotations for abandon and defer, and the rejected
 * error's info map beside DeadLetterReason and DeadLetterErrorDescription for
 * dead-letter (azure-messaging-servicebus MessageUtils.getDeliveryState; .NET
 * AmqpReceiver GetModifiedOutcome / GetRejectedOutcome). The broker rewrites
 * the stored message with amqp_apply_properties before it settles it
 * (broker_settle.c). */
#ifndef AMQP_PROPS_H
#define AMQP_PROPS_H

#include <proton/codec.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "amqp_message.h"

/* The first buffer amqp_data_encode tries; it doubles until the tree fits. */
#define AMQP_DATA_ENCODE_FIRST 1024
/* The whole of data encoded (Proton encodes whole trees only), malloc'd, with
 * *len its length (or Proton's negative error); NULL when out of memory. */
char *amqp_data_encode(pn_data_t *data, ssize_t *len);
/* properties-to-modify: a copy of the stored message whose application-properties
 * hold the entries of mods (an encoded AMQP map with string keys) in place of
 * any with the same key; the section is added when the message has none.
 * Appends to out; 0 or -1 (malformed message or map). */
int amqp_apply_properties(const uint8_t *stored, size_t len, const uint8_t *mods, size_t modslen, amqp_buf *out);
/* The entries of a map (an outcome's message-annotations or error info) as an
 * encoded map with string keys (a symbol key becomes a string), leaving out
 * the keys in skip. *out is malloc'd. 0; 1 when there is no entry left (no
 * map, empty, all skipped); -1 when a key is not a string or symbol. */
int amqp_properties_from_map(pn_data_t *map, const char *const *skip, size_t nskip, uint8_t **out, size_t *outlen);

#endif
