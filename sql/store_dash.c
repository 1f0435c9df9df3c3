/* Builds the ops of store_dash.h and parses their binary results (the shape
 * of store_mgmt.c: one user_cb per op, rows kept alive with their PGresult
 * until the callback returns). */
#include "store_dash.h"

#include <libpq-fe.h>
#include <string.h>

#include "ent_alloc.h"
#include "store_arrays.h"
#include "store_binary.h"
#include "store_statements.h"

/* ---- rows kept with their PGresult ---- */

/* Rows of one statement, parsed into an array of elements whose texts and
 * bytes point into the copied PGresult; both freed with the op, after its
 * callback returned. */
typedef struct rows_result {
    void *v;
    size_t n;
    PGresult *pgresult; /* what the rows point into */
} rows_result;

static void rows_free(void *p)
{
    rows_result *x = p;
    PQclear(x->pgresult);
    ent_free(x->v);
    ent_free(x);
}

/* Keeps a copy of res and room for its rows, elem bytes each: the copy, or
 * NULL with the op failed. */
static PGresult *rows_keep(store_op *op, const void *res, size_t elem)
{
    rows_result *x = store_op_result(op);
    PGresult *r = PQcopyResult(res, PG_COPYRES_ATTRS | PG_COPYRES_TUPLES);
    int rows = r ? PQntuples(r) : 0;
    if (!x || !r || (rows && !(x->v = ent_calloc((size_t)rows, elem)))) {
        PQclear(r);
        store_op_set_status(op, SB_ERR_INTERNAL);
        return NULL;
    }
    x->pgresult = r;
    x->n = (size_t)rows;
    return r;
}

/* The rows to answer: NULL (with *n 0) unless st is SB_OK and they were
 * parsed; *st becomes the status to answer. */
static const void *rows_answer(store_op *op, sb_status *st, size_t *n)
{
    rows_result *x = store_op_result(op);
    *n = 0;
    if (*st != SB_OK)
        return NULL;
    if (!x || (!x->pgresult && x->n)) {
        *st = SB_ERR_INTERNAL;
        return NULL;
    }
    *n = x->n;
    return x->v;
}

/* An op for one statement answering rows; NULL: the op could not be made
 * (the caller fails its callback). */
static store_op *rows_op(store_parse_fn parse, store_done_fn done, void (*fn)(void), void *ctx)
{
    store_op *op = store_op_or_fail(1, parse, done, user_new(fn, ctx));
    if (!op)
        return NULL;
    rows_result *x = ent_calloc(1, sizeof *x);
    if (x)
        store_op_set_result(op, x, rows_free);
    else
        store_op_set_status(op, SB_ERR_INTERNAL);
    return op;
}

/* ---- message rows ---- */

static void msgs_parse(store_op *op, int stmt, const void *res)
{
    (void)stmt;
    PGresult *r = rows_keep(op, res, sizeof(store_dash_msg));
    if (!r)
        return;
    rows_result *m = store_op_result(op);
    for (size_t i = 0; i < m->n; i++) {
        store_dash_msg *x = (store_dash_msg *)m->v + i;
        x->sequence_number = col_i64(r, i, 0);
        x->subqueue = (int)col_i64(r, i, 1);
        x->state = (int)col_i64(r, i, 2);
        x->enqueued_ms = col_i64(r, i, 3);
        x->available_ms = col_i64(r, i, 4);
        x->expires_ms = col_i64(r, i, 5);
        x->ttl_ms = col_i64(r, i, 6);
        x->locked_until_ms = col_i64(r, i, 7);
        x->has_lock = !PQgetisnull(r, i, 8) && PQgetlength(r, i, 8) == 16;
        if (x->has_lock)
            memcpy(x->lock_token, PQgetvalue(r, i, 8), 16);
        x->delivery_count = (int32_t)col_i64(r, i, 9);
        x->message_id = col_str_or_null(r, i, 10);
        x->session_id = col_str_or_null(r, i, 11);
        x->dead_letter_reason = col_str_or_null(r, i, 12);
        x->dead_letter_description = col_str_or_null(r, i, 13);
        x->dead_letter_source = col_str_or_null(r, i, 14);
        x->bytes = (const uint8_t *)PQgetvalue(r, i, 15);
        x->len = (size_t)PQgetlength(r, i, 15);
    }
}

