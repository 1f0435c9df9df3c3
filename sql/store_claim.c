/* Claiming: a receive takes up to its credit in one statement, locked or deleted (store_claim,
 * store_claim_session). Declared in store_queue.h. */
#include "store_queue.h"

#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "store_binary.h"
#include "store_claim_sql.h"
#include "store_log.h"
#include "store_session.h"
#include "store_statements.h"
#include "store_story.h"

typedef struct claim_result {
    size_t n;
    store_claimed *msgs;
    void *pgresult; /* the rows the claimed messages point into */
} claim_result;

static void claim_free(void *p)
{
    claim_result *c = p;
    PQclear(c->pgresult);
    ent_free(c->msgs);
    ent_free(c);
}

static int by_sequence(const void *a, const void *b)
{
    const store_claimed *x = a, *y = b;
    return x->sequence_number < y->sequence_number ? -1 : x->sequence_number > y->sequence_number;
}

static void claim_parse(store_op *op, int stmt, const void *res)
{
    const PGresult *r = res;
    if (stmt != store_op_nstmt(op) - 1)
        return; /* the touch before the claim */
    int rows = PQntuples(r);
    claim_result *c = ent_calloc(1, sizeof *c);
    /* the messages stay in the result they came in (not copied again) */
    PGresult *copy = (PGresult *)r;
    if (!c || (rows && !(c->msgs = ent_calloc((size_t)rows, sizeof *c->msgs)))) {
        ent_free(c);
        store_op_set_status(op, SB_ERR_INTERNAL);
        return;
    }
    store_op_take_result(op);
    c->pgresult = copy;
    c->n = (size_t)rows;
    for (int i = 0; i < rows; i++) {
        store_claimed *m = &c->msgs[i];
        m->sequence_number = col_i64(copy, i, 0);
        m->enqueued_ms = col_ts_ms(copy, i, 1);
        m->locked_until_ms = col_ts_ms(copy, i, 2);
        memcpy(m->lock_token, PQgetvalue(copy, i, 3), 16);
        m->delivery_count = (int32_t)col_i64(copy, i, 4);
        m->ttl_ms = col_i64(copy, i, 5);
        m->dead_letter_reason = PQgetisnull(copy, i, 6) ? NULL : PQgetvalue(copy, i, 6);
        m->dead_letter_description = PQgetisnull(copy, i, 7) ? NULL : PQgetvalue(copy, i, 7);
        m->bytes = (const uint8_t *)PQgetvalue(copy, i, 8);
        m->len = (size_t)PQgetlength(copy, i, 8);
        m->message_id = PQgetisnull(copy, i, 9) ? NULL : PQgetvalue(copy, i, 9);
        m->dead_letter_source = PQgetisnull(copy, i, 10) ? NULL : PQgetvalue(copy, i, 10);
        m->expires_ms = col_ts_ms(copy, i, 11);
    }
    if (c->n)
        qsort(c->msgs, c->n, sizeof *c->msgs, by_sequence);
    store_op_set_result(op, c, claim_free);
}

static void claim_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    claim_result *c = store_op_result(op);
    if (st == SB_OK && c)
        ((store_claim_cb)u->fn)(u->ctx, SB_OK, c->msgs, c->n);
    else
        ((store_claim_cb)u->fn)(u->ctx, st == SB_OK ? SB_ERR_INTERNAL : st, NULL, 0);
    ent_free(u);
}

/* A claim op: the activity stamp first when is_activity, then the claim
 * statement (its index in *i); NULL after failing cb when out of memory. */
static store_op *claim_op(int64_t entity_id, int64_t now_ms, bool is_activity, int *i, int *rc, store_claim_cb cb,
                          void *ctx)
{
    user_cb *u = user_new((void (*)(void))cb, ctx);
    store_op *op = u ? store_op_new(1 + is_activity, claim_parse, claim_done, u) : NULL;
    if (!op) {
        ent_free(u);
        cb(ctx, SB_ERR_INTERNAL, NULL, 0);
        return NULL;
    }
    *i = 0;
    *rc = is_activity ? store_touch_stmt(op, (*i)++, entity_id, now_ms) : 0;
    return op;
}

