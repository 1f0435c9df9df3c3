/* Builds the ops of store_session.h (SQL in store_mgmt_statements.c). Each op
 * is one statement; its answer rows are kept with the PGresult until the
 * callback returns. */
#include "store_session.h"

#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "store_binary.h"
#include "store_statements.h"

/* The answer of an op: its PGresult, kept (store_op_take_result). */
typedef struct rows_result {
    PGresult *r;
} rows_result;

static void rows_free(void *p)
{
    rows_result *x = p;
    PQclear(x->r);
    ent_free(x);
}

static void keep_rows(store_op *op, int stmt, const void *res)
{
    (void)stmt;
    rows_result *x = ent_calloc(1, sizeof *x);
    if (!x) {
        store_op_set_status(op, SB_ERR_INTERNAL);
        return;
    }
    store_op_take_result(op);
    x->r = (PGresult *)res;
    store_op_set_result(op, x, rows_free);
}

/* The kept rows (NULL unless the op succeeded). */
static const PGresult *rows_of(store_op *op, sb_status st)
{
    rows_result *x = store_op_result(op);
    return st == SB_OK && x ? x->r : NULL;
}

static store_op *one_statement(store_done_fn done, void (*fn)(void), void *ctx)
{
    return store_op_or_fail(1, keep_rows, done, user_new(fn, ctx));
}

static void submit(store *s, store_op *op, const char *stmt, const store_param *params, int n)
{
    if (store_op_stmt(op, 0, stmt, params, n))
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

/* ---- lock ---- */

static void lock_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    const PGresult *r = rows_of(op, st);
    store_session_lock_cb cb = (store_session_lock_cb)u->fn;
    if (st != SB_OK || !r)
        cb(u->ctx, st == SB_OK ? SB_ERR_INTERNAL : st, NULL, 0);
    else if (PQntuples(r) == 0)
        cb(u->ctx, SB_ERR_SESSION_CANNOT_BE_LOCKED, NULL, 0);
    else
        cb(u->ctx, SB_OK, PQgetvalue(r, 0, 0), col_i64(r, 0, 1));
    ent_free(u);
}

void store_session_lock(store *s, int64_t entity_id, const char *session_id, const uint8_t token[16],
                        int64_t now_ms, int64_t locked_until_ms, int64_t pick_from, store_session_lock_cb cb,
                        void *ctx)
{
    store_op *op = one_statement(lock_done, (void (*)(void))cb, ctx);
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL, NULL, 0);
        return;
    }
    int8_param q = be_int8(entity_id), now = be_int8(now_ms), until = be_int8(locked_until_ms),
               from = be_int8(pick_from);
    store_op_set_lazy(op); /* a lock: forgotten in a crash of PostgreSQL, the session is free */
    submit(s, op, STMT_SESSION_LOCK,
           (store_param[]){P_INT8(q), P_TEXT(session_id), P_INT8(now), P_UUID(token), P_INT8(until), P_INT8(from)},
           6);
}

/* ---- release, set-state: a status ---- */

static void release_done(store_op *op, sb_status st) { store_status_done(op, st); }

void store_session_release(store *s, int64_t entity_id, const char *session_id, const uint8_t token[16],
                           int64_t now_ms, bool all_settled, store_status_cb cb, void *ctx)
{
    store_op *op = one_statement(release_done, (void (*)(void))cb, ctx);
    if (!op) {
        if (cb)
            cb(ctx, SB_ERR_INTERNAL);
        return;
    }
    int8_param q = be_int8(entity_id), now = be_int8(now_ms);
    /* forgotten in a crash of PostgreSQL, the lock lapses at its time */
    store_op_set_lazy(op);
    submit(s, op, all_settled ? STMT_SESSION_RELEASE_SETTLED : STMT_SESSION_RELEASE,
           (store_param[]){P_INT8(q), P_TEXT(session_id), P_UUID(token), P_INT8(now)}, 4);
}

/* No answer row: the session's lock was lost. */
static void lock_lost_unless_row(store_op *op, sb_status st)
{
    const PGresult *r = rows_of(op, st);
    store_status_done(op, st == SB_OK && (!r || PQntuples(r) == 0) ? SB_ERR_SESSION_LOCK_LOST : st);
}

