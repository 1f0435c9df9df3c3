/* The SQL behind store_admin.h. Every statement finds entities by lower(name)
 * (the unique indexes of migration 001) and counts messages through the two
 * partial indexes that split an entity's messages (migration 005):
 * messages_ready holds the active messages nobody has locked, messages_held
 * the locked, deferred and scheduled ones. A count walks exactly the range
 * it counts, never the entity's whole primary key; lists page by name first
 * and count only the rows of the page. */
#include "store_admin.h"
#include "store_statements.h"

/* A millisecond parameter as an interval; NULL (unlimited) stays NULL. */
#define MS(n) "($" #n "::bigint * interval '1 millisecond')"

/* How many messages of entity `id` in one subqueue one of the two index
 * ranges holds (and `cond` keeps), up to `cap` (a parameter: STORE_ADMIN_
 * COUNT_MAX). Counted in index order and bounded: without both, an entity
 * that holds most of the table (a backlog) gets a generic plan that scans the
 * whole table, since it cannot be told from the others; with them the range
 * itself is the cheapest path, and a request never counts without end. */
#define COUNT_IN(index_pred, id, sq, cond, cap)                                                                       \
    "(SELECT count(*) FROM (SELECT 1 FROM messages m WHERE m.entity_id = " id " AND m.subqueue = " sq " AND "         \
    index_pred cond " ORDER BY m.subqueue, m.sequence_number LIMIT " cap ") c)"
#define READY "m.state = 0 AND m.lock_token IS NULL"
#define HELD "(m.state <> 0 OR m.lock_token IS NOT NULL)"
/* active (deferred included), dead-lettered, scheduled; state 3 (scheduled in
 * an open transaction) is nobody's yet. */
#define COUNTS(id, cap)                                                                                               \
    " " COUNT_IN(READY, id, "0", "", cap) " + " COUNT_IN(HELD, id, "0", " AND m.state IN (0, 1)", cap) ","            \
    " " COUNT_IN(READY, id, "1", "", cap) " + " COUNT_IN(HELD, id, "1", " AND m.state <> 3", cap) ","                 \
    " " COUNT_IN(HELD, id, "0", " AND m.state = 2", cap)

/* Columns in store_admin.c's read_queue order. */
#define QUEUE_COLS(cap) \
    " q.id, q.name, sbemu_interval_ms(q.lock_duration), q.max_delivery_count::int8,"                                 \
    " coalesce(sbemu_interval_ms(q.default_message_time_to_live), -1), q.dead_lettering_on_message_expiration,"      \
    " q.requires_duplicate_detection, sbemu_interval_ms(q.duplicate_detection_history_time_window),"                 \
    " q.requires_session, q.forward_to, q.forward_dead_lettered_messages_to,"                                         \
    " coalesce(sbemu_interval_ms(q.auto_delete_on_idle), -1), q.status, q.max_size_in_megabytes::int8,"              \
    " q.enable_batched_operations, q.enable_partitioning, q.user_metadata, sbemu_ms(q.created_at),"                 \
    " sbemu_ms(q.updated_at), coalesce(sbemu_ms(r.accessed_at), sbemu_ms(q.created_at)),"                           \
    " coalesce(r.size_in_bytes, 0)," COUNTS("q.id", cap)

