/* See store_namespace.h. */
#include "store_namespace.h"

#include <libpq-fe.h>
#include <string.h>

#include "ent_alloc.h"
#include "ent_log.h"
#include "store_binary.h"
#include "store_statements.h"

/* A namespace's row as store_namespace_row reads it (columns 0..5). */
#define ROW_COLUMNS                                                                                                   \
    "n.id, n.name, sbemu_ms(n.created_at), coalesce(sbemu_interval_ms(n.auto_delete_on_idle), 0),"                    \
    " (SELECT count(*) FROM sbemu_namespace_entities(n.id)),"                                                        \
    " coalesce((SELECT jsonb_agg(jsonb_build_object('name', k.key_name, 'key', k.key) ORDER BY k.key_name)"          \
    "  FROM namespace_keys k WHERE k.namespace_id = n.id), '[]')::text"
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

static const stmt_def namespace_stmt_defs[] = {
    /* $1 the name: the namespace's id (made when missing: sbemu_namespace_ensure) */
    {STMT_NAMESPACE_ENSURE, "SELECT sbemu_namespace_ensure($1)", 1, {STORE_OID_TEXT}},
    /* $1 the name, $2 the idle time in ms (NULL: never), $3 the keys: (id, created) */
    {STMT_NAMESPACE_PUT, "SELECT id, created FROM sbemu_namespace_put($1, $2, $3::jsonb)", 3,
     {STORE_OID_TEXT, STORE_OID_INT8, STORE_OID_TEXT}},
    /* $1 a name, or NULL for every one */
    {STMT_NAMESPACE_LIST,
     "SELECT " ROW_COLUMNS " FROM namespaces n WHERE $1::text IS NULL OR lower(n.name) = lower($1) ORDER BY n.id"
     " LIMIT " STRINGIFY(STORE_NAMESPACE_LIST_MAX),
     1, {STORE_OID_TEXT}},
    /* its entities go with it (ON DELETE CASCADE), their messages with them (the runtime rows' trigger) */
    {STMT_NAMESPACE_DELETE,
     "WITH d AS (DELETE FROM namespaces WHERE lower(name) = lower($1) AND id <> 1 RETURNING 1) SELECT count(*) FROM d",
     1, {STORE_OID_TEXT}},
    /* a client chose it: activity for its AutoDeleteOnIdle (no NOTIFY: the trigger skips accessed_at) */
    {STMT_NAMESPACE_TOUCH, "UPDATE namespaces SET accessed_at = greatest(accessed_at, sbemu_ts($2)) WHERE id = $1", 2,
     {STORE_OID_INT8, STORE_OID_INT8}},
    {STMT_NAMESPACE_SWEEP, "SELECT name FROM sbemu_namespace_sweep($1)", 1, {STORE_OID_INT8}},
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

/* ---- the ops that keep their result until the callback returns ---- */

static void clear(void *p) { PQclear(p); }

static void keep(store_op *op, int stmt, const void *res)
{
    if (stmt != store_op_nstmt(op) - 1)
        return; /* only the last statement's rows are read */
    store_op_take_result(op);
    store_op_set_result(op, (PGresult *)res, clear);
}

static void read_row(const PGresult *r, int i, store_namespace_row *row)
{
    memset(row, 0, sizeof *row);
    row->id = (int32_t)col_i64(r, i, 0);
    col_text(r, i, 1, row->name, sizeof row->name);
    row->created_ms = col_i64(r, i, 2);
    row->auto_delete_on_idle_ms = col_i64(r, i, 3);
    row->entities = col_i64(r, i, 4);
    row->keys_json = PQgetvalue(r, i, 5);
}

static void list_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    const PGresult *r = store_op_result(op);
    size_t n = st == SB_OK && r ? (size_t)PQntuples(r) : 0;
    store_namespace_row *rows = n ? ent_calloc(n, sizeof *rows) : NULL;
    if (n && !rows)
        st = SB_ERR_INTERNAL, n = 0;
    for (size_t i = 0; i < n; i++)
        read_row(r, (int)i, &rows[i]);
    ((store_namespace_rows_cb)u->fn)(u->ctx, st, rows, n);
    ent_free(rows);
    ent_free(u);
}

void store_namespace_list(store *s, const char *name, store_namespace_rows_cb cb, void *ctx)
{
    store_op *op = store_op_or_fail(1, keep, list_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL, NULL, 0);
        return;
    }
    if (store_op_stmt(op, 0, STMT_NAMESPACE_LIST, (store_param[]){P_TEXT(name)}, 1))
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

/* ---- put ---- */

