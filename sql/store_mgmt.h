/* Typed store operations behind the $management node (peek, renew-lock,
 * receive-by-sequence-number, schedule, cancel, batch delete). Same contract as
 * store_queue.h: callbacks run after the transaction is known, every time is a
 * millisecond Unix time from the emulator's clock, and every operation also
 * stamps entity_runtime.accessed_at (AutoDeleteOnIdle activity) in its transaction.
 *
 * Multi-item operations are all-or-nothing where Service Bus is: a renew-lock
 * with one lost token renews none, a receive-by-sequence-number naming one
 * message that is not deferred locks none. The SQL itself guards that (the
 * store commits whatever ran, so a parse-time verdict could not undo it). */
#ifndef STORE_MGMT_H
#define STORE_MGMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ent_status.h"
#include "store.h"
#include "store_queue.h"

/* Prepared statement names (SQL in store_mgmt_statements.c). */
#define STMT_MGMT_PEEK "sb_mgmt_peek"
#define STMT_MGMT_RENEW "sb_mgmt_renew"
#define STMT_MGMT_DEFERRED_FIND "sb_mgmt_deferred_find"
#define STMT_MGMT_DEFERRED_LOCK "sb_mgmt_deferred_lock"
#define STMT_MGMT_DEFERRED_DELETE "sb_mgmt_deferred_delete"
#define STMT_MGMT_CANCEL "sb_mgmt_cancel"
#define STMT_MGMT_BATCH_DELETE "sb_mgmt_batch_delete"
#define STMT_MGMT_READ_LOCKED "sb_mgmt_read_locked"
#define STMT_MGMT_REPLACE_LOCKED "sb_mgmt_replace_locked"

/* One stored message as peek and receive-by-sequence-number return it. Memory
 * is owned by the store until the callback returns. */
typedef struct store_mgmt_msg {
    int64_t sequence_number;
    int64_t enqueued_ms;
    int64_t locked_until_ms; /* 0: not locked */
    int64_t ttl_ms;          /* -1: none */
    int32_t delivery_count;  /* locks granted so far (this one included for a receive) */
    int state;               /* 0 active, 1 deferred, 2 scheduled (a due schedule reads 0) */
    bool locked;
    uint8_t lock_token[16];  /* RFC 4122 order, when locked */
    const char *dead_letter_reason;      /* NULL: none */
    const char *dead_letter_description; /* NULL: none */
    const char *message_id;
    const char *dead_letter_source;      /* NULL: none (set on auto-forwarded dead letters) */
    int64_t expires_ms;                  /* 0: never */
    const uint8_t *bytes;
    size_t len;
} store_mgmt_msg;

typedef void (*store_mgmt_msgs_cb)(void *ctx, sb_status st, const store_mgmt_msg *msgs, size_t n);

/* Up to max messages of (queue, subqueue) with sequence_number >= from, in
 * order, every state, locked or not. Messages of the queue (not its DLQ) whose
 * expires_at has passed are left out unless deferred: the emulator's expiry is
 * lazy, and showing them would make a peek depend on when the sweep last ran. */
void store_peek(store *s, int64_t entity_id, int subqueue, int64_t from_seq, int max, int64_t now_ms,
                store_mgmt_msgs_cb cb, void *ctx);
/* The same within one session (its active, deferred and scheduled messages). */
void store_peek_session(store *s, int64_t entity_id, const char *session_id, int64_t from_seq, int max,
                        int64_t now_ms, store_mgmt_msgs_cb cb, void *ctx);

/* Extends the locks of n tokens (RFC order) to until_ms. until[i] answers
 * tokens[i]. SB_ERR_LOCK_LOST (and nothing renewed) when any token is unknown
 * or its lock lapsed. */
typedef void (*store_renew_cb)(void *ctx, sb_status st, const int64_t *until, size_t n);
void store_renew_locks(store *s, int64_t entity_id, const uint8_t (*tokens)[16], size_t n, int64_t now_ms,
                       int64_t until_ms, store_renew_cb cb, void *ctx);

/* Takes deferred messages by sequence number: locks them until until_ms (they
 * stay deferred) or deletes them. SB_ERR_MESSAGE_NOT_FOUND, with the first
 * sequence number that is no unlocked deferred message in `missing`, when any
 * is not; then nothing is taken. Messages come back in request order. */
typedef void (*store_deferred_cb)(void *ctx, sb_status st, int64_t missing, const store_mgmt_msg *msgs, size_t n);
void store_receive_deferred(store *s, int64_t entity_id, int subqueue, const int64_t *seqs, size_t n, bool delete,
                            int64_t now_ms, int64_t until_ms, store_deferred_cb cb, void *ctx);

/* Inserts messages like a send (duplicate detection, MaxSizeInMegabytes,
 * subqueue and dead-letter reason as given) at their scheduled time: state 2,
 * enqueued and available at enqueued_ms (available_ms is not used). All in one
 * transaction: SB_ERR_QUOTA_EXCEEDED or SB_ERR_NOT_FOUND fail them all.
 * seqs[i] is the sequence number of msgs[i], 0 for a duplicate dropped. */
typedef void (*store_seqs_cb)(void *ctx, sb_status st, const int64_t *seqs, size_t n);
void store_schedule(store *s, int64_t entity_id, const store_new_message *msgs, size_t n, int64_t now_ms,
                    store_seqs_cb cb, void *ctx);

/* Deletes the scheduled messages among seqs that are not yet due; others are
 * ignored (cancelling twice is harmless). */
void store_cancel_scheduled(store *s, int64_t entity_id, const int64_t *seqs, size_t n, int64_t now_ms,
                            store_status_cb cb, void *ctx);

/* Deletes up to max unlocked messages of (queue, subqueue) enqueued before
 * before_ms, lowest sequence numbers first; count is how many went. */
typedef void (*store_count_cb)(void *ctx, sb_status st, int64_t count);
void store_batch_delete(store *s, int64_t entity_id, int subqueue, int max, int64_t before_ms, int64_t now_ms,
                        store_count_cb cb, void *ctx);

/* The stored bytes of the message a live lock token (RFC order) holds, for a
 * rewrite (properties-to-modify); SB_ERR_LOCK_LOST when the lock is gone. The
 * bytes belong to the store until the callback returns. */
typedef void (*store_bytes_cb)(void *ctx, sb_status st, const uint8_t *bytes, size_t len);
void store_read_locked_message(store *s, int64_t entity_id, const uint8_t token[16], int64_t now_ms,
                               store_bytes_cb cb, void *ctx);
/* Replaces those bytes (size_in_bytes follows); SB_ERR_LOCK_LOST as above. */
void store_replace_locked_message(store *s, int64_t entity_id, const uint8_t token[16], int64_t now_ms,
                                  const uint8_t *bytes, size_t len, store_status_cb cb, void *ctx);

/* Only stamps entity_runtime.accessed_at (for operations built on store_queue.h). */
void store_touch_queue(store *s, int64_t entity_id, int64_t now_ms, store_status_cb cb, void *ctx);

#endif
