/* The asynchronous PostgreSQL store: one non-blocking libpq connection in
 * pipeline mode, driven by the emulator's loop.
 *
 * Group commit: operations submitted while a transaction is in flight wait in
 * `pending`; when the in-flight one ends (PGRES_PIPELINE_SYNC), everything
 * pending goes out as the next transaction: each operation's statements and a
 * Sync (one implicit transaction). Under load, a full batch goes out behind
 * the one in flight (two at most), guarded so that it commits only if the one
 * before it did. Callbacks run only after the commit is known to be on disk,
 * so a caller can acknowledge its client the moment its callback says SB_OK.
 * For a large batch the store's backend does not wait for the disk itself: a
 * second connection does (store_flusher.h, STORE_FLUSHER_MIN_BYTES), while
 * the backend goes on with the next batch.
 *
 * If a transaction fails, each of its operations is retried alone, so one bad
 * request cannot fail its neighbours; a batch sent behind it fails its guard
 * and goes again after them, so nothing overtakes what was submitted first. The loop integration is three calls
 * (store_socket, store_on_readable, store_on_writable) and two hooks.
 *
 * Losing PostgreSQL. When the connection breaks, every op pending or in
 * flight fails with SB_ERR_SERVER_BUSY (what the SDKs retry; an in-flight
 * commit's fate is unknown, so its client retries it: at least once), the
 * store closes the connection and calls on_lost, and until store_resume hands
 * it a new connection every submit fails at once with SB_ERR_SERVER_BUSY.
 * Finding a way back (restarting an embedded cluster, backoff) is the
 * emulator's business: store_connect is the blocking half it may run on
 * another thread. */
#ifndef STORE_H
#define STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ent_status.h"

typedef struct store store;

/* Operations per transaction. Past this the batch is cut (never inside an
 * op); a batch this full may go out behind one in flight (store.c). */
#define STORE_BATCH_MAX_OPS 512

/* Parameter bytes from which a durable batch commits without waiting for the
 * disk and the flusher waits for it (store_flusher.h); smaller ones wait for
 * their own fsync, and that commit then makes durable every one before it.
 * A large batch's WAL (64 KiB sends: megabytes) is written and synced by the
 * flusher's backend on the other core while the store's goes on: 64 KiB
 * sends on one connection 2.8-3.1k -> 3.3-3.6k msg/s (A/B of fresh
 * emulators, two runs of three rounds). A small one gains nothing there and
 * pays a second round trip before its answer: 1,000 sessions taken eight at
 * once ran 24-26k msg/s with every batch flushed that way, 25-31k without. */
#define STORE_FLUSHER_MIN_BYTES (256u * 1024)

/* The most columns a merged statement takes (the publish's story twin). */
#define STORE_MERGE_MAX_COLS 25
typedef struct store_op store_op;

/* How the store asks its loop for service. Both may be called often. */
typedef struct store_hooks {
    void (*want_write)(void *ud); /* call store_on_writable when the socket is writable */
    void (*want_flush)(void *ud); /* call store_flush soon, after the current callbacks */
    /* Another process (or this one) committed messages to these entities (queues, subscriptions). */
    void (*on_messages)(void *ud, const int64_t *entity_ids, size_t n);
    /* Namespace ns's clock moved (sbemu_clock): its offset in milliseconds. */
    void (*on_clock)(void *ud, int32_t ns, int64_t offset_ms);
    /* Entities were created, changed or deleted (sbemu_entities: by any
     * emulator, the management plane or plain SQL); table is the table's name. */
    void (*on_entities)(void *ud, const char *table);
    /* Namespace ns was reset or a snapshot restored (sbemu_reset, by any
     * emulator: store_reset.h): generation names that restore, offset_ms is
     * the namespace clock's offset from now on. May be NULL. */
    void (*on_reset)(void *ud, int64_t generation, int64_t offset_ms, int32_t ns);
    /* The connection broke and was closed: stop watching its socket, find a
     * new connection, store_resume. Called once per loss. */
    void (*on_lost)(void *ud);
    void *ud;
} store_hooks;

/* Connects (blocking; done once at start), prepares the statements and enters
 * pipeline mode. NULL with a message in err on failure. */
