/* Config upsert (see store_config.h). Runs once at start, synchronously: the
 * non-blocking store is for the message path, this is a handful of rows. The
 * entity upserts are built from the column tables (store_columns.h), as the
 * management API's statements are. */
#include "store_config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <libpq-fe.h>

#include "ent_alloc.h"
#include "ent_clock.h"
#include "ent_namespace.h"
#include "store_columns.h"
#include "store_reset.h"
#include "store_rule_json.h"

#define MAX_PARAMS 20
/* Room for one entity upsert's text. */
#define CONFIG_SQL_MAX 4096

/* Parameters for PQexecParams, as store_params: text ones typed by the
 * statement, 8-byte binary integers declared int8. */
typedef struct params {
    store_param p[MAX_PARAMS];
    int8_param ints[MAX_PARAMS];
    int n;
} params;

static void p_text(params *p, const char *s) { p->p[p->n++] = P_TEXT(s); }

static void p_int(params *p, int64_t i)
{
    p->ints[p->n] = be_int8(i);
    p->p[p->n] = P_INT8(p->ints[p->n]);
    p->n++;
}

/* The entity's columns, in their table's order. */
static void p_columns(params *p, const store_columns *c, const void *props)
{
    p->n += store_columns_params(c, props, p->p + p->n, p->ints + p->n);
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
    const char *values[MAX_PARAMS];
    int lengths[MAX_PARAMS], formats[MAX_PARAMS];
    Oid types[MAX_PARAMS];
    int n = p ? p->n : 0;
    for (int i = 0; i < n; i++) {
        values[i] = p->p[i].value;
        lengths[i] = p->p[i].len;
        formats[i] = p->p[i].binary;
        types[i] = p->p[i].binary ? STORE_OID_INT8 : 0; /* text: as the statement says */
    }
    PGresult *r = PQexecParams(conn, sql, n, types, values, lengths, formats, 0);
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

/* ---- the entity upserts, built from the column tables ---- */

static char queue_sql[CONFIG_SQL_MAX], topic_sql[CONFIG_SQL_MAX], subscription_sql[CONFIG_SQL_MAX];
static const char *too_long; /* the table whose upsert did not fit */

/* Inserts the entity, or updates its columns when any differs (an unchanged
 * row is not written, so its updated_at and its NOTIFY stay). key_names and
 * key_values come before the table's columns, whose parameters start at
 * $first; with returning, it answers the row's id whether it was inserted,
 * updated or left alone (then `up` is empty and the plain SELECT finds it),
 * where `find` is the WHERE that finds it. */
static void build_upsert(char *buf, const store_columns *c, const char *alias, const char *key_names,
                         const char *key_values, int first, const char *conflict, const char *find)
{
    store_sql s;
    store_sql_init(&s, buf, CONFIG_SQL_MAX);
    if (find)
        store_sql_add(&s, "WITH up AS (");
    store_sql_add(&s, "INSERT INTO %s AS %s (%s", c->table, alias, key_names);
    store_sql_names(&s, c, "", 0);
    store_sql_add(&s, ") VALUES (%s", key_values);
    store_sql_values(&s, c, first, 0);
    store_sql_add(&s, ") ON CONFLICT (%s) DO UPDATE SET ", conflict);
    store_sql_set(&s, c, 0, 0);
    char prefix[16];
    snprintf(prefix, sizeof prefix, "%s.", alias);
    store_sql_add(&s, ", updated_at = now() WHERE (");
    store_sql_names(&s, c, prefix, STORE_COL_KEY);
    store_sql_add(&s, ") IS DISTINCT FROM (");
    store_sql_names(&s, c, "EXCLUDED.", STORE_COL_KEY);
    store_sql_add(&s, ")");
    if (find)
        store_sql_add(&s, " RETURNING id) SELECT id FROM up UNION ALL SELECT id FROM %s WHERE %s LIMIT 1", c->table,
                      find);
    if (s.overflow && !too_long)
        too_long = c->table;
}

static void build_all(void)
{
    /* $1 the namespace's id */
    build_upsert(queue_sql, &store_queue_columns, "q", "namespace_id, ", "$1::integer, ", 2,
                 "namespace_id, (lower(name))", NULL);
    build_upsert(topic_sql, &store_topic_columns, "t", "namespace_id, ", "$1::integer, ", 2,
                 "namespace_id, (lower(name))", "namespace_id = $1::integer AND lower(name) = lower($2)");
    /* $1 the topic's id */
    build_upsert(subscription_sql, &store_subscription_columns, "s", "topic_id, ", "$1::bigint, ", 2,
                 "topic_id, (lower(name))", "topic_id = $1::bigint AND lower(name) = lower($2)");
}

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

static int apply_queue(PGconn *conn, int32_t ns, const ent_queue_props *q, char *err, size_t errlen)
{
    params p = {0};
    p_int(&p, ns);
    p_columns(&p, &store_queue_columns, q);
    return run(conn, queue_sql, &p, NULL, err, errlen, "queue \"%s\"", q->name);
}

static int apply_topic(PGconn *conn, int32_t ns, const ent_topic_props *t, int64_t *id, char *err, size_t errlen)
{
    params p = {0};
    p_int(&p, ns);
    p_columns(&p, &store_topic_columns, t);
    char who[ENT_ENTITY_PATH_SIZE + 16];
    snprintf(who, sizeof who, "topic \"%s\"", t->name);
    return run_id(conn, topic_sql, &p, id, err, errlen, who);
}

static int apply_subscription(PGconn *conn, int64_t topic_id, const ent_subscription_props *s, int64_t *id,
                              char *err, size_t errlen)
{
    params p = {0};
    p_int(&p, topic_id);
    p_columns(&p, &store_subscription_columns, s);
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

/* One namespace's entities (cfg's own, not its others'), in namespace ns. */
static int apply_namespace(PGconn *conn, int32_t ns, const ent_config *cfg, char *err, size_t errlen)
{
    for (size_t i = 0; i < cfg->nqueues; i++)
        if (apply_queue(conn, ns, &cfg->queues[i], err, errlen))
            return -1;
    for (size_t i = 0; i < cfg->ntopics; i++) {
        const ent_topic_config *t = &cfg->topics[i];
        int64_t topic_id;
        if (apply_topic(conn, ns, &t->props, &topic_id, err, errlen))
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

/* The default namespace takes the file's name for its own (row 1, migration
 * 012), unless another namespace has it. */
static int name_default(PGconn *conn, const ent_config *cfg, char *err, size_t errlen)
{
    if (!cfg->namespace_name[0])
        return 0;
    params p = {0};
    p_text(&p, cfg->namespace_name);
    PGresult *r;
    if (run(conn, "SELECT id FROM namespaces WHERE lower(name) = lower($1) AND id <> 1", &p, &r, err, errlen,
            "the default namespace's name"))
        return -1;
    int taken = PQntuples(r) > 0;
    PQclear(r);
    if (taken) {
        snprintf(err, errlen,
                 "the default namespace is named \"%s\" (Namespaces[0].Name), the name of another namespace in the "
                 "database: rename one of them",
                 cfg->namespace_name);
        return -1;
    }
    return run(conn, "UPDATE namespaces SET name = $1 WHERE id = 1 AND name IS DISTINCT FROM $1", &p, NULL, err,
               errlen, "the default namespace's name");
}

/* Every namespace of the file: the default's entities, its name, and each
 * other namespace (made when missing) with its entities and its declared
 * snapshot (what a reset restores). */
static int apply_all(PGconn *conn, const ent_config *cfg, int64_t wall_ms, char *err, size_t errlen)
{
    char lock[64];
    snprintf(lock, sizeof lock, "SELECT pg_advisory_xact_lock(%d)", STORE_CONFIG_LOCK_KEY);
    if (run(conn, lock, NULL, NULL, err, errlen, "config lock"))
        return -1;
    if (name_default(conn, cfg, err, errlen) || apply_namespace(conn, ENT_NAMESPACE_DEFAULT_ID, cfg, err, errlen) ||
        store_snapshot_declare(conn, STORE_NAMESPACE_DEFAULT, cfg, wall_ms, err, errlen))
        return -1;
    for (size_t i = 0; i < cfg->nothers; i++) {
        const ent_config *o = &cfg->others[i];
        params p = {0};
        p_text(&p, o->namespace_name);
        int64_t id;
        char who[ENT_CONFIG_NAMESPACE_NAME_SIZE + 32];
        snprintf(who, sizeof who, "namespace \"%s\"", o->namespace_name);
        if (run_id(conn, "SELECT sbemu_namespace_ensure($1)", &p, &id, err, errlen, who))
            return -1;
        char prefixed[1024];
        if (apply_namespace(conn, (int32_t)id, o, prefixed, sizeof prefixed) ||
            store_snapshot_declare(conn, o->namespace_name, o, wall_ms, prefixed, sizeof prefixed)) {
            snprintf(err, errlen, "%s: %s", who, prefixed);
            return -1;
        }
    }
    return 0;
}

int store_config_apply(PGconn *conn, const ent_config *cfg, char *err, size_t errlen)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, build_all);
    if (too_long) {
        snprintf(err, errlen, "config: the upsert of %s is longer than CONFIG_SQL_MAX (%d)", too_long,
                 CONFIG_SQL_MAX);
        return -1;
    }
    if (run(conn, "BEGIN", NULL, NULL, err, errlen, "config"))
        return -1;
    /* what a reset restores: what this file declared, as the upsert left it */
    if (apply_all(conn, cfg, ent_clock_wall_ms(), err, errlen)) {
        PQclear(PQexec(conn, "ROLLBACK"));
        return -1;
    }
    return run(conn, "COMMIT", NULL, NULL, err, errlen, "config: commit");
}
