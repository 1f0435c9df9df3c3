/* The properties of queues, topics, subscriptions and rules: defaults, limits,
 * validation, and a setter by property name (Config.json and the ATOM API both
 * name properties; matching is case-insensitive).
 *
 * Defaults are those of Azure Service Bus (the .NET Create*Options), not the
 * official emulator's reduced ones (its TTL 1 h, MaxDeliveryCount 3, dup window
 * 20 s). Every limit is a named constant with the Service Bus value; the
 * duration and count ranges can be changed at run time with ent_limits_set
 * (for the emulator's flags), the name and text lengths cannot.
 *
 * Ownership: queue, topic and subscription props are plain values (fixed
 * buffers, copy them with =). Rule props own heap strings: init with
 * ent_rule_props_init, release with ent_rule_props_free, copy with
 * ent_rule_props_copy.
 *
 * Error texts name the entity and the property, e.g.
 *   queue "orders": LockDuration "PT2S" is below the minimum PT5S
 * and a subscription is named by its path, "events/Subscriptions/audit". */
#ifndef ENT_PROPS_H
#define ENT_PROPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ent_duration.h"
#include "ent_lengths.h"
#include "ent_status.h"

/* ---- Limits (Service Bus values) ---------------------------------------- */

#define ENT_LOCK_DURATION_MIN_MS INT64_C(5000)              /* PT5S */
#define ENT_LOCK_DURATION_MAX_MS INT64_C(300000)            /* PT5M */
#define ENT_MAX_DELIVERY_COUNT_MIN 1                        /* no documented maximum */
#define ENT_DEFAULT_TTL_MIN_MS INT64_C(1000)                /* PT1S */
#define ENT_AUTO_DELETE_ON_IDLE_MIN_MS INT64_C(300000)      /* PT5M */
#define ENT_DUP_WINDOW_MIN_MS INT64_C(20000)                /* PT20S */
#define ENT_DUP_WINDOW_MAX_MS (7 * ENT_DURATION_MS_PER_DAY) /* P7D */
#define ENT_MAX_SIZE_IN_MEGABYTES_MIN 1
#define ENT_MAX_SIZE_IN_MEGABYTES_MAX 81920 /* 80 GB: Premium and partitioned entities */

/* Characters Service Bus refuses in every entity name. */
#define ENT_NAME_FORBIDDEN_CHARS "@?#*"
/* ...and, in subscription and rule names, the path separators too. */
#define ENT_CHILD_NAME_FORBIDDEN_CHARS "@?#*/\\"

/* Defaults (Azure Service Bus). */
#define ENT_DEFAULT_LOCK_DURATION_MS INT64_C(60000)     /* PT1M */
#define ENT_DEFAULT_MAX_DELIVERY_COUNT 10
#define ENT_DEFAULT_DUP_WINDOW_MS INT64_C(600000)       /* PT10M (duplicate-detection.md) */
#define ENT_DEFAULT_MAX_SIZE_IN_MEGABYTES 1024

/* The ranges that ent_validate uses; ent_limits_set(NULL) restores the values
 * above. Single-threaded by design: set once at start. */
typedef struct ent_limits {
    int64_t lock_duration_min_ms, lock_duration_max_ms;
    int32_t max_delivery_count_min;
    int64_t default_ttl_min_ms;
    int64_t auto_delete_on_idle_min_ms;
    int64_t dup_window_min_ms, dup_window_max_ms;
    int32_t max_size_in_megabytes_min, max_size_in_megabytes_max;
} ent_limits;

const ent_limits *ent_limits_get(void);
void ent_limits_set(const ent_limits *limits);

/* ---- Values handed to the setters --------------------------------------- */

typedef enum ent_value_type {
    ENT_VALUE_NULL,
    ENT_VALUE_BOOL,
    ENT_VALUE_INT,
    ENT_VALUE_DOUBLE,
    ENT_VALUE_STRING,
    ENT_VALUE_STRUCTURED, /* an object or array: no property takes one; setters
                             refuse it (or say the property is unknown) */
} ent_value_type;

