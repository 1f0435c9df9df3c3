/* See store_txn.h. Sends and publishes become merged ops at once (their rows
 * encoded, bytes copied) that are never submitted: at commit each is turned
 * into one statement of the commit op (store_op_stmt_rows). */
#include "store_txn.h"

#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "store_arrays.h"
#include "store_binary.h"
#include "store_mgmt.h"
#include "store_statements.h"

struct store_txn {
    store_op **rows; /* unsubmitted merged ops: sends and publishes, in order */
    size_t nrows, caprows;
    store_settlement *settles; /* strings owned */
    size_t nsettles, capsettles;
    int64_t *targets;
    size_t ntargets, captargets;
    int64_t *resting; /* topics copies rest in (store_txn_rest) */
    size_t nresting, capresting;
    struct pending { int64_t entity_id; char *seqs; } *pending; /* seqs: text int8[] */
    size_t npending, cappending;
};

store_txn *store_txn_new(void) { return ent_calloc(1, sizeof(store_txn)); }

static void settlement_free(store_settlement *x)
{
    ent_free((char *)x->reason);
    ent_free((char *)x->description);
}

void store_txn_free(store_txn *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nrows; i++) /* never submitted: a statement built from them frees them */
        store_op_stmt_rows(NULL, 0, t->rows[i]);
    for (size_t i = 0; i < t->nsettles; i++)
        settlement_free(&t->settles[i]);
    for (size_t i = 0; i < t->npending; i++)
        ent_free(t->pending[i].seqs);
    ent_free(t->pending);
    ent_free(t->rows);
    ent_free(t->settles);
    ent_free(t->targets);
    ent_free(t->resting);
    ent_free(t);
}

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 8;
    void *p = ent_realloc(*v, c * size);
    if (!p)
        return -1;
    *v = p;
    *cap = c;
    return 0;
}

/* Adds id to a set kept as an array (a transaction names a few entities). */
static int add_id(int64_t **ids, size_t *n, size_t *cap, int64_t id)
{
    for (size_t i = 0; i < *n; i++)
        if ((*ids)[i] == id)
            return 0;
    if (grow((void **)ids, cap, *n, sizeof **ids))
        return -1;
    (*ids)[(*n)++] = id;
    return 0;
}

static int add_target(store_txn *t, int64_t entity_id)
{
    return add_id(&t->targets, &t->ntargets, &t->captargets, entity_id);
}

int store_txn_rest(store_txn *t, int64_t topic_id)
{
    return add_id(&t->resting, &t->nresting, &t->capresting, topic_id);
}

size_t store_txn_resting(const store_txn *t, const int64_t **ids)
{
    *ids = t->resting;
    return t->nresting;
}

static int add_rows(store_txn *t, int64_t entity_id, store_op *op)
{
    if (!op || grow((void **)&t->rows, &t->caprows, t->nrows, sizeof *t->rows)) {
        if (op)
            store_op_stmt_rows(NULL, 0, op);
        return -1;
    }
    t->rows[t->nrows++] = op;
    return add_target(t, entity_id);
}

int store_txn_send(store_txn *t, int64_t entity_id, const store_new_message *msgs, size_t n)
{
    store_op *op = store_op_new_merged(&store_send_set, entity_id, (int)n, NULL, NULL);
    for (size_t i = 0; op && i < n; i++)
        if (store_send_row(op, (int)i, &msgs[i]))
            store_op_set_status(op, SB_ERR_INTERNAL);
    return add_rows(t, entity_id, op);
}

int store_txn_publish(store_txn *t, int64_t topic_id, const store_copy *rows, size_t n)
{
    return add_rows(t, topic_id, store_publish_rows(topic_id, rows, n));
}

static char *dup_or_null(const char *s) { return s ? ent_strdup(s) : NULL; }

