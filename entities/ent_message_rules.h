/* The rules of a message's lifecycle that the wire and the store both obey:
 * time to live, locks, delivery counts, lock-token byte order. */
#ifndef ENT_MESSAGE_RULES_H
#define ENT_MESSAGE_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "ent_status.h"

/* No TTL: the message lives until it is received (TimeSpan.MaxValue). */
#define ENT_TTL_NONE (-1)

/* The entity's DefaultMessageTimeToLive applies to a message without TTL and
 * silently caps a longer one. Both arguments and the result use ENT_TTL_NONE. */
int64_t ent_effective_ttl_ms(int64_t message_ttl_ms, int64_t entity_default_ttl_ms);
/* ExpiresAtUtc = EnqueuedTimeUtc + TTL; 0 when it never expires. */
int64_t ent_expires_at_ms(int64_t enqueued_ms, int64_t ttl_ms);
/* Until when a lock granted now holds. */
int64_t ent_lock_until_ms(int64_t now_ms, int64_t lock_duration_ms);
/* header.delivery-count on the wire is DeliveryCount - 1 (0 on the first delivery). */
uint32_t ent_header_delivery_count(int32_t delivery_count);
/* A scheduled time in the future makes the message invisible until then. */
int64_t ent_available_at_ms(int64_t enqueued_ms, int64_t scheduled_ms);

/* Service Bus takes a MessageId of at most ENT_MESSAGE_ID_MAX characters and
 * a SessionId of at most ENT_SESSION_ID_MAX; longer ones are refused, never
 * cut. Each argument is the id's length in characters: 0 when absent, -1 when
 * it is not UTF-8. SB_OK, or SB_ERR_ARGUMENT with a refusal naming the limit. */
sb_status ent_message_ids_check(long message_id_chars, long session_id_chars, char *err, size_t errlen);

/* Lock tokens are stored in RFC 4122 order; AMQP delivery tags carry them in
 * .NET Guid.ToByteArray() order (first three groups little-endian). The
 * conversion is its own inverse. */
void ent_lock_token_swap(const uint8_t in[16], uint8_t out[16]);

#endif
