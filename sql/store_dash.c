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

/* ---- message rows ---- */

typedef struct msgs_result {
    store_dash_msg *msgs;
    size_t n;
    PGresult *pgresult; /* what the rows point into */
} msgs_result;

static void msgs_free(void *p)
{
    msgs_result *m = p;
    PQclear(m->pgresult);
    ent_free(m->msgs);
    ent_free(m);
}

static void msgs_parse(store_op *op, int stmt, const void *res)
{
    (void)stmt;
    msgs_result *m = store_op_result(op);
    PGresult *r = PQcopyResult(res, PG_COPYRES_ATTRS | PG_COPYRES_TUPLES);
    int rows = r ? PQntuples(r) : 0;
    if (!m || !r || (rows && !(m->msgs = ent_calloc((size_t)rows, sizeof *m->msgs)))) {
        PQclear(r);
        store_op_set_status(op, SB_ERR_INTERNAL);
        return;
    }
    m->pgresult = r;
    m->n = (size_t)rows;
    for (int i = 0; i < rows; i++) {
        store_dash_msg *x = &m->msgs[i];
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
    msgs_result *m = store_op_result(op);
    if (st == SB_OK && m && (m->pgresult || !m->n))
        ((store_dash_msgs_cb)u->fn)(u->ctx, SB_OK, m->msgs, m->n);
    else
        ((store_dash_msgs_cb)u->fn)(u->ctx, st == SB_OK ? SB_ERR_INTERNAL : st, NULL, 0);
    ent_free(u);
}

/* An op for one statement answering message rows; NULL: cb was failed. */
static store_op *msgs_op(store_dash_msgs_cb cb, void *ctx)
{
    store_op *op = store_op_or_fail(1, msgs_parse, msgs_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL, NULL, 0);
        return NULL;
    }
    msgs_result *m = ent_calloc(1, sizeof *m);
    if (m)
        store_op_set_result(op, m, msgs_free);
    else
        store_op_set_status(op, SB_ERR_INTERNAL);
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

typedef struct sessions_result {
    store_dash_session *v;
    size_t n;
    PGresult *pgresult;
} sessions_result;

static void sessions_free(void *p)
{
    sessions_result *x = p;
    PQclear(x->pgresult);
    ent_free(x->v);
    ent_free(x);
}

static void sessions_parse(store_op *op, int stmt, const void *res)
{
    (void)stmt;
    sessions_result *x = store_op_result(op);
    PGresult *r = PQcopyResult(res, PG_COPYRES_ATTRS | PG_COPYRES_TUPLES);
    int rows = r ? PQntuples(r) : 0;
    if (!x || !r || (rows && !(x->v = ent_calloc((size_t)rows, sizeof *x->v)))) {
        PQclear(r);
        store_op_set_status(op, SB_ERR_INTERNAL);
        return;
    }
    x->pgresult = r;
    x->n = (size_t)rows;
    for (int i = 0; i < rows; i++) {
        store_dash_session *v = &x->v[i];
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
    sessions_result *x = store_op_result(op);
    if (st == SB_OK && x && (x->pgresult || !x->n))
        ((store_dash_sessions_cb)u->fn)(u->ctx, SB_OK, x->v, x->n);
    else
        ((store_dash_sessions_cb)u->fn)(u->ctx, st == SB_OK ? SB_ERR_INTERNAL : st, NULL, 0);
    ent_free(u);
}

void store_dash_sessions(store *s, int64_t entity_id, int max, store_dash_sessions_cb cb, void *ctx)
{
    store_op *op = store_op_or_fail(1, sessions_parse, sessions_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL, NULL, 0);
        return;
    }
    sessions_result *x = ent_calloc(1, sizeof *x);
    if (x)
        store_op_set_result(op, x, sessions_free);
    int8_param e = be_int8(entity_id), lim = be_int8(max);
    if (!x || store_op_stmt(op, 0, STMT_DASH_SESSIONS, (store_param[]){P_INT8(e), P_INT8(lim)}, 2))
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}