int store_txn_settle(store_txn *t, const store_settlement *x)
{
    if (grow((void **)&t->settles, &t->capsettles, t->nsettles, sizeof *t->settles))
        return -1;
    store_settlement *c = &t->settles[t->nsettles];
    *c = *x;
    c->reason = dup_or_null(x->reason);
    c->description = dup_or_null(x->description);
    if ((x->reason && !c->reason) || (x->description && !c->description)) {
        settlement_free(c);
        return -1;
    }
    t->nsettles++;
    return add_target(t, x->entity_id); /* an abandon gives a message back: its receivers are woken */
}

size_t store_txn_settlements(const store_txn *t, const store_settlement **out)
{
    *out = t->settles;
    return t->nsettles;
}

size_t store_txn_targets(const store_txn *t, const int64_t **ids)
{
    *ids = t->targets;
    return t->ntargets;
}

/* The settlements of one statement (completes, or the others) as a merged op's rows. */
static store_op *settle_rows(const store_txn *t, bool completes)
{
    int n = 0;
    for (size_t i = 0; i < t->nsettles; i++)
        n += (t->settles[i].kind == STORE_SETTLE_COMPLETE) == completes;
    if (!n)
        return NULL;
    store_op *op = store_op_new_merged(completes ? &store_complete_set : &store_settle_set, 0, n, NULL, NULL);
    int k = 0;
    for (size_t i = 0; op && i < t->nsettles; i++)
        if ((t->settles[i].kind == STORE_SETTLE_COMPLETE) == completes && store_settle_row(op, k++, &t->settles[i]))
            store_op_set_status(op, SB_ERR_INTERNAL);
    return op;
}

int store_txn_activate(store_txn *t, int64_t entity_id, const int64_t *seqs, size_t n)
{
    char *list = store_int8_array_text(seqs, n);
    if (!list || grow((void **)&t->pending, &t->cappending, t->npending, sizeof *t->pending)) {
        ent_free(list);
        return -1;
    }
    t->pending[t->npending++] = (struct pending){entity_id, list};
    return 0;
}

void store_txn_discard(store *s, store_txn *t)
{
    for (size_t i = 0; i < t->npending; i++) {
        store_op *op = store_op_new(1, NULL, NULL, NULL);
        int8_param q = be_int8(t->pending[i].entity_id);
        if (!op)
            continue; /* the sweep deletes them once their time is up */
        if (store_op_stmt(op, 0, STMT_TXN_DISCARD, (store_param[]){P_INT8(q), P_TEXT(t->pending[i].seqs)}, 2))
            store_op_set_status(op, SB_ERR_INTERNAL);
        store_submit(s, op);
    }
}

/* ---- scheduling in a transaction ---- */

typedef struct pending_result {
    size_t n;
    int64_t *seqs;
} pending_result;

static void pending_free(void *p)
{
    pending_result *r = p;
    ent_free(r->seqs);
    ent_free(r);
}

/* Statement 0 answers (ordinal, sequence number) per message stored. */
static void pending_parse(store_op *op, int stmt, const void *res)
{
    pending_result *r = store_op_result(op);
    if (stmt != 0 || !r)
        return;
    for (int i = 0; i < PQntuples(res); i++) {
        int64_t ord = col_i64(res, i, 0);
        if (ord >= 1 && (size_t)ord <= r->n)
            r->seqs[ord - 1] = col_i64(res, i, 1);
    }
}

static void pending_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    pending_result *r = store_op_result(op);
    if (st == SB_OK && r)
        ((store_txn_seqs_cb)u->fn)(u->ctx, SB_OK, r->seqs, r->n);
    else
        ((store_txn_seqs_cb)u->fn)(u->ctx, st == SB_OK ? SB_ERR_INTERNAL : st, NULL, 0);
    ent_free(u);
}

