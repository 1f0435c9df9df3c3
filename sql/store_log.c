/* A topic's log (migration 018): the statements that take a subscription's
 * messages from it, catch a subscription up before other reads, and sweep it.
 * Declared in store_log.h. */
#include "store_log.h"

#include "store_claim_sql.h"
#include "store_statements.h"

/* The log entries a claim of subscription $1 takes after `taken` messages
 * came from messages rows ($2 subqueue: the log holds the active subqueue's
 * only; $3 now, $4 the claim's size), as lg, with `more` columns
 * (", expr AS name", or ""). The cursor row is held (FOR UPDATE):
 * claims of one subscription by two emulators take turns. An expired entry is
 * taken too (live false): it goes into messages for the sweep's expiry.
 *
 * The cursor moves past what was taken, or, when fewer entries than asked
 * for were found, to the last entry the statement can see: everything below
 * it was looked at (see the migration for why nothing below it can still
 * appear). It is written only when it moves. (Where it moves to, v, stays a
 * subquery of its own, OFFSET 0: pulled up, its CASE went into both the SET
 * and the join's filter, and lg was counted and searched for its maximum
 * twice.) */
#define LOG_TAKE(taken, more)                                                                                   \
    " want AS MATERIALIZED (SELECT greatest($4 - " taken ", 0) AS n),"                                          \
    " cur AS MATERIALIZED (SELECT topic_id, position FROM sbemu_cursors WHERE entity_id = $1 AND $2 = 0"       \
    "  AND (SELECT n FROM want) > 0 FOR UPDATE),"                                                               \
    " lg AS MATERIALIZED (SELECT l.*, (l.expires_at IS NULL OR l.expires_at > sbemu_ts($3)) AS live" more       \
    "  FROM topic_log l WHERE l.ctid = ANY(ARRAY(SELECT ctid FROM topic_log"                                    \
    "  WHERE topic_id = (SELECT topic_id FROM cur) AND sequence_number > (SELECT position FROM cur)"            \
    "  AND $1 = ANY(subs) ORDER BY topic_id, sequence_number LIMIT (SELECT n FROM want)))),"                   \
    " adv AS (UPDATE sbemu_cursors c SET position = v.p FROM (SELECT CASE"                                      \
    "  WHEN (SELECT count(*) FROM lg) < (SELECT n FROM want) THEN (SELECT t.sequence_number FROM topic_log t"    \
    "  WHERE t.topic_id = cur.topic_id ORDER BY t.topic_id DESC, t.sequence_number DESC LIMIT 1)"               \
    "  ELSE (SELECT max(sequence_number) FROM lg) END AS p FROM cur OFFSET 0) v"                                \
    "  WHERE c.entity_id = $1 AND v.p > c.position),"

/* The columns of a message row made from a log entry l for subscription $1. */
#define LOG_ROW_COLUMNS                                                                                         \
    "entity_id, sequence_number, subqueue, state, enqueued_at, available_at, expires_at, time_to_live_ms,"      \
    " message_id, session_id, message"
#define LOG_ROW_VALUES(available)                                                                               \
    "$1, l.sequence_number, 0, 0, l.enqueued_at, " available ", l.expires_at, l.time_to_live_ms, l.message_id,"  \
    " l.session_id, l.message"
/* The same for a peek-lock claim: a live entry's row has no body, only its
 * size (migration 028), and is locked with the token lg made for it (l.tok)
 * until $5; an expired one goes in unlocked, body and all, for the sweep. */
#define LOG_LOCKED_COLUMNS LOG_ROW_COLUMNS ", body_bytes, lock_token, locked_until, delivery_count"
#define LOG_LOCKED_VALUES                                                                                       \
    "$1, l.sequence_number, 0, 0, l.enqueued_at, l.available_at, l.expires_at, l.time_to_live_ms, l.message_id,"  \
    " l.session_id, CASE WHEN NOT l.live THEN l.message END, CASE WHEN l.live THEN octet_length(l.message) END,"   \
    " CASE WHEN l.live THEN l.tok END, CASE WHEN l.live THEN sbemu_ts($5) END, CASE WHEN l.live THEN 1 ELSE 0 END"
/* What the receiver gets of a live entry l that LOG_LOCKED_VALUES locked: the
 * values the row was given (CLAIM_COLUMNS of it), with the body from the log. */
#define LOG_LOCKED_CLAIMED                                                                                      \
    "l.sequence_number, l.enqueued_at, sbemu_ts($5), l.tok, 1, coalesce(l.time_to_live_ms, -1), NULL::text,"     \
    " NULL::text, l.message, l.message_id, NULL::text, l.expires_at"