struct pg_conn;
store *store_open(const char *conninfo, const store_hooks *hooks, char *err, size_t errlen);
/* The store over a connection store_connect made and, unless NULL, a flusher
 * store_flusher_connect made (store_open does all three; store_connect.c).
 * NULL when out of memory (both are then the caller's). */
store *store_new(struct pg_conn *conn, struct pg_conn *flusher, const store_hooks *hooks);
void store_close(store *s); /* fails what is still pending with SB_ERR_INTERNAL */

/* The planner settings of every store connection (store_connect.c says
 * why); test_store_plans checks the plans made under them. */
#define STORE_PLANNER_SETTINGS "SET enable_seqscan = off; SET enable_sort = off"
#define STORE_PLANNER_SETTINGS_RESET "RESET enable_seqscan; RESET enable_sort"

/* The store connection's socket send buffer, asked of the kernel (which
 * doubles it). A send batch carries every body it writes: 64 KiB sends went
 * out 208 KB at a time (the default, net.core.wmem_default), and the one
 * thread came back to flush between its other work. 4 MiB sent 64 KiB
 * messages 12-18 % faster (3,860 against 3,329 msg/s on ten connections,
 * medians of 17 alternating fresh emulators each); 256 KiB and 1 MiB
 * landed between. Only the server's own buffer bounds what it answers
 * (receives); we cannot size that end. test_store_plans checks it is set. */
#define STORE_SOCKET_SEND_BUFFER_BYTES (4 << 20)

/* A connection ready for store_resume: connected, statements prepared, in
 * pipeline mode. Blocking, touches no store: any thread may call it. The
 * namespace clock's offset is read on the way (notifications sent while
 * disconnected are lost). NULL with a message in err on failure. */
struct pg_conn;
struct pg_conn *store_connect(const char *conninfo, int64_t *clock_offset_ms, char *err, size_t errlen);
/* Takes conn (from store_connect) and flusher (store_flusher_connect, or
 * NULL) after on_lost: the store works again. */
void store_resume(store *s, struct pg_conn *conn, struct pg_conn *flusher);
void store_connection_free(struct pg_conn *conn); /* one store_resume did not take */
int store_connection_socket(const struct pg_conn *conn); /* its socket, to watch before store_resume */
/* Why the last commit or the connection failed ("" if none since the last
 * resume): for errors that should name their cause (a full disk). */
const char *store_last_error(const store *s);
#define STORE_LAST_ERROR_MAX 512 /* its length, PostgreSQL's message included */

int store_socket(const store *s); /* -1 while disconnected */
void store_on_readable(store *s);
int store_flush_socket(const store *s); /* the flusher's; -1 while disconnected or without one */
void store_on_flush_readable(store *s);
void store_on_writable(store *s);
void store_flush(store *s);        /* sends the pending batch if none is in flight */
bool store_idle(const store *s);   /* nothing pending, in flight or waiting for its flush */
bool store_healthy(const store *s); /* connected */

/* What the store has done since it opened: for tests and the benchmark, which
 * check that work is paid per batch (statements per commit), not per message. */
typedef struct store_stats {
    uint64_t batches;    /* transactions sent (one Sync each) */
    uint64_t statements; /* queries sent, merged statements counting once */
    uint64_t ops;        /* ops settled */
    uint64_t retried;    /* ops retried alone after their batch failed */
} store_stats;
store_stats store_get_stats(const store *s);
/* Bytes of every op not yet settled: what the store holds for its callers.
 * Receiving links grant credit only while this is under their bound. */
size_t store_pending_bytes(const store *s);

/* ---- the engine's contract with the typed operations (store_send.c, store_claim.c, store_topic.c, ...) ---- */

/* Parameters are int8 (8 bytes, binary), text, bytea or uuid (binary), as the
 * statement was prepared; results come back in binary format. */
typedef struct store_param {
    const void *value; /* NULL for SQL NULL */
    int len;
    int binary;
} store_param;


typedef void (*store_parse_fn)(store_op *op, int stmt, const void *pgresult);
typedef void (*store_done_fn)(store_op *op, sb_status st);

/* Allocates an op with room for nstmt statements. Ownership passes to the store
 * at store_submit; the store frees it after done() returns. */
store_op *store_op_new(int nstmt, store_parse_fn parse, store_done_fn done, void *ctx);
/* Sets statement i: a prepared statement name and its parameters (copied).
 * While the story is recorded, a statement whose story twin takes the same
 * parameters runs as that twin (store_story_twin). */