typedef struct put_state {
    PGresult *row;  /* the namespace as it is after the put */
    bool created;
} put_state;

static void put_state_free(void *p)
{
    put_state *x = p;
    PQclear(x->row);
    ent_free(x);
}

static void put_parse(store_op *op, int stmt, const void *res)
{
    put_state *x = store_op_result(op);
    const PGresult *r = res;
    if (!x)
        return;
    if (stmt == 0) {
        x->created = PQntuples(r) == 1 && col_bool(r, 0, 1);
    } else {
        store_op_take_result(op); /* x owns it now */
        PQclear(x->row);
        x->row = (PGresult *)res;
    }
}

static void put_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    put_state *x = store_op_result(op);
    store_namespace_row row;
    bool have = st == SB_OK && x && x->row && PQntuples(x->row) == 1;
    if (have)
        read_row(x->row, 0, &row);
    else if (st == SB_OK)
        st = SB_ERR_INTERNAL;
    ((store_namespace_put_cb)u->fn)(u->ctx, st, have ? &row : NULL, have && x->created);
    ent_free(u);
}

void store_namespace_put(store *s, const char *name, int64_t idle_ms, const char *keys_json, store_namespace_put_cb cb,
                         void *ctx)
{
    store_op *op = store_op_or_fail(2, put_parse, put_done, user_new((void (*)(void))cb, ctx));
    put_state *x = op ? ent_calloc(1, sizeof *x) : NULL;
    if (!op || !x) {
        ent_free(x);
        if (op) {
            store_op_set_status(op, SB_ERR_INTERNAL);
            store_submit(s, op);
        } else {
            cb(ctx, SB_ERR_INTERNAL, NULL, false);
        }
        return;
    }
    store_op_set_result(op, x, put_state_free);
    int8_param idle = be_int8(idle_ms);
    store_param p_idle = idle_ms > 0 ? P_INT8(idle) : (store_param){NULL, 0, 0}; /* NULL: never */
    int rc = store_op_stmt(op, 0, STMT_NAMESPACE_PUT, (store_param[]){P_TEXT(name), p_idle, P_TEXT(keys_json)}, 3);
    rc |= store_op_stmt(op, 1, STMT_NAMESPACE_LIST, (store_param[]){P_TEXT(name)}, 1);
    if (rc)
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

/* ---- delete, touch, sweep ---- */

static void count_parse(store_op *op, int stmt, const void *res)
{
    (void)stmt;
    const PGresult *r = res;
    if (PQntuples(r) < 1 || col_i64(r, 0, 0) < 1)
        store_op_set_status(op, SB_ERR_NOT_FOUND);
}

void store_namespace_delete(store *s, const char *name, store_status_cb cb, void *ctx)
{
    store_op *op = store_op_or_fail(1, count_parse, store_status_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL);
        return;
    }
    if (store_op_stmt(op, 0, STMT_NAMESPACE_DELETE, (store_param[]){P_TEXT(name)}, 1))
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

static void touch_done(store_op *op, sb_status st)
{
    (void)op;
    if (st != SB_OK)
        LOG_DEBUG("namespace activity not stamped: %s", sb_status_name(st)); /* the next one will be */
}

void store_namespace_touch(store *s, int32_t ns, int64_t now_ms)
{
    store_op *op = store_op_new(1, NULL, touch_done, NULL);
    if (!op)
        return;
    int8_param id = be_int8(ns), now = be_int8(now_ms);
    if (store_op_stmt(op, 0, STMT_NAMESPACE_TOUCH, (store_param[]){P_INT8(id), P_INT8(now)}, 2))
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

static void swept_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    const PGresult *r = store_op_result(op);
    size_t n = st == SB_OK && r ? (size_t)PQntuples(r) : 0;
    const char **names = n ? ent_calloc(n, sizeof *names) : NULL;
    for (size_t i = 0; names && i < n; i++)
        names[i] = PQgetvalue(r, (int)i, 0);
    if (u->fn)
        ((store_namespace_swept_cb)u->fn)(u->ctx, st, names, names ? n : 0);
    ent_free(names);
    ent_free(u);
}

void store_namespace_sweep(store *s, int64_t wall_ms, store_namespace_swept_cb cb, void *ctx)
{
    store_op *op = store_op_or_fail(1, keep, swept_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        if (cb)
            cb(ctx, SB_ERR_INTERNAL, NULL, 0);
        return;
    }
    int8_param wall = be_int8(wall_ms);
    if (store_op_stmt(op, 0, STMT_NAMESPACE_SWEEP, (store_param[]){P_INT8(wall)}, 1))
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}