static const stmt_def log_stmt_defs[] = {
    /* A peek-lock claim of a subscription (STMT_CLAIM_LOCK's parameters):
     * messages rows first (abandoned, caught up), then log entries, each
     * inserted locked into messages: one row written per message, as a
     * queue's claim writes one (its UPDATE). The row leaves the body in the
     * log (migration 028: message NULL, body_bytes its size); the receiver
     * gets it from the log here (ins). An expired entry (not live) goes in
     * unlocked, body and all, for the sweep.
     *
     * ins reads what the receiver gets from lg, not from the INSERT's
     * RETURNING: lg made each lock token (tok), so the two agree, and no
     * join puts the bodies in a hash table (joined, lg's 500 bodies were
     * copied there for every claim of 500). Read once (the lock batch reads
     * lg), ins is a subquery, not a second copy of the bodies. */
    {STMT_CLAIM_LOCK_LOG,
     "WITH old" CLAIM_NAMES " AS (UPDATE messages m SET lock_token = sbemu_lock_token(m.sequence_number),"
     " locked_until = sbemu_ts($5), delivery_count = m.delivery_count + 1"
     " WHERE " CLAIM_CANDIDATES("$6") " RETURNING" CLAIM_COLUMNS "),"
     LOG_TAKE("(SELECT count(*) FROM old)", ", sbemu_lock_token(l.sequence_number) AS tok")
     " lk AS (INSERT INTO messages (" LOG_LOCKED_COLUMNS ") SELECT " LOG_LOCKED_VALUES " FROM lg l),"
     " ins" CLAIM_NAMES " AS (SELECT " LOG_LOCKED_CLAIMED " FROM lg l WHERE l.live),"
     " k AS (SELECT seq FROM old UNION ALL SELECT sequence_number FROM lg WHERE live),"
     CLAIM_LOCK_BATCH("k", "NULL", "sbemu_ts($5)")
     " SELECT * FROM old UNION ALL SELECT * FROM ins",
     6, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8}},
    /* A receive-and-delete claim of a subscription (STMT_CLAIM_DELETE's
     * parameters): messages rows deleted first, then log entries read and
     * the cursor moved; nothing is written per message taken from the log. */
    {STMT_CLAIM_DELETE_LOG,
     "WITH d AS (DELETE FROM messages m WHERE " CLAIM_CANDIDATES("$5") " RETURNING m.*),"
     LOG_TAKE("(SELECT count(*) FROM d)", "")
     " exp AS (INSERT INTO messages (" LOG_ROW_COLUMNS ") SELECT " LOG_ROW_VALUES("l.available_at")
     " FROM lg l WHERE NOT l.live),"
     " u AS (UPDATE entity_runtime SET size_in_bytes = size_in_bytes"
     "  - (SELECT coalesce(sum(octet_length(message)), 0) FROM d)"
     "  - (SELECT coalesce(sum(octet_length(message)), 0) FROM lg WHERE live),"
     "  accessed_at = greatest(accessed_at, sbemu_ts($3))"
     "  WHERE entity_id = $1 AND (EXISTS (SELECT 1 FROM d) OR EXISTS (SELECT 1 FROM lg WHERE live)))"
     " SELECT" CLAIM_COLUMNS " FROM d m"
     " UNION ALL SELECT l.sequence_number, l.enqueued_at, NULL::timestamptz,"
     " '00000000-0000-0000-0000-000000000000'::uuid, 0, coalesce(l.time_to_live_ms, -1), NULL::text, NULL::text,"
     " l.message, l.message_id, NULL::text, l.expires_at FROM lg l WHERE l.live",
     5, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8}},
    /* $1 an entity: a subscription's pending log entries become messages rows */
    {STMT_CATCH_UP, "SELECT sbemu_catch_up($1)", 1, {STORE_OID_INT8}},
    /* $1 now */
    {STMT_SWEEP_LOG, "SELECT sbemu_log_sweep(sbemu_ts($1))", 1, {STORE_OID_INT8}},
};
#define LOG_NSTMT (sizeof log_stmt_defs / sizeof log_stmt_defs[0])

int store_log_statements_prepare(PGconn *conn, char *err, size_t errlen)
{
    return store_prepare_all(conn, log_stmt_defs, LOG_NSTMT, err, errlen);
}

const stmt_def *store_log_statement_defs(size_t *n)
{
    *n = LOG_NSTMT;
    return log_stmt_defs;
}
