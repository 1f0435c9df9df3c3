/* SQL shared by the claims of messages (store_statements.c) and of topic
 * logs (store_log.c): what a claim returns and which rows it may take. */
#ifndef STORE_CLAIM_SQL_H
#define STORE_CLAIM_SQL_H

/* Columns every claim returns, in this order (store_claim.c parses them). */
#define CLAIM_COLUMNS                                                                                             \
    " m.sequence_number, sbemu_ms(m.enqueued_at), coalesce(sbemu_ms(m.locked_until), 0),"                    \
    " coalesce(m.lock_token, '00000000-0000-0000-0000-000000000000'), m.delivery_count,"                       \
    " coalesce(m.time_to_live_ms, -1), m.dead_letter_reason, m.dead_letter_error_description, m.message,"     \
    " m.message_id, m.dead_letter_source, coalesce(sbemu_ms(m.expires_at), 0)"

/* $1 entity, $2 subqueue, $3 now, $4 max count, and `from` the lowest sequence
 * number worth looking at. Walks messages_ready, which holds only active
 * messages nobody has locked, from `from`: the entries of messages claimed
 * and completed before it stay in the index until vacuum, and a claim that
 * walked them all again would cost what the queue has seen since then (the
 * receiving link keeps `from` past what it claimed, and rewinds it when
 * messages below may be claimable again; link_sender.c). Expired messages are
 * never delivered (the dead-letter subqueue ignores TTL); the sweep removes
 * them. */
#define CLAIM_CANDIDATES(from)                                                                                    \
    "m.ctid = ANY(ARRAY(SELECT ctid FROM messages"                                                              \
    " WHERE entity_id = $1 AND subqueue = $2::smallint AND state = 0 AND lock_token IS NULL"                    \
    " AND sequence_number >= " from                                                                            \
    " AND (subqueue = 1 OR expires_at IS NULL OR expires_at > sbemu_ts($3))"                                  \
    " ORDER BY sequence_number LIMIT $4 FOR UPDATE SKIP LOCKED))"
/* A session receiver's candidates: $7 its session, $8 its session lock
 * token. Walks messages_session (that session's messages only), and takes
 * nothing unless the receiver still holds the session's lock, nor while a
 * message of the session still carries a lock that lapsed (a previous
 * holder's, until the sweep returns it): taking the messages after it first
 * would break the session's order.
 *
 * Written so that no other index can answer it, whatever the statistics say.
 * Without statistics on a table that traffic had grown, the generic plan
 * guessed a session's messages lay in a one-row range of messages_ready and
 * walked the entity's whole ready range for each claim (19,600 rows filtered
 * per claim of 20, 1,000 sessions at a third of their rate). `IS TRUE` hides
 * `state = 0` from the ready indexes' predicates, and the order by session
 * first is one only messages_session gives without a sort. The guard's
 * `IS TRUE`s likewise leave it messages_session_locked, not messages_held
 * with messages_lock_expiry. */
#define CLAIM_SESSION_CANDIDATES(from)                                                                            \
    "m.ctid = ANY(ARRAY(SELECT ctid FROM messages"                                                              \
    " WHERE entity_id = $1 AND session_id = $7 AND subqueue = $2::smallint AND (state = 0) IS TRUE"             \
    " AND lock_token IS NULL AND sequence_number >= " from                                                     \
    " AND (expires_at IS NULL OR expires_at > sbemu_ts($3))"                                                   \
    " AND EXISTS (SELECT 1 FROM sessions s WHERE s.entity_id = $1 AND s.session_id = $7"                       \
    " AND s.lock_token = $8 AND s.locked_until > sbemu_ts($3))"                                                \
    " AND NOT EXISTS (SELECT 1 FROM messages x WHERE x.entity_id = $1 AND x.session_id = $7"                   \
    " AND (x.subqueue = 0) IS TRUE AND x.lock_token IS NOT NULL AND (x.locked_until <= sbemu_ts($3)) IS TRUE)"  \
    " ORDER BY session_id, sequence_number LIMIT $4 FOR UPDATE SKIP LOCKED))"
/* (The candidates are named by row address, not joined: a generic plan
 * guesses that LIMIT $4 keeps a tenth of the range and would hash-join the
 * whole table; `ctid = ANY(...)` can only be a TID scan.) */

#endif
