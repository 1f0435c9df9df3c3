/* The SQL behind store_admin.h. Every statement finds entities by namespace
 * and lower(name) (the unique indexes of migration 013; the namespace id is
 * each statement's last parameter) and counts messages through the two
 * partial indexes that split an entity's messages (migration 005):
 * messages_ready holds the active messages nobody has locked, messages_held
 * the locked, deferred and scheduled ones. A count walks exactly the range
 * it counts, never the entity's whole primary key; lists page by name first
 * and count only the rows of the page.
 *
 * The statements that read or write entity properties are built once, at the
 * first prepare, from the column tables of store_columns.c: their property
 * columns, parameters and types all come from there. */
#include "store_admin.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "store_columns.h"
#include "store_statements.h"

/* Room for one generated statement's text (the longest is about 2 KB). */
#define ADMIN_SQL_MAX 8192

/* How many messages of entity `id` in one subqueue one of the two index
 * ranges holds (and `cond` keeps), up to `cap` (a parameter: STORE_ADMIN_
 * COUNT_MAX). Counted in index order and bounded: without both, an entity
 * that holds most of the table (a backlog) gets a generic plan that scans the
 * whole table, since it cannot be told from the others; with them the range
 * itself is the cheapest path, and a request never counts without end. */
#define COUNT_IN(index_pred, id, sq, cond, cap)                                                                       \
    "(SELECT count(*) FROM (SELECT 1 FROM messages m WHERE m.entity_id = " id " AND m.subqueue = " sq " AND "         \
    index_pred cond " ORDER BY m.subqueue, m.sequence_number LIMIT " cap ") c)"
#define READY "m.state = 0"
#define HELD "m.state <> 0"
/* active (deferred included), dead-lettered, scheduled; state 3 (scheduled in
 * an open transaction) is nobody's yet. */
#define COUNTS(id, cap)                                                                                               \
    " " COUNT_IN(READY, id, "0", "", cap) " + " COUNT_IN(HELD, id, "0", " AND m.state = 1", cap)                \
    " + sbemu_log_pending(" id ", " cap ")," /* a subscription's copies still in its topic's log (store_log.h) */     \
    " " COUNT_IN(READY, id, "1", "", cap) " + " COUNT_IN(HELD, id, "1", " AND m.state <> 3", cap) ","                 \
    " " COUNT_IN(HELD, id, "0", " AND m.state = 2", cap)

/* The runtime columns after the properties, in store_admin.c's order:
 * created, updated, accessed, size, then the counts. */
#define RUNTIME(a)                                                                                                    \
    " sbemu_ms(" a ".created_at), sbemu_ms(" a ".updated_at), coalesce(sbemu_ms(r.accessed_at), sbemu_ms(" a          \
    ".created_at)), coalesce(r.size_in_bytes, 0)"
#define QUEUE_RUNTIME(cap) RUNTIME("q") "," COUNTS("q.id", cap)
#define SUB_RUNTIME(cap) RUNTIME("s") "," COUNTS("s.id", cap)
#define TOPIC_RUNTIME(cap)                                                                                            \
    RUNTIME("t") " + coalesce((SELECT sum(x.size_in_bytes) FROM subscriptions s"                                     \
    "  JOIN entity_runtime x ON x.entity_id = s.id WHERE s.topic_id = t.id), 0)::int8,"                               \
    " " COUNT_IN(HELD, "t.id", "0", " AND m.state = 2", cap) ","                                                      \
    " (SELECT count(*) FROM subscriptions s WHERE s.topic_id = t.id),"                                               \
    /* SqlFilterCount (true and false filters are SQL filters, $Default among them) and      */ \
    /* CorrelationFilterCount over all its subscriptions, as api-version 2024-05 reports them */ \
    " (SELECT count(*) FROM subscriptions s JOIN rules u ON u.subscription_id = s.id"                               \
    "  WHERE s.topic_id = t.id AND u.filter_type <> 'Correlation'),"                                                 \
    " (SELECT count(*) FROM subscriptions s JOIN rules u ON u.subscription_id = s.id"                               \
    "  WHERE s.topic_id = t.id AND u.filter_type = 'Correlation')"

