/* The prepared statements of the store, by name. Their SQL lives in
 * store_statements.c so that the whole database surface reads in one place. */
#ifndef STORE_STATEMENTS_H
#define STORE_STATEMENTS_H

#include <libpq-fe.h>
#include <stddef.h>

/* The most parameters any statement takes (the publish's story twin). */
#define STORE_MAX_PARAMS 26

/* Rows one sweep statement touches at most, so that a sweep over a large
 * backlog is many short transactions rather than one long one (the next tick
 * takes the rest). STORE_SWEEP_BATCH_SQL is the same number spliced into the
 * statements' text. */
#define STORE_SWEEP_BATCH 1000
#define STORE_STRINGIFY_(x) #x
#define STORE_STRINGIFY(x) STORE_STRINGIFY_(x)
#define STORE_SWEEP_BATCH_SQL STORE_STRINGIFY(STORE_SWEEP_BATCH)
/* Lock batches one sweep looks at, and the locks they name (each looked
 * up by primary key). Lapsed locks are rare, but every batch is read once
 * its time has passed, and the batches of a burst come due together, one
 * lock duration later. Claims write about 200 batches a second of 400 locks
 * at 80,000 msg/s peek-lock, and 2,000 or more of a few each when messages
 * trickle in (a soak at 22,500 msg/s: 200 a sweep fell behind by 160,000
 * batches in 7 minutes). The locks bound what one sweep costs (13 ms per
 * 50,000 completed messages once vacuumed, 85 ms before); the first batch
 * is always taken. A backlog of due batches waits for the next sweeps,
 * which only delays returning a lapsed lock. */
#define STORE_SWEEP_LOCK_BATCHES 10000
#define STORE_SWEEP_LOCK_BATCHES_SQL STORE_STRINGIFY(STORE_SWEEP_LOCK_BATCHES)
#define STORE_SWEEP_LOCKS 100000
#define STORE_SWEEP_LOCKS_SQL STORE_STRINGIFY(STORE_SWEEP_LOCKS)
/* The entities one sweep statement looks at (store_sweep_policy's scope):
 * $ids an int8[] (NULL: every entity), $in a bool (true: those, false: all
 * but those), applied to the entity column col. While no namespace's clock
 * has moved, the scope is NULL: one test per row the statement walks. */
#define SWEEP_SCOPE(col, ids, in) " AND ($" ids "::int8[] IS NULL OR (" col " = ANY($" ids ")) = $" in "::bool)"
/* The clock offset ($off) a sweep part computed its time with is still the
 * entity's namespace's, as this statement sees the database: a restore on
 * another emulator sets the clock back in the same transaction that brings
 * the restored messages, and a part computed before its NOTIFY came would
 * expire or activate them by the old clock. Checked on the rows a sweep
 * would change (expired or due ones: few). */
#define SWEEP_CLOCK_HOLDS(col, off)                                                                               \
    " AND coalesce((SELECT c.offset_ms FROM entities e JOIN sbemu_clock c ON c.namespace_id = e.namespace_id"     \
    " WHERE e.id = " col "), 0) = $" off

#define STMT_LOAD_ENTITIES "sb_load_entities"
#define STMT_LOAD_RULES "sb_load_rules"
#define STMT_LOAD_NAMESPACES "sb_load_namespaces"
#define STMT_LOAD_NAMESPACE_KEYS "sb_load_namespace_keys"
#define STMT_PUBLISH_SET "sb_publish_set"
#define STMT_SEND_SET "sb_send_set"
#define STMT_CLAIM_LOCK "sb_claim_lock"
#define STMT_CLAIM_DELETE "sb_claim_delete"
#define STMT_CLAIM_SESSION_LOCK "sb_claim_session_lock"
#define STMT_CLAIM_SESSION_DELETE "sb_claim_session_delete"
#define STMT_SESSION_LOCK_CLAIM "sb_session_lock_claim"
#define STMT_COMPLETE_SET "sb_complete_set"
#define STMT_SETTLE_SET "sb_settle_set"
#define STMT_TOUCH "sb_touch"
#define STMT_TXN_GUARD "sb_txn_guard"
#define STMT_TXN_PENDING_STAMP "sb_txn_pending_stamp"
#define STMT_TXN_ACTIVATE "sb_txn_activate"
#define STMT_TXN_DISCARD "sb_txn_discard"
#define STMT_SWEEP_TXN_PENDING "sb_sweep_txn_pending"
#define STMT_SWEEP_EXPIRED "sb_sweep_expired"
#define STMT_SWEEP_LAPSED "sb_sweep_lapsed"
#define STMT_SWEEP_IDLE "sb_sweep_idle"
#define STMT_SWEEP_DUPLICATES "sb_sweep_duplicates"
#define STMT_SWEEP_SCHEDULED "sb_sweep_scheduled"
#define STMT_CLOCK_PUBLISH "sb_clock_publish"

/* The group commit's own statements (store.c), around a batch's ops: the
 * check of the mark the batch before left (STORE_BATCH_SETTING), a lazy
 * batch's commit without waiting for its WAL, the batch's one NOTIFY and its
 * own mark. Prepared like every other: sent as text, each was parsed and
 * planned again in every batch. At most one text parameter. */
#define STMT_BATCH_GUARD "sb_batch_guard"
#define STMT_BATCH_LAZY "sb_batch_lazy"
#define STMT_BATCH_NOTIFY "sb_batch_notify"
#define STMT_BATCH_MARK "sb_batch_mark"
#define STMT_BATCH_MARK_LAZY "sb_batch_mark_lazy"
#define STORE_BATCH_SETTING "sbemu.batch"

/* PostgreSQL type OIDs of the parameters our statements declare. */
#define STORE_OID_INT8 20
#define STORE_OID_TEXT 25
#define STORE_OID_BYTEA 17
#define STORE_OID_INT8_ARRAY 1016
#define STORE_OID_UUID 2950
#define STORE_OID_UUID_ARRAY 2951
#define STORE_OID_TEXT_ARRAY 1009
#define STORE_OID_BYTEA_ARRAY 1001

/* One prepared statement: its name, SQL and parameter types. */
typedef struct stmt_def {
    const char *name;
    const char *sql;
    int nparams;
    Oid types[STORE_MAX_PARAMS];
} stmt_def;

/* Prepares every statement of a table; -1 with the failing one named in err. */
int store_prepare_all(PGconn *conn, const stmt_def *defs, size_t n, char *err, size_t errlen);

int store_statements_prepare(PGconn *conn, char *err, size_t errlen);
/* The statement tables themselves, for the test that checks their plans. */
const stmt_def *store_statement_defs(size_t *n);
const stmt_def *store_mgmt_statement_defs(size_t *n);
/* The $management operations' statements (store_mgmt_statements.c). */
int store_mgmt_statements_prepare(PGconn *conn, char *err, size_t errlen);
/* The management API's statements (store_admin_statements.c). */
const stmt_def *store_admin_statement_defs(size_t *n);
int store_admin_statements_prepare(PGconn *conn, char *err, size_t errlen);

#endif