#define TOPIC_COLS(cap) \
    " t.id, t.name, coalesce(sbemu_interval_ms(t.default_message_time_to_live), -1), t.requires_duplicate_detection," \
    " sbemu_interval_ms(t.duplicate_detection_history_time_window), coalesce(sbemu_interval_ms(t.auto_delete_on_idle), -1)," \
    " t.status, t.max_size_in_megabytes::int8, t.enable_batched_operations, t.enable_partitioning,"                   \
    " t.support_ordering, t.user_metadata, sbemu_ms(t.created_at), sbemu_ms(t.updated_at),"                          \
    " coalesce(sbemu_ms(r.accessed_at), sbemu_ms(t.created_at)),"                                                     \
    " coalesce(r.size_in_bytes, 0) + coalesce((SELECT sum(x.size_in_bytes) FROM subscriptions s"                      \
    "  JOIN entity_runtime x ON x.entity_id = s.id WHERE s.topic_id = t.id), 0)::int8,"                               \
    " " COUNT_IN(HELD, "t.id", "0", " AND m.state = 2", cap) ","                                                      \
    " (SELECT count(*) FROM subscriptions s WHERE s.topic_id = t.id),"                                               \
    /* SqlFilterCount (true and false filters are SQL filters, $Default among them) and      */ \
    /* CorrelationFilterCount over all its subscriptions, as api-version 2024-05 reports them */ \
    " (SELECT count(*) FROM subscriptions s JOIN rules u ON u.subscription_id = s.id"                               \
    "  WHERE s.topic_id = t.id AND u.filter_type <> 'Correlation'),"                                                 \
    " (SELECT count(*) FROM subscriptions s JOIN rules u ON u.subscription_id = s.id"                               \
    "  WHERE s.topic_id = t.id AND u.filter_type = 'Correlation')"

#define SUB_COLS(cap) \
    " s.id, t.name, s.name, sbemu_interval_ms(s.lock_duration), s.max_delivery_count::int8,"                        \
    " coalesce(sbemu_interval_ms(s.default_message_time_to_live), -1), s.dead_lettering_on_message_expiration,"      \
    " s.dead_lettering_on_filter_evaluation_exceptions, s.requires_session, s.forward_to,"                           \
    " s.forward_dead_lettered_messages_to, coalesce(sbemu_interval_ms(s.auto_delete_on_idle), -1), s.status,"        \
    " s.enable_batched_operations, s.user_metadata, sbemu_ms(s.created_at), sbemu_ms(s.updated_at),"                 \
    " coalesce(sbemu_ms(r.accessed_at), sbemu_ms(s.created_at)), coalesce(r.size_in_bytes, 0)," COUNTS("s.id", cap)

#define RULE_COLS                                                                                                     \
    " name, filter_type, sql_expression, correlation::text, filter_parameters::text, action_expression,"             \
    " action_parameters::text, sbemu_ms(created_at)"

/* The queue's settable columns from $2 (store_admin.c's queue_params order). */
#define QUEUE_SET                                                                                                     \
    " lock_duration = " MS(2) ", max_delivery_count = $3::integer, default_message_time_to_live = " MS(4) ","        \
    " dead_lettering_on_message_expiration = $5::boolean, requires_duplicate_detection = $6::boolean,"               \
    " duplicate_detection_history_time_window = " MS(7) ", forward_to = $9, forward_dead_lettered_messages_to = $10," \
    " auto_delete_on_idle = " MS(11) ", status = $12, max_size_in_megabytes = $13::integer,"                          \
    " enable_batched_operations = $14::boolean, enable_partitioning = $15::boolean, user_metadata = $16,"            \
    " updated_at = sbemu_ts($17)"
#define QUEUE_TYPES                                                                                                   \
    {STORE_OID_TEXT, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_INT8, \
     STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_INT8, STORE_OID_TEXT, \
     STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_INT8}

#define TOPIC_SET                                                                                                     \
    " default_message_time_to_live = " MS(2) ", requires_duplicate_detection = $3::boolean,"                          \
    " duplicate_detection_history_time_window = " MS(4) ", auto_delete_on_idle = " MS(5) ", status = $6,"            \
    " max_size_in_megabytes = $7::integer, enable_batched_operations = $8::boolean,"                                  \
    " enable_partitioning = $9::boolean, support_ordering = $10::boolean, user_metadata = $11,"                      \
    " updated_at = sbemu_ts($12)"
#define TOPIC_TYPES                                                                                                   \
    {STORE_OID_TEXT, STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_INT8, \
     STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_INT8}

#define SUB_SET                                                                                                       \
    " lock_duration = " MS(3) ", max_delivery_count = $4::integer, default_message_time_to_live = " MS(5) ","        \
    " dead_lettering_on_message_expiration = $6::boolean, dead_lettering_on_filter_evaluation_exceptions = $7::boolean," \
    " forward_to = $9, forward_dead_lettered_messages_to = $10, auto_delete_on_idle = " MS(11) ", status = $12,"     \
    " enable_batched_operations = $13::boolean, user_metadata = $14, updated_at = sbemu_ts($15)"
