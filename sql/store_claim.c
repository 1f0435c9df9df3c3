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
    /* a session's lock and claim (store_session_lock_claim): whether it
     * locked the session, which one, and the message it was picked by */
    bool locked;
    const char *session_id;
    int64_t picked_seq;
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

/* Keeps r as op's result: the messages of its rows, in sequence order, their
 * CLAIM_COLUMNS from column col0 on (a row whose first is NULL holds none).
 * NULL when out of memory (op then failed). */
static claim_result *keep_claimed(store_op *op, const PGresult *r, int col0)
{
    int rows = PQntuples(r);
    claim_result *c = ent_calloc(1, sizeof *c);
    /* the messages stay in the result they came in (not copied again) */
    PGresult *copy = (PGresult *)r;
    if (!c || (rows && !(c->msgs = ent_calloc((size_t)rows, sizeof *c->msgs)))) {
        ent_free(c);
        store_op_set_status(op, SB_ERR_INTERNAL);
        return NULL;
    }
    store_op_take_result(op);
    c->pgresult = copy;
    for (int i = 0; i < rows; i++) {
        if (PQgetisnull(copy, i, col0))
            continue;
        store_claimed *m = &c->msgs[c->n++];
        m->sequence_number = col_i64(copy, i, col0);
        m->enqueued_ms = col_ts_ms(copy, i, col0 + 1);
        m->locked_until_ms = col_ts_ms(copy, i, col0 + 2);
        memcpy(m->lock_token, PQgetvalue(copy, i, col0 + 3), 16);
        m->delivery_count = (int32_t)col_i64(copy, i, col0 + 4);
        m->ttl_ms = col_i64(copy, i, col0 + 5);
        m->dead_letter_reason = PQgetisnull(copy, i, col0 + 6) ? NULL : PQgetvalue(copy, i, col0 + 6);
        m->dead_letter_description = PQgetisnull(copy, i, col0 + 7) ? NULL : PQgetvalue(copy, i, col0 + 7);
        m->bytes = (const uint8_t *)PQgetvalue(copy, i, col0 + 8);
        m->len = (size_t)PQgetlength(copy, i, col0 + 8);
        m->message_id = PQgetisnull(copy, i, col0 + 9) ? NULL : PQgetvalue(copy, i, col0 + 9);
        m->dead_letter_source = PQgetisnull(copy, i, col0 + 10) ? NULL : PQgetvalue(copy, i, col0 + 10);
        m->expires_ms = col_ts_ms(copy, i, col0 + 11);
    }
    if (c->n)
        qsort(c->msgs, c->n, sizeof *c->msgs, by_sequence);
    store_op_set_result(op, c, claim_free);
    return c;
}

static void claim_parse(store_op *op, int stmt, const void *res)
{
    if (stmt == store_op_nstmt(op) - 1) /* (else the touch before the claim) */
        keep_claimed(op, res, 0);
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

/* ---- a session's lock with its first claim ---- */

static void lock_claim_parse(store_op *op, int stmt, const void *res)
{
    if (stmt != store_op_nstmt(op) - 1)
        return; /* the touch before it */
    const PGresult *r = res;
    claim_result *c = keep_claimed(op, r, 2);
    if (c && PQntuples(r) > 0) {
        c->locked = true;
        c->session_id = PQgetvalue(r, 0, 0);
        c->picked_seq = col_i64(r, 0, 1);
    }
}

static void lock_claim_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    claim_result *c = store_op_result(op);
    store_session_lock_claim_cb cb = (store_session_lock_claim_cb)u->fn;
    if (st != SB_OK || !c)
        cb(u->ctx, st == SB_OK ? SB_ERR_INTERNAL : st, NULL, 0, NULL, 0);
    else if (!c->locked)
        cb(u->ctx, SB_ERR_SESSION_CANNOT_BE_LOCKED, NULL, 0, NULL, 0);
    else
        cb(u->ctx, SB_OK, c->session_id, c->picked_seq, c->msgs, c->n);
    ent_free(u);
}

void store_session_lock_claim(store *s, int64_t entity_id, const char *session_id, const uint8_t token[16],
                              int64_t now_ms, int64_t locked_until_ms, int64_t pick_from, int max, bool is_activity,
                              const struct store_peer *peer, store_session_lock_claim_cb cb, void *ctx)
{
    user_cb *u = user_new((void (*)(void))cb, ctx);
    store_op *op = u ? store_op_new(1 + is_activity, lock_claim_parse, lock_claim_done, u) : NULL;
    if (!op) {
        ent_free(u);
        cb(ctx, SB_ERR_INTERNAL, NULL, 0, NULL, 0);
        return;
    }
    int i = 0;
    int rc = is_activity ? store_touch_stmt(op, i++, entity_id, now_ms) : 0;
    int8_param q = be_int8(entity_id), sq = be_int8(0), now = be_int8(now_ms), lim = be_int8(claim_limit(max)),
               until = be_int8(locked_until_ms), from = be_int8(0), pick = be_int8(pick_from),
               conn = be_int8(peer ? (int64_t)peer->connection : 0);
    bool story = told(peer);
    store_op_set_lazy(op); /* it only locks: forgotten in a crash of PostgreSQL, the session is free */
    rc |= store_op_stmt(op, i, story ? STMT_SESSION_LOCK_CLAIM_STORY : STMT_SESSION_LOCK_CLAIM,
                        (store_param[]){P_INT8(q), P_INT8(sq), P_INT8(now), P_INT8(lim), P_INT8(until), P_INT8(from),
                                        P_TEXT(session_id), P_UUID(token),
                                        P_INT8(pick), P_INT8(conn), story ? link_param(peer) : (store_param){0}},
                        story ? 11 : 9);
    if (rc)
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}