/* What a claim asked for max takes at most (STORE_CLAIM_MAX: its locks are one lock_batches row). */
static int claim_limit(int max) { return max < STORE_CLAIM_MAX ? max : STORE_CLAIM_MAX; }

/* Who claims, as the story twins' last two parameters: the story is told of
 * a client's claims only (peer), and only while it is recorded. */
static bool told(const store_peer *peer) { return peer && store_story_on(); }

/* The link's name as a parameter: NULL when the story cannot keep it. */
static store_param link_param(const store_peer *peer)
{
    const char *link = store_story_link(peer->link);
    return link ? (store_param){link, (int)strlen(link), 0} : (store_param){0};
}

void store_claim(store *s, int64_t entity_id, int subqueue, bool from_log, store_claim_mode mode, int max,
                 int64_t now_ms, int64_t locked_until_ms, bool is_activity, int64_t from_seq, const store_peer *peer,
                 store_claim_cb cb, void *ctx)
{
    int i, rc;
    store_op *op = claim_op(entity_id, now_ms, is_activity, &i, &rc, cb, ctx);
    if (!op)
        return;
    int8_param q = be_int8(entity_id), sq = be_int8(subqueue), now = be_int8(now_ms),
               lim = be_int8(claim_limit(max)), until = be_int8(locked_until_ms), from = be_int8(from_seq),
               conn = be_int8(peer ? (int64_t)peer->connection : 0);
    bool story = told(peer);
    const char *lock = from_log ? (story ? STMT_CLAIM_LOCK_LOG_STORY : STMT_CLAIM_LOCK_LOG)
                                : (story ? STMT_CLAIM_LOCK_STORY : STMT_CLAIM_LOCK);
    const char *del = from_log ? (story ? STMT_CLAIM_DELETE_LOG_STORY : STMT_CLAIM_DELETE_LOG)
                               : (story ? STMT_CLAIM_DELETE_STORY : STMT_CLAIM_DELETE);
    if (mode == STORE_CLAIM_LOCK)
        store_op_set_lazy(op); /* it only locks (and stamps activity) */
    if (mode == STORE_CLAIM_LOCK)
        rc |= store_op_stmt(op, i, lock,
                            (store_param[]){P_INT8(q), P_INT8(sq), P_INT8(now), P_INT8(lim), P_INT8(until), P_INT8(from),
                                            P_INT8(conn), story ? link_param(peer) : (store_param){0}},
                            story ? 8 : 6);
    else
        rc |= store_op_stmt(op, i, del,
                            (store_param[]){P_INT8(q), P_INT8(sq), P_INT8(now), P_INT8(lim), P_INT8(from), P_INT8(conn),
                                            story ? link_param(peer) : (store_param){0}},
                            story ? 7 : 5);
    if (rc)
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

void store_claim_session(store *s, int64_t entity_id, const char *session_id, const uint8_t session_token[16],
                         store_claim_mode mode, int max, int64_t now_ms, bool is_activity, int64_t from_seq,
                         const store_peer *peer, store_claim_cb cb, void *ctx)
{
    int i, rc;
    store_op *op = claim_op(entity_id, now_ms, is_activity, &i, &rc, cb, ctx);
    if (!op)
        return;
    int8_param q = be_int8(entity_id), sq = be_int8(0), now = be_int8(now_ms),
               lim = be_int8(claim_limit(max)), from = be_int8(from_seq),
               conn = be_int8(peer ? (int64_t)peer->connection : 0);
    if (mode == STORE_CLAIM_LOCK)
        store_op_set_lazy(op);
    bool story = told(peer);
    const char *stmt = mode == STORE_CLAIM_LOCK ? (story ? STMT_CLAIM_SESSION_LOCK_STORY : STMT_CLAIM_SESSION_LOCK)
                                                : (story ? STMT_CLAIM_SESSION_DELETE_STORY : STMT_CLAIM_SESSION_DELETE);
    rc |= store_op_stmt(op, i, stmt,
                        (store_param[]){P_INT8(q), P_INT8(sq), P_INT8(now), P_INT8(lim), P_INT8(now), P_INT8(from),
                                        P_TEXT(session_id), P_UUID(session_token), P_INT8(conn),
                                        story ? link_param(peer) : (store_param){0}},
                        story ? 10 : 8);
    if (rc)
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}
