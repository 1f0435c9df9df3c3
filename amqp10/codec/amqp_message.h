/* AMQP messages as sbemu keeps them: the bare bytes the sender encoded, walked
 * section by section (amqp_msg_parse), split when they are a Service Bus batch
 * (several `data` sections that are each a whole message), and re-emitted on
 * delivery with a fresh header and the broker's message-annotations. */
#ifndef AMQP_MESSAGE_H
#define AMQP_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "amqp_codec.h"
#include "ent_lengths.h"
#include "ent_session.h"

/* Section descriptors, AMQP 1.0 part 3 §3.2. */
enum {
    AMQP_SEC_HEADER = 0x70,
    AMQP_SEC_DELIVERY_ANNOTATIONS = 0x71,
    AMQP_SEC_MESSAGE_ANNOTATIONS = 0x72,
    AMQP_SEC_PROPERTIES = 0x73,
    AMQP_SEC_APPLICATION_PROPERTIES = 0x74,
    AMQP_SEC_DATA = 0x75,
    AMQP_SEC_AMQP_SEQUENCE = 0x76,
    AMQP_SEC_AMQP_VALUE = 0x77,
    AMQP_SEC_FOOTER = 0x78,
};

typedef struct amqp_span {
    const uint8_t *p;
    size_t len;
} amqp_span;

/* What amqp_msg_parse found. Spans point into the parsed buffer; a section that
 * is absent has len 0. `body` covers every body section (they are contiguous). */
typedef struct amqp_msg {
    amqp_span header, delivery_annotations, message_annotations, properties, application_properties, body, footer;
    int body_sections;
    bool body_is_only_data;
    /* Extracted for the store and the rules. */
    bool has_message_id;
    char message_id[ENT_MESSAGE_ID_SIZE]; /* printable form of any id type */
    long message_id_chars;                /* its length in characters, however long; -1 not UTF-8 (ent_message_ids_check) */
    bool has_session_id;
    char session_id[ENT_SESSION_ID_SIZE]; /* properties.group-id */
    long session_id_chars;
    int64_t ttl_ms;                       /* header.ttl, -1 when absent */
    int64_t scheduled_enqueue_ms;         /* x-opt-scheduled-enqueue-time, 0 when absent */
} amqp_msg;

/* Parses a whole bare message. Returns 0, or -1 with a reason in err. */
int amqp_msg_parse(const uint8_t *buf, size_t len, amqp_msg *m, char *err, size_t errlen);

/* True when every body section is a `data` section holding a whole message:
 * the Service Bus batch format (message-format 0x80013700, which Proton 0.37
 * does not expose, so the content decides). */
bool amqp_msg_is_batch(const amqp_msg *m);

/* Iterates the inner messages of a batch: start with *cursor = NULL. Returns 1
 * and sets inner, or 0 at the end. */
int amqp_msg_batch_next(const amqp_msg *batch, const uint8_t **cursor, amqp_span *inner);

/* What the broker adds when it hands a stored message to a receiver. */
typedef struct amqp_delivery_info {
    int64_t sequence_number;
    int64_t enqueued_ms;
    int64_t locked_until_ms;      /* 0: not locked (receive-and-delete, peek) */
    int64_t ttl_ms;               /* effective TTL, -1: none */
    uint32_t header_delivery_count; /* DeliveryCount - 1, wire-protocol §0 #16 */
    int message_state;            /* x-opt-message-state, -1: omit */
    const char *dead_letter_reason;      /* NULL: leave application-properties alone */
    const char *dead_letter_description;
    const char *dead_letter_source;      /* x-opt-deadletter-source, NULL: omit */
    const char *message_id;              /* put in properties when the message has none */
    int64_t expires_ms;                  /* properties.absolute-expiry-time; 0: leave as sent */
} amqp_delivery_info;

/* Encodes the delivery form of a stored message into out (appends). Returns 0 or -1. */
int amqp_msg_encode_delivery(const uint8_t *stored, size_t len, const amqp_delivery_info *info, amqp_buf *out);
/* The same in two parts, for a receiver: out gets every section before the
 * body; tail[0] and tail[1] are the body and the footer as stored (spans into
 * stored, sent from there rather than copied: a 64 KiB body is most of what a
 * delivery costs to copy). The delivery is out followed by the two spans. */
int amqp_msg_encode_delivery_head(const uint8_t *stored, size_t len, const amqp_delivery_info *info, amqp_buf *out,
                                  amqp_span tail[2]);

#endif
