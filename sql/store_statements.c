/* Every statement the running store uses. Times arrive as millisecond
 * parameters from the emulator's clock (never now()), and every claim walks the
 * messages_ready index in sequence order, so its cost does not grow with the
 * backlog. */
#include "store_statements.h"

#include <stdio.h>

#define INT8 20
#define TEXT 25
#define BYTEA 17
#define UUID 2950

typedef struct stmt_def {
    const char *name;
    const char *sql;
    int nparams;
    Oid types[STORE_MAX_PARAMS];
} stmt_def;

/* Columns every claim returns, in this order (store_queue_ops.c parses them). */
#define CLAIM_RETURNING                                                                                          \
    " RETURNING m.sequence_number, sbemu_ms(m.enqueued_at), coalesce(sbemu_ms(m.locked_until), 0),"          \
    " coalesce(m.lock_token, '00000000-0000-0000-0000-000000000000'), m.delivery_count,"                       \
    " coalesce(m.time_to_live_ms, -1), m.dead_letter_reason, m.dead_letter_error_description, m.message,"                \
    " m.message_id"

/* $1 queue, $2 subqueue, $3 now, $4 max count */
#define CLAIM_CANDIDATES                                                                                          \
    "WITH c AS (SELECT sequence_number FROM messages"                                                           \
    " WHERE queue_id = $1 AND subqueue = $2::smallint AND state <> 1 AND available_at <= sbemu_ts($3)"          \
    " AND (subqueue = 1 OR expires_at IS NULL OR expires_at > sbemu_ts($3))"                                  \
    " ORDER BY sequence_number LIMIT $4 FOR UPDATE SKIP LOCKED) "

