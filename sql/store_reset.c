/* See store_reset.h. The work is migration 011's functions, one call per op
 * (one statement, one transaction: the store's batch); the statements here
 * only call them and read what they answer. */
#include "store_reset.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>
#include <libpq-fe.h>

#include "ent_alloc.h"
#include "store_binary.h"
#include "store_rule_json.h"
#include "store_statements.h"

/* The columns of a snapshot as a list shows it, in store_snapshot_info's order. */
#define INFO_COLUMNS "name, sbemu_ms(created_at), clock_offset_ms, entities, messages, bytes"
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

static const stmt_def reset_stmt_defs[] = {
    /* $1 namespace, $2 snapshot, $3 the wall clock: no row when there is no such snapshot */
    {STMT_SNAPSHOT_RESTORE,
     "SELECT generation, clock_offset_ms, entities, messages FROM sbemu_snapshot_restore_logged($1, $2, $3)", 3,
     {STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_INT8}},
    {STMT_SNAPSHOT_SAVE,
     "SELECT replaced, created_ms, clock_offset_ms, entities, messages, bytes FROM sbemu_snapshot_save_logged($1, $2, $3)",
     3, {STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_INT8}},
    /* the emulator's own ('$declared') are not the user's to see */
    {STMT_SNAPSHOT_LIST,
     "SELECT " INFO_COLUMNS " FROM sbemu_snapshots WHERE namespace = lower($1) AND name NOT LIKE '$%' ORDER BY name"
     " LIMIT " STRINGIFY(STORE_SNAPSHOT_LIST_MAX),
     1, {STORE_OID_TEXT}},
    {STMT_SNAPSHOT_GET, "SELECT " INFO_COLUMNS " FROM sbemu_snapshots WHERE namespace = lower($1) AND name = $2", 2,
     {STORE_OID_TEXT, STORE_OID_TEXT}},
    /* its rows go with it (ON DELETE CASCADE) */
    {STMT_SNAPSHOT_DELETE,
     "WITH d AS (DELETE FROM sbemu_snapshots WHERE namespace = lower($1) AND name = $2 RETURNING 1) SELECT count(*) FROM d",
     2, {STORE_OID_TEXT, STORE_OID_TEXT}},
};
#define RESET_NSTMT (sizeof reset_stmt_defs / sizeof reset_stmt_defs[0])

int store_reset_statements_prepare(PGconn *conn, char *err, size_t errlen)
{
    return store_prepare_all(conn, reset_stmt_defs, RESET_NSTMT, err, errlen);
}

/* ---- ops: one statement, its PGresult kept until the callback returns ---- */

typedef struct kept {
    PGresult *r;
} kept;

static void kept_free(void *p)
{
    kept *k = p;
    PQclear(k->r);
    ent_free(k);
}

static void keep(store_op *op, int stmt, const void *res)
{
    (void)stmt;
    kept *k = ent_calloc(1, sizeof *k);
    if (!k) {
        store_op_set_status(op, SB_ERR_INTERNAL);
        return;
    }
    store_op_take_result(op);
    k->r = (PGresult *)res;
    store_op_set_result(op, k, kept_free);
}

static const PGresult *rows_of(store_op *op, sb_status st)
{
    kept *k = store_op_result(op);
    return st == SB_OK && k ? k->r : NULL;
}

