/* Builds the ops of store_mgmt.h and parses their binary results (the same
 * shape as store_send.c and the rest: one user_cb per op, results copied out of the
 * PGresult or kept alive with it until the callback returns). */
#include "store_mgmt.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "store_arrays.h"
#include "store_binary.h" /* helpers shared by every typed op */
#include "store_session.h"
#include "store_statements.h"

/* ---- message rows (peek, receive by sequence number) ---- */

typedef struct msgs_result {
    size_t n;
    store_mgmt_msg *msgs;
    PGresult *pgresult; /* the rows the messages point into */
    /* receive-by-sequence-number only: what the find statement saw */
    int64_t *found;
    size_t nfound;
} msgs_result;

static void msgs_free(void *p)
{
    msgs_result *m = p;
    PQclear(m->pgresult);
    ent_free(m->msgs);
    ent_free(m->found);
    ent_free(m);
}

static msgs_result *msgs_result_of(store_op *op)
{
    msgs_result *m = store_op_result(op);
    if (!m) {
        m = ent_calloc(1, sizeof *m);
        if (m)
            store_op_set_result(op, m, msgs_free);
    }
    return m;
}

/* Parses MSG_COLUMNS rows into m->msgs. */
static int parse_msgs(msgs_result *m, const PGresult *r)
{
    int rows = PQntuples(r);
    PGresult *copy = PQcopyResult(r, PG_COPYRES_ATTRS | PG_COPYRES_TUPLES);
    if (!copy || (rows && !(m->msgs = ent_calloc((size_t)rows, sizeof *m->msgs)))) {
        PQclear(copy);
        return -1;
    }
    m->pgresult = copy;
    m->n = (size_t)rows;
    for (int i = 0; i < rows; i++) {
        store_mgmt_msg *x = &m->msgs[i];
        x->sequence_number = col_i64(copy, i, 0);
        x->enqueued_ms = col_i64(copy, i, 1);
        x->locked_until_ms = col_i64(copy, i, 2);
        x->locked = !PQgetisnull(copy, i, 3) && PQgetlength(copy, i, 3) == 16;
        if (x->locked)
            memcpy(x->lock_token, PQgetvalue(copy, i, 3), 16);
        x->delivery_count = (int32_t)col_i64(copy, i, 4);
        x->ttl_ms = col_i64(copy, i, 5);
        x->dead_letter_reason = col_str_or_null(copy, i, 6);
        x->dead_letter_description = col_str_or_null(copy, i, 7);
        x->bytes = (const uint8_t *)PQgetvalue(copy, i, 8);
        x->len = (size_t)PQgetlength(copy, i, 8);
        x->message_id = col_str_or_null(copy, i, 9);
        x->state = (int)col_i64(copy, i, 10);
        x->dead_letter_source = col_str_or_null(copy, i, 11);
        x->expires_ms = col_i64(copy, i, 12);
    }
    return 0;
}

static int by_sequence(const void *a, const void *b)
{
    const store_mgmt_msg *x = a, *y = b;
    return x->sequence_number < y->sequence_number ? -1 : x->sequence_number > y->sequence_number;
}

/* ---- peek ---- */

static void peek_parse(store_op *op, int stmt, const void *res)
{
    if (stmt != 0)
        return; /* the touch */
    msgs_result *m = msgs_result_of(op);
    if (!m || parse_msgs(m, res))
        store_op_set_status(op, SB_ERR_INTERNAL);
}

static void msgs_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    msgs_result *m = store_op_result(op);
    if (st == SB_OK && m)
        ((store_mgmt_msgs_cb)u->fn)(u->ctx, SB_OK, m->msgs, m->n);
    else
        ((store_mgmt_msgs_cb)u->fn)(u->ctx, st == SB_OK ? SB_ERR_INTERNAL : st, NULL, 0);
    ent_free(u);
}

void store_peek(store *s, int64_t entity_id, int subqueue, int64_t from_seq, int max, int64_t now_ms,
                store_mgmt_msgs_cb cb, void *ctx)
{
    store_op *op = store_op_or_fail(2, peek_parse, msgs_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL, NULL, 0);
        return;
    }
    int8_param q = be_int8(entity_id), sq = be_int8(subqueue), from = be_int8(from_seq), lim = be_int8(max),
               now = be_int8(now_ms);
    int rc = store_op_stmt(op, 0, STMT_MGMT_PEEK,
                           (store_param[]){P_INT8(q), P_INT8(sq), P_INT8(from), P_INT8(lim), P_INT8(now)}, 5);
    rc |= store_touch_stmt(op, 1, entity_id, now_ms);
    if (rc)
        store_op_set_status(op, SB_ERR_INTERNAL);
    if (subqueue == 0)
        store_op_set_catch_up(op, entity_id); /* its log entries too (store_log.h) */
    store_submit(s, op);
}

