/* Faults on demand in PostgreSQL (store_faults.h): the statements on
 * sbemu_faults (migration 012) and the lose-lock update, their ops, and the
 * start-up upsert of Config.json's rules. */
#include "store_faults.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "ent_log.h"
#include "store_arrays.h"
#include "store_binary.h"
#include "store_claim_sql.h"
#include "store_statements.h"
#include "store_token_sql.h"

#define STMT_FAULTS_LOAD "sb_faults_load"
#define STMT_FAULT_FIRE "sb_fault_fire"
#define STMT_FAULT_PUT "sb_fault_put"
#define STMT_FAULT_DELETE "sb_fault_delete"
#define STMT_FAULT_LOCK_END "sb_fault_lock_end"
#define STORE_OID_FLOAT8 701

/* The columns the loader reads, in this order. */
#define FAULT_COLUMNS                                                                                                  \
    "name, namespace, entity, operation, effect, error, description, delay_ms, after_ms, times, remaining,"            \
    " probability::text, seed, sbemu_ms(until), fired, generation"
enum {
    COL_NAME, COL_NAMESPACE, COL_ENTITY, COL_OPERATION, COL_EFFECT, COL_ERROR, COL_DESCRIPTION, COL_DELAY_MS,
    COL_AFTER_MS, COL_TIMES, COL_REMAINING, COL_PROBABILITY, COL_SEED, COL_UNTIL, COL_FIRED, COL_GENERATION
};

/* $1 name, $2 namespace, $3 entity, $4 operation, $5 effect, $6 error, $7
 * description, $8 delay_ms, $9 after_ms, $10 times, $11 probability, $12
 * seed, $13 until (ms). A replaced rule's counts start again under a new
 * generation. Answers whether the row is new. */
#define FAULT_PUT_SQL                                                                                                  \
    "INSERT INTO sbemu_faults AS f (name, namespace, entity, operation, effect, error, description, delay_ms,"        \
    " after_ms, times, remaining, probability, seed, until)"                                                           \
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11, $12, sbemu_ts($13))"                                  \
    " ON CONFLICT ((lower(name))) DO UPDATE SET name = EXCLUDED.name, namespace = EXCLUDED.namespace,"                \
    " entity = EXCLUDED.entity, operation = EXCLUDED.operation, effect = EXCLUDED.effect, error = EXCLUDED.error,"    \
    " description = EXCLUDED.description, delay_ms = EXCLUDED.delay_ms, after_ms = EXCLUDED.after_ms,"                \
    " times = EXCLUDED.times, remaining = EXCLUDED.times, probability = EXCLUDED.probability,"                        \
    " seed = EXCLUDED.seed, until = EXCLUDED.until, fired = 0, generation = nextval('sbemu_faults_generation')"      \
    " RETURNING (xmax = 0)"
#define FAULT_PUT_TYPES                                                                                                \
    {STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_TEXT, \
     STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_FLOAT8, STORE_OID_INT8, STORE_OID_INT8}

static const stmt_def fault_stmts[] = {
    {STMT_FAULTS_LOAD, "SELECT " FAULT_COLUMNS " FROM sbemu_faults ORDER BY lower(name)", 0, {0}},
    /* $1 name, $2 generation, $3 now. A statement per firing: rules are rare,
     * and the count must be taken atomically where every replica sees it. */
    {STMT_FAULT_FIRE,
     "UPDATE sbemu_faults SET fired = fired + 1, remaining = remaining - 1"
     " WHERE lower(name) = lower($1) AND generation = $2 AND (remaining IS NULL OR remaining > 0)"
     " AND (until IS NULL OR until > sbemu_ts($3))"
     " RETURNING coalesce(remaining, -1)",
     3, {STORE_OID_TEXT, STORE_OID_INT8, STORE_OID_INT8}},
    {STMT_FAULT_PUT, FAULT_PUT_SQL, 13, FAULT_PUT_TYPES},
    /* $1 name, or NULL for every rule */
    {STMT_FAULT_DELETE,
     "WITH d AS (DELETE FROM sbemu_faults WHERE $1::text IS NULL OR lower(name) = lower($1) RETURNING 1)"
     " SELECT count(*) FROM d",
     1, {STORE_OID_TEXT}},
    /* $1 entity, $2 lock tokens, $3 when their locks end (only ever earlier):
     * a batch of their own, so the sweep looks at them then (migration 025) */
    {STMT_FAULT_LOCK_END,
     "WITH e AS (UPDATE messages m SET locked_until = sbemu_ts($3) FROM unnest($2::uuid[]) AS k(token)"
     " WHERE" BY_LOCK_TOKEN("m", "$1", "k.token")
     " AND (m.locked_until > sbemu_ts($3)) IS TRUE RETURNING m.sequence_number, m.session_id)"
     " INSERT INTO lock_batches (entity_id, session_id, locked_until, sequence_numbers)"
     " SELECT $1, session_id, sbemu_ts($3), array_agg(sequence_number) FROM e"
     " GROUP BY session_id, sequence_number / " STORE_STRINGIFY(STORE_LOCK_BATCH_SPAN),
     3, {STORE_OID_INT8, STORE_OID_UUID_ARRAY, STORE_OID_INT8}},
};