/* A typed value. The setters copy what they keep; s is borrowed. */
typedef struct ent_value {
    ent_value_type type;
    union {
        int b;
        int64_t i;
        double d;
        const char *s;
    } u;
} ent_value;

ent_value ent_value_null(void);
ent_value ent_value_bool(int b);
ent_value ent_value_int(int64_t i);
ent_value ent_value_double(double d);
ent_value ent_value_string(const char *s);
/* "a string", "an integer", ... for error texts. */
const char *ent_value_type_name(ent_value_type t);

/* ---- Entity status ------------------------------------------------------ */

typedef enum ent_entity_status {
    ENT_ENTITY_ACTIVE,
    ENT_ENTITY_DISABLED,
    ENT_ENTITY_SEND_DISABLED,    /* queues and topics */
    ENT_ENTITY_RECEIVE_DISABLED, /* queues and subscriptions */
} ent_entity_status;

/* "Active", "Disabled", "SendDisabled", "ReceiveDisabled" (the column values). */
const char *ent_entity_status_name(ent_entity_status s);
/* Case-insensitive; returns 0 or -1 for an unknown name. */
int ent_entity_status_parse(const char *name, ent_entity_status *out);
/* The status called name (any letter case) for an entity of kind ("queue",
 * "topic", "subscription"): SB_OK, or SB_ERR_ARGUMENT naming the statuses
 * that kind may have (a topic is never ReceiveDisabled, a subscription never
 * SendDisabled). */
sb_status ent_entity_status_for(const char *kind, const char *name, ent_entity_status *out, char *err, size_t errlen);
/* Whether an entity with this status (its column value) takes sends / gives
 * receives; an unknown status allows nothing. */
bool ent_entity_status_allows_send(const char *status);
bool ent_entity_status_allows_receive(const char *status);
/* Auto-forwarding: a message sent to an entity whose ForwardTo chain ends in
 * an entity with this status is dead-lettered in the entity the client sent
 * to (ForwardingFailed) instead; so is one the chain's end has no room for. */
bool ent_forward_diverts(const char *target_status);

/* ---- Queue -------------------------------------------------------------- */

/* Durations are milliseconds; ENT_DURATION_UNLIMITED means TimeSpan.MaxValue.
 * Empty strings mean "not set" (ForwardTo, UserMetadata). */
typedef struct ent_queue_props {
    char name[ENT_ENTITY_PATH_SIZE];
    int64_t lock_duration_ms;                      /* 60 s; 5 s - 5 min */
    int32_t max_delivery_count;                    /* 10; >= 1 */
    int64_t default_message_time_to_live_ms;       /* unlimited; >= 1 s */
    int dead_lettering_on_message_expiration;      /* false */
    int requires_duplicate_detection;              /* false */
    int64_t duplicate_detection_history_time_window_ms; /* 10 min; 20 s - 7 days */
    int requires_session;                          /* false */
    char forward_to[ENT_ENTITY_PATH_SIZE];         /* "" none; not the queue itself */
    char forward_dead_lettered_messages_to[ENT_ENTITY_PATH_SIZE];
    int64_t auto_delete_on_idle_ms;                /* unlimited; >= 5 min */
    ent_entity_status status;                      /* Active; any of the four */
    int32_t max_size_in_megabytes;                 /* 1024 */
    int enable_batched_operations;                 /* true */
    int enable_partitioning;                       /* false */
    char user_metadata[ENT_USER_METADATA_SIZE];    /* "" none; <= 1024 chars */
} ent_queue_props;

/* Sets every default and the name. Fails (props still defaulted, name empty)
 * when the name breaks the queue name rules. */
