/* See store_columns.h. */
#include "store_columns.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ent_cache.h"
#include "ent_duration.h"
#include "ent_props.h"

#define FIELD(type, field) offsetof(type, field), sizeof(((type *)0)->field)
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- the tables ---- */

#define Q(field) FIELD(ent_queue_props, field)
static const store_column queue_cols[] = {
    {"name", STORE_COL_TEXT, Q(name), STORE_COL_KEY},
    {"lock_duration", STORE_COL_MS, Q(lock_duration_ms), 0},
    {"max_delivery_count", STORE_COL_INT, Q(max_delivery_count), 0},
    {"default_message_time_to_live", STORE_COL_MS_OR_UNLIMITED, Q(default_message_time_to_live_ms), 0},
    {"dead_lettering_on_message_expiration", STORE_COL_BOOL, Q(dead_lettering_on_message_expiration), 0},
    {"requires_duplicate_detection", STORE_COL_BOOL, Q(requires_duplicate_detection), 0},
    {"duplicate_detection_history_time_window", STORE_COL_MS, Q(duplicate_detection_history_time_window_ms), 0},
    {"requires_session", STORE_COL_BOOL, Q(requires_session), STORE_COL_FIXED},
    {"forward_to", STORE_COL_TEXT_OPT, Q(forward_to), 0},
    {"forward_dead_lettered_messages_to", STORE_COL_TEXT_OPT, Q(forward_dead_lettered_messages_to), 0},
    {"auto_delete_on_idle", STORE_COL_MS_OR_UNLIMITED, Q(auto_delete_on_idle_ms), 0},
    {"status", STORE_COL_STATUS, Q(status), 0},
    {"max_size_in_megabytes", STORE_COL_INT, Q(max_size_in_megabytes), 0},
    {"enable_batched_operations", STORE_COL_BOOL, Q(enable_batched_operations), 0},
    {"enable_partitioning", STORE_COL_BOOL, Q(enable_partitioning), 0},
    {"user_metadata", STORE_COL_TEXT_OPT, Q(user_metadata), 0},
};
const store_columns store_queue_columns = {"queues", queue_cols, COUNT(queue_cols)};

#define T(field) FIELD(ent_topic_props, field)
static const store_column topic_cols[] = {
    {"name", STORE_COL_TEXT, T(name), STORE_COL_KEY},
    {"default_message_time_to_live", STORE_COL_MS_OR_UNLIMITED, T(default_message_time_to_live_ms), 0},
    {"requires_duplicate_detection", STORE_COL_BOOL, T(requires_duplicate_detection), 0},
    {"duplicate_detection_history_time_window", STORE_COL_MS, T(duplicate_detection_history_time_window_ms), 0},
    {"auto_delete_on_idle", STORE_COL_MS_OR_UNLIMITED, T(auto_delete_on_idle_ms), 0},
    {"status", STORE_COL_STATUS, T(status), 0},
    {"max_size_in_megabytes", STORE_COL_INT, T(max_size_in_megabytes), 0},
    {"enable_batched_operations", STORE_COL_BOOL, T(enable_batched_operations), 0},
    {"enable_partitioning", STORE_COL_BOOL, T(enable_partitioning), 0},
    {"support_ordering", STORE_COL_BOOL, T(support_ordering), 0},
    {"user_metadata", STORE_COL_TEXT_OPT, T(user_metadata), 0},
};
const store_columns store_topic_columns = {"topics", topic_cols, COUNT(topic_cols)};

#define S(field) FIELD(ent_subscription_props, field)
static const store_column subscription_cols[] = {
    {"name", STORE_COL_TEXT, S(name), STORE_COL_KEY},
    {"lock_duration", STORE_COL_MS, S(lock_duration_ms), 0},
    {"max_delivery_count", STORE_COL_INT, S(max_delivery_count), 0},
    {"default_message_time_to_live", STORE_COL_MS_OR_UNLIMITED, S(default_message_time_to_live_ms), 0},
    {"dead_lettering_on_message_expiration", STORE_COL_BOOL, S(dead_lettering_on_message_expiration), 0},
    {"dead_lettering_on_filter_evaluation_exceptions", STORE_COL_BOOL,
     S(dead_lettering_on_filter_evaluation_exceptions), 0},
    {"requires_session", STORE_COL_BOOL, S(requires_session), STORE_COL_FIXED},
    {"forward_to", STORE_COL_TEXT_OPT, S(forward_to), 0},
    {"forward_dead_lettered_messages_to", STORE_COL_TEXT_OPT, S(forward_dead_lettered_messages_to), 0},
    {"auto_delete_on_idle", STORE_COL_MS_OR_UNLIMITED, S(auto_delete_on_idle_ms), 0},
    {"status", STORE_COL_STATUS, S(status), 0},
    {"enable_batched_operations", STORE_COL_BOOL, S(enable_batched_operations), 0},
    {"user_metadata", STORE_COL_TEXT_OPT, S(user_metadata), 0},
};
const store_columns store_subscription_columns = {"subscriptions", subscription_cols, COUNT(subscription_cols)};

