/* Loading every entity, rule and namespace into the in-process cache (store_load_entities): one op of
 * three statements, parsed into ent_entity, ent_rule_def and ent_namespace rows. Declared in store_queue.h. */
#include "store_queue.h"

#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "ent_log.h"
#include "store_binary.h"
#include "store_columns.h"
#include "store_rule_json.h"
#include "store_statements.h"

/* One rule row and what its ent_rule_def points to. */
typedef struct rule_item {
    char *text;                          /* name, filter type, SQL and action, NUL-separated */
    char *correlation_text;              /* the correlation fields */
    store_rule_props fparams, aparams, cprops;
} rule_item;

typedef struct entity_list {
    ent_entity *items;
    size_t n;
    ent_rule_def *rules;
    rule_item *rule_items;
    size_t nrules;
    ent_namespace *namespaces;
    size_t nnamespaces;
    ent_namespace_key *keys;
    size_t nkeys;
} entity_list;

static void entity_list_free(void *p)
{
    entity_list *l = p;
    for (size_t i = 0; i < l->nrules; i++) {
        ent_free(l->rule_items[i].text);
        ent_free(l->rule_items[i].correlation_text);
        store_rule_props_free(&l->rule_items[i].fparams);
        store_rule_props_free(&l->rule_items[i].aparams);
        store_rule_props_free(&l->rule_items[i].cprops);
    }
    ent_free(l->rules);
    ent_free(l->rule_items);
    ent_free(l->namespaces);
    ent_free(l->keys);
    ent_free(l->items);
    ent_free(l);
}

static void parse_entities(entity_list *l, const PGresult *r, store_op *op)
{
    int rows = PQntuples(r);
    if (!(l->items = ent_calloc(rows ? (size_t)rows : 1, sizeof *l->items))) {
        store_op_set_status(op, SB_ERR_INTERNAL);
        return;
    }
    for (int i = 0; i < rows; i++)
        store_columns_read(&store_entity_view_columns, r, i, 0, &l->items[i]);
    l->n = (size_t)rows;
}

/* Copies of the text columns 1, 2, 3, 5 (name, type, SQL, action), NULL kept. */
static int rule_texts(const PGresult *r, int row, rule_item *it, ent_rule_def *d)
{
    static const int cols[] = {1, 2, 3, 5};
    size_t need = 0;
    for (size_t k = 0; k < 4; k++)
        need += (size_t)PQgetlength(r, row, cols[k]) + 1;
    char *t = it->text = ent_malloc(need);
    if (!t)
        return -1;
    const char **out[] = {&d->name, &d->filter_type, &d->sql_expression, &d->action_expression};
    for (size_t k = 0; k < 4; k++) {
        if (PQgetisnull(r, row, cols[k]))
            continue;
        size_t n = (size_t)PQgetlength(r, row, cols[k]);
        memcpy(t, PQgetvalue(r, row, cols[k]), n);
        t[n] = 0;
        *out[k] = t;
        t += n + 1;
    }
    return 0;
}

static const char *opt_value(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? NULL : PQgetvalue(r, row, col);
}

static void parse_rules(entity_list *l, const PGresult *r, store_op *op)
{
    int rows = PQntuples(r);
    l->rules = ent_calloc(rows ? (size_t)rows : 1, sizeof *l->rules);
    l->rule_items = ent_calloc(rows ? (size_t)rows : 1, sizeof *l->rule_items);
    if (!l->rules || !l->rule_items) {
        store_op_set_status(op, SB_ERR_INTERNAL);
        return;
    }
    for (int i = 0; i < rows; i++) {
        ent_rule_def *d = &l->rules[l->nrules];
        rule_item *it = &l->rule_items[l->nrules];
        char err[200] = "";
        d->subscription_id = col_i64(r, i, 0);
        if (rule_texts(r, i, it, d)) {
            store_op_set_status(op, SB_ERR_INTERNAL);
            return;
        }
        l->nrules++;
        /* a rule whose JSON cannot be read keeps its name and matches nothing
         * (the cache logs it); the others still route */
        if (store_rule_props_parse(opt_value(r, i, 6), &it->fparams, err, sizeof err) ||
            store_rule_props_parse(opt_value(r, i, 7), &it->aparams, err, sizeof err) ||
            (opt_value(r, i, 4) && store_rule_correlation_parse(opt_value(r, i, 4), &d->correlation,
                                                                &it->correlation_text, &it->cprops, err,
                                                                sizeof err))) {
            LOG_WARN("entities: rule '%s' of subscription %lld: %s", d->name ? d->name : "",
                     (long long)d->subscription_id, err);
            d->filter_type = "False";
            d->action_expression = NULL;
            continue;
        }
        d->filter_params = it->fparams.props;
        d->nfilter_params = it->fparams.n;
        d->action_params = it->aparams.props;
        d->naction_params = it->aparams.n;
    }
}

