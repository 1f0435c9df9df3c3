/* Builds the ops of store_rules.h (SQL in store_mgmt_statements.c) and the
 * rules.correlation document. */
#include "store_rules.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "store_binary.h"
#include "store_rule_json.h"
#include "store_statements.h"


/* ---- add ---- */

typedef struct add_result {
    bool parsed;
    int64_t found, count, inserted;
    int64_t limit;
} add_result;

static void add_parse(store_op *op, int stmt, const void *res)
{
    const PGresult *r = res;
    add_result *a = store_op_result(op);
    if (stmt != 0 || !a || PQntuples(r) < 1)
        return; /* the touch */
    a->found = col_i64(r, 0, 0);
    a->count = col_i64(r, 0, 1);
    a->inserted = col_i64(r, 0, 2);
    a->parsed = true;
}

static void add_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    add_result *a = store_op_result(op);
    int64_t count = 0;
    if (st == SB_OK) {
        if (!a || !a->parsed)
            st = SB_ERR_INTERNAL;
        else if (!a->found)
            st = SB_ERR_NOT_FOUND;
        else if (!a->inserted)
            st = a->count >= a->limit ? SB_ERR_QUOTA_EXCEEDED : SB_ERR_ALREADY_EXISTS;
        count = a ? a->count : 0;
    }
    ((store_rule_add_cb)u->fn)(u->ctx, st, count);
    ent_free(u);
}

void store_rule_add(store *s, int64_t subscription_id, const store_rule *rule, int64_t limit, int64_t now_ms,
                    store_rule_add_cb cb, void *ctx)
{
    store_op *op = store_op_or_fail(2, add_parse, add_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL, 0);
        return;
    }
    add_result *a = ent_calloc(1, sizeof *a);
    if (a) {
        a->limit = limit;
        store_op_set_result(op, a, ent_free);
    }
    int8_param q = be_int8(subscription_id), now = be_int8(now_ms), lim = be_int8(limit);
    int rc = !a;
    rc |= store_op_stmt(op, 0, STMT_RULE_ADD,
                        (store_param[]){P_INT8(q), P_TEXT(rule->name), P_TEXT(rule->filter_type),
                                        P_TEXT(rule->sql_expression), P_TEXT(rule->correlation),
                                        P_TEXT(rule->filter_parameters), P_TEXT(rule->action_expression),
                                        P_TEXT(rule->action_parameters), P_INT8(now), P_INT8(lim)},
                        10);
    rc |= store_touch_stmt(op, 1, subscription_id, now_ms);
    if (rc)
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

/* ---- remove ---- */

static void remove_parse(store_op *op, int stmt, const void *res)
{
    const PGresult *r = res;
    if (stmt == 0 && (PQntuples(r) < 1 || col_i64(r, 0, 0) < 1))
        store_op_set_status(op, SB_ERR_NOT_FOUND);
}

void store_rule_remove(store *s, int64_t subscription_id, const char *name, int64_t now_ms, store_rule_status_cb cb,
                       void *ctx)
{
    store_op *op = store_op_or_fail(2, remove_parse, store_status_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL);
        return;
    }
    int8_param q = be_int8(subscription_id);
    int rc = store_op_stmt(op, 0, STMT_RULE_REMOVE, (store_param[]){P_INT8(q), P_TEXT(name)}, 2);
    rc |= store_touch_stmt(op, 1, subscription_id, now_ms);
    if (rc)
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

/* ---- list ---- */

typedef struct list_result {
    PGresult *pgresult; /* the rows the rules point into */
    store_rule *rules;
    size_t n;
} list_result;

static void list_free(void *p)
{
    list_result *l = p;
    PQclear(l->pgresult);
    ent_free(l->rules);
    ent_free(l);
}

static void list_parse(store_op *op, int stmt, const void *res)
{
    (void)stmt;
    const PGresult *r = res;
    int rows = PQntuples(r);
    list_result *l = ent_calloc(1, sizeof *l);
    PGresult *copy = l ? PQcopyResult(r, PG_COPYRES_ATTRS | PG_COPYRES_TUPLES) : NULL;
    if (!copy || (rows && !(l->rules = ent_calloc((size_t)rows, sizeof *l->rules)))) {
        PQclear(copy);
        ent_free(l);
        store_op_set_status(op, SB_ERR_INTERNAL);
        return;
    }
    l->pgresult = copy;
    l->n = (size_t)rows;
    for (int i = 0; i < rows; i++) {
        store_rule *x = &l->rules[i];
        x->name = col_str_or_null(copy, i, 0);
        x->filter_type = col_str_or_null(copy, i, 1);
        x->sql_expression = col_str_or_null(copy, i, 2);
        x->correlation = col_str_or_null(copy, i, 3);
        x->filter_parameters = col_str_or_null(copy, i, 4);
        x->action_expression = col_str_or_null(copy, i, 5);
        x->action_parameters = col_str_or_null(copy, i, 6);
        x->created_ms = col_i64(copy, i, 7);
    }
    store_op_set_result(op, l, list_free);
}

static void list_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    list_result *l = store_op_result(op);
    if (st == SB_OK && l)
        ((store_rules_cb)u->fn)(u->ctx, SB_OK, l->rules, l->n);
    else
        ((store_rules_cb)u->fn)(u->ctx, st == SB_OK ? SB_ERR_INTERNAL : st, NULL, 0);
    ent_free(u);
}

void store_rule_list(store *s, int64_t subscription_id, int64_t skip, int64_t top, store_rules_cb cb, void *ctx)
{
    store_op *op = store_op_or_fail(1, list_parse, list_done, user_new((void (*)(void))cb, ctx));
    if (!op) {
        cb(ctx, SB_ERR_INTERNAL, NULL, 0);
        return;
    }
    int8_param q = be_int8(subscription_id), sk = be_int8(skip), tp = be_int8(top);
    if (store_op_stmt(op, 0, STMT_RULE_LIST, (store_param[]){P_INT8(q), P_INT8(sk), P_INT8(tp)}, 3))
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

/* ---- rules.correlation ---- */

char *store_rule_correlation_json(const ent_filter_correlation *c)
{
    const struct {
        const char *key;
        const char *value;
    } fields[] = {
        {"CorrelationId", c->correlation_id}, {"MessageId", c->message_id},
        {"To", c->to},                        {"ReplyTo", c->reply_to},
        {"Label", c->label},                  {"SessionId", c->session_id},
        {"ReplyToSessionId", c->reply_to_session_id}, {"ContentType", c->content_type},
    };
    json_t *o = json_object();
    int rc = !o;
    for (size_t i = 0; !rc && i < sizeof fields / sizeof fields[0]; i++)
        if (fields[i].value)
            rc = json_object_set_new(o, fields[i].key, json_string(fields[i].value));
    if (!rc && c->nproperties) {
        /* one writer of typed values: store_rule_props_json */
        char *text = store_rule_props_json(c->properties, c->nproperties);
        json_t *props = text ? json_loads(text, 0, NULL) : NULL;
        ent_free(text);
        rc = !props || json_object_set_new(o, "Properties", props);
    }
    char *out = rc ? NULL : store_json_text(o, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(o);
    return out;
}
