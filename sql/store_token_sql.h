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

#endif
