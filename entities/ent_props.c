/* Entity properties: defaults, limits, validation, set-by-name (ent_props.h).
 *
 * Queues, topics and subscriptions share one table-driven engine: each kind has
 * a table of rows (property name, value kind, field offset, range), so the
 * setter, the validator and the error texts never disagree. Rules have nested,
 * heap-held parts and live in ent_rule_props.c; names, values and UTF-8 lengths
 * in ent_names.c. */
#include "ent_props.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- Limits ------------------------------------------------------------- */

/* A macro so that both initialisers below are constant expressions (clang insists). */
#define SERVICE_BUS_LIMITS {\
    .lock_duration_min_ms = ENT_LOCK_DURATION_MIN_MS,\
    .lock_duration_max_ms = ENT_LOCK_DURATION_MAX_MS,\
    .max_delivery_count_min = ENT_MAX_DELIVERY_COUNT_MIN,\
    .default_ttl_min_ms = ENT_DEFAULT_TTL_MIN_MS,\
    .auto_delete_on_idle_min_ms = ENT_AUTO_DELETE_ON_IDLE_MIN_MS,\
    .dup_window_min_ms = ENT_DUP_WINDOW_MIN_MS,\
    .dup_window_max_ms = ENT_DUP_WINDOW_MAX_MS,\
    .max_size_in_megabytes_min = ENT_MAX_SIZE_IN_MEGABYTES_MIN,\
    .max_size_in_megabytes_max = ENT_MAX_SIZE_IN_MEGABYTES_MAX,\
}
static const ent_limits service_bus_limits = SERVICE_BUS_LIMITS;
static ent_limits limits = SERVICE_BUS_LIMITS;

const ent_limits *ent_limits_get(void) { return &limits; }
void ent_limits_set(const ent_limits *l) { limits = l ? *l : service_bus_limits; }

static void copy_text(char *dst, size_t dstsize, const char *src)
{
    snprintf(dst, dstsize, "%s", src ? src : "");
}

/* ---- Status names ------------------------------------------------------- */

static const char *const status_names[] = {
    [ENT_ENTITY_ACTIVE] = "Active",
    [ENT_ENTITY_DISABLED] = "Disabled",
    [ENT_ENTITY_SEND_DISABLED] = "SendDisabled",
    [ENT_ENTITY_RECEIVE_DISABLED] = "ReceiveDisabled",
};
#define STATUS_COUNT (sizeof status_names / sizeof status_names[0])
#define STATUS_BIT(s) (1u << (s))

const char *ent_entity_status_name(ent_entity_status s)
{
    return (unsigned)s < STATUS_COUNT ? status_names[s] : "Unknown";
}

int ent_entity_status_parse(const char *name, ent_entity_status *out)
{
    for (unsigned i = 0; name && i < STATUS_COUNT; i++)
        if (!strcasecmp(name, status_names[i])) {
            *out = (ent_entity_status)i;
            return 0;
        }
    return -1;
}

/* ---- The table-driven engine for queues, topics and subscriptions -------- */

typedef enum prop_kind { P_DURATION, P_INT, P_BOOL, P_STATUS, P_PATH, P_TEXT } prop_kind;
typedef enum prop_range {
    R_NONE,
    R_LOCK_DURATION,
    R_DELIVERY_COUNT,
    R_DEFAULT_TTL,
    R_AUTO_DELETE,
    R_DUP_WINDOW,
    R_MAX_SIZE,
    R_USER_METADATA,
} prop_range;

typedef struct prop_row {
    const char *name;   /* as in Config.json and the ATOM API */
    const char *alias;  /* another accepted name (SDK spelling) or NULL */
    prop_kind kind;
    size_t offset;
    size_t size;        /* buffer size for P_PATH and P_TEXT */
    prop_range range;
} prop_row;

typedef struct entity_kind {
    const char *kind;   /* "queue", "topic", "subscription" */
    const prop_row *rows;
    size_t nrows;
    unsigned status_mask;
} entity_kind;

#define ROW(n, k, type, field, r) {n, NULL, k, offsetof(type, field), sizeof(((type *)0)->field), r}
#define ROWA(n, a, k, type, field, r) {n, a, k, offsetof(type, field), sizeof(((type *)0)->field), r}

