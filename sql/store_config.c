/* Config upsert (see store_config.h). Runs once at start, synchronously: the
 * non-blocking store is for the message path, this is a handful of rows. */
#include "store_config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <libpq-fe.h>

#include "ent_alloc.h"
#include "store_rule_json.h"

#define MAX_PARAMS 20

/* Text parameters for PQexecParams; NULL entries are SQL NULL. */
typedef struct params {
    const char *v[MAX_PARAMS];
    char buf[MAX_PARAMS][32];
    int n;
} params;

static void p_text(params *p, const char *s) { p->v[p->n++] = s; }
/* "" means "not set" in the props; the column wants NULL. */
static void p_opt_text(params *p, const char *s) { p->v[p->n++] = s && *s ? s : NULL; }

static void p_int(params *p, int64_t i)
{
    snprintf(p->buf[p->n], sizeof p->buf[p->n], "%" PRId64, i);
    p->v[p->n] = p->buf[p->n];
    p->n++;
}

static void p_bool(params *p, int b) { p->v[p->n++] = b ? "true" : "false"; }

static void p_duration(params *p, int64_t ms)
{
    if (ms == ENT_DURATION_UNLIMITED)
        p->v[p->n++] = NULL;
    else
        p_int(p, ms);
}

/* "<who>: <the server's reason>", on one line. */
__attribute__((format(printf, 4, 5)))
static int fail_with(PGresult *r, char *err, size_t errlen, const char *fmt, ...)
{
    char who[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(who, sizeof who, fmt, ap);
    va_end(ap);
    /* The primary message names the constraint; DETAIL would dump the row. */
    const char *primary = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    char why[2048];
    snprintf(why, sizeof why, "%s", primary ? primary : r ? PQresultErrorMessage(r) : "no result from the server");
    for (char *c = why; *c; c++)
        if (*c == '\n')
            *c = ' ';
    size_t n = strlen(why);
    while (n && why[n - 1] == ' ')
        why[--n] = '\0';
    snprintf(err, errlen, "%s: %s", who, why);
    return -1;
}

/* Runs a statement; *out (if given) receives the result for the caller to
 * PQclear. Returns 0 or -1 with err prefixed by the entity. */
__attribute__((format(printf, 7, 8)))
static int run(PGconn *conn, const char *sql, const params *p, PGresult **out, char *err, size_t errlen,
               const char *fmt, ...)
{
    PGresult *r = PQexecParams(conn, sql, p ? p->n : 0, NULL, p ? p->v : NULL, NULL, NULL, 0);
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        char who[2048];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(who, sizeof who, fmt, ap);
        va_end(ap);
        fail_with(r, err, errlen, "%s", who);
        PQclear(r);
        return -1;
    }
    if (out)
        *out = r;
    else
        PQclear(r);
    return 0;
}

/* A statement that returns one id. */
static int run_id(PGconn *conn, const char *sql, const params *p, int64_t *id, char *err, size_t errlen,
                  const char *who)
{
    PGresult *r;
    if (run(conn, sql, p, &r, err, errlen, "%s", who))
        return -1;
    int ok = PQntuples(r) == 1 && !PQgetisnull(r, 0, 0);
    if (ok)
        *id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    else
        snprintf(err, errlen, "%s: the upsert returned no id", who);
    PQclear(r);
    return ok ? 0 : -1;
}

#define MS_TO_INTERVAL(n) "($" #n "::bigint * interval '1 millisecond')"

