/* How every statement that takes a lock token finds its message (migration
 * 024): a token's first 8 bytes are the message's sequence number, so the
 * row's address is found by primary key, in a scalar subquery on the entity
 * it was received from and that number (MESSAGE_TID), the row is taken by
 * that address (a TID scan), and then the whole token is compared.
 *
 * Never by joining messages on its key's columns. A join's plan follows the
 * statistics: taken while the table was drained (no live row on many pages),
 * they make messages look empty, and the generic plans hashed a walk of the
 * whole primary key for every batch of completes, or walked an entity's
 * every message for each of a session's sequence numbers (test_store_plans,
 * "statistics of a drained table"). The scalar subquery can only probe the
 * primary key: no other index of messages holds every row. And nothing else
 * in such a statement may join messages on an index's columns: that offers
 * the planner a walk of the index in key order (MAX_DELIVERY_COUNT).
 *
 * The token comparison is written `(lock_token = ...) IS TRUE` on purpose:
 * plainly written, it proves the predicate of messages_held (locked or set
 * aside), which a plan could then walk. */
#ifndef STORE_TOKEN_SQL_H
#define STORE_TOKEN_SQL_H

/* The address of message (entity, seq), by primary key; entity, seq: SQL expressions */
#define MESSAGE_TID(entity, seq)                                                                                 \
    "(SELECT p.ctid FROM messages p WHERE p.entity_id = " entity " AND p.sequence_number = " seq ")"

/* row: the alias of messages; entity, token: SQL expressions */
#define BY_LOCK_TOKEN(row, entity, token)                                                                      \
    " " row ".ctid = " MESSAGE_TID(entity, "sbemu_token_seq(" token ")")                                       \
    " AND (" row ".lock_token = " token ") IS TRUE"

/* The rows of `set` (a CTE with a column tid of addresses), joined by
 * address: a TID scan per entry. */
#define BY_TID(row, set) " " row ".ctid = " set ".tid"

/* The MaxDeliveryCount of row's entity, as a scalar subquery: joined, the
 * entity (on messages' first key column) offered the planner a walk of the
 * primary key in entity order, which it took over the TID scan. */
#define MAX_DELIVERY_COUNT(row) "(SELECT q.max_delivery_count FROM entities q WHERE q.id = " row ".entity_id)"

#endif
