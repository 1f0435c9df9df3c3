/* Builds the ops of store_queue.h and parses their binary results. */
#include "store_queue.h"

#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"
#include "ent_dead_letter.h"
#include "ent_log.h"
#include "store_arrays.h"
#include "store_binary.h"
#include "store_rule_json.h"
#include "store_session.h"
#include "store_statements.h"

/* Helpers shared with store_mgmt.c live in store_binary.h. */

/* ---- entities ---- */

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
    for (int i = 0; i < rows; i++) {
        ent_entity *e = &l->items[i];
        e->id = col_i64(r, i, 0);
        col_text(r, i, 1, e->name, sizeof e->name);
        col_text(r, i, 2, e->status, sizeof e->status);
        e->requires_session = col_bool(r, i, 3);
        e->lock_duration_ms = col_i64(r, i, 4);
        e->max_delivery_count = (int32_t)col_i64(r, i, 5);
        e->default_ttl_ms = col_i64(r, i, 6);
        e->dead_lettering_on_expiration = col_bool(r, i, 7);
        e->max_size_mb = col_i64(r, i, 8);
        e->requires_duplicate_detection = col_bool(r, i, 9);
        e->duplicate_window_ms = col_i64(r, i, 10);
        col_text(r, i, 11, e->forward_to, sizeof e->forward_to);
        col_text(r, i, 12, e->forward_dead_lettered_to, sizeof e->forward_dead_lettered_to);
        e->kind = (ent_kind)col_i64(r, i, 13);
        e->topic_id = col_i64(r, i, 14);
        e->dead_lettering_on_filter_exceptions = col_bool(r, i, 15);
    }
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
    else
        parse_rules(l, res, op);
}

static void entities_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    entity_list *l = store_op_result(op);
    if (st == SB_OK && l)
        ((store_entities_cb)u->fn)(u->ctx, SB_OK, l->items, l->n, l->rules, l->nrules);
    else
        ((store_entities_cb)u->fn)(u->ctx, st == SB_OK ? SB_ERR_INTERNAL : st, NULL, 0, NULL, 0);
    ent_free(u);
}

