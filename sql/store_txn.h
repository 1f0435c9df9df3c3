/* A Service Bus transaction's work, committed as one PostgreSQL transaction
 * or not at all. The emulator collects the work of a transaction as its
 * client does it (sends and publishes, settlements) and commits it on
 * discharge: one op whose statements are, in order, a guard that every
 * settlement still holds its lock (else SB_ERR_LOCK_LOST and nothing
 * happens), the completes, the other settlements, then each send or publish
 * as the same merged statement a send outside a transaction uses, for its
 * own rows only. Nothing is visible to anyone before the commit.
 *
 * Ownership: the caller owns a store_txn until store_txn_commit (which takes
 * it) or store_txn_free. Everything added is copied. */
#ifndef STORE_TXN_H
#define STORE_TXN_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"
#include "store_queue.h"
#include "store_topic.h"

typedef struct store_txn store_txn;

/* The settlements t holds (owned by t), in the order they joined. */
size_t store_txn_settlements(const store_txn *t, const store_settlement **out);

store_txn *store_txn_new(void);
void store_txn_free(store_txn *t);
/* 0, or -1 when out of memory (the transaction is then unusable: free it). */
int store_txn_send(store_txn *t, int64_t entity_id, const store_new_message *msgs, size_t n);
int store_txn_publish(store_txn *t, int64_t topic_id, const store_copy *rows, size_t n);
int store_txn_settle(store_txn *t, const store_settlement *x);
/* Scheduling in a transaction: the messages (state 3, see store_queue.h) are
 * stored at once, invisible until pending_until_ms, and cb answers their
 * sequence numbers; store_txn_activate makes them part of the commit, which
 * turns them into scheduled messages; store_txn_discard deletes them. */
typedef void (*store_txn_seqs_cb)(void *ctx, sb_status st, const int64_t *seqs, size_t n);
void store_schedule_pending(store *s, int64_t entity_id, const store_new_message *msgs, size_t n,
                            int64_t pending_until_ms, store_txn_seqs_cb cb, void *ctx);
int store_txn_activate(store_txn *t, int64_t entity_id, const int64_t *seqs, size_t n);
/* A rollback: deletes what the transaction scheduled (t stays the caller's). */
void store_txn_discard(store *s, store_txn *t);
/* Entities the commit adds messages to or settles messages of (their
 * receivers are rewound and woken after). */
size_t store_txn_targets(const store_txn *t, const int64_t **ids);
/* Topics the commit leaves copies at rest in (a copy forwarded into another
 * topic): the broker routes them once it has committed. -1: out of memory. */
int store_txn_rest(store_txn *t, int64_t topic_id);
size_t store_txn_resting(const store_txn *t, const int64_t **ids);
void store_txn_commit(store *s, store_txn *t, int64_t now_ms, store_status_cb cb, void *ctx);

#endif
