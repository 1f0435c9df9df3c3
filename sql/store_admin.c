/* Builds the ops of store_admin.h (SQL in store_admin_statements.c) and reads
 * their rows back into entity properties. */
#include "store_admin.h"

#include <libpq-fe.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "store_binary.h"
#include "store_columns.h"
#include "store_statements.h"

typedef enum admin_kind { KIND_QUEUE, KIND_TOPIC, KIND_SUBSCRIPTION } admin_kind;

/* What an op's statements found. Rows are a copy, owned here. */
typedef struct admin_result {
    admin_kind kind;
    int rows_stmt;          /* the statement whose rows are the entities */
    int verdict_stmt;       /* the put's insert or update; -1 for none */
    bool update;
    void *rows;
    size_t n;
    int64_t total;
    int64_t found, changed; /* the verdict: (topic found, inserted) or (found, updated) */
    bool verdict_read;
    bool topic_found;       /* subscription lists */
} admin_result;

static void result_free(void *p)
{
    admin_result *a = p;
    ent_free(a->rows);
    ent_free(a);
}

/* ---- reading rows ---- */

/* Where each runtime column after the properties goes, in the statements'
 * order (store_admin_statements.c): created, updated, accessed, size, then
 * the kind's counts. */
#define RT(field) offsetof(store_admin_runtime, field)
static const size_t queue_runtime[] = {RT(created_ms), RT(updated_ms), RT(accessed_ms), RT(size_in_bytes),
                                       RT(active), RT(dead_letter), RT(scheduled)};
static const size_t topic_runtime[] = {RT(created_ms), RT(updated_ms), RT(accessed_ms), RT(size_in_bytes),
                                       RT(scheduled), RT(subscriptions), RT(sql_filters), RT(correlation_filters)};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* A kind's rows: id, [the topic's name,] the properties, the runtime. */
static const struct {
    size_t size, props, rt; /* the row struct, and where its props and runtime sit in it */
    const store_columns *cols;
    bool topic_name; /* subscriptions: the topic's name comes before the properties */
    const size_t *runtime;
    size_t nruntime;
} kinds[] = {
    [KIND_QUEUE] = {sizeof(store_admin_queue), offsetof(store_admin_queue, props), offsetof(store_admin_queue, rt),
                    &store_queue_columns, false, queue_runtime, COUNT(queue_runtime)},
    [KIND_TOPIC] = {sizeof(store_admin_topic), offsetof(store_admin_topic, props), offsetof(store_admin_topic, rt),
                    &store_topic_columns, false, topic_runtime, COUNT(topic_runtime)},
    [KIND_SUBSCRIPTION] = {sizeof(store_admin_subscription), offsetof(store_admin_subscription, props),
                           offsetof(store_admin_subscription, rt), &store_subscription_columns, true, queue_runtime,
                           COUNT(queue_runtime)},
};

/* How many columns a kind's row has (a list's total comes after them). */
static int ncols(admin_kind kind)
{
    return 1 + kinds[kind].topic_name + kinds[kind].cols->n + (int)kinds[kind].nruntime;
}

static void read_row(admin_kind kind, const PGresult *r, int i, char *row)
{
    memset(row, 0, kinds[kind].size);
    int col = 1;
    if (kinds[kind].topic_name) {
        ent_subscription_props *s = (ent_subscription_props *)(row + kinds[kind].props);
        col_text(r, i, col++, s->topic, sizeof s->topic);
    }
    store_columns_read(kinds[kind].cols, r, i, col, row + kinds[kind].props);
    col += kinds[kind].cols->n;
    store_admin_runtime *rt = (store_admin_runtime *)(row + kinds[kind].rt);
    rt->id = col_i64(r, i, 0);
    for (size_t k = 0; k < kinds[kind].nruntime; k++) {
        int64_t v = col_i64(r, i, col++);
        memcpy((char *)rt + kinds[kind].runtime[k], &v, sizeof v);
    }
}

static void read_rows(store_op *op, admin_result *a, const PGresult *r)
{
    int rows = PQntuples(r), n = ncols(a->kind);
    if (a->kind == KIND_SUBSCRIPTION && rows > 0 && PQnfields(r) > n) {
        a->topic_found = true; /* a list: one row per subscription, or one of NULLs */
        if (PQgetisnull(r, 0, 0))
            rows = 0;
    }
    if (rows > 0 && !(a->rows = ent_calloc((size_t)rows, kinds[a->kind].size))) {
        store_op_set_status(op, SB_ERR_INTERNAL);
        return;
    }
    for (int i = 0; i < rows; i++)
        read_row(a->kind, r, i, (char *)a->rows + (size_t)i * kinds[a->kind].size);
    a->n = (size_t)rows;
    if (rows > 0 && PQnfields(r) > n && !PQgetisnull(r, 0, n))
        a->total = col_i64(r, 0, n);
}

