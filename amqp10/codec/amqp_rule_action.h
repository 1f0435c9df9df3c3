/* Running a subscription rule's SQL action on an AMQP message: the copy the
 * subscription keeps.
 *
 * The action reads the message through amqp_filter_view and writes into an
 * overlay of changes; only the sections a change touches are re-encoded
 * (properties, application-properties, and header / message-annotations when
 * the action sets TimeToLive, ScheduledEnqueueTimeUtc or a partition key).
 * Every other section, and every field or entry the action leaves alone, is
 * copied byte for byte, in the AMQP section order. Not for the hot path: each
 * change allocates, and the result is a new buffer. */
#ifndef AMQP_RULE_ACTION_H
#define AMQP_RULE_ACTION_H

#include <stddef.h>
#include <stdint.h>

#include "amqp_message.h"
#include "ent_filter.h"

/* The application property Service Bus names the rule with. */
#define AMQP_RULE_NAME_PROPERTY "RuleName"

/* New encoded bare message = the original (bytes/len, parsed by
 * amqp_msg_parse; one message, not a batch) with the action's changes and the
 * application property RuleName = rule_name, replacing any RuleName the
 * message had (whatever its letter case). action NULL: only RuleName;
 * rule_name NULL: no RuleName. enqueued_ms is what sys.EnqueuedTimeUtc reads.
 *
 * User properties are written back as long (INT), double, string, boolean,
 * timestamp, uuid, null, and TimeSpan as the .NET SDK sends it (described
 * com.microsoft:timespan, long ticks). A change the message cannot hold
 * (TimeToLive <= 0, a MessageId or SessionId over ENT_MESSAGE_ID_MAX or ENT_SESSION_ID_MAX characters)
 * fails the action.
 *
 * Returns 0 with *out malloc'd (the caller frees it) and *outlen set; parse
 * it again (amqp_msg_parse) to store it. Or -1 with err filled:
 * ENT_FILTER_ERR_EVAL / _MESSAGE from the action, _MESSAGE for a message
 * whose properties or application-properties section is malformed, _NOMEM;
 * *out is then NULL. */
int amqp_rule_apply(const uint8_t *bytes, size_t len, const amqp_msg *parsed, int64_t enqueued_ms,
                    const ent_filter_action *action, const char *rule_name, uint8_t **out, size_t *outlen,
                    ent_filter_error *err);

#endif
