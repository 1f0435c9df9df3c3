/* The WAL flusher: a second connection whose only job is to wait for the
 * disk, so that the store's own backend need not.
 *
 * Why. Every durable commit used to end in its backend's write and fsync of
 * the WAL (synchronous_commit = on). The store has one backend, and while it
 * wrote and waited, the batch queued behind it waited too: a batch of 64 KiB
 * sends is megabytes of WAL. Now a large batch (STORE_FLUSHER_MIN_BYTES,
 * store.h) commits without waiting (synchronous_commit off, set per
 * transaction), and the store asks
 * this connection for a flush: a transaction that writes (a transactional
 * logical message, store_flusher.c) commits with synchronous_commit on, so PostgreSQL
 * writes and syncs the WAL up to its own commit record, and so past every
 * commit the store saw answered before the flush was sent. Only then does
 * the store tell its callers (store.c keeps their ops in order until then).
 *
 * Durability does not move: an op is answered SB_OK only once its commit is
 * on disk. What a crash takes (a commit answered to the store, not yet
 * flushed) was never acknowledged to a client, as when a commit is cut off
 * by the crash itself. Other sessions may read such a commit before it is on
 * disk (PostgreSQL's documented behaviour of asynchronous commit); a
 * message read that way and then lost in a crash was never acknowledged to
 * its sender either.
 *
 * Tickets. Flush k is the k-th flush query sent. store_flusher_ask returns
 * the ticket of the flush that will cover every commit answered so far: the
 * one about to go (sent now if none is in flight), or the next one, sent
 * when the one in flight ends. One flush in flight at a time: commits
 * answered meanwhile share the next one, as a group commit's do.
 *
 * Owned by its store (store.c); owns its connection. */
#ifndef STORE_FLUSHER_H
#define STORE_FLUSHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct store_flusher store_flusher;
struct pg_conn;

/* Takes conn (store_flusher_connect). NULL when out of memory (conn is then the caller's). */
store_flusher *store_flusher_new(struct pg_conn *conn);
void store_flusher_free(store_flusher *f); /* closes its connection */
int store_flusher_socket(const store_flusher *f);
/* The ticket of the flush that covers every commit answered until now; -1 if
 * the query could not be sent (the connection is gone). */
int64_t store_flusher_ask(store_flusher *f);
/* Reads what came; *done is the highest ticket flushed so far. -1 if the
 * connection broke or a flush failed (then nothing since the last *done is
 * known to be on disk). */
int store_flusher_on_readable(store_flusher *f, int64_t *done);
/* Why the last call failed (PostgreSQL's message). */
const char *store_flusher_error(const store_flusher *f);

/* A connection for store_flusher_new (store_connect.c opens it, beside the
 * store's): blocking, touches no store (any thread may call it). NULL with a
 * message in err on failure. */
struct pg_conn *store_flusher_connect(const char *conninfo, char *err, size_t errlen);

#endif