static void admin_parse(store_op *op, int stmt, const void *res)
{
    const PGresult *r = res;
    admin_result *a = store_op_result(op);
    if (stmt == a->verdict_stmt && PQntuples(r) == 1) {
        a->verdict_read = true;
        if (PQnfields(r) >= 2) {
            a->found = col_i64(r, 0, 0);
            a->changed = col_i64(r, 0, 1);
        } else { /* queue and topic creates: inserted or not */
            a->found = 1;
            a->changed = col_i64(r, 0, 0);
        }
    } else if (stmt == a->rows_stmt) {
        read_rows(op, a, r);
    }
}

/* The status a put or get ends with, from what its statements said. */
static sb_status verdict(const admin_result *a, sb_status st)
{
    if (st != SB_OK)
        return st;
    if (a->verdict_stmt < 0)
        return SB_OK;
    if (!a->verdict_read)
        return SB_ERR_INTERNAL;
    if (a->update)
        return !a->found ? SB_ERR_NOT_FOUND : !a->changed ? SB_ERR_NOT_ALLOWED : SB_OK;
    if (a->kind == KIND_SUBSCRIPTION && !a->found)
        return SB_ERR_NOT_FOUND; /* no such topic */
    return a->changed ? SB_OK : SB_ERR_ALREADY_EXISTS;
}

static void admin_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    admin_result *a = store_op_result(op);
    st = verdict(a, st);
    /* a refused put still shows the row it was refused against (NOT_ALLOWED) */
    bool rows = st == SB_OK || st == SB_ERR_NOT_ALLOWED;
    const void *v = rows ? a->rows : NULL;
    size_t n = rows ? a->n : 0;
    switch (a->kind) {
    case KIND_QUEUE: ((store_admin_queues_cb)u->fn)(u->ctx, st, v, n, a->total); break;
    case KIND_TOPIC: ((store_admin_topics_cb)u->fn)(u->ctx, st, v, n, a->total); break;
    case KIND_SUBSCRIPTION: ((store_admin_subscriptions_cb)u->fn)(u->ctx, st, v, n, a->total); break;
    }
    ent_free(u);
}

static void fail_now(admin_kind kind, void (*fn)(void), void *ctx);

/* An op of nstmt statements answering rows of `kind` from statement
 * rows_stmt; NULL (the callback already failed) when out of memory. */
static store_op *admin_op(int nstmt, admin_kind kind, int rows_stmt, int verdict_stmt, bool update,
                          store_done_fn done, void (*fn)(void), void *ctx)
{
    admin_result *a = ent_calloc(1, sizeof *a);
    store_op *op = a ? store_op_or_fail(nstmt, admin_parse, done, user_new(fn, ctx)) : NULL;
    if (!op) {
        ent_free(a);
        fail_now(kind, fn, ctx);
        return NULL;
    }
    a->kind = kind;
    a->rows_stmt = rows_stmt;
    a->verdict_stmt = verdict_stmt;
    a->update = update;
    store_op_set_result(op, a, result_free);
    return op;
}

static void fail_now(admin_kind kind, void (*fn)(void), void *ctx)
{
    switch (kind) {
    case KIND_QUEUE: ((store_admin_queues_cb)fn)(ctx, SB_ERR_INTERNAL, NULL, 0, 0); break;
    case KIND_TOPIC: ((store_admin_topics_cb)fn)(ctx, SB_ERR_INTERNAL, NULL, 0, 0); break;
    case KIND_SUBSCRIPTION: ((store_admin_subscriptions_cb)fn)(ctx, SB_ERR_INTERNAL, NULL, 0, 0); break;
    }
}