static void msgs_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    size_t n;
    const store_dash_msg *msgs = rows_answer(op, &st, &n);
    ((store_dash_msgs_cb)u->fn)(u->ctx, st, msgs, n);
    ent_free(u);
}

/* An op for one statement answering message rows; NULL: cb was failed. */
static store_op *msgs_op(store_dash_msgs_cb cb, void *ctx)
{
    store_op *op = rows_op(msgs_parse, msgs_done, (void (*)(void))cb, ctx);
    if (!op)
        cb(ctx, SB_ERR_INTERNAL, NULL, 0);
    return op;
}

void store_dash_peek(store *s, int64_t entity_id, int subqueue, int64_t from_seq, int max, store_dash_msgs_cb cb,
                     void *ctx)
{
    store_op *op = msgs_op(cb, ctx);
    if (!op)
        return;
    int8_param e = be_int8(entity_id), sq = be_int8(subqueue), from = be_int8(from_seq), lim = be_int8(max);
    if (store_op_stmt(op, 0, STMT_DASH_PEEK, (store_param[]){P_INT8(e), P_INT8(sq), P_INT8(from), P_INT8(lim)}, 4))
        store_op_set_status(op, SB_ERR_INTERNAL);
    if (subqueue == 0)
        store_op_set_catch_up(op, entity_id); /* its log entries too (store_log.h) */
    store_submit(s, op);
}

void store_dash_pick(store *s, int64_t entity_id, int subqueue, const int64_t *seqs, size_t n, bool unlocked_only,
                     int64_t now_ms, store_dash_msgs_cb cb, void *ctx)
{
    store_op *op = msgs_op(cb, ctx);
    if (!op)
        return;
    char *arr = store_int8_array_text(seqs, n);
    int8_param e = be_int8(entity_id), sq = be_int8(subqueue), unl = be_int8(unlocked_only), now = be_int8(now_ms);
    if (!arr || store_op_stmt(op, 0, STMT_DASH_PICK,
                              (store_param[]){P_INT8(e), P_INT8(sq), P_TEXT(arr), P_INT8(unl), P_INT8(now)}, 5))
        store_op_set_status(op, SB_ERR_INTERNAL);
    ent_free(arr);
    if (subqueue == 0)
        store_op_set_catch_up(op, entity_id); /* its log entries too (store_log.h) */
    store_submit(s, op);
}

/* ---- counts of rows removed ---- */

typedef struct count_result {
    int64_t n;
    bool read;
} count_result;

static void count_parse(store_op *op, int stmt, const void *res)
{
    (void)stmt;
    count_result *c = store_op_result(op);
    if (c && PQntuples(res) == 1) {
        c->n = col_i64(res, 0, 0);
        c->read = true;
    }
}

static void count_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    count_result *c = store_op_result(op);
    if (st == SB_OK && (!c || !c->read))
        st = SB_ERR_INTERNAL;
    ((store_dash_count_cb)u->fn)(u->ctx, st, st == SB_OK ? c->n : 0);
    ent_free(u);
}

static store_op *count_op(store_dash_count_cb cb, void *ctx)
{
    store_op *op = store_op_or_fail(1, count_parse, count_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL, 0);
        return NULL;
    }
    count_result *c = ent_calloc(1, sizeof *c);
    if (c)
        store_op_set_result(op, c, ent_free);
    else
        store_op_set_status(op, SB_ERR_INTERNAL);
    return op;
}

void store_dash_delete(store *s, int64_t entity_id, int subqueue, const int64_t *seqs, size_t n, bool unlocked_only,
                       int64_t now_ms, store_dash_count_cb cb, void *ctx)
{
    store_op *op = count_op(cb, ctx);
    if (!op)
        return;
    char *arr = store_int8_array_text(seqs, n);
    int8_param e = be_int8(entity_id), sq = be_int8(subqueue), unl = be_int8(unlocked_only), now = be_int8(now_ms);
    if (!arr || store_op_stmt(op, 0, STMT_DASH_DELETE,
                              (store_param[]){P_INT8(e), P_INT8(sq), P_TEXT(arr), P_INT8(unl), P_INT8(now)}, 5))
        store_op_set_status(op, SB_ERR_INTERNAL);
    ent_free(arr);
    if (subqueue == 0)
        store_op_set_catch_up(op, entity_id); /* its log entries too (store_log.h) */
    store_submit(s, op);
}