void store_load_entities(store *s, store_entities_cb cb, void *ctx)
{
    user_cb *u = user_new((void (*)(void))cb, ctx);
    store_op *op = u ? store_op_new(2, entities_parse, entities_done, u) : NULL;
    if (!op) {
        ent_free(u);
        cb(ctx, SB_ERR_INTERNAL, NULL, 0, NULL, 0);
        return;
    }
    if (store_op_stmt(op, 0, STMT_LOAD_ENTITIES, NULL, 0) || store_op_stmt(op, 1, STMT_LOAD_RULES, NULL, 0))
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

/* ---- send ---- */

/* The merged send: every send of a commit to one entity is one statement
 * (STMT_SEND_SET). Columns as that statement's arrays. */
const store_merge_def store_send_set = {
    STMT_SEND_SET,
    11,
    {STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT,
     STORE_OID_BYTEA, STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT},
    NULL,
};

int store_send_row(store_op *op, int i, const store_new_message *m)
{
    int8_param state = be_int8(m->state), now = be_int8(m->now_ms), avail = be_int8(m->available_ms),
               exp = be_int8(m->expires_ms), ttl = be_int8(m->ttl_ms), sq = be_int8(m->subqueue);
    store_param cols[11] = {
        P_INT8(state),
        P_INT8(now),
        P_INT8(avail),
        m->expires_ms ? P_INT8(exp) : (store_param){0},
        m->ttl_ms >= 0 ? P_INT8(ttl) : (store_param){0},
        P_TEXT(m->message_id),
        P_TEXT(m->session_id),
        {m->bytes, (int)m->len, 1},
        P_INT8(sq),
        P_TEXT(m->dead_letter_reason),
        P_TEXT(m->dead_letter_description),
    };
    return store_op_row(op, i, cols);
}

void store_send(store *s, int64_t entity_id, const store_new_message *msgs, size_t n, store_status_cb cb, void *ctx)
{
    user_cb *u = user_new((void (*)(void))cb, ctx);
    store_op *op = u ? store_op_new_merged(&store_send_set, entity_id, (int)n, store_status_done, u) : NULL;
    if (!op) {
        ent_free(u);
        cb(ctx, SB_ERR_INTERNAL);
        return;
    }
    store_op_set_notify(op, entity_id);
    for (size_t i = 0; i < n; i++)
        if (store_send_row(op, (int)i, &msgs[i])) {
            store_op_set_status(op, SB_ERR_INTERNAL); /* store_submit fails it at once */
            break;
        }
    store_submit(s, op);
}

/* ---- claim ---- */

typedef struct claim_result {
    size_t n;
    store_claimed *msgs;
    void *pgresult; /* the rows the claimed messages point into */
} claim_result;

static void claim_free(void *p)
{
    claim_result *c = p;
    PQclear(c->pgresult);
    ent_free(c->msgs);
    ent_free(c);
}

static int by_sequence(const void *a, const void *b)
{
    const store_claimed *x = a, *y = b;
    return x->sequence_number < y->sequence_number ? -1 : x->sequence_number > y->sequence_number;
}

static void claim_parse(store_op *op, int stmt, const void *res)
{
    const PGresult *r = res;
    if (stmt != store_op_nstmt(op) - 1)
        return; /* the touch before the claim */
    int rows = PQntuples(r);
    claim_result *c = ent_calloc(1, sizeof *c);
    /* the messages stay in the result they came in (not copied again) */
    PGresult *copy = (PGresult *)r;
    if (!c || (rows && !(c->msgs = ent_calloc((size_t)rows, sizeof *c->msgs)))) {
        ent_free(c);
        store_op_set_status(op, SB_ERR_INTERNAL);
        return;
    }
    store_op_take_result(op);
    c->pgresult = copy;
    c->n = (size_t)rows;
    for (int i = 0; i < rows; i++) {
        store_claimed *m = &c->msgs[i];
        m->sequence_number = col_i64(copy, i, 0);
        m->enqueued_ms = col_i64(copy, i, 1);
        m->locked_until_ms = col_i64(copy, i, 2);
        memcpy(m->lock_token, PQgetvalue(copy, i, 3), 16);
        m->delivery_count = (int32_t)col_i64(copy, i, 4);
        m->ttl_ms = col_i64(copy, i, 5);
        m->dead_letter_reason = PQgetisnull(copy, i, 6) ? NULL : PQgetvalue(copy, i, 6);
        m->dead_letter_description = PQgetisnull(copy, i, 7) ? NULL : PQgetvalue(copy, i, 7);
        m->bytes = (const uint8_t *)PQgetvalue(copy, i, 8);
        m->len = (size_t)PQgetlength(copy, i, 8);
        m->message_id = PQgetisnull(copy, i, 9) ? NULL : PQgetvalue(copy, i, 9);
        m->dead_letter_source = PQgetisnull(copy, i, 10) ? NULL : PQgetvalue(copy, i, 10);
        m->expires_ms = col_i64(copy, i, 11);
    }
    if (c->n)
        qsort(c->msgs, c->n, sizeof *c->msgs, by_sequence);
    store_op_set_result(op, c, claim_free);
}

static void claim_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    claim_result *c = store_op_result(op);
    if (st == SB_OK && c)
        ((store_claim_cb)u->fn)(u->ctx, SB_OK, c->msgs, c->n);
    else
        ((store_claim_cb)u->fn)(u->ctx, st == SB_OK ? SB_ERR_INTERNAL : st, NULL, 0);
    ent_free(u);
}

/* A claim op: the activity stamp first when is_activity, then the claim
 * statement (its index in *i); NULL after failing cb when out of memory. */
static store_op *claim_op(int64_t entity_id, int64_t now_ms, bool is_activity, int *i, int *rc, store_claim_cb cb,
                          void *ctx)
{
    user_cb *u = user_new((void (*)(void))cb, ctx);
    store_op *op = u ? store_op_new(1 + is_activity, claim_parse, claim_done, u) : NULL;
    if (!op) {
        ent_free(u);
        cb(ctx, SB_ERR_INTERNAL, NULL, 0);
        return NULL;
    }
    *i = 0;
    *rc = is_activity ? store_touch_stmt(op, (*i)++, entity_id, now_ms) : 0;
    return op;
}