static void submit(store *s, store_op *op, int rc)
{
    if (rc)
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

/* ---- gets and lists ---- */

static void get_one(store *s, admin_kind kind, const char *stmt, const store_param *params, int nparams,
                    void (*fn)(void), void *ctx)
{
    store_op *op = admin_op(1, kind, 0, -1, false, admin_done, fn, ctx);
    if (!op)
        return;
    submit(s, op, store_op_stmt(op, 0, stmt, params, nparams));
}

/* The count cap every runtime statement takes. */
static const unsigned char *count_cap(void)
{
    static int8_param cap;
    cap = be_int8(STORE_ADMIN_COUNT_MAX);
    return cap.b;
}
#define P_CAP ((store_param){count_cap(), 8, 1})

void store_admin_get_queue(store *s, int32_t ns, const char *name, store_admin_queues_cb cb, void *ctx)
{
    int8_param n = be_int8(ns);
    get_one(s, KIND_QUEUE, STMT_ADMIN_QUEUE_GET, (store_param[]){P_TEXT(name), P_CAP, P_INT8(n)}, 3,
            (void (*)(void))cb, ctx);
}

void store_admin_get_topic(store *s, int32_t ns, const char *name, store_admin_topics_cb cb, void *ctx)
{
    int8_param n = be_int8(ns);
    get_one(s, KIND_TOPIC, STMT_ADMIN_TOPIC_GET, (store_param[]){P_TEXT(name), P_CAP, P_INT8(n)}, 3,
            (void (*)(void))cb, ctx);
}

void store_admin_get_subscription(store *s, int32_t ns, const char *topic, const char *name,
                                  store_admin_subscriptions_cb cb, void *ctx)
{
    int8_param n = be_int8(ns);
    get_one(s, KIND_SUBSCRIPTION, STMT_ADMIN_SUB_GET, (store_param[]){P_TEXT(topic), P_TEXT(name), P_CAP, P_INT8(n)},
            4, (void (*)(void))cb, ctx);
}

void store_admin_list_queues(store *s, int32_t ns, int64_t skip, int64_t top, store_admin_queues_cb cb, void *ctx)
{
    int8_param sk = be_int8(skip), tp = be_int8(top), n = be_int8(ns);
    get_one(s, KIND_QUEUE, STMT_ADMIN_QUEUE_LIST, (store_param[]){P_INT8(sk), P_INT8(tp), P_CAP, P_INT8(n)}, 4,
            (void (*)(void))cb, ctx);
}

void store_admin_list_topics(store *s, int32_t ns, int64_t skip, int64_t top, store_admin_topics_cb cb, void *ctx)
{
    int8_param sk = be_int8(skip), tp = be_int8(top), n = be_int8(ns);
    get_one(s, KIND_TOPIC, STMT_ADMIN_TOPIC_LIST, (store_param[]){P_INT8(sk), P_INT8(tp), P_CAP, P_INT8(n)}, 4,
            (void (*)(void))cb, ctx);
}

/* A list must tell a topic without subscriptions from a missing topic: the
 * statement answers a row of NULLs for the first, nothing for the second. */
static void sub_list_done(store_op *op, sb_status st)
{
    admin_result *a = store_op_result(op);
    if (st == SB_OK && !a->topic_found)
        st = SB_ERR_NOT_FOUND;
    admin_done(op, st);
}

void store_admin_list_subscriptions(store *s, int32_t ns, const char *topic, int64_t skip, int64_t top,
                                    store_admin_subscriptions_cb cb, void *ctx)
{
    store_op *op = admin_op(1, KIND_SUBSCRIPTION, 0, -1, false, sub_list_done, (void (*)(void))cb, ctx);
    if (!op)
        return;
    int8_param sk = be_int8(skip), tp = be_int8(top), n = be_int8(ns);
    submit(s, op, store_op_stmt(op, 0, STMT_ADMIN_SUB_LIST,
                                  (store_param[]){P_TEXT(topic), P_INT8(sk), P_INT8(tp), P_CAP, P_INT8(n)}, 5));
}

/* ---- puts ---- */

/* A queue's or topic's put. Create: the name's lock, the insert, the new
 * entity's runtime stamp, its row; update: the update, its row. p[0] is the
 * name, p[np - 2] the time, p[np - 1] the namespace. */
static void put_named(store *s, admin_kind kind, const char *create, const char *update_stmt, const char *get,
                      const store_param *p, int np, bool update, void (*fn)(void), void *ctx)
{
    int n = update ? 2 : 4;
    store_op *op = admin_op(n, kind, n - 1, update ? 0 : 1, update, admin_done, fn, ctx);
    if (!op)
        return;
    int rc = 0, i = 0;
    store_param ns = p[np - 1];
    if (!update) {
        rc |= store_op_stmt(op, i++, STMT_ADMIN_NAME_LOCK, (store_param[]){p[0], ns}, 2);
        rc |= store_op_stmt(op, i++, create, p, np);
        rc |= store_op_stmt(op, i++, STMT_ADMIN_TOUCH_NEW, (store_param[]){p[0], p[np - 2], ns}, 3);
    } else {
        rc |= store_op_stmt(op, i++, update_stmt, p, np);
    }
    rc |= store_op_stmt(op, i, get, (store_param[]){p[0], P_CAP, ns}, 3);
    submit(s, op, rc);
}

/* The parameters of a put: the key (a subscription's topic), the entity's
 * columns (store_columns.h), the time, the namespace. Values point into the
 * props and here. */
typedef struct put_params {
    store_param p[STORE_COLUMNS_MAX + 3];
    int8_param ints[STORE_COLUMNS_MAX], now, ns;
    int n;
} put_params;

static void put_params_of(put_params *pp, int32_t ns, const char *topic, const store_columns *c, const void *props,
                          int64_t now_ms)
{
    pp->n = 0;
    if (topic)
        pp->p[pp->n++] = P_TEXT(topic);
    pp->n += store_columns_params(c, props, pp->p + pp->n, pp->ints);
    pp->now = be_int8(now_ms);
    pp->p[pp->n++] = P_INT8(pp->now);
    pp->ns = be_int8(ns);
    pp->p[pp->n++] = P_INT8(pp->ns);
}

void store_admin_put_queue(store *s, int32_t ns, const ent_queue_props *q, bool update, int64_t now_ms,
                           store_admin_queues_cb cb, void *ctx)
{
    put_params pp;
    put_params_of(&pp, ns, NULL, &store_queue_columns, q, now_ms);
    put_named(s, KIND_QUEUE, STMT_ADMIN_QUEUE_CREATE, STMT_ADMIN_QUEUE_UPDATE, STMT_ADMIN_QUEUE_GET, pp.p, pp.n,
              update, (void (*)(void))cb, ctx);
}

void store_admin_put_topic(store *s, int32_t ns, const ent_topic_props *t, bool update, int64_t now_ms,
                           store_admin_topics_cb cb, void *ctx)
{
    put_params pp;
    put_params_of(&pp, ns, NULL, &store_topic_columns, t, now_ms);
    put_named(s, KIND_TOPIC, STMT_ADMIN_TOPIC_CREATE, STMT_ADMIN_TOPIC_UPDATE, STMT_ADMIN_TOPIC_GET, pp.p, pp.n,
              update, (void (*)(void))cb, ctx);
}

void store_admin_put_subscription(store *s, int32_t ns, const ent_subscription_props *sub,
                                  const store_rule *default_rule, bool update, int64_t now_ms,
                                  store_admin_subscriptions_cb cb, void *ctx)
{
    /* create: insert, [default rule], runtime stamp, the row; update: update, the row */
    bool rule = !update && default_rule;
    int n = update ? 2 : rule ? 4 : 3;
    store_op *op = admin_op(n, KIND_SUBSCRIPTION, n - 1, 0, update, admin_done, (void (*)(void))cb, ctx);
    if (!op)
        return;
    put_params pp;
    put_params_of(&pp, ns, sub->topic, &store_subscription_columns, sub, now_ms);
    store_param topic = pp.p[0], name = pp.p[1], now = pp.p[pp.n - 2], nsp = pp.p[pp.n - 1];
    int rc = 0, i = 0;
    rc |= store_op_stmt(op, i++, update ? STMT_ADMIN_SUB_UPDATE : STMT_ADMIN_SUB_CREATE, pp.p, pp.n);
    if (rule) {
        const store_rule *d = default_rule;
        rc |= store_op_stmt(op, i++, STMT_ADMIN_SUB_DEFAULT_RULE,
                            (store_param[]){topic, name, P_TEXT(d->name), P_TEXT(d->filter_type),
                                            P_TEXT(d->sql_expression), P_TEXT(d->correlation),
                                            P_TEXT(d->filter_parameters), P_TEXT(d->action_expression),
                                            P_TEXT(d->action_parameters), now, nsp},
                            11);
    }
    if (!update)
        rc |= store_op_stmt(op, i++, STMT_ADMIN_SUB_TOUCH_NEW, (store_param[]){topic, name, now, nsp}, 4);
    rc |= store_op_stmt(op, i, STMT_ADMIN_SUB_GET, (store_param[]){topic, name, P_CAP, nsp}, 4);
    submit(s, op, rc);
}

/* ---- deletes and rules ---- */

static void count_parse(store_op *op, int stmt, const void *res)
{
    const PGresult *r = res;
    if (stmt == 0 && (PQntuples(r) < 1 || col_i64(r, 0, 0) < 1))
        store_op_set_status(op, SB_ERR_NOT_FOUND);
}

static void status_op(store *s, const char *stmt, const store_param *params, int nparams, store_status_cb cb,
                      void *ctx)
{
    store_op *op = store_op_or_fail(1, count_parse, store_status_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL);
        return;
    }
    submit(s, op, store_op_stmt(op, 0, stmt, params, nparams));
}

