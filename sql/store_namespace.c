/* See store_namespace.h. */
#include "store_namespace.h"

#include <libpq-fe.h>

#include "ent_alloc.h"
#include "store_binary.h"
#include "store_statements.h"

static const stmt_def namespace_stmt_defs[] = {
    /* $1 the name: the namespace's id (made when missing: sbemu_namespace_ensure) */
    {STMT_NAMESPACE_ENSURE, "SELECT sbemu_namespace_ensure($1)", 1, {STORE_OID_TEXT}},
};
#define NAMESPACE_NSTMT (sizeof namespace_stmt_defs / sizeof namespace_stmt_defs[0])

int store_namespace_statements_prepare(PGconn *conn, char *err, size_t errlen)
{
    return store_prepare_all(conn, namespace_stmt_defs, NAMESPACE_NSTMT, err, errlen);
}

typedef struct ensured {
    int32_t id;
} ensured;

static void ensure_parse(store_op *op, int stmt, const void *res)
{
    (void)stmt;
    const PGresult *r = res;
    ensured *e = store_op_result(op);
    if (e && PQntuples(r) == 1 && !PQgetisnull(r, 0, 0))
        e->id = (int32_t)col_i64(r, 0, 0);
}

static void ensure_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    ensured *e = store_op_result(op);
    if (st == SB_OK && (!e || e->id <= 0))
        st = SB_ERR_INTERNAL;
    ((store_namespace_cb)u->fn)(u->ctx, st, st == SB_OK ? e->id : 0);
    ent_free(u);
}

void store_namespace_ensure(store *s, const char *name, store_namespace_cb cb, void *ctx)
{
    store_op *op = store_op_or_fail(1, ensure_parse, ensure_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL, 0);
        return;
    }
    ensured *e = ent_calloc(1, sizeof *e);
    if (e)
        store_op_set_result(op, e, ent_free);
    if (!e || store_op_stmt(op, 0, STMT_NAMESPACE_ENSURE, (store_param[]){P_TEXT(name)}, 1))
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}
