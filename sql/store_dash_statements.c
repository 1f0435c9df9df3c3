/* Prepared statements of the dashboard (store_dash.h; store_dash.c builds
 * the ops). Same rules as store_statements.c: times are millisecond
 * parameters from the emulator's clock, statements that remove messages keep
 * entity_runtime.size_in_bytes, lists of sequence numbers travel as one
 * text-format array parameter. A transaction's uncommitted schedule (state 3)
 * is nobody's to see or touch. */
#include "store_dash.h"
#include "store_statements.h"

/* Every column of a message row, in store_dash.c's order. */
#define DASH_COLUMNS                                                                                               \
    " sequence_number, subqueue::int8, state::int8, sbemu_ms(enqueued_at), sbemu_ms(available_at),"               \
    " coalesce(sbemu_ms(expires_at), 0), coalesce(time_to_live_ms, -1), coalesce(sbemu_ms(locked_until), 0),"     \
    " lock_token, delivery_count::int8, message_id, session_id, dead_letter_reason, dead_letter_error_description," \
    " dead_letter_source, message"

/* What a removal leaves of the entity's size: d is the CTE of the rows removed. */
#define DASH_SHRINK                                                                                                \
    " u AS (UPDATE entity_runtime SET size_in_bytes = size_in_bytes - (SELECT coalesce(sum(n), 0) FROM d)"         \
    " WHERE entity_id = $1 AND EXISTS (SELECT 1 FROM d))"

static const stmt_def dash_stmt_defs[] = {
    /* $1 entity, $2 subqueue, $3 from sequence number, $4 max. The two index
     * ranges (messages_ready, messages_held) walked in order and merged, as
     * $management's peek does, so a page costs what it returns. */
    {STMT_DASH_PEEK,
     "SELECT * FROM ("
     "(SELECT" DASH_COLUMNS " FROM messages WHERE entity_id = $1 AND subqueue = $2::smallint"
     " AND state = 0 AND sequence_number >= $3 ORDER BY sequence_number LIMIT $4)"
     " UNION ALL "
     "(SELECT" DASH_COLUMNS " FROM messages WHERE entity_id = $1 AND subqueue = $2::smallint"
     " AND state <> 0 AND state <> 3 AND sequence_number >= $3"
     " ORDER BY sequence_number LIMIT $4)"
     ") AS p ORDER BY 1 LIMIT $4",
     4, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8}},
    /* $1 entity, $2 subqueue, $3 sequence numbers, $4 1: only unlocked (or lapsed) ones, $5 now. */
    {STMT_DASH_PICK,
     "SELECT" DASH_COLUMNS " FROM messages WHERE entity_id = $1 AND subqueue = $2::smallint"
     " AND sequence_number = ANY($3) AND state <> 3"
     " AND ($4 = 0 OR lock_token IS NULL OR locked_until <= sbemu_ts($5)) ORDER BY sequence_number",
     5, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8_ARRAY, STORE_OID_INT8, STORE_OID_INT8}},
    /* The same arguments; answers how many went. */
    {STMT_DASH_DELETE,
     "WITH d AS (DELETE FROM messages WHERE entity_id = $1 AND subqueue = $2::smallint"
     " AND sequence_number = ANY($3) AND state <> 3"
     " AND ($4 = 0 OR lock_token IS NULL OR locked_until <= sbemu_ts($5)) RETURNING octet_length(message) AS n),"
     DASH_SHRINK " SELECT count(*) FROM d",
     5, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8_ARRAY, STORE_OID_INT8, STORE_OID_INT8}},
    /* $1 entity, $2 subqueue (-1: both), $3 at most this many. */
    {STMT_DASH_PURGE,
     "WITH d AS (DELETE FROM messages WHERE ctid = ANY(ARRAY(SELECT ctid FROM messages WHERE entity_id = $1"
     " AND ($2 < 0 OR subqueue = $2::smallint) AND state <> 3 LIMIT $3)) RETURNING octet_length(message) AS n),"
     DASH_SHRINK " SELECT count(*) FROM d",
     3, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8}},
    /* $1 id, $2 status, $3 now. The CHECK constraints of migration 001 guard the value too. */
    {STMT_DASH_STATUS_QUEUE, "UPDATE queues SET status = $2, updated_at = sbemu_ts($3) WHERE id = $1 RETURNING 1", 3,
     {STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_INT8}},
    {STMT_DASH_STATUS_TOPIC, "UPDATE topics SET status = $2, updated_at = sbemu_ts($3) WHERE id = $1 RETURNING 1", 3,
     {STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_INT8}},
    {STMT_DASH_STATUS_SUBSCRIPTION,
     "UPDATE subscriptions SET status = $2, updated_at = sbemu_ts($3) WHERE id = $1 RETURNING 1", 3,
     {STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_INT8}},
    /* $1 entity, $2 subqueue: the last of the two index ranges' last entries. */
    {STMT_DASH_LAST,
     "SELECT coalesce(greatest("
     "(SELECT sequence_number FROM messages WHERE entity_id = $1 AND subqueue = $2::smallint AND state = 0"
     " ORDER BY sequence_number DESC LIMIT 1),"
     "(SELECT sequence_number FROM messages WHERE entity_id = $1 AND subqueue = $2::smallint"
     " AND state <> 0 ORDER BY sequence_number DESC LIMIT 1)), 0)",
     2, {STORE_OID_INT8, STORE_OID_INT8}},
    /* $1 entity, $2 max. Sessions with messages (messages_session) and rows of sessions. */
    {STMT_DASH_SESSIONS,
     "WITH m AS (SELECT session_id, count(*) AS n FROM messages WHERE entity_id = $1 AND session_id IS NOT NULL"
     " AND subqueue = 0 AND state <> 3 GROUP BY session_id),"
     " s AS (SELECT * FROM sessions WHERE entity_id = $1)"
     " SELECT coalesce(s.session_id, m.session_id), coalesce(m.n, 0)::int8, s.state, s.lock_token,"
     " coalesce(sbemu_ms(s.locked_until), 0), coalesce(sbemu_ms(s.updated_at), 0)"
     " FROM m FULL JOIN s ON s.session_id = m.session_id ORDER BY 1 LIMIT $2",
     2, {STORE_OID_INT8, STORE_OID_INT8}},
};

const stmt_def *store_dash_statement_defs(size_t *n)
{
    *n = sizeof dash_stmt_defs / sizeof dash_stmt_defs[0];
    return dash_stmt_defs;
}

int store_dash_statements_prepare(PGconn *conn, char *err, size_t errlen)
{
    return store_prepare_all(conn, dash_stmt_defs, sizeof dash_stmt_defs / sizeof dash_stmt_defs[0], err, errlen);
}