sb_status ent_queue_props_init(ent_queue_props *q, const char *name, char *err, size_t errlen);
/* Sets one property by name. Durations take ISO-8601 strings, counts integers
 * (or digit strings), flags booleans (or "true"/"false"), Status a status name;
 * ForwardTo, ForwardDeadLetteredMessagesTo and UserMetadata take a string or
 * null. Returns SB_OK; SB_ERR_ARGUMENT (wrong type, unparsable);
 * SB_ERR_ARGUMENT_RANGE (outside a limit); or SB_ERR_NOT_FOUND for a property
 * name that a queue does not have (the caller decides whether that is fatal).
 * On failure the props are unchanged. */
sb_status ent_queue_set(ent_queue_props *q, const char *property, ent_value v, char *err, size_t errlen);
/* Checks the name, every range and ForwardTo != itself. */
sb_status ent_queue_validate(const ent_queue_props *q, char *err, size_t errlen);

/* ---- Topic -------------------------------------------------------------- */

typedef struct ent_topic_props {
    char name[ENT_ENTITY_PATH_SIZE];
    int64_t default_message_time_to_live_ms;       /* unlimited */
    int requires_duplicate_detection;              /* false */
    int64_t duplicate_detection_history_time_window_ms; /* 10 min */
    int64_t auto_delete_on_idle_ms;                /* unlimited */
    ent_entity_status status;                      /* Active, Disabled or SendDisabled */
    int32_t max_size_in_megabytes;                 /* 1024 */
    int enable_batched_operations;                 /* true */
    int enable_partitioning;                       /* false */
    int support_ordering;                          /* true */
    char user_metadata[ENT_USER_METADATA_SIZE];
} ent_topic_props;

sb_status ent_topic_props_init(ent_topic_props *t, const char *name, char *err, size_t errlen);
sb_status ent_topic_set(ent_topic_props *t, const char *property, ent_value v, char *err, size_t errlen);
sb_status ent_topic_validate(const ent_topic_props *t, char *err, size_t errlen);

/* ---- Subscription ------------------------------------------------------- */

typedef struct ent_subscription_props {
    char topic[ENT_ENTITY_PATH_SIZE];              /* the topic it belongs to */
    char name[ENT_SUBSCRIPTION_NAME_SIZE];
    int64_t lock_duration_ms;                      /* 60 s */
    int32_t max_delivery_count;                    /* 10 */
    int64_t default_message_time_to_live_ms;       /* unlimited */
    int dead_lettering_on_message_expiration;      /* false */
    int dead_lettering_on_filter_evaluation_exceptions; /* true */
    int requires_session;                          /* false */
    char forward_to[ENT_ENTITY_PATH_SIZE];
    char forward_dead_lettered_messages_to[ENT_ENTITY_PATH_SIZE];
    int64_t auto_delete_on_idle_ms;                /* unlimited */
    ent_entity_status status;                      /* Active, Disabled or ReceiveDisabled */
    int enable_batched_operations;                 /* true */
    char user_metadata[ENT_USER_METADATA_SIZE];
} ent_subscription_props;

sb_status ent_subscription_props_init(ent_subscription_props *s, const char *topic, const char *name,
                                      char *err, size_t errlen);
/* Also accepts EnableDeadLetteringOnFilterEvaluationExceptions (the .NET name). */
sb_status ent_subscription_set(ent_subscription_props *s, const char *property, ent_value v, char *err,
                               size_t errlen);
/* ForwardTo may not name the subscription's own topic (a loop). */
sb_status ent_subscription_validate(const ent_subscription_props *s, char *err, size_t errlen);

/* ---- Rule --------------------------------------------------------------- */

typedef enum ent_filter_type {
    ENT_FILTER_TYPE_TRUE,        /* 1=1, the $Default rule */
    ENT_FILTER_TYPE_FALSE,       /* 1=0 */
    ENT_FILTER_TYPE_SQL,
    ENT_FILTER_TYPE_CORRELATION,
} ent_filter_type;

/* "True", "False", "Sql", "Correlation" (the column values). */
const char *ent_filter_type_name(ent_filter_type t);
/* Case-insensitive; also takes "SqlFilter", "CorrelationFilter", "TrueFilter", "FalseFilter". */
int ent_filter_type_parse(const char *name, ent_filter_type *out);