#define RULE_COLS                                                                                                     \
    " name, filter_type, sql_expression, correlation::text, filter_parameters::text, action_expression,"             \
    " action_parameters::text, sbemu_ms(created_at)"

/* The statements built from the column tables (build_* below) have only their
 * name here; the rest is filled in once. */
static stmt_def admin_stmt_defs[] = {
    /* Queues and topics share one name space: creating either takes this lock
     * on the name first, so two emulators cannot make a queue and a topic of
     * one name at once. */
    {STMT_ADMIN_NAME_LOCK,
     "SELECT pg_advisory_xact_lock(hashtext('sbemu entity ' || $2::text || ' ' || lower($1)))::text", 2,
     {STORE_OID_TEXT, STORE_OID_INT8}},

    {STMT_ADMIN_QUEUE_GET, NULL, 0, {0}},
    {STMT_ADMIN_QUEUE_LIST, NULL, 0, {0}},
    {STMT_ADMIN_QUEUE_CREATE, NULL, 0, {0}},
    /* A queue or topic created by this request (created at $2, this instant)
     * was last active now on the emulator's clock, not on the database's. */
    {STMT_ADMIN_TOUCH_NEW,
     "UPDATE entity_runtime r SET accessed_at = sbemu_ts($2) WHERE r.entity_id IN (SELECT id FROM queues"
     " WHERE namespace_id = $3 AND lower(name) = lower($1) AND created_at = sbemu_ts($2) UNION ALL SELECT id"
     " FROM topics WHERE namespace_id = $3 AND lower(name) = lower($1) AND created_at = sbemu_ts($2))",
     3, {STORE_OID_TEXT, STORE_OID_INT8, STORE_OID_INT8}},
    {STMT_ADMIN_QUEUE_UPDATE, NULL, 0, {0}},

    {STMT_ADMIN_TOPIC_GET, NULL, 0, {0}},
    {STMT_ADMIN_TOPIC_LIST, NULL, 0, {0}},
    {STMT_ADMIN_TOPIC_CREATE, NULL, 0, {0}},
    {STMT_ADMIN_TOPIC_UPDATE, NULL, 0, {0}},
    /* A queue or a topic (its subscriptions and rules go with it, by cascade),
     * and the messages of all of them (their runtime rows' trigger). */
    {STMT_ADMIN_ENTITY_DELETE,
     "WITH q AS (DELETE FROM queues WHERE namespace_id = $2 AND lower(name) = lower($1) RETURNING 1),"
     " t AS (DELETE FROM topics WHERE namespace_id = $2 AND lower(name) = lower($1) RETURNING 1)"
     " SELECT (SELECT count(*) FROM q) + (SELECT count(*) FROM t)",
     2, {STORE_OID_TEXT, STORE_OID_INT8}},

    {STMT_ADMIN_SUB_GET, NULL, 0, {0}},
    {STMT_ADMIN_SUB_LIST, NULL, 0, {0}},
    {STMT_ADMIN_SUB_CREATE, NULL, 0, {0}},
    /* The rule a subscription was created with, in place of the $Default its
     * insert just got: only a subscription created by this request (created
     * at $10, this instant) is touched, never one that already existed.
     * $1 topic, $2 subscription, $3..$9 the rule (store_rule's columns). */
    {STMT_ADMIN_SUB_DEFAULT_RULE,
     "UPDATE rules r SET name = $3, filter_type = $4, sql_expression = $5, correlation = $6::jsonb,"
     " filter_parameters = $7::jsonb, action_expression = $8, action_parameters = $9::jsonb"
     " FROM subscriptions s JOIN topics t ON t.id = s.topic_id"
     " WHERE r.subscription_id = s.id AND r.name = '$Default' AND t.namespace_id = $11 AND lower(t.name) = lower($1)"
     " AND lower(s.name) = lower($2) AND s.created_at = sbemu_ts($10)",
     11, {STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT,
          STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_INT8, STORE_OID_INT8}},
    /* The same for a subscription: $1 topic, $2 subscription, $3 now. */
    {STMT_ADMIN_SUB_TOUCH_NEW,
     "UPDATE entity_runtime r SET accessed_at = sbemu_ts($3) FROM subscriptions s JOIN topics t ON t.id = s.topic_id"
     " WHERE r.entity_id = s.id AND t.namespace_id = $4 AND lower(t.name) = lower($1) AND lower(s.name) = lower($2)"
     " AND s.created_at = sbemu_ts($3)",
     4, {STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_INT8, STORE_OID_INT8}},
    {STMT_ADMIN_SUB_UPDATE, NULL, 0, {0}},
    {STMT_ADMIN_SUB_DELETE,
     "WITH d AS (DELETE FROM subscriptions s USING topics t WHERE t.id = s.topic_id AND t.namespace_id = $3"
     " AND lower(t.name) = lower($1) AND lower(s.name) = lower($2) RETURNING 1)"
     " SELECT count(*) FROM d",
     3, {STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_INT8}},

    /* $1 subscription id, $2 rule name */
    {STMT_ADMIN_RULE_GET, "SELECT" RULE_COLS " FROM rules WHERE subscription_id = $1 AND lower(name) = lower($2)", 2,
     {STORE_OID_INT8, STORE_OID_TEXT}},
    /* $1 subscription id, $2 name, $3..$8 filter and action (store_rule's columns). */
    {STMT_ADMIN_RULE_UPDATE,
     "WITH u AS (UPDATE rules SET filter_type = $3, sql_expression = $4, correlation = $5::jsonb,"
     " filter_parameters = $6::jsonb, action_expression = $7, action_parameters = $8::jsonb"
     " WHERE subscription_id = $1 AND lower(name) = lower($2) RETURNING 1)"
     " SELECT count(*) FROM u",
     8, {STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT,
         STORE_OID_TEXT, STORE_OID_TEXT}},

    /* Every entity's size and counts (store_admin_counts_row's columns), as
     * the gets above count them, and its deferred messages apart; $1 the count
     * cap. */
    {STMT_ADMIN_COUNTS,
     "SELECT e.id, e.kind, e.path, coalesce(r.size_in_bytes, 0) + CASE WHEN e.kind = 'topic' THEN"
     " coalesce((SELECT sum(x.size_in_bytes) FROM subscriptions s JOIN entity_runtime x ON x.entity_id = s.id"
     "  WHERE s.topic_id = e.id), 0)::int8 ELSE 0 END,"
     COUNTS("e.id", "$1") ","
     " " COUNT_IN(HELD, "e.id", "0", " AND m.state = 1", "$1") ", e.namespace_id"
     " FROM entities e LEFT JOIN entity_runtime r ON r.entity_id = e.id ORDER BY lower(e.path), e.id",
     1, {STORE_OID_INT8}},

    /* When namespace $1 was made (the default's: when the schema was first
     * applied) and when one of its entities last changed. */
    {STMT_ADMIN_NAMESPACE,
     "WITH born AS (SELECT CASE WHEN $1 = 1 THEN (SELECT min(applied_at) FROM sbemu_schema_version)"
     " ELSE (SELECT created_at FROM namespaces WHERE id = $1) END AS at)"
     " SELECT coalesce(sbemu_ms((SELECT at FROM born)), 0),"
     " coalesce(sbemu_ms(greatest((SELECT max(updated_at) FROM queues WHERE namespace_id = $1),"
     " (SELECT max(updated_at) FROM topics WHERE namespace_id = $1),"
     " (SELECT max(s.updated_at) FROM subscriptions s JOIN topics t ON t.id = s.topic_id WHERE t.namespace_id = $1),"
     " (SELECT at FROM born))), 0)",
     1, {STORE_OID_INT8}},
};
#define ADMIN_NSTMT (sizeof admin_stmt_defs / sizeof admin_stmt_defs[0])