void store_admin_delete_entity(store *s, int32_t ns, const char *name, store_status_cb cb, void *ctx)
{
    int8_param n = be_int8(ns);
    status_op(s, STMT_ADMIN_ENTITY_DELETE, (store_param[]){P_TEXT(name), P_INT8(n)}, 2, cb, ctx);
}

void store_admin_delete_subscription(store *s, int32_t ns, const char *topic, const char *name, store_status_cb cb,
                                     void *ctx)
{
    int8_param n = be_int8(ns);
    status_op(s, STMT_ADMIN_SUB_DELETE, (store_param[]){P_TEXT(topic), P_TEXT(name), P_INT8(n)}, 3, cb, ctx);
}

void store_admin_update_rule(store *s, int64_t subscription_id, const store_rule *rule, int64_t now_ms,
                             store_rule_status_cb cb, void *ctx)
{
    (void)now_ms; /* rules keep only their creation time */
    int8_param id = be_int8(subscription_id);
    status_op(s, STMT_ADMIN_RULE_UPDATE,
              (store_param[]){P_INT8(id), P_TEXT(rule->name), P_TEXT(rule->filter_type), P_TEXT(rule->sql_expression),
                              P_TEXT(rule->correlation), P_TEXT(rule->filter_parameters),
                              P_TEXT(rule->action_expression), P_TEXT(rule->action_parameters)},
              8, (store_status_cb)cb, ctx);
}

