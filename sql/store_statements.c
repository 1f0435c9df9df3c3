/* Every statement the running store uses. Times arrive as millisecond
 * parameters from the emulator's clock (never now()), and every claim walks the
 * messages_ready index in sequence order, so its cost does not grow with the
 * backlog. */
#include "store_statements.h"

#include <stdio.h>


/* Columns every claim returns, in this order (store_queue.c parses them). */
#define CLAIM_COLUMNS                                                                                             \
    " m.sequence_number, sbemu_ms(m.enqueued_at), coalesce(sbemu_ms(m.locked_until), 0),"                    \
    " coalesce(m.lock_token, '00000000-0000-0000-0000-000000000000'), m.delivery_count,"                       \
    " coalesce(m.time_to_live_ms, -1), m.dead_letter_reason, m.dead_letter_error_description, m.message,"     \
    " m.message_id, m.dead_letter_source, coalesce(sbemu_ms(m.expires_at), 0)"

/* $1 queue, $2 subqueue, $3 now, $4 max count. Expired messages are never
 * delivered (the dead-letter subqueue ignores TTL); the sweep removes them. */
#define CLAIM_CANDIDATES                                                                                          \
    "WITH c AS (SELECT sequence_number FROM messages"                                                           \
    " WHERE queue_id = $1 AND subqueue = $2::smallint AND state = 0 AND available_at <= sbemu_ts($3)"           \
    " AND (subqueue = 1 OR expires_at IS NULL OR expires_at > sbemu_ts($3))"                                  \
    " ORDER BY sequence_number LIMIT $4 FOR UPDATE SKIP LOCKED) "

/* The message a lock token names, locked against concurrent settlements:
 * $1 token, $2 queue, $3 now. No row means the lock is lost. */
#define LOCKED_MESSAGE                                                                                            \
    "WITH m AS MATERIALIZED (SELECT queue_id, sequence_number, subqueue, delivery_count FROM messages"         \
    " WHERE lock_token = $1 AND queue_id = $2 AND locked_until > sbemu_ts($3) FOR UPDATE) "