/* ---- the statements built from the column tables ---- */

/* The texts, one buffer per generated statement; which one is full. */
static char texts[ADMIN_NSTMT][ADMIN_SQL_MAX];
static const char *too_long;

/* Each statement's text is begun, written, ended (a text that did not fit
 * fails the prepare, naming it); its parameter types are added as it goes. */
static stmt_def *def_of(const char *name)
{
    for (size_t i = 0; i < ADMIN_NSTMT; i++)
        if (!strcmp(admin_stmt_defs[i].name, name))
            return &admin_stmt_defs[i];
    return NULL;
}

static void begin(store_sql *s, stmt_def *d)
{
    store_sql_init(s, texts[d - admin_stmt_defs], ADMIN_SQL_MAX);
    d->sql = s->buf;
    d->nparams = 0;
}

static void param(stmt_def *d, Oid type) { d->types[d->nparams++] = type; }

static void params_of(stmt_def *d, const store_columns *c)
{
    store_columns_types(c, d->types + d->nparams);
    d->nparams += c->n;
}

static void end(const store_sql *s, const stmt_def *d)
{
    if (s->overflow && !too_long)
        too_long = d->name;
}

/* A statement that reads rows: SELECT head, the table's columns (from
 * alias), then tail (the runtime columns, FROM and the rest); its parameter
 * types are `types`, 0-terminated. */