void store_peek_session(store *s, int64_t entity_id, const char *session_id, int64_t from_seq, int max,
                        int64_t now_ms, store_mgmt_msgs_cb cb, void *ctx)
{
    store_op *op = store_op_or_fail(2, peek_parse, msgs_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL, NULL, 0);
        return;
    }
    int8_param q = be_int8(entity_id), from = be_int8(from_seq), lim = be_int8(max), now = be_int8(now_ms);
    int rc = store_op_stmt(op, 0, STMT_SESSION_PEEK,
                           (store_param[]){P_INT8(q), P_TEXT(session_id), P_INT8(from), P_INT8(lim), P_INT8(now)}, 5);
    rc |= store_touch_stmt(op, 1, entity_id, now_ms);
    if (rc)
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

/* ---- renew lock ---- */

typedef struct renew_result {
    size_t n;          /* tokens asked (with repeats) */
    uint8_t (*tokens)[16];
    int64_t *until;    /* answers, in request order */
} renew_result;

static void renew_free(void *p)
{
    renew_result *r = p;
    ent_free(r->tokens);
    ent_free(r->until);
    ent_free(r);
}

static void renew_parse(store_op *op, int stmt, const void *res)
{
    if (stmt != 0)
        return;
    const PGresult *r = res;
    renew_result *rr = store_op_result(op);
    for (size_t i = 0; i < rr->n; i++)
        rr->until[i] = 0;
    for (int row = 0; row < PQntuples(r); row++) {
        const char *tok = PQgetvalue(r, row, 0);
        int64_t until = col_i64(r, row, 1);
        for (size_t i = 0; i < rr->n; i++)
            if (!memcmp(rr->tokens[i], tok, 16))
                rr->until[i] = until;
    }
    for (size_t i = 0; i < rr->n; i++)
        if (!rr->until[i]) {
            store_op_set_status(op, SB_ERR_LOCK_LOST);
            return;
        }
}

static void renew_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    renew_result *rr = store_op_result(op);
    if (st == SB_OK)
        ((store_renew_cb)u->fn)(u->ctx, SB_OK, rr->until, rr->n);
    else
        ((store_renew_cb)u->fn)(u->ctx, st, NULL, 0);
    ent_free(u);
}