static const stmt_def stmt_defs[] = {
    /* The queue, and where its messages go: the end of its ForwardTo chain (at
     * most ENT_MAX_FORWARD_HOPS hops; a longer chain is reported). */
    {STMT_LOOKUP_QUEUE,
     "WITH RECURSIVE src AS (SELECT * FROM queues WHERE lower(name) = lower($1)),"
     " chain(id, forward_to, hops) AS (SELECT id, forward_to, 0 FROM src"
     "  UNION ALL SELECT q.id, q.forward_to, c.hops + 1 FROM chain c"
     "  JOIN queues q ON lower(q.name) = lower(c.forward_to) WHERE c.hops <= $2),"
     " last AS (SELECT id, hops FROM chain WHERE hops <= $2 ORDER BY hops DESC LIMIT 1)"
     " SELECT src.id, src.name, src.status, src.requires_session, sbemu_interval_ms(src.lock_duration),"
     " src.max_delivery_count::int8, coalesce(sbemu_interval_ms(src.default_message_time_to_live), -1),"
     " src.dead_lettering_on_message_expiration, src.max_size_in_megabytes::int8,"
     " src.requires_duplicate_detection, sbemu_interval_ms(src.duplicate_detection_history_time_window),"
     " last.id, (SELECT max(hops) FROM chain) > $2,"
     " (SELECT coalesce(sbemu_interval_ms(t.default_message_time_to_live), -1) FROM queues t WHERE t.id = last.id)"
     " FROM src, last",
     2, {STORE_OID_TEXT, STORE_OID_INT8}},
    /* $1 queue (the end of the ForwardTo chain), $2 state, $3 now (activity, duplicate window), $4 available
     * = enqueued (a scheduled message is enqueued when its time comes), $5 expires, $6 ttl, $7 message-id,
     * $8 session, $9 bytes, $10 subqueue, $11 dead-letter reason, $12 description, $13 the queue the client
     * sent to, $14/$15 reason/description when forwarding fails. A duplicate MessageId inside the window is
     * dropped (and still acknowledged). A full queue raises SBQ01 so that the whole batch fails, except
     * when the message was being forwarded: a full or send-disabled destination dead-letters it in the
     * source queue instead (Service Bus auto-forwarding). */
    {STMT_SEND,
     "WITH q AS (SELECT requires_duplicate_detection AS dd, duplicate_detection_history_time_window AS win,"
     "  max_size_in_megabytes::bigint * 1048576 AS max_bytes, size_in_bytes, status FROM queues WHERE id = $1),"
     " divert AS (SELECT $1 <> $13 AND EXISTS (SELECT 1 FROM q WHERE size_in_bytes + octet_length($9) > max_bytes"
     "  OR status IN ('Disabled', 'SendDisabled')) AS yes),"
     " t AS (SELECT CASE WHEN (SELECT yes FROM divert) THEN $13 ELSE $1 END AS id),"
     " tq AS (SELECT queues.requires_duplicate_detection AS dd,"
     "  queues.duplicate_detection_history_time_window AS win,"
     "  queues.max_size_in_megabytes::bigint * 1048576 AS max_bytes, queues.size_in_bytes"
     "  FROM queues, t WHERE queues.id = t.id),"
     " chk AS (SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM tq)"
     "  THEN sbemu_raise('SBN01', 'The messaging entity was deleted.')"
     "  WHEN (SELECT size_in_bytes + octet_length($9) > max_bytes FROM tq)"
     "  THEN sbemu_raise('SBQ01', 'The maximum entity size has been reached or exceeded (MaxSizeInMegabytes).')"
     "  ELSE true END AS ok),"
     " dup AS (INSERT INTO duplicate_detection (queue_id, message_id, seen_at)"
     "  SELECT t.id, $7, sbemu_ts($3) FROM tq, t, chk WHERE tq.dd AND $7 IS NOT NULL AND chk.ok"
     "  ON CONFLICT (queue_id, message_id) DO UPDATE SET seen_at = EXCLUDED.seen_at"
     "  WHERE duplicate_detection.seen_at <= EXCLUDED.seen_at - (SELECT win FROM tq) RETURNING 1),"
     " s AS (UPDATE queues SET next_sequence_number = next_sequence_number + 1,"
     "  size_in_bytes = size_in_bytes + octet_length($9), accessed_at = sbemu_ts($3)"
     "  WHERE id = (SELECT id FROM t) AND (SELECT ok FROM chk)"
     "  AND ((SELECT NOT dd FROM tq) OR $7 IS NULL OR EXISTS (SELECT 1 FROM dup))"
     "  RETURNING next_sequence_number - 1 AS seq)"
     " INSERT INTO messages (queue_id, sequence_number, subqueue, state, enqueued_at, available_at, expires_at,"
     " time_to_live_ms, message_id, session_id, dead_letter_reason, dead_letter_error_description, message)"
     " SELECT t.id, s.seq, CASE WHEN d.yes THEN 1 ELSE $10::smallint END, CASE WHEN d.yes THEN 0"
     " ELSE $2::smallint END, sbemu_ts($4), sbemu_ts($4), sbemu_ts($5), $6,"
     /* Service Bus stamps a MessageId on messages sent without one */
     " coalesce($7, replace(gen_random_uuid()::text, '-', '')), $8,"
     " CASE WHEN d.yes THEN $14 ELSE $11 END, CASE WHEN d.yes THEN $15 ELSE $12 END, $9"
     " FROM s, t, divert d RETURNING sequence_number",
     15, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_BYTEA, STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT}},
    /* Receiving is activity for AutoDeleteOnIdle. $1 queue, $2 now */
    {STMT_TOUCH, "UPDATE queues SET accessed_at = sbemu_ts($2) WHERE id = $1", 2, {STORE_OID_INT8, STORE_OID_INT8}},
    /* A lock that lapsed on a message delivered MaxDeliveryCount times dead-letters it.
     * $1 queue, $2 now, $3 reason, $4 description */
    {STMT_DLQ_LAPSED,
     "WITH x AS MATERIALIZED (SELECT m.queue_id, m.sequence_number FROM messages m JOIN queues q ON q.id = m.queue_id"
     " WHERE m.queue_id = $1 AND m.lock_token IS NOT NULL AND m.locked_until <= sbemu_ts($2) AND m.subqueue = 0"
     " AND m.delivery_count >= q.max_delivery_count FOR UPDATE OF m SKIP LOCKED)"
     " SELECT sbemu_dead_letter(queue_id, sequence_number, $3, $4, sbemu_ts($2)) FROM x",
     4, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT}},
    /* $5 locked-until */
    {STMT_CLAIM_LOCK,
     CLAIM_CANDIDATES "UPDATE messages m SET lock_token = gen_random_uuid(), locked_until = sbemu_ts($5),"
                      " available_at = sbemu_ts($5), delivery_count = m.delivery_count + 1"
                      " FROM c WHERE m.queue_id = $1 AND m.sequence_number = c.sequence_number"
                      " RETURNING" CLAIM_COLUMNS,
     5, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8}},
    {STMT_CLAIM_DELETE,
     CLAIM_CANDIDATES ", d AS (DELETE FROM messages m USING c WHERE m.queue_id = $1"
                      " AND m.sequence_number = c.sequence_number RETURNING m.*),"
                      " u AS (UPDATE queues SET size_in_bytes = size_in_bytes -"
                      " (SELECT coalesce(sum(octet_length(message)), 0) FROM d) WHERE id = $1)"
                      " SELECT" CLAIM_COLUMNS " FROM d m",
     4, {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8}},
    /* Settlements: $1 lock token, $2 queue, $3 now. No row back means the lock is lost. */
    {STMT_COMPLETE,
     "WITH d AS (DELETE FROM messages WHERE lock_token = $1 AND queue_id = $2 AND locked_until > sbemu_ts($3)"
     " RETURNING octet_length(message) AS n)"
     " UPDATE queues SET size_in_bytes = size_in_bytes - d.n FROM d WHERE queues.id = $2 RETURNING 1",
     3, {STORE_OID_UUID, STORE_OID_INT8, STORE_OID_INT8}},
    /* Abandon: one more delivery than MaxDeliveryCount allows dead-letters it. $4 reason, $5 description */
    {STMT_ABANDON,
     LOCKED_MESSAGE "SELECT CASE WHEN m.subqueue = 0 AND m.delivery_count >= q.max_delivery_count"
                    " THEN sbemu_dead_letter(m.queue_id, m.sequence_number, $4, $5, sbemu_ts($3))"
                    " ELSE sbemu_unlock(m.queue_id, m.sequence_number, sbemu_ts($3)) END"
                    " FROM m JOIN queues q ON q.id = m.queue_id",
     5, {STORE_OID_UUID, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT}},
    /* $4 reason, $5 description (either may be NULL) */
    {STMT_DEADLETTER,
     LOCKED_MESSAGE "SELECT sbemu_dead_letter(queue_id, sequence_number, $4, $5, sbemu_ts($3)) FROM m", 5,
     {STORE_OID_UUID, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT}},
    {STMT_DEFER,
     LOCKED_MESSAGE "UPDATE messages x SET state = 1, lock_token = NULL, locked_until = NULL,"
                    " available_at = sbemu_ts($3) FROM m"
                    " WHERE x.queue_id = m.queue_id AND x.sequence_number = m.sequence_number RETURNING 1",
     3, {STORE_OID_UUID, STORE_OID_INT8, STORE_OID_INT8}},
    /* Released: back to the queue as if never delivered (no delivery-count increment). */
    {STMT_RELEASE,
     LOCKED_MESSAGE "UPDATE messages x SET lock_token = NULL, locked_until = NULL, available_at = sbemu_ts($3),"
                    " delivery_count = greatest(x.delivery_count - 1, 0) FROM m"
                    " WHERE x.queue_id = m.queue_id AND x.sequence_number = m.sequence_number RETURNING 1",
     3, {STORE_OID_UUID, STORE_OID_INT8, STORE_OID_INT8}},
    /* ---- the background sweep; $1 now ---- */
    /* Expired messages that nobody holds a lock on: dead-lettered or dropped. $2 reason, $3 description */
    {STMT_SWEEP_EXPIRED,
     "WITH x AS MATERIALIZED (SELECT queue_id, sequence_number FROM messages"
     " WHERE expires_at <= sbemu_ts($1) AND subqueue = 0 AND state <> 1"
     " AND (lock_token IS NULL OR locked_until <= sbemu_ts($1))"
     " ORDER BY expires_at LIMIT 1000 FOR UPDATE SKIP LOCKED)"
     " SELECT queue_id FROM x WHERE sbemu_expire(queue_id, sequence_number, $2, $3, sbemu_ts($1))",
     3, {STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT}},
    /* Lapsed locks on messages that used up MaxDeliveryCount. $2 reason, $3 description */
    {STMT_SWEEP_LAPSED,
     "WITH x AS MATERIALIZED (SELECT m.queue_id, m.sequence_number FROM messages m JOIN queues q ON q.id = m.queue_id"
     " WHERE m.lock_token IS NOT NULL AND m.locked_until <= sbemu_ts($1) AND m.subqueue = 0"
     " AND m.delivery_count >= q.max_delivery_count ORDER BY m.locked_until LIMIT 1000 FOR UPDATE OF m SKIP LOCKED)"
     " SELECT queue_id FROM x WHERE sbemu_dead_letter(queue_id, sequence_number, $2, $3, sbemu_ts($1))",
     3, {STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT}},
    /* AutoDeleteOnIdle: no activity for that long and no scheduled message pending. */
    {STMT_SWEEP_IDLE,
     "DELETE FROM queues q WHERE auto_delete_on_idle IS NOT NULL"
     " AND accessed_at + auto_delete_on_idle <= sbemu_ts($1)"
     " AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.queue_id = q.id AND m.state = 2"
     " AND m.available_at > sbemu_ts($1)) RETURNING id, name",
     1, {STORE_OID_INT8}},
    /* Scheduled messages whose time has come, in schedule order. */
    {STMT_SWEEP_SCHEDULED,
     "WITH x AS MATERIALIZED (SELECT queue_id, sequence_number FROM messages"
     " WHERE state = 2 AND available_at <= sbemu_ts($1) ORDER BY available_at, sequence_number LIMIT 1000"
     " FOR UPDATE SKIP LOCKED)"
     " SELECT queue_id FROM x WHERE sbemu_activate(queue_id, sequence_number)",
     1, {STORE_OID_INT8}},
    /* The namespace clock only moves forward; every emulator hears of it. $1 offset (text) */
    {STMT_CLOCK_PUBLISH,
     "WITH u AS (UPDATE sbemu_clock SET offset_ms = greatest(offset_ms, $1::bigint) RETURNING offset_ms)"
     " SELECT pg_notify('sbemu_clock', offset_ms::text) FROM u",
     1, {STORE_OID_TEXT}},
    /* Forget MessageIds older than their queue's duplicate detection window. */
    {STMT_SWEEP_DUPLICATES,
     "DELETE FROM duplicate_detection WHERE ctid IN (SELECT d.ctid FROM duplicate_detection d"
     " JOIN queues q ON q.id = d.queue_id"
     " WHERE d.seen_at < sbemu_ts($1) - q.duplicate_detection_history_time_window"
     " ORDER BY d.seen_at LIMIT 1000)",
     1, {STORE_OID_INT8}},
};

int store_statements_prepare(PGconn *conn, char *err, size_t errlen)
{
    return store_prepare_all(conn, stmt_defs, sizeof stmt_defs / sizeof stmt_defs[0], err, errlen);
}

int store_prepare_all(PGconn *conn, const stmt_def *defs, size_t n, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        PGresult *r = PQprepare(conn, defs[i].name, defs[i].sql, defs[i].nparams, defs[i].types);
        int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        if (!ok)
            snprintf(err, errlen, "cannot prepare %s: %s", defs[i].name, PQresultErrorMessage(r));
        PQclear(r);
        if (!ok)
            return -1;
    }
    return 0;
}