static void build_rows(const char *name, const char *head, const store_columns *c, const char *alias,
                       const char *tail, const Oid *types)
{
    stmt_def *d = def_of(name);
    store_sql s;
    begin(&s, d);
    store_sql_add(&s, "SELECT %s, ", head);
    store_sql_select(&s, c, alias, 0);
    store_sql_add(&s, ",%s", tail);
    for (; *types; types++)
        param(d, *types);
    end(&s, d);
}

/* A queue's or topic's get ($1 its name, $2 the count cap, $3 the namespace)
 * and list ($1 skip, $2 top, $3 the count cap, $4 the namespace; the last
 * column is how many there are). */
#define NAMED_GET(table, a)                                                                                           \
    " FROM " table " " a " LEFT JOIN entity_runtime r ON r.entity_id = " a ".id"                                      \
    " WHERE " a ".namespace_id = $3 AND lower(" a ".name) = lower($1)"
#define NAMED_LIST(table, a)                                                                                          \
    ", " a ".total FROM (SELECT x.*, count(*) OVER () AS total FROM " table " x WHERE x.namespace_id = $4"             \
    " ORDER BY lower(x.name), x.id OFFSET $1 LIMIT $2) " a " LEFT JOIN entity_runtime r ON r.entity_id = " a ".id"    \
    " ORDER BY lower(" a ".name), " a ".id"
static const Oid get_types[] = {STORE_OID_TEXT, STORE_OID_INT8, STORE_OID_INT8, 0};
static const Oid list_types[] = {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, 0};
/* A subscription's: $1 topic, $2 subscription, $3 the count cap, $4 the
 * namespace; the list $1 topic, $2 skip, $3 top, $4 the count cap, $5 the
 * namespace. The list has rows only when
 * the topic exists; its last column is how many subscriptions it has, and the
 * first row says whether the topic exists at all (a topic with none answers
 * one row of NULLs). */
#define SUB_GET                                                                                                       \
    " FROM subscriptions s JOIN topics t ON t.id = s.topic_id LEFT JOIN entity_runtime r ON r.entity_id = s.id"       \
    " WHERE t.namespace_id = $4 AND lower(t.name) = lower($1) AND lower(s.name) = lower($2)"
#define SUB_LIST                                                                                                      \
    ", s.total FROM topics t LEFT JOIN LATERAL (SELECT x.*, count(*) OVER () AS total"                                \
    " FROM subscriptions x WHERE x.topic_id = t.id ORDER BY lower(x.name), x.id OFFSET $2 LIMIT $3) s ON true"        \
    " LEFT JOIN entity_runtime r ON r.entity_id = s.id WHERE t.namespace_id = $5 AND lower(t.name) = lower($1)"       \
    " ORDER BY lower(s.name), s.id"
static const Oid sub_get_types[] = {STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_INT8, STORE_OID_INT8, 0};
static const Oid sub_list_types[] = {STORE_OID_TEXT, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8,
                                     0};