void store_renew_locks(store *s, int64_t entity_id, const uint8_t (*tokens)[16], size_t n, int64_t now_ms,
                       int64_t until_ms, store_renew_cb cb, void *ctx)
{
    store_op *op = store_op_or_fail(2, renew_parse, renew_done, user_new((void (*)(void))cb, ctx));
    renew_result *rr = op ? ent_calloc(1, sizeof *rr) : NULL;
    if (rr) {
        rr->n = n;
        rr->tokens = ent_malloc((n ? n : 1) * sizeof *rr->tokens);
        rr->until = ent_calloc(n ? n : 1, sizeof *rr->until);
    }
    /* the statement wants each token once: cardinality() counts the array */
    uint8_t (*distinct)[16] = ent_malloc((n ? n : 1) * sizeof *distinct);
    size_t nd = 0;
    if (rr && rr->tokens && distinct) {
        memcpy(rr->tokens, tokens, n * sizeof *tokens);
        for (size_t i = 0; i < n; i++) {
            size_t k = 0;
            while (k < nd && memcmp(distinct[k], tokens[i], 16))
                k++;
            if (k == nd)
                memcpy(distinct[nd++], tokens[i], 16);
        }
    }
    char *arr = distinct ? store_uuid_array_text((const uint8_t (*)[16])distinct, nd) : NULL;
    ent_free(distinct);
    if (!op || !rr || !rr->tokens || !rr->until || !arr) {
        if (rr)
            renew_free(rr);
        ent_free(arr);
        if (op) {
            store_op_set_status(op, SB_ERR_INTERNAL);
            store_submit(s, op); /* fails it at once, through renew_done */
        } else {
            cb(ctx, SB_ERR_INTERNAL, NULL, 0);
        }
        return;
    }
    store_op_set_result(op, rr, renew_free);
    int8_param q = be_int8(entity_id), now = be_int8(now_ms), until = be_int8(until_ms);
    int rc = store_op_stmt(op, 0, STMT_MGMT_RENEW, (store_param[]){P_INT8(q), P_TEXT(arr), P_INT8(now), P_INT8(until)},
                           4);
    rc |= store_touch_stmt(op, 1, entity_id, now_ms);
    ent_free(arr);
    if (rc)
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

/* ---- receive by sequence number ---- */

typedef struct deferred_req {
    user_cb u;
    int64_t *seqs; /* request order, with repeats */
    size_t n;
    int64_t missing;
} deferred_req;

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void deferred_parse(store_op *op, int stmt, const void *res)
{
    const PGresult *r = res;
    deferred_req *dr = store_op_ctx(op);
    msgs_result *m = msgs_result_of(op);
    if (!m) {
        store_op_set_status(op, SB_ERR_INTERNAL);
        return;
    }
    if (stmt == 0) {
        /* the find: which of the asked ones are takeable */
        int rows = PQntuples(r);
        m->found = ent_malloc((size_t)(rows ? rows : 1) * sizeof *m->found);
        if (!m->found) {
            store_op_set_status(op, SB_ERR_INTERNAL);
            return;
        }
        for (int i = 0; i < rows; i++)
            m->found[i] = col_i64(r, i, 0);
        m->nfound = (size_t)rows;
        qsort(m->found, m->nfound, sizeof *m->found, cmp_i64);
        for (size_t i = 0; i < dr->n; i++)
            if (!bsearch(&dr->seqs[i], m->found, m->nfound, sizeof *m->found, cmp_i64)) {
                dr->missing = dr->seqs[i];
                store_op_set_status(op, SB_ERR_MESSAGE_NOT_FOUND);
                return;
            }
    } else if (stmt == 1) {
        if (parse_msgs(m, r))
            store_op_set_status(op, SB_ERR_INTERNAL);
        else if (m->n)
            qsort(m->msgs, m->n, sizeof *m->msgs, by_sequence);
    }
}

static void deferred_done(store_op *op, sb_status st)
{
    deferred_req *dr = store_op_ctx(op);
    msgs_result *m = store_op_result(op);
    store_deferred_cb cb = (store_deferred_cb)dr->u.fn;
    if (st == SB_OK && m) {
        /* back to request order (a repeated number is answered each time it was asked) */
        store_mgmt_msg *ordered = ent_malloc((dr->n ? dr->n : 1) * sizeof *ordered);
        size_t k = 0;
        for (size_t i = 0; ordered && m->msgs && i < dr->n; i++) {
            store_mgmt_msg key = {.sequence_number = dr->seqs[i]};
            store_mgmt_msg *hit = bsearch(&key, m->msgs, m->n, sizeof *m->msgs, by_sequence);
            if (hit)
                ordered[k++] = *hit;
        }
        if (ordered)
            cb(dr->u.ctx, SB_OK, 0, ordered, k);
        else
            cb(dr->u.ctx, SB_ERR_INTERNAL, 0, NULL, 0);
        ent_free(ordered);
    } else {
        cb(dr->u.ctx, st == SB_OK ? SB_ERR_INTERNAL : st, dr->missing, NULL, 0);
    }
    ent_free(dr->seqs);
    ent_free(dr);
}

void store_receive_deferred(store *s, int64_t entity_id, int subqueue, const int64_t *seqs, size_t n, bool delete,
                            int64_t now_ms, int64_t until_ms, store_deferred_cb cb, void *ctx)
{
    deferred_req *dr = ent_calloc(1, sizeof *dr);
    int64_t *distinct = ent_malloc((n ? n : 1) * sizeof *distinct);
    if (dr)
        dr->seqs = ent_malloc((n ? n : 1) * sizeof *dr->seqs);
    store_op *op = dr && dr->seqs && distinct ? store_op_new(3, deferred_parse, deferred_done, dr) : NULL;
    if (!op) {
        ent_free(distinct);
        if (dr)
            ent_free(dr->seqs);
        ent_free(dr);
        cb(ctx, SB_ERR_INTERNAL, 0, NULL, 0);
        return;
    }
    dr->u.fn = (void (*)(void))cb;
    dr->u.ctx = ctx;
    dr->n = n;
    memcpy(dr->seqs, seqs, n * sizeof *seqs);
    memcpy(distinct, seqs, n * sizeof *seqs);
    qsort(distinct, n, sizeof *distinct, cmp_i64);
    size_t nd = 0;
    for (size_t i = 0; i < n; i++)
        if (!nd || distinct[nd - 1] != distinct[i])
            distinct[nd++] = distinct[i];
    char *arr = store_int8_array_text(distinct, nd);
    ent_free(distinct);
    int8_param q = be_int8(entity_id), sq = be_int8(subqueue), now = be_int8(now_ms), until = be_int8(until_ms);
    int rc = !arr;
    if (arr) {
        rc |= store_op_stmt(op, 0, STMT_MGMT_DEFERRED_FIND,
                            (store_param[]){P_INT8(q), P_INT8(sq), P_TEXT(arr), P_INT8(now)}, 4);
        if (delete)
            rc |= store_op_stmt(op, 1, STMT_MGMT_DEFERRED_DELETE,
                                (store_param[]){P_INT8(q), P_INT8(sq), P_TEXT(arr), P_INT8(now)}, 4);
        else
            rc |= store_op_stmt(op, 1, STMT_MGMT_DEFERRED_LOCK,
                                (store_param[]){P_INT8(q), P_INT8(sq), P_TEXT(arr), P_INT8(now), P_INT8(until)}, 5);
        rc |= store_touch_stmt(op, 2, entity_id, now_ms);
    }
    ent_free(arr);
    if (rc)
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

/* ---- schedule ---- */

typedef struct seqs_result {
    size_t n;
    int64_t *seqs;
} seqs_result;

static void seqs_free(void *p)
{
    seqs_result *r = p;
    ent_free(r->seqs);
    ent_free(r);
}

/* One answer per message stored: (ordinal, sequence number). A duplicate
 * MessageId gets none and keeps 0, like a duplicate send. */
static void schedule_row(store_op *op, int index, const void *res, int row)
{
    seqs_result *sr = store_op_result(op);
    if (sr && (size_t)index < sr->n)
        sr->seqs[index] = col_i64(res, row, 1);
}

static const store_merge_def *schedule_def(void)
{
    /* the send's statement and columns, with the sequence numbers read back */
    static store_merge_def def;
    if (!def.prepared) {
        def = store_send_set;
        def.row = schedule_row;
    }
    return &def;
}

static void schedule_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    seqs_result *sr = store_op_result(op);
    if (st == SB_OK && sr)
        ((store_seqs_cb)u->fn)(u->ctx, SB_OK, sr->seqs, sr->n);
    else
        ((store_seqs_cb)u->fn)(u->ctx, st == SB_OK ? SB_ERR_INTERNAL : st, NULL, 0);
    ent_free(u);
}

void store_schedule(store *s, int64_t entity_id, const store_new_message *msgs, size_t n, int64_t now_ms,
                    store_seqs_cb cb, void *ctx)
{
    (void)now_ms; /* each message carries its own; the send stamps the activity */
    user_cb *u = user_new((void (*)(void))cb, ctx);
    store_op *op = u ? store_op_new_merged(schedule_def(), entity_id, (int)n, schedule_done, u) : NULL;
    if (!op) {
        ent_free(u);
        cb(ctx, SB_ERR_INTERNAL, NULL, 0);
        return;
    }
    seqs_result *sr = ent_calloc(1, sizeof *sr);
    if (sr && !(sr->seqs = ent_calloc(n ? n : 1, sizeof *sr->seqs))) {
        ent_free(sr);
        sr = NULL;
    }
    if (!sr) {
        store_op_set_status(op, SB_ERR_INTERNAL);
        store_submit(s, op);
        return;
    }
    sr->n = n;
    store_op_set_result(op, sr, seqs_free);
    for (size_t i = 0; i < n; i++)
        if (store_send_row(op, (int)i, &msgs[i])) {
            store_op_set_status(op, SB_ERR_INTERNAL);
            break;
        }
    store_submit(s, op);
}

/* ---- cancel, touch ---- */

void store_cancel_scheduled(store *s, int64_t entity_id, const int64_t *seqs, size_t n, int64_t now_ms,
                            store_status_cb cb, void *ctx)
{
    store_op *op = store_op_or_fail(2, NULL, store_status_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        if (cb)
            cb(ctx, SB_ERR_INTERNAL);
        return;
    }
    char *arr = store_int8_array_text(seqs, n);
    int8_param q = be_int8(entity_id), now = be_int8(now_ms);
    int rc = !arr;
    if (arr)
        rc |= store_op_stmt(op, 0, STMT_MGMT_CANCEL, (store_param[]){P_INT8(q), P_TEXT(arr), P_INT8(now)}, 3);
    rc |= store_touch_stmt(op, 1, entity_id, now_ms);
    ent_free(arr);
    if (rc)
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

void store_touch_queue(store *s, int64_t entity_id, int64_t now_ms, store_status_cb cb, void *ctx)
{
    store_op *op = store_op_or_fail(1, NULL, store_status_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        if (cb)
            cb(ctx, SB_ERR_INTERNAL);
        return;
    }
    if (store_touch_stmt(op, 0, entity_id, now_ms))
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

/* ---- batch delete ---- */

typedef struct count_result {
    int64_t count;
} count_result;

static void count_parse(store_op *op, int stmt, const void *res)
{
    if (stmt != 0)
        return;
    count_result *c = store_op_result(op);
    if (PQntuples((const PGresult *)res) > 0)
        c->count = col_i64(res, 0, 0);
}

static void count_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    count_result *c = store_op_result(op);
    ((store_count_cb)u->fn)(u->ctx, st == SB_OK && !c ? SB_ERR_INTERNAL : st, c ? c->count : 0);
    ent_free(u);
}

void store_batch_delete(store *s, int64_t entity_id, int subqueue, int max, int64_t before_ms, int64_t now_ms,
                        store_count_cb cb, void *ctx)
{
    store_op *op = store_op_or_fail(2, count_parse, count_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL, 0);
        return;
    }
    count_result *c = ent_calloc(1, sizeof *c);
    if (c)
        store_op_set_result(op, c, ent_free);
    int8_param q = be_int8(entity_id), sq = be_int8(subqueue), lim = be_int8(max), before = be_int8(before_ms),
               now = be_int8(now_ms);
    int rc = !c;
    rc |= store_op_stmt(op, 0, STMT_MGMT_BATCH_DELETE,
                        (store_param[]){P_INT8(q), P_INT8(sq), P_INT8(lim), P_INT8(before), P_INT8(now)}, 5);
    rc |= store_touch_stmt(op, 1, entity_id, now_ms);
    if (rc)
        store_op_set_status(op, SB_ERR_INTERNAL);
    if (subqueue == 0)
        store_op_set_catch_up(op, entity_id); /* its log entries too (store_log.h) */
    store_submit(s, op);
}

/* ---- properties-to-modify: read and replace a locked message ---- */

typedef struct bytes_result {
    PGresult *pgresult;
} bytes_result;

static void bytes_free(void *p)
{
    bytes_result *b = p;
    PQclear(b->pgresult);
    ent_free(b);
}

static void read_parse(store_op *op, int stmt, const void *res)
{
    (void)stmt;
    const PGresult *r = res;
    if (PQntuples(r) < 1) {
        store_op_set_status(op, SB_ERR_LOCK_LOST);
        return;
    }
    bytes_result *b = ent_calloc(1, sizeof *b);
    if (!b || !(b->pgresult = PQcopyResult(r, PG_COPYRES_ATTRS | PG_COPYRES_TUPLES))) {
        ent_free(b);
        store_op_set_status(op, SB_ERR_INTERNAL);
        return;
    }
    store_op_set_result(op, b, bytes_free);
}

static void read_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    bytes_result *b = store_op_result(op);
    if (st == SB_OK && b)
        ((store_bytes_cb)u->fn)(u->ctx, SB_OK, (const uint8_t *)PQgetvalue(b->pgresult, 0, 0),
                                (size_t)PQgetlength(b->pgresult, 0, 0));
    else
        ((store_bytes_cb)u->fn)(u->ctx, st == SB_OK ? SB_ERR_INTERNAL : st, NULL, 0);
    ent_free(u);
}