static const char queue_sql[] =
    "INSERT INTO queues AS q (name, lock_duration, max_delivery_count, default_message_time_to_live,"
    " dead_lettering_on_message_expiration, requires_duplicate_detection,"
    " duplicate_detection_history_time_window, requires_session, forward_to,"
    " forward_dead_lettered_messages_to, auto_delete_on_idle, status, max_size_in_megabytes,"
    " enable_batched_operations, enable_partitioning, user_metadata)"
    " VALUES ($1, " MS_TO_INTERVAL(2) ", $3::integer, " MS_TO_INTERVAL(4) ", $5::boolean, $6::boolean, "
    MS_TO_INTERVAL(7) ", $8::boolean, $9, $10, " MS_TO_INTERVAL(11) ", $12, $13::integer, $14::boolean,"
    " $15::boolean, $16)"
    " ON CONFLICT ((lower(name))) DO UPDATE SET"
    " lock_duration = EXCLUDED.lock_duration,"
    " max_delivery_count = EXCLUDED.max_delivery_count,"
    " default_message_time_to_live = EXCLUDED.default_message_time_to_live,"
    " dead_lettering_on_message_expiration = EXCLUDED.dead_lettering_on_message_expiration,"
    " requires_duplicate_detection = EXCLUDED.requires_duplicate_detection,"
    " duplicate_detection_history_time_window = EXCLUDED.duplicate_detection_history_time_window,"
    " requires_session = EXCLUDED.requires_session,"
    " forward_to = EXCLUDED.forward_to,"
    " forward_dead_lettered_messages_to = EXCLUDED.forward_dead_lettered_messages_to,"
    " auto_delete_on_idle = EXCLUDED.auto_delete_on_idle,"
    " status = EXCLUDED.status,"
    " max_size_in_megabytes = EXCLUDED.max_size_in_megabytes,"
    " enable_batched_operations = EXCLUDED.enable_batched_operations,"
    " enable_partitioning = EXCLUDED.enable_partitioning,"
    " user_metadata = EXCLUDED.user_metadata,"
    " updated_at = now()"
    " WHERE (q.lock_duration, q.max_delivery_count, q.default_message_time_to_live,"
    " q.dead_lettering_on_message_expiration, q.requires_duplicate_detection,"
    " q.duplicate_detection_history_time_window, q.requires_session, q.forward_to,"
    " q.forward_dead_lettered_messages_to, q.auto_delete_on_idle, q.status, q.max_size_in_megabytes,"
    " q.enable_batched_operations, q.enable_partitioning, q.user_metadata)"
    " IS DISTINCT FROM (EXCLUDED.lock_duration, EXCLUDED.max_delivery_count,"
    " EXCLUDED.default_message_time_to_live, EXCLUDED.dead_lettering_on_message_expiration,"
    " EXCLUDED.requires_duplicate_detection, EXCLUDED.duplicate_detection_history_time_window,"
    " EXCLUDED.requires_session, EXCLUDED.forward_to, EXCLUDED.forward_dead_lettered_messages_to,"
    " EXCLUDED.auto_delete_on_idle, EXCLUDED.status, EXCLUDED.max_size_in_megabytes,"
    " EXCLUDED.enable_batched_operations, EXCLUDED.enable_partitioning, EXCLUDED.user_metadata)";

/* The CTE returns the id whether the row was inserted, updated or left alone
 * (then `up` is empty and the plain SELECT finds it). */
static const char topic_sql[] =
    "WITH up AS (INSERT INTO topics AS t (name, default_message_time_to_live, requires_duplicate_detection,"
    " duplicate_detection_history_time_window, auto_delete_on_idle, status, max_size_in_megabytes,"
    " enable_batched_operations, enable_partitioning, support_ordering, user_metadata)"
    " VALUES ($1, " MS_TO_INTERVAL(2) ", $3::boolean, " MS_TO_INTERVAL(4) ", " MS_TO_INTERVAL(5) ", $6,"
    " $7::integer, $8::boolean, $9::boolean, $10::boolean, $11)"
    " ON CONFLICT ((lower(name))) DO UPDATE SET"
    " default_message_time_to_live = EXCLUDED.default_message_time_to_live,"
    " requires_duplicate_detection = EXCLUDED.requires_duplicate_detection,"
    " duplicate_detection_history_time_window = EXCLUDED.duplicate_detection_history_time_window,"
    " auto_delete_on_idle = EXCLUDED.auto_delete_on_idle,"
    " status = EXCLUDED.status,"
    " max_size_in_megabytes = EXCLUDED.max_size_in_megabytes,"
    " enable_batched_operations = EXCLUDED.enable_batched_operations,"
    " enable_partitioning = EXCLUDED.enable_partitioning,"
    " support_ordering = EXCLUDED.support_ordering,"
    " user_metadata = EXCLUDED.user_metadata,"
    " updated_at = now()"
    " WHERE (t.default_message_time_to_live, t.requires_duplicate_detection,"
    " t.duplicate_detection_history_time_window, t.auto_delete_on_idle, t.status, t.max_size_in_megabytes,"
    " t.enable_batched_operations, t.enable_partitioning, t.support_ordering, t.user_metadata)"
    " IS DISTINCT FROM (EXCLUDED.default_message_time_to_live, EXCLUDED.requires_duplicate_detection,"
    " EXCLUDED.duplicate_detection_history_time_window, EXCLUDED.auto_delete_on_idle, EXCLUDED.status,"
    " EXCLUDED.max_size_in_megabytes, EXCLUDED.enable_batched_operations, EXCLUDED.enable_partitioning,"
    " EXCLUDED.support_ordering, EXCLUDED.user_metadata)"
    " RETURNING id)"
    " SELECT id FROM up UNION ALL SELECT id FROM topics WHERE lower(name) = lower($1) LIMIT 1";