/* Answers how many were inserted (0: the name is taken in the namespace, by
 * a queue or a topic). $1.. the columns (the name first), then the time, then
 * the namespace. */
static void build_named_create(const char *name, const store_columns *c, const char *other)
{
    stmt_def *d = def_of(name);
    store_sql s;
    begin(&s, d);
    int now = 1 + c->n, ns = now + 1;
    store_sql_add(&s, "WITH i AS (INSERT INTO %s (", c->table);
    store_sql_names(&s, c, "", 0);
    store_sql_add(&s, ", created_at, updated_at, namespace_id) SELECT ");
    store_sql_values(&s, c, 1, 0);
    store_sql_add(&s, ", sbemu_ts($%d), sbemu_ts($%d), $%d WHERE NOT EXISTS (SELECT 1 FROM %s WHERE namespace_id = $%d"
                      " AND lower(name) = lower($1))"
                      " ON CONFLICT (namespace_id, (lower(name))) DO NOTHING RETURNING id) SELECT count(*) FROM i",
                  now, now, ns, other, ns);
    params_of(d, c);
    param(d, STORE_OID_INT8);
    param(d, STORE_OID_INT8);
    end(&s, d);
}

/* The columns an existing entity keeps, as the update's `cur` reads them. */
static void add_fixed_names(store_sql *s, const store_columns *c, const char *prefix)
{
    for (int i = 0; i < c->n; i++)
        if (c->cols[i].flags & STORE_COL_FIXED)
            store_sql_add(s, ", %s%s", prefix, c->cols[i].name);
}

/* The guard of an update: the columns an existing entity keeps must be
 * given as they are (else nothing is updated: SB_ERR_NOT_ALLOWED). */
static void add_fixed_guard(store_sql *s, const store_columns *c, int first)
{
    for (int i = 0; i < c->n; i++)
        if (c->cols[i].flags & STORE_COL_FIXED) {
            store_sql_add(s, " AND cur.%s = ", c->cols[i].name);
            store_sql_value(s, &c->cols[i], first + i);
        }
}

/* An update; answers (found, updated). Its parameters: the key's (a
 * subscription's topic: text) up to $first - 1, the columns from $first (the
 * name first), then the time, then the namespace. `cur` finds and locks the
 * row (alias.id and the fixed columns, FROM ...: a format whose %d is the
 * namespace's parameter). */
static void build_update(const char *name, const store_columns *c, const char *alias, int first, const char *from)
{
    stmt_def *d = def_of(name);
    store_sql s;
    begin(&s, d);
    char prefix[8] = "";
    if (first > 1)
        snprintf(prefix, sizeof prefix, "%s.", alias);
    store_sql_add(&s, "WITH cur AS (SELECT %sid", prefix);
    add_fixed_names(&s, c, prefix);
    store_sql_add(&s, from, first + c->n + 1);
    store_sql_add(&s, "), u AS (UPDATE %s %s SET ", c->table, alias);
    store_sql_set(&s, c, first, STORE_COL_FIXED);
    store_sql_add(&s, ", updated_at = sbemu_ts($%d) FROM cur WHERE %s.id = cur.id", first + c->n, alias);
    add_fixed_guard(&s, c, first);
    store_sql_add(&s, " RETURNING %s.id) SELECT (SELECT count(*) FROM cur), (SELECT count(*) FROM u)", alias);
    for (int i = 1; i < first; i++)
        param(d, STORE_OID_TEXT);
    params_of(d, c);
    param(d, STORE_OID_INT8);
    param(d, STORE_OID_INT8);
    end(&s, d);
}

/* Answers (topic found, inserted). The insert's trigger gives it $Default.
 * $1 topic, $2.. the columns (the name first), then the time, then the
 * namespace. */