void store_read_locked_message(store *s, int64_t entity_id, const uint8_t token[16], int64_t now_ms,
                               store_bytes_cb cb, void *ctx)
{
    store_op *op = store_op_or_fail(1, read_parse, read_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL, NULL, 0);
        return;
    }
    int8_param q = be_int8(entity_id), now = be_int8(now_ms);
    if (store_op_stmt(op, 0, STMT_MGMT_READ_LOCKED, (store_param[]){{token, 16, 1}, P_INT8(q), P_INT8(now)}, 3))
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

static void lock_lost_unless_row(store_op *op, int stmt, const void *res)
{
    (void)stmt;
    if (PQntuples((const PGresult *)res) < 1)
        store_op_set_status(op, SB_ERR_LOCK_LOST);
}

void store_replace_locked_message(store *s, int64_t entity_id, const uint8_t token[16], int64_t now_ms,
                                  const uint8_t *bytes, size_t len, store_status_cb cb, void *ctx)
{
    store_op *op = store_op_or_fail(1, lock_lost_unless_row, store_status_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        if (cb)
            cb(ctx, SB_ERR_INTERNAL);
        return;
    }
    int8_param q = be_int8(entity_id), now = be_int8(now_ms);
    if (store_op_stmt(op, 0, STMT_MGMT_REPLACE_LOCKED,
                      (store_param[]){{token, 16, 1}, P_INT8(q), P_INT8(now), {bytes, (int)len, 1}}, 4))
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}