static const prop_row queue_rows[] = {
    ROW("LockDuration", P_DURATION, ent_queue_props, lock_duration_ms, R_LOCK_DURATION),
    ROW("MaxDeliveryCount", P_INT, ent_queue_props, max_delivery_count, R_DELIVERY_COUNT),
    ROW("DefaultMessageTimeToLive", P_DURATION, ent_queue_props, default_message_time_to_live_ms, R_DEFAULT_TTL),
    ROWA("DeadLetteringOnMessageExpiration", "EnableDeadLetteringOnMessageExpiration", P_BOOL, ent_queue_props,
         dead_lettering_on_message_expiration, R_NONE),
    ROW("RequiresDuplicateDetection", P_BOOL, ent_queue_props, requires_duplicate_detection, R_NONE),
    ROW("DuplicateDetectionHistoryTimeWindow", P_DURATION, ent_queue_props,
        duplicate_detection_history_time_window_ms, R_DUP_WINDOW),
    ROW("RequiresSession", P_BOOL, ent_queue_props, requires_session, R_NONE),
    ROW("ForwardTo", P_PATH, ent_queue_props, forward_to, R_NONE),
    ROW("ForwardDeadLetteredMessagesTo", P_PATH, ent_queue_props, forward_dead_lettered_messages_to, R_NONE),
    ROW("AutoDeleteOnIdle", P_DURATION, ent_queue_props, auto_delete_on_idle_ms, R_AUTO_DELETE),
    ROW("Status", P_STATUS, ent_queue_props, status, R_NONE),
    ROW("MaxSizeInMegabytes", P_INT, ent_queue_props, max_size_in_megabytes, R_MAX_SIZE),
    ROW("EnableBatchedOperations", P_BOOL, ent_queue_props, enable_batched_operations, R_NONE),
    ROW("EnablePartitioning", P_BOOL, ent_queue_props, enable_partitioning, R_NONE),
    ROW("UserMetadata", P_TEXT, ent_queue_props, user_metadata, R_USER_METADATA),
};

static const prop_row topic_rows[] = {
    ROW("DefaultMessageTimeToLive", P_DURATION, ent_topic_props, default_message_time_to_live_ms, R_DEFAULT_TTL),
    ROW("RequiresDuplicateDetection", P_BOOL, ent_topic_props, requires_duplicate_detection, R_NONE),
    ROW("DuplicateDetectionHistoryTimeWindow", P_DURATION, ent_topic_props,
        duplicate_detection_history_time_window_ms, R_DUP_WINDOW),
    ROW("AutoDeleteOnIdle", P_DURATION, ent_topic_props, auto_delete_on_idle_ms, R_AUTO_DELETE),
    ROW("Status", P_STATUS, ent_topic_props, status, R_NONE),
    ROW("MaxSizeInMegabytes", P_INT, ent_topic_props, max_size_in_megabytes, R_MAX_SIZE),
    ROW("EnableBatchedOperations", P_BOOL, ent_topic_props, enable_batched_operations, R_NONE),
    ROW("EnablePartitioning", P_BOOL, ent_topic_props, enable_partitioning, R_NONE),
    ROW("SupportOrdering", P_BOOL, ent_topic_props, support_ordering, R_NONE),
    ROW("UserMetadata", P_TEXT, ent_topic_props, user_metadata, R_USER_METADATA),
};