static const stmt_def stmt_defs[] = {
    {STMT_LOOKUP_QUEUE,
     "SELECT id, name, status, requires_session, sbemu_interval_ms(lock_duration), max_delivery_count::int8,"
     " coalesce(sbemu_interval_ms(default_message_time_to_live), -1), dead_lettering_on_message_expiration,"
     " max_size_in_megabytes::int8, requires_duplicate_detection,"
     " sbemu_interval_ms(duplicate_detection_history_time_window)"
     " FROM queues WHERE lower(name) = lower($1)",
     1, {TEXT}},
    /* $1 queue, $2 state, $3 enqueued, $4 available, $5 expires, $6 ttl, $7 message-id, $8 session, $9 bytes */
    {STMT_SEND,
     "WITH q AS (UPDATE queues SET next_sequence_number = next_sequence_number + 1 WHERE id = $1"
     " RETURNING next_sequence_number - 1 AS seq)"
     " INSERT INTO messages (queue_id, sequence_number, state, enqueued_at, available_at, expires_at,"
     " time_to_live_ms, message_id, session_id, message)"
     " SELECT $1, q.seq, $2::smallint, sbemu_ts($3), sbemu_ts($4), sbemu_ts($5), $6,"
     /* Service Bus stamps a MessageId on messages sent without one */
     " coalesce($7, replace(gen_random_uuid()::text, '-', '')), $8, $9 FROM q"
     " RETURNING sequence_number",
     9, {INT8, INT8, INT8, INT8, INT8, INT8, TEXT, TEXT, BYTEA}},
    /* A lock that lapsed on a message delivered MaxDeliveryCount times dead-letters it. $1 queue, $2 now */
    {STMT_DLQ_LAPSED,
     "UPDATE messages m SET subqueue = 1, lock_token = NULL, locked_until = NULL, available_at = sbemu_ts($2),"
     " dead_letter_reason = 'MaxDeliveryCountExceeded',"
     " dead_letter_error_description = 'Message could not be consumed after ' || q.max_delivery_count"
     " || ' delivery attempts.'"
     " FROM queues q WHERE q.id = $1 AND m.queue_id = $1 AND m.lock_token IS NOT NULL"
     " AND m.locked_until <= sbemu_ts($2) AND m.subqueue = 0 AND m.delivery_count >= q.max_delivery_count",
     2, {INT8, INT8}},
    /* $5 locked-until */
    {STMT_CLAIM_LOCK,
     CLAIM_CANDIDATES "UPDATE messages m SET lock_token = gen_random_uuid(), locked_until = sbemu_ts($5),"
                      " available_at = sbemu_ts($5), delivery_count = m.delivery_count + 1, state = 0"
                      " FROM c WHERE m.queue_id = $1 AND m.sequence_number = c.sequence_number" CLAIM_RETURNING,
     5, {INT8, INT8, INT8, INT8, INT8}},
    {STMT_CLAIM_DELETE,
     CLAIM_CANDIDATES "DELETE FROM messages m USING c WHERE m.queue_id = $1"
                      " AND m.sequence_number = c.sequence_number" CLAIM_RETURNING,
     4, {INT8, INT8, INT8, INT8}},
    /* Settlements: $1 lock token, $2 queue, $3 now. No row back means the lock is lost. */
    {STMT_COMPLETE,
     "DELETE FROM messages WHERE lock_token = $1 AND queue_id = $2 AND locked_until > sbemu_ts($3)"
     " RETURNING subqueue",
     3, {UUID, INT8, INT8}},
    {STMT_ABANDON,
     "UPDATE messages m SET lock_token = NULL, locked_until = NULL, available_at = sbemu_ts($3),"
     " subqueue = CASE WHEN m.subqueue = 0 AND m.delivery_count >= q.max_delivery_count THEN 1"
     " ELSE m.subqueue END,"
     " dead_letter_reason = CASE WHEN m.subqueue = 0 AND m.delivery_count >= q.max_delivery_count"
     " THEN 'MaxDeliveryCountExceeded' ELSE m.dead_letter_reason END,"
     " dead_letter_error_description = CASE WHEN m.subqueue = 0 AND m.delivery_count >= q.max_delivery_count"
     " THEN 'Message could not be consumed after ' || q.max_delivery_count || ' delivery attempts.'"
     " ELSE m.dead_letter_error_description END"
     " FROM queues q WHERE q.id = m.queue_id AND m.lock_token = $1 AND m.queue_id = $2"
     " AND m.locked_until > sbemu_ts($3) RETURNING m.subqueue",
     3, {UUID, INT8, INT8}},
    /* $4 reason, $5 description */
    {STMT_DEADLETTER,
     "UPDATE messages SET subqueue = 1, lock_token = NULL, locked_until = NULL, available_at = sbemu_ts($3),"
     " dead_letter_reason = $4, dead_letter_error_description = $5"
     " WHERE lock_token = $1 AND queue_id = $2 AND locked_until > sbemu_ts($3) RETURNING subqueue",
     5, {UUID, INT8, INT8, TEXT, TEXT}},
    {STMT_DEFER,
     "UPDATE messages SET state = 1, lock_token = NULL, locked_until = NULL, available_at = sbemu_ts($3)"
     " WHERE lock_token = $1 AND queue_id = $2 AND locked_until > sbemu_ts($3) RETURNING subqueue",
     3, {UUID, INT8, INT8}},
    /* Released: back to the queue as if never delivered (no delivery-count increment). */
    {STMT_RELEASE,
     "UPDATE messages SET lock_token = NULL, locked_until = NULL, available_at = sbemu_ts($3),"
     " delivery_count = greatest(delivery_count - 1, 0)"
     " WHERE lock_token = $1 AND queue_id = $2 AND locked_until > sbemu_ts($3) RETURNING subqueue",
     3, {UUID, INT8, INT8}},
};

int store_statements_prepare(PGconn *conn, char *err, size_t errlen)
{
    for (size_t i = 0; i < sizeof stmt_defs / sizeof stmt_defs[0]; i++) {
        const stmt_def *d = &stmt_defs[i];
        PGresult *r = PQprepare(conn, d->name, d->sql, d->nparams, d->types);
        int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        if (!ok)
            snprintf(err, errlen, "cannot prepare %s: %s", d->name, PQresultErrorMessage(r));
        PQclear(r);
        if (!ok)
            return -1;
    }
    return 0;
}