/* The view of migration 006: every kind in one shape, as the cache wants it. */
#define E(field) FIELD(ent_entity, field)
static const store_column entity_view_cols[] = {
    {"id", STORE_COL_INT, E(id), STORE_COL_KEY},
    {"path", STORE_COL_TEXT, E(name), 0},
    {"status", STORE_COL_TEXT, E(status), 0},
    {"requires_session", STORE_COL_BOOL, E(requires_session), 0},
    {"lock_duration", STORE_COL_MS, E(lock_duration_ms), 0},
    {"max_delivery_count", STORE_COL_INT, E(max_delivery_count), 0},
    {"default_message_time_to_live", STORE_COL_MS_OR_NONE, E(default_ttl_ms), 0},
    {"dead_lettering_on_message_expiration", STORE_COL_BOOL, E(dead_lettering_on_expiration), 0},
    {"max_size_in_megabytes", STORE_COL_INT, E(max_size_mb), 0},
    {"requires_duplicate_detection", STORE_COL_BOOL, E(requires_duplicate_detection), 0},
    {"duplicate_detection_history_time_window", STORE_COL_MS, E(duplicate_window_ms), 0},
    {"forward_to", STORE_COL_TEXT, E(forward_to), 0},
    {"forward_dead_lettered_messages_to", STORE_COL_TEXT, E(forward_dead_lettered_to), 0},
    {"kind", STORE_COL_KIND, E(kind), 0},
    {"topic_id", STORE_COL_INT, E(topic_id), 0}, /* NULL (not a subscription) reads as 0 */
    {"dead_lettering_on_filter_evaluation_exceptions", STORE_COL_BOOL, E(dead_lettering_on_filter_exceptions), 0},
    {"namespace_id", STORE_COL_INT, E(namespace_id), 0},
};
const store_columns store_entity_view_columns = {"entities", entity_view_cols, COUNT(entity_view_cols)};

/* ---- rows ---- */

static void put_int(void *field, size_t size, int64_t v)
{
    if (size == sizeof(int32_t)) {
        int32_t v32 = (int32_t)v;
        memcpy(field, &v32, sizeof v32);
    } else {
        memcpy(field, &v, sizeof v);
    }
}

static int64_t get_int(const void *field, size_t size)
{
    if (size == sizeof(int32_t)) {
        int32_t v32;
        memcpy(&v32, field, sizeof v32);
        return v32;
    }
    int64_t v;
    memcpy(&v, field, sizeof v);
    return v;
}

static void put_bool(void *field, size_t size, bool b)
{
    if (size == sizeof(bool))
        memcpy(field, &b, sizeof b);
    else
        put_int(field, size, b);
}

static bool get_bool(const void *field, size_t size)
{
    if (size == sizeof(bool)) {
        bool b;
        memcpy(&b, field, sizeof b);
        return b;
    }
    return get_int(field, size) != 0;
}

static ent_kind kind_of(const char *text)
{
    if (text && !strcmp(text, "queue"))
        return ENT_KIND_QUEUE;
    if (text && !strcmp(text, "topic"))
        return ENT_KIND_TOPIC;
    return ENT_KIND_SUBSCRIPTION;
}

void store_columns_read(const store_columns *c, const PGresult *r, int row, int first, void *out)
{
    for (int i = 0; i < c->n; i++) {
        const store_column *k = &c->cols[i];
        void *field = (char *)out + k->offset;
        int col = first + i;
        switch (k->type) {
        case STORE_COL_TEXT:
        case STORE_COL_TEXT_OPT: col_text(r, row, col, field, k->size); break;
        case STORE_COL_BOOL: put_bool(field, k->size, col_bool(r, row, col)); break;
        case STORE_COL_INT:
        case STORE_COL_MS:
        case STORE_COL_MS_OR_NONE: put_int(field, k->size, col_i64(r, row, col)); break;
        case STORE_COL_MS_OR_UNLIMITED: {
            int64_t ms = col_i64(r, row, col);
            put_int(field, k->size, ms < 0 ? ENT_DURATION_UNLIMITED : ms);
            break;
        }
        case STORE_COL_STATUS: {
            ent_entity_status s = ENT_ENTITY_ACTIVE;
            ent_entity_status_parse(col_str_or_null(r, row, col), &s);
            memcpy(field, &s, sizeof s);
            break;
        }
        case STORE_COL_KIND: {
            ent_kind kind = kind_of(col_str_or_null(r, row, col));
            memcpy(field, &kind, sizeof kind);
            break;
        }
        }
    }
}