static const prop_row subscription_rows[] = {
    ROW("LockDuration", P_DURATION, ent_subscription_props, lock_duration_ms, R_LOCK_DURATION),
    ROW("MaxDeliveryCount", P_INT, ent_subscription_props, max_delivery_count, R_DELIVERY_COUNT),
    ROW("DefaultMessageTimeToLive", P_DURATION, ent_subscription_props, default_message_time_to_live_ms,
        R_DEFAULT_TTL),
    ROWA("DeadLetteringOnMessageExpiration", "EnableDeadLetteringOnMessageExpiration", P_BOOL,
         ent_subscription_props, dead_lettering_on_message_expiration, R_NONE),
    ROWA("DeadLetteringOnFilterEvaluationExceptions", "EnableDeadLetteringOnFilterEvaluationExceptions", P_BOOL,
         ent_subscription_props, dead_lettering_on_filter_evaluation_exceptions, R_NONE),
    ROW("RequiresSession", P_BOOL, ent_subscription_props, requires_session, R_NONE),
    ROW("ForwardTo", P_PATH, ent_subscription_props, forward_to, R_NONE),
    ROW("ForwardDeadLetteredMessagesTo", P_PATH, ent_subscription_props, forward_dead_lettered_messages_to,
        R_NONE),
    ROW("AutoDeleteOnIdle", P_DURATION, ent_subscription_props, auto_delete_on_idle_ms, R_AUTO_DELETE),
    ROW("Status", P_STATUS, ent_subscription_props, status, R_NONE),
    ROW("EnableBatchedOperations", P_BOOL, ent_subscription_props, enable_batched_operations, R_NONE),
    ROW("UserMetadata", P_TEXT, ent_subscription_props, user_metadata, R_USER_METADATA),
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const entity_kind queue_kind = {
    "queue", queue_rows, COUNT(queue_rows),
    STATUS_BIT(ENT_ENTITY_ACTIVE) | STATUS_BIT(ENT_ENTITY_DISABLED) | STATUS_BIT(ENT_ENTITY_SEND_DISABLED) |
        STATUS_BIT(ENT_ENTITY_RECEIVE_DISABLED),
};
static const entity_kind topic_kind = {
    "topic", topic_rows, COUNT(topic_rows),
    STATUS_BIT(ENT_ENTITY_ACTIVE) | STATUS_BIT(ENT_ENTITY_DISABLED) | STATUS_BIT(ENT_ENTITY_SEND_DISABLED),
};
static const entity_kind subscription_kind = {
    "subscription", subscription_rows, COUNT(subscription_rows),
    STATUS_BIT(ENT_ENTITY_ACTIVE) | STATUS_BIT(ENT_ENTITY_DISABLED) | STATUS_BIT(ENT_ENTITY_RECEIVE_DISABLED),
};

/* The entity as error texts name it: `queue "orders"`. */
typedef struct who_buf {
    char text[ENT_ENTITY_PATH_SIZE + ENT_SUBSCRIPTION_NAME_SIZE + ENT_RULE_NAME_SIZE + 64];
} who_buf;

static void range_of(prop_range r, int64_t *min, int64_t *max)
{
    *min = 0;
    *max = INT64_MAX;
    switch (r) {
    case R_LOCK_DURATION: *min = limits.lock_duration_min_ms; *max = limits.lock_duration_max_ms; break;
    case R_DELIVERY_COUNT: *min = limits.max_delivery_count_min; *max = INT32_MAX; break;
    case R_DEFAULT_TTL: *min = limits.default_ttl_min_ms; break;
    case R_AUTO_DELETE: *min = limits.auto_delete_on_idle_min_ms; break;
    case R_DUP_WINDOW: *min = limits.dup_window_min_ms; *max = limits.dup_window_max_ms; break;
    case R_MAX_SIZE: *min = limits.max_size_in_megabytes_min; *max = limits.max_size_in_megabytes_max; break;
    case R_USER_METADATA: *max = ENT_USER_METADATA_MAX; break;
    case R_NONE: break;
    }
}

/* The name the error text should use for the entity's own path, for ForwardTo
 * loops: a queue must not forward to itself, a subscription not to its topic. */
typedef struct self_names {
    const char *self;       /* e.g. the queue name */
    const char *self_kind;  /* "the queue itself", "its own topic" */
} self_names;

/* Checks the value currently in the field of row r. `shown` is the text the
 * user gave (for durations), or NULL to format the stored value. */
static sb_status check_row(const entity_kind *k, const char *who, const prop_row *r, const void *props,
                           const self_names *self, const char *shown, char *err, size_t errlen)
{
    const char *field = (const char *)props + r->offset;
    int64_t min, max;
    range_of(r->range, &min, &max);
    switch (r->kind) {
    case P_DURATION: {
        int64_t ms;
        memcpy(&ms, field, sizeof ms);
        char vbuf[ENT_DURATION_TEXT_MAX], minbuf[ENT_DURATION_TEXT_MAX], maxbuf[ENT_DURATION_TEXT_MAX];
        if (!shown)
            shown = ent_duration_format(ms, vbuf, sizeof vbuf);
        if (ms < min)
            return ent_fail_status(SB_ERR_ARGUMENT_RANGE, err, errlen, "%s: %s \"%s\" is below the minimum %s", who,
                                   r->name, shown, ent_duration_format(min, minbuf, sizeof minbuf));
        if (ms > max)
            return ent_fail_status(SB_ERR_ARGUMENT_RANGE, err, errlen, "%s: %s \"%s\" is above the maximum %s", who,
                                   r->name, shown, ent_duration_format(max, maxbuf, sizeof maxbuf));
        return SB_OK;
    }
    case P_INT: {
        int32_t v;
        memcpy(&v, field, sizeof v);
        if (v < min)
            return ent_fail_status(SB_ERR_ARGUMENT_RANGE, err, errlen, "%s: %s %d is below the minimum %lld", who,
                                   r->name, v, (long long)min);
        if (v > max)
            return ent_fail_status(SB_ERR_ARGUMENT_RANGE, err, errlen, "%s: %s %d is above the maximum %lld", who,
                                   r->name, v, (long long)max);
        return SB_OK;
    }
    case P_BOOL:
        return SB_OK;
    case P_STATUS: {
        ent_entity_status s;
        memcpy(&s, field, sizeof s);
        if ((unsigned)s >= STATUS_COUNT || !(k->status_mask & STATUS_BIT(s))) {
            char allowed[96] = "";
            for (unsigned i = 0; i < STATUS_COUNT; i++)
                if (k->status_mask & STATUS_BIT(i))
                    snprintf(allowed + strlen(allowed), sizeof allowed - strlen(allowed), "%s%s",
                             *allowed ? ", " : "", status_names[i]);
            return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                                   "%s: Status \"%s\" is not allowed for a %s (allowed: %s)", who,
                                   ent_entity_status_name(s), k->kind, allowed);
        }
        return SB_OK;
    }
    case P_PATH: {
        if (!*field)
            return SB_OK;
        char sub[512];
        sb_status st = ent_check_entity_path(r->name, field, sub, sizeof sub);
        if (st != SB_OK)
            return ent_fail_status(st, err, errlen, "%s: %s", who, sub);
        if (self && self->self && !strcasecmp(field, self->self))
            return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "%s: %s \"%s\" cannot be %s (a forwarding loop)", who,
                                   r->name, field, self->self_kind);
        return SB_OK;
    }
    case P_TEXT: {
        long chars = ent_utf8_length(field);
        if (chars < 0)
            return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "%s: %s is not valid UTF-8", who, r->name);
        if (chars > max)
            return ent_fail_status(SB_ERR_ARGUMENT_RANGE, err, errlen,
                                   "%s: %s is %ld characters, above the maximum %lld", who, r->name, chars,
                                   (long long)max);
        return SB_OK;
    }
    }
    return SB_OK;
}