/* Submits one statement (ns, name, [wall_ms]); the callback is failed at once when out of memory. */
static void submit(store *s, const char *stmt, const char *ns, const char *name, const int64_t *wall_ms,
                   store_done_fn done, void (*fn)(void), void *ctx, void (*fail)(void (*)(void), void *))
{
    store_op *op = store_op_or_fail(1, keep, done, user_new(fn, ctx));
    if (!op) {
        fail(fn, ctx);
        return;
    }
    int8_param wall = be_int8(wall_ms ? *wall_ms : 0);
    store_param p[3] = {P_TEXT(ns), P_TEXT(name), P_INT8(wall)};
    int np = wall_ms ? 3 : name ? 2 : 1;
    if (store_op_stmt(op, 0, stmt, p, np))
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

static void read_info(const PGresult *r, int row, store_snapshot_info *i)
{
    memset(i, 0, sizeof *i);
    col_text(r, row, 0, i->name, sizeof i->name);
    i->created_ms = col_i64(r, row, 1);
    i->clock_offset_ms = col_i64(r, row, 2);
    i->entities = col_i64(r, row, 3);
    i->messages = col_i64(r, row, 4);
    i->bytes = col_i64(r, row, 5);
}

/* ---- restore ---- */

static void restore_fail(void (*fn)(void), void *ctx) { ((store_restore_cb)fn)(ctx, SB_ERR_INTERNAL, NULL); }

static void restore_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    const PGresult *r = rows_of(op, st);
    store_restored out = {0};
    if (r && PQntuples(r) == 1) {
        out.generation = col_i64(r, 0, 0);
        out.clock_offset_ms = col_i64(r, 0, 1);
        out.entities = col_i64(r, 0, 2);
        out.messages = col_i64(r, 0, 3);
    } else if (st == SB_OK) {
        st = SB_ERR_NOT_FOUND; /* no such snapshot: the function changed nothing */
    }
    ((store_restore_cb)u->fn)(u->ctx, st, st == SB_OK ? &out : NULL);
    ent_free(u);
}

void store_snapshot_restore(store *s, const char *ns, const char *name, int64_t wall_ms, store_restore_cb cb,
                            void *ctx)
{
    submit(s, STMT_SNAPSHOT_RESTORE, ns, name, &wall_ms, restore_done, (void (*)(void))cb, ctx, restore_fail);
}

/* ---- save ---- */

static void save_fail(void (*fn)(void), void *ctx) { ((store_snapshot_cb)fn)(ctx, SB_ERR_INTERNAL, NULL, false); }

static void save_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    const PGresult *r = rows_of(op, st);
    store_snapshot_info info = {0};
    bool replaced = false;
    if (r && PQntuples(r) == 1) {
        replaced = col_bool(r, 0, 0);
        info.created_ms = col_i64(r, 0, 1);
        info.clock_offset_ms = col_i64(r, 0, 2);
        info.entities = col_i64(r, 0, 3);
        info.messages = col_i64(r, 0, 4);
        info.bytes = col_i64(r, 0, 5);
    } else if (st == SB_OK) {
        st = SB_ERR_INTERNAL;
    }
    ((store_snapshot_cb)u->fn)(u->ctx, st, st == SB_OK ? &info : NULL, replaced);
    ent_free(u);
}

void store_snapshot_save(store *s, const char *ns, const char *name, int64_t wall_ms, store_snapshot_cb cb,
                         void *ctx)
{
    submit(s, STMT_SNAPSHOT_SAVE, ns, name, &wall_ms, save_done, (void (*)(void))cb, ctx, save_fail);
}

/* ---- list, get, delete ---- */

static void list_fail(void (*fn)(void), void *ctx) { ((store_snapshots_cb)fn)(ctx, SB_ERR_INTERNAL, NULL, 0); }

/* one: a get, for which no row is SB_ERR_NOT_FOUND */
static void list_done_as(store_op *op, sb_status st, bool one)
{
    user_cb *u = store_op_ctx(op);
    const PGresult *r = rows_of(op, st);
    int n = r ? PQntuples(r) : 0;
    store_snapshot_info *rows = n ? ent_calloc((size_t)n, sizeof *rows) : NULL;
    if (n && !rows)
        st = SB_ERR_INTERNAL;
    for (int i = 0; rows && i < n; i++)
        read_info(r, i, &rows[i]);
    if (st == SB_OK && one && !n)
        st = SB_ERR_NOT_FOUND;
    ((store_snapshots_cb)u->fn)(u->ctx, st, st == SB_OK ? rows : NULL, st == SB_OK ? (size_t)n : 0);
    ent_free(rows);
    ent_free(u);
}