void store_schedule_pending(store *s, int64_t entity_id, const store_new_message *msgs, size_t n,
                            int64_t pending_until_ms, store_txn_seqs_cb cb, void *ctx)
{
    store_op *op = store_op_or_fail(2, pending_parse, pending_done, user_new((void (*)(void))cb, ctx));
    pending_result *r = op ? ent_calloc(1, sizeof *r) : NULL;
    if (r && !(r->seqs = ent_calloc(n ? n : 1, sizeof *r->seqs))) {
        ent_free(r);
        r = NULL;
    }
    if (!op || !r) {
        ent_free(r);
        if (op) {
            store_op_set_status(op, SB_ERR_INTERNAL);
            store_submit(s, op);
        } else {
            cb(ctx, SB_ERR_INTERNAL, NULL, 0);
        }
        return;
    }
    r->n = n;
    store_op_set_result(op, r, pending_free);
    store_op *rows = store_op_new_merged(&store_send_set, entity_id, (int)n, NULL, NULL);
    int rc = rows ? 0 : -1;
    for (size_t i = 0; rows && i < n; i++)
        rc |= store_send_row(rows, (int)i, &msgs[i]);
    rc |= rows ? store_op_stmt_rows(op, 0, rows) : -1;
    int8_param q = be_int8(entity_id), until = be_int8(pending_until_ms);
    rc |= store_op_stmt(op, 1, STMT_TXN_PENDING_STAMP, (store_param[]){P_INT8(q), P_INT8(until)}, 2);
    if (rc)
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

/* ---- commit ---- */

void store_txn_commit(store *s, store_txn *t, int64_t now_ms, store_status_cb cb, void *ctx)
{
    store_op *complete = settle_rows(t, true), *other = settle_rows(t, false);
    int nstmt = (t->nsettles > 0) + (complete != NULL) + (other != NULL) + (int)t->nrows + (int)t->npending;
    user_cb *u = user_new((void (*)(void))cb, ctx);
    store_op *op = store_op_or_fail(nstmt, NULL, store_status_done, u);
    int rc = op ? 0 : -1;
    int i = 0;
    if (op && t->nsettles) {
        uint8_t(*tokens)[16] = ent_malloc(t->nsettles * sizeof *tokens);
        int64_t *entities = ent_malloc(t->nsettles * sizeof *entities);
        for (size_t k = 0; tokens && entities && k < t->nsettles; k++) {
            memcpy(tokens[k], t->settles[k].lock_token, 16);
            entities[k] = t->settles[k].entity_id;
        }
        char *list = tokens && entities ? store_uuid_array_text((const uint8_t(*)[16])tokens, t->nsettles) : NULL;
        char *where = list ? store_int8_array_text(entities, t->nsettles) : NULL;
        int8_param now = be_int8(now_ms);
        rc |= where ? store_op_stmt(op, i++, STMT_TXN_GUARD, (store_param[]){P_TEXT(list), P_INT8(now), P_TEXT(where)}, 3)
                    : -1;
        ent_free(where);
        ent_free(list);
        ent_free(entities);
        ent_free(tokens);
    }
    if (complete)
        rc |= op ? store_op_stmt_rows(op, i++, complete) : store_op_stmt_rows(NULL, 0, complete);
    if (other)
        rc |= op ? store_op_stmt_rows(op, i++, other) : store_op_stmt_rows(NULL, 0, other);
    for (size_t k = 0; k < t->nrows; k++)
        rc |= op ? store_op_stmt_rows(op, i++, t->rows[k]) : store_op_stmt_rows(NULL, 0, t->rows[k]);
    t->nrows = 0;
    for (size_t k = 0; op && k < t->npending; k++) {
        int8_param q = be_int8(t->pending[k].entity_id);
        rc |= store_op_stmt(op, i++, STMT_TXN_ACTIVATE, (store_param[]){P_INT8(q), P_TEXT(t->pending[k].seqs)}, 2);
    }
    if (op && t->ntargets)
        store_op_set_notify(op, t->targets[0]); /* the others are woken by this emulator, and polled by the rest */
    store_txn_free(t);
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL);
        return;
    }
    if (rc)
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}