static const prop_row *find_row(const entity_kind *k, const char *property)
{
    for (size_t i = 0; property && i < k->nrows; i++)
        if (!strcasecmp(property, k->rows[i].name) || (k->rows[i].alias && !strcasecmp(property, k->rows[i].alias)))
            return &k->rows[i];
    return NULL;
}

static int parse_bool_text(const char *s, int *out)
{
    if (!strcasecmp(s, "true")) {
        *out = 1;
        return 0;
    }
    if (!strcasecmp(s, "false")) {
        *out = 0;
        return 0;
    }
    return -1;
}

/* Converts v into the field of row r inside props (a scratch copy). */
static sb_status convert_into(const char *who, const prop_row *r, void *props, ent_value v, const char **shown,
                              char *err, size_t errlen)
{
    char *field = (char *)props + r->offset;
    *shown = NULL;
    switch (r->kind) {
    case P_DURATION: {
        if (v.type != ENT_VALUE_STRING)
            return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                                   "%s: %s must be an ISO-8601 duration string such as \"PT1M\", got %s", who, r->name,
                                   ent_value_type_name(v.type));
        int64_t ms;
        char why[160];
        if (ent_duration_parse(v.u.s, &ms, why, sizeof why))
            return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "%s: %s \"%s\" is not an ISO-8601 duration: %s", who,
                                   r->name, v.u.s, why);
        memcpy(field, &ms, sizeof ms);
        *shown = v.u.s;
        return SB_OK;
    }
    case P_INT: {
        int64_t i;
        if (v.type == ENT_VALUE_INT) {
            i = v.u.i;
        } else if (v.type == ENT_VALUE_DOUBLE && v.u.d == (double)(int64_t)v.u.d) {
            i = (int64_t)v.u.d;
        } else if (v.type == ENT_VALUE_STRING && *v.u.s) {
            char *end;
            errno = 0;
            long long ll = strtoll(v.u.s, &end, 10);
            if (*end || errno)
                return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "%s: %s \"%s\" is not an integer", who, r->name,
                                       v.u.s);
            i = ll;
        } else {
            return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "%s: %s must be an integer, got %s", who, r->name,
                                   v.type == ENT_VALUE_DOUBLE ? "a fractional number" : ent_value_type_name(v.type));
        }
        int64_t min, max;
        range_of(r->range, &min, &max);
        /* Report out-of-int32 values before they are narrowed. */
        if (i < min)
            return ent_fail_status(SB_ERR_ARGUMENT_RANGE, err, errlen, "%s: %s %lld is below the minimum %lld", who,
                                   r->name, (long long)i, (long long)min);
        if (i > max)
            return ent_fail_status(SB_ERR_ARGUMENT_RANGE, err, errlen, "%s: %s %lld is above the maximum %lld", who,
                                   r->name, (long long)i, (long long)max);
        int32_t v32 = (int32_t)i;
        memcpy(field, &v32, sizeof v32);
        return SB_OK;
    }
    case P_BOOL: {
        int b;
        if (v.type == ENT_VALUE_BOOL)
            b = v.u.b;
        else if (v.type == ENT_VALUE_STRING && !parse_bool_text(v.u.s, &b))
            ;
        else
            return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "%s: %s must be true or false, got %s", who, r->name,
                                   ent_value_type_name(v.type));
        memcpy(field, &b, sizeof b);
        return SB_OK;
    }
    case P_STATUS: {
        if (v.type != ENT_VALUE_STRING)
            return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "%s: %s must be a string such as \"Active\", got %s",
                                   who, r->name, ent_value_type_name(v.type));
        ent_entity_status s;
        if (ent_entity_status_parse(v.u.s, &s))
            return ent_fail_status(SB_ERR_ARGUMENT, err, errlen,
                                   "%s: %s \"%s\" is not one of Active, Disabled, SendDisabled, ReceiveDisabled", who,
                                   r->name, v.u.s);
        memcpy(field, &s, sizeof s);
        return SB_OK;
    }
    case P_PATH:
    case P_TEXT: {
        const char *s;
        if (v.type == ENT_VALUE_NULL)
            s = "";
        else if (v.type == ENT_VALUE_STRING)
            s = v.u.s;
        else
            return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "%s: %s must be a string, got %s", who, r->name,
                                   ent_value_type_name(v.type));
        /* Too many bytes means too many characters: let check_row say so. */
        size_t len = strlen(s);
        if (len >= r->size) {
            long chars = ent_utf8_length(s);
            return ent_fail_status(SB_ERR_ARGUMENT_RANGE, err, errlen, "%s: %s is %ld characters, above the maximum %d",
                                   who, r->name, chars,
                                   r->kind == P_PATH ? ENT_ENTITY_PATH_MAX : ENT_USER_METADATA_MAX);
        }
        memcpy(field, s, len + 1);
        return SB_OK;
    }
    }
    return SB_OK;
}