static void list_done(store_op *op, sb_status st) { list_done_as(op, st, false); }
static void get_done(store_op *op, sb_status st) { list_done_as(op, st, true); }

void store_snapshot_list(store *s, const char *ns, const char *name, store_snapshots_cb cb, void *ctx)
{
    if (name)
        submit(s, STMT_SNAPSHOT_GET, ns, name, NULL, get_done, (void (*)(void))cb, ctx, list_fail);
    else
        submit(s, STMT_SNAPSHOT_LIST, ns, NULL, NULL, list_done, (void (*)(void))cb, ctx, list_fail);
}

static void status_fail(void (*fn)(void), void *ctx) { ((store_status_cb)fn)(ctx, SB_ERR_INTERNAL); }

static void delete_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    const PGresult *r = rows_of(op, st);
    if (st == SB_OK && (!r || PQntuples(r) != 1 || col_i64(r, 0, 0) == 0))
        st = SB_ERR_NOT_FOUND;
    ((store_status_cb)u->fn)(u->ctx, st);
    ent_free(u);
}

void store_snapshot_delete(store *s, const char *ns, const char *name, store_status_cb cb, void *ctx)
{
    submit(s, STMT_SNAPSHOT_DELETE, ns, name, NULL, delete_done, (void (*)(void))cb, ctx, status_fail);
}

/* ---- the declaration, at start ---- */

/* {"queues": [name], "topics": [name], "subscriptions": [[topic, name]],
 * "rules": [[topic, subscription, name]]}, as sbemu_snapshot_declare reads it. */
static json_t *declared_json(const ent_config *cfg)
{
    json_t *doc = json_object(), *queues = json_array(), *topics = json_array(), *subs = json_array(),
           *rules = json_array();
    json_object_set_new(doc, "queues", queues);
    json_object_set_new(doc, "topics", topics);
    json_object_set_new(doc, "subscriptions", subs);
    json_object_set_new(doc, "rules", rules);
    for (size_t i = 0; i < cfg->nqueues; i++)
        json_array_append_new(queues, json_string(cfg->queues[i].name));
    for (size_t i = 0; i < cfg->ntopics; i++) {
        const ent_topic_config *t = &cfg->topics[i];
        json_array_append_new(topics, json_string(t->props.name));
        for (size_t j = 0; j < t->nsubscriptions; j++) {
            const ent_subscription_config *s = &t->subscriptions[j];
            json_array_append_new(subs, json_pack("[ss]", t->props.name, s->props.name));
            for (size_t k = 0; k < s->nrules; k++)
                json_array_append_new(rules, json_pack("[sss]", t->props.name, s->props.name, s->rules[k].name));
        }
    }
    return doc;
}

int store_snapshot_declare(PGconn *conn, const char *ns, const ent_config *cfg, int64_t wall_ms, char *err,
                           size_t errlen)
{
    json_t *doc = declared_json(cfg);
    char *text = doc ? store_json_text(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (!text) {
        snprintf(err, errlen, "the declared entities: out of memory");
        return -1;
    }
    char wall[32];
    snprintf(wall, sizeof wall, "%" PRId64, wall_ms);
    const char *values[3] = {ns, text, wall};
    PGresult *r = PQexecParams(conn, "SELECT sbemu_snapshot_declare($1, $2::jsonb, $3::bigint)", 3, NULL, values, NULL,
                               NULL, 0);
    int ok = PQresultStatus(r) == PGRES_TUPLES_OK;
    if (!ok) {
        const char *why = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
        snprintf(err, errlen, "recording the declared entities (what a reset restores): %s",
                 why ? why : PQerrorMessage(conn));
    }
    PQclear(r);
    ent_free(text);
    return ok ? 0 : -1;
}
