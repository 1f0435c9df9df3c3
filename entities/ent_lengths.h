/* The length limits of Service Bus names and texts, each under one name, so
 * that the wire (amqp10/), the model and the store's checks (sql/migrations,
 * kept equal by test_store_entity_checks) cannot drift apart.
 *
 * Lengths count characters (UTF-8 code points), as Service Bus does; the
 * _SIZE macros are byte buffers able to hold the longest valid value. */
#ifndef ENT_LENGTHS_H
#define ENT_LENGTHS_H

/* Bytes one code point may take in UTF-8. */
#define ENT_UTF8_MAX_BYTES 4

#define ENT_ENTITY_PATH_MAX 260 /* queue and topic names (paths, may hold '/') */
#define ENT_SUBSCRIPTION_NAME_MAX 50
#define ENT_RULE_NAME_MAX 50
#define ENT_USER_METADATA_MAX 1024
#define ENT_SQL_EXPRESSION_MAX 1024 /* a SQL filter or a rule action */
#define ENT_DEAD_LETTER_TEXT_MAX 4096 /* DeadLetterReason and DeadLetterErrorDescription */
#define ENT_MESSAGE_ID_MAX 128        /* MessageId, CorrelationId and PartitionKey */

#define ENT_ENTITY_PATH_SIZE (ENT_ENTITY_PATH_MAX * ENT_UTF8_MAX_BYTES + 1)
#define ENT_SUBSCRIPTION_NAME_SIZE (ENT_SUBSCRIPTION_NAME_MAX * ENT_UTF8_MAX_BYTES + 1)
#define ENT_RULE_NAME_SIZE (ENT_RULE_NAME_MAX * ENT_UTF8_MAX_BYTES + 1)
#define ENT_USER_METADATA_SIZE (ENT_USER_METADATA_MAX * ENT_UTF8_MAX_BYTES + 1)
#define ENT_MESSAGE_ID_SIZE (ENT_MESSAGE_ID_MAX * ENT_UTF8_MAX_BYTES + 1)
/* One code point more than the limit, so that a text copied in (and cut to
 * fit) is still seen to be too long, or invalid where the cut split a code
 * point, rather than silently shortened. */
#define ENT_DEAD_LETTER_TEXT_SIZE ((ENT_DEAD_LETTER_TEXT_MAX + 1) * ENT_UTF8_MAX_BYTES + 1)

#endif