int store_fault_statements_prepare(struct pg_conn *conn, char *err, size_t errlen)
{
    return store_prepare_all(conn, fault_stmts, sizeof fault_stmts / sizeof fault_stmts[0], err, errlen);
}

/* ---- loading ---- */

typedef struct fault_rows {
    ent_fault_rule *rules;
    size_t n;
} fault_rows;

static void fault_rows_free(void *p)
{
    fault_rows *f = p;
    ent_free(f->rules);
    ent_free(f);
}

/* Sets one text column through the API's setter (NULL: not given). */
static sb_status set_text_col(ent_fault_rule *r, const PGresult *res, int row, int col, const char *key, char *err,
                              size_t errlen)
{
    if (PQgetisnull(res, row, col))
        return SB_OK;
    return ent_fault_set(r, key, ent_value_string(PQgetvalue(res, row, col)), err, errlen);
}

static sb_status set_int_col(ent_fault_rule *r, const PGresult *res, int row, int col, const char *key, char *err,
                             size_t errlen)
{
    if (PQgetisnull(res, row, col))
        return SB_OK;
    return ent_fault_set(r, key, ent_value_int(col_i64(res, row, col)), err, errlen);
}

/* Row i as a rule, read through the same checks as the API's JSON. */
static sb_status read_rule(const PGresult *res, int i, ent_fault_rule *r, char *err, size_t errlen)
{
    ent_fault_rule_init(r, PQgetvalue(res, i, COL_NAME));
    static const struct {
        int col;
        const char *key;
    } texts[] = {{COL_NAMESPACE, "namespace"}, {COL_ENTITY, "entity"},   {COL_OPERATION, "operation"},
                 {COL_EFFECT, "effect"},       {COL_ERROR, "error"},     {COL_DESCRIPTION, "description"}},
      ints[] = {{COL_DELAY_MS, "delayMs"}, {COL_AFTER_MS, "afterMs"}, {COL_TIMES, "times"}, {COL_SEED, "seed"}};
    sb_status st = SB_OK;
    for (size_t k = 0; st == SB_OK && k < sizeof texts / sizeof texts[0]; k++)
        st = set_text_col(r, res, i, texts[k].col, texts[k].key, err, errlen);
    for (size_t k = 0; st == SB_OK && k < sizeof ints / sizeof ints[0]; k++)
        st = set_int_col(r, res, i, ints[k].col, ints[k].key, err, errlen);
    if (st == SB_OK)
        st = ent_fault_set(r, "probability", ent_value_double(strtod(PQgetvalue(res, i, COL_PROBABILITY), NULL)), err,
                           errlen);
    if (st == SB_OK)
        st = ent_fault_validate(r, NULL, err, errlen); /* the namespace is the broker's to check */
    if (st != SB_OK)
        return st;
    r->until_ms = PQgetisnull(res, i, COL_UNTIL) ? 0 : col_i64(res, i, COL_UNTIL);
    r->remaining = PQgetisnull(res, i, COL_REMAINING) ? -1 : col_i64(res, i, COL_REMAINING);
    if (r->times >= 0 && r->remaining < 0)
        r->remaining = 0; /* a count set by hand to NULL under a limit: used up, not unlimited */
    r->fired = col_i64(res, i, COL_FIRED);
    r->generation = col_i64(res, i, COL_GENERATION);
    return SB_OK;
}