void store_session_set_state(store *s, int64_t entity_id, const char *session_id, const uint8_t token[16],
                             int64_t now_ms, const uint8_t *state, size_t len, store_status_cb cb, void *ctx)
{
    store_op *op = one_statement(lock_lost_unless_row, (void (*)(void))cb, ctx);
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL);
        return;
    }
    int8_param q = be_int8(entity_id), now = be_int8(now_ms);
    store_param st = state ? (store_param){state, (int)len, 1} : (store_param){0};
    submit(s, op, STMT_SESSION_SET_STATE,
           (store_param[]){P_INT8(q), P_TEXT(session_id), P_UUID(token), P_INT8(now), st}, 5);
}

/* ---- renew ---- */

static void renew_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    const PGresult *r = rows_of(op, st);
    store_session_renew_cb cb = (store_session_renew_cb)u->fn;
    if (st != SB_OK || !r)
        cb(u->ctx, st == SB_OK ? SB_ERR_INTERNAL : st, 0);
    else if (PQntuples(r) == 0)
        cb(u->ctx, SB_ERR_SESSION_LOCK_LOST, 0);
    else
        cb(u->ctx, SB_OK, col_i64(r, 0, 0));
    ent_free(u);
}

void store_session_renew(store *s, int64_t entity_id, const char *session_id, const uint8_t token[16],
                         int64_t now_ms, int64_t locked_until_ms, store_session_renew_cb cb, void *ctx)
{
    store_op *op = one_statement(renew_done, (void (*)(void))cb, ctx);
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL, 0);
        return;
    }
    int8_param q = be_int8(entity_id), now = be_int8(now_ms), until = be_int8(locked_until_ms);
    store_op_set_lazy(op);
    submit(s, op, STMT_SESSION_RENEW,
           (store_param[]){P_INT8(q), P_TEXT(session_id), P_UUID(token), P_INT8(now), P_INT8(until)}, 5);
}

/* ---- get-state ---- */

static void state_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    const PGresult *r = rows_of(op, st);
    store_session_state_cb cb = (store_session_state_cb)u->fn;
    if (st != SB_OK || !r)
        cb(u->ctx, st == SB_OK ? SB_ERR_INTERNAL : st, NULL, 0);
    else if (PQntuples(r) == 0)
        cb(u->ctx, SB_ERR_SESSION_LOCK_LOST, NULL, 0);
    else if (PQgetisnull(r, 0, 0))
        cb(u->ctx, SB_OK, NULL, 0);
    else
        cb(u->ctx, SB_OK, (const uint8_t *)PQgetvalue(r, 0, 0), (size_t)PQgetlength(r, 0, 0));
    ent_free(u);
}

void store_session_get_state(store *s, int64_t entity_id, const char *session_id, const uint8_t token[16],
                             int64_t now_ms, store_session_state_cb cb, void *ctx)
{
    store_op *op = one_statement(state_done, (void (*)(void))cb, ctx);
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL, NULL, 0);
        return;
    }
    int8_param q = be_int8(entity_id), now = be_int8(now_ms);
    submit(s, op, STMT_SESSION_GET_STATE, (store_param[]){P_INT8(q), P_TEXT(session_id), P_UUID(token), P_INT8(now)},
           4);
}

/* ---- list ---- */

static void list_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    const PGresult *r = rows_of(op, st);
    store_session_list_cb cb = (store_session_list_cb)u->fn;
    int n = r ? PQntuples(r) : 0;
    const char **ids = n ? ent_calloc((size_t)n, sizeof *ids) : NULL;
    if (st != SB_OK || !r || (n && !ids)) {
        cb(u->ctx, st == SB_OK ? SB_ERR_INTERNAL : st, NULL, 0);
    } else {
        for (int i = 0; i < n; i++)
            ids[i] = PQgetvalue(r, i, 0);
        cb(u->ctx, SB_OK, ids, (size_t)n);
    }
    ent_free(ids);
    ent_free(u);
}

void store_session_list(store *s, int64_t entity_id, int64_t since_ms, int skip, int top, store_session_list_cb cb,
                        void *ctx)
{
    store_op *op = one_statement(list_done, (void (*)(void))cb, ctx);
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL, NULL, 0);
        return;
    }
    int8_param q = be_int8(entity_id), since = be_int8(since_ms), sk = be_int8(skip), tp = be_int8(top);
    submit(s, op, STMT_SESSION_LIST, (store_param[]){P_INT8(q), P_INT8(since), P_INT8(sk), P_INT8(tp)}, 4);
}
