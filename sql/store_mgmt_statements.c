/* Prepared statements of the $management operations (store_mgmt.c and, for
 * rules, store_rules.c build the ops). Same rules as store_statements.c: times
 * are millisecond parameters from the emulator's clock, never now();
 * statements that add or remove messages keep entity_runtime.size_in_bytes;
 * lists of sequence numbers and lock tokens travel as one text-format array
 * parameter ("{1,2}", "{uuid,uuid}"). */
#include <stdio.h>

#include "store_mgmt.h"
#include "store_claim_sql.h"
#include "store_rules.h"
#include "store_session.h"
#include "store_statements.h"
#include "store_token_sql.h"


/* Columns of every message row (store_mgmt.c parses them in this order); $now
 * is the statement's clock parameter. A scheduled message that is due is active. */
#define MSG_COLUMNS(m, now)                                                                                    \
    " " m "sequence_number, sbemu_ms(" m "enqueued_at), coalesce(sbemu_ms(" m "locked_until), 0), " m         \
    "lock_token, " m "delivery_count::int8, coalesce(" m "time_to_live_ms, -1), " m "dead_letter_reason, " m    \
    "dead_letter_error_description, " m "message, " m "message_id,"                                             \
    " (CASE WHEN " m "state = 2 AND " m "available_at <= sbemu_ts(" now ") THEN 0 ELSE " m "state END)::int8, " m \
    "dead_letter_source, coalesce(sbemu_ms(" m "expires_at), 0)"

/* The names of MSG_COLUMNS, in the CTE u that LOCK_BATCH and the story read. */
#define MGMT_LOCK_NAMES "(seq, enq, until, tok, dc, ttl, reason, descr, msg, mid, state, src, exp)"

/* Deferred messages among $3 that nobody holds a lock on. $1 queue, $2 subqueue, $4 now. */
#define DEFERRED_FIND                                                                                          \
    "SELECT sequence_number FROM messages WHERE entity_id = $1 AND subqueue = $2::smallint"                    \
    " AND sequence_number = ANY($3) AND state = 1 AND (lock_token IS NULL OR locked_until <= sbemu_ts($4))"   \
    " FOR UPDATE"

/* The messages session $2 of entity $1 holds under a lock still running at
 * $4, found through the lock batches b (that session's still running,
 * lock_batches_session): each batch's sequence numbers looked up by primary
 * key (SESSION_BATCH_TIDS, a CTE bt of row addresses), and the rows taken by
 * address: what the session holds, not its backlog. `m` is the message row.
 * (Joined to the sequence numbers instead, a plan made from the statistics
 * of a drained table walked the entity's every message for each release.
 * `IS TRUE` keeps the time out of the index conditions: with statistics
 * that saw few batches, a release's generic plan walked lock_batches_due
 * from now, through every receiver's running batches and their dead
 * entries, 200-440 buffers a release.) */
#define SESSION_BATCHES "entity_id = $1 AND session_id = $2 AND (locked_until > sbemu_ts($4)) IS TRUE"
#define SESSION_LOCKED_MESSAGES                                                                                     \
    " m.ctid = ANY(ARRAY(SELECT tid FROM bt)) AND (m.session_id = $2) IS TRUE AND (m.subqueue = 0) IS TRUE"                 \
    " AND (m.state = 0) IS TRUE AND m.lock_token IS NOT NULL AND (m.locked_until > sbemu_ts($4)) IS TRUE"
/* The holder ($3) of session $2 of entity $1 lets go (CTEs d and k, a row
 * each when it held the lock): a session without a state leaves no row
 * behind; one with a state keeps it, unlocked. */
#define SESSION_LET_GO                                                                                              \
    " d AS (DELETE FROM sessions WHERE entity_id = $1 AND session_id = $2 AND lock_token = $3"                     \
    "  AND state IS NULL RETURNING 1),"                                                                         \
    " k AS (UPDATE sessions SET lock_token = NULL, locked_until = NULL WHERE entity_id = $1 AND session_id = $2"  \
    "  AND lock_token = $3 AND state IS NOT NULL RETURNING 1),"
/* (a CTE: the row addresses of the batches' messages, by primary key:
 * store_token_sql.h) */
#define SESSION_BATCH_TIDS                                                                                          \
    " bt AS MATERIALIZED (SELECT " MESSAGE_TID("$1", "k.seq") " AS tid"                                            \
    " FROM (SELECT DISTINCT unnest(b.sequence_numbers) AS seq FROM b) k),"

