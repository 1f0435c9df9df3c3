/* SQL shared by the claims of messages (store_statements.c) and of topic
 * logs (store_log.c): what a claim returns and which rows it may take. */
#ifndef STORE_CLAIM_SQL_H
#define STORE_CLAIM_SQL_H

#include "store_token_sql.h"

/* Columns every claim returns, in this order (store_claim.c parses them).
 * The times go out as timestamptz, which binary results carry as an integer
 * (microseconds since 2000), read as milliseconds by col_ts_ms: turned into
 * milliseconds here (sbemu_ms, numeric arithmetic) they cost 0.26 us each,
 * three a message, on the backend every claim waits for. */
#define CLAIM_COLUMNS                                                                                             \
    " m.sequence_number, m.enqueued_at, m.locked_until,"                    \
    " coalesce(m.lock_token, '00000000-0000-0000-0000-000000000000'), m.delivery_count,"                       \
    " coalesce(m.time_to_live_ms, -1), m.dead_letter_reason, m.dead_letter_error_description, m.message,"     \
    " m.message_id, m.dead_letter_source, m.expires_at"

/* A message row's body size in bytes: a subscription's row locked from its
 * topic's log has no body, only its size (migration 028). row: the alias of
 * messages. */
#define MESSAGE_BYTES(row) "coalesce(octet_length(" row ".message), " row ".body_bytes)"
/* Its body, from the log when the row has none (in SET: the row as it was). */
#define MESSAGE_BODY(row) "coalesce(" row ".message, sbemu_log_body(" row ".entity_id, " row ".sequence_number))"

/* The names a lock claim gives its rows (CLAIM_COLUMNS), in the CTE u
 * that the story (store_story_statements.c) and a subscription's claim read. */
#define CLAIM_NAMES "(seq, enq, until, tok, dc, ttl, reason, descr, msg, mid, src, exp)"

/* The batch of locks given to the rows of `rows` (a CTE with a column seq)
 * until `until` (migration 025): how the sweep finds them once they lapse,
 * and, for a session's ($session: its id, or NULL), how its release and
 * renewal find them. $1 is the entity. A row holds at most
 * STORE_LOCK_BATCH_SPAN sequence numbers, so that it fits a page
 * uncompressed (migration 025 stores them PLAIN: compressing a claim's 4 KB
 * cost more than the claim's 500 row updates).
 *
 * A claim's rows are cut by their place in the claim, not by the span of
 * their numbers: a session's messages lie far apart when many sessions were
 * sent at once (1,000 sessions sent round robin: 1,000 apart), and cut by
 * span, each of a session's 20 messages took a row of its own, three WAL
 * records each, and its release or sweep deleted 20. (The rarer statements
 * that write lock batches, the sweep's and a fault's, still cut by span.) */
#define STORE_LOCK_BATCH_SPAN 900
#define LOCK_BATCH(rows, session, until)                                                                          \
    " lb AS (INSERT INTO lock_batches (entity_id, session_id, locked_until, sequence_numbers)"                    \
    " SELECT $1, " session ", " until ", array_agg(seq) FROM (SELECT seq, row_number() OVER () - 1 AS i FROM "    \
    rows ") r GROUP BY i / " STORE_STRINGIFY(STORE_LOCK_BATCH_SPAN) ")"
/* The most messages one claim takes (store_claim and store_claim_session
 * take no more, whatever they are asked for), so that a claim's locks are one
 * lock_batches row: CLAIM_LOCK_BATCH, an aggregate, where LOCK_BATCH numbers
 * the rows and groups them (0.3 us a message against 0.1). */
#define STORE_CLAIM_MAX STORE_LOCK_BATCH_SPAN
#define CLAIM_LOCK_BATCH(rows, session, until)                                                                    \
    " lb AS (INSERT INTO lock_batches (entity_id, session_id, locked_until, sequence_numbers)"                    \
    " SELECT $1, " session ", " until ", array_agg(seq) FROM " rows " HAVING count(*) > 0)"

/* The subqueue q, written as a range of one value, with the claim ordered by
 * subqueue first: an order only messages_ready gives without a sort (with
 * `subqueue = q` the planner drops the subqueue from the order, and the
 * primary key walked from a sequence number gives the same order). With
 * statistics of a drained table that kept its pages (migration 026: no live
 * row on many pages, so every index looks empty), the two tied, and the
 * primary key's walk passes the entity's scheduled, deferred and
 * dead-lettered messages above the claim's start. */