static const char subscription_sql[] =
    "WITH up AS (INSERT INTO subscriptions AS s (topic_id, name, lock_duration, max_delivery_count,"
    " default_message_time_to_live, dead_lettering_on_message_expiration,"
    " dead_lettering_on_filter_evaluation_exceptions, requires_session, forward_to,"
    " forward_dead_lettered_messages_to, auto_delete_on_idle, status, enable_batched_operations, user_metadata)"
    " VALUES ($1::bigint, $2, " MS_TO_INTERVAL(3) ", $4::integer, " MS_TO_INTERVAL(5) ", $6::boolean,"
    " $7::boolean, $8::boolean, $9, $10, " MS_TO_INTERVAL(11) ", $12, $13::boolean, $14)"
    " ON CONFLICT (topic_id, (lower(name))) DO UPDATE SET"
    " lock_duration = EXCLUDED.lock_duration,"
    " max_delivery_count = EXCLUDED.max_delivery_count,"
    " default_message_time_to_live = EXCLUDED.default_message_time_to_live,"
    " dead_lettering_on_message_expiration = EXCLUDED.dead_lettering_on_message_expiration,"
    " dead_lettering_on_filter_evaluation_exceptions = EXCLUDED.dead_lettering_on_filter_evaluation_exceptions,"
    " requires_session = EXCLUDED.requires_session,"
    " forward_to = EXCLUDED.forward_to,"
    " forward_dead_lettered_messages_to = EXCLUDED.forward_dead_lettered_messages_to,"
    " auto_delete_on_idle = EXCLUDED.auto_delete_on_idle,"
    " status = EXCLUDED.status,"
    " enable_batched_operations = EXCLUDED.enable_batched_operations,"
    " user_metadata = EXCLUDED.user_metadata,"
    " updated_at = now()"
    " WHERE (s.lock_duration, s.max_delivery_count, s.default_message_time_to_live,"
    " s.dead_lettering_on_message_expiration, s.dead_lettering_on_filter_evaluation_exceptions,"
    " s.requires_session, s.forward_to, s.forward_dead_lettered_messages_to, s.auto_delete_on_idle, s.status,"
    " s.enable_batched_operations, s.user_metadata)"
    " IS DISTINCT FROM (EXCLUDED.lock_duration, EXCLUDED.max_delivery_count,"
    " EXCLUDED.default_message_time_to_live, EXCLUDED.dead_lettering_on_message_expiration,"
    " EXCLUDED.dead_lettering_on_filter_evaluation_exceptions, EXCLUDED.requires_session, EXCLUDED.forward_to,"
    " EXCLUDED.forward_dead_lettered_messages_to, EXCLUDED.auto_delete_on_idle, EXCLUDED.status,"
    " EXCLUDED.enable_batched_operations, EXCLUDED.user_metadata)"
    " RETURNING id)"
    " SELECT id FROM up UNION ALL"
    " SELECT id FROM subscriptions WHERE topic_id = $1::bigint AND lower(name) = lower($2) LIMIT 1";

static const char rule_sql[] =
    "INSERT INTO rules AS r (subscription_id, name, filter_type, sql_expression, correlation, action_expression)"
    " VALUES ($1::bigint, $2, $3, $4, $5::jsonb, $6)"
    " ON CONFLICT (subscription_id, (lower(name))) DO UPDATE SET"
    " filter_type = EXCLUDED.filter_type,"
    " sql_expression = EXCLUDED.sql_expression,"
    " correlation = EXCLUDED.correlation,"
    " action_expression = EXCLUDED.action_expression"
    " WHERE (r.filter_type, r.sql_expression, r.correlation, r.action_expression)"
    " IS DISTINCT FROM (EXCLUDED.filter_type, EXCLUDED.sql_expression, EXCLUDED.correlation,"
    " EXCLUDED.action_expression)";

/* A subscription gets $Default when it is created (a trigger, migration 006).
 * Config.json rules replace it on the subscription this transaction created
 * (its $Default row was inserted by this transaction: xmin is ours); a
 * subscription that already existed keeps the rules it has, whoever added them. */
static const char drop_new_default_sql[] =
    "DELETE FROM rules WHERE subscription_id = $1::bigint AND lower(name) = lower($2) AND filter_type = 'True'"
    " AND xmin::text = (pg_current_xact_id()::text::bigint % 4294967296)::text" /* xid8 without its epoch */
    " AND NOT EXISTS (SELECT 1 FROM unnest($3::text[]) AS n WHERE lower(n) = lower($2))";