int store_op_stmt(store_op *op, int i, const char *prepared, const store_param *params, int nparams);
void *store_op_ctx(const store_op *op);
int store_op_nstmt(const store_op *op);
void *store_op_result(const store_op *op);           /* op-owned result storage */
void store_op_set_result(store_op *op, void *result, void (*free_result)(void *));
void store_op_set_status(store_op *op, sb_status st); /* a logical outcome decided by parse */
/* From parse: keep the PGresult it was given (the op's free_result then
 * PQclears it) instead of copying what it needs out of it. */
void store_op_take_result(store_op *op);
void store_submit(store *s, store_op *op);
/* The statement each op runs instead of the one it names (NULL: none); the
 * story sets it (store_story_configure). */
void store_set_statement_twin(const char *(*twin)(const char *prepared));
/* Marks an op as adding messages to an entity: its batch sends one NOTIFY for
 * all such entities, which wakes receivers in every emulator on the database. */
void store_op_set_notify(store_op *op, int64_t entity_id);
/* Marks an op whose commit need not wait for the disk: it only takes or
 * extends locks (a peek-lock claim, a session lock). A batch of such ops
 * alone commits with synchronous_commit off; PostgreSQL (not the emulator)
 * crashing within a moment of it forgets the lock, and the message or session
 * is simply free again, as after any lost lock. Nothing acknowledged rides
 * on it: a complete, a send or a delete always waits for its fsync, which
 * also writes every lazy commit before it. */
void store_op_set_lazy(store_op *op);
/* Marks an op that reads or removes a subscription's messages other than by
 * claiming them (a peek, a purge): its subscription's entries still in the
 * topic's log are moved into messages first (STMT_CATCH_UP, store_log.h), in
 * the same transaction, so its statements need not know the log. Any entity
 * may be named: for all but a subscription it does nothing. */
void store_op_set_catch_up(store_op *op, int64_t entity_id);

/* ---- merged statements: many ops, one statement ----
 *
 * Work paid per batch, not per message: every op of a batch that shares a
 * merge def and key contributes rows to ONE statement. The statement takes $1 =
 * the key (int8, binary) and then one array per column, in the element types
 * given; it answers with rows whose first column is the 1-based ordinal (int8)
 * of the input row they answer. The engine hands each answer to the op that
 * contributed that row. Groups go out before the batch's other ops, ordered by
 * statement and key, so emulators sharing a database lock entities in one
 * order. If the statement fails, the batch is retried op by op as any other. */
typedef struct store_merge_def {
    const char *prepared;
    int ncols;
    unsigned int elem_types[STORE_MERGE_MAX_COLS]; /* PostgreSQL type OIDs of the array elements */
    /* An answer for row `index` of op (0-based, in the op's own rows); may be NULL. */
    void (*row)(store_op *op, int index, const void *pgresult, int result_row);
    /* The same statement recording the story (store_story.h), taking these
     * columns and more after them: used instead while the story is on, so a
     * row's filler always gives the twin's columns. Its answers still go to
     * this def's row (the twin's is not used). NULL: none. */
    const struct store_merge_def *story;
} store_merge_def;

/* An op with nrows rows for def under key; it has no statements of its own.
 * Fill each row with store_op_row, in order. */
store_op *store_op_new_merged(const store_merge_def *def, int64_t key, int nrows, store_done_fn done, void *ctx);
/* Row i's column values (copied), as the element types of the def say. */
int store_op_row(store_op *op, int i, const store_param *cols);
/* Statement i of a plain op, from the rows of a merged op built for it (never
 * submitted; freed here): the merged statement run for these rows alone, in
 * the op's own transaction and order. For work that must commit or fail as
 * one (a Service Bus transaction) rather than beside other ops' rows. With
 * op NULL it only frees rows (and answers -1). */
int store_op_stmt_rows(store_op *op, int i, store_op *rows);
/* How many answers the op's rows got (in done: 0 for a complete whose lock was lost). */
int store_op_answered(const store_op *op);

/* Raises the namespace clock offset to offset_ms and tells every emulator. */
void store_clock_publish(store *s, int32_t ns, int64_t offset_ms, void (*cb)(void *ctx, sb_status st), void *ctx);

#endif