static void parse_namespaces(entity_list *l, const PGresult *r, store_op *op)
{
    int rows = PQntuples(r);
    if (!(l->namespaces = ent_calloc(rows ? (size_t)rows : 1, sizeof *l->namespaces))) {
        store_op_set_status(op, SB_ERR_INTERNAL);
        return;
    }
    for (int i = 0; i < rows; i++) {
        l->namespaces[i].id = (int32_t)col_i64(r, i, 0);
        col_text(r, i, 1, l->namespaces[i].name, sizeof l->namespaces[i].name);
        l->namespaces[i].clock_offset_ms = col_i64(r, i, 2);
        l->namespaces[i].auto_delete_on_idle_ms = col_i64(r, i, 3);
    }
    l->nnamespaces = (size_t)rows;
}

static void parse_keys(entity_list *l, const PGresult *r, store_op *op)
{
    int rows = PQntuples(r);
    if (!(l->keys = ent_calloc(rows ? (size_t)rows : 1, sizeof *l->keys))) {
        store_op_set_status(op, SB_ERR_INTERNAL);
        return;
    }
    for (int i = 0; i < rows; i++) {
        l->keys[i].ns = (int32_t)col_i64(r, i, 0);
        col_text(r, i, 1, l->keys[i].name, sizeof l->keys[i].name);
        col_text(r, i, 2, l->keys[i].key, sizeof l->keys[i].key);
    }
    l->nkeys = (size_t)rows;
}

static void entities_parse(store_op *op, int stmt, const void *res)
{
    entity_list *l = store_op_result(op);
    if (!l) {
        if (!(l = ent_calloc(1, sizeof *l))) {
            store_op_set_status(op, SB_ERR_INTERNAL);
            return;
        }
        store_op_set_result(op, l, entity_list_free);
    }
    if (stmt == 0)
        parse_entities(l, res, op);
    else if (stmt == 1)
        parse_rules(l, res, op);
    else if (stmt == 2)
        parse_namespaces(l, res, op);
    else
        parse_keys(l, res, op);
}

static void entities_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    entity_list *l = store_op_result(op);
    if (st == SB_OK && l)
        ((store_entities_cb)u->fn)(u->ctx, SB_OK, l->items, l->n, l->rules, l->nrules, l->namespaces,
                                   l->nnamespaces, l->keys, l->nkeys);
    else
        ((store_entities_cb)u->fn)(u->ctx, st == SB_OK ? SB_ERR_INTERNAL : st, NULL, 0, NULL, 0, NULL, 0, NULL, 0);
    ent_free(u);
}

void store_load_entities(store *s, store_entities_cb cb, void *ctx)
{
    user_cb *u = user_new((void (*)(void))cb, ctx);
    store_op *op = u ? store_op_new(4, entities_parse, entities_done, u) : NULL;
    if (!op) {
        ent_free(u);
        cb(ctx, SB_ERR_INTERNAL, NULL, 0, NULL, 0, NULL, 0, NULL, 0);
        return;
    }
    if (store_op_stmt(op, 0, STMT_LOAD_ENTITIES, NULL, 0) || store_op_stmt(op, 1, STMT_LOAD_RULES, NULL, 0) ||
        store_op_stmt(op, 2, STMT_LOAD_NAMESPACES, NULL, 0) || store_op_stmt(op, 3, STMT_LOAD_NAMESPACE_KEYS, NULL, 0))
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}