void store_dash_purge(store *s, int64_t entity_id, int subqueue, int max, store_dash_count_cb cb, void *ctx)
{
    store_op *op = count_op(cb, ctx);
    if (!op)
        return;
    int8_param e = be_int8(entity_id), sq = be_int8(subqueue), lim = be_int8(max);
    if (store_op_stmt(op, 0, STMT_DASH_PURGE, (store_param[]){P_INT8(e), P_INT8(sq), P_INT8(lim)}, 3))
        store_op_set_status(op, SB_ERR_INTERNAL);
    if (subqueue == 0)
        store_op_set_catch_up(op, entity_id); /* its log entries too (store_log.h) */
    store_submit(s, op);
}

void store_dash_last(store *s, int64_t entity_id, int subqueue, store_dash_count_cb cb, void *ctx)
{
    store_op *op = count_op(cb, ctx);
    if (!op)
        return;
    int8_param e = be_int8(entity_id), sq = be_int8(subqueue);
    if (store_op_stmt(op, 0, STMT_DASH_LAST, (store_param[]){P_INT8(e), P_INT8(sq)}, 2))
        store_op_set_status(op, SB_ERR_INTERNAL);
    if (subqueue == 0)
        store_op_set_catch_up(op, entity_id); /* its log entries too (store_log.h) */
    store_submit(s, op);
}

/* ---- status ---- */

static void status_parse(store_op *op, int stmt, const void *res)
{
    (void)stmt;
    if (PQntuples(res) != 1)
        store_op_set_status(op, SB_ERR_NOT_FOUND);
}

void store_dash_set_status(store *s, ent_kind kind, int64_t id, const char *status, int64_t now_ms,
                           store_status_cb cb, void *ctx)
{
    store_op *op = store_op_or_fail(1, status_parse, store_status_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL);
        return;
    }
    const char *stmt = kind == ENT_KIND_TOPIC          ? STMT_DASH_STATUS_TOPIC
                       : kind == ENT_KIND_SUBSCRIPTION ? STMT_DASH_STATUS_SUBSCRIPTION
                                                       : STMT_DASH_STATUS_QUEUE;
    int8_param e = be_int8(id), now = be_int8(now_ms);
    if (store_op_stmt(op, 0, stmt, (store_param[]){P_INT8(e), P_TEXT(status), P_INT8(now)}, 3))
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

/* ---- sessions ---- */

static void sessions_parse(store_op *op, int stmt, const void *res)
{
    (void)stmt;
    PGresult *r = rows_keep(op, res, sizeof(store_dash_session));
    if (!r)
        return;
    rows_result *x = store_op_result(op);
    for (size_t i = 0; i < x->n; i++) {
        store_dash_session *v = (store_dash_session *)x->v + i;
        v->session_id = PQgetvalue(r, i, 0);
        v->messages = col_i64(r, i, 1);
        if (!PQgetisnull(r, i, 2)) {
            v->state = (const uint8_t *)PQgetvalue(r, i, 2);
            v->state_len = (size_t)PQgetlength(r, i, 2);
        }
        v->has_lock = !PQgetisnull(r, i, 3) && PQgetlength(r, i, 3) == 16;
        if (v->has_lock)
            memcpy(v->lock_token, PQgetvalue(r, i, 3), 16);
        v->locked_until_ms = col_i64(r, i, 4);
        v->updated_ms = col_i64(r, i, 5);
    }
}

static void sessions_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    size_t n;
    const store_dash_session *v = rows_answer(op, &st, &n);
    ((store_dash_sessions_cb)u->fn)(u->ctx, st, v, n);
    ent_free(u);
}

void store_dash_sessions(store *s, int64_t entity_id, int max, store_dash_sessions_cb cb, void *ctx)
{
    store_op *op = rows_op(sessions_parse, sessions_done, (void (*)(void))cb, ctx);
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL, NULL, 0);
        return;
    }
    int8_param e = be_int8(entity_id), lim = be_int8(max);
    if (store_op_stmt(op, 0, STMT_DASH_SESSIONS, (store_param[]){P_INT8(e), P_INT8(lim)}, 2))
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}