static const stmt_def mgmt_stmt_defs[] = {
    /* $1 entity, $2 subqueue, $3 from sequence number, $4 max, $5 now. Two index
     * walks merged (messages_ready for active messages, messages_held for
     * deferred and scheduled ones), so a peek costs what it returns. */
    {STMT_MGMT_PEEK,
     "SELECT * FROM ("
     "(SELECT" MSG_COLUMNS("", "$5") " FROM messages WHERE entity_id = $1 AND subqueue = $2::smallint"
     " AND state = 0 AND sequence_number >= $3"
     " AND (subqueue = 1 OR expires_at IS NULL OR expires_at > sbemu_ts($5))"
     " ORDER BY sequence_number LIMIT $4)"
     " UNION ALL "
     "(SELECT" MSG_COLUMNS("", "$5") " FROM messages WHERE entity_id = $1 AND subqueue = $2::smallint"
     " AND state <> 0 AND state <> 3 AND sequence_number >= $3"
     " AND (subqueue = 1 OR state = 1 OR expires_at IS NULL OR expires_at > sbemu_ts($5))"
     " ORDER BY sequence_number LIMIT $4)"
     ") AS p ORDER BY 1 LIMIT $4",
     5, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8}},
    /* $1 queue, $2 tokens (distinct), $3 now, $4 new locked-until. All or
     * none. The renewed locks are a batch of their own (LOCK_BATCH). */
    {STMT_MGMT_RENEW,
     "WITH t AS (SELECT x.sequence_number FROM unnest($2::uuid[]) AS k(token) JOIN messages x ON"
     BY_LOCK_TOKEN("x", "$1", "k.token")
     " WHERE (x.locked_until > sbemu_ts($3)) IS TRUE FOR UPDATE OF x),"
     " u AS (UPDATE messages m SET locked_until = sbemu_ts($4)"
     " FROM t WHERE m.entity_id = $1 AND m.sequence_number = t.sequence_number"
     " AND (SELECT count(*) FROM t) = cardinality($2)"
     " RETURNING m.lock_token AS tok, sbemu_ms(m.locked_until) AS until, m.sequence_number AS seq),"
     LOCK_BATCH("u", "NULL", "sbemu_ts($4)") " SELECT tok, until FROM u",
     4, {STORE_OID_INT8, STORE_OID_UUID_ARRAY, STORE_OID_INT8, STORE_OID_INT8}},
    {STMT_MGMT_DEFERRED_FIND, DEFERRED_FIND, 4, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8_ARRAY, STORE_OID_INT8}},
    /* $5 locked-until. Locks every one of $3 (distinct) or none; they stay deferred. */
    {STMT_MGMT_DEFERRED_LOCK,
     "WITH t AS (" DEFERRED_FIND "),"
     " u" MGMT_LOCK_NAMES " AS (UPDATE messages m SET lock_token = sbemu_lock_token(m.sequence_number),"
     " locked_until = sbemu_ts($5), delivery_count = m.delivery_count + 1"
     " FROM t WHERE m.entity_id = $1 AND m.sequence_number = t.sequence_number"
     " AND (SELECT count(*) FROM t) = cardinality($3)"
     " RETURNING" MSG_COLUMNS("m.", "$4") ")," LOCK_BATCH("u", "NULL", "sbemu_ts($5)") " SELECT * FROM u",
     5, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8_ARRAY, STORE_OID_INT8, STORE_OID_INT8}},
    /* Receive-and-delete: deletes every one of $3 or none. The delivery count
     * includes this delivery, as a lock would have. */
    {STMT_MGMT_DEFERRED_DELETE,
     "WITH t AS (" DEFERRED_FIND "),"
     " d AS (DELETE FROM messages m USING t WHERE m.entity_id = $1 AND m.sequence_number = t.sequence_number"
     " AND (SELECT count(*) FROM t) = cardinality($3) RETURNING m.*),"
     " u AS (UPDATE entity_runtime SET size_in_bytes = size_in_bytes - (SELECT coalesce(sum(octet_length(message)), 0)"
     " FROM d) WHERE entity_id = $1)"
     " SELECT sequence_number, sbemu_ms(enqueued_at), 0::int8, NULL::uuid, delivery_count::int8 + 1,"
     " coalesce(time_to_live_ms, -1), dead_letter_reason, dead_letter_error_description, message, message_id,"
     " state::int8, dead_letter_source, coalesce(sbemu_ms(expires_at), 0) FROM d",
     4, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8_ARRAY, STORE_OID_INT8}},
    /* $1 queue, $2 sequence numbers, $3 now: only schedules not yet due. */
    {STMT_MGMT_CANCEL,
     "WITH d AS (DELETE FROM messages WHERE entity_id = $1 AND subqueue = 0 AND sequence_number = ANY($2)"
     " AND state = 2 AND lock_token IS NULL AND available_at > sbemu_ts($3) RETURNING octet_length(message) AS n)"
     " UPDATE entity_runtime SET size_in_bytes = size_in_bytes - (SELECT coalesce(sum(n), 0) FROM d) WHERE entity_id = $1",
     3, {STORE_OID_INT8, STORE_OID_INT8_ARRAY, STORE_OID_INT8}},
    /* $1 entity, $2 subqueue, $3 max, $4 enqueued before, $5 now. Skips held
     * locks. The lowest sequence numbers of the two index ranges (active,
     * and held: deferred, scheduled) merged, as peek does, so a
     * purge costs what it deletes whatever the other subqueue holds. */
    {STMT_MGMT_BATCH_DELETE,
     "WITH c AS (SELECT ctid FROM messages WHERE ctid = ANY(ARRAY(SELECT row_id FROM ("
     "(SELECT ctid AS row_id, sequence_number FROM messages WHERE entity_id = $1 AND subqueue = $2::smallint"
     " AND state = 0 AND (lock_token IS NULL OR locked_until <= sbemu_ts($5)) AND enqueued_at < sbemu_ts($4)"
     " ORDER BY sequence_number LIMIT $3)"
     " UNION ALL "
     "(SELECT ctid, sequence_number FROM messages WHERE entity_id = $1 AND subqueue = $2::smallint"
     " AND state <> 0 AND state <> 3 AND (lock_token IS NULL OR locked_until <= sbemu_ts($5))"
     " AND enqueued_at < sbemu_ts($4) ORDER BY sequence_number LIMIT $3)"
     ") AS u ORDER BY sequence_number LIMIT $3)) FOR UPDATE SKIP LOCKED),"
     " d AS (DELETE FROM messages m WHERE m.ctid = ANY(ARRAY(SELECT ctid FROM c))"
     " RETURNING octet_length(m.message) AS n),"
     " u AS (UPDATE entity_runtime SET size_in_bytes = size_in_bytes - (SELECT coalesce(sum(n), 0) FROM d)"
     " WHERE entity_id = $1)"
     " SELECT count(*) FROM d",
     5, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8}},
    /* properties-to-modify: read, then replace, the bytes under a live lock.
     * $1 token, $2 queue, $3 now */
    {STMT_MGMT_READ_LOCKED,
     "SELECT " MESSAGE_BODY("m") " FROM messages m WHERE" BY_LOCK_TOKEN("m", "$2", "$1::uuid")
     " AND locked_until > sbemu_ts($3)"
     " FOR UPDATE",
     3, {STORE_OID_UUID, STORE_OID_INT8, STORE_OID_INT8}},
    /* $4 the new bytes */
    {STMT_MGMT_REPLACE_LOCKED,
     "WITH m AS MATERIALIZED (SELECT y.ctid AS tid, y.entity_id, y.sequence_number, " MESSAGE_BYTES("y") " AS old"
     " FROM messages y WHERE" BY_LOCK_TOKEN("y", "$2", "$1::uuid")
     " AND locked_until > sbemu_ts($3) FOR UPDATE),"
     " x AS (UPDATE messages x SET message = $4, body_bytes = NULL FROM m WHERE" BY_TID("x", "m") ")"
     " UPDATE entity_runtime q SET size_in_bytes = q.size_in_bytes + octet_length($4) - m.old FROM m"
     " WHERE q.entity_id = m.entity_id"
     " RETURNING 1",
     4, {STORE_OID_UUID, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_BYTEA}},
    /* ---- sessions (store_session.c); a lock is a token and a time ---- */
    /* $1 entity, $2 session id (NULL: the next available), $3 now, $4 token,
     * $5 locked-until, $6 where a pick starts (SESSION_TAKE). Answers the
     * session id and, for the next available, the sequence number of the
     * message it was picked by; or nothing (held by another receiver, or
     * none available). A peek-lock receiver's lock takes its first messages
     * too (STMT_SESSION_LOCK_CLAIM); this one is a receive-and-delete
     * receiver's. */
    {STMT_SESSION_LOCK,
     "WITH " SESSION_TAKE("$2", "$4", "$5", "$6")
     " SELECT h.session_id, coalesce((SELECT f.sequence_number FROM found f), 0) FROM held h",
     6, {STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_INT8, STORE_OID_UUID, STORE_OID_INT8, STORE_OID_INT8}},
    /* The receiver let go ($1 entity, $2 session, $3 its token, $4 now): the
     * session is free, and the messages it held unsettled are claimable again
     * with the DeliveryCount they had before this receiver took them: Service
     * Bus does not count a delivery in a session closed without settling it
     * (docs: message-sessions, "Impact of delivery count"; azure-sdk-for-js
     * #15116), only one whose session lock lapsed. A session without a state
     * leaves no row behind. */
    {STMT_SESSION_RELEASE,
     "WITH" SESSION_LET_GO " b AS (DELETE FROM lock_batches WHERE " SESSION_BATCHES
     " AND EXISTS (SELECT 1 FROM d UNION ALL SELECT 1 FROM k) RETURNING sequence_numbers),"
     SESSION_BATCH_TIDS
     " m AS (UPDATE messages m SET lock_token = NULL, locked_until = NULL,"
     "  delivery_count = greatest(m.delivery_count - 1, 0)"
     "  WHERE" SESSION_LOCKED_MESSAGES " RETURNING 1)"
     " SELECT count(*) FROM m",
     4, {STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_UUID, STORE_OID_INT8}},
    /* The same, from a receiver that settled every message it received
     * (store_session_release's all_settled): its lock batches go, and no
     * message is looked for. (Its completed messages are gone, and probing
     * each by primary key cost most of a session switch while their dead
     * rows waited for vacuum: 140 buffers for 20.) */
    {STMT_SESSION_RELEASE_SETTLED,
     "WITH" SESSION_LET_GO " b AS (DELETE FROM lock_batches WHERE " SESSION_BATCHES
     " AND EXISTS (SELECT 1 FROM d UNION ALL SELECT 1 FROM k) RETURNING 1)"
     " SELECT count(*) FROM b",
     4, {STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_UUID, STORE_OID_INT8}},
    /* $1 entity, $2 session, $3 token, $4 now, $5 new locked-until: the
     * session and the messages received in it. No row: the lock is lost. */
    {STMT_SESSION_RENEW,
     "WITH s AS (UPDATE sessions SET locked_until = sbemu_ts($5) WHERE entity_id = $1 AND session_id = $2"
     "  AND lock_token = $3 AND locked_until > sbemu_ts($4) RETURNING locked_until),"
     " b AS (UPDATE lock_batches SET locked_until = sbemu_ts($5) WHERE " SESSION_BATCHES " AND EXISTS (SELECT 1 FROM s) RETURNING sequence_numbers),"
     SESSION_BATCH_TIDS
     " m AS (UPDATE messages m SET locked_until = sbemu_ts($5) WHERE" SESSION_LOCKED_MESSAGES ")"
     " SELECT sbemu_ms(locked_until) FROM s",
     5, {STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_UUID, STORE_OID_INT8, STORE_OID_INT8}},
    /* $1 entity, $2 session, $3 token, $4 now. No row: the lock is lost. */
    {STMT_SESSION_GET_STATE,
     "SELECT state FROM sessions WHERE entity_id = $1 AND session_id = $2 AND lock_token = $3"
     " AND locked_until > sbemu_ts($4)",
     4, {STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_UUID, STORE_OID_INT8}},
    /* $5 the state (NULL clears it) */
    {STMT_SESSION_SET_STATE,
     "UPDATE sessions SET state = $5, updated_at = sbemu_ts($4) WHERE entity_id = $1 AND session_id = $2"
     " AND lock_token = $3 AND locked_until > sbemu_ts($4) RETURNING 1",
     5, {STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_UUID, STORE_OID_INT8, STORE_OID_BYTEA}},
    /* get-message-sessions: $1 entity, $2 updated since, $3 skip, $4 top.
     * Sessions with messages, and sessions whose state changed since $2.
     * The sessions with messages are found one at a time, each the first
     * session id above the last (a probe of messages_session), and no more
     * than the page needs: a DISTINCT over the entity's messages read every
     * message of every session, a cost that grew with the backlog
     * (test_store_plans: test_listing_sessions_reads_sessions_not_messages).
     * `session_id >= ''` (every session id) gives messages_session a
     * condition on its second column: without statistics the plan otherwise
     * read every message of the entity through the primary key. */
    {STMT_SESSION_LIST,
     "WITH RECURSIVE s(sid, n) AS ((SELECT session_id, 1::int8 FROM messages WHERE entity_id = $1"
     "  AND session_id >= '' AND subqueue = 0 AND state <> 3 ORDER BY session_id LIMIT 1)"
     " UNION ALL SELECT (SELECT m.session_id FROM messages m WHERE m.entity_id = $1 AND m.session_id > s.sid"
     "  AND m.subqueue = 0 AND m.state <> 3 ORDER BY m.session_id LIMIT 1), s.n + 1"
     "  FROM s WHERE s.sid IS NOT NULL AND s.n < $3 + $4)"
     " SELECT session_id FROM (SELECT sid AS session_id FROM s WHERE sid IS NOT NULL"
     " UNION SELECT session_id FROM sessions WHERE entity_id = $1 AND state IS NOT NULL"
     " AND updated_at >= sbemu_ts($2)) x ORDER BY session_id OFFSET $3 LIMIT $4",
     4, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8}},
    /* peek in a session: $1 entity, $2 session, $3 from, $4 max, $5 now
     * (the session's own messages only, whatever the statistics: ONE_SESSION) */
    {STMT_SESSION_PEEK,
     "SELECT" MSG_COLUMNS("", "$5") " FROM messages WHERE entity_id = $1 AND" ONE_SESSION("$2") " AND subqueue = 0"
     " AND sequence_number >= $3 AND state <> 3 AND (state = 1 OR expires_at IS NULL OR expires_at > sbemu_ts($5))"
     " ORDER BY session_id, sequence_number LIMIT $4",
     5, {STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8}},
    /* Rows of sessions whose lock lapsed and that have no state ($1 now). */
    {STMT_SESSION_SWEEP,
     "DELETE FROM sessions WHERE ctid = ANY(ARRAY(SELECT ctid FROM sessions WHERE state IS NULL"
     " AND locked_until <= sbemu_ts($1)" SWEEP_SCOPE("entity_id", "2", "3") " LIMIT " STORE_SWEEP_BATCH_SQL "))",
     3, {STORE_OID_INT8, STORE_OID_INT8_ARRAY, STORE_OID_TEXT}},
    /* add-rule (store_rules.c). $1 subscription, $2 name, $3 filter_type, $4 SQL
     * filter, $5 correlation, $6 filter parameters, $7 action, $8 action
     * parameters (JSON as text), $9 now, $10 the topic's limit for filters of
     * this kind. Answers (subscription found, filters of the kind, inserted);
     * a taken name inserts nothing (ON CONFLICT: of two emulators adding the
     * same name at once, one inserts and the other sees it taken). The count
     * is not serialised: adds racing on one topic may pass the limit by the
     * few that raced, which a limit of thousands can afford. */
    {STMT_RULE_ADD,
     "WITH s AS (SELECT id, topic_id FROM subscriptions WHERE id = $1),"
     " k AS (SELECT count(*) AS n FROM rules r JOIN subscriptions x ON x.id = r.subscription_id"
     " WHERE x.topic_id = (SELECT topic_id FROM s) AND (r.filter_type = 'Correlation') = ($3 = 'Correlation')),"
     " i AS (INSERT INTO rules (subscription_id, name, filter_type, sql_expression, correlation,"
     " filter_parameters, action_expression, action_parameters, created_at)"
     " SELECT id, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8::jsonb, sbemu_ts($9) FROM s WHERE (SELECT n FROM k) < $10"
     " ON CONFLICT (subscription_id, lower(name)) DO NOTHING RETURNING 1)"
     " SELECT (SELECT count(*) FROM s), (SELECT n FROM k), (SELECT count(*) FROM i)",
     10, {STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT,
          STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_INT8, STORE_OID_INT8}},
    /* remove-rule: $1 subscription, $2 name (any letter case). Answers how many went. */
    {STMT_RULE_REMOVE,
     "WITH d AS (DELETE FROM rules WHERE subscription_id = $1 AND lower(name) = lower($2) RETURNING 1)"
     " SELECT count(*) FROM d",
     2, {STORE_OID_INT8, STORE_OID_TEXT}},
    /* enumerate-rules: $1 subscription, $2 skip, $3 top; columns in store_rule's order. Pages come
     * in rule-name order, as Service Bus lists them ($Default, correlationRule, sqlRule), not in the
     * order the rules were made; "C" so that the order does not hang on the database's locale. */
    {STMT_RULE_LIST,
     "SELECT name, filter_type, sql_expression, correlation::text, filter_parameters::text, action_expression,"
     " action_parameters::text, sbemu_ms(created_at) FROM rules WHERE subscription_id = $1"
     " ORDER BY lower(name) COLLATE \"C\", name COLLATE \"C\" OFFSET $2 LIMIT $3",
     3, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8}},
};

const stmt_def *store_mgmt_statement_defs(size_t *n)
{
    *n = sizeof mgmt_stmt_defs / sizeof mgmt_stmt_defs[0];
    return mgmt_stmt_defs;
}

int store_mgmt_statements_prepare(PGconn *conn, char *err, size_t errlen)
{
    return store_prepare_all(conn, mgmt_stmt_defs, sizeof mgmt_stmt_defs / sizeof mgmt_stmt_defs[0], err, errlen);
}
