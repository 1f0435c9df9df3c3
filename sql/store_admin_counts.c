/* store_admin_counts (store_admin.h): every entity's size and counts in one
 * statement (STMT_ADMIN_COUNTS), for GET /metrics. */
#include "store_admin.h"

#include <libpq-fe.h>
#include <string.h>

#include "ent_alloc.h"
#include "store_binary.h"

typedef struct counts_result {
    store_admin_counts_row *rows;
    size_t n;
    bool read;
} counts_result;

static void counts_free(void *p)
{
    counts_result *x = p;
    ent_free(x->rows);
    ent_free(x);
}

static ent_kind kind_of(const char *kind)
{
    return !strcmp(kind, "topic") ? ENT_KIND_TOPIC : !strcmp(kind, "subscription") ? ENT_KIND_SUBSCRIPTION
                                                                                    : ENT_KIND_QUEUE;
}

static void counts_parse(store_op *op, int stmt, const void *res)
{
    (void)stmt;
    const PGresult *r = res;
    counts_result *x = store_op_result(op);
    int rows = PQntuples(r);
    if (rows > 0 && !(x->rows = ent_calloc((size_t)rows, sizeof *x->rows))) {
        store_op_set_status(op, SB_ERR_INTERNAL);
        return;
    }
    for (int i = 0; i < rows; i++) {
        store_admin_counts_row *row = &x->rows[i];
        char kind[16];
        row->id = col_i64(r, i, 0);
        col_text(r, i, 1, kind, sizeof kind);
        row->kind = kind_of(kind);
        col_text(r, i, 2, row->path, sizeof row->path);
        row->size_in_bytes = col_i64(r, i, 3);
        row->active = col_i64(r, i, 4);
        row->dead_letter = col_i64(r, i, 5);
        row->scheduled = col_i64(r, i, 6);
        row->deferred = col_i64(r, i, 7);
        row->namespace_id = (int32_t)col_i64(r, i, 8);
    }
    x->n = (size_t)rows;
    x->read = true;
}

static void counts_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    counts_result *x = store_op_result(op);
    if (st == SB_OK && (!x || !x->read))
        st = SB_ERR_INTERNAL;
    ((store_admin_counts_cb)u->fn)(u->ctx, st, st == SB_OK ? x->rows : NULL, st == SB_OK ? x->n : 0);
    ent_free(u);
}

void store_admin_counts(store *s, store_admin_counts_cb cb, void *ctx)
{
    store_op *op = store_op_or_fail(1, counts_parse, counts_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL, NULL, 0);
        return;
    }
    counts_result *x = ent_calloc(1, sizeof *x);
    int8_param cap = be_int8(STORE_ADMIN_COUNT_MAX);
    if (x)
        store_op_set_result(op, x, counts_free);
    if (!x || store_op_stmt(op, 0, STMT_ADMIN_COUNTS, (store_param[]){P_INT8(cap)}, 1))
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}