int store_columns_params(const store_columns *c, const void *in, store_param *out, int8_param *ints)
{
    for (int i = 0; i < c->n; i++) {
        const store_column *k = &c->cols[i];
        const void *field = (const char *)in + k->offset;
        store_param p = {NULL, 0, 0};
        switch (k->type) {
        case STORE_COL_TEXT_OPT:
            if (!*(const char *)field)
                break;
            /* fall through */
        case STORE_COL_TEXT: p = (store_param){field, (int)strlen(field), 0}; break;
        case STORE_COL_BOOL: p = P_TEXT(get_bool(field, k->size) ? "true" : "false"); break;
        case STORE_COL_STATUS: {
            ent_entity_status s;
            memcpy(&s, field, sizeof s);
            p = P_TEXT(ent_entity_status_name(s));
            break;
        }
        case STORE_COL_MS_OR_UNLIMITED:
            if (get_int(field, k->size) == ENT_DURATION_UNLIMITED)
                break;
            /* fall through */
        case STORE_COL_INT:
        case STORE_COL_MS:
        case STORE_COL_MS_OR_NONE:
        case STORE_COL_KIND:
            ints[i] = be_int8(get_int(field, k->size));
            p = P_INT8(ints[i]);
            break;
        }
        out[i] = p;
    }
    return c->n;
}

static bool is_text(store_col_type t)
{
    return t == STORE_COL_TEXT || t == STORE_COL_TEXT_OPT || t == STORE_COL_BOOL || t == STORE_COL_STATUS;
}

void store_columns_types(const store_columns *c, Oid *types)
{
    for (int i = 0; i < c->n; i++)
        types[i] = is_text(c->cols[i].type) ? STORE_OID_TEXT : STORE_OID_INT8;
}

int store_columns_param(const store_columns *c, const char *name, int first)
{
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->cols[i].name, name))
            return first + i;
    return -1;
}

/* ---- SQL ---- */

void store_sql_init(store_sql *s, char *buf, size_t cap)
{
    *s = (store_sql){buf, cap, 0, false};
    buf[0] = 0;
}

void store_sql_add(store_sql *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(s->buf + s->len, s->cap - s->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= s->cap - s->len) {
        s->overflow = true;
        s->len = s->cap - 1;
    } else {
        s->len += (size_t)n;
    }
}

/* Whether column k goes into a fragment; if so, the separator before it is written. */
static bool listed(store_sql *s, const store_column *k, unsigned skip, int *count)
{
    if (k->flags & skip)
        return false;
    if ((*count)++)
        store_sql_add(s, ", ");
    return true;
}

void store_sql_select(store_sql *s, const store_columns *c, const char *alias, unsigned skip)
{
    const char *dot = alias && *alias ? "." : "";
    alias = alias ? alias : "";
    int count = 0;
    for (int i = 0; i < c->n; i++) {
        if (!listed(s, &c->cols[i], skip, &count))
            continue;
        const char *name = c->cols[i].name;
        switch (c->cols[i].type) {
        case STORE_COL_INT: store_sql_add(s, "%s%s%s::int8", alias, dot, name); break;
        case STORE_COL_MS: store_sql_add(s, "sbemu_interval_ms(%s%s%s)", alias, dot, name); break;
        case STORE_COL_MS_OR_UNLIMITED:
        case STORE_COL_MS_OR_NONE:
            store_sql_add(s, "coalesce(sbemu_interval_ms(%s%s%s), -1)", alias, dot, name);
            break;
        default: store_sql_add(s, "%s%s%s", alias, dot, name); break;
        }
    }
}

void store_sql_names(store_sql *s, const store_columns *c, const char *prefix, unsigned skip)
{
    int count = 0;
    for (int i = 0; i < c->n; i++)
        if (listed(s, &c->cols[i], skip, &count))
            store_sql_add(s, "%s%s", prefix, c->cols[i].name);
}

void store_sql_value(store_sql *s, const store_column *k, int param)
{
    switch (k->type) {
    case STORE_COL_BOOL: store_sql_add(s, "$%d::boolean", param); break;
    case STORE_COL_INT: store_sql_add(s, "$%d::integer", param); break;
    case STORE_COL_MS:
    case STORE_COL_MS_OR_UNLIMITED:
    case STORE_COL_MS_OR_NONE: store_sql_add(s, "($%d::bigint * interval '1 millisecond')", param); break;
    default: store_sql_add(s, "$%d", param); break;
    }
}

void store_sql_values(store_sql *s, const store_columns *c, int first, unsigned skip)
{
    int count = 0;
    for (int i = 0; i < c->n; i++)
        if (listed(s, &c->cols[i], skip, &count))
            store_sql_value(s, &c->cols[i], first + i);
}

void store_sql_set(store_sql *s, const store_columns *c, int first, unsigned skip)
{
    int count = 0;
    for (int i = 0; i < c->n; i++) {
        if (!listed(s, &c->cols[i], skip | STORE_COL_KEY, &count))
            continue;
        store_sql_add(s, "%s = ", c->cols[i].name);
        if (first)
            store_sql_value(s, &c->cols[i], first + i);
        else
            store_sql_add(s, "EXCLUDED.%s", c->cols[i].name);
    }
}