#define ONE_SUBQUEUE(q) " subqueue >= " q " AND subqueue <= " q

/* The rows a claim takes, as `m.ctid = ANY(...)` (CLAIM_CANDIDATES) or,
 * for a lock claim, locked first in a CTE c of row addresses and sequence
 * numbers (CLAIM_LOCKING), which the lock batch reads and the UPDATE names
 * (CLAIM_LOCKED): the UPDATE is then the statement itself, and its rows
 * stream out instead of being kept, bodies and all, for a second reader.
 *
 * $1 entity, $2 subqueue, $3 now, $4 max count, and `from` the lowest sequence
 * number worth looking at. Walks messages_ready, which holds every active
 * message, from `from`, and skips the locked ones on their rows (no index
 * reads a lock column, so that a claim is a HOT update: migration 025). The
 * entries of messages claimed and completed before `from` stay in the index
 * until vacuum, and a claim that walked them, and the messages in flight,
 * again would cost what the queue has seen since then: the emulator keeps
 * `from` past what its claims of the entity took, and rewinds it when
 * messages below may be claimable again (amqp_hint.h, link_sender.c).
 * Expired messages are never delivered (the dead-letter subqueue ignores
 * TTL); the sweep removes them. */
#define CLAIM_WHERE(from)                                                                                         \
    " WHERE entity_id = $1 AND" ONE_SUBQUEUE("$2::smallint") " AND state = 0 AND lock_token IS NULL"            \
    " AND sequence_number >= " from                                                                            \
    " AND (subqueue = 1 OR expires_at IS NULL OR expires_at > sbemu_ts($3))"                                  \
    " ORDER BY subqueue, sequence_number LIMIT $4 FOR UPDATE SKIP LOCKED"
#define CLAIM_CANDIDATES(from) "m.ctid = ANY(ARRAY(SELECT ctid FROM messages" CLAIM_WHERE(from) "))"
#define CLAIM_LOCKING(where) "c AS MATERIALIZED (SELECT ctid, sequence_number AS seq FROM messages" where ")"
#define CLAIM_LOCKED "m.ctid = ANY(ARRAY(SELECT ctid FROM c))"
/* The messages of session p, written as a range of one value: it bounds a
 * walk of messages_session as `=` does, but leaves session_id out of the
 * planner's constants, so `ORDER BY session_id, sequence_number` is an order
 * only messages_session gives. With `session_id = p` the order by session was
 * redundant, and messages_pkey walked from a sequence number gave the same
 * order: with statistics taken while the table held one session's backlog
 * (`= p` then keeps every row), the claim walked every other session's
 * messages, 18,981 rows filtered per claim of 20. (Text compares equal
 * only when identical: deterministic collations break ties bytewise.) */
#define ONE_SESSION(p) " session_id >= " p " AND session_id <= " p

/* The candidates of session `sid` (an expression), taken only while `held`
 * (a condition) says the receiver holds the session's lock; for a session
 * receiver's claim (CLAIM_SESSION_WHERE), $7 its session and $8 its session
 * lock token. Walks messages_session (that session's messages only), and takes
 * nothing unless the receiver still holds the session's lock, nor while a
 * message of the session still carries a lock that lapsed (a previous
 * holder's, until the sweep returns it): taking the messages after it first
 * would break the session's order. Those locks are found through the
 * session's lock batches whose time has passed (lock_batches_session), and
 * looked at by primary key, then by address (store_token_sql.h): no walk of
 * the session's backlog.
 *
 * Written so that no other index can answer it, whatever the statistics say.
 * Without statistics on a table that traffic had grown, the generic plan
 * guessed a session's messages lay in a one-row range of messages_ready and
 * walked the entity's whole ready range for each claim (19,600 rows filtered
 * per claim of 20, 1,000 sessions at a third of their rate). `IS TRUE` hides
 * `state = 0` from the ready indexes' predicates, and the order by session
 * first is one only messages_session gives without a sort (ONE_SESSION). */
