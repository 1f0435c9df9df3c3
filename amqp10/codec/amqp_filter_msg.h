/* What topic rules see of an AMQP message: a read-only ent_filter_msg over one
 * stored (bare, not batched) message, evaluated once per subscription on the
 * send path.
 *
 * Cost: amqp_filter_view_init walks the properties list once (13 fields at
 * most) and finds the application-properties map; nothing is decoded until a
 * filter asks. Each user-property lookup scans that map (no index, no malloc);
 * partition keys scan the message-annotations map. Strings handed to the
 * evaluator point into the message bytes or into the view itself.
 *
 * System properties as Service Bus maps the sections (wire-protocol.md §4.2,
 * .NET AmqpMessageConverter): MessageId (message-id, any id type as text),
 * CorrelationId (idem), To, ReplyTo, Label (subject), SessionId (group-id),
 * ReplyToSessionId (reply-to-group-id), ContentType, PartitionKey and
 * ViaPartitionKey (x-opt-partition-key / x-opt-via-partition-key),
 * ScheduledEnqueueTimeUtc (x-opt-scheduled-enqueue-time), TimeToLive
 * (header.ttl as sent, not yet capped by the entity), EnqueuedTimeUtc (given)
 * and Size (the stored length). Everything else the broker assigns after the
 * commit (SequenceNumber, LockToken, ExpiresAtUtc, ...) is absent. */
#ifndef AMQP_FILTER_MSG_H
#define AMQP_FILTER_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "amqp_message.h"
#include "ent_filter.h"

/* Fields of the properties list, AMQP 1.0 part 3 §3.2.4. */
#define AMQP_FILTER_PROPERTIES_FIELDS 13
enum {
    AMQP_PROP_FIELD_MESSAGE_ID = 0,
    AMQP_PROP_FIELD_TO = 2,
    AMQP_PROP_FIELD_SUBJECT = 3,
    AMQP_PROP_FIELD_REPLY_TO = 4,
    AMQP_PROP_FIELD_CORRELATION_ID = 5,
    AMQP_PROP_FIELD_CONTENT_TYPE = 6,
    AMQP_PROP_FIELD_GROUP_ID = 10,
    AMQP_PROP_FIELD_REPLY_TO_GROUP_ID = 12,
};

/* Borrows the message bytes and `parsed` (both must outlive the view and
 * every evaluation through it); owns nothing, needs no cleanup. Fill it with
 * amqp_filter_view_init; the fields are read by amqp_rule_action.c. */
typedef struct amqp_filter_view {
    const amqp_msg *parsed;
    size_t len;
    int64_t enqueued_ms;
    /* First byte of each properties field that is present and not null. */
    const uint8_t *field[AMQP_FILTER_PROPERTIES_FIELDS];
    uint32_t nfields; /* fields the list holds, nulls included */
    /* The application-properties map's entries (keys and values alternate). */
    const uint8_t *app, *app_end;
    uint32_t app_count; /* keys + values */
    /* A section that is not the list or map AMQP requires. Lookups treat it as
     * empty; amqp_rule_apply refuses to rewrite such a message. */
    bool malformed;
    /* Text of a correlation-id that is not a string (ulong, uuid, binary). */
    size_t correlation_len;
    char correlation_id[ENT_MESSAGE_ID_SIZE];
} amqp_filter_view;

/* bytes/len: the stored bare message; parsed: amqp_msg_parse of them;
 * enqueued_ms: the EnqueuedTimeUtc the commit will stamp. */
void amqp_filter_view_init(amqp_filter_view *v, const uint8_t *bytes, size_t len, const amqp_msg *parsed,
                           int64_t enqueued_ms);

/* The view as the rule language reads messages. */
ent_filter_msg amqp_filter_view_msg(const amqp_filter_view *v);

/* The same two lookups, for wrappers that layer changes over the view. */
int amqp_filter_view_get_sys(const amqp_filter_view *v, ent_filter_sys id, ent_filter_value *out);
int amqp_filter_view_get_user(const amqp_filter_view *v, const char *name, size_t len, ent_filter_value *out);

/* User property names match case-insensitively (ASCII letters), as the
 * filter language says. */
bool amqp_filter_name_eq(const uint8_t *a, size_t alen, const char *b, size_t blen);

#endif