static sb_status generic_set(const entity_kind *k, const char *who, void *props, void *scratch, size_t size,
                             const self_names *self, const char *property, ent_value v, char *err, size_t errlen)
{
    const prop_row *r = find_row(k, property);
    if (!r)
        return ent_fail_status(SB_ERR_NOT_FOUND, err, errlen, "%s: unknown property \"%s\" for a %s", who,
                               property ? property : "(null)", k->kind);
    memcpy(scratch, props, size);
    const char *shown;
    sb_status st = convert_into(who, r, scratch, v, &shown, err, errlen);
    if (st == SB_OK)
        st = check_row(k, who, r, scratch, self, shown, err, errlen);
    if (st == SB_OK)
        memcpy(props, scratch, size);
    return st;
}

static sb_status generic_validate(const entity_kind *k, const char *who, const void *props, const self_names *self,
                                  char *err, size_t errlen)
{
    for (size_t i = 0; i < k->nrows; i++) {
        sb_status st = check_row(k, who, &k->rows[i], props, self, NULL, err, errlen);
        if (st != SB_OK)
            return st;
    }
    return SB_OK;
}

/* ---- Queue -------------------------------------------------------------- */

static void queue_who(const ent_queue_props *q, who_buf *w)
{
    snprintf(w->text, sizeof w->text, "queue \"%s\"", q->name);
}