#define SESSION_CLAIMABLE(from, sid, held)                                                                        \
    " WHERE entity_id = $1 AND" ONE_SESSION(sid) " AND subqueue = $2::smallint AND (state = 0) IS TRUE"          \
    " AND lock_token IS NULL AND sequence_number >= " from                                                     \
    " AND (expires_at IS NULL OR expires_at > sbemu_ts($3))"                                                   \
    " AND " held                                                                                              \
    " AND NOT EXISTS (SELECT 1 FROM messages x WHERE x.ctid = ANY(ARRAY(SELECT " MESSAGE_TID("$1", "k.seq")      \
    " FROM lock_batches b CROSS JOIN LATERAL unnest(b.sequence_numbers) AS k(seq) WHERE b.entity_id = $1"      \
    " AND b.session_id = " sid " AND (b.locked_until <= sbemu_ts($3)) IS TRUE))"                               \
    " AND x.lock_token IS NOT NULL AND (x.locked_until <= sbemu_ts($3)) IS TRUE)"                              \
    " ORDER BY session_id, sequence_number LIMIT $4 FOR UPDATE SKIP LOCKED"
#define CLAIM_SESSION_WHERE(from)                                                                                 \
    SESSION_CLAIMABLE(from, "$7",                                                                               \
                      "EXISTS (SELECT 1 FROM sessions s WHERE s.entity_id = $1 AND s.session_id = $7"            \
                      " AND s.lock_token = $8 AND s.locked_until > sbemu_ts($3))")
/* Takes a session's lock, as the CTEs found, pick and held: sid the
 * session asked for (NULL: the next available: the session of the oldest
 * claimable message whose session nobody holds, from sequence number
 * pick_from on), token the receiver's lock token, until its locked-until;
 * $1 entity, $3 now. Locks it if it is free or its lock lapsed; held is its
 * row (session_id, locked_until), or nothing (held by another receiver, or
 * none available). Two emulators picking the same session meet on its row:
 * one locks it. pick_from: the entries of messages completed before it stay
 * in messages_session_ready until vacuum, and a pick that walked them all
 * again would cost what the entity has seen since (the wire keeps where the
 * last pick found its message, amqp_hint.h). MATERIALIZED: found and pick
 * are each read twice, and an inlined pick ran its search twice (two
 * InitPlans). */
#define SESSION_TAKE(sid, token, until, pick_from)                                                                \
    "found AS MATERIALIZED (SELECT m.session_id, m.sequence_number FROM messages m"                             \
    "  WHERE " sid "::text IS NULL AND m.entity_id = $1 AND m.subqueue = 0 AND m.state = 0"                      \
    "  AND m.lock_token IS NULL AND m.session_id IS NOT NULL AND m.sequence_number >= " pick_from                 \
    "  AND (m.expires_at IS NULL OR m.expires_at > sbemu_ts($3))"                                              \
    "  AND NOT EXISTS (SELECT 1 FROM sessions x WHERE x.entity_id = $1 AND x.session_id = m.session_id"         \
    "  AND x.locked_until > sbemu_ts($3))"                                                                     \
    "  ORDER BY m.sequence_number LIMIT 1),"                                                                   \
    " pick AS MATERIALIZED (SELECT coalesce(" sid ", (SELECT f.session_id FROM found f)) AS sid),"              \
    " held AS (INSERT INTO sessions AS s (entity_id, session_id, lock_token, locked_until, updated_at)"         \
    " SELECT $1, sid, " token ", sbemu_ts(" until "), sbemu_ts($3) FROM pick WHERE sid IS NOT NULL"              \
    " ON CONFLICT (entity_id, session_id) DO UPDATE SET lock_token = EXCLUDED.lock_token,"                      \
    " locked_until = EXCLUDED.locked_until WHERE s.locked_until IS NULL OR s.locked_until <= EXCLUDED.updated_at" \
    " RETURNING s.session_id, s.locked_until)"

/* The locked-until of session $7's lock, held by its receiver ($8). */
#define SESSION_LOCKED_UNTIL                                                                                     \
    "(SELECT s.locked_until FROM sessions s WHERE s.entity_id = $1 AND s.session_id = $7 AND s.lock_token = $8)"
#define CLAIM_SESSION_CANDIDATES(from) "m.ctid = ANY(ARRAY(SELECT ctid FROM messages" CLAIM_SESSION_WHERE(from) "))"
/* (The candidates are named by row address, not joined: a generic plan
 * guesses that LIMIT $4 keeps a tenth of the range and would hash-join the
 * whole table; `ctid = ANY(...)` is a TID scan, as long as nothing else in
 * the statement joins messages on the columns of an index: store_token_sql.h.) */

#endif