static int apply_queue(PGconn *conn, const ent_queue_props *q, char *err, size_t errlen)
{
    params p = {0};
    p_text(&p, q->name);
    p_duration(&p, q->lock_duration_ms);
    p_int(&p, q->max_delivery_count);
    p_duration(&p, q->default_message_time_to_live_ms);
    p_bool(&p, q->dead_lettering_on_message_expiration);
    p_bool(&p, q->requires_duplicate_detection);
    p_duration(&p, q->duplicate_detection_history_time_window_ms);
    p_bool(&p, q->requires_session);
    p_opt_text(&p, q->forward_to);
    p_opt_text(&p, q->forward_dead_lettered_messages_to);
    p_duration(&p, q->auto_delete_on_idle_ms);
    p_text(&p, ent_entity_status_name(q->status));
    p_int(&p, q->max_size_in_megabytes);
    p_bool(&p, q->enable_batched_operations);
    p_bool(&p, q->enable_partitioning);
    p_opt_text(&p, q->user_metadata);
    return run(conn, queue_sql, &p, NULL, err, errlen, "queue \"%s\"", q->name);
}

static int apply_topic(PGconn *conn, const ent_topic_props *t, int64_t *id, char *err, size_t errlen)
{
    params p = {0};
    p_text(&p, t->name);
    p_duration(&p, t->default_message_time_to_live_ms);
    p_bool(&p, t->requires_duplicate_detection);
    p_duration(&p, t->duplicate_detection_history_time_window_ms);
    p_duration(&p, t->auto_delete_on_idle_ms);
    p_text(&p, ent_entity_status_name(t->status));
    p_int(&p, t->max_size_in_megabytes);
    p_bool(&p, t->enable_batched_operations);
    p_bool(&p, t->enable_partitioning);
    p_bool(&p, t->support_ordering);
    p_opt_text(&p, t->user_metadata);
    char who[ENT_ENTITY_PATH_SIZE + 16];
    snprintf(who, sizeof who, "topic \"%s\"", t->name);
    return run_id(conn, topic_sql, &p, id, err, errlen, who);
}

static int apply_subscription(PGconn *conn, int64_t topic_id, const ent_subscription_props *s, int64_t *id,
                              char *err, size_t errlen)
{
    params p = {0};
    p_int(&p, topic_id);
    p_text(&p, s->name);
    p_duration(&p, s->lock_duration_ms);
    p_int(&p, s->max_delivery_count);
    p_duration(&p, s->default_message_time_to_live_ms);
    p_bool(&p, s->dead_lettering_on_message_expiration);
    p_bool(&p, s->dead_lettering_on_filter_evaluation_exceptions);
    p_bool(&p, s->requires_session);
    p_opt_text(&p, s->forward_to);
    p_opt_text(&p, s->forward_dead_lettered_messages_to);
    p_duration(&p, s->auto_delete_on_idle_ms);
    p_text(&p, ent_entity_status_name(s->status));
    p_bool(&p, s->enable_batched_operations);
    p_opt_text(&p, s->user_metadata);
    char who[ENT_ENTITY_PATH_SIZE + ENT_SUBSCRIPTION_NAME_SIZE + 32];
    snprintf(who, sizeof who, "subscription \"%s/Subscriptions/%s\"", s->topic, s->name);
    return run_id(conn, subscription_sql, &p, id, err, errlen, who);
}