static void load_parse(store_op *op, int stmt, const void *res)
{
    (void)stmt;
    const PGresult *r = res;
    int rows = PQntuples(r);
    fault_rows *f = ent_calloc(1, sizeof *f);
    if (f)
        f->rules = ent_calloc(rows ? (size_t)rows : 1, sizeof *f->rules);
    if (!f || !f->rules) {
        if (f)
            fault_rows_free(f);
        store_op_set_status(op, SB_ERR_INTERNAL);
        return;
    }
    store_op_set_result(op, f, fault_rows_free);
    for (int i = 0; i < rows; i++) {
        char err[ENT_FAULT_ERR_MAX];
        if (read_rule(r, i, &f->rules[f->n], err, sizeof err) == SB_OK)
            f->n++;
        else
            LOG_WARN("sbemu_faults: the rule '%s' is left out: %s", PQgetvalue(r, i, COL_NAME), err);
    }
}

static void load_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    fault_rows *f = store_op_result(op);
    if (st == SB_OK && !f)
        st = SB_ERR_INTERNAL;
    ((store_faults_cb)u->fn)(u->ctx, st, st == SB_OK ? f->rules : NULL, st == SB_OK ? f->n : 0);
    ent_free(u);
}

void store_faults_load(store *s, store_faults_cb cb, void *ctx)
{
    store_op *op = store_op_or_fail(1, load_parse, load_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL, NULL, 0);
        return;
    }
    if (store_op_stmt(op, 0, STMT_FAULTS_LOAD, NULL, 0))
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

/* ---- one firing ---- */

typedef struct fire_result {
    bool fired;
    int64_t remaining;
} fire_result;

static void fire_parse(store_op *op, int stmt, const void *res)
{
    (void)stmt;
    const PGresult *r = res;
    fire_result *f = ent_calloc(1, sizeof *f);
    if (!f) {
        store_op_set_status(op, SB_ERR_INTERNAL);
        return;
    }
    f->fired = PQntuples(r) > 0;
    f->remaining = f->fired ? col_i64(r, 0, 0) : 0;
    store_op_set_result(op, f, ent_free);
}

static void fire_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    fire_result *f = store_op_result(op);
    if (st == SB_OK && !f)
        st = SB_ERR_INTERNAL;
    ((store_fault_fired_cb)u->fn)(u->ctx, st, st == SB_OK && f->fired, st == SB_OK ? f->remaining : 0);
    ent_free(u);
}

void store_fault_fire(store *s, const char *name, int64_t generation, int64_t now_ms, store_fault_fired_cb cb,
                      void *ctx)
{
    store_op *op = store_op_or_fail(1, fire_parse, fire_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL, false, 0);
        return;
    }
    int8_param g = be_int8(generation), now = be_int8(now_ms);
    if (store_op_stmt(op, 0, STMT_FAULT_FIRE, (store_param[]){P_TEXT(name), P_INT8(g), P_INT8(now)}, 3))
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

/* ---- writing rules ---- */

/* The 13 parameters of FAULT_PUT_SQL for r, as text (the prepared statement
 * and the start-up PQexecParams take the same). bufs holds the numbers. */
typedef struct put_params {
    char nums[6][32];
    const char *values[13];
} put_params;

static void put_params_of(const ent_fault_rule *r, put_params *p)
{
    const char *num[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    int64_t v[6] = {r->delay_ms, r->after_ms, r->times, 0, r->seed, r->until_ms};
    bool given[6] = {r->delay_ms >= 0, r->after_ms >= 0, r->times >= 0, true, true, r->until_ms > 0};
    for (int k = 0; k < 6; k++) {
        if (!given[k])
            continue;
        if (k == 3)
            snprintf(p->nums[k], sizeof p->nums[k], "%.17g", r->probability);
        else
            snprintf(p->nums[k], sizeof p->nums[k], "%lld", (long long)v[k]);
        num[k] = p->nums[k];
    }
    const char *values[13] = {r->name,
                              r->namespace_name,
                              r->entity,
                              ent_fault_operation_text(r),
                              ent_fault_effect_name(r->effect),
                              r->error != SB_OK ? sb_status_condition(r->error) : NULL,
                              r->description[0] ? r->description : NULL,
                              num[0], num[1], num[2], num[3], num[4], num[5]};
    memcpy(p->values, values, sizeof values);
}

static void put_parse(store_op *op, int stmt, const void *res)
{
    (void)stmt;
    const PGresult *r = res;
    bool *created = ent_malloc(sizeof *created);
    if (!created || PQntuples(r) != 1) {
        ent_free(created);
        store_op_set_status(op, SB_ERR_INTERNAL);
        return;
    }
    *created = col_bool(r, 0, 0);
    store_op_set_result(op, created, ent_free);
}

static void put_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    bool *created = store_op_result(op);
    if (st == SB_OK && !created)
        st = SB_ERR_INTERNAL;
    ((store_fault_put_cb)u->fn)(u->ctx, st, st == SB_OK && *created);
    ent_free(u);
}