static void build_sub_create(void)
{
    const store_columns *c = &store_subscription_columns;
    stmt_def *d = def_of(STMT_ADMIN_SUB_CREATE);
    store_sql s;
    begin(&s, d);
    int now = 2 + c->n;
    store_sql_add(&s, "WITH t AS (SELECT id FROM topics WHERE namespace_id = $%d AND lower(name) = lower($1)),"
                      " i AS (INSERT INTO subscriptions (topic_id, ", now + 1);
    store_sql_names(&s, c, "", 0);
    store_sql_add(&s, ", created_at, updated_at) SELECT t.id, ");
    store_sql_values(&s, c, 2, 0);
    store_sql_add(&s, ", sbemu_ts($%d), sbemu_ts($%d) FROM t ON CONFLICT (topic_id, (lower(name))) DO NOTHING"
                      " RETURNING id) SELECT (SELECT count(*) FROM t), (SELECT count(*) FROM i)",
                  now, now);
    param(d, STORE_OID_TEXT);
    params_of(d, c);
    param(d, STORE_OID_INT8);
    param(d, STORE_OID_INT8);
    end(&s, d);
}

/* Queues and topics: the same statements but for their tables and runtime columns. */
static const struct {
    const store_columns *cols;
    const char *alias, *other;     /* the table whose names a new one may not take */
    const char *get, *get_tail;    /* build_rows' tails */
    const char *list, *list_tail;
    const char *create, *update, *update_from;
} named[] = {
    {&store_queue_columns, "q", "topics", STMT_ADMIN_QUEUE_GET, QUEUE_RUNTIME("$2") NAMED_GET("queues", "q"),
     STMT_ADMIN_QUEUE_LIST, QUEUE_RUNTIME("$3") NAMED_LIST("queues", "q"), STMT_ADMIN_QUEUE_CREATE,
     STMT_ADMIN_QUEUE_UPDATE, " FROM queues WHERE namespace_id = $%d AND lower(name) = lower($1) FOR UPDATE"},
    {&store_topic_columns, "t", "queues", STMT_ADMIN_TOPIC_GET, TOPIC_RUNTIME("$2") NAMED_GET("topics", "t"),
     STMT_ADMIN_TOPIC_LIST, TOPIC_RUNTIME("$3") NAMED_LIST("topics", "t"), STMT_ADMIN_TOPIC_CREATE,
     STMT_ADMIN_TOPIC_UPDATE, " FROM topics WHERE namespace_id = $%d AND lower(name) = lower($1) FOR UPDATE"},
};

static void build(void)
{
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
        char head[8];
        snprintf(head, sizeof head, "%s.id", named[i].alias);
        build_rows(named[i].get, head, named[i].cols, named[i].alias, named[i].get_tail, get_types);
        build_rows(named[i].list, head, named[i].cols, named[i].alias, named[i].list_tail, list_types);
        build_named_create(named[i].create, named[i].cols, named[i].other);
        build_update(named[i].update, named[i].cols, named[i].alias, 1, named[i].update_from);
    }
    build_rows(STMT_ADMIN_SUB_GET, "s.id, t.name", &store_subscription_columns, "s", SUB_RUNTIME("$3") SUB_GET,
               sub_get_types);
    build_rows(STMT_ADMIN_SUB_LIST, "s.id, t.name", &store_subscription_columns, "s", SUB_RUNTIME("$4") SUB_LIST,
               sub_list_types);
    build_sub_create();
    build_update(STMT_ADMIN_SUB_UPDATE, &store_subscription_columns, "s", 2,
                 " FROM subscriptions s JOIN topics t ON t.id = s.topic_id"
                 " WHERE t.namespace_id = $%d AND lower(t.name) = lower($1) AND lower(s.name) = lower($2)"
                 " FOR UPDATE OF s");
}

static const stmt_def *built(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, build);
    return admin_stmt_defs;
}

const stmt_def *store_admin_statement_defs(size_t *n)
{
    *n = ADMIN_NSTMT;
    return built();
}

int store_admin_statements_prepare(PGconn *conn, char *err, size_t errlen)
{
    const stmt_def *defs = built();
    if (too_long) {
        snprintf(err, errlen, "cannot prepare %s: its text is longer than ADMIN_SQL_MAX (%d)", too_long,
                 ADMIN_SQL_MAX);
        return -1;
    }
    return store_prepare_all(conn, defs, ADMIN_NSTMT, err, errlen);
}
