/* The rules of a message's lifecycle that the wire and the store both obey:
 * time to live, locks, schedules, id lengths. (How values look on the wire is
 * amqp10/codec/amqp_wire_forms.h.) */
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
/* A scheduled time in the future makes the message invisible until then. */
int64_t ent_available_at_ms(int64_t enqueued_ms, int64_t scheduled_ms);

/* Service Bus takes a MessageId of at most ENT_MESSAGE_ID_MAX characters and
 * a SessionId of at most ENT_SESSION_ID_MAX; longer ones are refused, never
 * cut. Each argument is the id's length in characters: 0 when absent, -1 when
 * it is not UTF-8. SB_OK, or SB_ERR_ARGUMENT with a refusal naming the limit. */
sb_status ent_message_ids_check(long message_id_chars, long session_id_chars, char *err, size_t errlen);

#endif