#define SUB_TYPES                                                                                                     \
    {STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT, \
     STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT, \
     STORE_OID_INT8}

static const stmt_def admin_stmt_defs[] = {
    /* Queues and topics share one name space: creating either takes this lock
     * on the name first, so two emulators cannot make a queue and a topic of
     * one name at once. */
    {STMT_ADMIN_NAME_LOCK, "SELECT pg_advisory_xact_lock(hashtext('sbemu entity ' || lower($1)))::text", 1,
     {STORE_OID_TEXT}},

    {STMT_ADMIN_QUEUE_GET,
     "SELECT" QUEUE_COLS("$2") " FROM queues q LEFT JOIN entity_runtime r ON r.entity_id = q.id"
     " WHERE lower(q.name) = lower($1)",
     2, {STORE_OID_TEXT, STORE_OID_INT8}},
    /* $1 skip, $2 top, $3 the count cap; the last column is how many queues there are. */
    {STMT_ADMIN_QUEUE_LIST,
     "SELECT" QUEUE_COLS("$3") ", q.total FROM (SELECT x.*, count(*) OVER () AS total FROM queues x"
     " ORDER BY lower(x.name), x.id OFFSET $1 LIMIT $2) q LEFT JOIN entity_runtime r ON r.entity_id = q.id"
     " ORDER BY lower(q.name), q.id",
     3, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8}},
    /* Answers how many were inserted (0: the name is taken, by a queue or a topic). */
    {STMT_ADMIN_QUEUE_CREATE,
     "WITH i AS (INSERT INTO queues (name, lock_duration, max_delivery_count, default_message_time_to_live,"
     " dead_lettering_on_message_expiration, requires_duplicate_detection, duplicate_detection_history_time_window,"
     " requires_session, forward_to, forward_dead_lettered_messages_to, auto_delete_on_idle, status,"
     " max_size_in_megabytes, enable_batched_operations, enable_partitioning, user_metadata, created_at, updated_at)"
     " SELECT $1, " MS(2) ", $3::integer, " MS(4) ", $5::boolean, $6::boolean, " MS(7) ", $8::boolean, $9, $10, " MS(11)
     ", $12, $13::integer, $14::boolean, $15::boolean, $16, sbemu_ts($17), sbemu_ts($17)"
     " WHERE NOT EXISTS (SELECT 1 FROM topics WHERE lower(name) = lower($1))"
     " ON CONFLICT ((lower(name))) DO NOTHING RETURNING id)"
     " SELECT count(*) FROM i",
     17, QUEUE_TYPES},
    /* A queue or topic created by this request (created at $2, this instant)
     * was last active now on the emulator's clock, not on the database's. */
    {STMT_ADMIN_TOUCH_NEW,
     "UPDATE entity_runtime r SET accessed_at = sbemu_ts($2) WHERE r.entity_id IN (SELECT id FROM queues"
     " WHERE lower(name) = lower($1) AND created_at = sbemu_ts($2) UNION ALL SELECT id FROM topics"
     " WHERE lower(name) = lower($1) AND created_at = sbemu_ts($2))",
     2, {STORE_OID_TEXT, STORE_OID_INT8}},
    /* Answers (found, updated): RequiresSession of an existing queue stays. */
    {STMT_ADMIN_QUEUE_UPDATE,
     "WITH cur AS (SELECT id, requires_session FROM queues WHERE lower(name) = lower($1) FOR UPDATE),"
     " u AS (UPDATE queues q SET" QUEUE_SET " FROM cur WHERE q.id = cur.id AND cur.requires_session = $8::boolean"
     " RETURNING q.id)"
     " SELECT (SELECT count(*) FROM cur), (SELECT count(*) FROM u)",
     17, QUEUE_TYPES},

    {STMT_ADMIN_TOPIC_GET,
     "SELECT" TOPIC_COLS("$2") " FROM topics t LEFT JOIN entity_runtime r ON r.entity_id = t.id"
     " WHERE lower(t.name) = lower($1)",
     2, {STORE_OID_TEXT, STORE_OID_INT8}},
    {STMT_ADMIN_TOPIC_LIST,
     "SELECT" TOPIC_COLS("$3") ", t.total FROM (SELECT x.*, count(*) OVER () AS total FROM topics x"
     " ORDER BY lower(x.name), x.id OFFSET $1 LIMIT $2) t LEFT JOIN entity_runtime r ON r.entity_id = t.id"
     " ORDER BY lower(t.name), t.id",
     3, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8}},
    {STMT_ADMIN_TOPIC_CREATE,
     "WITH i AS (INSERT INTO topics (name, default_message_time_to_live, requires_duplicate_detection,"
     " duplicate_detection_history_time_window, auto_delete_on_idle, status, max_size_in_megabytes,"
     " enable_batched_operations, enable_partitioning, support_ordering, user_metadata, created_at, updated_at)"
     " SELECT $1, " MS(2) ", $3::boolean, " MS(4) ", " MS(5) ", $6, $7::integer, $8::boolean, $9::boolean,"
     " $10::boolean, $11, sbemu_ts($12), sbemu_ts($12)"
     " WHERE NOT EXISTS (SELECT 1 FROM queues WHERE lower(name) = lower($1))"
     " ON CONFLICT ((lower(name))) DO NOTHING RETURNING id)"
     " SELECT count(*) FROM i",
     12, TOPIC_TYPES},
    {STMT_ADMIN_TOPIC_UPDATE,
     "WITH cur AS (SELECT id FROM topics WHERE lower(name) = lower($1) FOR UPDATE),"
     " u AS (UPDATE topics t SET" TOPIC_SET " FROM cur WHERE t.id = cur.id RETURNING t.id)"
     " SELECT (SELECT count(*) FROM cur), (SELECT count(*) FROM u)",
     12, TOPIC_TYPES},
    /* A queue or a topic (its subscriptions and rules go with it, by cascade),
     * and the messages of all of them (their runtime rows' trigger). */
    {STMT_ADMIN_ENTITY_DELETE,
     "WITH q AS (DELETE FROM queues WHERE lower(name) = lower($1) RETURNING 1),"
     " t AS (DELETE FROM topics WHERE lower(name) = lower($1) RETURNING 1)"
     " SELECT (SELECT count(*) FROM q) + (SELECT count(*) FROM t)",
     1, {STORE_OID_TEXT}},

    /* $1 topic, $2 subscription, $3 the count cap */
    {STMT_ADMIN_SUB_GET,
     "SELECT" SUB_COLS("$3") " FROM subscriptions s JOIN topics t ON t.id = s.topic_id"
     " LEFT JOIN entity_runtime r ON r.entity_id = s.id"
     " WHERE lower(t.name) = lower($1) AND lower(s.name) = lower($2)",
     3, {STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_INT8}},
    /* $1 topic, $2 skip, $3 top, $4 the count cap. Rows only when the topic exists; the last
     * column is how many subscriptions it has, and the first row says whether
     * the topic exists at all (a topic with none answers one row of NULLs). */
    {STMT_ADMIN_SUB_LIST,
     "SELECT" SUB_COLS("$4") ", s.total FROM topics t LEFT JOIN LATERAL (SELECT x.*, count(*) OVER () AS total"
     " FROM subscriptions x WHERE x.topic_id = t.id ORDER BY lower(x.name), x.id OFFSET $2 LIMIT $3) s ON true"
     " LEFT JOIN entity_runtime r ON r.entity_id = s.id"
     " WHERE lower(t.name) = lower($1) ORDER BY lower(s.name), s.id",
     4, {STORE_OID_TEXT, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8}},
    /* Answers (topic found, inserted). The insert's trigger gives it $Default. */
    {STMT_ADMIN_SUB_CREATE,
     "WITH t AS (SELECT id FROM topics WHERE lower(name) = lower($1)),"
     " i AS (INSERT INTO subscriptions (topic_id, name, lock_duration, max_delivery_count,"
     " default_message_time_to_live, dead_lettering_on_message_expiration,"
     " dead_lettering_on_filter_evaluation_exceptions, requires_session, forward_to,"
     " forward_dead_lettered_messages_to, auto_delete_on_idle, status, enable_batched_operations, user_metadata,"
     " created_at, updated_at)"
     " SELECT t.id, $2, " MS(3) ", $4::integer, " MS(5) ", $6::boolean, $7::boolean, $8::boolean, $9, $10, " MS(11)
     ", $12, $13::boolean, $14, sbemu_ts($15), sbemu_ts($15) FROM t"
     " ON CONFLICT (topic_id, (lower(name))) DO NOTHING RETURNING id)"
     " SELECT (SELECT count(*) FROM t), (SELECT count(*) FROM i)",
     15, SUB_TYPES},
    /* The rule a subscription was created with, in place of the $Default its
     * insert just got: only a subscription created by this request (created
     * at $10, this instant) is touched, never one that already existed.
     * $1 topic, $2 subscription, $3..$9 the rule (store_rule's columns). */
    {STMT_ADMIN_SUB_DEFAULT_RULE,
     "UPDATE rules r SET name = $3, filter_type = $4, sql_expression = $5, correlation = $6::jsonb,"
     " filter_parameters = $7::jsonb, action_expression = $8, action_parameters = $9::jsonb"
     " FROM subscriptions s JOIN topics t ON t.id = s.topic_id"
     " WHERE r.subscription_id = s.id AND r.name = '$Default' AND lower(t.name) = lower($1)"
     " AND lower(s.name) = lower($2) AND s.created_at = sbemu_ts($10)",
     10, {STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT,
          STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_INT8}},
    /* The same for a subscription: $1 topic, $2 subscription, $3 now. */
    {STMT_ADMIN_SUB_TOUCH_NEW,
     "UPDATE entity_runtime r SET accessed_at = sbemu_ts($3) FROM subscriptions s JOIN topics t ON t.id = s.topic_id"
     " WHERE r.entity_id = s.id AND lower(t.name) = lower($1) AND lower(s.name) = lower($2)"
     " AND s.created_at = sbemu_ts($3)",
     3, {STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_INT8}},
    /* Answers (found, updated): RequiresSession of an existing subscription stays. */
    {STMT_ADMIN_SUB_UPDATE,
     "WITH cur AS (SELECT s.id, s.requires_session FROM subscriptions s JOIN topics t ON t.id = s.topic_id"
     " WHERE lower(t.name) = lower($1) AND lower(s.name) = lower($2) FOR UPDATE OF s),"
     " u AS (UPDATE subscriptions s SET" SUB_SET " FROM cur WHERE s.id = cur.id"
     " AND cur.requires_session = $8::boolean RETURNING s.id)"
     " SELECT (SELECT count(*) FROM cur), (SELECT count(*) FROM u)",
     15, SUB_TYPES},
    {STMT_ADMIN_SUB_DELETE,
     "WITH d AS (DELETE FROM subscriptions s USING topics t WHERE t.id = s.topic_id AND lower(t.name) = lower($1)"
     " AND lower(s.name) = lower($2) RETURNING 1)"
     " SELECT count(*) FROM d",
     2, {STORE_OID_TEXT, STORE_OID_TEXT}},

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

    /* When the schema was first applied (the namespace's birth) and when an
     * entity last changed. */
    {STMT_ADMIN_NAMESPACE,
     "SELECT coalesce(sbemu_ms((SELECT min(applied_at) FROM sbemu_schema_version)), 0),"
     " coalesce(sbemu_ms(greatest((SELECT max(updated_at) FROM queues), (SELECT max(updated_at) FROM topics),"
     " (SELECT max(updated_at) FROM subscriptions), (SELECT min(applied_at) FROM sbemu_schema_version))), 0)",
     0, {0}},
};

const stmt_def *store_admin_statement_defs(size_t *n)
{
    *n = sizeof admin_stmt_defs / sizeof admin_stmt_defs[0];
    return admin_stmt_defs;
}

int store_admin_statements_prepare(PGconn *conn, char *err, size_t errlen)
{
    return store_prepare_all(conn, admin_stmt_defs, sizeof admin_stmt_defs / sizeof admin_stmt_defs[0], err, errlen);
}