/* A user property of a correlation filter. The value's string (type
 * ENT_VALUE_STRING) is owned by the rule. */
typedef struct ent_correlation_property {
    char *name;
    ent_value value;
} ent_correlation_property;

/* The system properties a correlation filter matches (all AND-ed, case-sensitive
 * equality). NULL = not part of the filter. */
typedef struct ent_correlation_filter {
    char *content_type;
    char *correlation_id;
    char *subject;          /* "Label" in Config.json and the ATOM API */
    char *message_id;
    char *reply_to;
    char *reply_to_session_id;
    char *session_id;
    char *to;
    ent_correlation_property *properties;
    size_t nproperties;
} ent_correlation_filter;

typedef struct ent_rule_props {
    char topic[ENT_ENTITY_PATH_SIZE];
    char subscription[ENT_SUBSCRIPTION_NAME_SIZE];
    char name[ENT_RULE_NAME_SIZE];
    ent_filter_type filter_type;                   /* True */
    char *sql_expression;                          /* owned; for Sql filters */
    ent_correlation_filter correlation;            /* owned; for Correlation filters */
    char *action_expression;                       /* owned; NULL = no action */
} ent_rule_props;

#define ENT_DEFAULT_RULE_NAME "$Default"

sb_status ent_rule_props_init(ent_rule_props *r, const char *topic, const char *subscription, const char *name,
                              char *err, size_t errlen);
void ent_rule_props_free(ent_rule_props *r);
/* Deep copy into an uninitialised dst. Returns 0, or -1 when out of memory. */
int ent_rule_props_copy(ent_rule_props *dst, const ent_rule_props *src);
/* Property names are the Config.json paths, dotted:
 *   FilterType                          "Sql" | "Correlation" | "True" | "False"
 *   SqlFilter.SqlExpression             string
 *   Action.SqlExpression                string or null
 *   CorrelationFilter.<field>           ContentType, CorrelationId, Label (or
 *                                       Subject), MessageId, ReplyTo,
 *                                       ReplyToSessionId, SessionId, To: string or null
 *   CorrelationFilter.Properties.<name> string, integer, number or boolean (null removes)
 * Setting SqlFilter.SqlExpression or a CorrelationFilter field does not change
 * FilterType. */
sb_status ent_rule_set(ent_rule_props *r, const char *property, ent_value v, char *err, size_t errlen);
/* Sql needs a non-empty expression, Correlation at least one field or
 * property; expressions are at most ENT_SQL_EXPRESSION_MAX characters. */
sb_status ent_rule_validate(const ent_rule_props *r, char *err, size_t errlen);

/* ---- Names -------------------------------------------------------------- */

/* Queue and topic names (cloud rules, more lenient than the official emulator's
 * regex ^[A-Za-z0-9]$|^[A-Za-z0-9][\w-\.\/]*[A-Za-z0-9]$, which refuses '~'):
 * 1-260 characters; '/'-separated segments made of letters, digits, '.', '-',
 * '_' and '~'; no empty segment, so no leading, trailing or doubled '/'. `kind`
 * ("queue", "topic", "ForwardTo", ...) starts the error text. */
sb_status ent_check_entity_path(const char *kind, const char *name, char *err, size_t errlen);
/* Subscription and rule names: 1-50 characters, valid UTF-8, no control
 * characters and none of ENT_CHILD_NAME_FORBIDDEN_CHARS. */
sb_status ent_check_child_name(const char *kind, const char *name, size_t max_chars, char *err, size_t errlen);

/* Number of code points in a UTF-8 string, or -1 if it is not valid UTF-8. */
long ent_utf8_length(const char *s);
/* The same for len bytes that need not end in a NUL (a span of the wire). */
long ent_utf8_length_n(const char *s, size_t len);
/* Bytes of the first max_chars characters of UTF-8 text s (all of it when
 * shorter), so that a name quoted in an error stays UTF-8. */
int ent_utf8_prefix(const char *s, size_t max_chars);

#endif