static void queue_defaults(ent_queue_props *q)
{
    memset(q, 0, sizeof *q);
    q->lock_duration_ms = ENT_DEFAULT_LOCK_DURATION_MS;
    q->max_delivery_count = ENT_DEFAULT_MAX_DELIVERY_COUNT;
    q->default_message_time_to_live_ms = ENT_DURATION_UNLIMITED;
    q->duplicate_detection_history_time_window_ms = ENT_DEFAULT_DUP_WINDOW_MS;
    q->auto_delete_on_idle_ms = ENT_DURATION_UNLIMITED;
    q->status = ENT_ENTITY_ACTIVE;
    q->max_size_in_megabytes = ENT_DEFAULT_MAX_SIZE_IN_MEGABYTES;
    q->enable_batched_operations = 1;
}

sb_status ent_queue_props_init(ent_queue_props *q, const char *name, char *err, size_t errlen)
{
    queue_defaults(q);
    sb_status st = ent_check_entity_path("queue name", name, err, errlen);
    if (st == SB_OK)
        copy_text(q->name, sizeof q->name, name);
    return st;
}

sb_status ent_queue_set(ent_queue_props *q, const char *property, ent_value v, char *err, size_t errlen)
{
    who_buf w;
    queue_who(q, &w);
    self_names self = {q->name, "the queue itself"};
    ent_queue_props scratch;
    return generic_set(&queue_kind, w.text, q, &scratch, sizeof scratch, &self, property, v, err, errlen);
}

sb_status ent_queue_validate(const ent_queue_props *q, char *err, size_t errlen)
{
    sb_status st = ent_check_entity_path("queue name", q->name, err, errlen);
    if (st != SB_OK)
        return st;
    who_buf w;
    queue_who(q, &w);
    self_names self = {q->name, "the queue itself"};
    return generic_validate(&queue_kind, w.text, q, &self, err, errlen);
}

/* ---- Topic -------------------------------------------------------------- */

static void topic_who(const ent_topic_props *t, who_buf *w)
{
    snprintf(w->text, sizeof w->text, "topic \"%s\"", t->name);
}

sb_status ent_topic_props_init(ent_topic_props *t, const char *name, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    t->default_message_time_to_live_ms = ENT_DURATION_UNLIMITED;
    t->duplicate_detection_history_time_window_ms = ENT_DEFAULT_DUP_WINDOW_MS;
    t->auto_delete_on_idle_ms = ENT_DURATION_UNLIMITED;
    t->status = ENT_ENTITY_ACTIVE;
    t->max_size_in_megabytes = ENT_DEFAULT_MAX_SIZE_IN_MEGABYTES;
    t->enable_batched_operations = 1;
    t->support_ordering = 1; /* Service Bus's default for a topic; the admin clients read it back */
    sb_status st = ent_check_entity_path("topic name", name, err, errlen);
    if (st == SB_OK)
        copy_text(t->name, sizeof t->name, name);
    return st;
}

sb_status ent_topic_set(ent_topic_props *t, const char *property, ent_value v, char *err, size_t errlen)
{
    who_buf w;
    topic_who(t, &w);
    ent_topic_props scratch;
    return generic_set(&topic_kind, w.text, t, &scratch, sizeof scratch, NULL, property, v, err, errlen);
}

sb_status ent_topic_validate(const ent_topic_props *t, char *err, size_t errlen)
{
    sb_status st = ent_check_entity_path("topic name", t->name, err, errlen);
    if (st != SB_OK)
        return st;
    who_buf w;
    topic_who(t, &w);
    return generic_validate(&topic_kind, w.text, t, NULL, err, errlen);
}

/* ---- Subscription ------------------------------------------------------- */