void store_fault_put(store *s, const ent_fault_rule *r, store_fault_put_cb cb, void *ctx)
{
    store_op *op = store_op_or_fail(1, put_parse, put_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL, false);
        return;
    }
    put_params p;
    put_params_of(r, &p);
    store_param params[13];
    for (int k = 0; k < 13; k++)
        params[k] = (store_param){p.values[k], p.values[k] ? (int)strlen(p.values[k]) : 0, 0};
    if (store_op_stmt(op, 0, STMT_FAULT_PUT, params, 13))
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

static void delete_parse(store_op *op, int stmt, const void *res)
{
    (void)stmt;
    int64_t *n = ent_malloc(sizeof *n);
    if (!n) {
        store_op_set_status(op, SB_ERR_INTERNAL);
        return;
    }
    *n = col_i64(res, 0, 0);
    store_op_set_result(op, n, ent_free);
}

typedef struct delete_ctx {
    store_fault_delete_cb cb;
    void *ctx;
    bool named;
} delete_ctx;

static void delete_done(store_op *op, sb_status st)
{
    delete_ctx *d = store_op_ctx(op);
    int64_t *n = store_op_result(op);
    if (st == SB_OK && !n)
        st = SB_ERR_INTERNAL;
    if (st == SB_OK && d->named && *n == 0)
        st = SB_ERR_NOT_FOUND;
    d->cb(d->ctx, st, st == SB_OK ? *n : 0);
    ent_free(d);
}

void store_fault_delete(store *s, const char *name, store_fault_delete_cb cb, void *ctx)
{
    delete_ctx *d = ent_malloc(sizeof *d);
    store_op *op = d ? store_op_new(1, delete_parse, delete_done, d) : NULL;
    if (!op) {
        ent_free(d);
        cb(ctx, SB_ERR_INTERNAL, 0);
        return;
    }
    *d = (delete_ctx){cb, ctx, name != NULL};
    if (store_op_stmt(op, 0, STMT_FAULT_DELETE, (store_param[]){P_TEXT(name)}, 1))
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

/* ---- lose-lock ---- */

void store_fault_lock_end(store *s, int64_t entity_id, const uint8_t (*tokens)[16], size_t n, int64_t until_ms,
                          store_status_cb cb, void *ctx)
{
    char *arr = store_uuid_array_text(tokens, n);
    store_op *op = arr ? store_op_or_fail(1, NULL, store_status_done, user_new((void (*)(void))cb, ctx)) : NULL;
    if (!op) {
        ent_free(arr);
        if (cb)
            cb(ctx, SB_ERR_INTERNAL);
        return;
    }
    int8_param q = be_int8(entity_id), until = be_int8(until_ms);
    if (store_op_stmt(op, 0, STMT_FAULT_LOCK_END, (store_param[]){P_INT8(q), P_TEXT(arr), P_INT8(until)}, 3))
        store_op_set_status(op, SB_ERR_INTERNAL);
    ent_free(arr);
    store_submit(s, op);
}

/* ---- Config.json ---- */

int store_faults_config_apply(struct pg_conn *conn, const ent_fault_rule *rules, size_t n, char *err, size_t errlen)
{
    static const Oid types[13] = FAULT_PUT_TYPES;
    for (size_t i = 0; i < n; i++) {
        put_params p;
        put_params_of(&rules[i], &p);
        PGresult *r = PQexecParams(conn, FAULT_PUT_SQL, 13, types, p.values, NULL, NULL, 0);
        bool ok = PQresultStatus(r) == PGRES_TUPLES_OK;
        if (!ok)
            snprintf(err, errlen, "fault rule '%s': %s", rules[i].name, PQresultErrorMessage(r));
        PQclear(r);
        if (!ok)
            return -1;
    }
    return 0;
}