static void clear_result(void *p) { PQclear(p); }

static void rule_parse(store_op *op, int stmt, const void *res)
{
    (void)stmt;
    store_op_take_result(op); /* the rule's strings point into it */
    store_op_set_result(op, (PGresult *)res, clear_result);
}

static void rule_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    const PGresult *r = store_op_result(op);
    store_rule rule = {0};
    size_t n = 0;
    if (st == SB_OK && r && PQntuples(r) > 0) {
        rule = (store_rule){col_str_or_null(r, 0, 0), col_str_or_null(r, 0, 1), col_str_or_null(r, 0, 2),
                            col_str_or_null(r, 0, 3), col_str_or_null(r, 0, 4), col_str_or_null(r, 0, 5),
                            col_str_or_null(r, 0, 6), col_i64(r, 0, 7)};
        n = 1;
    } else if (st == SB_OK && !r) {
        st = SB_ERR_INTERNAL;
    }
    ((store_admin_rule_cb)u->fn)(u->ctx, st, n ? &rule : NULL, n);
    ent_free(u);
}

void store_admin_get_rule(store *s, int64_t subscription_id, const char *name, store_admin_rule_cb cb, void *ctx)
{
    store_op *op = store_op_or_fail(1, rule_parse, rule_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL, NULL, 0);
        return;
    }
    int8_param id = be_int8(subscription_id);
    submit(s, op, store_op_stmt(op, 0, STMT_ADMIN_RULE_GET, (store_param[]){P_INT8(id), P_TEXT(name)}, 2));
}

/* ---- the namespace ---- */

typedef struct ns_result {
    int64_t created, modified;
    bool read;
} ns_result;

static void ns_parse(store_op *op, int stmt, const void *res)
{
    (void)stmt;
    const PGresult *r = res;
    ns_result *x = store_op_result(op);
    if (x && PQntuples(r) == 1) {
        x->created = col_i64(r, 0, 0);
        x->modified = col_i64(r, 0, 1);
        x->read = true;
    }
}

static void ns_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    ns_result *x = store_op_result(op);
    if (st == SB_OK && (!x || !x->read))
        st = SB_ERR_INTERNAL;
    ((store_admin_namespace_cb)u->fn)(u->ctx, st, st == SB_OK ? x->created : 0, st == SB_OK ? x->modified : 0);
    ent_free(u);
}

void store_admin_namespace(store *s, int32_t ns, store_admin_namespace_cb cb, void *ctx)
{
    store_op *op = store_op_or_fail(1, ns_parse, ns_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL, 0, 0);
        return;
    }
    ns_result *x = ent_calloc(1, sizeof *x);
    if (x)
        store_op_set_result(op, x, ent_free);
    int8_param n = be_int8(ns);
    submit(s, op, !x || store_op_stmt(op, 0, STMT_ADMIN_NAMESPACE, (store_param[]){P_INT8(n)}, 1));
}