static void subscription_who(const ent_subscription_props *s, who_buf *w)
{
    snprintf(w->text, sizeof w->text, "subscription \"%s/Subscriptions/%s\"", s->topic, s->name);
}

sb_status ent_subscription_props_init(ent_subscription_props *s, const char *topic, const char *name, char *err,
                                      size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->lock_duration_ms = ENT_DEFAULT_LOCK_DURATION_MS;
    s->max_delivery_count = ENT_DEFAULT_MAX_DELIVERY_COUNT;
    s->default_message_time_to_live_ms = ENT_DURATION_UNLIMITED;
    s->dead_lettering_on_filter_evaluation_exceptions = 1;
    s->auto_delete_on_idle_ms = ENT_DURATION_UNLIMITED;
    s->status = ENT_ENTITY_ACTIVE;
    s->enable_batched_operations = 1;
    sb_status st = ent_check_entity_path("topic name", topic, err, errlen);
    if (st != SB_OK)
        return st;
    copy_text(s->topic, sizeof s->topic, topic);
    char sub[512];
    st = ent_check_child_name("subscription name", name, ENT_SUBSCRIPTION_NAME_MAX, sub, sizeof sub);
    if (st != SB_OK)
        return ent_fail_status(st, err, errlen, "topic \"%s\": %s", topic, sub);
    copy_text(s->name, sizeof s->name, name);
    return SB_OK;
}

sb_status ent_subscription_set(ent_subscription_props *s, const char *property, ent_value v, char *err,
                               size_t errlen)
{
    who_buf w;
    subscription_who(s, &w);
    self_names self = {s->topic, "its own topic"};
    ent_subscription_props scratch;
    return generic_set(&subscription_kind, w.text, s, &scratch, sizeof scratch, &self, property, v, err, errlen);
}

sb_status ent_subscription_validate(const ent_subscription_props *s, char *err, size_t errlen)
{
    sb_status st = ent_check_entity_path("topic name", s->topic, err, errlen);
    if (st != SB_OK)
        return st;
    char sub[512];
    st = ent_check_child_name("subscription name", s->name, ENT_SUBSCRIPTION_NAME_MAX, sub, sizeof sub);
    if (st != SB_OK)
        return ent_fail_status(st, err, errlen, "topic \"%s\": %s", s->topic, sub);
    who_buf w;
    subscription_who(s, &w);
    self_names self = {s->topic, "its own topic"};
    return generic_validate(&subscription_kind, w.text, s, &self, err, errlen);
}

bool ent_entity_status_allows_send(const char *status)
{
    ent_entity_status st;
    return ent_entity_status_parse(status, &st) == 0 && (st == ENT_ENTITY_ACTIVE || st == ENT_ENTITY_RECEIVE_DISABLED);
}

bool ent_entity_status_allows_receive(const char *status)
{
    ent_entity_status st;
    return ent_entity_status_parse(status, &st) == 0 && (st == ENT_ENTITY_ACTIVE || st == ENT_ENTITY_SEND_DISABLED);
}

bool ent_forward_diverts(const char *target_status) { return !ent_entity_status_allows_send(target_status); }

sb_status ent_entity_status_for(const char *kind, const char *name, ent_entity_status *out, char *err, size_t errlen)
{
    const entity_kind *k = !strcmp(kind, "queue")          ? &queue_kind
                           : !strcmp(kind, "topic")        ? &topic_kind
                           : !strcmp(kind, "subscription") ? &subscription_kind
                                                           : NULL;
    if (!k)
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "\"%s\" is not a kind of entity", kind);
    char allowed[96] = "";
    for (unsigned i = 0; i < STATUS_COUNT; i++)
        if (k->status_mask & STATUS_BIT(i))
            snprintf(allowed + strlen(allowed), sizeof allowed - strlen(allowed), "%s%s", *allowed ? ", " : "",
                     status_names[i]);
    ent_entity_status s;
    if (!name || ent_entity_status_parse(name, &s) || !(k->status_mask & STATUS_BIT(s)))
        return ent_fail_status(SB_ERR_ARGUMENT, err, errlen, "Status \"%.64s\" is not allowed for a %s (allowed: %s)",
                               name ? name : "", k->kind, allowed);
    *out = s;
    return SB_OK;
}