void store_claim(store *s, int64_t entity_id, int subqueue, store_claim_mode mode, int max, int64_t now_ms,
                 int64_t locked_until_ms, bool is_activity, int64_t from_seq, store_claim_cb cb, void *ctx)
{
    int i, rc;
    store_op *op = claim_op(entity_id, now_ms, is_activity, &i, &rc, cb, ctx);
    if (!op)
        return;
    int8_param q = be_int8(entity_id), sq = be_int8(subqueue), now = be_int8(now_ms), lim = be_int8(max),
               until = be_int8(locked_until_ms), from = be_int8(from_seq);
    if (mode == STORE_CLAIM_LOCK)
        rc |= store_op_stmt(op, i, STMT_CLAIM_LOCK,
                            (store_param[]){P_INT8(q), P_INT8(sq), P_INT8(now), P_INT8(lim), P_INT8(until), P_INT8(from)},
                            6);
    else
        rc |= store_op_stmt(op, i, STMT_CLAIM_DELETE,
                            (store_param[]){P_INT8(q), P_INT8(sq), P_INT8(now), P_INT8(lim), P_INT8(from)}, 5);
    if (rc)
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

void store_claim_session(store *s, int64_t entity_id, const char *session_id, const uint8_t session_token[16],
                         store_claim_mode mode, int max, int64_t now_ms, bool is_activity, int64_t from_seq,
                         store_claim_cb cb, void *ctx)
{
    int i, rc;
    store_op *op = claim_op(entity_id, now_ms, is_activity, &i, &rc, cb, ctx);
    if (!op)
        return;
    int8_param q = be_int8(entity_id), sq = be_int8(0), now = be_int8(now_ms), lim = be_int8(max),
               from = be_int8(from_seq);
    rc |= store_op_stmt(op, i, mode == STORE_CLAIM_LOCK ? STMT_CLAIM_SESSION_LOCK : STMT_CLAIM_SESSION_DELETE,
                        (store_param[]){P_INT8(q), P_INT8(sq), P_INT8(now), P_INT8(lim), P_INT8(now), P_INT8(from),
                                        P_TEXT(session_id), P_UUID(session_token)},
                        8);
    if (rc)
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

/* ---- settle ---- */

/* Every complete of a commit is one DELETE (STMT_COMPLETE_SET), every other
 * settlement one STMT_SETTLE_SET; an answer row names a settlement that found
 * its lock. */
const store_merge_def store_complete_set = {
    STMT_COMPLETE_SET, 3, {STORE_OID_UUID, STORE_OID_INT8, STORE_OID_INT8}, NULL,
};
const store_merge_def store_settle_set = {
    STMT_SETTLE_SET,
    7,
    {STORE_OID_INT8, STORE_OID_UUID, STORE_OID_INT8, STORE_OID_INT8, STORE_OID_TEXT, STORE_OID_TEXT, STORE_OID_INT8},
    NULL,
};

static void settle_done(store_op *op, sb_status st)
{
    store_status_done(op, st == SB_OK && store_op_answered(op) == 0 ? SB_ERR_LOCK_LOST : st);
}

int store_settle_row(store_op *op, int i, const store_settlement *x)
{
    int8_param k = be_int8(x->kind), q = be_int8(x->entity_id), now = be_int8(x->now_ms),
               dlt = be_int8(x->dead_letter_target);
    if (x->kind == STORE_SETTLE_COMPLETE)
        return store_op_row(op, i, (store_param[]){P_UUID(x->lock_token), P_INT8(q), P_INT8(now)});
    const char *reason = x->reason, *description = x->description;
    if (x->kind == STORE_SETTLE_ABANDON) {
        /* used only when the abandon exhausts MaxDeliveryCount */
        reason = ENT_DLQ_REASON_MAX_DELIVERY;
        description = ENT_DLQ_DESC_MAX_DELIVERY;
    }
    return store_op_row(op, i,
                        (store_param[]){P_INT8(k), P_UUID(x->lock_token), P_INT8(q), P_INT8(now), P_TEXT(reason),
                                        P_TEXT(description),
                                        x->dead_letter_target ? P_INT8(dlt) : (store_param){0}});
}

void store_settle(store *s, int64_t entity_id, const uint8_t lock_token[16], store_settle_kind kind,
                  const char *reason, const char *description, int64_t dead_letter_target, int64_t now_ms,
                  store_status_cb cb, void *ctx)
{
    user_cb *u = user_new((void (*)(void))cb, ctx);
    bool complete = kind == STORE_SETTLE_COMPLETE;
    store_op *op =
        u ? store_op_new_merged(complete ? &store_complete_set : &store_settle_set, 0, 1, settle_done, u) : NULL;
    if (!op) {
        ent_free(u);
        if (cb)
            cb(ctx, SB_ERR_INTERNAL);
        return;
    }
    store_settlement x = {kind, entity_id, {0}, reason, description, dead_letter_target, now_ms};
    memcpy(x.lock_token, lock_token, 16);
    if (store_settle_row(op, 0, &x))
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}

/* ---- sweep ---- */

typedef struct sweep_result {
    size_t n, cap;
    int64_t *queues;
} sweep_result;

static void sweep_free(void *p)
{
    sweep_result *r = p;
    ent_free(r->queues);
    ent_free(r);
}

static void sweep_parse(store_op *op, int stmt, const void *res)
{
    const PGresult *r = res;
    sweep_result *acc = store_op_result(op);
    if (!acc) {
        acc = ent_calloc(1, sizeof *acc);
        if (!acc)
            return;
        store_op_set_result(op, acc, sweep_free);
    }
    int rows = PQntuples(r);
    if (stmt == 2) { /* idle queues deleted */
        for (int i = 0; i < rows; i++)
            LOG_INFO("queue '%s' was idle for its AutoDeleteOnIdle and is deleted", PQgetvalue(r, i, 1));
        return;
    }
    if (stmt == 3 || stmt == 5 || stmt == 6 || rows == 0)
        return; /* duplicates forgotten, lapsed sessions' rows, dead transactions' schedules removed */
    if (acc->n + (size_t)rows > acc->cap) {
        size_t cap = acc->n + (size_t)rows;
        int64_t *q = ent_realloc(acc->queues, cap * sizeof *q);
        if (!q)
            return;
        acc->queues = q;
        acc->cap = cap;
    }
    for (int i = 0; i < rows; i++)
        acc->queues[acc->n++] = col_i64(r, i, 0);
}

static void sweep_done(store_op *op, sb_status st)
{
    user_cb *u = store_op_ctx(op);
    sweep_result *r = store_op_result(op);
    ((store_sweep_cb)u->fn)(u->ctx, st, r ? r->queues : NULL, r ? r->n : 0);
    ent_free(u);
}

void store_sweep(store *s, int64_t now_ms, const store_sweep_policy *policy, store_sweep_cb cb, void *ctx)
{
    user_cb *u = user_new((void (*)(void))cb, ctx);
    store_op *op = u ? store_op_new(7, sweep_parse, sweep_done, u) : NULL;
    /* the policy travels as text-format int8[] literals ("{1,2}") */
    char *dl = store_int8_array_text(policy->dead_letter_on_expiry, policy->n_dead_letter_on_expiry);
    char *from = store_int8_array_text(policy->forward_from, policy->n_forward);
    char *to = store_int8_array_text(policy->forward_to, policy->n_forward);
    if (!op || !dl || !from || !to) {
        ent_free(u);
        ent_free(op);
        ent_free(dl);
        ent_free(from);
        ent_free(to);
        cb(ctx, SB_ERR_INTERNAL, NULL, 0);
        return;
    }
    int8_param now = be_int8(now_ms);
    int rc = store_op_stmt(op, 0, STMT_SWEEP_EXPIRED,
                           (store_param[]){P_INT8(now), P_TEXT(ENT_DLQ_REASON_TTL), P_TEXT(ENT_DLQ_DESC_TTL),
                                           P_TEXT(dl), P_TEXT(from), P_TEXT(to)},
                           6);
    int8_param since = be_int8(policy->lapsed_since_ms);
    rc |= store_op_stmt(op, 1, STMT_SWEEP_LAPSED,
                        (store_param[]){P_INT8(now), P_TEXT(ENT_DLQ_REASON_MAX_DELIVERY),
                                        P_TEXT(ENT_DLQ_DESC_MAX_DELIVERY), P_TEXT(from), P_TEXT(to), P_INT8(since)},
                        6);
    rc |= store_op_stmt(op, 2, STMT_SWEEP_IDLE, (store_param[]){P_INT8(now)}, 1);
    rc |= store_op_stmt(op, 3, STMT_SWEEP_DUPLICATES, (store_param[]){P_INT8(now)}, 1);
    rc |= store_op_stmt(op, 4, STMT_SWEEP_SCHEDULED, (store_param[]){P_INT8(now)}, 1);
    rc |= store_op_stmt(op, 5, STMT_SESSION_SWEEP, (store_param[]){P_INT8(now)}, 1);
    rc |= store_op_stmt(op, 6, STMT_SWEEP_TXN_PENDING, (store_param[]){P_INT8(now)}, 1);
    ent_free(dl);
    ent_free(from);
    ent_free(to);
    if (rc)
        store_op_set_status(op, SB_ERR_INTERNAL);
    store_submit(s, op);
}
