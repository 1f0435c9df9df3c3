/* How every statement that takes a lock token finds its message (migration
 * 024): a token's first 8 bytes are the message's sequence number, so the row
 * is found by primary key, the entity it was received from and that number,
 * and then the whole token is compared. The comparison is written
 * `(lock_token = ...) IS TRUE` on purpose: plainly written, it proves the
 * predicate of messages_held (locked or set aside), and generic plans probed
 * that index by entity and sequence number, which with subqueue between them
 * walks every held message of the entity (tests/unit/test_store_plans.c
 * requires messages_pkey). */
#ifndef STORE_TOKEN_SQL_H
#define STORE_TOKEN_SQL_H

/* row: the alias of messages; entity, token: SQL expressions */
#define BY_LOCK_TOKEN(row, entity, token)                                                                      \
    " " row ".entity_id = " entity " AND " row ".sequence_number = sbemu_token_seq(" token ")"                 \
    " AND (" row ".lock_token = " token ") IS TRUE"

/* Statements that act on messages named by a set of (entity, sequence
 * number) pairs find each row's address first, by primary key, and then
 * take the rows by address, never by joining the set to messages on those
 * columns. A join's plan follows the statistics: taken while the table was
 * drained (no live row on many pages), they make messages look empty, and the
 * generic plans hashed a walk of the whole primary key for every batch of
 * completes, or walked an entity's every message for each of a session's
 * sequence numbers (test_store_plans, "statistics of a drained table").
 * MESSAGE_TID is a scalar subquery (its plan can only probe the primary key:
 * no other index of messages holds every row), and BY_TID joins the rows of
 * `set` (a CTE with a column tid) by address: a TID scan per entry, since no
 * index offers messages in address order and the store's connection has no
 * sequential scans. (`row.ctid = ANY(ARRAY(SELECT tid FROM set))` as well
 * cost 50 % more per complete: the array, its sort, a hash join.) Joined so,
 * nothing else in the statement may join messages on an index's columns: that
 * offers the planner a walk of the index in key order (MAX_DELIVERY_COUNT). */
#define MESSAGE_TID(entity, seq)                                                                                 \
    "(SELECT p.ctid FROM messages p WHERE p.entity_id = " entity " AND p.sequence_number = " seq ")"
#define BY_TID(row, set) " " row ".ctid = " set ".tid"
/* The same for a lock token's message (BY_LOCK_TOKEN's row, by address):
 * its tid, and the rows of `set` (a CTE with columns tid and token) still
 * under that token. */
#define LOCKED_TID(entity, token) MESSAGE_TID(entity, "sbemu_token_seq(" token ")")
/* The MaxDeliveryCount of row's entity, as a scalar subquery: joined, the
 * entity (on messages' first key column) offered the planner a walk of the
 * primary key in entity order, which it took over the TID scan. */
#define MAX_DELIVERY_COUNT(row) "(SELECT q.max_delivery_count FROM entities q WHERE q.id = " row ".entity_id)"
#define BY_LOCKED_TID(row, set) BY_TID(row, set) " AND (" row ".lock_token = " set ".token) IS TRUE"

#endif