/* The rules.correlation document (keys as in Config.json). Caller frees. */
static char *correlation_json(const ent_correlation_filter *c)
{
    json_t *o = json_object();
    const struct { const char *key; const char *value; } fields[] = {
        {"ContentType", c->content_type}, {"CorrelationId", c->correlation_id},
        {"Label", c->subject},            {"MessageId", c->message_id},
        {"ReplyTo", c->reply_to},         {"ReplyToSessionId", c->reply_to_session_id},
        {"SessionId", c->session_id},     {"To", c->to},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (fields[i].value)
            json_object_set_new(o, fields[i].key, json_string(fields[i].value));
    if (c->nproperties) {
        json_t *props = json_object();
        for (size_t i = 0; i < c->nproperties; i++) {
            const ent_value *v = &c->properties[i].value;
            json_t *j = NULL;
            switch (v->type) {
            case ENT_VALUE_STRING: j = json_string(v->u.s); break;
            case ENT_VALUE_INT: j = json_integer(v->u.i); break;
            case ENT_VALUE_DOUBLE: j = json_real(v->u.d); break;
            case ENT_VALUE_BOOL: j = json_boolean(v->u.b); break;
            case ENT_VALUE_NULL:
            case ENT_VALUE_STRUCTURED: j = json_null(); break;
            }
            json_object_set_new(props, c->properties[i].name, j);
        }
        json_object_set_new(o, "Properties", props);
    }
    char *text = store_json_text(o, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(o);
    return text;
}

static int apply_rule(PGconn *conn, int64_t subscription_id, const ent_rule_props *r, char *err, size_t errlen)
{
    char *corr = NULL;
    if (r->filter_type == ENT_FILTER_TYPE_CORRELATION && !(corr = correlation_json(&r->correlation))) {
        snprintf(err, errlen, "rule \"%s/Subscriptions/%s/Rules/%s\": out of memory", r->topic, r->subscription,
                 r->name);
        return -1;
    }
    params p = {0};
    p_int(&p, subscription_id);
    p_text(&p, r->name);
    p_text(&p, ent_filter_type_name(r->filter_type));
    p_text(&p, r->filter_type == ENT_FILTER_TYPE_SQL ? r->sql_expression : NULL);
    p_text(&p, corr);
    p_text(&p, r->action_expression);
    int rc = run(conn, rule_sql, &p, NULL, err, errlen, "rule \"%s/Subscriptions/%s/Rules/%s\"", r->topic,
                 r->subscription, r->name);
    ent_free(corr);
    return rc;
}

static int drop_new_default(PGconn *conn, int64_t sub_id, const ent_subscription_config *s, char *err,
                            size_t errlen)
{
    /* the names the config gives, as a text[] literal */
    size_t cap = 3;
    for (size_t k = 0; k < s->nrules; k++)
        cap += strlen(s->rules[k].name) * 2 + 4;
    char *names = ent_malloc(cap);
    if (!names) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t len = 0;
    names[len++] = '{';
    for (size_t k = 0; k < s->nrules; k++) {
        if (k)
            names[len++] = ',';
        names[len++] = '"';
        for (const char *c = s->rules[k].name; *c; c++) {
            if (*c == '"' || *c == '\\')
                names[len++] = '\\';
            names[len++] = *c;
        }
        names[len++] = '"';
    }
    names[len++] = '}';
    names[len] = 0;
    params p = {0};
    p_int(&p, sub_id);
    p_text(&p, ENT_DEFAULT_RULE_NAME);
    p_text(&p, names);
    int rc = run(conn, drop_new_default_sql, &p, NULL, err, errlen, "subscription \"%s/Subscriptions/%s\"",
                 s->props.topic, s->props.name);
    ent_free(names);
    return rc;
}

static int apply_all(PGconn *conn, const ent_config *cfg, char *err, size_t errlen)
{
    char lock[64];
    snprintf(lock, sizeof lock, "SELECT pg_advisory_xact_lock(%d)", STORE_CONFIG_LOCK_KEY);
    if (run(conn, lock, NULL, NULL, err, errlen, "config lock"))
        return -1;
    for (size_t i = 0; i < cfg->nqueues; i++)
        if (apply_queue(conn, &cfg->queues[i], err, errlen))
            return -1;
    for (size_t i = 0; i < cfg->ntopics; i++) {
        const ent_topic_config *t = &cfg->topics[i];
        int64_t topic_id;
        if (apply_topic(conn, &t->props, &topic_id, err, errlen))
            return -1;
        for (size_t j = 0; j < t->nsubscriptions; j++) {
            const ent_subscription_config *s = &t->subscriptions[j];
            int64_t sub_id;
            if (apply_subscription(conn, topic_id, &s->props, &sub_id, err, errlen))
                return -1;
            for (size_t k = 0; k < s->nrules; k++)
                if (apply_rule(conn, sub_id, &s->rules[k], err, errlen))
                    return -1;
            if (s->nrules && drop_new_default(conn, sub_id, s, err, errlen))
                return -1;
        }
    }
    return 0;
}

int store_config_apply(PGconn *conn, const ent_config *cfg, char *err, size_t errlen)
{
    if (run(conn, "BEGIN", NULL, NULL, err, errlen, "config"))
        return -1;
    if (apply_all(conn, cfg, err, errlen)) {
        PQclear(PQexec(conn, "ROLLBACK"));
        return -1;
    }
    return run(conn, "COMMIT", NULL, NULL, err, errlen, "config: commit");
}
