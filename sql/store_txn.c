/* See store_txn.h. Sends and publishes become merged ops at once (their rows
 * encoded, bytes copied) that are never submitted: at commit each is turned
 * into one statement of the commit op (store_op_stmt_rows). */
#include "store_txn.h"

#include <stdlib.h>
#include <string.h>

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
};

store_txn *store_txn_new(void) { return calloc(1, sizeof(store_txn)); }

static void settlement_free(store_settlement *x)
{
    free((char *)x->reason);
    free((char *)x->description);
}

void store_txn_free(store_txn *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nrows; i++) /* never submitted: a statement built from them frees them */
        store_op_stmt_rows(NULL, 0, t->rows[i]);
    for (size_t i = 0; i < t->nsettles; i++)
        settlement_free(&t->settles[i]);
    free(t->rows);
    free(t->settles);
    free(t->targets);
    free(t);
}

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 8;
    void *p = realloc(*v, c * size);
    if (!p)
        return -1;
    *v = p;
    *cap = c;
    return 0;
}

static int add_rows(store_txn *t, int64_t entity_id, store_op *op)
{
    if (!op || grow((void **)&t->rows, &t->caprows, t->nrows, sizeof *t->rows)) {
        if (op)
            store_op_stmt_rows(NULL, 0, op);
        return -1;
    }
    t->rows[t->nrows++] = op;
    for (size_t i = 0; i < t->ntargets; i++)
        if (t->targets[i] == entity_id)
            return 0;
    if (grow((void **)&t->targets, &t->captargets, t->ntargets, sizeof *t->targets))
        return -1;
    t->targets[t->ntargets++] = entity_id;
    return 0;
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

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

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
    return 0;
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

void store_txn_commit(store *s, store_txn *t, int64_t now_ms, store_status_cb cb, void *ctx)
{
    store_op *complete = settle_rows(t, true), *other = settle_rows(t, false);
    int nstmt = (t->nsettles > 0) + (complete != NULL) + (other != NULL) + (int)t->nrows;
    user_cb *u = user_new((void (*)(void))cb, ctx);
    store_op *op = store_op_or_fail(nstmt, NULL, store_status_done, u);
    int rc = op ? 0 : -1;
    int i = 0;
    if (op && t->nsettles) {
        uint8_t(*tokens)[16] = malloc(t->nsettles * sizeof *tokens);
        for (size_t k = 0; tokens && k < t->nsettles; k++)
            memcpy(tokens[k], t->settles[k].lock_token, 16);
        char *list = tokens ? store_mgmt_uuid_array((const uint8_t(*)[16])tokens, t->nsettles) : NULL;
        int8_param now = be_int8(now_ms);
        rc |= list ? store_op_stmt(op, i++, STMT_TXN_GUARD, (store_param[]){P_TEXT(list), P_INT8(now)}, 2) : -1;
        free(list);
        free(tokens);
    }
    if (complete)
        rc |= op ? store_op_stmt_rows(op, i++, complete) : store_op_stmt_rows(NULL, 0, complete);
    if (other)
        rc |= op ? store_op_stmt_rows(op, i++, other) : store_op_stmt_rows(NULL, 0, other);
    for (size_t k = 0; k < t->nrows; k++)
        rc |= op ? store_op_stmt_rows(op, i++, t->rows[k]) : store_op_stmt_rows(NULL, 0, t->rows[k]);
    t->nrows = 0;
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
